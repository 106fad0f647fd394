"""rocprof v1 (ROCm <= 6.x ``rocprof``) outputs -> TIMELINE / TIMELINE_TOTALS, vendor ``amd``.

* Kernel trace ``results.csv`` (``rocprof --stats``/``--timestamp on``): one row per dispatch,
  ``"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds","scr",...,
  "DispatchNs","BeginNs","EndNs","CompleteNs","DurationNs"``. ``BeginNs``/``EndNs``: the kernel's
  start and end on the GPU (ns, the HSA system clock); ``gpu-id``: the GPU's index (the device);
  ``queue-id``: the HSA queue (the stream); ``grd``: grid size in work-items, ``wgr``: workgroup
  size (blocks = ceil(grd / wgr)).
* ``--hip-trace``/``--sys-trace`` Chrome trace JSON: the same dispatches as ``ph: X`` events with
  string ``ts``/``dur`` (microseconds, truncated) and the exact ``args.BeginNs``/``EndNs`` (read);
  ``args.KernelName`` marks a kernel; events under the process named ``COPY`` are copies. HIP API
  events are counted in a note, not read.
* ``results.sysinfo.txt`` (rocminfo's output, written beside the others): names the GPUs of the
  kernel trace and the JSON (``gpu-id`` N is the N-th agent of ``Device Type: GPU``); the JSON's
  ``otherData`` holds the same dump with spaces removed, used when the text file is absent.
* ``results.stats.csv`` (``"Name","Calls","TotalDurationNs","AverageNs","Percentage"``; rocprofv3's
  ``kernel_stats.csv`` adds ``MinNs``, ``MaxNs``, ``StdDev``): per-name totals, no timeline.
"""

from __future__ import annotations

from ridgeline.errors import InputError
from ridgeline.parsers.rocm.common import finish, grid_blocks, kernel_name, num, problems, read_csv_text


def read_v1_csv(path, *, strict: bool = True):
    import polars as pl

    df = read_csv_text(path, "a rocprof kernel trace CSV (results.csv)")
    need = {"KernelName": kernel_name("KernelName"), "gpu-id": num("gpu-id"), "BeginNs": num("BeginNs"),
            "EndNs": num("EndNs")}
    grd, wgr = num("grd"), num("wgr")
    has = lambda c: c in df.columns  # noqa: E731
    out = df.with_row_index("_row").select(
        pl.col("_row").cast(pl.Int64),
        problems(need).alias("_problem"),
        pl.lit("kernel").alias("kind"),
        need["gpu-id"].alias("device"),
        (num("queue-id") if has("queue-id") else pl.lit(None, dtype=pl.Int64)).alias("stream"),
        (num("pid") if has("pid") else pl.lit(None, dtype=pl.Int64)).alias("process_id"),
        need["BeginNs"].alias("start_ns"),
        need["EndNs"].alias("end_ns"),
        need["KernelName"].alias("name"),
        *((grid_blocks(grd, wgr).alias("grid_x"), pl.lit(1).alias("grid_y"), pl.lit(1).alias("grid_z"),
           wgr.alias("block_x"), pl.lit(1).alias("block_y"), pl.lit(1).alias("block_z"))
          if has("grd") and has("wgr") else ()),
    )
    devices, props = sysinfo_gpus(path)
    return finish(path, out, "rocprof-v1-csv", strict=strict, where=lambda r: f"line {r + 2}",
                  notes=[], tool="rocprof", devices=devices, device_properties=props)


def sysinfo_gpus(path) -> tuple[dict[int, str], dict[int, dict]]:
    """GPU index -> name and properties from the ``rocminfo`` output rocprof v1 writes beside its
    results (``results.csv`` -> ``results.sysinfo.txt``): blocks ``Agent N`` with ``Marketing Name:``,
    ``Name:`` (gfx target), ``Device Type:``, ``Compute Unit:``, ``Wavefront Size:``; the first of each
    key in a block (nested pool and ISA sections repeat some). Nothing when the file is absent."""
    import re
    from pathlib import Path

    p = Path(path)
    info = p.with_name(p.name[: -len(p.suffix)] + ".sysinfo.txt") if p.suffix else None
    if info is None or not info.is_file():
        return {}, {}
    try:
        text = info.read_bytes()[: 1 << 22].decode("utf-8", errors="replace")
    except OSError:
        return {}, {}
    keys = {"Marketing Name": "MarketingName", "Name": "Name", "Device Type": "DeviceType",
            "Compute Unit": "ComputeUnit", "Wavefront Size": "MemoryProperties.WavefrontSize"}
    other: dict[str, str] = {}
    agent = None
    for line in text.splitlines():
        m = re.match(r"^\s*Agent\s+(\d+)\s*$", line)
        if m:
            agent = int(m.group(1))
            continue
        m = re.match(r"^\s*([A-Za-z ]+?):\s+(.*?)\s*$", line)
        if agent is not None and m and m.group(1) in keys:
            other.setdefault(f"Agent{agent}.{keys[m.group(1)]}", m.group(2))
    return rocminfo_gpus(other)


def read_v1_json(path, *, strict: bool = True):
    """The Chrome trace JSON: kernels (``args.KernelName``) and copies (process ``COPY``) by ``BeginNs``/``EndNs``."""
    import polars as pl

    try:
        doc = _load(path)
    except (ValueError, OSError, EOFError) as err:
        raise InputError(path, f"expected a rocprof --hip-trace JSON, got {str(err).splitlines()[0][:120]}") from err
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise InputError(path, "expected a rocprof --hip-trace JSON with a traceEvents list")
    procs = {e.get("pid"): (e.get("args") or {}).get("name") for e in events
             if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_name"}
    copy_pids = [p for p, n in procs.items() if isinstance(n, str) and n.upper() == "COPY"]
    keys = ("KernelName", "gpu-id", "queue-id", "BeginNs", "EndNs", "grd", "wgr", "pid")
    rows = [{"_row": i, "trace_pid": _text(e.get("pid")), "name": _text(e.get("name")),
             **{k: _text(e["args"].get(k)) if isinstance(e.get("args"), dict) else None for k in keys}}
            for i, e in enumerate(events) if isinstance(e, dict) and e.get("ph") == "X"]
    if not rows:
        out = pl.DataFrame(schema={"_row": pl.Int64, "kind": pl.String, "start_ns": pl.Int64, "end_ns": pl.Int64,
                                   "name": pl.String})
        return finish(path, out, "rocprof-v1-json", strict=strict, where=lambda r: f"event {r}", notes=[],
                      tool="rocprof")
    schema = {"_row": pl.Int64, "trace_pid": pl.String, "name": pl.String, **{k: pl.String for k in keys}}
    raw = pl.DataFrame(rows, schema=schema)
    is_kernel = pl.col("KernelName").is_not_null()
    is_copy = pl.col("trace_pid").cast(pl.Int64, strict=False).is_in(copy_pids) if copy_pids else pl.lit(False)
    keep = raw.filter(is_kernel | is_copy)
    other = raw.height - keep.height
    need = {"BeginNs": num("BeginNs"), "EndNs": num("EndNs")}
    words = pl.col("name").cast(pl.String).str.to_lowercase()
    copy_kind = (pl.when(words.str.contains("hosttodevice|htod")).then(pl.lit("HtoD"))
                 .when(words.str.contains("devicetohost|dtoh")).then(pl.lit("DtoH"))
                 .when(words.str.contains("devicetodevice|dtod")).then(pl.lit("DtoD"))
                 .when(words.str.contains("peer")).then(pl.lit("PtoP")).otherwise(pl.lit("other")))
    grd, wgr = num("grd"), num("wgr")
    out = keep.select(
        pl.col("_row"),
        problems(need).alias("_problem"),
        pl.when(is_kernel).then(pl.lit("kernel")).otherwise(pl.lit("memcpy")).alias("kind"),
        num("gpu-id").alias("device"),
        num("queue-id").alias("stream"),
        num("pid").alias("process_id"),
        need["BeginNs"].alias("start_ns"),
        need["EndNs"].alias("end_ns"),
        pl.when(is_kernel).then(kernel_name("KernelName"))
        .otherwise(pl.format("[memcpy {}]", copy_kind)).alias("name"),
        pl.when(is_kernel).then(None).otherwise(copy_kind).alias("copy_kind"),
        pl.when(is_kernel).then(grid_blocks(grd, wgr)).alias("grid_x"),
        pl.when(is_kernel & grd.is_not_null()).then(1).alias("grid_y"),
        pl.when(is_kernel & grd.is_not_null()).then(1).alias("grid_z"),
        pl.when(is_kernel).then(wgr).alias("block_x"),
        pl.when(is_kernel & wgr.is_not_null()).then(1).alias("block_y"),
        pl.when(is_kernel & wgr.is_not_null()).then(1).alias("block_z"),
    )
    notes = [f"{path}: {other:,} other duration event(s) (HIP/HSA API calls) not read: only GPU kernels and copies "
             "are"] if other else []
    devices, props = sysinfo_gpus(path)  # rocminfo beside the file: names with their spaces
    if not devices:
        devices, props = rocminfo_gpus(doc.get("otherData") if isinstance(doc, dict) else None)
    return finish(path, out, "rocprof-v1-json", strict=strict, where=lambda r: f"event {r}", notes=notes,
                  tool="rocprof", devices=devices, device_properties=props)


def rocminfo_gpus(other) -> tuple[dict[int, str], dict[int, dict]]:
    """GPU index -> name and properties from the rocminfo dump rocprof v1 writes in ``otherData``
    (``AgentN.DeviceType``, ``AgentN.MarketingName``, ``AgentN.Name`` (gfx target),
    ``AgentN.ComputeUnit``, ``AgentN.MemoryProperties.WavefrontSize``; values with their spaces
    removed). ``gpu-id`` N is the N-th agent of DeviceType GPU, in agent order."""
    import re

    if not isinstance(other, dict):
        return {}, {}
    agents: dict[int, dict] = {}
    for key, value in other.items():
        m = re.match(r"^Agent(\d+)\.(DeviceType|MarketingName|Name|ComputeUnit|MemoryProperties\.WavefrontSize)$", str(key))
        if m and isinstance(value, str):
            agents.setdefault(int(m.group(1)), {})[m.group(2)] = value.strip()
    gpus = [a for _n, a in sorted(agents.items()) if a.get("DeviceType") == "GPU"]
    devices, props = {}, {}
    for index, a in enumerate(gpus):
        if a.get("MarketingName"):
            devices[index] = a["MarketingName"][:200]
        p = {}
        for field, key in (("ComputeUnit", "unit_count"), ("MemoryProperties.WavefrontSize", "warp_size")):
            n = re.match(r"^(\d+)", a.get(field, ""))
            if n and int(n.group(1)) > 0:
                p[key] = int(n.group(1))
        if re.match(r"^gfx[0-9a-f]+$", a.get("Name", ""), re.IGNORECASE):
            p["gfx"] = a["Name"]
        props[index] = p
    return devices, props


def _text(v) -> str | None:
    """A JSON value as the text rocprof writes (numbers as strings); containers are not values: None."""
    return None if v is None or isinstance(v, (dict, list)) else str(v)


def _load(path):
    """The document, through the guarded JSON loader (size and depth bounds); gzip inflated."""
    import gzip

    from ridgeline.parsers.jsontext import loads, read_bytes

    data = read_bytes(path)
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return loads(data)


def read_stats(path, *, strict: bool = True):
    """``Name,Calls,TotalDurationNs,AverageNs,Percentage`` -> TIMELINE_TOTALS (report ``rocprof-stats``).
    Category per row: ``hip*``/``hsa_*`` names are API calls, ``MEMORY_COPY*``/``Copy*`` memory, the rest kernels."""
    import polars as pl

    from ridgeline.analyzer.schema import TIMELINE_TOTALS_COLUMNS, polars_schema
    from ridgeline.names import short_name
    from ridgeline.parsers.timeline.common import TimelineTables, _empty_activities
    from ridgeline.result import path_label

    src = path_label(path)
    df = read_csv_text(path, "a rocprof stats CSV (Name, Calls, TotalDurationNs, AverageNs, Percentage)")
    name = pl.col("Name").cast(pl.String)
    total, calls = num("TotalDurationNs", pl.Float64), num("Calls")
    bad = df.with_row_index("_row").filter(name.is_null() | total.is_null() | calls.is_null() | (total < 0)).head(1)
    if bad.height:
        r = bad.row(0, named=True)
        raise InputError(path, "expected a name, a call count and a total time in ns", line=r["_row"] + 2,
                         actual=",".join(str(r.get(c)) for c in ("Name", "Calls", "TotalDurationNs")))
    category = (pl.when(name.str.contains(r"^(hip|hsa_|roctx)")).then(pl.lit("api"))
                .when(name.str.contains(r"(?i)^(MEMORY_COPY|Copy)")).then(pl.lit("memory")).otherwise(pl.lit("kernel")))
    share = (num("Percentage", pl.Float64) / 100) if "Percentage" in df.columns else pl.lit(None, dtype=pl.Float64)
    tot = df.select(pl.lit(src).alias("source"), pl.lit("rocprof-stats").alias("report"), category.alias("category"),
                    pl.when(category == "kernel").then(kernel_name("Name")).otherwise(name).alias("name"),
                    (total / 1e9).alias("total_s"), calls.alias("count"), share.alias("time_share"))
    kernels = tot.filter(pl.col("category") == "kernel").get_column("name").drop_nulls().unique().to_list()
    mapping = {n: short_name(n) for n in kernels}
    tot = tot.with_columns(short_name=pl.when(pl.col("category") == "kernel")
                           .then(pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String))
                           .otherwise(pl.col("name")))
    schema = polars_schema(TIMELINE_TOTALS_COLUMNS)
    tot = tot.select([pl.col(c).cast(t) for c, t in schema.items()])
    notes = [f"{path}: a rocprof stats summary holds totals only: time per name, no timeline; busy/idle, gaps and "
             "per-device figures need the kernel trace (rocprof's results.csv, rocprofv3 --kernel-trace)"]
    return TimelineTables(src, "rocprof-stats", _empty_activities(), totals=tot, notes=notes, vendor="amd")
