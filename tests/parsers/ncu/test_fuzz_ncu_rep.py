"""The .ncu-rep fuzz harness (fuzz/fuzz_ncu_rep.py) keeps working: its mutator and checks run on a
few fixed inputs (the coverage-guided run itself needs atheris and is not part of the suite)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
HARNESS = ROOT / "fuzz" / "fuzz_ncu_rep.py"
SAMPLES = ROOT.parent / "shared" / "samples" / "ncu-rep"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ncu_report") is None or not any(SAMPLES.glob("*.ncu-rep")),
    reason="ncu-report reader or the shared .ncu-rep samples not available")


def harness():
    spec = importlib.util.spec_from_file_location("fuzz_ncu_rep", HARNESS)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_mutator_is_deterministic_and_damages():
    h = harness()
    data = bytes(range(64))
    a, sa = h.mutant(data)
    b, sb = h.mutant(data)
    assert (a, sa) == (b, sb)
    assert a[:4] == b"NVR\x00"  # the magic is kept: the report reader is the one fuzzed
    assert a not in h.seeds()  # at least one edit changed the seed


@pytest.mark.parametrize("data", [b"", bytes(range(40)), b"\xff" * 40, bytes(range(200, 256)) * 2])
def test_one_input_accepts_a_clean_error_or_sane_figures(data):
    harness().one_input(data)  # raises on anything but a one-line RidgelineError or sane figures
