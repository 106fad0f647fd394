"""--lenient on telemetry (issue 14, items 1-3): a bad cell is an error naming FILE:LINE and the
column by default, and with --lenient it is read as missing (or its row skipped where the row
means nothing without it), listed with its line; the other rows' windows are those of the file
without the bad line. A Parquet store with a corrupt file reads the good ones.

Every input here is written by the test itself (small synthetic captures; no GPU).
"""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.cli import main
from ridgeline.errors import InputError, RidgelineError
from ridgeline.pipeline import reduce_telemetry

START = "2026-01-05T08:00:00Z"


def run_cli(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return exc.value.code, out, err


def windows(path, **kw):
    import datetime as dt

    _lf, _inputs, skipped, w = reduce_telemetry([str(path)], window="all", notes=[], interval_s=1.0,
                                                start=dt.datetime(2026, 1, 5, 8, tzinfo=dt.timezone.utc), **kw)
    return w.sort("host", "gpu"), skipped


def dmon(rows):
    head = "#Entity   GPUTL  TENSO\nID\n"
    return head + "".join(f"GPU {g}     {u:<6} {t}\n" for g, u, t in rows)


def smi(rows):
    head = "timestamp, index, utilization.gpu [%], power.draw [W]\n"
    return head + "".join(f"2026/01/05 08:00:{s:02d}.000, {g}, {u}, {w}\n" for s, g, u, w in rows)


def exporter(rows):
    return "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n" + "".join(
        f'DCGM_FI_DEV_GPU_UTIL{{gpu="{g}",Hostname="n1"}} {u} {ts}\n' for g, u, ts in rows)


def long_csv(rows):
    return "timestamp,host,gpu,field,value\n" + "".join(f"{t},n1,{g},gpu_util_ratio,{v}\n" for t, g, v in rows)


def smi_dmon(rows):
    return "# gpu    pwr     sm\n# Idx      W      %\n" + "".join(f"    {g}    {w}    {s}\n" for g, w, s in rows)


def smi_dmon_dt(rows):
    """``nvidia-smi dmon -o DT``: date and time columns first."""
    return ("#Date       Time        gpu    pwr     sm\n#YYYYMMDD   HH:MM:SS    Idx      W      %\n"
            + "".join(f" {d}   {t}      {g}    {w}    {s}\n" for d, t, g, w, s in rows))


GOOD_DMON = [(0, 50, 0.5), (1, 60, 0.4)] * 3
GOOD_SMI = [(s, g, f"{40 + s} %", f"{100 + s} W") for s in range(4) for g in (0, 1)]
GOOD_EXP = [(g, 30 + k, 1767600000000 + 15000 * k) for k in range(4) for g in (0, 1)]
GOOD_LONG = [(f"2026-01-05T08:00:{s:02d}Z", g, 0.5 + s / 100) for s in range(4) for g in (0, 1)]
GOOD_SMI_DMON = [(g, 100 + k, 40 + k) for k in range(3) for g in (0, 1)]
GOOD_SMI_DMON_DT = [("20260105", f"08:00:0{k}", g, 100 + k, 40 + k) for k in range(3) for g in (0, 1)]

# (name, text with the bad item, text the lenient read must equal, bad line, column named,
#  strict message part); "equal" text: the bad cell blank (cell) or the bad line gone (row)
CASES = [
    ("dmon-cell.dmon", dmon(GOOD_DMON[:2] + [(0, "abc", 0.5)] + GOOD_DMON[3:]),
     dmon(GOOD_DMON[:2] + [(0, "N/A", 0.5)] + GOOD_DMON[3:]), 5, "GPUTL", "expected a number or N/A"),
    ("smi-cell.csv", smi(GOOD_SMI[:3]) + "2026/01/05 08:00:01.000, 1, 1.2.3 %, 101 W\n" + smi(GOOD_SMI[4:]).split("\n", 1)[1],
     smi(GOOD_SMI[:3]) + "2026/01/05 08:00:01.000, 1, [N/A], 101 W\n" + smi(GOOD_SMI[4:]).split("\n", 1)[1],
     5, "utilization.gpu [%]", "expected a number in % or [N/A]"),
    ("smi-gpu.csv", smi(GOOD_SMI[:3]) + "2026/01/05 08:00:01.000, 18446744073709551616, 41 %, 101 W\n"
     + smi(GOOD_SMI[4:]).split("\n", 1)[1],
     smi(GOOD_SMI[:3]) + smi(GOOD_SMI[4:]).split("\n", 1)[1], 5, "index", "expected a GPU index 0..4095"),
    ("smi-time.csv", smi(GOOD_SMI[:3]) + "yesterday, 1, 41 %, 101 W\n" + smi(GOOD_SMI[4:]).split("\n", 1)[1],
     smi(GOOD_SMI[:3]) + smi(GOOD_SMI[4:]).split("\n", 1)[1], 5, None, "expected a timestamp like"),
    ("exp-gpu.prom", exporter(GOOD_EXP[:3]) + 'DCGM_FI_DEV_GPU_UTIL{gpu="-1",Hostname="n1"} 31 1767600015000\n'
     + exporter(GOOD_EXP[3:]).split("\n", 1)[1], exporter(GOOD_EXP), 5, "gpu", "expected a gpu label 0..4095"),
    ("exp-year.prom", exporter(GOOD_EXP[:3]) + 'DCGM_FI_DEV_GPU_UTIL{gpu="1",Hostname="n1"} 31 253402300799000\n'
     + exporter(GOOD_EXP[3:]).split("\n", 1)[1], exporter(GOOD_EXP), 5, None, "expected sample times"),
    ("long-value.csv", long_csv(GOOD_LONG[:2] + [(GOOD_LONG[2][0], 0, "abc")] + GOOD_LONG[3:]),
     long_csv(GOOD_LONG[:2] + [(GOOD_LONG[2][0], 0, "")] + GOOD_LONG[3:]), 4, "value", "expected a number"),
    ("long-gpu.csv", long_csv(GOOD_LONG[:2] + [(GOOD_LONG[2][0], "-1", 0.7)] + GOOD_LONG[2:]),
     long_csv(GOOD_LONG), 4, "gpu", "expected a GPU index 0..4095"),
    ("long-time.csv", long_csv(GOOD_LONG[:2] + [("9999-01-01T00:00:00Z", 0, 0.7)] + GOOD_LONG[2:]),
     long_csv(GOOD_LONG), 4, None, "expected sample times"),
    ("smidmon-cell.txt", smi_dmon(GOOD_SMI_DMON[:2] + [(0, "x1", 41)] + GOOD_SMI_DMON[3:]),
     smi_dmon(GOOD_SMI_DMON[:2] + [(0, "-", 41)] + GOOD_SMI_DMON[3:]), 5, "pwr", "expected a number or -"),
    # -o DT: a date/time that does not parse was a null time without a word; now the row's error
    ("smidmon-time.txt", smi_dmon_dt(GOOD_SMI_DMON_DT[:2] + [("20261305", "08:00:01", 0, 101, 41)] + GOOD_SMI_DMON_DT[3:]),
     smi_dmon_dt(GOOD_SMI_DMON_DT[:2] + GOOD_SMI_DMON_DT[3:]), 5, "date time", "expected a date and time like"),
]


@pytest.mark.parametrize("name,bad,equal,line,column,message", CASES, ids=[c[0] for c in CASES])
def test_strict_refuses_and_lenient_lists(tmp_path, capsys, name, bad, equal, line, column, message):
    path = tmp_path / name
    path.write_text(bad)
    code, _out, err = run_cli(["telemetry", path, "--window", "all", "--start", START], capsys)
    assert code == 2, err
    assert err.count("\n") == 1 and message in err and name in err
    if column is not None:  # the cell's place: FILE:LINE and the column
        assert f"{name}:{line}:" in err and repr(column) in err
    assert "--lenient" in err

    code, out, err = run_cli(["telemetry", path, "--window", "all", "--start", START, "--lenient",
                              "--format", "json"], capsys)
    assert code in (0, 1), err
    doc = json.loads(out)
    listed = [s for s in doc["skipped"] if s["item"] == f"line {line}"]
    assert listed, doc["skipped"]
    assert message.split(" like")[0].split(" between")[0] in listed[0]["reason"] or "expected" in listed[0]["reason"]
    acc = {a["path"]: a for a in doc["accounting"]}[str(path)]
    assert acc["skipped"] >= 1

    (tmp_path / "clean").mkdir()
    clean = tmp_path / "clean" / name  # the same name: hosts come from file names
    clean.write_text(equal)
    got, skipped = windows(path, strict=False)
    want, _ = windows(clean)
    cols = [c for c in want.columns if c not in ("source", "sources")]
    assert got.select(cols).equals(want.select(cols)), (got, want)
    assert any(s.item == f"line {line}" for s in skipped)


def test_strict_python_api_raises(tmp_path):
    path = tmp_path / "dmon-cell.dmon"
    path.write_text(CASES[0][1])
    with pytest.raises(InputError, match="expected a number or N/A"):
        windows(path)


def test_prometheus_json_point_of_the_wrong_shape(tmp_path, capsys):
    def doc(points):
        return {"status": "success", "data": {"resultType": "matrix", "result": [
            {"metric": {"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0", "Hostname": "n1"}, "values": points}]}}

    good = [[1767600000 + 15 * k, str(30 + k)] for k in range(4)]
    path, clean = tmp_path / "bad.json", tmp_path / "clean.json"
    path.write_text(json.dumps(doc(good[:2] + [[1767600000, "1", "extra"]] + good[2:])))
    clean.write_text(json.dumps(doc(good)))
    code, _out, err = run_cli(["telemetry", path, "--window", "all"], capsys)
    assert code == 2 and "point 2" in err and "--lenient" in err
    code, out, err = run_cli(["telemetry", path, "--window", "all", "--lenient", "--format", "json"], capsys)
    assert code in (0, 1), err
    assert any(s["item"] == "answer 0, series 0, point 2" for s in json.loads(out)["skipped"])
    got, _ = windows(path, strict=False)
    want, _ = windows(clean)
    cols = [c for c in want.columns if c not in ("source", "sources")]
    assert got.select(cols).equals(want.select(cols))


def test_strict_and_lenient_together_is_a_usage_error(tmp_path, capsys):
    path = tmp_path / "a.dmon"
    path.write_text(dmon(GOOD_DMON))
    code, _out, err = run_cli(["telemetry", path, "--strict", "--lenient"], capsys)
    assert code == 2 and "exclude each other" in err


def test_analyze_lenient_reaches_telemetry(tmp_path, capsys):
    path = tmp_path / "dmon-cell.dmon"
    path.write_text(CASES[0][1])
    code, _out, err = run_cli(["analyze", path, "--window", "all", "--start", START], capsys)
    assert code == 2 and "GPUTL" in err
    code, out, err = run_cli(["analyze", path, "--window", "all", "--start", START, "--lenient", "--format", "json"],
                             capsys)
    assert code in (0, 1), err
    assert any(s["item"] == "line 5" for s in json.loads(out)["skipped"])


# ------------------------------------------------------------------------------------------
# a Parquet store with a corrupt file (item 3)
# ------------------------------------------------------------------------------------------
def _store(root, hosts, corrupt=None):
    import datetime as dt

    for h in hosts:
        d = root / "date=2026-01-05" / f"host={h}"
        d.mkdir(parents=True)
        t0 = dt.datetime(2026, 1, 5, 8, tzinfo=dt.timezone.utc)
        pl.DataFrame({
            "timestamp": [t0 + dt.timedelta(seconds=s) for s in range(6)],
            "gpu": [0] * 6,
            "DCGM_FI_DEV_GPU_UTIL": [50.0 + s + len(h) for s in range(6)],
        }).write_parquet(d / "part-0.parquet")
    if corrupt:
        d = root / "date=2026-01-05" / f"host={corrupt}"
        d.mkdir(parents=True)
        (d / "part-0.parquet").write_bytes(b"PAR1" + b"\x00garbage" * 50 + b"PAR1")


def test_store_with_a_corrupt_file_reads_the_good_ones(tmp_path, capsys):
    bad, clean = tmp_path / "bad", tmp_path / "clean"
    _store(bad, ["a", "bb"], corrupt="ccc")
    _store(clean, ["a", "bb"])
    got, skipped = windows(bad)
    want, _ = windows(clean)
    assert sorted(got.get_column("host").unique()) == ["a", "bb"]
    cols = [c for c in want.columns if c not in ("source", "sources")]
    assert got.select(cols).equals(want.select(cols))
    assert [s for s in skipped if s.source.endswith("host=ccc/part-0.parquet") and "corrupt" in s.reason]

    code, out, err = run_cli(["telemetry", bad, "--window", "all", "--format", "json"], capsys)
    assert code in (0, 1), err
    assert any("host=ccc" in s["source"] for s in json.loads(out)["skipped"])
    code, _out, err = run_cli(["telemetry", bad, "--window", "all", "--strict"], capsys)
    assert code == 2 and "host=ccc" in err and err.count("\n") == 1
    code, _out, err = run_cli(["analyze", bad, "--window", "all", "--strict"], capsys)
    assert code == 2 and "host=ccc" in err


def test_mixed_folder_keeps_good_text_and_parquet(tmp_path, capsys):
    root = tmp_path / "mixed"
    _store(root / "store", ["a"], corrupt="b")
    (root / "n1.dmon").write_text(dmon(GOOD_DMON))
    (root / "broken.csv").write_text("timestamp,host,gpu,field,value\n2026-01-05T08:00:00Z,n1,0,gpu_util_ratio,abc\n")
    code, out, err = run_cli(["telemetry", root, "--window", "all", "--format", "json", "--start", START], capsys)
    assert code in (0, 1), err
    doc = json.loads(out)
    kinds = sorted(i["kind"] for i in doc["inputs"])
    assert kinds == ["dcgm-dmon", "telemetry-parquet"], doc["inputs"]
    assert any("host=b" in s["source"] for s in doc["skipped"])


# ------------------------------------------------------------------------------------------
# a quick fuzz of the lenient paths: mutated lines, only ridgeline's own errors escape
# ------------------------------------------------------------------------------------------
ODD = ["abc", "-1", "18446744073709551616", "1e400", "nan", "", "²", "1.2.3", "9" * 40, "N/A", ",", "\"", "{", "}"]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(case=st.sampled_from([c[1] for c in CASES]), line=st.integers(0, 12), pos=st.integers(0, 80),
       junk=st.sampled_from(ODD), cut=st.booleans())
def test_lenient_paths_only_raise_ridgeline_errors(tmp_path_factory, case, line, pos, junk, cut):
    lines = case.split("\n")
    i = line % len(lines)
    s = lines[i]
    lines[i] = s[:pos] + junk + (s[pos + len(junk):] if cut else s[pos:])
    folder = tmp_path_factory.mktemp("fz")
    suffix = {"#Entity": ".dmon", "timestamp, index": ".csv", "# TYPE": ".prom", "# gpu": ".txt"}
    path = folder / ("in" + next((v for k, v in suffix.items() if case.startswith(k)), ".csv"))
    path.write_text("\n".join(lines))
    try:
        w, _skipped = windows(path, strict=False)
        assert w is not None
    except RidgelineError:
        pass


@pytest.mark.parametrize("extra, fields", [(",x,y", 7), (None, 4)], ids=["long-row", "short-row"])
def test_a_ragged_csv_row_is_named_and_lenient_skips_it(tmp_path, capsys, extra, fields):
    """A row with more fields than the header was a polars error without a line; one with fewer
    was read with blanks at its end. Both: FILE:LINE by default, skipped and listed with --lenient."""
    good = long_csv(GOOD_LONG)
    lines = good.splitlines()
    row = lines[3] + extra if extra else lines[3].rsplit(",", 1)[0]
    path = tmp_path / "ragged.csv"
    path.write_text("\n".join(lines[:3] + [row] + lines[4:]) + "\n")
    code, _out, err = run_cli(["telemetry", path, "--window", "all"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"ragged.csv:4: expected 5 comma-separated fields, as in the header" in err and f"'{fields} fields'" in err
    assert "--lenient" in err

    got, skipped = windows(path, strict=False)
    (tmp_path / "clean").mkdir()
    clean = tmp_path / "clean" / "ragged.csv"
    clean.write_text("\n".join(lines[:3] + lines[4:]) + "\n")
    want, _ = windows(clean)
    cols = [c for c in want.columns if c not in ("source", "sources")]
    assert got.select(cols).equals(want.select(cols))
    assert [s.item for s in skipped if "comma-separated" in s.reason] == ["line 4"]


def test_blank_last_cells_are_not_ragged_rows(tmp_path):
    """A value left blank ('...,gpu_util_ratio,') has all its fields: read as missing, no row skipped."""
    text = long_csv(GOOD_LONG[:2] + [(GOOD_LONG[2][0], 0, "")] + GOOD_LONG[3:])
    path = tmp_path / "blank.csv"
    path.write_text(text)
    _w, skipped = windows(path)
    assert not any("comma-separated" in s.reason for s in skipped)


def _parquet_cases(tmp_path):
    import datetime as dt

    ts = [dt.datetime(2026, 1, 5, 8, 0, s, tzinfo=dt.timezone.utc) for s in range(4)]
    long = pl.DataFrame({"timestamp": ts * 2, "host": ["n1"] * 8, "gpu": [0] * 4 + [1] * 4,
                         "field": ["gpu_util_ratio"] * 8, "value": [0.5, 0.6, 0.7, 0.8] * 2})
    wide = pl.DataFrame({"timestamp": ts * 2, "host": ["n1"] * 8, "gpu": [0] * 4 + [1] * 4,
                         "DCGM_FI_DEV_GPU_UTIL": [50.0, 60.0, 70.0, 80.0] * 2})
    bad_gpu = long.with_columns(pl.when(pl.int_range(8) == 6).then(-1).otherwise(pl.col("gpu")).alias("gpu"))
    far = pl.datetime(9999, 1, 1, time_zone="UTC")
    bad_time = wide.with_columns(pl.when(pl.int_range(8) == 5).then(far).otherwise(pl.col("timestamp")).alias("timestamp"))
    return [("long-gpu.parquet", bad_gpu, long.filter(pl.int_range(8) != 6), "expected GPU indices 0..4095"),
            ("wide-year.parquet", bad_time, wide.filter(pl.int_range(8) != 5), "expected sample times between")]


@pytest.mark.parametrize("case", [0, 1], ids=["long-gpu-minus-1", "wide-year-9999"])
def test_parquet_values_out_of_range_are_refused_or_skipped(tmp_path, capsys, case):
    """A Parquet store is only read by the reduction: a GPU id of -1 there was reported as a
    corrupt file (a failed cast), a time in year 9999 was read as written (a 2.9-million-day
    window). Now the same checks as for text inputs: exit 2 naming the file, or --lenient."""
    name, bad, clean_frame, message = _parquet_cases(tmp_path)[case]
    path = tmp_path / name
    bad.write_parquet(path)
    code, _out, err = run_cli(["telemetry", path, "--window", "all"], capsys)
    assert code == 2 and err.count("\n") == 1 and message in err and name in err and "corrupt" not in err

    got, skipped = windows(path, strict=False)
    (tmp_path / "clean").mkdir()
    clean = tmp_path / "clean" / name
    clean_frame.write_parquet(clean)
    want, _ = windows(clean)
    cols = [c for c in want.columns if c not in ("source", "sources")]
    assert got.select(cols).equals(want.select(cols))
    assert any(message in s.reason and s.reason.endswith("rows skipped") for s in skipped)


def test_dask_workers_run_the_same_checks(tmp_path):
    """The partition check travels to Dask workers: strict refuses, lenient lists what it left out."""
    pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'ridgeline[dask]')")
    from distributed import Client, LocalCluster

    name, bad, _clean, message = _parquet_cases(tmp_path)[1]
    path = tmp_path / name
    bad.write_parquet(path)
    local, local_skipped = windows(path, strict=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        with pytest.raises(InputError, match=message):
            windows(path, engine="dask", scheduler=client)
        remote, remote_skipped = windows(path, strict=False, engine="dask", scheduler=client)
    assert remote.equals(local)
    assert [s.reason for s in remote_skipped] == [s.reason for s in local_skipped]


def test_an_input_error_on_a_dask_worker_comes_back_without_a_worker_traceback(tmp_path, caplog):
    """distributed logs a task that raises ("Compute Failed" and its traceback, on stderr); the
    partition's input error comes back as its result instead and is raised by the client as the
    usual InputError (one line on the command line)."""
    pytest.importorskip("distributed", reason="dask.distributed not installed (pip install 'ridgeline[dask]')")
    import logging

    from distributed import Client, LocalCluster

    name, bad, _clean, message = _parquet_cases(tmp_path)[0]
    path = tmp_path / name
    bad.write_parquet(path)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client, caplog.at_level(logging.ERROR):
        with pytest.raises(InputError, match=message):
            windows(path, engine="dask", scheduler=client)
    assert not [r for r in caplog.records if "Compute Failed" in r.getMessage()]
