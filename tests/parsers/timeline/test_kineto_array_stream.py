"""The Trace Event array form (``[{event}, ...]``, no object around the events) is streamed a chunk
of events at a time like the ``traceEvents`` array (issue 35, class 6): parsed whole it held every
event as a Python object (5 million events: gigabytes). The streamed tables are the whole parse's."""

from __future__ import annotations

import json

import pytest

from ridgeline.parsers.timeline.kineto import read_kineto


def _events(n: int) -> list[dict]:
    out = []
    for i in range(n):
        out.append({"ph": "X", "cat": "kernel", "name": f"void gemm<{i % 7}>()", "pid": 0, "tid": 7,
                    "ts": 1_700_000_000_000.5 + 10 * i, "dur": 3.25, "args": {"device": 0, "stream": 7,
                    "correlation": i + 1, "grid": [i % 5 + 1, 1, 1], "block": [128, 1, 1]}})
        out.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                    "ts": 1_700_000_000_000.5 + 10 * i - 3, "dur": 2.0, "args": {"correlation": i + 1}})
        if i % 50 == 0:
            out.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                        "ts": 1_700_000_000_000.5 + 10 * i - 5, "dur": 4.0, "args": {}})
    return out


def _frames(t):
    return [x.sort(x.columns) if x is not None else None for x in (t.activities, t.api)]


@pytest.mark.parametrize("layout", ["compact", "pretty", "bom"])
def test_the_array_form_streams_to_the_tables_of_the_whole_parse(tmp_path, layout):
    events = _events(1_500)
    text = json.dumps(events, indent=1 if layout == "pretty" else None)
    path = tmp_path / "trace.json"
    path.write_bytes((b"\xef\xbb\xbf" if layout == "bom" else b"") + text.encode())
    whole = read_kineto(path, host_calls="sync", stream_min_bytes=1 << 40)
    streamed = read_kineto(path, host_calls="sync", stream_min_bytes=1, chunk_bytes=4096)
    for a, b in zip(_frames(whole), _frames(streamed)):
        assert (a is None) == (b is None) and (a is None or a.equals(b))
    assert streamed.activities.height == 1_500 and streamed.host_calls_total == whole.host_calls_total


def test_an_array_without_its_end_still_reads_whole(tmp_path):
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(_events(500))[:-1] + ",")  # the optional ']' left out
    t = read_kineto(path, host_calls="sync", stream_min_bytes=1, chunk_bytes=4096)
    assert t.activities.height == 500


def test_the_stream_holds_one_chunk_of_python_objects(tmp_path, monkeypatch):
    """Each chunk is decoded alone: no decode ever sees more than about a chunk of text."""
    from ridgeline.parsers.timeline import kineto

    seen = []
    real = kineto._decode_events

    def spy(data, *a, **k):
        seen.append(len(data))
        return real(data, *a, **k)

    monkeypatch.setattr(kineto, "_decode_events", spy)
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(_events(3_000)))
    read_kineto(path, host_calls="sync", stream_min_bytes=1, chunk_bytes=16_384)
    assert len(seen) > 10 and max(seen) < 3 * 16_384
