"""The Kineto reader's fast path (ridgeline.parsers.timeline.kineto_fast) against the standard one.

The contract: for the same bytes the fast decoder returns exactly the frames and counts of the
standard library path (``kineto._kineto_frames`` over ``json.loads``), or None, and then the
standard path reads the file. Checked on every Kineto trace the project has (fixtures and the real
samples), on each damaged variant of tests/timeline_damage.py, and on generated traces with the
values that need a look (long decimal timestamps kept as text, text ids, null args, context rows
only); and the fast path must actually be taken on clean real traces (else the speed is gone and
nothing else would say so).
"""

from __future__ import annotations

import json

import pytest
from polars.testing import assert_frame_equal

from ridgeline.parsers.timeline import kineto, kineto_events, kineto_fast
from tests.timeline_damage import KINETO_DAMAGES, _raw, kineto_seeds, set_field

SEEDS = kineto_seeds()


def _standard(data: bytes, host_calls: str):
    doc = json.loads(kineto.quote_long_ts(data))
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    return kineto._kineto_frames(events, host_calls)


def _same(fast, slow):
    for a, b in zip(fast[:3], slow[:3]):
        assert (a is None) == (b is None)
        if a is not None:
            assert_frame_equal(a, b)
    assert fast[3] == slow[3]


def _check(data: bytes, host_calls: str):
    """The fast result (or None) after checking it against the standard one. The fast path reads the
    text as written (long ``ts`` values kept as text by _times); with them quoted first, as the
    standard path reads them, it gives the same frames."""
    fast = kineto_fast.decode_document(data, host_calls)
    if fast is not None:
        _same(fast[1:], _standard(data, host_calls))
        quoted = kineto_fast.decode_document(kineto.quote_long_ts(data), host_calls)
        assert quoted is not None
        _same(quoted[1:], fast[1:])
        meta = json.loads(kineto.quote_long_ts(data))
        for key in ("deviceProperties", "distributedInfo"):
            assert fast[0][key] == meta.get(key)
    return fast


@pytest.mark.parametrize("host_calls", ["all", "sync"])
@pytest.mark.parametrize("seed", SEEDS, ids=[p.name for p in SEEDS])
def test_same_frames_as_the_standard_path_and_taken_on_clean_traces(seed, host_calls):
    data = _raw(seed)
    fast = _check(data, host_calls)
    legacy = data.lstrip().startswith(b"[")
    assert (fast is None) == legacy, "the fast path declined a clean Kineto trace" if fast is None else "legacy read fast"


@pytest.mark.parametrize("seed", SEEDS, ids=[p.name for p in SEEDS])
def test_chunks_match_the_standard_path(seed):
    """The chunked reader's unit: one array of events, with the index of its first event."""
    doc = json.loads(_raw(seed))
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    part = json.dumps(events[len(events) // 3: len(events) // 3 + 500]).encode()
    fast = kineto_fast.decode_events(part, "sync", 1234)
    slow = kineto._kineto_frames(json.loads(part), "sync", 1234)
    if fast is not None:
        _same(fast, slow)
        if fast[0] is not None:
            assert fast[0]["_row"].min() >= 1234


@pytest.mark.parametrize("damage", [k for k in KINETO_DAMAGES if k not in ("cut-gz-half",)])
def test_damaged_traces_are_declined_or_read_the_same(damage, tmp_path):
    """A value the standard path names while reading (kineto._event_problem) is never read fast;
    whatever the fast path does read (damage found later, by check_records: a negative duration, a
    time near 2^63 ns) equals the standard path's reading, so the later checks see the same rows."""
    seen = 0
    for seed in SEEDS:
        out = KINETO_DAMAGES[damage](seed, tmp_path / f"{seed.stem}.{damage}.json")
        if out is None:
            continue
        data = _raw(out)
        try:
            json.loads(kineto.quote_long_ts(data))
        except (ValueError, RecursionError):  # not JSON: the fast path must not read it either
            assert kineto_fast.decode_document(data, "all") is None
            seen += 1
            continue
        fast = _check(data, "all")
        if damage in ("ts-null", "ts-text", "grid-huge") or damage.startswith("device-"):  # what _event_problem names
            assert fast is None, f"{damage} read fast from {seed.name}"
        seen += 1
    if not seen:
        pytest.skip("no seed this damage applies to")


def _event(ts, **kw):
    e = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts, "dur": 2.5,
         "args": {"device": 0, "stream": 7, "correlation": 1, "grid": [1, 2, 3], "block": [4, 5, 6]}}
    e.update(kw)
    return e


def _doc(events) -> bytes:
    return json.dumps({"traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}]}).encode()


@pytest.mark.parametrize("host_calls", ["all", "sync"])
def test_generated_values_that_need_a_look(host_calls):
    epoch = "1683564901565486.123"  # epoch microseconds with nanosecond decimals: kept as text
    events = [
        _event(float(epoch)),
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 9, "ts": 10.0, "dur": 1,
         "args": {"correlation": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 1, "tid": "9", "ts": 11, "dur": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": "host", "tid": "12", "ts": 9, "dur": 3, "args": None},
        {"ph": "X", "cat": "python_function", "name": None, "pid": 1, "tid": 1, "ts": 8, "dur": 1},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 7, "dur": 9},
        {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 1, "pid": 1, "tid": 1, "ts": 10},
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 12, "dur": 1,
         "args": {"device": 0, "bytes": 4096}},
        {"ph": "X", "cat": "kernel", "name": "k2", "pid": 3, "tid": 7, "ts": 13, "dur": 1},  # device from pid
        {"ph": "X", "cat": "kernel", "name": "k3", "pid": 10**6, "tid": 7, "ts": 14, "dur": 1},  # pid no GPU index
        {"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "GPU 0"}},
    ]
    text = _doc(events).replace(f"{float(epoch)!r}".encode(), epoch.encode())
    assert epoch.encode() in text
    fast = _check(text, host_calls)
    assert fast is not None
    gpu = fast[1]
    assert gpu.filter(gpu["name"] == "k")["ts_text"].to_list() == [epoch]  # exact to the nanosecond, as text
    assert gpu.filter(gpu["name"] == "k2")["device"].to_list() == [3]
    assert gpu.filter(gpu["name"] == "k3")["device"].to_list() == [None]
    assert fast[4]["hip"] == 1 and fast[4]["runtime"] == 2


@pytest.mark.parametrize("host_calls", ["all", "sync"])
@pytest.mark.parametrize("stream", ["0x0", "7", "", 7, None])
@pytest.mark.parametrize("nbytes", ["128", "0x80", "", 128, None])
def test_text_stream_and_bytes_of_host_calls_are_read_fast(stream, nbytes, host_calls):
    """ROCm builds of the profiler write ``"stream": "0x0"`` and ``"bytes": "128"`` as text in the
    args of hipMemcpy* host calls: the host rows never read them, so the trace stays on the fast path
    (and equals the standard one); the same text on a GPU event sends it to the standard path."""
    call = {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 1, "tid": 9, "ts": 10.0, "dur": 1,
            "args": {"correlation": 1, "stream": stream, "bytes": nbytes, "size": "2560", "kind": "1"}}
    fast = _check(_doc([_event(12.0), call]), host_calls)
    assert fast is not None
    assert fast[4]["hip"] == 1
    texty = isinstance(stream, str) or isinstance(nbytes, str)
    gpu = _event(12.0)
    gpu["args"] = {**gpu["args"], "stream": stream, "bytes": nbytes}
    assert (_check(_doc([gpu, call]), host_calls) is None) == texty
    # and the standard path reads a whole number written as text as that number
    g, h, _launch, _stats = _standard(_doc([gpu, call]), host_calls)
    assert h["_problem"].null_count() == h.height  # a host call is never damaged by args it never reads
    want = {"0x0": 0, "7": 7, "128": 128, "0x80": 128, 7: 7, 128: 128}
    # empty text is no copy size: the GPU copy is named as damaged (a stream is never checked)
    assert g["_problem"].to_list() == (["bytes is ''"] if nbytes == "" else [None])
    assert g["stream"].to_list() == [want.get(stream)]
    if nbytes != "":
        assert g["bytes"].to_list() == [want.get(nbytes)]


@pytest.mark.parametrize("spelling", [
    b'"ts": 1683564901565486.123', b'"ts":1683564901565486.123', b'"ts" :\n 1683564901565486.123',
    b'"ts": 1683564901565486', b'"ts": 1683564901565486.123e0', b'"ts": 8683564901565.5', b'"ts": 7683564901565.5',
    b'"ts": -1683564901565486.123', b'"ts": "1683564901565486.123"', b'"ts": "1365627862757.064"', b'"ts": 1.5E3',
    b'"ts": "\\u0031683564901565486.123"', b'"ts": "12.5"', b'"ts": true', b'"ts": null',
])
def test_every_spelling_of_a_time_is_declined_or_read_the_same(spelling):
    """The fast path reads ``ts`` as written (a long decimal kept as text, exact): the same frames
    as the standard path, which quotes those values before parsing, whatever the JSON spacing."""
    text = _doc([_event(5.0), _event(6.0)]).replace(b'"ts": 5.0', spelling)
    assert spelling in text
    for host_calls in ("all", "sync"):
        fast = _check(text, host_calls)
        if spelling in (b'"ts": 1683564901565486.123', b'"ts" :\n 1683564901565486.123', b'"ts": 8683564901565.5'):
            assert fast is not None and fast[1]["ts_text"].to_list()[0] == spelling.split()[-1].decode().lstrip(":")


def test_a_chunk_of_context_rows_only_keeps_the_host_schema():
    events = [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": float(i), "dur": 0.5}
              for i in range(5)]
    g, h, launch, stats = kineto_fast.decode_events(json.dumps(events).encode(), "sync", 0)
    assert g is None and launch is None and stats["host"] == 5
    assert list(h.columns) == list(kineto_events._kineto_schemas()[1])
    _same((g, h, launch, stats), kineto._kineto_frames(events, "sync"))


@pytest.mark.parametrize("bad", [
    {"ts": None}, {"ts": "soon"}, {"dur": None}, {"args": {"device": "cuda:0"}}, {"args": {"device": -1}},
    {"args": {"grid": [1, 2]}}, {"args": {"stream": 1.5}}, {"name": 5}, {"cat": ["kernel"]},
])
def test_what_the_standard_path_names_is_never_read_fast(bad):
    e = _event(1.0)
    e.update(bad)
    assert kineto_fast.decode_document(_doc([e, _event(2.0)]), "all") is None


_VALUES = [None, True, False, -1, 0, 7, 1.5, -2.5, 2**63 - 1, 2**63, 2**64, 1e308, "x", "123", "cuda:0",
           "1683564901565486.123", "1683564901565486", [1, 2, 3], [1, 2], [2**40, 1, 1], {}, {"a": 1}]
_KEYS = ["ph", "cat", "name", "ts", "dur", "pid", "tid", "args", "args.device", "args.stream", "args.correlation",
         "args.grid", "args.block", "args.bytes"]


@pytest.mark.parametrize("seed", range(40))
def test_random_values_are_declined_or_read_the_same(seed):
    """Seeded random damage (any key of the schema set to any JSON type, one to three events of
    the fixture trace): the fast path reads exactly what the standard path reads, or declines."""
    import random

    rng = random.Random(seed)
    doc = json.loads(_raw(kineto_seeds()[0]))
    events = doc["traceEvents"]
    for _ in range(rng.randint(1, 3)):
        set_field(rng.choice(events), rng.choice(_KEYS), rng.choice(_VALUES))
    text = json.dumps(doc).encode().replace(b'"1683564901565486.123"', b"1683564901565486.123", 1) \
        if rng.random() < 0.3 else json.dumps(doc).encode()
    for host_calls in ("all", "sync"):
        _check(text, host_calls)


def test_nanosecond_times_read_in_chunks_equal_the_standard_path(tmp_path, monkeypatch):
    """Epoch microseconds with nanosecond decimals (PyTorch 2.x): the first chunk finds a float past
    LONG_TS_MIN and is decoded again as written; the next chunks start that way (hint). Chunked, the
    tables equal those of the standard path (fast path off), to the nanosecond."""
    from polars.testing import assert_frame_equal

    base = 1_683_564_901_565_486
    events = []
    for i in range(8000):  # past the reader's first 1 MiB read, so that several chunks follow it
        ts = f"{base + 10 * i}.{i % 1000:03d}"
        events.append(f'{{"ph": "X", "cat": "kernel", "name": "k{i % 3}", "pid": 0, "tid": 7, "ts": {ts}, "dur": 1.5, '
                      f'"args": {{"device": 0, "stream": 7, "correlation": {i}}}}}')
        events.append(f'{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, '
                      f'"ts": {base + 10 * i - 3}.25, "dur": 2, "args": {{"correlation": {i}}}}}')
    path = tmp_path / "ns.json"
    path.write_text('{"traceEvents": [' + ",\n".join(events) + "]}")
    seen = []
    original = kineto_fast.decode_events

    def spy(data, host_calls, base=0, hint=None):
        seen.append(bool(hint and hint.get("raw")))
        return original(data, host_calls, base, hint)

    monkeypatch.setattr(kineto_fast, "decode_events", spy)
    fast = kineto.read_kineto(path, stream_min_bytes=0, chunk_bytes=1 << 16)
    assert len(seen) > 5 and seen[0] is False and all(seen[1:])  # the hint carried from the first chunk on
    monkeypatch.setattr(kineto_fast, "decode_events", lambda *a, **k: None)
    slow = kineto.read_kineto(path, stream_min_bytes=0, chunk_bytes=1 << 16)
    assert_frame_equal(fast.activities, slow.activities)
    assert_frame_equal(fast.api, slow.api)
    assert fast.activities["start_ns"].to_list()[:2] == [base * 1000, (base + 10) * 1000 + 1]  # exact ns


def test_numbers_below_the_long_threshold_are_not_decoded_twice():
    calls = []
    decoders = dict(kineto_fast._EVENTS)

    class Count:
        def __init__(self, raw):
            self.raw = raw

        def decode(self, data):
            calls.append(self.raw)
            return decoders[self.raw].decode(data)

    events = json.dumps([_event(1365627862757.064), _event(1683564901565486)]).encode()  # a short decimal, an int
    try:
        kineto_fast._EVENTS = {False: Count(False), True: Count(True)}
        got = kineto_fast.decode_events(events, "all")
    finally:
        kineto_fast._EVENTS = decoders
    assert got is not None and calls == [False]
    assert got[0]["ts_text"].to_list() == [None, None]
