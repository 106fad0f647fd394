"""AnalysisResult -> readable text for an 80-column terminal (``ridgeline analyze``).

Sections: header (inputs, launches, GPU time), the GPU and each roof with its source,
the top kernels by share of GPU time, one line on where the time goes (memory-bound /
compute-bound / unknown), skipped items grouped by reason, findings (most impactful
first; message and remedy wrapped), notes, and the telemetry windows when present.
"""

from __future__ import annotations

import re
from typing import Any

from ridgeline.analyzer.kernels.gpus import PRECISION_LABELS
from ridgeline.analyzer.kernels.latency import VIEW_BOUNDS, VIEW_LABELS, VIEW_LEGEND, view_bound
from ridgeline.analyzer.kernels.speed_of_light import LEGEND as SOL_LEGEND, mark as sol_mark
from ridgeline.render.text import (  # noqa: F401  (re-exported: the terminal's public helpers)
    GROUP_DETAIL_MAX, GROUP_LIST_MAX, GROUP_REMEDIES_MAX, TELEMETRY_KINDS, WIDTH, _findings, _impact_text, _wrap,
    distinct_labels, fmt_num, fmt_pct, fmt_seconds, fmt_si, shorten,
)

SOURCE_LABELS = {
    "ncu": "measured by ncu",
    "ncu-device-attributes": "theoretical, from clocks ncu recorded",
    "catalogue": "datasheet",
    "derived-from-device-attributes": "derived: SMs x per-SM rate x clock",
}
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}


from ridgeline.render.text import TENSOR_PATH_LABELS, tensor_path_label  # noqa: E402,F401  (one table, plots too)


def roof_source_text(roof) -> str:
    """Short provenance of a roof for the terminal: ``measured by ncu (359 launches, at 1.83 GHz
    SM clock)``, ``datasheet``. The full detail stays in the JSON document."""
    label = SOURCE_LABELS.get(roof.source, roof.source)
    detail = roof.detail or ""
    parts = []
    m = re.search(r"(?:median|max|min)\s+(?:of|over)\s+([0-9,]+)\s+launch", detail)
    if m:
        n = int(m.group(1).replace(",", ""))
        parts.append(f"{n:,} launch{'es' if n != 1 else ''}")
    m = re.search(r"at (?:SM|DRAM|L2|L1|memory) clock ([0-9.]+ ?[kMG]?Hz)", detail)
    if m:
        parts.append(f"at {m.group(1)}")
    m = re.search(r"at ([0-9.]+ ?[kMG]?Hz), scaled to the recorded SM clock ([0-9.]+ ?[kMG]?Hz)", detail)
    if m:
        parts.append(f"scaled to {m.group(2)} from {m.group(1)}")
    return f"{label} ({', '.join(parts)})" if parts else label



def _header(result) -> list[str]:
    kinds = sorted({i.kind for i in result.inputs})
    files = len(result.inputs)
    parts = [f"{files} input{'s' if files != 1 else ''}" + (f" ({', '.join(kinds)})" if kinds else "")]
    if result.kernels is not None:
        n = result.kernels.height
        names = result.summary.height if result.summary is not None else 0
        parts.append(f"{n} launch{'es' if n != 1 else ''} of {names} kernel{'s' if names != 1 else ''}")
        parts.append(f"{fmt_seconds(result.total_gpu_time_s)} GPU time")
    tel = [i for i in result.inputs if not i.kind.startswith(("ncu", "nsys", "kineto", "rocprof", "rocpd"))]
    # an nsys stats summary (cuda_gpu_kern_sum...) holds totals per name, not timeline records: it is
    # counted as what the "nsys stats summaries (totals only)" block below shows
    sums = [i for i in result.inputs if (i.kind.startswith("nsys-stats:") and i.kind != "nsys-stats:cuda_gpu_trace")
            or i.kind == "rocprof-stats"]
    tl = [i for i in result.inputs if i.kind.startswith(("nsys", "kineto", "rocprof", "rocpd")) and i not in sums]
    if tl:
        n = sum(i.rows for i in tl)
        parts.append(f"{n:,} timeline record{'s' if n != 1 else ''}")
    if sums:
        n = sum(i.rows for i in sums)
        tool = "nsys stats" if all(i.kind.startswith("nsys") for i in sums) else "stats"
        parts.append(f"{n:,} {tool} total{'s' if n != 1 else ''} (per name, no timeline)")
    if tel:
        n = sum(i.rows for i in tel)
        parts.append(f"{n:,} telemetry record{'s' if n != 1 else ''}")
    return _wrap("ridgeline: " + ", ".join(parts), "")




def _gpu_lines(result) -> list[str]:
    lines = []
    from ridgeline.render.facts import gpu_title

    name = gpu_title(result)  # the JSON's gpu.label, as the report's title names it
    match = f" ({result.gpu_match})" if result.gpu_match else ""
    lines += _wrap(f"GPU: {name}{match}", "")
    if not result.roofs:
        lines.append("Roofs: none (no measured peaks, no catalogue match: pass --gpu NAME)")
        return lines
    # roofs per device (an input mixing GPUs has one set each), in order of appearance; each roof's
    # ridge is the JSON document's (ridgeline.render.facts), against its own device's DRAM roof
    from ridgeline.render.facts import roof_device, roof_ridges

    by_device: dict[str | None, list] = {}
    for r, ridge_value in zip(result.roofs, roof_ridges(result)):
        by_device.setdefault(roof_device(r), []).append((r, ridge_value))
    several = len(by_device) > 1
    any_ridge = False
    body: list[str] = []
    label_w = max([14] + [len(PRECISION_LABELS.get(r.precision or "", ""))
                          + len(tensor_path_label(r.path)) + 1 for r in result.roofs if r.path])
    for device, roofs in by_device.items():
        indent = "    " if several else "  "
        if several:
            body.append(f"  {device or 'device not named'}:")
        for r, ridge_value in roofs:
            if r.kind == "bandwidth":
                label = LEVEL_LABELS.get(r.level or "dram", (r.level or "?").upper()) + " bandwidth"
                value, ridge = fmt_si(r.value, "B/s"), ""
            else:
                label = PRECISION_LABELS.get(r.precision or "", r.precision or "?")
                if r.path:  # "BF16 TC wgmma": the precision as every view names it, then the path
                    label += f" {tensor_path_label(r.path)}"
                value = fmt_si(r.value, "FLOP/s")
                ridge = fmt_num(ridge_value) if ridge_value else ""
                any_ridge = any_ridge or bool(ridge)
            gap = "  " if label_w == 14 else " "  # labels with a tensor path: keep lines within 80 columns
            line = f"{label:<{label_w}}{value:>12}{ridge:>5}{gap}{roof_source_text(r)}"
            if len(indent) + len(line) > 80:
                line = line.replace(", at ", ", ")
            body += _wrap(line, indent)
    lines.append("Roofs" + (" (ridge = compute roof / DRAM roof, FLOP/B)" if any_ridge else "") + ":")
    lines += body
    if any(r.detail for r in result.roofs):
        lines.append("  (each roof's full provenance: --format json, roofs[].detail)")
    return lines


# the kernel table's precision column: what the FLOPs ran as (tensor-core math for the last four)
from ridgeline.analyzer.kernels.precisions import SHORT as PRECISION_SHORT, SHORT_LEGEND  # noqa: E402


def _top_kernels(result, top: int, width: int = WIDTH) -> list[str]:
    s = result.summary
    if s is None or s.height == 0:
        return []
    rows = s.head(top).to_dicts()
    width = max(WIDTH, width)
    name_w = min(width - (3 + 5 + 6 + 9 + 7 + 7 + 9 + 5), 100)
    head = (f"{'#':>2} {'kernel':<{name_w}}{'prec':<5}{'launch':>6}{'time':>9}{'share':>7}{'FLOP/B':>7} "
            f"{'bound':<8}{'roof':>5}")
    lines = [f"Top kernels by GPU time ({min(top, s.height)} of {s.height})", head]
    labels = distinct_labels([r.get("kernel_label") or r["short_name"] or r["kernel_name"] or "?" for r in rows], name_w - 1,
                             [r["kernel_name"] or r["short_name"] or "?" for r in rows])
    for i, (r, label) in enumerate(zip(rows, labels), 1):
        lines.append(
            f"{i:>2} {label:<{name_w}}{PRECISION_SHORT.get(r.get('precision') or '', '-'):<5}"
            f"{fmt_count(r['launches']):>6}{fmt_seconds(r['total_duration_s']):>9}{fmt_pct(r['time_share'], 1):>7}"
            f"{fmt_num(r['intensity_dram']):>7} "
            f"{(view_bound(r['bound'], r.get('latency_kind')) or '-') + sol_mark(r.get('bound_source')):<8}"
            f"{fmt_pct(r['roof_fraction']):>5}"
        )
    legend = (f"prec: the math the FLOPs ran as ({SHORT_LEGEND}); "
              "FLOP/B: intensity at DRAM; roof: achieved share of the roof that bounds it")
    if any(r.get("bound") == "latency" for r in rows):
        legend += "; " + VIEW_LEGEND
    if any(sol_mark(r.get("bound_source")) for r in rows):
        legend += "; " + SOL_LEGEND
    lines += _wrap(legend, "", width)
    return lines


def fmt_count(n: int | None) -> str:
    if n is None:
        return "-"
    if n >= 1_000_000:
        return f"{n / 1e6:.3g}M"
    if n >= 100_000:
        return f"{n / 1e3:.0f}k"
    return str(n)


def time_by_bound(result) -> dict[str, float]:
    """Share of GPU time per bound (memory / compute / latency / unknown): ridgeline.render.facts."""
    from ridgeline.render.facts import time_by_bound as shares

    return shares(result)


def _where_time_goes(result) -> list[str]:
    shares = time_by_bound(result)
    if not shares:
        return []
    always = ("memory", "compute", "unknown")
    parts = [f"{fmt_pct(shares.get(b, 0.0))} {VIEW_LABELS[b]}" for b in VIEW_BOUNDS if b in always or shares.get(b)]
    return _wrap("Where the time goes: " + ", ".join(parts), "")


def _skipped(result) -> list[str]:
    if not result.skipped:
        return []
    groups: dict[str, list] = {}
    for s in result.skipped:
        groups.setdefault(s.reason, []).append(s)
    n = len(result.skipped)
    lines = [f"Skipped: {n} item{'s' if n != 1 else ''}"]
    for reason, items in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        lines += _wrap(f"{len(items):>5} x {reason}", "  ")
        item = items[0].item  # "file" is the whole file: the reason above says why, the path which
        lines += _wrap(f"e.g. {items[0].source}" + ("" if item == "file" else f": {item}"), "          ")
    return lines


def _windows(result, all_windows: bool = False, width: int = WIDTH) -> list[str]:
    if getattr(result, "windows", None) is None:
        return []
    from ridgeline.render.fleet.telemetry import format_windows

    extra = {"width": width} if width != WIDTH else {}
    text = format_windows(result, all_windows=True, **extra) if all_windows else format_windows(result, **extra)
    return text.rstrip("\n").splitlines() if text else []


def format_result(result, *, top: int = 10, all_windows: bool = False, width: int = WIDTH) -> str:
    """The whole report as one string (ends with a newline); ``all_windows``: every telemetry
    window row instead of per-GPU totals and the worst windows; ``width``: the terminal's
    columns (the kernel table's names use what is beyond 80)."""
    blocks: list[list[str]] = [_header(result)]
    if result.kernels is not None or result.gpu_name:
        blocks.append(_gpu_lines(result))
    blocks.append(_top_kernels(result, top, width))
    blocks.append(_where_time_goes(result))
    from ridgeline.render.kernels.whatif import format_text

    blocks.append(format_text(result, top=top, width=WIDTH))
    blocks.append(_windows(result, all_windows, width))
    from ridgeline.render.timeline import postmortem

    blocks += [postmortem.utilization_lines(result), postmortem.timeline_lines(result), postmortem.ncu_rule_lines(result)]
    blocks.append(_skipped(result))
    from ridgeline.analyzer.accounting import accounting, accounting_lines

    blocks.append(accounting_lines(accounting(result)))
    blocks.append(_findings(result))
    if result.notes:
        from ridgeline.render.notes import collapse_notes

        notes = ["Notes:"]
        for note in collapse_notes(result.notes):
            notes += _wrap(f"- {note}", "  ")
        blocks.append(notes)
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def render_terminal(result: Any, *, top: int = 10) -> str:
    return format_result(result, top=top)
