"""RL106 many-short-kernels."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class ManyShortKernels(Rule):
    """Many very short kernels together holding a large share of GPU time: launch-overhead territory.

    What it finds
    -------------
    Launches shorter than ``max_kernel_duration_s`` when there are at least ``min_launches`` of
    them and together they hold at least ``min_time_share`` of the profiled GPU time. One
    finding for the profile, naming the most frequent short kernel.

    Why it matters
    --------------
    A kernel launch costs a few microseconds of CPU and driver time; kernels that run for less
    than that leave the GPU waiting for the next launch, and no kernel tuning helps. ncu
    serializes kernels and does not record the gaps between them, so the real cost is larger
    than the time shown here: look at a timeline (Nsight Systems) or GPU-Util vs SM activity in
    telemetry. The impact is the usual roof-based bound over these launches; the launch gaps
    they cause come on top.

    What to do
    ----------
    Launch fewer kernels: fuse elementwise and normalization chains (``torch.compile``, fused
    ops such as fused RMSNorm/rotary/SwiGLU), batch small operations, and capture the
    steady-state step in a CUDA graph (``torch.cuda.graphs``, vLLM/TensorRT-LLM graph mode) so
    launch overhead stops gating the GPU.

    Example
    -------
    A decode step with 1,800 launches of 3 us elementwise kernels: ``1,800 launches shorter than
    10 us hold 35% of GPU time (>= 20%); median 3 us; most frequent: vectorized_elementwise_kernel``.
    """

    code = "RL106"
    name = "many-short-kernels"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "max_kernel_duration_s": (10e-6, "a launch shorter than this (seconds) counts as short"),
        "min_launches": (100, "fires only with at least this many short launches"),
        "min_time_share": (0.2, "fires when the short launches hold at least this share of GPU time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        if df is None:
            return []
        p = self.params
        total = K.total_gpu_time(ctx)
        short = df.filter(pl.col("duration_s") < p["max_kernel_duration_s"])
        if short.height < p["min_launches"] or not total:
            return []
        short_time = float(short["duration_s"].sum())
        share = short_time / total
        if share < p["min_time_share"]:
            return []
        top = (
            short.group_by("subject")
            .agg(n=pl.len(), t=pl.col("duration_s").sum())
            .sort(["n", "t", "subject"], descending=[True, True, False])
        )
        known = short.filter(pl.col("time_to_roof_s").is_not_null())
        impact_s = None
        if known.height:
            impact_s = float(
                known.select((pl.col("duration_s") - pl.col("time_to_roof_s")).clip(lower_bound=0.0).sum()).item()
            )
        median = float(short["duration_s"].median())
        got, limit = K.fmt_pct_vs(share, p["min_time_share"])
        return [
            self.finding(
                subject="profile",
                message=(
                    f"{K.plural(short.height, 'launch')} shorter than {K.fmt_s(p['max_kernel_duration_s'])} hold "
                    f"{got} of GPU time (>= {limit}); median "
                    f"{K.fmt_s(median)}; most frequent: {top['subject'][0]}"
                ),
                remedy=(
                    "Launch fewer kernels: fuse small ops (torch.compile, fused norm/activation kernels) and capture "
                    "the steady-state step in a CUDA graph."
                ),
                evidence=(
                    Evidence("short_launches", short.height, "launches", "measured"),
                    Evidence("short_launch_duration_s", short_time, "s", "measured"),
                    Evidence("short_launch_share", share, "ratio", "derived"),
                    Evidence("median_short_duration_s", median, "s", "derived"),
                    Evidence("kernel_names", top.height, "names", "measured"),
                    Evidence("most_frequent_short_kernel", top["subject"][0], "name", "measured"),
                    Evidence("impact_basis", "gap to the roof of the short launches (their time minus their time at "
                             "the roof): what fusing them buys at best; the launch gaps between them come on top",
                             "text", "derived"),
                ),
                impact_s=impact_s,
                impact_share=(impact_s / total) if impact_s is not None else None,
                confidence="measured",
                subject_kind="profile",
            )
        ]
