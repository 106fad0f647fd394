"""GPU health in the reduction (ridgeline.analyzer.fleet.health): XID codes, ECC, row remap, link counters.

The fixtures are SYNTHETIC (fixtures/telemetry/make_fixtures.py, HEALTH_SERIES): expected
numbers are read off the series there by the rules in the module docstring (rising XID edges,
counter increases with a decrease read as a reset counting from zero).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.fleet.health import XID_MEANINGS, xid_meaning
from ridgeline.analyzer.schema import TELEMETRY_FIELDS, WINDOW_COLUMNS
from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.parsers.telemetry import dcgm_fields
from ridgeline.parsers.telemetry.reader import read_telemetry
from ridgeline.pipeline import reduce_telemetry

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "telemetry"
T0 = dt.datetime(2026, 1, 5, 10, 0, 0, tzinfo=dt.timezone.utc)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
HEALTH_COLS = list(WINDOW_COLUMNS)[list(WINDOW_COLUMNS).index("health_fields"):]


def test_health_fields_have_dcgm_ids_names_aliases_and_dmon_short_names():
    cases = {  # DCGM 4.6 dcgm_fields.h id, old name, 4.6 name, dmon short name
        "xid_last_code": (230, "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_XID_ERROR", "XIDER"),
        "pcie_replay_count": (202, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_PCIE_REPLAY_TOTAL", "RPCTR"),
        "row_remap_failure_flag": (395, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_ROW_REMAP_FAILED", "RRF"),
        "remapped_rows_correctable_count": (394, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                                            "DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL", "CRMPS"),
        "nvlink_crc_flit_error_count": (409, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL",
                                        "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL", "NFELT"),
    }
    for canonical, (fid, old, new, short) in cases.items():
        assert dcgm_fields.lookup_id(fid).canonical == canonical
        assert dcgm_fields.lookup_exporter(old).canonical == canonical
        assert dcgm_fields.lookup_exporter(new).canonical == canonical
        assert dcgm_fields.lookup_dmon(short).canonical == canonical
    assert dcgm_fields.lookup_exporter("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL").canonical == "ecc_dbe_volatile_count"
    assert dcgm_fields.lookup_dmon("EDATL").canonical == "ecc_dbe_aggregate_count"
    # every health field is documented with its unit, scaled by 1 (counts and codes are not converted)
    for f in dcgm_fields.HEALTH_FIELDS:
        assert f in TELEMETRY_FIELDS
        assert dcgm_fields.name_map()[f] == (f, 1.0)
    assert len(dcgm_fields.HEALTH_FIELDS) == 13
    from ridgeline.analyzer.schema import HEALTH_FIELDS

    assert set(HEALTH_FIELDS) == set(dcgm_fields.HEALTH_FIELDS)  # the parsers' table and the schema agree


def _by_gpu(w):
    return {r["gpu"]: r for r in w.iter_rows(named=True)}


def test_exporter_fixture_whole_run_health_columns():
    _lf, _inputs, skipped, w = reduce_telemetry([FIX / "exporter-health.prom"], window="all")
    assert not [s for s in skipped if "does not analyze" in s.reason]
    g = _by_gpu(w)
    # GPU 0: XID 0,0,0,79,79,79 -> one new XID at +30 s (held afterwards: counted once)
    assert g[0]["xid_codes"] == "79" and g[0]["xid_first_seen"] == T0 + dt.timedelta(seconds=30)
    assert g[0]["xid_at_start_code"] is None
    # DBE volatile 0,0,0,0,2,2 -> +2 first at +40 s; SBE 5,5,6,6,7,7 -> +2; PCIe 10,10,10,12,12,12 -> +2
    assert g[0]["ecc_dbe_increase_count"] == 2 and g[0]["ecc_dbe_first_seen"] == T0 + dt.timedelta(seconds=40)
    assert g[0]["ecc_sbe_increase_count"] == 2 and g[0]["pcie_replay_increase_count"] == 2
    assert g[0]["row_remap_pending"] is True and g[0]["row_remap_failure"] is False
    assert g[0]["row_remap_first_seen"] == T0 + dt.timedelta(seconds=50)
    assert g[0]["counter_resets"] == 0 and g[0]["health_fields"] == 6
    # GPU 1: PCIe 100,100,3,3,4,4: the drop is a reset (counts 3 from zero), then +1 -> 4
    assert g[1]["xid_codes"] is None and g[1]["ecc_dbe_increase_count"] == 0
    assert g[1]["pcie_replay_increase_count"] == 4 and g[1]["counter_resets"] == 1
    assert g[1]["row_remap_pending"] is False
    # GPU 2: no health series: nothing known (null), never zero or "healthy"
    assert g[2]["health_fields"] == 0
    assert all(g[2][c] is None for c in HEALTH_COLS if c != "health_fields")
    # the NVLink and remapped-rows columns are null where those series are absent
    assert g[0]["nvlink_crc_increase_count"] is None and g[0]["remapped_rows_uncorrectable_increase_count"] is None


def test_exporter_fixture_per_window_first_seen_lands_in_its_window():
    _lf, _inputs, _skipped, w = reduce_telemetry([FIX / "exporter-health.prom"], window="20s")
    g0 = w.filter(pl.col("gpu") == 0).sort("window_start")
    assert g0.get_column("xid_codes").to_list() == [None, "79", None]  # +30 s is in the 20-40 s window
    assert g0.get_column("ecc_dbe_increase_count").to_list() == [0, 0, 2]
    # the increase of a sample is credited to its window (the diff crosses the window edge)
    assert g0.get_column("ecc_sbe_increase_count").to_list() == [0, 1, 1]
    assert g0.get_column("row_remap_pending").to_list() == [False, False, True]
    g1 = w.filter(pl.col("gpu") == 1).sort("window_start")
    assert g1.get_column("pcie_replay_increase_count").to_list() == [0, 3, 1]
    assert g1.get_column("counter_resets").to_list() == [0, 1, 0]


def test_dmon_fixture_gives_the_same_health_as_the_exporter_one():
    _lf, _inputs, skipped, w = reduce_telemetry([FIX / "dmon-health.txt"], window="all")
    assert skipped == []
    g = _by_gpu(w)
    # dmon has no timestamps: tick k at k x 10 s (-d 10000) from the relative origin
    assert g[0]["xid_codes"] == "79" and g[0]["xid_first_seen"] == EPOCH + dt.timedelta(seconds=30)
    assert g[0]["ecc_dbe_increase_count"] == 2 and g[0]["ecc_sbe_increase_count"] == 2
    assert g[0]["row_remap_pending"] is True and g[0]["row_remap_failure"] is None  # RRF not in this capture
    assert g[1]["pcie_replay_increase_count"] == 4 and g[1]["counter_resets"] == 1


def test_partition_path_and_long_table_path_agree_on_health():
    df, _inputs, _skipped = read_telemetry([FIX / "exporter-health.prom"])
    long = reduce_windows(df, window="20s").select("host", "gpu", "window_start", *HEALTH_COLS)
    _lf, _i, _s, part = reduce_telemetry([FIX / "exporter-health.prom"], window="20s")
    assert long.equals(part.select("host", "gpu", "window_start", *HEALTH_COLS))


def test_xid_held_from_the_first_sample_is_not_new_and_a_later_change_is():
    from telemetry_cases import gpu_series

    s = gpu_series(n=6, gpu_util_ratio=0.5, xid_last_code=[13, 13, 13, 31, 31, 43], jitter=0)
    (row,) = reduce_windows(s, window="all").iter_rows(named=True)
    assert row["xid_at_start_code"] == 13
    assert row["xid_codes"] == "31,43"  # order of first sight; 13 predates the capture


def test_xid_table_names_the_common_codes():
    for code in (13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120):
        assert code in XID_MEANINGS
    assert "fallen off the bus" in xid_meaning(79)
    assert "docs.nvidia.com/deploy/xid-errors" in xid_meaning(999)


SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "dcgm"


def _sample(name):
    p = SAMPLES / name
    if not p.exists():
        pytest.skip(f"real sample {name} not available")
    return p


def test_real_datadog_t4_scrape_health_series_are_read_not_skipped():
    p = _sample("datadog-t4-dcgm-exporter-scrapes.prom")
    _lf, _inputs, skipped, w = reduce_telemetry([p], window="all")
    unanalyzed = {s.item.split()[1] for s in skipped if "does not analyze" in s.reason}
    health_names = {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
                    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS"}
    assert not unanalyzed & health_names
    # the remap series in that file carry no labels: listed as not attributable, not analyzed
    unlabeled = {s.item.split()[1] for s in skipped if "not attributable" in s.reason}
    assert {"DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS"} <= unlabeled
    t4 = w.filter(pl.col("uuid") == "GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e").row(0, named=True)
    # XID 0 and PCIe replay 0 in one scrape: present, no XID, no increase known from one sample
    assert t4["health_fields"] == 2 and t4["xid_codes"] is None and t4["xid_at_start_code"] is None
    assert t4["pcie_replay_increase_count"] == 0


def test_real_a100_mig_scrape_reads_xid_for_the_gpu_and_its_instance():
    p = _sample("nvidia-docs-a100-mig-1g5gb-loaded-dcgm-exporter.prom")
    df, _inputs, skipped = read_telemetry([p])
    assert "DCGM_FI_DEV_XID_ERRORS" not in {s.item.split()[1] for s in skipped if "does not analyze" in s.reason}
    xid = df.filter(pl.col("field") == "xid_last_code")
    assert xid.height == 2 and xid.get_column("value").to_list() == [0.0, 0.0]
    assert xid.get_column("gpu_instance").null_count() == 1  # the whole GPU and the 1g.5gb instance


def test_telemetry_table_health_block_lists_events_and_says_nothing_without_series():
    from telemetry_cases import gpu_series

    from ridgeline.render.fleet.telemetry import health_lines

    _lf, _i, _s, w = reduce_telemetry([FIX / "exporter-health.prom"], window="all")
    text = "\n".join(health_lines(w))
    assert "2 of 3 GPU(s) report XID/ECC/remap/link series; nothing is known" in text.replace("\n  ", " ")
    assert "host:hnode gpu:0  XID 79 from 01-05 10:00:30; DBE +2; SBE +2; PCIe replay" in text
    assert "host:hnode gpu:1  PCIe replay +4; 1 counter reset(s)" in text
    assert "gpu:2" not in text and "healthy" not in text
    assert health_lines(reduce_windows(gpu_series(n=5, gpu_util_ratio=0.5), window="all")) == []
