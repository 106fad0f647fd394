"""Every input format ridgeline reads, in one table: the detectors' ids and how users know them.

The "expected ..." part of the error for a file no reader claims (``pipeline._why_not_recognized``,
an empty input folder, ``read_timeline``) is generated from :data:`FORMATS`, so it lists every
format and cannot drift from the readers: ``tests/parsers/timeline/test_timeline_facts.py`` checks that every id a
detector can return (``pipeline.detect``: ``ncu``, ``timeline`` and ``telemetry`` kinds) has a row
here and that every row is named in the message.

Rows: detector id -> (family, what the user calls it). Ids are ``<detect kind>:<format>`` as
:func:`ridgeline.pipeline.detect` returns them; families are printed in the order below.
"""

from __future__ import annotations

FAMILIES = {
    "ncu": "an Nsight Compute export",
    "nsys": "an Nsight Systems export",
    "kineto": "a PyTorch profiler trace",
    "amd": "an AMD ROCm profiler output",
    "telemetry": "GPU telemetry",
}

FORMATS: dict[str, tuple[str, str]] = {
    "ncu:raw": ("ncu", "ncu --csv --page raw"),
    "ncu:details": ("ncu", "ncu --csv details page"),
    "ncu:report": ("ncu", ".ncu-rep report"),
    "timeline:nsys-sqlite": ("nsys", "nsys export --type sqlite"),
    "timeline:nsys-stats:cuda_gpu_trace": ("nsys", "nsys stats CSV: cuda_gpu_trace"),
    "timeline:nsys-stats:cuda_gpu_kern_sum": ("nsys", "cuda_gpu_kern_sum or the GUI's kernel summary"),
    "timeline:nsys-stats:cuda_kern_exec_sum": ("nsys", "cuda_kern_exec_sum"),
    "timeline:nsys-stats:cuda_api_sum": ("nsys", "cuda_api_sum"),
    "timeline:nsys-stats:cuda_gpu_mem_time_sum": ("nsys", "cuda_gpu_mem_time_sum"),
    "timeline:nsys-stats:nvtx_sum": ("nsys", "nvtx_sum"),
    "timeline:kineto": ("kineto", "Chrome trace JSON, object or array form, .json or .json.gz"),
    "timeline:rocprof-v1-csv": ("amd", "rocprof kernel trace results.csv"),
    "timeline:rocprof-v1-json": ("amd", "rocprof --hip-trace JSON"),
    "timeline:rocprof-stats": ("amd", "rocprof stats CSV"),
    "timeline:rocprofv3-kernel-trace": ("amd", "rocprofv3 kernel_trace.csv"),
    "timeline:rocpd": ("amd", "rocpd SQLite database"),
    "timeline:rocprofiler-sdk-json": ("amd", "rocprofiler-sdk JSON"),
    "telemetry:dcgm-dmon": ("telemetry", "dcgmi dmon"),
    "telemetry:dcgm-exporter": ("telemetry", "dcgm-exporter scrape"),
    "telemetry:prometheus-json": ("telemetry", "Prometheus JSON"),
    "telemetry:nvidia-smi-csv": ("telemetry", "nvidia-smi CSV"),
    "telemetry:nvidia-smi-dmon": ("telemetry", "nvidia-smi dmon"),
    "telemetry:telemetry-csv": ("telemetry", "a telemetry CSV"),
    "telemetry:telemetry-parquet": ("telemetry", "Parquet"),
}


def describe_formats(families: tuple[str, ...] | None = None) -> str:
    """``an Nsight Compute export (ncu --csv --page raw, ...), ..., or GPU telemetry (...)``."""
    parts = []
    for fam, label in FAMILIES.items():
        if families is not None and fam not in families:
            continue
        names = [what for f, what in FORMATS.values() if f == fam]
        parts.append(f"{label} ({', '.join(names)})")
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " or " + parts[-1]
    return parts[0] if parts else ""


def expected_formats(families: tuple[str, ...] | None = None) -> str:
    return "expected " + describe_formats(families)
