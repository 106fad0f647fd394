"""Every damaged input is refused in one line that says what the file is and what is wrong with
it, in ridgeline's words (issue 21, "refused though legal" / "a library's message").

The inputs are made on the fly by :mod:`tests.refusal_inputs` from the project's fixtures and, when
``../shared/samples`` is present, from the real samples (copied into tmp_path, never into the
repository): for each reader (ncu CSV raw/details, .ncu-rep, nsys sqlite, nsys stats CSV, Kineto
JSON(.gz), nvidia-smi CSV, dcgmi dmon, dcgm-exporter text, Prometheus JSON, the Parquet store) a
cut file, a number turned into a word, a needed column removed, a text id, damaged SQLite pages,
a JSON list or scalar, random bytes and an empty file, each with the seed's extension.

Property (``ridgeline analyze FILE --format json``):

* never exit 3;
* exit 2: one line on stderr, naming the file, naming the kind of file ridgeline took it for
  (``refusal_inputs.KIND_WORDS``, looked for outside the file name) and holding none of
  :data:`ridgeline.parsers.plain.LIBRARY_PHRASES`;
* exit 0/1 (read): only when the damage is named in the output (a ``skipped`` entry or skipped /
  missing values in the file's ``accounting``), or the case is one of :data:`READ_ON_PURPOSE`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
from pathlib import Path

import pytest

from ridgeline.parsers.plain import LIBRARY_PHRASES, has_library_phrase, plain_reason

_spec = importlib.util.spec_from_file_location("refusal_inputs", Path(__file__).resolve().parent / "refusal_inputs.py")
R = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = R  # dataclasses look their module up there
_spec.loader.exec_module(R)

# damages read on purpose (exit 0) though nothing is listed, and why
READ_ON_PURPOSE = {
    # SQLite checks a page when a query reaches it: a damaged page of a table ridgeline does not
    # read (most of an nsys export) changes nothing it reports; checking every page would cost
    # a scan of the whole database (gigabytes) on every run
    "sqlite-page": "a damaged page outside the tables read",
    # nsys stats writes a line end after the last row, the GUI export does not; a last row cut
    # inside an unquoted name with all its fields cannot be told from a whole one
    "nsys-csv/truncate": "last row cut inside an unquoted name (all fields present)",
}


def run_cli(path: Path):
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            main(["analyze", str(path), "--format", "json"])
            code = 0
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def _named_in_output(doc: dict, path: Path) -> bool:
    if any(s.get("source") == str(path) for s in doc.get("skipped") or []):
        return True
    return any(a.get("path") == str(path) and (a.get("skipped") or a.get("missing"))
               for a in doc.get("accounting") or [])


CASES = R.cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_damaged_input_is_refused_in_plain_words(case, tmp_path):
    path = case.build(tmp_path)
    if path is None:
        pytest.skip("the seed has nothing this damage applies to")
    code, out, err = run_cli(path)
    assert code in (0, 1, 2), f"exit {code}: {err[-1500:]}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        line = lines[0]
        assert path.name in line, line
        said = line.replace(str(path), "").lower()
        assert any(w in said for w in R.KIND_WORDS[case.reader]), f"does not say what the file was read as: {line}"
        assert has_library_phrase(line.replace(str(path), "")) is None, line
        return
    if case.damage in READ_ON_PURPOSE or f"{case.reader}/{case.damage}" in READ_ON_PURPOSE:
        return
    doc = json.loads(out)
    assert _named_in_output(doc, path), f"{case.id}: read as if fine (nothing skipped or missing)"


def test_generator_covers_every_reader_and_damage_class():
    readers = {c.reader for c in CASES}
    assert readers >= {"ncu-csv", "nsys-sqlite", "nsys-csv", "kineto", "nvidia-smi", "dmon", "exporter",
                       "prometheus-json", "parquet"}, readers
    damages = {c.damage for c in CASES}
    assert damages >= {"truncate", "wrong-type", "missing-column", "text-id", "sqlite-page", "json-list",
                       "json-scalar", "garbage"}, damages


# ---------------------------------------------------------------------------------------------
# plain_reason: each library complaint in the words of the file
# ---------------------------------------------------------------------------------------------
def _raised(fn):
    try:
        fn()
    except Exception as err:  # noqa: BLE001
        return err
    raise AssertionError("did not raise")


def test_json_cut_short_is_said_with_its_place():
    err = _raised(lambda: json.loads('{"traceEvents": [{"name": "k", "ts": 1'))
    text = plain_reason(err)
    assert "cut short" in text and "line 1" in text and has_library_phrase(text) is None, text


def test_json_unclosed_string_at_the_end_is_a_cut():
    err = _raised(lambda: json.loads('{"traceEvents": [{"name": "ker'))
    assert "cut short" in plain_reason(err), plain_reason(err)


def test_json_list_garbage_inside_names_line_and_column():
    err = _raised(lambda: json.loads('{\n  "a": 1,\n  b: 2\n}'))
    text = plain_reason(err)
    assert "line 3, column 3" in text and has_library_phrase(text) is None, text


def test_sqlite_messages(tmp_path):
    import sqlite3

    bad = tmp_path / "x.sqlite"
    bad.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    err = _raised(lambda: sqlite3.connect(bad).execute("select * from sqlite_master").fetchall())
    assert "SQLite" in plain_reason(err) and has_library_phrase(plain_reason(err)) is None, plain_reason(err)
    con = sqlite3.connect(":memory:")
    con.execute("create table t (a)")
    err = _raised(lambda: con.execute("select b from t"))
    assert plain_reason(err) == "column 'b' is missing"


def test_polars_conversion_and_missing_column():
    import polars as pl

    err = _raised(lambda: pl.DataFrame({"start_ns": ["1", "abc"]}).with_columns(pl.col("start_ns").cast(pl.Int64)))
    text = plain_reason(err)
    assert "start_ns" in text and "'abc'" in text and "whole number" in text and has_library_phrase(text) is None, text
    err = _raised(lambda: pl.DataFrame({"a": [1]}).select("name"))
    assert plain_reason(err) == "column 'name' is missing"


def test_gzip_cut_short():
    import gzip

    data = gzip.compress(b'{"traceEvents": []}' * 100)[:30]
    err = _raised(lambda: gzip.decompress(data))
    assert plain_reason(err) == "the compressed stream is cut short"


def test_library_phrases_hold_the_ones_the_issue_names():
    for phrase in ("conversion from", "unable to find column", "got binary data", "file is not a database",
                   "Expecting value", "ComputeError", "SchemaError"):
        assert phrase in LIBRARY_PHRASES


# ---------------------------------------------------------------------------------------------
# --debug: the traceback of a bug is escaped like every other output (render/safe_text.py)
# ---------------------------------------------------------------------------------------------
def test_debug_traceback_escapes_control_characters(monkeypatch, capsys, tmp_path):
    from ridgeline import cli, pipeline

    hostile = "kernel\x1b]0;owned\x07\u202e\x85name"

    def boom(*_a, **_k):
        raise RuntimeError(f"bad launch {hostile}")

    monkeypatch.setattr(pipeline, "analyze_paths", boom)
    with pytest.raises(SystemExit) as exc:
        (tmp_path / "x.csv").write_text("ID\n")
        cli.main(["--debug", "analyze", str(tmp_path / "x.csv")])
    assert exc.value.code == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError" in err  # the traceback is there, with --debug
    for raw in ("\x1b", "\x07", "\u202e", "\x85"):
        assert raw not in err, repr(raw)
    assert "\\x1b]0;owned\\x07" in err and "\\u202e" in err and "\\u0085" in err


# ---------------------------------------------------------------------------------------------
# line breaks other than \n inside a quoted kernel name (str.splitlines splits on all of them)
# ---------------------------------------------------------------------------------------------
ODD_BREAKS = ("\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e")


def _with_odd_names(seed: Path, out: Path, details: bool) -> dict[str, str]:
    """Rewrite ``seed`` with each launch's Kernel Name holding one odd line break; returns
    {launch ID: name}. Every field quoted, as ncu writes them."""
    import csv as _csv

    text = seed.read_bytes().decode("utf-8-sig")
    pre, _, rest = text.partition('"ID"')
    rows = list(_csv.reader(io.StringIO('"ID"' + rest, newline="")))
    k = rows[0].index("Kernel Name")
    names: dict[str, str] = {}
    for r in rows[1:]:
        if r and r[0].strip().isdigit():
            i = int(r[0])
            r[k] = names.setdefault(r[0], f"kern{ODD_BREAKS[i % len(ODD_BREAKS)]}el_{i}")
    buf = io.StringIO()
    writer = _csv.writer(buf, quoting=_csv.QUOTE_ALL, lineterminator="\n")
    for r in rows:
        if len(r) == 1 and r[0].startswith("=="):  # ncu's own messages stay unquoted
            buf.write(r[0] + "\n")
        else:
            writer.writerow(r)
    out.write_bytes((pre + buf.getvalue()).encode())
    return names


@pytest.mark.parametrize("seed", ["raw", "details"])
def test_odd_line_breaks_in_quoted_kernel_names_are_legal(seed, tmp_path, capsys):
    from ridgeline.cli import main

    src = {"raw": R.DEMO / "decode-b8-h100.ncu-raw.csv",
           "details": R.FIX / "ncu" / "details-2023-15col-multiprocess.csv"}[seed]
    path = tmp_path / f"odd-{seed}.csv"
    names = _with_odd_names(src, path, seed == "details")
    with pytest.raises(SystemExit) as exc:
        main(["analyze", str(path), "--format", "json"])
    out, err = capsys.readouterr()
    assert exc.value.code in (0, 1), err
    doc = json.loads(out)
    acct = next(a for a in doc["accounting"] if a["path"] == str(path))
    assert acct["read"] == acct["used"] == len(names), acct  # one launch per ID: no row split or merged
    by_id = {str(k["launch_id"]): k["kernel_name"] for k in doc["kernels"]}
    assert by_id == names  # each name read whole, its line break kept (JSON is the exact form)
    with pytest.raises(SystemExit) as exc:  # the table shows them escaped
        main(["analyze", str(path), "--top", "50"])
    table, err = capsys.readouterr()
    for raw in ODD_BREAKS:
        assert raw not in table, repr(raw)
    assert "el_" in table, table[:2000]  # short names shown (Python counts these breaks as blanks)
    with pytest.raises(SystemExit) as exc:  # the full names in text output: escaped, never raw
        main(["analyze", str(path), "--format", "csv"])
    csv_out, err = capsys.readouterr()
    assert any(esc in csv_out for esc in ("kern\\u2028el", "kern\\u0085el", "kern\\x0bel", "kern\\rel")), csv_out[:1500]
    for raw in ODD_BREAKS:
        assert raw not in csv_out, repr(raw)


# ---------------------------------------------------------------------------------------------
# the kind of file: added once, by the CLI, only where the line does not say it
# ---------------------------------------------------------------------------------------------
def test_kind_added_only_when_missing(tmp_path):
    from ridgeline.errors import InputError
    from ridgeline.refusals import name_the_kind

    prom = R.FIX / "telemetry" / "exporter-3-scrapes.prom"
    err = name_the_kind(InputError(prom, "expected a gpu label 0..4095", line=3, column="gpu", actual="x7"))
    assert str(err).endswith("got 'x7' (read as dcgm-exporter scrapes (Prometheus text))"), str(err)
    assert str(err).startswith(f"{prom}:3: column 'gpu'")  # the start of the line as before
    said = InputError(prom, "expected dcgm-exporter text", line=3)
    assert name_the_kind(said) is said  # already says it
    missing = InputError(tmp_path / "gone.csv", "expected a number", line=2)
    assert name_the_kind(missing) is missing  # not a file: nothing to detect
    usage = InputError(prom, "cannot read it: permission denied")
    assert name_the_kind(usage) is usage  # not about the content


@pytest.mark.parametrize("name, says", [("x.sqlite", "Nsight Systems export"), ("x.json", "PyTorch profiler trace"),
                                        ("x.json.gz", "PyTorch profiler trace"), ("x.parquet", "telemetry Parquet"),
                                        ("x.prom", "dcgm-exporter")])
def test_a_file_no_reader_claims_is_refused_as_what_its_name_says(name, says, tmp_path, capsys):
    from ridgeline.cli import main

    path = tmp_path / name
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(SystemExit) as exc:
        main(["analyze", str(path)])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1, err
    assert says in err and "as its name says" in err and "no format ridgeline reads" in err, err
    assert "Nsight Compute CSV" not in err  # not the generic guess
