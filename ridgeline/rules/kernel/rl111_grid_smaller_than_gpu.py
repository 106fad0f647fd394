"""RL111 grid-smaller-than-gpu."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule

#: a launch takes at least this long whatever its grid (the what-if model's floor, RL112's default)
LAUNCH_FLOOR_S = 2.0e-6


class GridSmallerThanGpu(Rule):
    """Kernels launched with fewer thread blocks than the GPU has SMs, running far below their roof.

    What it finds
    -------------
    Kernel name groups whose median grid (``grid_blocks``) is smaller than
    ``max_sm_fraction`` x the GPU's SM count (catalogue), and whose fraction of roof is below
    ``max_roof_fraction``. The SM count is the whole GPU's: under MIG a slice has fewer SMs, so
    check the slice before acting. Groups whose mean launch is shorter than
    ``min_mean_duration_s`` are left to RL106: there the launch, not the grid, is the wall.

    Why it matters
    --------------
    A thread block runs on one SM. A grid of 48 blocks on a 132-SM H100 leaves at least 84 SMs
    idle, and no amount of per-block tuning recovers them: the kernel cannot reach its roof.
    Decode is the usual culprit: small GEMMs with few output tiles, attention with one block
    per (sequence, head) at a small batch.

    What to do
    ----------
    Give the GPU more parallel work per launch: split-K or stream-K GEMM kernels, split-KV
    attention (flash-decoding), smaller tiles, more requests per batch, or run independent work
    concurrently on other streams.

    The impact is what filling the GPU buys: per launch, the time if its blocks covered every SM
    at the same per-SM rate (duration x grid / SMs), never below its time at the roof nor the
    launch floor; the evidence states that basis.

    Example
    -------
    A decode GEMM with 48 CTAs on an H100 SXM: ``median grid 48 blocks < 132 SMs on H100 SXM; 22%
    of its roof``.
    """

    code = "RL111"
    name = "grid-smaller-than-gpu"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "max_sm_fraction": (1.0, "fires when the median grid has fewer blocks than this fraction of the SM count"),
        "max_roof_fraction": (0.5, "fires only when the group reaches less than this fraction of its roof"),
        "min_time_share": K.MIN_TIME_SHARE,
        "min_mean_duration_s": K.MIN_MEAN_DURATION_S,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        if df is None or df["grid_blocks"].null_count() == df.height:
            return []
        groups = K.kernel_groups(ctx, latency=True)  # tiny grids are one reason launches are latency-bound
        grids = df.group_by("subject", "gpu", "precision", maintain_order=True).agg(
            grid_blocks=pl.col("grid_blocks").median()
        )
        groups = groups.join(grids, on=["subject", "gpu", "precision"], how="left", nulls_equal=True)
        p = self.params
        c = pl.col
        cand = groups.filter(
            c("grid_blocks").is_not_null()
            & (c("roof_fraction") < p["max_roof_fraction"])
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        from ridgeline.analyzer.kernels.workload import llm_evidence

        llm = llm_evidence(df) if cand.height else None  # batch and flash-decoding words only for LLM work
        out = []
        for row in cand.iter_rows(named=True):
            gpu = K.catalogue_gpu(ctx, row["gpu"])
            sms = getattr(gpu, "sm_count", None)
            if not sms or row["grid_blocks"] >= p["max_sm_fraction"] * sms:
                continue
            impact_s, share, basis = self._filled_impact(ctx, row, sms, total)
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"median grid {K.fmt(row['grid_blocks'])} blocks < {sms} SMs on {row['gpu']}; "
                        f"{K.fmt_pct(row['roof_fraction'])} of its roof"
                    ),
                    remedy=(
                        "Give each launch more blocks: split-K/stream-K GEMMs, split-KV attention (flash-decoding), "
                        "smaller tiles, or a bigger batch."
                        if llm else
                        "Give each launch more blocks: split-K/stream-K GEMMs, smaller tiles, more work per launch, "
                        "or run independent launches concurrently on streams."
                    ),
                    evidence=(
                        Evidence("grid_blocks_median", row["grid_blocks"], "blocks", "measured: launch grid size"),
                        Evidence("sm_count", sms, "SMs", "catalogue"),
                        Evidence("roof_fraction", row["roof_fraction"], "ratio", "derived"),
                        *K.intensity_evidence(row),
                        *K.time_evidence(row),
                        *basis,
                    ),
                    impact_s=impact_s,
                    impact_share=share,
                    confidence=K.confidence(row["peak_flops_source"], row["peak_bw_source"]),
                    subject_kind="kernel",
                )
            )
        return out

    @staticmethod
    def _filled_impact(ctx: Context, row: dict, sms: int, total: float | None):
        """(impact_s, share, evidence): GPU time now minus the time with every SM busy (module docstring)."""
        import polars as pl

        mine = K.group_launches(ctx, row, latency=True)
        if mine is None or not mine.height:
            return K.roof_gap_impact(row, total, "a grid that fills the GPU")
        c = pl.col
        dur = c("duration_s").fill_null(0.0)
        fill = pl.min_horizontal((c("grid_blocks").cast(pl.Float64) / sms).fill_null(1.0), pl.lit(1.0))
        after = pl.min_horizontal(dur, pl.max_horizontal(dur * fill, c("time_to_roof_s").fill_null(0.0),
                                                         pl.lit(LAUNCH_FLOOR_S)))
        t0 = float(mine.select(dur.sum()).item())
        t1 = float(mine.select(after.sum()).item())
        impact_s = max(t0 - t1, 0.0)
        basis = (f"GPU time of these launches if each grid covered all {sms} SMs at the same per-SM rate "
                 "(duration x grid / SMs), never below its time at the roof or the launch floor")
        return impact_s, (impact_s / total if total else None), (
            Evidence("impact_basis", basis, "text", "derived"),
            Evidence("time_after_remedy_s", t1, "s", "derived"),
        )
