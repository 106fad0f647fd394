"""Less noise in the telemetry report (issue 23 item 5): notes said once, consecutive wasted
windows as one span, host names never cut so two hosts look alike, no 1970 dates."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from ridgeline import synth
from ridgeline.analyzer.fleet.summary import span_text
from ridgeline.fmt import clock
from ridgeline.render.fleet.hostnames import host_labels
from ridgeline.render.notes import collapse_notes
from ridgeline.render.fleet.telemetry import wasted_spans

UTC = dt.timezone.utc


def test_a_note_per_file_is_said_once_with_a_count():
    notes = [f"/d/node{i}.dmon: dcgmi dmon names no host; using the file name 'node{i}' (give --host)" for i in range(5)]
    notes.insert(2, "nvidia-smi timestamps carry no zone; read as UTC")
    notes.append("/d/x.prom: 3 samples carried DCGM blank sentinels")
    out = collapse_notes(notes)
    assert out == [
        "5 files (node0.dmon, node1.dmon, node2.dmon, ...): dcgmi dmon names no host; using the file name "
        "'<file name>' (give --host)",
        "nvidia-smi timestamps carry no zone; read as UTC",
        "/d/x.prom: 3 samples carried DCGM blank sentinels",  # a group of one keeps its note as written
    ]


def test_notes_that_differ_in_more_than_the_file_name_stay_apart():
    notes = ["/d/a.prom: 3 samples carried DCGM blank sentinels", "/d/b.prom: 7 samples carried DCGM blank sentinels"]
    assert collapse_notes(notes) == notes


def test_host_names_keep_what_tells_them_apart():
    hosts = ["llm-action-node-a01", "llm-action-node-a02", "llm-action-node-b01"]
    shown, legend = host_labels(hosts, 11)
    assert shown == {"llm-action-node-a01": "a01", "llm-action-node-a02": "a02", "llm-action-node-b01": "b01"}
    assert "llm-action-node-*" in legend
    # a common suffix too (domain names)
    shown, _ = host_labels(["gpu-a.cluster.example.org", "gpu-b.cluster.example.org"], 11)
    assert sorted(shown.values()) == ["a", "b"]
    # names that fit are shown whole; names nothing shortens stay whole (the table wraps them)
    assert host_labels(["n1", "n2"], 11) == ({"n1": "n1", "n2": "n2"}, None)
    shown, legend = host_labels(["alpha-very-long-host", "beta-very-long-hostx"], 11)
    assert shown == {"alpha-very-long-host": "alpha-very-long-host", "beta-very-long-hostx": "beta-very-long-hostx"}
    assert legend is None


def test_the_table_never_cuts_two_hosts_alike(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from ridgeline.cli import cli

    for h in ("llm-action-node-a01", "llm-action-node-a02"):
        synth.write_telemetry(tmp_path / f"{h}.dmon", ["busy_tensor_idle"], minutes=12, interval_s=1)
    (tmp_path / "solo").mkdir()
    synth.write_telemetry(tmp_path / "solo" / "a-single-host-with-a-long-name.dmon", ["busy_tensor_idle", "training"],
                          minutes=12, interval_s=1)
    monkeypatch.chdir(tmp_path)  # short paths in the notes and the accounting block
    out = CliRunner().invoke(cli, ["telemetry", ".", "-q"], catch_exceptions=False).output
    assert "~" not in out.split("Fleet:")[0]
    assert "1970" not in out
    assert "+0:00" in out and "(relative time)" in out
    assert "a01" in out and "a02" in out and "a-single-host-with-a-long-name" in out
    assert max(len(ln) for ln in out.splitlines()) <= 80
    # nothing shortens a-single-host...: its full name on a line of its own, once for its 2 GPUs
    per_gpu = out.split("Per GPU, whole run", 1)[1].split("\n\n", 1)[0]
    assert per_gpu.count("a-single-host-with-a-long-name") == 1
    assert "\na-single-host-with-a-long-name\n                0 " in per_gpu
    # one note per kind, with the count of files
    assert out.count("dcgmi dmon has no timestamps") == 1 and "3 files (" in out


def test_relative_time_reads_as_time_since_the_first_tick():
    t0 = dt.datetime(1970, 1, 1, tzinfo=UTC)
    assert clock(t0 + dt.timedelta(hours=26, minutes=5)) == "+26:05"
    assert span_text(t0, t0 + dt.timedelta(minutes=5)) == "+0:00:00..+0:05:00 (relative time)"
    real = dt.datetime(2026, 1, 5, 8, tzinfo=UTC)
    assert clock(real) == "01-05 08:00"
    assert span_text(real, None) == "2026-01-05T08:00:00Z"


def test_consecutive_wasted_windows_of_a_gpu_are_one_span():
    t0 = dt.datetime(2026, 1, 5, tzinfo=UTC)
    m5 = dt.timedelta(minutes=5)
    starts = [0, 1, 2, 4, 5]  # windows 0-2 touch, 3 is missing, 4-5 touch: two spans
    w = pl.DataFrame({
        "host": ["h"] * 5, "gpu": [0] * 5, "gpu_instance": [None] * 5,
        "window_start": [t0 + k * m5 for k in starts], "window_end": [t0 + (k + 1) * m5 for k in starts],
        "first_sample": [t0 + k * m5 for k in starts], "last_sample": [t0 + (k + 1) * m5 for k in starts],
        "samples": [300] * 5, "span_s": [300.0] * 5, "coverage_ratio": [1.0] * 5, "excluded": [None] * 5,
        "gpu_util_mean_ratio": [0.0] * 5, "gr_engine_active_mean_ratio": [0.004] * 5,
        "tensor_active_mean_ratio": [0.0] * 5, "dram_active_mean_ratio": [0.0] * 5, "power_mean_w": [70.0] * 5,
        "busy_tensor_idle_s": [0.0] * 5, "allocated_idle_s": [300.0] * 5,
        "fb_used_max_bytes": [70e9] * 5, "class": ["idle_allocated"] * 5,
    }, schema_overrides={"gpu_instance": pl.String, "excluded": pl.String})
    from ridgeline.render.fleet.telemetry import _waste_expr

    spans = wasted_spans(w.with_columns(_waste_expr().alias("_waste"))).sort("window_start")
    assert spans.height == 2
    assert spans.get_column("_waste").to_list() == pytest.approx([900.0, 600.0])
    assert spans.get_column("window_end").to_list() == [t0 + 3 * m5, t0 + 6 * m5]
    # no wasted window: no span (and no error)
    none = w.with_columns(_waste_expr().alias("_waste") * 0)
    assert wasted_spans(none).height == 0


def test_grouped_telemetry_findings_name_each_host_whole():
    from types import SimpleNamespace

    from ridgeline.render.text import _findings
    from ridgeline.rules.base import Finding

    hosts = ["llm-action-h800-dcgmi-dmon-nvlink-pcie-na-warmup", "llm-action-h800-gpu7-gpu0-dcgmi-dmon-group"]
    findings = [Finding(code="RL205", name="telemetry-implausible", severity="info", subject=f"host:{h} gpu:0", subject_kind="gpu",
                        message="8 blank values", remedy="collect the field", impact_s=60.0, impact_share=0.1)
                for h in hosts]
    lines = _findings(SimpleNamespace(findings=findings))
    assert all(any(f"host:{h} gpu:0" in ln for ln in lines) for h in hosts)
    assert max(map(len, lines)) <= 80 and not any("~" in ln for ln in lines)


def test_a_long_subject_without_impact_keeps_its_own_message():
    """Two findings of one rule whose subjects need a line of their own and have no impact: each
    still prints its message (its figures): the H800 dmon sample's RL205 pair printed none."""
    from types import SimpleNamespace

    from ridgeline.render.text import _findings
    from ridgeline.rules.base import Finding

    host = "llm-action-h800-gpu7-gpu0-dcgmi-dmon-group-na-warmup"
    findings = [Finding(code="RL205", name="telemetry-implausible", severity="info", subject=f"host:{host} gpu:{g}",
                        subject_kind="gpu", message=f"8 blank values in {n} samples", remedy="collect the field")
                for g, n in ((0, 3), (7, 4))]
    text = "\n".join(_findings(SimpleNamespace(findings=findings)))
    assert "8 blank values in 3 samples" in text and "8 blank values in 4 samples" in text
