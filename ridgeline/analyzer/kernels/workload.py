"""Does a profile look like LLM work? Decided from what its kernels ARE, never assumed.

Advice in LLM words (tokens, batch, prefill/decode, "per token", KV cache) only helps when the
profile is of a language model; on a plain SGEMM benchmark or a CUTLASS microbenchmark it
misleads ("prefill-like", tokens/s). :func:`llm_evidence` says whether a ROOFLINE table shows
LLM work and why, from the kernel families and libraries of :mod:`ridgeline.analyzer.kernels.families`
(the same table every view reads):

* a kernel of an LLM-only family: ``attention`` (FlashAttention, FlashInfer, paged attention,
  cuDNN SDPA...), ``attention_aux`` (split-KV combine, KV-cache writes), ``rope``,
  ``moe_routing`` (top-k gating, expert sort) or ``sampling`` (token sampling);
* a kernel from an LLM library: vLLM, SGLang, FlashInfer, FlashAttention-2/3, FlashMLA,
  TensorRT-LLM;
* an RMSNorm kernel (the norm of every current decoder LLM; LayerNorm alone is not enough).

A GEMM, a grouped GEMM, an element-wise kernel or a reduction alone is not evidence: they are
what every other workload runs too. Timelines are not read here; a profile of GEMMs alone,
even if they came from an LLM, gets generic GEMM wording ("rows per weight read"), which is
still right for it. Rules and the what-if call :func:`looks_like_llm`.
"""

from __future__ import annotations

from typing import Any

#: families only language models run
LLM_FAMILIES = ("attention", "attention_aux", "rope", "moe_routing", "sampling")
#: libraries written for language models
LLM_LIBRARIES = ("vLLM", "SGLang", "FlashInfer", "FlashAttention-2", "FlashAttention-3", "FlashMLA", "TensorRT-LLM")
#: name fragment of the RMSNorm kernels (matched case-insensitively on the full name)
RMSNORM = "rmsnorm"


def llm_evidence(df: Any) -> str | None:
    """Why the launches in ``df`` (ROOFLINE table, or any table with ``kernel_family``,
    ``kernel_library`` and ``kernel_name``) look like LLM work, or None when they do not."""
    import polars as pl

    if df is None or getattr(df, "height", 0) == 0:
        return None
    cols = set(df.columns)
    checks = []
    if "kernel_family" in cols:
        checks.append(("family", pl.col("kernel_family").is_in(list(LLM_FAMILIES))))
    if "kernel_library" in cols:
        checks.append(("library", pl.col("kernel_library").is_in(list(LLM_LIBRARIES))))
    if "kernel_name" in cols:
        checks.append(("rmsnorm", pl.col("kernel_name").str.to_lowercase().str.contains(RMSNORM, literal=True)))
    if not checks:
        return None
    for what, cond in checks:
        hit = df.filter(cond.fill_null(False))
        if hit.height:
            row = hit.row(0, named=True)
            who = row.get("kernel_label") or row.get("short_name") or row.get("kernel_name")
            if what == "family":
                return f"{row['kernel_family']} kernel {who}"
            if what == "library":
                return f"{row['kernel_library']} kernel {who}"
            return f"RMSNorm kernel {who}"
    return None


def looks_like_llm(df: Any) -> bool:
    """True when :func:`llm_evidence` finds LLM kernels in ``df``."""
    return llm_evidence(df) is not None
