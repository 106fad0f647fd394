#!/usr/bin/env python
"""Classifier speed as ratios to baselines timed in the same process (no absolute targets).

1. Against parsing: the decode-b8-h100 fixture export replicated to ~100k launches (a
   temporary file), ``read_ncu`` vs ``classify`` vs ``summarize`` on what it returns.
   The classifier should cost a small fraction of reading the file.
2. Against a minimal pass: N synthetic launches (two devices, some counters missing);
   the baseline is one polars pass computing intensity and a fixed-ridge label, the least
   any roofline classifier must do.

    python benchmarks/bench_classify.py            # 1,000,000 synthetic launches
    python benchmarks/bench_classify.py --n 200000 --copies 300
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


FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"


def replicate_fixture(target: Path, copies: int) -> bool:
    """Write the fixture's launches ``copies`` times with fresh IDs; False when the fixture is absent."""
    if not FIXTURE.exists():
        return False
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    body = [line for line in lines[header + 2 :] if line.startswith('"')]
    out = lines[: header + 2]
    for k in range(copies):
        for line in body:
            first, rest = line.split(",", 1)
            out.append(f'"{k * 100000 + int(first.strip(chr(34)))}",{rest}')
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return True


def against_parser(copies: int, repeat: int) -> None:
    import tempfile

    from ridgeline.analyzer.kernels.roofline import classify, summarize
    from ridgeline.parsers.ncu.csv_reader import read_ncu

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.ncu-raw.csv"
        if not replicate_fixture(path, copies):
            print("fixture absent: parser comparison skipped")
            return
        parsed = read_ncu([str(path)])
        t_read = best_of(lambda: read_ncu([str(path)]), repeat)
    kernels = parsed.kernels
    t_cls = best_of(lambda: classify(kernels), repeat)
    out, _ = classify(kernels)
    t_sum = best_of(lambda: summarize(out), repeat)
    print(f"fixture x{copies}: {kernels.height:,} launches")
    print(f"classify  / read_ncu: {t_cls / t_read:6.3f}x")
    print(f"summarize / read_ncu: {t_sum / t_read:6.3f}x")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--copies", type=int, default=300, help="fixture replication for the parser comparison")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from ridgeline.analyzer.kernels.roofline import classify, summarize

    against_parser(args.copies, args.repeat)

    df = synthetic_kernels(args.n)
    base = best_of(lambda: baseline(df), args.repeat)
    cls = best_of(lambda: classify(df), args.repeat)
    out, _ = classify(df)
    summ = best_of(lambda: summarize(out), args.repeat)
    print(f"launches: {args.n:,}")
    print(f"classify  / baseline: {cls / base:6.1f}x")
    print(f"summarize / baseline: {summ / base:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
