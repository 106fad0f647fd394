"""The fleet page (issue 23 item 6): the telemetry report's host x time heatmap of waste, the
per-group table and per-GPU sparklines, in the page and in a real browser (headless Chromium)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from ridgeline.render.fleet import html as fleet_html

ROOT = Path(__file__).resolve().parents[3]


def windows(hosts=("a", "b"), gpus=2, n=12, step_s=300, *, wasted=None, start=None):
    """A WINDOW table: every GPU observed for ``n`` windows; host 'a' wastes half its time."""
    import polars as pl

    from ridgeline.analyzer.schema import WINDOW_COLUMNS, polars_schema

    start = start or datetime(2026, 3, 1, tzinfo=timezone.utc)
    rows = []
    for h in hosts:
        for g in range(gpus):
            for k in range(n):
                t = start + timedelta(seconds=k * step_s)
                waste = (wasted or {}).get(h, 0.5 if h == "a" else 0.0)
                rows.append({"host": h, "gpu": g, "window_start": t, "window_end": t + timedelta(seconds=step_s),
                             "span_s": float(step_s), "has_profiling": True, "busy_tensor_idle_s": waste * step_s,
                             "allocated_idle_s": 0.0, "tensor_active_mean_ratio": 0.1 * (k % 3),
                             "sm_clock_mean_hz": 1.98e9 - 1e8 * (g == 1), "model": "NVIDIA H100 80GB HBM3"})
    schema = polars_schema(WINDOW_COLUMNS)
    return pl.DataFrame(rows).with_columns(
        [pl.lit(None).cast(t).alias(c) for c, t in schema.items() if c not in rows[0]]
    ).select([pl.col(c).cast(t) for c, t in schema.items()])


def test_heatmap_cells_sum_to_the_fleet_summary_waste():
    from ridgeline.analyzer.fleet.summary import fleet_summary

    w = windows()
    hosts, bins, cells = fleet_html.heatmap_cells(w)
    assert hosts[0] == "a"  # most wasted first
    assert len(bins) == 12
    summary = {r["host"]: r["wasted_gpu_h"] for r in fleet_summary(w, by="host").iter_rows(named=True)}
    for h in hosts:
        wasted = sum(ws for (hh, _b), (ws, _o) in cells.items() if hh == h) / 3600
        assert wasted == pytest.approx(summary[h])


def test_long_nights_are_binned_not_dropped():
    w = windows(n=500, step_s=60)
    hosts, bins, cells = fleet_html.heatmap_cells(w, max_bins=96)
    assert len(bins) == 96
    observed = sum(o for (_h, _b), (_w, o) in cells.items())
    assert observed == pytest.approx(float(w["span_s"].sum()))


def test_page_has_heatmap_gpu_sparklines_and_relative_time_without_1970():
    w = windows(start=datetime(1970, 1, 1, tzinfo=timezone.utc))

    class R:
        windows = w
        groups = None

    html = fleet_html.fleet_sections(R())
    assert html.count("<rect") >= 2 * 12  # a cell per host and bin (+ the scale)
    assert len(re.findall(r'class="spark"', html)) == 2 * 4  # tensor + clock per GPU row
    assert "relative time" in html and "1970" not in html


def test_group_table_lists_groups_worst_first():
    class R:
        windows = windows()
        groups = [{"key": {"pod": "p1"}, "gpus": 2, "gpu_hours": 2.0, "wasted_gpu_hours": 0.1, "notes": []},
                  {"key": {"pod": "p2"}, "gpus": 2, "gpu_hours": 2.0, "wasted_gpu_hours": 1.5,
                   "notes": ["Tensor Core activity was 0% on all 2 GPUs of this pod for 1 h"]}]

    html = fleet_html.fleet_sections(R())
    table = html.split('id="group-table"', 1)[1]
    assert table.index("pod=p2") < table.index("pod=p1")
    assert "Tensor Core activity was 0%" in table


def test_fleet_page_in_a_real_browser(tmp_path):
    from tests.render.test_report_browser import _browser, _console_lines, _run

    from ridgeline.pipeline import analyze_paths
    from ridgeline.render.html import render_html

    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium found (install it with `apt-get install chromium`); browser test skipped")
    res = analyze_paths([ROOT / "fixtures" / "scenarios" / "telemetry-fleet"])
    page = tmp_path / "fleet.html"
    page.write_text(render_html(res, plots=False), encoding="utf-8")
    proc = _run(browser, tmp_path, page.as_uri(), "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert _console_lines(proc.stderr) == []
    dom = proc.stdout
    assert 'id="fleet-heatmap"' in dom and 'id="gpu-table"' in dom
    hosts = {r["host"] for r in res.windows.select("host").unique().to_dicts()}
    for h in hosts:
        assert f">{h}</text>" in dom
    ARTIFACTS = ROOT / "test-artifacts"
    ARTIFACTS.mkdir(exist_ok=True)
    _run(browser, tmp_path, page.as_uri(), "--window-size=1400,1200", f"--screenshot={ARTIFACTS / 'fleet-page.png'}")
