"""Every file of tests/corpus/ (minimal reproducers of crashes and silent misreads, issue 14)
through the CLI: exit 0, 1 or 2; on 2 exactly one stderr line naming the file; never a
traceback, never exit 3. Cases marked ``error`` in make_corpus.CASES must be refused."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ridgeline.cli import main

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
sys.path.insert(0, str(CORPUS))
from make_corpus import CASES  # noqa: E402


NOT_YET: dict[str, str] = {}  # every corpus case is handled; add "file": "why" here for a known gap


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def test_corpus_files_match_the_generator(tmp_path):
    """The committed corpus is what make_corpus.py writes (regenerate: python tests/corpus/make_corpus.py)."""
    import make_corpus

    make_corpus.write_all(tmp_path)
    for name, *_ in CASES:
        committed, fresh = CORPUS / name, tmp_path / name
        assert committed.exists(), f"{name} missing; run python tests/corpus/make_corpus.py"
        if fresh.is_file() and not name.endswith(".parquet"):  # parquet bytes embed the writer's version
            assert committed.read_bytes() == fresh.read_bytes(), name
    assert (CORPUS / "MANIFEST.md").read_text() == (tmp_path / "MANIFEST.md").read_text()


@pytest.mark.parametrize("name,what,expected", [(n, w, e) for n, w, e, _m in CASES], ids=[c[0] for c in CASES])
@pytest.mark.parametrize("command", ["analyze", "telemetry"])
def test_corpus_case(name, what, expected, command, capsys):
    path = CORPUS / name
    if command == "telemetry" and name.startswith("ncu-"):
        pytest.skip("an ncu export is not telemetry")
    code, _out, err = run_cli([command, str(path), "--window", "all"], capsys)
    assert code in (0, 1, 2), f"{name}: exit {code}: {err}"
    assert "Traceback" not in err
    assert "internal error" not in err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("ridgeline: error: ")
        assert name in lines[0]
    if name in NOT_YET and code != 2:
        pytest.xfail(NOT_YET[name])
    if command == "telemetry" and name == "folder-one-bad":
        # the folder's only Parquet file is corrupt: listed and left out, the dmon file is read
        assert code in (0, 1), err
        assert "bad.parquet" in _out and "corrupt or truncated" in " ".join(_out.split())
        return
    if expected == "error":
        assert code == 2, f"{name} ({what}) was read without a word: exit {code}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("ridgeline: error: ")
        assert name in lines[0]


def test_folder_with_a_bad_file_keeps_the_good_one(capsys):
    import json

    code, out, err = run_cli(["analyze", str(CORPUS / "folder-one-bad"), "--format", "json", "--window", "all"],
                             capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert [Path(i["path"]).name for i in doc["inputs"]] == ["good.dmon"]
    reasons = {Path(s["source"]).name: s["reason"] for s in doc["skipped"]}
    assert "corrupt" in reasons["bad.parquet"]


def test_folder_with_a_bad_file_and_strict_is_refused(capsys):
    code, _out, err = run_cli(["analyze", str(CORPUS / "folder-one-bad"), "--strict", "--window", "all"], capsys)
    assert code == 2
    line = err.strip().splitlines()
    assert len(line) == 1 and "bad.parquet" in line[0] and "corrupt" in line[0]


def test_folder_with_nothing_usable_left_is_refused(tmp_path, capsys):
    import shutil

    shutil.copy(CORPUS / "corrupt-zstd.parquet", tmp_path / "a.parquet")
    shutil.copy(CORPUS / "truncated.parquet", tmp_path / "b.parquet")
    code, _out, err = run_cli(["analyze", str(tmp_path), "--window", "all"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
