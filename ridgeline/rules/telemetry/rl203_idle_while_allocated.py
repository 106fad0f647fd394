"""RL203 idle-while-allocated."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class IdleWhileAllocated(Rule):
    """A GPU holding device memory while doing nothing, for a long span.

    What it finds
    -------------
    GPUs with framebuffer in use (FB_USED >= 1 GiB) while GPU-Util (GR_ENGINE_ACTIVE where
    GPU-Util is absent) stays <= 1% and GR_ENGINE_ACTIVE <= 1%, in at least ``min_share``
    of each window, or whose window is of class ``idle_allocated`` (the engine's window mean
    below its noise floor, :mod:`ridgeline.analyzer.fleet.classes`: an idle GPU's counters jitter
    between 0 and a few hundredths, which the per-sample test misses half the time; such a
    window counts whole), over consecutive windows adding up to ``min_idle_s`` or more. A GPU that
    is idle with its memory free triggers nothing: it is simply unallocated.

    Why it matters
    --------------
    Memory in use means a process (a notebook kernel, a stalled job, a serving replica with
    no traffic) owns the GPU, so the scheduler cannot give it to anyone else. Every such
    second is GPU time paid for and not used; the sum is the upper bound reported as impact.

    What to do
    ----------
    Find the owner (`nvidia-smi --query-compute-apps=pid,process_name,used_memory
    --format=csv`, the pod label in dcgm-exporter data) and release the GPU: idle timeouts for
    notebooks, scale-to-zero for serving replicas, job time limits for batch queues.

    Example
    -------
    ``host:node2 gpu:5``: ``idle with 30.0 GiB allocated for 2.5 h in
    2026-01-05T08:00:00Z..2026-01-05T10:30:00Z; mean GPU-Util 0%``.
    """

    code = "RL203"
    name = "idle-while-allocated"
    severity = "warning"
    family = "telemetry"
    thresholds = {
        "min_share": (0.8, "a window counts when this share of its samples is idle with memory allocated"),
        "min_idle_s": (1800.0, "fires when consecutive such windows add up to at least this many seconds"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        w = T.windows(ctx)
        if w is None:
            return []
        p = self.params
        flag = pl.col("allocated_idle_share") >= p["min_share"]
        if "class" in w.columns:  # a window idle-allocated by its class counts whole (noise floor)
            held = pl.col("class") == "idle_allocated"
            w = w.with_columns(pl.when(held).then(pl.col("span_s")).otherwise(pl.col("allocated_idle_s"))
                               .alias("allocated_idle_s"))
            flag = flag | held
        sp = T.spans(w, flag)
        if sp is None or sp.height == 0:
            return []
        sp = sp.filter(pl.col("allocated_idle_s") >= p["min_idle_s"])
        if sp.height == 0:
            return []
        total = T.total_span_s(T.windows(ctx))  # telemetry GPU-seconds, not kernel time
        out = []
        for key, spans in T.per_gpu(sp, "allocated_idle_s"):
            idle = sum(s["allocated_idle_s"] or 0.0 for s in spans)
            fb = max((s["fb_used_max_bytes"] or 0.0) for s in spans)
            util = T.wavg(spans, "gpu_util_mean_ratio")
            out.append(self.finding(
                subject=T.subject(key),
                message=(f"idle with {fb / (1 << 30):.1f} GiB allocated for {T.minutes(idle)} "
                         f"(>= {T.minutes(p['min_idle_s'])}) in {T.spans_text(spans)}; mean GPU-Util {T.pct(util)}"),
                remedy="Find the process holding the memory and release the GPU (idle timeouts, scale-to-zero, job limits).",
                evidence=(
                    Evidence("allocated_idle_s", idle, "s", "telemetry"),
                    Evidence("fb_used_max_bytes", fb, "B", "telemetry: DCGM_FI_DEV_FB_USED"),
                    Evidence("gpu_util_mean_ratio", util, "ratio", "telemetry: DCGM_FI_DEV_GPU_UTIL"),
                ),
                impact_s=idle,
                impact_share=(idle / total) if total else None,
                confidence="measured",
                subject_kind="gpu",
            ))
        return out
