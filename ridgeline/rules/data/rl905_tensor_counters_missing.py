"""RL905 tensor-counters-missing."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class TensorCountersMissing(Rule):
    """GEMM- or attention-like kernels whose tensor FLOP counters were not collected: intensity understated.

    What it finds
    -------------
    GEMM-like and attention-like launches (see ``docs/kernel-families.md``) whose
    ``flops_tensor`` is null while CUDA-core FLOP counters were collected (and the tensor pipe was
    not measured idle, ``tensor_pipe_active_ratio`` 0), holding at least ``min_time_share`` of
    GPU time. Such launches are placed on the roofline, but with their
    CUDA-core FLOPs only.

    Why it matters
    --------------
    Matrix products and fused attention do nearly all their math on tensor cores. Without the
    tensor counters their FLOPs, intensity and fraction of roof are understated by orders of
    magnitude: a prefill GEMM looks memory-bound and a decode GEMM looks hopeless. RL101 and
    RL102 skip these kernels rather than give advice from a wrong intensity; the other rules
    read the understated figures. Missing is not zero.

    What to do
    ----------
    Re-profile with the tensor roofline section: ``ncu --set roofline`` (it includes
    ``SpeedOfLight_HierarchicalTensorRooflineChart``), or add your architecture's tensor
    operation counters to the ``--metrics`` list (see ``ridgeline rules RL901`` and the
    recommended capture in ``ridgeline --help``).

    Example
    -------
    A ``--metrics`` capture listing only the fadd/fmul/ffma counters: ``tensor FLOP counters
    absent for 96 launches of 6 GEMM/attention-like kernels holding 71% of GPU time (>= 5%):
    their intensity counts CUDA-core FLOPs only``.
    """

    code = "RL905"
    name = "tensor-counters-missing"
    severity = "warning"
    family = "data"
    thresholds = {
        "min_time_share": (0.05, "fires when the affected launches hold at least this share of GPU time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        total = K.total_gpu_time(ctx)
        if df is None or not total:
            return []
        c = pl.col
        cuda = c("flops_fp32").is_not_null() | c("flops_fp16").is_not_null() | c("flops_fp64").is_not_null()
        # a tensor pipe measured idle: no tensor work went uncounted
        idle = (c("tensor_pipe_active_ratio") == 0).fill_null(False) if "tensor_pipe_active_ratio" in df.columns else pl.lit(False)
        bad = df.filter(c("family").is_in(["gemm", "attention"]) & c("flops_tensor").is_null() & cuda & ~idle)
        if bad.height == 0:
            return []
        share = float(bad["duration_s"].sum() or 0.0) / total
        if share < self.params["min_time_share"]:
            return []
        got, limit = K.fmt_pct_vs(share, self.params["min_time_share"])
        names = bad.group_by("subject").agg(t=c("duration_s").sum()).sort("t", descending=True, nulls_last=True)
        return [
            self.finding(
                subject="profile",
                message=(
                    f"tensor FLOP counters absent for {K.plural(bad.height, 'launch')} of "
                    f"{names.height:,} GEMM/attention-like kernel{'s' if names.height != 1 else ''} holding "
                    f"{got} of GPU time (>= {limit}): their intensity counts CUDA-core FLOPs only"
                ),
                remedy="Re-profile with ncu --set roofline (tensor roofline section) or add the tensor operation counters to --metrics.",
                evidence=(
                    Evidence("launches_without_tensor_counters", bad.height, "launches", "measured: absent from the export"),
                    Evidence("share_without_tensor_counters", share, "ratio", "derived"),
                    Evidence("largest_affected_kernel", names["subject"][0], "name", "measured"),
                ),
                impact_s=None,
                impact_share=None,
                confidence="measured",
                subject_kind="profile",
            )
        ]
