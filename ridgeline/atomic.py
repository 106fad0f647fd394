"""Atomic file writes: every file ridgeline writes appears whole or not at all.

The content goes to a hidden temporary file in the target's folder, which is then renamed over
the target (``os.replace``, atomic on POSIX and Windows within one file system). A run that dies
midway leaves the previous file (or none) and at most a ``.NAME.*.tmp`` file, never half a report,
half a plot or half a Parquet partition. A target that exists but is not a regular file
(``/dev/null``, a FIFO) is written in place: renaming over it would replace the device; a
symbolic link is followed, so the file it names is replaced and the link kept.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Iterator


def temp_name(path: str | os.PathLike, *, keep_suffix: bool = True) -> Path:
    """A hidden, unique name next to ``path``: ``.NAME.<random>.tmp[.suffix]``.

    ``keep_suffix`` keeps the target's suffix at the end (writers that pick the format by suffix,
    such as matplotlib's); without it the name ends in ``.tmp``, so a glob for ``*.parquet`` never
    sees a partition being written.
    """
    target = Path(path)
    tail = target.suffix if keep_suffix else ""
    return target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp{tail}")


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, *, keep_suffix: bool = True) -> Iterator[Path]:
    """Yield a temporary path to write; on success it replaces ``path``, on error it is removed.

    >>> with atomic_path("report.html") as tmp:      # doctest: +SKIP
    ...     tmp.write_text(html)
    """
    target = Path(os.path.realpath(path))  # through a symlink to the file it names
    if target.exists() and not target.is_file():  # /dev/null, a FIFO, /dev/stdout: write in place
        yield target
        return
    tmp = temp_name(target, keep_suffix=keep_suffix)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_text(path: str | os.PathLike, text: str, *, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding=encoding) as fh:
            fh.write(text)


# the most text (bytes, all String columns of a row together) one Parquet row group holds: the
# writer turns a row group's strings into plain buffers at once, so a value repeated on every row
# (a series' 10,000 workload labels: 300 KB) costs its size times the row group's rows there,
# although polars itself holds it once (string views). Measured: 1,922 rows of one 300 KB labels
# string written in one row group peaked at 716 MB, in row groups of 64 rows at 123 MB.
TEXT_PER_ROW_GROUP = 16 * 2**20
_DEFAULT_ROW_GROUP = 512**2  # polars' default row_group_size


def row_group_rows(df) -> int | None:
    """Rows per row group so that one holds at most :data:`TEXT_PER_ROW_GROUP` bytes of text, or
    None when polars' default already does (rows of ordinary width)."""
    import polars as pl

    cols = [c for c, t in df.schema.items() if t == pl.String]
    if not cols or not df.height:
        return None
    widest = df.select(pl.sum_horizontal(pl.col(cols).str.len_bytes().fill_null(0)).max()).item() or 0
    rows = max(1, TEXT_PER_ROW_GROUP // max(widest, 1))
    return rows if rows < _DEFAULT_ROW_GROUP else None


def _write_dictionary(df, tmp, columns, options) -> None:
    """``df`` written by pyarrow with ``columns`` (text) as Parquet dictionaries: each distinct value
    once in the file and in the writer's memory, a number per row. polars' own writer turns a
    row group's strings into plain buffers (the text times the rows), and writes a Categorical
    with its Arrow schema, which would read back as Categorical rather than the text it was; the
    file is written without the Arrow schema, so every reader gets these columns as text."""
    import polars as pl
    import pyarrow.parquet as pq

    table = df.with_columns(pl.col(c).cast(pl.Categorical) for c in columns).to_arrow()
    pq.write_table(table, tmp, compression=options.get("compression", "zstd"), store_schema=False,
                   use_dictionary=list(columns), write_statistics=options.get("statistics", True))


def write_parquet(df, path: str | os.PathLike, *, dictionary=(), **options) -> None:
    """Write a polars frame as Parquet to ``path`` atomically (``options``: ``DataFrame.write_parquet``'s).
    polars reports a failed write (a full disk, an I/O error) as ``ComputeError`` rather than
    ``OSError``; it is raised here as the ``OSError`` it is, so callers turn it into one line as they
    do for text. Unless ``row_group_size`` is given, rows with wide text get row groups small enough
    to hold at most :data:`TEXT_PER_ROW_GROUP` bytes of it (:func:`row_group_rows`): the writer's
    memory stays bounded by that, not by the rows times the text of each. ``dictionary``: text
    columns written as Parquet dictionaries, each distinct value once (:func:`_write_dictionary`;
    only ``compression`` and ``statistics`` of ``options`` apply then)."""
    import errno
    import re

    import polars as pl

    if dictionary:
        with atomic_path(path, keep_suffix=False) as tmp:
            _write_dictionary(df, tmp, list(dictionary), options)  # (pyarrow raises OSError itself)
        return
    if "row_group_size" not in options:
        rows = row_group_rows(df)
        if rows is not None:
            options["row_group_size"] = rows
    with atomic_path(path, keep_suffix=False) as tmp:
        try:
            df.write_parquet(tmp, **options)
        except pl.exceptions.ComputeError as err:  # our own frame: a failed write is the file system's
            text = str(err)
            m = re.search(r"os error (\d+)", text)
            code = int(m.group(1)) if m else errno.EIO
            raise OSError(code, os.strerror(code) if m else f"write failed ({text.splitlines()[0][:120]})") from None

