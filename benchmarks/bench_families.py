#!/usr/bin/env python
"""Kernel-family columns: cost as a ratio to a baseline timed in the same process.

N SYNTHETIC launches over D distinct, realistic kernel names (cuBLAS nvjet tiles, ATen
elementwise functors, FlashAttention-3 template names, each varied by a number so they stay
distinct). The baseline is the least any name-keyed annotation must do: find the distinct
names and map three precomputed string columns back onto every launch (``replace_strict``).
``family_columns`` adds the regex classification of each distinct name (cold cache) on top.

    python benchmarks/bench_families.py                 # 1,000,000 launches, 200 distinct names
    python benchmarks/bench_families.py --n 200000 --distinct 2000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHAPES = (
    "nvjet_tst_{i}x8_64x16_2x1_v_bz_splitK_TNT",
    "void at::vectorized_elementwise_kernel<4, at::CUDAFunctorOnSelf_add<int{i}>, std::array<char *, 2>>(int, T2, T3)",
    "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1>>, cute::tuple<cute::C<128>, cute::C<{i}>, cute::C<128>>, 128, cutlass::bfloat16_t, float, arch::Sm90>>>>(T1::Params)",
    "void norm::FusedAddRMSNormKernel<{i}, __nv_bfloat16>(T2 *, T2 *, T2 *, unsigned int, unsigned int, unsigned int, float, float)",
    "triton_poi_fused_clamp_sub_{i}",
    "cuda_compute_flux_{i}(int,int*,float*,float*,float*)",
)


def frame(n: int, distinct: int):
    import numpy as np
    import polars as pl

    names = [SHAPES[i % len(SHAPES)].format(i=i) for i in range(distinct)]
    rng = np.random.default_rng(0)
    return pl.DataFrame({"kernel_name": rng.choice(names, n), "duration_s": rng.uniform(1e-6, 1e-3, n)})


def baseline(df):
    import polars as pl

    names = df["kernel_name"].unique().to_list()
    fam, lib, lab = (["x"] * len(names) for _ in range(3))
    key = pl.col("kernel_name")
    return df.with_columns(
        key.replace_strict(names, fam, default=None).alias("kernel_family"),
        key.replace_strict(names, lib, default=None).alias("kernel_library"),
        key.replace_strict(names, lab, default=None).alias("kernel_label"),
    )


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--distinct", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from ridgeline.analyzer.kernels import families

    df = frame(args.n, args.distinct)

    def cold():
        families.classify_name.cache_clear()
        families.family_columns(df)

    base = best_of(lambda: baseline(df), args.repeat)
    ours = best_of(cold, args.repeat)
    families.classify_name.cache_clear()
    t = time.perf_counter()
    for name in df["kernel_name"].unique().to_list():
        families.classify_name(name)
    per_name = (time.perf_counter() - t) / args.distinct
    print(f"{args.n:,} launches, {args.distinct} distinct names, best of {args.repeat}")
    print(f"  baseline (distinct names + map back): {base:.3f} s")
    print(f"  family_columns (cold cache):          {ours:.3f} s  ({ours / base:.2f}x baseline)")
    print(f"  classify_name per distinct name:      {per_name * 1e6:.0f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
