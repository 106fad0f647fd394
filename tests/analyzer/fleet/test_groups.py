"""Attribution of telemetry windows to workload groups (ridgeline.analyzer.fleet.groups) on generated
fleets: pods from exporter labels, Slurm jobs from a sacct file. The groups must partition the
windows (GPU-hours and wasted hours add up to the fleet's) and split a window shared by two
groups by time overlap."""

from __future__ import annotations

import polars as pl
import pytest

from ridgeline import synth
from ridgeline.analyzer.fleet.groups import group_report, label_runs, parse_by
from ridgeline.analyzer.fleet.summary import fleet_summary
from ridgeline.errors import UsageError
from ridgeline.parsers.telemetry.sacct import read_sacct
from ridgeline.pipeline import reduce_telemetry

A = {"namespace": "team-a", "pod": "train-0", "container": "main"}
B = {"namespace": "team-b", "pod": "serve-1", "container": "vllm"}
MINUTES, INTERVAL = 60, 15


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """node01: GPUs 0-1 train in pod A, 2-3 busy with idle tensor cores in pod B. node02: GPU 0
    idle with memory held by pod B, GPU 1 memory-bound with no pod until 27 min in (inside the
    25-30 min window) then pod A, GPU 2 trains in pod A, GPU 3 idle-allocated with no pod."""
    d = tmp_path_factory.mktemp("fleet")
    synth.write_telemetry(d / "node01.prom", ["training", "training", "busy_tensor_idle", "busy_tensor_idle"],
                          format="exporter", minutes=MINUTES, interval_s=INTERVAL, labels=[A, A, B, B])
    synth.write_telemetry(d / "node02.prom", ["idle_allocated", "memory_bound", "training", "idle_allocated"],
                          format="exporter", minutes=MINUTES, interval_s=INTERVAL,
                          labels=[B, [(0.0, None), (0.45, A)], A, None])
    lf, _inputs, _skipped, windows = reduce_telemetry([d])
    return windows, label_runs(lf), d


def _partitions(report, windows):
    t = report.table
    total_h = windows.get_column("span_s").sum() / 3600
    assert t.get_column("gpu_hours").sum() == pytest.approx(total_h)
    wasted = fleet_summary(windows).get_column("wasted_gpu_h").sum()
    assert t.get_column("wasted_gpu_hours").sum() == pytest.approx(wasted)
    # the classes partition each group's time; waste is idle_allocated + unavailable
    classes = t.select(pl.sum_horizontal(pl.col("^h:.*$"))).to_series()
    assert (classes - t.get_column("gpu_hours")).abs().max() < 1e-9
    split = t.get_column("h:idle_allocated") + t.get_column("h:unavailable")
    assert (split - t.get_column("wasted_gpu_hours")).abs().max() < 1e-9
    assert (t.get_column("wasted_gpu_hours") + t.get_column("underused_gpu_hours") <= t.get_column("gpu_hours") + 1e-9).all()
    assert (t.get_column("wasted_gpu_hours") <= t.get_column("gpu_hours") + 1e-9).all()


@pytest.mark.parametrize("by", [["pod"], ["namespace"], ["host"], ["namespace", "pod"], ["label=container"],
                                ["job"]])
def test_groups_partition_the_fleet(fleet, by):
    windows, runs, _d = fleet
    _partitions(group_report(windows, by, runs=runs), windows)


def test_pods_get_their_gpus_and_a_hand_over_is_split_by_time(fleet):
    windows, runs, _d = fleet
    rows = {r["key"]: r for r in group_report(windows, ["pod"], runs=runs).rows()}
    assert set(rows) == {"team-a/train-0", "team-b/serve-1", "(no pod)"}
    # pod A: two training GPUs of node01 and one of node02 for the whole hour, plus node02 GPU 1
    # from 27 min on: 33 of its 60 minutes (the 25-30 min window split 2:3 by time overlap)
    assert rows["team-a/train-0"]["gpus"] == 4
    assert rows["team-a/train-0"]["gpu_hours"] == pytest.approx(3 + 33 / 60, abs=INTERVAL / 3600)
    assert rows["(no pod)"]["gpu_hours"] == pytest.approx(1 + 27 / 60, abs=INTERVAL / 3600)
    # pod B: two GPUs busy with idle tensor cores (all their time) and one idle holding memory
    b = rows["team-b/serve-1"]
    assert (b["gpus"], b["gpu_hours"]) == (3, pytest.approx(3.0))
    # busy with idle tensor cores is underuse (work done badly), not waste; idle holding memory is waste
    assert b["states_h"]["tensor_idle_h"] == pytest.approx(2.0, abs=0.05)
    assert b["wasted_split"] == {"idle_allocated_h": pytest.approx(1.0, abs=0.05), "unavailable_h": 0.0}
    assert b["wasted_gpu_hours"] == pytest.approx(1.0, abs=0.05)
    assert b["underused_gpu_hours"] == pytest.approx(2.0, abs=0.05)
    assert b["underused_remedy"].startswith("busy_low_throughput:")
    assert sum(b["gpu_hours_by_class"].values()) == pytest.approx(b["gpu_hours"])
    assert b["notes"][0] == "Tensor Core activity was 0% on all 3 GPUs of this pod for 1.0 h"
    # worst first
    assert [r["key"] for r in group_report(windows, ["pod"], runs=runs).rows()][0] == "team-b/serve-1"
    # training keeps its tensor cores busy: no 0% note, tensor activity well above zero
    assert rows["team-a/train-0"]["tensor_active"] > 0.2


def test_nested_keys_and_labels_by_name(fleet):
    windows, runs, _d = fleet
    rows = group_report(windows, ["namespace", "label=container"], runs=runs).rows()
    keys = {r["key"] for r in rows}
    assert keys == {"team-a / main", "team-b / vllm", "(no namespace) / (no container)"}
    assert rows[0]["keys"] == {"namespace": "team-b", "label=container": "vllm"}
    nested = {r["key"]: r["keys"] for r in group_report(windows, ["namespace", "pod"], runs=runs).rows()}
    assert nested["team-a / train-0"] == {"namespace": "team-a", "pod": "team-a/train-0"}


def test_by_host_agrees_with_the_fleet_summary(fleet):
    windows, runs, _d = fleet
    t = group_report(windows, ["host"], runs=runs).table
    by_host = fleet_summary(windows, by="host")
    got = dict(zip(t.get_column("key"), t.get_column("wasted_gpu_hours")))
    want = dict(zip(by_host.get_column("host"), by_host.get_column("wasted_gpu_h")))
    assert got == pytest.approx(want)


def test_inputs_without_labels_are_one_group_with_a_note(fleet):
    windows, _runs, _d = fleet
    report = group_report(windows, ["pod"], runs=None, have_labels=False)
    assert report.table.get_column("key").to_list() == ["(no pod)"]
    assert "carry no workload labels" in report.notes[0]


def test_slurm_jobs_by_node_range_gpu_index_and_time(fleet, tmp_path):
    windows, runs, _d = fleet
    sacct = tmp_path / "jobs.txt"
    sacct.write_text(
        "JobID|User|Account|NodeList|Start|End|AllocTRES|GPUIndex\n"
        # both nodes, first half hour, all GPUs (no index)
        "101|alice|ml|node[01-02]|2026-01-01T00:00:00|2026-01-01T00:30:00|gres/gpu=8|\n"
        # node01, second half: GPUs 0-1 only
        "102|bob|infer|node01|2026-01-01T00:30:00|Unknown|gres/gpu=2|0-1\n"
        # node01, second half, GPUs 2-3; ends 10 min before the capture does
        "103|bob|infer|node01|2026-01-01T00:30:00|2026-01-01T00:50:00|gres/gpu=2|2-3\n")
    jobs, _ = read_sacct(sacct)
    report = group_report(windows, ["job"], jobs=jobs)
    _partitions(report, windows)
    rows = {r["key"]: r for r in report.rows()}
    assert rows["101"]["gpu_hours"] == pytest.approx(8 * 0.5)
    assert (rows["102"]["gpus"], rows["102"]["gpu_hours"]) == (2, pytest.approx(2 * 0.5))
    assert (rows["103"]["gpus"], rows["103"]["gpu_hours"]) == (2, pytest.approx(2 * 20 / 60))
    # node02 after 00:30 (4 GPUs x 30 min) and node01 GPUs 2-3 after 00:50
    assert rows["(no job)"]["gpu_hours"] == pytest.approx(4 * 0.5 + 2 * 10 / 60)
    assert rows["102"]["alloc_gpus"] == 2
    assert not any("allocated" in n for n in rows["102"]["notes"])  # 2 allocated, 2 seen
    by_user = {r["key"]: r["gpu_hours"] for r in group_report(windows, ["user"], jobs=jobs).rows()}
    assert by_user["bob"] == pytest.approx(1.0 + 2 * 20 / 60)


def test_two_jobs_on_one_node_without_gpu_indices_share_it(fleet, tmp_path):
    windows, _runs, _d = fleet
    sacct = tmp_path / "jobs.txt"
    sacct.write_text("JobID|NodeList|Start|End\n"
                     "1|node01|2026-01-01T00:00:00|2026-01-01T01:00:00\n"
                     "2|node01.cluster.local|2026-01-01T00:00:00|2026-01-01T01:00:00\n")
    jobs, _ = read_sacct(sacct)
    report = group_report(windows, ["job"], jobs=jobs)
    rows = {r["key"]: r["gpu_hours"] for r in report.rows()}
    assert rows["1"] == pytest.approx(2.0) and rows["2"] == pytest.approx(2.0)  # node01's 4 GPU-h, halved
    assert any("ran several jobs at once (node01)" in n for n in report.notes)


def test_exported_labels_win_over_the_scrape_labels():
    import polars as pl

    from ridgeline.analyzer.fleet.groups import Dim, _dim_expr

    df = pl.DataFrame({"labels": ['exported_namespace="ml",exported_pod="train",namespace="gpu-operator",'
                                  'pod="dcgm-exporter-x"', 'namespace="ml",pod="serve"', None]})
    got = df.select(_dim_expr(Dim("pod", "label", ("exported_pod", "pod")))).to_series().to_list()
    assert got == ["ml/train", "ml/serve", None]


@pytest.mark.parametrize("by, msg", [(["rack"], "expected one of"), (["user"], "needs --jobs"),
                                     (["label=9x"], "label=NAME"), (["pod", "pod"], "given twice")])
def test_bad_by_is_a_usage_error(by, msg):
    with pytest.raises(UsageError, match=msg):
        parse_by(by, have_jobs=False)


def test_a_job_note_compares_allocated_and_observed_gpus(fleet, tmp_path):
    windows, _runs, _d = fleet
    sacct = tmp_path / "jobs.txt"
    sacct.write_text("JobID|NodeList|Start|End|AllocTRES\n"
                     "7|node01|2026-01-01T00:00:00|2026-01-01T01:00:00|gres/gpu=2\n"  # no index: all 4 GPUs
                     "8|node02,node09|2026-01-01T00:00:00|2026-01-01T01:00:00|gres/gpu=8\n")  # node09 unseen
    jobs, _ = read_sacct(sacct)
    notes = {r["key"]: r["notes"] for r in group_report(windows, ["job"], jobs=jobs).rows()}
    assert any("allocated 2 GPU(s); telemetry attributed 4" in n for n in notes["7"])
    assert any("allocated 8 GPU(s); the telemetry saw 4" in n for n in notes["8"])


@pytest.mark.parametrize("index, shown", [("9", "GPU 9"), ("3-5", "GPU 4, 5"), ("4095", "GPU 4095")])
def test_a_job_naming_gpus_its_node_does_not_report_is_said(fleet, tmp_path, index, shown):
    """GPU indices outside the node (node01 reports 0-3): the job is not silently lost, nor spread
    over every GPU; a note names the job, its line and the GPUs the node reports (issue 35)."""
    windows, _runs, _d = fleet
    sacct = tmp_path / "jobs.txt"
    sacct.write_text("JobID|NodeList|Start|End|GPUIndex\n"
                     f"7|node01|2026-01-01T00:00:00|2026-01-01T01:00:00|{index}\n")
    jobs, _ = read_sacct(sacct)
    report = group_report(windows, ["job"], jobs=jobs)
    _partitions(report, windows)
    note = next(n for n in report.notes if "telemetry does not report" in n)
    assert f"job 7 (line 2) names {shown} on node01, whose telemetry reports GPU 0-3" in note
    assert not any("gives no GPU index" in n for n in report.notes)
    rows = {r["key"]: r for r in report.rows()}
    if index == "3-5":  # GPU 3 is the node's: that one is the job's, no other
        assert rows["7"]["gpus"] == 1
    else:
        assert "7" not in rows
