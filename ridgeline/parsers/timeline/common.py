"""Shared pieces of the timeline readers (``ridgeline.parsers.timeline.reader`` and the per-format
modules ``nsys_sqlite``, ``nsys_csv``, ``kineto``): the :class:`TimelineTables` result, CUPTI copy
kinds, and the casts to the TIMELINE / HOST_API schemas."""

from __future__ import annotations

import dataclasses
from typing import Any

from ridgeline.parsers.guard import MAX_GPU_INDEX
from ridgeline.result import Skipped

SQLITE_MAGIC = b"SQLite format 3\x00"
NSYS_REP_MAGICS = (b"NVIDIA Tegra Profiler Report", b"NVIDIA Nsight Systems")
HEAD = 1 << 16

#: CUPTI memcpy kinds (CUpti_ActivityMemcpyKind), as nsys stores them
COPY_KINDS = {0: "other", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
              9: "HtoH", 10: "PtoP", 11: "HtoD"}
_COPY_WORDS = {"host-to-device": "HtoD", "device-to-host": "DtoH", "device-to-device": "DtoD", "peer-to-peer": "PtoP",
               "host-to-host": "HtoH", "htod": "HtoD", "dtoh": "DtoH", "dtod": "DtoD", "ptop": "PtoP"}


@dataclasses.dataclass
class TimelineTables:
    """What a timeline reader returns for one file.

    ``activities``: TIMELINE table (GPU kernels, copies, memsets); ``api``: HOST_API table or
    None; ``totals``: TIMELINE_TOTALS table (nsys stats summaries) or None; ``devices``:
    device index -> name; ``device_properties``: device index -> the properties the file records
    with the name, under the keys of :data:`ridgeline.analyzer.kernels.identify.PROPERTY_KEYS`
    (``unit_count``, ``memory_bytes``, ``compute_capability``, ``warp_size``, ``gfx``), so the
    analyzer can identify a device whose name is generic ("AMD Radeon Graphics"); ``kind``:
    input kind for the inputs list.
    """

    source: str
    kind: str
    activities: Any
    api: Any = None
    totals: Any = None
    devices: dict[int, str] = dataclasses.field(default_factory=dict)
    device_properties: dict[int, dict] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    skipped: list[Skipped] = dataclasses.field(default_factory=list)
    host_calls_total: int = 0  # host calls in the file (HOST_API may hold only the synchronizing ones)
    #: where the file's host API calls come from (e.g. "nsys CUPTI_ACTIVITY_KIND_RUNTIME"); None: the
    #: file records none, so no idle time can be attributed to synchronization (one flag per input)
    host_api: str | None = None
    vendor: str | None = None  # GPU vendor: "nvidia", "amd" or None (not recorded)
    framework: str | None = None  # "pytorch" when the capture is a PyTorch program (see pytorch_capture), else None
    rank: int | None = None  # distributed rank the file records (Kineto distributedInfo.rank), else None
    world_size: int | None = None  # ranks in the job as the file records it, else None
    rank_from: str | None = None  # "trace" (Kineto distributedInfo) or "environment" (nsys: the process's env)

    @property
    def records_read(self) -> int:
        """Records the file gave: GPU activities used + the damaged ones skipped (or the summary rows)."""
        listed = sum(1 for s in self.skipped if s.item != "file")
        return (self.activities.height if self.totals is None else self.totals.height) + listed



# ======================================================================================
# helpers
# ======================================================================================
def _empty_activities():
    import polars as pl

    from ridgeline.analyzer.schema import TIMELINE_COLUMNS, polars_schema

    return pl.DataFrame(schema=polars_schema(TIMELINE_COLUMNS))


def _finish_activities(df, source: str, devices: dict[int, str]):
    """Cast to the TIMELINE schema, fill short names and device names, sort by device/start."""
    import polars as pl

    from ridgeline.analyzer.schema import TIMELINE_COLUMNS, polars_schema
    from ridgeline.names import short_name

    schema = polars_schema(TIMELINE_COLUMNS)
    for c, t in schema.items():
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=t).alias(c))
    df = df.with_columns(pl.lit(source).alias("source"))
    if devices:
        df = df.with_columns(
            pl.coalesce(pl.col("device_name"), pl.col("device").replace_strict(devices, default=None, return_dtype=pl.String))
            .alias("device_name"))
    names = df.filter(pl.col("kind") == "kernel").get_column("name").unique().drop_nulls().to_list()
    mapping = {n: short_name(n) for n in names}
    df = df.with_columns(
        pl.when(pl.col("kind") == "kernel")
        .then(pl.coalesce(pl.col("short_name"), pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String)))
        .otherwise(pl.col("name"))
        .alias("short_name")
    )
    return df.select([pl.col(c).cast(t) for c, t in schema.items()]).sort("device", "start_ns", nulls_last=True)


#: kernel names only PyTorch (ATen, c10, Inductor's Triton kernels) launches
PYTORCH_KERNEL_RE = r"(^|[\s:<(])(at::native::|at::cuda::|c10::)|^triton_(poi|red|per|tem)_"


def pytorch_capture(acts) -> str | None:
    """``"pytorch"`` when any kernel on the timeline is PyTorch's own (ATen/c10 kernels, Inductor's
    triton_* kernels), else None: remedies then name PyTorch's knobs (torch.compile) only for
    PyTorch programs. Kineto traces are PyTorch by construction."""
    import polars as pl

    if acts is None or not acts.height:
        return None
    hit = acts.filter((pl.col("kind") == "kernel") & pl.col("name").str.contains(PYTORCH_KERNEL_RE)).height
    return "pytorch" if hit else None


def _finish_api(df, source: str):
    import polars as pl

    from ridgeline.analyzer.schema import HOST_API_COLUMNS, polars_schema

    schema = polars_schema(HOST_API_COLUMNS)
    for c, t in schema.items():
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=t).alias(c))
    df = df.with_columns(pl.lit(source).alias("source"))
    return df.select([pl.col(c).cast(t) for c, t in schema.items()]).sort("start_ns")



def _dims_and_kinds(df):
    import polars as pl

    def dims(frame, prefix, text_col, prod_col):
        """'(x, y, z)' and x*y*z, formatted once per distinct triple and joined back."""
        cs = [f"{prefix}_{a}" for a in "xyz"]
        if not all(c in frame.columns for c in cs):
            return frame.with_columns(pl.lit(None, dtype=pl.String).alias(text_col), pl.lit(None, dtype=pl.Int64).alias(prod_col))
        frame = frame.with_columns([pl.col(c).cast(pl.Int64, strict=False) for c in cs])
        distinct = frame.select(cs).unique().drop_nulls()
        distinct = distinct.with_columns(
            pl.format("({}, {}, {})", *[pl.col(c) for c in cs]).alias(text_col),
            (pl.col(cs[0]) * pl.col(cs[1]) * pl.col(cs[2])).alias(prod_col),
        )
        return frame.join(distinct, on=cs, how="left", maintain_order="left")

    if "name" not in df.columns:  # copies and sets only (no kernel table, or an empty one): a legal export
        df = df.with_columns(pl.lit(None, dtype=pl.String).alias("name"))
    out = dims(df, "grid", "grid_size", "grid_blocks")
    out = dims(out, "block", "block_size", "block_threads")
    if "copy_kind_id" in out.columns:
        out = out.with_columns(
            pl.when(pl.col("kind") == "memcpy")
            .then(pl.col("copy_kind_id").cast(pl.Int64).replace_strict(COPY_KINDS, default="other", return_dtype=pl.String))
            .alias("copy_kind"))
        out = out.with_columns(
            pl.when(pl.col("kind") == "memcpy").then(pl.format("[CUDA memcpy {}]", pl.col("copy_kind")))
            .when(pl.col("kind") == "memset").then(pl.lit("[CUDA memset]"))
            .otherwise(pl.col("name")).alias("name"))
    return out



# ======================================================================================
# record checks: what one GPU record of a timeline can say (issue 21)
# ======================================================================================
#: 2200-01-01 as ns since the epoch: no clock reading of a capture is later (or before -this)
MAX_TIME_NS = 7_258_118_400 * 10**9
#: a capture is at most 30 days long: a record further than this from the file's median start is damaged
MAX_CAPTURE_S = 30 * 86_400
#: the most bytes one copy can move (1 PiB): larger is a damaged size, never a transfer
MAX_COPY_BYTES = 1 << 50
#: GPU indices: the telemetry readers' bound (``guard.MAX_GPU_INDEX``)
MAX_DEVICE = MAX_GPU_INDEX


def record_problems(df):
    """``(ok, why)`` polars expressions over ``df`` (columns start_ns, end_ns, optional device,
    bytes, _problem: a reader's own finding such as a device id that is not an integer): ``ok`` is
    true for a sane record (cheap, evaluated on every row); ``why`` says what is wrong with a
    damaged one (string formatting: evaluate it on the damaged rows only). Times are compared as
    floats (no int64 overflow)."""
    import polars as pl

    s, e = pl.col("start_ns").cast(pl.Float64), pl.col("end_ns").cast(pl.Float64)
    problem = pl.col("_problem") if "_problem" in df.columns else pl.lit(None, dtype=pl.String)
    ok_time = s.is_not_null() & e.is_not_null() & s.is_finite() & e.is_finite() & (s.abs() <= MAX_TIME_NS) \
        & (e.abs() <= MAX_TIME_NS) & (e >= s) & problem.is_null()
    med = df.select(s.filter(ok_time).median()).item()
    cap = MAX_CAPTURE_S * 1e9
    far = ((s - med).abs() > cap) | ((e - med).abs() > cap) if med is not None else pl.lit(False)
    ok = ok_time & ~far
    dev = pl.col("device").cast(pl.Float64) if "device" in df.columns else None
    nbytes = pl.col("bytes").cast(pl.Float64) if "bytes" in df.columns else None
    if dev is not None:
        ok = ok & (dev.is_null() | ((dev >= 0) & (dev <= MAX_DEVICE)))
    if nbytes is not None:
        ok = ok & (nbytes.is_null() | ((nbytes >= 0) & (nbytes <= MAX_COPY_BYTES)))

    def shown(x):  # a time as whole ns where it fits int64, else as the float it is
        return pl.when(x.abs() < 2.0**62).then(x.round(0).cast(pl.Int64).cast(pl.String)).otherwise(x.cast(pl.String))

    def fmt(text, *args):
        return pl.format(text, *[shown(s) if a is S else shown(e) if a is E else a for a in args])

    S, E = object(), object()
    why = (
        pl.when(problem.is_not_null()).then(problem)
        .when(s.is_null() | ~s.is_finite()).then(pl.lit("no start time"))
        .when(e.is_null() | ~e.is_finite()).then(pl.lit("no end time"))
        .when((s.abs() > MAX_TIME_NS) | (e.abs() > MAX_TIME_NS))
        .then(fmt("a time past the year 2200 (start {} ns, end {} ns)", S, E))
        .when(e < s).then(fmt("end before start (start {} ns, end {} ns)", S, E))
    )
    if med is not None:
        why = why.when(far).then(
            fmt("a time more than 30 days from the rest of the capture (start {} ns, end {} ns, median start {} ns)",
                S, E, pl.lit(int(med))))
    if dev is not None:
        why = why.when(dev.is_not_null() & ((dev < 0) | (dev > MAX_DEVICE))).then(
            fmt("device {} is not a GPU index (0..{})", pl.col("device"), pl.lit(MAX_DEVICE)))
    if nbytes is not None:
        why = (why.when(nbytes.is_not_null() & (nbytes < 0)).then(fmt("a negative copy size ({} bytes)", pl.col("bytes")))
               .when(nbytes.is_not_null() & (nbytes > MAX_COPY_BYTES))
               .then(fmt("a copy size over 1 PiB ({} bytes)", pl.col("bytes"))))
    return ok, why.otherwise(pl.lit("a damaged value"))


def _escaped(text: str) -> str:
    """Control characters (a newline inside a quoted cell, ESC) shown escaped: one line, no terminal codes."""
    import re

    return re.sub(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", lambda m: repr(m.group())[1:-1], text)


def check_records(path, df, *, strict: bool, where, what: str = "record"):
    """Sane records of ``df`` and the :class:`Skipped` list of the others.

    ``where(row_id) -> str`` names a record (``"CUPTI_ACTIVITY_KIND_KERNEL row 12"``, ``"event 40"``)
    from the frame's ``_row`` column. Strict: the first damaged record is an InputError naming the
    file, the record and what is wrong; lenient: each damaged record is skipped and listed. The
    helper columns ``_row``, ``_problem`` and ``_why`` are dropped from the result."""
    import polars as pl

    from ridgeline.errors import InputError

    if not df.height:
        return df.drop([c for c in ("_row", "_problem") if c in df.columns]), []
    ok, why = record_problems(df)
    df = df.with_columns(ok.fill_null(False).alias("_ok"))
    bad = df.filter(~pl.col("_ok")).with_columns(why.alias("_why"))
    skipped: list[Skipped] = []
    if bad.height:
        rows = bad.get_column("_row").to_list() if "_row" in bad.columns else [None] * bad.height
        whys = [_escaped(w) for w in bad.get_column("_why").to_list()]
        if strict:
            more = f" ({bad.height - 1} more damaged {what}(s); --lenient skips and lists them)" if bad.height > 1 \
                else " (--lenient skips and lists it)"
            raise InputError(path, f"{where(rows[0])}: expected a {what} with sane values, got {whys[0]}{more}")
        skipped = [Skipped(str(path), where(r), f"damaged {what}: {w}; skipped") for r, w in zip(rows, whys)]
        df = df.filter(pl.col("_ok"))
    return df.drop([c for c in ("_row", "_problem", "_ok") if c in df.columns]), skipped


def check_host_calls(path, api, *, strict: bool, where, notes: list[str]):
    """Host calls with damaged times: an error (strict) or dropped with a note (lenient; host
    calls only place idle time, they are not counted as the input's records)."""
    if api is None or not api.height:
        return api
    api, skipped = check_records(path, api, strict=strict, where=where, what="host call")
    if skipped:
        notes.append(f"{path}: {len(skipped)} host call(s) with damaged times left out, e.g. {skipped[0].item}: "
                     f"{skipped[0].reason}")
    return api if api.height else api.clear()
