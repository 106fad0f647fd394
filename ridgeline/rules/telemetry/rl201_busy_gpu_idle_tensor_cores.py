"""RL201 busy-gpu-idle-tensor-cores."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class BusyGpuIdleTensorCores(Rule):
    """High GPU-Util while the Tensor Cores sit idle, sustained.

    What it finds
    -------------
    GPUs whose samples show GPU-Util >= 80% (GR_ENGINE_ACTIVE where GPU-Util is absent, as on
    MIG instances) while PIPE_TENSOR_ACTIVE <= 0.1 and GR_ENGINE_ACTIVE >= 0.5, for at least
    ``min_share`` of a window or ``min_sustained_s`` in a row. Runs only where the DCGM
    profiling series exist; windows RL205 excludes (stuck profiler, percent fed as ratio,
    stalled fields) are skipped, so a stuck profiler (GPU-Util high, GR_ENGINE ~0) is never
    reported here. Per-sample thresholds are those of the reduction (``busy_util`` 0.8,
    ``tensor_idle`` 0.1, ``gr_engine_guard`` 0.5).

    Why it matters
    --------------
    GPU-Util only says a kernel was resident; it is not Tensor-Core activity. A GPU reading
    90% busy with tensor pipes at 5% spends its time on CUDA-core math, memory stalls or
    small kernels: the dense peak the GPU was bought for is not being used. The busy seconds
    with idle tensor cores are the upper bound of GPU time this costs.

    Memory-bound time is RL202's: where DRAM_ACTIVE was high too (the ``memory_bound`` state,
    counted as the smaller of it and the busy-idle time per window), the wall is bandwidth and
    more tensor work is not the remedy. RL201 counts only the rest, and stands down on a GPU
    whose busy-idle time is all memory-bound.

    What to do
    ----------
    Read the remedy: with DRAM_ACTIVE high the work is memory-bound (batch more, fuse,
    quantize); with SM_ACTIVE low the kernels occupy few SMs (bigger batches, more parallel
    work, CUDA graphs to cut launch gaps); otherwise the math runs on CUDA cores (enable
    bf16/fp16 autocast or TF32 matmuls). Profile a window with ncu to see which kernels.

    Example
    -------
    ``host:node1 gpu:3``: ``GPU-Util >= 80% with tensor <= 10% for 42.0 min (88% of 47.5 min
    observed); mean GPU-Util 95%, tensor 3%, GR_ENGINE 91%, SM_ACTIVE 35%``.
    """

    code = "RL201"
    name = "busy-gpu-idle-tensor-cores"
    severity = "warning"
    family = "telemetry"
    thresholds = {
        "min_share": (0.5, "a window counts when this share of its samples is busy with idle tensor cores"),
        "min_sustained_s": (600.0, "or when at least this many seconds in it are (long windows)"),
        "min_samples": (5, "ignore windows with fewer samples"),
        "dram_memory_bound": (0.5, "DRAM_ACTIVE at or above this -> memory-bound remedy"),
        "sm_active_low": (0.5, "SM_ACTIVE below this -> few-SMs remedy"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        p = self.params
        c = pl.col
        w = T.measured_windows(ctx, "tensor_active_mean_ratio", "gr_engine_active_mean_ratio",
                               where=c("samples") >= p["min_samples"])
        if w is None:
            return []
        # the memory-bound part is RL202's (bandwidth is the wall): only the rest counts here
        mb_s = pl.min_horizontal(c("memory_bound_s").fill_null(0.0), c("busy_tensor_idle_s").fill_null(0.0))
        mb_sh = pl.min_horizontal(c("memory_bound_share").fill_null(0.0), c("busy_tensor_idle_share").fill_null(0.0))
        w = w.with_columns(
            (c("busy_tensor_idle_s") - mb_s).alias("busy_tensor_idle_s"),
            (c("busy_tensor_idle_share") - mb_sh).alias("busy_tensor_idle_share"),
            mb_s.alias("memory_bound_s"),
        )
        flag = (c("busy_tensor_idle_share") >= p["min_share"]) | (c("busy_tensor_idle_s") >= p["min_sustained_s"])
        sp = T.spans(w, flag)
        if sp is None or sp.height == 0:
            return []
        total = T.total_span_s(T.windows(ctx))  # telemetry GPU-seconds, not kernel time
        out = []
        for key, spans in T.per_gpu(sp, "busy_tensor_idle_s"):
            bti = sum(s["busy_tensor_idle_s"] or 0.0 for s in spans)
            mem = sum(s["memory_bound_s"] or 0.0 for s in spans)
            observed = sum(s["observed_s"] or 0.0 for s in spans)
            util = T.wavg(spans, "gpu_util_mean_ratio")
            tensor = T.wavg(spans, "tensor_active_mean_ratio")
            gr = T.wavg(spans, "gr_engine_active_mean_ratio")
            dram = T.wavg(spans, "dram_active_mean_ratio")
            sm = T.wavg(spans, "sm_active_mean_ratio")
            if dram is not None and dram >= p["dram_memory_bound"]:
                remedy = (f"Memory-bound (DRAM_ACTIVE {T.pct(dram)}): batch more requests per step, fuse "
                          "elementwise kernels and quantize weights/KV cache to move fewer bytes.")
            elif sm is not None and sm < p["sm_active_low"]:
                remedy = (f"Kernels occupy few SMs (SM_ACTIVE {T.pct(sm)}): raise batch size or parallel work per "
                          "launch and cut launch gaps with CUDA graphs or larger fused kernels.")
            else:
                remedy = ("Math runs on CUDA cores, not Tensor Cores: enable bf16/fp16 autocast or TF32 matmuls "
                          "and check layer shapes are multiples of 8/16.")
            util_txt = "GPU-Util" if util is not None else "GR_ENGINE"
            parts = [f"mean {util_txt} {T.pct(util if util is not None else gr)}", f"tensor {T.pct(tensor)}"]
            if util is not None:
                parts.append(f"GR_ENGINE {T.pct(gr)}")
            if sm is not None:
                parts.append(f"SM_ACTIVE {T.pct(sm)}")
            if dram is not None:
                parts.append(f"DRAM_ACTIVE {T.pct(dram)}")
            mig = " (MIG instance: ratios are per instance)" if key["gpu_instance"] is not None else ""
            out.append(self.finding(
                subject=T.subject(key),
                message=(f"{util_txt} >= 80% with tensor <= 10% for {T.minutes(bti)} "
                         f"({T.pct(bti / observed if observed else None)} of {T.minutes(observed)} in "
                         f"{T.spans_text(spans)})"
                         + (f", not counting {T.minutes(mem)} memory-bound (RL202)" if mem > 0 else "")
                         + "; " + ", ".join(parts) + mig),
                remedy=remedy,
                evidence=(
                    Evidence("busy_tensor_idle_s", bti, "s", "telemetry: memory-bound time (RL202) left out"),
                    Evidence("memory_bound_s", mem, "s", "telemetry: left to RL202"),
                    Evidence("gpu_util_mean_ratio", util, "ratio", "telemetry: DCGM_FI_DEV_GPU_UTIL"),
                    Evidence("tensor_active_mean_ratio", tensor, "ratio", "telemetry: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
                    Evidence("gr_engine_active_mean_ratio", gr, "ratio", "telemetry: DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
                    Evidence("sm_active_mean_ratio", sm, "ratio", "telemetry: DCGM_FI_PROF_SM_ACTIVE"),
                    Evidence("dram_active_mean_ratio", dram, "ratio", "telemetry: DCGM_FI_PROF_DRAM_ACTIVE"),
                ),
                impact_s=bti,
                impact_share=(bti / total) if total else None,
                confidence="measured",
                subject_kind="gpu",
            ))
        return out
