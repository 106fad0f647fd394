"""The per-launch ROOFLINE table as CSV or Parquet (``ridgeline analyze --format csv|parquet``).

CSV cannot hold lists: list columns (``missing``) are joined with ``"; "``. Parquet keeps
every column's type. Columns are the KERNEL columns followed by the ROOFLINE columns.
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
    return df.select(exprs)


def write_table(result: Any, fmt: str, path: str | Path | None) -> None:
    """Write the per-launch table as ``csv`` (to ``path`` or stdout) or ``parquet`` (``path`` required)."""
    df = launch_table(result)
    if fmt == "csv":
        out = csv_ready(df)
        if path is None or str(path) == "-":
            sys.stdout.write(out.write_csv())
        else:
            out.write_csv(str(path))
    elif fmt == "parquet":
        if path is None or str(path) == "-":
            raise UsageError("--format parquet needs -o PATH (Parquet is binary)")
        from ridgeline.atomic import write_parquet

        write_parquet(df, path)
    else:  # pragma: no cover - click restricts the choice
        raise UsageError(f"unknown table format {fmt!r}")
