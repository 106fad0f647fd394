"""PyTorch profiler (Kineto) Chrome traces -> TIMELINE / HOST_API tables (see
:mod:`ridgeline.parsers.timeline` for the formats and their detection).

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

Vendor (``TimelineTables.vendor``): ROCm builds of PyTorch write the same categories
(``kernel``, ``gpu_memcpy``, ``cuda_runtime``) with HIP names (``hipLaunchKernel``,
``hipMemcpyWithStream``) and AMD device properties (names such as ``AMD Instinct MI300X``;
Kineto's roctracer build writes ``maxSharedMemoryPerMultiProcessor`` where the CUPTI build writes
``sharedMemPerMultiprocessor``; ``warpSize`` 64). ``amd`` when the device properties name an AMD GPU or the
runtime calls are ``hip*``; ``nvidia`` when they name an NVIDIA GPU or the calls are
``cuda*``/``cu*``; else None.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from ridgeline.analyzer.schema import SYNC_RE
from ridgeline.errors import InputError
from ridgeline.parsers.timeline_common import (
    _COPY_WORDS,
    TimelineTables,
    _dims_and_kinds,
    _empty_activities,
    _finish_activities,
    _finish_api,
)
from ridgeline.result import Skipped

# ======================================================================================
# Kineto
# ======================================================================================
_GPU_CATS = {"kernel": "kernel", "gpu_memcpy": "memcpy", "gpu_memset": "memset", "Kernel": "kernel",
             "Memcpy": "memcpy", "Memset": "memset"}
_HOST_CATS = {"cuda_runtime": "runtime", "cuda_driver": "driver", "cpu_op": "cpu_op", "Runtime": "runtime",
              "Operator": "cpu_op"}


def _loads(data: bytes):
    try:
        import orjson  # optional: faster when installed

        return orjson.loads(data)
    except ImportError:
        import json

        return json.loads(data)


STREAM_MIN_BYTES = 64 << 20  # Kineto files from this size are parsed in chunks of events
STREAM_CHUNK_BYTES = 32 << 20


_LEGACY_PIDS = {"cuda functions": "kernel", "cpu functions": "cpu_op"}  # the legacy autograd profiler


def _legacy(e) -> str | None:
    pid = e.get("pid")
    return _LEGACY_PIDS.get(pid.lower()) if "cat" not in e and isinstance(pid, str) else None


def new_stats() -> dict[str, int]:
    """Counts kept while reading: host events, runtime/driver calls, hip* calls, legacy GPU rows."""
    return {"host": 0, "runtime": 0, "hip": 0, "legacy": 0}


def _kineto_frames(events, host_calls: str):
    """One batch of trace events -> (GPU frame, host frame, stats); raw columns, ts/dur in us."""
    import polars as pl

    gpu_schema, host_schema = _kineto_schemas()
    gpu, host = [], []
    legacy_gpu = 0
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = e.get("cat")
        if cat in _GPU_CATS:
            gpu.append(e)
        elif cat in _HOST_CATS:
            host.append(e)
        else:
            old = _legacy(e)
            if old == "kernel":
                gpu.append(e)
                legacy_gpu += 1
            elif old == "cpu_op":
                host.append(e)
    runtime = [e for e in host if e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime")]
    stats = {"host": len(host), "runtime": len(runtime), "legacy": legacy_gpu,
             "hip": sum(1 for e in runtime if isinstance(e.get("name"), str) and e["name"].startswith("hip"))}
    if host_calls == "sync":
        sync = re.compile(SYNC_RE)
        host = [e for e in host if e.get("cat") in ("cuda_runtime", "cuda_driver", "Runtime")
                and isinstance(e.get("name"), str) and sync.match(e["name"])]

    def arg(e, k):
        a = e.get("args")
        return a.get(k) if isinstance(a, dict) else None

    def dim(e, k, i):
        v = arg(e, k)
        return v[i] if isinstance(v, list) and len(v) > i else None

    def pid(e):
        return e.get("pid") if isinstance(e.get("pid"), int) else None

    def device(e):
        if arg(e, "device") is not None:
            return arg(e, "device")
        if _legacy(e):  # legacy: tid is the device index
            return e.get("tid") if isinstance(e.get("tid"), int) else None
        return pid(e)  # Kineto GPU events' pid is the device index too

    g = None
    if gpu:
        g = pl.DataFrame({
            "kind": [_GPU_CATS.get(e.get("cat"), "kernel") for e in gpu],
            "device": [device(e) for e in gpu],
            "stream": [arg(e, "stream") for e in gpu],
            "ts": [e.get("ts") for e in gpu], "dur": [e.get("dur") for e in gpu],
            "name": [e.get("name") for e in gpu],
            "correlation_id": [arg(e, "correlation") for e in gpu],
            "grid_x": [dim(e, "grid", 0) for e in gpu], "grid_y": [dim(e, "grid", 1) for e in gpu],
            "grid_z": [dim(e, "grid", 2) for e in gpu],
            "block_x": [dim(e, "block", 0) for e in gpu], "block_y": [dim(e, "block", 1) for e in gpu],
            "block_z": [dim(e, "block", 2) for e in gpu],
            "bytes": [arg(e, "bytes") for e in gpu],
            "process_id": [pid(e) for e in gpu],
        }, schema=gpu_schema, strict=False)
    h = None
    if host:
        h = pl.DataFrame({
            "kind": [_HOST_CATS.get(e.get("cat"), "cpu_op") for e in host],
            "ts": [e.get("ts") for e in host], "dur": [e.get("dur") for e in host],
            "name": [e.get("name") for e in host],
            "correlation_id": [arg(e, "correlation") for e in host],
            "process_id": [pid(e) for e in host],
            "thread_id": [e.get("tid") if isinstance(e.get("tid"), int) else None for e in host],
        }, schema=host_schema, strict=False)
    return g, h, stats


def _kineto_schemas():
    import polars as pl

    i, f, t = pl.Int64, pl.Float64, pl.String
    gpu = {"kind": t, "device": i, "stream": i, "ts": f, "dur": f, "name": t, "correlation_id": i, "grid_x": i,
           "grid_y": i, "grid_z": i, "block_x": i, "block_y": i, "block_z": i, "bytes": i, "process_id": i}
    host = {"kind": t, "ts": f, "dur": f, "name": t, "correlation_id": i, "process_id": i, "thread_id": i}
    return gpu, host


class _NotStreamable(Exception):
    """The trace's layout does not fit the chunked reader: parse it whole instead."""


def _open_stream(path):
    with open(path, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _kineto_stream(path, host_calls: str, chunk_bytes: int):
    """Parse ``traceEvents`` a chunk of events at a time (memory: one chunk's Python objects).

    The array is cut after a ``}`` followed by ``,`` and ``{`` (an event boundary); a cut that
    lands inside a string or a nested value does not parse and the previous candidate is tried.
    Anything unexpected raises :class:`_NotStreamable` and the caller parses the file whole.
    """
    key = b'"traceEvents"'
    gpus, hosts, stats = [], [], new_stats()
    with _open_stream(path) as fh:
        buf = b""
        if fh.read(4096).lstrip().startswith(b"["):  # the array form: parsed whole
            raise _NotStreamable("Trace Event array form")
        fh.seek(0)
        while key not in buf:
            more = fh.read(1 << 20)
            if not more:
                raise _NotStreamable("no traceEvents key")
            buf += more
            if len(buf) > (64 << 20):
                raise _NotStreamable("traceEvents not near the start")
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
            events, buf = _cut_events(buf)
            g, h, n = _kineto_frames(events, host_calls)
            del events
            _add(stats, n)
            if g is not None:
                gpus.append(g)
            if h is not None:
                hosts.append(h)
    # the end: the remaining events, ']', then the rest of the top-level object
    tail_events, suffix = _last_events(buf)
    g, h, n = _kineto_frames(tail_events, host_calls)
    _add(stats, n)
    if g is not None:
        gpus.append(g)
    if h is not None:
        hosts.append(h)
    meta = _loads(prefix + b'"traceEvents": []' + suffix)
    if not isinstance(meta, dict):
        raise _NotStreamable("top level is not an object")
    return meta, gpus, hosts, stats


def _add(stats, more):
    for k, v in more.items():
        stats[k] += v


def _cut_events(buf: bytes, attempts: int = 50):
    """(events parsed from the start of buf up to an event boundary, the remaining bytes)."""
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
                    events = _loads(b"[" + buf[:i + 1] + b"]")
                except ValueError:
                    events = None
                if isinstance(events, list):
                    return events, buf[k:]
        end = i
    raise _NotStreamable("no event boundary found in a chunk")


def _last_events(buf: bytes, attempts: int = 50):
    """(the last events, the bytes after the array's closing bracket)."""
    end = len(buf)
    for _ in range(attempts):
        i = buf.rfind(b"]", 0, end)
        if i < 0:
            break
        try:
            events = _loads(b"[" + buf[:i + 1])
        except ValueError:
            events = None
        if isinstance(events, list):
            return events, buf[i + 1:]
        end = i
    raise _NotStreamable("no end of the traceEvents array")


def _file_size(path) -> int:
    try:
        return Path(path).stat().st_size
    except OSError:
        return 0


def read_kineto(path, *, host_calls: str = "all", stream_min_bytes: int = STREAM_MIN_BYTES,
                chunk_bytes: int = STREAM_CHUNK_BYTES) -> TimelineTables:
    """``host_calls``: as :func:`read_nsys_sqlite` (``"sync"``: synchronizing runtime/driver calls only).

    Files of ``stream_min_bytes`` or more (on disk) are parsed ``chunk_bytes`` of events at a time,
    so peak memory holds one chunk's Python objects and the (small) columnar result; a layout the
    chunked reader does not recognize falls back to parsing the whole document."""
    import polars as pl

    src = str(path)
    meta = None
    if _file_size(path) >= stream_min_bytes:
        try:
            meta, gpus, hosts, stats = _kineto_stream(path, host_calls, chunk_bytes)
        except (_NotStreamable, ValueError, OSError, EOFError, gzip.BadGzipFile):
            meta = None
    if meta is None:
        try:
            raw = Path(path).read_bytes()
            if raw.startswith(b"\x1f\x8b"):
                raw = gzip.decompress(raw)
        except (OSError, EOFError, gzip.BadGzipFile) as err:
            raise InputError(path, f"expected a readable PyTorch profiler trace; the file looks truncated or corrupt ({err})") from err
        try:
            meta = _loads(raw)
        except ValueError as err:
            meta = _array_without_end(raw)  # the array form may omit its closing ']'
            if meta is None:
                raise InputError(path, f"expected JSON (a PyTorch profiler trace); the file looks truncated or corrupt ({str(err)[:80]})") from err
        del raw
        if isinstance(meta, list):  # the Trace Event format's array form: events only
            meta = {"traceEvents": meta}
        if not isinstance(meta, dict) or not isinstance(meta.get("traceEvents"), list):
            raise InputError(path, "expected a PyTorch profiler trace (a JSON object with a traceEvents list, or a JSON "
                             "array of trace events)")
        g, h, stats = _kineto_frames(meta.pop("traceEvents"), host_calls)
        gpus, hosts = [x for x in (g,) if x is not None], [x for x in (h,) if x is not None]
    devices = {}
    props = [d for d in meta.get("deviceProperties") or [] if isinstance(d, dict)]
    for d in props:
        if d.get("id") is not None:
            devices[int(d["id"])] = d.get("name")
    vendor = trace_vendor(props, stats)
    notes = []
    if stats["legacy"]:
        notes.append(f"{path}: legacy autograd profiler trace (JSON array form): its {stats['legacy']} GPU row(s) are "
                     "per-operator GPU times measured with CUDA events, not individual kernels; no streams, copies "
                     "or runtime calls are recorded")
    skipped = []
    if gpus:
        df = pl.concat(gpus, how="vertical_relaxed") if len(gpus) > 1 else gpus[0]
        bad = df.filter(pl.col("ts").is_null() | pl.col("dur").is_null() | (pl.col("dur") < 0))
        if bad.height:
            skipped.append(Skipped(src, f"{bad.height} GPU event(s)", "no ts/dur or a negative duration; ignored"))
            df = df.filter(pl.col("ts").is_not_null() & pl.col("dur").is_not_null() & (pl.col("dur") >= 0))
        words = pl.col("name").str.extract(r"(?i)memcpy\s+([A-Za-z]+)", 1).str.to_lowercase()
        df = df.with_columns(
            (pl.col("ts") * 1000).round(0).cast(pl.Int64).alias("start_ns"),
            ((pl.col("ts") + pl.col("dur")) * 1000).round(0).cast(pl.Int64).alias("end_ns"),
            pl.when(pl.col("kind") == "memcpy").then(words.replace_strict(_COPY_WORDS, default="other", return_dtype=pl.String))
            .alias("copy_kind"),
        ).drop("ts", "dur")
        df = _dims_and_kinds(df)
        acts = _finish_activities(df, src, devices)
    else:
        acts = _empty_activities()
        notes.append(f"{path}: the trace holds no GPU events (kernel, gpu_memcpy, gpu_memset): profile with "
                     "ProfilerActivity.CUDA to see the GPU side; host-side ops are kept")
    api = None
    if hosts:
        api = pl.concat(hosts, how="vertical_relaxed") if len(hosts) > 1 else hosts[0]
        api = api.filter(pl.col("ts").is_not_null() & pl.col("dur").is_not_null()).with_columns(
            (pl.col("ts") * 1000).round(0).cast(pl.Int64).alias("start_ns"),
            ((pl.col("ts") + pl.col("dur")) * 1000).round(0).cast(pl.Int64).alias("end_ns"),
        ).drop("ts", "dur")
        api = _finish_api(api, src)
    host_api = None
    if stats["runtime"]:
        host_api = "Kineto " + ("HIP" if stats["hip"] else "CUDA") + " runtime events"
    return TimelineTables(src, "kineto", acts, api=api, devices=devices, notes=notes, skipped=skipped,
                          host_calls_total=stats["runtime"], host_api=host_api, vendor=vendor, framework="pytorch")


_AMD_NAME = re.compile(r"(?i)\b(AMD|Radeon|Instinct|MI[0-9]{2,3}[A-Z]*)\b|gfx[0-9]")
_NVIDIA_NAME = re.compile(r"(?i)\b(NVIDIA|Tesla|GeForce|Quadro|TITAN|RTX|GTX)\b")


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
