"""Checks of an ``nsys stats`` summary CSV (kern_sum, api_sum, mem_time_sum...) before its totals
are used (issue 21: damaged inputs must not read as if fine).

* :func:`check_cut_last_row` - a file whose last line has no line end and is short of the header's
  fields (or leaves a quote open) was cut off mid-row: that row would read as a kernel with a cut
  name and missing numbers.
* :func:`check_total_cells` - a ``Total Time`` cell that is not a number (``abc``) would read as
  a missing total and vanish from every share; it is an error naming the line and column.

Both are strict-mode errors; ``--lenient`` reads on (the bad total as missing, the cut row as
it stands) as before. Kept out of ``nsys_csv.py`` so that module stays a reader.
"""

from __future__ import annotations

import csv
from pathlib import Path

from ridgeline.errors import InputError

_TAIL = 1 << 16


def check_cut_last_row(path, n_fields: int) -> None:
    """InputError when the file's last line ends without a line end and is short of ``n_fields``
    fields or inside a quoted field (a capture cut off mid-row)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with open(p, "rb") as fh:
            fh.seek(max(0, size - _TAIL))
            tail = fh.read()
    except OSError:
        return
    if not tail or tail.endswith((b"\n", b"\r")):
        return
    last = tail.rsplit(b"\n", 1)[-1].decode("utf-8", errors="replace")
    if not last.strip():
        return
    open_quote = last.count('"') % 2 == 1
    fields = next(csv.reader([last]), []) if not open_quote else []
    if open_quote or len(fields) < n_fields:
        with open(p, "rb") as fh:
            line = sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b"")) + 1
        raise InputError(path, "expected a complete last row; the file is cut off mid-row (no line end"
                         + (", a quote left open)" if open_quote else f", {len(fields)} of {n_fields} fields)"),
                         line=line, actual=last[:60])


def check_total_cells(path, df, column: str, values, first_data_line: int | None) -> None:
    """InputError when a non-blank ``column`` cell of ``df`` gave no number in ``values`` (the parsed
    Series, row for row)."""
    import polars as pl

    text = df.get_column(column).cast(pl.String).str.strip_chars()
    bad = (values.is_null() & text.is_not_null() & (text != "")).arg_true()
    if bad.len():
        i = int(bad[0])
        raise InputError(path, "expected a number (with an optional unit)", column=column,
                         line=None if first_data_line is None else first_data_line + i, actual=text[i])
