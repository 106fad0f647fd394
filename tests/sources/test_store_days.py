"""A store's long history reduced one UTC day at a time (ridgeline.parsers.telemetry.reader._host_items,
ridgeline.analyzer.fleet.slices with wide slices): the windows and sample counts equal the
whole-host reduction's, for windows that cross midnight, a warm-up, gaps and blank values, on
the local and the Dask engine; a host whose footers do not place its files in their days, or
that another input names too, is read whole. Stores are written here by the store's own writer
from generated rows (SYNTHETIC)."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from ridgeline.parsers.telemetry import table as telemetry_table
from ridgeline.parsers.telemetry.reader import finish, scan_telemetry_sources, telemetry_partitions
from ridgeline.pipeline import reduce_telemetry
from ridgeline.sources.store import save

T0 = dt.datetime(2026, 1, 5, 20, 0, tzinfo=dt.timezone.utc)
STEP = 60  # s
DAYS = 2.5  # 20:00 on day 1 to 08:00 on day 4: four date= partitions per host


def _long(xid: bool = True) -> pl.DataFrame:
    """Two hosts x 2 GPUs (host b: one MIG instance too) at 60 s, with a 20-minute hole on GPU 1
    across the first midnight, a blank tensor value every 7th sample and (``xid``) an XID on day
    2 (so that day's files have a column the others lack)."""
    import numpy as np

    n = int(DAYS * 86400 / STEP)
    rows = []
    t = [T0 + dt.timedelta(seconds=STEP * k) for k in range(n)]
    for host in ("a", "b"):
        for gpu, inst in ((0, None), (1, None)) + (((1, "3"),) if host == "b" else ()):
            rng = np.random.default_rng(hash((host, gpu, inst)) % 2**32)
            busy = rng.uniform(0, 1, n)
            for k in range(n):
                if gpu == 1 and inst is None and 230 <= k < 250:  # the hole (23:50 .. 00:10)
                    continue
                base = {"timestamp": t[k], "host": host, "gpu": gpu, "gpu_instance": inst, "uuid": f"GPU-{host}{gpu}"}
                rows.append({**base, "field": "gpu_util_ratio", "value": float(busy[k])})
                rows.append({**base, "field": "tensor_active_ratio",
                             "value": None if k % 7 == 0 else float(busy[k] * 0.4)})
                rows.append({**base, "field": "fb_used_bytes", "value": 6.0e10})
                if xid and k == 1500 and gpu == 0:
                    rows.append({**base, "field": "xid_last_code", "value": 79.0})
    return finish(pl.DataFrame(rows, infer_schema_length=None), source="SYNTHETIC")


@pytest.fixture(scope="module", params=["xid", "same-columns"])
def store(tmp_path_factory, request):
    """The store; "xid": one day's files have a column more (each file is read with its own columns)."""
    folder = tmp_path_factory.mktemp("days") / "store"
    report = save(_long(xid=request.param == "xid"), folder)
    assert len(report.written) == 8  # 2 hosts x 4 days
    return folder


def _reduce(paths, monkeypatch, *, sliced: bool, **kw):
    monkeypatch.setattr(telemetry_table, "DAY_SLICE_MIN_ROWS", 0 if sliced else 10**12)
    counts: dict = {}
    _lf, _inputs, skipped, windows = reduce_telemetry([str(p) for p in paths], sample_counts=counts, **kw)
    return windows, counts, skipped


def test_hosts_of_a_long_store_are_cut_by_day(store, monkeypatch):
    monkeypatch.setattr(telemetry_table, "DAY_SLICE_MIN_ROWS", 0)
    parts = telemetry_partitions(scan_telemetry_sources([store])[0])
    assert [p[0][0] for p in parts] == ["sliced", "sliced"]
    days = parts[0][0][1].slices
    assert [lo.isoformat() for lo, _hi, _f in days] == [f"2026-01-0{d}T00:00:00+00:00" for d in (5, 6, 7, 8)]
    # below the threshold (the default, on this small store) a host is read whole
    monkeypatch.setattr(telemetry_table, "DAY_SLICE_MIN_ROWS", 10**12)
    assert [p[0][0] for p in telemetry_partitions(scan_telemetry_sources([store])[0])] == ["wide", "wide"]


@pytest.mark.parametrize("window, warmup", [("5m", None), ("7m", None), ("7m", "15m"), ("1h", None), ("all", None)])
def test_day_by_day_equals_the_whole_host(store, monkeypatch, window, warmup):
    whole, whole_counts, _s = _reduce([store], monkeypatch, sliced=False, window=window, warmup=warmup)
    by_day, day_counts, _s = _reduce([store], monkeypatch, sliced=True, window=window, warmup=warmup)
    assert whole.height > 0
    assert_frame_equal(by_day, whole)
    assert day_counts == whole_counts
    if window == "7m":  # windows that straddle midnight exist and are whole
        straddle = whole.filter(pl.col("window_start").dt.date() != pl.col("window_end").dt.date())
        assert straddle.height > 0


def test_dask_engine_gives_the_local_windows(store, monkeypatch):
    pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'ridgeline[dask]')")
    from distributed import Client, LocalCluster

    local, _c, _s = _reduce([store], monkeypatch, sliced=True, window="5m")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        remote, _c, _s = _reduce([store], monkeypatch, sliced=True, window="5m", engine="dask", scheduler=client)
    assert_frame_equal(remote, local)


def test_a_file_outside_its_day_reads_the_host_whole(store, tmp_path, monkeypatch):
    import shutil

    copy = tmp_path / "store"
    shutil.copytree(store, copy)
    part = next(copy.glob("date=2026-01-06/host=a/*.parquet"))
    df = pl.read_parquet(part, hive_partitioning=False)
    # a row of the next day filed under this day (not ridgeline's layout): the footer says so
    late = df.tail(1).with_columns(pl.col("timestamp") + dt.timedelta(days=3))  # after the last day
    pl.concat([df, late]).write_parquet(part)
    files = telemetry_table.hive_host_files(copy)
    monkeypatch.setattr(telemetry_table, "DAY_SLICE_MIN_ROWS", 0)
    assert telemetry_table.day_slices(files["a"]) is None
    assert telemetry_table.day_slices(files["b"]) is not None
    whole, _c, _s = _reduce([copy], monkeypatch, sliced=False)
    mixed, _c, _s = _reduce([copy], monkeypatch, sliced=True)
    assert_frame_equal(mixed, whole)  # the late row is in a window of host a either way


def test_a_host_named_by_another_input_too_is_read_whole(store, tmp_path, monkeypatch):
    extra = tmp_path / "a-more.csv"
    t = T0 + dt.timedelta(days=3)
    pl.DataFrame({"timestamp": [t, t + dt.timedelta(seconds=STEP)], "host": ["a", "a"], "gpu": [5, 5],
                  "gpu_util_ratio": [0.5, 0.6]}).write_csv(extra)
    whole, whole_counts, _s = _reduce([store, extra], monkeypatch, sliced=False)
    mixed, mixed_counts, _s = _reduce([store, extra], monkeypatch, sliced=True)
    assert_frame_equal(mixed, whole)
    assert mixed_counts == whole_counts
    assert whole.filter((pl.col("host") == "a") & (pl.col("gpu") == 5)).height == 1
