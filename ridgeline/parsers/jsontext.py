"""Lone surrogates in JSON text, written as the text of their escape before anything decodes them.

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
