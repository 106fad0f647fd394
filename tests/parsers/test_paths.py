"""Folders holding FIFOs, sockets and dangling links: listed as skipped, never opened; a FIFO named
on the command line is one line (exit 2) at once, not a read that waits forever (issue 21)."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from ridgeline.cli import main
from ridgeline.parsers.paths import not_regular

ROOT = Path(__file__).resolve().parents[2]
GOOD_NCU = ROOT / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"
GOOD_TELEMETRY = ROOT / "fixtures" / "telemetry" / "exporter-3-scrapes.prom"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    cap = capsys.readouterr()
    return exc.value.code, cap.out, cap.err


@pytest.fixture
def odd_folder(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    os.mkfifo(folder / "pipe.csv")
    (folder / "gone.csv").symlink_to(tmp_path / "nowhere.csv")
    sock = socket.socket(socket.AF_UNIX)
    sock_path = folder / "s.sock"
    if len(str(sock_path)) < 100:  # AF_UNIX path length limit
        sock.bind(str(sock_path))
    yield folder
    sock.close()


def test_not_regular_names_each_kind(odd_folder):
    assert "FIFO" in not_regular(odd_folder / "pipe.csv")
    assert "dangling" in not_regular(odd_folder / "gone.csv")
    assert not_regular(GOOD_NCU) is None and not_regular(odd_folder) is None
    if (odd_folder / "s.sock").exists():
        assert not_regular(odd_folder / "s.sock") == "a socket"


@pytest.mark.parametrize("command, good", [("analyze", GOOD_NCU), ("telemetry", GOOD_TELEMETRY)])
def test_folder_lists_every_odd_entry_as_skipped(capsys, odd_folder, command, good):
    shutil.copy(good, odd_folder / good.name)
    code, out, err = run(capsys, command, odd_folder, "--format", "json")
    assert code in (0, 1), err
    doc = json.loads(out)
    skipped = {Path(s["source"]).name: s["reason"] for s in doc["skipped"] if s["item"] == "file"}
    assert "FIFO" in skipped["pipe.csv"] and "dangling" in skipped["gone.csv"]
    if (odd_folder / "s.sock").exists():
        assert "socket" in skipped["s.sock"]
    assert [Path(i["path"]).name for i in doc["inputs"]] == [good.name]
    code, out, err = run(capsys, command, odd_folder, "--strict")  # --strict: the first one is an error
    assert code == 2 and len(err.strip().splitlines()) == 1 and "expected a readable regular file" in err
    assert "more found in the folders" in err  # the others are counted, not hidden


@pytest.mark.parametrize("command", ["analyze", "telemetry", "report"])
def test_a_fifo_named_is_refused_at_once(capsys, odd_folder, command):
    code, out, err = run(capsys, command, odd_folder / "pipe.csv")
    assert code == 2 and "FIFO" in err and len(err.strip().splitlines()) == 1
    code, out, err = run(capsys, command, odd_folder / "gone.csv")
    assert code == 2 and len(err.strip().splitlines()) == 1


def _unprivileged(argv, cwd):
    """``ridgeline ARGV`` in a process that cannot read a file without read permission: as
    itself when not root, else as root without the capabilities that override permissions."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "ridgeline.cli", *map(str, argv)]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root without setpriv reads every file")
        cmd = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *cmd]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("command", ["analyze", "telemetry"])
def test_an_unreadable_file_in_a_folder_is_listed_and_strict_refuses_it(tmp_path, command):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(GOOD_NCU if command == "analyze" else GOOD_TELEMETRY, folder)
    secret = folder / ("secret.csv" if command == "analyze" else "secret.prom")
    shutil.copy(GOOD_NCU if command == "analyze" else GOOD_TELEMETRY, secret)
    secret.chmod(0)
    try:
        done = _unprivileged([command, folder, "--format", "json"], tmp_path)
        assert done.returncode in (0, 1), done.stderr
        skipped = {Path(s["source"]).name: s["reason"] for s in json.loads(done.stdout)["skipped"]}
        assert "not readable" in skipped[secret.name]  # listed as what it is, not as "not recognized"
        done = _unprivileged([command, folder, "--strict"], tmp_path)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.strip().splitlines()) == 1 and "not readable" in done.stderr and secret.name in done.stderr
    finally:
        secret.chmod(0o644)


def _loops(folder: Path) -> list[str]:
    """Symbolic link loops of each shape, made here: a link to itself, two links to each other
    (one a .parquet name, as a store could hold), a loop in a subfolder, and a folder link back
    to its parent (a cycle a walk that followed folder links would never leave)."""
    (folder / "self.csv").symlink_to("self.csv")
    (folder / "a.parquet").symlink_to("b.parquet")
    (folder / "b.parquet").symlink_to("a.parquet")
    (folder / "sub").mkdir()
    (folder / "sub" / "x.json").symlink_to("x.json")
    (folder / "sub" / "up").symlink_to("..")
    return ["self.csv", "a.parquet", "b.parquet", "x.json"]


def test_not_regular_names_a_symbolic_link_loop(tmp_path):
    _loops(tmp_path)
    for rel in ("self.csv", "a.parquet", "b.parquet", "sub/x.json"):
        assert "symbolic link loop" in not_regular(tmp_path / rel)
    assert not_regular(tmp_path / "sub" / "up") is None  # a folder (not walked into by the readers)


@pytest.mark.parametrize("command, good", [("analyze", GOOD_NCU), ("telemetry", GOOD_TELEMETRY),
                                           ("report", GOOD_NCU)])
def test_symbolic_link_loops_in_a_folder_are_listed_once_and_strict_refuses_them(tmp_path, capsys, command, good):
    folder = tmp_path / "in"
    folder.mkdir()
    names = _loops(folder)
    shutil.copy(good, folder / good.name)
    fmt = ["--format", "markdown", "-o", str(tmp_path / "r.md")] if command == "report" else ["--format", "json"]
    code, out, err = run(capsys, command, folder, *fmt)
    assert code in (0, 1), err  # was exit 3 (pathlib's RuntimeError: Symlink loop)
    if command != "report":
        listed = [Path(s["source"]).name for s in json.loads(out)["skipped"] if s["item"] == "file"]
        assert sorted(n for n in listed if n in names) == sorted(names)  # each once, the folder link not walked
        assert all("symbolic link loop" in s["reason"] for s in json.loads(out)["skipped"]
                   if Path(s["source"]).name in names)
    code, out, err = run(capsys, command, folder, "--strict", *fmt)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "symbolic link loop" in err and "3 more found in the folders" in err


def test_a_loop_beside_a_parquet_store_leaves_the_store_readable(tmp_path, capsys):
    import polars as pl

    store = tmp_path / "store" / "date=2026-01-05" / "host=n1"
    store.mkdir(parents=True)
    pl.DataFrame({"timestamp": [1767600000.0 + i for i in range(30)], "gpu": [0] * 30,
                  "field": ["gpu_util_ratio"] * 30, "value": [0.5] * 30}).write_parquet(store / "p.parquet")
    (store / "loop.parquet").symlink_to("loop.parquet")
    code, out, err = run(capsys, "telemetry", tmp_path / "store", "--format", "json")
    assert code in (0, 1), err
    doc = json.loads(out)
    assert doc["inputs"][0]["rows"] == 30
    assert [Path(s["source"]).name for s in doc["skipped"]] == ["loop.parquet"]  # once, in ridgeline's words
