"""rocprofv3 ``kernel_trace.csv`` -> TIMELINE, vendor ``amd``, in each header era (column names
matched without regard to case):

* ROCm 6.1/6.2 first releases: ``Kind,Agent_Id,Queue_Id,Kernel_Id,Kernel_Name,Correlation_Id,
  Start_Timestamp,End_Timestamp,Private_Segment_Size,Group_Segment_Size,Workgroup_Size_X..Z,
  Grid_Size_X..Z``;
* then ``Thread_Id`` and ``Dispatch_Id`` after ``Queue_Id``;
* current (ROCm 6.3+): ``Stream_Id`` before ``Thread_Id``, ``LDS_Block_Size``, ``Scratch_Size``,
  ``VGPR_Count``, ``Accum_VGPR_Count``, ``SGPR_Count`` instead of the segment sizes, and
  ``Agent_Id`` written ``"Agent N"`` (a bare number before);
* ``rocpd convert``'s CSV: ``Guid`` first, ``Lds_Block_Size``-style spellings.

``Start_Timestamp``/``End_Timestamp``: ns on the system clock. ``Agent_Id`` N (ROCm's agent index,
which counts CPU agents unless ``--agent-index`` is ``relative``/``type-relative``) is the device.
``Stream_Id`` (HIP stream; 0 the null stream) is the stream where recorded, else ``Queue_Id``.
``Grid_Size_*`` count work-items: blocks = ceil(grid / workgroup) per dimension. Rows whose ``Kind``
is not ``KERNEL_DISPATCH`` are counted in a note.

rocprofv3 writes its CSVs side by side with one prefix (``<pid>_kernel_trace.csv``,
``<pid>_agent_info.csv``, ``<pid>_hip_api_trace.csv``): where the kernel trace's siblings are there,
``memory_copy_trace.csv`` adds the copies, ``agent_info.csv`` names the GPUs (``Product_Name``, gfx ``Name``, ``Cu_Count``, ``Wave_Front_Size``;
the device becomes the GPU's index among GPUs, ``Agent_Id`` being the agent's ``Node_Id``) and
``hip_api_trace.csv`` gives the host's HIP runtime calls (synchronizing calls place idle time; a
kernel's launch is the call with its ``Correlation_Id``).
"""

from __future__ import annotations

from ridgeline.errors import InputError
from ridgeline.parsers.rocm.common import finish, grid_blocks, kernel_name, num, problems, read_csv_text


def read_v3_kernel_trace(path, *, strict: bool = True):
    import polars as pl

    df = read_csv_text(path, "a rocprofv3 kernel_trace.csv")
    df = df.rename({c: c.lower() for c in df.columns})
    cols = set(df.columns)
    agent = pl.col("agent_id").cast(pl.String).str.extract(r"^\s*(?:Agent\s+)?(\d+)\s*$", 1).cast(pl.Int64, strict=False)
    need = {"kernel_name": kernel_name("kernel_name"), "start_timestamp": num("start_timestamp"),
            "end_timestamp": num("end_timestamp"), "agent_id": agent}
    kind = pl.col("kind").cast(pl.String).str.strip_chars().str.to_uppercase()
    is_kernel = kind.is_null() | (kind == "KERNEL_DISPATCH") | (kind == "")
    others = df.filter(~is_kernel).height
    df = df.with_row_index("_row").filter(is_kernel)
    stream = num("stream_id") if "stream_id" in cols else num("queue_id") if "queue_id" in cols else pl.lit(None, dtype=pl.Int64)
    dims = []
    for a in "xyz":
        g, w = f"grid_size_{a}", f"workgroup_size_{a}"
        if g in cols and w in cols:
            dims += [grid_blocks(num(g), num(w)).alias(f"grid_{a}"), num(w).alias(f"block_{a}")]
    out = df.select(
        pl.col("_row").cast(pl.Int64),
        problems(need).alias("_problem"),
        pl.lit("kernel").alias("kind"),
        agent.alias("device"),
        stream.alias("stream"),
        need["start_timestamp"].alias("start_ns"),
        need["end_timestamp"].alias("end_ns"),
        need["kernel_name"].alias("name"),
        (num("correlation_id") if "correlation_id" in cols else pl.lit(None, dtype=pl.Int64)).alias("correlation_id"),
        *dims,
    )
    notes = [f"{path}: {others:,} row(s) whose Kind is not KERNEL_DISPATCH not read"] if others else []
    devices, props = {}, {}
    copies = sibling(path, "memory_copy_trace.csv")
    if copies is not None:
        try:
            out = pl.concat([out, memory_copy_trace(copies)], how="diagonal_relaxed")
        except InputError as err:
            notes.append(f"{path}: its {copies.name} not used: {err}")
    info = sibling(path, "agent_info.csv")
    if info is not None:
        try:
            index, devices, props = agent_info(info)
        except InputError as err:
            notes.append(f"{path}: its {info.name} not used: {err}")
        else:  # Agent_Id N (the agent's node id) -> the GPU's index among GPUs, as every other reader numbers devices
            out = out.with_columns(pl.col("device").replace_strict(index, default=None, return_dtype=pl.Int64)
                                   .fill_null(pl.col("device")))
    api = None
    calls = sibling(path, "hip_api_trace.csv")
    if calls is not None:
        try:
            api = hip_api_trace(calls)
        except InputError as err:
            notes.append(f"{path}: its {calls.name} not used: {err}")
    where = lambda r: f"line {r + 2}" if r >= 0 else f"{copies.name} line {-r + 1}"  # noqa: E731
    return finish(path, out, "rocprofv3-kernel-trace", strict=strict, where=where, notes=notes,
                  tool="rocprof", devices=devices, device_properties=props, api=api,
                  host_api=f"rocprofv3 {calls.name}" if api is not None else None,
                  host_calls_total=api.height if api is not None else 0)


def sibling(path, suffix: str):
    """The file rocprofv3 wrote beside ``<prefix>kernel_trace.csv`` as ``<prefix><suffix>``, or None."""
    from pathlib import Path

    p = Path(path)
    if not p.name.lower().endswith("kernel_trace.csv"):
        return None
    other = p.with_name(p.name[: -len("kernel_trace.csv")] + suffix)
    return other if other.is_file() else None


def agent_info(path):
    """rocprofv3's ``agent_info.csv`` -> (node id -> GPU index, GPU index -> Product_Name, -> properties).
    GPU rows (``Agent_Type`` GPU) are numbered in file order; ``Node_Id`` is the agent number the
    traces' ``Agent_Id`` gives."""
    import polars as pl

    df = read_csv_text(path, "a rocprofv3 agent_info.csv")
    df = df.rename({c: c.lower() for c in df.columns})
    if "agent_type" not in df.columns:
        raise InputError(path, "expected an Agent_Type column")
    node = num("node_id") if "node_id" in df.columns else pl.int_range(pl.len()).cast(pl.Int64)
    gpus = df.with_columns(node.alias("_node")).filter(pl.col("agent_type").str.strip_chars().str.to_uppercase() == "GPU")
    index, devices, props = {}, {}, {}
    for i, row in enumerate(gpus.iter_rows(named=True)):
        if row["_node"] is not None:
            index[row["_node"]] = i
        name = (row.get("product_name") or row.get("marketing_name") or "").strip()
        if name:
            devices[i] = name[:200]
        p = {}
        for col, key in (("cu_count", "unit_count"), ("wave_front_size", "warp_size")):
            v = str(row.get(col) or "").strip()
            if v.isdigit() and int(v) > 0:
                p[key] = int(v)
        gfx = str(row.get("name") or "").strip()
        if gfx.lower().startswith("gfx"):
            p["gfx"] = gfx[:80]
        props[i] = p
    return index, devices, props


_DIRECTIONS = {"HOST_TO_HOST": "HtoH", "HOST_TO_DEVICE": "HtoD", "DEVICE_TO_HOST": "DtoH",
               "DEVICE_TO_DEVICE": "DtoD"}


def memory_copy_trace(path):
    """rocprofv3's ``memory_copy_trace.csv`` (``Kind,Direction,Stream_Id,Source_Agent_Id,
    Destination_Agent_Id,Correlation_Id,Start_Timestamp,End_Timestamp``; ``Direction``
    ``MEMORY_COPY_HOST_TO_DEVICE``...) -> copies; the device is the GPU side's agent (the
    destination, the source for device-to-host); ``_row`` ids are offset past the kernel rows'
    (negative: named as copy rows)."""
    import polars as pl

    df = read_csv_text(path, "a rocprofv3 memory_copy_trace.csv")
    df = df.rename({c: c.lower() for c in df.columns})
    need = {"direction", "start_timestamp", "end_timestamp"}
    if not need <= set(df.columns):
        raise InputError(path, "expected the columns Direction, Start_Timestamp, End_Timestamp")
    agent = lambda c: (pl.col(c).cast(pl.String).str.extract(r"^\s*(?:Agent\s+)?(\d+)\s*$", 1)  # noqa: E731
                       .cast(pl.Int64, strict=False)) if c in df.columns else pl.lit(None, dtype=pl.Int64)
    direction = pl.col("direction").cast(pl.String).str.strip_chars().str.replace(r"^MEMORY_COPY_", "")
    kind = direction.replace_strict(_DIRECTIONS, default="other", return_dtype=pl.String)
    size = next((c for c in ("size", "bytes", "copy_bytes") if c in df.columns), None)
    return df.with_row_index("_i").select(
        (-1 - pl.col("_i").cast(pl.Int64)).alias("_row"),
        pl.lit("memcpy").alias("kind"),
        pl.when(kind == "DtoH").then(agent("source_agent_id")).otherwise(agent("destination_agent_id")).alias("device"),
        (num("stream_id") if "stream_id" in df.columns else pl.lit(None, dtype=pl.Int64)).alias("stream"),
        num("start_timestamp").alias("start_ns"), num("end_timestamp").alias("end_ns"),
        pl.format("[memcpy {}]", kind).alias("name"), kind.alias("copy_kind"),
        (num(size) if size else pl.lit(None, dtype=pl.Int64)).alias("bytes"),
        (num("correlation_id") if "correlation_id" in df.columns else pl.lit(None, dtype=pl.Int64)).alias("correlation_id"),
    )


def hip_api_trace(path):
    """rocprofv3's ``hip_api_trace.csv`` (``Domain,Function,Process_Id,Thread_Id,Correlation_Id,
    Start_Timestamp,End_Timestamp``) -> host calls of the HIP runtime domains."""
    import polars as pl

    df = read_csv_text(path, "a rocprofv3 hip_api_trace.csv")
    df = df.rename({c: c.lower() for c in df.columns})
    need = {"domain", "function", "start_timestamp", "end_timestamp"}
    if not need <= set(df.columns):
        raise InputError(path, "expected the columns Domain, Function, Start_Timestamp, End_Timestamp")
    df = df.with_row_index("_row").filter(pl.col("domain").str.to_uppercase().str.starts_with("HIP_RUNTIME_API"))
    opt = lambda c: num(c) if c in df.columns else pl.lit(None, dtype=pl.Int64)  # noqa: E731
    return df.select(pl.col("_row").cast(pl.Int64), opt("process_id").alias("process_id"),
                     opt("thread_id").alias("thread_id"), num("start_timestamp").alias("start_ns"),
                     num("end_timestamp").alias("end_ns"), pl.col("function").alias("name"),
                     opt("correlation_id").alias("correlation_id"))
