"""One normaliser of demangled kernel names, shared by every reader (ncu CSV and ``.ncu-rep``,
Nsight Systems sqlite and CSV, PyTorch/Kineto traces) and by the analyzer's labels and joins.

The tools spell one kernel differently (``../shared/NCU-FORMATS.md`` 2.4 and 4.2b):

- ncu drops namespaces (all of them, or some: ``at::vectorized_elementwise_kernel`` where Nsight
  Systems writes ``at::native::vectorized_elementwise_kernel``), writes integer template
  arguments bare (``<4, ...>``) where older ncu and nsys write casts (``<(int)4, ...>``), and
  keeps the return type in front: ncu ``enable_if<!T7, void>::type kernel<...>(...)`` is nsys's
  ``std::enable_if<!T7, void>::type internal::gemvx::kernel<...>(...)`` (cuBLAS GEMV);
- anonymous namespaces are ``(anonymous namespace)::`` (older) or ``<unnamed>::`` (newer), and a
  name that starts with one loses its ``<`` in ncu's CSV (``unnamed>::gemm_naive_kernel``);
- ``--print-kernel-base function`` and nsys ``shortName`` give the bare function name, without
  template arguments or parameters.

:func:`parse` splits a demangled name at the top level (outside ``<>``, ``()``, ``[]``) into
return type, namespace path, function, template arguments and parameter list. From that:

- :func:`short_name`: the FUNCTION's name as the tool recorded it, never the return type, no
  template arguments, parameters or anonymous namespaces; named namespaces are kept as recorded
  (``internal::gemvx::kernel`` from nsys, ``kernel`` from ncu for the GEMV above);
  :func:`function_name` is its last identifier, the same in every tool;
- :func:`join_key`: the short name plus the template arguments normalised (namespaces, casts of
  integer literals, ``true``/``false``, literal suffixes and spaces removed), or None for the
  arguments when the name carries none of its signature (a bare name: they are unknown).

**When two names are the same kernel** (:func:`match_names`, used for the profile x timeline join),
tried in order, each step only on the names the previous steps left:

1. equal after normalisation with namespaces kept (return type, anonymous namespaces, casts and
   spacing aside): the same string in two tools;
2. equal join keys: same function and same template arguments, namespaces aside;
3. same function where one side is a bare name (its template arguments unknown) and the function
   names exactly one kernel on each side.

At every step a key held by more than one name on either side is *ambiguous*: those names are
reported (never joined by guess) and take no part in later steps. Two names whose template
arguments are both known and differ are never the same kernel (``gemvx::kernel<..., 7, ...>`` and
``<..., 6, ...>`` are two GEMVs).

:func:`distinct_labels` keeps display labels apart: distinct full names that share a label get
the part that tells them apart (the function where the label hid it, then the template arguments
that differ, then the parameters, then the namespace), never a bare counter unless the names
differ only in spelling.

Pure Python, no imports above the standard library: parsers and analyzer both use it.
"""

from __future__ import annotations

import dataclasses
import functools
import re

_ANON = re.compile(r"\(anonymous namespace\)::|<unnamed>::|^unnamed>::")
_OPEN = "<(["
_CLOSE = ">)]"
_IDENT_CHAR = re.compile(r"[\w$]")
_FUNC = re.compile(r"~?[A-Za-z_$][\w$]*|operator\W.*|operator\s.*")


@dataclasses.dataclass(frozen=True)
class NameParts:
    """A demangled name split at the top level. ``template_args`` / ``params`` are None when the
    name has no such part (``params`` None and ``template_args`` None: a bare name)."""

    return_type: str
    namespace: str  # "a::b" (anonymous namespaces dropped), "" when none
    function: str  # the last identifier: the short name
    template_args: str | None
    params: str | None

    @property
    def bare(self) -> bool:
        """Only a function name (``--print-kernel-base function``, nsys shortName, Triton)."""
        return self.template_args is None and self.params is None


_EVENT = re.compile(
    r"(?<![\w$])operator\s*(?:\(\)|\[\]|->\*?|<<=?|>>=?|<=>|&&|\|\||\+\+|--|[-+*/%^&|~!=<>,]=?|new(?:\[\])?"
    r"|delete(?:\[\])?|\"\"\s*\w+)|[<>()\[\]]"
)


@functools.lru_cache(maxsize=4096)
def _events(s: str) -> tuple[tuple[tuple[int, str, int], ...], tuple[tuple[int, int], ...]]:
    """Bracket events ``(index, char, depth before)`` and ``operator`` symbol ranges of ``s``
    (an operator's symbols, ``operator()`` / ``operator<<``, are name text, not brackets).
    Only the special characters are visited (regex), not every character."""
    events = []
    ops = []
    depth = 0
    for m in _EVENT.finditer(s):
        c = m.group()
        if len(c) > 1:
            ops.append((m.start(), m.end()))
            continue
        if c in _OPEN:
            events.append((m.start(), c, depth))
            depth += 1
        else:
            depth = max(0, depth - 1)
            events.append((m.start(), c, depth))
    return tuple(events), tuple(ops)


def _matching(s: str, start: int) -> int:
    """Index of the bracket closing the one at ``start`` (or len(s) when unclosed)."""
    events, _ops = _events(s)
    base = None
    for i, c, d in events:
        if i == start:
            base = d
        elif base is not None and i > start and c in _CLOSE and d == base:
            return i
    return len(s)


def _split_depth0(s: str, sep: str) -> list[str]:
    """``s`` split at the occurrences of ``sep`` outside brackets and operator symbols."""
    events, ops = _events(s)
    spans = []
    a = 0
    depth = 0
    for i, c, d in events:
        if c in _OPEN:
            if d == 0:
                spans.append((a, i))
            depth = d + 1
        else:
            depth = d
            if d == 0:
                a = i + 1
    if depth == 0:
        spans.append((a, len(s)))
    out, last = [], 0
    k = len(sep)
    for x, y in spans:
        j = s.find(sep, max(x, last), y)
        while j != -1 and j + k <= y:
            if not any(o <= j < e for o, e in ops):
                out.append(s[last:j])
                last = j + k
            j = s.find(sep, max(j + 1, last), y)
    out.append(s[last:])
    return out


def clean(name: str) -> str:
    """Whitespace collapsed, anonymous namespaces dropped (``unnamed>::`` too)."""
    s = " ".join(str(name).split())
    return _ANON.sub("", s)


@functools.lru_cache(maxsize=65536)
def parse(name: str) -> NameParts:
    """Split a demangled kernel name (see the module docstring)."""
    s = clean(name)
    params = None
    head = s
    events, ops = _events(s)
    op_ends = {e for _o, e in ops}
    for i, c, d in events:
        if c == "(" and d == 0 and i > 0 and (s[i - 1] == ">" or _IDENT_CHAR.match(s[i - 1]) or i in op_ends):
            # the first top-level '(' after a name: the parameter list
            end = _matching(s, i)
            head, params = s[:i].rstrip(), s[i + 1 : end].strip()
            break
    segs = [x for x in _split_depth0(head, " ") if x]
    if not segs:
        return NameParts("", "", s.strip(), None, params)
    qual = segs[-1]
    ret = " ".join(segs[:-1])
    stripped = qual.lstrip("*&")
    if stripped != qual:  # 'T1 *foo<...>': the pointer belongs to the return type
        ret = (ret + " " + qual[: len(qual) - len(stripped)]).strip()
        qual = stripped
    comps = _split_depth0(qual, "::")
    last = comps[-1]
    targs = None
    events, ops = _events(last)
    op_ends = {e for _o, e in ops}
    for i, c, d in events:
        if c == "<" and d == 0 and i > 0 and (_IDENT_CHAR.match(last[i - 1]) or i in op_ends):  # 'name<'
            targs = last[i + 1 : _matching(last, i)].strip()
            last = last[:i]
            break
    function = last.strip() or qual
    if not _FUNC.fullmatch(function):  # not C++ ('<script>...', '[CUDA memcpy HtoD]'): the name as it is
        return NameParts("", "", s.strip(), None, None)
    namespace = "::".join(x for x in comps[:-1] if x)
    return NameParts(ret, namespace, function, targs, params)


def short_name(name: str | None) -> str | None:
    """The function's qualified name as the tool recorded it: no return type, template arguments,
    parameters or anonymous namespaces; named namespaces kept (``at::native::reduce_kernel``).
    The tools disagree on namespaces, so joins use :func:`join_key`, not this."""
    if name is None:
        return None
    if not str(name).strip():
        return name
    p = parse(name)
    if not p.function:
        return str(name).strip()
    return f"{p.namespace}::{p.function}" if p.namespace else p.function


def function_name(name: str | None) -> str | None:
    """The function name alone (last identifier): the same in every tool."""
    if name is None:
        return None
    return parse(name).function or str(name).strip()


_QUAL = re.compile(r"(?<![\w$])(?:[A-Za-z_$][\w$]*::)+")
# a C-style cast of an integer literal: '(int)4', '(bool)0', '(unsigned long)2', enum values such as
# '(cutlass::FloatRoundStyle)2' (nsys and older ncu write them; ncu 2023+ writes the bare literal)
_CAST = re.compile(r"\((?:[A-Za-z_$][\w$]*::)*[A-Za-z_$][\w$]*(?:\s+[A-Za-z_$][\w$]*)*\)\s*(?=[-+]?\d)")
_SUFFIX = re.compile(r"(?<![\w.])([-+]?\d+)(?:ull|ul|ll|u|l)\b", re.IGNORECASE)
_SPACE = re.compile(r"\s*([^\w$\s])\s*")


@functools.lru_cache(maxsize=65536)
def normalise_args(text: str | None) -> str | None:
    """Template arguments (or parameters) in one spelling: namespaces, casts of integer literals,
    ``true``/``false``, literal suffixes and spaces around punctuation removed."""
    if text is None:
        return None
    s = clean(text)
    s = _QUAL.sub("", s)
    s = _CAST.sub("", s)
    s = re.sub(r"\btrue\b", "1", s)
    s = re.sub(r"\bfalse\b", "0", s)
    s = _SUFFIX.sub(r"\1", s)
    s = _SPACE.sub(r"\1", s)
    return s.strip()


def join_key(name: str) -> tuple[str, str | None]:
    """``(function, normalised template arguments or None when unknown)``.

    A name with a parameter list but no template arguments is a plain function: its arguments
    are known to be none (``""``); a bare name's are unknown (None).
    """
    p = parse(name)
    if p.template_args is not None:
        return p.function, normalise_args(p.template_args)
    return p.function, (None if p.bare else "")


def _exact_key(name: str) -> str:
    p = parse(name)
    return "|".join([p.namespace, p.function, normalise_args(p.template_args) or "", normalise_args(p.params) or "",
                     "b" if p.bare else ""])


@dataclasses.dataclass
class NameMatch:
    """Result of :func:`match_names`: ``pairs`` left -> right, ``how`` left -> step
    (``exact``/``key``/``function``), ``ambiguous_left`` / ``ambiguous_right``: name -> the names
    on the other side it could be (not joined)."""

    pairs: dict[str, str]
    how: dict[str, str]
    ambiguous_left: dict[str, list[str]]
    ambiguous_right: dict[str, list[str]]
    unmatched_left: list[str]
    unmatched_right: list[str]


def match_names(left, right) -> NameMatch:
    """Pair distinct names of two tools that are the same kernel (module docstring: the rule)."""
    left = sorted({n for n in left if n is not None})
    right = sorted({n for n in right if n is not None})
    pairs: dict[str, str] = {}
    how: dict[str, str] = {}
    amb_l: dict[str, list[str]] = {}
    amb_r: dict[str, list[str]] = {}
    free_l, free_r = set(left), set(right)

    def settle(ls: list[str], rs: list[str], label: str) -> None:
        """One name on each side: a pair; more on either side: every one ambiguous, none guessed."""
        if len(ls) == 1 and len(rs) == 1:
            pairs[ls[0]] = rs[0]
            how[ls[0]] = label
        else:
            amb_l.update({n: list(rs) for n in ls})
            amb_r.update({n: list(ls) for n in rs})
        free_l.difference_update(ls)
        free_r.difference_update(rs)

    def step(label, key_l, key_r):
        gl: dict = {}
        gr: dict = {}
        for n in sorted(free_l):
            k = key_l(n)
            if k is not None:
                gl.setdefault(k, []).append(n)
        for n in sorted(free_r):
            k = key_r(n)
            if k is not None:
                gr.setdefault(k, []).append(n)
        for k, ls in gl.items():
            rs = gr.get(k)
            if not rs:
                continue
            settle(ls, rs, label)

    step("exact", _exact_key, _exact_key)

    def key2(n):
        f, t = join_key(n)
        return None if t is None else (f, t)

    step("key", key2, key2)
    # step 3: a bare name on one side, any spelling on the other: the function alone, once per side
    bare_l = {n for n in free_l if join_key(n)[1] is None}
    bare_r = {n for n in free_r if join_key(n)[1] is None}
    if bare_l or bare_r:
        funcs_l: dict[str, list[str]] = {}
        funcs_r: dict[str, list[str]] = {}
        for n in sorted(free_l):
            funcs_l.setdefault(parse(n).function, []).append(n)
        for n in sorted(free_r):
            funcs_r.setdefault(parse(n).function, []).append(n)
        for f, ls in funcs_l.items():
            rs = funcs_r.get(f)
            if not rs or not (any(n in bare_l for n in ls) or any(n in bare_r for n in rs)):
                continue  # both sides know their template arguments and they differ: not the same
            settle(ls, rs, "function")
    return NameMatch(pairs, how, amb_l, amb_r, sorted(free_l), sorted(free_r))


# ------------------------------------------------------------------ display labels
def top_args(text: str | None) -> list[str]:
    """Top-level comma-separated items of a template argument or parameter list."""
    if not text:
        return []
    return [a.strip() for a in _split_depth0(text, ",")]


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    tail = max(4, limit // 3)
    return text[: limit - tail - 1] + "…" + text[-tail:]


def _readable_arg(a: str) -> str:
    """A template argument as a label shows it: namespaces and casts dropped, inner templates cut."""
    s = normalise_args(a) or ""
    s = re.sub(r"<.*>", "<…>", s) if len(s) > 16 else s
    return s


def _differing(items: list[list[str]]) -> list[int]:
    width = max(len(x) for x in items)
    return [i for i in range(width) if len({(x[i] if i < len(x) else None) for x in items}) > 1]


def _suffixes(names: list[str]) -> list[str] | None:
    """Per name, the short text that tells it from the others in ``names`` (all distinct), or None."""
    parts = [parse(n) for n in names]
    funcs = [p.function for p in parts]
    if len(set(funcs)) == len(funcs):
        toks = [f.split("_") for f in funcs]
        if len({len(t) for t in toks}) == 1 and len(toks[0]) > 2:  # same shape: the tokens that differ
            diff = _differing(toks)
            vals = ["_".join(t[i] for i in diff) for t in toks]
            if len(set(vals)) == len(vals):
                return vals
        trimmed = [re.sub(r"(?<=\w)_?[kK]ernel$", "", f) or f for f in funcs]
        return trimmed if len(set(trimmed)) == len(trimmed) else funcs
    for field in ("template_args", "params"):
        lists = [top_args(getattr(p, field)) for p in parts]
        if not any(lists):
            continue
        diff = _differing([[normalise_args(a) for a in x] for x in lists])
        if not diff:
            continue
        for take in range(1, len(diff) + 1):
            idx = diff[:take]
            vals = [",".join(_readable_arg(x[i]) if i < len(x) else "-" for i in idx) for x in lists]
            if len(set(vals)) == len(vals):
                return [f"<{v}>" if field == "template_args" else f"({v})" for v in vals]
    spaces = [p.namespace for p in parts]
    if len(set(spaces)) == len(spaces):
        return [f"{s}::" if s else "::" for s in spaces]
    return None


def distinct_labels(labels: list[str], full_names: list[str], limit: int) -> list[str]:
    """Labels (one per distinct full name, same order) made distinct within the list.

    Names that share a label get the part that tells them apart appended (``label <7>``), the
    label cut in the middle to keep within ``limit``; groups still equal after that (names that
    differ only in spelling) get `` #2``, `` #3``.
    """
    out = list(labels)
    groups: dict[str, list[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(lab, []).append(i)
    for lab, idx in groups.items():
        if len(idx) < 2:
            continue
        sfx = _suffixes([full_names[i] for i in idx])
        if sfx is None:
            continue
        room = max(8, limit - 20)  # the part that differs keeps most of the room; the label its start
        sfx = [_cut(x, room) for x in sfx]
        if len(set(sfx)) < len(sfx):
            continue
        for i, s in zip(idx, sfx):
            head = lab if len(lab) + 1 + len(s) <= limit else _cut(lab, max(6, limit - len(s) - 1))
            out[i] = f"{head} {s}"
    # whatever still collides (spelling-only differences, cut suffixes meeting other labels)
    seen: dict[str, int] = {}
    for i, lab in enumerate(out):
        seen[lab] = seen.get(lab, 0) + 1
        if seen[lab] > 1:
            tag = f" #{seen[lab]}"
            cand = _cut(lab, limit - len(tag)) + tag
            while cand in seen:
                seen[lab] += 1
                tag = f" #{seen[lab]}"
                cand = _cut(lab, limit - len(tag)) + tag
            out[i] = cand
            seen[cand] = 1
    return out
