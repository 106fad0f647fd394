"""Plots that do not hide their data (issue 24 item 2): the timeline legend sits below the panels,
a short telemetry span ticks in seconds from its start, an input without a clock never shows 1970
dates, and a telemetry-only page is titled by its GPUs and its store folder, not ``part-0.parquet``."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ridgeline.pipeline import analyze_paths
from ridgeline.render import plots
from ridgeline.render.timeline.plot import timeline_figure

ROOT = Path(__file__).resolve().parents[3]


def _tel_csv(path: Path, start: datetime, seconds: int, *, host="node-a", model="NVIDIA H100 80GB HBM3"):
    lines = ["timestamp,host,gpu,model,field,value"]
    for k in range(seconds + 1):
        t = (start + timedelta(seconds=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines.append(f"{t},{host},0,{model},gpu_util_ratio,{0.5 + 0.4 * (k % 2)}")
        lines.append(f"{t},{host},0,{model},tensor_active_ratio,0.1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_timeline_legend_sits_below_the_panels_not_on_the_data():
    res = analyze_paths([ROOT / "fixtures" / "timeline" / "capture.kineto.json"], run_rules=False)
    fig = timeline_figure(res)
    assert fig is not None
    assert not any(ax.get_legend() for ax in fig.axes), "no legend inside a panel"
    (leg,) = [lg for lg in fig.legends if lg.get_gid() == "legend:timeline"]
    fig.draw_without_rendering()
    r = fig.canvas.get_renderer()
    lb = leg.get_window_extent(r)
    for ax in fig.axes:
        assert not lb.overlaps(ax.get_window_extent(r))


def test_short_telemetry_span_ticks_in_seconds_from_its_start(tmp_path):
    start = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
    res = analyze_paths([_tel_csv(tmp_path / "t.csv", start, 8)])
    fig = plots.telemetry_figure(res)
    fig.draw_without_rendering()
    ax = fig.axes[0]
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and all(t.endswith(" s") for t in ticks), ticks
    assert ticks[0] == "+0 s"
    assert "2026-03-01 12:00:00" in ax.get_xlabel()


def test_input_without_a_clock_is_relative_time_never_1970(tmp_path):
    start = datetime(1970, 1, 1, tzinfo=timezone.utc)
    res = analyze_paths([_tel_csv(tmp_path / "t.csv", start, 3600)])
    fig = plots.telemetry_figure(res)
    fig.draw_without_rendering()
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.get_xticklabels()] + [ax.get_xlabel()]
    assert "relative time" in ax.get_xlabel()
    assert not any("1970" in t or "1969" in t for t in texts), texts


def test_telemetry_only_report_is_titled_by_its_gpus_and_store(tmp_path):
    from ridgeline.render.html import describe_inputs, gpu_title

    store = tmp_path / "fleet-store"
    part = store / "host=node-a" / "date=2026-03-01"
    part.mkdir(parents=True)
    import polars as pl

    start = datetime(2026, 3, 1, 12, 0, 0, tzinfo=timezone.utc)
    csv = _tel_csv(tmp_path / "t.csv", start, 60)
    pl.read_csv(csv, try_parse_dates=True).write_parquet(part / "part-0.parquet")
    res = analyze_paths([store])
    assert gpu_title(res) == "NVIDIA H100 80GB HBM3"
    assert describe_inputs(res) == "fleet-store/"
    assert "part-0" not in describe_inputs(res)


@pytest.mark.parametrize("models, expect", [([], "1 GPU (model not recorded)")])
def test_gpu_title_without_models_counts_gpus(tmp_path, models, expect):
    from ridgeline.render.html import gpu_title

    start = datetime(2026, 3, 1, tzinfo=timezone.utc)
    res = analyze_paths([_tel_csv(tmp_path / "t.csv", start, 30, model="")])
    assert gpu_title(res) == expect
