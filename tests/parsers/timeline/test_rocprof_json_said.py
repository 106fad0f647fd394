"""AMD profiler JSON is said for what it is, never read as an empty PyTorch trace (issue 32 item 4:
a rocprof v1 --hip-trace JSON with 1,963 kernels was "0 timeline records ... Findings: none", exit 0).

The files are generated here in each layout rocprof writes (object or array form, events with or
without the metadata rows first, ``.json`` or gzip); a PyTorch trace that happens to carry the
same arg names is still read as one."""

from __future__ import annotations

import contextlib
import gzip
import io
import json

import pytest

from ridgeline.parsers.timeline.reader import detect_timeline_format


def _dispatch(i: int) -> dict:
    begin = 769537350099688 + 1000 * i
    return {"ph": "X", "name": f"kernel_{i}.kd", "pid": 8, "tid": 2375942, "ts": str(begin // 1000), "dur": "7",
            "args": {"KernelName": f"kernel_{i}.kd", "gpu-id": "2", "queue-id": "0", "grd": "256", "wgr": "256",
                     "DispatchNs": str(begin - 100), "BeginNs": str(begin), "EndNs": str(begin + 7600),
                     "CompleteNs": str(begin + 9000), "DurationNs": "7600"}}


def _meta() -> list[dict]:
    return [{"args": {"name": "GPU0"}, "ph": "M", "pid": 6, "name": "process_name", "sort_index": 1}]


def _run(*args) -> tuple[int, str]:
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return code, err.getvalue()


@pytest.mark.parametrize("layout", ["object", "object-meta-first", "array"])
@pytest.mark.parametrize("gz", [False, True])
def test_a_rocprof_hip_trace_is_refused_saying_what_it_is(tmp_path, layout, gz):
    events = (_meta() if layout == "object-meta-first" else []) + [_dispatch(i) for i in range(50)]
    doc = events if layout == "array" else {"traceEvents": events, "otherData": {}}
    data = json.dumps(doc).encode()
    path = tmp_path / ("results.json.gz" if gz else "results.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    if not gz:
        assert detect_timeline_format(path) is None  # not offered to the PyTorch reader at all
    code, err = _run("analyze", path)
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and path.name in lines[0], err
    assert "rocprof --hip-trace JSON" in lines[0] and "does not read rocprof output yet" in lines[0]


@pytest.mark.parametrize("gz", [False, True])
def test_a_rocprofiler_sdk_json_is_refused_saying_what_it_is(tmp_path, gz):
    data = json.dumps({"rocprofiler-sdk-tool": [{"metadata": {"pid": 1}, "agents": [], "buffer_records": {}}]}).encode()
    path = tmp_path / ("run_results.json.gz" if gz else "run_results.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    code, err = _run("analyze", path)
    assert code == 2, err
    line = err.strip()
    assert "\n" not in line and path.name in line and "rocprofiler-sdk JSON" in line, err


def test_a_pytorch_trace_with_the_same_arg_names_is_still_read(tmp_path):
    """The PyTorch profiler's categories decide: rocprof's arg names in a Kineto event change nothing."""
    k = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.0, "dur": 2.0,
         "args": {"device": 0, "stream": 7, "correlation": 1, "BeginNs": "1", "EndNs": "2", "DispatchNs": "0"}}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": [k], "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}]}))
    assert detect_timeline_format(path) == "kineto"
    code, err = _run("analyze", path)
    assert code in (0, 1), err
