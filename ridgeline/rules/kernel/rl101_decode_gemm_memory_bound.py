"""RL101 decode-gemm-memory-bound."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class DecodeGemmMemoryBound(Rule):
    """GEMM/GEMV-like kernels far left of the ridge: too few tokens share each weight read.

    What it finds
    -------------
    Kernel name groups that look like dense matrix products (gemm, gemv, cutlass, cublas, xmma,
    nvjet, matmul, linear, ...; see ``docs/kernel-families.md``) whose DRAM arithmetic
    intensity (total FLOPs / total DRAM bytes of the group) is below ``max_ridge_fraction`` of
    the ridge point of the GPU and precision they ran on. It estimates how many tokens share each
    weight read: a decode GEMM reads every weight once per step and does 2 FLOPs per weight per
    token, so intensity ~ 2 x tokens / bytes per weight (bf16: ~ batch; fp8: ~ 2 x batch), and
    says which batch would reach the ridge. Groups without a measured tensor FLOP counter are
    left to RL905: their intensity counts CUDA-core FLOPs only.

    Why it matters
    --------------
    Left of the ridge a GEMM is paid for in bytes, not FLOPs: the tensor cores idle while the
    weights stream in, and the time per step barely changes as the batch grows until intensity
    reaches the ridge. This is the signature of LLM decode at small batch.

    Tile padding: a GEMM whose M (tokens) is smaller than its tile computes the padded rows too
    (cuBLAS ``nvjet_tst_64x8`` pads N to 8, Triton ``fused_moe`` pads each expert's tokens to its
    block size), so the FLOPs counted overstate the tokens. When the profile's normalization
    launches (one block per token row) say fewer tokens ran, the message says so and gives the
    intensity's token count as an upper bound.

    What to do
    ----------
    Raise the number of tokens per weight read: a bigger decode batch (more concurrent
    sequences, continuous batching), speculative decoding, or fewer weight bytes (fp8 / int4
    weight quantization). KV-cache memory usually caps the batch first, so free memory (KV
    quantization, paged KV) before asking for a bigger batch. The estimate assumes the weights
    are in the GEMM's input precision; weight-only quantized kernels (w4a16) read fewer bytes
    per weight than it assumes, so they hold more tokens than estimated.

    The impact is what that remedy buys, from the what-if model (``ridgeline.analyzer.kernels.whatif``):
    the group's GPU time now minus the time the same tokens take at the batch that reaches the
    ridge (or the batch the GPU's memory holds, weights + KV cache, when that is smaller), each
    launch at its achieved fraction of its roof; the evidence states the batch and the basis.

    Words: tokens, decode and batch only where the profile looks like LLM work
    (:mod:`ridgeline.analyzer.kernels.workload`); elsewhere (a GEMM benchmark, a CUTLASS
    microbenchmark) the same arithmetic is said in GEMM words: rows per weight read (the M
    dimension), and the saving is the gap to the roof (no batch to project).

    Example
    -------
    ``sm90_xmma_gemm_bf16bf16_bf16f32`` at 7.9 FLOP/B on an H100 SXM (bf16 ridge 295 FLOP/B):
    ``arithmetic intensity 7.9 FLOP/B vs ridge 295 FLOP/B on H100 SXM (bf16/fp16): ~8 tokens
    per weight read now; the ridge needs ~295``.
    """

    code = "RL101"
    name = "decode-gemm-memory-bound"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "max_ridge_fraction": (0.25, "fires when the group's DRAM intensity is below this fraction of the ridge point"),
        "min_time_share": K.MIN_TIME_SHARE,
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        groups = K.family_groups(ctx, "gemm")
        if groups is None:
            return []
        p = self.params
        hits = groups.filter(
            K.left_of_ridge(p["max_ridge_fraction"])
            & (pl.col("tensor_measured_launches") > 0)  # without tensor counters intensity is understated: RL905
            & K.significant(p)
        )
        total = K.total_gpu_time(ctx)
        shape_tokens, shape_from = _tokens_from_launch_shapes(ctx)
        from ridgeline.analyzer.kernels.whatif import estimate_batch  # (here: the registry imports every rule for any input)

        est = estimate_batch(K.launches(ctx))
        limits: dict = {}  # GPU name -> (batch memory holds, that GPU), computed once per check
        from ridgeline.analyzer.kernels.workload import llm_evidence

        llm = llm_evidence(K.launches(ctx))
        out = []
        for row in hits.iter_rows(named=True):
            # the ridge quoted is its roof's as the Roofs list prints it (launches' own clocks move the
            # group's own); the impact is computed at that ridge, the batch the message names
            ai, prec = row["intensity_dram"], row["precision"]
            ridge = K.roof_ridge(ctx, row["ridge_flop_per_byte"], prec, row.get("tensor_path"))
            bpw = K.WEIGHT_BYTES.get(prec or "", 2.0)
            tokens, ridge_tokens = ai * bpw / 2.0, ridge * bpw / 2.0
            if not llm:
                out.append(self._generic({**row, "ridge_flop_per_byte": ridge}, tokens, ridge_tokens, bpw, total))
                continue
            impact_s, share, basis = _remedy_impact(ctx, {**row, "ridge_flop_per_byte": ridge}, est, total, limits)
            now = f"~{_count(tokens)} {'token' if _count(tokens) == '1' else 'tokens'} per weight read now"
            padded = shape_tokens is not None and shape_tokens * 1.5 < tokens
            if padded:
                # the FLOPs counted include tile padding: the launch shapes say fewer tokens ran
                now = (
                    f"at most ~{_count(tokens)} tokens per weight read by the FLOPs counted, but the launch "
                    f"shapes say ~{_count(shape_tokens)} ({shape_from}): the rest is tile padding, not work"
                )
            out.append(
                self.finding(
                    subject=row["subject"],
                    message=(
                        f"arithmetic intensity {K.fmt(ai)} FLOP/B vs ridge {K.fmt(ridge)} FLOP/B on "
                        f"{row['gpu']} ({K.precision_label(prec)}): {now}; the ridge needs ~{_count(ridge_tokens)}"
                    ),
                    remedy=(
                        f"Raise tokens per weight read toward ~{_count(ridge_tokens)} (bigger decode batch, "
                        "speculative decoding, fp8 weights); KV-cache memory usually caps the batch first, "
                        "so free it (KV quantization, paged KV) first."
                    ),
                    evidence=(
                        *K.intensity_evidence(row),
                        Evidence("weight_bytes_per_element", bpw, "B", f"derived: assumed from precision {prec}"),
                        Evidence("tokens_per_weight_read", tokens, "tokens",
                                 "derived: intensity x bytes per weight / 2" + (" (upper bound: FLOPs include tile padding)" if padded else "")),
                        *((Evidence("tokens_by_launch_shape", shape_tokens, "tokens", f"measured: {shape_from}"),) if padded else ()),
                        Evidence("ridge_tokens_per_weight_read", ridge_tokens, "tokens", "derived"),
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

    def _generic(self, row: dict, rows: float, ridge_rows: float, bpw: float, total: float | None) -> Finding:
        """The same arithmetic in GEMM words, for a profile that does not look like LLM work."""
        ai, ridge, prec = row["intensity_dram"], row["ridge_flop_per_byte"], row["precision"]
        impact_s, share, basis = K.roof_gap_impact(row, total, "more rows per weight read")
        return self.finding(
            subject=row["subject"],
            message=(
                f"arithmetic intensity {K.fmt(ai)} FLOP/B vs ridge {K.fmt(ridge)} FLOP/B on {row['gpu']} "
                f"({K.precision_label(prec)}): ~{_count(rows)} {'row' if _count(rows) == '1' else 'rows'} per weight "
                f"read (the M dimension); the ridge needs ~{_count(ridge_rows)}"
            ),
            remedy=(
                f"Raise the M dimension toward ~{_count(ridge_rows)} rows per weight read (put more rows into each "
                "GEMM call, fuse GEMMs that share a weight), or read fewer bytes per weight (fp8/int8 weights)."
            ),
            evidence=(
                *K.intensity_evidence(row),
                Evidence("weight_bytes_per_element", bpw, "B", f"derived: assumed from precision {prec}"),
                Evidence("rows_per_weight_read", rows, "rows", "derived: intensity x bytes per weight / 2"),
                Evidence("ridge_rows_per_weight_read", ridge_rows, "rows", "derived"),
                Evidence("llm_evidence", "none: GEMM wording", "text", "derived"),
                *K.time_evidence(row),
                *basis,
            ),
            impact_s=impact_s,
            impact_share=share,
            confidence=K.confidence(row["peak_flops_source"], row["peak_bw_source"]),
            subject_kind="kernel",
        )


def _remedy_impact(ctx: Context, row: dict, est, total: float | None, limits: dict):
    """What the remedy buys: the group's GPU time for the same tokens at the batch that reaches the
    ridge (or the batch memory allows, if smaller), from the what-if model; the gap to the roof
    when the batch cannot be told. Returns (impact_s, share, evidence)."""
    import math

    import polars as pl

    ai, ridge = row["intensity_dram"], row["ridge_flop_per_byte"]
    # this group's own rows by its FLOPs (a padded tile pads each GEMM to its own width)
    rows = (ai * K.WEIGHT_BYTES.get(row.get("precision") or "", 2.0) / 2.0 if ai else None) if est.padded else est.batch
    if not rows or not est.batch or not ai or not ridge:
        impact_s, share = K.impact(row, total)
        return impact_s, share, (Evidence("impact_basis", "gap to the roof (the batch could not be told)", "text",
                                          "derived"),)
    target = max(math.ceil(rows * ridge / ai), math.ceil(est.batch))
    why = "the batch at which its intensity reaches the ridge"
    if row.get("gpu") not in limits:
        found = K.catalogue_gpu(ctx, row.get("gpu"))
        from ridgeline.analyzer.kernels.whatif import memory_batch_limit

        limits[row.get("gpu")] = (memory_batch_limit(K.launches(ctx), est.batch, found)[0], found)
    limit, gpu = limits[row.get("gpu")]
    if limit is not None and limit < target:
        target, why = max(int(limit), math.ceil(est.batch)), f"the batch {gpu.name}'s memory holds (weights + KV cache)"
    df = K.launches(ctx)
    base = row["subject"].rsplit(" [", 1)[0]
    mine = df.filter(
        (pl.col("family") == "gemm") & (pl.col("bound").fill_null("") != "latency")
        & pl.col("subject").is_in([row["subject"], base])
        & (pl.col("gpu").eq_missing(row.get("gpu"))) & (pl.col("precision").eq_missing(row.get("precision")))
    )
    if not mine.height:
        impact_s, share = K.impact(row, total)
        return impact_s, share, ()
    t0 = float(mine["duration_s"].fill_null(0.0).sum())
    from ridgeline.analyzer.kernels.whatif import projected_batch_time

    t1 = projected_batch_time(mine, target, est)
    same_tokens = t1 * est.batch / target
    impact_s = max(t0 - same_tokens, 0.0)
    share = impact_s / total if total else None
    evidence = (
        Evidence("impact_basis", f"GPU time of these launches for the same tokens at batch ~{target:,} ({why}), "
                 "from the what-if model: time at that batch x batch now / that batch", "text", "derived"),
        Evidence("batch_now", est.batch, "sequences", f"derived: {est.source}"),
        Evidence("batch_for_impact", target, "sequences", "derived"),
        Evidence("time_per_token_now_s", t0 / est.batch, "s", "derived"),
        Evidence("time_per_token_at_batch_s", t1 / target, "s", "derived: what-if model"),
    )
    return impact_s, share, evidence


def _tokens_from_launch_shapes(ctx: Context) -> tuple[float | None, str | None]:
    """Tokens per step as the launch shapes give them: normalization kernels (RMSNorm, LayerNorm)
    launch one block per token row in the common LLM runtimes (vLLM, SGLang/FlashInfer), so the
    median grid of the profile's norm launches is the number of tokens; None without such launches."""
    import polars as pl

    df = K.launches(ctx)
    if df is None or "kernel_family" not in df.columns:
        return None, None
    norms = df.filter((pl.col("kernel_family") == "norm") & (pl.col("grid_blocks") > 0))
    if not norms.height:
        return None, None
    tokens = float(norms["grid_blocks"].median())
    return tokens, f"median grid of {K.plural(norms.height, 'norm launch')} = {_count(tokens)} blocks, one per token"


def _count(x: float) -> str:
    return f"{x:,.0f}" if x >= 1 else K.fmt(x)
