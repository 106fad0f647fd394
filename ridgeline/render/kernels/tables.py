"""The per-launch ROOFLINE table as CSV or Parquet (``ridgeline analyze --format csv|parquet``).

CSV cannot hold lists: list columns (``missing``) are joined with ``"; "``. Parquet keeps
every column's type. Columns are the KERNEL columns followed by the ROOFLINE columns.

Text cells of the CSV go through :func:`safe_cells` (ridgeline.render.safe_text.csv_cell):
control characters shown escaped and a cell starting like a spreadsheet formula (``=``, ``+``,
``-``, ``@``) prefixed with ``'``. Parquet, like JSON, keeps every name exact.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS, polars_schema
from ridgeline.errors import UsageError

LIST_SEPARATOR = "; "


def launch_table(result: Any):
    """The ROOFLINE table of a result (an empty one with the right columns when there are no kernels)."""
    import polars as pl

    if result.kernels is not None:
        return result.kernels
    return pl.DataFrame(schema=polars_schema(KERNEL_COLUMNS) | polars_schema(ROOFLINE_COLUMNS))


def csv_ready(df):
    """Lists joined into strings, everything else as is."""
    import polars as pl

    exprs = [
        pl.col(name).list.join(LIST_SEPARATOR).alias(name) if isinstance(dtype, pl.List) else pl.col(name)
        for name, dtype in df.schema.items()
    ]
    return safe_cells(df.select(exprs))


def safe_cells(df):
    """Every text column made safe for a CSV read by people and spreadsheets (safe_text.csv_cell).

    The check is one vectorised ``str.contains`` per column, all columns in one pass; only the
    rare cells that need it are rewritten in Python."""
    import polars as pl

    from ridgeline.render.safe_text import CONTROL_PATTERN, FORMULA_PATTERN, csv_cell

    names = [name for name, dtype in df.schema.items() if dtype == pl.String]
    if not names or not df.height:
        return df
    flags = df.select(pl.col(names).str.contains(f"{CONTROL_PATTERN}|{FORMULA_PATTERN}").any()).row(0)
    exprs = [pl.col(name).map_elements(csv_cell, return_dtype=pl.String, skip_nulls=True)
             for name, hit in zip(names, flags) if hit]
    return df.with_columns(exprs) if exprs else df


def _commands_defused(df):
    """What :func:`ridgeline.render.safe_text.for_output` does to a CSV's text, done on the cells
    of a :func:`safe_cells` table (whose cells hold no line break), so the CSV is written straight
    from the table: ``##[`` anywhere becomes ``#\\u0023[``, and a line's first cell (unquoted:
    no comma or quote in it) starting with blanks and ``::`` gets ``\\u003a:``."""
    import polars as pl

    names = [name for name, dtype in df.schema.items() if dtype == pl.String]
    if not names or not df.height:
        return df
    first = df.columns[0] if df.schema[df.columns[0]] == pl.String else None
    flags = df.select(pl.col(names).str.contains("##[", literal=True).any()).row(0)
    exprs = {name: pl.col(name).str.replace_all("##[", "#\\u0023[", literal=True) for name, hit in zip(names, flags) if hit}
    if first is not None:
        col = exprs.get(first, pl.col(first))
        line = col.str.contains(r"^[ ]*::") & ~col.str.contains('[,"]')
        if df.select(line.any()).item():
            exprs[first] = pl.when(line).then(col.str.replace(r"^([ ]*):", "${1}\\u003a")).otherwise(col)
    return df.with_columns(e.alias(n) for n, e in exprs.items()) if exprs else df


def write_table(result: Any, fmt: str, path: str | Path | None) -> None:
    """Write the per-launch table as ``csv`` (to ``path`` or stdout) or ``parquet`` (``path`` required)."""
    df = launch_table(result)
    if fmt == "csv":
        # cells made safe in the table (control characters, formulas, workflow commands): the
        # text polars writes needs no second scan, and is never held whole for a file
        table = _commands_defused(csv_ready(df))
        if path is None or str(path) == "-":
            sys.stdout.write(table.write_csv())
        else:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                table.write_csv(fh)
    elif fmt == "parquet":
        if path is None or str(path) == "-":
            raise UsageError("--format parquet needs -o PATH (Parquet is binary)")
        from ridgeline.atomic import write_parquet

        write_parquet(df, path)
    else:  # pragma: no cover - click restricts the choice
        raise UsageError(f"unknown table format {fmt!r}")
