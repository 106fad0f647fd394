"""RL204 tensor-throughput-sag."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class TensorThroughputSag(Rule):
    """Low-traffic windows where each unit of GPU-Util buys far less tensor work than usual.

    What it finds
    -------------
    Per GPU and day, the tensor work per unit of busy time (mean PIPE_TENSOR_ACTIVE / mean
    GPU-Util of a window) is compared with the GPU's own typical value (the median over its
    busier half of windows). Windows in the quieter half whose ratio is at or below
    ``sag_ratio`` of the typical value are flagged. Needs at least ``min_windows`` windows
    with GPU-Util >= ``min_util`` on that day; excluded windows are skipped.

    Why it matters
    --------------
    A serving GPU that stays "busy" when traffic drops but does proportionally less tensor
    math is spending its time on fixed costs: tiny batches that cannot fill the tensor
    pipes, launch overhead, host round trips, polling. The GPU looks occupied while the
    throughput per GPU-second sags, which autoscalers reading GPU-Util do not see.

    What to do
    ----------
    Consolidate low-traffic load onto fewer GPUs (scale replicas on requests or tokens per
    second, not on GPU-Util), let the server wait to form larger batches at low load, and
    capture decode steps in CUDA graphs so small batches cost fewer launches.

    Example
    -------
    ``host:node1 gpu:0``: ``tensor per GPU-Util 0.08 in 4 low-traffic windows vs typical 0.45
    (18%, <= 50%); 20.0 min, mean GPU-Util 62%``.
    """

    code = "RL204"
    name = "tensor-throughput-sag"
    severity = "info"
    family = "telemetry"
    thresholds = {
        "sag_ratio": (0.5, "flag windows whose tensor/GPU-Util ratio is at or below this fraction of the GPU's typical"),
        "min_util": (0.05, "windows below this mean GPU-Util are idle, not low-traffic, and are ignored"),
        "min_windows": (6, "need at least this many non-idle windows per GPU and day"),
        "min_typical": (0.05, "skip GPUs whose typical tensor/GPU-Util ratio is below this (no tensor work to sag from)"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        p = self.params
        c = pl.col
        keys = list(T.KEYS)
        w = T.measured_windows(
            ctx, "gpu_util_mean_ratio", "tensor_active_mean_ratio",
            where=(c("span_s") > 0)  # a window without a span weighs nothing (null: not measured)
            & (c("gpu_util_mean_ratio") >= p["min_util"]),
        )
        if w is None:
            return []
        w = w.with_columns(
            (c("tensor_active_mean_ratio") / c("gpu_util_mean_ratio")).alias("eff"),
            c("window_start").dt.date().alias("day"),
        )
        if w.height == 0:
            return []
        grp = [*keys, "day"]
        w = w.with_columns(
            c("gpu_util_mean_ratio").median().over(grp).alias("util_median"),
            pl.len().over(grp).alias("n_windows"),
        )
        typical = w.filter(c("gpu_util_mean_ratio") >= c("util_median")).group_by(grp).agg(
            c("eff").median().alias("typical")
        )
        w = w.join(typical, on=grp, how="left", nulls_equal=True)
        hits = w.filter(
            (c("n_windows") >= p["min_windows"]) & (c("typical") >= p["min_typical"])
            & (c("gpu_util_mean_ratio") < c("util_median")) & (c("eff") <= p["sag_ratio"] * c("typical"))
        )
        if hits.height == 0:
            return []
        hits = hits.with_columns(
            (c("gpu_util_mean_ratio") * c("span_s") * (1 - c("eff") / c("typical"))).clip(0.0).alias("lost_s")
        )
        agg = hits.group_by(keys).agg(
            pl.len().alias("windows"),
            c("span_s").sum().alias("span_s"),
            c("lost_s").sum().alias("lost_s"),
            ((c("eff") * c("span_s")).sum() / c("span_s").sum()).alias("eff"),
            c("typical").mean().alias("typical"),
            ((c("gpu_util_mean_ratio") * c("span_s")).sum() / c("span_s").sum()).alias("util"),
            c("window_start").min().alias("first"),
            c("window_end").max().alias("last"),
        ).sort("lost_s", descending=True)
        out = []
        for r in agg.iter_rows(named=True):
            rel = r["eff"] / r["typical"] if r["typical"] else None
            out.append(self.finding(
                subject=T.subject(r),
                message=(f"tensor per GPU-Util {r['eff']:.2f} in {r['windows']} low-traffic windows vs typical "
                         f"{r['typical']:.2f} ({T.pct(rel)}, <= {T.pct(p['sag_ratio'])}); {T.minutes(r['span_s'])} "
                         f"between {T.spans_text([{'span_start': r['first'], 'span_end': r['last']}])}, "
                         f"mean GPU-Util {T.pct(r['util'])}"),
                remedy=("Scale replicas on request or token rate, not GPU-Util; batch longer at low load and use CUDA "
                        "graphs so small batches cost fewer launches."),
                evidence=(
                    Evidence("tensor_per_gpu_util", r["eff"], "ratio", "derived: PIPE_TENSOR_ACTIVE / GPU_UTIL"),
                    Evidence("typical_tensor_per_gpu_util", r["typical"], "ratio", "derived: median of busier windows"),
                    Evidence("gpu_util_mean_ratio", r["util"], "ratio", "telemetry: DCGM_FI_DEV_GPU_UTIL"),
                    Evidence("sag_seconds", r["lost_s"], "s", "derived"),
                ),
                impact_s=r["lost_s"],
                confidence="derived",
                subject_kind="gpu",
            ))
        return out
