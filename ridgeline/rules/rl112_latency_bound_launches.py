"""RL112 latency-bound-launches."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class LatencyBoundLaunches(Rule):
    """Launches far below every roof (or no longer than the launch floor) hold a large share of GPU time.

    What it finds
    -------------
    Launches the classifier put in the ``latency`` class: their busiest roof (achieved FLOP/s
    over the compute peak of their precision, bytes/s over the DRAM, L2 and L1 roofs where
    measured) is below ``max_roof_fraction``, or they last no longer than ``launch_floor_s``.
    One finding for the profile when such launches hold at least ``min_time_share`` of the
    profiled GPU time, naming the kernels that hold most of it. The two thresholds also define
    the class itself: changing them here changes ``bound`` everywhere (tables, plots, JSON).

    Why it matters
    --------------
    Neither the compute units nor the memory system explain where such a launch's time goes:
    launch overhead, tiny grids that leave most SMs idle, dependent latency chains and
    synchronization do. A bigger batch or better memory access does not help a decode step made
    of dozens of 2-5 us kernels; fewer, larger launches do. ncu's own SpeedOfLight rule calls a
    kernel latency-limited when compute and memory throughput are both under 60% of peak;
    ridgeline reserves this class for launches no roof explains (10% by default) and reports
    10-60% launches as inefficient memory- or compute-bound ones (RL103, RL105). The launch
    floor is never counted as a saving.

    What to do
    ----------
    Launch fewer kernels per token: capture the decode step in a CUDA graph
    (``torch.cuda.graphs``, vLLM/SGLang/TensorRT-LLM graph mode), fuse element-wise, norm, RoPE
    and activation chains (``torch.compile``, fused kernels), use persistent kernels for small
    GEMMs, and give tiny grids more work per launch (larger batch per launch, split-K off).

    Example
    -------
    An MoE decode step at batch 1: ``26 of 30 launches (66% of GPU time) run below 10% of every
    roof or within the 2 us launch floor; most time: FlashAttention-3 fwd (sm90), ATen copy``.
    """

    code = "RL112"
    name = "latency-bound-launches"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "max_roof_fraction": (0.10, "a launch below this share of every roof it has is latency-bound"),
        "launch_floor_s": (2.0e-6, "a launch no longer than this (seconds) is latency-bound; savings never count it"),
        "min_time_share": (0.10, "fires when latency-bound launches hold at least this share of GPU time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        if df is None:
            return []
        p = self.params
        total = K.total_gpu_time(ctx)
        lat = df.filter(pl.col("bound") == "latency")
        if not lat.height or not total:
            return []
        lat_time = float(lat["duration_s"].sum() or 0.0)
        share = lat_time / total
        if share < p["min_time_share"]:
            return []
        label = "kernel_label" if "kernel_label" in lat.columns else "subject"
        top = (
            lat.group_by(pl.coalesce(pl.col(label), pl.col("subject")).alias("who"))
            .agg(t=pl.col("duration_s").sum(), n=pl.len())
            .sort(["t", "who"], descending=[True, False])
        )
        names = ", ".join(top["who"].head(3).to_list())
        saving = float(
            lat.select((pl.col("duration_s") - pl.col("time_to_roof_s")).clip(lower_bound=0.0).sum()).item() or 0.0
        )
        floor_time = float(lat.select(pl.min_horizontal(pl.col("duration_s"), pl.lit(p["launch_floor_s"])).sum()).item())
        got, limit = K.fmt_pct_vs(share, p["min_time_share"])
        return [
            self.finding(
                subject="profile",
                message=(
                    f"{lat.height:,} of {df.height:,} launches ({got} of GPU time, >= {limit}) run below "
                    f"{K.fmt_pct(p['max_roof_fraction'])} of every roof or within the {K.fmt_s(p['launch_floor_s'])} "
                    f"launch floor; most time: {names}"
                ),
                remedy=(
                    "Launch fewer kernels per token: capture the step in a CUDA graph, fuse element-wise/norm/RoPE "
                    "chains (torch.compile, fused kernels), use persistent kernels for small GEMMs."
                ),
                evidence=(
                    Evidence("latency_launches", lat.height, "launches", "derived"),
                    Evidence("latency_duration_s", lat_time, "s", "measured"),
                    Evidence("latency_share", share, "ratio", "derived"),
                    Evidence("launch_floor_time_s", floor_time, "s", "derived"),
                    Evidence("max_roof_fraction", p["max_roof_fraction"], "ratio", "threshold"),
                    Evidence("top_kernel", top["who"][0], "name", "measured"),
                    Evidence("impact_basis", "gap to the roof of the latency-bound launches (their time minus their "
                             "time at the roof): what fewer, larger launches buy at best", "text", "derived"),
                ),
                impact_s=saving,
                impact_share=saving / total,
                confidence="derived",
                subject_kind="profile",
            )
        ]
