"""What a path is, before anything opens it: a folder walk that keeps what it cannot read.

A folder may hold entries no reader should open: a FIFO (opening it blocks until a writer
comes), a socket or device, a link to nothing, a symbolic link loop (``a -> b -> a``, or a link
to itself: following it never ends), a file this user may not read. :func:`not_regular` names such an entry; the
folder walkers (``ridgeline.pipeline.expand_paths`` for ``analyze``/``report``,
``ridgeline.parsers.telemetry.reader.expand_paths`` for ``telemetry``) keep them in their output so the
caller lists each one under ``skipped`` with that reason, and a path the user named that is one
of them is refused in one line, before it is opened. With ``--strict`` given, any of them found
in a folder is refused (:func:`refuse_unusable`: one line naming the first, counting the rest).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def not_regular(path: Path) -> str | None:
    """None for a regular file or a folder (followed through links), else what the entry is."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "a link to nothing (dangling symbolic link)" if os.path.islink(path) else "no such file or folder"
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "a symbolic link loop (following it leads back to itself, never to a file)"
        return f"not readable ({err.strerror or err})"
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        return None
    if stat.S_ISREG(mode):
        try:  # (a regular file never blocks an open; a file without read permission fails here)
            os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
        except OSError as err:
            return f"not readable ({err.strerror or err})"
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe): reading it would wait for a writer"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def refuse_if_not_regular(path: Path) -> None:
    """A path the user named: InputError when it is not a regular file or a folder."""
    from ridgeline.errors import InputError

    why = not_regular(path)
    if why is not None:
        raise InputError(path, "expected a readable regular file or a folder", actual=why)


def refuse_unusable(found) -> None:
    """``--strict`` given: the entries found in folders that no reader may open (``(path, why)``
    from :func:`not_regular`) are an InputError naming the first and counting the others."""
    from ridgeline.errors import InputError

    found = list(found)
    if not found:
        return
    (path, why), rest = found[0], found[1:]
    more = f" ({len(rest)} more found in the folders: {', '.join(str(p) for p, _w in rest[:3])}" \
           f"{', ...' if len(rest) > 3 else ''})" if rest else ""
    raise InputError(path, f"expected a readable regular file (--strict: nothing in a folder is skipped){more}",
                     actual=why)


def _inside(path, folder) -> bool:
    real, top = os.path.realpath(path), os.path.realpath(folder)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def links_out(paths, files) -> list[str]:
    """Notes naming each file a folder walk found (``files``: ``(path, explicit)``) that is a
    symbolic link to a file outside the folder given (``paths``): it is read with the folder's
    files, as the walk found it, and said, so a trace from elsewhere (another job's rank) is never
    joined to the folder's without a word."""
    folders = [Path(p) for p in paths if Path(p).is_dir()]
    out = []
    for f, explicit in files:
        if explicit or not Path(f).is_symlink() or not Path(f).is_file():
            continue
        folder = next((d for d in folders if Path(f).is_relative_to(d)), None)
        if folder is not None and not _inside(f, folder):
            out.append(f"{f}: a symbolic link to a file outside {folder} ({os.path.realpath(f)}); read with the "
                       "folder's files (a per-rank trace is joined to the job as any other)")
    return out


def walk(folder: Path) -> list[Path]:
    """Every entry under ``folder`` (sorted; hidden names and what is under hidden folders left
    out) that is not a folder: regular files and the entries :func:`not_regular` names alike."""
    out = []
    for p in sorted(folder.rglob("*")):
        if any(part.startswith(".") for part in p.relative_to(folder).parts):
            continue
        if p.is_dir():
            continue
        out.append(p)
    return out


def name_refusal(what: str) -> str:
    """The one line for an input polars cannot open by its name (see :func:`polars_refused_name`)."""
    return (f"cannot be read as {what}: its file name holds bytes that are not UTF-8 (shown as \\udcXX), "
            "which polars' readers cannot open; rename the file (for example with convmv -f latin1 -t utf8)")


def polars_refused_name(path, reason: str) -> bool:
    """Whether ``reason`` is polars failing on a path whose name is not UTF-8 (a lone surrogate from
    ``os.fsdecode``: polars takes such a str for a file object, or refuses its bytes)."""
    from ridgeline.result import path_label

    try:
        name = os.fsdecode(path)
    except TypeError:
        return False
    return path_label(name) != name and ("does not have a .read() method" in reason or "invalid utf-8" in reason)


_ALIASES: dict[str, str] = {}  # a path polars cannot take -> the link that names it in UTF-8


def polars_path(path):
    """``path`` as polars can open it. A file name that is not UTF-8 (lone surrogates from
    ``os.fsdecode``) is no text polars takes (it reads such a str as a file object and fails): the
    file is then reached through a symbolic link with a UTF-8 name in a private temporary folder
    (made once per file, removed when the process ends), so the real file is read, unchanged and
    unrenamed; the tables still name it by :func:`ridgeline.result.path_label`. Anything else
    (a UTF-8 path, bytes or a file object) is returned as it is."""
    from ridgeline.result import path_label

    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        return path
    text = os.fsdecode(path)
    if path_label(text) == text:
        return path
    if text not in _ALIASES:
        import atexit
        import shutil
        import tempfile

        folder = tempfile.mkdtemp(prefix="ridgeline-names-")
        atexit.register(shutil.rmtree, folder, True)
        link = os.path.join(folder, f"input{Path(path_label(text)).suffix}")
        os.symlink(os.path.abspath(text), link)
        _ALIASES[text] = link
    return _ALIASES[text]
