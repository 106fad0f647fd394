"""RL103 below-bandwidth-roof."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class BelowBandwidthRoof(Rule):
    """Memory-bound kernels far below the DRAM bandwidth roof: the kernel, not the batch, is slow.

    What it finds
    -------------
    Kernel name groups left of the ridge (group DRAM intensity below the ridge point, or no FLOPs
    at all: copies, transposes, gathers) whose
    achieved DRAM bandwidth (total DRAM bytes / total duration of the launches that measured
    both) is below ``min_bandwidth_fraction`` of the bandwidth roof. Groups whose mean launch is
    shorter than ``min_mean_duration_s`` are left to RL106: a few-microsecond kernel cannot ramp
    up to full bandwidth whatever its code does.

    Why it matters
    --------------
    A memory-bound kernel's roof is the bandwidth roof. Running at a fraction of it means the
    kernel leaves bandwidth unused: uncoalesced or narrow accesses, too few bytes in flight (low
    occupancy, no asynchronous copies), partition camping, or a launch too small to fill the
    GPU. Changing the batch or the model does not fix this; the kernel does.

    What to do
    ----------
    Fix the kernel's memory access: coalesce and vectorize loads (128-bit), keep more bytes in
    flight (occupancy, cp.async/TMA pipelines), give the grid enough blocks to cover every SM,
    or switch to a better-tuned library kernel. Compare with ncu's Memory Workload Analysis
    section for the access pattern. The remedy is reaching the bandwidth roof, so the impact is
    the gap to it (duration minus time at the roof, per launch); the evidence states that basis.

    Example
    -------
    A ``rms_norm_kernel`` moving 1.21 TB/s on an H100 SXM: ``DRAM bandwidth 1.21 TB/s = 36% of
    the 3.35 TB/s roof (catalogue) < 60% on H100 SXM``.
    """

    code = "RL103"
    name = "below-bandwidth-roof"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "min_bandwidth_fraction": (0.6, "fires when achieved DRAM bandwidth is below this fraction of the bandwidth roof"),
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
        frac = c("achieved_dram_bytes_per_s") / c("peak_bw_bytes_per_s")
        hits = groups.with_columns(bw_fraction=frac).filter(
            c("intensity_dram").is_not_null()
            # left of the ridge; a kernel with no FLOPs at all (copy, transpose, gather) sits at
            # intensity 0 and has no ridge of its own, but its only roof is the bandwidth roof
            & ((c("intensity_dram") == 0) | ((c("ridge_flop_per_byte") > 0) & (c("intensity_dram") < c("ridge_flop_per_byte"))))
            & (c("peak_bw_bytes_per_s") > 0)
            & (c("bw_fraction") < p["min_bandwidth_fraction"])
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in hits.iter_rows(named=True):
            impact_s, share, basis = K.roof_gap_impact(row, total, "fixing the kernel's memory access (reaching the bandwidth roof)")
            src = K.roof_source(row["peak_bw_source"])
            got, limit = K.fmt_pct_vs(row["bw_fraction"], p["min_bandwidth_fraction"])
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"DRAM bandwidth {K.fmt_si(row['achieved_dram_bytes_per_s'], 'B/s')} = "
                        f"{got} of the {K.fmt_si(row['peak_bw_bytes_per_s'], 'B/s')} "
                        f"roof ({src}) < {limit} on {row['gpu']}"
                    ),
                    remedy=(
                        "Fix the kernel's memory access, not the batch: coalesce and vectorize loads, keep more "
                        "bytes in flight (occupancy, cp.async/TMA), fill every SM, or use a better-tuned kernel."
                    ),
                    evidence=(
                        Evidence("dram_bytes", row["dram_bytes"], "B", K.measured(row["dram_bytes_source"])),
                        Evidence("achieved_dram_bytes_per_s", row["achieved_dram_bytes_per_s"], "B/s", "derived"),
                        Evidence("peak_bw_bytes_per_s", row["peak_bw_bytes_per_s"], "B/s", src),
                        Evidence("bandwidth_fraction", row["bw_fraction"], "ratio", "derived"),
                        Evidence("intensity_dram", row["intensity_dram"], "FLOP/B", "derived"),
                        Evidence("ridge_flop_per_byte", row["ridge_flop_per_byte"], "FLOP/B", "derived"),
                        Evidence("mean_duration_s", row["mean_duration_s"], "s", K.measured(row["duration_s_source"])),
                        *K.time_evidence(row),
                        *basis,
                    ),
                    impact_s=impact_s,
                    impact_share=share,
                    confidence=K.confidence(row["peak_bw_source"]),
                    subject_kind="kernel",
                )
            )
        return out
