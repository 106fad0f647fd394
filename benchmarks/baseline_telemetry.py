#!/usr/bin/env python
"""Baselines for bench_telemetry_wide.py: the same per-GPU, per-window statistics ridgeline's
telemetry reduction computes at its core, written the plainest way in other tools, one
partition (one ``date=/host=`` Parquet file, or one text file) at a time.

Per GPU and 5-minute window: mean and exact (linearly interpolated) p95 of every field, and
the busy-with-idle-tensor share (GPU-Util >= 80 %, tensor <= 0.1, GR_ENGINE >= 0.5), then one
concatenated table written as CSV. Nothing else (no coverage, gaps, states, plausibility
flags, rules): the floor a reduction of this shape can reach.

    python benchmarks/baseline_telemetry.py polars STORE OUT.csv   # wide hive store
    python benchmarks/baseline_telemetry.py polars-long STORE OUT.csv  # long hive store (field, value)
    python benchmarks/baseline_telemetry.py duckdb STORE OUT.csv   # needs duckdb (benchmark-only)
    python benchmarks/baseline_telemetry.py polars-dmon FILE OUT.csv  # dcgmi dmon text
    python benchmarks/baseline_telemetry.py polars-exporter FILE OUT.csv  # dcgm-exporter scrapes
    python benchmarks/baseline_telemetry.py polars-smi FILE OUT.csv   # nvidia-smi --query-gpu CSV
"""

from __future__ import annotations

import sys
from pathlib import Path

UTIL, TENSOR, GR = "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_GR_ENGINE_ACTIVE"


def files_of(store: str) -> list[Path]:
    return sorted(Path(store).rglob("*.parquet"))


def polars_partition(df, fields, *, util=UTIL, tensor=TENSOR, gr=GR, keys=("gpu",)):
    import polars as pl

    busy_idle = (pl.col(util) >= 80) & (pl.col(tensor) <= 0.1) & (pl.col(gr) >= 0.5)
    return df.group_by(*keys, pl.col("timestamp").dt.truncate("5m").alias("window_start")).agg(
        *[pl.col(f).mean().alias(f"{f}_mean") for f in fields],
        *[pl.col(f).quantile(0.95, interpolation="linear").alias(f"{f}_p95") for f in fields],
        busy_idle.cast(pl.Float64).mean().alias("busy_tensor_idle_share"),
    )


def run_polars(store: str, out: str) -> int:
    import polars as pl

    parts = []
    for f in files_of(store):
        df = pl.read_parquet(f)
        fields = [c for c in df.columns if c.startswith("DCGM_FI_")]
        host = f.parent.name.split("=", 1)[1]
        parts.append(polars_partition(df, fields).with_columns(pl.lit(host).alias("host")))
    res = pl.concat(parts)
    res.write_csv(out)
    return res.height


def polars_long_partition(df):
    """The same statistics on one long partition (timestamp, gpu, field, value): mean and exact
    p95 per GPU, window and field; the busy-with-idle-tensor share from the three fields it
    needs, brought side by side per GPU and timestamp (a pivot), joined to the field rows."""
    import polars as pl

    window = pl.col("timestamp").dt.truncate("5m").alias("window_start")
    stats = df.group_by("gpu", window, "field").agg(
        pl.col("value").mean().alias("mean"), pl.col("value").quantile(0.95, interpolation="linear").alias("p95"))
    three = df.filter(pl.col("field").is_in([UTIL, TENSOR, GR])).pivot(
        on="field", index=["gpu", "timestamp"], values="value", aggregate_function="last")
    busy_idle = (pl.col(UTIL) >= 80) & (pl.col(TENSOR) <= 0.1) & (pl.col(GR) >= 0.5)
    share = three.group_by("gpu", window).agg(busy_idle.cast(pl.Float64).mean().alias("busy_tensor_idle_share"))
    return stats.join(share, on=["gpu", "window_start"], how="left")


def run_polars_long(store: str, out: str) -> int:
    import polars as pl

    parts = []
    for f in files_of(store):
        host = f.parent.name.split("=", 1)[1]
        parts.append(polars_long_partition(pl.read_parquet(f)).with_columns(pl.lit(host).alias("host")))
    res = pl.concat(parts)
    res.write_csv(out)
    return res.height


def run_duckdb(store: str, out: str) -> int:
    import duckdb
    import polars as pl

    con = duckdb.connect()
    con.execute("SET threads TO 2")
    parts = []
    for f in files_of(store):
        cols = [c for c in pl.read_parquet_schema(f) if c.startswith("DCGM_FI_")]
        stats = ", ".join([f"avg({c}) AS {c}_mean" for c in cols] + [f"quantile_cont({c}, 0.95) AS {c}_p95" for c in cols])
        host = f.parent.name.split("=", 1)[1]
        sql = (f"SELECT '{host}' AS host, gpu, time_bucket(INTERVAL 5 MINUTE, timestamp) AS window_start, {stats}, "
               f"avg(CASE WHEN {UTIL} >= 80 AND {TENSOR} <= 0.1 AND {GR} >= 0.5 THEN 1.0 ELSE 0.0 END) "
               f"AS busy_tensor_idle_share FROM read_parquet('{f}') GROUP BY ALL")
        parts.append(con.sql(sql).pl())  # a relation: DuckDB 2.x connections have no .pl()
    res = pl.concat(parts)
    res.write_csv(out)
    return res.height


DMON_FIELDS = ("GPUTL", "GRACT", "SMACT", "SMOCC", "TENSO", "DRAMA", "FP16A", "FP32A", "POWER", "SMCLK", "MMCLK", "FBUSD")


def run_polars_dmon(path: str, out: str) -> int:
    """A dmon capture read by splitting every line on whitespace (no N/A handling beyond a
    null, no dialects, no repeated-header bookkeeping beyond dropping '#' and 'ID' lines)."""
    import polars as pl

    lines = pl.read_csv(path, has_header=False, separator="\x01", new_columns=["line"], quote_char=None)
    lines = lines.filter(pl.col("line").str.starts_with("GPU "))
    df = lines.select(pl.col("line").str.replace_all(r"\s+", " ").str.split_exact(" ", 1 + len(DMON_FIELDS)).alias("p")).unnest("p")
    names = ["kind", "gpu", *DMON_FIELDS]
    df = df.rename(dict(zip(df.columns, names)))
    df = df.select(pl.col("gpu").cast(pl.Int64), *[pl.col(f).cast(pl.Float64, strict=False) for f in DMON_FIELDS])
    df = df.with_columns((pl.int_range(pl.len()).over("gpu") * 1_000_000).cast(pl.Datetime("us", "UTC")).alias("timestamp"))
    res = polars_partition(df, list(DMON_FIELDS), util="GPUTL", tensor="TENSO", gr="GRACT")
    res.write_csv(out)
    return res.height


def run_polars_exporter(path: str, out: str) -> int:
    """dcgm-exporter scrapes: one regex over the sample lines, the gpu label, then one row per
    GPU and scrape timestamp (a pivot) and the same windows."""
    import polars as pl

    lines = pl.read_lines(path).filter(~pl.col("line").str.starts_with("#"))
    g = lines.select(pl.col("line").str.extract_groups(r"^(\w+)\{([^}]*)\} (\S+) (\d+)$").alias("g")).unnest("g")
    g = g.select(pl.col("1").alias("metric"), pl.col("2").str.extract(r'gpu="(\d+)"', 1).cast(pl.Int64).alias("gpu"),
                 pl.col("3").cast(pl.Float64).alias("value"),
                 pl.col("4").cast(pl.Int64).cast(pl.Datetime("ms", "UTC")).alias("timestamp"))
    wide = g.pivot(on="metric", index=["gpu", "timestamp"], values="value", aggregate_function="last")
    fields = [c for c in wide.columns if c.startswith("DCGM_FI_")]
    res = polars_partition(wide, fields)
    res.write_csv(out)
    return res.height


SMI_UNITS = r"\s*(%|MiB|W|MHz)$"


def run_polars_smi(path: str, out: str) -> int:
    """nvidia-smi --query-gpu CSV: read, strip the units off the values, cast, windows (no
    tensor field in nvidia-smi: the busy share is GPU-Util >= 80 % alone)."""
    import polars as pl

    df = pl.read_csv(path, separator=",", infer_schema=False)
    df = df.rename({c: c.strip() for c in df.columns})
    fields = [c for c in df.columns if "[" in c]
    df = df.select(pl.col("timestamp").str.strip_chars().str.to_datetime("%Y/%m/%d %H:%M:%S%.3f", time_unit="us")
                   .dt.replace_time_zone("UTC"), pl.col("index").str.strip_chars().cast(pl.Int64).alias("gpu"),
                   *[pl.col(c).str.strip_chars().str.replace(SMI_UNITS, "").cast(pl.Float64, strict=False) for c in fields])
    busy = (pl.col("utilization.gpu [%]") >= 80).cast(pl.Float64).mean().alias("busy_share")
    res = df.group_by("gpu", pl.col("timestamp").dt.truncate("5m").alias("window_start")).agg(
        *[pl.col(f).mean().alias(f"{f}_mean") for f in fields],
        *[pl.col(f).quantile(0.95, interpolation="linear").alias(f"{f}_p95") for f in fields], busy)
    res.write_csv(out)
    return res.height


if __name__ == "__main__":
    mode, src, dst = sys.argv[1:4]
    n = {"polars": run_polars, "polars-long": run_polars_long, "duckdb": run_duckdb, "polars-dmon": run_polars_dmon,
         "polars-exporter": run_polars_exporter, "polars-smi": run_polars_smi}[mode](src, dst)
    print(n)
