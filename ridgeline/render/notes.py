"""Notes said once: the same note about every file of a folder or store is one note with a count.

A reader notes per file (``node01.dmon: dcgmi dmon names no host; using the file name
'node01'``); a folder of 200 such files gave 200 lines. :func:`collapse_notes` groups notes of
the form ``PATH: text`` whose text is the same once the file's own name (stem or full name) is
taken out, and writes each group of two or more as ``3 files (a.dmon, b.dmon, c.dmon): text``
(the first three names, then ``...``), with the file's name shown as ``<file name>``. Other notes
pass unchanged, in their order. Only the text renderers collapse; the JSON keeps every note.
"""

from __future__ import annotations

import re
from pathlib import PurePath

_PATH_NOTE = re.compile(r"^(?P<path>[^\s:]*[/.][^\s:]*|[A-Za-z]:\\[^:]*): (?P<rest>.+)$", re.S)


def _normalized(path: str, rest: str) -> str:
    p = PurePath(path)
    for name in sorted({p.name, p.stem} - {""}, key=len, reverse=True):
        rest = rest.replace(name, "<file name>")
    return rest


def collapse_notes(notes) -> list[str]:
    """The notes with each group of per-file notes said once (see the module docstring)."""
    groups: dict[str, list[tuple[str, str]]] = {}  # normalized text -> [(path, note)]
    order: list[tuple[bool, str]] = []  # (is a group, note or normalized text)
    for note in notes:
        m = _PATH_NOTE.match(note)
        if not m:
            order.append((False, note))
            continue
        text = _normalized(m.group("path"), m.group("rest"))
        if text not in groups:
            groups[text] = []
            order.append((True, text))
        groups[text].append((m.group("path"), note))
    out = []
    for is_group, key in order:
        members = groups[key] if is_group else None
        if not members or len(members) == 1:
            out.append(members[0][1] if members else key)
            continue
        names = [PurePath(p).name for p, _note in members]
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        out.append(f"{len(names)} files ({shown}): {key}")
    return out
