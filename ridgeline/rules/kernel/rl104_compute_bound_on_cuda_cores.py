"""RL104 compute-bound-on-cuda-cores."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule

REMEDIES = {
    "fp32": "Move the math to tensor cores: allow TF32 (torch.set_float32_matmul_precision('high')) or run it in bf16/fp16/fp8.",
    "fp16": "Move the math to tensor cores: use a bf16/fp16 tensor-core kernel (cuBLAS/cuDNN/CUTLASS, torch ops) instead of CUDA-core arithmetic.",
    "fp64": "Move the math to fp64 tensor cores (DMMA): call cuBLAS/cuSOLVER dgemm-based routines instead of hand-written fp64 loops.",
}


class ComputeBoundOnCudaCores(Rule):
    """Compute-bound kernels doing their math on CUDA cores of a GPU that has tensor cores.

    What it finds
    -------------
    Kernel name groups on the compute side of the ridge (group DRAM intensity at or above the
    ridge) whose FLOPs are at least ``min_cuda_core_share`` non-tensor (fp32, fp16 or fp64 on
    CUDA cores, among launches where the tensor counter was measured), on a GPU whose catalogue
    entry has a tensor-core path for the same math (tf32 for fp32, bf16/fp16 for fp16, fp64
    tensor for fp64).

    Why it matters
    --------------
    A compute-bound kernel's roof is its precision's peak. On Hopper the fp32 CUDA-core peak is
    67 TFLOP/s while tf32 tensor cores give 495 and bf16 989: the same kernel on tensor cores
    has a roof 7 to 15 times higher. The impact is what moving to that tensor path buys, from the
    what-if model (``ridgeline.analyzer.kernels.whatif``): the group's GPU time now minus its time with the
    compute peak raised by the ratio of the two datasheet peaks (tensor / CUDA-core, same clocks
    policy) and the same bytes, each launch at its achieved fraction of its roof.

    What to do
    ----------
    Move the math to tensor cores: allow TF32 for fp32 matmuls and convolutions
    (``torch.set_float32_matmul_precision("high")``, ``torch.backends.cudnn.allow_tf32``), run
    the model in bf16/fp16 (autocast) or fp8, or replace a hand-written loop with a
    cuBLAS/CUTLASS call. fp64 codes on Hopper/Ampere data-centre parts can use DMMA through
    cuBLAS.

    Example
    -------
    An fp32 ``sgemm``-style custom kernel at 45 TFLOP/s on an H100 SXM: ``100% of FLOPs on CUDA
    cores (fp32) at intensity 400 FLOP/B >= ridge 20 FLOP/B: H100 SXM has tf32 tensor cores at
    494 TFLOP/s vs the 66.9 TFLOP/s fp32 roof here (7.4x, the datasheet ratio, at the same clock)``.
    A roof ncu measured at a lower clock is set against the tensor roof at that clock, never the
    datasheet's boost-clock peak.
    """

    code = "RL104"
    name = "compute-bound-on-cuda-cores"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "min_cuda_core_share": (0.9, "fires when at least this share of the group's FLOPs ran on CUDA cores"),
        "min_time_share": K.MIN_TIME_SHARE,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.kernel_groups(ctx)
        if groups is None:
            return []
        p = self.params
        c = pl.col
        cuda_share = K.cuda_core_share()
        hits = groups.with_columns(cuda_share=cuda_share).filter(
            c("intensity_dram").is_not_null()
            & (c("ridge_flop_per_byte") > 0)
            & (c("intensity_dram") >= c("ridge_flop_per_byte"))
            & c("precision").is_in(list(K.TENSOR_EQUIVALENT))
            & (c("cuda_share") >= p["min_cuda_core_share"])
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in hits.iter_rows(named=True):
            prec = row["precision"]
            tensor_prec = K.TENSOR_EQUIVALENT[prec]
            gpu = K.catalogue_gpu(ctx, row["gpu"])
            tensor_peak = K.catalogue_peak_of(gpu, tensor_prec)
            if not tensor_peak:
                continue
            cuda_peak = K.catalogue_peak_of(gpu, prec)
            gain = tensor_peak / (cuda_peak or row["peak_flops_per_s"])
            # like for like: the roof here may be measured at the profiled clock, the datasheet's
            # tensor peak is at boost; the tensor roof at this clock is the roof here x their ratio
            here = row["peak_flops_per_s"]
            tensor_here = here * gain if cuda_peak and here else tensor_peak
            if tensor_here <= (here or 0):
                continue
            impact_s, share, basis = K.remedy_impact(
                ctx, row, total, peak_scale=gain,
                basis=(f"GPU time of these launches with their math on {K.precision_label(tensor_prec)} tensor cores "
                       f"(compute peak x {K.fmt(gain)}, the datasheet ratio; same bytes), each at its achieved "
                       "fraction of its roof, from the what-if model"),
            )
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"{K.fmt_pct(row['cuda_share'])} of FLOPs on CUDA cores ({prec}) at intensity "
                        f"{K.fmt(row['intensity_dram'])} FLOP/B >= ridge {K.fmt(K.roof_ridge(ctx, row['ridge_flop_per_byte'], row['precision'], row.get('tensor_path')))} FLOP/B: "
                        f"{row['gpu']} has {K.precision_label(tensor_prec)} tensor cores at "
                        f"{K.fmt_si(tensor_here, 'FLOP/s')} vs the {K.fmt_si(here, 'FLOP/s')} {prec} roof here"
                        + (f" ({K.fmt(gain)}x, the datasheet ratio, at the same clock)" if cuda_peak and here else "")
                    ),
                    remedy=REMEDIES[prec],
                    evidence=(
                        Evidence("flops_cuda_cores", row["flops_cuda"], "FLOP", K.measured(K.flops_recipe(row))),
                        Evidence("flops_tensor", row["flops_tensor"], "FLOP", K.measured(row["flops_source"])),
                        Evidence("cuda_core_share", row["cuda_share"], "ratio", "derived"),
                        *K.intensity_evidence(row),
                        Evidence(f"peak_flops_{tensor_prec}", tensor_peak, "FLOP/s", "catalogue"),
                        Evidence(f"peak_flops_{tensor_prec}_at_roof_clock", tensor_here, "FLOP/s",
                                 "derived: the roof here x the datasheet ratio"),
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
