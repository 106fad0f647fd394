#!/usr/bin/env python
"""Renderer speed as ratios to baselines timed in the same process (no absolute targets).

1. Roofline, per launch: N synthetic launches (hand-built ROOFLINE rows, synthetic numbers)
   drawn by ``roofline_figure(per_launch=True)`` and saved as PNG, against the least any
   roofline picture costs: one bare log-log matplotlib scatter of the same points saved as PNG.
2. Telemetry: G GPUs x 4 fields x S samples (a fleet-day at 1 s is 86,400 samples)
   drawn by ``telemetry_figure`` and saved as SVG, against one polars group-by mean over the
   same table (what reading it costs before any drawing).
3. The HTML report for (1) against the same figure saved as SVG alone.

    python benchmarks/bench_render.py                 # 100,000 launches, 8 GPUs x 86,400 s
    python benchmarks/bench_render.py --n 20000 --gpus 4 --samples 20000
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def synthetic_result(n: int, gpus: int, samples: int):
    import numpy as np
    import polars as pl

    from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS, TELEMETRY_COLUMNS, polars_schema
    from ridgeline.result import AnalysisResult, Roof

    rng = np.random.default_rng(0)
    names = np.array([f"kernel_{i}<{i % 7}>" for i in range(200)])
    ai = rng.lognormal(1.0, 2.0, n)
    dur = rng.uniform(2e-6, 1e-3, n)
    roof = np.minimum(989e12, ai * 3.35e12)
    achieved = roof * rng.uniform(0.05, 0.95, n)
    kernels = pl.DataFrame(
        {
            "kernel_name": names[rng.integers(0, len(names), n)],
            "duration_s": dur,
            "flops": achieved * dur,
            "dram_bytes": achieved * dur / ai,
            "intensity_dram": ai,
            "achieved_flops_per_s": achieved,
            "bound": np.where(ai < 295, "memory", "compute"),
        }
    ).with_columns(pl.col("kernel_name").alias("short_name"))
    schema = polars_schema({**KERNEL_COLUMNS, **ROOFLINE_COLUMNS})
    kernels = kernels.with_columns(
        [pl.lit(None, dtype=dt).alias(c) for c, dt in schema.items() if c not in kernels.columns]
    ).select(list(schema)).cast(schema)
    t0 = np.datetime64("2026-01-05T00:00:00", "us")
    ts = t0 + (np.arange(samples) * 1_000_000).astype("timedelta64[us]")
    frames = []
    for g in range(gpus):
        for field in ("gpu_util_ratio", "tensor_active_ratio", "dram_active_ratio", "sm_active_ratio"):
            frames.append(
                pl.DataFrame({"timestamp": ts, "value": rng.uniform(0, 1, samples)}).with_columns(
                    pl.lit("node1").alias("host"), pl.lit(g).alias("gpu"), pl.lit(field).alias("field"),
                )
            )
    tel = pl.concat(frames).with_columns(pl.col("timestamp").dt.replace_time_zone("UTC"))
    tschema = polars_schema(TELEMETRY_COLUMNS)
    tel = tel.with_columns(
        [pl.lit(None, dtype=dt).alias(c) for c, dt in tschema.items() if c not in tel.columns]
    ).select(list(tschema)).cast(tschema)
    roofs = [Roof("bandwidth", 3.35e12, "ncu", level="dram"), Roof("compute", 989e12, "ncu", precision="fp16_tensor")]
    return AnalysisResult(gpu_name="H100 SXM", roofs=roofs, kernels=kernels, telemetry=tel,
                          total_gpu_time_s=float(dur.sum()))


def timed(fn, repeat: int = 2):
    """Best of ``repeat`` runs (the first run also pays matplotlib's lazy imports)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--samples", type=int, default=86_400)
    args = ap.parse_args()

    import polars as pl
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from ridgeline.render import plots
    from ridgeline.render.html import render_html

    result = synthetic_result(args.n, args.gpus, args.samples)
    k = result.kernels

    def baseline_scatter():
        fig = Figure(figsize=(10, 6.6))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.scatter(k["intensity_dram"].to_numpy(), k["achieved_flops_per_s"].to_numpy(), s=20)
        fig.savefig(io.BytesIO(), format="png", dpi=150)

    def ours_roofline():
        fig = plots.roofline_figure(result, per_launch=True)
        fig.savefig(io.BytesIO(), format="png", dpi=150, bbox_inches="tight")
        return fig

    t_base, _ = timed(baseline_scatter)
    t_ours, fig = timed(ours_roofline)
    print(f"roofline per launch, {args.n:,} launches: baseline scatter {t_base:.2f} s, "
          f"roofline_figure+PNG {t_ours:.2f} s, ratio {t_ours / t_base:.2f}x")

    t_group, _ = timed(lambda: result.telemetry.group_by("host", "gpu", "field").agg(pl.col("value").mean()))
    t_tel, _ = timed(lambda: plots.figure_svg(plots.telemetry_figure(result)))
    rows = result.telemetry.height
    print(f"telemetry, {rows:,} samples ({args.gpus} GPUs): polars group-by mean {t_group:.3f} s, "
          f"telemetry_figure+SVG {t_tel:.2f} s, ratio {t_tel / t_group:.1f}x")

    agg = plots.roofline_figure(result)  # per kernel name, as the report draws it
    t_svg, _ = timed(lambda: plots.figure_svg(agg))
    result.telemetry = None
    t_html, page = timed(lambda: render_html(result))
    print(f"report, {k['kernel_name'].n_unique()} kernel names: figure SVG alone {t_svg:.2f} s, "
          f"render_html {t_html:.2f} s ({len(page) / 1e6:.1f} MB), ratio {t_html / t_svg:.2f}x")


if __name__ == "__main__":
    main()
