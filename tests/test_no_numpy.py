"""Analysing a timeline never imports numpy (issue 22 item 8: start-up decides the short runs; numpy
is a ~50 ms, ~15 MB import): ``ridgeline analyze --format json`` on Kineto traces and nsys
exports, in a fresh interpreter, leaves ``numpy`` out of ``sys.modules``.

The timeline analysis does its interval arithmetic on polars Series (ridgeline/analyzer/timeline/intervals.py
says why); a module that brings numpy back, directly or through polars (``to_numpy()``, a Series
built from an ndarray), fails here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "timeline"
SAMPLES = ROOT.parent / "shared" / "samples"

CHILD = r"""
import contextlib, io, json, sys
from ridgeline.cli import main
done = []
for path in sys.argv[1:]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            main(["analyze", path, "--format", "json"])
        except SystemExit as e:
            assert e.code in (0, 1, None), (path, e.code)
    doc = json.loads(out.getvalue())
    done.append([path, len((doc.get("timeline") or {}).get("devices") or []),
                 len((doc.get("timeline") or {}).get("steps") or []) + len((doc.get("timeline") or {}).get("ranges") or [])])
print(json.dumps({"numpy": sorted(m for m in sys.modules if m == "numpy" or m.startswith("numpy.")), "done": done}))
"""


def _analyze(paths: list[Path]) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, *map(str, paths)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_fixture_timelines_are_analysed_without_numpy():
    paths = [FIXTURES / "capture.kineto.json", FIXTURES / "capture.rocm.kineto.json", FIXTURES / "capture-2024.sqlite",
             FIXTURES / "capture-2022.sqlite"]
    got = _analyze(paths)
    assert got["numpy"] == []
    # every file went through the timeline analysis: one device row at least
    assert [p for p, devices, _ in got["done"] if devices < 1] == []
    assert len(got["done"]) == len(paths)


REAL = sorted(p for p in [*SAMPLES.glob("kineto/*.json*"), *SAMPLES.glob("nsys/*.sqlite")] if "nokernels" not in p.name)


@pytest.mark.skipif(not REAL, reason="../shared/samples is absent")
def test_real_traces_with_steps_and_ranges_are_analysed_without_numpy():
    got = _analyze(REAL)
    assert got["numpy"] == []
    assert [p for p, devices, _ in got["done"] if devices < 1] == []
    # the steps / ranges paths ran too (the real traces have ProfilerStep or NVTX ranges)
    assert any(extra for _p, _d, extra in got["done"])
