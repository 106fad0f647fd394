"""AnalysisResult -> readable text for an 80-column terminal (``ridgeline analyze``).

Sections: header (inputs, launches, GPU time), the GPU and each roof with its source,
the top kernels by share of GPU time, one line on where the time goes (memory-bound /
compute-bound / unknown), skipped items grouped by reason, findings (most impactful
first; message and remedy wrapped), notes, and the telemetry windows when present.
"""

from __future__ import annotations

import math
import re
import textwrap
from typing import Any

from ridgeline.analyzer.gpus import PRECISION_LABELS

WIDTH = 80
SOURCE_LABELS = {
    "ncu": "measured by ncu",
    "ncu-device-attributes": "theoretical, from clocks ncu recorded",
    "catalogue": "datasheet",
}
GROUP_DETAIL_MAX = 3  # a rule with more findings lists its subjects one line each
GROUP_LIST_MAX = 8  # ... at most this many, then "and N more"
GROUP_REMEDIES_MAX = 3  # kinds of advice printed for one rule's group
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}


TENSOR_PATH_LABELS = {"hgmma": "wgmma", "hmma": "mma.sync"}


def tensor_path_label(path: str | None) -> str:
    """``hgmma`` -> ``wgmma``, ``hgmma+hmma`` -> ``wgmma+mma.sync``: the names kernel authors use."""
    if not path:
        return ""
    return "+".join(TENSOR_PATH_LABELS.get(p.removesuffix("-sparse"), p) + ("-sparse" if p.endswith("-sparse") else "")
                    for p in path.split("+"))


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


def fmt_seconds(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    a = abs(value)
    if a >= 3600:
        return f"{value / 3600:.3g} h"
    if a >= 60:
        return f"{value / 60:.3g} min"
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


def fmt_pct(ratio: float | None, digits: int = 0, *, missing: str = "-") -> str:
    """0.3617 -> '36%' (``digits`` decimals); ``missing`` for None and non-finite values."""
    if ratio is None or not math.isfinite(ratio):
        return missing
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


_SUFFIX = re.compile(r"^(.*?)(\s*\[[^\[\]]*\])$")
_SEP = re.compile(r"[_:<>,()\s]+")


def _middle(text: str, width: int) -> str:
    """``head~tail`` in at most ``width`` characters (the tail carries tile sizes and variants)."""
    if len(text) <= width:
        return text
    tail = (width - 1) // 2
    head = width - 1 - tail
    return text[:head] + "~" + text[len(text) - tail:]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CXX_NOISE = {"void", "const", "lambda", "instance", "operator", "unnamed", "unsigned", "struct", "class"}


def _template_labels(shorts: list[str], fulls: list[str], width: int) -> list[str]:
    """``elementwise_kernel<direct_copy_kernel_cuda>`` / ``elementwise_kernel<CUDAFunctor_add>``:
    the last ``::`` part of the short name (middle-cut to half the width), then the identifiers
    and numbers of the full name that the others lack. Equal word sets keep the short name (the
    caller numbers them)."""
    words = [[w for w in _IDENT.findall(f) if w not in _CXX_NOISE and not re.fullmatch(r"T\d+", w)] for f in fulls]
    common = set.intersection(*(set(w) for w in words))
    out = []
    for short, ws in zip(shorts, words):
        varying = [w for w in dict.fromkeys(ws) if w not in common]
        if not varying:
            out.append(shorten(short, width))
            continue
        head = _middle(short.rsplit("::", 1)[-1], max(8, width // 2))
        out.append(shorten(f"{head}<{', '.join(varying)}>", width))
    return out


def _common_prefix(items: list[str]) -> str:
    first, last = items[0], items[-1]
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _tokens(name: str) -> list[str]:
    """Words of a kernel name: split at ``_ : < > , ( ) space``, punctuation such as ``*`` dropped."""
    return [w for t in _SEP.split(name) if (w := re.sub(r"[^A-Za-z0-9.]", "", t))]


def _varying_tail(name: str, tokens_common: set[str], prefixes: set[str]) -> str:
    varying = []
    for t in dict.fromkeys(_tokens(name)):
        if t in tokens_common:
            continue
        m = re.match(r"([A-Za-z]+)(\d\S*)$", t)
        varying.append(m.group(2) if m and m.group(1) in prefixes else t)
    return "~".join(varying)


def _varying_label(name: str, tokens_common: set[str], width: int, prefixes: set[str] = frozenset(),
                   head: str | None = None) -> str:
    """The name's head, ``~``, then the tokens that set it apart from its look-alikes.

    A varying token whose letters are a prefix every look-alike has (``tilesize`` in
    ``tilesize128x64x64``) is shown by its value only (``128x64x64``).
    """
    tail = _varying_tail(name, tokens_common, prefixes)
    if not tail:
        return _middle(name, width)
    room = width - 1 - len(tail)
    if room < 6:  # the distinguishing part alone is too long: keep its ends
        return _middle(name[:10] + "~" + tail, width) if width > 12 else _middle(tail, width)
    if head is not None:  # the group's shared head, then what tells this name apart
        return f"{shorten(head, room)}~{tail}"
    head = name[:room]
    cut = max(head.rfind("_"), head.rfind(":"))
    if cut >= 6:  # end the head at a token boundary
        head = head[:cut]
    head = head.rstrip("_:")
    return f"{head}~{tail}"


def _shared_prefixes(names: list[str]) -> set[str]:
    """Letter prefixes of ``letters+digits`` tokens that every name has (``tilesize``)."""
    sets = []
    for n in names:
        sets.append({m.group(1) for t in _tokens(n) if (m := re.match(r"([A-Za-z]{4,})\d", t))})
    return set.intersection(*sets) if sets else set()


def distinct_labels(names: list[str], width: int, full_names: list[str] | None = None, *,
                    together: bool = False) -> list[str]:
    """Labels of at most ``width`` characters that stay distinct where plain truncation would not.

    Names that truncate to the same label keep their head and show the tokens they do not
    share (cuBLAS names differ in the middle: ``sm90_xmma_gemm~128x64x64~off``).
    ``full_names`` (e.g. demangled names with template arguments) disambiguate short names
    that are equal. Labels that still collide get ``#1``, ``#2``... ``together``: every name
    too long for ``width`` is labelled against all the others (a list of look-alikes, such
    as the subjects of one rule's findings), not only those it collides with.
    """
    full = list(full_names) if full_names is not None else list(names)
    labels = [shorten(n, width) for n in names]
    groups: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        key = "\0long" if together and len(names[i] or "") > width else label
        groups.setdefault(key, []).append(i)
    for idx in groups.values():
        if len(idx) < 2:
            continue
        # equal short names whose full names differ: tell them apart by the full names
        by_full = len({names[j] for j in idx}) < len(idx) and any(full[j] != names[j] for j in idx)
        use = [(full[i] or names[i]) if by_full else names[i] for i in idx]
        if len(set(use)) < 2:
            continue
        # a bracketed qualifier at the end ('... [bf16/fp16, H200]', finding subjects) is kept whole
        suffixes = [m.group(2) if (m := _SUFFIX.match(u)) else "" for u in use]
        if any(suffixes) and max(map(len, suffixes)) < width // 2:
            stems = [u[: len(u) - len(sfx)] for u, sfx in zip(use, suffixes)]
            inner = distinct_labels(stems, width - max(map(len, suffixes)), together=True) if len(set(stems)) > 1 \
                else [shorten(st, width - max(map(len, suffixes))) for st in stems]
            for i, lab, sfx in zip(idx, inner, suffixes):
                labels[i] = lab + sfx
            continue
        if by_full:  # templated C++ names: short name's last part, then the template words that differ
            for i, lab in zip(idx, _template_labels([names[i] for i in idx], use, width)):
                labels[i] = lab
            continue
        token_sets = [set(_tokens(u)) for u in use]
        common = set.intersection(*token_sets)
        prefixes = _shared_prefixes(use)
        # one head for the whole group (their common start, cut at a word end) so the varying
        # parts line up; as long as the longest varying part allows
        tails = [_varying_tail(u, common, prefixes) for u in use]
        shared = _common_prefix(sorted(use))
        room = width - 1 - max(len(t) for t in tails)
        head = shared[:room] if room >= 6 else None
        if head:
            cut = max(head.rfind("_"), head.rfind(":"))
            head = (head[:cut] if cut >= 6 else head).rstrip("_:")
        for i, u, tail in zip(idx, use, tails):
            labels[i] = _varying_label(u, common, width, prefixes, head=head if head and tail else None)
    clash: dict[str, set[str]] = {}
    for label, f in zip(labels, full):
        clash.setdefault(label, set()).add(f)
    counter: dict[str, int] = {}
    before = list(labels)
    for i, label in enumerate(before):
        if before.count(label) > 1 and len(clash[label]) > 1:
            counter[label] = counter.get(label, 0) + 1
            suffix = f"#{counter[label]}"
            labels[i] = shorten(label, width - len(suffix)).rstrip("~") + suffix
    return labels


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
    tel = [i for i in result.inputs if not i.kind.startswith(("ncu", "nsys", "kineto"))]
    tl = [i for i in result.inputs if i.kind.startswith(("nsys", "kineto"))]
    if tl:
        n = sum(i.rows for i in tl)
        parts.append(f"{n:,} timeline record{'s' if n != 1 else ''}")
    if tel:
        n = sum(i.rows for i in tel)
        parts.append(f"{n:,} telemetry record{'s' if n != 1 else ''}")
    return _wrap("ridgeline: " + ", ".join(parts), "")


_DEVICE = re.compile(r" on (.+?)(?::|,|$)")


def _gpu_lines(result) -> list[str]:
    lines = []
    name = result.gpu_name or "not identified"
    match = f" ({result.gpu_match})" if result.gpu_match else ""
    lines += _wrap(f"GPU: {name}{match}", "")
    if not result.roofs:
        lines.append("Roofs: none (no measured peaks, no catalogue match: pass --gpu NAME)")
        return lines
    # roofs per device (an input mixing GPUs has one set each), in order of appearance
    by_device: dict[str | None, list] = {}
    for r in result.roofs:
        m = _DEVICE.search(r.detail or "")
        by_device.setdefault(m.group(1) if m else None, []).append(r)
    several = len(by_device) > 1
    any_ridge = False
    body: list[str] = []
    label_w = max([14] + [len(PRECISION_LABELS.get(r.precision or "", "").replace("BF16/FP16", "BF16"))
                          + len(tensor_path_label(r.path)) + 1 for r in result.roofs if r.path])
    for device, roofs in by_device.items():
        indent = "    " if several else "  "
        if several:
            body.append(f"  {device or 'device not named'}:")
        bw = [r.value for r in roofs if r.kind == "bandwidth" and (r.level or "dram") == "dram"]
        one_bw = len(bw) == 1 and bw[0]
        for r in roofs:
            if r.kind == "bandwidth":
                label = LEVEL_LABELS.get(r.level or "dram", (r.level or "?").upper()) + " bandwidth"
                value, ridge = fmt_si(r.value, "B/s"), ""
            else:
                label = PRECISION_LABELS.get(r.precision or "", r.precision or "?")
                if r.path:  # "BF16 TC wgmma": fp16 and bf16 share the roof; the path is what differs
                    label = label.replace("BF16/FP16", "BF16") + f" {tensor_path_label(r.path)}"
                value = fmt_si(r.value, "FLOP/s")
                ridge = fmt_num(r.value / bw[0]) if one_bw else ""
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
PRECISION_SHORT = {"fp64": "fp64", "fp32": "fp32", "fp16": "fp16", "fp64_tensor": "fp64", "tf32_tensor": "tf32",
                   "fp16_tensor": "bf16", "fp8_tensor": "fp8", "int8_tensor": "int8"}


def _top_kernels(result, top: int, width: int = WIDTH) -> list[str]:
    s = result.summary
    if s is None or s.height == 0:
        return []
    rows = s.head(top).to_dicts()
    width = max(WIDTH, width)
    name_w = min(width - (3 + 5 + 6 + 9 + 6 + 7 + 8 + 5), 100)
    head = (f"{'#':>2} {'kernel':<{name_w}}{'prec':<5}{'launch':>6}{'time':>9}{'share':>6}{'FLOP/B':>7} "
            f"{'bound':<7}{'roof':>5}")
    lines = [f"Top kernels by GPU time ({min(top, s.height)} of {s.height})", head]
    labels = distinct_labels([r.get("kernel_label") or r["short_name"] or r["kernel_name"] or "?" for r in rows], name_w - 1,
                             [r["kernel_name"] or r["short_name"] or "?" for r in rows])
    for i, (r, label) in enumerate(zip(rows, labels), 1):
        lines.append(
            f"{i:>2} {label:<{name_w}}{PRECISION_SHORT.get(r.get('precision') or '', '-'):<5}"
            f"{fmt_count(r['launches']):>6}{fmt_seconds(r['total_duration_s']):>9}{fmt_pct(r['time_share'], 1):>6}"
            f"{fmt_num(r['intensity_dram']):>7} {(r['bound'] or '-'):<7}{fmt_pct(r['roof_fraction']):>5}"
        )
    lines += _wrap("prec: the math the FLOPs ran as (tf32, bf16 = bf16 or fp16, fp8, int8: tensor cores); "
                   "FLOP/B: intensity at DRAM; roof: achieved share of the roof that bounds it", "", width)
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
             (("memory", "memory-bound"), ("compute", "compute-bound"), ("latency", "latency-bound"),
              ("unknown", "unknown")) if b != "latency" or shares.get(b)]
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
        lines += _wrap(f"e.g. {items[0].source}: {items[0].item}", "          ")
    return lines


TELEMETRY_KINDS = {"gpu", "host", "window", "telemetry"}


def _impact_text(impact_s, share, kinds=(), related=()) -> str:
    """``  [up to 423 us, 6.7% of profiled GPU time]``: telemetry findings' shares are of the GPU
    time the telemetry observed, kernel findings' of the time the profile holds. A finding whose
    saving another finding on the same subject already counts says which."""
    if impact_s is None:
        return f"  [saving counted under {related[0]}]" if related else ""
    text = f"  [up to {fmt_seconds(impact_s)}"
    if share is None:
        return text + "]"
    kinds = set(kinds)
    what = "GPU time"
    if kinds and kinds <= TELEMETRY_KINDS:
        what = "observed GPU time"
    elif kinds == {"timeline"}:
        what = "capture time"
    elif kinds and not kinds & TELEMETRY_KINDS:
        what = "profiled GPU time"
    return text + f", {fmt_pct(share, 1)} of {what}]"


def _findings(result) -> list[str]:
    """Findings, most impactful first; several findings of one rule print as one group (the
    rule's line, one line per subject, the message and remedy once when they are shared)."""
    if not result.findings:
        return ["Findings: none"]
    n = len(result.findings)
    groups: dict[tuple[str, str], list] = {}
    for f in result.findings:  # insertion order = the position of each rule's most impactful finding
        groups.setdefault((f.code, f.severity), []).append(f)
    lines = [f"Findings ({n}), most impactful first"]
    for (code, severity), items in groups.items():
        if len(items) == 1:
            f = items[0]
            lines += _wrap(f"{f.code} {f.severity:<8} {f.subject}"
                           f"{_impact_text(f.impact_s, f.impact_share, [f.subject_kind], f.related)}", "")
            lines += _wrap(f.message, "    ")
            lines += _wrap(f"-> {f.remedy}", "    ")
            continue
        impacts = [f.impact_s for f in items if f.impact_s is not None]
        shares = [f.impact_share for f in items if f.impact_share is not None]
        total = sum(impacts) if impacts else None
        share = sum(shares) if shares else None
        kinds = {f.subject_kind for f in items}
        kind = kinds.pop() if len(kinds) == 1 else None
        plural = {"kernel": "kernels", "gpu": "GPUs", "host": "hosts", "window": "windows",
                  "timeline": "devices"}.get(kind, "findings")
        lines += _wrap(f"{code} {severity:<8} {len(items)} {plural}"
                       f"{_impact_text(total, share, [f.subject_kind for f in items])}", "")
        same_message = len({f.message for f in items}) == 1
        remedies = list(dict.fromkeys(f.remedy for f in items))
        compact = len(items) > GROUP_DETAIL_MAX  # many subjects: one line each, one example message
        shown = items[:GROUP_LIST_MAX] if compact else items
        name_w = WIDTH - 4 - 22
        labels = distinct_labels([f.subject for f in shown], name_w, together=True)
        for f, label in zip(shown, labels):
            impact = f"counted in {f.related[0]}" if f.related else ""
            if f.impact_s is not None:
                impact = f"up to {fmt_seconds(f.impact_s)}"
                if f.impact_share is not None:
                    impact += f" ({fmt_pct(f.impact_share, 1)})"
            lines.append(f"  - {label:<{name_w}} {impact:>21}".rstrip())  # 4 + 54 + 1 + 21 = 80
            if not compact and not same_message:
                lines += _wrap(f.message, "      ")
            if not compact and len(remedies) > 1:
                lines += _wrap(f"-> {f.remedy}", "      ")
        if len(shown) < len(items):
            lines.append(f"  - ... and {len(items) - len(shown)} more (--format json lists every finding)")
        if same_message:
            lines += _wrap(items[0].message, "    ")
        elif compact:
            lines += _wrap(f"e.g. {labels[0]}: {items[0].message}", "    ")
        if len(remedies) == 1:
            lines += _wrap(f"-> {remedies[0]}", "    ")
        elif compact:
            # remedies that differ only in their numbers (SM_ACTIVE 22% / 31%) are one kind of advice:
            # the most impactful finding's wording, with how many findings share it
            kinds: dict[str, list] = {}
            for f in items:
                kinds.setdefault(re.sub(r"\d+(?:\.\d+)?", "#", f.remedy), []).append(f)
            for k, members in enumerate(kinds.values()):
                if k == GROUP_REMEDIES_MAX:
                    rest = sum(len(m) for m in list(kinds.values())[k:])
                    lines += _wrap(f"-> ... other advice for {rest} of {len(items)} (--format json)", "    ")
                    break
                lines += _wrap(f"-> ({len(members)} of {len(items)}) {members[0].remedy}", "    ")
    return lines


def _windows(result, all_windows: bool = False, width: int = WIDTH) -> list[str]:
    if getattr(result, "windows", None) is None:
        return []
    from ridgeline.render.telemetry import format_windows

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
    from ridgeline.render.whatif import format_text

    blocks.append(format_text(result, top=top, width=WIDTH))
    blocks.append(_windows(result, all_windows, width))
    from ridgeline.render import postmortem

    blocks += [postmortem.utilization_lines(result), postmortem.timeline_lines(result), postmortem.ncu_rule_lines(result)]
    blocks.append(_skipped(result))
    from ridgeline.analyzer.accounting import accounting, accounting_lines

    blocks.append(accounting_lines(accounting(result)))
    blocks.append(_findings(result))
    if result.notes:
        notes = ["Notes:"]
        for note in result.notes:
            notes += _wrap(f"- {note}", "  ")
        blocks.append(notes)
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def render_terminal(result: Any, *, top: int = 10) -> str:
    return format_result(result, top=top)
