"""Names shortened to fit a place, at token boundaries, and never alike (issue 37 item 10).

A kernel or host name too long for its place keeps its first words and its last ones around an
ellipsis, cut only where a word ends (``cuBLAS sm90 xmma gemm … 128x64 tn``, never ``bf16 12…``):
the end of a kernel name carries its tile sizes and variant, the end of a host name its number.
Names that would still read alike show the words that set each apart
(:func:`fit_names`); only when no such words fit are they numbered. Whoever prints a shortened
name keeps the full one at hand (a tooltip in HTML, the JSON everywhere).
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

ELLIPSIS = "\u2026"
# a token ends after one of these (kept with the token before it), or before a space
_SPLIT = re.compile(r"(?<=[-_.:/,<>()\[\]=])|(?= )")


def tokens(text: str) -> list[str]:
    """``text`` in pieces that join back to it, each ending where a word may be cut."""
    return [t for t in _SPLIT.split(text) if t]


def _join(head: list[str], tail: list[str], cut_at_space: bool = False) -> str:
    """Head, ellipsis, tail; spaced where the cut fell between words, tight inside one."""
    h = "".join(head).rstrip()
    t = "".join(tail).lstrip()
    gap = " " if cut_at_space or (tail and tail[0].startswith(" ")) else ""
    if not tail:
        return h + gap + ELLIPSIS
    return f"{h}{gap}{ELLIPSIS}{gap}{t}" if h else ELLIPSIS + t


def _char_cut(text: str, fits: Callable[[str], bool]) -> str:
    """Last resort for one token too long for the place: its start, then an ellipsis."""
    for n in range(len(text) - 1, 0, -1):
        if fits(text[:n] + ELLIPSIS):
            return text[:n] + ELLIPSIS
    return ELLIPSIS


def fit_one(text: str, fits: Callable[[str], bool], *, keep: Iterable[str] = ()) -> str:
    """``text`` itself when it fits; else its first and last tokens around an ellipsis, as many
    as fit (the head first, then the tail, one token at a time). ``keep``: tokens that must show
    (what tells this name from its look-alikes), placed after the head in their order."""
    text = " ".join(str(text).split())
    if fits(text):
        return text
    toks = tokens(text)
    keep = [k.strip().rstrip("-_.:/,") for k in keep]
    keep = [k for k in keep if k]
    if keep:
        middle = " ".join(keep)
        head_n = 1
        best = None
        while head_n < len(toks):
            spaced = toks[head_n].startswith(" ")
            cand = "".join(toks[:head_n]).rstrip() + (f" {ELLIPSIS} " if spaced else ELLIPSIS) + middle
            if fits(cand):
                best = cand
                head_n += 1
            else:
                break
        if best is not None:
            return best
        only = ELLIPSIS + middle
        return only if fits(only) else _char_cut(only, fits)
    head, tail = [toks[0]], []
    if not fits(_join(head, tail)):
        return _char_cut(text, fits)
    lo, hi = 1, len(toks)  # toks[:lo] is the head, toks[hi:] the tail
    turn_tail = True
    stuck = 0
    while lo < hi and stuck < 2:
        if turn_tail:
            cand = _join(toks[:lo], toks[hi - 1:], toks[lo].startswith(" "))
            ok = fits(cand) and hi - 1 >= lo
            if ok:
                hi -= 1
        else:
            cand = _join(toks[:lo + 1], toks[hi:], lo + 1 < len(toks) and toks[lo + 1].startswith(" "))
            ok = fits(cand) and lo + 1 <= hi
            if ok:
                lo += 1
        stuck = 0 if ok else stuck + 1
        turn_tail = not turn_tail
    if lo >= hi:
        return text
    return _join(toks[:lo], toks[hi:], toks[lo].startswith(" "))


def fit_names(names: Iterable[str], fits: Callable[[str], bool]) -> dict[str, str]:
    """``{name: shown}``: each name as :func:`fit_one` shortens it, names that would read alike
    shortened again around the tokens only they have, numbered (``#1``, ``#2``) as a last resort.
    Two different names never get the same text."""
    names = list(dict.fromkeys(str(n) for n in names))
    shown = {n: fit_one(n, fits) for n in names}
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(shown[n], []).append(n)
    for text, group in groups.items():
        if len(group) < 2:
            continue
        sets = [set(tokens(" ".join(n.split()))) for n in group]
        common = set.intersection(*sets)
        for n in group:
            varying = [t.strip() for t in tokens(" ".join(n.split())) if t not in common]
            shown[n] = fit_one(n, fits, keep=list(dict.fromkeys(v for v in varying if v)))
    seen: dict[str, list[str]] = {}
    for n in names:
        seen.setdefault(shown[n], []).append(n)
    for text, group in seen.items():
        if len(group) < 2:
            continue
        for k, n in enumerate(group, 1):
            tag = f" #{k}"
            shown[n] = fit_one(n, lambda t, tag=tag: fits(t + tag)) + tag
    return shown


def fit_labels(names: list[str], width: int) -> list[str]:
    """:func:`fit_names` in at most ``width`` characters, as a list in the order given."""
    table = fit_names(names, lambda t: len(t) <= width)
    return [table[str(n)] for n in names]
