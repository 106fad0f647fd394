"""Which ROCm profiler format a file is, from its head (never from its name).

Ids (``timeline:<id>`` in :data:`ridgeline.parsers.formats.FORMATS`):

* ``rocprof-v1-csv``: rocprof v1's kernel trace (``"Index","KernelName","gpu-id",...,"BeginNs","EndNs"``);
* ``rocprof-v1-json``: rocprof v1's ``--hip-trace``/``--sys-trace`` Chrome trace JSON (string ``ts``/``dur``,
  ``args.BeginNs``/``EndNs``, no PyTorch ``cat``);
* ``rocprofiler-sdk-json``: rocprofv3's ``--output-format json`` (``{"rocprofiler-sdk-tool": [...]}``);
* ``rocpd`` (SQLite, detected by :func:`ridgeline.parsers.rocm.rocpd.is_rocpd`);
* ``rocprof-stats``: a per-name summary (``"Name","Calls","TotalDurationNs","AverageNs","Percentage"``;
  rocprofv3's ``kernel_stats.csv`` adds ``MinNs``, ``MaxNs``, ``StdDev``);
* ``rocprofv3-kernel-trace``: rocprofv3's ``kernel_trace.csv`` (``Kind``, ``Agent_Id``, ``Kernel_Name``,
  ``Start_Timestamp``, ``End_Timestamp``; any header era, any letter case; ``rocpd convert`` adds ``Guid``).
"""

from __future__ import annotations

V1_CSV_NEED = {"kernelname", "gpu-id", "beginns", "endns"}
STATS_NEED = {"name", "calls", "totaldurationns"}
V3_NEED = {"kind", "agent_id", "kernel_name", "start_timestamp", "end_timestamp"}


def header_fields(head: bytes) -> list[str] | None:
    """The first non-blank line of the head as CSV fields (stripped), or None."""
    import csv

    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    line = next((ln for ln in text.splitlines() if ln.strip()), None)
    if line is None:
        return None
    try:
        return [c.strip() for c in next(csv.reader([line]))]
    except (csv.Error, StopIteration):
        return None


def rocprof_trace_json(head: bytes) -> bool:
    """rocprof v1's ``--hip-trace``/``--sys-trace`` JSON: Chrome trace events without the PyTorch
    profiler's categories, each kernel dispatch timed by ``BeginNs``/``EndNs`` args (with
    ``DispatchNs`` or ``CompleteNs``). Read as a PyTorch trace it would hold no record at all."""
    return (head.lstrip()[:1] in (b"{", b"[") and b'"BeginNs"' in head and b'"EndNs"' in head
            and (b'"DispatchNs"' in head or b'"CompleteNs"' in head) and b'"cat"' not in head)


def detect_rocm(head: bytes) -> str | None:
    """The ROCm format id of a (decompressed) head, or None."""
    if rocprof_trace_json(head):
        return "rocprof-v1-json"
    if b'"rocprofiler-sdk-tool"' in head.lstrip()[:200]:
        return "rocprofiler-sdk-json"
    if head.lstrip()[:1] in (b"{", b"[") or b"\x00" in head[:4096]:
        return None
    fields = header_fields(head)
    if not fields:
        return None
    cols = {c.lower() for c in fields}
    if V1_CSV_NEED <= cols:
        return "rocprof-v1-csv"
    if V3_NEED <= cols:
        return "rocprofv3-kernel-trace"
    if STATS_NEED <= cols and "percentage" in cols:
        return "rocprof-stats"
    return None


def read_rocm(path, kind: str, *, strict: bool = True):
    """Read a file :func:`detect_rocm` named ``kind`` -> :class:`~ridgeline.parsers.timeline.common.TimelineTables`."""
    if kind == "rocprof-v1-csv":
        from ridgeline.parsers.rocm.v1 import read_v1_csv

        return read_v1_csv(path, strict=strict)
    if kind == "rocprof-v1-json":
        from ridgeline.parsers.rocm.v1 import read_v1_json

        return read_v1_json(path, strict=strict)
    if kind == "rocprofiler-sdk-json":
        from ridgeline.parsers.rocm.sdk_json import read_sdk_json

        return read_sdk_json(path, strict=strict)
    if kind == "rocpd":
        from ridgeline.parsers.rocm.rocpd import read_rocpd

        return read_rocpd(path, strict=strict)
    if kind == "rocprof-stats":
        from ridgeline.parsers.rocm.v1 import read_stats

        return read_stats(path, strict=strict)
    from ridgeline.parsers.rocm.v3 import read_v3_kernel_trace

    return read_v3_kernel_trace(path, strict=strict)


#: AMD outputs no reader takes yet, by their CSV header (lower-case column sets): said by name in
#: the refusal, never as "got 'Dispatch_ID,GPU_ID,...'"
_UNREAD = (
    (lambda c: "dispatch_id" in c and "kernel_name" in c and any(x.startswith(("sq_", "grbm_", "tcc_")) for x in c),
     "a rocprof-compute (omniperf) pmc_perf.csv (hardware counters per dispatch)"),
    (lambda c: "device" in c and "hbmbw" in c, "a rocprof-compute roofline.csv (the empirical peaks of one GPU)"),
    (lambda c: "gpu_model" in c and ("gpu_arch" in c or "workload_name" in c), "a rocprof-compute sysinfo.csv"),
    (lambda c: "counter_name" in c and "counter_value" in c,
     "a rocprofv3 counter_collection.csv (hardware counters per dispatch, one row per counter)"),
    (lambda c: "kernelname" in c and "gpu-id" in c,
     "a rocprof v1 counter CSV (--pmc, without the BeginNs/EndNs of a kernel trace)"),
    (lambda c: "kind" in c and "correlation_id" in c and "start_timestamp" in c,
     "a rocprofv3 trace CSV other than kernel_trace.csv (API calls, copies, markers)"),
)


def amd_unread(head: bytes) -> str | None:
    """What an AMD profiler CSV no reader takes is (rocprof-compute workloads, rocprofv3 counter
    and API traces), from its header; None when the header is no such file."""
    fields = header_fields(head)
    if not fields or len(fields) < 2:
        return None
    cols = {c.lower() for c in fields}
    return next((w for test, w in _UNREAD if test(cols)), None)


def unread_error(path, first: str | None):
    """The one-line refusal of an AMD output :func:`amd_unread` named (``first``), else None."""
    if first not in {w for _t, w in _UNREAD}:
        return None
    from ridgeline.errors import InputError
    from ridgeline.parsers.formats import describe_formats

    return InputError(path, f"this is {first}, which ridgeline does not read yet; it reads {describe_formats(('amd',))} "
                      "(docs/amd.md)")
