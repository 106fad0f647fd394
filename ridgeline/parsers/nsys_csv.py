"""``nsys stats`` CSV reports (a ``cuda_gpu_trace`` timeline or per-name summaries) -> TIMELINE /
TIMELINE_TOTALS tables (see :mod:`ridgeline.parsers.timeline` for the formats and their detection)."""

from __future__ import annotations

import re
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.timeline_common import (
    _COPY_WORDS,
    HEAD,
    TimelineTables,
    _dims_and_kinds,
    _empty_activities,
    _finish_activities,
)
from ridgeline.result import Skipped

STATS_REPORTS = {
    # header set -> (report, category of the totals)
    "cuda_gpu_kern_sum": ({"Time (%)", "Instances", "Name"}, "kernel"),
    "cuda_api_sum": ({"Time (%)", "Num Calls", "Name"}, "api"),
    "cuda_gpu_mem_time_sum": ({"Time (%)", "Count", "Operation"}, "memory"),
    "nvtx_sum": ({"Time (%)", "Instances", "Range"}, "nvtx"),
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
    if {"Name"} <= cols and any(c.startswith("Start") for c in cols) and any(c.startswith("Duration") for c in cols) \
            and ("CorrId" in cols or "Strm" in cols or "Device" in cols):
        return "cuda_gpu_trace"
    for report, (need, _cat) in STATS_REPORTS.items():
        if need <= cols and any(c.startswith("Total Time") for c in cols):
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
        from ridgeline.parsers.ncu import short_name

        mapping = {n: short_name(n) for n in tot.get_column("name").drop_nulls().unique().to_list()}
        tot = tot.with_columns(short_name=pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String))
    else:
        tot = tot.with_columns(short_name=pl.col("name"))
    schema = polars_schema(TIMELINE_TOTALS_COLUMNS)
    tot = tot.select([pl.col(c).cast(t) for c, t in schema.items()])
    note = (f"{path}: nsys stats {report} holds totals only: time per name, no timeline; busy/idle, gaps and "
            "per-device figures need cuda_gpu_trace (nsys stats -r cuda_gpu_trace) or the sqlite export")
    return TimelineTables(src, f"nsys-stats:{report}", _empty_activities(), totals=tot, notes=[note])
