"""Telemetry windows as 80-column terminal text (``ridgeline telemetry``, and the telemetry
block of ``ridgeline analyze``).

:func:`format_windows` prints the per-GPU / per-window table (long inputs are cut at
``max_rows`` rows with a pointer to ``--format csv``) and the fleet summary ranking GPUs and
hosts by wasted GPU-hours (:func:`ridgeline.analyzer.telemetry.fleet_summary`).
:func:`format_telemetry_report` adds inputs, findings, skipped items and notes.
Columns: util = mean GPU-Util (GR_ENGINE_ACTIVE where absent), gract/tens/dram = mean
GR_ENGINE / PIPE_TENSOR / DRAM_ACTIVE, cov = share of the window with samples, waste =
busy-with-idle-tensor + allocated-but-idle minutes; ``x`` marks a window excluded by RL205.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

WIDTH = 80
MAX_ROWS = 40


def _pct(x: Any) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{100 * x:.0f}%"


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


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "~"


def _gpu_label(row: dict) -> str:
    g = "?" if row.get("gpu") is None else str(row["gpu"])
    if row.get("gpu_instance") is not None:
        g += f"/i{row['gpu_instance']}"
    return g


def _wrap(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(text, width=WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=True, break_on_hyphens=False) or [indent]


def format_windows(result, *, max_rows: int = MAX_ROWS) -> str:
    """Per-GPU/per-window table + fleet summary, 80 columns wide. Empty string without windows."""
    import polars as pl

    from ridgeline.analyzer.telemetry import fleet_summary

    w = getattr(result, "windows", None)
    if w is None:
        return ""
    if w.height == 0:
        return "Telemetry: no samples of the fields ridgeline analyzes\n"
    gpus = w.select("host", "gpu", "gpu_instance").unique().height
    hosts = w.get_column("host").n_unique()
    lines = [f"Telemetry: {gpus} GPU(s) on {hosts} host(s), {w.height} window(s), "
             f"{_dur(float(w.get_column('span_s').sum() or 0))} of GPU time observed"]
    hdr = f"{'host':<11} {'gpu':>5} {'window start':<11} {'len':>5} {'n':>5} {'cov':>4} {'util':>4} {'gract':>5} " \
          f"{'tens':>4} {'dram':>4} {'power':>5} {'waste':>5}"
    lines.append(hdr)
    lines.append("-" * len(hdr))
    rows = w.sort(["host", "gpu", "gpu_instance", "window_start"], nulls_last=True)
    for r in rows.head(max_rows).iter_rows(named=True):
        length = (r["window_end"] - r["window_start"]).total_seconds() if r["window_end"] else None
        util = r["gpu_util_mean_ratio"] if r["gpu_util_mean_ratio"] is not None else r["gr_engine_active_mean_ratio"]
        waste = (r["busy_tensor_idle_s"] or 0.0) * (r["excluded"] is None) + (r["allocated_idle_s"] or 0.0)
        start = r["window_start"].strftime("%m-%d %H:%M") if r["window_start"] else "-"
        line = (f"{_cut(r['host'] or '?', 11):<11} {_cut(_gpu_label(r), 5):>5} {start:<11} {_dur(length):>5} "
                f"{_cut(str(r['samples']), 5):>5} {_pct(r['coverage_ratio']):>4} {_pct(util):>4} "
                f"{_pct(r['gr_engine_active_mean_ratio']):>5} {_pct(r['tensor_active_mean_ratio']):>4} "
                f"{_pct(r['dram_active_mean_ratio']):>4} {_num(r['power_mean_w']):>5} {_dur(waste):>5}")
        if r["excluded"] is not None:
            line = line[: WIDTH - 2] + " x"
        lines.append(line[:WIDTH])
    if rows.height > max_rows:
        lines.append(f"... {rows.height - max_rows} more window rows (--window all for one row per GPU, "
                     "or --format csv)")
    if rows.filter(pl.col("excluded").is_not_null()).height:
        lines.append("x = excluded from performance rules (see RL205)")

    fleet = fleet_summary(w)
    wasted = float(fleet.get_column("wasted_gpu_h").sum() or 0.0)
    span_h = float(fleet.get_column("span_h").sum() or 0.0)
    lines.append("")
    lines.append(f"Fleet: wasted {wasted:.2f} GPU-h of {span_h:.2f} GPU-h observed "
                 f"({_pct(wasted / span_h if span_h else None)}, upper bound)")
    lines.append("  wasted = busy with idle tensor cores + idle with memory allocated")
    top = fleet.filter(pl.col("wasted_gpu_h") > 0).head(5)
    for r in top.iter_rows(named=True):
        lines.append(f"  {r['rank']:>3}. host:{_cut(r['host'] or '?', 24)} gpu:{_gpu_label(r):<6} "
                     f"{r['wasted_gpu_h']:.2f} GPU-h ({_pct(r['wasted_share'])} of its time)")
    if hosts > 1:
        by_host = fleet_summary(w, by="host").filter(pl.col("wasted_gpu_h") > 0).head(5)
        for r in by_host.iter_rows(named=True):
            lines.append(f"  host {r['rank']:>3}. {_cut(r['host'] or '?', 30)}: {r['wasted_gpu_h']:.2f} GPU-h over "
                         f"{r['gpus']} GPU(s)")
    return "\n".join(lines) + "\n"


def format_findings(findings) -> str:
    if not findings:
        return "Findings: none\n"
    lines = [f"Findings ({len(findings)}), most impactful first"]
    for f in findings:
        impact = f"  [up to {_dur(f.impact_s)} GPU time]" if f.impact_s else ""
        lines += _wrap(f"{f.code} {f.severity:<8} {f.subject}{impact}")
        lines += _wrap(f.message, "    ")
        lines += _wrap(f"-> {f.remedy}", "    ")
    return "\n".join(lines) + "\n"


def format_telemetry_report(result, *, max_rows: int = MAX_ROWS) -> str:
    """Inputs, the window table and fleet summary, findings, skipped items, notes."""
    blocks = []
    if result.inputs:
        n = sum(i.rows for i in result.inputs)
        kinds = sorted({i.kind for i in result.inputs})
        blocks.append(f"Inputs: {len(result.inputs)} file(s), {n} record(s) ({', '.join(kinds)})\n")
    blocks.append(format_windows(result, max_rows=max_rows))
    blocks.append(format_findings(result.findings))
    if result.skipped:
        groups: dict[str, list] = {}
        for s in result.skipped:
            groups.setdefault(s.reason, []).append(s)
        lines = [f"Skipped: {len(result.skipped)} item(s)"]
        for reason, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            lines += _wrap(f"{len(items):>5}  {reason} (e.g. {items[0].item})", "  ")
        blocks.append("\n".join(lines) + "\n")
    if result.notes:
        lines = ["Notes:"]
        for n in result.notes:
            lines += _wrap(f"- {n}", "  ")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(b for b in blocks if b)
