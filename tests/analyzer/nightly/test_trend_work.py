"""The nightly trend bands work done, not only waste (issue 31 item 4): seven ordinary nights of a
training pod at tensor activity ~0.55, then a night at 0.30 (a 45% throughput loss, no idle time).

The documents are built here by hand (the shape ``telemetry --format json`` writes, only the keys
the trend reads), so the test costs no telemetry reduction.
"""

from __future__ import annotations

import pytest

from ridgeline.analyzer.nightly.trend import Night, trend

POD = "team-a/llm-pretrain-0"


def _doc(day: int, tensor: float, dram: float = 0.40, *, idle_gpus: int = 0) -> dict:
    windows, by_gpu = [], []
    for gpu in range(8):
        idle = gpu < idle_gpus
        windows.append({"host": "node01", "gpu": gpu, "gpu_instance": None, "span_s": 3600.0, "excluded": None,
                        "window_start": f"2026-01-{day:02d}T00:00:00+00:00",
                        "tensor_active_mean_ratio": 0.0 if idle else tensor,
                        "dram_active_mean_ratio": 0.0 if idle else dram})
        by_gpu.append({"host": "node01", "gpu": gpu, "gpu_instance": None, "span_h": 1.0,
                       "wasted_gpu_h": 1.0 if idle else 0.0})
    wasted = float(idle_gpus)
    return {
        "schema_version": "1.7", "kernels": [], "findings": [],
        "telemetry": {
            "windows": windows,
            "fleet": {"by_host": [{"host": "node01", "span_h": 8.0, "wasted_gpu_h": wasted}], "by_gpu": by_gpu},
            "groups": [{"key": POD, "gpu_hours": 8.0, "wasted_gpu_hours": wasted,
                        "tensor_active": tensor * (8 - idle_gpus) / 8, "dram_active": dram * (8 - idle_gpus) / 8}],
        },
    }


NIGHTS = [0.55, 0.56, 0.54, 0.55, 0.57, 0.53, 0.55]


def _nights():
    return [Night(f"2026-01-{d + 1:02d}.json", _doc(d + 1, t)) for d, t in enumerate(NIGHTS)]


def test_a_throughput_drop_is_a_regression_naming_the_group_and_figure():
    tr = trend(_nights(), Night("tonight.json", _doc(8, 0.30)))
    assert tr.regressed
    rows = {(r["scope"], r["subject"], r["figure"]): r for r in tr.rows}
    pod = rows[("group", POD, "tensor active")]
    assert pod["status"] == "regression" and pod["tonight"] == pytest.approx(0.30)
    assert pod["low"] == pytest.approx(0.50) and pod["high"] == pytest.approx(0.60)  # the 0.05 floor
    assert any(m.startswith(f"group {POD}: tensor active 0.30 tonight, below the band 0.50-0.60") for m in tr.regressions)
    assert rows[("fleet", "fleet", "tensor active")]["status"] == "regression"
    assert rows[("gpu", "node01 gpu 0", "tensor active")]["status"] == "regression"
    # waste did not move: the wasted share is within its band, DRAM activity too
    assert rows[("group", POD, "wasted share")]["status"] == "within"
    assert rows[("group", POD, "DRAM active")]["status"] == "within"


def test_an_ordinary_night_and_more_work_are_not_regressions():
    assert not trend(_nights(), Night("tonight.json", _doc(8, 0.56))).regressed
    better = trend(_nights(), Night("tonight.json", _doc(8, 0.70)))
    assert not better.regressed
    assert {r["status"] for r in better.rows if r["figure"] == "tensor active"} == {"better"}


def test_more_waste_stays_a_regression():
    tr = trend(_nights(), Night("tonight.json", _doc(8, 0.55, idle_gpus=2)))
    statuses = {(r["scope"], r["figure"]): r["status"] for r in tr.rows if r["subject"] in ("fleet", POD)}
    assert statuses[("fleet", "wasted share")] == "regression"
    assert statuses[("group", "wasted share")] == "regression"


def test_the_trend_text_names_the_drop_within_80_columns():
    from ridgeline.render.nightly.trend import format_trend, render_trend_markdown

    tr = trend(_nights(), Night("tonight.json", _doc(8, 0.30)))
    text = format_trend(tr)
    assert "REGRESSION" in text and "tensor active 0.30 tonight, below the band" in text.replace("\n    ", " ")
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "tensor active" in render_trend_markdown(tr)
