"""Telemetry values that cannot be, samples given twice, two GPUs under one index, a byte-order
mark (issue 21): never used as measurements or kept silently. A negative ratio makes its window
implausible (RL205 names it); two different values for one sample are an error (strict) or the
first kept and listed (lenient); a repeated sample is kept once and listed. Inputs are written by the tests
(synthetic, in the formats of fixtures/telemetry)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.fleet.telemetry import reduce_windows
from ridgeline.errors import InputError
from ridgeline.parsers.telemetry.reader import read_telemetry

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = sorted(p for p in (ROOT / "fixtures" / "telemetry").iterdir()
                  if p.is_file() and p.suffix in (".txt", ".prom", ".csv", ".json"))
LABELS = 'gpu="0",UUID="GPU-a",Hostname="h1",modelName="NVIDIA H100 80GB HBM3"'


def _exporter(tmp_path, values) -> Path:
    p = tmp_path / "scrape.prom"
    p.write_text("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + "".join(
        f"DCGM_FI_DEV_GPU_UTIL{{{LABELS}}} {v} {t}\n" for t, v in values), encoding="utf-8")
    return p


def _dmon(tmp_path, tensor) -> Path:
    p = tmp_path / "run.dmon"
    p.write_text("#Entity   GRACT        TENSO\nID\n" + "".join(
        f"GPU 0     0.900        {t}\n" for t in tensor), encoding="utf-8")
    return p


def _smi(tmp_path, rows) -> Path:
    p = tmp_path / "smi.csv"
    p.write_text("timestamp, index, name, utilization.gpu [%]\n" + "".join(
        f"2026/01/05 09:00:0{s}.000, 0, {name}, {u} %\n" for s, name, u in rows), encoding="utf-8")
    return p


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_a_byte_order_mark_changes_nothing(tmp_path, path):
    with_bom = tmp_path / path.name
    with_bom.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    a, _, _ = read_telemetry([path], host="h")
    b, _, _ = read_telemetry([with_bom], host="h")
    drop = ["source", "host"]
    assert b.drop(drop, strict=False).equals(a.drop(drop, strict=False))


def test_a_negative_profiling_ratio_makes_the_window_implausible(tmp_path, capsys):
    # a ratio below 0 cannot be: the window is left out of the performance rules and RL205 names
    # the value (as for a negative GPU-Util or power), never read as a measurement
    path = _dmon(tmp_path, ["-0.500", "0.100"] * 20)
    df, _, _ = read_telemetry([path], host="h")
    w = reduce_windows(df, window="all").row(0, named=True)
    assert w["excluded"] == "implausible values: tensor_active -0.5"
    from ridgeline.cli import main

    with pytest.raises(SystemExit):
        main(["telemetry", str(path), "--host", "h", "--format", "json", "--window", "all"])
    doc = json.loads(capsys.readouterr().out)
    (rl205,) = [f for f in doc["findings"] if f["code"] == "RL205"]
    assert "tensor_active -0.5" in rl205["message"]
    assert not [f for f in doc["findings"] if f["code"] in ("RL201", "RL202")]


def test_two_values_for_one_sample_are_an_error_or_the_first_kept(tmp_path):
    path = _exporter(tmp_path, [(1767571200000, 10), (1767571200000, 90), (1767571215000, 50)])
    with pytest.raises(InputError) as err:
        read_telemetry([path])
    text = str(err.value)
    assert "gpu_util_ratio" in text and "0.1" in text and "0.9" in text and "--lenient" in text
    df, _, skipped = read_telemetry([path], strict=False)
    assert sorted(df.get_column("value").to_list()) == [0.1, 0.5]  # the first of the two kept
    assert any("twice with other values" in s.item for s in skipped)


def test_a_repeated_sample_is_kept_once_and_counted(tmp_path, capsys):
    path = _exporter(tmp_path, [(1767571200000, 40), (1767571200000, 40), (1767571215000, 50)])
    df, _, skipped = read_telemetry([path])
    assert df.height == 2
    assert [s.item for s in skipped if "repeated" in s.item] == ["1 repeated sample(s)"]
    from ridgeline.cli import main

    with pytest.raises(SystemExit):
        main(["telemetry", str(path), "--format", "json", "--window", "all"])
    doc = json.loads(capsys.readouterr().out)
    (acc,) = doc["accounting"]
    assert acc["read"] == 2 and acc["skipped"] == 1 and acc["balanced"]
    assert doc["telemetry"]["windows"][0]["samples"] == 2


def test_two_models_under_one_index_are_said(tmp_path):
    path = _smi(tmp_path, [(0, "NVIDIA A10", 50), (1, "NVIDIA A100-SXM4-80GB", 60)])
    notes: list[str] = []
    read_telemetry([path], host="h", notes=notes)
    (note,) = [n for n in notes if "models" in n]
    assert "NVIDIA A10" in note and "NVIDIA A100-SXM4-80GB" in note and "GPU 0" in note
