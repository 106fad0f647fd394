"""The rocprofiler-sdk JSON (``rocprofv3 --output-format json``) -> TIMELINE, vendor ``amd``.

Layout: ``{"rocprofiler-sdk-tool": [{metadata, agents, kernel_symbols, ..., buffer_records}, ...]}``,
one entry per profiled process. Read:

* ``buffer_records.kernel_dispatch``: ``start_timestamp``/``end_timestamp`` (ns), ``correlation_id.internal``,
  ``stream_id.handle``, ``dispatch_info`` (``agent_id.handle``, ``queue_id.handle``, ``kernel_id``,
  ``workgroup_size`` and ``grid_size`` {x, y, z}, the grid in work-items);
* ``kernel_symbols``: ``kernel_id`` -> ``demangled_kernel_name`` (else ``kernel_name``);
* ``agents``: ``id.handle`` -> the GPU (``type`` 2): ``gpu_index`` (the device), ``product_name``
  (its name), ``name`` (gfx target), ``cu_count``, ``wave_front_size``;
* ``buffer_records.memory_copy``: ``operation`` (rocprofiler_memory_copy_operation_t: 1 host to host,
  2 host to device, 3 device to host, 4 device to device), ``bytes``, ``src_agent_id``/``dst_agent_id``.

* ``buffer_records.hip_api``: host calls (``start_timestamp``/``end_timestamp``, ``thread_id``,
  ``correlation_id.internal``), named through ``strings.buffer_records[kind].operations[operation]``:
  synchronizing calls (``hipDeviceSynchronize``...) then place idle time, and a kernel's
  ``launch_ns`` is the start of the call with its correlation id.

Other API records (``hsa_api``, ``marker_api``, ``rccl_api``) are counted in a note, not read.
"""

from __future__ import annotations

from ridgeline.errors import InputError

_COPY_OPS = {1: "HtoH", 2: "HtoD", 3: "DtoH", 4: "DtoD"}


def _schemas():
    import polars as pl

    handle = pl.Struct({"handle": pl.Int64})
    xyz = pl.Struct({"x": pl.Int64, "y": pl.Int64, "z": pl.Int64})
    corr = pl.Struct({"internal": pl.Int64})
    times = {"start_timestamp": pl.Int64, "end_timestamp": pl.Int64}
    dispatch = {**times, "correlation_id": corr, "stream_id": handle,
                "dispatch_info": pl.Struct({"agent_id": handle, "queue_id": handle, "kernel_id": pl.Int64,
                                            "workgroup_size": xyz, "grid_size": xyz})}
    copy = {**times, "operation": pl.Int64, "bytes": pl.Int64, "src_agent_id": handle, "dst_agent_id": handle}
    hip = {**times, "kind": pl.Int64, "operation": pl.Int64, "thread_id": pl.Int64, "correlation_id": corr}
    return dispatch, copy, hip


_DISPATCH, _COPY, _HIP = 0, 1, 2


def _frame(records, which: int):
    """Records -> a frame of the documented fields only, typed up front (no inference over every
    record; other keys are ignored), with a ``_i`` row index."""
    import polars as pl

    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise ValueError("records that are not a list of objects")
    return pl.DataFrame(records, schema=_schemas()[which], strict=False).with_row_index("_i")


def read_sdk_json(path, *, strict: bool = True):
    import polars as pl

    from ridgeline.parsers.rocm.common import KD_SUFFIX_RE, finish
    from ridgeline.parsers.rocm.v1 import _load

    try:
        doc = _load(path)
    except (ValueError, OSError, EOFError) as err:
        raise InputError(path, f"expected a rocprofiler-sdk JSON, got {str(err).splitlines()[0][:120]}") from err
    tools = doc.get("rocprofiler-sdk-tool") if isinstance(doc, dict) else None
    if not isinstance(tools, list):
        raise InputError(path, "expected a rocprofiler-sdk JSON: an object with a 'rocprofiler-sdk-tool' list")
    parts, devices, props, api, calls = [], {}, {}, 0, []
    for t, tool in enumerate(tools):
        if not isinstance(tool, dict):
            raise InputError(path, f"rocprofiler-sdk-tool[{t}]: expected an object")
        agents = _agents(tool.get("agents") or [], devices, props)
        names = {s.get("kernel_id"): (s.get("demangled_kernel_name") or s.get("kernel_name") or None)
                 for s in tool.get("kernel_symbols") or [] if isinstance(s, dict)}
        records = tool.get("buffer_records") or {}
        if not isinstance(records, dict):
            raise InputError(path, f"rocprofiler-sdk-tool[{t}].buffer_records: expected an object")
        api += sum(len(v) for k, v in records.items() if k.endswith("_api") and isinstance(v, list))
        try:
            parts += _frames(records, agents, names, t)
            calls += _host_calls(records.get("hip_api") or [], tool.get("strings"), t)
        except (pl.exceptions.PolarsError, TypeError, ValueError) as err:
            raise InputError(path, f"rocprofiler-sdk-tool[{t}].buffer_records: expected kernel_dispatch/memory_copy "
                             f"records of the documented shape, got {str(err).splitlines()[0][:120]}") from err
    out = pl.concat(parts, how="diagonal_relaxed") if parts else pl.DataFrame(
        schema={"_row": pl.Int64, "kind": pl.String, "start_ns": pl.Int64, "end_ns": pl.Int64, "name": pl.String})
    if "name" in out.columns:
        out = out.with_columns(pl.col("name").str.replace(KD_SUFFIX_RE, ""))
    hip = sum(c.height for c in calls)
    notes = [f"{path}: {api - hip:,} API call record(s) (HSA/marker/RCCL) not read: GPU kernels, copies and HIP "
             "calls are"] if api - hip else []
    host = pl.concat(calls, how="vertical_relaxed") if calls else None
    where = lambda r: f"{'memory_copy' if r % 2 else 'kernel_dispatch'} record {(r // 2) % 10**9}"  # noqa: E731
    return finish(path, out, "rocprofiler-sdk-json", strict=strict, where=where, notes=notes, tool="rocprof",
                  devices=devices, device_properties=props, api=host,
                  host_api="rocprofiler-sdk hip_api" if host is not None else None, host_calls_total=hip)


def _host_calls(records, strings, tool: int) -> list:
    """``hip_api`` records -> host calls named through ``strings.buffer_records`` (the record's
    ``kind`` indexes that list, its ``operation`` the kind's ``operations``)."""
    import polars as pl

    if not records or not isinstance(strings, dict) or not isinstance(strings.get("buffer_records"), list):
        return []
    ops = {(k, o): name for k, entry in enumerate(strings["buffer_records"]) if isinstance(entry, dict)
           for o, name in enumerate(entry.get("operations") or []) if isinstance(name, str)}
    df = _frame(records, _HIP)
    key = pl.concat_str([pl.col("kind").cast(pl.String), pl.col("operation").cast(pl.String)], separator=":")
    names = {f"{k}:{o}": n for (k, o), n in ops.items()}
    return [df.select(
        (pl.col("_i").cast(pl.Int64) + tool * 10**9).alias("_row"),
        pl.col("thread_id"),
        pl.col("start_timestamp").cast(pl.Int64, strict=False).alias("start_ns"),
        pl.col("end_timestamp").cast(pl.Int64, strict=False).alias("end_ns"),
        key.replace_strict(names, default=None, return_dtype=pl.String).fill_null(pl.lit("hip call")).alias("name"),
        pl.col("correlation_id").struct.field("internal").cast(pl.Int64, strict=False).alias("correlation_id"),
    )]


def _agents(agents, devices: dict, props: dict) -> dict:
    """agent handle -> GPU index; fills ``devices``/``props`` for GPU agents (``type`` 2)."""
    out = {}
    for a in agents:
        if not isinstance(a, dict) or a.get("type") != 2:
            continue
        handle = (a.get("id") or {}).get("handle") if isinstance(a.get("id"), dict) else None
        index = a.get("gpu_index") if isinstance(a.get("gpu_index"), int) and a.get("gpu_index") >= 0 \
            else a.get("logical_node_type_id")
        if not isinstance(handle, int) or not isinstance(index, int):
            continue
        out[handle] = index
        if isinstance(a.get("product_name"), str) and a["product_name"].strip():
            devices[index] = a["product_name"].strip()[:200]
        p = {key: a[f] for f, key in (("cu_count", "unit_count"), ("wave_front_size", "warp_size"))
             if isinstance(a.get(f), int) and a[f] > 0}
        if isinstance(a.get("name"), str) and a["name"].startswith("gfx"):
            p["gfx"] = a["name"][:80]
        props[index] = p
    return out


def _frames(records: dict, agents: dict, names: dict, tool: int) -> list:
    import polars as pl

    base = tool * 10**9  # row ids: (tool, record) -> distinct, kernel even, copy odd
    frames = []
    disp = records.get("kernel_dispatch") or []
    if disp:
        df = _frame(disp, _DISPATCH)
        info = pl.col("dispatch_info")
        agent = info.struct.field("agent_id").struct.field("handle")
        kid = info.struct.field("kernel_id")

        def dim(f, a):
            return info.struct.field(f).struct.field(a).cast(pl.Int64, strict=False)

        blocks = {a: pl.when(dim("workgroup_size", a) > 0)
                  .then((dim("grid_size", a) + dim("workgroup_size", a) - 1) // dim("workgroup_size", a))
                  for a in "xyz"}
        frames.append(df.select(
            ((pl.col("_i").cast(pl.Int64) + base) * 2).alias("_row"),
            pl.when(agent.replace_strict(agents, default=None, return_dtype=pl.Int64).is_null())
            .then(pl.format("agent {} is not a GPU agent of the file", agent)).alias("_problem"),
            pl.lit("kernel").alias("kind"),
            agent.replace_strict(agents, default=None, return_dtype=pl.Int64).alias("device"),
            pl.coalesce(pl.col("stream_id").struct.field("handle"),
                        info.struct.field("queue_id").struct.field("handle")).alias("stream"),
            pl.col("start_timestamp").cast(pl.Int64, strict=False).alias("start_ns"),
            pl.col("end_timestamp").cast(pl.Int64, strict=False).alias("end_ns"),
            kid.replace_strict(names, default=None, return_dtype=pl.String).fill_null(pl.format("kernel {}", kid))
            .alias("name"),
            pl.col("correlation_id").struct.field("internal").cast(pl.Int64, strict=False).alias("correlation_id"),
            *[blocks[a].alias(f"grid_{a}") for a in "xyz"],
            *[dim("workgroup_size", a).alias(f"block_{a}") for a in "xyz"],
        ))
    copies = records.get("memory_copy") or []
    if copies:
        df = _frame(copies, _COPY)
        op = pl.col("operation").cast(pl.Int64, strict=False).replace_strict(_COPY_OPS, default="other",
                                                                            return_dtype=pl.String)
        dst = pl.col("dst_agent_id").struct.field("handle").replace_strict(agents, default=None, return_dtype=pl.Int64)
        src = pl.col("src_agent_id").struct.field("handle").replace_strict(agents, default=None, return_dtype=pl.Int64)
        frames.append(df.select(
            ((pl.col("_i").cast(pl.Int64) + base) * 2 + 1).alias("_row"),
            pl.lit("memcpy").alias("kind"),
            pl.coalesce(dst, src).alias("device"),
            pl.col("start_timestamp").cast(pl.Int64, strict=False).alias("start_ns"),
            pl.col("end_timestamp").cast(pl.Int64, strict=False).alias("end_ns"),
            pl.format("[memcpy {}]", op).alias("name"),
            op.alias("copy_kind"),
            pl.col("bytes").alias("bytes"),
        ))
    return frames
