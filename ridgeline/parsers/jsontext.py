"""JSON read from input: one entry point, :func:`loads`, with the same guards for every reader.

Every JSON ridgeline reads from a user (a saved Prometheus answer, a live server's answer,
nightly documents for ``diff``, a PyTorch profiler trace on its standard path) goes through
:func:`loads`: the text's size is checked (:data:`MAX_JSON_BYTES` unless the caller bounds it
itself), its nesting is measured before anything recursive touches it (:data:`MAX_JSON_DEPTH`
levels of ``[`` / ``{`` outside strings, by :func:`nesting_depth`, vectorized), lone surrogates
are made text (below), and the standard library parses it. Over a limit: :class:`JSONLimitError`
(a ValueError), which the readers turn into their one-line refusal. Before, a 100,000-deep
Prometheus JSON ended in a RecursionError (exit 3) while the Kineto reader caught the same case.

Lone surrogates in JSON text are written as the text of their escape before anything decodes them.

JSON may spell a UTF-16 surrogate on its own (``"gemm_\\ud800"``): Python's reader then returns a
``str`` holding a lone surrogate, which UTF-8 cannot encode, so polars (whose strings are UTF-8)
refused the whole column with a codec message naming no kernel. ``docs/output-safety.md`` promises
such a character is *escaped*, written ``\\ud800``; :func:`lone_surrogates_as_text` does it at the
source: the escape's backslash is doubled, so the value reads as the six characters ``\\ud800``,
the same spelling :mod:`ridgeline.render.safe_text` gives a surrogate in any output. Surrogate
pairs (``\\ud83d\\ude00``, an emoji) are one character and are left alone, as is a literal
backslash followed by ``u`` (an even run of backslashes). One regex pass over the text, only when
the text holds a surrogate escape at all.
"""

from __future__ import annotations

import re

_ANY = re.compile(rb"\\u[dD][89a-fA-F]")
# a run of backslashes and a surrogate escape; for a high one, whether a low one follows at once
_SURROGATE = re.compile(rb"(\\+)u([dD][89abAB][0-9a-fA-F]{2})(?=(\\u[dD][c-fC-F][0-9a-fA-F]{2})?)"
                        rb"|(\\+)u([dD][c-fC-F][0-9a-fA-F]{2})")


def lone_surrogates_as_text(data: bytes | str) -> bytes | str:
    """``data`` (JSON text, bytes or str) with every lone surrogate escape made the text of itself."""
    as_str = isinstance(data, str)
    raw = data.encode("utf-8", "surrogatepass") if as_str else data
    if _ANY.search(raw) is None:
        return data
    pair_low_at = -1  # where the low half of the last real pair starts

    def fix(m: re.Match) -> bytes:
        nonlocal pair_low_at
        high = m.group(1) is not None
        slashes = m.group(1) if high else m.group(4)
        if len(slashes) % 2 == 0:  # an escaped backslash and the letter u: text already
            return m.group(0)
        if high and m.group(3):  # a pair: one character
            pair_low_at = m.end()
            return m.group(0)
        if not high and m.start() == pair_low_at:
            return m.group(0)
        return slashes + b"\\u" + (m.group(2) if high else m.group(5))

    out = _SURROGATE.sub(fix, raw)
    return out.decode("utf-8", "surrogatepass") if as_str else out


#: the most JSON text a reader parses whole (as Kineto's whole-document parse; a trace's chunked
#: reader and a live answer's --max-answer set their own bounds)
MAX_JSON_BYTES = 2 << 30
#: the deepest nesting of arrays and objects read; real documents nest under 20 levels, and a
#: bound well inside Python's recursion limit keeps every recursive walk of a parsed document safe
MAX_JSON_DEPTH = 512
_DEPTH_CHUNK = 8 << 20  # bytes scanned at once by nesting_depth (a few arrays of this many int64)


class JSONLimitError(ValueError):
    """JSON over :data:`MAX_JSON_BYTES` or nested deeper than :data:`MAX_JSON_DEPTH`; the text
    says which in ridgeline's words (``nested too deeply ...``)."""


def _size(n: int) -> str:
    return f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.1f} MiB"


def nesting_depth(raw: bytes, limit: int | None = None) -> int:
    """The deepest nesting of ``[`` / ``{`` in JSON text ``raw``, brackets inside strings not
    counted (a quote after an odd run of backslashes is escaped); stops early past ``limit``.
    Vectorized (numpy) over chunks, on the quotes and brackets only, carrying the open string,
    the depth and a trailing run of backslashes from chunk to chunk; text with no more brackets
    than ``limit`` is not scanned."""
    brackets = raw.count(b"[") + raw.count(b"{")
    if limit is not None and brackets <= limit:
        return brackets  # an upper bound, enough to say "within the limit"
    import numpy as np

    in_str, depth, deepest, run = 0, 0, 0, 0  # run: backslashes ending the previous chunk
    view = memoryview(raw)
    for at in range(0, len(raw), _DEPTH_CHUNK):
        a = np.frombuffer(view[at: at + _DEPTH_CHUNK], dtype=np.uint8)
        quote = a == 34
        slash = a == 92
        if run or slash.any():  # a quote right after an odd run of backslashes is escaped
            cand = np.flatnonzero(quote[1:] & slash[:-1]) + 1
            if run and a.size and quote[0]:
                cand = np.concatenate(([0], cand))
            if cand.size:
                pos = np.arange(a.size, dtype=np.int64)
                last = np.maximum.accumulate(np.where(slash, -1, pos))  # last non-backslash at or before i
                prev = last[np.maximum(cand - 1, 0)]
                n = np.where(cand == 0, 0, np.where(prev < 0, cand + run, cand - 1 - prev))
                n = np.where(cand == 0, run, n)
                quote[cand[n % 2 == 1]] = False
            tail = np.flatnonzero(~slash)
            run = run + a.size if tail.size == 0 else a.size - 1 - int(tail[-1])
        idx = np.flatnonzero(quote | (a == 91) | (a == 93) | (a == 123) | (a == 125))
        if not idx.size:
            continue
        c = a[idx]
        q = quote[idx]
        inside = (np.cumsum(q, dtype=np.int64) + in_str) % 2 == 1  # a bracket is never a quote
        step = (((c == 91) | (c == 123)) & ~inside).astype(np.int64) - (((c == 93) | (c == 125)) & ~inside)
        level = np.cumsum(step) + depth
        deepest = max(deepest, int(level.max()))
        depth = int(level[-1])
        in_str = int(inside[-1])  # the quotes' parity through the chunk's end
        if limit is not None and deepest > limit:
            break
    return deepest


def loads(data: bytes | str, *, max_bytes: int | None = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH,
          encoding: str | None = "utf-8-sig"):
    """JSON text from input -> Python objects, guarded: over ``max_bytes`` (None: the caller
    bounds the size) or nested deeper than ``max_depth`` raises :class:`JSONLimitError`. Bytes
    are decoded as ``encoding`` (UTF-8, a byte-order mark dropped; UnicodeDecodeError as the
    codec raises it), or with ``encoding=None`` as the standard library detects it (UTF-8, -16,
    -32). Lone surrogate escapes become their text; a malformed document raises
    ``json.JSONDecodeError`` (all three are ValueErrors)."""
    import json

    if max_bytes is not None and len(data) > max_bytes:
        raise JSONLimitError(f"{_size(len(data))} of JSON, more than the {_size(max_bytes)} ridgeline parses whole")
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if nesting_depth(raw, max_depth) > max_depth:
        raise JSONLimitError(f"arrays or objects nested too deeply (more than {max_depth} levels of [ or {{)")
    text = data.decode(encoding) if isinstance(data, bytes) and encoding else data
    try:
        return json.loads(lone_surrogates_as_text(text))
    except RecursionError as err:  # (the scan bounds the depth; kept for a parser with a lower limit)
        raise JSONLimitError(f"arrays or objects nested too deeply (more than {max_depth} levels of [ or {{)") from err


def read_bytes(path, *, max_bytes: int | None = MAX_JSON_BYTES) -> bytes:
    """A JSON file's bytes for :func:`loads`; over ``max_bytes`` raises :class:`JSONLimitError`
    before anything is read (OSError as the system raises it)."""
    import os

    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if max_bytes is not None and size > max_bytes:
            raise JSONLimitError(f"{_size(size)} of JSON, more than the {_size(max_bytes)} ridgeline parses whole")
        return fh.read() if max_bytes is None else fh.read(max_bytes + 1)
