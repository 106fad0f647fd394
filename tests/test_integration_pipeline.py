"""Integration: the pipeline surfaces the ncu parser's notes, keeps only a small telemetry frame,
and the JSON document carries the fleet summary (schema 1.1)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import polars as pl
import pytest

from ridgeline import pipeline
from ridgeline.pipeline import analyze_paths, plot_telemetry
from ridgeline.render.jsonout import render_json
from ridge_inputs import write_mini_ncu

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def write_dmon(path: Path, ticks: int, *, gpus=(0,)) -> Path:
    """A synthetic ``dcgmi dmon -d 1000`` capture: GPU-Util 100 %; GR_ENGINE 0.950 / 0.940,
    SM 0.700 / 0.710, tensor 0.020 / 0.010 and DRAM 0.600 / 0.620 alternate tick by tick
    (constant profiling fields would be excluded as stalled)."""
    lines = [
        "dcgmi dmon -e 203,1001,1002,1004,1005 -d 1000",
        "#Entity   GPUTL        GRACT        SMACT        TENSO        DRAMA",
        "ID",
    ]
    for i in range(ticks):
        gr, sm, tensor, dram = ("0.950", "0.700", "0.020", "0.600") if i % 2 == 0 else ("0.940", "0.710", "0.010", "0.620")
        for g in gpus:
            lines.append(f"GPU {g}     100          {gr}        {sm}        {tensor}        {dram}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_ncu_parser_notes_reach_the_result(tmp_path):
    # raw-two-blocks-noise.csv holds lines that are not CSV: the parser notes how many it ignored
    result = analyze_paths([FIXTURES / "ncu" / "raw-two-blocks-noise.csv"], run_rules=False)
    noise = [n for n in result.notes if "non-CSV line(s) ignored" in n]
    assert len(noise) == 1 and "raw-two-blocks-noise.csv" in noise[0]


def test_a_raw_page_without_units_row_is_noted(tmp_path):
    src = write_mini_ncu(tmp_path / "p.csv").read_text(encoding="utf-8").splitlines()
    no_units = tmp_path / "no-units.csv"
    no_units.write_text("\n".join([src[0], *src[2:]]) + "\n", encoding="utf-8")
    result = analyze_paths([no_units], run_rules=False)
    assert sum("without a units row" in n for n in result.notes) == 1


def test_notes_are_deduplicated():
    from ridgeline.result import AnalysisResult

    result = AnalysisResult(notes=["a"])
    pipeline._add_notes(result, ["b", "a", "b", "c"])
    assert result.notes == ["a", "b", "c"]


def test_no_optional_import_guards_left():
    assert not hasattr(pipeline, "_optional")
    assert "importlib" not in Path(pipeline.__file__).read_text(encoding="utf-8")


def test_plot_telemetry_means_over_equal_bins():
    # 100 samples 1 s apart with value = i / 100; 10 bins of 10 s -> bin k has mean (10k + 4.5) / 100
    t0 = dt.datetime(2026, 1, 5, 8, tzinfo=dt.timezone.utc)
    df = pl.DataFrame({
        "timestamp": [t0 + dt.timedelta(seconds=i) for i in range(100)],
        "host": ["h"] * 100, "gpu": [0] * 100, "uuid": [None] * 100, "gpu_instance": [None] * 100,
        "model": ["H100"] * 100, "field": ["gpu_util_ratio"] * 100, "value": [i / 100 for i in range(100)],
        "source": ["x.dmon"] * 100, "pod": [None] * 100,
    }, schema_overrides={"uuid": pl.String, "gpu_instance": pl.String, "pod": pl.String})
    windows = pl.DataFrame({"window_start": [t0], "window_end": [t0 + dt.timedelta(seconds=100)]})
    out = plot_telemetry(df.lazy(), windows, bins=10)
    assert out.height == 10
    assert out.get_column("value").to_list() == pytest.approx([(10 * k + 4.5) / 100 for k in range(10)])
    assert out.get_column("timestamp").to_list()[1] == t0 + dt.timedelta(seconds=10)
    assert out.get_column("model").unique().to_list() == ["H100"]


def test_plot_telemetry_keeps_only_plotted_fields():
    t0 = dt.datetime(2026, 1, 5, tzinfo=dt.timezone.utc)
    df = pl.DataFrame({
        "timestamp": [t0, t0], "host": ["h", "h"], "gpu": [0, 0], "uuid": [None, None],
        "gpu_instance": [None, None], "model": [None, None], "field": ["gpu_util_ratio", "power_w"],
        "value": [0.5, 300.0], "source": ["s", "s"], "pod": [None, None],
    }, schema_overrides={"uuid": pl.String, "gpu_instance": pl.String, "model": pl.String, "pod": pl.String})
    out = plot_telemetry(df.lazy(), None)
    assert out.get_column("field").to_list() == ["gpu_util_ratio"]


def test_result_telemetry_is_downsampled_but_windows_use_every_sample(tmp_path):
    # 5 fields x 4000 ticks = 20,000 long rows; the plot frame holds 4 fields x at most 1500 bins
    dmon = write_dmon(tmp_path / "node.dmon", 4000)
    result = analyze_paths([dmon], window="all", run_rules=False)
    assert result.telemetry.height <= 4 * pipeline.TELEMETRY_PLOT_BINS
    assert sorted(result.telemetry.get_column("field").unique().to_list()) == [
        "dram_active_ratio", "gpu_util_ratio", "sm_active_ratio", "tensor_active_ratio"]
    w = result.windows
    assert w.height == 1
    assert w.get_column("samples").item() == 4000
    assert w.get_column("tensor_active_mean_ratio").item() == pytest.approx(0.015)
    assert w.get_column("dram_active_mean_ratio").item() == pytest.approx(0.61)
    # the report's telemetry figure still draws from it
    from ridgeline.render.plots import telemetry_figure

    assert telemetry_figure(result) is not None


def test_json_has_fleet_summary_by_gpu_and_host(tmp_path):
    dmon = write_dmon(tmp_path / "node.dmon", 600, gpus=(0, 1))
    result = analyze_paths([dmon], window="5m")
    doc = json.loads(render_json(result))
    assert doc["schema_version"] == "1.7"
    fleet = doc["telemetry"]["fleet"]
    by_gpu, by_host = fleet["by_gpu"], fleet["by_host"]
    assert [r["gpu"] for r in by_gpu] == [0, 1] and [r["rank"] for r in by_gpu] == [1, 2]
    assert len(by_host) == 1 and by_host[0]["host"] == "node" and by_host[0]["gpus"] == 2
    assert "gpu" not in by_host[0]
    for r in by_gpu:
        # 600 ticks of 1 s, GPU-Util 100 % with tensor <= 2 %: every second busy with idle tensor cores,
        # which is work done badly (underused), not GPU time thrown away (wasted: idle_allocated + unavailable)
        assert r["span_h"] == pytest.approx(600 / 3600, rel=0.01)
        assert r["busy_tensor_idle_h"] == pytest.approx(r["span_h"], rel=0.01)
        assert r["wasted_gpu_h"] == pytest.approx(r["idle_allocated_h"] + r["unavailable_h"]) == 0.0
        assert r["underused_share"] == pytest.approx(1.0, rel=0.01)
    assert by_host[0]["wasted_gpu_h"] == pytest.approx(sum(r["wasted_gpu_h"] for r in by_gpu))
    assert len(doc["telemetry"]["windows"]) == 4  # 2 GPUs x two 5-minute windows


def test_json_schema_page_documents_the_fleet_keys():
    page = (Path(__file__).resolve().parents[1] / "docs" / "json-schema.md").read_text(encoding="utf-8")
    assert "## `telemetry.fleet`" in page
    for key in ("wasted_gpu_h", "busy_tensor_idle_h", "allocated_idle_h", "rank"):
        assert f"| `{key}` |" in page


def test_start_anchors_dmon_times(tmp_path):
    dmon = write_dmon(tmp_path / "node.dmon", 10)
    start = dt.datetime(2026, 1, 5, 8, tzinfo=dt.timezone.utc)
    result = analyze_paths([dmon], window="all", run_rules=False, start=start)
    assert result.windows.get_column("window_start").item() == start
    assert not any("1970" in n for n in result.notes)


def test_a_dmon_capture_cut_mid_row_lists_the_last_row(tmp_path):
    full = write_dmon(tmp_path / "full.dmon", 4).read_text(encoding="utf-8")
    cut = tmp_path / "cut.dmon"
    cut.write_text(full[: full.rstrip("\n").rfind("0.9") + 2], encoding="utf-8")  # ends inside the last row
    result = analyze_paths([cut], window="all", run_rules=False)
    assert result.windows.get_column("samples").item() == 3  # 4 rows written, the cut one not read
    assert [(s.item, s.reason) for s in result.skipped] == [
        ("line 7", "last line has no line end: the capture was cut off mid-row")]
    # a complete capture that merely lacks the final newline loses that row too, and says so
    whole = tmp_path / "whole.dmon"
    whole.write_text(full.rstrip("\n"), encoding="utf-8")
    assert analyze_paths([whole], window="all", run_rules=False).windows.get_column("samples").item() == 3


def test_profile_and_telemetry_from_different_gpus_are_noted():
    mixed = analyze_paths([FIXTURES / "scenarios" / "decode-b8-h200" / "profile.ncu-raw.csv",
                           FIXTURES / "scenarios" / "telemetry-exporter-mig"], run_rules=False)
    assert any("telemetry's GPUs (H100 SXM) are not the profiled GPU(s) (H200)" in n for n in mixed.notes)
    same = analyze_paths([FIXTURES / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv",
                          FIXTURES / "scenarios" / "telemetry-exporter-mig"], run_rules=False)
    assert not any("not the profiled GPU" in n for n in same.notes)
