"""The nightly-documents and config fuzz harness (``fuzz/fuzz_nightly.py``) runs without atheris:
its :func:`one_input` on seeded random bytes edits valid nights and configs (and feeds raw bytes to
both readers) and checks every answer: judged without NaN, or one line (issue 35)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("fuzz_nightly", ROOT / "fuzz" / "fuzz_nightly.py")
F = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(F)


def test_the_seeds_are_judged_as_they_are():
    F.check_nights(F._nights(F.Draw(b"\x00" * 8), edited_text=F.json.dumps(F.telemetry_night(3)))[0], F.Draw(b""))
    F.check_config(F.CONFIG.encode())


@pytest.mark.parametrize("seed", range(48))
def test_one_input_on_random_bytes(seed):
    rng = random.Random(seed)
    data = bytes([seed % 4]) + bytes(rng.randrange(256) for _ in range(rng.randrange(8, 160)))
    F.one_input(data)


def test_a_crash_is_caught_by_the_harness(monkeypatch):
    """A NaN that reached the rendered comparison would fail the harness."""
    from ridgeline import nightly

    monkeypatch.setattr(nightly, "diff_many", lambda *a, **k: ('{"x": NaN}', False))
    with pytest.raises(AssertionError):
        F.check_nights(["a", "b"], F.Draw(b""))
