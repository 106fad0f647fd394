"""The structure-aware timeline fuzz harness (``fuzz/fuzz_timelines.py``) runs without atheris:
its :func:`one_input` on seeded random bytes edits real seeds (nsys sqlite, Kineto, nsys stats CSV)
and checks every result (only RidgelineError escapes; no absurd figure in what was read)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("fuzz_timelines", ROOT / "fuzz" / "fuzz_timelines.py")
F = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(F)


def test_harness_has_seeds_of_every_timeline_format():
    assert all(F.SEEDS[k] for k in ("sqlite", "kineto", "csv")), F.SEEDS


@pytest.mark.parametrize("seed", range(40))
def test_one_input_on_random_bytes(seed):
    rng = random.Random(seed)
    F.one_input(bytes(rng.randrange(256) for _ in range(rng.randrange(8, 200))))


def test_check_figures_catches_an_absurd_capture():
    import polars as pl

    class R:
        timeline = type("T", (), {"devices": pl.DataFrame({"capture_s": [9.2e9], "busy_s": [1.0]})})()

    with pytest.raises(AssertionError):
        F.check_figures(R())
