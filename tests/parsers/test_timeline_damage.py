"""Damaged timelines (issue 21): every damaged nsys sqlite export, Kineto trace and nsys stats CSV
(made on the fly by :mod:`tests.timeline_damage` from the fixtures and the shared real samples) is
either read with sane figures (exit 0/1) or refused in one line naming the file (exit 2); never
exit 3, never a negative or absurd figure, never a device the undamaged file does not have, and
the accounting adds up (records read = used + skipped).

Run strict (the default: a damaged record is an error naming the file, table/event and row) and
``--lenient`` (the record is skipped and listed).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("timeline_damage", Path(__file__).resolve().parents[1] / "timeline_damage.py")
D = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(D)

from ridgeline.parsers.timeline_common import MAX_CAPTURE_S  # noqa: E402

EPS = 1e-9


def run_cli(path: Path, *extra: str):
    """(exit code, stderr, JSON document or None) of ``ridgeline analyze PATH --format json``."""
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            main(["analyze", str(path), "--format", "json", *extra])
            code = 0
        except SystemExit as exc:
            code = exc.code
    doc = json.loads(out.getvalue()) if code in (0, 1) and out.getvalue().strip() else None
    return code, err.getvalue(), doc


def assert_sane(path: Path, code: int, err: str, doc, seed_devices=None):
    assert code in (0, 1, 2), f"{path.name}: exit {code}: {err[-2000:]}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, f"{path.name}: {err}"
        assert path.name in lines[0], lines[0]
        for lib in ("conversion from", "unable to find column", "Traceback", "polars", "RecursionError"):
            assert lib not in lines[0], lines[0]
        return
    assert doc is not None, err
    tl = doc.get("timeline") or {}
    for d in tl.get("devices") or []:
        assert 0 <= d["capture_s"] <= MAX_CAPTURE_S, d
        assert d["busy_s"] <= d["capture_s"] + EPS and d["kernel_busy_s"] <= d["busy_s"] + EPS, d
        for k in ("busy_s", "idle_s", "idle_launch_s", "idle_sync_s", "idle_other_s", "copy_only_s", "htod_s",
                  "dtoh_s", "dtod_s", "sync_api_s", "short_kernel_time_s"):
            assert d[k] is None or d[k] >= -EPS, (k, d)
        assert d["copy_bytes"] >= 0, d
        assert d["device"] is None or 0 <= d["device"] <= 4095, d
        if seed_devices is not None:
            assert d["device"] in seed_devices, (d["device"], seed_devices)
    for k in tl.get("kernels") or []:
        assert k.get("total_s", 0) >= 0 and (k.get("wall_share") or 0) >= 0, k
    for rec in doc.get("accounting") or []:
        assert rec["balanced"], rec
        if rec["unit"] == "records":
            assert rec["read"] == rec["used"] + rec["skipped"], rec


def _cases():
    out = []
    for kind, seeds, damages in (("sqlite", D.sqlite_seeds(), D.SQLITE_DAMAGES), ("kineto", D.kineto_seeds(), D.KINETO_DAMAGES),
                                 ("csv", D.csv_seeds(), D.CSV_DAMAGES)):
        for seed in seeds:
            for damage in damages:
                out.append(pytest.param(kind, seed, damage, id=f"{kind}-{seed.name[:24]}-{damage}"))
    return out


_SEED_DEVICES: dict = {}


def _seed_devices(seed: Path):
    if seed not in _SEED_DEVICES:
        code, _err, doc = run_cli(seed, "--window", "all")
        _SEED_DEVICES[seed] = {d["device"] for d in (doc or {}).get("timeline", {}).get("devices") or []} if doc else None
    return _SEED_DEVICES[seed]


@pytest.mark.parametrize("kind,seed,damage", _cases())
def test_damaged_timeline_is_read_sanely_or_refused_in_one_line(kind, seed, damage, tmp_path):
    path = D.damaged(kind, seed, damage, tmp_path)
    if path is None:
        pytest.skip(f"{damage} does not apply to {seed.name}")
    devices = _seed_devices(seed)
    for extra in ((), ("--lenient",)):
        code, err, doc = run_cli(path, "--window", "all", *extra)
        assert_sane(path, code, err, doc, devices)
