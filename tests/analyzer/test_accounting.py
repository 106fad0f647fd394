"""Every run ends with an accounting per input: read = used + missing + skipped (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ridgeline.cli import main

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "ridgeline" / "data" / "demo"


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_json_accounting_balances_for_a_lenient_ncu_run(capsys):
    path = ROOT / "fixtures" / "ncu" / "bad-nonnumeric-raw.csv"
    code, out, err = run_cli(["analyze", path, "--lenient", "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    (acc,) = doc["accounting"]
    assert acc["unit"] == "launches" and acc["path"] == str(path)
    assert acc["used"] == len(doc["kernels"])
    assert acc["skipped"] == len([s for s in doc["skipped"] if s["source"] == str(path)]) >= 1
    assert acc["read"] == acc["used"] + acc["skipped"]
    assert sum(acc["skipped_reasons"].values()) == acc["skipped"]
    code, text, _err = run_cli(["analyze", path, "--lenient"], capsys)
    assert f"{acc['read']} launches read = {acc['used']} used + {acc['skipped']} skipped" in " ".join(text.split())


def test_telemetry_accounting_counts_samples(capsys):
    path = ROOT / "fixtures" / "telemetry" / "exporter-3-scrapes.prom"
    code, out, err = run_cli(["telemetry", path, "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    (acc,) = doc["accounting"]
    assert acc["unit"] == "samples" and acc["balanced"]
    assert acc["read"] == acc["used"] + acc["missing"] and acc["missing"] > 0
    assert acc["skipped"] == len(doc["skipped"])
    code, text, _err = run_cli(["telemetry", path], capsys)
    assert "Accounting" in text and f"{acc['missing']} missing (null)" in " ".join(text.split())


def test_clean_run_has_no_accounting_block(capsys):
    code, out, err = run_cli(["analyze", DEMO / "decode-b8-h100.ncu-raw.csv"], capsys)
    assert code == 0, err
    assert "Accounting" not in out
    code, out, err = run_cli(["analyze", DEMO / "decode-b8-h100.ncu-raw.csv", "--format", "json"], capsys)
    (acc,) = json.loads(out)["accounting"]
    assert acc["skipped"] == 0 and acc["read"] == acc["used"] > 0


def test_lenient_drops_bad_grid_and_lists_it(capsys):
    path = ROOT / "tests" / "corpus" / "ncu-raw-grid-1e25.csv"
    code, out, err = run_cli(["analyze", path, "--lenient", "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kernels"] == []
    assert any("Grid Size" in s["reason"] and "1e25" in s["reason"] for s in doc["skipped"])
    assert doc["accounting"][0]["read"] == 1 and doc["accounting"][0]["skipped"] == 1


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "fixtures" / "timeline").iterdir()
                                        if p.suffix in (".json", ".sqlite", ".gz")))
def test_timeline_accounting_counts_records(capsys, name):
    # a timeline is accounted in records: the kernels, copies and sets its devices were built from
    code, out, err = run_cli(["analyze", ROOT / "fixtures" / "timeline" / name, "--format", "json"], capsys)
    if code == 2:
        pytest.skip(f"fixture refused: {err.strip()}")
    assert code in (0, 1), err
    doc = json.loads(out)
    (acc,) = doc["accounting"]
    devices = doc["timeline"]["devices"]
    assert acc["unit"] == "records" and acc["balanced"]
    assert acc["used"] == sum(d["kernels"] + d["memcpys"] + d["memsets"] for d in devices)
    assert acc["read"] == acc["used"] + acc["skipped"]
