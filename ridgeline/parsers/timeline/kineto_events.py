"""What both Kineto readers share: the event categories, long timestamps kept as text, and the
assembly of column lists into the reader's frames (:mod:`ridgeline.parsers.timeline.kineto` reads with the
standard library, :mod:`ridgeline.parsers.timeline.kineto_fast` with typed records; both end here, so their
frames have one schema)."""

from __future__ import annotations

import re

from ridgeline.analyzer.schema import DATALOADER_RE, LAUNCH_RE, STEP_RE, SYNC_RE
from ridgeline.parsers.timeline.common import MAX_TIME_NS

_GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset", "Kernel": "kernel",
             "Memcpy": "memcpy", "Memset": "memset"}
_HOST_CATS = {"cuda_runtime": "runtime", "cuda_driver": "driver", "cpu_op": "cpu_op", "Runtime": "runtime",
              "Operator": "cpu_op", "user_annotation": "annotation", "python_function": "python"}
#: host events that say what the CPU was doing (kept by host_calls="sync" too: they name the work
#: behind host-late idle time, ridgeline.analyzer.timeline.idle_causes.host_late_activity)
_CONTEXT_CATS = ("cpu_op", "Operator", "user_annotation", "python_function")
#: the categories of runtime/driver API calls (``Runtime`` in early Kineto)
_RUNTIME_CATS = ("cuda_runtime", "cuda_driver", "Runtime")
_LEGACY_PIDS = {"cuda functions": "kernel", "cpu functions": "cpu_op"}  # the legacy autograd profiler
#: a ``"ts"`` value of 8e12 us or more with decimals (epoch microseconds with nanosecond decimals,
#: 1.7e15): quoted before parsing so it reaches :func:`ridgeline.parsers.timeline.kineto.exact_ns` as text. A float64 holds a value
#: below 2^43 us (8.8e12) to better than 0.5 ns, so rounding it gives the exact nanosecond; above,
#: its spacing grows to 256 ns at epoch microseconds (the error HTA's float reading makes).
_LONG_TS = re.compile(rb'"ts"\s*:\s*((?:[0-9]{14,}|[89][0-9]{12})\.[0-9]+)(?![0-9eE])')
_TS_TEXT = re.compile(r"[0-9]{13,}\.[0-9]+")


_SYNC, _LAUNCH, _STEP, _LOADER = (re.compile(p) for p in (SYNC_RE, LAUNCH_RE, STEP_RE, DATALOADER_RE))


def kept_call(name: str) -> bool:
    """A runtime/driver call the analysis reads (``host_calls="sync"``): a synchronizing call or a
    launch (kernels, graphs, async copies and memsets)."""
    return bool(_SYNC.match(name) or _LAUNCH.match(name))


def kept_range(name: str) -> bool:
    """A host range the analysis reads besides annotations: a numbered step or data-loader work."""
    return bool(_STEP.match(name) or _LOADER.search(name))


#: bytes per element of the collective's ``dtype`` as Kineto writes it (``BFloat16``, ``Float``,
#: ``c10::Half``...); another dtype leaves the size unknown
_DTYPE_BYTES = {"float": 4, "float32": 4, "half": 2, "float16": 2, "bfloat16": 2, "double": 8, "float64": 8,
                "long": 8, "int64": 8, "int": 4, "int32": 4, "short": 2, "int16": 2, "byte": 1, "uint8": 1, "char": 1,
                "int8": 1, "bool": 1, "complexfloat": 8, "complexdouble": 16}
#: the collective args the analysis reads (PyTorch's torch/csrc/profiler/util.h ``collective_fields``, on
#: NCCL kernels and record_param_comms): name in the trace -> ours
COLLECTIVE_ARGS = {"Process Group Name": "coll_group", "Seq": "coll_seq", "Group size": "coll_group_size"}
COLLECTIVE_COLUMNS = ("coll_group", "coll_seq", "coll_bytes", "coll_group_size")


def collective_values(group, seq, in_n, out_n, dtype, size):
    """The COLLECTIVE_COLUMNS of one GPU event from its args (None where absent or not of the
    expected kind): the bytes are the larger of the in and out element counts x the dtype's size
    (nccl-tests' size: all_gather's gathered output, reduce_scatter's input)."""
    def whole(v):
        return v if v.__class__ is int and v >= 0 else None

    n = max((x for x in (whole(in_n), whole(out_n)) if x is not None), default=None)
    width = _DTYPE_BYTES.get(dtype.lower().removeprefix("c10::")) if isinstance(dtype, str) else None
    return (group if isinstance(group, str) else str(group) if group.__class__ is int else None, whole(seq),
            n * width if n is not None and width else None, whole(size))


#: the shape arguments of a CPU op (``record_shapes=True``) -> HOST_API text columns (JSON, compact)
OP_ARGS = {"Input Dims": "op_input_dims", "Input type": "op_input_types", "Concrete Inputs": "op_concrete_inputs"}


def op_texts(values: list) -> list:
    """Decoded values of one shape argument -> compact JSON text (both readers, so one text per value), None where absent."""
    import msgspec

    enc = msgspec.json.encode
    return [None if v is None else enc(v).decode() for v in values]


def quote_long_ts(data: bytes) -> bytes:
    """Long decimal ``ts`` values (:data:`_LONG_TS`) as JSON strings, so no parser rounds them."""
    return _LONG_TS.sub(rb'"ts":"\1"', data) if b"." in data else data


def assemble_frames(gpu_cols, host_cols, context_cols, launch_cols):
    """Column lists -> (GPU frame, host frame, launch frame), each None where its columns are.

    Shared by the standard path (:func:`ridgeline.parsers.timeline.kineto._kineto_frames`, values as the JSON gave them, coerced here)
    and the fast path (:mod:`ridgeline.parsers.timeline.kineto_fast`, values already typed), so both give
    frames of one schema. Context rows (what the CPU was doing) are read lean: a row whose times
    are not usable is left out, and they follow the host rows."""
    import polars as pl

    gpu_schema, host_schema = _kineto_schemas()
    g = pl.DataFrame(gpu_cols, schema=gpu_schema, strict=False) if gpu_cols is not None else None
    h = pl.DataFrame(host_cols, schema=host_schema, strict=False) if host_cols is not None else None
    if context_cols is not None:
        c = pl.DataFrame(context_cols, schema={k: host_schema[k] for k in ("_row", "kind", "ts", "dur", "ts_text", "name",
                                                                             "thread_id", *OP_ARGS.values())},
                         strict=False)
        ok = (pl.col("dur").is_finite() & (pl.col("dur") >= 0)
              & (pl.col("ts").is_finite() & (pl.col("ts").abs() <= MAX_TIME_NS / 1000)
                 | pl.col("ts_text").str.contains(f"^{_TS_TEXT.pattern}$")))
        c = c.filter(ok.fill_null(False)).with_columns(  # the float the damage checks read, as for other events
            pl.coalesce("ts", pl.col("ts_text").cast(pl.Float64, strict=False)).alias("ts"))
        if c.height:  # after the host rows, in the host schema (a chunk may hold context rows only)
            h = pl.concat([h if h is not None else pl.DataFrame(schema=host_schema), c], how="diagonal_relaxed")
    launch = None
    if launch_cols is not None:
        launch = pl.DataFrame(launch_cols, schema={"correlation_id": pl.Int64, "ts": pl.Float64, "ts_text": pl.String},
                              strict=False)
    return g, h, launch


def _kineto_schemas():
    import polars as pl

    i, f, t = pl.Int64, pl.Float64, pl.String
    gpu = {"_row": i, "_problem": t, "kind": t, "device": i, "stream": i, "ts": f, "dur": f, "ts_text": t, "name": t, "correlation_id": i, "grid_x": i,
           "grid_y": i, "grid_z": i, "block_x": i, "block_y": i, "block_z": i, "bytes": i, "process_id": i,
           "coll_group": t, "coll_seq": i, "coll_bytes": i, "coll_group_size": i}
    host = {"_row": i, "_problem": t, "kind": t, "ts": f, "dur": f, "ts_text": t, "name": t, "correlation_id": i, "process_id": i, "thread_id": i,
            **{c: t for c in OP_ARGS.values()}}
    return gpu, host
