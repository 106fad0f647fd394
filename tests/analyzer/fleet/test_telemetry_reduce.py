"""reduce_windows and fleet_summary on synthetic series (tests/telemetry_cases.py).

Every expected number is worked out by hand from the series the test builds."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from ridgeline.analyzer.schema import WINDOW_COLUMNS
from ridgeline.analyzer.fleet.summary import fleet_summary
from ridgeline.analyzer.fleet.telemetry import parse_duration_s, reduce_windows
from ridgeline.errors import UsageError
from telemetry_cases import BUSY_NO_TENSOR, GIB, IDLE_ALLOCATED, T0, gpu_series, table


def one(w, **where):
    for k, v in where.items():
        w = w.filter(pl.col(k) == v)
    assert w.height == 1, w
    return w.row(0, named=True)


def test_columns_follow_the_contract():
    w = reduce_windows(gpu_series(n=10, gpu_util_ratio=0.5), window="5m")
    assert w.columns == list(WINDOW_COLUMNS)


def test_means_p95_shares_and_coverage():
    util = [0.5 if i % 2 else 1.0 for i in range(300)]  # half busy
    df = gpu_series(n=300, jitter=0, gpu_util_ratio=util, tensor_active_ratio=0.05, gr_engine_active_ratio=0.9)
    r = one(reduce_windows(df, window="5m"))
    assert r["samples"] == 300 and r["interval_s"] == 1.0
    assert r["coverage_ratio"] == 1.0 and r["span_s"] == 300.0
    assert r["gpu_util_mean_ratio"] == pytest.approx(0.75)
    assert r["gpu_util_p95_ratio"] == pytest.approx(1.0)
    assert r["busy_share"] == pytest.approx(0.5)
    assert r["tensor_idle_share"] == 1.0
    assert r["busy_tensor_idle_share"] == pytest.approx(0.5)
    assert r["busy_tensor_idle_s"] == pytest.approx(150.0)
    assert r["window_start"] == T0 and r["window_end"] == T0 + dt.timedelta(minutes=5)
    assert r["dram_active_mean_ratio"] is None  # not measured -> null, never 0
    assert r["has_profiling"] is True and r["profiling_fields"] == 2


def test_gap_lowers_coverage_and_is_measured():
    df = gpu_series(n=300, skip=set(range(100, 250)), gpu_util_ratio=0.5)
    r = one(reduce_windows(df, window="5m"))
    assert r["samples"] == 150
    assert r["coverage_ratio"] == pytest.approx(0.5)
    assert r["max_gap_s"] == pytest.approx(151.0)  # sample 99 -> sample 250


def test_interval_is_inferred_from_the_data():
    df = gpu_series(n=100, interval_s=2.0, gpu_util_ratio=0.5)
    r = one(reduce_windows(df, window="all"))
    assert r["interval_s"] == 2.0
    assert r["span_s"] == 200.0
    assert r["window_end"] == T0 + dt.timedelta(seconds=200)  # last sample + one interval


def test_windows_split_and_warmup_drops_the_head():
    df = gpu_series(n=600, gpu_util_ratio=0.5)
    w = reduce_windows(df, window="5m")
    assert w.get_column("samples").to_list() == [300, 300]
    r = one(reduce_windows(df, window="all", warmup="2m"))
    assert r["samples"] == 480 and r["window_start"] == T0 + dt.timedelta(minutes=2)


def test_duplicates_and_out_of_order_rows_do_not_change_the_result():
    df = gpu_series(n=300, gpu_util_ratio=lambda i: (i % 10) / 10, tensor_active_ratio=0.2)
    ref = reduce_windows(df, window="5m")
    messy = pl.concat([df, df.head(500)]).sample(fraction=1.0, shuffle=True, seed=7)
    got = reduce_windows(messy, window="5m")
    assert got.get_column("samples").to_list() == [300]
    assert got.get_column("gpu_util_mean_ratio").to_list() == pytest.approx(ref.get_column("gpu_util_mean_ratio").to_list())


def test_hosts_in_chunks_equal_one_pass():
    df = table(gpu_series(host="a", n=120, **BUSY_NO_TENSOR), gpu_series(host="b", gpu=1, n=120, **IDLE_ALLOCATED),
               gpu_series(host="c", gpu=0, n=60, gpu_util_ratio=0.3))
    whole = reduce_windows(df.lazy(), window="1m")
    chunked = reduce_windows(df.lazy(), window="1m", chunk_rows=100)
    assert whole.height == 2 + 2 + 1
    assert whole.equals(chunked)


def test_mig_instance_uses_gr_engine_and_clamps_ratios_above_one():
    df = gpu_series(n=60, gpu=0, gpu_instance="3", gr_engine_active_ratio=0.9,
                    sm_active_ratio=[1.2 if i < 30 else 0.8 for i in range(60)], tensor_active_ratio=0.05)
    r = one(reduce_windows(df, window="all"))
    assert r["gpu_util_mean_ratio"] is None
    assert r["busy_share"] == 1.0  # GR_ENGINE 0.9 stands in for GPU-Util
    assert r["ratio_clamped_values"] == 30
    assert r["ratio_max_raw"] == pytest.approx(1.2)
    assert r["sm_active_mean_ratio"] == pytest.approx((30 * 1.0 + 30 * 0.8) / 60)
    assert r["excluded"] is None


def test_percent_fed_as_ratio_and_ratio_fed_as_percent_are_excluded():
    pct = one(reduce_windows(gpu_series(n=60, gpu_util_ratio=0.9, tensor_active_ratio=45.0), window="all"))
    assert pct["percent_as_ratio"] is True and pct["excluded"].startswith("profiling ratio above 1.5")
    rat = one(reduce_windows(gpu_series(n=60, jitter=0, gpu_util_ratio=lambda i: 0.0034 + i * 1e-5), window="all"))
    assert rat["ratio_as_percent"] is True and rat["excluded"].startswith("GPU-Util below 1%")
    ok = one(reduce_windows(gpu_series(n=60, jitter=0, gpu_util_ratio=lambda i: (i % 5) / 100), window="all"))
    assert ok["ratio_as_percent"] is False and ok["excluded"] is None


def test_stuck_profiler_and_stalled_fields_are_excluded():
    stuck = one(reduce_windows(gpu_series(n=60, gpu_util_ratio=1.0, gr_engine_active_ratio=0.0,
                                          tensor_active_ratio=0.0), window="all"))
    assert stuck["stuck_profiler_share"] == 1.0 and stuck["excluded"].startswith("stuck profiler")
    stalled = one(reduce_windows(gpu_series(n=60, jitter=0, gpu_util_ratio=0.9, gr_engine_active_ratio=0.7,
                                            tensor_active_ratio=lambda i: 0.01 * (i % 3)), window="all"))
    assert stalled["stalled_fields"] == "gr_engine_active_ratio"
    assert stalled["excluded"].startswith("stalled profiling fields")


def test_allocated_idle_and_idle():
    r = one(reduce_windows(gpu_series(n=300, **IDLE_ALLOCATED), window="5m"))
    assert r["idle_share"] == 1.0 and r["allocated_idle_share"] == 1.0 and r["allocated_idle_s"] == 300.0
    assert r["fb_used_max_bytes"] == 30 * GIB


def test_fleet_summary_ranks_by_wasted_hours():
    df = table(gpu_series(host="a", gpu=0, n=600, **BUSY_NO_TENSOR),  # 600 s busy, tensor idle: underused
               gpu_series(host="b", gpu=2, n=300, **IDLE_ALLOCATED),  # 300 s allocated idle: wasted
               gpu_series(host="b", gpu=3, n=300, gpu_util_ratio=0.5))  # nothing wasted
    w = reduce_windows(df, window="5m")
    gpus = fleet_summary(w)
    # idle with memory held is waste; busy with idle tensor cores is work done badly (underused)
    assert gpus.get_column("host").to_list()[:2] == ["b", "a"]
    assert gpus.row(0, named=True)["wasted_gpu_h"] == pytest.approx(300 / 3600)
    assert gpus.row(1, named=True)["wasted_gpu_h"] == 0.0
    assert gpus.row(1, named=True)["underused_gpu_h"] == pytest.approx(600 / 3600)
    assert gpus.row(1, named=True)["busy_tensor_idle_h"] == pytest.approx(600 / 3600)  # the state, as evidence
    assert gpus.get_column("rank").to_list() == [1, 2, 3]
    hosts = fleet_summary(w, by="host")
    assert hosts.filter(pl.col("host") == "b").item(0, "gpus") == 2


def test_bad_window_values():
    with pytest.raises(UsageError):
        reduce_windows(gpu_series(n=5, gpu_util_ratio=0.1), window="five minutes")
    assert parse_duration_s("1h") == 3600.0 and parse_duration_s("90s") == 90.0 and parse_duration_s("2m") == 120.0


def test_empty_input_gives_empty_windows():
    w = reduce_windows(table(), window="5m")
    assert w.height == 0 and w.columns == list(WINDOW_COLUMNS)


def test_saturated_constant_is_not_a_stalled_field():
    # a fully busy GPU legitimately prints GRACT 1.000 tick after tick
    r = one(reduce_windows(gpu_series(n=120, jitter=0, gpu_util_ratio=1.0, gr_engine_active_ratio=1.0,
                                      tensor_active_ratio=lambda i: 0.5 + 0.01 * (i % 3)), window="all"))
    assert r["stalled_fields"] is None and r["excluded"] is None
