"""Rule documentation (reST-flavoured docstrings) as plain terminal text.

``ridgeline rules CODE`` prints a rule's docstring; the source wraps at ~100 columns and uses
reST markup (````name````, ``:class:`X```, ``text::``). :func:`doc_to_text` drops the markup and
re-wraps each paragraph whole at the given width, keeping headings, list items (continuation
lines under the item's text) and literal blocks (deeper-indented lines after a paragraph that
ends with ``:`` or ``::``) as they are.
"""

from __future__ import annotations

import re
import textwrap

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`(~?[^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_SINGLE = re.compile(r"(?<![`\w])`([^`]+)`(?!`)")
_ITEM = re.compile(r"^(\s*)([-*]|\d+[.)])\s+")


def plain(text: str) -> str:
    """reST inline markup removed: roles, double and single backticks."""
    text = _ROLE.sub(lambda m: m.group(1).split(".")[-1] if m.group(1).startswith("~") else m.group(1), text)
    text = _LITERAL.sub(r"\1", text)
    return _SINGLE.sub(r"\1", text)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def doc_to_text(text: str, width: int = 80) -> str:
    """Markup dropped, paragraphs re-wrapped whole at ``width`` (see the module docstring)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    literal_indent: int | None = None  # inside a literal block: lines indented more than this
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            out.append("")
            i += 1
            continue
        ind = _indent(line)
        if literal_indent is not None:
            if ind > literal_indent:
                out.append(line.rstrip())
                i += 1
                continue
            literal_indent = None
        # a paragraph (or one list item): this line and the following ones of the same indentation
        # that start no new item
        m = _ITEM.match(line)
        first_ind = ind
        body_ind = ind + (len(m.group(0)) - ind if m else 0)
        para = [line.strip()]
        j = i + 1
        while j < len(lines):
            nxt = lines[j]
            if not nxt.strip() or _ITEM.match(nxt):
                break
            nind = _indent(nxt)
            if nind != (body_ind if m else first_ind) and not (m and nind == first_ind + 2):
                break
            if para[-1].endswith("::"):
                break
            para.append(nxt.strip())
            j += 1
        joined = plain(" ".join(para))
        starts_literal = joined.endswith("::")
        if starts_literal:
            joined = joined[:-1]  # "Example::" -> "Example:"
        if len(joined) + first_ind <= width:
            out.append(" " * first_ind + joined)
        else:
            out += textwrap.wrap(joined, width=width, initial_indent=" " * first_ind,
                                 subsequent_indent=" " * body_ind, break_long_words=False,
                                 break_on_hyphens=False) or [" " * first_ind + joined]
        if starts_literal or joined.endswith(":"):
            literal_indent = first_ind  # "Example::" or "...in ridgeline.toml:": deeper lines kept as written
        i = j
    return "\n".join(out)
