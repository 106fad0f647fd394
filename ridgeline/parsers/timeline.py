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
* Kineto Chrome traces (``.json``, ``.json.gz``, detected by ``traceEvents`` in the head):
  ``cat`` ``kernel``, ``gpu_memcpy``, ``gpu_memset`` -> activities (``ts``/``dur`` in
  microseconds, ``args.device/stream/correlation/grid/block``), ``cuda_runtime`` and
  ``cuda_driver`` -> host calls, ``cpu_op`` -> host ops (kind ``cpu_op``);
  ``deviceProperties`` names the GPUs. A trace without GPU events is read (a note says so).
* ``.nsys-rep``/``.qdrep`` reports need the nsys binary: an InputError naming
  ``nsys export --type sqlite``.

Times are integers in nanoseconds on the capture's own clock (nsys: ns since session start;
Kineto: the trace's microsecond timestamps x 1000).
"""

from __future__ import annotations

import dataclasses
import gzip
import re
from pathlib import Path
from typing import Any

from ridgeline.analyzer.schema import SYNC_CALLS, SYNC_RE
from ridgeline.errors import InputError
from ridgeline.result import Skipped

SQLITE_MAGIC = b"SQLite format 3\x00"
NSYS_REP_MAGICS = (b"NVIDIA Tegra Profiler Report", b"NVIDIA Nsight Systems")
HEAD = 1 << 16

#: CUPTI memcpy kinds (CUpti_ActivityMemcpyKind), as nsys stores them
COPY_KINDS = {0: "other", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
              9: "HtoH", 10: "PtoP", 11: "HtoD"}
_COPY_WORDS = {"host-to-device": "HtoD", "device-to-host": "DtoH", "device-to-device": "DtoD", "peer-to-peer": "PtoP",
               "host-to-host": "HtoH", "htod": "HtoD", "dtoh": "DtoH", "dtod": "DtoD", "ptop": "PtoP"}

STATS_REPORTS = {
    # header set -> (report, category of the totals)
    "cuda_gpu_kern_sum": ({"Time (%)", "Instances", "Name"}, "kernel"),
    "cuda_api_sum": ({"Time (%)", "Num Calls", "Name"}, "api"),
    "cuda_gpu_mem_time_sum": ({"Time (%)", "Count", "Operation"}, "memory"),
    "nvtx_sum": ({"Time (%)", "Instances", "Range"}, "nvtx"),
}


@dataclasses.dataclass
class TimelineTables:
    """What a timeline reader returns for one file.

    ``activities``: TIMELINE table (GPU kernels, copies, memsets); ``api``: HOST_API table or
    None; ``totals``: TIMELINE_TOTALS table (nsys stats summaries) or None; ``devices``:
    device index -> name; ``kind``: input kind for the inputs list.
    """

    source: str
    kind: str
    activities: Any
    api: Any = None
    totals: Any = None
    devices: dict[int, str] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    skipped: list[Skipped] = dataclasses.field(default_factory=list)
    host_calls_total: int = 0  # host calls in the file (HOST_API may hold only the synchronizing ones)


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


def _csv_header(head: bytes) -> list[str] | None:
    """The first line of the head that is an nsys stats header (within the first 40 non-blank
    lines: `nsys stats` output saved from a terminal starts with its own messages)."""
    found = _stats_header_line(head)
    return found[1] if found else None


def _stats_header_line(head: bytes, max_lines: int = 40):
    """(0-based line index, header fields) of the first nsys stats header line, or None."""
    import csv

    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    seen = 0
    for i, line in enumerate(text.splitlines()):
        if not line.strip():
            continue
        seen += 1
        if seen > max_lines:
            break
        try:
            fields = [c.strip() for c in next(csv.reader([line]))]
        except (csv.Error, StopIteration):
            continue
        if _stats_report(fields):
            return i, fields
    return None


def _stats_report(header: list[str]) -> str | None:
    cols = set(header)
    if {"Name"} <= cols and any(c.startswith("Start") for c in cols) and any(c.startswith("Duration") for c in cols) \
            and ("CorrId" in cols or "Strm" in cols or "Device" in cols):
        return "cuda_gpu_trace"
    for report, (need, _cat) in STATS_REPORTS.items():
        if need <= cols and any(c.startswith("Total Time") for c in cols):
            return report
    return None


def detect_timeline_format(path) -> str | None:
    """``nsys-sqlite``, ``nsys-stats:<report>``, ``kineto`` or None."""
    head = _head(path)
    if not head:
        return None
    if head.startswith(SQLITE_MAGIC):
        return "nsys-sqlite" if _is_nsys_sqlite(path) else None
    stripped = head.lstrip()
    if stripped.startswith(b"{") and (b'"traceEvents"' in head or b'"schemaVersion"' in head
                                       or b'"deviceProperties"' in head):
        return "kineto"
    if b"\x00" in head[:4096]:
        return None
    header = _csv_header(head)
    if header:
        report = _stats_report(header)
        if report:
            return "nsys-stats:" + report
    return None


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


def _connect(path):
    import sqlite3

    return sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)


def _tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _is_nsys_sqlite(path) -> bool:
    import sqlite3

    try:
        con = _connect(path)
        try:
            names = _tables(con)
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return "StringIds" in names and (any(n.startswith("CUPTI_ACTIVITY_KIND_") for n in names)
                                     or "EXPORT_META_DATA" in names or "META_DATA_EXPORT" in names)


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


def _finish_api(df, source: str):
    import polars as pl

    from ridgeline.analyzer.schema import HOST_API_COLUMNS, polars_schema

    schema = polars_schema(HOST_API_COLUMNS)
    for c, t in schema.items():
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=t).alias(c))
    df = df.with_columns(pl.lit(source).alias("source"))
    return df.select([pl.col(c).cast(t) for c, t in schema.items()]).sort("start_ns")


# ======================================================================================
# nsys sqlite
# ======================================================================================
def _select(con, sql: str, batch: int = 100_000):
    """One SELECT into polars, fetched in batches (each batch's Python rows are dropped once it is
    a polars frame, so peak memory holds one batch of Python objects, not the whole table)."""
    import polars as pl

    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    frames = []
    while True:
        rows = cur.fetchmany(batch)
        if not rows:
            break
        cols = list(zip(*rows))
        del rows
        frames.append(pl.DataFrame({n: list(c) for n, c in zip(names, cols)}, strict=False))
        del cols
    if not frames:
        return pl.DataFrame({n: [] for n in names})
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical_relaxed")


def read_nsys_sqlite(path, *, host_calls: str = "all") -> TimelineTables:
    """``host_calls``: ``"all"`` runtime API calls in HOST_API, or ``"sync"``: only the synchronizing
    ones (:data:`ridgeline.analyzer.timeline.SYNC_CALLS`, all the analysis reads; the pipeline's
    choice, since a capture holds about one runtime call per kernel)."""
    import sqlite3

    import polars as pl

    src = str(path)
    try:
        con = _connect(path)
        names = _tables(con)
    except sqlite3.Error as err:
        raise InputError(path, f"expected a readable Nsight Systems sqlite export ({err})") from err
    notes: list[str] = []
    try:
        meta = "META_DATA_EXPORT" if "META_DATA_EXPORT" in names else ("EXPORT_META_DATA" if "EXPORT_META_DATA" in names else None)
        version = None
        if meta:
            got = dict(con.execute(f"SELECT name, value FROM {meta}").fetchall())
            version = got.get("EXPORT_PRODUCT_VERSION")
        devices: dict[int, str] = {}
        if "TARGET_INFO_GPU" in names:
            devices = {int(i): n for i, n in con.execute("SELECT id, name FROM TARGET_INFO_GPU") if i is not None}
        parts = []
        # no per-row strings from sqlite: names come as StringIds ids and are joined in polars
        if "CUPTI_ACTIVITY_KIND_KERNEL" in names:
            cols = {r[1] for r in con.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")}
            name_col = "demangledName" if "demangledName" in cols else "shortName"
            k = _select(con, f"""
                SELECT deviceId AS device, streamId AS stream, start AS start_ns, end AS end_ns,
                       {name_col} AS name_id, correlationId AS correlation_id,
                       gridX AS grid_x, gridY AS grid_y, gridZ AS grid_z, blockX AS block_x, blockY AS block_y,
                       blockZ AS block_z, globalPid / 16777216 % 16777216 AS process_id
                FROM CUPTI_ACTIVITY_KIND_KERNEL""")
            if k.height:
                ids = _select(con, f"""SELECT id AS name_id, value AS name FROM StringIds
                                      WHERE id IN (SELECT DISTINCT {name_col} FROM CUPTI_ACTIVITY_KIND_KERNEL)""")
                k = k.join(ids.with_columns(pl.col("name_id").cast(pl.Int64)),
                           on="name_id", how="left", maintain_order="left").drop("name_id")
                parts.append(k.with_columns(kind=pl.lit("kernel")))
        for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
            if table in names:
                kind_col = "copyKind AS copy_kind_id," if kind == "memcpy" else ""
                part = _select(con, f"""
                    SELECT deviceId AS device, streamId AS stream, start AS start_ns, end AS end_ns,
                           correlationId AS correlation_id, {kind_col} bytes,
                           globalPid / 16777216 % 16777216 AS process_id
                    FROM {table}""")
                parts.append(part.with_columns(kind=pl.lit(kind)))
        api = None
        host_total = 0
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in names:
            host_total = con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
            where = ""
            if host_calls == "sync":  # the calls the analysis uses; LIKE is a superset, the regex below exact
                likes = " OR ".join(f"value LIKE '{n}%'" for n in SYNC_CALLS)
                where = f"WHERE r.nameId IN (SELECT id FROM StringIds WHERE {likes})"
            api = _select(con, f"""
                SELECT r.start AS start_ns, r.end AS end_ns, s.value AS name,
                       r.correlationId AS correlation_id, r.globalTid / 16777216 % 16777216 AS process_id,
                       r.globalTid % 16777216 AS thread_id
                FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds s ON s.id = r.nameId {where}""")
            if not api.height:
                api = None
            else:
                api = api.with_columns(kind=pl.lit("runtime"))
                if host_calls == "sync":
                    api = api.filter(pl.col("name").cast(pl.String).str.contains(SYNC_RE))
    except sqlite3.Error as err:
        raise InputError(path, f"expected a readable Nsight Systems sqlite export ({err})") from err
    finally:
        con.close()
    parts = [p for p in parts if p.height]
    if parts:
        df = pl.concat(parts, how="diagonal_relaxed")
        df = _dims_and_kinds(df)
        acts = _finish_activities(df, src, devices)
    else:
        acts = _empty_activities()
        notes.append(f"{path}: the export holds no GPU kernel, memcpy or memset rows (was CUDA traced? nsys -t cuda)")
    if version:
        notes.append(f"{path}: Nsight Systems {version} sqlite export")
    return TimelineTables(src, "nsys-sqlite", acts, api=_finish_api(api, src) if api is not None and api.height else None,
                          devices=devices, notes=notes, host_calls_total=host_total)


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
# nsys stats CSV
# ======================================================================================
_UNIT_NS = {"ns": 1.0, "us": 1e3, "μs": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


def _ns_expr(col: str, header_unit: str | None):
    """Cells -> float ns: a header unit ('Start (ns)') scales bare numbers; cells with their own
    unit ('1.5 ms', GUI exports) use it; grouping commas are removed."""
    import polars as pl

    text = pl.col(col).cast(pl.String).str.strip_chars().str.replace_all(",", "", literal=True)
    num = text.str.extract(r"^([-+0-9.eE]+)", 1).cast(pl.Float64, strict=False)
    unit = text.str.extract(r"^[-+0-9.eE]+\s*([a-zA-Zμµ]+)$", 1)
    factor = unit.replace_strict(_UNIT_NS, default=None, return_dtype=pl.Float64)
    base = _UNIT_NS.get(header_unit or "ns", 1.0)
    return pl.when(unit.is_null()).then(num * base).otherwise(num * factor)


def _header_unit(name: str) -> str | None:
    m = re.search(r"\(([^)]*)\)\s*$", name)
    return m.group(1).strip() if m else None


def _find(cols: list[str], prefix: str) -> str | None:
    return next((c for c in cols if c == prefix or c.startswith(prefix + " (")), None)


def read_nsys_stats(path, report: str) -> TimelineTables:
    import polars as pl

    src = str(path)
    notes: list[str] = []
    source = path
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD)
        found = _stats_header_line(head)
        if found and found[0] > 0:  # saved terminal output: messages before the CSV, maybe other reports after
            lines = Path(path).read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()
            block = []
            for line in lines[found[0]:]:
                if not line.strip():
                    break
                block.append(line)
            rest = sum(1 for line in lines[found[0] + len(block):] if line.strip())
            notes.append(f"{path}: {found[0]} line(s) before the {report} table ignored"
                         + (f", {rest} non-blank line(s) after it too (only the first report is read)" if rest else ""))
            source = "\n".join(block).encode("utf-8")
        df = pl.read_csv(source, infer_schema=False, truncate_ragged_lines=True)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError, OSError) as err:
        raise InputError(path, f"expected an nsys stats CSV ({str(err).strip().splitlines()[0][:100]})") from err
    df = df.rename({c: c.strip() for c in df.columns})
    cols = df.columns
    if report != "cuda_gpu_trace":
        out = _stats_totals(path, df, report)
        out.notes = notes + out.notes
        return out
    start, dur = _find(cols, "Start"), _find(cols, "Duration")
    if start is None or dur is None or "Name" not in cols:
        raise InputError(path, "expected nsys cuda_gpu_trace columns Start, Duration and Name", actual=",".join(cols[:6]))
    dev_text = pl.col("Device").cast(pl.String) if "Device" in cols else pl.lit(None, dtype=pl.String)
    name = pl.col("Name").cast(pl.String)
    is_copy = name.str.contains(r"(?i)^\[CUDA memcpy")
    is_set = name.str.contains(r"(?i)^\[CUDA memset")
    kind = pl.when(is_copy).then(pl.lit("memcpy")).when(is_set).then(pl.lit("memset")).otherwise(pl.lit("kernel"))
    words = name.str.extract(r"(?i)memcpy\s+([A-Za-z\-]+)", 1).str.to_lowercase()
    copy_kind = pl.when(is_copy).then(words.replace_strict(_COPY_WORDS, default="other", return_dtype=pl.String))

    def num(c, dtype=pl.Int64):
        return pl.col(c).cast(pl.String).str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False).cast(dtype) \
            if c in cols else pl.lit(None, dtype=dtype)

    start_ns = _ns_expr(start, _header_unit(start))
    dur_ns = _ns_expr(dur, _header_unit(dur))
    byte_col = _find(cols, "Bytes")
    bytes_expr = pl.lit(None, dtype=pl.Int64)
    if byte_col:
        scale = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(_header_unit(byte_col) or "B", 1)
        bytes_expr = (num(byte_col, pl.Float64) * scale).round(0).cast(pl.Int64)
    out = df.select(
        kind.alias("kind"),
        dev_text.str.extract(r"\((\d+)\)\s*$", 1).cast(pl.Int64, strict=False).alias("device"),
        dev_text.str.replace(r"\s*\(\d+\)\s*$", "").alias("device_name"),
        num("Strm").alias("stream"),
        start_ns.round(0).cast(pl.Int64).alias("start_ns"),
        (start_ns + dur_ns).round(0).cast(pl.Int64).alias("end_ns"),
        name.alias("name"),
        num("CorrId").alias("correlation_id"),
        *[num(c).alias(a) for c, a in (("GrdX", "grid_x"), ("GrdY", "grid_y"), ("GrdZ", "grid_z"),
                                        ("BlkX", "block_x"), ("BlkY", "block_y"), ("BlkZ", "block_z"))],
        copy_kind.alias("copy_kind"),
        bytes_expr.alias("bytes"),
    )
    bad = out.filter(pl.col("start_ns").is_null() | pl.col("end_ns").is_null())
    skipped = []
    if bad.height:
        skipped.append(Skipped(src, f"{bad.height} row(s)", "Start or Duration not a time; ignored"))
        out = out.filter(pl.col("start_ns").is_not_null() & pl.col("end_ns").is_not_null())
    out = _dims_and_kinds(out)
    acts = _finish_activities(out, src, {})
    return TimelineTables(src, "nsys-stats:cuda_gpu_trace", acts, notes=notes, skipped=skipped)


def _stats_totals(path, df, report: str) -> TimelineTables:
    import polars as pl

    from ridgeline.analyzer.schema import TIMELINE_TOTALS_COLUMNS, polars_schema

    src = str(path)
    cols = df.columns
    _need, category = STATS_REPORTS[report]
    total = _find(cols, "Total Time")
    count = next((c for c in ("Instances", "Num Calls", "Count") if c in cols), None)
    name = next((c for c in ("Name", "Operation", "Range") if c in cols), None)
    tot = df.select(
        pl.lit(src).alias("source"),
        pl.lit(report).alias("report"),
        pl.lit(category).alias("category"),
        pl.col(name).cast(pl.String).alias("name"),
        (_ns_expr(total, _header_unit(total)) / 1e9).alias("total_s"),
        pl.col(count).cast(pl.String).str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False)
        .cast(pl.Int64).alias("count"),
        (pl.col("Time (%)").cast(pl.String).str.replace_all("%", "", literal=True).str.strip_chars()
         .cast(pl.Float64, strict=False) / 100).alias("time_share"),
    )
    if category == "kernel":
        from ridgeline.names import short_name

        mapping = {n: short_name(n) for n in tot.get_column("name").drop_nulls().unique().to_list()}
        tot = tot.with_columns(short_name=pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String))
    else:
        tot = tot.with_columns(short_name=pl.col("name"))
    schema = polars_schema(TIMELINE_TOTALS_COLUMNS)
    tot = tot.select([pl.col(c).cast(t) for c, t in schema.items()])
    note = (f"{path}: nsys stats {report} holds totals only: time per name, no timeline; busy/idle, gaps and "
            "per-device figures need cuda_gpu_trace (nsys stats -r cuda_gpu_trace) or the sqlite export")
    return TimelineTables(src, f"nsys-stats:{report}", _empty_activities(), totals=tot, notes=[note])


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


def _kineto_frames(events, host_calls: str):
    """One batch of trace events -> (GPU frame, host frame, host events seen); raw columns, ts/dur in us."""
    import polars as pl

    gpu_schema, host_schema = _kineto_schemas()
    gpu = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in _GPU_CATS]
    host = [e for e in events if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") in _HOST_CATS]
    host_seen = len(host)
    if host_calls == "sync":
        sync = re.compile(SYNC_RE)
        host = [e for e in host if e["cat"] in ("cuda_runtime", "cuda_driver", "Runtime")
                and isinstance(e.get("name"), str) and sync.match(e["name"])]

    def arg(e, k):
        a = e.get("args")
        return a.get(k) if isinstance(a, dict) else None

    def dim(e, k, i):
        v = arg(e, k)
        return v[i] if isinstance(v, list) and len(v) > i else None

    def pid(e):
        return e.get("pid") if isinstance(e.get("pid"), int) else None

    g = None
    if gpu:
        g = pl.DataFrame({
            "kind": [_GPU_CATS[e["cat"]] for e in gpu],
            # Kineto puts the device in args.device; GPU events' pid is the device index too
            "device": [arg(e, "device") if arg(e, "device") is not None else pid(e) for e in gpu],
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
            "kind": [_HOST_CATS[e["cat"]] for e in host],
            "ts": [e.get("ts") for e in host], "dur": [e.get("dur") for e in host],
            "name": [e.get("name") for e in host],
            "correlation_id": [arg(e, "correlation") for e in host],
            "process_id": [pid(e) for e in host],
            "thread_id": [e.get("tid") if isinstance(e.get("tid"), int) else None for e in host],
        }, schema=host_schema, strict=False)
    return g, h, host_seen


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
    gpus, hosts, host_total = [], [], 0
    with _open_stream(path) as fh:
        buf = b""
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
            host_total += n
            if g is not None:
                gpus.append(g)
            if h is not None:
                hosts.append(h)
    # the end: the remaining events, ']', then the rest of the top-level object
    tail_events, suffix = _last_events(buf)
    g, h, n = _kineto_frames(tail_events, host_calls)
    host_total += n
    if g is not None:
        gpus.append(g)
    if h is not None:
        hosts.append(h)
    meta = _loads(prefix + b'"traceEvents": []' + suffix)
    if not isinstance(meta, dict):
        raise _NotStreamable("top level is not an object")
    return meta, gpus, hosts, host_total


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
            meta, gpus, hosts, host_total = _kineto_stream(path, host_calls, chunk_bytes)
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
            raise InputError(path, f"expected JSON (a PyTorch profiler trace); the file looks truncated or corrupt ({str(err)[:80]})") from err
        del raw
        if not isinstance(meta, dict) or not isinstance(meta.get("traceEvents"), list):
            raise InputError(path, "expected a PyTorch profiler trace (a JSON object with a traceEvents list)")
        g, h, host_total = _kineto_frames(meta.pop("traceEvents"), host_calls)
        gpus, hosts = [x for x in (g,) if x is not None], [x for x in (h,) if x is not None]
    devices = {}
    for d in meta.get("deviceProperties") or []:
        if isinstance(d, dict) and d.get("id") is not None:
            devices[int(d["id"])] = d.get("name")
    notes = []
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
    return TimelineTables(src, "kineto", acts, api=api, devices=devices, notes=notes, skipped=skipped,
                          host_calls_total=host_total)


# ======================================================================================
# entry point
# ======================================================================================
def read_timeline(path, *, host_calls: str = "all") -> TimelineTables:
    """Read one timeline file, format detected from its content (``host_calls``: see
    :func:`read_nsys_sqlite`)."""
    if is_nsys_report(path):
        raise nsys_export_error(path)
    kind = detect_timeline_format(path)
    if kind is None:
        raise InputError(path, "expected an Nsight Systems sqlite export, an nsys stats CSV or a PyTorch profiler trace")
    if kind == "nsys-sqlite":
        return read_nsys_sqlite(path, host_calls=host_calls)
    if kind == "kineto":
        return read_kineto(path, host_calls=host_calls)
    return read_nsys_stats(path, kind.split(":", 1)[1])
