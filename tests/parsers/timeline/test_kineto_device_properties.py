"""The Kineto reader records the device properties that tell a GPU apart, under neutral keys.

The analyzer identifies a device with a generic name ("AMD Radeon Graphics") from them
(ridgeline.analyzer.kernels.identify); the parser imports no catalogue. Numbers may come as text
(ROCm builds write some so); a value that is no whole number > 0 is left out, never an error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ridgeline.parsers.timeline.kineto import device_properties
from ridgeline.parsers.timeline.reader import read_timeline

MI250 = {"id": 0, "name": "AMD Radeon Graphics", "totalGlobalMem": 68702699520, "computeMajor": 9, "computeMinor": 0,
         "maxThreadsPerBlock": 1024, "warpSize": 64, "numSms": 104, "maxSharedMemoryPerMultiProcessor": 65536}


def test_the_properties_of_a_rocm_device():
    assert device_properties(MI250) == {"unit_count": 104, "memory_bytes": 68702699520, "warp_size": 64,
                                        "compute_capability": "9.0"}
    assert device_properties(dict(MI250, gcnArchName="gfx90a:sramecc+:xnack-"))["gfx"] == "gfx90a:sramecc+:xnack-"


@pytest.mark.parametrize("change, missing", [
    ({"numSms": "104"}, None),  # a number written as text is a number
    ({"numSms": 0}, "unit_count"),
    ({"numSms": -4}, "unit_count"),
    ({"numSms": 104.5}, "unit_count"),
    ({"numSms": True}, "unit_count"),
    ({"totalGlobalMem": "lots"}, "memory_bytes"),
    ({"computeMinor": None}, "compute_capability"),
    ({"computeMajor": 1000}, "compute_capability"),
    ({"gcnArchName": 7}, None),
    ({"gcnArchName": "not a target"}, None),
])
def test_damaged_values_are_left_out(change, missing):
    got = device_properties(dict(MI250, **change))
    if missing:
        assert missing not in got
    assert "gfx" not in got
    assert set(got) <= {"unit_count", "memory_bytes", "warp_size", "compute_capability", "gfx"}


def test_the_reader_keeps_them_per_device(tmp_path):
    events = [{"ph": "X", "cat": "kernel", "name": "k", "pid": 1, "tid": 7, "ts": 10.0, "dur": 5.0,
               "args": {"device": 1, "stream": 7}}]
    props = [dict(MI250, id=1), {"id": 0, "name": "NVIDIA H100 80GB HBM3"}, {"id": "x", "numSms": 5}]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"deviceProperties": props, "traceEvents": events}))
    tl = read_timeline(path)
    assert tl.devices == {1: "AMD Radeon Graphics", 0: "NVIDIA H100 80GB HBM3"}
    assert tl.device_properties == {1: device_properties(MI250)}


SAMPLE = Path(__file__).resolve().parents[4] / "shared" / "samples" / "kineto" / \
    "hta-mi250-rocm6.2-minitoy-train-radeon-names.json.gz"


@pytest.mark.skipif(not SAMPLE.is_file(), reason="../shared/samples is absent")
def test_the_shared_mi250_trace():
    tl = read_timeline(SAMPLE)
    assert set(tl.devices.values()) == {"AMD Radeon Graphics"}
    assert tl.device_properties == {i: {"unit_count": 104, "memory_bytes": 68702699520, "warp_size": 64,
                                        "compute_capability": "9.0"} for i in range(4)}
