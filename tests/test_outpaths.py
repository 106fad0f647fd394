"""Outputs never replace inputs (issue 35, class 2): the one output-path guard
(ridgeline.outpaths) for every command that writes, over every way of spelling an input: the
path itself, ``..``, a symbolic link (to the file, or a folder on the way), a hard link, a file
inside an input folder, a link into one. Each case: one line, exit 2, the input untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ridgeline.cli import main
from ridgeline.errors import UsageError
from ridgeline.outpaths import input_hit, refuse_over_inputs, refuse_store_over_inputs
from ridge_inputs import write_mini_ncu
from test_integration_pipeline import write_dmon


def _ok(argv) -> None:
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in argv])
    assert exc.value.code == 0


def _spell(tmp_path: Path, how: str, victim: Path) -> Path:
    """A path that names ``victim`` (an input file, maybe inside an input folder) ``how``."""
    if how == "same":
        return victim
    if how == "dotdot":
        return victim.parent / "x" / ".." / victim.name
    if how == "symlink":
        link = tmp_path / "out" / "link"
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(victim)
        return link
    if how == "folder-link":
        folder = tmp_path / "out" / "via"
        folder.parent.mkdir(exist_ok=True)
        folder.symlink_to(victim.parent, target_is_directory=True)
        return folder / victim.name
    if how == "hardlink":
        other = tmp_path / "out" / "hard"
        other.parent.mkdir(exist_ok=True)
        os.link(victim, other)
        return other
    raise AssertionError(how)


SPELLINGS = ["same", "dotdot", "symlink", "folder-link", "hardlink"]


def _inputs(tmp_path: Path, command: str, in_folder: bool):
    """(argument naming the input, the input file that must survive)."""
    base = tmp_path / "in"
    (base / "x").mkdir(parents=True)
    if command == "telemetry":
        victim = write_dmon(base / "n.dmon", 5)
    elif command == "diff":
        victim = base / "a.json"
        write_mini_ncu(base / "p.csv")
        _ok(["analyze", base / "p.csv", "--format", "json", "-o", victim])
        (base / "p.csv").unlink()
    else:
        victim = write_mini_ncu(base / "p.csv")
    return (base if in_folder else victim), victim


def _argv(command: str, given: Path, output: Path, tmp_path: Path):
    if command == "analyze-o":
        return ["analyze", given, "--format", "csv", "-o", output]
    if command == "analyze-plot":
        return ["analyze", given, "--plot", output]
    if command == "report":
        return ["report", given, "--format", "markdown", "-o", output]
    if command == "roofline":
        return ["roofline", given, "-o", output]
    if command == "telemetry":
        return ["telemetry", given, "--format", "csv", "-o", output]
    if command == "diff":
        return ["diff", given, given if given.is_file() else given / "a.json", "-o", output]
    if command == "check-write":
        return ["check", output, given, "--write"]
    raise AssertionError(command)


def _run(capsys, argv):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in argv])
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


COMMANDS = ["analyze-o", "analyze-plot", "report", "roofline", "telemetry", "diff", "check-write"]


@pytest.mark.parametrize("in_folder", [False, True], ids=["named", "in-folder"])
@pytest.mark.parametrize("how", SPELLINGS)
@pytest.mark.parametrize("command", COMMANDS)
def test_no_writer_replaces_an_input_however_spelled(capsys, tmp_path, command, how, in_folder):
    given, victim = _inputs(tmp_path, command.split("-")[0], in_folder)
    if in_folder and command in ("analyze-plot", "roofline"):  # an image in the folder (the suffix picks the format)
        victim = victim.with_suffix(".png")
        victim.write_bytes(b"\x89PNG\r\n\x1a\n an earlier plot")
    before = victim.read_bytes()
    output = _spell(tmp_path, how, victim)
    capsys.readouterr()
    code, out, err = _run(capsys, _argv(command, given, output, tmp_path))
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ridgeline: error: "), err
    assert "an output never replaces an input" in lines[0] and "Traceback" not in err
    assert victim.read_bytes() == before


def test_a_new_output_and_an_unrelated_one_are_written(capsys, tmp_path):
    (tmp_path / "in").mkdir()
    src = write_mini_ncu(tmp_path / "in" / "p.csv")
    (tmp_path / "old.json").write_text("{}")
    for target in (tmp_path / "new.json", tmp_path / "old.json", tmp_path / "in" / "new.json"):
        _ok(["analyze", tmp_path / "in", "--format", "json", "-o", target])
        assert json.loads(target.read_text())["schema_version"]
        capsys.readouterr()
    assert src.exists()


def test_the_guard_names_the_way_and_skips_what_is_no_file(tmp_path):
    victim = tmp_path / "in" / "p.csv"
    victim.parent.mkdir()
    victim.write_text("x")
    os.link(victim, tmp_path / "hard")
    assert "hard link" in input_hit(str(tmp_path / "hard"), [str(victim)])
    assert "a file of the input folder" in input_hit(str(tmp_path / "hard"), [str(tmp_path / "in")])
    assert input_hit(os.devnull, [os.devnull]) is None  # written in place, never replaced
    assert input_hit(str(tmp_path / "nothing-yet"), [str(tmp_path)]) is None
    refuse_over_inputs([("-o", "-"), ("-o", None)], ["-", str(victim)])  # stdout, stdin: no files


def test_a_store_is_never_saved_into_what_is_read(tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    with pytest.raises(UsageError, match="is the input folder"):
        refuse_store_over_inputs("--save", store, [str(store)])
    with pytest.raises(UsageError, match="lies inside the input folder"):
        refuse_store_over_inputs("--save", store / "sub", [str(tmp_path)])
    (store / "a.csv").write_text("x")
    with pytest.raises(UsageError, match="holds the input"):
        refuse_store_over_inputs("--save", store, [str(store / "a.csv")])
    refuse_store_over_inputs("--save", tmp_path / "other", [str(store)])


def test_telemetry_save_into_an_input_folder_is_refused_before_the_pull(capsys, tmp_path):
    write_dmon(tmp_path / "n.dmon", 5)
    # no server listens there: the refusal comes first
    code, out, err = _run(capsys, ["telemetry", tmp_path, "--prometheus", "http://127.0.0.1:9", "--from", "-1h",
                                   "--save", tmp_path / "store"])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--save" in err and "lies inside the input folder" in err
