"""A device whose name says nothing is identified from the properties recorded with it.

Properties as the Kineto reader records them (ridgeline.parsers.timeline.kineto.device_properties):
unit_count (numSms: SMs, or CUs on ROCm), memory_bytes (totalGlobalMem), compute_capability
(computeMajor.computeMinor), warp_size, gfx (gcnArchName). The MI250 ones are the shared ROCm 6.2
trace's: 104 CUs, 68,702,699,520 bytes, 9.0, 64.
"""

from __future__ import annotations

import json

import pytest

from ridgeline.analyzer.kernels.identify import describe, identification_notes, identify, same_roofs, vendor_of

GIB = 2**30
MI250 = {"unit_count": 104, "memory_bytes": 68702699520, "compute_capability": "9.0", "warp_size": 64}


def test_the_mi250_traces_devices_are_one_gcd_or_an_mi210_with_the_same_roofs():
    found = identify("AMD Radeon Graphics", MI250)
    assert found.how == "properties" and found.gpu.name == "MI250 GCD"
    assert found.label == "MI250 GCD / MI210" and found.candidates == ("MI250 GCD", "MI210")
    assert "identified from its properties (104 CUs, 64.0 GiB, HIP 9.0, wavefront 64)" in found.note
    assert "not from its name" in found.note and "the same roofs" in found.note


@pytest.mark.parametrize("props, expected", [
    ({"unit_count": 110, "memory_bytes": 64 * GIB, "compute_capability": "9.0", "warp_size": 64}, "MI250X GCD"),
    ({"unit_count": 304, "memory_bytes": 192 * GIB, "compute_capability": "9.4", "warp_size": 64}, "MI300X"),
    ({"unit_count": 304, "memory_bytes": 256 * GIB, "compute_capability": "9.4", "warp_size": 64}, "MI325X"),
    ({"unit_count": 228, "memory_bytes": 128 * GIB, "compute_capability": "9.4", "warp_size": 64}, "MI300A"),
    ({"unit_count": 120, "memory_bytes": 32 * GIB, "compute_capability": "9.0", "warp_size": 64}, "MI100"),
    ({"unit_count": 304, "gfx": "gfx942:sramecc+:xnack-", "memory_bytes": 192 * GIB}, "MI300X"),  # no warp size: the gfx says AMD
])
def test_a_unique_match_is_identified(props, expected):
    found = identify("AMD Radeon Graphics", props)
    assert found.how == "properties" and found.gpu.name == expected and found.label == expected
    assert found.candidates == (expected,)


def test_parts_that_differ_only_in_clock_are_not_guessed():
    """MI350X and MI355X: 256 CUs, 288 GiB, gfx950 each; their roofs differ by the clock."""
    found = identify("AMD Radeon Graphics", {"unit_count": 256, "memory_bytes": 288 * GIB, "compute_capability": "9.5",
                                             "warp_size": 64})
    assert found.gpu is None and found.how == "none"
    assert set(found.candidates) == {"MI350X", "MI355X"} and "roofs differ" in found.note and "--gpu" in found.note


def test_nvidia_generic_name_with_several_132_sm_hopper_parts_is_not_guessed():
    """'NVIDIA Graphics Device' with 132 SMs, CC 9.0, 80 GB: H100 SXM and H800 (FP64 cut) both fit."""
    found = identify("NVIDIA Graphics Device", {"unit_count": 132, "memory_bytes": 85_031_714_816,
                                                "compute_capability": "9.0", "warp_size": 32})
    assert found.gpu is None and {"H100 SXM", "H800"} <= set(found.candidates)


@pytest.mark.parametrize("props, why", [
    ({"unit_count": 38, "memory_bytes": 48 * GIB, "compute_capability": "9.4", "warp_size": 64}, "no catalogue GPU"),  # CPX
    ({"unit_count": 104, "memory_bytes": 32 * GIB, "compute_capability": "9.0", "warp_size": 64}, "no catalogue GPU"),
    ({"unit_count": 104, "gfx": "gfx942", "warp_size": 64}, "no catalogue GPU"),
    # HIP's 9.0 is not CUDA's: 132 units at "9.0" with wavefronts of 64 is no H100
    ({"unit_count": 132, "compute_capability": "9.0", "warp_size": 64}, "no catalogue GPU"),
    ({"memory_bytes": 64 * GIB, "warp_size": 64}, "no unit count"),
    ({}, "no unit count"),
])
def test_no_match_is_said(props, why):
    found = identify("AMD Radeon Graphics", props)
    assert found.gpu is None and found.how == "none" and why in found.note and "--gpu" in found.note


def test_a_shared_name_chooses_among_its_own_parts_only():
    """'AMD Instinct MI250X/MI250': 104 CUs is the MI250 GCD (not the MI210, which the name excludes)."""
    found = identify("AMD Instinct MI250X/MI250", MI250)
    assert found.gpu.name == "MI250 GCD" and found.label == "MI250 GCD" and "shared by several GPUs" in found.note
    assert identify("AMD Instinct MI250X/MI250", dict(MI250, unit_count=110)).gpu.name == "MI250X GCD"
    assert identify("AMD Instinct MI250X/MI250").gpu is None


def test_a_specific_name_wins_and_an_unknown_one_is_not_guessed():
    found = identify("AMD Instinct MI300X", {"unit_count": 38, "warp_size": 64})
    assert found.how == "name" and found.gpu.name == "MI300X"
    # a name the catalogue lacks is another part, even when its properties fit a known one
    unknown = identify("AMD Instinct MI399X", {"unit_count": 304, "memory_bytes": 192 * GIB, "warp_size": 64})
    assert unknown.gpu is None and "not in the GPU catalogue" in unknown.note


def test_vendor_and_description():
    assert vendor_of("AMD Radeon Graphics", {}) == "AMD" and vendor_of(None, {"warp_size": 64}) == "AMD"
    assert vendor_of("Graphics Device", {"warp_size": 32}) == "NVIDIA" and vendor_of("Graphics Device", {}) is None
    assert describe(MI250, "AMD") == "104 CUs, 64.0 GiB, HIP 9.0, wavefront 64"


def test_same_roofs_within_datasheet_rounding_only():
    from ridgeline.analyzer.kernels.gpus import lookup

    assert same_roofs([lookup("MI250")[0], lookup("MI210")[0]])
    assert not same_roofs([lookup("MI350X")[0], lookup("MI355X")[0]])
    assert not same_roofs([lookup("MI250")[0], lookup("MI250X")[0]])


def test_notes_group_devices_and_skip_specific_names():
    names = {0: "AMD Radeon Graphics", 1: "AMD Radeon Graphics", 2: "AMD Instinct MI300X", 3: "AMD Radeon Graphics"}
    props = {0: MI250, 1: MI250, 3: {"unit_count": 38, "warp_size": 64}}
    notes = identification_notes(names, props, source="t.json")
    assert len(notes) == 2
    assert notes[0].startswith("t.json: device 'AMD Radeon Graphics' identified") and notes[0].endswith("(devices 0, 1)")
    assert "no catalogue GPU" in notes[1] and notes[1].endswith("(device 3)")
    assert identification_notes(names, props, source="t.json", devices=[2]) == []
    assert identification_notes(names, props, source="t.json", devices=[5]) == []  # named nowhere: no note


def test_an_analysis_of_a_rocm_trace_says_the_gpu_came_from_its_properties(tmp_path, capsys):
    """End to end: a Kineto trace as ROCm 6.2 writes it (generic names, deviceProperties with the
    MI250's figures); the note is in the terminal and JSON views."""
    from ridgeline.cli import main

    props = {"name": "AMD Radeon Graphics", "totalGlobalMem": 68702699520, "computeMajor": 9, "computeMinor": 0,
             "warpSize": 64, "numSms": 104, "maxSharedMemoryPerMultiProcessor": 65536}
    events = [{"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 2, "tid": 7, "ts": 1000.0 + 50 * i, "dur": 20.0,
               "args": {"device": 2, "stream": 7, "correlation": i}} for i in range(5)]
    path = tmp_path / "rocm.json"
    path.write_text(json.dumps({"schemaVersion": 1, "deviceProperties": [dict(props, id=i) for i in range(4)],
                                "traceEvents": events}))
    with pytest.raises(SystemExit):
        main(["analyze", str(path), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    notes = [n for n in doc["notes"] if "identified from its properties" in n]
    assert len(notes) == 1 and "as MI250 GCD / MI210" in notes[0] and notes[0].endswith("(device 2)")
    with pytest.raises(SystemExit):
        main(["analyze", str(path)])
    assert "identified from its properties" in " ".join(capsys.readouterr().out.split())
