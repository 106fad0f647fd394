"""Timelines: Nsight Systems exports and PyTorch profiler (Kineto) traces -> TIMELINE tables.

Formats, detected from content (never from the file name):

* ``nsys export --type sqlite`` databases (SQLite magic + a ``CUPTI_ACTIVITY_KIND_*`` or
  ``StringIds`` table). Both schema eras: 2022 (meta table ``EXPORT_META_DATA``, names in
  ``StringIds`` only) and 2024+ (``META_DATA_EXPORT``, ``ENUM_*`` tables). Read with one
  ``SELECT`` per activity table through the standard library's sqlite3 straight into polars
  (no per-row Python); kernels ``CUPTI_ACTIVITY_KIND_KERNEL``, copies ``..._MEMCPY``
  (``copyKind``: CUPTI's enum, the same number in both eras), memsets ``..._MEMSET``, host
  calls ``..._RUNTIME`` (names from ``StringIds``); device names from ``TARGET_INFO_GPU``
  (matched on ``id``, the CUDA device index in the activity tables).
* ``nsys stats`` CSV reports: ``cuda_gpu_trace`` (a timeline: one row per kernel/copy/memset;
  ``Start (ns)``/``Duration (ns)`` headers, or the GUI's human-unit cells such as ``1.5 ms``
  under ``Start``/``Duration``); and the summaries ``cuda_gpu_kern_sum``, ``cuda_api_sum``,
  ``cuda_gpu_mem_time_sum``, ``nvtx_sum``: totals only (the ``totals`` table), with a note
  saying so: no busy/idle, gaps or per-device figures can come from them.
* Kineto Chrome traces (``.json``, ``.json.gz``, detected by ``traceEvents`` in the head, or the
  Trace Event format's array form: ``[`` and an event with ``"ph"``; see :mod:`ridgeline.parsers.timeline.kineto`):
  ``cat`` ``kernel``, ``gpu_memcpy``, ``gpu_memset`` -> activities (``ts``/``dur`` in
  microseconds, ``args.device/stream/correlation/grid/block``), ``cuda_runtime`` and
  ``cuda_driver`` -> host calls, ``cpu_op`` -> host ops (kind ``cpu_op``);
  ``deviceProperties`` names the GPUs. A trace without GPU events is read (a note says so).
* ``.nsys-rep``/``.qdrep`` reports need the nsys binary: an InputError naming
  ``nsys export --type sqlite``.

Times are integers in nanoseconds on the capture's own clock (nsys: ns since session start;
Kineto: the trace's microsecond timestamps x 1000).

The readers live in one module per format (:mod:`ridgeline.parsers.timeline.nsys_sqlite`,
:mod:`ridgeline.parsers.timeline.nsys_csv`, :mod:`ridgeline.parsers.timeline.kineto`; shared pieces in
:mod:`ridgeline.parsers.timeline.common`); this module detects the format and dispatches.
"""

from __future__ import annotations

from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.timeline.kineto import read_kineto  # noqa: F401  (re-exported)
from ridgeline.parsers.timeline.nsys_csv import STATS_REPORTS, _csv_header, _stats_report, read_nsys_stats  # noqa: F401
from ridgeline.parsers.timeline.nsys_sqlite import _is_nsys_sqlite, read_nsys_sqlite  # noqa: F401
from ridgeline.parsers.timeline.common import (  # noqa: F401  (re-exported)
    COPY_KINDS,
    HEAD,
    NSYS_REP_MAGICS,
    SQLITE_MAGIC,
    TimelineTables,
)

# ======================================================================================
# detection
# ======================================================================================
def _head(path) -> bytes:
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD)
    except OSError:
        return b""
    if head.startswith(b"\x1f\x8b"):  # as much of the start as decompresses (a cut file too)
        import zlib

        try:
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, HEAD)
        except zlib.error:
            return b""
    return head



def detect_timeline_format(path) -> str | None:
    """``nsys-sqlite``, ``nsys-stats:<report>``, ``kineto``, a ROCm format
    (:func:`ridgeline.parsers.rocm.detect.detect_rocm`) or None."""
    head = _head(path)
    if not head:
        return None
    if head.startswith(SQLITE_MAGIC):
        if _is_nsys_sqlite(path):
            return "nsys-sqlite"
        from ridgeline.parsers.rocm.rocpd import is_rocpd

        return "rocpd" if is_rocpd(path) else None
    stripped = head.lstrip()
    from ridgeline.parsers.rocm.detect import detect_rocm

    rocm = detect_rocm(head)  # rocprof's Chrome trace events first: never read as an empty PyTorch trace
    if rocm:
        return rocm
    if stripped.startswith(b"{") and (b'"traceEvents"' in head or b'"schemaVersion"' in head
                                       or b'"deviceProperties"' in head):
        return "kineto"
    if stripped.startswith(b"[") and _trace_event_array(stripped):
        return "kineto"
    if b"\x00" in head[:4096]:
        return None
    header = _csv_header(head)
    if header:
        report = _stats_report(header)
        if report:
            return "nsys-stats:" + report
    return None


def _trace_event_array(head: bytes) -> bool:
    """The Trace Event format's array form: ``[`` then an object with ``"ph"`` and ``"ts"``/``"name"``
    keys (a complete event in the head, or a long first event: the keys near the start)."""
    import re

    first = re.match(rb'\[\s*\{', head)
    if not first:
        return False
    window = head[:4096]
    return b'"ph"' in window and (b'"ts"' in window or b'"name"' in window)


def is_nsys_report(path) -> bool:
    """A binary Nsight Systems report (``.nsys-rep``/``.qdrep``), by its header."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return False
    return head.startswith(NSYS_REP_MAGICS)


def nsys_export_error(path) -> InputError:
    p = Path(path)
    return InputError(
        path,
        "expected an export of this Nsight Systems report (ridgeline cannot read .nsys-rep/.qdrep): "
        f"nsys export --type sqlite -o {p.stem}.sqlite {p.name}",
        actual="a binary Nsight Systems report",
    )



# ======================================================================================
# entry point
# ======================================================================================
def read_timeline(path, *, host_calls: str = "all", strict: bool = True) -> TimelineTables:
    """Read one timeline file, format detected from its content (``host_calls``: see
    :func:`read_nsys_sqlite`). ``strict``: a damaged record (an end before its start, a time past
    2200 or 30 days from the rest, a negative copy size, a device that is not a GPU index) is an
    error naming the file, the table or event and the row; False (``--lenient``): it is skipped and
    listed (:func:`ridgeline.parsers.timeline.common.check_records`)."""
    if is_nsys_report(path):
        raise nsys_export_error(path)
    kind = detect_timeline_format(path)
    if kind is None:
        from ridgeline.parsers.formats import expected_formats

        raise InputError(path, expected_formats(("nsys", "kineto", "amd")))
    if kind == "nsys-sqlite":
        return read_nsys_sqlite(path, host_calls=host_calls, strict=strict)
    if kind == "kineto":
        return read_kineto(path, host_calls=host_calls, strict=strict)
    if not kind.startswith("nsys-stats:"):
        from ridgeline.parsers.rocm.detect import read_rocm

        return read_rocm(path, kind, strict=strict)
    return read_nsys_stats(path, kind.split(":", 1)[1], strict=strict)
