"""Property test (hypothesis): damaged ncu inputs give sane figures or one clean error (issue 21).

Seeds: the committed ncu fixtures, the shared real ncu CSV samples under 1 MB and the shared
real ``.ncu-rep`` reports (skipped when ``../shared/samples`` or the reader is absent). Damage,
one to three times: a bad value (negative, infinite, NaN) in a counter the recipes read, a
launch repeated (as it was, or with another value), a column repeated (as it was, or with other
values), a cut, a byte flip, a line repeated; reports are cut and flipped. Whatever comes out is
either a :class:`~ridgeline.errors.RidgelineError` whose message is one line, or a result with no
negative or non-finite per-launch figure (:func:`test_ncu_damaged.assert_sane`); through the CLI,
exit 0, 1 or 2 (one line), never 3.

``HYPOTHESIS_PROFILE=ridgeline-fuzz`` (see ``tests/parsers/test_fuzz_readers.py``) runs thousands.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.errors import RidgelineError
import ncu_damage as D

from tests.parsers.test_fuzz_readers import PROFILE  # noqa: E402 - the shared hypothesis profiles
from test_ncu_damaged import assert_sane  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT.parent / "shared" / "samples"
CSV_SEEDS = sorted(p for p in (ROOT / "fixtures" / "ncu").glob("*.csv") if not p.name.startswith("bad-")) + sorted(
    p for p in (SHARED / "ncu").glob("*.csv") if p.stat().st_size < 1_000_000) if (ROOT / "fixtures" / "ncu").is_dir() else []
REP_SEEDS = sorted((SHARED / "ncu-rep").glob("*.ncu-rep")) if importlib.util.find_spec("ncu_report") else []
COUNTERS = ("dram__bytes.sum", "dram__bytes_read.sum", "gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second",
            "dram__bytes.sum.peak_sustained", "Duration", "DRAM Throughput",
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__inst_executed_pipe_tensor.sum")
_cache: dict[Path, bytes] = {}


def _bytes(p: Path) -> bytes:
    if p not in _cache:
        _cache[p] = p.read_bytes()
    return _cache[p]


def _csv_damage(draw, data: bytes) -> bytes:
    op = draw(st.sampled_from(["bad", "dup_launch", "dup_launch_changed", "dup_column", "dup_column_conflict",
                               "cut", "flip", "dup_line"]))
    try:
        if op == "bad":
            pre, rows = D.split(data)
            present = [m for m in COUNTERS if D.metric_cells(rows, m)]
            if present:
                m = draw(st.sampled_from(present))
                n = len(D.metric_cells(rows, m))
                return D.set_cell(data, m, draw(st.sampled_from(D.BAD_VALUES)), draw(st.integers(0, n - 1)))[0]
        elif op.startswith("dup_launch"):
            pre, rows = D.split(data)
            n = len({r[0] for r in (rows[i] for i in D.launch_rows(rows))})
            if n:
                change = None
                if op.endswith("changed"):
                    present = [m for m in COUNTERS if D.metric_cells(rows, m)]
                    change = (draw(st.sampled_from(present)), "7") if present else None
                return D.dup_launch(data, which=0, change=change)[0]
        elif op.startswith("dup_column"):
            pre, rows = D.split(data)
            name = draw(st.sampled_from(rows[0]))
            return D.dup_column(data, name, conflict=op.endswith("conflict"))[0]
    except (StopIteration, ValueError, IndexError, UnicodeDecodeError):
        pass  # the file is no longer CSV enough for this edit: fall through to byte damage
    if not data:
        return data
    i = draw(st.integers(0, len(data) - 1))
    if op == "dup_line":
        s = data.rfind(b"\n", 0, i) + 1
        e = data.find(b"\n", i)
        e = len(data) if e < 0 else e + 1
        return data[:e] + data[s:e] + data[e:]
    if op == "flip":
        b = bytearray(data)
        b[i] ^= 1 << draw(st.integers(0, 7))
        return bytes(b)
    return data[:i]


@st.composite
def damaged_csv(draw):
    src = draw(st.sampled_from(CSV_SEEDS))
    data = _bytes(src)
    for _ in range(draw(st.integers(1, 3))):
        data = _csv_damage(draw, data)
    return data


@st.composite
def damaged_rep(draw):
    data = bytearray(_bytes(draw(st.sampled_from(REP_SEEDS))))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(4, len(data) - 1))  # the magic stays: the report reader is the one tested
        if draw(st.booleans()):
            del data[i:]
        else:
            data[i] ^= 1 << draw(st.integers(0, 7))
        if len(data) <= 8:
            break
    return bytes(data)


def _check(data: bytes, suffix: str, strict: bool) -> None:
    from ridgeline.pipeline import analyze_paths

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / f"damaged{suffix}"
        path.write_bytes(data)
        try:
            res = analyze_paths([path], window="all", strict=strict)
        except RidgelineError as err:
            assert "\n" not in str(err).strip(), str(err)
            return
        assert_sane(res)


@pytest.mark.skipif(not CSV_SEEDS, reason="no ncu fixtures")
@settings(PROFILE)
@given(damaged_csv(), st.booleans())
def test_damaged_ncu_csv_is_sane_or_one_error(data, strict):
    _check(data, ".csv", strict)


@pytest.mark.skipif(not REP_SEEDS, reason="shared .ncu-rep samples or the ncu-report reader not available")
@settings(PROFILE, max_examples=min(PROFILE.max_examples, 12))
@given(damaged_rep(), st.booleans())
def test_damaged_ncu_rep_is_sane_or_one_error(data, strict):
    _check(data, ".ncu-rep", strict)


@pytest.mark.skipif(not CSV_SEEDS, reason="no ncu fixtures")
@settings(PROFILE, max_examples=min(PROFILE.max_examples, 15))
@given(damaged_csv(), st.booleans())
def test_damaged_ncu_csv_cli_exit_codes(data, lenient):
    from ridgeline.cli import main

    import contextlib
    import io

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "damaged.csv"
        path.write_bytes(data)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                main(["analyze", str(path), "--window", "all", *(["--lenient"] if lenient else [])])
                code = 0
            except SystemExit as exc:
                code = exc.code
    assert code in (0, 1, 2), (code, err.getvalue()[-500:])
    if code == 2:
        assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()


os.environ.setdefault("POLARS_MAX_THREADS", "2")
