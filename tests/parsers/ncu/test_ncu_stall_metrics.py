"""Occupancy, issue and warp-stall metrics (the stall-bound evidence) in every spelling ncu writes.

Synthetic details exports are written in tmp_path in the documented layouts (section labels of
the 2019-2021 details page; metric names with ``--metrics``); the real samples in
../shared/samples/ncu are read in place and skipped when absent. Expected values are the ones
written (percent and cycle values pass through unchanged).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.parsers.ncu.csv_reader import read_ncu

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "ncu"
KERNEL = "void gather_kernel<float>(const float *, const int *, float *, int)"
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"


def q(*fields):
    return ",".join('"' + str(f).replace('"', '""') + '"' for f in fields)


def _kernels(path):
    return read_ncu(path).kernels


def _write(tmp_path, rows, *, header):
    path = tmp_path / "stall.csv"
    path.write_text("\n".join([q(*header)] + [q(*r) for r in rows]) + "\n", encoding="utf-8")
    return path


def test_section_labels_of_the_details_page(tmp_path):
    header = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Section Name",
              "Metric Name", "Metric Unit", "Metric Value")
    ident = (0, 42, "app", "127.0.0.1", KERNEL, 1, 7)
    rows = [
        (*ident, "GPU Speed Of Light", "Duration", "usecond", "812.50"),
        (*ident, "Compute Workload Analysis", "Issue Slots Busy", "%", "26.96"),
        (*ident, "Warp State Statistics", "Warp Cycles Per Issued Instruction", "", "28.60"),
        (*ident, "Occupancy", "Theoretical Occupancy", "%", "93.75"),
        (*ident, "Occupancy", "Achieved Occupancy", "%", "48.18"),
    ]
    r = _kernels(_write(tmp_path, rows, header=header)).row(0, named=True)
    assert r["duration_s"] == pytest.approx(812.5e-6)
    assert r["issue_slots_busy_pct"] == pytest.approx(26.96)
    assert r["warp_cycles_per_issue"] == pytest.approx(28.60)
    assert r["theoretical_occupancy_pct"] == pytest.approx(93.75)
    assert r["achieved_occupancy_pct"] == pytest.approx(48.18)
    assert r["stall_top_reason"] is None  # no stall reason recorded: unknown, not guessed


def test_metric_names_and_the_top_stall_reason(tmp_path):
    header = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
    ident = (0, 42, "app", "127.0.0.1", KERNEL, 1, 7, "(256, 1, 1)", "(132, 1, 1)", 0, "9.0",
             "Command line profiler metrics")
    rows = [
        (*ident, "gpu__time_duration.sum", "nsecond", "2,000,000"),
        (*ident, "smsp__warps_active.avg.pct_of_peak_sustained_active", "%", "17.39"),
        (*ident, "sm__maximum_warps_per_active_cycle_pct", "%", "50"),
        (*ident, "smsp__issue_active.avg.pct_of_peak_sustained_active", "%", "8.5"),
        (*ident, "smsp__average_warp_latency_per_inst_issued.ratio", "", "40.2"),
        (*ident, STALL.format("long_scoreboard"), "inst", "21.5"),
        (*ident, STALL.format("math_pipe_throttle"), "inst", "1.75"),
        (*ident, STALL.format("selected"), "inst", "30"),  # issuing is not a stall, however large
        (*ident, STALL.format("long_scoreboard") .replace(".ratio", ".pct"), "%", "2150"),  # another form: ignored
    ]
    r = _kernels(_write(tmp_path, rows, header=header)).row(0, named=True)
    assert r["achieved_occupancy_pct"] == pytest.approx(17.39)  # the smsp__ spelling of the same average
    assert r["theoretical_occupancy_pct"] == pytest.approx(50.0)
    assert r["issue_slots_busy_pct"] == pytest.approx(8.5)
    assert r["warp_cycles_per_issue"] == pytest.approx(40.2)
    assert r["stall_top_reason"] == "long_scoreboard"
    assert r["stall_top_cycles_per_issue"] == pytest.approx(21.5)


@pytest.mark.parametrize("name, expect", [
    ("xplacer-v100-lassen-nvnsightcucli-details-cfd097K.log.csv",
     {"achieved_occupancy_pct", "theoretical_occupancy_pct", "issue_slots_busy_pct", "warp_cycles_per_issue"}),
    ("moeresearch-h200-vllm-cutlass-grouped-gemm-NAMEDraw-details-prof-preamble.csv",
     {"achieved_occupancy_pct", "stall_top_reason", "stall_top_cycles_per_issue"}),
    ("moeresearch-h200-sglang-qwen3-30b-R_short_decode-RAWPAGE-2232cols.csv",
     {"achieved_occupancy_pct", "theoretical_occupancy_pct", "issue_slots_busy_pct", "warp_cycles_per_issue",
      "stall_top_reason"}),
    ("leleucas-a100-details-rules-bert_attention.csv", {"achieved_occupancy_pct", "theoretical_occupancy_pct"}),
])
def test_real_exports_give_their_stall_evidence(name, expect):
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"shared sample {name} not present (../shared/samples)")
    k = _kernels(path)
    have = {c for c in expect if k[c].drop_nulls().len() == k.height}
    assert have == expect
    for c in expect - {"stall_top_reason"}:
        assert (k[c].drop_nulls() >= 0).all()
    if "achieved_occupancy_pct" in expect:
        assert (k["achieved_occupancy_pct"] <= 100).all()


@pytest.mark.skipif(__import__("importlib").util.find_spec("ncu_report") is None,
                    reason="ncu-report (ridgeline[ncu-rep]) not installed")
def test_a_full_set_report_gives_the_same_evidence():
    """A `--set full` .ncu-rep (H100 PCIe RMSNorm, three launches) holds every stall-evidence metric:
    read through the same vocabulary as the CSVs."""
    from ridgeline.parsers.ncu.rep import read_ncu_rep

    path = SAMPLES.parent / "ncu-rep" / "cs599k-h100pcie-setfull-rmsnorm-matrix-2025-04-21_v1.ncu-rep"
    if not path.exists():
        pytest.skip("shared sample not present (../shared/samples)")
    k = read_ncu_rep(path)[0].kernels
    assert k.height == 3
    for c in ("achieved_occupancy_pct", "theoretical_occupancy_pct", "issue_slots_busy_pct", "warp_cycles_per_issue",
              "stall_top_reason", "stall_top_cycles_per_issue"):
        assert k[c].null_count() == 0, c
    assert ((k["achieved_occupancy_pct"] > 0) & (k["achieved_occupancy_pct"] <= k["theoretical_occupancy_pct"] + 1e-9)).all()
    # the top stall never exceeds the total cycles a warp spends per issued instruction
    assert (k["stall_top_cycles_per_issue"] <= k["warp_cycles_per_issue"]).all()


def test_every_stall_reason_of_a_hopper_raw_page_is_in_the_vocabulary():
    """The reasons ncu writes (read off the H200 raw page's header) are the ones the parser looks for,
    and each has a hint for RL113's remedy."""
    import re

    from ridgeline.analyzer.kernels.latency import STALL_REASON_HINTS
    from ridgeline.parsers.ncu.metrics import STALL_REASONS

    path = SAMPLES / "moeresearch-h200-sglang-qwen3-30b-R_short_decode-RAWPAGE-2232cols.csv"
    if not path.exists():
        pytest.skip("shared sample not present (../shared/samples)")
    head = path.read_text(encoding="utf-8", errors="replace")[:400_000]
    written = set(re.findall(r"smsp__average_warps_issue_stalled_([a-z_]+?)_per_issue_active\.ratio", head))
    assert written and written <= set(STALL_REASONS)
    assert set(STALL_REASONS) <= set(STALL_REASON_HINTS)
