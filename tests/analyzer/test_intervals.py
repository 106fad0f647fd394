"""The numpy helpers of analyzer/intervals.py that stand in for numpy functions which import
numpy.ma on first use (~40 ms of a short run's start-up): the same numbers as numpy's own, and
a timeline analysis that no longer imports numpy.ma."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ridgeline.analyzer.intervals import quantile, sorted_runs, unique_sorted

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 1001])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_quantile_equals_numpys_linear_quantile(n, dtype):
    rng = np.random.default_rng(n)
    a = (rng.integers(-10**12, 10**12, n) if dtype is np.int64 else rng.normal(size=n) * 1e6).astype(dtype)
    for q in (0.0, 0.1, 0.5, 0.9, 0.95, 1.0):
        assert quantile(a, q) == float(np.quantile(a, q))


@pytest.mark.parametrize("n", [0, 1, 2, 50, 5000])
def test_unique_and_runs_equal_numpys_unique(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 7, n)
    assert np.array_equal(unique_sorted(a), np.unique(a))
    s = np.sort(a)
    for got, want in zip(sorted_runs(s), np.unique(s, return_index=True, return_counts=True)):
        assert np.array_equal(got, want)


def test_a_timeline_analysis_does_not_import_numpy_ma():
    code = ("import sys; from ridgeline.cli import main\n"
            "try: main(['analyze', sys.argv[1], '--format', 'json', '-o', sys.argv[2]])\n"
            "except SystemExit: pass\n"
            "print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "fixtures" / "timeline" / "capture.kineto.json"),
                          "/dev/null"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "False", out.stderr[-500:]
