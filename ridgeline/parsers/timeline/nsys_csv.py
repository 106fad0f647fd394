"""``nsys stats`` CSV reports (a ``cuda_gpu_trace`` timeline or per-name summaries) -> TIMELINE /
TIMELINE_TOTALS tables (see :mod:`ridgeline.parsers.timeline.reader` for the formats and their detection).

Summaries read (header -> report):

* ``Time (%),Total Time (ns),Instances,...,Name``: ``cuda_gpu_kern_sum``; the Nsight Systems GUI's
  "CUDA GPU Kernel Summary" export writes the same table as ``Time,Total Time,Instances,Avg,...,Name``
  with human units in the cells (``48.30%``, ``102.664 s``, ``5.819 μs``): read as the same report.
* ``cuda_api_sum``, ``cuda_gpu_mem_time_sum``, ``nvtx_sum``: ``Time (%)``, ``Total Time`` and a count.
* ``cuda_kern_exec_sum`` (``PID,TID,DevId,Count,QCount,TAvg (ns),...,AAvg (ns),...,QAvg (ns),...,
  KAvg (ns),...,API Name,Kernel Name``): per kernel and launching thread, the launch API time (A),
  the time queued before the kernel starts (Q) and the kernel time (K), averaged over ``Count``
  launches. Kernel totals are ``Count x KAvg`` (category ``kernel``); the launch API totals
  ``Count x AAvg`` per API name (category ``api``); shares are of the file's kernel (API) total.

Times are strict: a header unit (``(ns)``, ``(us)``...) scales bare numbers, a cell's own unit
(``ns``, ``us``, ``μs``, ``µs``, ``ms``, ``s``) scales that cell, and any other unit is an
InputError naming the line and column (never a silently missing number).
"""

from __future__ import annotations

from ridgeline.result import path_label

import re
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.paths import polars_path
from ridgeline.parsers.timeline.common import (
    _COPY_WORDS,
    HEAD,
    TimelineTables,
    _dims_and_kinds,
    _empty_activities,
    _finish_activities,
    check_records,
    pytorch_capture,
)

STATS_REPORTS = {
    # header set -> (report, category of the totals)
    "cuda_gpu_kern_sum": ({"Time (%)", "Instances", "Name"}, "kernel"),
    "cuda_api_sum": ({"Time (%)", "Num Calls", "Name"}, "api"),
    "cuda_gpu_mem_time_sum": ({"Time (%)", "Count", "Operation"}, "memory"),
    "nvtx_sum": ({"Time (%)", "Instances", "Range"}, "nvtx"),
    "cuda_kern_exec_sum": ({"Count", "QCount", "API Name", "Kernel Name"}, "kernel"),
}



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
    if "Time" in cols and "Total Time" in cols:  # the GUI's summary export: 'Time' holds the percentage
        cols.add("Time (%)")
    if {"Name"} <= cols and any(c.startswith("Start") for c in cols) and any(c.startswith("Duration") for c in cols) \
            and ("CorrId" in cols or "Strm" in cols or "Device" in cols):
        return "cuda_gpu_trace"
    for report, (need, _cat) in STATS_REPORTS.items():
        if report == "cuda_kern_exec_sum":
            if need <= cols and any(c.startswith("KAvg") for c in cols):
                return report
        elif need <= cols and any(c.startswith("Total Time") for c in cols):
            return report
    return None



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


#: a cell written as a number and a unit ('1.5 ms', '48.30%' is not one: '%' is not a letter)
_CELL_UNIT_RE = r"^[-+0-9.eE]+\s*([^\s0-9.+-][^\s]*)$"


def check_units(path, df, cols, first_data_line: int | None) -> None:
    """Raise an InputError for the first cell of ``cols`` whose unit is not a time unit we know
    (or whose column header names an unknown unit), naming its line and column."""
    import polars as pl

    for col in cols:
        if col is None:
            continue
        hu = _header_unit(col)
        if hu is not None and hu not in _UNIT_NS:
            raise InputError(path, f"expected a time unit in the header ({', '.join(_UNIT_NS)})", column=col,
                             actual=hu, line=first_data_line - 1 if first_data_line else None)
        text = pl.col(col).cast(pl.String).str.strip_chars().str.replace_all(",", "", literal=True)
        unit = text.str.extract(_CELL_UNIT_RE, 1)
        bad = df.with_row_index("_row").filter(unit.is_not_null() & ~unit.is_in(list(_UNIT_NS))).head(1)
        if bad.height:
            row = bad.row(0, named=True)
            line = first_data_line + row["_row"] if first_data_line else None
            raise InputError(path, f"expected a time with a known unit ({', '.join(_UNIT_NS)})", line=line, column=col,
                             actual=row[col])


def _header_unit(name: str) -> str | None:
    m = re.search(r"\(([^)]*)\)\s*$", name)
    return m.group(1).strip() if m else None


def _find(cols: list[str], prefix: str) -> str | None:
    return next((c for c in cols if c == prefix or c.startswith(prefix + " (")), None)


def read_nsys_stats(path, report: str, *, strict: bool = True) -> TimelineTables:
    """An nsys stats CSV -> TimelineTables. ``cuda_gpu_trace`` rows are records: a damaged one (a
    cell that is not a time, an end before its start, a negative copy size, a Device without its
    ``(N)`` index...) is an error naming the line (strict) or skipped and listed (lenient; see
    :func:`ridgeline.parsers.timeline.common.check_records`)."""
    import polars as pl

    src = path_label(path)  # a file name that is not UTF-8, escaped (ridgeline.result.path_label)
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
        df = pl.read_csv(polars_path(source), infer_schema=False, truncate_ragged_lines=True)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError, OSError) as err:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected an Nsight Systems stats CSV ({report}), got {plain_reason(err)}") from err
    df = df.rename({c: c.strip() for c in df.columns})
    cols = df.columns
    first_data_line = (found[0] if found else 0) + 2  # 1-based: the line after the header
    if report != "cuda_gpu_trace":
        out = _stats_totals(path, df, report, first_data_line, strict=strict, whole_file=not (found and found[0] > 0))
        out.notes = notes + out.notes
        if not df.height:  # a header and nothing else: said, never an empty analysis
            from ridgeline.parsers.timeline.holdings import judge

            out.notes.append(judge({}, events=0, tool="nsys", unit="data row").note(path))
        return out
    start, dur = _find(cols, "Start"), _find(cols, "Duration")
    if start is None or dur is None or "Name" not in cols:
        raise InputError(path, "expected nsys cuda_gpu_trace columns Start, Duration and Name", actual=",".join(cols[:6]))
    check_units(path, df, [start, dur], first_data_line)
    dev_text = pl.col("Device").cast(pl.String) if "Device" in cols else pl.lit(None, dtype=pl.String)
    name = pl.col("Name").cast(pl.String)
    is_copy = name.str.contains(r"(?i)^\[CUDA memcpy")
    is_set = name.str.contains(r"(?i)^\[CUDA memset")
    kind = pl.when(is_copy).then(pl.lit("memcpy")).when(is_set).then(pl.lit("memset")).otherwise(pl.lit("kernel"))
    words = name.str.extract(r"(?i)memcpy\s+([A-Za-z\-]+)", 1).str.to_lowercase()
    copy_kind = pl.when(is_copy).then(words.replace_strict(_COPY_WORDS, default="other", return_dtype=pl.String))

    def num(c, dtype=pl.Int64):
        if c not in cols:
            return pl.lit(None, dtype=dtype)
        v = pl.col(c).cast(pl.String).str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False)
        return v if dtype == pl.Float64 else pl.when(v.abs() < 2.0**62).then(v).cast(dtype)  # no int64 overflow

    start_ns = _ns_expr(start, _header_unit(start))
    dur_ns = _ns_expr(dur, _header_unit(dur))
    byte_col = _find(cols, "Bytes")
    bytes_expr = pl.lit(None, dtype=pl.Int64)
    if byte_col:
        scale = {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9}.get(_header_unit(byte_col) or "B", 1)
        raw_bytes = num(byte_col, pl.Float64) * scale
        bytes_expr = pl.when(raw_bytes.abs() < 2.0**62).then(raw_bytes.round(0)).cast(pl.Int64)
    dev_index = dev_text.str.extract(r"\((\d+)\)\s*$", 1).cast(pl.Int64, strict=False)
    given = lambda c: pl.col(c).cast(pl.String).str.strip_chars().fill_null("") != ""  # noqa: E731
    problem = (pl.when(given(start) & start_ns.is_null()).then(pl.format("{} is {}", pl.lit(start), pl.col(start).cast(pl.String)))
               .when(given(dur) & dur_ns.is_null()).then(pl.format("{} is {}", pl.lit(dur), pl.col(dur).cast(pl.String))))
    problem = problem.when(~given("Name")).then(pl.lit("no Name (a row cut short?)"))
    if "Device" in cols:
        problem = problem.when(~given("Device")).then(pl.lit("no Device")).when(dev_index.is_null()).then(
            pl.format("Device {} names no GPU index '(N)'", pl.col("Device").cast(pl.String)))
    if byte_col:
        problem = problem.when(given(byte_col) & bytes_expr.is_null()).then(
            pl.format("{} is {}", pl.lit(byte_col), pl.col(byte_col).cast(pl.String)))
    out = df.with_row_index("_row").select(
        pl.col("_row").cast(pl.Int64),
        problem.otherwise(pl.lit(None, dtype=pl.String)).alias("_problem"),
        kind.alias("kind"),
        dev_index.alias("device"),
        dev_text.str.replace(r"\s*\(\d+\)\s*$", "").alias("device_name"),
        num("Strm").alias("stream"),
        start_ns.alias("start_ns"),
        (start_ns + dur_ns).alias("end_ns"),
        name.alias("name"),
        num("CorrId").alias("correlation_id"),
        *[num(c).alias(a) for c, a in (("GrdX", "grid_x"), ("GrdY", "grid_y"), ("GrdZ", "grid_z"),
                                        ("BlkX", "block_x"), ("BlkY", "block_y"), ("BlkZ", "block_z"))],
        copy_kind.alias("copy_kind"),
        bytes_expr.alias("bytes"),
    )
    # a quoted newline in a name shifts line numbers: rows are then named by their data row number
    multiline = df.select(pl.any_horizontal(pl.col(c).cast(pl.String).str.contains("\n").any() for c in cols)).item()
    where = (lambda r: f"data row {r + 1}") if multiline else (lambda r: f"line {first_data_line + r}")
    out, skipped = check_records(path, out, strict=strict, where=where)
    out = out.with_columns(pl.col("start_ns").round(0).cast(pl.Int64), pl.col("end_ns").round(0).cast(pl.Int64))
    out = _dims_and_kinds(out)
    acts = _finish_activities(out, src, {})
    if not acts.height:  # a header and nothing else (or only damaged rows): said, never an empty analysis
        from ridgeline.parsers.timeline.holdings import judge

        notes.append(judge({}, events=0, skipped=len(skipped), tool="nsys", unit="data row").note(path))
    return TimelineTables(src, "nsys-stats:cuda_gpu_trace", acts, notes=notes, skipped=skipped, vendor="nvidia",
                          framework=pytorch_capture(acts))


def _count_expr(col: str):
    import polars as pl

    return pl.col(col).cast(pl.String).str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False).cast(pl.Int64)


def _stats_totals(path, df, report: str, first_data_line: int | None = None, strict: bool = True,
                  whole_file: bool = True) -> TimelineTables:
    import polars as pl

    from ridgeline.analyzer.schema import TIMELINE_TOTALS_COLUMNS, polars_schema

    src = path_label(path)  # a file name that is not UTF-8, escaped (ridgeline.result.path_label)
    cols = df.columns
    _need, category = STATS_REPORTS[report]
    if report == "cuda_kern_exec_sum":
        tot = _kern_exec_totals(path, df, first_data_line)
    else:
        total = _find(cols, "Total Time")
        share = "Time (%)" if "Time (%)" in cols else "Time"
        check_units(path, df, [total], first_data_line)
        count = next((c for c in ("Instances", "Num Calls", "Count") if c in cols), None)
        name = next((c for c in ("Name", "Operation", "Range") if c in cols), None)
        tot = df.select(
            pl.lit(src).alias("source"),
            pl.lit(report).alias("report"),
            pl.lit(category).alias("category"),
            pl.col(name).cast(pl.String).alias("name"),
            (_ns_expr(total, _header_unit(total)) / 1e9).alias("total_s"),
            _count_expr(count).alias("count"),
            (pl.col(share).cast(pl.String).str.replace_all("%", "", literal=True).str.strip_chars()
             .cast(pl.Float64, strict=False) / 100).alias("time_share"),
        )
    if strict:  # a cut last row or a total that is not a number: never read as if fine
        from ridgeline.parsers.timeline.nsys_stats_checks import check_cut_last_row, check_total_cells

        if whole_file:  # the CSV is the whole file (saved terminal output ends elsewhere)
            check_cut_last_row(path, len(cols))
        if report != "cuda_kern_exec_sum":
            check_total_cells(path, df, total, tot.get_column("total_s"), first_data_line)
            if share in cols:
                check_total_cells(path, df, share, tot.get_column("time_share"), first_data_line)
    if category == "kernel":
        from ridgeline.names import short_name

        kernel_names = tot.filter(pl.col("category") == "kernel").get_column("name")
        mapping = {n: short_name(n) for n in kernel_names.drop_nulls().unique().to_list()}
        tot = tot.with_columns(short_name=pl.when(pl.col("category") == "kernel")
                               .then(pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String))
                               .otherwise(pl.col("name")))
    else:
        tot = tot.with_columns(short_name=pl.col("name"))
    schema = polars_schema(TIMELINE_TOTALS_COLUMNS)
    tot = tot.select([pl.col(c).cast(t) for c, t in schema.items()])
    notes = [f"{path}: nsys stats {report} holds totals only: time per name, no timeline; busy/idle, gaps and "
             "per-device figures need cuda_gpu_trace (nsys stats -r cuda_gpu_trace) or the sqlite export"]
    if "Time" in cols and "Time (%)" not in cols:
        notes.append(f"{path}: read as {report}: the Nsight Systems GUI's 'CUDA GPU Kernel Summary' export (human units)")
    return TimelineTables(src, f"nsys-stats:{report}", _empty_activities(), totals=tot, notes=notes, vendor="nvidia")


def _kern_exec_totals(path, df, first_data_line):
    """cuda_kern_exec_sum -> kernel totals (Count x KAvg) and launch API totals (Count x AAvg per
    API name); time_share: of the file's kernel (API) total."""
    import polars as pl

    cols = df.columns
    kavg, aavg = _find(cols, "KAvg"), _find(cols, "AAvg")
    check_units(path, df, [kavg, aavg], first_data_line)
    src = path_label(path)  # a file name that is not UTF-8, escaped (ridgeline.result.path_label)
    count = _count_expr("Count")
    kern = df.select(
        pl.col("Kernel Name").cast(pl.String).alias("name"),
        (count * _ns_expr(kavg, _header_unit(kavg)) / 1e9).alias("total_s"),
        count.alias("count"),
    ).with_columns(category=pl.lit("kernel"))
    parts = [kern]
    if aavg is not None:
        api = df.select(
            pl.col("API Name").cast(pl.String).alias("name"),
            (count * _ns_expr(aavg, _header_unit(aavg)) / 1e9).alias("total_s"),
            count.alias("count"),
        ).group_by("name", maintain_order=True).agg(pl.col("total_s").sum(), pl.col("count").sum())
        parts.append(api.with_columns(category=pl.lit("api")))
    out = pl.concat(parts, how="diagonal_relaxed")
    return out.with_columns(
        pl.lit(src).alias("source"),
        pl.lit("cuda_kern_exec_sum").alias("report"),
        (pl.col("total_s") / pl.col("total_s").sum().over("category")).alias("time_share"),
    )
