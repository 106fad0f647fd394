#!/usr/bin/env python
"""Classifier speed: classify() + summarize() on N synthetic launches, as a ratio to a baseline.

The baseline, timed in the same process on the same table, is one polars pass that computes
intensity and a memory/compute label with a fixed ridge: the least any roofline classifier
must do. The ratio shows what the full recipe (per-device roofs, measured-peak medians,
precision choice, missing/hint lists) costs on top of it. No absolute time targets.

    python benchmarks/bench_classify.py            # 1,000,000 launches
    python benchmarks/bench_classify.py --n 200000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def synthetic_kernels(n: int):
    """n launches over 50 kernel names on two devices; a few with counters missing (synthetic)."""
    import numpy as np
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema

    rng = np.random.default_rng(0)
    names = [f"kernel_{i}" for i in range(50)]
    flops = rng.lognormal(20, 3, n)
    df = pl.DataFrame(
        {
            "id": [str(i) for i in range(n)],
            "kernel_name": rng.choice(names, n),
            "device_name": rng.choice(["NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"], n),
            "duration_s": rng.uniform(2e-6, 1e-3, n),
            "flops_tensor_fp16": np.where(rng.random(n) < 0.5, flops, 0.0),
            "flops_fp32": flops * rng.random(n) * 0.1,
            "dram_bytes": np.where(rng.random(n) < 0.01, np.nan, rng.lognormal(20, 2, n)),
            "peak_flops_fp32_per_s": np.full(n, 66.9e12),
        }
    ).with_columns(pl.col("dram_bytes").fill_nan(None), pl.col("kernel_name").alias("short_name"))
    schema = polars_schema(KERNEL_COLUMNS)
    return df.select([pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c) for c, t in schema.items()])


def baseline(df):
    import polars as pl

    flops = pl.sum_horizontal("flops_fp32", "flops_tensor_fp16")
    return df.with_columns(
        (flops / pl.col("dram_bytes")).alias("ai"),
    ).with_columns(pl.when(pl.col("ai") < 295).then(pl.lit("memory")).otherwise(pl.lit("compute")).alias("bound"))


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from ridgeline.analyzer.roofline import classify, summarize

    df = synthetic_kernels(args.n)
    base = best_of(lambda: baseline(df), args.repeat)
    cls = best_of(lambda: classify(df), args.repeat)
    out, _ = classify(df)
    summ = best_of(lambda: summarize(out), args.repeat)
    print(f"launches: {args.n:,}")
    print(f"classify  / baseline: {cls / base:6.1f}x")
    print(f"summarize / baseline: {summ / base:6.1f}x")
    print(f"launches per baseline-second classified: {args.n * base / cls:,.0f} (ratio, same process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
