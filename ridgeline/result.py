"""The finished analysis that renderers consume (terminal, JSON, HTML, plots).

Renderers take an :class:`AnalysisResult` and never parse or classify. ``ridgeline.pipeline``
builds it: inputs -> parsers -> classifier -> rules -> AnalysisResult.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

JSON_SCHEMA_VERSION = "1.7"

_SURROGATE = re.compile("[\ud800-\udfff]")


def path_label(path) -> str:
    """The text of an input's path wherever it is a label (a table's ``source``, the inputs and
    skipped lists): ``os.fsdecode``'s, with each byte of the file name that is not UTF-8 (Python
    holds it as a lone surrogate, ``\\udcff`` for 0xff, which polars and every UTF-8 writer
    refuse) written as the text of its escape, ``\\udcff``, the spelling
    :mod:`ridgeline.render.safe_text` gives a surrogate in any output. The file itself is opened
    by its real path, never by this text. Idempotent; a name that is UTF-8 is unchanged."""
    import os

    text = os.fsdecode(path)
    if not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclasses.dataclass(frozen=True)
class Roof:
    """One ceiling of the roofline that was actually used.

    kind: ``"compute"`` (FLOP/s, ``precision`` set) or ``"bandwidth"`` (byte/s, ``level`` set).
    source: ``"ncu"`` (peak the profiler measured, at the clock it ran), ``"ncu-device-attributes"``
    (theoretical from recorded clocks and bus width), ``"catalogue"`` (datasheet) or
    ``"derived-from-device-attributes"`` (a GPU the catalogue lacks: SMs x per-SM rate x clock).
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
    count: int = 1  # items this entry stands for: N for "N more like this" (ridgeline.skiplog)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        if d["count"] == 1:  # the usual entry: {source, item, reason} as before
            del d["count"]
        return d


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
    timeline: Any = None  # ridgeline.analyzer.timeline.busy.TimelineAnalysis or None
    # --what-if projections (list[ridgeline.analyzer.kernels.whatif.Projection]), one per spec, in order
    what_if: list = dataclasses.field(default_factory=list)
    # {source: (samples, null values)} of the telemetry long table (ridgeline.analyzer.accounting)
    sample_counts: Any = None
    # ridgeline.analyzer.fleet.groups.GroupReport of telemetry --by / --jobs, or None
    groups: Any = None

    def ridge(self, precision: str, path: str | None = None) -> float | None:
        """Ridge point (FLOP/byte) of the first compute roof of ``precision`` (and tensor ``path``
        when given) against the DRAM roof, as :func:`roof_ridges` computes it for every view."""
        for r, ridge in zip(self.roofs, roof_ridges(self.roofs)):
            if r.kind == "compute" and r.precision == precision and (path is None or r.path == path):
                return ridge
        return None


# the device a measured roof's provenance names: "median of 4 launches on NVIDIA H200: ..."
_DEVICE = re.compile(r" on (.+?)(?::|,|$)")


def roof_device(roof: Roof) -> str | None:
    """The device a roof was measured on (None: a catalogue roof or an unnamed device)."""
    m = _DEVICE.search(roof.detail or "")
    return m.group(1) if m else None


def roof_ridges(roofs) -> list[float | None]:
    """Ridge point (FLOP/B) of each roof, in order: a compute roof over the DRAM bandwidth roof of
    the same device (each tensor path its own ridge); a catalogue roof, which names no device, over
    the input's DRAM roof when there is just one; None for bandwidth roofs and where that DRAM roof
    is missing or not unique. Every view prints these (ridgeline.render.facts)."""
    roofs = list(roofs or ())
    bw: dict[str | None, set[float]] = {}
    for r in roofs:
        if r.kind == "bandwidth" and (r.level or "dram") == "dram" and r.value:
            bw.setdefault(roof_device(r), set()).add(float(r.value))
    everywhere = set().union(*bw.values()) if bw else set()
    out: list[float | None] = []
    for r in roofs:
        device = roof_device(r)
        dram = bw.get(device) or (everywhere if device is None else set())
        out.append(float(r.value) / next(iter(dram)) if r.kind == "compute" and len(dram) == 1 else None)
    return out
