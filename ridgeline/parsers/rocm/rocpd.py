"""rocprofv3's rocpd SQLite database (``--output-format rocpd``, the default from ROCm 7.0) -> TIMELINE,
vendor ``amd``, read through its documented views (never the uuid-suffixed ``rocpd_*_<uuid>`` tables,
whose names change with every run):

* ``kernels``: one row per kernel dispatch: ``start``/``end`` (ns), ``name``, ``agent_type``
  (``GPU``), ``agent_type_index`` (the GPU's index among GPUs: the device), ``stream_id`` (the
  stream), ``pid``, ``corr_id``, ``grid_x..z`` (work-items) and ``workgroup_x..z``;
* ``memory_copies``: ``start``/``end``, ``size`` (bytes), ``src_agent_type``/``dst_agent_type``
  (``CPU``/``GPU``: the direction), ``dst_agent_type_index``/``src_agent_type_index``;
* ``regions`` (``category`` ``HIP_RUNTIME_API``/``HIP_RUNTIME_API_EXT``): the host's HIP calls
  (``start``, ``end``, ``name``, ``pid``, ``tid``, ``corr_id``): synchronizing calls place idle time,
  and a kernel's ``launch_ns`` is the start of the call with its ``corr_id``;
* ``rocpd_info_agent``: the agents; a GPU's ``product_name`` (``AMD Instinct MI300X``) names the
  device, ``name`` is its gfx target, ``extdata`` (JSON) holds ``cu_count`` and ``wave_front_size``.
"""

from __future__ import annotations

from ridgeline.errors import InputError

#: the views a rocpd database has (sqlite_master, type 'view'): ``kernels`` and the ``rocpd_info_agent`` view
NEED_VIEWS = ("kernels", "rocpd_info_agent")


def is_rocpd(path) -> bool:
    """An SQLite file whose schema has rocpd's views (``kernels``, ``rocpd_info_agent``)."""
    import sqlite3

    try:
        con = _connect(path)
        try:
            views = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='view'")}
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return all(v in views for v in NEED_VIEWS)


def _connect(path):
    import sqlite3
    from pathlib import Path

    return sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)


def read_rocpd(path, *, strict: bool = True):
    import sqlite3

    import polars as pl

    from ridgeline.parsers.rocm.common import KD_SUFFIX_RE, finish
    from ridgeline.parsers.timeline.nsys_sqlite import _select

    try:
        con = _connect(path)
        try:
            kernels = _select(con, "SELECT id, pid, agent_type, agent_type_index, stream_id, queue_id, start, end, name, "
                                   "corr_id, grid_x, grid_y, grid_z, workgroup_x, workgroup_y, workgroup_z FROM kernels")
            copies = _select(con, "SELECT id, pid, stream_id, start, end, size, src_agent_type, dst_agent_type, "
                                  "src_agent_type_index, dst_agent_type_index, corr_id FROM memory_copies")
            views = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='view'")}
            calls = _select(con, "SELECT pid, tid, start, end, name, corr_id FROM regions "
                                 "WHERE category LIKE 'HIP_RUNTIME_API%'") if "regions" in views else None
            agents = con.execute("SELECT type_index, product_name, name, extdata FROM rocpd_info_agent "
                                 "WHERE type = 'GPU'").fetchall()
        finally:
            con.close()
    except sqlite3.Error as err:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, "expected a readable rocpd database (rocprofv3 --output-format rocpd) with its views "
                         f"kernels, memory_copies and rocpd_info_agent; {plain_reason(err)}") from err
    devices, props = _agents(agents)
    i64 = lambda c: pl.col(c).cast(pl.Int64, strict=False)  # noqa: E731
    parts = []
    if kernels.height:
        def blocks(a):
            g, w = i64(f"grid_{a}"), i64(f"workgroup_{a}")
            return pl.when(w > 0).then((g + w - 1) // w).alias(f"grid_{a}")

        parts.append(kernels.select(
            (i64("id") * 2).alias("_row"),  # (rows named by view and id below)
            pl.when(pl.col("name").is_null()).then(pl.lit("no kernel name")).alias("_problem"),
            pl.lit("kernel").alias("kind"),
            i64("agent_type_index").alias("device"), i64("stream_id").alias("stream"), i64("pid").alias("process_id"),
            i64("start").alias("start_ns"), i64("end").alias("end_ns"),
            pl.col("name").cast(pl.String).str.replace(KD_SUFFIX_RE, "").alias("name"),
            i64("corr_id").alias("correlation_id"),
            blocks("x"), blocks("y"), blocks("z"),
            i64("workgroup_x").alias("block_x"), i64("workgroup_y").alias("block_y"), i64("workgroup_z").alias("block_z"),
        ))
    if copies.height:
        src, dst = pl.col("src_agent_type").cast(pl.String), pl.col("dst_agent_type").cast(pl.String)
        kind = (pl.when((src == "CPU") & (dst == "GPU")).then(pl.lit("HtoD"))
                .when((src == "GPU") & (dst == "CPU")).then(pl.lit("DtoH"))
                .when((src == "GPU") & (dst == "GPU") & (i64("src_agent_type_index") == i64("dst_agent_type_index")))
                .then(pl.lit("DtoD"))
                .when((src == "GPU") & (dst == "GPU")).then(pl.lit("PtoP"))
                .when((src == "CPU") & (dst == "CPU")).then(pl.lit("HtoH")).otherwise(pl.lit("other")))
        parts.append(copies.select(
            (i64("id") * 2 + 1).alias("_row"),
            pl.lit(None, dtype=pl.String).alias("_problem"),
            pl.lit("memcpy").alias("kind"),
            pl.when(dst == "GPU").then(i64("dst_agent_type_index")).otherwise(i64("src_agent_type_index")).alias("device"),
            i64("stream_id").alias("stream"), i64("pid").alias("process_id"),
            i64("start").alias("start_ns"), i64("end").alias("end_ns"),
            pl.format("[memcpy {}]", kind).alias("name"), kind.alias("copy_kind"), i64("size").alias("bytes"),
            i64("corr_id").alias("correlation_id"),
        ))
    out = pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame(
        schema={"_row": pl.Int64, "kind": pl.String, "start_ns": pl.Int64, "end_ns": pl.Int64, "name": pl.String})
    where = lambda r: f"{'memory_copies' if r % 2 else 'kernels'} id {r // 2}"  # noqa: E731
    api = None
    if calls is not None and calls.height:
        api = calls.with_row_index("_row").select(
            pl.col("_row").cast(pl.Int64), i64("pid").alias("process_id"), i64("tid").alias("thread_id"),
            i64("start").alias("start_ns"), i64("end").alias("end_ns"), pl.col("name").cast(pl.String),
            i64("corr_id").alias("correlation_id"))
    return finish(path, out, "rocpd", strict=strict, where=where, notes=[], tool="rocprof", devices=devices,
                  device_properties=props, api=api, host_api="rocpd regions (HIP runtime API)" if api is not None else None,
                  host_calls_total=api.height if api is not None else 0)


def _agents(rows) -> tuple[dict[int, str], dict[int, dict]]:
    """GPU index -> product name, and -> the properties identify.py reads (CUs, wavefront, gfx target)."""
    import json
    import re

    devices: dict[int, str] = {}
    props: dict[int, dict] = {}
    for index, product, gfx, ext in rows:
        if not isinstance(index, int):
            continue
        if isinstance(product, str) and product.strip():
            devices[index] = product.strip()[:200]
        p: dict = {}
        try:
            extra = json.loads(ext) if isinstance(ext, str) else {}
        except ValueError:
            extra = {}
        for field, key in (("cu_count", "unit_count"), ("wave_front_size", "warp_size")):
            v = extra.get(field) if isinstance(extra, dict) else None
            if isinstance(v, int) and v > 0:
                p[key] = v
        if isinstance(gfx, str) and re.match(r"gfx[0-9a-f]+$", gfx.strip(), re.IGNORECASE):
            p["gfx"] = gfx.strip()
        props[index] = p
    return devices, props
