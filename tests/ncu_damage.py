"""Test helper: damaged Nsight Compute inputs built from good ones (issue 21).

Every function takes the bytes of a good file and returns damaged bytes; nothing is written to
the repository (tests write into tmp_path). Used by ``tests/parsers/ncu/test_ncu_damaged.py`` (fixed
cases with expected answers) and its hypothesis property test (random combinations).

CSV exports are edited as CSV (the lines before the header, ``==PROF==`` noise, are kept as they
are); ``.ncu-rep`` reports are cut and flipped as bytes.
"""

from __future__ import annotations

import csv
import io

BAD_VALUES = ("-1", "-3.5e9", "inf", "-inf", "nan", "NaN", "1e400")


def split(data: bytes) -> tuple[list[str], list[list[str]]]:
    """(lines before the header, rows from the header on)."""
    text = data.decode("utf-8-sig")
    lines = text.splitlines()
    h = next(i for i, ln in enumerate(lines) if ln.startswith(('"ID"', "ID,")))
    return lines[:h], list(csv.reader(lines[h:]))


def join(pre: list[str], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    w = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for r in rows:
        w.writerow(r)
    return ("".join(ln + "\n" for ln in pre) + out.getvalue()).encode()


def launch_rows(rows: list[list[str]]) -> list[int]:
    """Indexes (into rows) of the rows that carry a launch ID."""
    return [i for i, r in enumerate(rows[1:], 1) if r and r[0].strip()]


def physical_line(pre: list[str], row_index: int) -> int:
    """1-based line of rows[row_index] in the file :func:`join` writes (one line per row)."""
    return len(pre) + row_index + 1


def is_details(rows) -> bool:
    return "Metric Value" in rows[0]


def metric_cells(rows, metric: str) -> list[tuple[int, int]]:
    """(row, column) of every cell holding ``metric``'s value (raw page: its column; details page:
    the Metric Value of its rows)."""
    hdr = rows[0]
    if is_details(rows):
        n, v = hdr.index("Metric Name"), hdr.index("Metric Value")
        return [(i, v) for i in launch_rows(rows) if len(rows[i]) > v and rows[i][n] == metric]
    if metric not in hdr:
        return []
    j = hdr.index(metric)
    return [(i, j) for i in launch_rows(rows) if len(rows[i]) > j and rows[i][j] not in ("", "n/a")]


def set_cell(data: bytes, metric: str, value: str, which: int = 0) -> tuple[bytes, int, str]:
    """``metric``'s ``which``-th present cell set to ``value`` -> (bytes, physical line, launch ID)."""
    pre, rows = split(data)
    i, j = metric_cells(rows, metric)[which]
    rows[i][j] = value
    return join(pre, rows), physical_line(pre, i), rows[i][0]


def dup_launch(data: bytes, which: int = 0, change: tuple[str, str] | None = None) -> tuple[bytes, int, int]:
    """The ``which``-th launch repeated at the end (raw: its row; details: its run of rows), with
    ``change`` = (metric, value) applied to the copy -> (bytes, first line of the original, first
    line of the copy)."""
    pre, rows = split(data)
    ids = launch_rows(rows)
    first = ids[which]
    lid = rows[first][0]
    if is_details(rows):
        run = [i for i in ids if rows[i][0] == lid and i >= first]
        run = [i for k, i in enumerate(run) if i == first + k]  # the consecutive rows
    else:
        run = [first]
    copy = [list(rows[i]) for i in run]
    if change is not None:
        metric, value = change
        sub = [rows[0]] + copy
        (ci, cj), = metric_cells(sub, metric)[:1] or [(None, None)]
        if ci is None:
            raise ValueError(f"{metric} not in launch {lid}")
        copy[ci - 1][cj] = value
    at = len(rows)
    rows.extend(copy)
    return join(pre, rows), physical_line(pre, first), physical_line(pre, at)


def dup_column(data: bytes, name: str, conflict: bool = False) -> tuple[bytes, int, int]:
    """Column ``name`` appended again (``conflict``: with other values) -> (bytes, its 1-based
    position, the copy's position)."""
    pre, rows = split(data)
    j = rows[0].index(name)
    for k, r in enumerate(rows):
        if k == 0:
            r.append(name)
        else:
            v = r[j] if j < len(r) else ""
            while len(r) < len(rows[0]) - 1:
                r.append("")
            r.append(v + "_other" if conflict and k in launch_rows(rows) else v)
    return join(pre, rows), j + 1, len(rows[0])


def dup_metric_row(data: bytes, metric: str, value: str | None = None) -> tuple[bytes, int, int, str]:
    """Details page: the first row of ``metric`` printed again right after itself (``value``: with
    that value) -> (bytes, line of the row, line of the copy, launch ID)."""
    pre, rows = split(data)
    (i, j), *_ = metric_cells(rows, metric)
    copy = list(rows[i])
    if value is not None:
        copy[j] = value
    rows.insert(i + 1, copy)
    return join(pre, rows), physical_line(pre, i), physical_line(pre, i + 1), rows[i][0]
