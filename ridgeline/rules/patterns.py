"""Kernel-name patterns shared by the kernel rules: which launches are GEMM-like, attention-like.

Names are matched case-insensitively against the full kernel name (falling back to the short
name). Attention wins over GEMM: fused attention kernels are often built from CUTLASS/CuTe
GEMM templates (``fmha_cutlassF_...``, ``flash_fwd_kernel<...cute::...>``) and their intensity
behaves like attention (it does not grow with batch), not like a weight GEMM.

The patterns are data: extend the tuples, keep one alternative per line, and add a case to
``tests/test_rules_patterns.py``.
"""

from __future__ import annotations

import re

# Fused attention kernels: FlashAttention 1/2/3, FlashInfer, FlashMLA, xFormers, cuDNN SDPA,
# PyTorch's mem-efficient attention (fmha), vLLM / TensorRT-LLM paged and decode attention.
ATTENTION_PATTERNS: tuple[str, ...] = (
    r"flash",  # flash_fwd_kernel, flash_fwd_splitkv_kernel, flashinfer::..., flash_mla
    r"fmha",  # fmha_cutlassF_*, fmha_v2_*, xformers fmha
    r"sdpa",  # cudnn_generated_fort_native_sdpa_*
    r"paged_?attention",  # vllm::paged_attention_v1_kernel
    r"attention",  # decode_attention, masked_multihead_attention (TensorRT-LLM)
    r"attn",  # attn_fwd (Triton), mla_attn
    r"xformers",
    r"(^|[^a-z])mha([^a-z]|$)",  # mha_fwd, xqa mha kernels
    r"batch(decode|prefill)with",  # FlashInfer BatchDecodeWithPagedKVCacheKernel
    r"single(decode|prefill)with",  # FlashInfer SingleDecodeWithKVCacheKernel
    r"cached_kv",  # single_query_cached_kv_attention (vLLM, early)
)

# Attention-adjacent kernels that never touch the KV cache: split-KV / split-K combine steps
# and FlashInfer's state merges read the partial outputs (O, LSE) of the attention kernel, so
# KV-cache remedies do not apply to them; they are judged as ordinary kernels.
ATTENTION_EXCLUDE: tuple[str, ...] = (
    r"combine",  # flash_fwd_splitkv_combine_kernel, flash_fwd_splitkv_mla_combine_kernel
    r"merge_?states",  # flashinfer MergeStates, VariableLengthMergeStates
)

# Dense matrix products: cuBLAS/cuBLASLt (sm90_xmma_gemm_*, nvjet_*, ampere_*gemm*), CUTLASS,
# Triton matmul, Marlin / GEMV kernels for weight-only quantization, PyTorch linear layers.
GEMM_PATTERNS: tuple[str, ...] = (
    r"gemm",  # sgemm, hgemm, ampere_bf16_s16816gemm_*, sm90_xmma_gemm_*, cutlass gemm
    r"gemv",  # gemv2T_kernel, gemvx
    r"cutlass",  # cutlass::Kernel<cutlass_80_tensorop_...>
    r"cublas",  # cublasLt::splitKreduce is not matched: see GEMM_EXCLUDE
    r"xmma",  # sm80_xmma_*, sm90_xmma_*
    r"matmul",  # matmul_kernel (Triton), cuda matmul
    r"nvjet",  # Hopper/Blackwell cuBLAS kernels: nvjet_hsh_*, nvjet_tst_*
    r"wgmma",
    r"marlin",  # Marlin w4a16 GEMM
    r"(^|[^a-z])linear([^a-z0-9]|$)",  # fused linear layers, not upsample_linear1d
    r"(^|[^a-z])b?mm([^a-z0-9]|$)",  # bmm / mm kernels
)

# GEMM-adjacent kernels that are not matrix products (split-K reductions, layout changes).
GEMM_EXCLUDE: tuple[str, ...] = (
    r"splitkreduce",
    r"split_k_reduce",
    r"reduce_kernel",
)

_ATTN = "(?i)" + "|".join(f"(?:{p})" for p in ATTENTION_PATTERNS)
_GEMM = "(?i)" + "|".join(f"(?:{p})" for p in GEMM_PATTERNS)
_GEMM_EXCL = "(?i)" + "|".join(f"(?:{p})" for p in GEMM_EXCLUDE)
_ATTN_EXCL = "(?i)" + "|".join(f"(?:{p})" for p in ATTENTION_EXCLUDE)

_ATTN_RE = re.compile(_ATTN)
_GEMM_RE = re.compile(_GEMM)
_GEMM_EXCL_RE = re.compile(_GEMM_EXCL)
_ATTN_EXCL_RE = re.compile(_ATTN_EXCL)


def kernel_family(name: str | None) -> str | None:
    """``"attention"``, ``"gemm"`` or None for one kernel name (Python twin of :func:`family_expr`)."""
    if not name:
        return None
    if _ATTN_EXCL_RE.search(name):
        return None
    if _ATTN_RE.search(name):
        return "attention"
    if _GEMM_RE.search(name) and not _GEMM_EXCL_RE.search(name):
        return "gemm"
    return None


def family_expr():
    """A polars expression: ``"attention"``, ``"gemm"`` or null per row of a KERNEL/ROOFLINE table."""
    import polars as pl

    name = pl.coalesce(pl.col("kernel_name"), pl.col("short_name")).fill_null("")
    return (
        pl.when(name.str.contains(_ATTN_EXCL))
        .then(pl.lit(None, dtype=pl.String))
        .when(name.str.contains(_ATTN))
        .then(pl.lit("attention"))
        .when(name.str.contains(_GEMM) & ~name.str.contains(_GEMM_EXCL))
        .then(pl.lit("gemm"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
