"""The real-data sweep: every file under ``../shared/samples/`` through ``analyze --format json``,
the table view, ``report`` (HTML and Markdown) and, for telemetry, ``telemetry --format json``,
checked against properties that hold for ANY file (issue 20's "done when"), never against
per-file expected values:

* no exit 3 (a bug); a refusal (exit 2) is one line naming the file;
* the accounting balances for every input;
* ``--gpu`` naming the GPU the run found changes no verdict into a bug (the RL107 ``float(None)``
  class of bug);
* every kernel has a bound from the documented vocabulary, and an ``unknown`` one says what is
  missing;
* no advice to collect a metric or a section the file already holds, in any spelling;
* FLOPs and DRAM bytes are null exactly when no spelling of their counters exists in the file;
* no launch-overhead remedy on a launch longer than the launch-bound threshold;
* distinct demangled kernel names get distinct displayed names;
* every view's numbers equal the JSON document's.

Skipped as a whole when ``../shared/samples`` is absent (a clean clone in CI). Each file is run
once per command (module-scoped cache), in process, so the sweep costs what the commands cost.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
from pathlib import Path

import pytest

from ridge_inputs import SAMPLES

FILES = sorted(p for p in SAMPLES.glob("*/*") if p.is_file() and p.name != "MANIFEST.md") if SAMPLES.is_dir() else []
pytestmark = pytest.mark.skipif(not FILES, reason="../shared/samples is absent (real-data sweep skipped)")
IDS = [f"{p.parent.name}/{p.name[:48]}" for p in FILES]


def _ridgeline(*args) -> tuple[int, str, str]:
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    return code, out.getvalue(), err.getvalue()


@functools.lru_cache(maxsize=None)
def analyzed(path: Path, *extra: str) -> tuple[int, dict | None, str]:
    code, out, err = _ridgeline("analyze", path, "--format", "json", *extra)
    return code, (json.loads(out) if code in (0, 1) else None), err


def _doc(path: Path) -> dict:
    code, doc, err = analyzed(path)
    assert code != 3, f"{path.name}: exit 3 (a bug): {err}"
    if code == 2:
        pytest.skip(f"refused in one line: {err.strip()}")
    return doc


def _assert_clean_refusal(path: Path, code: int, err: str) -> None:
    assert code != 3, f"{path.name}: exit 3 (a bug): {err}"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and path.name in lines[0], err


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_analyze_never_a_bug_and_accounting_balances(path):
    code, doc, err = analyzed(path)
    _assert_clean_refusal(path, code, err)
    if doc is None:
        return
    assert doc["accounting"], "every run accounts for its inputs"
    for rec in doc["accounting"]:
        assert rec["balanced"], rec


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_views_never_a_bug(path, tmp_path):
    doc = _doc(path)
    code, out, err = _ridgeline("analyze", path)
    _assert_clean_refusal(path, code, err)
    code, out, err = _ridgeline("report", path, "-o", tmp_path / "r.html")
    _assert_clean_refusal(path, code, err)
    code, out, err = _ridgeline("report", path, "--format", "markdown")
    _assert_clean_refusal(path, code, err)
    if doc.get("telemetry"):
        code, out, err = _ridgeline("telemetry", path, "--format", "json")
        _assert_clean_refusal(path, code, err)


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_naming_the_gpu_found_is_never_a_bug(path):
    doc = _doc(path)
    gpu = (doc.get("gpu") or {}).get("name")
    if not gpu or not doc.get("kernels") or "," in gpu:
        pytest.skip("no single catalogue GPU, or no kernels")
    code, doc2, err = analyzed(path, "--gpu", gpu)
    assert code in (0, 1), f"{path.name} --gpu {gpu}: exit {code}: {err}"
    assert [k["bound"] for k in doc2["kernels"]] == [k["bound"] for k in doc["kernels"]]


@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_unknown_kernels_say_what_is_missing(path):
    doc = _doc(path)
    for k in doc.get("kernels") or []:
        if k["bound"] == "unknown":
            assert k.get("missing") or k.get("missing_hint"), k.get("kernel_name")


_METRIC = re.compile(r"\b[a-z0-9]+__[a-z0-9_]+(?:\.[a-z0-9_]+)*")


def _advice_texts(doc: dict) -> list[str]:
    texts = []
    for f in doc.get("findings") or []:
        texts += [str(f.get(k) or "") for k in ("remedy", "message", "evidence")]
    for k in doc.get("kernels") or []:
        texts.append(str(k.get("missing_hint") or ""))
    texts += [str(n) for n in doc.get("notes") or []]
    return texts
