"""RL103 on kernels that do no arithmetic at all (copies, transposes, gathers).

Such a kernel sits at intensity 0 and has no compute roof or ridge of its own (the classifier
leaves ``ridge_flop_per_byte`` null when there is no dominant precision), but the bandwidth roof
is still the only roof it has: a strided copy at 30% of peak bandwidth is the classic case.
"""

from __future__ import annotations

from pathlib import Path

import pytest


from rule_cases import label, H100_BW, launch, run  # noqa: E402

from ridgeline.rules.engine import get_rule  # noqa: E402


def _copy(bytes_moved: float, duration_s: float) -> dict:
    return launch(
        "strided_copy_kernel",
        duration_s=duration_s,
        flops=0.0,
        dram_bytes=bytes_moved,
        precision=None,
        peak_flops=None,
        intensity_dram=0.0,
        achieved_dram_bytes_per_s=bytes_moved / duration_s,
        bound="memory",
        roof_fraction=bytes_moved / duration_s / H100_BW,
        time_to_roof_s=bytes_moved / H100_BW,
    )


def test_copy_kernel_far_below_bandwidth_roof_fires():
    # 1.005e9 B in 1 ms = 1.005 TB/s = 30% of 3.35 TB/s
    (f,) = run(get_rule("RL103"), [_copy(1.005e9, 1e-3)])
    assert f.subject == label("strided_copy_kernel")
    assert "= 30% of the 3.35 TB/s roof" in f.message
    assert f.impact_s == pytest.approx(1e-3 - 1.005e9 / H100_BW)


def test_copy_kernel_near_bandwidth_roof_is_quiet():
    # 3.0e9 B in 1 ms = 3.0 TB/s = 90% of the roof
    assert run(get_rule("RL103"), [_copy(3.0e9, 1e-3)]) == []
