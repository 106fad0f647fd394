"""The finished analysis that renderers consume (terminal, JSON, HTML, plots).

Renderers take an :class:`AnalysisResult` and never parse or classify. ``ridgeline.pipeline``
builds it: inputs -> parsers -> classifier -> rules -> AnalysisResult.
"""

from __future__ import annotations

import dataclasses
from typing import Any

JSON_SCHEMA_VERSION = "1.5"


@dataclasses.dataclass(frozen=True)
class Roof:
    """One ceiling of the roofline that was actually used.

    kind: ``"compute"`` (FLOP/s, ``precision`` set) or ``"bandwidth"`` (byte/s, ``level`` set).
    source: ``"ncu"`` (peak the profiler measured, at the clock it ran), ``"ncu-device-attributes"``
    (theoretical from recorded clocks and bus width) or ``"catalogue"`` (datasheet).
    """

    kind: str
    value: float
    source: str
    precision: str | None = None  # fp64, fp32, fp16, tf32_tensor, fp16_tensor, fp8_tensor, int8_tensor, fp64_tensor
    level: str | None = None  # dram, l2, l1
    path: str | None = None  # tensor instruction path the roof is for: hgmma, hmma, hgmma+hmma (null: any)
    detail: str | None = None  # e.g. "dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second"

    @property
    def unit(self) -> str:
        return "FLOP/s" if self.kind == "compute" else "B/s"

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["unit"] = self.unit
        return d


@dataclasses.dataclass(frozen=True)
class InputInfo:
    path: str
    kind: str  # ncu-raw, ncu-details, dcgm-dmon, dcgm-exporter, prometheus-json, nvidia-smi-csv, ...
    rows: int  # launches or samples read


@dataclasses.dataclass(frozen=True)
class Skipped:
    """An input item that was not analyzed, and why (nothing is dropped silently)."""

    source: str
    item: str  # "launch 12 (kernel foo)", "line 40", "series DCGM_FI_... gpu=3"
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass
class AnalysisResult:
    inputs: list[InputInfo] = dataclasses.field(default_factory=list)
    gpu_name: str | None = None  # catalogue name used, e.g. "H100 SXM"
    gpu_match: str | None = None  # how it was chosen: "device name 'NVIDIA H100 80GB HBM3'", "--gpu h100"
    roofs: list[Roof] = dataclasses.field(default_factory=list)
    kernels: Any = None  # polars DataFrame, ROOFLINE table (one row per launch)
    summary: Any = None  # polars DataFrame, SUMMARY table (one row per kernel name)
    telemetry: Any = None  # polars DataFrame, TELEMETRY-shaped plot frame (ridgeline.pipeline.plot_telemetry:
    # plotted fields only, means over <= 1500 time bins per GPU) or None; the full table is never kept
    windows: Any = None  # polars DataFrame, per-GPU/per-window reduction or None
    findings: list = dataclasses.field(default_factory=list)  # list[ridgeline.rules.base.Finding]
    skipped: list[Skipped] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)  # e.g. "GPU 'H100' -> 'H100 SXM' (most common variant)"
    total_gpu_time_s: float | None = None
    ncu_rules: Any = None  # polars DataFrame, NCU_RULES table (ncu's own rule results from .ncu-rep) or None
    timeline: Any = None  # ridgeline.analyzer.timeline.TimelineAnalysis or None
    # --what-if projections (list[ridgeline.analyzer.whatif.Projection]), one per spec, in order
    what_if: list = dataclasses.field(default_factory=list)
    # {source: (samples, null values)} of the telemetry long table (ridgeline.analyzer.accounting)
    sample_counts: Any = None

    def ridge(self, precision: str, level: str = "dram") -> float | None:
        """Ridge point (FLOP/byte) for a precision against a memory level, from the roofs used."""
        compute = next((r for r in self.roofs if r.kind == "compute" and r.precision == precision), None)
        bw = next((r for r in self.roofs if r.kind == "bandwidth" and r.level == level), None)
        if compute is None or bw is None or not bw.value:
            return None
        return compute.value / bw.value
