"""RL110 tf32-tensor-math."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class Tf32TensorMath(Rule):
    """Compute-bound tensor-core kernels in tf32, on a GPU whose bf16/fp16 tensor roof is higher.

    What it finds
    -------------
    Kernel name groups on the compute side of the ridge whose dominant precision is
    ``tf32_tensor``, on a GPU whose catalogue bf16/fp16 tensor peak is at least
    ``min_roof_gain`` times its tf32 tensor peak. Severity info: tf32 may be a deliberate
    accuracy choice.

    Why it matters
    --------------
    TF32 keeps fp32 storage and runs at half the bf16/fp16 tensor rate on Ampere and Hopper
    (H100 SXM: 495 vs 989 TFLOP/s dense), so a compute-bound kernel in tf32 has a roof half as
    high as it could. The impact is what running in bf16 buys, from the what-if model
    (``ridgeline.analyzer.kernels.whatif``): the group's GPU time now minus its time with the compute peak
    x bf16 / tf32 (datasheet ratio, same clocks policy) and half the DRAM bytes (2-byte inputs in
    place of fp32's 4), each launch at its achieved fraction of its roof.

    What to do
    ----------
    Run this math in bf16/fp16 where accuracy allows: autocast (``torch.autocast("cuda",
    dtype=torch.bfloat16)``), a bf16 model, or mixed precision in the training loop. Keep
    tf32 only where fp32 range and mantissa matter.

    Example
    -------
    An fp32 model with TF32 allowed on an H100 SXM: ``tf32 tensor math at intensity 400 FLOP/B
    >= ridge 148 FLOP/B: H100 SXM's bf16/fp16 tensor roof is 989 TFLOP/s, 2x the tf32 494
    TFLOP/s``.
    """

    code = "RL110"
    name = "tf32-tensor-math"
    severity = "info"
    family = "kernel"
    thresholds = {
        "min_roof_gain": (1.5, "fires when the bf16/fp16 tensor peak is at least this multiple of the tf32 peak"),
        "min_time_share": K.MIN_TIME_SHARE,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.kernel_groups(ctx, rows=pl.col("precision") == "tf32_tensor")
        if groups is None:
            return []
        p = self.params
        c = pl.col
        hits = groups.filter(
            c("intensity_dram").is_not_null()
            & (c("ridge_flop_per_byte") > 0)
            & (c("intensity_dram") >= c("ridge_flop_per_byte"))
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in hits.iter_rows(named=True):
            gpu = K.catalogue_gpu(ctx, row["gpu"])
            bf16 = K.catalogue_peak_of(gpu, "fp16_tensor")
            tf32 = K.catalogue_peak_of(gpu, "tf32_tensor")
            if not bf16 or not tf32 or bf16 < p["min_roof_gain"] * tf32:
                continue
            scale = K.WEIGHT_BYTES["fp16_tensor"] / K.WEIGHT_BYTES["tf32_tensor"]
            impact_s, share, basis = K.remedy_impact(
                ctx, row, total, dram_scale=scale, peak_scale=bf16 / tf32,
                basis=(f"GPU time of these launches in bf16: compute peak x {K.fmt(bf16 / tf32)} (bf16 / tf32 "
                       f"datasheet peaks), DRAM bytes x {K.fmt(scale)} (2-byte inputs for 4), each at its achieved "
                       "fraction of its roof, from the what-if model"),
            )
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"tf32 tensor math at intensity {K.fmt(row['intensity_dram'])} FLOP/B >= ridge "
                        f"{K.fmt(row['ridge_flop_per_byte'])} FLOP/B: {row['gpu']}'s bf16/fp16 tensor roof is "
                        f"{K.fmt_si(bf16, 'FLOP/s')}, {K.fmt(bf16 / tf32)}x the tf32 {K.fmt_si(tf32, 'FLOP/s')}"
                    ),
                    remedy="Run this math in bf16/fp16 where accuracy allows (autocast, a bf16 model); keep tf32 where fp32 range matters.",
                    evidence=(
                        *K.intensity_evidence(row),
                        Evidence("peak_flops_fp16_tensor", bf16, "FLOP/s", "catalogue"),
                        Evidence("peak_flops_tf32_tensor", tf32, "FLOP/s", "catalogue"),
                        *K.time_evidence(row),
                        *basis,
                    ),
                    impact_s=impact_s,
                    impact_share=share,
                    confidence="catalogue",
                    subject_kind="kernel",
                )
            )
        return out
