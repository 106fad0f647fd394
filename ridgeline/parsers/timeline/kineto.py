"""PyTorch profiler (Kineto) Chrome traces -> TIMELINE / HOST_API tables (see
:mod:`ridgeline.parsers.timeline.reader` for the formats and their detection).

Both layouts of the Trace Event format are read, plain or gzip-compressed:

* the object form ``{"traceEvents": [...], "deviceProperties": [...], ...}`` (Kineto, PyTorch 1.8+);
* the array form ``[{...}, {...}]`` (the Trace Event format's other layout; its closing ``]`` is
  optional there). PyTorch's legacy autograd profiler (``torch.autograd.profiler.profile(
  use_cuda=True).export_chrome_trace``, 2018-2021) wrote it with no ``cat``: CPU ops under
  ``"pid": "CPU functions"`` and, per operator, the GPU time measured with CUDA events under
  ``"pid": "CUDA functions"`` with the device index as ``tid``. Those GPU rows are read as
  ``kernel`` activities (one per operator, not per kernel: the format has no kernels, streams or
  runtime calls; a note says so).

Host calls: ``cuda_runtime``/``cuda_driver`` events (``Runtime`` in early Kineto) are runtime API
calls; a trace that has none records no host calls (``host_api`` None), so its idle split
cannot single out synchronization.

Decoding: traces of :data:`STREAM_MIN_BYTES` or more are read :data:`STREAM_CHUNK_BYTES` of events
at a time; each chunk (or a smaller trace whole) is decoded by msgspec into typed records
(:mod:`ridgeline.parsers.timeline.kineto_fast`) and, where that schema does not fit or a value is one the
reader names as damage, by the standard library and :func:`_kineto_frames`, which names it. Both
give the same frames (:mod:`ridgeline.parsers.timeline.kineto_events`).

Vendor (``TimelineTables.vendor``): ROCm builds of PyTorch write the same categories
(``kernel``, ``gpu_memcpy``, ``cuda_runtime``) with HIP names (``hipLaunchKernel``,
``hipMemcpyWithStream``) and AMD device properties (names such as ``AMD Instinct MI300X``;
Kineto's roctracer build writes ``maxSharedMemoryPerMultiProcessor`` where the CUPTI build writes
``sharedMemPerMultiprocessor``; ``warpSize`` 64). ``amd`` when the device properties name an AMD GPU or the
runtime calls are ``hip*``; ``nvidia`` when they name an NVIDIA GPU or the calls are
``cuda*``/``cu*``; else None.
"""

from __future__ import annotations

from ridgeline.result import path_label

import gzip
import math
import re
import zlib
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.timeline.kineto_events import (
    _CONTEXT_CATS,
    _GPU_CATS,
    _HOST_CATS,
    _LEGACY_PIDS,
    _RUNTIME_CATS,
    _TS_TEXT,
    OP_ARGS,
    assemble_frames,
    kept_call,
    kept_range,
    op_texts,
    quote_long_ts,
)
from ridgeline.parsers.timeline.common import (
    _COPY_WORDS,
    TimelineTables,
    _dims_and_kinds,
    _empty_activities,
    _finish_activities,
    MAX_DEVICE,
    MAX_TIME_NS,
    _finish_api,
    check_host_calls,
    check_records,
)

# ======================================================================================
# Kineto
# ======================================================================================



def _decode_events(data: bytes, host_calls: str, base: int, hint: dict | None = None):
    """A JSON array of trace events -> (GPU frame, host frame, launch frame, stats): the fast typed
    decoder (:mod:`ridgeline.parsers.timeline.kineto_fast`) where it is sure, else the standard library and
    :func:`_kineto_frames`. ValueError: not JSON (for the chunked reader, a cut in the wrong place)."""
    from ridgeline.parsers.timeline import kineto_fast

    got = kineto_fast.decode_events(data, host_calls, base, hint)  # reads long ts values exactly as written
    if got is not None:
        return got
    events = _loads(data)  # (quotes the long ts values first)
    if not isinstance(events, list):
        raise ValueError("not a JSON array")
    return _kineto_frames(events, host_calls, base)


def _loads(data: bytes):
    """JSON -> Python through the one guarded entry (:func:`ridgeline.parsers.jsontext.loads`): a
    document nested deeper than its limit is a ValueError (``nested too deeply``) like any other
    malformed JSON. Long decimal ``ts`` values come back as strings (:data:`_LONG_TS`), exact to
    the nanosecond.

    The standard path (:func:`_decode_events` tries :mod:`ridgeline.parsers.timeline.kineto_fast` first):
    the standard library's parser on purpose, so the damage checks name what they find in one set
    of words whatever is installed (orjson read an integer past 2^64 as a float and had another
    nesting limit)."""
    from ridgeline.parsers.jsontext import loads  # the one guarded entry (nesting; a lone \ud800: its text)

    return loads(quote_long_ts(data), max_bytes=None, encoding=None)  # the size: MAX_TRACE_BYTES / MAX_WHOLE_PARSE_BYTES


# ======================================================================================
# size limits (gzip bombs; documented in docs/timeline.md)
# ======================================================================================
#: the most JSON text (after decompression) one trace may hold; larger is refused, never read
MAX_TRACE_BYTES = 16 << 30
#: a trace the chunked reader cannot follow (the array form, an odd layout) is parsed whole up to this size
MAX_WHOLE_PARSE_BYTES = 2 << 30
#: a gzip-compressed trace that inflates more than this many times its size (past 64 MiB) is refused:
#: real traces compress 10-20x, a decompression bomb about 1000x
MAX_GZIP_RATIO = 100
GZIP_RATIO_AFTER = 64 << 20


def _gzip_open(path):
    """A gzip trace opened for reading: ISA-L's igzip (the ``isal`` package: inflates about 3x as
    fast as zlib, 10-30 ms of a short trace's run) where installed, else the standard library."""
    try:
        from isal import igzip
    except ImportError:  # an interpreter or platform without its wheels: the same bytes, slower
        return gzip.open(path, "rb")
    return igzip.open(path, "rb")


def _gzip_errors() -> tuple[type[BaseException], ...]:
    """What reading a damaged gzip trace raises, with either inflater."""
    try:
        from isal import isal_zlib
    except ImportError:
        return _READ_ERRORS
    return _READ_ERRORS + (isal_zlib.error,)


_READ_ERRORS = (OSError, EOFError, gzip.BadGzipFile, zlib.error)


class _Bounded:
    """A file object over a trace (gzip or plain) that refuses, with an InputError naming the file,
    to give more than :data:`MAX_TRACE_BYTES` (or ``limit``) or, for gzip, more than
    :data:`MAX_GZIP_RATIO` times the compressed size: decompressed in bounded pieces, so a
    bomb is judged after at most a few hundred MB, never held whole."""

    def __init__(self, path, limit: int | None = None):
        self.path = path
        with open(path, "rb") as fh:
            self.gz = fh.read(2) == b"\x1f\x8b"
        self.size = _file_size(path)
        self.fh = _gzip_open(path) if self.gz else open(path, "rb")
        self.limit = MAX_TRACE_BYTES if limit is None else limit
        self.total = 0

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            parts = []
            while True:
                piece = self.read(1 << 20)
                if not piece:
                    return b"".join(parts)
                parts.append(piece)
        data = self.fh.read(n)
        self.total += len(data)
        self._check()
        return data

    def _check(self):
        if self.total > self.limit:
            what = "after decompression " if self.gz else ""
            raise InputError(self.path, f"expected a trace of at most {self.limit >> 20} MiB of JSON {what}(the limit "
                             "for this layout; see docs/timeline.md)", actual=f"more than {self.total >> 20} MiB")
        if self.gz and self.total > GZIP_RATIO_AFTER and self.total > MAX_GZIP_RATIO * max(self.size, 1):
            raise InputError(self.path, f"expected a gzip trace that inflates at most {MAX_GZIP_RATIO}x (real traces: "
                             "10-20x); this looks like a decompression bomb",
                             actual=f"{self.size} bytes inflating past {self.total >> 20} MiB")

    def seek(self, pos: int):
        self.fh.seek(pos)
        self.total = pos

    def close(self):
        self.fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


STREAM_MIN_BYTES = 4 << 20  # Kineto files from this size (JSON text) are parsed in chunks of events
STREAM_CHUNK_BYTES = 2 << 20  # small pieces: each chunk's records are freed before the next (peak memory), at no cost in time (bench_hta.py)





def _legacy(e) -> str | None:
    pid = e.get("pid")
    return _LEGACY_PIDS.get(pid.lower()) if "cat" not in e and isinstance(pid, str) else None


def new_stats() -> dict[str, int]:
    """Counts kept while reading: host events, runtime/driver calls, hip* calls, legacy GPU rows,
    and the trace events seen so far (``events``: the index of the next chunk's first event)."""
    return {"host": 0, "runtime": 0, "hip": 0, "legacy": 0, "events": 0}


_I64 = 1 << 63


def _collective_columns(gpu, arg) -> dict:
    """The collective args of the GPU events (kineto_events.collective_values), as columns."""
    from ridgeline.parsers.timeline.kineto_events import COLLECTIVE_COLUMNS, collective_values

    keys = ("Process Group Name", "Seq", "In msg nelems", "Out msg nelems", "dtype", "Group size")
    rows = [collective_values(*(arg(e, k) for k in keys)) if "Group size" in (e.get("args") or ()) else (None,) * 4
            for _i, e in gpu]
    return {c: [r[j] for r in rows] for j, c in enumerate(COLLECTIVE_COLUMNS)}


def _int(v):
    """An integer that fits int64 (not a bool), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) and -_I64 <= v < _I64 else None


_WHOLE_TEXT = re.compile(r"\s*(?:[0-9]{1,19}|0[xX][0-9a-fA-F]{1,16})\s*")


def _whole(v):
    """:func:`_int`, or a whole number written as text (``"128"``, ``"0x0"``: ROCm builds of the
    profiler write copy sizes and streams so), else None. A number written as text is a number."""
    if isinstance(v, str) and _WHOLE_TEXT.fullmatch(v):
        return _int(int(v, 0) if v.strip()[:2].lower() == "0x" else int(v))
    return _int(v)


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _event_problem(e, device_arg, *, times_only: bool = False) -> str | None:
    """What makes one GPU (or host) event unusable, checked before the values meet a typed column:
    times that are not finite numbers, an ``args.device`` that is not a GPU index (``"cuda:0"``,
    2^64, -1, true), a copy size (a whole number, or one written as text) or a grid/block that is
    not whole numbers in range. ``times_only``: a host event, whose other args are never read."""
    for key in ("ts", "dur"):
        v = e.get(key)
        if not _num(v) and not (key == "ts" and isinstance(v, str) and _TS_TEXT.fullmatch(v)):
            return f"{key} is {str(v)[:40]!r}" if v is not None else f"no {key}"
    if times_only:
        return None
    if device_arg is not None and not (_int(device_arg) is not None and 0 <= device_arg <= MAX_DEVICE):
        return f"device {str(device_arg)[:40]!r} is not a GPU index (0..{MAX_DEVICE})"
    a = e.get("args")
    if isinstance(a, dict):
        b = a.get("bytes")
        if b is not None and _whole(b) is None:
            return f"bytes is {str(b)[:40]!r}"
        for k in ("grid", "block"):
            v = a.get(k)
            if v is not None and not (isinstance(v, list) and len(v) == 3
                                      and all(_int(x) is not None and 0 <= x < (1 << 32) for x in v)):
                return f"{k} {str(v)[:40]} is not three whole numbers"
    return None


def _kineto_frames(events, host_calls: str, base: int = 0):
    """One batch of trace events -> (GPU frame, host frame, stats); raw columns, ts/dur in us.

    ``base``: the index of the batch's first event in ``traceEvents`` (``_row``, the event a damaged
    record is named by); ``_problem``: :func:`_event_problem`."""
    gpu, host = [], []
    legacy_gpu = 0
    for i, e in enumerate(events, base):
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if not isinstance(cat, str):  # a damaged category (a list, a number) is no category
            cat = None
        if cat in _GPU_CATS:
            gpu.append((i, e))
        elif cat in _HOST_CATS:
            host.append((i, e))
        else:
            old = _legacy(e)
            if old == "kernel":
                gpu.append((i, e))
                legacy_gpu += 1
            elif old == "cpu_op":
                host.append((i, e))
    runtime = [e for _i, e in host if e.get("cat") in _RUNTIME_CATS]
    stats = {"host": len(host), "runtime": len(runtime), "legacy": legacy_gpu, "events": len(events),
             "hip": sum(1 for e in runtime if isinstance(e.get("name"), str) and e["name"].startswith("hip"))}
    context = []
    if host_calls == "sync":  # what the analysis reads: sync calls, launches, annotations, step/data-loader ops (steps.py)
        kept = [(i, e) for i, e in host if isinstance(e.get("name"), str) and (
            kept_call(e["name"]) if e.get("cat") in _RUNTIME_CATS
            else (e.get("cat") == "user_annotation" or kept_range(e["name"])))]
        # and what the CPU was doing (idle_causes.host_late_activity): the other CPU ops, annotations
        # and Python functions, read lean (each event once: those kept above are not repeated)
        kept_rows = {i for i, _e in kept}
        context = [(i, e) for i, e in host if i not in kept_rows and e.get("cat") in _CONTEXT_CATS]
        host = kept

    def arg(e, k):
        a = e.get("args")
        return a.get(k) if isinstance(a, dict) else None

    def dim(e, k, i):
        v = arg(e, k)
        return _int(v[i]) if isinstance(v, list) and len(v) > i else None

    def pid(e):
        return _int(e.get("pid"))

    def implied_device(e):
        """The device when args.device is absent: Kineto GPU events' pid (legacy rows: tid); a
        value that is no GPU index (a process id) leaves it unknown."""
        v = _int(e.get("tid")) if _legacy(e) else pid(e)
        return v if v is not None and 0 <= v <= MAX_DEVICE else None

    def num(v):
        return float(v) if _num(v) else float(v) if isinstance(v, str) and _TS_TEXT.fullmatch(v) else None

    def ts_text(v):
        return v if isinstance(v, str) else None

    def text(v):
        return v if isinstance(v, str) else None if v is None else str(v)

    gpu_cols = host_cols = context_cols = launch_cols = None
    if gpu:
        dev_args = [arg(e, "device") for _i, e in gpu]
        problems = [_event_problem(e, d) for (_i, e), d in zip(gpu, dev_args)]
        gpu_cols = {
            "_row": [i for i, _e in gpu],
            "_problem": problems,
            "kind": [_GPU_CATS.get(e.get("cat") if isinstance(e.get("cat"), str) else None, "kernel") for _i, e in gpu],
            "device": [_int(d) if d is not None else implied_device(e) for d, (_i, e) in zip(dev_args, gpu)],
            "stream": [_whole(arg(e, "stream")) for _i, e in gpu],
            "ts": [num(e.get("ts")) for _i, e in gpu], "dur": [num(e.get("dur")) for _i, e in gpu],
            "ts_text": [ts_text(e.get("ts")) for _i, e in gpu],
            "name": [text(e.get("name")) for _i, e in gpu],
            "correlation_id": [_int(arg(e, "correlation")) for _i, e in gpu],
            "grid_x": [dim(e, "grid", 0) for _i, e in gpu], "grid_y": [dim(e, "grid", 1) for _i, e in gpu],
            "grid_z": [dim(e, "grid", 2) for _i, e in gpu],
            "block_x": [dim(e, "block", 0) for _i, e in gpu], "block_y": [dim(e, "block", 1) for _i, e in gpu],
            "block_z": [dim(e, "block", 2) for _i, e in gpu],
            "bytes": [_whole(arg(e, "bytes")) for _i, e in gpu],
            "process_id": [pid(e) for _i, e in gpu],
            **_collective_columns(gpu, arg),
        }
    if host:
        ts_raw = [e.get("ts") for _i, e in host]
        ts, dur = [num(v) for v in ts_raw], [num(e.get("dur")) for _i, e in host]
        host_cols = {
            "_row": [i for i, _e in host],
            # a host row reads its times only: a copy size or grid the analysis never reads (ROCm's
            # ``"bytes": "128"`` on hipMemcpy* calls) never makes a host call damaged
            "_problem": [_event_problem(e, None, times_only=True) if t is None or d is None else None
                         for t, d, (_i, e) in zip(ts, dur, host)],
            "kind": [_HOST_CATS.get(e.get("cat") if isinstance(e.get("cat"), str) else None, "cpu_op") for _i, e in host],
            "ts": ts, "dur": dur,
            "ts_text": [v if isinstance(v, str) else None for v in ts_raw],
            "name": [text(e.get("name")) for _i, e in host],
            "correlation_id": [_int(arg(e, "correlation")) for _i, e in host],
            "process_id": [pid(e) for _i, e in host],
            "thread_id": [_int(e.get("tid")) for _i, e in host],
            **{c: op_texts([arg(e, k) for _i, e in host]) for k, c in OP_ARGS.items()},
        }
    if context:  # lean: plain lookups, values checked in polars (assemble_frames)
        ts_raw = [e.get("ts") for _i, e in context]
        context_cols = {
            "_row": [i for i, _e in context],
            "kind": [_HOST_CATS.get(e.get("cat")) for _i, e in context],
            "ts": [None if isinstance(v, str) else v for v in ts_raw],
            "dur": [e.get("dur") for _i, e in context],
            "ts_text": [v if isinstance(v, str) else None for v in ts_raw],
            "name": [e.get("name") for _i, e in context],
            "thread_id": [e.get("tid") for _i, e in context],
            **{c: op_texts([arg(e, k) for _i, e in context]) for k, c in OP_ARGS.items()},
        }
    # the launch records: every runtime/driver call with a correlation id (joined to the GPU work
    # it launched by read_kineto; calls that launched nothing, e.g. cudaEventQuery, find no match)
    if runtime:  # values checked in polars (_join_launches), not per event here
        launch_cols = {
            "correlation_id": [arg(e, "correlation") for e in runtime],
            "ts": [None if isinstance(v, str) else v for v in (e.get("ts") for e in runtime)],
            "ts_text": [v if isinstance(v, str) else None for v in (e.get("ts") for e in runtime)],
        }
    g, h, launch = assemble_frames(gpu_cols, host_cols, context_cols, launch_cols)
    return g, h, launch, stats


class _NotStreamable(Exception):
    """The trace's layout does not fit the chunked reader: parse it whole instead."""


def _open_stream(path):
    return _Bounded(path)


def _kineto_stream(path, host_calls: str, chunk_bytes: int):
    """Parse ``traceEvents`` a chunk of events at a time (memory: one chunk's Python objects).

    The array is cut after a ``}`` followed by ``,`` and ``{`` (an event boundary); a cut that
    lands inside a string or a nested value does not parse and the previous candidate is tried.
    Anything unexpected raises :class:`_NotStreamable` and the caller parses the file whole.
    """
    key = b'"traceEvents"'
    gpus, hosts, launches, stats = [], [], [], new_stats()
    hint: dict = {}  # kineto_fast.decode_events: how the last chunk's times were read
    with _open_stream(path) as fh:
        buf = b""
        head = fh.read(4096)
        array = head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")
        fh.seek(0)
        # the array form (events only, no object around them) is streamed as the traceEvents array is:
        # parsed whole, 5 million events were gigabytes of Python objects
        while not array and key not in buf:
            more = fh.read(1 << 20)
            if not more:
                raise _NotStreamable("no traceEvents key")
            buf += more
            if len(buf) > (64 << 20):
                raise _NotStreamable("traceEvents not near the start")
        if array:
            prefix = None
            rest = fh.read(max(chunk_bytes, 4096)).lstrip(b"\xef\xbb\xbf \t\r\n")
        else:
            k = buf.index(key)
            prefix = buf[:k]
            rest = buf[k + len(key):].lstrip()
            if not rest.startswith(b":"):
                raise _NotStreamable("traceEvents without ':'")
            rest = rest[1:].lstrip()
        if not rest.startswith(b"["):
            raise _NotStreamable("traceEvents is not an array")
        buf = rest[1:]
        eof = False
        while True:
            if not eof and len(buf) < chunk_bytes:
                more = fh.read(chunk_bytes)
                if more:
                    buf += more
                    continue
                eof = True
            if eof:
                break
            (g, h, lr, n), buf = _cut_events(buf, host_calls, stats["events"], hint)
            _add(stats, n)
            for frames, x in ((gpus, g), (hosts, h), (launches, lr)):
                if x is not None:
                    frames.append(x)
    # the end: the remaining events, ']', then the rest of the top-level object
    (g, h, lr, n), suffix = _last_events(buf, host_calls, stats["events"], hint)
    _add(stats, n)
    for frames, x in ((gpus, g), (hosts, h), (launches, lr)):
        if x is not None:
            frames.append(x)
    if prefix is None:  # the array form: nothing may follow its closing bracket
        if suffix.strip():
            raise _NotStreamable("text after the array form's ']'")
        return {}, gpus, hosts, launches, stats
    meta = _loads(prefix + b'"traceEvents": []' + suffix)
    if not isinstance(meta, dict):
        raise _NotStreamable("top level is not an object")
    return meta, gpus, hosts, launches, stats


def _add(stats, more):
    for k, v in more.items():
        stats[k] += v


def _cut_events(buf: bytes, host_calls: str, base: int, hint: dict | None = None, attempts: int = 50):
    """(the frames of the events from the start of buf up to an event boundary, the remaining bytes)."""
    end = len(buf)
    for _ in range(attempts):
        i = buf.rfind(b"}", 0, end)
        if i < 0:
            break
        j = i + 1
        while j < len(buf) and buf[j] in b" \t\r\n":
            j += 1
        if j < len(buf) and buf[j:j + 1] == b",":
            k = j + 1
            while k < len(buf) and buf[k] in b" \t\r\n":
                k += 1
            if k < len(buf) and buf[k:k + 1] == b"{":
                try:
                    return _decode_events(b"".join((b"[", memoryview(buf)[:i + 1], b"]")), host_calls, base, hint), buf[k:]
                except ValueError:
                    pass
        end = i
    raise _NotStreamable("no event boundary found in a chunk")


def _last_events(buf: bytes, host_calls: str, base: int, hint: dict | None = None, attempts: int = 50):
    """(the frames of the last events, the bytes after the array's closing bracket)."""
    end = len(buf)
    for _ in range(attempts):
        i = buf.rfind(b"]", 0, end)
        if i < 0:
            break
        try:
            return _decode_events(b"".join((b"[", memoryview(buf)[:i + 1])), host_calls, base, hint), buf[i + 1:]
        except ValueError:
            pass
        end = i
    raise _NotStreamable("no end of the traceEvents array")


def _inflates_past(path, n: int) -> bool:
    """A gzip trace whose JSON is ``n`` bytes or more (decompressed in bounded pieces, at most n)."""
    try:
        with _Bounded(path) as fh:
            if not fh.gz:
                return False
            got = 0
            while got < n:
                piece = fh.read(min(1 << 20, n - got))
                if not piece:
                    return False
                got += len(piece)
            return True
    except _gzip_errors():
        return False


def _file_size(path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def read_kineto(path, *, host_calls: str = "all", stream_min_bytes: int = STREAM_MIN_BYTES,
                chunk_bytes: int = STREAM_CHUNK_BYTES, strict: bool = True) -> TimelineTables:
    """``host_calls``: as :func:`read_nsys_sqlite` (``"sync"``: synchronizing runtime/driver calls only).

    Files of ``stream_min_bytes`` or more (on disk) are parsed ``chunk_bytes`` of events at a time,
    so peak memory holds one chunk's Python objects and the (small) columnar result; a layout the
    chunked reader does not recognize falls back to parsing the whole document. A gzip trace is
    decompressed in bounded pieces (:class:`_Bounded`: :data:`MAX_TRACE_BYTES`,
    :data:`MAX_WHOLE_PARSE_BYTES`, :data:`MAX_GZIP_RATIO`) and streamed when its JSON is
    ``stream_min_bytes`` or more. ``strict``: a damaged GPU event (times that are not numbers, a
    negative duration, a device id that is not a GPU index, see
    :func:`ridgeline.parsers.timeline.common.check_records`) is an error naming ``traceEvents[i]``;
    False: it is skipped and listed."""
    import polars as pl

    src = path_label(path)  # a file name that is not UTF-8, escaped (ridgeline.result.path_label)
    meta = None
    if _file_size(path) >= stream_min_bytes or _inflates_past(path, stream_min_bytes):
        try:
            meta, gpus, hosts, launches, stats = _kineto_stream(path, host_calls, chunk_bytes)
        except (_NotStreamable, ValueError, *_gzip_errors()):
            meta = None
    if meta is None:
        try:
            with _Bounded(path, MAX_WHOLE_PARSE_BYTES) as fh:
                raw = fh.read()
        except _gzip_errors() as err:
            from ridgeline.parsers.plain import plain_reason

            raise InputError(path, f"expected a readable PyTorch profiler trace; the file looks truncated or corrupt: {plain_reason(err)}") from err
        from ridgeline.parsers.timeline import kineto_fast

        fast = kineto_fast.decode_document(raw, host_calls)  # None: read the standard way (kineto_fast's contract)
        try:
            meta = fast[0] if fast is not None else _loads(raw)
        except ValueError as err:
            meta = _array_without_end(raw)  # the array form may omit its closing ']'
            if meta is None:
                from ridgeline.parsers.plain import plain_reason

                raise InputError(path, f"expected a PyTorch profiler trace (JSON); the file looks truncated or corrupt: {plain_reason(err)}") from err
        del raw
        if isinstance(meta, list):  # the Trace Event format's array form: events only
            meta = {"traceEvents": meta}
        if fast is None and (not isinstance(meta, dict) or not isinstance(meta.get("traceEvents"), list)):
            raise InputError(path, "expected a PyTorch profiler trace (a JSON object with a traceEvents list, or a JSON "
                             "array of trace events)")
        g, h, lr, stats = fast[1:] if fast is not None else _kineto_frames(meta.pop("traceEvents"), host_calls)
        del fast
        gpus, hosts, launches = [[x] if x is not None else [] for x in (g, h, lr)]
    if not isinstance(meta, dict):
        raise InputError(path, "expected a PyTorch profiler trace (a JSON object with a traceEvents list)")
    devices, device_props = {}, {}
    props = meta.get("deviceProperties")
    props = [d for d in props if isinstance(d, dict)] if isinstance(props, list) else []
    for d in props:  # an id that is no GPU index (a damaged entry) names nothing
        i = _int(d.get("id"))
        if i is not None and 0 <= i <= MAX_DEVICE and isinstance(d.get("name"), str):
            devices[i] = d["name"]
        if i is not None and 0 <= i <= MAX_DEVICE:
            recorded = device_properties(d)
            if recorded:
                device_props[i] = recorded
    vendor = trace_vendor(props, stats)
    notes = []
    if stats["legacy"]:
        notes.append(f"{path}: legacy autograd profiler trace (JSON array form): its {stats['legacy']} GPU row(s) are "
                     "per-operator GPU times measured with CUDA events, not individual kernels; no streams, copies "
                     "or runtime calls are recorded")
    skipped = []
    where = lambda r: f"traceEvents[{r}]"  # noqa: E731
    df = None
    if gpus:
        df = pl.concat(gpus, how="vertical_relaxed") if len(gpus) > 1 else gpus[0]
        gpus.clear()  # the chunks' frames, freed before the copies below (peak memory)
        words = pl.col("name").str.extract(r"(?i)memcpy\s+([A-Za-z]+)", 1).str.to_lowercase()
        df = df.with_columns(
            (pl.col("ts") * 1000).alias("start_ns"),
            ((pl.col("ts") + pl.col("dur")) * 1000).alias("end_ns"),
            pl.when(pl.col("kind") == "memcpy").then(words.replace_strict(_COPY_WORDS, default="other", return_dtype=pl.String))
            .alias("copy_kind"),
        )
        df, skipped = check_records(path, df, strict=strict, where=where, what="GPU event")
        df = exact_ns(df)
        df = _join_launches(df, launches)
    launches.clear()
    if df is not None and df.height:
        df = _dims_and_kinds(df)
        acts = _finish_activities(df, src, devices)
    else:
        acts = _empty_activities()
        from ridgeline.parsers.timeline.holdings import judge, scan_categories  # what it holds instead, and advice

        holding = judge({} if skipped else scan_categories(lambda: _Bounded(path)), events=stats["events"],
                        skipped=len(skipped))
        if holding.refuse:  # another accelerator's trace, CUPTI range-profiler counters: no GPU timeline
            raise holding.error(path)
        notes.append(holding.note(path))
    api = None
    if hosts:
        api = pl.concat(hosts, how="vertical_relaxed") if len(hosts) > 1 else hosts[0]
        hosts.clear()
        api = api.with_columns((pl.col("ts") * 1000).alias("start_ns"),
                               ((pl.col("ts") + pl.col("dur")) * 1000).alias("end_ns"))
        api = check_host_calls(path, api, strict=strict, where=where, notes=notes)
        api = exact_ns(api)
        api = _finish_api(api, src)
    host_api = None
    if stats["runtime"]:
        host_api = "Kineto " + ("HIP" if stats["hip"] else "CUDA") + " runtime events"
    from ridgeline.parsers.timeline.rank_env import checked_rank

    rank, world = checked_rank(meta.get("distributedInfo"), path, notes)
    return TimelineTables(src, "kineto", acts, api=api, devices=devices, device_properties=device_props, notes=notes,
                          skipped=skipped,
                          host_calls_total=stats["runtime"], host_api=host_api, vendor=vendor, framework="pytorch",
                          rank=rank, world_size=world, rank_from="trace" if rank is not None else None)


def exact_ns(df):
    """``ts``/``dur`` (us; ``ts_text``: the long decimals kept as text by :func:`_loads`) -> integer
    ``start_ns``/``end_ns``, exact to the nanosecond, and drops the raw columns. Run after the
    damage checks (which read the float ``start_ns``/``end_ns``), so every time fits int64.

    ``ts`` = whole us + fraction: text rows split at the point (the fraction's 4th digit rounds);
    float rows split into floor and fraction (both exact in float64), so a whole number of
    microseconds never meets a float product (1683564901565486 us x 1000 as float64 is rounded to a
    multiple of 256 ns); ``dur`` (small) is rounded to ns as a float."""
    import polars as pl

    ts, text = pl.col("ts"), pl.col("ts_text")
    whole_txt = text.str.extract(r"^([0-9]+)\.", 1).cast(pl.Int64, strict=False)
    frac4 = text.str.extract(r"\.([0-9]+)$", 1).str.pad_end(4, "0").str.slice(0, 4).cast(pl.Int64, strict=False)
    from_text = whole_txt * 1000 + (frac4 + 5) // 10
    whole = ts.floor()
    from_float = whole.cast(pl.Int64, strict=False) * 1000 + ((ts - whole) * 1000).round(0).cast(pl.Int64, strict=False)
    start = pl.coalesce(from_text, from_float)
    return (df.with_columns(start.alias("start_ns"))
            .with_columns((pl.col("start_ns") + (pl.col("dur") * 1000).round(0).cast(pl.Int64)).alias("end_ns"))
            .drop("ts", "dur", "ts_text"))


def _join_launches(df, launches):
    """``launch_ns`` on each GPU activity: the start of the runtime/driver call with its correlation id
    (Kineto's GPU events carry ``args.correlation``, as do the ``cuda_runtime``/``cuda_driver`` calls;
    the earliest call per id where several share one), null where no call matches (a trace without
    runtime events, work launched before the capture began)."""
    import polars as pl

    if not launches:
        return df.with_columns(pl.lit(None, dtype=pl.Int64).alias("launch_ns"))
    lr = pl.concat(launches, how="vertical_relaxed") if len(launches) > 1 else launches[0]
    launches.clear()
    ok = pl.col("correlation_id").is_not_null() & (
        pl.col("ts").is_finite().fill_null(False) & (pl.col("ts").abs() <= MAX_TIME_NS / 1000)
        | pl.col("ts_text").str.contains(f"^{_TS_TEXT.pattern}$").fill_null(False))
    lr = lr.filter(ok).with_columns(pl.lit(0.0).alias("dur"))
    lr = exact_ns(lr).filter(pl.col("start_ns").is_not_null())
    lr = lr.group_by("correlation_id").agg(pl.col("start_ns").min().alias("launch_ns"))
    return df.join(lr, on="correlation_id", how="left", maintain_order="left")


_AMD_NAME = re.compile(r"(?i)\b(AMD|Radeon|Instinct|MI[0-9]{2,3}[A-Z]*)\b|gfx[0-9]")
_NVIDIA_NAME = re.compile(r"(?i)\b(NVIDIA|Tesla|GeForce|Quadro|TITAN|RTX|GTX)\b")


#: Kineto deviceProperties field -> property key (ridgeline.parsers.timeline.common.TimelineTables.device_properties)
DEVICE_PROPERTY_SPELLINGS = {"numSms": "unit_count", "totalGlobalMem": "memory_bytes", "warpSize": "warp_size"}


def device_properties(d: dict) -> dict:
    """The properties one ``deviceProperties`` entry records that tell a GPU apart (whole numbers
    > 0, as numbers or text; anything else is left out, never an error: a name needs them only
    when it is generic): SMs or CUs (``numSms``, which HIP fills with CUs), memory, warp or
    wavefront size, ``computeMajor.computeMinor``, and the gfx target where recorded."""
    out = {}
    for field, key in DEVICE_PROPERTY_SPELLINGS.items():
        v = _whole(d.get(field))
        if v is not None and v > 0:
            out[key] = v
    major, minor = _whole(d.get("computeMajor")), _whole(d.get("computeMinor"))
    if major is not None and minor is not None and 0 < major < 100 and 0 <= minor < 100:
        out["compute_capability"] = f"{major}.{minor}"
    arch = d.get("gcnArchName")
    if isinstance(arch, str) and re.match(r"gfx[0-9a-f]+", arch.strip(), re.IGNORECASE):
        out["gfx"] = arch.strip()[:80]
    return out


def trace_vendor(props: list[dict], stats: dict[str, int]) -> str | None:
    """``amd``, ``nvidia`` or None, from the device properties, else the runtime call names."""
    for d in props:
        name = str(d.get("name") or "")
        # Kineto built with roctracer writes maxSharedMemoryPerMultiProcessor (CUPTI builds write
        # sharedMemPerMultiprocessor); AMD wavefronts are 64 wide, NVIDIA warps 32
        if ("gcnArchName" in d or "maxSharedMemoryPerMultiProcessor" in d or d.get("warpSize") == 64
                or _AMD_NAME.search(name)):
            return "amd"
        if _NVIDIA_NAME.search(name):
            return "nvidia"
    if stats["hip"]:
        return "amd"
    if stats["runtime"]:
        return "nvidia"  # cuda*/cu* calls (the legacy profiler's "CUDA functions" rows are also written by ROCm builds)
    return None


def _array_without_end(raw: bytes):
    """The array form with its optional closing ']' left out (a trailing comma allowed)."""
    body = raw.strip()
    if not body.startswith(b"[") or body.endswith(b"]"):
        return None
    try:
        return _loads(body.rstrip(b", \t\r\n") + b"]")
    except ValueError:
        return None
