"""Data-quality rules RL9xx: a firing and a quiet case each, numbers computed by hand."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rule_cases import launch, run  # noqa: E402

from ridgeline.rules.engine import get_rule  # noqa: E402

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"


# ------------------------------------------------------------------- RL901
def test_rl901_fires_and_names_missing_counters_and_hint():
    rows = [
        launch("flash_fwd_kernel", duration_s=1e-3, flops=None, dram_bytes=1e9),
        launch("flash_fwd_kernel", duration_s=1e-3, flops=None, dram_bytes=None),
        launch(GEMM, duration_s=2e-3, flops=8e9, dram_bytes=1e9),
    ]
    (f,) = run(get_rule("RL901"), rows)
    assert f.code == "RL901" and f.subject == "profile" and f.subject_kind == "profile"
    # 2 ms of 4 ms = 50% >= critical_time_share 0.5
    assert f.severity == "critical"
    assert f.message == (
        "FLOP or byte counters missing for 2 launches of 1 kernel holding 50% of GPU time (>= 5%): "
        "flops_tensor, dram_bytes"
    )
    assert f.remedy == "Collect what is missing and re-run: ncu --set roofline."
    assert f.impact_s is None  # unknown, not zero
    ev = {e.metric: e.value for e in f.evidence}
    assert ev["launches_missing_flops_tensor"] == 2 and ev["launches_missing_dram_bytes"] == 1
    assert ev["largest_unclassified_kernel"] == "flash_fwd_kernel"


def test_rl901_warning_below_critical_share_and_launch_basis_without_durations():
    rows = [launch("k", duration_s=1e-3, flops=None, dram_bytes=1e9)] + [
        launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9) for _ in range(9)
    ]
    (f,) = run(get_rule("RL901"), rows)
    assert f.severity == "warning" and "holding 10% of GPU time" in f.message
    rows = [launch("k", duration_s=None, flops=None, dram_bytes=None), launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9)]
    (f,) = run(get_rule("RL901"), rows)
    # the unclassified launch has no duration: its share is counted in launches, 1 of 2
    assert f.message.endswith("1 launch of 1 kernel holding 50% of launches (>= 5%): dram_bytes, duration_s, flops_tensor")


def test_rl901_quiet_when_complete_or_negligible():
    complete = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9)]
    assert run(get_rule("RL901"), complete) == []
    # 0.04 ms of 100.04 ms = 0.04% < 5%
    rows = complete * 100 + [launch("k", duration_s=0.04e-3, flops=None, dram_bytes=1e3)]
    assert run(get_rule("RL901"), rows) == []
