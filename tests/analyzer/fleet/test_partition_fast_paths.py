"""The per-partition reduction's shortcuts (issue 23 item 7: the wide store ahead of DuckDB) give
the windows the general paths give: the duplicate check's proof for stores written in time
order (``guard._ticks_without_repeats``), the GPU sort by a group-by of row numbers
(``telemetry._sort_by_gid``) and the partition's window query in one piece.

Every store here is SYNTHETIC, written by the test: a hive store in time order (all GPUs of a
second, then the next), exporter column names, with a gap, a tick written twice, clock event
(throttle) reason masks, an XID and temperatures. The reference is the same store reduced with
the shortcuts switched off, and the long-table path (``reduce_windows``).
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ridgeline.analyzer.fleet import telemetry
from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.errors import InputError
from ridgeline.parsers import guard
from ridgeline.pipeline import reduce_telemetry

T0 = dt.datetime(2026, 1, 5, 8, 0, 0, tzinfo=dt.timezone.utc)


def fleet_rows(h: int, gpus: int = 4, n: int = 900) -> pl.DataFrame:
    """One host's rows, time-major. GPU 1 of host 0 misses seconds 300..359 (a gap); host 1
    writes second 100 twice (same values: a repeat, kept once and listed); host 2 leaves GPU 0's
    tensor activity blank every 37th second; GPU 2 reports XID 79
    from second 500; the throttle mask sets power cap (0x4) on GPU 3 for the second half."""
    s = pl.int_range(0, n, eager=True).alias("s")
    base = pl.DataFrame(s).join(pl.DataFrame({"gpu": list(range(gpus))}), how="cross")
    if h == 0:
        base = base.filter(~((pl.col("gpu") == 1) & pl.col("s").is_between(300, 359)))
    if h == 1:
        base = pl.concat([base.filter(pl.col("s") <= 100), base.filter(pl.col("s") == 100),
                          base.filter(pl.col("s") > 100)])
    x = ((pl.col("s") * 7 + pl.col("gpu") * 13 + h) % 101).cast(pl.Float64)
    return base.select(
        (pl.lit(T0) + pl.duration(seconds=pl.col("s"))).dt.cast_time_unit("us").alias("timestamp"),
        pl.col("gpu").cast(pl.Int64),
        x.alias("DCGM_FI_DEV_GPU_UTIL"),
        pl.when((pl.col("gpu") == 0) & (pl.col("s") % 37 == 0) & (h == 2)).then(None)  # blank cells
        .otherwise(x / 250).alias("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"),
        pl.when(x > 20).then(0.9).otherwise(0.1).alias("DCGM_FI_PROF_GR_ENGINE_ACTIVE"),
        (150 + x * 3).alias("DCGM_FI_DEV_POWER_USAGE"),
        pl.when((pl.col("gpu") == 3) & (pl.col("s") >= n // 2)).then(4.0).otherwise(0.0)
        .alias("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"),
        pl.when((pl.col("gpu") == 2) & (pl.col("s") >= 500)).then(79.0).otherwise(0.0).alias("DCGM_FI_DEV_XID_ERRORS"),
        (40 + x / 5).alias("DCGM_FI_DEV_GPU_TEMP"),
    )


@pytest.fixture()
def fleet_store(tmp_path):
    for h in range(3):
        d = tmp_path / "store" / "date=2026-01-05" / f"host=n{h}"
        d.mkdir(parents=True)
        fleet_rows(h).write_parquet(d / "part-0.parquet")
    return tmp_path / "store"


def _polars_sort_by_gid(df):
    return df.sort(telemetry._gid_key(df), maintain_order=True)


@pytest.mark.parametrize("window", ["5m", "1m", "all"])
def test_shortcuts_give_the_windows_of_the_general_paths(fleet_store, monkeypatch, window):
    proven, ticks = [], guard._ticks_without_repeats
    monkeypatch.setattr(guard, "_ticks_without_repeats", lambda frame, ident: proven.append(ticks(frame, ident)) or proven[-1])
    lf, _inputs, skipped, fast = reduce_telemetry([str(fleet_store)], window=window)
    assert sorted(proven) == [False, True, True]  # hosts 0 (a gap) and 2 proven; host 1's repeated tick hashed
    assert fast.height > 0
    assert fast.get_column("null_values").sum() == 900 // 37 + 1  # host 2's blank cells, s = 0, 37, ..., 888
    assert fast.filter(pl.col("xid_codes").is_not_null()).height >= 1  # the XID is seen
    assert fast.get_column("throttle_sw_power_cap_share").max() > 0  # and the power cap
    assert [s.item for s in skipped if "repeated" in s.item] == ["4 repeated sample(s)"]  # host 1's tick
    monkeypatch.setattr(guard, "_ticks_without_repeats", lambda frame, ident: False)
    monkeypatch.setattr(telemetry, "_sort_by_gid", _polars_sort_by_gid)
    monkeypatch.setattr(telemetry, "WINDOW_CHUNK_ROWS", 1000)  # the window query in slices, as before
    _lf, _inputs, skipped_before, before = reduce_telemetry([str(fleet_store)], window=window)
    assert_frame_equal(fast, before)
    assert skipped == skipped_before
    # the long table (every sample a row), reduced by the long path, agrees as well
    assert_frame_equal(fast, reduce_windows(lf, window=window))


def _frame(ticks):
    """A wide frame from [(second, gpu, value), ...] in the order given, one host."""
    return pl.DataFrame({
        "timestamp": [T0 + dt.timedelta(seconds=s) for s, _g, _v in ticks],
        "host": ["n0"] * len(ticks), "gpu": [g for _s, g, _v in ticks],
        "gpu_util_ratio": [v for _s, _g, v in ticks]},
        schema={"timestamp": pl.Datetime("us", "UTC"), "host": pl.String, "gpu": pl.Int64, "gpu_util_ratio": pl.Float64})


def test_time_ordered_ticks_are_proven_without_repeats_and_others_are_hashed():
    ident = ["host", "gpu"]  # the identity columns the frame has (as _check_duplicates passes them)
    clean = _frame([(0, 0, 0.1), (0, 1, 0.2), (1, 0, 0.3), (1, 1, 0.4)])
    assert guard._ticks_without_repeats(clean, ident)
    # a GPU twice within one tick, GPUs falling within a tick, time going back: not proven
    assert not guard._ticks_without_repeats(_frame([(0, 0, 0.1), (0, 1, 0.2), (0, 1, 0.2), (1, 0, 0.3)]), ident)
    assert not guard._ticks_without_repeats(_frame([(0, 1, 0.1), (0, 0, 0.2), (1, 1, 0.3), (1, 0, 0.4)]), ident)
    assert not guard._ticks_without_repeats(_frame([(1, 0, 0.1), (1, 1, 0.2), (0, 0, 0.3), (0, 1, 0.4)]), ident)
    # other identity columns may vary (a UUID per GPU): the GPU rising within each tick proves it
    uuids = clean.with_columns(pl.Series("uuid", ["GPU-b", "GPU-a", "GPU-b", "GPU-a"]))
    assert guard._ticks_without_repeats(uuids, [*ident, "uuid"])
    # MIG instances of one GPU side by side: the GPU does not rise, nor does the instance
    # across GPUs; not proven, and the hashing check finds no repeat
    mig = _frame([(0, 0, 0.1), (0, 0, 0.2), (0, 1, 0.3), (1, 0, 0.4), (1, 0, 0.5), (1, 1, 0.6)]).with_columns(
        pl.Series("gpu_instance", ["1", "2", "1", "1", "2", "1"]))
    assert not guard._ticks_without_repeats(mig, [*ident, "gpu_instance"])
    assert guard.check_partition(mig, "x.parquet")[0].height == 6
    # unproven frames still get the exact check: a conflicting repeat within a tick is refused
    with pytest.raises(InputError, match="two for gpu_util_ratio"):
        guard.check_partition(_frame([(0, 0, 0.1), (0, 1, 0.2), (0, 1, 0.9), (1, 0, 0.3)]), "x.parquet")
    # a same-value repeat is kept once and listed; GPUs falling within a tick but distinct pass whole
    kept, left_out = guard.check_partition(_frame([(0, 0, 0.1), (0, 1, 0.2), (0, 1, 0.2), (1, 0, 0.3)]), "x.parquet")
    assert kept.height == 3 and [s.item for s in left_out] == ["1 repeated sample(s)"]
    falling = _frame([(0, 1, 0.1), (0, 0, 0.2), (1, 1, 0.3), (1, 0, 0.4)])
    assert guard.check_partition(falling, "x.parquet")[0].height == 4


@pytest.mark.parametrize(("top", "n"), [(8, 5000), (8, 400_000), (300, 5000), (70_000, 5000), (2**63, 5000)])
def test_sort_by_gpu_is_polars_stable_sort(top, n):
    rng = np.random.default_rng(7)
    gid = rng.integers(0, min(top, 2**62), size=n, dtype=np.uint64)
    gid[:50] = gid[0]  # ties: their input order must stay
    df = pl.DataFrame({"_gid": pl.Series(gid, dtype=pl.UInt64), "row": np.arange(n)})
    assert_frame_equal(telemetry._sort_by_gid(df), df.sort("_gid", maintain_order=True))


def test_state_shares_are_the_mean_over_known_samples(fleet_store):
    """The shares are sum / count of the known samples (the window query's form): exactly what a
    plain mean of the same state gives, blanks left out (host 2's blank tensor cells)."""
    _lf, _inputs, _skipped, windows = reduce_telemetry([str(fleet_store)], window="5m")
    th = telemetry._options("5m", None, None)[2]
    raw = pl.read_parquet(fleet_store / "date=2026-01-05" / "host=n2" / "part-0.parquet")
    expected = raw.group_by("gpu", pl.col("timestamp").dt.truncate("5m").alias("window_start")).agg(
        (pl.col("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE") <= th["tensor_idle"]).mean().alias("tensor_idle_share"),
        (pl.col("DCGM_FI_DEV_GPU_UTIL") / 100 >= th["busy_util"]).mean().alias("busy_share"),
    ).sort("gpu", "window_start")
    got = windows.filter(pl.col("host") == "n2").select("gpu", "window_start", "tensor_idle_share", "busy_share")
    assert got.get_column("tensor_idle_share").null_count() == 0
    assert_frame_equal(got.sort("gpu", "window_start"), expected, check_dtypes=False, check_exact=True)
