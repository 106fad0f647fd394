"""Plain-text building blocks shared by the terminal renderers (ridgeline.render.terminal,
.telemetry, .postmortem, .diff): number, duration and percent formatting, labels that tell long
kernel names apart, wrapping to the width, and the findings section. Nothing here imports another
renderer, so the renderers import this module and never each other in a circle."""

from __future__ import annotations

import math
import re
import textwrap

from ridgeline import fmt
from ridgeline.render.safe_text import inline

WIDTH = 80
GROUP_DETAIL_MAX = 3  # a rule with more findings lists its subjects one line each
GROUP_LIST_MAX = 8  # ... at most this many, then "and N more"
GROUP_REMEDIES_MAX = 3  # kinds of advice printed for one rule's group


TENSOR_PATH_LABELS = {"hgmma": "wgmma", "hmma": "mma.sync"}


def tensor_path_label(path: str | None) -> str:
    """``hgmma`` -> ``wgmma``, ``hgmma+hmma`` -> ``wgmma+mma.sync``: the names kernel authors use."""
    if not path:
        return ""
    return "+".join(TENSOR_PATH_LABELS.get(p.removesuffix("-sparse"), p) + ("-sparse" if p.endswith("-sparse") else "")
                    for p in path.split("+"))


def fmt_seconds(value: float | None) -> str:
    return fmt.duration(value, fmt.TERMINAL)


def fmt_si(value: float | None, unit: str) -> str:
    return fmt.si(value, unit, fmt.TERMINAL)


def fmt_pct(ratio: float | None, digits: int = 0, *, missing: str = "-") -> str:
    """0.3617 -> '36%' (``digits`` decimals); ``missing`` for None and non-finite values."""
    return fmt.percent(ratio, fmt.TERMINAL, digits=digits, missing=missing)


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
    """``text`` in at most ``width`` characters, control characters shown escaped (safe_text)."""
    text = inline(text or "?")
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
    # names from inputs may hold control characters: labels are built from their escaped form
    names = [None if n is None else inline(n) for n in names]
    full = [None if f is None else inline(f) for f in full_names] if full_names is not None else list(names)
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


class _NameWrapper(textwrap.TextWrapper):
    """Wraps long paths and names where a part ends (after ``/``, else ``_ - . :``), never inside
    a file name (``...-window`` / ``.sqlite``); a part longer than the line is still cut."""

    _LONG = 20
    _DIR = re.compile(r"(?<=[/\\])")
    _PART = re.compile(r"(?<=[_\-.:])(?=[^_\-.:])")

    def _split(self, text):
        room = self.width - len(self.subsequent_indent)
        chunks = []
        for chunk in super()._split(text):
            if len(chunk) <= self._LONG or chunk.isspace():
                chunks.append(chunk)
                continue
            for part in (c for c in self._DIR.split(chunk) if c):  # folders first
                chunks += [c for c in self._PART.split(part) if c] if len(part) > room else [part]
        return chunks


def _wrap(text: str, indent: str, width: int = WIDTH) -> list[str]:
    """One paragraph wrapped; a newline or control character in it (from a name) shown escaped.
    Long paths and names wrap after a ``/`` (or ``_ - . :``), not inside a part of the name."""
    return _NameWrapper(width=width, initial_indent=indent, subsequent_indent=indent + "  ",
                        break_long_words=True, break_on_hyphens=False).wrap(inline(text)) or [indent]


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
        if kinds == {"timeline"}:  # each device's share is of its own capture: the group's is of their sum
            own = [(f.impact_s, f.impact_s / f.impact_share) for f in items if f.impact_s and f.impact_share]
            share = sum(i for i, _ in own) / sum(c for _, c in own) if own else share
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
        # telemetry subjects (host:NAME gpu:N) and timeline devices (a file name, gpu:N) are never
        # cut: two hosts or two rank files must not look alike (a cut name read hta-128r~hta128...~0);
        # one too long for the column gets a line of its own, its impact on the next
        whole = all(f.subject_kind in TELEMETRY_KINDS or f.subject_kind == "timeline" for f in shown)
        labels = ([inline(f.subject) for f in shown] if whole
                  else distinct_labels([f.subject for f in shown], name_w, together=True))
        for f, label in zip(shown, labels):
            impact = f"counted in {f.related[0]}" if f.related else ""
            if f.impact_s is not None:
                impact = f"up to {fmt_seconds(f.impact_s)}"
                if f.impact_share is not None:
                    impact += f" ({fmt_pct(f.impact_share, 1)})"
            if len(label) > name_w:  # the subject on a line of its own, its impact (if any) below it
                lines += _wrap(label, "  - ")
                if impact:
                    lines.append(f"    {'':<{name_w}} {impact:>21}".rstrip())
            else:
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
