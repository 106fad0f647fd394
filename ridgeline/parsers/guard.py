"""The readers' boundary: what a reader returns is checked, what a library raises is translated.

Readers (one module per format) turn a file into a frame. Whatever goes wrong inside them
because of the file's content must reach the user as ridgeline's own one-line
:class:`~ridgeline.errors.InputError` (``FILE[:LINE]: expected ..., got ...``, exit 2), never as
a polars, pyarrow, json or datetime exception (which the CLI treats as a bug, exit 3). This
module does that at the one place every reader is called from:

* :func:`read_guarded` calls a telemetry reader, translates library errors raised on the
  file's behalf, and checks the frame it returns before anything downstream casts it: GPU
  indices in ``0..MAX_GPU_INDEX``, timestamps between :data:`MIN_TIME` and :data:`MAX_TIME`.
* :mod:`ridgeline.parsers.ncu.guard` does the same for the ncu readers' launch table.
* :func:`library_error` tells a library's complaint about data from a bug of ours.

Kept apart from the readers so their internals can change (speed work) without losing the
guarantees; the tests in ``tests/parsers/test_corpus.py`` and ``tests/parsers/test_fuzz_readers.py`` hold them.
The spellings it checks (table column roles, exporter sample lines) come from
:mod:`ridgeline.parsers.telemetry.syntax`, the floor below both it and the readers: the readers
import this module, so it never imports a reader.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import os
from pathlib import Path
from typing import Any, Callable

from ridgeline.errors import InputError, RidgelineError
from ridgeline.parsers.paths import polars_path
from ridgeline.result import Skipped

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
                                "lz4", "isal", "igzip_lib"):
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
    """A library's message on one line, in plain words (:func:`~ridgeline.parsers.plain.plain_reason`)."""
    from ridgeline.parsers.plain import plain_reason

    text = plain_reason(err)
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
    from ridgeline.parsers.paths import name_refusal, polars_refused_name

    p = str(path)
    reason = short_reason(err)
    if polars_refused_name(path, reason):
        return InputError(p, name_refusal(what))
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


# telemetry kinds that are lines of text (their lines are held by polars or Python whole)
TEXT_KINDS = ("dcgm-dmon", "dcgm-exporter", "nvidia-smi-csv", "nvidia-smi-dmon", "telemetry-csv")


def read_guarded(reader: Callable, kind: str, path: Any, *, opts: Any):
    """``reader(path, opts=opts)`` with library errors translated and the frame checked.

    Returns what the reader returns (frame, InputInfo, skipped). Raises InputError only.
    With ``opts.strict`` False (``--lenient``) the bad cells and rows the checks find are
    listed in the returned skipped items instead (see :func:`read_lenient`).
    """
    what = WHAT.get(kind, kind)
    try:
        if kind in TEXT_KINDS:  # a line past the cap, before any check reads it whole (one 50 MB line: 8.5 GB)
            from ridgeline.parsers.text_chunks import check_line_lengths

            check_line_lengths(path)
        if kind in ("telemetry-csv", "nvidia-smi-csv"):
            check_column_count(path)
        if not strict_of(opts):
            frame, info, skipped = read_lenient(reader, kind, path, opts=opts)
        else:
            if kind == "nvidia-smi-csv":
                check_smi_query_cells(path)
            elif kind == "telemetry-csv":
                check_table_gpu_cells(path)
            elif kind == "dcgm-exporter":
                check_exporter_gpu_labels(path)
            try:
                frame, info, skipped = reader(path, opts=opts)
            except InputError as err:  # a cell's place is named: say what --lenient would do with it
                if err.line is None or err.column is None or "--lenient" in err.expected:
                    raise
                raise InputError(err.path, err.expected + ANY_HINT, line=err.line, column=err.column,
                                 actual=err.actual) from None
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
    found = find_smi_query_cells(path, limit=1)
    if found:
        p = found[0]
        raise InputError(path, p.expected + (CELL_HINT if p.action == "cell" else ROW_HINT), line=p.line,
                         column=p.column, actual=p.actual)


def find_smi_query_cells(path, *, limit: int | None = None) -> list[Problem]:
    """The bad cells of an nvidia-smi --query-gpu CSV (see :func:`check_smi_query_cells`), in
    file order: a measured cell that is no number ("cell": read as missing when lenient), a GPU
    index that is none ("row": the row is skipped). At most ``limit`` of them."""
    import re

    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import NVIDIA_SMI_HEX, NVIDIA_SMI_IDENTITY, NVIDIA_SMI_QUERY

    with open(path, encoding="utf-8-sig", errors="replace") as fh:  # -sig: a byte-order mark is no header text
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
            checks[i] = (h, r"^\s*[0-9]{1,4}\s*$", "a GPU index 0..4095", "row")
        elif prop in NVIDIA_SMI_HEX:  # the clock event reasons bitmask, in hex
            checks[i] = (h, rf"^\s*(0[xX][0-9a-fA-F]{{1,16}}|{_SMI_MISSING})\s*$",
                         "a hexadecimal bitmask like 0x0000000000000004 or [N/A]", "cell")
        elif prop in NVIDIA_SMI_QUERY:
            pattern = rf"^\s*({_SMI_NUMBER}(\s*{unit})?|{_SMI_MISSING})\s*$" if unit else \
                rf"^\s*({_SMI_NUMBER}|{_SMI_MISSING})\s*$"
            checks[i] = (h, pattern, "a number" + (f" in {m.group(1)}" if m else "") + " or [N/A]", "cell")
    if not checks:
        return []
    lf = pl.scan_csv(polars_path(path), has_header=True, infer_schema=False, truncate_ragged_lines=True,
                     new_columns=[f"c{i}" for i in range(len(header))]).with_row_index("_line", offset=2)
    names = lf.collect_schema().names()
    bad_any = pl.lit(False)
    for i, (_h, pattern, _what, _action) in checks.items():
        if f"c{i}" in names:
            bad_any = bad_any | ~pl.col(f"c{i}").fill_null("").str.contains(pattern)
    bad = lf.filter(bad_any)
    rows = (bad.head(limit) if limit else bad).collect(engine="streaming")
    out: list[Problem] = []
    for row in rows.iter_rows(named=True):
        for i, (h, pattern, what, action) in checks.items():
            value = row.get(f"c{i}")
            if value is not None and not re.search(pattern, value):
                out.append(Problem(row["_line"], h, value.strip(), f"expected {what}", action, i))
    if limit:
        out = out[:limit]
    return out


_GPU_CELL = r"^\s*[0-9]{1,4}\s*$"


def check_column_count(path) -> None:
    """A CSV header with more than :data:`ridgeline.parsers.telemetry.syntax.MAX_COLUMNS` columns is
    an InputError naming the cap (read after the line-length cap, so the header is bounded)."""
    from ridgeline.parsers.telemetry.syntax import MAX_COLUMNS

    with open(path, "rb") as fh:
        header = fh.readline()
    n = header.count(b",") + 1
    if n > MAX_COLUMNS:
        raise InputError(path, f"expected at most {MAX_COLUMNS:,} columns "
                         "(ridgeline.parsers.telemetry.syntax.MAX_COLUMNS)", line=1, actual=f"{n:,} columns")


def check_table_gpu_cells(path) -> None:
    """Long/wide telemetry CSV: a ``gpu`` (``gpu_index``, ``index``) cell is a GPU index 0..4095
    or empty; ``abc`` or ``18446744073709551616`` is an InputError naming line and column (the
    reader's lenient cast would make it a null GPU). One streaming pass over that column."""
    found = find_table_gpu_cells(path, limit=1)
    if found:
        p = found[0]
        raise InputError(path, p.expected + ROW_HINT, line=p.line, column=p.column, actual=p.actual)


def find_table_gpu_cells(path, *, limit: int | None = None) -> list[Problem]:
    """The rows of a long/wide telemetry CSV whose GPU cell is no GPU index (see
    :func:`check_table_gpu_cells`), in file order, at most ``limit``."""
    import polars as pl

    from ridgeline.parsers.telemetry.syntax import ALIASES

    with open(path, encoding="utf-8-sig", errors="replace") as fh:
        header = [h.strip() for h in fh.readline().rstrip("\r\n").split(",")]
    col = next((i for i, h in enumerate(header) if h.lower() in ALIASES["gpu"]), None)
    if col is None:
        return []
    lf = pl.scan_csv(polars_path(path), has_header=True, infer_schema=False, truncate_ragged_lines=True,
                     new_columns=[f"c{i}" for i in range(len(header))]).with_row_index("_line", offset=2)
    cell = pl.col(f"c{col}")
    bad = lf.filter(cell.is_not_null() & (cell.str.strip_chars() != "") & ~cell.str.contains(_GPU_CELL)) \
        .select("_line", cell.alias("v"))
    rows = (bad.head(limit) if limit else bad).collect(engine="streaming")
    return [Problem(line, header[col], value, "expected a GPU index 0..4095 (or nothing)", "row", col)
            for line, value in rows.iter_rows()]


def check_exporter_gpu_labels(path) -> None:
    """dcgm-exporter text: every ``gpu="..."`` label is a GPU index 0..4095 (``-1`` and ``2^64``
    are InputErrors naming the line, not a null GPU). One streaming pass over the lines."""
    found = find_exporter_problems(path, limit=1, times=False)
    if found:
        p = found[0]
        raise InputError(path, p.expected + ROW_HINT, line=p.line, column=p.column, actual=p.actual)


def find_exporter_problems(path, *, limit: int | None = None, times: bool = True) -> list[Problem]:
    """Sample lines of a dcgm-exporter text whose ``gpu`` label is no GPU index 0..4095 or (with
    ``times``) whose own timestamp lies outside :data:`MIN_TIME`..:data:`MAX_TIME`, in file order."""
    import polars as pl

    from ridgeline.parsers.telemetry.syntax import SAMPLE_RE

    lf = pl.scan_csv(polars_path(path), has_header=False, separator="\x1f", quote_char=None, infer_schema=False,
                     new_columns=["line"], truncate_ragged_lines=True).with_row_index("_line", offset=1)
    line = pl.col("line").str.strip_chars()
    label = pl.col("line").str.extract(r'[{,]\s*gpu="([^"]*)"', 1)
    sample = ~line.str.starts_with("#") & (line != "")
    bad_gpu = sample & label.is_not_null() & (label != "") & ~label.str.contains(_GPU_CELL)
    cond = bad_gpu
    if times:
        t = line.str.extract(SAMPLE_RE, 4).cast(pl.Float64, strict=False)
        t_us = pl.when(t.abs() < 1e11).then(t * 1e6).otherwise(t * 1e3)
        lo, hi = _epoch_us(MIN_TIME), _epoch_us(MAX_TIME)
        bad_time = sample & t.is_not_null() & ((t_us < lo) | (t_us >= hi) | t_us.is_nan())
        cond = bad_gpu | bad_time
    sel = [pl.col("_line"), label.alias("v"), bad_gpu.alias("g")]
    if times:
        sel.append(line.str.extract(SAMPLE_RE, 4).alias("t"))
    bad = lf.filter(cond).select(sel)
    rows = (bad.head(limit) if limit else bad).collect(engine="streaming")
    out = []
    for r in rows.iter_rows(named=True):
        if r["g"]:
            out.append(Problem(r["_line"], "gpu", r["v"], "expected a gpu label 0..4095", "row"))
        else:
            out.append(Problem(r["_line"], None, r["t"], "expected a sample timestamp between "
                               f"{MIN_TIME:%Y-%m-%d} and {MAX_TIME:%Y-%m-%d}", "row"))
    return out


def _epoch_us(when: _dt.datetime) -> int:
    return int((when - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)).total_seconds() * 1e6)


def check_telemetry_frame(frame, path, *, opts: Any = None):
    """GPU indices and timestamps in range, checked on an eager frame before any cast.

    Returns the frame. Lenient (``opts.strict`` False): the rows out of range are dropped and
    listed in ``opts.lenient_skipped`` (without a line: the frame no longer knows it) instead of
    an InputError. A LazyFrame (Parquet) is checked by the reduction once it reads it: :func:`check_partition`.
    """
    import polars as pl

    if not isinstance(frame, pl.DataFrame) or not frame.height:
        return frame
    strict = strict_of(opts)
    cols = frame.columns
    if "gpu" in cols and frame.schema["gpu"].is_numeric():
        out = (pl.col("gpu") < 0) | (pl.col("gpu") > MAX_GPU_INDEX)
        bad = frame.filter(out)
        if bad.height:
            expected = f"expected GPU indices 0..{MAX_GPU_INDEX}"
            if strict:
                raise InputError(path, expected + ROW_HINT, actual=bad.get_column("gpu")[0])
            for g, n in bad.group_by("gpu").len().sort("gpu").iter_rows():
                opts.lenient_skipped.append(Skipped(str(path), f"{n} samples of GPU {g}", f"{expected}; rows skipped"))
            frame = frame.filter(~out.fill_null(False))
    if "timestamp" in cols and isinstance(frame.schema["timestamp"], pl.Datetime) and frame.height:
        ts = frame.get_column("timestamp").drop_nulls()
        if ts.len():
            lo_us, hi_us = _epoch_us(MIN_TIME), _epoch_us(MAX_TIME)
            unit = frame.schema["timestamp"].time_unit or "us"
            scale = {"ns": 1000, "us": 1, "ms": 0.001}[unit]
            raw = pl.col("timestamp").dt.epoch(time_unit=unit)
            out = (raw < lo_us * scale) | (raw >= hi_us * scale)
            bad = frame.filter(out.fill_null(False)).select(raw.alias("t"))
            if bad.height:
                expected = f"expected sample times between {MIN_TIME:%Y-%m-%d} and {MAX_TIME:%Y-%m-%d}"
                if strict:
                    raise InputError(path, expected + ROW_HINT, actual=_describe_us(int(bad.get_column("t")[0] / scale)))
                opts.lenient_skipped.append(Skipped(str(path), f"{bad.height} samples",
                                                    f"{expected}, got {_describe_us(int(bad.get_column('t')[0] / scale))}"
                                                    "; rows skipped"))
                frame = frame.filter(~out.fill_null(False))
    frame = _check_duplicates(frame, path, strict, opts)
    _note_models(frame, path, opts)
    return frame


def _check_duplicates(frame, path, strict: bool, opts):
    """One sample per (host, GPU, instance, UUID, time[, field]). A repeat with the same value is
    kept once and listed (so the accounting counts it as skipped, not used); a repeat with another
    value is two answers to one question: strict, an error naming the GPU, field and time; lenient,
    the first is kept and the others listed."""
    import polars as pl

    from ridgeline.parsers.telemetry.common import IDENTITY

    # one sample = one GPU (host, index, instance, UUID) at one time; the model is an attribute
    key = [c for c in IDENTITY if c != "model" and c in frame.columns]
    if "timestamp" not in key or frame.height < 2:
        return frame
    long = "field" in frame.columns and "value" in frame.columns
    if long:
        key.append("field")
        values = ["value"]
    else:
        values = [c for c in frame.columns if c not in IDENTITY]  # a wide frame's fields (wide_to_long_rows)
    if not long and (_runs_without_repeats(frame, [k for k in key if k != "timestamp"])
                     or _ticks_without_repeats(frame, [k for k in key if k != "timestamp"])):
        return frame
    # a 64-bit hash per row finds the candidates (8 bytes a row; hashing the key struct whole for
    # is_duplicated held ~45 MB more on a 60 MB dmon file); the exact check runs on those rows only
    maybe = frame.select(key).hash_rows().is_duplicated()
    if not maybe.any():
        return frame
    cand = frame.with_row_index("_row").filter(maybe)
    dup = cand.select(pl.struct(key).is_duplicated()).to_series()
    if not dup.any():
        return frame  # hash collisions only
    rows = cand.filter(dup)
    groups = rows.group_by(key, maintain_order=True).agg(
        pl.len().alias("_n"), *[pl.col(v).n_unique().alias(f"_u_{v}") for v in values],
        *[pl.col(v).first().alias(f"_f_{v}") for v in values], *[pl.col(v).last().alias(f"_l_{v}") for v in values])
    conflict = groups.filter(pl.any_horizontal([pl.col(f"_u_{v}") > 1 for v in values]))
    repeats = int(groups.get_column("_n").sum() - groups.height)
    if conflict.height:
        r = conflict.row(0, named=True)
        v = next(v for v in values if r[f"_u_{v}"] > 1)
        what = r.get("field") or v
        where = ", ".join(f"{k} {r[k]}" for k in key if k not in ("field",) and r.get(k) is not None)
        text = (f"one value per GPU, field and time, got two for {what} at {where}: "
                f"{r[f'_f_{v}']} and {r[f'_l_{v}']}")
        if strict:
            raise InputError(path, text + " (--lenient keeps the first and lists the others)")
        if opts is not None:
            opts.lenient_skipped.append(Skipped(str(path), f"{conflict.height} sample(s) given twice with other values",
                                                text + "; kept the first"))
    same = repeats - int(conflict.get_column("_n").sum() - conflict.height) if conflict.height else repeats
    if same and opts is not None:  # (opts None: a check whose frame is not kept)
        opts.lenient_skipped.append(Skipped(str(path), f"{same} repeated sample(s)",
                                            "the same time, GPU and field as an earlier sample, same value; kept once"))
    later = rows.filter(~rows.select(pl.struct(key).is_first_distinct()).to_series()).get_column("_row")
    return frame.with_row_index("_row").filter(~pl.col("_row").is_in(later.implode())).drop("_row")


def _runs_without_repeats(frame, ident: list[str]) -> bool:
    """True when ``frame`` provably holds no (identity, timestamp) twice without hashing its rows:
    each identity's rows are one contiguous run (the runs' first rows name distinct identities)
    and the times rise strictly within each run. The dmon and nvidia-smi readers' wide frames
    come out that way (per GPU, in time order); a frame that does not (GPUs interleaved per tick,
    repeats) returns False and gets the hashing check. Costs a few bitmaps, not a hash table per
    row (the hash check held ~40 MB at its peak on an 84 MB dmon file)."""
    import polars as pl

    if ident and frame.height > 1 and any(frame.get_column(c)[0] != frame.get_column(c)[1] for c in ident):
        return False  # rows interleaved per tick (a store): not the layout this proves anything for
    t = pl.col("timestamp")
    first = pl.int_range(pl.len()) == 0
    change = first | pl.any_horizontal([pl.col(c).ne_missing(pl.col(c).shift(1)) for c in ident]) if ident else first
    rising = frame.select((change | (t > t.shift(1)).fill_null(False)).all()).item()
    if not rising:
        return False
    starts = frame.filter(change).select(ident) if ident else None
    return starts is None or not starts.is_duplicated().any()


def _ticks_without_repeats(frame, ident: list[str]) -> bool:
    """True when ``frame`` provably holds no (identity, timestamp) twice, for the layout of a
    store written in time order (all GPUs of a second, then the next second): the times never
    fall, and within one time one identity column (the GPU index, tried first) rises strictly.
    Rows of one time are then one contiguous run whose identities all differ in that column, so
    no identity is given twice at a time, whatever the other identity columns hold (a UUID per
    GPU, a constant host). A comparison of neighbours per row instead of a 64-bit hash and a
    hash table (~8 ms of a 172,800-row host partition); any other layout (MIG instances of one
    GPU side by side, a repeated tick) returns False and gets the hashing check."""
    import polars as pl

    if frame.height < 2 or "timestamp" not in frame.columns:
        return False
    t, t0 = pl.col("timestamp"), pl.col("timestamp").shift(1)
    for c in sorted(ident, key=lambda c: c != "gpu"):
        col = frame.get_column(c)
        if col.null_count() or not (col.dtype.is_numeric() or col.dtype == pl.String):
            continue
        g, g0 = pl.col(c), pl.col(c).shift(1)
        if frame.select(((t > t0) | ((t == t0) & (g > g0))).fill_null(False).slice(1).all()).item():
            return True
    return False


def _note_models(frame, path, opts) -> None:
    """Rows that give one GPU index two models (a log appended across machines or a card swap):
    said, since their windows are reduced as one GPU."""
    import polars as pl

    if "model" not in frame.columns or "gpu" not in frame.columns or opts is None or not hasattr(opts, "note"):
        return
    key = [c for c in ("host", "gpu", "gpu_instance", "uuid") if c in frame.columns]
    many = frame.group_by(key).agg(pl.col("model").drop_nulls().unique().sort()).filter(pl.col("model").list.len() > 1)
    for r in many.iter_rows(named=True):
        who = f"GPU {r['gpu']}" + (f" of host {r['host']}" if r.get("host") else "")
        opts.note(f"{path}: {who} is named as {len(r['model'])} models ({', '.join(r['model'])}): rows of "
                  "different GPUs under one index are reduced as one GPU; split the file per machine")


def check_partition(frame, source, *, strict: bool = True):
    """What :func:`check_telemetry_frame` does for a reader's frame, for a partition item the
    reduction has just read (a Parquet scan is only read there): GPU indices and times in range.
    Returns ``(frame, left_out)``; strict refuses the input (InputError naming ``source``),
    lenient leaves the rows out and returns them as skipped items. Module-level and picklable
    (with :func:`functools.partial`): the Dask engine runs it on its workers."""
    import types

    opts = types.SimpleNamespace(strict=strict, lenient_skipped=[])
    frame = check_telemetry_frame(frame, source if source is not None else "telemetry", opts=opts)
    return frame, list(opts.lenient_skipped)


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
# lenient reading of telemetry (--lenient)
# ------------------------------------------------------------------------------------------
# what the strict errors say about the alternative
CELL_HINT = " (--lenient reads such cells as missing)"
# how the reasons of lenient items end (a reader's caller tells them from the usual skipped items)
LENIENT_ENDINGS = ("read as missing (null)", "row skipped", "rows skipped", "point skipped", "series skipped",
                   "answer skipped")
ROW_HINT = " (--lenient skips such rows)"
ANY_HINT = " (--lenient reads such cells as missing, or skips their rows)"


@dataclasses.dataclass
class Problem:
    """One bad cell or row a check found: ``action`` "cell" (the value is read as missing) or
    "row" (the row means nothing without it: skipped). ``index``: the cell's column position."""

    line: int
    column: str | None
    actual: Any
    expected: str
    action: str
    index: int | None = None

    def skipped(self, path) -> Skipped:
        what = f"column {self.column!r}: " if self.column else ""
        then = "read as missing (null)" if self.action == "cell" else "row skipped"
        return Skipped(str(path), f"line {self.line}", f"{what}{self.expected}, got {str(self.actual)[:60]!r}; {then}")


def strict_of(opts: Any) -> bool:
    """Whether ``opts`` (a reader's options; None for the defaults) asks for strict reading."""
    return bool(getattr(opts, "strict", True))


def bad_cells(opts: Any, path, bad, expected: str, *, column: str, value: str, line: str = "lineno",
              action: str = "cell") -> None:
    """A reader's hook for cells that are not numbers (``bad``: the rows holding them), or with
    ``action="row"`` for rows that mean nothing without a bad cell (the reader leaves them out).

    Strict: InputError for the first (``FILE:LINE: column 'C': expected ..., got 'v'``), with a
    word about ``--lenient``. Lenient: every one listed in ``opts.lenient_skipped``; the reader
    goes on with those cells null (its cast already made them so) or without those rows.
    """
    if bad is None or not bad.height:
        return
    if strict_of(opts):
        r = bad.row(0, named=True)
        raise InputError(path, expected + (CELL_HINT if action == "cell" else ROW_HINT), line=r[line], column=column,
                         actual=r[value])
    for ln, v in bad.select(line, value).iter_rows():
        opts.lenient_skipped.append(Problem(ln, column, v, expected, action).skipped(path))


def find_smi_problems(path, *, opts: Any) -> list[Problem]:
    """nvidia-smi --query-gpu CSV, lenient: the bad cells of :func:`find_smi_query_cells` and the
    rows whose timestamp does not parse or lies outside :data:`MIN_TIME`..:data:`MAX_TIME`."""
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import NVIDIA_SMI_IDENTITY
    from ridgeline.parsers.telemetry.times import read_cells

    found = find_smi_query_cells(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        header = [h.strip() for h in fh.readline().rstrip("\r\n").split(",")]
    col = next((i for i, h in enumerate(header)
                if NVIDIA_SMI_IDENTITY.get(h.split(" [")[0].strip().lower()) == "timestamp"), None)
    if col is not None:
        lf = pl.scan_csv(polars_path(path), has_header=True, infer_schema=False, truncate_ragged_lines=True,
                         new_columns=[f"c{i}" for i in range(len(header))]).with_row_index("_line", offset=2)
        cells = lf.select("_line", pl.col(f"c{col}").str.strip_chars().alias("v")).collect(engine="streaming")
        ts, like = read_cells(cells.get_column("v"), opts)  # the reader's spelling of the file's times
        bad = cells.with_columns(ts.dt.epoch(time_unit="us").alias("t")).filter(
            pl.col("t").is_null() | (pl.col("t") < _epoch_us(MIN_TIME)) | (pl.col("t") >= _epoch_us(MAX_TIME)))
        for ln, v, t in bad.iter_rows():
            what = f"a timestamp like {like}" if t is None else \
                f"a timestamp between {MIN_TIME:%Y-%m-%d} and {MAX_TIME:%Y-%m-%d}"
            found.append(Problem(ln, header[col], v, f"expected {what}", "row", col))
    return found


def find_smi_dmon_problems(path) -> list[Problem]:
    """nvidia-smi dmon text, lenient: rows whose ``gpu`` is no index 0..4095, cells of analyzed
    columns that are neither a number nor ``-`` (the reader's rules; one pass over the lines)."""
    import re

    from ridgeline.parsers.telemetry.dcgm_fields import NVIDIA_SMI_DMON

    number = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
    out: list[Problem] = []
    header = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for no, raw in enumerate(fh.read().splitlines(), start=1):
            s = raw.strip()
            if not s:
                continue
            if s.startswith("#"):
                toks = s.lstrip("#").split()
                if toks and toks[0].lower() in ("gpu", "date"):
                    header = [t.lower() for t in toks]
                continue
            toks = s.split()
            if header is None or len(toks) != len(header):
                continue
            for i, (name, tok) in enumerate(zip(header, toks)):
                if name == "gpu" and not re.fullmatch(r"[0-9]{1,4}", tok) or name == "gpu" and int(tok) > MAX_GPU_INDEX:
                    out.append(Problem(no, name, tok, f"expected a GPU index 0..{MAX_GPU_INDEX}", "row", i))
                    break
                if name in NVIDIA_SMI_DMON and tok != "-" and not number.fullmatch(tok):
                    out.append(Problem(no, name, tok, "expected a number or -", "cell", i))
    return out


def find_dmon_entity_problems(path) -> list[Problem]:
    """dcgmi dmon text, lenient: rows of an entity whose id is no GPU index 0..4095 (one
    streaming pass; the reader's cast would fail on 2^64)."""
    import polars as pl

    lf = pl.scan_csv(polars_path(path), has_header=False, separator="\x1f", quote_char=None, infer_schema=False,
                     new_columns=["line"], truncate_ragged_lines=True).with_row_index("_line", offset=1)
    ent = pl.col("line").str.extract(r"^\s*((?:GPU-CI|GPU-I|GPU|vGPU|Switch|CPU Core|CPU|CX|SW)\s+(\d+))", 1)
    eid = pl.col("line").str.extract(r"^\s*(?:GPU-CI|GPU-I|GPU|vGPU|Switch|CPU Core|CPU|CX|SW)\s+(\d+)", 1)
    bad = lf.filter(eid.is_not_null() & ((eid.str.len_chars() > 4) | (eid.cast(pl.Int64, strict=False) > MAX_GPU_INDEX))) \
        .select("_line", ent.alias("v")).collect(engine="streaming")
    return [Problem(ln, None, v, f"expected an entity id 0..{MAX_GPU_INDEX}", "row") for ln, v in bad.iter_rows()]


def _prescan(kind: str, path, opts: Any) -> list[Problem]:
    if kind == "nvidia-smi-csv":
        return find_smi_problems(path, opts=opts)
    if kind == "nvidia-smi-dmon":
        return find_smi_dmon_problems(path)
    if kind == "dcgm-dmon":
        return find_dmon_entity_problems(path)
    if kind == "dcgm-exporter":
        return find_exporter_problems(path)
    return []  # telemetry-csv and Prometheus JSON are lenient in their readers


_NULL_CELL = {"nvidia-smi-csv": " [N/A]", "nvidia-smi-dmon": "-"}


def _mend_line(kind: str, text: str, cells: list[Problem]) -> str:
    """``text`` (one line, without its end) with the bad cells replaced by the format's blank."""
    if kind == "nvidia-smi-csv":
        parts = text.split(",")
        for p in cells:
            if p.index is not None and p.index < len(parts):
                parts[p.index] = _NULL_CELL[kind]
        return ",".join(parts)
    if kind == "nvidia-smi-dmon":
        toks = text.split()
        for p in cells:
            if p.index is not None and p.index < len(toks):
                toks[p.index] = _NULL_CELL[kind]
        return " ".join(toks)
    return text


def _mended_copy(kind: str, path: Path, problems: list[Problem], folder: str) -> tuple[Path, list[int]]:
    """A copy of ``path`` (same name, in ``folder``) without the bad rows and with the bad cells
    blank; returns it and the original line number of each of its lines."""
    rows = {p.line for p in problems if p.action == "row"}
    cells: dict[int, list[Problem]] = {}
    for p in problems:
        if p.action == "cell" and p.line not in rows:
            cells.setdefault(p.line, []).append(p)
    out_path = Path(folder) / path.name
    kept: list[int] = []
    with open(path, "rb") as src, open(out_path, "wb") as dst:
        for no, raw in enumerate(src, start=1):
            if no in rows:
                continue
            if no in cells:
                end = raw[len(raw.rstrip(b"\r\n")):]
                text = raw[: len(raw) - len(end)].decode("utf-8", errors="replace")
                raw = _mend_line(kind, text, cells[no]).encode("utf-8") + end
            dst.write(raw)
            kept.append(no)
    return out_path, kept


def read_lenient(reader: Callable, kind: str, path: Any, *, opts: Any):
    """``reader(path, opts=opts)`` for ``--lenient``: the format's checks find every bad cell
    and row first; when there are some, the reader reads a mended copy (bad rows left out, bad
    cells blank) and what it reports is relabelled to ``path`` and its line numbers. The cells
    and rows are listed as skipped items (``FILE``, ``line N``, the reason)."""
    import re
    import shutil
    import tempfile

    path = Path(path)
    problems = _prescan(kind, path, opts) if path.is_file() else []
    opts.lenient_skipped = []
    if not problems:
        frame, info, skipped = reader(path, opts=opts)
        frame = check_telemetry_frame(frame, path, opts=opts)
        return frame, info, [*skipped, *opts.lenient_skipped]
    problems.sort(key=lambda p: p.line)
    folder = tempfile.mkdtemp(prefix="ridgeline-lenient-")
    try:
        copy, kept = _mended_copy(kind, path, problems, folder)

        def line_of(n: int | None) -> int | None:
            return kept[n - 1] if n is not None and 0 < n <= len(kept) else n

        def relabel(text: str) -> str:
            text = text.replace(str(copy), str(path))
            return re.sub(r"\b(line|header line) (\d+)\b", lambda m: f"{m.group(1)} {line_of(int(m.group(2)))}", text)

        before = list(getattr(opts, "notes", []))
        try:
            frame, info, skipped = reader(copy, opts=opts)
        except InputError as err:
            raise InputError(path, err.expected, line=line_of(err.line), column=err.column, actual=err.actual) from None
        finally:
            if hasattr(opts, "notes"):
                opts.notes[:] = [n if n in before else n.replace(str(copy), str(path)) for n in opts.notes]
        frame = check_telemetry_frame(frame, path, opts=opts)
        info = dataclasses.replace(info, path=str(path))
        listed = [p.skipped(path) for p in problems if p.action == "row" or p.line not in
                  {q.line for q in problems if q.action == "row"}]
        skipped = [Skipped(str(path), relabel(s.item), relabel(s.reason)) for s in skipped]
        lenient = [Skipped(str(path), relabel(s.item), s.reason) for s in opts.lenient_skipped]
        return frame, info, [*skipped, *listed, *lenient]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
