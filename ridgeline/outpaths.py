"""Outputs never replace inputs: the one output-path guard every command that writes calls
before it reads anything (``-o``, ``--plot``, ``report``'s page, ``roofline``'s image, ``check
--write``'s expectation file, ``telemetry --save``'s store).

A file output is refused (one line, :class:`ridgeline.errors.UsageError`) when the file it would
replace is an input's file, however it is spelled:

* the same path, or a path that resolves to it (``..``, a symbolic link on the way or at the end);
* the same file under another name (a hard link: same device and inode);
* a file inside an input folder (the folder's walk would have read it), or a link to one.

Only an output that exists can replace anything (a new file replaces nothing); one that is no
regular file (``/dev/null``, a FIFO) is written in place, never replaced, and is not refused.
A store folder (``--save``) is refused when it is, or lies inside, an input folder, or holds an
input: a run would read what it saves. Standard input (``-``) is no file and never matches.
"""

from __future__ import annotations

import os
import stat
from typing import Iterable


def _identity(path) -> tuple[int, int] | None:
    """(device, inode) of the regular file ``path`` names (links followed), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _inside(path, folder) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def _folder_files(folder) -> Iterable[str]:
    """Every file under ``folder`` as its walk reads it (links to files followed; a link to a
    folder is not entered, as the readers' walks do not enter one)."""
    for dirpath, _dirnames, filenames in os.walk(folder):
        for name in filenames:
            yield os.path.join(dirpath, name)


def _how(output: str, hit: str) -> str:
    if os.path.islink(output):
        return f"is a symbolic link to the input {hit}"
    if os.path.realpath(output) == os.path.realpath(hit):
        return "is one of the input files" if os.path.normpath(output) == os.path.normpath(hit) \
            else f"resolves to the input {hit}"
    return f"is the input {hit} under another name (a hard link)"


def input_hit(output: str, inputs: Iterable[str]) -> str | None:
    """How the file ``output`` would replace one of ``inputs`` (files or folders), or None."""
    me = _identity(output)
    if me is None:
        return None
    for raw in inputs:
        if raw is None or str(raw) == "-":
            continue
        p = str(raw)
        if os.path.isdir(p):
            for f in _folder_files(p):
                if _identity(f) == me:
                    return f"{_how(output, f)} (a file of the input folder {p})"
        elif _identity(p) == me:
            return _how(output, p)
    return None


def refuse_over_inputs(outputs: Iterable[tuple[str, str | os.PathLike | None]], inputs: Iterable) -> None:
    """UsageError when an output file would replace an input (see the module docstring).

    ``outputs``: ``(option, path)`` pairs (``("-o", "report.json")``); a None or ``-`` path is
    standard output. ``inputs``: the paths read (files or folders; ``-`` is skipped)."""
    from ridgeline.errors import UsageError

    inputs = [str(i) for i in inputs if i is not None]
    for option, target in outputs:
        if target is None or str(target) == "-":
            continue
        hit = input_hit(str(target), inputs)
        if hit is not None:
            raise UsageError(f"{option} {target} {hit}; an output never replaces an input: write it elsewhere")


def refuse_store_over_inputs(option: str, folder, inputs: Iterable) -> None:
    """UsageError when the store folder ``folder`` is, or lies inside, an input folder, or holds an
    input (the run would read what it saves)."""
    from ridgeline.errors import UsageError

    if folder is None:
        return
    for raw in inputs:
        if raw is None or str(raw) == "-":
            continue
        p = str(raw)
        if os.path.isdir(p) and _inside(folder, p):
            where = "is" if os.path.realpath(folder) == os.path.realpath(p) else "lies inside"
            raise UsageError(f"{option} {folder} {where} the input folder {p}; save the store elsewhere (a run "
                             "never saves into what it reads)")
        if os.path.exists(folder) and _inside(p, folder):
            raise UsageError(f"{option} {folder} holds the input {p}; save the store elsewhere (a run never saves "
                             "into what it reads)")

