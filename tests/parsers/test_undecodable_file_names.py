"""File names that are not UTF-8 (issue 35, class 9): Linux allows any bytes in a name, Python holds
the undecodable ones as lone surrogates (``os.fsdecode``), and polars refuses those as text. The
name becomes a table's ``source`` label through ridgeline.result.path_label (each such byte as the
text ``\\udcXX``, the spelling docs/output-safety.md gives), while the file is opened by its real
path. Every command and format ends in 0/1/2, never 3, writes only UTF-8, and shows the escaped
name. Files read by polars itself (an ncu CSV, a Prometheus scrape) cannot be opened by a name that
is not UTF-8: those are refused in one line naming the file, escaped, and saying why."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ridgeline.result import path_label

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a file name of any bytes is a Linux thing")

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
ANALYZE_FORMATS = ("table", "json", "csv", "parquet", "sarif", "github")


def _place(tmp_path: Path, raw_name: bytes, content: bytes) -> str:
    path = os.path.join(os.fsencode(tmp_path), raw_name)
    with open(path, "wb") as fh:
        fh.write(content)
    return os.fsdecode(path)  # what a shell glob hands the program: the bytes as lone surrogates


def _answer() -> bytes:
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "n1"},
         "values": [[1767225600 + 30 * k, "50"] for k in range(4)]}]}}).encode()


@pytest.fixture
def inputs(tmp_path):
    return {
        "kineto": _place(tmp_path, b"tr\xe9ce.json", (FIXTURES / "timeline" / "capture.kineto.json").read_bytes()),
        "nsys": _place(tmp_path, b"ns\xe9ys.sqlite", (FIXTURES / "timeline" / "capture-2024.sqlite").read_bytes()),
        "prom-json": _place(tmp_path, b"an\xfdswer\xff.json", _answer()),
        "ncu": _place(tmp_path, b"k\xff\xfeernels.csv",
                      (FIXTURES / "ncu" / "details-2023-15col-multiprocess.csv").read_bytes()),
        "scrape": _place(tmp_path, b"te\x80lem.prom", (FIXTURES / "telemetry" / "exporter-3-scrapes.prom").read_bytes()),
    }


def _cli(*args):
    # argv as bytes, as a shell passes a name that is not UTF-8
    return subprocess.run([sys.executable, "-m", "ridgeline.cli", *(os.fsencode(str(a)) for a in args)],
                          capture_output=True, check=False, timeout=300)


def _clean(out: bytes) -> str:
    text = out.decode("utf-8")  # strict: nothing that is not UTF-8 was written
    assert not re.search("[\ud800-\udfff]", text)
    return text


def _shows(text: str, path: str) -> bool:
    """The escaped name (``tr\\udce9ce.json``) in ``text``, as written or JSON/Markdown-escaped once more;
    in a SARIF URI, the real bytes percent-encoded."""
    name = path_label(os.path.basename(path))
    uri = "".join(f"%{b:02X}" if b > 0x7e else chr(b) for b in os.fsencode(os.path.basename(path)))
    flat = text.replace("\\\\", "\\")
    return name in flat or uri in text


def test_path_label_escapes_undecodable_bytes_and_keeps_the_rest():
    assert path_label(os.fsdecode(b"/d/tr\xe9ce.json")) == "/d/tr\\udce9ce.json"
    assert path_label("/d/trace é.json") == "/d/trace é.json"  # UTF-8 names unchanged
    assert path_label(path_label(os.fsdecode(b"a\xff"))) == "a\\udcff"  # idempotent
    assert path_label(b"a\xff") == "a\\udcff"


@pytest.mark.parametrize("kind", ["kineto", "nsys", "prom-json"])
def test_files_read_whole_by_python_are_analyzed_and_named_escaped(tmp_path, inputs, kind):
    path = inputs[kind]
    cmd = "telemetry" if kind == "prom-json" else "analyze"
    for fmt in ANALYZE_FORMATS:
        out = tmp_path / f"out.{fmt}"
        p = _cli(cmd, path, "--format", fmt, "-o", out)
        assert p.returncode in (0, 1), (fmt, p.stderr[-2000:])
        _clean(p.stdout + p.stderr)
        if fmt != "parquet":
            text = _clean(out.read_bytes())
            if fmt in ("json", "sarif", "github"):
                assert _shows(text, path), (fmt, text[:2000])
    for fmt, name in (("html", "r.html"), ("markdown", "r.md")):
        p = _cli("report", path, "--format", fmt, "-o", tmp_path / name)
        assert p.returncode in (0, 1), (fmt, p.stderr[-2000:])
        assert _shows(_clean((tmp_path / name).read_bytes()), path), fmt
    doc = json.loads(_clean(_cli(cmd, path, "--format", "json").stdout))
    assert [a["balanced"] for a in doc["accounting"]] == [True]  # the rows are counted as this input's
    if cmd == "analyze":  # the timeline's source column itself: the escaped text
        assert {d["source"] for d in doc["timeline"]["devices"]} == {path_label(path)}


@pytest.mark.parametrize("kind", ["ncu", "scrape"])
def test_files_polars_opens_are_refused_in_one_line_naming_them_escaped(tmp_path, inputs, kind):
    path = inputs[kind]
    cmds = ("analyze", "report") if kind == "ncu" else ("telemetry", "analyze", "report")
    for cmd in cmds:
        formats = ("html", "markdown") if cmd == "report" else ANALYZE_FORMATS
        for fmt in formats:
            p = _cli(cmd, path, "--format", fmt, "-o", tmp_path / f"out.{fmt}")
            assert p.returncode == 2, (cmd, fmt, p.stderr[-2000:])
            err = _clean(p.stderr)
            assert err.count("\n") == 1 and path_label(path) in err and "not UTF-8" in err, err
            assert not (tmp_path / f"out.{fmt}").exists()


def test_a_folder_holding_such_names_never_ends_in_a_bug_exit(tmp_path, inputs):
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.move(inputs["kineto"], os.path.join(os.fsencode(folder), b"tr\xe9ce.json"))
    p = _cli("analyze", folder, "--format", "json")
    assert p.returncode in (0, 1), p.stderr[-2000:]
    assert _shows(_clean(p.stdout), inputs["kineto"])
