"""RL108 l2-bandwidth-bound."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class L2BandwidthBound(Rule):
    """Kernels right of the DRAM ridge but left of the L2 ridge: data re-read from L2, not reused in the SM.

    What it finds
    -------------
    Kernel name groups whose DRAM intensity is at or above the ridge (DRAM is not the wall)
    but whose L2 intensity (FLOPs / L2 bytes) is below the L2 ridge (compute peak / L2
    bandwidth), and which reach less than ``max_roof_fraction`` of their roof. The L2 bandwidth
    is the L2 roof the export measured for the group's GPU (ROOFLINE ``peak_l2_bw_bytes_per_s``:
    ncu's recorded L2 peak x L2 clock, median per device), else an L2 roof passed in
    ``ctx.extra["roofs"]`` (level ``l2``), else ``l2_bandwidth_multiple`` x the DRAM bandwidth
    roof -- an assumption, reported as ``derived`` with lower confidence. The evidence names
    the counters of a measured roof; ``lts2xbar`` there is ncu's L2-to-SM definition, close to
    but not the same traffic as the ``lts__t_bytes`` counted.

    Why it matters
    --------------
    The DRAM roofline says such a kernel should be compute-bound, yet it runs well below the
    compute roof: the same bytes are fetched from L2 again and again because tiles are too small
    or blocks that share data run far apart, and the L2 bandwidth becomes the wall.

    What to do
    ----------
    Raise reuse inside the SM: larger tiles or thread-block clusters (distributed shared
    memory, TMA multicast on Hopper), stage operands in shared memory, and rasterize/swizzle
    the grid so blocks reading the same data run together. ncu's Memory Workload Analysis
    shows the L2 throughput. The remedy is reaching the compute roof the DRAM intensity allows,
    so the impact is the gap to that roof (per launch), stated as such in the evidence.

    Example
    -------
    A tall-skinny GEMM on an H100 SXM: ``L2 intensity 40 FLOP/B < L2 ridge 98.4 FLOP/B (L2 roof
    10.1 TB/s) while DRAM
    intensity 600 FLOP/B >= ridge 295 FLOP/B: 15x more L2 than DRAM traffic; 35% of the compute
    roof``.
    """

    code = "RL108"
    name = "l2-bandwidth-bound"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "max_roof_fraction": (0.7, "fires only when the group reaches less than this fraction of its roof"),
        "l2_bandwidth_multiple": (3.0, "assumed L2 bandwidth as a multiple of DRAM bandwidth when no L2 roof was recorded"),
        "min_time_share": K.MIN_TIME_SHARE,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.kernel_groups(ctx)
        if groups is None:
            return []
        p = self.params
        l2_roofs = [r for r in K.gpu_roofs(ctx) if r.kind == "bandwidth" and r.level == "l2" and r.value]
        measured_l2 = self._measured_l2(ctx)
        c = pl.col
        cand = groups.filter(
            c("intensity_dram").is_not_null()
            & c("intensity_l2").is_not_null()
            & (c("ridge_flop_per_byte") > 0)
            & (c("peak_flops_per_s") > 0)
            & (c("intensity_dram") >= c("ridge_flop_per_byte"))
            & (c("roof_fraction") < p["max_roof_fraction"])
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in cand.iter_rows(named=True):
            if measured_l2.get(row["gpu"]):
                l2_bw, recipe = measured_l2[row["gpu"]]
                l2_src, conf = K.measured(recipe), "measured"
            elif l2_roofs:
                l2_bw, l2_src, conf = l2_roofs[0].value, l2_roofs[0].source, "measured"
            else:
                l2_bw = (row["peak_bw_bytes_per_s"] or 0.0) * p["l2_bandwidth_multiple"]
                l2_src = f"derived: assumed {K.fmt(p['l2_bandwidth_multiple'])} x DRAM bandwidth"
                conf = "derived"
            if not l2_bw:
                continue
            l2_ridge = row["peak_flops_per_s"] / l2_bw
            if row["intensity_l2"] >= l2_ridge:
                continue
            l2_ai, l2_ridge_s = K.fmt_vs(row["intensity_l2"], l2_ridge)
            dram_ai, ridge_s = K.fmt_vs(row["intensity_dram"],  # its roof's ridge, as the Roofs list prints it
                                        K.roof_ridge(ctx, row["ridge_flop_per_byte"], row["precision"], row.get("tensor_path")))
            # the L2 roof the ridge is drawn against, so the reader finds it (the Roofs list shows a
            # measured one; an assumed one is said to be assumed)
            l2_roof = (f"L2 roof {K.fmt_si(l2_bw, 'B/s')}, {K.fmt(p['l2_bandwidth_multiple'])}x the DRAM roof: assumed"
                       if conf == "derived" else f"L2 roof {K.fmt_si(l2_bw, 'B/s')}")
            ratio = row["l2_bytes"] / row["dram_bytes"] if row["dram_bytes"] else None
            impact_s, share, basis = K.roof_gap_impact(row, total, "more reuse inside the SM (reaching the compute roof)")
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"L2 intensity {l2_ai} FLOP/B < L2 ridge {l2_ridge_s} FLOP/B ({l2_roof}) while "
                        f"DRAM intensity {dram_ai} FLOP/B >= ridge {ridge_s} FLOP/B: "
                        f"{K.fmt(ratio)}x more L2 than DRAM traffic; "
                        f"{K.fmt_pct(row['roof_fraction'])} of the compute roof"
                    ),
                    remedy=(
                        "Raise reuse inside the SM: larger tiles or thread-block clusters, shared-memory staging, "
                        "and a swizzled grid order so blocks sharing data run together."
                    ),
                    evidence=(
                        Evidence("l2_bytes", row["l2_bytes"], "B", K.measured(row["l2_bytes_source"])),
                        Evidence("intensity_l2", row["intensity_l2"], "FLOP/B", "derived"),
                        Evidence("l2_bw_bytes_per_s", l2_bw, "B/s", l2_src),
                        Evidence("l2_ridge_flop_per_byte", l2_ridge, "FLOP/B", "derived"),
                        *K.intensity_evidence(row),
                        Evidence("roof_fraction", row["roof_fraction"], "ratio", "derived"),
                        *K.time_evidence(row),
                        *basis,
                    ),
                    impact_s=impact_s,
                    impact_share=share,
                    confidence=conf,
                    subject_kind="kernel",
                )
            )
        return out

    @staticmethod
    def _measured_l2(ctx: Context) -> dict:
        """GPU name of the groups -> (L2 roof measured on it, counters), from the ROOFLINE table."""
        import polars as pl

        df = K.launches(ctx)
        if df is None or "peak_l2_bw_bytes_per_s" not in df.columns:
            return {}
        src = "peak_l2_bytes_per_s_source"
        per_gpu = (
            df.filter(pl.col("peak_l2_bw_bytes_per_s") > 0)
            .group_by("gpu")
            .agg(
                pl.col("peak_l2_bw_bytes_per_s").median().alias("bw"),
                (pl.col(src).drop_nulls().first() if src in df.columns else pl.lit(None, dtype=pl.String)).alias("src"),
            )
        )
        return {r["gpu"]: (float(r["bw"]), r["src"]) for r in per_gpu.iter_rows(named=True)}
