"""Literal text every match of a regular expression contains: a cheap test that rules a pattern out.

Classifying a kernel name against :data:`ridgeline.analyzer.kernels.families.FAMILY_TABLE` searched every
row's pattern in turn, and a search costs ~6 us on a 300-character C++ name (the engine tries each
start position): ~0.5 ms per distinct name, 45 ms for the 91 kernels of a 16-rank A100 trace.
Most rows name literals (``gemm``, ``nccl``, ``softmax_warp_``) that any name they match must
contain; :func:`required_literals` reads them from the parsed pattern, and substring tests
(``in``, about 0.1 us each: :func:`meets`) then skip the rows a name cannot match without
running their regex.

The literals are a NECESSARY condition only, derived from the pattern's syntax tree (the standard
library's own parser): a literal run of a sequence is in every match; an alternation requires one
of its branches' literals, a group or a repeat of at least one its content's. Anything the
reader does not follow (character classes, lookarounds, backreferences) requires nothing, so a
pattern it cannot reduce simply has no literals and is always searched. Literals are lowered and
callers compare them with the name lowered, for ASCII names only (``str.lower`` and the regex
engine's case folding agree on ASCII; a non-ASCII name is searched without the test).
"""

from __future__ import annotations

try:  # Python 3.11+
    from re import _constants as _C
    from re import _parser as _P
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _C  # type: ignore[no-redef]
    import sre_parse as _P  # type: ignore[no-redef]

_REPEATS = tuple(getattr(_C, n) for n in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(_C, n))


def required_literals(pattern: str, flags: int = 0) -> tuple[tuple[str, ...], ...] | None:
    """Requirements every match of ``pattern`` meets, ignoring case: each a tuple of lowered
    strings one of which the match contains (``(("cutlass::",), ("reducesplitk",))``), or None
    where none is found (then nothing can be ruled out)."""
    try:
        tree = _P.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - an unexpected parser: no test, the pattern is always searched
        return None
    # lowered whatever the flags: a case-sensitive match contains the literal in any case too
    found = {tuple(sorted({s.lower() for s in c})) for c in _sequence(tree)}
    return tuple(sorted(found, key=lambda c: (-min(map(len, c)), len(c), c))) or None


def meets(text_lower: str, requirements) -> bool:
    """Whether a lowered text holds one string of every requirement (None: no requirement)."""
    return requirements is None or all(any(s in text_lower for s in need) for need in requirements)


def _best(candidates: list[set[str]]) -> set[str] | None:
    """The most selective of several requirements that all hold: longest shortest literal, then fewest."""
    if not candidates:
        return None
    return max(candidates, key=lambda c: (min(map(len, c)), -len(c)))


def _sequence(seq) -> list[set[str]]:
    """Requirements that each hold for every match of a sequence of nodes."""
    out: list[set[str]] = []
    run: list[str] = []
    for op, av in seq:
        if op is _C.LITERAL:
            run.append(chr(av))
            continue
        if run:
            out.append({"".join(run)})
            run = []
        inner = None
        if op is _C.SUBPATTERN:
            inner = _best(_sequence(av[-1]))
        elif op in _REPEATS and av[0] >= 1:
            inner = _best(_sequence(av[2]))
        elif op is _C.BRANCH:
            alternatives = [_best(_sequence(b)) for b in av[1]]
            if all(alternatives):
                inner = set().union(*alternatives)
        if inner:
            out.append(inner)
    if run:
        out.append({"".join(run)})
    return [c for c in out if all(c)]  # an empty literal rules nothing out
