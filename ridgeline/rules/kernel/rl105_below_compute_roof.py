"""RL105 below-compute-roof."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class BelowComputeRoof(Rule):
    """Compute-bound kernels far below their precision's compute roof.

    What it finds
    -------------
    Kernel name groups on the compute side of the ridge (group DRAM intensity at or above the
    ridge) whose fraction of roof (time at the roof / measured duration, over the launches
    whose roof is known) is below ``min_roof_fraction``. Groups whose mean launch is shorter
    than ``min_mean_duration_s`` are left to RL106 (ramp-up and tail dominate tiny kernels).

    Why it matters
    --------------
    Right of the ridge the DRAM is not the limit; the math pipes are. A GEMM or convolution at
    a third of its peak leaves most of the GPU idle: wave quantization (a grid that does not
    fill the last wave of SMs), small tiles, poor pipelining, register or shared-memory limited
    occupancy, or a library heuristic that picked the wrong kernel.

    What to do
    ----------
    Tune the kernel toward its roof: let the library autotune (cuBLASLt heuristics, CUTLASS
    profiler, ``torch.compile(mode="max-autotune")``), pad shapes to multiples of the tile and
    of the SM count, use larger tiles or split-K for skinny shapes, and read ncu's Compute
    Workload Analysis and Warp State sections for the stall reason. The advice follows what the
    kernel is (``docs/kernel-families.md``): GEMM autotuning for GEMMs, the GPU's own attention
    kernel (FlashAttention-3 on Hopper) for attention, the Triton config for Triton kernels. A
    kernel on Hopper's legacy mma.sync tensor path is measured against that path's roof; the
    finding adds that a wgmma kernel has a 1.5x higher one. The remedy is reaching the roof, so
    the impact is the gap to it (duration minus time at the roof, per launch), stated as such.

    Example
    -------
    A bf16 GEMM at 312 TFLOP/s on an H100 SXM: ``312 TFLOP/s = 32% of the bf16/fp16 compute
    roof 989 TFLOP/s (catalogue) < 50% on H100 SXM``.
    """

    code = "RL105"
    name = "below-compute-roof"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "min_roof_fraction": (0.5, "fires when the group reaches less than this fraction of its compute roof"),
        "min_time_share": K.MIN_TIME_SHARE,
        "min_mean_duration_s": K.MIN_MEAN_DURATION_S,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.kernel_groups(ctx)
        if groups is None:
            return []
        p = self.params
        c = pl.col
        hits = groups.filter(
            K.right_of_ridge()
            & (c("roof_fraction") < p["min_roof_fraction"])
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in hits.iter_rows(named=True):
            impact_s, share, basis = K.roof_gap_impact(row, total, "tuning the kernel (reaching its compute roof)")
            src = K.roof_source(row["peak_flops_source"])
            got, limit = K.fmt_pct_vs(row["roof_fraction"], p["min_roof_fraction"])
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"{K.fmt_si(row['achieved_flops_per_s'], 'FLOP/s')} = {got} of the "
                        f"{K.precision_label(row['precision'])} compute roof {K.fmt_si(row['peak_flops_per_s'], 'FLOP/s')} "
                        f"({src}) < {limit} on {row['gpu']}"
                    ),
                    remedy=K.compute_tuning_remedy(row),
                    evidence=(
                        Evidence("achieved_flops_per_s", row["achieved_flops_per_s"], "FLOP/s", "derived"),
                        Evidence("roof_fraction", row["roof_fraction"], "ratio", "derived"),
                        *K.intensity_evidence(row),
                        Evidence("mean_duration_s", row["mean_duration_s"], "s", K.measured(row["duration_s_source"])),
                        *K.time_evidence(row),
                        *basis,
                    ),
                    impact_s=impact_s,
                    impact_share=share,
                    confidence=K.confidence(row["peak_flops_source"]),
                    subject_kind="kernel",
                )
            )
        return out
