"""Telemetry tables we document ourselves: long or wide, CSV or Parquet (also hive folders).

The column convention (case-insensitive names):

* **long**: ``timestamp, host, gpu, field, value`` and optionally ``uuid, gpu_instance,
  model``. ``field`` is a canonical field name (``tensor_active_ratio``, see
  ``TELEMETRY_FIELDS``) or a DCGM name (``DCGM_FI_PROF_PIPE_TENSOR_ACTIVE``, 1.x
  ``dcgm_gpu_utilization``, dmon ``TENSO``); DCGM names are in DCGM units and are scaled
  (GPU_UTIL percent -> ratio, FB MiB -> bytes, clocks MHz -> Hz), canonical names are taken
  as already canonical. ``__name__`` / ``metric`` are accepted for ``field`` (prometheus-api-client
  dumps), ``hostname`` / ``instance`` for ``host``, ``UUID``, ``GPU_I_ID``, ``modelName``.
* **wide**: ``timestamp, host, gpu`` (host, gpu optional) + one column per field, named
  canonically or by DCGM name, same scaling rules.
* ``timestamp``: a datetime (zone-aware, or naive = ``--tz``/UTC), an ISO-8601 string, or
  epoch numbers (seconds, milliseconds, microseconds or nanoseconds by magnitude).
* ``labels`` (optional, either layout): the rows' workload labels as the TELEMETRY table's
  ``labels`` column holds them (``name="value"`` pairs sorted by name; ridgeline's store writes
  it, :mod:`ridgeline.sources.store`): passed through, so ``--by pod|namespace|label=NAME`` groups
  a store as it groups the source it was written from (:func:`carries_labels` tells whether an
  input has the column).
* Parquet folders may be hive-partitioned (``date=2026-01-01/host=node1/part-0.parquet``):
  partition keys become columns, so ``host`` may live in the path.

Parquet stays a lazy scan (a fleet-day is never loaded whole); field names are mapped with
expressions. Rows whose field ridgeline does not know are listed in ``skipped`` per name.
"""

from __future__ import annotations

import os
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.paths import polars_path
from ridgeline.parsers.telemetry import hive
from ridgeline.parsers.telemetry.dcgm_fields import scaled
from ridgeline.parsers.telemetry.common import pod_of_labels
from ridgeline.parsers.telemetry.syntax import ALIASES
from ridgeline.result import InputInfo, Skipped

LABELS = "labels"  # the workload labels column a store keeps (ridgeline.sources.store): passed through

def _resolve(names: list[str]) -> dict[str, str]:
    """canonical role -> actual column name."""
    low = {n.lower().strip(): n for n in names}
    out = {}
    for role, alts in ALIASES.items():
        for a in alts:
            if a in low:
                out[role] = low[a]
                break
    return out


def layout_of_columns(names: list[str]) -> str | None:
    from ridgeline.parsers.telemetry.dcgm_fields import name_map

    roles = _resolve(names)
    if "timestamp" not in roles:
        return None
    if "field" in roles and "value" in roles:
        return "long"
    nm = name_map()
    if any(n.lower().strip() in nm for n in names):
        return "wide"
    return None


def header_layout(line: str) -> str | None:
    if "," not in line:
        return None
    return layout_of_columns([c.strip().strip('"') for c in line.split(",")])


def _timestamp_expr(col: str, dtype, tz: str | None):
    import polars as pl

    c = pl.col(col)
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone is None:
            return c.dt.replace_time_zone(tz or "UTC", ambiguous="earliest", non_existent="null") \
                .dt.convert_time_zone("UTC").cast(pl.Datetime("us", "UTC"))
        return c.dt.convert_time_zone("UTC").cast(pl.Datetime("us", "UTC"))
    if dtype == pl.Date:
        return c.cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    if dtype.is_numeric():
        v = c.cast(pl.Float64)
        us = (pl.when(v.abs() < 1e11).then(v * 1e6)
              .when(v.abs() < 1e14).then(v * 1e3)
              .when(v.abs() < 1e17).then(v)
              .otherwise(v / 1e3))
        return us.round(0).cast(pl.Int64).cast(pl.Datetime("us", "UTC"))
    # strings: ISO-8601 with or without offset
    s = c.cast(pl.String).str.strip_chars()
    aware = s.str.to_datetime(time_unit="us", time_zone="UTC", strict=False)
    return aware


def _normalize(lf, *, path: Path, opts, skipped: list[Skipped], kind: str, eager: bool):
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import name_map

    schema = lf.collect_schema()
    names = schema.names()
    roles = _resolve(names)
    layout = layout_of_columns(names)
    if layout is None:
        raise InputError(path, "expected a 'timestamp' column and either field,value columns (long) "
                               "or columns named by telemetry field (wide)")
    nm = name_map()
    ts = _timestamp_expr(roles["timestamp"], schema[roles["timestamp"]], opts.tz)
    host = pl.col(roles["host"]).cast(pl.String) if "host" in roles else pl.lit(None, pl.String)
    if opts.host is not None:
        host = pl.coalesce(host, pl.lit(opts.host))
    ident = [
        ts.alias("timestamp"),
        host.alias("host"),
        (pl.col(roles["gpu"]).cast(pl.Int64, strict=False) if "gpu" in roles else pl.lit(None, pl.Int64)).alias("gpu"),
        (pl.col(roles["uuid"]).cast(pl.String) if "uuid" in roles else pl.lit(None, pl.String)).alias("uuid"),
        (pl.col(roles["gpu_instance"]).cast(pl.String) if "gpu_instance" in roles else pl.lit(None, pl.String)).alias("gpu_instance"),
        (pl.col(roles["model"]).cast(pl.String) if "model" in roles else pl.lit(None, pl.String)).alias("model"),
    ]
    if LABELS in names:  # a store's workload labels (ridgeline.sources.store), per row
        ident += [pl.col(LABELS).cast(pl.String).alias(LABELS), pod_of_labels(pl.col(LABELS).cast(pl.String)).alias("pod")]
    if "host" not in roles and opts.host is None:
        opts.note(f"{path}: table has no host column; host left empty (give --host)")
    if layout == "long":
        fcol = roles["field"]
        distinct = _parquet_distinct(path, fcol, opts=opts) if kind == "telemetry-parquet" else None
        if distinct is None:
            present = lf.select(pl.col(fcol).cast(pl.String).alias("f")).group_by("f").agg(pl.len().alias("n")) \
                .collect(engine="streaming")
            distinct = present.get_column("f").to_list()
        fmap, smap, unknown_names = {}, {}, []
        for f in distinct:
            hit = nm.get((f or "").strip().lower())
            if hit is None:
                unknown_names.append(f)
                continue
            fmap[f], smap[f] = hit
        if unknown_names:  # count them (a pass only when there is something to report)
            counts = dict(lf.select(pl.col(fcol).cast(pl.String).alias("f")).filter(pl.col("f").is_in(unknown_names))
                          .group_by("f").agg(pl.len()).collect(engine="streaming").iter_rows())
            for f in sorted(unknown_names, key=str):
                if counts.get(f):
                    skipped.append(Skipped(str(path), f"field {f} ({counts[f]} rows)", "field ridgeline does not analyze"))
        if not fmap:
            raise InputError(path, "expected field values naming telemetry fields (e.g. gpu_util_ratio, DCGM_FI_DEV_GPU_UTIL)",
                             column=fcol)
        f = pl.col(fcol).cast(pl.String)
        vdtype = schema[roles["value"]]
        value = pl.col(roles["value"]).cast(pl.Float64, strict=not (vdtype == pl.String))
        # canonical names: identity mapping keeps the column as is (cheap path for big scans)
        identity = all(k == v for k, v in fmap.items()) and all(s == 1.0 for s in smap.values())
        out = lf.filter(f.is_in(list(fmap))) if unknown_names else lf
        if identity:
            out = out.select(*ident, f.alias("field"), value.alias("value"))
        else:
            out = out.select(
                *ident,
                f.replace_strict(fmap, return_dtype=pl.String).alias("field"),
                scaled(value, f.replace_strict(smap, return_dtype=pl.Float64)).alias("value"),
            )
    else:
        parts = []
        used = {roles.get(r) for r in ("timestamp", "host", "gpu", "uuid", "gpu_instance", "model")} | {"date", LABELS}
        for col in names:
            if col in used:
                continue
            hit = nm.get(col.strip().lower())
            if hit is None:
                skipped.append(Skipped(str(path), f"column {col}", "column ridgeline does not analyze"))
                continue
            field, scale = hit
            dt = schema[col]
            v = pl.col(col).cast(pl.Float64, strict=not (dt == pl.String))
            parts.append(lf.select(*ident, pl.lit(field).alias("field"), scaled(v, scale).alias("value")))
        out = pl.concat(parts, how="vertical") if len(parts) > 1 else parts[0]
    return out


def wide_frame(lf, *, opts):
    """A wide table (Data- or LazyFrame) as the per-timestamp wide frame the reduction reads
    without unpivoting: ``timestamp, host, gpu, uuid, gpu_instance, model`` as in the long
    table, then one Float64 column per canonical field (DCGM names scaled, NaN, infinities and
    DCGM blank sentinels null), in the table's column order.

    None for a long table, or when two columns name the same field (the long table then keeps
    both rows per timestamp; only the long path reproduces that). Checks, notes and skipped
    columns are :func:`_normalize`'s, which the caller has run on the same table.
    """
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import blank_to_null, name_map

    schema = lf.collect_schema()
    names = schema.names()
    if layout_of_columns(names) != "wide":
        return None
    roles = _resolve(names)
    nm = name_map()
    used = {roles.get(r) for r in ("timestamp", "host", "gpu", "uuid", "gpu_instance", "model")} | {"date"}
    fields: dict[str, object] = {}
    for col in names:
        if col in used:
            continue
        hit = nm.get(col.strip().lower())
        if hit is None:
            continue
        field, scale = hit
        if field in fields:
            return None
        v = scaled(pl.col(col).cast(pl.Float64, strict=not (schema[col] == pl.String)), scale).cast(pl.Float64)
        fields[field] = blank_to_null(v)
    if not fields:
        return None
    ts = _timestamp_expr(roles["timestamp"], schema[roles["timestamp"]], opts.tz)
    host = pl.col(roles["host"]).cast(pl.String) if "host" in roles else pl.lit(None, pl.String)
    if opts.host is not None:
        host = pl.coalesce(host, pl.lit(opts.host))

    def opt(role, dtype):
        return (pl.col(roles[role]).cast(dtype, strict=False) if role == "gpu" else pl.col(roles[role]).cast(dtype)) \
            if role in roles else pl.lit(None, dtype)

    return lf.select(
        ts.alias("timestamp"), host.alias("host"), opt("gpu", pl.Int64).alias("gpu"),
        opt("uuid", pl.String).alias("uuid"), opt("gpu_instance", pl.String).alias("gpu_instance"),
        opt("model", pl.String).alias("model"),
        *[e.alias(f) for f, e in fields.items()],
    )


def hive_host_files(path, files=None) -> dict[str, list[str]] | None:
    """``host=NAME`` folders of a hive-partitioned Parquet folder (or of ``files`` in it): NAME ->
    its files (sorted), when every Parquet file sits under exactly one such folder; else None.
    NAME is decoded as the store encoded it (:mod:`ridgeline.parsers.telemetry.hive`; None: the
    rows have no host), so it is the value the scan's ``host`` column holds.
    Hidden paths (a writer's temporary files) are left out, as the column groups leave them."""
    path = Path(path)
    if not path.is_dir():
        return None
    out: dict[str | None, list[str]] = {}
    for f in sorted(Path(x) for x in files) if files is not None else sorted(path.rglob("*.parquet")):
        rel = f.relative_to(path).parts
        if any(part.startswith(".") for part in rel):
            continue
        one, host = hive.value_of(f, "host", root=path)
        if not one:
            return None
        out.setdefault(host, []).append(str(f))
    return out or None


def host_is(host):
    """The filter of one host's rows (None: the rows without a host)."""
    import polars as pl

    return pl.col("host").is_null() if host is None else pl.col("host") == host


def parquet_source(path, *, opts=None):
    """What a Parquet input's scan reads: the file, the folder's ``**/*.parquet`` glob, or, when
    a corrupt file was left out of the folder (``opts.parquet_files``), the list of its readable
    files (hive partitions are still taken from their paths)."""
    path = Path(path)
    files = (getattr(opts, "parquet_files", None) or {}).get(str(path))
    if files is not None:
        return list(files)
    return str(path / "**" / "*.parquet") if path.is_dir() else str(path)


def parquet_files(path, *, opts=None) -> list[Path]:
    """The Parquet files a folder input reads (see :func:`parquet_source`), sorted."""
    path = Path(path)
    files = (getattr(opts, "parquet_files", None) or {}).get(str(path))
    if files is not None:
        return sorted(Path(f) for f in files)
    return sorted(path.rglob("*.parquet")) if path.is_dir() else [path]


DISTINCT_PYARROW_BYTES = 16 << 20  # below this, a polars pass over the field column is cheaper than importing pyarrow


def _parquet_distinct(path: Path, column: str, *, opts=None) -> list | None:
    """Distinct values of a Parquet string column from its dictionary pages (no per-row
    hashing); None when that does not work (then polars counts them).

    Reads file by file with ``pyarrow.parquet`` (``pyarrow.dataset`` would import pandas,
    a quarter of a second before any data is read). The files are every ``*.parquet`` under
    the folder, a superset of what the polars scan reads, so no name is missed (a name only
    in an extra file counts 0 rows and is not reported). Files of less than
    ``DISTINCT_PYARROW_BYTES`` in all: None (polars counts them faster than pyarrow imports)."""
    try:
        files = parquet_files(path, opts=opts)
        if sum(f.stat().st_size for f in files) < DISTINCT_PYARROW_BYTES:
            return None
        import pyarrow as pa
        import pyarrow.parquet as pq

        def names_in(f) -> set:
            found: set = set()
            pf = pq.ParquetFile(str(f), read_dictionary=[column])
            for i in range(pf.num_row_groups):
                for chunk in pf.read_row_group(i, columns=[column]).column(0).chunks:
                    values = chunk.dictionary if isinstance(chunk, pa.DictionaryArray) else chunk.unique()
                    found.update(values.to_pylist())
            return found

        seen: set = set()
        if len(files) > 1:  # files in parallel (pyarrow releases the GIL while decoding)
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(max_workers=min(len(files), os.cpu_count() or 2)) as pool:
                for found in pool.map(names_in, files):
                    seen.update(found)
        else:
            for f in files:
                seen.update(names_in(f))
        return sorted(seen, key=lambda v: (v is None, str(v)))
    except Exception:  # noqa: BLE001 - fall back to the polars pass
        return None


def read_table_csv(path, *, opts):
    """Long or wide telemetry CSV. Returns (DataFrame, InputInfo, skipped)."""
    import polars as pl

    from ridgeline.parsers import guard

    path = Path(path)
    guard.check_column_count(path)  # (read_guarded checks it too; a direct caller gets the same cap)
    nulls = ["", "NA", "N/A", "null", "NaN", "nan"]
    ragged = None  # rows with more or fewer fields than the header (found when polars hints at them)

    def read(truncate: bool):
        try:
            return pl.read_csv(polars_path(path), infer_schema_length=10000, null_values=nulls,
                               truncate_ragged_lines=truncate)
        except pl.exceptions.ComputeError:
            # a column whose first 10,000 values looked like integers ("95") and later holds "95.5":
            # infer the types from every row instead
            return pl.read_csv(polars_path(path), infer_schema_length=None, null_values=nulls,
                               truncate_ragged_lines=truncate)

    try:
        try:
            df = read(False)
        except Exception as err:  # noqa: BLE001 - a row with more fields than the header: find it
            ragged = _ragged_rows(path) if "more fields" in str(err) else None
            if not ragged:
                raise
            df = read(True)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected a telemetry CSV table, got {plain_reason(err)}") from err
    if ragged is None and df.width > 1 and df.get_column(df.columns[-1]).null_count() and not _every_line_full(path):
        ragged = _ragged_rows(path)  # a short row reads as blanks at its end: told apart from blank cells here
    skipped: list[Skipped] = []
    roles = _resolve(df.columns)

    n_rows = df.height
    df = df.with_row_index("lineno", offset=2)
    if ragged:
        n = len(_split_header(path))
        if guard.strict_of(opts):
            line, fields = ragged[0]
            raise InputError(path, f"expected {n} comma-separated fields, as in the header" + guard.ROW_HINT,
                             line=line, actual=f"{fields} fields")
        for line, fields in ragged:
            skipped.append(guard.Problem(line, None, f"{fields} fields", f"expected {n} comma-separated fields, "
                                         "as in the header", "row").skipped(path))
        df = df.filter(~pl.col("lineno").is_in([line for line, _f in ragged]))
    if not guard.strict_of(opts):  # --lenient: bad rows left out, bad cells read as missing, all listed
        df = _lenient_rows(df, roles, path, opts=opts, skipped=skipped)
    _check_wide_cells(df, roles, path, opts=opts, skipped=skipped)
    if "value" in roles and df.schema[roles["value"]] == pl.String and guard.strict_of(opts):
        bad = df.filter(
            pl.col(roles["value"]).cast(pl.Float64, strict=False).is_null() & pl.col(roles["value"]).is_not_null())
        if bad.height:
            r = bad.row(0, named=True)
            raise InputError(path, "expected a number" + guard.CELL_HINT, line=r["lineno"], column=roles["value"],
                             actual=r[roles["value"]])
    df = df.drop("lineno")
    out = _normalize(df.lazy(), path=path, opts=opts, skipped=skipped, kind="telemetry-csv", eager=True).collect()
    bad_ts = out.filter(pl.col("timestamp").is_null())
    if bad_ts.height:
        raise InputError(path, "expected timestamps (ISO-8601 or epoch seconds)", column=roles["timestamp"],
                         actual=f"{bad_ts.height} unparseable values")
    return out, InputInfo(str(path), "telemetry-csv", n_rows), skipped


def _split_header(path: Path) -> list[str]:
    with open(path, encoding="utf-8-sig", errors="replace") as fh:  # -sig: a byte-order mark is no text
        return fh.readline().rstrip("\r\n").split(",")


def _every_line_full(path: Path) -> bool:
    """True when every line of the file (header included) holds exactly the header's number of
    commas and there are no quotes: then no row is short or long, and :func:`_ragged_rows` need
    not look (a count of bytes: 0.25 against 0.87 CPU s for the line scan on a 135 MB long CSV).
    False says only "look"."""
    n = len(_split_header(path))
    commas = newlines = 0
    last = b""
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            if b'"' in chunk:
                return False
            commas += chunk.count(b",")
            newlines += chunk.count(b"\n")
            last = chunk[-1:]
    lines = newlines + (1 if last not in (b"\n", b"") else 0)
    return commas == (n - 1) * lines


def _ragged_rows(path: Path) -> list[tuple[int, int]]:
    """``(line, fields)`` of the rows whose number of comma-separated fields is not the header's
    (one streaming pass over the lines; blank lines and lines with quotes, whose commas may be
    inside a value, are left to the CSV reader)."""
    import polars as pl

    n = len(_split_header(path))
    line = pl.col("line").str.strip_chars_end("\r")
    fields = line.str.count_matches(",", literal=True) + 1
    bad = (pl.scan_csv(polars_path(path), has_header=False, separator="\x1f", quote_char=None, infer_schema=False,
                       new_columns=["line"], truncate_ragged_lines=True)
           .with_row_index("_line", offset=1).slice(1)
           .filter(line.is_not_null() & (line != "") & ~line.str.contains('"', literal=True) & (fields != n))
           .select("_line", fields.alias("n")).collect(engine="streaming"))
    return [(int(ln), int(k)) for ln, k in bad.iter_rows()]


def _cell_is_bad(col: str):
    """A String cell that holds something and is no number (NaN, inf and the null markers pass)."""
    import polars as pl

    c = pl.col(col)
    return c.is_not_null() & (c.str.strip_chars() != "") & c.cast(pl.Float64, strict=False).is_null()


def _check_wide_cells(df, roles, path, *, opts, skipped):
    """A wide CSV's field columns that polars read as text: each cell is a number or blank.
    Strict: InputError naming line and column; lenient: the cells listed (read as missing)."""
    import polars as pl

    from ridgeline.parsers import guard
    from ridgeline.parsers.telemetry.dcgm_fields import name_map

    if layout_of_columns(df.columns) != "wide":
        return
    nm = name_map()
    used = {roles.get(r) for r in ("timestamp", "host", "gpu", "uuid", "gpu_instance", "model")} | {"date"}
    schema = df.schema  # once: df.schema builds every column's entry (per column it was columns x columns)
    for col in df.columns:
        if col in used or col == "lineno" or schema[col] != pl.String or nm.get(col.strip().lower()) is None:
            continue
        guard.bad_cells(opts, path, df.filter(_cell_is_bad(col)), "expected a number", column=col, value=col)
    skipped.extend(getattr(opts, "lenient_skipped", []) if not guard.strict_of(opts) else [])
    if not guard.strict_of(opts):
        opts.lenient_skipped = []


def _lenient_rows(df, roles, path, *, opts, skipped):
    """``--lenient`` on a telemetry CSV (``df`` with ``lineno``): rows whose GPU cell is no index
    0..4095 or whose timestamp does not parse or lies outside 1970..2200 are left out, value cells
    that are no number listed (the cast reads them as missing); each listed with its line."""
    import polars as pl

    from ridgeline.parsers import guard

    def drop(cond, column, expected):
        bad = df.filter(cond)
        for ln, v in bad.select("lineno", pl.col(column).cast(pl.String)).iter_rows():
            skipped.append(guard.Problem(ln, column, v, expected, "row").skipped(path))
        return df.filter(~cond) if bad.height else df

    if "gpu" in roles:
        g = pl.col(roles["gpu"]).cast(pl.String).str.strip_chars()
        cond = g.is_not_null() & (g != "") & (~g.str.contains(r"^[0-9]{1,4}$")
                                             | (g.cast(pl.Int64, strict=False) > guard.MAX_GPU_INDEX))
        df = drop(cond.fill_null(False), roles["gpu"], f"expected a GPU index 0..{guard.MAX_GPU_INDEX} (or nothing)")
    if "timestamp" in roles:
        col = roles["timestamp"]
        dtype = df.schema[col]
        if dtype.is_numeric():  # epoch numbers, as _timestamp_expr reads them, without its integer cast
            v = pl.col(col).cast(pl.Float64)
            us = (pl.when(v.abs() < 1e11).then(v * 1e6).when(v.abs() < 1e14).then(v * 1e3)
                  .when(v.abs() < 1e17).then(v).otherwise(v / 1e3))
        else:
            us = _timestamp_expr(col, dtype, opts.tz).dt.epoch(time_unit="us").cast(pl.Float64)
        lo, hi = guard._epoch_us(guard.MIN_TIME), guard._epoch_us(guard.MAX_TIME)
        cond = (us.is_null() | us.is_nan() | (us < lo) | (us >= hi)).fill_null(True)
        df = drop(cond, col, f"expected a timestamp between {guard.MIN_TIME:%Y-%m-%d} and {guard.MAX_TIME:%Y-%m-%d} "
                             "(ISO-8601 or epoch seconds)")
    if "value" in roles and df.schema[roles["value"]] == pl.String:
        col = roles["value"]
        for ln, v in df.filter(_cell_is_bad(col)).select("lineno", col).iter_rows():
            skipped.append(guard.Problem(ln, col, v, "expected a number", "cell").skipped(path))
    return df


def scan_table_parquet(path, *, opts):
    """Long or wide telemetry Parquet file or (hive-partitioned) folder, scanned lazily."""
    import polars as pl

    path = Path(path)
    source = parquet_source(path, opts=opts)
    try:
        lf = hive.scan(source, missing_columns="insert", extra_columns="ignore")
        rows = lf.select(pl.len()).collect().item()
    except Exception as err:  # noqa: BLE001
        from ridgeline.parsers.paths import name_refusal, polars_refused_name
        from ridgeline.parsers.plain import plain_reason

        if polars_refused_name(path, str(err)):  # (a store's folders cannot be reached through a link)
            raise InputError(path, name_refusal("telemetry Parquet")) from None
        raise InputError(path, f"expected readable telemetry Parquet, got {plain_reason(err)}") from err
    _check_parquet_gpu_text(lf, path, opts=opts)
    skipped: list[Skipped] = []
    groups = _column_groups(path, opts=opts) if path.is_dir() else None
    if groups is not None and len(groups) > 1:
        # files with different columns (a store whose hosts export different fields): each set of
        # files is normalized on its own, so a field a file lacks is absent, not a column of nulls
        parts = []
        for files in groups:
            part_skipped: list[Skipped] = []
            parts.append(_normalize(hive.scan(files), path=path, opts=opts,
                                    skipped=part_skipped, kind="telemetry-parquet", eager=False))
            skipped += [s for s in part_skipped if s not in skipped]
        out = pl.concat(parts, how="diagonal_relaxed")  # (a set of files without labels: null labels)
    else:
        out = _normalize(lf, path=path, opts=opts, skipped=skipped, kind="telemetry-parquet", eager=False)
    return out, InputInfo(str(path), "telemetry-parquet", int(rows)), skipped


def _check_parquet_gpu_text(lf, path, *, opts) -> None:
    """A Parquet GPU column stored as text must hold GPU indices: ``x7`` would be cast to a null
    GPU and read as a GPU nobody can name (issue 21). Strict: InputError naming the row and the
    value (one column read); lenient: read on as before (the rows keep no GPU)."""
    import polars as pl

    from ridgeline.parsers import guard

    if not guard.strict_of(opts):
        return
    try:
        schema = lf.collect_schema()
    except Exception:  # noqa: BLE001 - the scan below reports what is wrong
        return
    gpu = _resolve(list(schema.names())).get("gpu")
    if gpu is None or schema[gpu] != pl.String:
        return
    cell = pl.col(gpu)
    bad = (lf.select(cell).with_row_index("row", offset=1)
           .filter(cell.is_not_null() & (cell.str.strip_chars() != "") & ~cell.str.contains(guard._GPU_CELL))
           .head(1).collect())
    if bad.height:
        row, value = bad.row(0)
        raise InputError(path, f"row {row}: expected a GPU index 0..{guard.MAX_GPU_INDEX} (or nothing)",
                         column=gpu, actual=value)


def _column_groups(folder: Path, *, opts=None) -> list[list[str]] | None:
    """The folder's Parquet files grouped by their column names (footers only); None if unreadable."""
    try:
        import polars as pl  # reads the footer itself: no pyarrow import (~0.15 s) on a wide store

        groups: dict[tuple[str, ...], list[str]] = {}
        for f in parquet_files(folder, opts=opts):
            if any(part.startswith(".") for part in f.relative_to(folder).parts):
                continue
            groups.setdefault(tuple(sorted(pl.read_parquet_schema(f))), []).append(str(f))
        return list(groups.values())
    except Exception:  # noqa: BLE001 - the one-scan path reports what is wrong
        return None


def carries_labels(path, *, opts=None) -> bool:
    """Whether a telemetry table keeps workload labels: a ``labels`` column in any of its Parquet
    files (footers only) or in a CSV's header. A store written before labels were kept has none."""
    path = Path(path)
    try:
        if path.is_dir() or path.suffix.lower() == ".parquet":
            import polars as pl

            return any(LABELS in pl.read_parquet_schema(f) for f in parquet_files(path, opts=opts)
                       if not any(part.startswith(".") for part in f.parts[len(path.parts):]))
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            return LABELS in [c.strip().strip('"') for c in fh.readline().rstrip("\r\n").split(",")]
    except Exception:  # noqa: BLE001 - unreadable: reported where it was read
        return False


def label_chunks(path, *, opts, exclude=frozenset()):
    """The workload labels of a Parquet table (a store), one lazy frame per file in path order
    (a store: by day, then host): ``host, gpu, gpu_instance, timestamp, labels``, the identity
    and time read as :func:`_normalize` reads them, ``labels`` null in a file without the
    column. What :func:`ridgeline.analyzer.fleet.groups.label_runs_in_chunks` folds a file at a time:
    the runs of a long history without the store's rows in memory at once (the long table
    repeats every row's labels once per field). ``exclude``: files left out (the corrupt ones
    the reader listed as skipped)."""
    import polars as pl

    path = Path(path)
    out = []
    for f in parquet_files(path, opts=opts):
        if str(f) in exclude or (path.is_dir() and any(part.startswith(".") for part in f.relative_to(path).parts)):
            continue
        lf = hive.scan(f)
        schema = lf.collect_schema()
        roles = _resolve(schema.names())
        if "timestamp" not in roles:
            continue
        host = pl.col(roles["host"]).cast(pl.String) if "host" in roles else pl.lit(None, pl.String)
        if opts.host is not None:
            host = pl.coalesce(host, pl.lit(opts.host))
        out.append(lf.select(
            host.alias("host"),
            (pl.col(roles["gpu"]).cast(pl.Int64, strict=False) if "gpu" in roles else pl.lit(None, pl.Int64)).alias("gpu"),
            (pl.col(roles["gpu_instance"]).cast(pl.String) if "gpu_instance" in roles
             else pl.lit(None, pl.String)).alias("gpu_instance"),
            _timestamp_expr(roles["timestamp"], schema[roles["timestamp"]], opts.tz).alias("timestamp"),
            (pl.col(LABELS).cast(pl.String) if LABELS in schema.names() else pl.lit(None, pl.String)).alias(LABELS),
        ))
    return out


# a host of fewer rows is read whole: slicing costs a second and third read of each day (~1.8x
# the CPU) and saves nothing below this (benchmarks/README.md, "A store's long history")
DAY_SLICE_MIN_ROWS = 1_500_000


def day_slices(files) -> list | None:
    """One host's files of a store as UTC days: ``[(lo, hi, files)]`` in time order, each file's
    rows known to lie in ``lo <= timestamp < hi`` (UTC datetimes), or None when that is not
    known, so the host is read whole.

    Known from the Parquet footers, not the folder names: every row group's ``timestamp``
    statistics (a zone-aware timestamp column, no nulls, min and max written) put the file inside
    the UTC day its ``date=`` folder names (a store's layout, :mod:`ridgeline.sources.store`).
    Fewer than two days, or fewer than :data:`DAY_SLICE_MIN_ROWS` rows in all: None."""
    import datetime as _dt

    import polars as pl

    days: dict = {}
    try:
        # the row count from the footers (polars reads no page for it), before pyarrow is imported
        if len(files) < 2 or pl.scan_parquet(list(files), missing_columns="insert",
                                                extra_columns="ignore").select(pl.len()).collect().item() < DAY_SLICE_MIN_ROWS:
            return None
        import pyarrow.parquet as pq

        for f in files:
            seg = [p.split("=", 1)[1] for p in Path(f).parts[:-1] if p.lower().startswith("date=")]
            if len(seg) != 1:
                return None
            lo = _dt.datetime.fromisoformat(seg[0]).replace(tzinfo=_dt.timezone.utc)
            if (lo.hour, lo.minute, lo.second, lo.microsecond) != (0, 0, 0, 0):
                return None
            hi = lo + _dt.timedelta(days=1)
            meta = pq.ParquetFile(f).metadata
            names = [meta.schema.column(i).name for i in range(meta.num_columns)]
            roles = _resolve(names)
            if "timestamp" not in roles:
                return None
            col = names.index(roles["timestamp"])
            if getattr(meta.schema.to_arrow_schema().field(roles["timestamp"]).type, "tz", None) is None:
                return None
            for g in range(meta.num_row_groups):
                st = meta.row_group(g).column(col).statistics
                if st is None or not st.has_min_max or st.null_count is None or st.null_count \
                        or not (lo <= st.min and st.max < hi):
                    return None
            days.setdefault(lo, []).append(str(f))
    except Exception:  # noqa: BLE001 - a footer that does not say: read the host whole
        return None
    if len(days) < 2:
        return None
    return [(lo, lo + _dt.timedelta(days=1), fs) for lo, fs in sorted(days.items())]
