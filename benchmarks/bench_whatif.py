#!/usr/bin/env python
"""--what-if projections and RL101's what-if impact on a large profile, as ratios to RL102 (a
plain kernel rule on the same table) timed in the same run.

    python benchmarks/bench_whatif.py                 # ~100k launches (the decode-b8 fixture x 280)
    python benchmarks/bench_whatif.py --copies 28     # ~10k launches

The table is the SYNTHETIC decode-b8-h100 fixture's launches repeated; best of --repeat runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=280)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import polars as pl

    from ridgeline.analyzer.kernels.gpus import lookup
    from ridgeline.analyzer.kernels.whatif import project_batch, project_gpu
    from ridgeline.pipeline import analyze_paths
    from ridgeline.rules.base import Context
    from ridgeline.rules.engine import run_rules

    res = analyze_paths([ROOT / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"], run_rules=False)
    big = pl.concat([res.kernels] * args.copies)
    total = float(big["duration_s"].sum())

    def best(fn):
        out = float("inf")
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            out = min(out, time.perf_counter() - t0)
        return out

    def rules(code):
        return run_rules(Context(kernels=big, total_gpu_time_s=total, extra={"roofs": res.roofs}), select=[code])

    base = best(lambda: rules("RL102"))
    rows = [
        ("RL101 (impact from the what-if model)", best(lambda: rules("RL101"))),
        ("project_gpu H200", best(lambda: project_gpu(big, lookup("H200")[0]))),
        ("project_batch 64", best(lambda: project_batch(big, 64, gpu=lookup("H100 SXM")[0]))),
    ]
    print(f"{big.height:,} launches; baseline RL102 {base:.3f} s")
    for name, t in rows:
        print(f"  {name:<40} {t:7.3f} s  {t / base:6.1f}x baseline")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
