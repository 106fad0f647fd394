"""RL207 gpu-too-powerful."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class GpuTooPowerful(Rule):
    """A busy GPU whose tensor cores idle while bandwidth or latency sets its pace: a smaller GPU would do.

    What it finds
    -------------
    GPUs whose usable windows (RL205's exclusions left out) are busy (mean GPU-Util >=
    ``min_busy``) with the tensor pipes mostly idle (mean PIPE_TENSOR_ACTIVE <= ``max_tensor``),
    over at least ``min_busy_s`` of busy time: memory-bound (DRAM_ACTIVE high) or latency-bound
    (DRAM quiet too) work. For each it runs the what-if model backwards
    (``ridgeline.analyzer.kernels.whatif.smaller_gpus_holding``): each unit's busy fraction scales by the
    ratio of the two GPUs' peaks (DRAM_ACTIVE by bandwidth, tensor activity by the dense BF16
    tensor peak, FP32 pipe activity by the FP32 peak), the step stretches only when a unit would
    pass 80% busy, and time no unit explains (latency, launches) stays the same. It lists the catalogue GPUs of the same vendor with less tensor compute whose stretch is
    within ``margin`` and whose memory holds what the job used (peak FB used), smallest first.

    Why it matters
    --------------
    Tensor compute is what a large data-center GPU is bought for. A decode server that is
    memory-bound, or a service waiting on launches, runs no faster on it than on a part with the
    same bandwidth and a fraction of the compute: the difference is paid for and idle.

    What to do
    ----------
    Either give the GPU work its tensor cores can do (a bigger decode batch, more concurrent
    requests, speculative decoding), or serve this job on one of the GPUs named, at its price.
    ridgeline knows no prices: "smaller" means a lower dense BF16 tensor peak; compare offers
    yourself, and confirm with a profile (`ridgeline analyze profile.csv --what-if GPU`).

    Example
    -------
    ``host:node1 gpu:0``: ``H100 SXM busy 95% with tensor 4%, DRAM_ACTIVE 62% for 2.0 h: H20
    (4 TB/s, 148 TFLOP/s bf16) holds the same step time within 10% (0.84x); memory used 61 GB``.
    """

    code = "RL207"
    name = "gpu-too-powerful"
    severity = "info"
    family = "telemetry"
    thresholds = {
        "max_tensor": (0.1, "mean PIPE_TENSOR_ACTIVE over the busy windows at or below this"),
        "min_busy": (0.5, "a window counts when its mean GPU-Util (GR_ENGINE where absent) is at least this"),
        "min_busy_s": (600.0, "fire only with at least this many busy seconds"),
        "margin": (0.1, "a smaller GPU qualifies when the same work takes at most 1 + margin times as long"),
        "max_listed": (3, "GPUs named in the message"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        p = self.params
        c = pl.col
        util = pl.coalesce(c("gpu_util_mean_ratio"), c("gr_engine_active_mean_ratio"))
        w = T.measured_windows(ctx, "tensor_active_mean_ratio", "dram_active_mean_ratio", "model",
                               where=util >= p["min_busy"])
        if w is None:
            return []
        if not w.height:
            return []
        from ridgeline.analyzer.kernels.gpus import try_lookup
        from ridgeline.analyzer.kernels.whatif import BUSY_CAP, smaller_gpus_holding

        def wmean(col: str):
            return (c(col) * c("span_s")).sum() / c("span_s").sum()

        g = w.group_by(list(T.KEYS), maintain_order=True).agg(
            c("model").drop_nulls().first(),
            c("busy_s").sum(),
            c("span_s").sum().alias("observed_s"),
            wmean("tensor_active_mean_ratio").alias("tensor"),
            wmean("dram_active_mean_ratio").alias("dram"),
            (wmean("fp32_active_mean_ratio") if "fp32_active_mean_ratio" in w.columns
             else pl.lit(None, dtype=pl.Float64)).alias("fp32"),
            (util * c("span_s")).sum().truediv(c("span_s").sum()).alias("util"),
            c("fb_used_max_bytes").max().alias("fb_max") if "fb_used_max_bytes" in w.columns
            else pl.lit(None, dtype=pl.Float64).alias("fb_max"),
        ).filter((c("tensor") <= p["max_tensor"]) & (c("busy_s") >= p["min_busy_s"]))
        out = []
        for row in g.iter_rows(named=True):
            src, _why = try_lookup(row["model"])
            if src is None:
                continue
            fits = smaller_gpus_holding(src, dram_active=row["dram"], tensor_active=row["tensor"],
                                        fp32_active=row["fp32"],
                                        memory_used_bytes=row["fb_max"], margin=p["margin"])
            if not fits:
                continue
            kind = "memory-bound" if row["dram"] / BUSY_CAP >= 0.5 else "latency-bound"
            listed = fits[: p["max_listed"]]
            names = "; ".join(
                f"{gpu.name} ({gpu.dram_bw_bytes_per_s / 1e12:.3g} TB/s, {gpu.peak('fp16_tensor') / 1e12:.4g} "
                f"TFLOP/s bf16, {s:.2f}x the time)" for gpu, s in listed)
            more = f" (+{len(fits) - len(listed)} more)" if len(fits) > len(listed) else ""
            mem = f"; memory used up to {row['fb_max'] / 1e9:.3g} GB" if row["fb_max"] else ""
            key = {k: row[k] for k in T.KEYS}
            out.append(self.finding(
                subject=T.subject(key),
                message=(f"{src.name} busy {T.pct(row['util'])} with tensor {T.pct(row['tensor'])}, DRAM_ACTIVE "
                         f"{T.pct(row['dram'])} ({kind}) for {T.minutes(row['busy_s'])}: {names}{more} "
                         f"hold{'s' if len(fits) == 1 else ''} the same step time within {p['margin']:.0%}{mem}"),
                remedy=(f"Give {src.name} work its tensor cores can do (bigger decode batch, more concurrent requests), "
                        f"or serve this on {listed[0][0].name}; ridgeline knows no prices, so compare offers, and "
                        f"confirm with a profile: ridgeline analyze profile.csv --what-if \"{listed[0][0].name}\"."),
                evidence=(
                    Evidence("busy_s", row["busy_s"], "s", "telemetry"),
                    Evidence("tensor_active_mean_ratio", row["tensor"], "ratio", "telemetry: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
                    Evidence("dram_active_mean_ratio", row["dram"], "ratio", "telemetry: DCGM_FI_PROF_DRAM_ACTIVE"),
                    Evidence("fp32_active_mean_ratio", row["fp32"], "ratio", "telemetry: DCGM_FI_PROF_PIPE_FP32_ACTIVE"),
                    Evidence("fb_used_max_bytes", row["fb_max"], "B", "telemetry: DCGM_FI_DEV_FB_USED"),
                    *[Evidence(f"stretch_on:{gpu.name}", s, "ratio",
                               "derived: what-if model, busiest unit scaled by the ratio of peaks (catalogue)")
                      for gpu, s in fits],
                    Evidence("basis", "each unit's busy fraction scaled by the ratio of the GPUs' peaks; a unit over "
                             f"{BUSY_CAP:.0%} busy stretches the step; 'smaller' = lower dense BF16 tensor peak",
                             "text", "derived"),
                ),
                impact_s=None,
                confidence="catalogue",
                subject_kind="gpu",
            ))
        return out
