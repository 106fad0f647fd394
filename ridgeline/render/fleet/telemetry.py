"""Telemetry windows as 80-column terminal text (``ridgeline telemetry``, and the telemetry
block of ``ridgeline analyze``).

:func:`format_windows` prints one row per GPU over the whole run, the worst windows by
wasted time (every window with ``all_windows``, cut at ``max_rows`` with a pointer to
``--format csv``) and the fleet summary ranking GPUs and hosts by wasted GPU-hours
(:func:`ridgeline.analyzer.fleet.summary.fleet_summary`).
:func:`format_telemetry_report` adds inputs, findings, skipped items and notes.
Columns: util = mean GPU-Util ("-" where the input has none), gract/tens/dram = mean
GR_ENGINE / PIPE_TENSOR / DRAM_ACTIVE, cov = share of the time observed that samples cover, waste =
busy-with-idle-tensor + allocated-but-idle minutes; ``x`` marks a window excluded by RL205.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

from ridgeline.fmt import clock, is_relative
from ridgeline.render.fleet.hostnames import host_labels
from ridgeline.render.text import fmt_pct, inline, shorten

WIDTH = 80
MAX_ROWS = 40


def _num(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{x:.{digits}f}"


def _dur(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 86400:
        return f"{s / 86400:.1f}d"
    if s >= 3600:
        return f"{s / 3600:.1f}h"
    if s >= 60:
        return f"{s / 60:.1f}m"
    return f"{s:.0f}s"


def _gpu_label(row: dict) -> str:
    g = "?" if row.get("gpu") is None else str(row["gpu"])
    if row.get("gpu_instance") is not None:
        g += f"/i{row['gpu_instance']}"
    return g


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, width=WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=True, break_on_hyphens=False) or [indent]


HOST_W = 11  # the host column at 80 columns; wider terminals give long host names their room


def header_line(host_w: int = HOST_W) -> str:
    return (f"{'host':<{host_w}} {'gpu':>5} {'window start':<11} {'len':>5} {'n':>5} {'cov':>4} {'util':>4} "
            f"{'gract':>5} {'tens':>4} {'dram':>4} {'power':>5} {'waste':>5}")


HEADER = header_line()
LEGEND = ("util = mean GPU-Util (a kernel ran, not tensor work); cov = share of the window with samples; "
          "gract / tens / dram = mean GR_ENGINE / PIPE_TENSOR / DRAM_ACTIVE; power = mean W; "
          "waste = the window's time when its class is idle_allocated or unavailable (time thrown away; "
          "busy time far from every roof is underuse, not waste)")


def _waste_expr():
    """Seconds thrown away: the window's span when its class is wasted (idle with memory held, or
    unavailable; :data:`ridgeline.analyzer.fleet.classes.WASTED_CLASSES`), else 0."""
    import polars as pl

    from ridgeline.analyzer.fleet.classes import WASTED_CLASSES

    return pl.when(pl.col("class").is_in(list(WASTED_CLASSES))).then(pl.col("span_s").fill_null(0.0)).otherwise(0.0)


def _row_line(r: dict, start_fmt: str = "%m-%d %H:%M", host_w: int = HOST_W, hosts: dict | None = None,
              start_col: str = "window_start") -> str:
    """One table row; ``hosts``: host -> the text its column shows (:func:`host_labels`); a
    host too long for the column is printed in full on a line of its own above the row.
    ``start_col``: the time the start column shows (``first_sample`` in the per-GPU table);
    len is ``span_s``, the time observed (:data:`ridgeline.analyzer.schema.WINDOW_COLUMNS`)."""
    length = r.get("span_s")  # the time observed (samples x interval), as in the header and the JSON
    util = r["gpu_util_mean_ratio"]  # GPU-Util as the JSON has it: "-" without it (gract is its own column)
    t0 = r.get(start_col)
    start = clock(t0, start_fmt, seconds=":%S" in start_fmt) if t0 else "-"
    host = inline(r["host"] or "?")
    host = (hosts or {}).get(host, host)
    above = ""
    if len(host) > host_w:
        above, host = host + "\n", ""
    line = (f"{host:<{host_w}} {shorten(_gpu_label(r), 5):>5} {start:<11} {_dur(length):>5} "
            f"{shorten(str(r['samples']), 5):>5} {fmt_pct(r['coverage_ratio']):>4} {fmt_pct(util):>4} "
            f"{fmt_pct(r['gr_engine_active_mean_ratio']):>5} {fmt_pct(r['tensor_active_mean_ratio']):>4} "
            f"{fmt_pct(r['dram_active_mean_ratio']):>4} {_num(r['power_mean_w']):>5} {_dur(r['_waste']):>5}")
    width = WIDTH + host_w - HOST_W
    if r.get("excluded") is not None:
        line = line[: width - 2] + " x"
    return above + line[:width]


def wasted_spans(wx):
    """Windows with waste (``_waste`` > 0), consecutive ones of a GPU (each starting where the
    previous ended) joined into one row per span, aggregated as :func:`per_gpu` does."""
    import polars as pl

    keys = ["host", "gpu", "gpu_instance"]
    bad = wx.filter(pl.col("_waste") > 0).sort([*keys, "window_start"], nulls_last=True)
    new = (pl.col("window_start") != pl.col("window_end").shift(1)).fill_null(True)
    bad = bad.with_columns(new.cum_sum().over(keys).cast(pl.Int64).alias("_run"))
    return per_gpu(bad, by=("_run",))


def _add_row(lines: list[str], row: str) -> None:
    """Append a table row; a host name on a line of its own above the row is written once for
    consecutive rows of that host (the rows below it leave the host cell blank)."""
    if "\n" in row:
        above, row = row.split("\n", 1)
        if not lines or lines[-1] != above and not (lines[-1].startswith(" ") and _host_line_above(lines) == above):
            lines.append(above)
    lines.append(row)


def _host_line_above(lines: list[str]) -> str | None:
    """The line above a block of rows with a blank host cell (the host written once for them)."""
    for ln in reversed(lines):
        if not ln.startswith(" "):
            return ln
    return None


def per_gpu(windows, *, by: tuple = ()):
    """One row per host / GPU / GPU instance over the whole run: window means weighted by each
    window's time observed (``span_s``), samples, time observed and waste summed, first and
    last sample the earliest and latest, coverage = time observed / the GPU's extent (each
    window's span / coverage, summed). ``by``: further key columns (a span of windows)."""
    import polars as pl

    keys = ["host", "gpu", "gpu_instance", *by]
    means = ["gpu_util_mean_ratio", "gr_engine_active_mean_ratio", "tensor_active_mean_ratio",
             "dram_active_mean_ratio", "power_mean_w"]
    w = windows.with_columns(_waste_expr().alias("_waste"), pl.col("span_s").fill_null(0.0).alias("_span"))
    # each window's extent (first sample .. last + 1 interval, in the window): span / coverage
    w = w.with_columns(pl.when(pl.col("coverage_ratio") > 0).then(pl.col("_span") / pl.col("coverage_ratio"))
                       .otherwise(0.0).alias("_extent"))

    def wmean(c):
        ok = pl.col(c).is_not_null() & (pl.col("_span") > 0)
        den = pl.when(ok).then(pl.col("_span")).otherwise(0.0).sum()
        num = pl.when(ok).then(pl.col(c) * pl.col("_span")).otherwise(0.0).sum()
        return pl.when(den > 0).then(num / den).otherwise(None).alias(c)

    return (
        w.group_by(keys)
        .agg(
            pl.col("window_start").min(),
            pl.col("window_end").max(),
            pl.col("first_sample").min(),
            pl.col("last_sample").max(),
            pl.col("samples").sum(),
            pl.col("_span").sum().alias("span_s"),
            pl.col("_extent").sum(),
            pl.len().alias("_windows"),
            pl.col("excluded").is_not_null().all().alias("_all_excluded"),
            *[wmean(c) for c in means],
            pl.col("_waste").sum(),
        )
        .with_columns(
            pl.when(pl.col("_extent") > 0).then(pl.col("span_s") / pl.col("_extent")).alias("coverage_ratio"),
            pl.when(pl.col("_all_excluded")).then(pl.lit("all windows")).otherwise(None).alias("excluded"),
        )
        .sort(keys, nulls_last=True)
    )


def _first_sample_format(times) -> str:
    """The per-GPU table's first-sample format: all on one day (the day the header line's first
    sample names), ``%H:%M:%S`` (15:58:57; relative time: +0:00:57); over several days,
    month-day and minutes (03-11 15:58)."""
    if times.null_count() == 0 and all(is_relative(t) for t in times):
        return "%H:%M:%S"  # +h:mm:ss since the first tick
    if times.null_count() == 0 and len({t.date() for t in times}) == 1:
        return "%H:%M:%S"
    return "%m-%d %H:%M"


def format_windows(result, *, max_rows: int = MAX_ROWS, all_windows: bool = False, worst: int = 10,
                   width: int = WIDTH) -> str:
    """Per-GPU summary (whole run), the ``worst`` windows by wasted time, and the fleet summary,
    80 columns wide; ``all_windows``: every window row (up to ``max_rows``) instead of the worst.
    Empty string without windows."""
    import polars as pl

    from ridgeline.analyzer.fleet.summary import fleet_summary

    w = getattr(result, "windows", None)
    if w is None:
        return ""
    if w.height == 0:
        return "Telemetry: no windows (see the notes)\n"
    gpus = w.select("host", "gpu", "gpu_instance").unique().height
    hosts = w.get_column("host").n_unique()
    first = w.get_column("first_sample").min()
    since = f", first sample {first:%Y-%m-%d %H:%M:%S} UTC" if first is not None and not is_relative(first) else ""
    lines = _wrap(f"Telemetry: {gpus} GPU(s) on {hosts} host(s), {w.height} window(s), "
                  f"{_dur(float(w.get_column('span_s').sum() or 0))} of GPU time observed{since}")
    wx = w.with_columns(_waste_expr().alias("_waste"))
    longest = int(w.get_column("host").cast(pl.String).str.len_chars().max() or 0)
    host_w = max(HOST_W, min(longest, HOST_W + max(0, width - WIDTH)))
    header = header_line(host_w)
    host_shown, legend = host_labels(w.get_column("host").unique().to_list(), host_w)

    excluded_seen = wx.filter(pl.col("excluded").is_not_null()).height > 0

    if all_windows:
        lines.append(header)
        lines.append("-" * len(header))
        rows = wx.sort(["host", "gpu", "gpu_instance", "window_start"], nulls_last=True)
        for r in rows.head(max_rows).iter_rows(named=True):
            _add_row(lines, _row_line(r, host_w=host_w, hosts=host_shown))
        if rows.height > max_rows:
            lines += _wrap(f"... {rows.height - max_rows} more window rows (ridgeline telemetry --all-windows "
                           "--max-rows N, or ridgeline telemetry --format csv)")
    else:
        g = per_gpu(w)
        lines.append("")
        title = "Per GPU, whole run (len = observed: samples x interval; means weighted by it)"
        if g.height > max_rows:
            g = g.sort("_waste", descending=True, nulls_last=True)
            title = f"Per GPU, whole run: the {max_rows} of {g.height} GPUs with most waste"
        fmt = _first_sample_format(g.get_column("first_sample"))
        lines += _wrap(title)
        lines.append(header.replace("window start", "first sample"))
        lines.append("-" * len(header))
        for r in g.head(max_rows).iter_rows(named=True):
            _add_row(lines, _row_line(r, fmt, host_w=host_w, hosts=host_shown, start_col="first_sample"))
        # ties (a GPU wasting every window) would fill the list with one GPU: each GPU's worst
        # window comes before any GPU's second worst
        in_gpu = pl.col("_waste").rank("ordinal", descending=True).over("host", "gpu", "gpu_instance")
        bad = (
            wasted_spans(wx)
            .with_columns(in_gpu.alias("_nth"))
            .sort(["_nth", "_waste", "host", "gpu", "gpu_instance", "window_start"],
                  descending=[False, True, False, False, False, False], nulls_last=True)
        )
        if w.height > g.height and worst > 0 and bad.height:
            lines.append("")
            shown = min(worst, bad.height)
            lines += _wrap(f"Worst windows by wasted time ({shown} of {bad.height} spans; consecutive wasted "
                           "windows of a GPU shown as one span, len = time observed; each GPU's worst first; "
                           "--all-windows for every window)")
            lines.append(header)
            lines.append("-" * len(header))
            for r in bad.head(worst).iter_rows(named=True):
                _add_row(lines, _row_line(r, host_w=host_w, hosts=host_shown))
    if legend:
        lines += _wrap(legend)
    if excluded_seen and any(ln.endswith(" x") for ln in lines):
        lines.append("x = excluded from performance rules (see RL205)")
    lines += _wrap(LEGEND)
    from ridgeline.render.fleet.measures import measure_lines

    lines += measure_lines(w, width=width)
    lines += health_lines(w)

    fleet = fleet_summary(w)
    wasted = float(fleet.get_column("wasted_gpu_h").sum() or 0.0)
    span_h = float(fleet.get_column("span_h").sum() or 0.0)
    lines.append("")
    under = float(fleet.get_column("underused_gpu_h").sum() or 0.0) if "underused_gpu_h" in fleet.columns else 0.0
    lines += _wrap(f"Fleet: wasted {wasted:.2f} GPU-h of {span_h:.2f} GPU-h observed "
                   f"({fmt_pct(wasted / span_h if span_h else None)}: idle with memory allocated, or unavailable)")
    if under > 0:
        lines += _wrap(f"underused {under:.2f} GPU-h ({fmt_pct(under / span_h if span_h else None)}): busy far from "
                       "every roof (memory-bound, I/O-bound, busy-low-throughput): work done badly, not waste", "  ")
    from ridgeline.analyzer.fleet.classes import hours_by_class

    by_class = {c: h for c, h in hours_by_class(w).items() if h > 0}
    if by_class:
        lines += _wrap("GPU-h by class: " + ", ".join(f"{c} {h:.2f}" for c, h in by_class.items()), "  ")
    top = fleet.filter(pl.col("wasted_gpu_h") > 0).head(5)
    for r in top.iter_rows(named=True):
        lines += _wrap(f"  {r['rank']:>3}. host:{inline(r['host'] or '?')} gpu:{_gpu_label(r):<6} "
                       f"{r['wasted_gpu_h']:.2f} GPU-h ({fmt_pct(r['wasted_share'])} of its time)")
    if hosts > 1:
        by_host = fleet_summary(w, by="host").filter(pl.col("wasted_gpu_h") > 0).head(5)
        for r in by_host.iter_rows(named=True):
            lines += _wrap(f"  host {r['rank']:>3}. {inline(r['host'] or '?')}: {r['wasted_gpu_h']:.2f} GPU-h over "
                           f"{r['gpus']} GPU(s)")
    return "\n".join(lines) + "\n"


def health_lines(windows) -> list[str]:
    """The GPU-health block: one line per GPU with a health event or counter growth (the
    columns of :mod:`ridgeline.analyzer.fleet.health`), and how many other GPUs reported health series
    without any. Nothing when no GPU reported a health series (health is then unknown, not good)."""
    import polars as pl

    if "health_fields" not in windows.columns:
        return []
    w = windows.filter(pl.col("health_fields").fill_null(0) > 0)
    if not w.height:
        return []
    c = pl.col
    g = w.group_by("host", "gpu", "gpu_instance").agg(
        c("xid_codes").drop_nulls().str.join(","), c("xid_first_seen").min(), c("xid_at_start_code").drop_nulls().first(),
        *[c(x).sum() for x in ("ecc_dbe_increase_count", "ecc_sbe_increase_count", "remapped_rows_uncorrectable_increase_count",
                               "nvlink_crc_increase_count", "nvlink_replay_increase_count", "pcie_replay_increase_count",
                               "counter_resets")],
        c("row_remap_pending").any(), c("row_remap_failure").any(),
    ).sort("host", "gpu", "gpu_instance", nulls_last=True)
    out, quiet = [], 0
    for r in g.iter_rows(named=True):
        parts = []
        if r["xid_codes"]:
            t = r["xid_first_seen"]
            parts.append(f"XID {r['xid_codes']}" + (f" from {clock(t, '%m-%d %H:%M:%S', seconds=True)}"
                                                    if t is not None else ""))
        elif r["xid_at_start_code"]:
            parts.append(f"XID {r['xid_at_start_code']} at start")
        for col, label in (("ecc_dbe_increase_count", "DBE"), ("ecc_sbe_increase_count", "SBE"),
                           ("remapped_rows_uncorrectable_increase_count", "rows remapped"),
                           ("nvlink_crc_increase_count", "NVLink CRC"), ("nvlink_replay_increase_count", "NVLink replay"),
                           ("pcie_replay_increase_count", "PCIe replay")):
            if r[col]:
                parts.append(f"{label} +{r[col]:.0f}")
        if r["row_remap_failure"]:
            parts.append("row remap FAILED")
        if r["row_remap_pending"]:
            parts.append("row remap pending")
        if not parts:
            quiet += 1
            continue
        if r["counter_resets"]:
            parts.append(f"{r['counter_resets']} counter reset(s)")
        label = f"host:{inline(r['host'] or '?')} gpu:{_gpu_label(r)}"
        out += _wrap(f"{label}  " + "; ".join(parts), "    ")
    gpus = windows.select("host", "gpu", "gpu_instance").unique().height
    head = (f"GPU health ({g.height} of {gpus} GPU(s) report XID/ECC/remap/link series; "
            "nothing is known about the others)" if g.height < gpus
            else f"GPU health ({g.height} GPU(s) report XID/ECC/remap/link series)")
    tail = ([f"{quiet} GPU(s) reported these series with no new XID, ECC, remap or link error during the capture"]
            if quiet else [])
    return ["", *_wrap(head), *out, *[ln for t in tail for ln in _wrap(t)]]


def format_findings(findings) -> str:
    """Findings, most impactful first; several findings of one rule print as one group
    (the layout of ``ridgeline analyze``)."""
    from types import SimpleNamespace

    from ridgeline.render.text import _findings

    return "\n".join(_findings(SimpleNamespace(findings=list(findings or [])))) + "\n"


def format_telemetry_report(result, *, max_rows: int = MAX_ROWS, all_windows: bool = False, worst: int = 10,
                            width: int = WIDTH) -> str:
    """Inputs, the window table and fleet summary, findings, skipped items, notes."""
    blocks = []
    if result.inputs:
        n = sum(i.rows for i in result.inputs)
        kinds = sorted({i.kind for i in result.inputs})
        blocks.append(f"Inputs: {len(result.inputs)} file(s), {n} record(s) ({', '.join(kinds)})\n")
    blocks.append(format_windows(result, max_rows=max_rows, all_windows=all_windows, worst=worst, width=width))
    if getattr(result, "groups", None) is not None:
        from ridgeline.render.fleet.groups import format_groups

        blocks.append(format_groups(result.groups, width=width, max_rows=max_rows))
    blocks.append(format_findings(result.findings))
    if result.skipped:
        groups: dict[str, list] = {}
        for s in result.skipped:
            groups.setdefault(s.reason, []).append(s)
        lines = [f"Skipped: {len(result.skipped)} item(s)"]
        for reason, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            lines += _wrap(f"{len(items):>5} x {reason}", "  ")
            item = items[0].item  # "file": the whole file, the reason above says why
            lines += _wrap(f"e.g. {items[0].source}" + ("" if item == "file" else f": {item}"), "          ")
        blocks.append("\n".join(lines) + "\n")
    from ridgeline.analyzer.accounting import accounting, accounting_lines

    acc = accounting_lines(accounting(result))
    if acc:
        blocks.append("\n".join(acc) + "\n")
    if result.notes:
        from ridgeline.render.notes import collapse_notes

        lines = ["Notes:"]
        for n in collapse_notes(result.notes):
            lines += _wrap(f"- {n}", "  ")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(b for b in blocks if b)
