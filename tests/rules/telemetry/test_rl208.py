"""RL208 gpu-health-events: firing and quiet cases on SYNTHETIC health series.

The exporter fixture's numbers (fixtures/telemetry/make_fixtures.py, HEALTH_SERIES) give the
expected message by hand: XID 79 appears at +30 s, double-bit ECC 0 -> 2 at +40 s, a row remap
pending from +50 s, single-bit ECC 5 -> 7 and PCIe replays 10 -> 12.
"""

from __future__ import annotations

from pathlib import Path

from telemetry_cases import gpu_series, table

from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.pipeline import reduce_telemetry
from ridgeline.rules.base import Context
from ridgeline.rules.engine import get_rule

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "telemetry"


def _run(windows):
    return get_rule("RL208")().check(Context(windows=windows))


def test_rl208_fires_critical_on_the_exporter_fixture_and_info_on_counter_growth():
    _lf, _i, _s, w = reduce_telemetry([FIX / "exporter-health.prom"], window="20s")
    by = {f.subject: f for f in _run(w)}
    assert set(by) == {"host:hnode gpu:0", "host:hnode gpu:1"}  # GPU 2 has no health series: nothing said
    f0 = by["host:hnode gpu:0"]
    assert f0.severity == "critical" and f0.code == "RL208"
    assert f0.message == ("XID 79 (GPU has fallen off the bus) first seen 2026-01-05T10:00:30Z; double-bit ECC errors "
                          "+2 first seen 2026-01-05T10:00:40Z; row remap pending since 2026-01-05T10:00:50Z; also "
                          "single-bit ECC errors +2, PCIe replays +2")
    ev = {e.metric: e.value for e in f0.evidence}
    assert ev["xid_codes"] == "79" and ev["ecc_dbe_increase_count"] == 2 and ev["row_remap_pending"] is True
    f1 = by["host:hnode gpu:1"]
    assert f1.severity == "info"
    assert f1.message == ("errors counted during the capture: PCIe replays +4, 1 counter reset (driver reload or "
                          "exporter restart)")


def test_rl208_dmon_fixture_fires_the_same_critical():
    _lf, _i, _s, w = reduce_telemetry([FIX / "dmon-health.txt"], window="all")
    (f0,) = [f for f in _run(w) if f.severity == "critical"]
    assert f0.subject == "host:dmon-health gpu:0" and "XID 79" in f0.message and "double-bit ECC errors +2" in f0.message


def test_rl208_each_critical_cause_alone():
    ok = dict(gpu_util_ratio=0.9, jitter=0)
    cases = {
        "failure": (dict(row_remap_failure_flag=[0, 0, 1, 1]), "row remap failure reported 2026-01-05T08:00:02Z"),
        "dbe aggregate": (dict(ecc_dbe_aggregate_count=[4, 4, 4, 5]), "double-bit ECC errors +1 first seen 2026-01-05T08:00:03Z"),
        "xid 48": (dict(xid_last_code=[0, 48, 48, 48]), "XID 48 (double-bit ECC error (uncorrectable memory error)) first seen 2026-01-05T08:00:01Z"),
    }
    for name, (fields, text) in cases.items():
        (f,) = _run(reduce_windows(gpu_series(n=4, **ok, **fields), window="all"))
        assert f.severity == "critical" and f.message == text, name


def test_rl208_xid_already_set_at_start_is_a_warning_not_critical():
    w = reduce_windows(gpu_series(n=4, gpu_util_ratio=0.9, xid_last_code=[79] * 4, jitter=0), window="all")
    (f,) = _run(w)
    assert f.severity == "warning" and "already set at the first sample" in f.message


def test_rl208_quiet():
    flat = dict(gpu_util_ratio=0.9, jitter=0, xid_last_code=[0] * 5, ecc_dbe_volatile_count=[1] * 5,
                ecc_sbe_volatile_count=[7] * 5, row_remap_pending_flag=[0] * 5, row_remap_failure_flag=[0] * 5,
                nvlink_replay_error_count=[3] * 5, pcie_replay_count=[9] * 5)
    # flat counters (even non-zero: the errors predate the capture), no XID, no remap
    assert _run(reduce_windows(gpu_series(n=5, **flat), window="all")) == []
    # a counter reset to zero adds nothing: no finding
    reset = dict(flat, pcie_replay_count=[9, 9, 0, 0, 0])
    assert _run(reduce_windows(gpu_series(n=5, **reset), window="all")) == []
    # GPUs without any health series: no finding at all (never "healthy")
    plain = table(gpu_series(n=5, gpu_util_ratio=0.9), gpu_series(n=5, gpu=1, gpu_util_ratio=0.1))
    assert _run(reduce_windows(plain, window="all")) == []


def test_rl208_application_xid_is_a_warning_driver_xid_critical():
    """Issue 31: XID 13 (an application fault, the GPU is fine) is a warning; XID 48 (double-bit ECC)
    critical with its action; both at once: critical, the 13 still named as the application's."""
    ok = dict(gpu_util_ratio=0.9, jitter=0)
    (app,) = _run(reduce_windows(gpu_series(n=4, **ok, xid_last_code=[0, 13, 13, 13]), window="all"))
    assert app.severity == "warning"
    assert app.message.startswith("XID 13 (Graphics Engine Exception") and "an application fault, the GPU is fine" in app.message
    assert "repeats of the same XID are not visible" in app.remedy
    (hw,) = _run(reduce_windows(gpu_series(n=4, **ok, xid_last_code=[0, 48, 48, 48]), window="all"))
    assert hw.severity == "critical" and "XID 48: drain the node and reset the GPU" in hw.remedy
    (both,) = _run(reduce_windows(gpu_series(n=5, **ok, xid_last_code=[0, 13, 13, 48, 48]), window="all"))
    assert both.severity == "critical" and both.message.index("XID 48") < both.message.index("XID 13")
    # an XID ridgeline's table does not know is not played down
    (unknown,) = _run(reduce_windows(gpu_series(n=4, **ok, xid_last_code=[0, 140, 140, 140]), window="all"))
    assert unknown.severity == "critical" and "docs.nvidia.com/deploy/xid-errors" in unknown.message


def test_xid_table_kinds_and_severities():
    from ridgeline.analyzer.fleet import xids as X

    assert set(X.XIDS) >= {13, 31, 43, 45, 68, 48, 63, 64, 74, 79, 92, 94, 95}
    assert {X.kind(c) for c in X.XIDS} <= set(X.KINDS)
    assert [c for c in (13, 31, 43, 45, 68) if X.severity(c) != "warning"] == []
    assert [c for c in (48, 63, 64, 74, 79, 92, 94, 95) if X.severity(c) != "critical"] == []
    assert X.severity(999) == "critical" and X.kind(999) is None
    assert all(X.action(c) for c in X.XIDS)
