"""Damaged or odd Nsight Compute inputs are never misread (issue 21, the ncu readers' part).

Inputs are built in tmp_path from the committed fixtures and the shared real samples by
``tests/ncu_damage.py`` (bad cells, repeated launches, repeated columns) and by cutting and
flipping bytes of the real ``.ncu-rep`` reports; nothing damaged is committed. Expected answers
come from the damage itself: the line written, the metric set, the launch repeated.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.ncu.csv_reader import read_ncu
import ncu_damage as D

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "fixtures" / "ncu"
REP_SAMPLES = ROOT.parent / "shared" / "samples" / "ncu-rep"
RAW = FIX / "raw-units-row.csv"
DETAILS = FIX / "details-2023-15col-multiprocess.csv"
# (file, a counter the recipes read, which present cell of it to damage)
CASES = [(RAW, "dram__bytes.sum", 0), (RAW, "gpu__time_duration.sum", 1), (DETAILS, "dram__bytes_read.sum", 1)]

needs_reader = pytest.mark.skipif(importlib.util.find_spec("ncu_report") is None,
                                  reason="ncu-report (ridgeline[ncu-rep]) not installed")


def write(tmp_path, data: bytes, name="damaged.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def reps() -> list[Path]:
    if not REP_SAMPLES.is_dir():
        return []
    return sorted(REP_SAMPLES.glob("*.ncu-rep"))


# --------------------------------------------------------------------------------------
# bad values: negative, infinite, NaN
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", D.BAD_VALUES)
@pytest.mark.parametrize("src,metric,which", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_bad_value_strict_is_one_error_naming_file_line_and_metric(tmp_path, src, metric, which, value):
    data, line, _lid = D.set_cell(src.read_bytes(), metric, value, which)
    path = write(tmp_path, data)
    with pytest.raises(InputError) as exc:
        read_ncu(path)
    text = str(exc.value)
    assert "\n" not in text
    assert f"{path}:{line}:" in text and metric in text and repr(value) in text
    assert "collected with a bad value" in text


@pytest.mark.parametrize("value", ["-1", "inf", "nan"])
@pytest.mark.parametrize("src,metric,which", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_bad_value_lenient_skips_the_launch_and_says_collected(tmp_path, src, metric, which, value):
    good = read_ncu(src, strict=False)
    data, line, lid = D.set_cell(src.read_bytes(), metric, value, which)
    path = write(tmp_path, data)
    res = read_ncu(path, strict=False)
    ids = res.kernels.get_column("id").to_list()
    assert res.kernels.height == good.kernels.height - 1
    assert lid not in ids and set(ids) < set(good.kernels.get_column("id").to_list())
    hits = [s for s in res.skipped if s.item == f"line {line}"]
    assert len(hits) == 1, res.skipped
    assert "collected with a bad value" in hits[0].reason and metric in hits[0].reason and "not collected" not in hits[0].reason


@pytest.mark.parametrize("value", ["nan", "-1"])
@pytest.mark.parametrize("src,metric,which", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_bad_value_never_becomes_collect_advice(tmp_path, src, metric, which, value):
    """Findings of a lenient run name the damaged metric only where the good file's do too."""
    from ridgeline.pipeline import analyze_paths

    def texts(result):
        return [json.dumps(f.to_dict()) for f in result.findings]

    good = [t for t in texts(analyze_paths([src], window="all", strict=False)) if metric in t]
    data, _line, _lid = D.set_cell(src.read_bytes(), metric, value, which)
    res = analyze_paths([write(tmp_path, data)], window="all", strict=False)
    bad = [t for t in texts(res) if metric in t]
    assert len(bad) <= len(good), bad
    assert_sane(res)


def assert_sane(result) -> None:
    """No negative figure in the per-launch table (intensity, fractions, times, bytes, FLOPs...) and
    a finite total GPU time. ``+inf`` is allowed: the analyzer writes an intensity of FLOPs over 0
    bytes as inf (real undamaged samples hold L1 intensities of inf: TMA GEMMs move no L1 bytes)."""
    import polars as pl

    k = result.kernels
    if k is None or k.height == 0:
        return
    num = [c for c, t in k.schema.items() if t.is_numeric()]
    flags = k.select([pl.col(c).lt(0).any().alias(c) for c in num]).row(0, named=True)
    assert not any(flags.values()), [c for c, f in flags.items() if f]
    assert result.total_gpu_time_s is None or (math.isfinite(result.total_gpu_time_s) and result.total_gpu_time_s >= 0)


# --------------------------------------------------------------------------------------
# repeated launches
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("src", [RAW, DETAILS], ids=lambda p: p.name)
def test_identical_repeated_launch_is_counted_once_and_listed(tmp_path, src):
    good = read_ncu(src)
    data, first, copy = D.dup_launch(src.read_bytes(), which=0)
    res = read_ncu(write(tmp_path, data))  # strict: a plain repeat is not an error
    assert res.kernels.get_column("id").to_list() == good.kernels.get_column("id").to_list()
    assert res.kernels.get_column("duration_s").sum() == pytest.approx(good.kernels.get_column("duration_s").sum())
    hit = [s for s in res.skipped if s.item == f"line {copy}"]
    assert len(hit) == 1 and "repeated" in hit[0].reason and f"line {first}" in hit[0].reason


@pytest.mark.parametrize("src,metric", [(RAW, "dram__bytes.sum"), (DETAILS, "gpu__time_duration.sum")],
                         ids=lambda x: getattr(x, "name", str(x)))
def test_repeated_launch_with_other_values(tmp_path, src, metric):
    good = read_ncu(src)
    data, first, copy = D.dup_launch(src.read_bytes(), which=0, change=(metric, "12345"))
    path = write(tmp_path, data)
    with pytest.raises(InputError) as exc:
        read_ncu(path)
    assert f"{path}:{copy}:" in str(exc.value) and f"line {first}" in str(exc.value)
    res = read_ncu(path, strict=False)
    assert res.kernels.height == good.kernels.height
    assert res.kernels.row(0, named=True)["duration_s"] == good.kernels.row(0, named=True)["duration_s"]  # the first kept
    hit = [s for s in res.skipped if s.item == f"line {copy}"]
    assert len(hit) == 1 and "different values" in hit[0].reason


# --------------------------------------------------------------------------------------
# repeated header names
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("src,name", [(RAW, "Kernel Name"), (RAW, "dram__bytes.sum.peak_sustained"),
                                      (DETAILS, "Kernel Name"), (DETAILS, "Metric Value")],
                         ids=lambda x: getattr(x, "name", str(x)))
def test_identical_repeated_column_keeps_one_and_says_so(tmp_path, src, name):
    good = read_ncu(src)
    data, _a, _b = D.dup_column(src.read_bytes(), name)
    res = read_ncu(write(tmp_path, data))
    assert res.kernels.equals(good.kernels.with_columns(res.kernels.get_column("source")))
    assert any(repr(name) in n and "identical" in n for n in res.notes), res.notes


@pytest.mark.parametrize("src,name", [(RAW, "Kernel Name"), (RAW, "dram__bytes.sum.peak_sustained"),
                                      (DETAILS, "Kernel Name"), (DETAILS, "Metric Value")],
                         ids=lambda x: getattr(x, "name", str(x)))
@pytest.mark.parametrize("strict", [True, False])
def test_conflicting_repeated_column_is_an_error_naming_both(tmp_path, src, name, strict):
    data, a, b = D.dup_column(src.read_bytes(), name, conflict=True)
    with pytest.raises(InputError) as exc:
        read_ncu(write(tmp_path, data), strict=strict)
    assert repr(name) in str(exc.value) and f"columns {a} and {b}" in str(exc.value)


# --------------------------------------------------------------------------------------
# .ncu-rep: cut and damaged reports
# --------------------------------------------------------------------------------------
def test_layout_walk_of_whole_reports_matches_the_reader():
    if not reps():
        pytest.skip("shared .ncu-rep samples not available")
    from ridgeline.parsers.ncu.rep_layout import walk

    for p in reps():
        layout = walk(p)
        assert layout.problem is None and layout.end == layout.size == p.stat().st_size, (p.name, layout)
        if importlib.util.find_spec("ncu_report") is not None:
            import ncu_report

            r = ncu_report.load_report(str(p))
            assert layout.results == sum(r.range_by_idx(i).num_actions() for i in range(r.num_ranges())), p.name


@needs_reader
@pytest.mark.parametrize("frac", [0.05, 0.3, 0.5, 0.8, 0.999])
def test_cut_report_is_never_read_as_whole(tmp_path, frac):
    from ridgeline.parsers.ncu.rep import read_ncu_rep
    from ridgeline.parsers.ncu.rep_layout import walk

    if not reps():
        pytest.skip("shared .ncu-rep samples not available")
    for p in reps():
        data = p.read_bytes()
        whole = walk(p).results
        cut = write(tmp_path, data[: int(len(data) * frac)], "cut.ncu-rep")
        with pytest.raises(InputError) as exc:
            read_ncu_rep(cut)
        assert "truncated or corrupt" in str(exc.value) and "\n" not in str(exc.value), p.name
        try:
            res, _rules = read_ncu_rep(cut, strict=False)
        except InputError as err:  # nothing readable before the cut
            assert "truncated or corrupt" in str(err)
            continue
        layout = walk(cut)
        assert res.kernels.height == layout.results < whole, (p.name, frac)
        assert any(s.item == "file" and "cut or damaged" in s.reason for s in res.skipped), p.name
        assert any("damaged report" in n for n in res.notes)


@needs_reader
def test_cut_between_blocks_is_the_one_cut_the_layout_cannot_see(tmp_path):
    """Documented limit (docs/ncu-damaged.md): a cut exactly at a block boundary leaves a well-formed
    shorter report; the walk finds it whole and the reader agrees on its launches."""
    from ridgeline.parsers.ncu.rep import read_ncu_rep
    from ridgeline.parsers.ncu.rep_layout import _header_fields, walk

    import struct

    p = next((q for q in reps() if walk(q).results >= 3), None)
    if p is None:
        pytest.skip("shared .ncu-rep samples not available")
    data = p.read_bytes()
    pos, ends, first = 4, [], True
    while pos < len(data):
        (n,) = struct.unpack_from("<I", data, pos)
        size = 0 if first else _header_fields(data[pos + 4: pos + 4 + n]).get(5, 0)
        first = False
        pos += 4 + n + size
        ends.append(pos)
    cut = write(tmp_path, data[: ends[len(ends) // 2]], "cut.ncu-rep")
    layout = walk(cut)
    assert layout.problem is None
    res, _ = read_ncu_rep(cut)
    assert res.kernels.height + len(res.skipped) == layout.results


# --------------------------------------------------------------------------------------
# the CLI: one line, exit 2
# --------------------------------------------------------------------------------------
def test_cli_bad_value_is_one_line_exit_2(tmp_path, capsys):
    from ridgeline.cli import main

    data, line, _ = D.set_cell(RAW.read_bytes(), "dram__bytes.sum", "-1")
    path = write(tmp_path, data)
    with pytest.raises(SystemExit) as exc:
        main(["analyze", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and f":{line}:" in err[0] and "dram__bytes.sum" in err[0]


# --------------------------------------------------------------------------------------
# one metric printed twice for one launch (details page)
# --------------------------------------------------------------------------------------
def test_metric_printed_twice_with_one_value_is_read_once(tmp_path):
    good = read_ncu(DETAILS)
    data, _a, _b, _lid = D.dup_metric_row(DETAILS.read_bytes(), "dram__bytes_read.sum")
    res = read_ncu(write(tmp_path, data))
    assert res.kernels.drop("source").equals(good.kernels.drop("source"))


def test_metric_printed_twice_with_other_values(tmp_path):
    good = read_ncu(DETAILS)
    data, a, b, lid = D.dup_metric_row(DETAILS.read_bytes(), "dram__bytes_read.sum", "1")
    path = write(tmp_path, data)
    with pytest.raises(InputError) as exc:
        read_ncu(path)
    assert f"{path}:{b}:" in str(exc.value) and f"lines {a} and {b}" in str(exc.value)
    assert "dram__bytes_read.sum" in str(exc.value)
    res = read_ncu(path, strict=False)
    assert res.kernels.height == good.kernels.height - 1 and lid not in res.kernels.get_column("id").to_list()
    assert any(s.item == f"line {b}" and "twice with different values" in s.reason for s in res.skipped)
