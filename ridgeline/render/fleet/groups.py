"""The per-group table of ``ridgeline telemetry --by`` / ``--jobs`` as terminal text (the rows
come from :meth:`ridgeline.analyzer.fleet.groups.GroupReport.rows`, which the JSON document and the
HTML report show too).

One line per group, worst first: GPUs, GPU-hours observed, GPU-hours wasted (idle with memory
allocated + unavailable: time thrown away) and its share, GPU-hours underused (busy far from the
tensor/FP roofs: memory-bound, I/O-bound, busy-low-throughput, busy) and its share, and the mean
tensor and DRAM activity. A key is never cut: one longer than its column
goes on a line of its own, the figures on the next. Under each group, its notes.
"""

from __future__ import annotations

import textwrap

from ridgeline.render.text import fmt_pct

FIGURES_W = 58  # width of the figures after the key column


def _h(x) -> str:
    if x is None:
        return "-"
    return f"{x:.2f}" if abs(x) < 10 else f"{x:.1f}" if abs(x) < 1000 else f"{x:.0f}"


def format_groups(report, *, width: int = 80, max_rows: int = 40) -> str:
    """The group block (empty string without a report)."""
    if report is None:
        return ""
    rows = report.rows()
    by = " / ".join(report.by)
    lines = [f"Groups by {by}: {len(rows)} group(s), most wasted GPU-hours first"]
    if not rows:
        return lines[0] + ": none (no windows)\n"
    key_w = max(12, min(max(len(r["key"]) for r in rows), width - FIGURES_W - 1))
    head = (f"{'group':<{key_w}} {'gpus':>4} {'GPU-h':>7} {'wasted':>7} {'%':>4} {'under':>7} {'%':>4} "
            f"{'tens':>4} {'dram':>4}")
    lines += [head, "-" * len(head)]
    for r in rows[:max_rows]:
        figures = (f"{r['gpus']:>4} {_h(r['gpu_hours']):>7} {_h(r['wasted_gpu_hours']):>7} "
                   f"{fmt_pct(r['wasted_share']):>4} {_h(r['underused_gpu_hours']):>7} {fmt_pct(r['underused_share']):>4} "
                   f"{fmt_pct(r['tensor_active']):>4} {fmt_pct(r['dram_active']):>4}")
        if len(r["key"]) > key_w:  # never cut a key: two hosts must not look alike
            lines += textwrap.wrap(r["key"], width=width, break_on_hyphens=False) or [r["key"]]
            lines.append(f"{'':<{key_w}} {figures}")
        else:
            lines.append(f"{r['key']:<{key_w}} {figures}")
        notes = list(r["notes"]) + ([f"underused: {r['underused_remedy']}"] if r.get("underused_remedy") else [])
        for note in notes:
            lines += textwrap.wrap(note, width=width, initial_indent="    - ", subsequent_indent="      ")
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more group(s) (--max-rows N, or --format json for all)")
    lines += textwrap.wrap("GPU-h = GPU-hours observed; wasted = idle with memory allocated + unavailable "
                           "(time thrown away); under = busy far from the tensor/FP roofs (memory-bound, I/O-bound, "
                           "busy-low-throughput: work done badly, with the remedy of its class); tens / dram = mean "
                           "activity weighted by GPU time; a window shared by groups is split by time overlap",
                           width=width)
    return "\n".join(lines) + "\n"
