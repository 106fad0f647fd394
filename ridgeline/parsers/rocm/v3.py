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
"""

from __future__ import annotations

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
    return finish(path, out, "rocprofv3-kernel-trace", strict=strict, where=lambda r: f"line {r + 2}", notes=notes,
                  tool="rocprof")
