"""Usage mistakes get a one-line error that says what was expected: thresholds, config, inputs."""

from pathlib import Path

import pytest

from ridgeline.errors import UsageError
from ridgeline.rules.engine import rule_overrides


@pytest.mark.parametrize(
    "code,key,value,message",
    [
        ("RL101", "max_ridge_fraction", -1, "expected a number >= 0"),
        ("RL101", "min_time_share", 5, "expected a share between 0 and 1"),
        ("RL106", "min_launches", -3, "expected a number >= 0"),
        ("RL103", "min_bandwidth_fraction", float("nan"), "expected a number >= 0"),
    ],
)
def test_out_of_range_threshold_is_refused(code, key, value, message):
    with pytest.raises(UsageError, match=message):
        rule_overrides({"rules": {code: {key: value}}})


def test_in_range_thresholds_are_kept():
    out = rule_overrides({"rules": {"RL101": {"min_time_share": 0.5}, "RL108": {"l2_bandwidth_multiple": 4}}})
    assert out["RL101"]["min_time_share"] == 0.5
    assert out["RL108"]["l2_bandwidth_multiple"] == 4.0


def test_config_that_is_not_a_regular_file_says_so(tmp_path):
    from ridgeline.rules.engine import load_config

    with pytest.raises(UsageError, match="is not a regular file"):
        load_config(tmp_path)  # a folder
    with pytest.raises(UsageError, match="not found"):
        load_config(tmp_path / "missing.toml")


def test_compressed_telemetry_is_named_as_such(tmp_path):
    import gzip

    from ridgeline.errors import InputError
    from ridgeline.parsers.telemetry.reader import scan_telemetry

    gz = tmp_path / "metrics.prom.gz"
    gz.write_bytes(gzip.compress(b"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 50\n"))
    with pytest.raises(InputError, match="gzip-compressed file"):
        scan_telemetry([str(gz)])


def test_grouped_finding_lines_keep_a_space_before_the_impact_and_fit_80_columns():
    from ridgeline.render.terminal import format_result
    from ridgeline.result import AnalysisResult
    from ridgeline.rules.base import Finding

    long = "at::native::distribution_elementwise_grid_stride_kernel_with_a_very_long_name"
    findings = [
        Finding(code="RL108", name="l2-bandwidth-bound", severity="warning", subject=s, message=m,
                remedy="r", impact_s=18.1e-6, impact_share=0.101)
        for s, m in ((long, "m1"), ("softmax_warp_forward", "m2"))
    ]
    text = format_result(AnalysisResult(findings=findings))
    line = next(ln for ln in text.splitlines() if ln.startswith("  - at::native"))
    assert " up to 18.1 us (10.1%)" in line
    assert max(len(ln) for ln in text.splitlines()) <= 80


def test_fleet_summary_separates_memory_bound_time_from_idle_tensor_time():
    import polars as pl

    from ridgeline.analyzer.fleet.summary import fleet_summary

    base = {"host": "n1", "gpu": 0, "gpu_instance": None, "span_s": 300.0, "excluded": None,
            "has_profiling": True, "allocated_idle_s": 0.0}
    windows = pl.DataFrame([
        # 240 s busy with idle tensor cores, 180 s of it with DRAM busy (memory-bound)
        {**base, "busy_tensor_idle_s": 240.0, "memory_bound_s": 180.0},
        # memory-bound seconds beyond the busy-tensor-idle ones are capped at those
        {**base, "busy_tensor_idle_s": 60.0, "memory_bound_s": 120.0},
        # excluded windows count for nothing
        {**base, "busy_tensor_idle_s": 300.0, "memory_bound_s": 300.0, "excluded": "stuck profiler"},
    ])
    (row,) = fleet_summary(windows).to_dicts()
    assert row["busy_tensor_idle_h"] == pytest.approx((240 + 60) / 3600)
    assert row["memory_bound_h"] == pytest.approx((180 + 60) / 3600)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this platform")
@pytest.mark.parametrize("args", [
    ["analyze", "fixtures/scenarios/decode-b8-h100/profile.ncu-raw.csv", "--format", "parquet"],
    ["analyze", "fixtures/scenarios/decode-b8-h100/profile.ncu-raw.csv", "--format", "csv"],
    ["analyze", "fixtures/scenarios/decode-b8-h100/profile.ncu-raw.csv", "--format", "json"],
    ["telemetry", "fixtures/telemetry/exporter-3-scrapes.prom", "--format", "parquet"],
    ["telemetry", "fixtures/telemetry/exporter-3-scrapes.prom", "--format", "json"],
])
def test_a_full_disk_is_one_line_exit_2(capsys, monkeypatch, args):
    # polars reports a failed Parquet write as ComputeError; it is the disk's error, not a bug
    from ridgeline.cli import main

    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    with pytest.raises(SystemExit) as exc:
        main([*args, "-o", "/dev/full"])
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert err.startswith("ridgeline: error: cannot write /dev/full") and len(err.strip().splitlines()) == 1
