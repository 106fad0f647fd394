"""The dmon reader's row layout (per GPU, in tick order) and the duplicate check's proof from
ordered runs. SYNTHETIC inputs written here (ridgeline.synth and literal frames)."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.telemetry import dcgm_dmon
from ridgeline.parsers import guard
from ridgeline.parsers.telemetry.reader import Options
from ridgeline.synth import write_telemetry

T0 = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)


def test_dmon_rows_come_out_per_gpu_in_tick_order_for_any_piece_size(tmp_path):
    path = write_telemetry(tmp_path / "n.txt", ["training", "memory_bound", "idle_allocated"], minutes=2)
    wholes = []
    for cb in (1 << 30, 700):  # one piece, and pieces cutting the ticks' GPUs apart
        wide, _long, _info, _skipped = dcgm_dmon.read_dmon_wide(path, opts=Options(), chunk_bytes=cb)
        assert wide.get_column("gpu").to_list() == sorted(wide.get_column("gpu").to_list())
        for _g, part in wide.group_by("gpu"):
            assert part.get_column("timestamp").is_sorted() and part.get_column("timestamp").n_unique() == part.height
        wholes.append(wide)
    assert wholes[0].equals(wholes[1])
    assert wholes[0].height == 3 * 120  # 2 minutes of 1 s ticks, 3 GPUs


def _frame(gpus, secs):
    return pl.DataFrame({"timestamp": [T0 + dt.timedelta(seconds=s) for s in secs], "host": ["h"] * len(gpus),
                         "gpu": gpus, "power_w": [100.0] * len(gpus)})


def test_ordered_runs_prove_no_repeats_and_anything_else_falls_back_to_hashing():
    ident = ["host", "gpu"]
    assert guard._runs_without_repeats(_frame([0, 0, 1, 1], [0, 1, 0, 1]), ident)
    assert not guard._runs_without_repeats(_frame([0, 1, 0, 1], [0, 0, 1, 1]), ident)  # interleaved per tick
    assert not guard._runs_without_repeats(_frame([0, 0, 1, 1, 0], [0, 1, 0, 1, 5]), ident)  # GPU 0 in two runs
    assert not guard._runs_without_repeats(_frame([0, 0, 0, 1], [0, 1, 1, 0]), ident)  # a time twice in a run


def test_a_repeat_in_ordered_runs_is_still_found():
    dup = _frame([0, 0, 0, 1], [0, 1, 1, 0]).with_columns(pl.Series("power_w", [100.0, 100.0, 120.0, 90.0]))
    with pytest.raises(InputError) as e:
        guard.check_telemetry_frame(dup, "x.txt", opts=Options())
    assert "got two for power_w" in str(e.value)
    # the same rows interleaved: the same answer
    with pytest.raises(InputError):
        guard.check_telemetry_frame(dup.sort("timestamp", maintain_order=True), "x.txt", opts=Options())
