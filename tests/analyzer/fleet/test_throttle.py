"""Clock event (throttle) reasons, temperature and power limit per window, and stragglers the
same on the local and Dask engines. SYNTHETIC inputs (ridgeline.synth, tests/telemetry_cases.py)
and one real exporter scrape (shared/samples, skipped when absent).

The reason bits are NVML's nvmlClocksEventReason* values (nvml.h; the same numbers in
nvidia-ml-py): 0x1 GPU idle, 0x2 applications clocks, 0x4 SW power cap, 0x8 HW slowdown, 0x10
sync boost, 0x20 SW thermal, 0x40 HW thermal, 0x80 HW power brake, 0x100 display clocks.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from telemetry_cases import BUSY_TENSOR, gpu_series, table

from ridgeline.analyzer.schema import TELEMETRY_FIELDS, WINDOW_COLUMNS
from ridgeline.analyzer.fleet.stragglers import find_stragglers
from ridgeline.analyzer.fleet.telemetry import USED_FIELDS, reduce_windows
from ridgeline.analyzer.fleet.partitions import reduce_partitions
from ridgeline.analyzer.fleet.throttle import FIELDS, REASONS, SHARE_COLUMNS, decode
from ridgeline.errors import InputError
from ridgeline.parsers.telemetry.dcgm_fields import lookup_dmon, lookup_exporter, lookup_id
from ridgeline.parsers.telemetry.reader import read_telemetry, scan_telemetry_sources, telemetry_partitions
from ridgeline.pipeline import reduce_telemetry
from ridgeline.synth import write_telemetry

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "dcgm"
T0 = dt.datetime(2026, 1, 5, 8, tzinfo=dt.timezone.utc)


def test_reason_bits_are_nvmls_and_decode():
    assert [b for b, *_ in REASONS] == [1 << i for i in range(9)]
    assert [n for _b, n, *_ in REASONS][:4] == ["gpu_idle", "app_clocks", "sw_power_cap", "hw_slowdown"]
    assert decode(0x4 | 0x40) == ["sw_power_cap", "hw_thermal"] and decode(0) == [] and decode(None) == []
    for f in FIELDS:
        assert f in TELEMETRY_FIELDS and f in USED_FIELDS
    assert set(SHARE_COLUMNS) <= set(WINDOW_COLUMNS)


def test_field_names_ids_and_dmon_short_names():
    for name in ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"):
        assert lookup_exporter(name).canonical == "clock_event_reasons_mask"
    assert lookup_dmon("DVCCTR").field_id == 112 and lookup_id(112).canonical == "clock_event_reasons_mask"
    assert lookup_exporter("DCGM_FI_DEV_POWER_MGMT_LIMIT").canonical == "power_limit_w"
    assert lookup_dmon("PMLMT").field_id == 160


def test_window_shares_temperature_and_limit():
    # 4 samples: SW power cap, SW power cap, none, SW thermal + SW power cap (0x24)
    w = reduce_windows(gpu_series(n=4, gpu_util_ratio=0.9, jitter=0, clock_event_reasons_mask=[4, 4, 0, 0x24],
                                  gpu_temp_c=[60, 62, 64, 90], power_limit_w=[300, 300, 300, 250]), window="all")
    r = w.row(0, named=True)
    assert r["clock_reason_samples"] == 4
    assert r["throttle_sw_power_cap_share"] == 0.75 and r["throttle_sw_thermal_share"] == 0.25
    assert r["throttle_hw_thermal_share"] == 0.0 and r["throttle_gpu_idle_share"] == 0.0
    assert r["gpu_temp_mean_c"] == 69.0 and r["gpu_temp_max_c"] == 90.0 and r["power_limit_w"] == 300.0


def test_no_reasons_series_means_null_not_zero():
    r = reduce_windows(gpu_series(n=4, gpu_util_ratio=0.9), window="all").row(0, named=True)
    assert r["clock_reason_samples"] is None and all(r[c] is None for c in SHARE_COLUMNS)
    assert r["gpu_temp_max_c"] is None and r["power_limit_w"] is None


@pytest.mark.parametrize("fmt", ["dmon", "exporter"])
def test_dmon_and_exporter_carry_the_reasons(tmp_path, fmt):
    path = write_telemetry(tmp_path / ("n1.txt" if fmt == "dmon" else "n1.prom"), ["training", "training", "idle_allocated"],
                           throttled={1: "thermal"}, minutes=2, format=fmt, host="n1")
    df, _inputs, skipped = read_telemetry([path])
    assert not [s for s in skipped if "112" in s.item or "REASONS" in s.item or "DVCCTR" in s.item]
    masks = df.filter(pl.col("field") == "clock_event_reasons_mask")
    # synth: a thermal straggler reports 0x20|0x40, a working GPU 0, an idle one GPU idle (0x1)
    by_gpu = {g: set(v) for g, v in masks.group_by("gpu").agg(pl.col("value").unique()).iter_rows()}
    assert by_gpu == {0: {0.0}, 1: {96.0}, 2: {1.0}}
    w = reduce_windows(df, window="all").sort("gpu")
    assert w.get_column("throttle_sw_thermal_share").to_list() == [0.0, 1.0, 0.0]
    assert w.get_column("throttle_gpu_idle_share").to_list() == [0.0, 0.0, 1.0]
    assert w.get_column("power_limit_w").to_list() == [700.0, 700.0, 700.0]


def test_nvidia_smi_hex_reasons_and_power_limit(tmp_path):
    p = tmp_path / "smi.csv"
    p.write_text("timestamp, index, utilization.gpu [%], power.limit [W], clocks_event_reasons.active\n"
                 "2026/01/05 09:00:00.000, 0, 90 %, 300.00 W, 0x0000000000000004\n"
                 "2026/01/05 09:00:01.000, 0, 90 %, 300.00 W, 0x0000000000000060\n"
                 "2026/01/05 09:00:02.000, 0, 90 %, 300.00 W, [N/A]\n")
    df, _, skipped = read_telemetry([p], tz="UTC")
    masks = df.filter(pl.col("field") == "clock_event_reasons_mask").sort("timestamp").get_column("value").to_list()
    assert masks == [4.0, 96.0, None]
    assert set(df.filter(pl.col("field") == "power_limit_w").get_column("value")) == {300.0}
    assert skipped == []
    old = tmp_path / "old.csv"  # the pre-rename property name
    old.write_text("timestamp, index, clocks_throttle_reasons.active\n2026/01/05 09:00:00.000, 0, 0x0000000000000001\n")
    assert read_telemetry([old], tz="UTC")[0].get_column("value").to_list() == [1.0]


def test_nvidia_smi_unreadable_hex_names_line_and_column(tmp_path):
    p = tmp_path / "smi.csv"
    p.write_text("timestamp, index, clocks_event_reasons.active\n"
                 "2026/01/05 09:00:00.000, 0, 0x4\n2026/01/05 09:00:01.000, 0, 0xZZ\n")
    with pytest.raises(InputError) as e:
        read_telemetry([p], tz="UTC")
    assert "smi.csv:3" in str(e.value) and "clocks_event_reasons.active" in str(e.value) and "0xZZ" in str(e.value)


def test_real_t4_exporter_scrape_idle_reason_and_power_limit():
    p = SAMPLES / "datadog-t4-dcgm-exporter-scrapes.prom"
    if not p.exists():
        pytest.skip("real sample not available")
    _lf, _i, _s, w = reduce_telemetry([p], window="all")
    # read off the file: host 551bdf382151 (driver 470) reports DCGM_FI_DEV_CLOCK_THROTTLE_REASONS 1 (GPU idle)
    # and DCGM_FI_DEV_POWER_MGMT_LIMIT 70 (the T4's 70 W board limit)
    r = w.filter(pl.col("host") == "551bdf382151").row(0, named=True)
    assert r["clock_reason_samples"] == 1 and r["throttle_gpu_idle_share"] == 1.0 and r["power_limit_w"] == 70.0
    assert r["throttle_sw_power_cap_share"] == 0.0


def _fleet(tmp_path):
    a = write_telemetry(tmp_path / "node01.txt", ["training"] * 8, throttled={3: "power_cap"}, minutes=20)
    b = write_telemetry(tmp_path / "node02.prom", ["training"] * 8, throttled={6: "thermal"}, minutes=20,
                        format="exporter", host="node02")
    c = write_telemetry(tmp_path / "node03.txt", ["training"] * 8, clocks=True, minutes=20)  # a fine host
    return [str(a), str(b), str(c)]


def test_local_and_dask_give_the_same_throttle_windows_and_stragglers(tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'ridgeline[dask]')")
    from distributed import Client, LocalCluster

    paths = _fleet(tmp_path)
    kw = dict(window="5m", interval_s=1.0, start=T0)
    _lf, _i, _s, local = reduce_telemetry(paths, **kw)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        _lf, _i, _s, remote = reduce_telemetry(paths, engine="dask", scheduler=client, **kw)
        parts = telemetry_partitions(scan_telemetry_sources(paths, interval_s=1.0, start=T0)[0])
        direct = reduce_partitions(parts, window="5m", engine="dask", scheduler=client)
    assert_frame_equal(remote, local)
    assert_frame_equal(direct, local)
    s_local, s_remote = find_stragglers(local), find_stragglers(remote)
    assert_frame_equal(s_remote, s_local)
    assert [(r["host"], r["gpu"]) for r in s_local.iter_rows(named=True)] == [("node01", 3), ("node02", 6)]


def test_stragglers_group_by_any_columns():
    # two hosts of one job: grouped by host, 2 GPUs each (no median); grouped by job, 4 GPUs, GPU h2/1 lags
    parts = [gpu_series(host=h, gpu=g, n=900, **BUSY_TENSOR, sm_clock_hz=(1200 if (h, g) == ("h2", 1) else 1980) * 1e6)
             for h in ("h1", "h2") for g in (0, 1)]
    w = reduce_windows(table(*parts), window="5m").with_columns(pl.lit("job-7").alias("job"))
    assert find_stragglers(w).height == 0
    s = find_stragglers(w, keys=("job",))
    assert s.select("group", "host", "gpu", "group_gpus").rows() == [("job:job-7", "h2", 1, 4)]
