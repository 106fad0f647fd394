"""RL902 performance-above-roof."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class PerformanceAboveRoof(Rule):
    """Kernels measured above their roof: a counter or a peak is wrong, not a miracle.

    What it finds
    -------------
    Kernel name groups with launches whose fraction of roof exceeds ``1 + tolerance``
    (achieved FLOP/s above the attainable FLOP/s at their intensity). It reports how many
    launches and the largest fraction.

    Why it matters
    --------------
    Nothing runs above its roof. A point above it means the inputs disagree: a datasheet peak
    for a GPU that ran at a different clock or was matched to the wrong catalogue entry, a FLOP
    recipe that double counts (sparse tensor counters reported as dense-equivalent, Volta's
    ``x512`` tensor recipe applied to another architecture), or DRAM bytes that are not the
    kernel's own. Every finding about this kernel rests on those numbers.

    What to do
    ----------
    Check the inputs before trusting this kernel's point: prefer the peaks ncu recorded
    (``--set roofline``) over the datasheet, check the GPU the profile was matched to
    (``--gpu``), and verify the FLOP counters against a hand count (2 x M x N x K for a GEMM).

    Example
    -------
    A GEMM whose tensor FLOPs were counted with the Volta recipe on an Ampere GPU: ``4 of 4
    launches above the roof, up to 131% of it (tolerance 105%): the counters or the peak are
    wrong``.
    """

    code = "RL902"
    name = "performance-above-roof"
    severity = "warning"
    family = "data"
    thresholds = {
        "tolerance": (0.05, "fires when a launch exceeds its roof by more than this fraction (measurement noise)"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        if df is None:
            return []
        limit = 1.0 + self.params["tolerance"]
        above = pl.col("roof_fraction") > limit
        g = (
            df.group_by("subject", "gpu", maintain_order=True)
            .agg(
                launches=pl.len(),
                above=above.sum(),
                max_fraction=pl.col("roof_fraction").max(),
                bound=pl.col("bound").filter(above).drop_nulls().first(),
                peak_flops_source=pl.col("peak_flops_source").filter(above).drop_nulls().first(),
                peak_bw_source=pl.col("peak_bw_source").filter(above).drop_nulls().first(),
                flops_source=pl.col("flops_tensor_source").drop_nulls().first(),
                dram_bytes_source=pl.col("dram_bytes_source").drop_nulls().first(),
            )
            .filter(pl.col("above") > 0)
        )
        out = []
        for row in g.iter_rows(named=True):
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"{row['above']:,} of {K.plural(row['launches'], 'launch')} above the roof, up to "
                        f"{K.fmt_pct(row['max_fraction'])} of it (tolerance {K.fmt_pct(limit)}): the counters or "
                        f"the peak are wrong"
                    ),
                    remedy=(
                        "Check the inputs before trusting this point: prefer ncu-recorded peaks (--set roofline), "
                        "check the GPU match (--gpu), and verify FLOPs against a hand count."
                    ),
                    evidence=(
                        Evidence("launches_above_roof", row["above"], "launches", "derived"),
                        Evidence("max_roof_fraction", row["max_fraction"], "ratio", "derived"),
                        Evidence("bound", row["bound"], "side", "derived"),
                        Evidence("peak_flops_source", row["peak_flops_source"], "source", K.roof_source(row["peak_flops_source"])),
                        Evidence("peak_bw_source", row["peak_bw_source"], "source", K.roof_source(row["peak_bw_source"])),
                        Evidence("flops_source", row["flops_source"], "recipe", K.measured(row["flops_source"])),
                        Evidence("dram_bytes_source", row["dram_bytes_source"], "recipe", K.measured(row["dram_bytes_source"])),
                    ),
                    impact_s=None,
                    impact_share=None,
                    confidence=K.confidence(row["peak_flops_source"], row["peak_bw_source"]),
                    subject_kind="kernel",
                )
            )
        return out
