"""--format sarif / github, --fail-on on report, '-' as standard input, exit code 3 (issue 14)."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from ridgeline.cli import main

FIX = Path(__file__).resolve().parents[2] / "fixtures"
DEMO = Path(__file__).resolve().parents[2] / "ridgeline" / "data" / "demo"
PROFILE = DEMO / "decode-b8-h100.ncu-raw.csv"
DMON = DEMO / "infer-0.dmon"
START = ["--start", "2026-01-05T08:00:00Z"]


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture(scope="module")
def sarif_doc():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "ridgeline.cli", "analyze", str(PROFILE), str(DMON), *START,
                          "--format", "sarif"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_sarif_shape(sarif_doc, capsys):
    from ridgeline.rules import engine

    assert sarif_doc["version"] == "2.1.0"
    run = sarif_doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [cls.code for cls in engine.all_rules()]
    for r in rules:
        assert r["helpUri"].startswith("docs/rules.md#" + r["id"].lower() + "-")
        assert r["help"]["text"] and r["shortDescription"]["text"]
        assert r["defaultConfiguration"]["level"] in ("error", "warning", "note")
    # the anchors exist in docs/rules.md as GitHub renders headings
    doc = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text()
    from ridgeline.render.ci import rule_anchor

    headings = {rule_anchor(*line[3:].split(" ", 1)) for line in doc.splitlines() if line.startswith("## RL")}
    assert {r["helpUri"].split("#")[1] for r in rules} <= headings
    # one result per finding, each pointing at its rule, an input file and the subject
    code, out, _err = run_cli(["analyze", PROFILE, DMON, *START, "--format", "json"], capsys)
    findings = json.loads(out)["findings"]
    results = run["results"]
    assert len(results) == len(findings) > 0
    levels = {"critical": "error", "warning": "warning", "info": "note"}
    for res, f in zip(results, findings):
        assert res["ruleId"] == f["code"]
        assert rules[res["ruleIndex"]]["id"] == f["code"]
        assert res["level"] == levels[f["severity"]]
        assert f["message"] in res["message"]["text"]
        loc = res["locations"][0]
        assert Path(loc["physicalLocation"]["artifactLocation"]["uri"]).name in (PROFILE.name, DMON.name)
        assert loc["logicalLocations"][0]["name"] == f["subject"]
    kernel_results = [r for r, f in zip(results, findings) if f["subject_kind"] == "kernel"]
    assert kernel_results and all(
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(PROFILE.name) for r in kernel_results)


def _sarif_schema():
    """The SARIF 2.1.0 JSON schema, when it can be had offline: $RIDGELINE_SARIF_SCHEMA names a copy."""
    path = os.environ.get("RIDGELINE_SARIF_SCHEMA")
    if path and Path(path).is_file():
        return json.loads(Path(path).read_text())
    return None


def test_sarif_validates_against_the_schema(sarif_doc):
    jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is not installed")
    schema = _sarif_schema()
    if schema is None:
        pytest.skip("no offline copy of the SARIF 2.1.0 schema (no PyPI package bundles it); "
                    "set RIDGELINE_SARIF_SCHEMA=path/to/sarif-schema-2.1.0.json to run this check")
    jsonschema.validate(sarif_doc, schema)


def test_github_annotations(capsys):
    code, out, _err = run_cli(["analyze", PROFILE, DMON, *START, "--format", "github"], capsys)
    assert code == 0
    code, js, _err = run_cli(["analyze", PROFILE, DMON, *START, "--format", "json"], capsys)
    findings = json.loads(js)["findings"]
    lines = out.splitlines()
    assert len(lines) == len(findings)
    cmd = {"critical": "error", "warning": "warning", "info": "notice"}
    for line, f in zip(lines, findings):
        assert line.startswith(f"::{cmd[f['severity']]} file=")
        props, _sep, message = line[2:].partition("::")
        assert "\n" not in message and message
        assert f"title={f['code']} " in props


def test_github_escapes_percent_and_newlines():
    from ridgeline.render.ci import render_github
    from ridgeline.result import AnalysisResult
    from ridgeline.rules.base import Finding

    f = Finding(code="RL201", name="x", severity="warning", subject="host:a,b", message="50% busy\nnext",
                remedy="do: it", subject_kind="host")
    line = render_github(AnalysisResult(findings=[f])).strip()
    assert line == "::warning title=RL201 x%3A host%3Aa%2Cb::50%25 busy%0Anext -> do: it"


def test_report_fail_on(tmp_path, capsys):
    code, _out, _err = run_cli(["report", PROFILE, "-o", tmp_path / "r.md", "--fail-on", "warning"], capsys)
    assert code == 1
    code, _out, _err = run_cli(["report", PROFILE, "-o", tmp_path / "r.md", "--fail-on", "critical"], capsys)
    assert code == 0


def test_stdin_dash(monkeypatch, capsys):
    data = PROFILE.read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, err = run_cli(["analyze", "-", "--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [i["path"] for i in doc["inputs"]] == ["<stdin>"]
    assert doc["kernels"] and {k["source"] for k in doc["kernels"]} == {"<stdin>"}


def test_stdin_dash_telemetry(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(DMON.read_bytes())))
    code, out, err = run_cli(["telemetry", "-", "--format", "json", *START], capsys)
    assert code == 0, err
    assert [i["path"] for i in json.loads(out)["inputs"]] == ["<stdin>"]


def test_crash_exits_3_with_one_line(monkeypatch, capsys):
    import ridgeline.pipeline

    def boom(*_a, **_k):
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(ridgeline.pipeline, "analyze_paths", boom)
    monkeypatch.delenv("RIDGELINE_DEBUG", raising=False)
    code, _out, err = run_cli(["analyze", PROFILE], capsys)
    assert code == 3
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "bug in ridgeline" in lines[0] and "ZeroDivisionError" in lines[0]
    assert "Traceback" not in err
    code, _out, err = run_cli(["--debug", "analyze", PROFILE], capsys)
    assert code == 3
    assert "Traceback" in err and "bug in ridgeline" in err.strip().splitlines()[-1]


def test_help_documents_exit_codes(capsys):
    code, out, _err = run_cli(["--help"], capsys)
    assert code == 0
    assert "3  a bug in ridgeline" in out
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    assert "| 3 | a bug in ridgeline" in readme
