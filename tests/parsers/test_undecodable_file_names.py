"""File names that are not UTF-8 (issue 35, class 9): Linux allows any bytes in a name, Python holds
the undecodable ones as lone surrogates (``os.fsdecode``), and polars refuses those as text. The
name becomes a table's ``source`` label through ridgeline.result.path_label (each such byte as the
text ``\\udcXX``, the spelling docs/output-safety.md gives), while the file is opened by its real
path (a file polars opens by name, such as an ncu CSV or a scrape, through a link with a UTF-8 name:
ridgeline.parsers.paths.polars_path). Every command and format ends in 0/1/2, never 3, writes only
UTF-8, shows the escaped name and counts each input's rows as its own. A Parquet input so named
(whose hive folders a link cannot carry) is refused in one line naming it, escaped, saying why."""

from __future__ import annotations

import json
import os
import re
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
def folder(tmp_path):
    """One file of each kind, each named with bytes that are not UTF-8."""
    d = tmp_path / "in"
    d.mkdir()
    files = {
        "kineto": (b"tr\xe9ce.json", (FIXTURES / "timeline" / "capture.kineto.json").read_bytes()),
        "nsys": (b"ns\xe9ys.sqlite", (FIXTURES / "timeline" / "capture-2024.sqlite").read_bytes()),
        "ncu": (b"k\xff\xfeernels.csv", (FIXTURES / "ncu" / "details-2023-15col-multiprocess.csv").read_bytes()),
        "prom-json": (b"an\xfdswer\xff.json", _answer()),
        "scrape": (b"te\x80lem.prom", (FIXTURES / "telemetry" / "exporter-3-scrapes.prom").read_bytes()),
        "smi-csv": (b"sm\xe9i.csv", (FIXTURES / "telemetry" / "nvidia-smi-query.csv").read_bytes()),
    }
    return d, {kind: _place(d, raw, content) for kind, (raw, content) in files.items()}


TELEMETRY = ("prom-json", "scrape", "smi-csv")


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


def _check_json(doc, paths):
    """Every input listed, its rows counted as its own (the accounting matches the tables' labels)."""
    got = {a["path"]: a["balanced"] for a in doc["accounting"]}
    assert got == {p: True for p in paths}, got


def test_every_input_is_read_by_its_real_path_and_named_escaped_in_every_format(tmp_path, folder):
    d, paths = folder
    for fmt in ANALYZE_FORMATS:
        out = tmp_path / f"out.{fmt}"
        p = _cli("analyze", d, "--format", fmt, "-o", out)
        assert p.returncode in (0, 1), (fmt, p.stderr[-2000:])
        _clean(p.stdout + p.stderr)
        text = _clean(out.read_bytes()) if fmt != "parquet" else ""
        if fmt == "json":
            doc = json.loads(text)
            _check_json(doc, paths.values())
            assert all(_shows(text, p) for p in paths.values())
            sources = {d["source"] for d in doc["timeline"]["devices"]} | {k["source"] for k in doc["kernels"]}
            assert sources == {path_label(paths[k]) for k in ("kineto", "nsys", "ncu")}
        elif fmt in ("sarif", "github"):
            assert any(_shows(text, p) for p in paths.values()), (fmt, text[:2000])
    for fmt, name in (("html", "r.html"), ("markdown", "r.md")):
        p = _cli("report", d, "--format", fmt, "-o", tmp_path / name)
        assert p.returncode in (0, 1), (fmt, p.stderr[-2000:])
        text = _clean((tmp_path / name).read_bytes())
        assert any(_shows(text, p) for p in paths.values()), fmt
    telemetry = [paths[k] for k in TELEMETRY]
    for fmt in ANALYZE_FORMATS:
        out = tmp_path / f"t.{fmt}"
        p = _cli("telemetry", *telemetry, "--format", fmt, "-o", out)
        assert p.returncode in (0, 1), (fmt, p.stderr[-2000:])
        _clean(p.stdout + p.stderr)
        if fmt == "json":
            text = _clean(out.read_bytes())
            _check_json(json.loads(text), telemetry)
            assert all(_shows(text, p) for p in telemetry)


def test_a_parquet_input_so_named_is_refused_in_one_line_naming_it_escaped(tmp_path):
    import polars as pl

    src = tmp_path / "ok.parquet"
    pl.DataFrame({"timestamp": [1767225600000], "host": ["n1"], "gpu": [0], "gpu_util_ratio": [0.5]}).write_parquet(src)
    path = _place(tmp_path, b"st\xe9ore.parquet", src.read_bytes())
    p = _cli("telemetry", path, "--format", "json")
    assert p.returncode == 2, p.stderr[-2000:]
    err = _clean(p.stderr)
    assert err.count("\n") == 1 and path_label(path) in err and "not UTF-8" in err, err
