"""RL207 gpu-too-powerful: the what-if model run backwards from telemetry.

Expected GPUs are computed here from the catalogue's bandwidths and peaks with the stated model
(each unit's busy fraction x the ratio of peaks, the step stretching past 80% busy), not read
from the rule's output.
"""

from __future__ import annotations

from pathlib import Path

import pytest


from telemetry_cases import BUSY_NO_TENSOR, BUSY_TENSOR, GIB, gpu_series

from ridgeline.analyzer.kernels.gpus import catalogue, lookup
from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.analyzer.kernels.whatif import telemetry_stretch
from ridgeline.rules.base import Context
from ridgeline.rules.engine import run_rules

H100 = "NVIDIA H100 80GB HBM3"


def _rl207(df, **kw):
    return [f for f in run_rules(Context(windows=reduce_windows(df, window="5m")), family="telemetry", **kw)
            if f.code == "RL207"]


def _expected(dram: float, tensor: float, used: float, margin: float = 0.1) -> list[str]:
    src = lookup("H100 SXM")[0]
    out = []
    for g in catalogue():
        tc = g.peak("fp16_tensor")
        if g.name == src.name or g.vendor != src.vendor or not tc or tc >= src.peak("fp16_tensor") \
                or g.memory_bytes < used:
            continue
        now = max(1.0, dram / 0.8, tensor / 0.8)
        then = max(1.0, dram * 3.35e12 / g.dram_bw_bytes_per_s / 0.8, tensor * 989e12 / tc / 0.8)
        if then / now <= 1 + margin:
            out.append(g.name)
    return out


def test_memory_bound_h100_names_the_smaller_gpus_with_the_bandwidth():
    series = gpu_series(n=1800, model=H100, **dict(BUSY_NO_TENSOR, dram_active_ratio=0.6, fb_used_bytes=40 * GIB))
    (f,) = _rl207(series)
    expected = _expected(0.6, 0.03, 40 * GIB)
    assert "H20" in expected and "A10G" not in expected  # 4.0 TB/s holds 3.35 TB/s of traffic; 0.6 TB/s cannot
    stretch = {e.metric.split(":", 1)[1] for e in f.evidence if e.metric.startswith("stretch_on:")}
    assert stretch == set(expected)
    # an AMD GPU with the bandwidth (MI300A: 5.3 TB/s, less BF16 peak) is never offered to an NVIDIA fleet
    assert "MI300A" not in stretch and all(lookup(n)[0].vendor == "NVIDIA" for n in stretch)
    assert "(memory-bound)" in f.message and "within 10%" in f.message and f.subject == "host:node1 gpu:0"
    assert f.impact_s is None and f.severity == "info"


def test_a_gpu_that_needs_more_memory_than_a_candidate_has_is_not_sent_there():
    series = gpu_series(n=1800, model=H100, **dict(BUSY_NO_TENSOR, dram_active_ratio=0.6, fb_used_bytes=79e9))
    fs = _rl207(series)
    names = {e.metric.split(":", 1)[1] for f in fs for e in f.evidence if e.metric.startswith("stretch_on:")}
    assert "H20" in names and all(lookup(n)[0].memory_bytes >= 79e9 for n in names)


def test_quiet_when_tensor_cores_work_model_unknown_or_margin_zero():
    assert _rl207(gpu_series(n=1800, model=H100, **BUSY_TENSOR)) == []
    assert _rl207(gpu_series(n=1800, **dict(BUSY_NO_TENSOR, dram_active_ratio=0.6))) == []  # no model
    busy_memory = gpu_series(n=1800, model=H100, **dict(BUSY_NO_TENSOR, dram_active_ratio=0.75))
    # with no margin, only GPUs with at least the bandwidth qualify, and none smaller must stretch
    for f in _rl207(busy_memory, thresholds=["RL207.margin=0"]):
        for e in f.evidence:
            if e.metric.startswith("stretch_on:"):
                assert e.value <= 1.0


def test_stretch_follows_the_peaks():
    h100, h20, l4 = lookup("H100 SXM")[0], lookup("H20")[0], lookup("L4")[0]
    assert telemetry_stretch(h100, h100, dram_active=0.7, tensor_active=0.5) == pytest.approx(1.0)
    # DRAM at 70% of H100's 3.35 TB/s on L4's 0.3 TB/s: 7.8 busy-units / 0.8
    assert telemetry_stretch(h100, l4, dram_active=0.7, tensor_active=0.0) == pytest.approx(0.7 * 3.35 / 0.3 / 0.8)
    # tensor at 40% of 989 TFLOP/s on H20's 148: 2.67 / 0.8
    assert telemetry_stretch(h100, h20, dram_active=0.1, tensor_active=0.4) == pytest.approx(0.4 * 989 / 148 / 0.8)
    assert telemetry_stretch(h100, h20, dram_active=None, tensor_active=0.1) is None
