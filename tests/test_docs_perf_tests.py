"""docs/perf-tests.md's example repository works as written.

Each fenced block preceded by ``<!-- file: PATH -->`` is written to PATH in a fresh folder with
two synthetic scenario profiles under profiles/ (fixtures/scenarios: prefill-2048-h100 and
decode-b8-h100, the captures the page describes); pytest then runs there, and so does
`ridgeline check` on the page's expectation file.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "perf-tests.md"
SCENARIOS = REPO / "fixtures" / "scenarios"
BLOCK = re.compile(r"<!-- file: (?P<path>\S+) -->\n```[a-z]*\n(?P<body>.*?)```", re.S)


def _files() -> dict[str, str]:
    return {m["path"]: m["body"] for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module", autouse=True)
def _loaded_before_inline_runs():
    """pytester's in-process runs drop modules first imported during them (polars twice breaks)."""
    from ridgeline.testing import analyze, expectations  # noqa: F401

    analyze(SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv")


@pytest.fixture
def example(pytester):
    profiles = pytester.path / "profiles"
    profiles.mkdir()
    shutil.copy(SCENARIOS / "prefill-2048-h100" / "profile.ncu-raw.csv", profiles / "prefill-2048.ncu-raw.csv")
    shutil.copy(SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv", profiles / "decode-b8.ncu-raw.csv")
    for rel, body in _files().items():
        path = pytester.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")
    return pytester


def test_the_page_names_the_three_files_of_its_layout():
    assert set(_files()) == {"tests/test_perf.py", "perf/decode-b8.ridgeline.toml", ".github/workflows/perf.yml"}


def test_the_example_repository_passes_its_own_tests(example):
    res = example.runpytest("-p", "no:cacheprovider", "tests/test_perf.py", "perf/")
    expect_items = len(re.findall(r"^\[\[expect\]\]", _files()["perf/decode-b8.ridgeline.toml"], re.M)) + 1
    res.assert_outcomes(passed=4 + expect_items)


def test_the_example_expectation_file_passes_ridgeline_check(example, capsys, monkeypatch):
    from ridgeline.cli import main

    monkeypatch.chdir(example.path / "perf")
    with pytest.raises(SystemExit) as exc:
        main(["check", "decode-b8.ridgeline.toml"])
    out = capsys.readouterr().out
    assert exc.value.code == 0, out
    assert "0 failed" in out


def test_the_example_fails_on_the_prefill_capture(example, capsys):
    """The decode expectations checked against the prefill profile: GEMMs moved right of the ridge."""
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["check", str(example.path / "perf" / "decode-b8.ridgeline.toml"),
              str(example.path / "profiles" / "prefill-2048.ncu-raw.csv")])
    out = " ".join(capsys.readouterr().out.split())  # the report's 80-column wrapping undone
    assert exc.value.code == 1
    assert "FAIL weight GEMMs stream weights near DRAM speed" in out
    assert "- bound 'compute', expected 'memory'" in out
    assert "no kernel group selected (kernel 'flash_fwd_splitkv_kernel')" in out  # prefill has no split-KV


def test_the_synth_example_runs_and_marks_its_files_synthetic(tmp_path, monkeypatch):
    text = PAGE.read_text(encoding="utf-8")
    block = text.split("## Without any capture")[1].split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/perf-tests.md", "exec"), {})
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["profiles/b200-fp8.ncu-raw.csv", "profiles/decode-b8.ncu-raw.csv",
                       "profiles/my-model-b32.ncu-raw.csv", "profiles/prefill.ncu-details.csv",
                       "profiles/tiny-kernels.ncu-raw.csv", "telemetry/node01.dmon"]
    for rel in written:
        assert "SYNTHETIC" in (tmp_path / rel).read_text(encoding="utf-8").splitlines()[0], rel
