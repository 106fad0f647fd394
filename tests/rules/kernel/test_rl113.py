"""The latency class split (RL112 launch-bound, RL113 stall-bound): numbers computed by hand.

A launch far below every roof is latency-bound (ridgeline.analyzer.kernels.roofline); its duration
against RL112.launch_bound_max_s (20 us) says which kind: launch overhead (CUDA graphs, fusion)
or stalls inside the kernel (occupancy, memory latency, uncounted work). Rows are built with
``rule_cases.launch`` (synthetic, from the documented ROOFLINE contract).
"""

from __future__ import annotations

import polars as pl
import pytest

from rule_cases import launch, run  # tests/rule_cases.py (tests/conftest.py puts tests/ on sys.path)

from ridgeline.analyzer.kernels.latency import LAUNCH_BOUND_MAX_S, bound_label, stall_evidence, view_bound
from ridgeline.analyzer.kernels.roofline import classify
from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema
from ridgeline.rules.engine import get_rule

H100 = "NVIDIA H100 80GB HBM3"
BW = 3.35e12  # H100 SXM DRAM, datasheet (the catalogue's figure)
# launch-overhead remedies: never on a launch longer than the launch-bound threshold
LAUNCH_WORDS = ("cuda graph", "fuse", "fusion", "launch fewer", "fewer kernels", "launch overhead:")


def _latency(name, dur, *, kind=None, **extra):
    """A launch 1% of the DRAM roof (far below every roof: latency-bound) lasting ``dur``."""
    nbytes = 0.01 * BW * dur
    row = launch(name, duration_s=dur, flops=0.0, dram_bytes=nbytes, precision=None, **extra)
    row.update(bound="latency", busiest_roof_fraction=0.01, time_to_roof_s=max(nbytes / BW, 2e-6))
    if kind:
        row["latency_kind"] = kind
    return row


def _kernels(*rows):
    return pl.DataFrame(list(rows), schema=polars_schema(KERNEL_COLUMNS))


# ------------------------------------------------------------------------ the split itself
@pytest.mark.parametrize("dur, kind", [
    (LAUNCH_BOUND_MAX_S * 0.99, "launch"),  # just under the threshold
    (LAUNCH_BOUND_MAX_S, "launch"),         # at it: launch-bound (<=)
    (LAUNCH_BOUND_MAX_S * 1.01, "stall"),   # just over
    (6.7, "stall"),                         # a 6.7 s random-initialisation kernel
])
def test_classifier_splits_the_latency_class_at_the_threshold(dur, kind):
    nbytes = 0.01 * BW * dur  # 1% of the DRAM roof: latency-bound whatever the duration
    out, _ = classify(_kernels(dict(id="1", kernel_name="k", short_name="k", device_name=H100, duration_s=dur,
                                    flops_fp32=0.0, dram_bytes=nbytes)))
    r = out.row(0, named=True)
    assert r["bound"] == "latency" and r["latency_kind"] == kind


def test_the_threshold_is_rl112s_and_can_be_overridden():
    assert get_rule("RL112").thresholds["launch_bound_max_s"][0] == LAUNCH_BOUND_MAX_S == 20e-6
    dur = 30e-6
    k = _kernels(dict(id="1", kernel_name="k", short_name="k", device_name=H100, duration_s=dur, flops_fp32=0.0,
                      dram_bytes=0.01 * BW * dur))
    assert classify(k)[0]["latency_kind"][0] == "stall"
    assert classify(k, launch_bound_max_s=50e-6)[0]["latency_kind"][0] == "launch"
    # other bounds carry no kind
    busy = _kernels(dict(id="1", kernel_name="k", short_name="k", device_name=H100, duration_s=dur, flops_fp32=0.0,
                         dram_bytes=0.8 * BW * dur))
    r = classify(busy)[0].row(0, named=True)
    assert r["bound"] == "memory" and r["latency_kind"] is None


def test_view_words():
    assert view_bound("latency", "launch") == "launch" and view_bound("latency", "stall") == "stall"
    assert view_bound("latency", None) == "latency" and view_bound("memory", None) == "memory"
    assert bound_label("latency", "stall") == "stall-bound" and bound_label("latency", None) == "latency-bound"


# ------------------------------------------------------------------------ RL112: launch-bound
def test_rl112_fires_on_short_launches_only():
    short = [_latency("vllm::rms_norm_kernel", 3e-6, id=str(i)) for i in range(10)]  # 30 us
    long_ = _latency("randomInit<float>", 70e-6, id="long")  # stall-bound: not RL112's
    (f,) = run(get_rule("RL112"), short + [long_])
    share = 30e-6 / 100e-6
    assert f.message.startswith(f"10 of 11 launches ({share:.0%} of GPU time, >= 10%) are launch-bound: no longer than 20 us")
    ev = {e.metric: e.value for e in f.evidence}
    assert ev["latency_duration_s"] == pytest.approx(30e-6)
    assert ev["longest_launch_s"] == pytest.approx(3e-6) and ev["longest_launch_s"] <= ev["launch_bound_max_s"]
    assert "CUDA graph" in f.remedy


def test_rl112_quiet_when_every_latency_bound_launch_is_long():
    rows = [_latency("randomInit<float>", 6.7, id="1"), _latency("gemm_naive", 10.8e-3, id="2")]
    assert run(get_rule("RL112"), rows) == []


def test_rl112_speaks_of_tokens_only_for_llm_work():
    llm = [_latency("vllm::rms_norm_kernel", 3e-6, id=str(i)) for i in range(5)]
    plain = [_latency("void add_kernel<float>(float *, int)", 3e-6, id=str(i)) for i in range(5)]
    (f_llm,) = run(get_rule("RL112"), llm)
    (f_plain,) = run(get_rule("RL112"), plain)
    assert "per token" in f_llm.remedy and "decode" in f_llm.remedy
    assert "token" not in f_plain.remedy and "decode" not in f_plain.remedy and "RoPE" not in f_plain.remedy


# ------------------------------------------------------------------------ RL113: stall-bound
def test_rl113_fires_on_a_long_launch_and_names_the_sections_without_evidence():
    rows = [_latency("randomInit<float>", 6.7, id="1"), _latency("randomInit<float>", 6.7, id="2"),
            launch("gemm", duration_s=33.5, flops=33.5 * 0.19 * 10.6e12, dram_bytes=1e9, precision="fp32",
                   peak_flops=10.6e12, peak_bw=2.04e12, id="3")]
    (f,) = run(get_rule("RL113"), rows)
    share = 13.4 / (13.4 + 33.5)
    assert f.subject == "randomInit<float>"
    assert f.message.startswith(f"stall-bound: 13.4 s ({share:.0%} of GPU time, >= 5%) over 2 launches of 6.7 s on average")
    assert "each longer than the 20 us launch-bound limit" in f.message
    assert "no floating-point work counted" in f.message  # flops counted as 0
    assert "no occupancy or warp-stall metrics in the export" in f.message
    assert "--section WarpStateStats --section Occupancy" in f.remedy
    assert not any(w in f.remedy.lower() for w in LAUNCH_WORDS)


def test_rl113_uses_occupancy_and_stall_metrics_when_the_export_has_them():
    ev = dict(achieved_occupancy_pct=20.0, theoretical_occupancy_pct=100.0, issue_slots_busy_pct=12.0,
              warp_cycles_per_issue=30.0, stall_top_reason="long_scoreboard", stall_top_cycles_per_issue=21.0)
    rows = [_latency("gather_kernel", 2e-3, id="1", **ev)]
    (f,) = run(get_rule("RL113"), rows)
    assert ("achieved occupancy 20% of 100% theoretical, issue slots busy 12%, 30.0 warp cycles per issued "
            "instruction, top stall: long_scoreboard (21.0 cycles per issued instruction)") in f.message
    # achieved far below theoretical (20 < 0.6 x 100): the grid or the tail, before the stall reason
    assert "achieved occupancy is well below theoretical" in f.remedy
    assert f.confidence == "measured"
    got = {e.metric: e.value for e in f.evidence}
    assert got["stall_top_reason"] == "long_scoreboard" and got["achieved_occupancy_pct"] == 20.0


def test_stall_evidence_remedy_follows_the_dominant_metric():
    text, remedy = stall_evidence({"achieved_occupancy_pct": 90.0, "theoretical_occupancy_pct": 100.0,
                                   "stall_top_reason": "math_pipe_throttle", "stall_top_cycles_per_issue": 8.0})
    assert "top stall: math_pipe_throttle" in text and "the FLOP counters do not count" in remedy
    text, remedy = stall_evidence({"theoretical_occupancy_pct": 25.0, "achieved_occupancy_pct": 24.0})
    assert "occupancy is low" in remedy  # 25% theoretical: too few warps, whatever the stall
    assert stall_evidence({}) == ("", None)


def test_rl113_quiet_for_short_launches_and_small_shares():
    rows = [_latency("k", 19e-6, id=str(i)) for i in range(10)]  # launch-bound: RL112's
    assert run(get_rule("RL113"), rows) == []
    small = [_latency("tiny", 30e-6, id="a"), launch("big", duration_s=1e-2, flops=1e9, dram_bytes=0.8 * BW * 1e-2,
                                                     precision="fp32", peak_flops=66.9e12, id="b")]
    assert run(get_rule("RL113"), small) == []  # 0.3% of GPU time < 5%


def test_no_launch_overhead_remedy_on_a_launch_longer_than_the_threshold():
    """The sweep's invariant, on a mixed profile: launch-overhead wording only where every launch it
    covers is no longer than the threshold (RL112's evidence says the longest)."""
    rows = ([_latency("vllm::rms_norm_kernel", 4e-6, id=f"s{i}") for i in range(50)]
            + [_latency("randomInit<float>", 100e-6, id=f"l{i}") for i in range(3)]
            + [_latency("edge", LAUNCH_BOUND_MAX_S * 1.01, id="e")])
    findings = run(get_rule("RL112"), rows) + run(get_rule("RL113"), rows, overrides={"min_time_share": 0.0})
    assert {f.code for f in findings} == {"RL112", "RL113"}
    for f in findings:
        ev = {e.metric: e.value for e in f.evidence}
        if any(w in f.remedy.lower() for w in LAUNCH_WORDS):
            assert f.code == "RL112" and ev["longest_launch_s"] <= LAUNCH_BOUND_MAX_S
        else:
            assert f.code == "RL113" and ev["shortest_launch_s"] > LAUNCH_BOUND_MAX_S


# ------------------------------------------------------------------------ end to end, from an export
def _export(tmp_path, dur_us):
    """A details export (ncu --metrics ... --csv, documented layout) of one curand-like kernel on an
    A100: over 6.7 s, 1 FFMA per thread of a 640x1280x1024 grid and 5.3 GB of DRAM traffic (0.04% of
    the DRAM roof), occupancy and warp stalls recorded; a shorter launch does proportionally less
    work (same rates: latency-bound whatever its length). Synthetic, written here."""
    scale = dur_us / 6.7e6
    kernel = "void randomInit<float>(T1 *, int, int, unsigned int)"
    ident = ["0", "7", "profile", "127.0.0.1", kernel, "1", "7", "(32, 32, 1)", "(640, 1280, 1)", "0", "8.0",
             "Command line profiler metrics"]
    header = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    metrics = [
        ("gpu__time_duration.sum", "usecond", f"{dur_us}"),
        ("dram__bytes.sum", "byte", f"{5323503232 * scale:.0f}"),
        ("sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "inst", f"{838860800 * scale:.0f}"),
        ("sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "inst", "0"),
        ("sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "inst", "0"),
        ("sm__warps_active.avg.pct_of_peak_sustained_active", "%", "91.5"),
        ("sm__maximum_warps_per_active_cycle_pct", "%", "100"),
        ("smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio", "inst", "14.2"),
        ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "inst", "3.1"),
    ]
    lines = [",".join(f'"{h}"' for h in header)]
    lines += [",".join(f'"{v}"' for v in [*ident, *m]) for m in metrics]
    path = tmp_path / "init.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_long_export_launch_is_stall_bound_and_quotes_its_warp_state(tmp_path):
    from ridgeline.pipeline import analyze_paths

    res = analyze_paths([_export(tmp_path, 6.7e6)], gpu="A100 SXM 80GB")  # 6.7 s
    k = res.kernels.row(0, named=True)
    assert k["bound"] == "latency" and k["latency_kind"] == "stall"
    by = {f.code: f for f in res.findings}
    assert "RL112" not in by
    f = by["RL113"]
    assert "achieved occupancy 92% of 100% theoretical" in f.message
    assert "top stall: math_pipe_throttle (14.2 cycles per issued instruction)" in f.message
    assert "the FLOP counters do not count" in f.remedy  # integer/SFU work: what a curand kernel does
    assert not any(w in f.remedy.lower() for w in LAUNCH_WORDS)


def test_the_same_launch_at_15_us_is_launch_bound_and_the_threshold_moves_it(tmp_path):
    from ridgeline.pipeline import analyze_paths

    path = _export(tmp_path, 15)
    res = analyze_paths([path], gpu="A100 SXM 80GB")
    assert res.kernels["latency_kind"][0] == "launch"
    assert {f.code for f in res.findings} >= {"RL112"} and "RL113" not in {f.code for f in res.findings}
    res = analyze_paths([path], gpu="A100 SXM 80GB", thresholds=["RL112.launch_bound_max_s=1e-5"])
    assert res.kernels["latency_kind"][0] == "stall"
    f = next(f for f in res.findings if f.code == "RL113")
    assert "each longer than the 10 us launch-bound limit" in f.message
