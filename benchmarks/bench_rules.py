#!/usr/bin/env python
"""Rules speed: run_rules() (kernel and data families) on N launches, as ratios to baselines.

Baselines, timed in the same process on the same ROOFLINE table: ``classify()`` (what every
analysis pays before the rules run) and one polars ``group_by`` summing duration per kernel
name (the least any per-kernel rule must do). No absolute time targets.

    python benchmarks/bench_rules.py             # 1,000,000 launches (synthetic)
    python benchmarks/bench_rules.py --n 200000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


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

    import polars as pl

    from bench_classify import synthetic_kernels
    from ridgeline.analyzer.kernels.roofline import classify
    from ridgeline.rules.base import Context
    from ridgeline.rules.engine import run_rules

    kernels = synthetic_kernels(args.n)
    roofline, roofs = classify(kernels)
    total = float(roofline["duration_s"].sum())
    ctx = Context(kernels=roofline, total_gpu_time_s=total, extra={"roofs": roofs})

    t_cls = best_of(lambda: classify(kernels), args.repeat)
    t_grp = best_of(lambda: roofline.group_by("kernel_name").agg(pl.col("duration_s").sum()), args.repeat)
    t_rules = best_of(lambda: run_rules(ctx, family=("kernel", "data")), args.repeat)
    found = run_rules(ctx, family=("kernel", "data"))
    print(f"{roofline.height:,} launches (synthetic), {len(found)} findings")
    print(f"run_rules / classify:         {t_rules / t_cls:6.3f}x")
    print(f"run_rules / one group_by sum: {t_rules / t_grp:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
