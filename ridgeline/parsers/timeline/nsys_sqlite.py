"""Nsight Systems ``nsys export --type sqlite`` databases -> TIMELINE / HOST_API tables
(see :mod:`ridgeline.parsers.timeline.reader` for the formats and their detection)."""

from __future__ import annotations

from ridgeline.result import path_label

from pathlib import Path

from ridgeline.analyzer.schema import LAUNCH_RE, SYNC_CALLS, SYNC_RE
from ridgeline.errors import InputError
from ridgeline.parsers.timeline.common import (
    TimelineTables,
    _dims_and_kinds,
    _empty_activities,
    _finish_activities,
    _finish_api,
    MAX_DEVICE,
    check_host_calls,
    check_records,
    pytorch_capture,
)


def _connect(path):
    import sqlite3

    return sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)


def _tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}


_NSYS_TABLES = ("StringIds", "EXPORT_META_DATA", "META_DATA_EXPORT", "TARGET_INFO_GPU")


def _is_nsys_sqlite(path) -> bool:
    """An SQLite file that is an nsys export: one of its tables (``CUPTI_ACTIVITY_KIND_*``,
    ``StringIds``, the meta tables), or a damaged SQLite file whose schema cannot be read (the
    reader then says it is damaged, rather than "not a format we know")."""
    import sqlite3

    try:
        con = _connect(path)
        try:
            names = _tables(con)
        finally:
            con.close()
    except sqlite3.Error:
        return True
    return any(n.startswith("CUPTI_ACTIVITY_KIND_") or n in _NSYS_TABLES for n in names)


def _damaged(path, err) -> InputError:
    from ridgeline.parsers.plain import plain_reason

    text = str(err).strip()
    if text.startswith(("no such column", "no such table")):  # readable, but not the tables nsys writes
        return InputError(path, "expected the CUPTI activity tables and columns of an Nsight Systems export "
                          f"(nsys export --type sqlite); {plain_reason(err)}")
    return InputError(path, "expected a readable Nsight Systems export (nsys export --type sqlite); the SQLite file is "
                      "damaged or cut short: " + plain_reason(err))



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


def _int(col: str, alias: str, tail: str = "") -> str:
    """An integer column as SQL: NULL where the cell is not an integer (text, blob, a real such as
    3.5: nsys writes integers only), so polars gets one integer type; :func:`_problem` names such
    cells where they matter (device, times, bytes)."""
    return f"CASE WHEN typeof({col}) = 'integer' THEN {col} {tail} END AS {alias}"


def _problem(*cols: str) -> str:
    """SQL: null, or what is wrong with the first of ``cols`` that is not an integer (NULL, text, real)."""
    whens = " ".join(f"WHEN typeof({c}) <> 'integer' THEN '{c.split('.')[-1]} is ' || "
                     f"substr(quote({c}), 1, 40)" for c in cols if c != "bytes")
    if "bytes" in cols:  # a copy without a size is legal (NULL); text is not
        whens += " WHEN typeof(bytes) NOT IN ('integer', 'null') THEN 'bytes is ' || substr(quote(bytes), 1, 40)"
    return f"CASE {whens} END AS _problem"


def _launches(con, names):
    """(process_id, correlation_id, launch_ns): per correlation id of the GPU work, the start of the
    runtime call that launched it (CUPTI_ACTIVITY_KIND_RUNTIME: cudaLaunchKernel, cudaMemcpyAsync,
    cudaGraphLaunch..., the earliest where several share an id; CUPTI ids are unique per process),
    or None without a runtime table. Read whatever ``host_calls`` keeps in HOST_API."""
    import polars as pl

    tables = [t for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET")
              if t in names]
    if "CUPTI_ACTIVITY_KIND_RUNTIME" not in names or not tables:
        return None
    ids = " UNION ".join(f"SELECT correlationId FROM {t}" for t in tables)
    return _select(con, f"""
        SELECT r.globalTid / 16777216 % 16777216 AS process_id, r.correlationId AS correlation_id,
               MIN(r.start) AS launch_ns
        FROM CUPTI_ACTIVITY_KIND_RUNTIME r
        WHERE typeof(r.start) = 'integer' AND typeof(r.correlationId) = 'integer' AND r.correlationId IN ({ids})
        GROUP BY 1, 2""").cast({"process_id": pl.Int64, "correlation_id": pl.Int64, "launch_ns": pl.Int64})


#: the host-side tables of an export, counted when it holds no GPU row (ridgeline.parsers.timeline.holdings)
HOST_TABLES = ("CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "OSRT_API")


def read_nsys_sqlite(path, *, host_calls: str = "all", strict: bool = True) -> TimelineTables:
    """``host_calls``: ``"all"`` runtime API calls in HOST_API, or ``"sync"``: only the synchronizing
    ones (:data:`ridgeline.analyzer.timeline.busy.SYNC_CALLS`, all the analysis reads; the pipeline's
    choice, since a capture holds about one runtime call per kernel). ``strict``: see
    :func:`ridgeline.parsers.timeline.common.check_records` (records are named by table and rowid).
    A cell that is not a number where one belongs (NULL or text times, a text device id) is a
    damaged record like an end before its start."""
    import sqlite3

    import polars as pl

    src = path_label(path)  # a file name that is not UTF-8, escaped (ridgeline.result.path_label)
    try:
        con = _connect(path)
        names = _tables(con)
    except sqlite3.Error as err:
        raise _damaged(path, err) from err
    notes: list[str] = []
    if "StringIds" not in names and "CUPTI_ACTIVITY_KIND_KERNEL" in names:
        raise InputError(path, "expected a StringIds table (the kernel names) in this Nsight Systems sqlite export",
                         actual="tables " + ", ".join(sorted(names)[:6]))
    try:
        meta = "META_DATA_EXPORT" if "META_DATA_EXPORT" in names else ("EXPORT_META_DATA" if "EXPORT_META_DATA" in names else None)
        version = None
        if meta:
            got = dict(con.execute(f"SELECT name, value FROM {meta}").fetchall())
            version = got.get("EXPORT_PRODUCT_VERSION")
        devices: dict[int, str] = {}
        if "TARGET_INFO_GPU" in names:
            devices = {i: str(n) for i, n in con.execute("SELECT id, name FROM TARGET_INFO_GPU")
                       if isinstance(i, int) and 0 <= i <= MAX_DEVICE and n is not None}  # a damaged row names no GPU
        parts = []
        # no per-row strings from sqlite: names come as StringIds ids and are joined in polars
        skipped: list = []
        if "CUPTI_ACTIVITY_KIND_KERNEL" in names:
            table = "CUPTI_ACTIVITY_KIND_KERNEL"
            cols = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
            name_col = "demangledName" if "demangledName" in cols else "shortName"
            k = _select(con, f"""
                SELECT rowid AS _row, {_int('deviceId', 'device')}, {_int('streamId', 'stream')},
                       {_int('start', 'start_ns')}, {_int('end', 'end_ns')}, {_problem('deviceId', 'start', 'end')},
                       {_int(name_col, 'name_id')}, {_int('correlationId', 'correlation_id')},
                       {_int('gridX', 'grid_x')}, {_int('gridY', 'grid_y')}, {_int('gridZ', 'grid_z')},
                       {_int('blockX', 'block_x')}, {_int('blockY', 'block_y')}, {_int('blockZ', 'block_z')},
                       {_int('globalPid', 'process_id', '/ 16777216 % 16777216')}
                FROM {table}""")
            k, bad = check_records(path, k, strict=strict, where=lambda r, t=table: f"{t} row {r}", what="kernel")
            skipped += bad
            if k.height:
                ids = _select(con, f"""SELECT id AS name_id, value AS name FROM StringIds
                                      WHERE id IN (SELECT DISTINCT {name_col} FROM {table})""")
                ids = ids.with_columns(pl.col("name_id").cast(pl.Int64, strict=False),
                                       pl.col("name").cast(pl.String, strict=False))
                k = k.join(ids, on="name_id", how="left", maintain_order="left").drop("name_id")
                parts.append(k.with_columns(kind=pl.lit("kernel")))
        for table, kind in (("CUPTI_ACTIVITY_KIND_MEMCPY", "memcpy"), ("CUPTI_ACTIVITY_KIND_MEMSET", "memset")):
            if table in names:
                kind_col = f"{_int('copyKind', 'copy_kind_id')}," if kind == "memcpy" else ""
                part = _select(con, f"""
                    SELECT rowid AS _row, {_int('deviceId', 'device')}, {_int('streamId', 'stream')},
                           {_int('start', 'start_ns')}, {_int('end', 'end_ns')},
                           {_problem('deviceId', 'start', 'end', 'bytes')},
                           {_int('correlationId', 'correlation_id')}, {kind_col} {_int('bytes', 'bytes')},
                           {_int('globalPid', 'process_id', '/ 16777216 % 16777216')}
                    FROM {table}""")
                part, bad = check_records(path, part, strict=strict, where=lambda r, t=table: f"{t} row {r}", what=kind)
                skipped += bad
                parts.append(part.with_columns(kind=pl.lit(kind)))
        api = None
        host_total = 0
        if "CUPTI_ACTIVITY_KIND_RUNTIME" in names:
            host_total = con.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
            where = ""
            if host_calls == "sync":  # the calls the analysis uses; LIKE is a superset, the regex below exact
                likes = " OR ".join(f"value LIKE '{n}%'" for n in SYNC_CALLS) + " OR value LIKE '%Launch%' OR value LIKE '%Memcpy%' OR value LIKE '%Memset%'"
                where = f"WHERE r.nameId IN (SELECT id FROM StringIds WHERE {likes})"
            api = _select(con, f"""
                SELECT r.rowid AS _row, {_int('r.start', 'start_ns')}, {_int('r.end', 'end_ns')},
                       {_problem('r.start', 'r.end')}, CAST(s.value AS TEXT) AS name,
                       r.correlationId AS correlation_id, r.globalTid / 16777216 % 16777216 AS process_id,
                       r.globalTid % 16777216 AS thread_id
                FROM CUPTI_ACTIVITY_KIND_RUNTIME r LEFT JOIN StringIds s ON s.id = r.nameId {where}""")
            if not api.height:
                api = None
            else:
                api = api.with_columns(kind=pl.lit("runtime"))
                if host_calls == "sync":
                    api = api.filter(pl.col("name").cast(pl.String).str.contains(SYNC_RE)
                                     | pl.col("name").cast(pl.String).str.contains(LAUNCH_RE))
                api = check_host_calls(path, api, strict=strict, notes=notes,
                                       where=lambda r: f"CUPTI_ACTIVITY_KIND_RUNTIME row {r}")
        from ridgeline.parsers.timeline.rank_env import nsys_rank

        rank, world, rank_var = nsys_rank(con, names, path=path, notes=notes)
        launches = _launches(con, names) if parts else None
        from ridgeline.parsers.timeline.nsys_nvtx import read_nvtx_ranges  # step ranges (ridgeline.analyzer.timeline.steps)

        host_counts = {} if any(p.height for p in parts) else {  # no GPU row: what the export holds instead
            t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in HOST_TABLES if t in names}
        nvtx = read_nvtx_ranges(con, names, host_calls=host_calls, select=_select, as_int=_int)
        if nvtx is not None:
            nvtx = check_host_calls(path, nvtx, strict=strict, notes=notes, where=lambda r: f"NVTX_EVENTS row {r}")
            api = nvtx if api is None else pl.concat([api, nvtx], how="diagonal_relaxed")
    except sqlite3.Error as err:
        raise _damaged(path, err) from err
    finally:
        con.close()
    if rank_var:
        notes.append(f"{path}: rank {rank}" + (f" of {world}" if world else "") + f" from the profiled process's "
                     f"environment ({rank_var})")
    parts = [p for p in parts if p.height]
    if parts and not any(p.get_column("kind")[0] == "kernel" for p in parts):
        why = "has no CUPTI_ACTIVITY_KIND_KERNEL table" if "CUPTI_ACTIVITY_KIND_KERNEL" not in names else \
            "holds no kernel rows" + (" left after the damaged ones" if skipped else "")
        notes.append(f"{path}: the export {why}: copies and memsets only (busy time is copy engine time)")
    if parts:
        df = pl.concat(parts, how="diagonal_relaxed")
        df = df.join(launches, on=["process_id", "correlation_id"], how="left", maintain_order="left") \
            if launches is not None else df
        df = _dims_and_kinds(df)
        acts = _finish_activities(df, src, devices)
    else:
        acts = _empty_activities()
        from ridgeline.parsers.timeline.holdings import judge

        notes.append(judge(host_counts, skipped=len(skipped), tool="nsys").note(path))
    if version:
        notes.append(f"{path}: Nsight Systems {version} sqlite export")
    return TimelineTables(src, "nsys-sqlite", acts, api=_finish_api(api, src) if api is not None and api.height else None,
                          devices=devices, notes=notes, skipped=skipped, host_calls_total=host_total,
                          host_api="nsys CUPTI_ACTIVITY_KIND_RUNTIME" if "CUPTI_ACTIVITY_KIND_RUNTIME" in names else None,
                          vendor="nvidia", framework=pytorch_capture(acts), rank=rank, world_size=world,
                          rank_from="environment" if rank_var else None)
