"""Real telemetry recorded by other people (shared/samples/dcgm, see its MANIFEST.md).

Expected values are read off the files by hand; the tests skip when the folder is absent.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.parsers.telemetry.reader import detect_telemetry_format, read_telemetry

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "dcgm"
MIB = 1048576


def sample(name: str) -> Path:
    p = SAMPLES / name
    if not p.exists():
        pytest.skip(f"real sample {name} not available")
    return p


def values(df, **where):
    for k, v in where.items():
        df = df.filter(pl.col(k) == v)
    return df.sort("timestamp").get_column("value").to_list()


def test_h800x4_dmon_four_gpus_descending_order():
    p = sample("llm-action-h800x4-dcgmi-dmon-nvlink.txt")
    assert detect_telemetry_format(p) == "dcgm-dmon"
    df, inputs, skipped = read_telemetry([p])
    assert inputs[0].kind == "dcgm-dmon" and inputs[0].rows == 24  # 6 ticks x 4 GPUs
    assert sorted(df.get_column("gpu").unique().to_list()) == [0, 1, 2, 3]
    assert skipped == []
    # GPU 3 is printed first in each tick, yet its first row is tick 0 like GPU 0's
    assert values(df, gpu=3, field="nvlink_tx_bytes_per_s")[:2] == [19694075554.0, 12945588302.0]
    assert values(df, gpu=0, field="nvlink_rx_bytes_per_s")[0] == 21900091841.0
    assert values(df, gpu=0, field="nvlink_tx_bytes_per_s")[3] == 31802.0
    # 6 ticks at the default 1 s interval, relative to the epoch
    ts = df.filter(pl.col("gpu") == 1).get_column("timestamp").unique().sort().to_list()
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    assert ts == [epoch + dt.timedelta(seconds=i) for i in range(6)]


def test_h800_dmon_na_warmup_ticks_are_null_not_zero():
    p = sample("llm-action-h800-dcgmi-dmon-nvlink-pcie-na-warmup.txt")
    notes: list[str] = []
    df, inputs, _ = read_telemetry([p], interval_s=2.0, host="h800", notes=notes)
    assert inputs[0].rows == 5
    tx = values(df, field="pcie_tx_bytes_per_s")
    assert tx[:2] == [None, None]
    assert tx[2:] == [498948.0, 449138.0, 548740.0]
    assert values(df, field="nvlink_tx_bytes_per_s")[2] == 0.0  # a real zero stays zero
    assert df.get_column("host").unique().to_list() == ["h800"]
    # --interval 2s: ticks two seconds apart
    t = df.get_column("timestamp").unique().sort().to_list()
    assert (t[1] - t[0]).total_seconds() == 2.0
    assert any("relative" in n for n in notes)
    w = reduce_windows(df, window="all")
    assert w.height == 1 and w.item(0, "samples") == 5
    assert w.item(0, "null_values") == 8  # 2 warm-up ticks x 4 fields


def test_rtx4090_nvidia_smi_csv_units_and_scale():
    p = sample("vlm-optimization-rtx4090-nvidia-smi-query-gpu.csv")
    assert detect_telemetry_format(p) == "nvidia-smi-csv"
    notes: list[str] = []
    df, inputs, _ = read_telemetry([p], notes=notes)
    assert inputs[0].kind == "nvidia-smi-csv" and inputs[0].rows == 2619
    util = values(df, field="gpu_util_ratio")
    assert len(util) == 2619
    assert util[:4] == [0.01, 0.0, 0.04, 0.34]  # "1 %", "0 %", "4 %", "34 %"
    assert values(df, field="fb_used_bytes")[3] == 17304 * MIB
    assert values(df, field="power_w")[3] == pytest.approx(71.06)
    assert values(df, field="mem_copy_util_ratio")[3] == pytest.approx(0.01)
    first = df.get_column("timestamp").min()
    assert first == dt.datetime(2026, 1, 3, 15, 36, 53, 507000, tzinfo=dt.timezone.utc)
    assert any("UTC" in n and "--tz" in n for n in notes)
    assert df.get_column("model").unique().to_list() == ["NVIDIA GeForce RTX 4090"]


def test_rtx4090_tz_option_shifts_to_utc():
    p = sample("vlm-optimization-rtx4090-nvidia-smi-query-gpu.csv")
    df, _, _ = read_telemetry([p], tz="Europe/Berlin")
    # 15:36:53.507 in Berlin (CET, UTC+1 in January) is 14:36:53.507 UTC
    assert df.get_column("timestamp").min() == dt.datetime(2026, 1, 3, 14, 36, 53, 507000, tzinfo=dt.timezone.utc)


def test_datadog_exporter_scrape_t4_uuids_and_a10g_line():
    p = sample("datadog-t4-dcgm-exporter-scrapes.prom")
    assert detect_telemetry_format(p) == "dcgm-exporter"
    df, inputs, skipped = read_telemetry([p])
    assert inputs[0].kind == "dcgm-exporter"
    uuids = set(df.get_column("uuid").drop_nulls().unique().to_list())
    assert uuids == {"GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e", "GPU-9ef1b6d0-3643-5dd7-b823-c0ec20dcf2d5", "GPU-abc"}
    t4 = df.filter(pl.col("uuid") == "GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e")
    assert t4.get_column("host").unique().to_list() == ["424773df46e0"]
    assert values(t4, field="sm_clock_hz") == [300e6]  # 300 MHz
    assert values(t4, field="power_w") == [pytest.approx(8.969)]
    assert values(t4, field="fb_free_bytes") == [15109 * MIB]
    assert values(t4, field="gpu_util_ratio") == [0.0]
    other = df.filter(pl.col("uuid") == "GPU-9ef1b6d0-3643-5dd7-b823-c0ec20dcf2d5")
    assert values(other, field="fb_total_bytes") == [15109 * MIB]
    assert other.get_column("host").unique().to_list() == ["551bdf382151"]
    a10g = df.filter(pl.col("model") == "NVIDIA A10G")
    assert a10g.height == 1
    row = a10g.row(0, named=True)
    assert (row["field"], row["value"], row["host"], row["pod"]) == ("dram_active_ratio", 0.000003, "ip-11111", "ray-llm/ray-1111111")
    # unlabeled profiling lines belong to no GPU: skipped and listed, never a phantom GPU
    assert df.filter(pl.col("gpu").is_null() & pl.col("uuid").is_null()).height == 0
    unlabeled = {s.item.split()[1] for s in skipped if "not attributable to a GPU" in s.reason}
    assert {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"} <= unlabeled
    # nothing is silently dropped: metrics ridgeline does not analyze are listed by name
    names = {s.item.split()[1] for s in skipped}
    assert {"DCGM_FI_DEV_FB_USED_PERCENT", "DCGM_FI_DEV_PSTATE"} <= names
    # health series are read (ridgeline.analyzer.fleet.health), not listed as unanalyzed
    assert values(t4, field="xid_last_code") == [0.0] and values(t4, field="pcie_replay_count") == [0.0]
    assert all(s.reason == "metric ridgeline does not analyze" or "not attributable to a GPU" in s.reason
               for s in skipped)
    n_lines = sum(1 for ln in p.read_text().splitlines() if ln.strip() and not ln.startswith("#"))
    assert inputs[0].rows == n_lines == df.height + sum(int(s.item.split("(")[1].split()[0]) for s in skipped)


def test_whole_samples_folder_reads_and_reduces():
    if not SAMPLES.exists():
        pytest.skip("samples absent")
    df, inputs, skipped = read_telemetry([SAMPLES])
    # every file is read or listed as skipped; each read file is read as it is alone
    files = sorted(p for p in SAMPLES.iterdir() if p.is_file())
    read = {Path(i.path).name: i for i in inputs}
    skipped_files = {Path(s.source).name for s in skipped if s.item == "file"}
    assert set(read) | skipped_files == {p.name for p in files} and not set(read) & skipped_files
    assert "MANIFEST.md" in skipped_files
    for p in files:
        if p.name in read:
            _, alone, _ = read_telemetry([p])
            assert [(i.kind, i.rows) for i in alone] == [(read[p.name].kind, read[p.name].rows)]
    w = reduce_windows(df, window="all")
    assert w.height >= len(read)
    rtx = w.filter(pl.col("model") == "NVIDIA GeForce RTX 4090")
    if rtx.height:  # the nvidia-smi RTX 4090 log (MANIFEST): 2,619 rows, no profiling fields
        assert rtx.row(0, named=True)["samples"] == 2619
        assert rtx.row(0, named=True)["has_profiling"] is False
