"""The readers' boundary: what a reader returns is checked, what a library raises is translated.

Readers (one module per format) turn a file into a frame. Whatever goes wrong inside them
because of the file's content must reach the user as ridgeline's own one-line
:class:`~ridgeline.errors.InputError` (``FILE[:LINE]: expected ..., got ...``, exit 2), never as
a polars, pyarrow, json or datetime exception (which the CLI treats as a bug, exit 3). This
module does that at the one place every reader is called from:

* :func:`read_guarded` calls a telemetry reader, translates library errors raised on the
  file's behalf, and checks the frame it returns before anything downstream casts it: GPU
  indices in ``0..MAX_GPU_INDEX``, timestamps between :data:`MIN_TIME` and :data:`MAX_TIME`.
* :func:`check_kernels` checks the launch table of the ncu readers: a grid or block that is
  not three whole numbers, a launch ID that did not fit (null where the export had one).
* :func:`library_error` tells a library's complaint about data from a bug of ours.

Kept apart from the readers so their internals can change (speed work) without losing the
guarantees; the tests in ``tests/parsers/test_corpus.py`` and ``tests/parsers/test_fuzz_readers.py`` hold them.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Any, Callable

from ridgeline.errors import InputError, RidgelineError

# a GPU index is small; a value beyond this is a corrupt or foreign file, never a GPU
MAX_GPU_INDEX = 4095
# sample times a capture can plausibly carry (dcgmi dmon without --start is placed at 1970)
MIN_TIME = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
MAX_TIME = _dt.datetime(2200, 1, 1, tzinfo=_dt.timezone.utc)

# modules whose exceptions, raised while reading a file, mean "this data is not what it
# claims to be" rather than "ridgeline has a bug"
_LIBRARY_MODULES = ("polars", "pyarrow", "json", "_strptime", "datetime", "zoneinfo", "csv", "decimal",
                    "sqlite3", "zstandard", "thrift", "fastparquet")


def _innermost_module(err: BaseException) -> str:
    tb = err.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return ""
    filename = last.tb_frame.f_code.co_filename.replace(os.sep, "/")
    return last.tb_frame.f_globals.get("__name__", "") or filename


def library_error(err: BaseException) -> bool:
    """True when ``err`` comes from a library reading data (polars, pyarrow, json...).

    Polars and pyarrow exception classes count wherever raised; ``ValueError``,
    ``OverflowError`` and ``TypeError`` count when raised inside such a library (``int()`` on
    a 5,000-digit string, a datetime out of range) or when they are Unicode/JSON decode errors.
    """
    import json

    if isinstance(err, (UnicodeDecodeError, json.JSONDecodeError, OverflowError)):
        return True
    module = type(err).__module__ or ""
    if module.split(".")[0] in ("polars", "pyarrow", "sqlite3", "_sqlite3", "google", "zstandard", "gzip", "zlib",
                                "lz4"):
        return True
    import gzip
    import sqlite3
    import zlib

    if isinstance(err, (sqlite3.Error, zlib.error, gzip.BadGzipFile, EOFError)):
        return True
    try:
        import pyarrow

        if isinstance(err, pyarrow.ArrowException):
            return True
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pass
    if isinstance(err, (ValueError, TypeError, OSError)):
        where = _innermost_module(err)
        root = where.split(".")[0]
        if root in _LIBRARY_MODULES or "/polars/" in where or "/pyarrow/" in where:
            return True
        if isinstance(err, ValueError) and "integer string conversion" in str(err):
            return True
    return False


def short_reason(err: BaseException) -> str:
    """A library's message on one line, without its advice to the programmer."""
    text = " ".join(str(err).split())
    for cut in (" This error occurred", " You might want to try", " Hint:", "; use sys.set_int_max_str_digits",
                " Resolved plan until failure"):
        if cut in text:
            text = text.split(cut)[0]
    if "parquet" in text.lower() or "thrift" in text.lower() or "zstd" in text.lower():
        text = text.replace("File out of specification: ", "")
    text = text.strip().rstrip(".")
    return text[:157] + "..." if len(text) > 160 else text


def translate(err: BaseException, path: Any, what: str) -> InputError:
    """``err`` (a library's) as ridgeline's one line for ``path`` read as ``what``."""
    p = str(path)
    reason = short_reason(err)
    if str(path).endswith(".parquet") or "parquet" in what or "thrift" in reason.lower():
        return InputError(p, f"expected readable {what}; the file is corrupt or truncated", actual=reason)
    if isinstance(err, OSError) and not isinstance(err, UnicodeDecodeError):
        return InputError(p, f"cannot read it: {getattr(err, 'strerror', None) or reason}")
    return InputError(p, f"expected {what}", actual=reason)


WHAT = {
    "dcgm-dmon": "dcgmi dmon text",
    "dcgm-exporter": "dcgm-exporter scrapes (Prometheus text)",
    "prometheus-json": "Prometheus API JSON",
    "nvidia-smi-csv": "nvidia-smi --query-gpu CSV",
    "nvidia-smi-dmon": "nvidia-smi dmon text",
    "telemetry-csv": "a telemetry CSV table",
    "telemetry-parquet": "telemetry Parquet",
}


def read_guarded(reader: Callable, kind: str, path: Any, *, opts: Any):
    """``reader(path, opts=opts)`` with library errors translated and the frame checked.

    Returns what the reader returns (frame, InputInfo, skipped). Raises InputError only.
    """
    what = WHAT.get(kind, kind)
    try:
        if kind == "nvidia-smi-csv":
            check_smi_query_cells(path)
        elif kind == "telemetry-csv":
            check_table_gpu_cells(path)
        elif kind == "dcgm-exporter":
            check_exporter_gpu_labels(path)
        frame, info, skipped = reader(path, opts=opts)
        check_telemetry_frame(frame, path)
    except RidgelineError:
        raise
    except Exception as err:  # noqa: BLE001 - only library errors are translated; the rest is re-raised
        if library_error(err):
            raise translate(err, path, what) from None
        raise
    return frame, info, skipped


_SMI_MISSING = r"(\[[^\]]*\]|N/A|-|)"
_SMI_NUMBER = r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?"


def check_smi_query_cells(path) -> None:
    """nvidia-smi --query-gpu CSV: every cell of a measured column is a number (with the
    header's unit or none) or a not-reported marker (``[N/A]``, ``[Not Supported]``...);
    ``1.2.3 W`` or ``60abc %`` is an InputError naming line and column (the reader's
    leading-number parse would read them as 1.2 and 60). One streaming pass over the strings."""
    import re

    import polars as pl

    from ridgeline.parsers.dcgm_fields import NVIDIA_SMI_IDENTITY, NVIDIA_SMI_QUERY

    with open(path, encoding="utf-8", errors="replace") as fh:
        header_line = fh.readline()
    header = [h.strip() for h in header_line.rstrip("\r\n").split(",")]
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise InputError(path, "expected each nvidia-smi property once in the header", line=1,
                         actual=f"{dup} twice")
    checks = {}
    for i, h in enumerate(header):
        prop = h.split(" [")[0].strip().lower()
        m = re.search(r"\[([^\]]+)\]", h)
        unit = re.escape(m.group(1)) if m else None
        if NVIDIA_SMI_IDENTITY.get(prop) == "gpu":
            checks[i] = (h, r"^\s*[0-9]{1,4}\s*$", "a GPU index 0..4095")
        elif prop in NVIDIA_SMI_QUERY:
            pattern = rf"^\s*({_SMI_NUMBER}(\s*{unit})?|{_SMI_MISSING})\s*$" if unit else \
                rf"^\s*({_SMI_NUMBER}|{_SMI_MISSING})\s*$"
            checks[i] = (h, pattern, "a number" + (f" in {m.group(1)}" if m else "") + " or [N/A]")
    if not checks:
        return
    lf = pl.scan_csv(path, has_header=True, infer_schema=False, truncate_ragged_lines=True,
                     new_columns=[f"c{i}" for i in range(len(header))]).with_row_index("_line", offset=2)
    names = lf.collect_schema().names()
    bad_any = pl.lit(False)
    for i, (_h, pattern, _what) in checks.items():
        if f"c{i}" in names:
            bad_any = bad_any | ~pl.col(f"c{i}").fill_null("").str.contains(pattern)
    first = lf.filter(bad_any).head(1).collect(engine="streaming")
    if not first.height:
        return
    row = first.row(0, named=True)
    for i, (h, pattern, what) in checks.items():
        value = row.get(f"c{i}")
        if value is not None and not re.search(pattern, value):
            raise InputError(path, f"expected {what}", line=row["_line"], column=h, actual=value.strip())


_GPU_CELL = r"^\s*[0-9]{1,4}\s*$"


def check_table_gpu_cells(path) -> None:
    """Long/wide telemetry CSV: a ``gpu`` (``gpu_index``, ``index``) cell is a GPU index 0..4095
    or empty; ``abc`` or ``18446744073709551616`` is an InputError naming line and column (the
    reader's lenient cast would make it a null GPU). One streaming pass over that column."""
    import polars as pl

    from ridgeline.parsers.telemetry_table import ALIASES

    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        header = [h.strip() for h in fh.readline().rstrip("\r\n").split(",")]
    col = next((i for i, h in enumerate(header) if h.lower() in ALIASES["gpu"]), None)
    if col is None:
        return
    lf = pl.scan_csv(path, has_header=True, infer_schema=False, truncate_ragged_lines=True,
                     new_columns=[f"c{i}" for i in range(len(header))]).with_row_index("_line", offset=2)
    cell = pl.col(f"c{col}")
    first = lf.filter(cell.is_not_null() & (cell.str.strip_chars() != "") & ~cell.str.contains(_GPU_CELL)) \
        .select("_line", cell.alias("v")).head(1).collect(engine="streaming")
    if first.height:
        line, value = first.row(0)
        raise InputError(path, "expected a GPU index 0..4095 (or nothing)", line=line, column=header[col],
                         actual=value)


def check_exporter_gpu_labels(path) -> None:
    """dcgm-exporter text: every ``gpu="..."`` label is a GPU index 0..4095 (``-1`` and ``2^64``
    are InputErrors naming the line, not a null GPU). One streaming pass over the lines."""
    import polars as pl

    lf = pl.scan_csv(path, has_header=False, separator="\x1f", quote_char=None, infer_schema=False,
                     new_columns=["line"], truncate_ragged_lines=True).with_row_index("_line", offset=1)
    label = pl.col("line").str.extract(r'[{,]\s*gpu="([^"]*)"', 1)
    first = lf.filter(~pl.col("line").str.starts_with("#") & label.is_not_null() & (label != "")
                      & ~label.str.contains(_GPU_CELL)) \
        .select("_line", label.alias("v")).head(1).collect(engine="streaming")
    if first.height:
        line, value = first.row(0)
        raise InputError(path, "expected a gpu label 0..4095", line=line, column="gpu", actual=value)


def check_telemetry_frame(frame, path) -> None:
    """GPU indices and timestamps in range, checked on an eager frame before any cast.

    A LazyFrame (Parquet) is checked where it is collected; see :func:`collect_guarded`.
    """
    import polars as pl

    if not isinstance(frame, pl.DataFrame) or not frame.height:
        return
    cols = frame.columns
    if "gpu" in cols and frame.schema["gpu"].is_numeric():
        g = frame.get_column("gpu")
        bad = frame.with_row_index("_i").filter((pl.col("gpu") < 0) | (pl.col("gpu") > MAX_GPU_INDEX))
        if bad.height:
            raise InputError(path, f"expected GPU indices 0..{MAX_GPU_INDEX}", actual=bad.get_column("gpu")[0])
        del g
    if "timestamp" in cols and isinstance(frame.schema["timestamp"], pl.Datetime):
        ts = frame.get_column("timestamp").drop_nulls()
        if ts.len():
            lo_us = int((MIN_TIME - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)).total_seconds() * 1e6)
            hi_us = int((MAX_TIME - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)).total_seconds() * 1e6)
            unit = frame.schema["timestamp"].time_unit or "us"
            scale = {"ns": 1000, "us": 1, "ms": 0.001}[unit]
            raw = ts.dt.epoch(time_unit=unit)
            out = raw.filter((raw < lo_us * scale) | (raw >= hi_us * scale))
            if out.len():
                v = int(out[0] / scale)
                raise InputError(path, f"expected sample times between {MIN_TIME:%Y-%m-%d} and {MAX_TIME:%Y-%m-%d}",
                                 actual=_describe_us(v))


def _describe_us(us: int) -> str:
    """An epoch in microseconds as a readable date where Python can show it, else the number."""
    try:
        return (_dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc) + _dt.timedelta(microseconds=us)).isoformat()
    except (OverflowError, ValueError):
        years = us / 1e6 / 86400 / 365.25
        return f"{us} us since 1970 (year {1970 + years:.0f})"


def collect_guarded(thunk: Callable[[], Any], paths, what: str = "telemetry data (Parquet)"):
    """Run ``thunk`` (which collects a lazy scan) with library errors as one InputError naming ``paths``."""
    try:
        return thunk()
    except RidgelineError:
        raise
    except Exception as err:  # noqa: BLE001
        if library_error(err):
            where = ", ".join(str(p) for p in paths) if not isinstance(paths, (str, Path)) else str(paths)
            raise translate(err, where, what) from None
        raise


def parquet_footer_problem(path) -> str | None:
    """Why a Parquet file's footer (schema, row groups) cannot be read, or None when it can."""
    try:
        import pyarrow.parquet as pq

        pq.read_metadata(path)
    except Exception as err:  # noqa: BLE001 - any failure here is the file's
        return short_reason(err) or type(err).__name__
    return None


def check_parquet_pages(path) -> None:
    """Decode every page of one Parquet file, batch by batch (memory stays one batch): InputError
    when a page is corrupt. Used for Parquet files found in a folder, so a bad one is skipped
    instead of failing the whole scan later."""
    try:
        import pyarrow.parquet as pq

        for _batch in pq.ParquetFile(path).iter_batches(batch_size=65536):
            pass
    except Exception as err:  # noqa: BLE001 - any failure here is the file's
        raise InputError(path, "expected readable telemetry Parquet; the file is corrupt or truncated",
                         actual=short_reason(err) or type(err).__name__) from None


# ------------------------------------------------------------------------------------------
# ncu launch tables
# ------------------------------------------------------------------------------------------
# "(x, y, z)" as ncu writes it, or one whole number (older exports write "256")
_DIM3 = r"^\s*(\d{1,10}|\(\s*\d{1,10}\s*(,\s*\d{1,10}\s*){0,2}\))\s*$"


def check_kernels(kernels, *, strict: bool = True):
    """Launches whose grid/block is not three whole numbers, or whose ID did not fit.

    Strict: InputError naming the file and the launch. Lenient: the launches are dropped and
    returned as Skipped items. Returns ``(kernels, skipped)``.
    """
    import polars as pl

    from ridgeline.result import Skipped

    if kernels is None or not kernels.height:
        return kernels, []
    cols = kernels.columns
    problems = []
    for col, what in (("grid_size", "Grid Size"), ("block_size", "Block Size")):
        if col in cols:
            problems.append((pl.col(col).is_not_null() & ~pl.col(col).str.contains(_DIM3),
                             f"column {what!r}: expected (x, y, z) in whole numbers", col))
    if "id" in cols and "launch_id" in cols:
        problems.append((pl.col("id").is_not_null() & (pl.col("id").cast(pl.String).str.strip_chars() != "")
                         & pl.col("launch_id").is_null(),
                         "column 'ID': expected a launch ID 0..2^63-1", "id"))
    skipped: list[Skipped] = []
    drop = pl.lit(False)
    for cond, text, col in problems:
        bad = kernels.filter(cond)
        if not bad.height:
            continue
        row = bad.row(0, named=True)
        source = row.get("source") or "(ncu export)"
        if strict:
            name = str(row.get("kernel_name"))
            name = name if len(name) <= 60 else name[:57] + "..."
            raise InputError(source, f"{text} (launch of {name!r}; --lenient skips such launches)",
                             actual=row.get(col))
        for r in bad.iter_rows(named=True):
            skipped.append(Skipped(str(r.get("source")), f"launch {r.get('id')} ({str(r.get('kernel_name'))[:60]})",
                                   f"{text}, got {r.get(col)!r}"))
        drop = drop | cond
    if skipped:
        kernels = kernels.filter(~drop)
    return kernels, skipped


def read_ncu_checked(read_ncu: Callable, files, *, strict: bool = True):
    """``read_ncu(files, strict=strict)`` at the boundary: a library's error becomes one
    InputError naming the file that caused it, and the launches pass :func:`check_kernels`.

    Returns ``(parsed, kernels)``; lenient runs add the dropped launches to ``parsed.skipped``.
    """
    files = [str(p) for p in files]
    what = "an Nsight Compute export (CSV or .ncu-rep)"
    try:
        parsed = read_ncu(files, strict=strict)
    except RidgelineError:
        raise
    except Exception as err:  # noqa: BLE001 - find the file; collect_guarded re-raises what is not a library's
        if not library_error(err):
            raise
        for p in files if len(files) > 1 else []:
            collect_guarded(lambda p=p: read_ncu([p], strict=strict), p, what)
        raise translate(err, files[0] if len(files) == 1 else ", ".join(files), what) from None
    kernels, bad = check_kernels(parsed.kernels, strict=strict)
    parsed.skipped.extend(bad)
    return parsed, kernels
