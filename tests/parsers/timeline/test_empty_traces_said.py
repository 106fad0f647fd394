"""A timeline file that yields no GPU record is said for what it holds (issue 32 item 4): an MTIA
trace and CUPTI range-profiler counters are refused in one line naming what they are (both were
read as empty PyTorch traces and told to "profile with ProfilerActivity.CUDA"); an empty capture,
a host-only trace, a trace with runtime calls but no GPU activity and an nsys export without GPU
rows are read, and a note says what they hold and what to do
(:mod:`ridgeline.parsers.timeline.holdings`). The traces are generated here, shaped as Kineto
writes them (categories from libkineto's ActivityType names; the range profiler's events carry
one arg per metric, ``CuptiRangeProfiler.cpp``)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json

import pytest

from ridgeline.parsers.timeline.holdings import judge, scan_categories
from ridgeline.parsers.timeline.reader import read_timeline


def _x(cat, name, ts, dur=5, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}


def _host(n=3):
    return [_x("cpu_op", "aten::mm", 10 * i) for i in range(n)] + [_x("python_function", "forward", 0, 50)]


def _mtia():
    return _host() + [_x("mtia_runtime", "mtiaLaunchKernel", 10 * i) for i in range(4)] + \
        [_x("mtia_ccp_events", f"fused_op_{i}", 10 * i + 3, 4, device=0, stream=1) for i in range(4)]


def _range_profiler():
    metrics = {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 1.0e6, "sm__inst_executed_pipe_tensor.sum": 0}
    return _host() + [{"ph": "X", "cat": "cuda_profiler_range", "name": f"void gemm_kernel<{i}>()", "pid": 0,
                       "tid": 0, "ts": 100 * i, "dur": 100, "args": dict(metrics)} for i in range(5)]


def _runtime_only():
    return _host() + [_x("cuda_runtime", "cudaLaunchKernel", 10 * i, correlation=i) for i in range(6)]


def _write(tmp_path, events, name="t.json", gz=False):
    doc = json.dumps({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}],
                      "traceEvents": events}).encode()
    p = tmp_path / (name + (".gz" if gz else ""))
    p.write_bytes(gzip.compress(doc) if gz else doc)
    return p


def _run(*args):
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("events,said,advice", [
    (_mtia, "trace of MTIA", "4 mtia_ccp_events"),
    (_range_profiler, "5 CUPTI range-profiler range(s)", "without experimental_config's profiler_metrics"),
])
@pytest.mark.parametrize("gz", [False, True])
def test_a_foreign_trace_is_refused_for_what_it_is(tmp_path, events, said, advice, gz):
    p = _write(tmp_path, events(), gz=gz)
    code, out, err = _run("analyze", p)
    assert code == 2 and not out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and p.name in lines[0] and said in lines[0] and advice in lines[0], err
    assert "ProfilerActivity.CUDA to record" not in err


@pytest.mark.parametrize("events,kind,said", [
    (lambda: [], "empty", "holds no trace events at all"),
    (_host, "host-only", "4 event(s), none of them GPU activity (3 cpu_op, 1 python_function): host-side work only"),
    (_runtime_only, "runtime-only", "6 GPU runtime/driver call(s) but no kernel, copy or memset record"),
])
def test_a_trace_without_gpu_records_is_read_and_said(tmp_path, events, kind, said):
    p = _write(tmp_path, events())
    t = read_timeline(p)
    assert t.activities.height == 0
    (note,) = [n for n in t.notes if "nothing analysed" in n]
    assert note.startswith(f"{p}: nothing analysed on the GPU: ") and said in note, note
    advice = {"empty": "schedule's active steps", "host-only": "profile with ProfilerActivity.CUDA",
              "runtime-only": "CUPTI errors"}[kind]
    assert advice in note
    code, out, _err = _run("analyze", p)
    assert code == 0 and "nothing analysed on the GPU" in out


def test_an_nsys_export_without_gpu_rows_says_what_it_holds(tmp_path):
    import sqlite3

    from comm_traces import nsys_rank_export

    p = nsys_rank_export(tmp_path / "cpu.sqlite", [])
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE OSRT_API (start INTEGER, end INTEGER, nameId INTEGER, globalTid INTEGER)")
    con.executemany("INSERT INTO OSRT_API VALUES (?, ?, 1, 1)", [(i, i + 5) for i in range(7)])
    con.commit()
    con.close()
    (note,) = [n for n in read_timeline(p).notes if "nothing analysed" in n]
    assert "7 OSRT_API" in note and "nsys profile -t cuda" in note, note


def test_judge_decides_from_the_counts_alone():
    assert judge({"mtia_ccp_events": 10, "cpu_op": 99}).refuse
    assert judge({"hpu_op": 3}).what.startswith("this is a trace of Intel Gaudi")
    assert judge({"cuda_profiler_range": 2, "cpu_op": 9}).kind == "range-profiler"
    assert judge({"cpu_op": 5}, skipped=5).kind == "damaged"
    assert judge({}, events=0).kind == "empty"
    assert judge({"cuda_runtime": 2}, tool="nsys").advice.startswith("the device side was not recorded: trace CUDA")
    assert not judge({"cpu_op": 1, "cuda_runtime": 1}).refuse


def test_category_scan_counts_across_piece_boundaries(monkeypatch, tmp_path):
    """The scan reads in pieces: a category cut by a boundary is counted once, whatever the size."""
    from ridgeline.parsers.timeline import holdings

    events = [_x("cpu_op", "a", i) for i in range(300)] + [_x("mtia_ccp_events", "k", i) for i in range(200)]
    data = json.dumps({"traceEvents": events}).encode()
    for chunk in (97, 301, 4096, 1 << 20):
        monkeypatch.setattr(holdings, "_SCAN_CHUNK", chunk)
        got = scan_categories(lambda: io.BytesIO(data))
        assert got == {"cpu_op": 300, "mtia_ccp_events": 200}, chunk


@pytest.mark.parametrize("header", [
    "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),Bytes (MB),"
    "Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name",
    "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
])
def test_an_nsys_stats_csv_with_a_header_only_is_said(tmp_path, header):
    p = tmp_path / "report.csv"
    p.write_text(header + "\n")
    (note,) = [n for n in read_timeline(p).notes if "nothing analysed" in n]
    assert "holds no data rows at all" in note, note
