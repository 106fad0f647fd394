"""RL202 memory-bound-by-counters."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class MemoryBoundByCounters(Rule):
    """DRAM busy and Tensor Cores quiet: the telemetry itself says the work is memory-bound.

    What it finds
    -------------
    GPUs whose samples show DRAM_ACTIVE >= 0.5 while PIPE_TENSOR_ACTIVE <= 0.1 for at least
    ``min_share`` of a window or ``min_sustained_s`` in a row (windows excluded by RL205
    are skipped). Needs the DRAM_ACTIVE and PIPE_TENSOR_ACTIVE profiling series, which the
    default dcgm-exporter counter set includes.

    Why it matters
    --------------
    DRAM_ACTIVE is the fraction of cycles the memory interface moved data; NVIDIA puts the
    achievable peak near 0.8, so 0.5 and above is most of the bandwidth the GPU has. With the
    tensor pipes quiet at the same time, time goes into moving bytes, not into math: more
    FLOP/s will only come from moving fewer bytes per FLOP (higher arithmetic intensity). For
    LLM decode this is the expected state; the question is whether it is a deliberate one.

    What to do
    ----------
    Raise arithmetic intensity: batch more requests per step (decode GEMM intensity grows
    with batch), fuse elementwise kernels, quantize weights and KV cache (fp8/int4) to move
    fewer bytes, and use attention kernels that read the KV cache once (paged/flash
    decoding). Profile a window with ncu (`ridgeline analyze profile.csv telemetry/`) to
    confirm the kernels sit left of the ridge.

    Example
    -------
    ``host:node1 gpu:0``: ``DRAM_ACTIVE >= 50% with tensor <= 10% for 28.0 min (93% of
    30.0 min observed); mean DRAM_ACTIVE 75%, tensor 5%, GPU-Util 99%``.
    """

    code = "RL202"
    name = "memory-bound-by-counters"
    severity = "info"
    family = "telemetry"
    thresholds = {
        "min_share": (0.5, "a window counts when this share of its samples is memory-bound (DRAM >= 0.5, tensor <= 0.1)"),
        "min_sustained_s": (600.0, "or when at least this many seconds in it are"),
        "min_samples": (5, "ignore windows with fewer samples"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        p = self.params
        c = pl.col
        w = T.measured_windows(ctx, "dram_active_mean_ratio", "tensor_active_mean_ratio",
                               where=c("samples") >= p["min_samples"])
        if w is None:
            return []
        sp = T.spans(w, (c("memory_bound_share") >= p["min_share"]) | (c("memory_bound_s") >= p["min_sustained_s"]))
        if sp is None or sp.height == 0:
            return []
        out = []
        for key, spans in T.per_gpu(sp, "memory_bound_s"):
            mb = sum(s["memory_bound_s"] or 0.0 for s in spans)
            observed = sum(s["observed_s"] or 0.0 for s in spans)
            dram = T.wavg(spans, "dram_active_mean_ratio")
            tensor = T.wavg(spans, "tensor_active_mean_ratio")
            util = T.wavg(spans, "gpu_util_mean_ratio")
            out.append(self.finding(
                subject=T.subject(key),
                message=(f"DRAM_ACTIVE >= 50% with tensor <= 10% for {T.minutes(mb)} "
                         f"({T.pct(mb / observed if observed else None)} of {T.minutes(observed)} in {T.spans_text(spans)}); "
                         f"mean DRAM_ACTIVE {T.pct(dram)}, tensor {T.pct(tensor)}, GPU-Util {T.pct(util)}"),
                remedy=("Raise arithmetic intensity: batch more requests per step, fuse kernels, quantize weights/KV "
                        "cache; confirm with an ncu profile of this window."),
                evidence=(
                    Evidence("memory_bound_s", mb, "s", "telemetry"),
                    Evidence("dram_active_mean_ratio", dram, "ratio", "telemetry: DCGM_FI_PROF_DRAM_ACTIVE"),
                    Evidence("tensor_active_mean_ratio", tensor, "ratio", "telemetry: DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
                    Evidence("gpu_util_mean_ratio", util, "ratio", "telemetry: DCGM_FI_DEV_GPU_UTIL"),
                ),
                impact_s=None,
                confidence="measured",
                subject_kind="gpu",
            ))
        return out
