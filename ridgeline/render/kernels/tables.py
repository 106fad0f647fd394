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

    The check is one vectorised ``str.contains`` per column; only the rare cells that need it
    are rewritten in Python."""
    import polars as pl

    from ridgeline.render.safe_text import CONTROL_PATTERN, FORMULA_PATTERN, csv_cell

    exprs = []
    for name, dtype in df.schema.items():
        if dtype != pl.String:
            continue
        col = df.get_column(name)
        if col.str.contains(CONTROL_PATTERN).any() or col.str.contains(FORMULA_PATTERN).any():
            exprs.append(pl.col(name).map_elements(csv_cell, return_dtype=pl.String, skip_nulls=True))
    return df.with_columns(exprs) if exprs else df


def write_table(result: Any, fmt: str, path: str | Path | None) -> None:
    """Write the per-launch table as ``csv`` (to ``path`` or stdout) or ``parquet`` (``path`` required)."""
    df = launch_table(result)
    if fmt == "csv":
        from ridgeline.render.safe_text import for_output

        text = for_output(csv_ready(df).write_csv())
        if path is None or str(path) == "-":
            sys.stdout.write(text)
        else:
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
    elif fmt == "parquet":
        if path is None or str(path) == "-":
            raise UsageError("--format parquet needs -o PATH (Parquet is binary)")
        from ridgeline.atomic import write_parquet

        write_parquet(df, path)
    else:  # pragma: no cover - click restricts the choice
        raise UsageError(f"unknown table format {fmt!r}")
