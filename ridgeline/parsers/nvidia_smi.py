"""nvidia-smi outputs -> TELEMETRY rows.

``nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,... --format=csv [-l 1]``:
separator ``", "``; header = the query list with units in brackets (``utilization.gpu [%]``);
values carry units unless ``nounits`` (``34 %``, ``17304 MiB``, ``71.06 W``); ``[N/A]`` and
``[Not Supported]`` = not reported (null). Timestamps ``YYYY/MM/DD HH:MM:SS.mmm`` are local
time without a zone: read in ``--tz`` (default UTC, with a note). Without an ``index`` or
``uuid`` column the GPU index is unknown (null).

``nvidia-smi dmon``: ``# gpu pwr gtemp ... `` header and ``# Idx W C ...`` units line,
whitespace-separated values, ``-`` = not supported; ``-o DT`` adds ``#Date Time`` columns;
otherwise ticks are inferred from the GPU index repeating (``start + tick * interval``).
``sm`` there is NVML GPU-Util, not SM_ACTIVE.
"""

from __future__ import annotations

import io
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.dcgm_fields import scaled
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
    from ridgeline.parsers.telemetry_common import wide_to_long_rows

    wide, long, info, skipped = read_query_csv_wide(path, opts=opts)
    return (long if long is not None else wide_to_long_rows(wide)), info, skipped


def read_query_csv_wide(path, *, opts):
    """Parse ``nvidia-smi --query-gpu ... --format=csv`` into one row per CSV row.

    Returns ``(wide, long, info, skipped)``: ``wide`` has the identity columns and one column
    per canonical field (scaled; None when two columns name the same field, then ``long`` holds
    the long rows).
    """
    import polars as pl

    from ridgeline.parsers.dcgm_fields import NVIDIA_SMI_IDENTITY, NVIDIA_SMI_QUERY, blank_to_null
    from ridgeline.parsers.telemetry_common import parse_local_times

    from ridgeline.parsers.dcgm_dmon import _odd_breaks

    path = Path(path)
    data = path.read_bytes()
    plain = not _odd_breaks(data)  # only \n / \r\n line breaks: polars reads the file as Python would
    text = data.decode("utf-8", errors="replace")
    del data
    if not text:
        raise InputError(path, "expected an nvidia-smi CSV header line")
    nl = text.find("\n")
    header = [h.strip() for h in (text[: nl + 1] if nl >= 0 else text).splitlines()[0].split(",")]
    try:
        if plain:
            del text
            df = pl.read_csv(path, has_header=True, infer_schema=False, new_columns=None, truncate_ragged_lines=False,
                             encoding="utf8-lossy")
        else:  # lone carriage returns, form feeds...: Python's universal newlines, as a text read gives
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            df = pl.read_csv(io.StringIO(text), has_header=True, infer_schema=False, new_columns=None,
                             truncate_ragged_lines=False)
    except Exception as err:  # noqa: BLE001 - report as an input error
        raise InputError(path, f"expected comma-separated nvidia-smi CSV ({err.__class__.__name__})") from err
    df.columns = header[: len(df.columns)] if len(header) >= len(df.columns) else df.columns
    df = df.with_columns(pl.all().str.strip_chars()).with_row_index("lineno", offset=2)
    skipped: list[Skipped] = []
    prop = {h: h.split(" [")[0].strip().lower() for h in header}
    host = opts.host or path.stem
    if opts.host is None:
        opts.note(f"{path}: nvidia-smi CSV names no host; using the file name {path.stem!r} (give --host)")
    ident = {NVIDIA_SMI_IDENTITY[p]: h for h, p in prop.items() if p in NVIDIA_SMI_IDENTITY}
    if "timestamp" not in ident:
        raise InputError(path, "expected a 'timestamp' column (nvidia-smi --query-gpu=timestamp,...)", line=1)
    ts = parse_local_times(pl.col(ident["timestamp"]), tz=opts.tz, fmt="%Y/%m/%d %H:%M:%S%.f")
    bad_ts = df.filter(ts.is_null())
    if bad_ts.height:
        r = bad_ts.row(0, named=True)
        raise InputError(path, "expected a timestamp like 2026/01/03 15:36:53.507", line=r["lineno"],
                         column=ident["timestamp"], actual=r[ident["timestamp"]])
    base = [
        ts.alias("timestamp"),
        pl.lit(host).alias("host"),
        (_num(ident["gpu"]).cast(pl.Int64) if "gpu" in ident else pl.lit(None, pl.Int64)).alias("gpu"),
        (pl.col(ident["uuid"]) if "uuid" in ident else pl.lit(None, pl.String)).alias("uuid"),
        (pl.col(ident["model"]) if "model" in ident else pl.lit(None, pl.String)).alias("model"),
    ]
    measured = []  # (column, field, scale)
    for h, p in prop.items():
        if p in NVIDIA_SMI_IDENTITY:
            continue
        if p not in NVIDIA_SMI_QUERY:
            skipped.append(Skipped(str(path), f"column {h}", "nvidia-smi property ridgeline does not analyze"))
            continue
        field, scale = NVIDIA_SMI_QUERY[p]
        measured.append((h, field, scale))
    if not measured:
        raise InputError(path, "expected at least one measured property (utilization.gpu, memory.used, power.draw, ...)", line=1)
    # the usual column holds '<number> <unit>' or a blank marker in every row: its first token
    # is cast directly (the same number the leading-number regex of _num extracts)
    simple = df.select([(_first_token(h).str.contains(_NUMBER_RE) | pl.col(h).fill_null("").is_in(_MISSING)).all()
                        .alias(f"s{i}") for i, (h, _f, _s) in enumerate(measured)]).row(0)
    nums = [(pl.when(pl.col(h).fill_null("").is_in(_MISSING)).then(None)
             .otherwise(_first_token(h).cast(pl.Float64, strict=False)) if fast else _num(h))
            for (h, _f, _s), fast in zip(measured, simple)]
    # one pass says which other columns hold a value that is neither a number nor a known blank
    bad_any = df.select([(num.is_null() & ~pl.col(h).fill_null("").is_in(_MISSING)).any().alias(f"b{i}")
                         for i, ((h, _f, _s), num) in enumerate(zip(measured, nums))]).row(0)
    for (h, _field, _scale), num, bad in zip(measured, nums, bad_any):
        if bad:
            r = df.filter(num.is_null() & ~pl.col(h).fill_null("").is_in(_MISSING)).row(0, named=True)
            raise InputError(path, "expected a number, [N/A] or [Not Supported]", line=r["lineno"], column=h, actual=r[h])
    info = InputInfo(str(path), "nvidia-smi-csv", df.height)
    wide = df.select(*base, *[blank_to_null(scaled(num, scale)).alias(f"_v{i}")
                              for i, ((_h, _f, scale), num) in enumerate(zip(measured, nums))])
    fields = [f for _h, f, _s in measured]
    if len(set(fields)) == len(fields):
        return wide.rename({f"_v{i}": f for i, f in enumerate(fields)}), None, info, skipped
    ident = [c for c in wide.columns if not c.startswith("_v")]
    long = pl.concat([wide.select(*ident, pl.lit(f).alias("field"), pl.col(f"_v{i}").alias("value"))
                      for i, f in enumerate(fields)])
    return None, long, info, skipped


def read_smi_dmon(path, *, opts):
    """Parse ``nvidia-smi dmon`` text. Returns (DataFrame, InputInfo, skipped)."""
    import polars as pl

    from ridgeline.parsers.dcgm_fields import NVIDIA_SMI_DMON
    from ridgeline.parsers.telemetry_common import parse_local_times

    path = Path(path)
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
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
    return pl.concat(parts), InputInfo(str(path), "nvidia-smi-dmon", df.height), skipped
