"""The same trace gives the same bytes every run: kernel totals are sums of whole nanoseconds in
input order, so no figure depends on how polars' threads split a group (a float sum's last bits
did: ``busy_share`` of the A100 sample changed from run to run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.timeline.busy import _kernel_durations

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT.parent / "shared" / "samples"
TRACES = sorted([*SAMPLES.glob("kineto/*.json*"), *SAMPLES.glob("nsys/*.sqlite")]) if SAMPLES.is_dir() else []


def test_kernel_totals_are_exact_sums_of_nanoseconds():
    # durations whose float sum in seconds depends on the order of addition
    durs = [1, 10**9 + 7, 3, 10**12 + 1, 5, 123456789] * 20_000
    acts = pl.DataFrame({"kind": ["kernel"] * len(durs), "name": ["k", "j"] * (len(durs) // 2),
                         "short_name": ["k", "j"] * (len(durs) // 2), "start_ns": [0] * len(durs), "end_ns": durs})
    out = {r["name"]: r for r in _kernel_durations(acts).iter_rows(named=True)}
    for name, start in (("k", 0), ("j", 1)):
        assert out[name]["total_s"] == sum(durs[start::2]) / 1e9
        assert out[name]["launches"] == len(durs) // 2


@pytest.mark.skipif(not TRACES, reason="../shared/samples is absent (real traces)")
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_two_runs_give_identical_json(path):
    def run():
        return subprocess.run([sys.executable, "-c", "from ridgeline.cli import main; main()", "analyze", str(path), "--format", "json"],
                              capture_output=True, cwd=ROOT, check=False).stdout

    first = run()
    assert first.startswith(b"{")
    assert run() == first
