"""The latency split on real exports (../shared/samples/ncu, read in place; skipped when absent).

Properties that hold for any file, checked where the files have latency-bound launches: the kind
follows the duration against RL112.launch_bound_max_s, no launch-overhead remedy covers a launch
longer than it, and RL113's remedies never speak of launch overhead.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.kernels.latency import LAUNCH_BOUND_MAX_S
from ridgeline.pipeline import analyze_paths

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "ncu"
# launch-overhead remedies (graphs, fusion, fewer launches)
LAUNCH_WORDS = ("cuda graph", "fuse ", "fusion", "launch fewer", "fewer kernels", "launch overhead")
CASES = [
    # (file, --gpu where the export names none, kinds the file must show)
    ("moeresearch-h200-sglang-qwen3-30b-R_short_decode-RAWPAGE-2232cols.csv", None, {"launch"}),
    ("moeresearch-h200-sglang-qwen3-30b-R_long_prefill-RAWPAGE-2232cols.csv", None, {"launch", "stall"}),
    ("gardenia-a100-details-printfp-sgemm.csv", "A100 SXM 80GB", {"stall"}),  # 6.7 s randomInit launches
]


@pytest.mark.parametrize("name, gpu, kinds", CASES)
def test_latency_kinds_follow_duration_and_remedies_fit(name, gpu, kinds):
    path = SAMPLES / name
    if not path.exists():
        pytest.skip(f"shared sample {name} not present (../shared/samples)")
    res = analyze_paths([path], gpu=gpu)
    k = res.kernels
    lat = k.filter(pl.col("bound") == "latency")
    assert set(lat["latency_kind"].unique()) == kinds
    assert (lat.filter(pl.col("latency_kind") == "launch")["duration_s"] <= LAUNCH_BOUND_MAX_S).all()
    assert (lat.filter(pl.col("latency_kind") == "stall")["duration_s"] > LAUNCH_BOUND_MAX_S).all()
    assert k.filter(pl.col("bound") != "latency")["latency_kind"].null_count() == k.filter(pl.col("bound") != "latency").height
    for f in res.findings:
        ev = {e.metric: e.value for e in f.evidence}
        if f.code == "RL112":
            assert ev["longest_launch_s"] <= LAUNCH_BOUND_MAX_S
        if f.code == "RL113":
            assert not any(w in f.remedy.lower() for w in LAUNCH_WORDS)
            assert ev["shortest_launch_s"] > LAUNCH_BOUND_MAX_S
        if any(w in f.remedy.lower() for w in LAUNCH_WORDS) and f.subject_kind == "kernel":
            mine = k.filter(pl.coalesce(pl.col("kernel_label"), pl.col("short_name")) == f.subject)
            assert (mine["duration_s"] <= LAUNCH_BOUND_MAX_S).all(), (f.code, f.subject)


def test_randominit_is_stall_bound_not_told_to_use_cuda_graphs():
    path = SAMPLES / "gardenia-a100-details-printfp-sgemm.csv"
    if not path.exists():
        pytest.skip("shared sample not present (../shared/samples)")
    res = analyze_paths([path], gpu="A100 SXM 80GB")
    codes = {f.code: f for f in res.findings}
    assert "RL112" not in codes
    f = codes["RL113"]
    assert f.subject == "randomInit<float>" and "no occupancy or warp-stall metrics in the export" in f.message
    # 5.3 GB of DRAM traffic in 6.7 s = 0.8 GB/s, 0.04% of 2.04 TB/s; 2 x 0.84 G FFMA in 6.7 s is further still
    assert "busiest roof at <0.1% < 10%" in f.message
    # a plain SGEMM benchmark: no prefill/decode words
    assert all("prefill" not in g.message and "decode" not in g.message for g in res.findings)
