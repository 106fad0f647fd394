"""Kernel rules RL101-RL103: a firing and a quiet case each, numbers computed by hand."""

from __future__ import annotations

from pathlib import Path

import pytest


from rule_cases import label, H100_BW, launch, run  # noqa: E402

from ridgeline.rules.engine import get_rule  # noqa: E402

GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1"
ATTN = "flash_fwd_splitkv_kernel"
OTHER = "vectorized_elementwise_kernel"
RIDGE_BF16 = 989e12 / 3.35e12  # 295.2 FLOP/B
# an LLM's RMSNorm (the evidence that this is LLM work: ridgeline.analyzer.kernels.workload), too short to move a share
RMSNORM = launch("vllm::rms_norm_kernel", duration_s=1e-12, flops=1e3, dram_bytes=1e3, id="norm")


# ------------------------------------------------------------------- RL101
def test_rl101_fires_on_decode_gemm_with_tokens_and_ridge():
    # 1 GB of bf16 weights read by a batch of 8: 2 * 8 * 0.5e9 = 8e9 FLOP -> AI 8 FLOP/B
    rows = [launch(GEMM, duration_s=0.5e-3, flops=8e9, dram_bytes=1e9) for _ in range(2)]
    rows.append(launch(OTHER, duration_s=1e-3, flops=1e8, dram_bytes=3e9))
    (f,) = run(get_rule("RL101"), rows + [RMSNORM])
    assert f.code == "RL101" and f.subject == label(GEMM) and f.severity == "warning"
    assert "arithmetic intensity 8 FLOP/B vs ridge 295 FLOP/B on H100 SXM (bf16/fp16)" in f.message
    assert "~8 tokens per weight read now; the ridge needs ~295" in f.message
    assert "~295" in f.remedy and "KV-cache" in f.remedy
    # what the remedy buys (the what-if model): the same 8 tokens' share of these launches' time at
    # the batch that reaches the ridge, ceil(8 x 295.2 / 8) = 296, where each launch keeps its
    # fraction of the roof: time x max(296 x 1e9 FLOP / peak, 1e9 B / bw) / (1e9 / bw)
    import math

    n = math.ceil(8 * RIDGE_BF16 / 8)
    t_mem = 1e9 / H100_BW
    at_n = 2 * 0.5e-3 * max(n * 1e9 / 989e12, t_mem) / t_mem
    expect = 2 * 0.5e-3 - at_n * 8 / n
    assert f.impact_s == pytest.approx(expect)
    assert "batch ~296" in {e.metric: e for e in f.evidence}["impact_basis"].value
    assert f.impact_share == pytest.approx(expect / 2e-3)
    ev = {e.metric: e for e in f.evidence}
    assert ev["intensity_dram"].value == pytest.approx(8.0)
    assert ev["flops"].source == "measured: sm__ops_path_tensor_src_bf16_dst_fp32"
    assert ev["peak_bw_bytes_per_s"].source == "catalogue"
    assert f.confidence == "catalogue"


def test_rl101_fp8_weights_hold_half_the_tokens_per_flop():
    # fp8: 1 GB = 1e9 weights; batch 8 -> 2 * 8 * 1e9 = 16e9 FLOP, AI 16; ridge 1979e12/3.35e12 = 590.7
    rows = [launch(GEMM, duration_s=1e-3, flops=16e9, dram_bytes=1e9, precision="fp8_tensor", peak_flops=1979e12)]
    (f,) = run(get_rule("RL101"), rows + [RMSNORM])
    assert "arithmetic intensity 16 FLOP/B vs ridge 591 FLOP/B on H100 SXM (fp8)" in f.message
    assert "~8 tokens per weight read now; the ridge needs ~295" in f.message


def test_rl101_speaks_of_rows_not_tokens_outside_llm_work():
    """The same decode-shaped GEMM in a profile with no LLM kernel: GEMM words, the gap to the roof."""
    rows = [launch(GEMM, duration_s=0.5e-3, flops=8e9, dram_bytes=1e9) for _ in range(2)]
    (f,) = run(get_rule("RL101"), rows)
    assert f.message == ("arithmetic intensity 8 FLOP/B vs ridge 295 FLOP/B on H100 SXM (bf16/fp16): ~8 rows per "
                         "weight read (the M dimension); the ridge needs ~295")
    words = (f.message + f.remedy).lower()
    assert not any(w in words for w in ("token", "decode", "batch", "kv"))
    assert "M dimension" in f.remedy
    # saving: the gap to the roof, 2 x (0.5 ms - 1e9 B / 3.35e12 B/s)
    assert f.impact_s == pytest.approx(2 * (0.5e-3 - 1e9 / H100_BW))


def test_rl101_quiet_for_prefill_gemm_attention_and_small_groups():
    rows = [
        launch(GEMM, duration_s=1e-3, flops=100e9, dram_bytes=1e9),  # AI 100 > 0.25 * 295 = 73.8
        launch(ATTN, duration_s=1e-3, flops=2e9, dram_bytes=1e9),  # memory-bound but attention
        launch("ampere_bf16_s16816gemm_bf16_64x64", duration_s=0.001e-3, flops=8e6, dram_bytes=1e6),  # 0.05% share
    ]
    assert run(get_rule("RL101"), rows) == []


def test_rl101_threshold_override_changes_the_verdict():
    rows = [launch(GEMM, duration_s=1e-3, flops=100e9, dram_bytes=1e9)]  # AI 100 = 0.339 of the ridge
    assert run(get_rule("RL101"), rows, overrides={"max_ridge_fraction": 0.4})[0].subject == label(GEMM)


def test_rl101_skips_groups_without_counters():
    rows = [launch(GEMM, duration_s=1e-3, flops=None, dram_bytes=1e9)]
    assert run(get_rule("RL101"), rows) == []  # missing FLOPs is not zero intensity


# ------------------------------------------------------------------- RL102
def test_rl102_fires_on_memory_bound_attention():
    # 1.9e9 FLOP over 1e9 B = 1.9 FLOP/B; 3 launches of 0.4 ms; roof time 1e9 / 3.35e12 each
    rows = [launch(ATTN, duration_s=0.4e-3, flops=1.9e9, dram_bytes=1e9) for _ in range(3)]
    rows.append(launch(GEMM, duration_s=0.8e-3, flops=800e9, dram_bytes=1e9))
    (f,) = run(get_rule("RL102"), rows)
    assert f.subject == label(ATTN)
    assert f.message.startswith("attention intensity 1.9 FLOP/B vs ridge 295 FLOP/B on H100 SXM (bf16/fp16)")
    assert "does not grow with batch" in f.message
    assert "GQA/MQA" in f.remedy
    # impact = what the remedy buys: half the KV bytes (fp8 KV cache), same FLOPs, each launch at its
    # achieved fraction of its roof: time x roof time after / roof time now
    roof_now = max(1.9e9 / 989e12, 1e9 / H100_BW)
    roof_after = max(1.9e9 / 989e12, 0.5e9 / H100_BW)
    expect = 3 * (0.4e-3 - 0.4e-3 * roof_after / roof_now)
    assert f.impact_s == pytest.approx(expect)
    assert f.impact_share == pytest.approx(expect / 2.0e-3)
    ev = {e.metric: e for e in f.evidence}
    assert "half the KV-cache bytes" in ev["impact_basis"].value and ev["impact_basis"].unit == "text"
    assert ev["time_after_remedy_s"].value == pytest.approx(3 * 0.4e-3 * roof_after / roof_now)


def test_rl102_quiet_for_prefill_attention_and_gemms():
    rows = [
        launch("fmha_cutlassF_bf16_aligned_64x64_rf_sm80", duration_s=1e-3, flops=400e9, dram_bytes=1e9),  # AI 400
        launch(GEMM, duration_s=1e-3, flops=2e9, dram_bytes=1e9),
    ]
    assert run(get_rule("RL102"), rows) == []


# ------------------------------------------------------------------- RL103
def test_rl103_fires_when_memory_bound_kernel_is_far_below_bandwidth_roof():
    # 1.21e9 B in 1 ms = 1.21 TB/s = 36.1% of 3.35 TB/s; AI 1e9 / 1.21e9 = 0.83
    rows = [launch("rms_norm_kernel", duration_s=1e-3, flops=1e9, dram_bytes=1.21e9)]
    (f,) = run(get_rule("RL103"), rows)
    assert f.subject == label("rms_norm_kernel")
    assert f.message == "DRAM bandwidth 1.21 TB/s = 36% of the 3.35 TB/s roof (catalogue) < 60% on H100 SXM"
    assert f.impact_s == pytest.approx(1e-3 - 1.21e9 / H100_BW)
    assert f.impact_share == pytest.approx(1 - 1.21e9 / H100_BW / 1e-3)
    ev = {e.metric: e for e in f.evidence}
    assert ev["bandwidth_fraction"].value == pytest.approx(1.21e9 / 1e-3 / H100_BW)
    assert ev["dram_bytes"].source == "measured: dram__bytes.sum"


def test_rl103_uses_ncu_peaks_and_says_so():
    rows = [launch("rms_norm_kernel", duration_s=1e-3, flops=1e9, dram_bytes=1e9, peak_bw=3.0e12, peak_source="ncu")]
    (f,) = run(get_rule("RL103"), rows)
    # 1 TB/s of 3 TB/s = 33%
    assert "= 33% of the 3 TB/s roof (ncu)" in f.message
    assert f.confidence == "measured"


def test_rl103_quiet_near_the_roof_on_compute_side_and_for_short_kernels():
    rows = [
        launch("rms_norm_kernel", duration_s=1e-3, flops=1e9, dram_bytes=3.0e9),  # 3.0 TB/s = 90%
        launch(GEMM, duration_s=1e-3, flops=500e12 * 1e-3, dram_bytes=0.3e9),  # compute side (AI 1667)
        *[launch("tiny_kernel", duration_s=5e-6, flops=1e3, dram_bytes=1e6) for _ in range(400)],  # 5 us each
    ]
    assert run(get_rule("RL103"), rows) == []
    # the short kernels fire once their duration floor is lowered: 1e6 B / 5e-6 s = 0.2 TB/s = 6%
    (f,) = run(get_rule("RL103"), rows, overrides={"min_mean_duration_s": 1e-6})
    assert f.subject == label("tiny_kernel") and "= 6% of" in f.message


# ------------------------------------------------------------------- RL104
FP32 = dict(precision="fp32", peak_flops=66.9e12)  # H100 SXM fp32 CUDA-core datasheet peak


def test_rl104_fires_on_compute_bound_fp32_with_tensor_cores_available():
    # 40e9 FLOP / 0.1e9 B = AI 400 >= ridge 66.9/3.35 = 19.97; 40 TFLOP/s
    rows = [launch("my_fp32_conv_kernel", duration_s=1e-3, flops=40e9, dram_bytes=0.1e9, **FP32) for _ in range(2)]
    (f,) = run(get_rule("RL104"), rows)
    assert f.subject == label("my_fp32_conv_kernel")
    assert f.message == (
        "100% of FLOPs on CUDA cores (fp32) at intensity 400 FLOP/B >= ridge 20 FLOP/B: "
        "H100 SXM has tf32 tensor cores at 494 TFLOP/s vs the 66.9 TFLOP/s fp32 roof here "
        "(7.4x, the datasheet ratio, at the same clock)"
    )
    assert "TF32" in f.remedy
    # impact = the time on tf32 tensor cores at the same achieved fraction of the roof: the compute
    # peak x 494.5 / 66.9 (datasheet ratio), bytes unchanged; time x roof time after / roof time now
    roof_now = max(40e9 / 66.9e12, 0.1e9 / H100_BW)
    roof_after = max(40e9 / 494.5e12, 0.1e9 / H100_BW)
    expect = 2 * (1e-3 - 1e-3 * roof_after / roof_now)
    assert f.impact_s == pytest.approx(expect)
    assert f.impact_share == pytest.approx(expect / 2e-3)
    assert {e.metric: e.source for e in f.evidence}["peak_flops_tf32_tensor"] == "catalogue"


def test_rl104_quiet_for_tensor_work_memory_bound_fp32_and_gpus_without_tf32():
    rows = [
        launch(GEMM, duration_s=1e-3, flops=400e9, dram_bytes=0.5e9),  # tensor FLOPs
        launch("fp32_axpy", duration_s=1e-3, flops=0.5e9, dram_bytes=0.1e9, **FP32),  # AI 5 < 20
    ]
    assert run(get_rule("RL104"), rows) == []
    v100 = [launch("k", duration_s=1e-3, flops=10e9, dram_bytes=0.02e9, precision="fp32", gpu="V100 SXM2",
                   peak_flops=15.7e12, peak_bw=0.9e12)]
    assert run(get_rule("RL104"), v100) == []  # V100 has no tf32 tensor path


# ------------------------------------------------------------------- RL105
def test_rl105_fires_below_half_the_compute_roof():
    # 312e9 FLOP in 1 ms = 312 TFLOP/s, AI 624 >= 295; 312 / 989 = 31.5%
    rows = [launch(GEMM, duration_s=1e-3, flops=312e9, dram_bytes=0.5e9)]
    (f,) = run(get_rule("RL105"), rows)
    assert f.subject == label(GEMM)
    assert f.message == "312 TFLOP/s = 32% of the bf16/fp16 compute roof 989 TFLOP/s (catalogue) < 50% on H100 SXM"
    assert f.impact_s == pytest.approx(1e-3 - 312e9 / 989e12)


def test_rl105_quiet_near_the_roof_on_memory_side_and_for_short_kernels():
    rows = [
        launch(GEMM, duration_s=1e-3, flops=800e9, dram_bytes=0.5e9),  # 81%
        launch(ATTN, duration_s=1e-3, flops=1e9, dram_bytes=1e9),  # memory side
        launch("short_gemm", duration_s=5e-6, flops=0.1e9, dram_bytes=1e5),  # 20 TFLOP/s but 5 us
    ]
    assert run(get_rule("RL105"), rows) == []


# ------------------------------------------------------------------- RL106
def _short(name, n):
    # 4 us each, 1e6 FLOP and 4e6 B: time at the roof 4e6 / 3.35e12 s
    return [launch(name, duration_s=4e-6, flops=1e6, dram_bytes=4e6) for _ in range(n)]


def test_rl106_fires_on_many_short_launches():
    rows = _short("vectorized_elementwise_kernel", 150) + _short("rms_norm_kernel", 50)
    rows.append(launch(GEMM, duration_s=1.2e-3, flops=800e9, dram_bytes=1e9))
    (f,) = run(get_rule("RL106"), rows)
    assert f.subject == "profile" and f.subject_kind == "profile"
    # 200 x 4 us = 0.8 ms of 2.0 ms = 40%
    assert f.message == (
        "200 launches shorter than 10 us hold 40% of GPU time (>= 20%); median 4 us; "
        f"most frequent: {label('vectorized_elementwise_kernel')}"
    )
    assert "CUDA graph" in f.remedy
    assert f.impact_s == pytest.approx(200 * (4e-6 - 4e6 / H100_BW))


def test_rl106_quiet_with_few_launches_or_small_share():
    few = _short("k", 99) + [launch(GEMM, duration_s=1e-4, flops=8e9, dram_bytes=1e9)]
    assert run(get_rule("RL106"), few) == []  # 99 < 100 launches although they hold 80%
    small = _short("k", 200) + [launch(GEMM, duration_s=7.2e-3, flops=8e9, dram_bytes=1e9)]
    assert run(get_rule("RL106"), small) == []  # 0.8 ms of 8 ms = 10% < 20%


# ------------------------------------------------------------------- RL107
def test_rl107_prefill_dominated_profile():
    # 3 compute-bound GEMM launches (AI 600e9 / 1.5e9 = 400) of 1 ms, one decode GEMM of 0.2 ms
    rows = [launch(GEMM, duration_s=1e-3, flops=600e9, dram_bytes=1.5e9) for _ in range(3)]
    rows.append(launch("gemv_kernel", duration_s=0.2e-3, flops=8e9, dram_bytes=1e9))
    (f,) = run(get_rule("RL107"), rows + [RMSNORM])
    assert f.severity == "info" and f.subject == "profile"
    # 3 ms of 3.2 ms = 93.75%
    assert f.message == (
        "94% of GEMM time is compute-bound (intensity 400 FLOP/B >= ridge 295 FLOP/B): "
        "this profile shows prefill-like work; decode behaves differently"
    )
    assert f.impact_s is None


def test_rl107_speaks_gemm_not_llm_on_a_plain_gemm_benchmark():
    """No attention, RoPE, RMSNorm or LLM library: a GEMM benchmark is not 'prefill-like'."""
    rows = [launch(GEMM, duration_s=1e-3, flops=600e9, dram_bytes=1.5e9) for _ in range(3)]
    rows.append(launch("gemv_kernel", duration_s=0.2e-3, flops=8e9, dram_bytes=1e9))
    (f,) = run(get_rule("RL107"), rows)
    assert f.message == (
        "94% of GEMM time is compute-bound (intensity 400 FLOP/B >= ridge 295 FLOP/B): this profile shows "
        "large-shape GEMM (many rows per weight read) work; GEMV-like, few-row shapes behave differently"
    )
    words = (f.message + f.remedy).lower()
    assert not any(w in words for w in ("prefill", "decode", "token", "batch"))
    mem = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9) for _ in range(4)]
    (g,) = run(get_rule("RL107"), mem)
    assert "GEMV-like (few rows per weight read)" in g.message and "decode" not in g.message


def test_rl107_decode_dominated_profile():
    rows = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9) for _ in range(4)]
    rows.append(launch(ATTN, duration_s=1e-3, flops=2e9, dram_bytes=1e9))
    (f,) = run(get_rule("RL107"), rows)
    assert f.message.startswith("100% of GEMM time is memory-bound (intensity 8 FLOP/B < ridge 295 FLOP/B)")
    assert "decode-like" in f.message and "profile prefill separately" in f.remedy


def test_rl107_quiet_for_mixed_profiles_and_few_gemms():
    mixed = [launch(GEMM, duration_s=1e-3, flops=600e9, dram_bytes=1.5e9), launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9)]
    assert run(get_rule("RL107"), mixed) == []  # 50 / 50
    few = [launch(GEMM, duration_s=0.05e-3, flops=8e9, dram_bytes=1e9), launch(ATTN, duration_s=1e-3, flops=2e9, dram_bytes=1e9)]
    assert run(get_rule("RL107"), few) == []  # GEMMs hold 4.8% < 10%


# ------------------------------------------------------------------- RL108
def test_rl108_fires_when_l2_intensity_is_below_the_l2_ridge():
    # DRAM AI 300e9 / 0.5e9 = 600; L2 AI 300e9 / 7.5e9 = 40; assumed L2 bw 3 x 3.35e12 -> ridge 98.4
    rows = [launch(GEMM, duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, l2_bytes=7.5e9)]
    (f,) = run(get_rule("RL108"), rows)
    assert f.message == (
        "L2 intensity 40 FLOP/B < L2 ridge 98.4 FLOP/B (L2 roof 10.1 TB/s, 3x the DRAM roof: assumed) "
        "while DRAM intensity 600 FLOP/B >= ridge 295 FLOP/B: 15x more L2 than DRAM traffic; 30% of the compute roof"
    )
    assert f.confidence == "derived"
    assert f.impact_s == pytest.approx(1e-3 - 300e9 / 989e12)


def test_rl108_uses_a_recorded_l2_roof():
    from ridgeline.result import Roof

    rows = [launch(GEMM, duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, l2_bytes=7.5e9)]
    roofs = [Roof(kind="bandwidth", value=12e12, source="ncu", level="l2")]
    (f,) = run(get_rule("RL108"), rows, extra={"roofs": roofs})
    assert "L2 ridge 82.4 FLOP/B" in f.message  # 989e12 / 12e12 = 82.4
    assert f.confidence == "measured"


def test_rl108_quiet_with_good_l2_reuse_or_memory_side():
    rows = [
        launch(GEMM, duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, l2_bytes=1.5e9),  # L2 AI 200 > 98
        launch(ATTN, duration_s=1e-3, flops=1e9, dram_bytes=1e9, l2_bytes=5e9),  # DRAM side
        launch("no_l2_counter_gemm", duration_s=1e-3, flops=300e9, dram_bytes=0.5e9),  # l2_bytes missing
    ]
    assert run(get_rule("RL108"), rows) == []


# ------------------------------------------------------------------- RL109
def test_rl109_fires_on_fp32_gemv():
    # fp32 ridge 66.9/3.35 = 20; AI 0.5e9 / 1e9 = 0.5
    rows = [launch("gemv2T_kernel_val<float>", duration_s=0.5e-3, flops=0.5e9, dram_bytes=1e9, **FP32)]
    (f,) = run(get_rule("RL109"), rows)
    assert f.subject == label("gemv2T_kernel_val<float>")
    assert f.message == (
        "GEMM-like kernel with 100% of FLOPs on CUDA cores (fp32) at intensity 0.5 FLOP/B; "
        "H100 SXM has tf32 tensor cores at 494 TFLOP/s"
    )
    # impact = bf16 inputs on bf16 tensor cores: bytes x 2/4, compute peak x 989 / 66.9, at the same
    # achieved fraction of the roof (memory-bound before and after: the bytes decide)
    roof_now = max(0.5e9 / 66.9e12, 1e9 / H100_BW)
    roof_after = max(0.5e9 / 989e12, 0.5e9 / H100_BW)
    assert f.impact_s == pytest.approx(0.5e-3 - 0.5e-3 * roof_after / roof_now)
    assert "bf16 inputs on bf16/fp16 tensor cores" in {e.metric: e.value for e in f.evidence}["impact_basis"]


def test_rl109_quiet_for_tensor_gemms_non_gemms_and_compute_bound_fp32():
    rows = [
        launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9),  # tensor
        launch("fp32_axpy", duration_s=1e-3, flops=0.5e9, dram_bytes=1e9, **FP32),  # not a GEMM
        launch("sgemm_128x128", duration_s=1e-3, flops=40e9, dram_bytes=0.1e9, **FP32),  # compute side: RL104
    ]
    assert run(get_rule("RL109"), rows) == []


def test_rl107_compute_bound_gemms_with_memory_bound_attention_read_as_large_batch_decode():
    rows = [launch(GEMM, duration_s=1e-3, flops=600e9, dram_bytes=1.5e9) for _ in range(3)]
    rows.append(launch(ATTN, duration_s=1e-3, flops=4e9, dram_bytes=1e9))  # AI 4: memory-bound
    (f,) = run(get_rule("RL107"), rows)
    assert f.message == (
        "100% of GEMM time is compute-bound (intensity 400 FLOP/B >= ridge 295 FLOP/B) while 100% of attention "
        "time is memory-bound: this profile shows large-batch decode work; prefill behaves differently"
    )


def test_rl105_message_keeps_a_decimal_when_rounding_would_hide_the_gap():
    # 491 / 989 = 49.65%: "50% < 50%" would read as nonsense
    rows = [launch(GEMM, duration_s=1e-3, flops=491e9, dram_bytes=0.5e9)]
    (f,) = run(get_rule("RL105"), rows)
    assert f.message == "491 TFLOP/s = 49.6% of the bf16/fp16 compute roof 989 TFLOP/s (catalogue) < 50% on H100 SXM"


# ------------------------------------------------------------------- RL110
TF32 = dict(precision="tf32_tensor", peak_flops=494.5e12)


def test_rl110_fires_on_compute_bound_tf32():
    # AI 200e9 / 0.5e9 = 400 >= 494.5 / 3.35 = 147.6
    rows = [launch("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn", duration_s=1e-3, flops=200e9, dram_bytes=0.5e9, **TF32)]
    (f,) = run(get_rule("RL110"), rows)
    assert f.severity == "info"
    assert f.message == (
        "tf32 tensor math at intensity 400 FLOP/B >= ridge 148 FLOP/B: H100 SXM's bf16/fp16 tensor roof is "
        "989 TFLOP/s, 2x the tf32 494 TFLOP/s"
    )
    # impact = the same math in bf16: compute peak x 989 / 494.5, bytes x 2/4, same achieved fraction
    roof_now = max(200e9 / 494.5e12, 0.5e9 / H100_BW)
    roof_after = max(200e9 / 989e12, 0.25e9 / H100_BW)
    assert f.impact_s == pytest.approx(1e-3 - 1e-3 * roof_after / roof_now)


def test_rl110_quiet_for_memory_side_tf32_bf16_and_small_gain():
    rows = [
        launch("tf32_gemv", duration_s=1e-3, flops=25e9, dram_bytes=0.5e9, **TF32),  # AI 50 < 148
        launch(GEMM, duration_s=1e-3, flops=400e9, dram_bytes=0.5e9),  # bf16 already
    ]
    assert run(get_rule("RL110"), rows) == []
    big = [launch("tf32_gemm", duration_s=1e-3, flops=200e9, dram_bytes=0.5e9, **TF32)]
    assert run(get_rule("RL110"), big, overrides={"min_roof_gain": 2.5}) == []  # H100 gain is 2.0


# ------------------------------------------------------------------- RL111
def test_rl111_fires_on_a_grid_smaller_than_the_gpu():
    # 0.3e9 B in 1 ms = 0.3 TB/s at AI 26.7 (memory side): 0.3 / 3.35 = 9% of the roof
    rows = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=0.3e9, grid_blocks=48) for _ in range(3)]
    (f,) = run(get_rule("RL111"), rows)
    assert f.subject == label(GEMM)
    assert f.message == "median grid 48 blocks < 132 SMs on H100 SXM; 9% of its roof"
    # impact = the grid filling all 132 SMs at the same per-SM rate: 1 ms x 48 / 132 per launch,
    # above its time at the roof (0.3e9 B / 3.35 TB/s = 0.09 ms)
    after = max(1e-3 * 48 / 132, 0.3e9 / H100_BW)
    assert f.impact_s == pytest.approx(3 * (1e-3 - after))
    assert "all 132 SMs" in {e.metric: e.value for e in f.evidence}["impact_basis"]
    # a GEMM benchmark (no LLM kernel): no batch or flash-decoding advice; with an LLM's norm: both
    assert "batch" not in f.remedy and "flash-decoding" not in f.remedy and "split-K" in f.remedy
    (g,) = run(get_rule("RL111"), rows + [RMSNORM])
    assert "bigger batch" in g.remedy and "flash-decoding" in g.remedy


def test_rl111_impact_never_goes_below_the_time_at_the_roof():
    # a 2-block grid at 1 ms: filling 132 SMs would give 15 us, but the bytes alone take 0.5e9 / 3.35e12
    rows = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=0.5e9, grid_blocks=2)]
    (f,) = run(get_rule("RL111"), rows)
    assert f.impact_s == pytest.approx(1e-3 - max(1e-3 * 2 / 132, 0.5e9 / H100_BW))


@pytest.mark.parametrize("code, rows", [
    ("RL103", [launch(OTHER, duration_s=1e-3, flops=0.1e9, dram_bytes=1e9)]),  # 1 TB/s = 30% of the roof
    ("RL105", [launch(GEMM, duration_s=1e-3, flops=300e9, dram_bytes=0.5e9)]),  # 300 / 989 TFLOP/s
])
def test_rules_whose_remedy_is_the_roof_keep_the_gap_and_say_so(code, rows):
    (f,) = run(get_rule(code), rows)
    r = rows[0]
    assert f.impact_s == pytest.approx(r["duration_s"] - r["time_to_roof_s"])
    assert {e.metric: e.value for e in f.evidence}["impact_basis"].startswith("gap to the roof")


def test_rl111_quiet_for_full_grids_fast_kernels_and_unknown_grids():
    rows = [
        launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=0.3e9, grid_blocks=264),  # 2 waves
        launch("small_but_fast", duration_s=1e-3, flops=8e9, dram_bytes=2.68e9, grid_blocks=48),  # 80% of roof
        launch("no_grid", duration_s=1e-3, flops=8e9, dram_bytes=0.3e9),
    ]
    assert run(get_rule("RL111"), rows) == []


def test_rl111_leaves_short_launches_to_rl106():
    rows = [launch("rms_norm_kernel", duration_s=4e-6, flops=1e6, dram_bytes=1e6, grid_blocks=4) for _ in range(500)]
    assert run(get_rule("RL111"), rows) == []  # mean 4 us < 10 us


def test_groups_sharing_a_name_are_told_apart_by_precision():
    # same short name, two instantiations: 1.0 TB/s (30%) in fp32 and 1.34 TB/s (40%) in bf16
    rows = [
        launch("elementwise_kernel", duration_s=1e-3, flops=1e8, dram_bytes=1e9, precision="fp32", peak_flops=66.9e12),
        launch("elementwise_kernel", duration_s=1e-3, flops=1e8, dram_bytes=1.34e9),
    ]
    subjects = sorted(f.subject for f in run(get_rule("RL103"), rows))
    name = label("elementwise_kernel")
    assert subjects == [f"{name} [bf16/fp16]", f"{name} [fp32]"]


def test_rl105_advice_follows_what_the_kernel_is():
    rows = [
        # FlashAttention-2 on Hopper: compute side, 30% of its (mma.sync) roof
        launch("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)",
               duration_s=1e-3, flops=0.3 * 660e9, dram_bytes=1e8, peak_flops=660e12, tensor_path="hmma"),
        launch(GEMM, duration_s=1e-3, flops=0.3 * 989e9, dram_bytes=1e8, tensor_path="hgmma"),
    ]
    found = {f.subject: f for f in run(get_rule("RL105"), rows)}
    attn = found[label("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>(Flash_fwd_params)")]
    assert "FlashAttention-3" in attn.remedy and "cuBLASLt" not in attn.remedy
    assert "mma.sync" in attn.remedy and "1.5x" in attn.remedy
    gemm = found[label(GEMM)]
    assert "cuBLASLt" in gemm.remedy and "mma.sync" not in gemm.remedy


def test_rl104_sets_a_roof_measured_at_a_low_clock_against_the_tensor_roof_at_that_clock():
    """Issue 37 item 3: a TF32 peak at boost clock was set against an FP32 roof ncu measured at
    0.765 GHz; the tensor figure quoted is the roof here x the datasheet ratio."""
    low = dict(precision="fp32", peak_flops=66.9e12 * 0.765 / 1.98)  # the fp32 roof at 0.765 GHz
    rows = [launch("my_fp32_conv_kernel", duration_s=1e-3, flops=40e9, dram_bytes=0.1e9, **low) for _ in range(2)]
    (f,) = run(get_rule("RL104"), rows)
    assert "tensor cores at 191 TFLOP/s vs the 25.8 TFLOP/s fp32 roof here (7.4x" in f.message, f.message
    ev = {e.metric: e.value for e in f.evidence}
    assert ev["peak_flops_tf32_tensor_at_roof_clock"] == pytest.approx(low["peak_flops"] * 494.5e12 / 66.9e12, rel=1e-3)


def test_compared_figures_carry_the_digits_that_tell_them_apart():
    """Issue 37 item 3: RL108 printed "1.7 < 1.7" for 1.679 vs 1.730."""
    from ridgeline.rules.kernels import fmt_vs

    assert fmt_vs(1.679, 1.730) == ("1.68", "1.73")
    assert fmt_vs(295.41, 295.46) == ("295.4", "295.5")
    assert fmt_vs(7.9, 295.0) == ("7.9", "295")
    assert fmt_vs(2.0, 2.0) == ("2", "2") and fmt_vs(None, 1.0) == ("n/a", "1")


def test_rl107_quotes_each_roofs_ridge_and_counts_launch_bound_gemms_in_the_whole():
    """Issue 37 item 3: RL107 quoted a median ridge (177) between the 137 and 216 of two tensor
    paths, and said 100% of GEMM time was memory-bound beside a launch-bound GEMM."""
    from rule_cases import H100_BF16

    rows = [launch(GEMM, duration_s=1e-3, flops=8e9, dram_bytes=1e9) for _ in range(2)]
    rows += [launch(GEMM + "_mma_sync", duration_s=1e-3, flops=8e9, dram_bytes=1e9, peak_flops=H100_BF16 / 2)
             for _ in range(2)]
    rows.append(launch(GEMM + "_small", duration_s=0.2e-3, flops=1e3, dram_bytes=1e3, bound="latency",
                       latency_kind="launch"))
    fs = [f for f in run(get_rule("RL107"), rows) if f.code == "RL107"]
    (f,) = fs
    assert "ridges 148 and 295 FLOP/B" in f.message, f.message
    assert "221" not in f.message  # never the median of the two
    # 4 ms of 4.2 ms memory-bound, 0.2 ms launch-bound: shares of all GEMM time the table bounds
    assert f.message.startswith("95% of GEMM time is memory-bound, 5% launch-bound (intensity 8 FLOP/B <"), f.message
