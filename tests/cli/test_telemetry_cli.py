"""`ridgeline telemetry` end to end on the synthetic fixtures and the real samples."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from ridgeline.cli import cli
from telemetry_cases import BUSY_NO_TENSOR, IDLE_EMPTY, gpu_series, table

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "telemetry"
SAMPLES = Path(__file__).resolve().parents[3] / "shared" / "samples" / "dcgm"


def run(*args):
    return CliRunner().invoke(cli, list(map(str, args)), catch_exceptions=False)


@pytest.fixture()
def busy_parquet(tmp_path):
    """Two hosts as hive-partitioned long Parquet: node1 GPU 0 busy with idle tensor cores for
    30 minutes, node2 GPU 1 idle."""
    df = table(gpu_series(host="node1", gpu=0, n=1800, **BUSY_NO_TENSOR),
               gpu_series(host="node2", gpu=1, n=1800, **IDLE_EMPTY))
    for host in ("node1", "node2"):
        d = tmp_path / "fleet" / "date=2026-01-05" / f"host={host}"
        d.mkdir(parents=True)
        df.filter(pl.col("host") == host).select("timestamp", "gpu", "field", "value").write_parquet(d / "p.parquet")
    return tmp_path / "fleet"


def test_table_output_fits_80_columns_and_names_the_finding(busy_parquet):
    r = run("telemetry", busy_parquet)
    assert r.exit_code == 0, r.output
    assert "RL201" in r.output and "host:node1 gpu:0" in r.output
    # busy with idle tensor cores is underuse (1800 s of 3600 s), not waste; an empty idle GPU neither
    assert "Fleet: wasted 0.00 GPU-h of 1.00 GPU-h observed" in r.output
    assert "underused 0.50 GPU-h (50%)" in r.output
    assert max(len(line) for line in r.output.splitlines()) <= 80


def test_fail_on_warning_exits_1(busy_parquet):
    assert run("telemetry", busy_parquet, "--fail-on", "warning").exit_code == 1
    assert run("telemetry", busy_parquet, "--fail-on", "warning", "--ignore", "RL201").exit_code == 0


def test_json_and_csv_outputs(busy_parquet, tmp_path):
    out = tmp_path / "t.json"
    r = run("telemetry", busy_parquet, "--format", "json", "-o", out, "--window", "all")
    assert r.exit_code == 0
    doc = json.loads(out.read_text())
    assert len(doc["telemetry"]["windows"]) == 2
    assert [f["code"] for f in doc["findings"]] == ["RL201"]
    csv = tmp_path / "w.csv"
    assert run("telemetry", busy_parquet, "--format", "csv", "-o", csv, "--window", "10m").exit_code == 0
    w = pl.read_csv(csv)
    assert w.height == 6  # 2 GPUs x three 10-minute windows
    assert w.filter(pl.col("host") == "node1").get_column("busy_tensor_idle_s").sum() == pytest.approx(1800.0)


def test_dmon_options_interval_start_host():
    r = run("telemetry", FIX / "dmon-v45-desc.txt", "--interval", "2s", "--start", "2026-01-05T08:00:00Z",
            "--host", "gpu-box", "--window", "all", "--format", "csv")
    assert r.exit_code == 0
    w = pl.read_csv(r.output.encode())
    assert w.get_column("host").unique().to_list() == ["gpu-box"]
    assert w.get_column("interval_s").to_list() == [2.0, 2.0]
    assert w.get_column("window_start").to_list()[0].startswith("2026-01-05T08:00:00")


def test_bad_options_are_usage_errors_exit_2():
    from ridgeline.cli import main

    for args in (["telemetry", str(FIX / "long.csv"), "--window", "soon"],
                 ["telemetry", str(FIX / "nvidia-smi-query.csv"), "--tz", "Nowhere/Land"],
                 ["telemetry", str(FIX / "MANIFEST.md")]):
        with pytest.raises(SystemExit) as e:
            main(args)
        assert e.value.code == 2


def test_real_samples_folder_runs():
    """The folder read as one gives exactly the GPUs its files give one by one (a property of any
    folder whose files name different hosts), and every file is either read or listed as skipped."""
    if not SAMPLES.exists():
        pytest.skip("samples absent")
    r = run("telemetry", SAMPLES, "--window", "all", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    key = lambda g: (g["host"], g["gpu"], g["gpu_instance"])  # noqa: E731
    folder = {key(g) for g in doc["telemetry"]["fleet"]["by_gpu"]}
    files = sorted(p for p in SAMPLES.iterdir() if p.is_file())
    listed = {Path(i["path"]).name for i in doc["inputs"]} | {
        Path(s["source"]).name for s in doc["skipped"] if s["item"] == "file"}
    assert listed == {p.name for p in files}
    one_by_one = set()
    for p in files:
        if p.name not in {Path(i["path"]).name for i in doc["inputs"]}:
            continue
        r1 = run("telemetry", p, "--window", "all", "--format", "json")
        assert r1.exit_code == 0, (p.name, r1.output)
        one_by_one |= {key(g) for g in json.loads(r1.output)["telemetry"]["fleet"]["by_gpu"]}
    assert folder == one_by_one and folder
    text = run("telemetry", SAMPLES, "--window", "all")
    assert f"Telemetry: {len(folder)} GPU(s)" in text.output


def test_parquet_output_and_warmup(busy_parquet, tmp_path):
    out = tmp_path / "w.parquet"
    r = run("telemetry", busy_parquet, "--format", "parquet", "-o", out, "--window", "all", "--warmup", "10m")
    assert r.exit_code == 0
    w = pl.read_parquet(out).sort("host")
    assert w.get_column("samples").to_list() == [1200, 1200]  # 1800 - 600 warm-up seconds each
    from ridgeline.errors import UsageError

    with pytest.raises(UsageError):  # Parquet needs -o
        run("telemetry", busy_parquet, "--format", "parquet")


def test_telemetry_with_no_field_any_rule_reads_says_so(tmp_path):
    dmon = tmp_path / "nvlink.dmon"  # a dcgmi dmon -e 1011,1012 capture: NVLink bytes only (synthetic)
    dmon.write_text("#Entity   NVLTX       NVLRX\nID\n" + "".join(
        f"GPU {g}     {1000 + i}        {2000 + i}\n" for i in range(6) for g in range(2)), encoding="utf-8")
    res = run("telemetry", str(dmon), "--host", "n1")
    assert res.exit_code == 0, res.output
    assert "Findings: none" in res.output
    text = " ".join(res.output.split())
    assert "no telemetry field any rule reads was present (read: nvlink_tx, nvlink_rx)" in text
    assert "not a clean bill" in text


def _dmon(path, rows, fields=("GPUTL", "POWER", "GRACT", "TENSO", "DRAMA"), units=("", "W", "", "", "")):
    """A dcgmi dmon text capture (synthetic, written by this helper): rows of (gpu, values...)."""
    lines = ["#Entity   " + "".join(f"{h:<13}" for h in fields), "ID        " + "".join(f"{u:<13}" for u in units)]
    lines += [f"GPU {g}     " + "".join(f"{str(v):<13}" for v in vals) for g, *vals in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_coverage_is_of_the_time_observed(tmp_path):
    # 6 one-second samples in a 5-minute window: fully covered, not "2%"
    f = _dmon(tmp_path / "short.dmon", [(0, 90, 300, 0.9, 0.3, 0.4 + i / 100) for i in range(6)])
    res = run("telemetry", f, "--host", "n1", "--format", "json")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    windows = doc["telemetry"]["windows"]
    assert [w["coverage_ratio"] for w in windows] == [1.0]
    # a gap inside the observed time still counts: 6 samples spread over 11 s of observation
    g = _dmon(tmp_path / "gap.dmon", [(0, 90, 300, 0.9, 0.3, 0.4 + i / 100) for i in range(6)])
    text = run("telemetry", g, "--host", "n1").output
    assert " 100% " in text and "  2% " not in text


def test_implausible_values_are_flagged_with_the_values_and_kept_out(tmp_path):
    rows = []
    for i in range(30):
        util = -20 if i == 3 else (150 if i == 5 else 90)
        rows.append((0, util, -5.0 if i == 7 else 300.0, 0.9, 0.01 + i / 1000, 0.4))
    f = _dmon(tmp_path / "bad.dmon", rows)
    res = run("telemetry", f, "--host", "n1", "--format", "json")
    doc = json.loads(res.output)
    found = [x for x in doc["findings"] if x["code"] == "RL205"]
    assert any("GPU-Util -20.0%..150.0%" in x["message"] and "power -5.0 W" in x["message"] for x in found)
    # the window is excluded: no performance finding (RL201 would fire on 90% util with ~1% tensor)
    assert not [x for x in doc["findings"] if x["code"] == "RL201"]


def test_exporter_samples_without_a_gpu_label_are_skipped_not_a_phantom_gpu(tmp_path):
    f = tmp_path / "s.prom"
    lab = 'gpu="0",UUID="GPU-a",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"'
    f.write_text(
        "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
        f"DCGM_FI_DEV_GPU_UTIL{{{lab}}} 90 1700000000000\n"
        'DCGM_FI_DEV_GPU_UTIL{Hostname="n1"} 50 1700000000000\n'
        f"DCGM_FI_DEV_GPU_UTIL{{{lab}}} 91 1700000015000\n", encoding="utf-8")
    res = run("telemetry", f, "--format", "json")
    doc = json.loads(res.output)
    assert {(w["host"], w["gpu"]) for w in doc["telemetry"]["windows"]} == {("n1", 0)}
    assert any("not attributable to a GPU" in s["reason"] for s in doc["skipped"])


def _smi(path, seconds, start="2026/03/11 15:58:57"):
    """An nvidia-smi --query-gpu CSV (synthetic, written by this helper): one sample at each
    offset in ``seconds`` from ``start``."""
    import datetime as dt

    t0 = dt.datetime.strptime(start, "%Y/%m/%d %H:%M:%S")
    rows = [f"{t0 + dt.timedelta(seconds=s):%Y/%m/%d %H:%M:%S}.000, 0, NVIDIA H100, 50 %, 1000 MiB" for s in seconds]
    path.write_text("timestamp, index, name, utilization.gpu [%], memory.used [MiB]\n" + "\n".join(rows) + "\n",
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("seconds, observed, cov", [
    (range(7), 7, "100%"),
    ([0, 1, 3, 4, 5, 6], 6, " 86%"),  # a gap: 6 samples x 1 s observed over 7 s, not 7 s
])
def test_first_sample_and_time_observed_are_one_fact_in_every_view(tmp_path, seconds, observed, cov):
    f = _smi(tmp_path / "smi.csv", seconds)
    doc = json.loads(run("telemetry", f, "--format", "json").output)
    (w,) = doc["telemetry"]["windows"]
    assert w["window_start"] == "2026-03-11T15:55:00+00:00"  # the 5-minute window's floor
    assert w["first_sample"] == "2026-03-11T15:58:57+00:00"  # the first sample, not the floor
    assert w["last_sample"] == "2026-03-11T15:59:03+00:00"
    assert w["span_s"] == observed == w["samples"] * w["interval_s"]
    text = run("telemetry", f).output
    assert f"{observed}s of GPU time observed, first sample 2026-03-11 15:58:57 UTC" in " ".join(text.split())
    (row,) = [ln for ln in text.splitlines() if ln.startswith("smi ")]
    assert f" 15:58:57 {observed}s ".replace(" 7s", "       7s").replace(" 6s", "       6s") in row
    assert f"{cov} " in row and "15:55" not in text


def test_first_samples_on_several_days_show_the_day(tmp_path):
    # a GPU sampled over two days shows its earliest sample; GPUs starting on different days
    # show month-day and minutes of it, never a window floor; the header names the earliest
    d = tmp_path / "fleet"
    d.mkdir()
    _smi(d / "smi-a.csv", [0, 1, 2, 86400, 86401], start="2026/03/11 23:58:57")
    _smi(d / "smi-b.csv", [0, 1, 2], start="2026/03/12 10:01:30")
    text = run("telemetry", d).output
    assert "first sample 2026-03-11 23:58:57 UTC" in " ".join(text.split())
    rows = [ln for ln in text.splitlines() if ln.startswith("smi-")]
    assert " 03-11 23:58 " in rows[0] and " 5s " in rows[0]
    assert " 03-12 10:01 " in rows[1] and " 3s " in rows[1]
    assert "23:55" not in text.split("Worst windows")[0]
