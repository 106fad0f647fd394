"""ridgeline.render.facts: the ridge of each roof, computed once for every view (issue 20, item 10)."""

from __future__ import annotations

import types

import pytest

from ridgeline.render.facts import roof_ridges, time_by_bound
from ridgeline.result import Roof


def _result(*roofs, kernels=None, summary=None):
    return types.SimpleNamespace(roofs=list(roofs), kernels=kernels, summary=summary)


def _on(device):
    return f"median of 3 launches on {device}: peak"


def test_each_tensor_path_has_its_own_ridge():
    """H100 fixture figures: wgmma 989 TFLOP/s and mma.sync 660 TFLOP/s over 3.35 TB/s."""
    bw = Roof("bandwidth", 3.35e12, "ncu", level="dram", detail=_on("NVIDIA H100 80GB HBM3"))
    wgmma = Roof("compute", 989e12, "ncu", precision="fp16_tensor", path="hgmma", detail=_on("NVIDIA H100 80GB HBM3"))
    mma = Roof("compute", 660e12, "ncu", precision="fp16_tensor", path="hmma", detail=_on("NVIDIA H100 80GB HBM3"))
    assert roof_ridges(_result(bw, wgmma, mma)) == [None, pytest.approx(989 / 3.35), pytest.approx(660 / 3.35)]


def test_each_device_uses_its_own_bandwidth():
    a = Roof("bandwidth", 3.35e12, "ncu", level="dram", detail=_on("NVIDIA H100 80GB HBM3"))
    b = Roof("bandwidth", 4.8e12, "ncu", level="dram", detail=_on("NVIDIA H200"))
    l2 = Roof("bandwidth", 10e12, "ncu", level="l2", detail=_on("NVIDIA H200"))
    ca = Roof("compute", 989e12, "ncu", precision="fp16_tensor", detail=_on("NVIDIA H100 80GB HBM3"))
    cb = Roof("compute", 989e12, "ncu", precision="fp16_tensor", detail=_on("NVIDIA H200"))
    assert roof_ridges(_result(a, b, l2, ca, cb)) == [None, None, None, pytest.approx(989 / 3.35),
                                                      pytest.approx(989 / 4.8)]


def test_a_datasheet_roof_meets_the_only_dram_roof():
    bw = Roof("bandwidth", 3.0e12, "ncu-device-attributes", level="dram", detail=_on("NVIDIA H100 PCIe"))
    cat = Roof("compute", 756e12, "catalogue", precision="fp16_tensor", detail="H100 PCIe datasheet")
    assert roof_ridges(_result(bw, cat)) == [None, pytest.approx(252.0)]
    # two different DRAM roofs and a roof naming no device: no ridge rather than a guess
    other = Roof("bandwidth", 2.0e12, "ncu", level="dram", detail=_on("NVIDIA A100"))
    assert roof_ridges(_result(bw, other, cat))[2] is None
    # no DRAM roof at all
    assert roof_ridges(_result(cat)) == [None]


def test_time_by_bound_counts_a_missing_bound_as_unknown():
    import polars as pl

    k = pl.DataFrame({"bound": ["memory", "compute", None, "latency"], "duration_s": [3.0, 1.0, 0.5, 0.5]})
    assert time_by_bound(_result(kernels=k)) == {"memory": 0.6, "compute": 0.2, "unknown": 0.1, "latency": 0.1}
    assert time_by_bound(_result(kernels=k.with_columns(pl.lit(None, dtype=pl.Float64).alias("duration_s")))) == {}


def test_gpu_label_names_the_catalogue_gpu_else_the_recorded_devices():
    """Issue 37 item 1: one GPU name for every view and the JSON's gpu.label."""
    import polars as pl

    from ridgeline.render.facts import UNKNOWN_GPU, gpu_label, gpu_title

    k = pl.DataFrame({"device_name": ["NVIDIA A100-SXM4-80GB", None], "duration_s": [1.0, 1.0]})
    tl = types.SimpleNamespace(devices=pl.DataFrame({"device_name": ["NVIDIA B200", "NVIDIA B200"]}))
    w = pl.DataFrame({"host": ["a", "a", "b"], "gpu": [0, 1, 0], "gpu_instance": [None, None, None],
                      "model": [None, None, None]}, schema_overrides={"gpu_instance": pl.String, "model": pl.String})

    def res(**kw):
        base = dict(gpu_name=None, kernels=None, timeline=None, windows=None, telemetry=None)
        return types.SimpleNamespace(**{**base, **kw})

    assert gpu_label(res(gpu_name="H100 SXM", kernels=k)) == "H100 SXM"
    assert gpu_label(res(kernels=k, timeline=tl)) == "NVIDIA A100-SXM4-80GB, NVIDIA B200"
    assert gpu_label(res(windows=w)) == "3 GPUs (model not recorded)"
    assert gpu_label(res()) is None and gpu_title(res()) == UNKNOWN_GPU
