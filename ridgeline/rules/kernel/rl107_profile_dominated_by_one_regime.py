"""RL107 profile-dominated-by-one-regime."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class ProfileDominatedByOneRegime(Rule):
    """The profile's GEMM time is almost all one regime: prefill-like or decode-like, not both.

    What it finds
    -------------
    Among GEMM-like launches the kernel table gives a bound, the share of their time that is
    compute-bound (high intensity: prefill, training, large batches) or memory-bound
    (GEMV-like: decode at small batch); launch- and stall-bound GEMMs count in the whole and are
    named with their share. The ridge quoted is the ridge of each roof the launches sit under, as
    the Roofs list prints it (``ridges 137 and 216 FLOP/B`` for two tensor paths), never a blend
    of them. When one side holds at least ``dominance_share`` of the
    GEMM time, and GEMMs hold at least ``min_gemm_time_share`` of all GPU time, it says which
    regime the profile captured. Compute-bound GEMMs next to memory-bound attention (at least
    half of the attention time) read as large-batch decode rather than prefill: decode GEMMs
    cross the ridge once the batch does, decode attention never does. Severity info: this is a statement about the evidence, not a
    defect.

    The prefill/decode words are used only when the profile looks like LLM work
    (:mod:`ridgeline.analyzer.kernels.workload`: attention, RoPE, MoE routing, sampling or RMSNorm kernels,
    or kernels from vLLM, SGLang, FlashInfer, FlashAttention, FlashMLA, TensorRT-LLM). A plain
    GEMM benchmark is told the same fact in GEMM words: large shapes (many rows per weight
    read) on the compute side, GEMV-like shapes on the memory side.

    Why it matters
    --------------
    Inference has two regimes with opposite walls: prefill GEMMs sit right of the ridge and
    want compute, decode GEMMs sit far left and want bytes. A profile of one says little about
    the other; tuning decode from a prefill-dominated capture (or the reverse) optimizes the
    wrong wall.

    What to do
    ----------
    Check that the capture matches the phase you are optimizing; profile prefill and decode
    separately (NVTX ranges with ``ncu --nvtx --nvtx-include``, or ``--launch-skip`` /
    ``--launch-count`` around the phase) and read each one's findings on its own.

    Example
    -------
    A capture of the first forward pass of a server: ``92% of GEMM time is compute-bound
    (intensity 410 FLOP/B >= ridge 295 FLOP/B): this profile shows prefill-like work; decode
    behaves differently``.
    """

    code = "RL107"
    name = "profile-dominated-by-one-regime"
    severity = "info"
    family = "kernel"
    thresholds = {
        "dominance_share": (0.8, "fires when one regime holds at least this share of GEMM time"),
        "min_gemm_time_share": (0.1, "fires only when GEMM-like kernels hold at least this share of GPU time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        total = K.total_gpu_time(ctx)
        if df is None or not total:
            return []
        # a launch without a precision has no compute roof and so no ridge: it cannot be placed on
        # either side of one and is left out (issue 20: a GEMV with no FP counters)
        from ridgeline.analyzer.kernels.latency import view_bound_expr

        g = df.filter((pl.col("family") == "gemm") & pl.col("bound").is_in(["memory", "compute"])
                      & pl.col("ridge_flop_per_byte").is_not_null())
        if g.height == 0:
            return []
        # the shares quoted are of all GEMM time the kernel table gives a bound, launch- and
        # stall-bound GEMMs included (issue 37: "100% memory-bound" beside a launch-bound GEMM)
        latency = df.filter((pl.col("family") == "gemm") & (pl.col("bound") == "latency"))
        if "latency_kind" not in latency.columns:
            latency = latency.with_columns(pl.lit(None, dtype=pl.String).alias("latency_kind"))
        lat_by = {b: float(t or 0.0) for b, t in latency.group_by(view_bound_expr().alias("b"))
                  .agg(pl.col("duration_s").sum()).sort("b").iter_rows()}
        gemm_time = float(g["duration_s"].sum()) + sum(lat_by.values())
        if not gemm_time or gemm_time / total < self.params["min_gemm_time_share"]:
            return []
        comp = float(g.filter(pl.col("bound") == "compute")["duration_s"].sum()) / gemm_time
        mem = float(g.filter(pl.col("bound") == "memory")["duration_s"].sum()) / gemm_time
        rest = "".join(f", {K.fmt_pct(t / gemm_time)} {b}-bound" for b, t in lat_by.items() if t)
        dom = self.params["dominance_share"]
        att = df.filter((pl.col("family") == "attention") & pl.col("bound").is_in(["memory", "compute"]))
        att_time = float(att["duration_s"].sum() or 0.0)
        att_mem = float(att.filter(pl.col("bound") == "memory")["duration_s"].sum() or 0.0) / att_time if att_time else None
        from ridgeline.analyzer.kernels.workload import llm_evidence

        llm = llm_evidence(df)
        note = ""
        if comp >= dom:
            side, share, rel = "compute-bound", comp, ">="
            sub = g.filter(pl.col("bound") == "compute")
            if att_mem is not None and att_mem >= 0.5:
                # decode at a large batch: GEMMs cross the ridge, attention never does
                regime, other = "large-batch decode", "prefill"
                note = f" while {K.fmt_pct(att_mem)} of attention time is memory-bound"
            else:
                regime, other = "prefill-like", "decode"
        elif mem >= dom:
            side, share, regime, other, rel = "memory-bound", mem, "decode-like", "prefill", "<"
            sub = g.filter(pl.col("bound") == "memory")
        else:
            return []
        if not llm:  # the same fact in GEMM words: no prefill, decode or batch in a GEMM benchmark
            regime, other = (("large-shape GEMM (many rows per weight read)", "GEMV-like, few-row shapes")
                             if side == "compute-bound" else
                             ("GEMV-like (few rows per weight read)", "large-shape GEMMs"))
            note = ""
        verb = "behaves" if llm else "behave"
        both = sub.filter(pl.col("flops").is_not_null() & pl.col("dram_bytes").is_not_null())
        bytes_ = float(both["dram_bytes"].sum())
        ai = float(both["flops"].sum()) / bytes_ if bytes_ else None
        # each launch's roof as the Roofs list prints it (its own clock moves its own ridge)
        keys = [c for c in ("ridge_flop_per_byte", "precision", "tensor_path") if c in sub.columns]
        ridges = sorted({x for x in (K.roof_ridge(ctx, r.get("ridge_flop_per_byte"), r.get("precision"), r.get("tensor_path"))
                                     for r in sub.select(keys).unique().iter_rows(named=True)) if x})
        # the evidence: the ridge the comparison holds against for every launch (the lowest one for
        # "<", the highest for ">="), exact; the message quotes each roof's ridge as the Roofs list does
        col = sub["ridge_flop_per_byte"]
        ridge = col.min() if rel == "<" else col.max()
        ai_s, _ = K.fmt_vs(ai, ridge)
        return [
            self.finding(
                subject="profile",
                message=(
                    f"{K.fmt_pct(share)} of GEMM time is {side}{rest} (intensity {ai_s} FLOP/B {rel} "
                    f"{K.ridges_text(ridges)}){note}: this profile shows {regime} work; {other} {verb} differently"
                ),
                remedy=(
                    f"Check the capture matches the phase you are optimizing; profile {other} separately "
                    "(ncu --nvtx --nvtx-include, or --launch-skip/--launch-count around the phase)."
                    if llm else
                    f"Check the capture covers the shapes you care about; {other} sit on the other side of the "
                    "ridge and need their own profile."
                ),
                evidence=(
                    Evidence("gemm_time_s", gemm_time, "s", "measured"),
                    Evidence("gemm_time_share", gemm_time / total, "ratio", "derived"),
                    Evidence(f"{side.replace('-', '_')}_gemm_share", share, "ratio", "derived"),
                    Evidence("intensity_dram", ai, "FLOP/B", "derived"),
                    Evidence("ridge_flop_per_byte", ridge, "FLOP/B", "derived"),
                    Evidence("attention_memory_bound_share", att_mem, "ratio", "derived"),
                    Evidence("llm_evidence", llm or "none: GEMM wording", "text", "derived"),
                ),
                impact_s=None,
                impact_share=None,
                confidence="measured",
                subject_kind="profile",
            )
        ]
