"""nvidia-smi outputs -> TELEMETRY rows.

``nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,... --format=csv [-l 1]``:
separator ``", "``; header = the query list with units in brackets (``utilization.gpu [%]``);
values carry units unless ``nounits`` (``34 %``, ``17304 MiB``, ``71.06 W``); ``[N/A]`` and
``[Not Supported]`` = not reported (null). Timestamps ``YYYY/MM/DD HH:MM:SS.mmm`` are local
time without a zone: read in ``--tz`` (default UTC, with a note); logs written by scripts carry
other spellings (ISO 8601 with an offset, ``03-11-2026 15:13:16``...), read as
:mod:`ridgeline.parsers.telemetry.times` says. Without an ``index`` or ``uuid`` column the GPU
index is unknown (null).

``nvidia-smi dmon``: ``# gpu pwr gtemp ... `` header and ``# Idx W C ...`` units line,
whitespace-separated values, ``-`` = not supported; ``-o DT`` adds ``#Date Time`` columns;
otherwise ticks are inferred from the GPU index repeating (``start + tick * interval``).
``sm`` there is NVML GPU-Util, not SM_ACTIVE.
"""

from __future__ import annotations

import io
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.paths import polars_path
from ridgeline.parsers.telemetry.dcgm_fields import scaled
from ridgeline.result import InputInfo, Skipped

_MISSING = ["[N/A]", "[Not Supported]", "N/A", "[Unknown Error]", "[GPU is lost]", "", "-"]


def _num(col: str):
    import polars as pl

    return pl.col(col).str.strip_chars().str.extract(r"^([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)", 1).cast(pl.Float64)


# a whole token that _num's leading-number regex would read entirely (anchored, no capture: fast)
_NUMBER_RE = r"^[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?$"


def _first_token(col: str):
    import polars as pl

    return pl.col(col).str.split_exact(" ", 1).struct.field("field_0")


def read_query_csv(path, *, opts):
    """Parse ``nvidia-smi --query-gpu ... --format=csv``. Returns (long DataFrame, InputInfo, skipped)."""
    from ridgeline.parsers.telemetry.common import wide_to_long_rows

    wide, long, info, skipped = read_query_csv_wide(path, opts=opts)
    return (long if long is not None else wide_to_long_rows(wide)), info, skipped


class _WholeText(Exception):
    """A piece with line breaks polars does not split as Python would, or with quotes (a quoted
    cell may hold a line break): the file is read whole instead."""


def _csv_pieces(path: Path, chunk_bytes):
    """The file's rows as raw string frames, one per piece cut at line ends; every piece after the
    first is read behind a copy of the header line, so polars treats its rows (short, long,
    blank) as in a read of the whole file. Raises :class:`_WholeText` when a piece needs the
    whole-file read."""
    import polars as pl

    from ridgeline.parsers.text_chunks import odd_breaks as _odd_breaks
    from ridgeline.parsers.text_chunks import line_chunks

    head = None
    for data, _last in line_chunks(path, chunk_bytes):
        if _odd_breaks(data) or b'"' in data:
            raise _WholeText
        if head is None:
            head = data[: data.find(b"\n") + 1] if b"\n" in data else data
        else:
            data = head + data
        df = pl.read_csv(data, has_header=True, infer_schema=False, truncate_ragged_lines=False, encoding="utf8-lossy")
        del data
        yield df


def _whole_file(path: Path):
    """The file in one piece (quotes, lone carriage returns, form feeds...)."""
    import polars as pl

    from ridgeline.parsers.text_chunks import odd_breaks as _odd_breaks

    data = path.read_bytes()
    plain = not _odd_breaks(data)  # only \n / \r\n line breaks: polars reads the file as Python would
    if plain:
        del data
        yield pl.read_csv(polars_path(path), has_header=True, infer_schema=False, new_columns=None,
                          truncate_ragged_lines=False, encoding="utf8-lossy")
    else:  # Python's universal newlines, as a text read gives
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        del data
        yield pl.read_csv(io.StringIO(text), has_header=True, infer_schema=False, new_columns=None,
                          truncate_ragged_lines=False)


def read_query_csv_wide(path, *, opts, chunk_bytes: int | None = None):
    """Parse ``nvidia-smi --query-gpu ... --format=csv`` into one row per CSV row.

    Returns ``(wide, long, info, skipped)``: ``wide`` has the identity columns and one column
    per canonical field (scaled; None when two columns name the same field, then ``long`` holds
    the long rows). The file is read in pieces cut at line ends (``chunk_bytes``, see
    :mod:`ridgeline.parsers.text_chunks`), each turned into its numeric columns at once; the
    first bad timestamp or cell (by column, then row) is reported as if the file were read whole.
    """
    path = Path(path)
    with open(path, "rb") as fh:
        first = fh.readline()
    if not first:
        raise InputError(path, "expected an nvidia-smi CSV header line")
    first = first.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark (Windows tools write one)
    header = [h.strip() for h in first.decode("utf-8", errors="replace").splitlines()[0].split(",")]
    try:
        if not first.strip():
            raise _WholeText  # a blank first line: polars looks further for its header
        return _read_query(path, opts, header, _csv_pieces(path, chunk_bytes))
    except _WholeText:
        return _read_query(path, opts, header, _whole_file(path))


def _read_query(path: Path, opts, header: list[str], pieces):
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import NVIDIA_SMI_HEX, NVIDIA_SMI_IDENTITY, NVIDIA_SMI_QUERY
    from ridgeline.parsers.telemetry.times import DAY_FIRST, TimeReader

    prop = {h: h.split(" [")[0].strip().lower() for h in header}
    hex_cols = frozenset(h for h, p in prop.items() if p in NVIDIA_SMI_HEX)
    ident = {NVIDIA_SMI_IDENTITY[p]: h for h, p in prop.items() if p in NVIDIA_SMI_IDENTITY}
    skipped: list[Skipped] = []
    measured = []  # (column, field, scale)
    for h, p in prop.items():
        if p in NVIDIA_SMI_IDENTITY:
            continue
        if p not in NVIDIA_SMI_QUERY:
            skipped.append(Skipped(str(path), f"column {h}", "nvidia-smi property ridgeline does not analyze"))
            continue
        field, scale = NVIDIA_SMI_QUERY[p]
        measured.append((h, field, scale))
    host = opts.host or path.stem
    has_ts = "timestamp" in ident  # else the header's error, once every piece is read (a CSV error comes first)
    clock = None  # the file's TimeReader, made from its first timestamp cell
    bad_ts = None  # (line, value) of the first unreadable timestamp
    bad: dict[int, tuple] = {}  # measured column -> (line, value) of its first bad cell
    parts = []
    alts = []  # an ambiguous day-month-year file: each part's day-first times (None otherwise)
    n_rows = 0
    pieces = iter(pieces)
    early = late = None
    while True:
        try:
            df = next(pieces, None)
        except _WholeText:
            raise
        except Exception as err:  # noqa: BLE001 - report as an input error
            raise InputError(path, f"expected comma-separated nvidia-smi CSV ({err.__class__.__name__})") from err
        if df is None:
            break
        # a library's error on a piece is raised once every piece is read, where a read of the
        # whole file raises it: a CSV error anywhere comes first
        if early is not None:
            continue
        try:
            df.columns = header[: len(df.columns)] if len(header) >= len(df.columns) else df.columns
            df = df.with_columns(pl.all().str.strip_chars()).with_row_index("lineno", offset=2 + n_rows)
        except Exception as err:  # noqa: BLE001 - raised below
            early = err
            continue
        n_rows += df.height
        if not has_ts or bad_ts is not None:
            continue  # the file is refused: its remaining pieces are only read
        cells = df.get_column(ident["timestamp"])
        if clock is None:
            clock = TimeReader(cells.drop_nulls().head(1).to_list()[0] if cells.drop_nulls().len() else None,
                               tz=opts.tz, time_format=getattr(opts, "time_format", None))
        times, alt = clock.parse(cells, df.get_column("lineno"))  # parsed once: checked here, the piece's column below
        if times.null_count():
            at = times.is_null().arg_true()[0]
            bad_ts = (df.get_column("lineno")[at], df.get_column(ident["timestamp"])[at])
            continue
        if measured:
            nums = _query_cells(df, measured, bad, hex_cols)
            if bad or late is not None:
                continue
            try:
                parts.append(_query_piece(df, host, ident, measured, pl.lit(times), nums))
                alts.append(alt)
            except Exception as err:  # noqa: BLE001 - raised below
                late = err
    if early is not None:
        raise early
    if opts.host is None:
        opts.note(f"{path}: nvidia-smi CSV names no host; using the file name {path.stem!r} (give --host)")
    if "timestamp" not in ident:
        raise InputError(path, "expected a 'timestamp' column (nvidia-smi --query-gpu=timestamp,...)", line=1)
    if bad_ts is not None:
        raise InputError(path, f"expected a timestamp like {clock.example}", line=bad_ts[0],
                         column=ident["timestamp"], actual=bad_ts[1])
    if not measured:
        raise InputError(path, "expected at least one measured property (utilization.gpu, memory.used, power.draw, ...)", line=1)
    if bad:
        k = min(bad)
        raise InputError(path, "expected a number, [N/A] or [Not Supported]", line=bad[k][0], column=measured[k][0],
                         actual=bad[k][1])
    if late is not None:
        raise late
    if clock is not None and clock.order(path) == DAY_FIRST:  # the data settled it: a day above 12
        parts = [p.with_columns(a.alias("timestamp")) for p, a in zip(parts, alts)]
    if clock is not None:
        clock.note(path, opts)
    info = InputInfo(str(path), "nvidia-smi-csv", n_rows)
    wide = pl.concat(parts, rechunk=False) if len(parts) > 1 else parts[0]
    fields = [f for _h, f, _s in measured]
    if len(set(fields)) == len(fields):
        return wide.rename({f"_v{i}": f for i, f in enumerate(fields)}), None, info, skipped
    ident = [c for c in wide.columns if not c.startswith("_v")]
    long = pl.concat([wide.select(*ident, pl.lit(f).alias("field"), pl.col(f"_v{i}").alias("value"))
                      for i, f in enumerate(fields)])
    return None, long, info, skipped


def _query_cells(df, measured, bad: dict, hex_cols=frozenset()):
    """The measured columns of one piece of stripped string cells as numbers (unscaled; a
    frame with one column ``_n{i}`` per measured column); a column's first cell that is neither
    a number nor a known blank goes to ``bad``.

    The usual column holds '<number> <unit>' or a blank marker in every row: its first token is
    cast directly (the same number the leading-number regex of :func:`_num` extracts). Each cell
    is looked at once: blank marker, first token's cast and whether the token is a whole number
    come out of one pass; the regex of :func:`_num` runs only on a column that needs it.
    ``hex_cols``: columns holding hexadecimal bitmasks (``0x0000000000000004``, the clock event
    reasons), read in base 16."""
    import polars as pl

    k = range(len(measured))
    cells = df  # the cells as written, for the error message
    if hex_cols:  # a bitmask column: its hex token becomes the decimal number it spells ('?' when unreadable)
        df = df.with_columns([
            pl.when(pl.col(h).str.to_lowercase().str.starts_with("0x"))
            .then(pl.coalesce(pl.col(h).str.slice(2).str.to_integer(base=16, strict=False).cast(pl.String), pl.lit("?")))
            .otherwise(pl.col(h)).alias(h)
            for h in hex_cols])
    looks = df.select(*[pl.col(h).fill_null("").is_in(_MISSING).alias(f"_m{i}") for i, (h, _f, _s) in enumerate(measured)],
                      *[_first_token(h).alias(f"_t{i}") for i, (h, _f, _s) in enumerate(measured)])
    simple = looks.select([(pl.col(f"_t{i}").str.contains(_NUMBER_RE) | pl.col(f"_m{i}")).all() for i in k]).row(0)
    looks = looks.select(*[pl.col(f"_m{i}") for i in k],
                         *[pl.when(pl.col(f"_m{i}")).then(None).otherwise(pl.col(f"_t{i}").cast(pl.Float64, strict=False))
                           .alias(f"_n{i}") for i in k])
    redo = [i for i, fast in enumerate(simple) if not fast]
    if redo:  # a column with another spelling ('34%'): the leading-number regex
        looks = looks.with_columns(df.select([_num(measured[i][0]).alias(f"_n{i}") for i in redo]))
    flagged = looks.select([(pl.col(f"_n{i}").is_null() & ~pl.col(f"_m{i}")).any() for i in k]).row(0)
    for i, ((h, _field, _scale), b) in enumerate(zip(measured, flagged)):
        if b and i not in bad:
            at = looks.select((pl.col(f"_n{i}").is_null() & ~pl.col(f"_m{i}")).arg_true().first()).item()
            bad[i] = (df.get_column("lineno")[at], cells.get_column(h)[at])
    return looks.select([pl.col(f"_n{i}") for i in k])


def _name_column(df, col: str | None):
    """A text identity column of one piece; one value in every row (the usual model name) is
    kept once for the piece (a broadcast literal), not once per row."""
    import polars as pl

    if col is None:
        return pl.lit(None, pl.String)
    values = df.get_column(col)
    if values.len() and not values.null_count() and values.n_unique() == 1:
        return pl.lit(values[0], pl.String)
    return pl.col(col)


def _gpu_index(df, col: str):
    """The GPU index column of one piece: the stripped cells cast as whole numbers, or (a cell
    such as '0 (GPU)') their leading number, as :func:`_num` reads it."""
    import polars as pl

    direct = pl.col(col).cast(pl.Int64, strict=False)
    odd = df.select((direct.is_null() & pl.col(col).is_not_null()).any()).item()
    return _num(col).cast(pl.Int64) if odd else direct


def _query_piece(df, host, ident, measured, ts, nums):
    """One piece's stripped string cells -> its wide rows (one chunk per column); ``nums`` is
    :func:`_query_cells`' frame of the measured columns as numbers."""
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import blank_to_null

    base = [
        ts.alias("timestamp"),
        pl.lit(host).alias("host"),
        (_gpu_index(df, ident["gpu"]) if "gpu" in ident else pl.lit(None, pl.Int64)).alias("gpu"),
        _name_column(df, ident.get("uuid")).alias("uuid"),
        _name_column(df, ident.get("model")).alias("model"),
    ]
    out = df.select(*base)
    return out.with_columns(nums.select([blank_to_null(scaled(pl.col(f"_n{i}"), scale)).alias(f"_v{i}")
                                         for i, (_h, _f, scale) in enumerate(measured)])).rechunk()


def read_smi_dmon(path, *, opts):
    """Parse ``nvidia-smi dmon`` text. Returns (DataFrame, InputInfo, skipped)."""
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import NVIDIA_SMI_DMON
    from ridgeline.parsers.telemetry.common import parse_local_times

    path = Path(path)
    lines = path.read_text(encoding="utf-8-sig", errors="replace").splitlines()  # -sig: a BOM is no text
    header: list[str] | None = None
    rows: list[tuple[int, list[str]]] = []
    skipped: list[Skipped] = []
    for no, line in enumerate(lines, start=1):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            toks = s.lstrip("#").split()
            if toks and toks[0].lower() in ("gpu", "date"):
                new = [t.lower() for t in toks]
                if header is not None and new != header:
                    raise InputError(path, "expected the same dmon columns throughout", line=no, actual=s)
                header = new
            continue
        if header is None:
            skipped.append(Skipped(str(path), f"line {no}", f"text before the '# gpu' header: {s[:60]!r}"))
            continue
        toks = s.split()
        if len(toks) != len(header):
            skipped.append(Skipped(str(path), f"line {no}", f"expected {len(header)} columns, got {len(toks)}"))
            continue
        rows.append((no, toks))
    if header is None:
        raise InputError(path, "expected an nvidia-smi dmon '# gpu' header line")
    if not rows:
        raise InputError(path, "expected nvidia-smi dmon rows after the header")
    df = pl.DataFrame([[n for n, _ in rows], *[list(c) for c in zip(*[t for _, t in rows])]],
                      schema=["lineno", *header], orient="col")
    host = opts.host or path.stem
    if opts.host is None:
        opts.note(f"{path}: nvidia-smi dmon names no host; using the file name {path.stem!r} (give --host)")
    gpu = pl.col("gpu").cast(pl.Int64, strict=False)
    if "date" in header and "time" in header:
        ts = parse_local_times(pl.col("date") + " " + pl.col("time"), tz=opts.tz, fmt="%Y%m%d %H:%M:%S")
        if opts.tz is None:
            opts.note(f"{path}: nvidia-smi dmon times carry no zone; read as UTC (give --tz)")
    else:
        interval = opts.interval_s or 1.0
        if opts.interval_s is None:
            opts.note(f"{path}: nvidia-smi dmon tick interval assumed 1 s (give --interval)")
        start = opts.start_time(str(path), "nvidia-smi dmon")
        tick = pl.int_range(pl.len()).over("gpu")
        ts = (pl.lit(int(start.timestamp() * 1e6)) + (tick * interval * 1e6).round(0).cast(pl.Int64)).cast(
            pl.Datetime("us", "UTC"))
    df = df.with_columns(ts.alias("timestamp"), gpu.alias("_gpu"))
    rows_read = df.height
    if "date" in header and "time" in header:  # -o DT: a date/time that does not parse is never a null time
        df = _dmon_times_checked(df, path, opts)
    parts = []
    for col in header:
        if col in ("gpu", "date", "time"):
            continue
        if col not in NVIDIA_SMI_DMON:
            skipped.append(Skipped(str(path), f"column {col}", "nvidia-smi dmon column ridgeline does not analyze"))
            continue
        field, scale = NVIDIA_SMI_DMON[col]
        num = pl.col(col).cast(pl.Float64, strict=False)
        bad = df.filter(num.is_null() & (pl.col(col) != "-"))
        if bad.height:
            r = bad.row(0, named=True)
            raise InputError(path, "expected a number or -", line=r["lineno"], column=col, actual=r[col])
        parts.append(df.select("timestamp", pl.lit(host).alias("host"), pl.col("_gpu").alias("gpu"),
                               pl.lit(field).alias("field"), scaled(num, scale).alias("value")))
    if not parts:
        raise InputError(path, "expected dmon columns ridgeline analyzes (sm, mem, pwr, pclk, ...)")
    return pl.concat(parts), InputInfo(str(path), "nvidia-smi-dmon", rows_read), skipped


DMON_TIME_EXPECTED = "expected a date and time like 20260103 15:36:53 (nvidia-smi dmon -o DT)"


def _dmon_times_checked(df, path, opts):
    """Rows of an ``nvidia-smi dmon -o DT`` capture whose date and time do not parse: strict, an
    InputError naming the first (line, ``date time``); lenient, the rows are left out and listed."""
    import polars as pl

    from ridgeline.parsers import guard

    bad = df.filter(pl.col("timestamp").is_null())
    if not bad.height:
        return df
    guard.bad_cells(opts, path, bad.with_columns((pl.col("date") + " " + pl.col("time")).alias("_when")),
                    DMON_TIME_EXPECTED, column="date time", value="_when", action="row")
    return df.filter(pl.col("timestamp").is_not_null())
