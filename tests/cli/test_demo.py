"""`ridgeline demo`: the bundled decode profile is found as package data, analyzed with the
same pipeline and renderer as `ridgeline analyze`, and works from an installed copy outside
the repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from click.testing import CliRunner

from ridgeline.cli import DEMO_FILES, DEMO_LABEL, DEMO_START, cli

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo_text() -> str:
    res = CliRunner().invoke(cli, ["demo"])
    assert res.exit_code == 0, res.output
    return res.output


def test_demo_files_are_package_data():
    folder = resources.files("ridgeline") / "data" / "demo"
    for name in DEMO_FILES:
        assert (folder / name).is_file(), name
    head = (folder / DEMO_FILES[0]).read_text(encoding="utf-8")[:200]
    assert head.startswith("SYNTHETIC")


def test_demo_prints_kernel_table_findings_and_next_steps(demo_text):
    assert "SYNTHETIC" in demo_text.splitlines()[0]
    assert "H100 SXM" in demo_text
    assert "Top kernels by GPU time" in demo_text
    # batch-8 decode: the GEMMs sit at ~8 FLOP/B against a 295 FLOP/B ridge -> RL101
    assert "RL101" in demo_text and "ridge 295 FLOP/B" in demo_text
    tail = demo_text[demo_text.index("Try next:"):]
    assert "ridgeline analyze" in tail
    assert "ncu --set roofline --csv --page raw --print-units base" in tail
    assert demo_text.rstrip().endswith("ridgeline analyze profile.csv")


def test_demo_matches_analyze_on_the_same_files(demo_text):
    folder = resources.files("ridgeline") / "data" / "demo"
    with resources.as_file(folder) as path:
        res = CliRunner().invoke(cli, ["analyze", *(str(Path(path) / n) for n in DEMO_FILES), "--start", DEMO_START])
    assert res.exit_code == 0, res.output
    # the analyze report is embedded verbatim between the demo's banner and its 'Try next'
    # (the demo names its folder ridgeline/data/demo instead of the installation's path, so
    # notes wrap differently: compare with whitespace collapsed)
    analyzed = " ".join(res.output.replace(str(Path(path)), DEMO_LABEL).split())
    assert analyzed in " ".join(demo_text.split())


def test_demo_json_is_one_document_with_findings():
    res = CliRunner().invoke(cli, ["demo", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    codes = {f["code"] for f in doc["findings"]}
    assert "RL101" in codes and "RL102" in codes


def test_demo_copy_to_writes_the_inputs(tmp_path):
    dest = tmp_path / "demo-inputs"
    res = CliRunner().invoke(cli, ["demo", "--copy-to", str(dest)])
    assert res.exit_code == 0, res.output
    folder = resources.files("ridgeline") / "data" / "demo"
    for name in DEMO_FILES:
        assert (dest / name).read_bytes() == (folder / name).read_bytes()


def test_demo_help_has_an_example():
    res = CliRunner().invoke(cli, ["demo", "--help"])
    assert res.exit_code == 0
    assert "ridgeline demo --copy-to" in res.output


def test_demo_from_a_build_outside_the_repo(tmp_path):
    """build_py writes exactly what a wheel's purelib holds; import it from elsewhere."""
    build = tmp_path / "build"
    out = subprocess.run(
        [sys.executable, "-c", "from setuptools import setup; setup()", "-q", "build_py", "--build-lib", str(build)],
        cwd=REPO, capture_output=True, text=True,
    )
    if out.returncode != 0:
        pytest.skip(f"setuptools build_py unavailable: {out.stderr.strip()[-200:]}")
    for name in DEMO_FILES:
        assert (build / "ridgeline" / "data" / "demo" / name).is_file()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = (
        "import ridgeline, sys\n"
        "print('FROM', ridgeline.__file__)\n"
        "from ridgeline.cli import main\n"
        "main(['demo'])\n"
    )
    env = dict(os.environ, PYTHONPATH=str(build))
    run = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"FROM {build}")
    assert "RL101" in run.stdout and "Try next:" in run.stdout
