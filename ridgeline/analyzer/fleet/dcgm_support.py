"""Which GPUs can report DCGM's profiling fields (``DCGM_FI_PROF_*``: GR_ENGINE, SM, tensor and
DRAM activity), from the model name telemetry records.

DCGM's profiling module (DCP) serves datacenter GPUs of Volta and newer (the Tesla line, A/H/B/L
series, T4), Quadro RTX and Titan V/RTX (dcgm-exporter issue #5, NVIDIA's answer). It does not
serve GeForce cards, GPUs older than Volta (P100, P4, K80, M60) or a vGPU's guest (``GRID
A100-10C``, an ``A100-4C`` profile): there the fields stay absent whatever the exporter's counters
file asks for, so a remedy that asks to enable them fits no such GPU.
"""

from __future__ import annotations

import re

# model name -> (why DCGM profiling fields cannot be had there, what to do instead); the first
# pattern that matches
UNSUPPORTED = (
    (re.compile(r"\bGRID\b|\b[A-Z]?\d{2,3}[A-Z]?-\d+[ABCQ]\b", re.I),
     "a vGPU guest: DCGM does not expose profiling fields to virtual GPUs",
     "Nothing to enable in the guest: read tensor and DRAM activity from DCGM on the hypervisor host (or a "
     "passthrough GPU), or profile the job with Nsight Compute where the vGPU has profiling enabled."),
    (re.compile(r"\bGeForce\b|\bGTX\b", re.I),
     "a GeForce GPU: DCGM profiling fields need a datacenter, Quadro RTX or Titan GPU",
     "Nothing to enable on a GeForce GPU: for tensor and DRAM activity profile the job with Nsight Systems "
     "(nsys profile --gpu-metrics-devices=all) or Nsight Compute."),
    (re.compile(r"\b(Tesla|Quadro)\s+[PKM]\d{1,3}\b|^[PKM]\d{1,3}\b", re.I),
     "older than Volta: DCGM profiling fields need compute capability 7.0 or newer",
     "Nothing to enable on these GPUs: only GPU-Util-based rules apply; a Volta or newer GPU reports tensor and "
     "DRAM activity."),
)
ENABLE = ("Collect DCGM_FI_PROF_GR_ENGINE_ACTIVE, PIPE_TENSOR_ACTIVE and DRAM_ACTIVE with DCGM (the dcgm-exporter "
          "counters file, or dcgmi dmon -e 1001,1004,1005); nvidia-smi does not report them.")


def profiling_unsupported(model: str | None) -> tuple[str, str] | None:
    """``(why, remedy)`` when the GPU named ``model`` cannot report DCGM profiling fields; None when
    it can or the model is unknown (then the fields were not collected, and :data:`ENABLE` fits)."""
    if not model:
        return None
    for pattern, why, remedy in UNSUPPORTED:
        if pattern.search(model):
            return why, remedy
    return None
