"""Terminal sections for post-mortem inputs: the timeline (busy/idle per device, kernels by
wall time, the roofline join), ncu's own rule results from ``.ncu-rep`` reports, and ncu's
speed-of-light utilization for launches that have no place on the roofline."""

from __future__ import annotations

from pathlib import Path

WIDTH = 80
VENDOR_NAMES = {"nvidia": "NVIDIA (CUDA)", "amd": "AMD (ROCm/HIP)"}


def _fmt_s(v):
    from ridgeline.render.text import fmt_seconds

    return fmt_seconds(v)


def _pct(v, digits=0):
    from ridgeline.render.text import fmt_pct

    return fmt_pct(v, digits)


def timeline_lines(result) -> list[str]:
    """``Timeline`` block: one line per device, the idle split, top kernels by wall time."""
    from ridgeline.render.text import distinct_labels, shorten

    tl = getattr(result, "timeline", None)
    if tl is None:
        return []
    lines: list[str] = []
    d = tl.devices
    if d is not None and d.height:
        several = d.get_column("source").n_unique() > 1
        lines.append("Timeline: GPU busy vs idle per device (capture = first to last GPU activity)")
        from ridgeline.analyzer.timeline.idle_causes import IDLE_CAUSE_WORDS as W

        lines.append(f"{'device':<18}{'capture':>9}{'busy':>6}{'kernel':>7}{'idle':>6}{W['launch']:>7}{W['sync']:>6}"
                     f"{W['host']:>6}{W['queued']:>7}{W['other']:>6}")
        rows = list(d.iter_rows(named=True))
        # the row says which device (gpu:N, and #k of its input when there are several); inputs and
        # models are named in full below the legend: a name cut to fit reads as another ("A10~")
        from ridgeline.render.timeline.comm import device_id, source_numbers

        numbers = source_numbers(d)
        ids = [device_id(r, numbers) for r in rows]
        named: dict[str, list[str]] = {}  # input (or "") -> its models
        for r in rows:
            key = r["source"] if several else ""
            named.setdefault(key, [])
            if r["device_name"] and str(r["device_name"]) not in named[key]:
                named[key].append(str(r["device_name"]))
        for r, label in zip(rows, ids):
            cap = r["capture_s"] or 0.0

            def share(v):
                return _pct(v / cap) if cap else "-"

            known = bool(r.get("host_api"))  # without host calls: sync, host-late and queued are not told apart
            sync, host, queued = (share(r[k]) if known else "n/a" for k in ("idle_sync_s", "idle_host_s", "idle_queued_s"))
            lines.append(f"{shorten(label, 17):<18}{_fmt_s(cap):>9}{share(r['busy_s']):>6}{share(r['kernel_busy_s']):>7}"
                         f"{share(r['idle_s']):>6}{share(r['idle_launch_s']):>7}{sync:>6}{host:>6}{queued:>7}"
                         f"{share(r['idle_other_s']):>6}")
        from ridgeline.analyzer.timeline.busy import IDLE_CAUSES_LEGEND, host_calls_legend
        import textwrap

        gap = tl.options.get("launch_gap_s", 10e-6)
        legend = (f"shares of capture; idle split: launch = gaps <= {_fmt_s(gap)}; {host_calls_legend(d)}; "
                  f"{IDLE_CAUSES_LEGEND}")
        lines += textwrap.wrap(legend, WIDTH)
        for src, models in named.items():
            if several:
                lines += textwrap.wrap(f"#{numbers[src]} {Path(src).name}" + (f": {', '.join(models)}" if models else ""),
                                       WIDTH, subsequent_indent="    ")
            elif models:
                lines += textwrap.wrap(f"GPU: {', '.join(models)}", WIDTH)
        vendors = {v for v in d.get_column("vendor").to_list() if v} if "vendor" in d.columns else set()
        if vendors:
            lines.append("GPU vendor: " + ", ".join(sorted(VENDOR_NAMES.get(v, v) for v in vendors)))
        from ridgeline.render.timeline.comm import terminal_lines

        lines += terminal_lines(tl, WIDTH)
    k = tl.kernel_shares
    if k is not None and k.height:
        top = k.head(5).to_dicts()
        name_w = WIDTH - (3 + 8 + 10 + 7 + 7)
        lines.append("")
        lines.append(f"Kernels by timeline time ({len(top)} of {k.height})")
        lines.append(f"{'#':>2} {'kernel':<{name_w}}{'launch':>8}{'time':>10}{'wall':>7}{'busy':>7}")
        labels = distinct_labels([r.get("kernel_label") or r["short_name"] or "?" for r in top], name_w - 1,
                                 [r.get("name") or r["short_name"] or "?" for r in top])
        for i, (r, label) in enumerate(zip(top, labels), 1):
            lines.append(f"{i:>2} {label:<{name_w}}{r['launches']:>8,}{_fmt_s(r['total_s']):>10}"
                         f"{_pct(r['wall_share'], 1):>7}{_pct(r['busy_share'], 1):>7}")
    from ridgeline.render.timeline.steps import fusion_lines, step_lines

    from ridgeline.render.timeline.ops import op_lines

    lines += step_lines(tl) + fusion_lines(tl) + op_lines(tl)
    if tl.totals is not None and tl.totals.height:
        lines.append("")
        amd = tl.totals.get_column("report").str.starts_with("rocprof").all()  # rocprof's stats CSV (AMD)
        lines.append(f"{'rocprof' if amd else 'nsys'} stats summaries (totals only: no timeline, no gaps)")
        labels = getattr(tl, "totals_labels", {}) or {}  # kernels: labels unique per full name
        for (report,), part in tl.totals.group_by(["report"], maintain_order=True):
            lines.append(f"  {report}:")
            for r in part.sort("total_s", descending=True, nulls_last=True).head(3).iter_rows(named=True):
                lines.append(f"    {shorten(labels.get(r['name']) or r['short_name'] or r['name'] or '?', 50):<51}"
                             f"{_fmt_s(r['total_s']):>10}"
                             f"{_pct(r['time_share'], 1):>8}")
    if tl.join is not None:
        lines.append("")
        import textwrap

        c = getattr(tl, "unmatched_counts", None) or {}
        lines += textwrap.wrap(
            f"Profile x timeline: {tl.join.height} kernel name(s) matched by name (docs/names.md); "
            f"{c.get('profile', len(tl.unmatched_profile))} profiled only, "
            f"{c.get('timeline', len(tl.unmatched_timeline))} timeline only (kernel names)", WIDTH,
            subsequent_indent="  ")
        if getattr(tl, "gpu_mismatch", ""):
            lines += textwrap.wrap(f"  {tl.gpu_mismatch[0].upper()}{tl.gpu_mismatch[1:]}", WIDTH, subsequent_indent="    ")
        if tl.unmatched_profile:
            lines.append("  profiled only: " + shorten(", ".join(tl.unmatched_profile), WIDTH - 17))
    return lines


def ncu_rule_lines(result, *, per_kernel: int = 2, kernels: int = 5) -> list[str]:
    """ncu's own rule results (from .ncu-rep), the largest estimated speedups per kernel."""
    import polars as pl

    from ridgeline.render.text import shorten

    rules = getattr(result, "ncu_rules", None)
    if rules is None or not rules.height:
        return []
    est = rules.filter(pl.col("estimated_speedup_pct").is_not_null())
    lines = ["ncu's own rules (from the report; ncu's estimates, not ridgeline findings)"]
    if not est.height:
        lines.append(f"  {rules.height} rule result(s), none with a speedup estimate (--format json: ncu_rules)")
        return lines
    best = (est.group_by("short_name", "rule", "rule_name", "speedup_type")
            .agg(pl.col("estimated_speedup_pct").median().alias("pct"), pl.len().alias("n"),
                 pl.col("title").drop_nulls().first())
            .sort(["pct", "short_name", "rule", "rule_name", "speedup_type"], descending=[True, False, False, False, False],
                  nulls_last=True))
    # ties broken by name: group_by gives no order, and the page must not change from run to run
    names = (best.group_by("short_name").agg(pl.col("pct").max())
             .sort(["pct", "short_name"], descending=[True, False], nulls_last=True).head(kernels))
    from ridgeline.render.jsonout import finding_codes_by_kernel

    codes = finding_codes_by_kernel(result)
    for name in names.get_column("short_name").to_list():
        ours = codes.get(name)
        tail = f"  (ridgeline: {', '.join(ours)})" if ours else ""
        lines.append(f"  {shorten(name or '?', WIDTH - 2 - len(tail))}{tail}")
        for r in best.filter(pl.col("short_name") == name).head(per_kernel).iter_rows(named=True):
            what = r["title"] or r["rule_name"] or r["rule"]
            lines.append(f"    {shorten(what, 50):<51} est. {r['pct']:.0f}% {r['speedup_type'] or ''}".rstrip())
    lines.append("  (every rule result: --format json, ncu_rules[])")
    return lines


def utilization_lines(result, *, top: int = 5) -> list[str]:
    """Launches off the roofline: ncu's speed-of-light percentages, as utilization, per kernel name
    with the kernel table's labels and times (ridgeline.render.facts.off_roofline)."""
    import textwrap

    from ridgeline.render.facts import off_roofline, off_roofline_reason
    from ridgeline.render.text import distinct_labels

    found = off_roofline(result)
    if found is None:
        return []
    g, why = found
    lines = textwrap.wrap(f"ncu utilization: {off_roofline_reason(why)}", WIDTH, subsequent_indent="  ")
    lines.append("  (ncu's speed of light, % of peak: the busiest unit, not a roofline verdict)")
    name_w = WIDTH - (2 + 8 + 10 + 6 + 6 + 9)
    lines.append(f"  {'kernel':<{name_w}}{'launch':>8}{'time':>10}{'SM':>6}{'DRAM':>6}  busiest")
    rows = list(g.head(top).iter_rows(named=True))
    labels = distinct_labels([r["kernel_label"] or r["short_name"] or r["kernel_name"] or "?" for r in rows], name_w - 1,
                             [r["kernel_name"] or r["short_name"] or "?" for r in rows])
    for r, label in zip(rows, labels):
        sm, dram = r["sm_pct"], r["dram_pct"]
        busiest = "-" if sm is None and dram is None else ("SM" if (sm or 0) >= (dram or 0) else "DRAM")

        def p(v):
            return "-" if v is None else f"{v:.0f}%"

        lines.append(f"  {label:<{name_w}}{r['launches']:>8}{_fmt_s(r['total_duration_s']):>10}"
                     f"{p(sm):>6}{p(dram):>6}  {busiest}")
    return lines
