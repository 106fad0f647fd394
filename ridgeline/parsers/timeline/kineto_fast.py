"""The fast path of the Kineto reader: trace events decoded straight into typed records.

:mod:`ridgeline.parsers.timeline.kineto` reads a trace with the standard library's ``json`` (a dict per
event, every ``args`` key kept) and then walks the dicts in Python, checking every value
(:func:`ridgeline.parsers.timeline.kineto._event_problem`). On a 26 MB trace of 109k events that was
0.4 s of parsing and 0.8 s of walking, most of a 1.5 s run. Here msgspec decodes the same text
against a schema of the few fields the reader uses (``ph cat name ts dur pid tid`` and
``args.device stream correlation grid block bytes``; every other key is skipped unparsed), with
the value checks in the schema itself: ids are int64, grid and block three whole numbers below
2^32. ``ts`` is decoded as a number where none can be a long decimal (all below
:data:`LONG_TS_MIN`, or whole numbers), else taken as written (``msgspec.Raw``) and read in polars
(:func:`_times`): long decimal values stay text, exact to the nanosecond, with no pass over the
whole text beforehand (the standard path quotes them first with
:func:`ridgeline.parsers.timeline.kineto_events.quote_long_ts`, a scan that cost as much as half the decoding).

The contract: :func:`decode_events` / :func:`decode_document` return exactly what the standard
path returns for the same bytes (``tests/parsers/timeline/test_kineto_fast.py`` compares both on every real
and generated trace and on damaged variants), or None where they cannot be sure of that: a value
of another type than the schema's (a device ``"cuda:0"``, a float id), an event the standard path
would name as damaged (no ``ts``, a ``ts`` text that is not a number, a device that is no GPU
index), the legacy autograd layout, JSON the decoder rejects. The caller then reads the bytes the
standard way, which names every damage in its words: the fast path never decides what is wrong
with a file, it only recognizes files where nothing is.
"""

from __future__ import annotations

import gc
import math
from typing import Annotated, Any

import msgspec

from ridgeline.parsers.timeline.kineto_events import (
    _CONTEXT_CATS,
    _GPU_CATS,
    _HOST_CATS,
    _LEGACY_PIDS,
    _RUNTIME_CATS,
    _TS_TEXT,
    COLLECTIVE_COLUMNS,
    OP_ARGS,
    assemble_frames,
    collective_values,
    kept_call,
    kept_range,
    op_texts,
)
from ridgeline.parsers.timeline.common import MAX_DEVICE

_I64 = Annotated[int, msgspec.Meta(ge=-(1 << 63), le=(1 << 63) - 1)]
_DIM = Annotated[list[Annotated[int, msgspec.Meta(ge=0, le=(1 << 32) - 1)]], msgspec.Meta(min_length=3, max_length=3)]


class _Args(msgspec.Struct, gc=False):
    device: _I64 | None = None
    # text on host calls of ROCm builds (``"stream": "0x0"``, ``"bytes": "128"`` on hipMemcpy*):
    # the host rows never read them; a GPU event with text here goes to the standard path
    stream: _I64 | str | None = None
    correlation: _I64 | None = None
    grid: _DIM | None = None
    block: _DIM | None = None
    nbytes: _I64 | str | None = msgspec.field(default=None, name="bytes")
    # the collective args (kineto_events.collective_values reads and checks them as the standard path does)
    pg: Any = msgspec.field(default=None, name="Process Group Name")
    seq: Any = msgspec.field(default=None, name="Seq")
    in_n: Any = msgspec.field(default=None, name="In msg nelems")
    out_n: Any = msgspec.field(default=None, name="Out msg nelems")
    dtype: Any = None
    group_size: Any = msgspec.field(default=msgspec.UNSET, name="Group size")
    # a CPU op's recorded shapes (record_shapes=True), kept as compact JSON text (kineto_events.OP_ARGS)
    input_dims: Any = msgspec.field(default=None, name="Input Dims")
    input_types: Any = msgspec.field(default=None, name="Input type")
    concrete_inputs: Any = msgspec.field(default=None, name="Concrete Inputs")


class _Event(msgspec.Struct, gc=False):
    ph: str | None = None
    cat: str | None | msgspec.UnsetType = msgspec.UNSET  # absent: maybe the legacy layout
    name: str | None = None
    ts: int | float | str | None = None  # a decimal past LONG_TS_MIN: read again as written (_EventRaw)
    dur: float | None = None
    pid: _I64 | str | None = None
    tid: _I64 | str | None = None
    args: _Args | None = None


class _EventRaw(_Event, gc=False):
    ts: msgspec.Raw = msgspec.Raw(b"null")  # the value as written: long decimals stay exact (_times)


class _Document(msgspec.Struct):
    traceEvents: list[_Event]  # noqa: N815 (the format's key)
    deviceProperties: msgspec.Raw = msgspec.Raw(b"null")  # noqa: N815
    distributedInfo: msgspec.Raw = msgspec.Raw(b"null")  # noqa: N815


class _DocumentRaw(_Document):
    traceEvents: list[_EventRaw]  # noqa: N815


_EVENTS = {False: msgspec.json.Decoder(list[_Event]), True: msgspec.json.Decoder(list[_EventRaw])}
_DOCUMENT = {False: msgspec.json.Decoder(_Document), True: msgspec.json.Decoder(_DocumentRaw)}
#: the smallest ``ts`` the standard path may keep as text (kineto_events._LONG_TS: 13 digits from 8e12
#: with decimals): a chunk whose decimal ``ts`` values all stay below it reads them as numbers
LONG_TS_MIN = 8e12


def _decode(decoder, data: bytes):
    """``decoder.decode(data)`` with the garbage collector paused: the op shapes (``Input Dims``...)
    decode into many small lists, each a tracked object, and the collections they set off cost
    more than the decoding (nothing decoded here holds a cycle)."""
    was = gc.isenabled()
    gc.disable()
    try:
        return decoder.decode(data)
    finally:
        if was:
            gc.enable()


class _NeedsRaw(Exception):
    """A ``ts`` read as a number may be a long decimal the standard path keeps as text: decode as written."""


def decode_events(data: bytes, host_calls: str, base: int = 0, hint: dict | None = None):
    """A JSON array of trace events -> ``(gpu, host, launch, stats)`` as
    :func:`ridgeline.parsers.timeline.kineto._kineto_frames` gives for the same text with its long ``ts``
    values quoted (:func:`ridgeline.parsers.timeline.kineto_events.quote_long_ts`), or None (see the module).

    ``ts`` is decoded as a number (the fast case) unless one could be a long decimal (a float from
    :data:`LONG_TS_MIN`): then the chunk is decoded again with every ``ts`` as written
    (:func:`_times`), and ``hint["raw"]`` (kept by the caller across a file's chunks) starts the
    next chunks that way."""
    hint = {} if hint is None else hint
    for raw in (True,) if hint.get("raw") else (False, True):
        try:
            events = _decode(_EVENTS[raw], data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            return None
        try:
            return _frames(events, host_calls, base, raw)
        except _NeedsRaw:
            hint["raw"] = True
    return None  # (not reached: the raw decoding never asks for itself)


def decode_document(data: bytes, host_calls: str):
    """A whole trace in the object form -> ``(meta, gpu, host, launch, stats)`` (``meta``: the
    ``deviceProperties`` and ``distributedInfo`` the reader reads, parsed by the standard
    library), or None."""
    from ridgeline.parsers.jsontext import loads

    for raw in (False, True):
        try:
            doc = _decode(_DOCUMENT[raw], data)
            meta = {k: loads(bytes(v), max_bytes=None, encoding=None)
                    for k, v in (("deviceProperties", doc.deviceProperties), ("distributedInfo", doc.distributedInfo))}
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, ValueError):
            return None
        try:
            got = _frames(doc.traceEvents, host_calls, 0, raw)
        except _NeedsRaw:
            continue
        return None if got is None else (meta, *got)
    return None


def _frames(events: list[_Event], host_calls: str, base: int, as_written: bool = False):
    """The frames of :func:`ridgeline.parsers.timeline.kineto._kineto_frames` from typed events, or None.
    One list per field (attribute reads, no checks); the per-value Python left is for the rare
    values that need a look (text ``ts``, text ids); the rest is done in polars."""
    import polars as pl

    gpu_rows, gpu, host_rows, host = [], [], [], []
    unset = msgspec.UNSET
    for i, e in enumerate(events, base):
        if e.ph != "X":
            continue
        cat = e.cat
        if cat in _GPU_CATS:
            gpu_rows.append(i)
            gpu.append(e)
        elif cat in _HOST_CATS:
            host_rows.append(i)
            host.append(e)
        elif cat is unset and isinstance(e.pid, str) and e.pid.lower() in _LEGACY_PIDS:
            return None  # the legacy autograd layout: the standard path reads it
    stats = {"host": len(host), "runtime": 0, "legacy": 0, "events": len(events), "hip": 0}
    gpu_cols = host_cols = context_cols = launch_cols = None
    if gpu:
        cols = _columns(gpu, as_written)
        if cols is None:
            return None
        if str in set(map(type, cols["stream"])) or str in set(map(type, cols["nbytes"])):
            return None  # a GPU event's stream or bytes as text: the standard path reads (or names) it
        pid = cols["pid"]
        device = cols["device"]
        if not all(d is None or 0 <= d <= MAX_DEVICE for d in device):  # a device no GPU index: named by the standard path
            return None
        raw = pl.DataFrame({
            "_row": pl.Series(gpu_rows, dtype=pl.Int64), "cat": pl.Series(cols["cat"], dtype=pl.String),
            "device": pl.Series(device, dtype=pl.Int64), "stream": pl.Series(cols["stream"], dtype=pl.Int64),
            "ts": pl.Series(cols["ts"], dtype=pl.Float64), "dur": pl.Series(cols["dur"], dtype=pl.Float64),
            "ts_text": pl.Series(cols["ts_text"], dtype=pl.String), "name": pl.Series(cols["name"], dtype=pl.String),
            "correlation_id": pl.Series(cols["correlation"], dtype=pl.Int64),
            **{f"{k}_{x}": pl.Series([v[j] if v is not None else None for v in cols[k]], dtype=pl.Int64)
               for k in ("grid", "block") for j, x in enumerate("xyz")},
            "bytes": pl.Series(cols["nbytes"], dtype=pl.Int64), "process_id": pl.Series(pid, dtype=pl.Int64),
            **{c: pl.Series(cols[c], dtype=pl.String if c == "coll_group" else pl.Int64) for c in COLLECTIVE_COLUMNS},
        })
        p = pl.col("process_id")
        gpu_cols = raw.select(
            "_row", pl.lit(None, pl.String).alias("_problem"),
            pl.col("cat").replace_strict(_GPU_CATS, return_dtype=pl.String).alias("kind"),
            pl.coalesce("device", pl.when(p.is_between(0, MAX_DEVICE)).then(p)).alias("device"),
            "stream", "ts", "dur", "ts_text", "name", "correlation_id",
            *(f"{k}_{x}" for k in ("grid", "block") for x in "xyz"),
            "bytes", "process_id", *COLLECTIVE_COLUMNS)
    if host:
        cols = _columns(host, as_written)
        if cols is None:
            return None
        cat = pl.Series(cols["cat"], dtype=pl.String)
        name = pl.Series(cols["name"], dtype=pl.String)
        is_runtime = cat.is_in(_RUNTIME_CATS)
        stats["runtime"] = int(is_runtime.sum())
        stats["hip"] = int((is_runtime & name.str.starts_with("hip")).sum())
        frame = pl.DataFrame({
            "_row": pl.Series(host_rows, dtype=pl.Int64), "_problem": pl.Series([None] * len(host), dtype=pl.String),
            "kind": cat.replace_strict(_HOST_CATS, return_dtype=pl.String), "ts": cols["ts"], "dur": cols["dur"],
            "ts_text": pl.Series(cols["ts_text"], dtype=pl.String), "name": name,
            "correlation_id": pl.Series(cols["correlation"], dtype=pl.Int64),
            "process_id": pl.Series(cols["pid"], dtype=pl.Int64), "thread_id": pl.Series(cols["tid"], dtype=pl.Int64),
            **{c: pl.Series(op_texts(cols[c]), dtype=pl.String) for c in OP_ARGS.values()},
        }, schema_overrides={"ts": pl.Float64, "dur": pl.Float64})
        if host_calls == "sync":  # the rows the analysis reads (as kineto._kineto_frames), each name matched once
            names = set(cols["name"]) - {None}
            calls = [n for n in names if kept_call(n)]
            ranges = [n for n in names if kept_range(n)]
            keep = name.is_not_null() & pl.when(is_runtime).then(name.is_in(calls)).otherwise(
                (cat == "user_annotation") | name.is_in(ranges))
            keep = pl.select(keep.fill_null(False)).to_series()
            context = ~keep & cat.is_in(_CONTEXT_CATS)
            if context.any():  # lean, as the standard path: the text ids as polars reads them, text ts left as text
                c = frame.filter(context)
                context_cols = {"_row": c["_row"], "kind": c["kind"],
                                "ts": c.select(pl.when(pl.col("ts_text").is_null()).then(pl.col("ts"))).to_series(),
                                "dur": c["dur"], "ts_text": c["ts_text"], "name": c["name"],
                                "thread_id": pl.Series([t for t, x in zip(cols["tid_raw"], context) if x], dtype=pl.Int64,
                                                       strict=False)
                                if cols["tid_raw"] is not None else c["thread_id"],
                                **{k: c[k] for k in OP_ARGS.values()}}
            frame = frame.filter(keep)
        if frame.height:
            host_cols = frame
        if stats["runtime"]:
            r = pl.DataFrame({"correlation_id": pl.Series(cols["correlation"], dtype=pl.Int64),
                              "ts": cols["ts"], "ts_text": pl.Series(cols["ts_text"], dtype=pl.String)},
                             schema_overrides={"ts": pl.Float64}).filter(is_runtime)
            launch_cols = r.with_columns(pl.when(pl.col("ts_text").is_null()).then(pl.col("ts")).alias("ts"))
    g, h, launch = assemble_frames(gpu_cols, host_cols, context_cols, launch_cols)
    return g, h, launch, stats


#: a JSON number the standard path reads as text (kineto_events._LONG_TS: epoch microseconds with
#: decimals, past what a float64 holds to the nanosecond)
_LONG_NUMBER = r"^(?:[0-9]{14,}|[89][0-9]{12})\.[0-9]+$"


def _times(raw: list[msgspec.Raw]):
    """The ``ts`` values as written -> (float Series, text Series: the value where the standard path
    keeps it as text, else null), or None where one is not a usable time (null, absent, a text
    that is not a decimal number, not finite): the standard path names it.

    Read in polars from the values joined by newlines (no Python per event, and no pass of
    :func:`ridgeline.parsers.timeline.kineto_events.quote_long_ts` over the text before decoding): a JSON
    number is its own text; the long ones (:data:`_LONG_NUMBER`) are kept as text, exact to the
    nanosecond; a JSON string is kept as text where it is a decimal number (``_TS_TEXT``)."""
    import polars as pl

    joined = b"\n".join(raw)  # (a JSON value holds no raw newline)
    text = pl.Series("ts", [joined.decode("utf-8", "replace")], dtype=pl.String).str.split("\n").explode()
    if len(text) != len(raw):
        return None
    if b'"' in joined:  # some written as JSON strings: kept as text where they are decimal numbers
        is_str = text.str.starts_with('"')
        inner = pl.when(is_str).then(text.str.slice(1, text.str.len_chars() - 2)).otherwise(text)
        got = pl.select(
            inner.cast(pl.Float64, strict=False).alias("ts"),
            pl.when(is_str).then(inner).when(text.str.contains(_LONG_NUMBER)).then(text).alias("ts_text"),
            (is_str & ~inner.str.contains(f"^{_TS_TEXT.pattern}$")).alias("bad_text"),
        )
        if got.get_column("bad_text").any():
            return None
        ts, ts_text = got.get_column("ts"), got.get_column("ts_text")
    else:  # numbers only (the common case: no look at the text beyond the cast where none has a decimal point)
        ts = text.cast(pl.Float64, strict=False)
        ts_text = (pl.select(pl.when(text.str.contains(_LONG_NUMBER)).then(text)).to_series() if b"." in joined
                   else pl.Series("ts_text", [None] * len(text), dtype=pl.String))
    if ts.null_count() or not ts.is_finite().all():  # null, absent, true...: the standard path names it
        return None
    return ts, ts_text


_EMPTY_ARGS = _Args()
_NO_COLL = (None,) * len(COLLECTIVE_COLUMNS)
_NONE = type(None)


def _int_only(values):
    """Ids as the standard path keeps them: integers, a text id none (``_int``)."""
    return values if str not in set(map(type, values)) else [v if v.__class__ is int else None for v in values]


def _numbers(ts: list):
    """``ts`` values decoded as numbers -> (floats, no text), or None where one is no number
    (text, null: :func:`_times` reads them as written). _NeedsRaw where one could be a long
    decimal the standard path keeps as text (a float from :data:`LONG_TS_MIN`; ints are exact)."""
    kinds = set(map(type, ts))
    if not kinds <= {int, float}:
        raise _NeedsRaw
    if float in kinds:
        top = max(ts) if kinds == {float} else max(v for v in ts if v.__class__ is float)
        if top >= LONG_TS_MIN:
            raise _NeedsRaw
        if not all(map(math.isfinite, ts)):
            return None
    return ts, [None] * len(ts)


def _columns(events: list[_Event], as_written: bool = False):
    """The events' fields as columns (tuples), times checked; None where a time is missing or a
    ``ts`` text is not a number (damage the standard path names)."""
    cat = [e.cat for e in events]
    name = [e.name for e in events]
    ts = [e.ts for e in events]
    dur = [e.dur for e in events]
    pid = [e.pid for e in events]
    tid = [e.tid for e in events]
    args = [e.args for e in events]
    if _NONE in set(map(type, args)):
        args = [a if a is not None else _EMPTY_ARGS for a in args]
    device = [a.device for a in args]
    stream = [a.stream for a in args]
    correlation = [a.correlation for a in args]
    grid = [a.grid for a in args]
    block = [a.block for a in args]
    nbytes = [a.nbytes for a in args]
    unset = msgspec.UNSET
    if all(a.group_size is unset for a in args):  # (most events: no collective args, no per-event tuples)
        coll_cols = dict.fromkeys(COLLECTIVE_COLUMNS, [None] * len(args))
    else:
        coll = [collective_values(a.pg, a.seq, a.in_n, a.out_n, a.dtype, a.group_size) if a.group_size is not unset
                else _NO_COLL for a in args]
        coll_cols = {c: [r[j] for r in coll] for j, c in enumerate(COLLECTIVE_COLUMNS)}
    ops = {"op_input_dims": [a.input_dims for a in args], "op_input_types": [a.input_types for a in args],
           "op_concrete_inputs": [a.concrete_inputs for a in args]}
    times = _times(ts) if as_written else _numbers(ts)
    if times is None or _NONE in set(map(type, dur)) or not all(map(math.isfinite, dur)):
        return None
    ts_f, ts_t = times
    tid_raw = tid if str in set(map(type, tid)) else None
    return {"cat": cat, "name": name, "ts": ts_f, "ts_text": ts_t, "dur": dur, "pid": _int_only(pid),
            "tid": _int_only(tid), "tid_raw": tid_raw, "device": device, "stream": stream, "correlation": correlation,
            "grid": grid, "block": block, "nbytes": nbytes,
            **coll_cols, **ops}
