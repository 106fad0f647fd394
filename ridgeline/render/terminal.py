"""AnalysisResult -> readable text for an 80-column terminal (``ridgeline analyze``).

Sections: header (inputs, launches, GPU time), the GPU and each roof with its source,
the top kernels by share of GPU time, one line on where the time goes (memory-bound /
compute-bound / unknown), skipped items grouped by reason, findings (most impactful
first; message and remedy wrapped), notes, and the telemetry windows when present.
"""

from __future__ import annotations

import importlib
import math
import textwrap
from typing import Any

from ridgeline.analyzer.gpus import PRECISION_LABELS

WIDTH = 80
SOURCE_LABELS = {
    "ncu": "measured by ncu",
    "ncu-device-attributes": "from ncu device attributes",
    "catalogue": "catalogue",
}


def fmt_seconds(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    a = abs(value)
    if a >= 1:
        return f"{value:.3g} s"
    if a >= 1e-3:
        return f"{value * 1e3:.3g} ms"
    if a >= 1e-6:
        return f"{value * 1e6:.3g} us"
    if a == 0:
        return "0 s"
    return f"{value * 1e9:.3g} ns"


def fmt_si(value: float | None, unit: str) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    for factor, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def fmt_pct(ratio: float | None, digits: int = 0) -> str:
    if ratio is None or not math.isfinite(ratio):
        return "-"
    return f"{ratio * 100:.{digits}f}%"


def fmt_num(value: float | None) -> str:
    if value is None:
        return "-"
    if not math.isfinite(value):
        return "inf" if value > 0 else "-"
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def shorten(text: str | None, width: int) -> str:
    text = (text or "?").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "~"


def distinct_labels(names: list[str], width: int) -> list[str]:
    """Labels of at most ``width`` characters that stay distinct where plain truncation would not.

    Names that truncate to the same label keep their head and show the part after the
    prefix they share (cuBLAS names differ in the middle: ``..._tilesize128x64x64_...``).
    """
    labels = [shorten(n, width) for n in names]
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        groups.setdefault(label, []).append(i)
    for idx in groups.values():
        members = {names[i] for i in idx}
        if len(members) < 2:
            continue
        common = len(_common_prefix(sorted(members)))
        head = min(10, width // 3)
        for i in idx:
            name = names[i]
            start = max(common - 2, head)
            labels[i] = shorten(name[:head] + "~" + name[start:], width)
    return labels


def _common_prefix(items: list[str]) -> str:
    first, last = items[0], items[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _wrap(text: str, indent: str, width: int = WIDTH) -> list[str]:
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=True, break_on_hyphens=False) or [indent]


def _header(result) -> list[str]:
    kinds = sorted({i.kind for i in result.inputs})
    files = len(result.inputs)
    parts = [f"{files} input{'s' if files != 1 else ''}" + (f" ({', '.join(kinds)})" if kinds else "")]
    if result.kernels is not None:
        n = result.kernels.height
        names = result.summary.height if result.summary is not None else 0
        parts.append(f"{n} launch{'es' if n != 1 else ''} of {names} kernel{'s' if names != 1 else ''}")
        parts.append(f"{fmt_seconds(result.total_gpu_time_s)} GPU time")
    return _wrap("ridgeline: " + ", ".join(parts), "")


def _gpu_lines(result) -> list[str]:
    lines = []
    name = result.gpu_name or "not identified"
    match = f" ({result.gpu_match})" if result.gpu_match else ""
    lines += _wrap(f"GPU: {name}{match}", "")
    if not result.roofs:
        lines.append("Roofs: none (no measured peaks, no catalogue match: pass --gpu NAME)")
        return lines
    lines.append("Roofs:")
    bw_values = [r.value for r in result.roofs if r.kind == "bandwidth" and r.level == "dram"]
    for r in result.roofs:
        if r.kind == "bandwidth":
            text = f"DRAM bandwidth  {fmt_si(r.value, 'B/s'):>12}"
        else:
            label = PRECISION_LABELS.get(r.precision or "", r.precision or "?")
            text = f"{label:<15} {fmt_si(r.value, 'FLOP/s'):>12}"
            if len(bw_values) == 1 and bw_values[0]:
                text += f"  ridge {fmt_num(r.value / bw_values[0])} FLOP/B"
        label = SOURCE_LABELS.get(r.source, r.source)
        lines += _wrap(f"{text}  [{label}: {r.detail}]" if r.detail else f"{text}  [{label}]", "  ")
    return lines


def _top_kernels(result, top: int) -> list[str]:
    s = result.summary
    if s is None or s.height == 0:
        return []
    rows = s.head(top).to_dicts()
    name_w = WIDTH - (3 + 9 + 10 + 7 + 9 + 9 + 6) - 1
    head = f"{'#':>2} {'kernel':<{name_w}}{'launches':>9}{'time':>10}{'share':>7}{'FLOP/B':>9} {'bound':<8}{'roof':>6}"
    lines = [f"Top kernels by GPU time ({min(top, s.height)} of {s.height})", head]
    labels = distinct_labels([r["short_name"] or r["kernel_name"] or "?" for r in rows], name_w - 1)
    for i, (r, label) in enumerate(zip(rows, labels), 1):
        lines.append(
            f"{i:>2} {label:<{name_w}}"
            f"{r['launches']:>9}{fmt_seconds(r['total_duration_s']):>10}{fmt_pct(r['time_share'], 1):>7}"
            f"{fmt_num(r['intensity_dram']):>9} {(r['bound'] or '-'):<8}{fmt_pct(r['roof_fraction']):>6}"
        )
    return lines


def time_by_bound(result) -> dict[str, float]:
    """Share of GPU time per bound (memory / compute / unknown), from the launches."""
    k = result.kernels
    if k is None or k.height == 0:
        return {}
    import polars as pl

    total = k.get_column("duration_s").sum() or 0.0
    if not total:
        return {}
    agg = k.group_by("bound").agg(pl.col("duration_s").sum().alias("t"))
    return {b: t / total for b, t in agg.iter_rows() if t}


def _where_time_goes(result) -> list[str]:
    shares = time_by_bound(result)
    if not shares:
        return []
    parts = [f"{fmt_pct(shares.get(b, 0.0))} {label}" for b, label in
             (("memory", "memory-bound"), ("compute", "compute-bound"), ("unknown", "unknown"))]
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
        example = f" (e.g. {items[0].source}: {items[0].item})"
        lines += _wrap(f"{len(items):>5}  {reason}{example}", "  ")
    return lines


def _findings(result) -> list[str]:
    if not result.findings:
        return ["Findings: none"]
    n = len(result.findings)
    lines = [f"Findings ({n}), most impactful first"]
    for f in result.findings:
        impact = ""
        if f.impact_s is not None:
            impact = f"  [up to {fmt_seconds(f.impact_s)}"
            impact += f", {fmt_pct(f.impact_share, 1)} of GPU time]" if f.impact_share is not None else "]"
        lines += _wrap(f"{f.code} {f.severity:<8} {f.subject}{impact}", "")
        lines += _wrap(f.message, "    ")
        lines += _wrap(f"-> {f.remedy}", "    ")
    return lines


def _windows(result) -> list[str]:
    if getattr(result, "windows", None) is None:
        return []
    try:
        mod = importlib.import_module("ridgeline.render.telemetry")
    except ModuleNotFoundError:
        return [f"Telemetry: {result.windows.height} window(s) (text view not available)"]
    text = mod.format_windows(result)
    return text.rstrip("\n").splitlines() if text else []


def format_result(result, *, top: int = 10) -> str:
    """The whole report as one string (ends with a newline)."""
    blocks: list[list[str]] = [_header(result)]
    if result.kernels is not None or result.gpu_name:
        blocks.append(_gpu_lines(result))
    blocks.append(_top_kernels(result, top))
    blocks.append(_where_time_goes(result))
    blocks.append(_windows(result))
    blocks.append(_skipped(result))
    blocks.append(_findings(result))
    if result.notes:
        notes = ["Notes:"]
        for note in result.notes:
            notes += _wrap(f"- {note}", "  ")
        blocks.append(notes)
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def render_terminal(result: Any, *, top: int = 10) -> str:
    return format_result(result, top=top)
