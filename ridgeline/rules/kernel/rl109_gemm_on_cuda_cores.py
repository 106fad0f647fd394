"""RL109 gemm-on-cuda-cores."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class GemmOnCudaCores(Rule):
    """GEMM-like kernels not on the compute side whose math runs on CUDA cores, not tensor cores.

    What it finds
    -------------
    GEMM-like kernel name groups (see ``docs/kernel-families.md``) with at least
    ``min_cuda_core_share`` of their FLOPs on CUDA cores (fp32 or fp16, among launches where the
    tensor counter was measured), below the ridge (compute-bound ones are RL104's), on a GPU
    whose catalogue entry has the matching tensor-core path (tf32, bf16/fp16).

    Why it matters
    --------------
    A matrix product in fp32 on CUDA cores usually means TF32 is disabled or the model runs in
    full precision: the kernel reads 4-byte weights (twice the bytes of bf16, four times fp8),
    which is what a memory-bound GEMM pays for, and it cannot use the tensor cores once the
    batch grows.

    What to do
    ----------
    Run the GEMM on tensor cores with narrower inputs: bf16/fp16 (autocast or a bf16 model), fp8
    weights where accuracy allows, or at least TF32 (``torch.set_float32_matmul_precision("high")``).
    Narrower weights also cut the bytes this kernel reads.

    The impact is what the first of these buys, from the what-if model
    (``ridgeline.analyzer.kernels.whatif``): the group's GPU time now minus its time with bf16 inputs on
    bf16/fp16 tensor cores (the DRAM bytes x 2 / bytes per element now, the compute peak x the
    datasheet ratio of the bf16 tensor peak to this precision's), each launch at its achieved
    fraction of its roof. A GPU without bf16/fp16 tensor cores is judged on the tensor path the
    message names, same bytes.

    Example
    -------
    ``gemv2T_kernel_val<float>`` in an fp32 decode on an H100 SXM: ``GEMM-like kernel with 100% of
    FLOPs on CUDA cores (fp32) at intensity 0.5 FLOP/B; H100 SXM has tf32 tensor cores at
    494 TFLOP/s``.
    """

    code = "RL109"
    name = "gemm-on-cuda-cores"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "min_cuda_core_share": (0.9, "fires when at least this share of the group's FLOPs ran on CUDA cores"),
        "min_time_share": K.MIN_TIME_SHARE,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.family_groups(ctx, "gemm")
        if groups is None:
            return []
        p = self.params
        c = pl.col
        hits = groups.with_columns(cuda_share=K.cuda_core_share()).filter(
            K.left_of_ridge()
            & c("precision").is_in(["fp32", "fp16"])
            & (c("cuda_share") >= p["min_cuda_core_share"])
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in hits.iter_rows(named=True):
            prec = row["precision"]
            tensor_prec = K.TENSOR_EQUIVALENT[prec]
            tensor_peak = K.catalogue_peak_of(K.catalogue_gpu(ctx, row["gpu"]), tensor_prec)
            if not tensor_peak:
                continue
            gpu = K.catalogue_gpu(ctx, row["gpu"])
            now_peak = K.catalogue_peak_of(gpu, prec) or row["peak_flops_per_s"]
            bf16 = K.catalogue_peak_of(gpu, "fp16_tensor")
            if bf16:
                scale = K.WEIGHT_BYTES["fp16_tensor"] / K.WEIGHT_BYTES[prec]
                gain = bf16 / now_peak
                how = (f"bf16 inputs on bf16/fp16 tensor cores (DRAM bytes x {K.fmt(scale)}, compute peak "
                       f"x {K.fmt(gain)}, the datasheet ratio)")
            else:
                scale, gain = 1.0, tensor_peak / now_peak
                how = (f"its math on {K.precision_label(tensor_prec)} tensor cores (compute peak x {K.fmt(gain)}, "
                       "the datasheet ratio; same bytes)")
            impact_s, share, basis = K.remedy_impact(
                ctx, row, total, dram_scale=scale, peak_scale=gain,
                basis=f"GPU time of these launches with {how}, each at its achieved fraction of its roof, "
                      "from the what-if model",
            )
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"GEMM-like kernel with {K.fmt_pct(row['cuda_share'])} of FLOPs on CUDA cores ({prec}) at "
                        f"intensity {K.fmt(row['intensity_dram'])} FLOP/B; {row['gpu']} has "
                        f"{K.precision_label(tensor_prec)} tensor cores at {K.fmt_si(tensor_peak, 'FLOP/s')}"
                    ),
                    remedy=(
                        "Run the GEMM on tensor cores with narrower inputs (bf16/fp16, fp8 weights, or at least TF32); "
                        "narrower weights also cut the bytes it reads."
                    ),
                    evidence=(
                        Evidence("flops_cuda_cores", row["flops_cuda"], "FLOP", K.measured(K.flops_recipe(row))),
                        Evidence("flops_tensor", row["flops_tensor"], "FLOP", K.measured(row["flops_source"])),
                        Evidence("cuda_core_share", row["cuda_share"], "ratio", "derived"),
                        Evidence(f"peak_flops_{tensor_prec}", tensor_peak, "FLOP/s", "catalogue"),
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
