"""Classes of GPU time: each window of the WINDOW table gets exactly one ``class``.

The class is judged from the window's means of the normalized DCGM activity columns
(:mod:`ridgeline.analyzer.fleet.telemetry`), first match in :data:`CLASS_ORDER`:

=====================  =====================================================================
class                  when (thresholds: :data:`CLASS_THRESHOLDS`)
=====================  =====================================================================
unavailable            a critical health event in the window: double-bit ECC errors added,
                       a failed row remap, uncorrectable rows remapped, or a new XID that is
                       not an application's (:data:`APPLICATION_XIDS`: 13, 31, 43, 45, 68, 69)
idle                   GR_ENGINE_ACTIVE mean (GPU-Util where GR_ENGINE is absent) below
                       ``idle_engine_floor`` and device memory in use < ``allocated_fb_bytes``
                       (nothing allocated)
idle_allocated         the same engine test with memory held (>= ``allocated_fb_bytes``, or
                       not reported): GPU-hours thrown away
unknown                not idle and no engine measure (GR_ENGINE_ACTIVE absent: no profiling
                       fields), or the window excluded. The busy classes are never guessed from GPU-Util,
                       which reads 100% for a GPU running one tiny kernel (a GPU-Util below the
                       floor does prove the GPU idle)
tensor_bound           PIPE_TENSOR_ACTIVE mean >= ``tensor_high``
compute_bound          the largest of FP64/FP32/FP16 pipe activity >= ``fp_pipe_high``
memory_bound           DRAM_ACTIVE mean >= ``dram_high`` (the pipes below their highs)
io_bound               PCIe or NVLink (TX + RX) >= ``io_high_bytes_per_s`` while SM_ACTIVE (or
                       the engine, where SM_ACTIVE is absent) < ``sm_low``
busy_low_throughput    SM_ACTIVE below ``sm_low``, DRAM_ACTIVE and every pipe below
                       ``low_activity``: the engine is busy but does little (latency, launch or synchronization bound)
busy                   anything else: the engine busy, some unit moderately used, none high
=====================  =====================================================================

An excluded window (stuck profiler, implausible values) that is not unavailable is ``unknown``
whatever its figures (tested right after ``unavailable``).

The noise floor matters: GPU-Util and GR_ENGINE_ACTIVE of an idle GPU jitter between 0 and a few
hundredths (a test ``== 0`` misses half of such a night); the floor is judged on the window mean.

The thresholds are data: ``[tool.ridgeline.classes]`` overrides them (each checked against
:data:`ridgeline.bounds.BOUNDS`); :data:`SOURCES` says where each default comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CLASS_ORDER: tuple[str, ...] = (
    "unavailable", "idle", "idle_allocated", "unknown", "tensor_bound", "compute_bound", "memory_bound",
    "io_bound", "busy_low_throughput", "busy",
)

CLASS_THRESHOLDS: dict[str, float] = {
    "idle_engine_floor": 0.01,
    "allocated_fb_bytes": float(1 << 30),
    "tensor_high": 0.3,
    "fp_pipe_high": 0.3,
    "dram_high": 0.5,
    "io_high_bytes_per_s": 10e9,
    "sm_low": 0.3,
    "low_activity": 0.2,
}

_DCGM = "NVIDIA DCGM user guide, Feature Overview > Profiling Metrics (docs.nvidia.com/datacenter/dcgm)"
SOURCES: dict[str, str] = {
    "idle_engine_floor": f"the field's noise floor: an idle GPU reads GR_ENGINE_ACTIVE 0..0.01 ({_DCGM}); "
                         "the common idle test is GR_ENGINE_ACTIVE < 0.01",
    "allocated_fb_bytes": "ridgeline default: 1 GiB is more than a CUDA context alone holds (~0.3-0.6 GB)",
    "tensor_high": f"ridgeline default, from {_DCGM}: PIPE_TENSOR_ACTIVE 1.0 = tensor pipes busy every cycle; "
                   "dense training steps read 0.3-0.7, decode 0.0-0.1",
    "fp_pipe_high": f"ridgeline default, as tensor_high ({_DCGM}: PIPE_FP*_ACTIVE)",
    "dram_high": f"{_DCGM}: DRAM_ACTIVE peaks near 0.8 in practice; 0.5 is the telemetry rules' dram_high",
    "io_high_bytes_per_s": "ridgeline default: 10 GB/s, a third of a PCIe Gen4 x16 link in one direction",
    "sm_low": f"{_DCGM}: SM_ACTIVE 0.8 or more is necessary (not sufficient) for effective use; below 0.3 "
              "the SMs mostly wait",
    "low_activity": "ridgeline default: DRAM and every pipe below 0.2 of its roof",
}

# XIDs of the application (the GPU is fine): every other new XID, unknown ones included, makes
# the window unavailable (ridgeline.analyzer.fleet.xids, from NVIDIA's Xid catalog)
def _application_xids() -> tuple[int, ...]:
    from ridgeline.analyzer.fleet.xids import XIDS

    return tuple(sorted(c for c, row in XIDS.items() if row[1] == "application"))


APPLICATION_XIDS: tuple[int, ...] = _application_xids()

# what to do about the time of each class (the remedy a report names beside the hours)
REMEDIES: dict[str, str] = {
    "unavailable": "drain the node and follow the health finding (reset, RMA)",
    "unknown": "collect the DCGM profiling fields (DCGM_FI_PROF_*) to classify this time",
    "idle": "nothing allocated: release the GPU to the scheduler",
    "idle_allocated": "release the GPU or give the job work: it holds memory and does nothing",
    "tensor_bound": "none needed: tensor pipes busy",
    "compute_bound": "use tensor-core precisions (TF32/BF16/FP16) where the FP pipes do the work",
    "memory_bound": "raise the batch or fuse kernels: DRAM is the roof (decode-like work)",
    "io_bound": "overlap or shrink host/peer transfers: PCIe/NVLink is the roof",
    "busy_low_throughput": "fix the input pipeline, launch overhead or synchronization: every unit waits",
    "busy": "profile a step (nsys/ncu) to find the limiting unit",
}

# the classes whose time is thrown away (wasted), and those busy far from every roof (underused)
WASTED_CLASSES: tuple[str, ...] = ("idle_allocated", "unavailable")
UNDERUSED_CLASSES: tuple[str, ...] = ("busy_low_throughput", "memory_bound", "io_bound", "busy")


def thresholds(overrides: Mapping[str, Any] | None = None, *, where: str = "[tool.ridgeline.classes]") -> dict[str, float]:
    """:data:`CLASS_THRESHOLDS` with ``overrides`` applied, each checked (UsageError naming ``where``)."""
    from ridgeline import bounds
    from ridgeline.errors import UsageError

    th = dict(CLASS_THRESHOLDS)
    if not overrides:
        return th
    if not isinstance(overrides, Mapping):
        raise UsageError(f"{where} must be a table of thresholds, e.g. idle_engine_floor = 0.01")
    for key, value in overrides.items():
        if key not in th:
            raise UsageError(f"{where}: unknown class threshold {key!r} (known: {', '.join(sorted(th))})")
        th[key] = bounds.check(f"class_{key}", value, where=where, name=key)
    return th


def class_expr(th: Mapping[str, float] | None = None):
    """The polars expression giving each WINDOW row its class (see the module docstring)."""
    import polars as pl

    t = dict(CLASS_THRESHOLDS) if th is None else dict(th)
    engine = pl.col("gr_engine_active_mean_ratio")
    fb = pl.col("fb_used_max_bytes")
    tensor = pl.col("tensor_active_mean_ratio").fill_null(0.0)
    fp = pl.max_horizontal(pl.col("fp64_active_mean_ratio"), pl.col("fp32_active_mean_ratio"),
                           pl.col("fp16_active_mean_ratio")).fill_null(0.0)
    dram = pl.col("dram_active_mean_ratio").fill_null(0.0)
    sm = pl.coalesce(pl.col("sm_active_mean_ratio"), engine)
    io = pl.max_horizontal(
        pl.col("pcie_tx_mean_bytes_per_s").fill_null(0.0) + pl.col("pcie_rx_mean_bytes_per_s").fill_null(0.0),
        pl.col("nvlink_tx_mean_bytes_per_s").fill_null(0.0) + pl.col("nvlink_rx_mean_bytes_per_s").fill_null(0.0),
    )
    xids = pl.col("xid_codes").fill_null("").str.split(",")
    code = pl.element().str.strip_chars()
    critical_xid = xids.list.eval((code != "") & ~code.is_in([str(c) for c in APPLICATION_XIDS])).list.any()
    unavailable = (
        (pl.col("ecc_dbe_increase_count").fill_null(0) > 0)
        | pl.col("row_remap_failure").fill_null(False)
        | (pl.col("remapped_rows_uncorrectable_increase_count").fill_null(0) > 0)
        | critical_xid.fill_null(False)
    )
    # idle is judged on GR_ENGINE_ACTIVE, else on GPU-Util: a GPU-Util below the floor does prove that
    # no kernel ran (it is the busy classes GPU-Util cannot tell apart)
    idle = pl.coalesce(engine, pl.col("gpu_util_mean_ratio")) < t["idle_engine_floor"]
    low = t["low_activity"]
    return (
        pl.when(unavailable).then(pl.lit("unavailable"))
        .when(pl.col("excluded").is_not_null()).then(pl.lit("unknown"))
        .when(idle & (fb < t["allocated_fb_bytes"]).fill_null(False)).then(pl.lit("idle"))
        .when(idle).then(pl.lit("idle_allocated"))
        .when(engine.is_null()).then(pl.lit("unknown"))
        .when(tensor >= t["tensor_high"]).then(pl.lit("tensor_bound"))
        .when(fp >= t["fp_pipe_high"]).then(pl.lit("compute_bound"))
        .when(dram >= t["dram_high"]).then(pl.lit("memory_bound"))
        .when((io >= t["io_high_bytes_per_s"]) & (sm.fill_null(0.0) < t["sm_low"])).then(pl.lit("io_bound"))
        .when((sm.fill_null(0.0) < t["sm_low"]) & (dram < low) & (tensor < low) & (fp < low)).then(pl.lit("busy_low_throughput"))
        .otherwise(pl.lit("busy"))
        .alias("class")
    )


def classify(windows, th: Mapping[str, float] | None = None):
    """The WINDOW table with its ``class`` column (re)computed under thresholds ``th``."""
    return windows.with_columns(class_expr(th))


def reclassify(windows, overrides: Mapping[str, Any] | None):
    """``windows`` unchanged without ``overrides`` (``[tool.ridgeline.classes]``), else classified under them."""
    return windows if not overrides or windows is None else classify(windows, thresholds(overrides))


def hours_by_class(frame, *, weight: str = "span_s") -> dict[str, float]:
    """``{class: GPU-hours}`` over ``frame`` (rows with ``class`` and ``weight`` seconds), every class
    of :data:`CLASS_ORDER` present (0.0 when none), in that order."""
    import polars as pl

    if frame.height == 0 or "class" not in frame.columns:
        return {c: 0.0 for c in CLASS_ORDER}
    sums = dict(frame.group_by("class").agg((pl.col(weight).fill_null(0.0).sum() / 3600).alias("h")).iter_rows())
    return {c: float(sums.get(c, 0.0) or 0.0) for c in CLASS_ORDER}
