"""HTML sections for post-mortem inputs: the timeline table and ncu's own rule results."""

from __future__ import annotations

from pathlib import Path


def timeline_section(result) -> str:
    from ridgeline.analyzer.timeline.busy import IDLE_CAUSES_LEGEND
    from ridgeline.render.htmltext import esc, fmt_pct, fmt_seconds

    tl = getattr(result, "timeline", None)
    if tl is None:
        return ""
    parts = ['<section id="timeline"><h2>Timeline</h2>']
    d = tl.devices
    if d is not None and d.height:
        gap = tl.options.get("launch_gap_s", 10e-6)
        parts.append(
            '<p class="muted">Per device: capture = first to last GPU activity; busy = union of kernels, '
            "copies and memsets (overlapping streams once). Idle split: launch = gaps up to "
            f"{esc(fmt_seconds(gap))}; sync = longer gaps while the host was in a synchronizing call; "
            f"{esc(IDLE_CAUSES_LEGEND)}. Shares are of the capture.</p>")
        parts.append('<table class="sortable"><thead><tr><th>file</th><th>device</th><th class="num">capture</th>'
                     '<th class="num">busy</th><th class="num">kernels</th><th class="num">idle</th>'
                     '<th class="num">launch</th><th class="num">sync</th><th class="num">host late</th>'
                     '<th class="num">queued</th><th class="num">other</th>'
                     '<th class="num">copies alone</th></tr></thead><tbody>')
        for r in d.iter_rows(named=True):
            cap = r["capture_s"] or 0.0

            def cell(v, known=True):
                if not known:
                    return '<td class="num">n/a</td>'
                share = v / cap if cap and v is not None else None
                return f'<td class="num" data-v="{share if share is not None else ""}">{esc(fmt_pct(share))}</td>'

            dev = ("gpu:?" if r["device"] is None else f"gpu:{r['device']}") + (f" {r['device_name']}" if r["device_name"] else "")
            parts.append(
                f'<tr><td class="name">{esc(Path(r["source"]).name)}</td><td>{esc(dev)}</td>'
                f'<td class="num" data-v="{cap}">{esc(fmt_seconds(cap))}</td>'
                + cell(r["busy_s"]) + cell(r["kernel_busy_s"]) + cell(r["idle_s"]) + cell(r["idle_launch_s"])
                + cell(r["idle_sync_s"], bool(r.get("host_api"))) + cell(r["idle_host_s"], bool(r.get("host_api")))
                + cell(r["idle_queued_s"], bool(r.get("host_api"))) + cell(r["idle_other_s"]) + cell(r["copy_only_s"])
                + "</tr>")
        parts.append("</tbody></table>")
        from ridgeline.analyzer.timeline.busy import host_calls_legend

        vendors = sorted({v for v in d.get_column("vendor").to_list() if v}) if "vendor" in d.columns else []
        parts.append(f"<p>{esc(host_calls_legend(d))}" + (f"; GPU vendor: {esc(', '.join(vendors))}" if vendors else "")
                     + "</p>")
        from ridgeline.render.timeline.comm import html_section

        parts.append(html_section(tl))
    k = tl.kernel_shares
    if k is not None and k.height:
        parts.append("<h3>Kernels by timeline time</h3>")
        parts.append('<table class="sortable"><thead><tr><th>kernel</th><th class="num">launches</th>'
                     '<th class="num">time</th><th class="num">wall share</th><th class="num">busy share</th>'
                     "</tr></thead><tbody>")
        from ridgeline.render.htmltext import kernel_displays

        top = k.head(30).to_dicts()
        shown = kernel_displays((r.get("kernel_label") or r["short_name"], r.get("name")) for r in top)
        for r, label in zip(top, shown):
            parts.append(f'<tr><td class="name" title="{esc(r.get("name") or r["short_name"] or "")}">'
                         f'{esc(label)}</td>'
                         f'<td class="num">{r["launches"]:,}</td>'
                         f'<td class="num" data-v="{r["total_s"]}">{esc(fmt_seconds(r["total_s"]))}</td>'
                         f'<td class="num" data-v="{r["wall_share"] or ""}">{esc(fmt_pct(r["wall_share"]))}</td>'
                         f'<td class="num" data-v="{r["busy_share"] or ""}">{esc(fmt_pct(r["busy_share"]))}</td></tr>')
        parts.append("</tbody></table>")
    from ridgeline.render.timeline.steps_html import fusion_html, steps_html

    parts.append(steps_html(tl) + fusion_html(tl))
    if tl.totals is not None and tl.totals.height:
        parts.append('<h3>nsys stats summaries</h3><p class="muted">Totals only: no timeline, no gaps.</p>')
        parts.append('<table class="sortable"><thead><tr><th>report</th><th>name</th><th class="num">total</th>'
                     '<th class="num">count</th><th class="num">share</th></tr></thead><tbody>')
        labels = getattr(tl, "totals_labels", {}) or {}  # kernels: labels unique per full name
        from ridgeline.render.htmltext import kernel_displays

        top = tl.totals.head(60).to_dicts()
        shown = kernel_displays((labels.get(r["name"]) or r["short_name"], r["name"] if labels.get(r["name"]) else None)
                                for r in top)
        for r, label in zip(top, shown):
            parts.append(f'<tr><td>{esc(r["report"])}</td><td class="name" title="{esc(r["name"] or "")}">{esc(label)}</td>'
                         f'<td class="num" data-v="{r["total_s"] or ""}">{esc(fmt_seconds(r["total_s"]))}</td>'
                         f'<td class="num">{r["count"] if r["count"] is not None else ""}</td>'
                         f'<td class="num">{esc(fmt_pct(r["time_share"]))}</td></tr>')
        parts.append("</tbody></table>")
    if tl.join is not None:
        c = getattr(tl, "unmatched_counts", None) or {}
        parts.append(f'<p>Profile x timeline: {tl.join.height} kernel name(s) matched by name (docs/names.md); '
                     f"{c.get('profile', len(tl.unmatched_profile))} profiled only, "
                     f"{c.get('timeline', len(tl.unmatched_timeline))} timeline only (kernel names); "
                     f"kernel findings are ranked by their share of the timeline's wall time.</p>")
        if getattr(tl, "gpu_mismatch", ""):
            parts.append(f"<p><b>{esc(tl.gpu_mismatch[0].upper() + tl.gpu_mismatch[1:])}.</b></p>")
        if tl.unmatched_profile:
            parts.append('<p class="muted">Profiled only: ' + esc(", ".join(tl.unmatched_profile[:40])) + "</p>")
        if tl.unmatched_timeline:
            parts.append('<p class="muted">Timeline only: ' + esc(", ".join(tl.unmatched_timeline[:40])) + "</p>")
    parts.append("</section>")
    return "".join(parts)


def ncu_rules_section(result) -> str:
    import polars as pl

    from ridgeline.render.htmltext import esc

    rules = getattr(result, "ncu_rules", None)
    if rules is None or not rules.height:
        return ""
    shown = rules.sort(["estimated_speedup_pct", "id", "rule"], descending=[True, False, False], nulls_last=True,
                       maintain_order=True).head(100)
    parts = ['<section id="ncu-rules"><h2>ncu\'s own rule results</h2>',
             '<p class="muted">Read from the .ncu-rep reports: ncu\'s advice and speedup estimates (its own model), '
             f"shown beside ridgeline's findings, not merged with them. {rules.height} result(s)"
             + (f", the first {shown.height} by estimate" if shown.height < rules.height else "") + ".</p>",
             '<table class="sortable"><thead><tr><th>launch</th><th>kernel</th><th>ridgeline findings</th>'
             '<th>rule</th><th>message</th><th class="num">est. speedup</th></tr></thead><tbody>']
    from ridgeline.render.jsonout import finding_codes_by_kernel

    codes = finding_codes_by_kernel(result)
    for r in shown.iter_rows(named=True):
        est = r["estimated_speedup_pct"]
        what = " ".join(x for x in (r["title"], f"({r['speedup_type']})" if r["speedup_type"] else None) if x)
        parts.append(f'<tr><td>{esc(r["id"])}</td><td class="name">{esc(r["short_name"])}</td>'
                     f'<td>{esc(", ".join(codes.get(r["short_name"], [])))}</td>'
                     f'<td>{esc(r["rule_name"] or r["rule"])}</td><td><b>{esc(what)}</b> '
                     f'<span class="muted">{esc((r["message"] or "")[:400])}</span></td>'
                     f'<td class="num" data-v="{est if est is not None else ""}">'
                     f'{"" if est is None else f"{est:.0f}%"}</td></tr>')
    parts.append("</tbody></table></section>")
    del pl
    return "".join(parts)


def utilization_section(result) -> str:
    """Launches off the roofline: ncu's speed-of-light percentages, as utilization, per kernel name
    with the kernel table's labels and times (ridgeline.render.facts.off_roofline)."""
    from ridgeline.render.facts import off_roofline, off_roofline_reason
    from ridgeline.render.htmltext import esc, fmt_seconds

    found = off_roofline(result)
    if found is None:
        return ""
    g, why = found
    parts = ['<section id="utilization"><h2>ncu utilization (launches off the roofline)</h2>',
             f'<p class="muted">{esc(off_roofline_reason(why))}. Shown instead: ncu\'s speed-of-light figures, '
             "median % of peak per kernel: which unit was busiest, not a roofline verdict.</p>",
             '<table class="sortable"><thead><tr><th>kernel</th><th class="num">launches</th><th class="num">time</th>'
             '<th class="num">SM %</th><th class="num">DRAM %</th></tr></thead><tbody>']
    for r in g.head(30).iter_rows(named=True):
        def p(v):
            return f'<td class="num" data-v="{"" if v is None else v}">{"-" if v is None else f"{v:.0f}%"}</td>'

        t = r["total_duration_s"]
        parts.append(f'<tr><td class="name" title="{esc(r["kernel_name"] or "")}">'
                     f'{esc(r["kernel_label"] or r["short_name"] or r["kernel_name"] or "?")}</td>'
                     f'<td class="num">{r["launches"]}</td>'
                     f'<td class="num" data-v="{"" if t is None else t}">{esc(fmt_seconds(t))}</td>{p(r["sm_pct"])}{p(r["dram_pct"])}</tr>')
    parts.append("</tbody></table></section>")
    return "".join(parts)
