"""`ridgeline telemetry --by ... --jobs FILE` end to end: the group table, JSON `groups`, errors,
and the real DCGM samples (groups partition their GPUs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ridgeline import synth
from ridgeline.cli import cli

SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples" / "dcgm"
POD = {"namespace": "team-b", "pod": "serve-1"}


def run(*args):
    return CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)


@pytest.fixture(scope="module")
def scrape(tmp_path_factory):
    d = tmp_path_factory.mktemp("pods")
    # an exporter host name long enough to be cut by a fixed-width column
    return synth.write_telemetry(d / "gpu-node-with-a-long-name-01.prom", ["busy_tensor_idle", "training"],
                                 format="exporter", minutes=20, interval_s=15, labels=[POD, None])


def test_table_shows_groups_worst_first_with_notes(scrape):
    r = run("telemetry", scrape, "--by", "pod", "-q")
    assert r.exit_code == 0, r.output
    block = r.output.split("Groups by pod")[1]
    lines = block.splitlines()
    assert lines[3].startswith("team-b/serve-1") and "(no pod)" in block
    assert "Tensor Core activity was 0% on its GPU of this pod for 20 min" in block
    assert max(len(ln) for ln in r.output.splitlines()) <= 80


def test_json_groups_partition_the_windows(scrape):
    r = run("telemetry", scrape, "--by", "host", "--by", "pod", "--format", "json", "-q")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    tel = doc["telemetry"]
    assert tel["groups_by"] == ["host", "pod"]
    keys = [g["key"] for g in tel["groups"]]
    assert keys[0] == "gpu-node-with-a-long-name-01 / team-b/serve-1"  # a host name is never cut
    total = sum(w["span_s"] for w in tel["windows"]) / 3600
    assert sum(g["gpu_hours"] for g in tel["groups"]) == pytest.approx(total)
    wasted = sum(f["wasted_gpu_h"] for f in tel["fleet"]["by_gpu"])
    assert sum(g["wasted_gpu_hours"] for g in tel["groups"]) == pytest.approx(wasted)
    g = tel["groups"][0]
    assert set(g["wasted_split"]) == {"idle_allocated_h", "unavailable_h"}
    # busy with idle tensor cores is underused, never wasted; the classes partition the group's time
    assert g["wasted_gpu_hours"] == 0.0 and g["underused_gpu_hours"] == pytest.approx(g["gpu_hours"])
    assert sum(g["gpu_hours_by_class"].values()) == pytest.approx(g["gpu_hours"])
    assert g["first"].startswith("2026-01-01T00:00:00")


def test_jobs_file_groups_by_job(scrape, tmp_path):
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("JobID|User|Account|NodeList|Start|End|AllocTRES\n"
                    "55|alice|ml|gpu-node-with-a-long-name-[01-02]|2026-01-01T00:00:00|2026-01-01T00:10:00|gres/gpu=2\n")
    r = run("telemetry", scrape, "--jobs", jobs, "--format", "json", "-q")
    assert r.exit_code == 0, r.output
    groups = {g["key"]: g for g in json.loads(r.output)["telemetry"]["groups"]}
    assert groups["55"]["gpu_hours"] == pytest.approx(2 * 10 / 60)
    assert groups["(no job)"]["gpu_hours"] == pytest.approx(2 * 10 / 60)


def run_main(capsys, *args) -> tuple[int, str]:
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main(list(map(str, args)))
    return exc.value.code, capsys.readouterr().err


@pytest.mark.parametrize("args, msg", [
    (["--by", "rack"], "--by rack: expected one of"),
    (["--by", "account"], "--by account: needs --jobs FILE"),
])
def test_bad_by_is_one_line_exit_2(capsys, scrape, args, msg):
    code, err = run_main(capsys, "telemetry", scrape, *args)
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1


def test_a_missing_jobs_file_is_one_line(capsys, scrape, tmp_path):
    code, err = run_main(capsys, "telemetry", scrape, "--jobs", tmp_path / "nope.txt")
    assert code == 2 and "nope.txt: expected a file of sacct --parsable2 output (--jobs), got 'no such file'" in err


def test_bad_jobs_row_names_the_line(capsys, scrape, tmp_path):
    jobs = tmp_path / "jobs.txt"
    jobs.write_text("JobID|NodeList|Start|End\n1|n[1-|2026-01-01T00:00:00|Unknown\n")
    code, err = run_main(capsys, "telemetry", scrape, "--jobs", jobs)
    assert code == 2
    assert f"{jobs}:2: column 'NodeList': expected a Slurm node list" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.skipif(not SAMPLES.is_dir(), reason="../shared/samples absent")
@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*") if p.suffix in (".prom", ".json", ".txt", ".csv"))
                         if SAMPLES.is_dir() else [])
@pytest.mark.parametrize("by", [["pod"], ["host", "namespace"], ["label=container"]])
def test_real_samples_groups_partition_the_gpus(name, by):
    args = [a for b in by for a in ("--by", b)]
    extra = ["--interval", "1s"] if "dmon" in name else []
    r = run("telemetry", SAMPLES / name, *args, *extra, "--format", "json", "-q")
    assert r.exit_code in (0, 1), r.output
    tel = json.loads(r.output)["telemetry"]
    if not tel["windows"]:
        assert tel["groups"] == []
        return
    assert sum(g["gpu_hours"] for g in tel["groups"]) == pytest.approx(sum(w["span_s"] for w in tel["windows"]) / 3600)
    for g in tel["groups"]:
        assert g["wasted_gpu_hours"] <= g["gpu_hours"] + 1e-9
    gpus = {(w["host"], w["gpu"], w["gpu_instance"]) for w in tel["windows"]}
    assert sum(g["gpus"] for g in tel["groups"]) >= len(gpus)  # every GPU in some group


# ---- the same groups in analyze and report (HTML fleet page, Markdown summary)
def test_analyze_json_carries_the_same_groups_as_telemetry(scrape):
    a = json.loads(run("analyze", scrape, "--by", "pod", "--format", "json").output)
    t = json.loads(run("telemetry", scrape, "--by", "pod", "--format", "json", "-q").output)
    ga = [(g["key"], round(g["wasted_gpu_hours"], 9)) for g in a["telemetry"]["groups"]]
    gt = [(g["key"], round(g["wasted_gpu_hours"], 9)) for g in t["telemetry"]["groups"]]
    assert ga == gt and ga


def test_report_html_shows_the_group_table_worst_first(scrape, tmp_path):
    out = tmp_path / "fleet.html"
    r = run("report", scrape, "--by", "pod", "-o", out)
    assert r.exit_code in (0, 1), r.output
    page = out.read_text()
    table = page.split('id="group-table"', 1)[1].split("</table>", 1)[0]
    rows = table.split("<tr>")[2:]
    assert "team-b/serve-1" in rows[0] and "(no pod)" in table
    assert "Tensor Core activity was 0%" in table


def test_report_markdown_has_the_groups_and_refuses_a_bad_by(scrape, tmp_path, capsys):
    from ridgeline.cli import main

    r = run("report", scrape, "--by", "pod", "--format", "markdown")
    assert "### Groups by pod (2)" in r.output
    assert "team-b/serve-1" in r.output.split("### Groups by pod", 1)[1]
    with pytest.raises(SystemExit) as e:
        main(["report", str(scrape), "--by", "nonsense=", "--format", "markdown"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--by nonsense=" in err[0]
