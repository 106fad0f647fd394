"""RL112 short-latency-bound-launches (launch-bound)."""

from __future__ import annotations

from ridgeline.analyzer.kernels.latency import LAUNCH, LAUNCH_BOUND_MAX_S
from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule
from ridgeline.rules.kernel.latency_common import gap_to_roof, latency_launches, top_groups


class ShortLatencyBoundLaunches(Rule):
    """Short launches no roof explains (launch-bound) hold a large share of GPU time.

    What it finds
    -------------
    Launches the classifier put in the ``latency`` class (their busiest roof, achieved FLOP/s
    over the compute peak of their precision or bytes/s over the DRAM, L2 and L1 roofs where
    measured, is below ``max_roof_fraction``, or they last no longer than ``launch_floor_s``)
    AND that last no longer than ``launch_bound_max_s``: ``latency_kind = "launch"``. One
    finding for the profile when such launches hold at least ``min_time_share`` of the profiled
    GPU time, naming the kernels that hold most of it. ``max_roof_fraction``,
    ``launch_floor_s`` and ``launch_bound_max_s`` also define the class itself: changing them
    here changes ``bound`` and ``latency_kind`` everywhere (tables, plots, JSON). Longer
    latency-bound launches are RL113's.

    Why it matters
    --------------
    Neither the compute units nor the memory system explain where such a launch's time goes,
    and it is short enough that launch overhead is a large part of it: a kernel launch costs
    the host 2-6 us through the driver (more through an eager framework), plus the GPU's own
    launch latency and the ramp-up and tail of a small grid. Below ~20 us that overhead is
    10-30% or more of the launch, and the GPU idles whenever the host falls behind. A bigger
    batch or better memory access does not help a step made of dozens of 2-5 us kernels; fewer,
    larger launches do. ncu's own SpeedOfLight rule calls a kernel latency-limited when compute
    and memory throughput are both under 60% of peak; ridgeline reserves this class for launches
    no roof explains (10% by default) and reports 10-60% launches as inefficient memory- or
    compute-bound ones (RL103, RL105). The launch floor is never counted as a saving.

    What to do
    ----------
    Launch fewer kernels: capture the repeated step in a CUDA graph (``torch.cuda.graphs``,
    ``torch.compile(mode="reduce-overhead")``; vLLM/SGLang/TensorRT-LLM graph mode for LLM
    serving), fuse element-wise and normalization chains (``torch.compile``, fused kernels),
    use persistent kernels for small GEMMs, and give tiny grids more work per launch.

    Example
    -------
    An MoE decode step at batch 1: ``26 of 30 launches (66% of GPU time, >= 10%) are
    launch-bound: no longer than 20 us and below 10% of every roof or within the 2 us launch
    floor; most time: FlashAttention-3 fwd (sm90), ATen copy``.
    """

    code = "RL112"
    name = "short-latency-bound-launches"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "max_roof_fraction": (0.10, "a launch below this share of every roof it has is latency-bound"),
        "launch_floor_s": (2.0e-6, "a launch no longer than this (seconds) is latency-bound; savings never count it"),
        "launch_bound_max_s": (LAUNCH_BOUND_MAX_S, "a latency-bound launch no longer than this (seconds) is launch-bound "
                               "(RL112), a longer one stall-bound (RL113)"),
        "min_time_share": (0.10, "fires when launch-bound launches hold at least this share of GPU time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        from ridgeline.analyzer.kernels.workload import llm_evidence

        p = self.params
        got = latency_launches(ctx, LAUNCH, max_s=p["launch_bound_max_s"])
        if got is None:
            return []
        df, lat = got
        total = K.total_gpu_time(ctx)
        if not lat.height or not total:
            return []
        lat_time = float(lat["duration_s"].sum() or 0.0)
        share = lat_time / total
        if share < p["min_time_share"]:
            return []
        top = top_groups(lat)
        names = ", ".join(top["who"].head(3).to_list())
        saving = gap_to_roof(lat)
        import polars as pl

        floor_time = float(lat.select(pl.min_horizontal(pl.col("duration_s"), pl.lit(p["launch_floor_s"])).sum()).item())
        pct, limit = K.fmt_pct_vs(share, p["min_time_share"])
        llm = llm_evidence(df)
        if llm:
            remedy = ("Launch fewer kernels per token: capture the forward step (the decode step when serving) in a CUDA "
                      "graph (vLLM/SGLang/TensorRT-LLM graph mode, torch.cuda.graphs), fuse element-wise/norm/RoPE chains "
                      "(torch.compile, fused kernels), use persistent kernels for small GEMMs.")
        else:
            remedy = ("Launch fewer kernels: capture the repeated sequence in a CUDA graph (torch.cuda.graphs, "
                      "cudaStreamBeginCapture), fuse consecutive element-wise kernels (torch.compile, fused kernels), "
                      "use persistent kernels or give each launch more work.")
        return [
            self.finding(
                subject="profile",
                message=(
                    f"{lat.height:,} of {df.height:,} launches ({pct} of GPU time, >= {limit}) are launch-bound: no longer "
                    f"than {K.fmt_s(p['launch_bound_max_s'])} and below {K.fmt_pct(p['max_roof_fraction'])} of every roof "
                    f"or within the {K.fmt_s(p['launch_floor_s'])} launch floor; most time: {names}"
                ),
                remedy=remedy,
                evidence=(
                    Evidence("latency_launches", lat.height, "launches", "derived"),
                    Evidence("latency_duration_s", lat_time, "s", "measured"),
                    Evidence("latency_share", share, "ratio", "derived"),
                    Evidence("launch_floor_time_s", floor_time, "s", "derived"),
                    Evidence("max_roof_fraction", p["max_roof_fraction"], "ratio", "threshold"),
                    Evidence("launch_bound_max_s", p["launch_bound_max_s"], "s", "threshold"),
                    Evidence("longest_launch_s", float(lat["duration_s"].max()), "s", "measured"),
                    Evidence("top_kernel", top["who"][0], "name", "measured"),
                    Evidence("llm_evidence", llm or "none: generic wording", "text", "derived"),
                    Evidence("impact_basis", "gap to the roof of the launch-bound launches (their time minus their "
                             "time at the roof): what fewer, larger launches buy at best", "text", "derived"),
                ),
                impact_s=saving,
                impact_share=saving / total if saving is not None else None,
                confidence="derived",
                subject_kind="profile",
            )
        ]
