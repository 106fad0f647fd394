"""RL102 attention-memory-bound."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Finding, Rule

#: what the remedy is assumed to buy: an fp8 KV cache in place of a 16-bit one reads half the bytes
KV_BYTES_AFTER = 0.5


class AttentionMemoryBound(Rule):
    """Attention kernels below the ridge: bound by KV-cache bytes, which batching does not change.

    What it finds
    -------------
    Kernel name groups that look like fused attention (flash, fmha, sdpa, paged_attention,
    decode attention, flashinfer, xformers, ...; see ``docs/kernel-families.md``) whose DRAM
    arithmetic intensity is below ``max_ridge_fraction`` of the ridge point. Groups without a
    measured tensor FLOP counter are left to RL905 (their intensity would be understated).

    Why it matters
    --------------
    Decode attention reads every cached key and value of its own sequence once per generated
    token and does a handful of FLOPs per byte; unlike a weight GEMM, the KV cache is per
    sequence, so a bigger batch adds bytes in proportion to FLOPs and the intensity stays put.
    Raising the batch does not move attention toward the ridge at any batch size.

    What to do
    ----------
    Read fewer KV bytes per token: grouped-query or multi-query attention (GQA/MQA, or MLA),
    KV-cache quantization (fp8/int8), paged or flash decode kernels that read the cache once,
    shorter context (sliding window, eviction). Then check RL103 for how close the kernel runs
    to the bandwidth roof.

    The impact is what the first of these buys, from the what-if model
    (``ridgeline.analyzer.kernels.whatif``): the group's GPU time now minus its time reading half the
    KV-cache bytes (an fp8 KV cache in place of a bf16/fp16 one; the same FLOPs), each launch at
    its achieved fraction of its roof. A cache already in fp8 gains less; the evidence states the
    basis.

    Example
    -------
    ``flash_fwd_splitkv_kernel`` at 1.9 FLOP/B on an H100 SXM: ``attention intensity 1.9
    FLOP/B vs ridge 295 FLOP/B on H100 SXM (bf16/fp16): memory-bound; its intensity does not
    grow with batch``.
    """

    code = "RL102"
    name = "attention-memory-bound"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "max_ridge_fraction": (1.0, "fires when the group's DRAM intensity is below this fraction of the ridge point"),
        "min_time_share": K.MIN_TIME_SHARE,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.family_groups(ctx, "attention")
        if groups is None:
            return []
        p = self.params
        hits = groups.filter(
            K.left_of_ridge(p["max_ridge_fraction"])
            & (pl.col("tensor_measured_launches") > 0)  # without tensor counters intensity is understated: RL905
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        out = []
        for row in hits.iter_rows(named=True):
            impact_s, share, basis = K.remedy_impact(
                ctx, row, total, dram_scale=KV_BYTES_AFTER,
                basis=("GPU time of these launches reading half the KV-cache bytes (an fp8 KV cache in place of "
                       "bf16/fp16, same FLOPs), each at its achieved fraction of its roof, from the what-if model"),
            )
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"attention intensity {K.fmt(row['intensity_dram'])} FLOP/B vs ridge "
                        f"{K.fmt(row['ridge_flop_per_byte'])} FLOP/B on {row['gpu']} "
                        f"({K.precision_label(row['precision'])}): memory-bound; its intensity does not grow with batch"
                    ),
                    remedy=(
                        "Read fewer KV bytes per token (GQA/MQA, fp8 KV cache, paged/flash decode kernels, "
                        "shorter context); a bigger batch will not lift attention toward the ridge."
                    ),
                    evidence=(*K.intensity_evidence(row), *K.time_evidence(row), *basis),
                    impact_s=impact_s,
                    impact_share=share,
                    confidence=K.confidence(row["peak_flops_source"], row["peak_bw_source"]),
                    subject_kind="kernel",
                )
            )
        return out
