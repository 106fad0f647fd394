"""Data-quality rules RL9xx: a firing and a quiet case each, numbers computed by hand."""

from __future__ import annotations

from pathlib import Path


from rule_cases import label, launch, run  # noqa: E402

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
    # missing counters are no fault in the work: a warning, whatever their share, unless configured
    assert f.severity == "warning"
    (f,) = run(get_rule("RL901"), rows, overrides={"critical_time_share": 0.5})
    # 2 ms of 4 ms = 50% >= critical_time_share 0.5
    assert f.severity == "critical"
    assert f.message == (
        "roofline inputs missing for 2 launches of 1 kernel holding 50% of GPU time (>= 5%): "
        "flops_tensor, dram_bytes"
    )
    assert f.remedy == "Re-profile with ncu --set roofline."
    assert f.impact_s is None  # unknown, not zero
    ev = {e.metric: e.value for e in f.evidence}
    assert ev["launches_missing_flops_tensor"] == 2 and ev["launches_missing_dram_bytes"] == 1
    assert ev["largest_unclassified_kernel"] == label("flash_fwd_kernel")


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


# ------------------------------------------------------------------- RL902
def test_rl902_fires_above_the_roof():
    # 1300e9 FLOP in 1 ms = 1300 TFLOP/s at AI 2600 (compute side): 1300 / 989 = 131%
    rows = [launch(GEMM, duration_s=1e-3, flops=1300e9, dram_bytes=0.5e9) for _ in range(4)]
    (f,) = run(get_rule("RL902"), rows)
    assert f.subject == label(GEMM)
    assert f.message == (
        "4 of 4 launches above the roof, up to 131% of it (tolerance 105%): the counters or the peak are wrong"
    )
    assert {e.metric: e.value for e in f.evidence}["launches_above_roof"] == 4


def test_rl902_quiet_within_tolerance():
    rows = [launch(GEMM, duration_s=1e-3, flops=1020e9, dram_bytes=0.5e9)]  # 103%
    assert run(get_rule("RL902"), rows) == []
    assert run(get_rule("RL902"), rows, overrides={"tolerance": 0.01})[0].code == "RL902"


# ------------------------------------------------------------------- RL903
def test_rl903_fires_on_datasheet_roofs():
    rows = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9)]
    (f,) = run(get_rule("RL903"), rows, extra={"gpu_match": "device name 'NVIDIA H100 80GB HBM3'"})
    assert f.subject == "gpu:H100 SXM" and f.severity == "info" and f.subject_kind == "gpu"
    assert f.message == (
        "roofs for H100 SXM come from the datasheet for 100% of GPU time: "
        "compute (bf16/fp16 989 TFLOP/s), bandwidth (3.35 TB/s)"
    )
    assert {e.metric: e.source for e in f.evidence}["peak_bw_bytes_per_s"] == "catalogue"


def test_rl903_quiet_on_measured_roofs():
    rows = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9, peak_source="ncu")]
    assert run(get_rule("RL903"), rows) == []


# ------------------------------------------------------------------- RL904
def test_rl904_fires_when_recorded_peak_is_far_below_datasheet():
    rows = [
        launch(GEMM, duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, peak_flops=700e12, peak_source="ncu",
               sm_clock_hz=1.2e9)
    ]
    (f,) = run(get_rule("RL904"), rows)
    # 700 / 989 = 70.8%
    assert f.message == (
        "ncu-recorded bf16/fp16 peak 700 TFLOP/s = 71% of the datasheet 989 TFLOP/s on H100 SXM (< 85%) "
        "at SM clock 1.2 GHz: clocks were locked or throttled"
    )
    assert "--clock-control none" in f.remedy


def test_rl904_quiet_near_datasheet_or_without_measured_peaks():
    near = [launch(GEMM, duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, peak_flops=950e12, peak_source="ncu")]
    assert run(get_rule("RL904"), near) == []  # 96%
    cat = [launch(GEMM, duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, peak_flops=700e12)]
    assert run(get_rule("RL904"), cat) == []  # catalogue peak: nothing to compare


def test_rl901_roofs_missing_points_to_gpu_option_and_profiler_hints_to_ncu():
    gpu_hint = "--gpu NAME (GPU not identified from the export; see 'ridgeline gpus')"
    rows = [
        launch("k", duration_s=1e-3, flops=8e9, dram_bytes=1e9, gpu=None, peak_flops=None, peak_bw=None,
               missing=["DRAM bandwidth roof", "compute roof"], missing_hint=gpu_hint),
        launch("j", duration_s=1e-3, flops=None, dram_bytes=1e9),
    ]
    (f,) = run(get_rule("RL901"), rows)
    assert f.message.endswith("DRAM bandwidth roof, compute roof, flops_tensor")
    assert f.remedy == f"Re-profile with ncu --set roofline; then re-run ridgeline with {gpu_hint}."


# ------------------------------------------------------------------- RL905
def _no_tensor(name, **kw):
    # a GEMM whose export has fp32 counters (a little epilogue math) but no tensor counter
    row = launch(name, precision="fp32", peak_flops=66.9e12, **kw)
    row.update(flops_tensor=None, flops_tensor_source=None)
    return row


def test_rl905_fires_and_rl101_stays_quiet_on_gemms_without_tensor_counters():
    rows = [_no_tensor(GEMM, duration_s=1e-3, flops=1e7, dram_bytes=1e9) for _ in range(3)]
    rows.append(launch("vectorized_elementwise_kernel", duration_s=1e-3, flops=1e7, dram_bytes=1e9))
    (f,) = run(get_rule("RL905"), rows)
    # 3 ms of 4 ms
    assert f.message == (
        "tensor FLOP counters absent for 3 launches of 1 GEMM/attention-like kernel holding 75% of GPU time "
        "(>= 5%): their intensity counts CUDA-core FLOPs only"
    )
    assert run(get_rule("RL101"), rows) == []  # AI 0.01 would be a wrong "~0 tokens" verdict


def test_rl905_quiet_when_tensor_counters_are_measured_or_kernels_are_not_gemms():
    rows = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9)]  # tensor counted
    rows.append(_no_tensor("vectorized_elementwise_kernel", duration_s=1e-3, flops=1e7, dram_bytes=1e9))
    assert run(get_rule("RL905"), rows) == []
