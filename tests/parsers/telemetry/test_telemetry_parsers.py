"""Telemetry readers on the synthetic fixtures (fixtures/telemetry, see its MANIFEST.md) and
small inline inputs. Expected values are computed by hand from the fixture text."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.schema import TELEMETRY_COLUMNS, polars_schema
from ridgeline.errors import InputError, UsageError
from ridgeline.parsers.telemetry.dcgm_fields import lookup_dmon, lookup_exporter, name_map
from ridgeline.parsers.telemetry.reader import detect_telemetry_format, read_telemetry, scan_telemetry

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "telemetry"
MIB = 1048576
UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def vals(df, **where):
    for k, v in where.items():
        df = df.filter(pl.col(k).is_null() if v is None else pl.col(k) == v)
    return df.sort("timestamp").get_column("value").to_list()


@pytest.mark.parametrize("name,kind", [
    ("dmon-v24-mig.txt", "dcgm-dmon"),
    ("dmon-v45-desc.txt", "dcgm-dmon"),
    ("dmon-v23-right.txt", "dcgm-dmon"),
    ("exporter-3-scrapes.prom", "dcgm-exporter"),
    ("exporter-v1-names.prom", "dcgm-exporter"),
    ("prometheus-range.json", "prometheus-json"),
    ("nvidia-smi-dmon.txt", "nvidia-smi-dmon"),
    ("nvidia-smi-query.csv", "nvidia-smi-csv"),
    ("long.csv", "telemetry-csv"),
    ("wide.csv", "telemetry-csv"),
    ("hive", "telemetry-parquet"),
    ("MANIFEST.md", None),
])
def test_detection_by_content(name, kind):
    assert detect_telemetry_format(FIX / name) == kind


@pytest.mark.parametrize("name", ["dmon-v24-mig.txt", "exporter-3-scrapes.prom", "prometheus-range.json",
                                  "nvidia-smi-dmon.txt", "nvidia-smi-query.csv", "long.csv", "wide.csv", "hive"])
def test_every_reader_returns_the_contract(name):
    lf, inputs, _ = scan_telemetry([FIX / name])
    assert lf.collect_schema() == pl.Schema(polars_schema(TELEMETRY_COLUMNS))
    df = lf.collect()
    assert df.height > 0 and inputs[0].rows > 0
    assert set(df.get_column("field").unique()) <= {c for c, _s in name_map().values()}


def test_vocabulary_aliases():
    assert lookup_exporter("dcgm_gpu_utilization").canonical == "gpu_util_ratio"
    assert lookup_exporter("dcgm_fi_prof_pipe_tensor_active").canonical == "tensor_active_ratio"
    assert lookup_exporter("DCGM_FI_DEV_BOARD_POWER_WATTS").canonical == "power_w"  # 4.6 renamed
    assert lookup_exporter("DCGM_FI_DEV_FB_USED").scale == MIB
    assert lookup_dmon("GPUTL").scale == 0.01
    assert lookup_exporter("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") is None  # known to DCGM, not analyzed
    assert lookup_exporter("DCGM_FI_DEV_XID_ERRORS").canonical == "xid_last_code"  # health (analyzer/fleet/health.py)


def test_dmon_v24_mig_entities_ticks_and_half_second_interval():
    notes: list[str] = []
    df, inputs, skipped = read_telemetry([FIX / "dmon-v24-mig.txt"], notes=notes)
    assert inputs[0].rows == 9  # 3 ticks x (GPU 0, GPU-I 21, GPU-I 29)
    gi29 = df.filter(pl.col("gpu_instance") == "29")
    assert gi29.get_column("gpu").null_count() == gi29.height  # parent unknown from a dmon id
    assert vals(gi29, field="sm_active_ratio") == [None, 1.294, 1.1]  # kept raw; the reduction clamps
    # blank DRAMA cell of GPU 0 in tick 2 -> null, tick 0 N/A -> null
    assert vals(df, gpu=0, field="dram_active_ratio") == [None, 0.6, None]
    # '-d 500' on the recorded command line: 0.5 s ticks
    ts = sorted(df.filter(pl.col("gpu") == 0).get_column("timestamp").unique())
    assert [(t - EPOCH).total_seconds() for t in ts] == [0.0, 0.5, 1.0]
    assert any("-d 500" in n for n in notes)
    items = {s.item: s.reason for s in skipped}
    assert any(i.startswith("entity GPU 0 LINK") for i in items)
    assert any("dmon was stopped" in r for r in items.values())


def test_dmon_v45_descending_order_and_units():
    df, _, _ = read_telemetry([FIX / "dmon-v45-desc.txt"], start=dt.datetime(2026, 1, 5, 8, 0))
    assert vals(df, gpu=1, field="gpu_util_ratio") == [0.97] * 3
    assert vals(df, gpu=0, field="fb_used_bytes") == [1024 * MIB] * 3
    assert vals(df, gpu=1, field="power_w") == [650.0] * 3
    assert df.get_column("timestamp").min() == dt.datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    assert df.filter(pl.col("gpu") == 0).get_column("timestamp").n_unique() == 3


def test_dmon_v23_right_aligned():
    df, _, _ = read_telemetry([FIX / "dmon-v23-right.txt"])
    assert vals(df, gpu=0, field="gpu_util_ratio") == [0.88, 0.9]
    assert vals(df, gpu=0, field="tensor_active_ratio") == [0.3, 0.31]


def test_dmon_bad_value_names_line_and_column(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("#Entity   GRACT        TENSO\nID\nGPU 0     0.5          abc\n")
    with pytest.raises(InputError) as e:
        read_telemetry([p])
    assert "bad.txt:3" in str(e.value) and "'TENSO'" in str(e.value) and "'abc'" in str(e.value)


def test_dmon_without_header_is_an_error(tmp_path):
    p = tmp_path / "noheader.txt"
    p.write_text("GPU 0     0.5          0.1\n")
    with pytest.raises(InputError):
        read_telemetry([p])  # not detected as any telemetry format


def test_exporter_scrapes_boundaries_labels_sentinel_error_line():
    notes: list[str] = []
    df, inputs, skipped = read_telemetry([FIX / "exporter-3-scrapes.prom"], notes=notes)
    node1 = df.filter(pl.col("host") == "node1")  # Hostname= (old label)
    node2 = df.filter(pl.col("host") == "node2")  # hostname= (new label)
    assert vals(node1, field="gpu_util_ratio") == [0.90, 0.91, 0.92]
    assert vals(node1, field="tensor_active_ratio") == [0.1, 0.2, 0.3]
    # three scrapes, 30 s apart (exporter default), relative times
    assert sorted(node1.get_column("timestamp").unique()) == [EPOCH + dt.timedelta(seconds=30 * k) for k in range(3)]
    assert vals(node1, field="fb_used_bytes") == [2048 * MIB] * 3
    assert vals(node1, field="sm_clock_hz") == [None] * 3  # sentinel -> missing, never 0
    mig = node2.filter(pl.col("gpu_instance") == "2")
    assert vals(mig, field="tensor_active_ratio") == [0.25] * 3 and mig.get_column("gpu").unique().to_list() == [1]
    assert set(df.get_column("pod").drop_nulls().unique()) == {"serve/vllm-0", "batch/train-7"}
    reasons = [s.reason for s in skipped]
    assert any(r.startswith("exporter printed an error instead of a value") for r in reasons)
    assert any(s.item.startswith("series DCGM_FI_DEV_MEMORY_TEMP (3 samples)") for s in skipped)
    assert any("sentinel" in n for n in notes)


def test_exporter_v1_names_timestamps_out_of_order():
    df, _, _ = read_telemetry([FIX / "exporter-v1-names.prom"])
    t0 = dt.datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    util = df.filter(pl.col("field") == "gpu_util_ratio").sort("timestamp")
    assert util.get_column("value").to_list() == [0.50, 0.51, 0.52]
    assert util.get_column("timestamp").to_list() == [t0 + dt.timedelta(seconds=s) for s in (0, 15, 30)]
    assert vals(df, field="fb_used_bytes") == [100 * MIB]
    assert df.get_column("uuid").unique().to_list() == ["GPU-cccc"]


def test_exporter_many_scrapes_with_timestamps_and_interval_option(tmp_path):
    p = tmp_path / "s.prom"
    p.write_text("".join(f'DCGM_FI_DEV_GPU_UTIL{{gpu="0",hostname="h"}} {v}\n' for v in (10, 20, 30)))
    df, _, _ = read_telemetry([p], interval_s=15.0, start=dt.datetime(2026, 1, 5, tzinfo=UTC))
    ts = df.sort("timestamp").get_column("timestamp").to_list()
    assert [(t - ts[0]).total_seconds() for t in ts] == [0.0, 15.0, 30.0]
    assert df.sort("timestamp").get_column("value").to_list() == [0.1, 0.2, 0.3]


def test_prometheus_json_matrix_vector_nan_and_unnamed_series():
    notes: list[str] = []
    df, inputs, skipped = read_telemetry([FIX / "prometheus-range.json"], notes=notes)
    t0 = dt.datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    util = df.filter(pl.col("field") == "gpu_util_ratio").sort("timestamp")
    assert util.get_column("value").to_list() == [0.8, None, 1.0]  # "NaN" -> null
    assert util.get_column("timestamp").to_list() == [t0 + dt.timedelta(seconds=s) for s in (0, 60, 120)]
    assert util.get_column("host").unique().to_list() == ["node9"] and util.get_column("gpu").unique().to_list() == [3]
    dram = df.filter(pl.col("field") == "dram_active_ratio").row(0, named=True)
    assert dram["value"] == 0.625 and dram["host"] == "10.0.0.9:9400"
    assert dram["timestamp"] == t0 + dt.timedelta(seconds=180.5)
    assert any("__name__" in s.reason for s in skipped)
    assert inputs[0].rows == 5


def test_prometheus_json_error_answer(tmp_path):
    p = tmp_path / "err.json"
    p.write_text(json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"}))
    _, _, skipped = read_telemetry([p])
    assert skipped and "parse error" in skipped[0].reason


def test_nvidia_smi_dmon():
    df, _, skipped = read_telemetry([FIX / "nvidia-smi-dmon.txt"])
    assert vals(df, gpu=0, field="gpu_util_ratio") == [0.30, 0.31]  # 'sm' is GPU-Util
    assert vals(df, gpu=0, field="sm_clock_hz") == [1710e6, 1710e6]
    assert vals(df, gpu=1, field="mem_clock_hz") == [405e6, 405e6]
    assert any(s.item == "column mtemp" for s in skipped)


def test_nvidia_smi_query_na_not_supported_and_index():
    df, _, _ = read_telemetry([FIX / "nvidia-smi-query.csv"], tz="UTC")
    assert vals(df, gpu=0, field="gpu_util_ratio") == [0.5, 0.6]
    assert vals(df, gpu=1, field="gpu_util_ratio") == [None]  # [N/A]
    assert vals(df, gpu=1, field="power_w") == [None]  # [Not Supported]
    assert vals(df, gpu=1, field="fb_used_bytes") == [2000 * MIB]
    assert vals(df, gpu=0, field="sm_clock_hz") == [1500e6, 1500e6]


def test_nvidia_smi_bad_number(tmp_path):
    p = tmp_path / "smi.csv"
    p.write_text("timestamp, index, utilization.gpu [%]\n2026/01/05 09:00:00.000, 0, lots %\n")
    with pytest.raises(InputError) as e:
        read_telemetry([p])
    assert "smi.csv:2" in str(e.value) and "utilization.gpu [%]" in str(e.value)


def test_bad_tz_is_a_usage_error():
    with pytest.raises(UsageError):
        read_telemetry([FIX / "nvidia-smi-query.csv"], tz="Mars/Olympus")


def test_long_csv_mixed_names_scaled_and_unknown_listed():
    df, _, skipped = read_telemetry([FIX / "long.csv"])
    assert vals(df, field="gpu_util_ratio") == [0.5, 0.7]  # canonical: taken as is
    assert vals(df, field="fb_used_bytes") == [2048 * MIB]  # DCGM name: MiB -> bytes
    assert vals(df, field="tensor_active_ratio") == [0.2]  # dmon short name
    assert [s.item for s in skipped] == ["field fan_speed (1 rows)"]


def test_wide_csv_epoch_seconds_and_dcgm_columns():
    df, _, skipped = read_telemetry([FIX / "wide.csv"])
    t0 = dt.datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    util = df.filter(pl.col("field") == "gpu_util_ratio").sort("timestamp")
    assert util.get_column("value").to_list() == [0.9, None]  # percent -> ratio; blank -> null
    assert util.get_column("timestamp").to_list() == [t0, t0 + dt.timedelta(seconds=1)]
    assert vals(df, field="sm_clock_hz") == [1980e6, 1980e6]
    assert [s.item for s in skipped] == ["column notes"]


def test_hive_parquet_host_from_path_stays_lazy():
    lf, inputs, _ = scan_telemetry([FIX / "hive"])
    assert isinstance(lf, pl.LazyFrame)
    df = lf.collect()
    assert sorted(df.get_column("host").unique()) == ["nodeC", "nodeD"]
    assert vals(df, host="nodeC", field="gpu_util_ratio") == [0.9] * 4
    assert inputs[0].rows == 16


def test_several_files_and_hosts_in_one_scan():
    df, inputs, _ = read_telemetry([FIX / "long.csv", FIX / "wide.csv", FIX / "hive"])
    assert {i.kind for i in inputs} == {"telemetry-csv", "telemetry-parquet"}
    assert sorted(df.get_column("host").unique()) == ["nodeA", "nodeB", "nodeC", "nodeD"]


def test_explicit_unknown_file_is_an_error_folder_file_is_skipped(tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello\n")
    with pytest.raises(InputError):
        read_telemetry([p])
    (tmp_path / "ok.csv").write_text((FIX / "long.csv").read_text())
    df, inputs, skipped = read_telemetry([tmp_path])
    assert len(inputs) == 1 and any(s.source.endswith("notes.txt") for s in skipped)


def test_nvidia_smi_dmon_with_date_time_columns(tmp_path):
    p = tmp_path / "dmon-dt.txt"
    p.write_text("#Date       Time        gpu    pwr     sm    mem\n"
                 "#YYYYMMDD   HH:MM:SS    Idx      W      %      %\n"
                 " 20260105   09:00:00      0     86     30     27\n"
                 " 20260105   09:00:01      0     87     40      -\n")
    assert detect_telemetry_format(p) == "nvidia-smi-dmon"
    df, _, _ = read_telemetry([p], tz="Europe/Berlin")
    util = df.filter(pl.col("field") == "gpu_util_ratio").sort("timestamp")
    assert util.get_column("value").to_list() == [0.30, 0.40]
    assert util.get_column("timestamp").to_list()[0] == dt.datetime(2026, 1, 5, 8, 0, tzinfo=UTC)  # CET = UTC+1
    assert vals(df, field="mem_copy_util_ratio") == [0.27, None]


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=40, deadline=None)
@given(
    n_gpus=st.integers(1, 4),
    n_ticks=st.integers(1, 20),
    data=st.data(),
)
def test_dmon_roundtrip_any_entity_order_and_na(tmp_path_factory, n_gpus, n_ticks, data):
    """Whatever order the GPUs are printed in each tick, and wherever N/A appears, every
    value lands on its own GPU and tick (header repeated every 14 ticks as dcgmi does)."""
    cell = st.one_of(st.none(), st.integers(0, 1000).map(lambda k: k / 1000))
    values = {(g, t): (data.draw(cell), data.draw(cell)) for g in range(n_gpus) for t in range(n_ticks)}
    lines = []
    for t in range(n_ticks):
        if t % 14 == 0:
            lines += ["#Entity   GRACT        TENSO        ", "ID                                    "]
        order = data.draw(st.permutations(list(range(n_gpus))))
        for g in order:
            a, b = ("N/A" if v is None else f"{v:.3f}" for v in values[(g, t)])
            lines.append(f"{'GPU ' + str(g):<10}{a:<13}{b:<13}")
    p = tmp_path_factory.mktemp("dmon") / "x.txt"
    p.write_text("\n".join(lines) + "\n")
    df, inputs, _ = read_telemetry([p])
    assert inputs[0].rows == n_gpus * n_ticks
    for g in range(n_gpus):
        for field, k in (("gr_engine_active_ratio", 0), ("tensor_active_ratio", 1)):
            got = vals(df, gpu=g, field=field)
            assert got == [values[(g, t)][k] for t in range(n_ticks)]


def test_committed_fixtures_match_their_generator():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", FIX / "make_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name, make in mod.FILES.items():
        assert (FIX / name).read_text(encoding="utf-8") == make(), f"{name} is stale: run python fixtures/telemetry/make_fixtures.py"


def test_openmetrics_seconds_timestamps(tmp_path):
    p = tmp_path / "om.txt"
    p.write_text("# TYPE DCGM_FI_PROF_DRAM_ACTIVE gauge\n"
                 'DCGM_FI_PROF_DRAM_ACTIVE{gpu="0",Hostname="n"} 0.5 1767600000.25\n'
                 'DCGM_FI_PROF_DRAM_ACTIVE{gpu="0",Hostname="n"} 0.6 1767600030\n'
                 "# EOF\n")
    df, _, skipped = read_telemetry([p])
    t0 = dt.datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
    assert df.sort("timestamp").get_column("timestamp").to_list() == [
        t0 + dt.timedelta(milliseconds=250), t0 + dt.timedelta(seconds=30)]
    assert skipped == []


def test_parquet_unknown_field_listed_with_count(tmp_path):
    d = tmp_path / "host=h1"
    d.mkdir()
    t0 = dt.datetime(2026, 1, 5, tzinfo=UTC)
    pl.DataFrame({
        "timestamp": [t0, t0, t0 + dt.timedelta(seconds=1)],
        "gpu": [0, 0, 0],
        "field": ["DCGM_FI_DEV_GPU_UTIL", "fan_speed", "DCGM_FI_DEV_GPU_UTIL"],
        "value": [50.0, 30.0, 70.0],
    }).write_parquet(d / "p.parquet")
    df, inputs, skipped = read_telemetry([tmp_path])
    assert [s.item for s in skipped] == ["field fan_speed (1 rows)"]
    assert vals(df, field="gpu_util_ratio") == [0.5, 0.7]  # percent -> ratio, exactly (70 / 100, not 70 * 0.01)
    assert df.get_column("host").unique().to_list() == ["h1"]
