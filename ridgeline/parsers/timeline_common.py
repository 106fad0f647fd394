"""Shared pieces of the timeline readers (``ridgeline.parsers.timeline`` and the per-format
modules ``nsys_sqlite``, ``nsys_csv``, ``kineto``): the :class:`TimelineTables` result, CUPTI copy
kinds, and the casts to the TIMELINE / HOST_API schemas."""

from __future__ import annotations

import dataclasses
from typing import Any

from ridgeline.result import Skipped

SQLITE_MAGIC = b"SQLite format 3\x00"
NSYS_REP_MAGICS = (b"NVIDIA Tegra Profiler Report", b"NVIDIA Nsight Systems")
HEAD = 1 << 16

#: CUPTI memcpy kinds (CUpti_ActivityMemcpyKind), as nsys stores them
COPY_KINDS = {0: "other", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA", 8: "DtoD",
              9: "HtoH", 10: "PtoP", 11: "HtoD"}
_COPY_WORDS = {"host-to-device": "HtoD", "device-to-host": "DtoH", "device-to-device": "DtoD", "peer-to-peer": "PtoP",
               "host-to-host": "HtoH", "htod": "HtoD", "dtoh": "DtoH", "dtod": "DtoD", "ptop": "PtoP"}


@dataclasses.dataclass
class TimelineTables:
    """What a timeline reader returns for one file.

    ``activities``: TIMELINE table (GPU kernels, copies, memsets); ``api``: HOST_API table or
    None; ``totals``: TIMELINE_TOTALS table (nsys stats summaries) or None; ``devices``:
    device index -> name; ``kind``: input kind for the inputs list.
    """

    source: str
    kind: str
    activities: Any
    api: Any = None
    totals: Any = None
    devices: dict[int, str] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    skipped: list[Skipped] = dataclasses.field(default_factory=list)
    host_calls_total: int = 0  # host calls in the file (HOST_API may hold only the synchronizing ones)
    #: where the file's host API calls come from (e.g. "nsys CUPTI_ACTIVITY_KIND_RUNTIME"); None: the
    #: file records none, so no idle time can be attributed to synchronization (one flag per input)
    host_api: str | None = None
    vendor: str | None = None  # GPU vendor: "nvidia", "amd" or None (not recorded)
    framework: str | None = None  # "pytorch" when the capture is a PyTorch program (see pytorch_capture), else None



# ======================================================================================
# helpers
# ======================================================================================
def _empty_activities():
    import polars as pl

    from ridgeline.analyzer.schema import TIMELINE_COLUMNS, polars_schema

    return pl.DataFrame(schema=polars_schema(TIMELINE_COLUMNS))


def _finish_activities(df, source: str, devices: dict[int, str]):
    """Cast to the TIMELINE schema, fill short names and device names, sort by device/start."""
    import polars as pl

    from ridgeline.analyzer.schema import TIMELINE_COLUMNS, polars_schema
    from ridgeline.names import short_name

    schema = polars_schema(TIMELINE_COLUMNS)
    for c, t in schema.items():
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=t).alias(c))
    df = df.with_columns(pl.lit(source).alias("source"))
    if devices:
        df = df.with_columns(
            pl.coalesce(pl.col("device_name"), pl.col("device").replace_strict(devices, default=None, return_dtype=pl.String))
            .alias("device_name"))
    names = df.filter(pl.col("kind") == "kernel").get_column("name").unique().drop_nulls().to_list()
    mapping = {n: short_name(n) for n in names}
    df = df.with_columns(
        pl.when(pl.col("kind") == "kernel")
        .then(pl.coalesce(pl.col("short_name"), pl.col("name").replace_strict(mapping, default=None, return_dtype=pl.String)))
        .otherwise(pl.col("name"))
        .alias("short_name")
    )
    return df.select([pl.col(c).cast(t) for c, t in schema.items()]).sort("device", "start_ns", nulls_last=True)


#: kernel names only PyTorch (ATen, c10, Inductor's Triton kernels) launches
PYTORCH_KERNEL_RE = r"(^|[\s:<(])(at::native::|at::cuda::|c10::)|^triton_(poi|red|per|tem)_"


def pytorch_capture(acts) -> str | None:
    """``"pytorch"`` when any kernel on the timeline is PyTorch's own (ATen/c10 kernels, Inductor's
    triton_* kernels), else None: remedies then name PyTorch's knobs (torch.compile) only for
    PyTorch programs. Kineto traces are PyTorch by construction."""
    import polars as pl

    if acts is None or not acts.height:
        return None
    hit = acts.filter((pl.col("kind") == "kernel") & pl.col("name").str.contains(PYTORCH_KERNEL_RE)).height
    return "pytorch" if hit else None


def _finish_api(df, source: str):
    import polars as pl

    from ridgeline.analyzer.schema import HOST_API_COLUMNS, polars_schema

    schema = polars_schema(HOST_API_COLUMNS)
    for c, t in schema.items():
        if c not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=t).alias(c))
    df = df.with_columns(pl.lit(source).alias("source"))
    return df.select([pl.col(c).cast(t) for c, t in schema.items()]).sort("start_ns")



def _dims_and_kinds(df):
    import polars as pl

    def dims(frame, prefix, text_col, prod_col):
        """'(x, y, z)' and x*y*z, formatted once per distinct triple and joined back."""
        cs = [f"{prefix}_{a}" for a in "xyz"]
        if not all(c in frame.columns for c in cs):
            return frame.with_columns(pl.lit(None, dtype=pl.String).alias(text_col), pl.lit(None, dtype=pl.Int64).alias(prod_col))
        frame = frame.with_columns([pl.col(c).cast(pl.Int64, strict=False) for c in cs])
        distinct = frame.select(cs).unique().drop_nulls()
        distinct = distinct.with_columns(
            pl.format("({}, {}, {})", *[pl.col(c) for c in cs]).alias(text_col),
            (pl.col(cs[0]) * pl.col(cs[1]) * pl.col(cs[2])).alias(prod_col),
        )
        return frame.join(distinct, on=cs, how="left", maintain_order="left")

    out = dims(df, "grid", "grid_size", "grid_blocks")
    out = dims(out, "block", "block_size", "block_threads")
    if "copy_kind_id" in out.columns:
        out = out.with_columns(
            pl.when(pl.col("kind") == "memcpy")
            .then(pl.col("copy_kind_id").cast(pl.Int64).replace_strict(COPY_KINDS, default="other", return_dtype=pl.String))
            .alias("copy_kind"))
        out = out.with_columns(
            pl.when(pl.col("kind") == "memcpy").then(pl.format("[CUDA memcpy {}]", pl.col("copy_kind")))
            .when(pl.col("kind") == "memset").then(pl.lit("[CUDA memset]"))
            .otherwise(pl.col("name")).alias("name"))
    return out

