"""Reduce the TELEMETRY long table to one row per host / GPU / GPU instance / window.

``reduce_windows(lf, window="5m", warmup=None)`` takes the long table (LazyFrame or
DataFrame; a Parquet scan stays lazy) and returns a DataFrame with the columns below
(:data:`ridgeline.analyzer.schema.WINDOW_COLUMNS` holds the same list with types).

How it works: the reduction is one pure function per partition (:func:`reduce_partition`: one
host's rows -> that host's window rows), mapped over the hosts by :func:`ridgeline.analyzer.fleet.partitions.reduce_partitions`
(threads here, or Dask); steps across partitions (daily typicals, fleet summary) run on the
window table afterwards. In a partition: (1) one row per GPU and timestamp with one column per
field: a wide input (the fleet store, dmon and nvidia-smi text) is that already and is only
ordered (a stable sort by GPU); long rows are folded into it (a numpy scatter); (2) the sample
interval of each GPU is the median gap between its timestamps; (3) rows are floored to the
window (``"5m"``, ``"1h"``, any polars duration, or ``"all"`` for the whole run) and aggregated
(each GPU's rows sorted by time, so a window is a contiguous block). A leading warm-up
(``warmup="2m"``) is dropped per GPU before anything else. :func:`reduce_windows` takes the long
table itself (any LazyFrame) and cuts it into chunks of about ``chunk_rows`` long rows.

States are judged per sample (one timestamp of one GPU), with the thresholds in
:data:`STATE_THRESHOLDS` (overridable with ``thresholds=``):

* ``busy``: GPU-Util >= 0.8 (GR_ENGINE_ACTIVE stands in where GPU-Util is absent, as on
  MIG instances);
* ``tensor_idle``: PIPE_TENSOR_ACTIVE <= 0.1;
* ``busy_tensor_idle``: busy and tensor_idle and GR_ENGINE_ACTIVE >= 0.5 (the guard against
  a stuck profiler, which reads GR_ENGINE ~0 while GPU-Util is high);
* ``dram_high``: DRAM_ACTIVE >= 0.5; ``memory_bound``: dram_high and tensor_idle;
* ``idle``: GPU-Util (or GR_ENGINE) <= 0.01 and GR_ENGINE <= 0.01 where present;
* ``allocated_idle``: idle while FB used >= 1 GiB;
* ``stuck_profiler``: GPU-Util >= 0.9 while GR_ENGINE_ACTIVE <= 0.01.

Each ``*_share`` is the fraction of the samples where the inputs of that state were
present; each ``*_s`` is share x covered seconds. Profiling ratios in (1, 1.5] (seen on
MIG instances) are clamped to 1 and counted; larger ones mean a percent was fed where a
ratio belongs and the window is excluded.

Output columns (one row per host/gpu/gpu_instance/window):

==============================  ============================================================
column                          meaning
==============================  ============================================================
host, gpu, gpu_instance         identity (gpu_instance null for a whole GPU)
uuid, model                     GPU UUID and model when the input named them
window_start, window_end        UTC; for ``window="all"`` the GPU's first sample and last + 1 interval
first_sample, last_sample       UTC times of the window's first and last sample (the window
                                start is a floor: 15:55 for a capture starting 15:58:57)
samples                         timestamps reported in the window (N/A-only ticks included)
interval_s                      inferred sample interval of this GPU (median gap), s
span_s                          the time observed, s: min(samples x interval_s, window length).
                                The one definition every view calls "observed" (the terminal
                                header and len column, GPU-hours, waste seconds, the JSON)
coverage_ratio                  span_s / the GPU's extent in the window (its first sample ..
                                last sample + 1 interval, cut to the window), 0..1: a 6 s
                                capture is not "2%" of a 5-minute window; a gap lowers it
max_gap_s                       largest gap between consecutive samples ending in the window, s
<m>_mean_ratio, <m>_p95_ratio   mean and 95th percentile for m in gpu_util, gr_engine_active,
                                sm_active, sm_occupancy, tensor_active, dram_active,
                                fp16_active, fp32_active, fp64_active (ratio 0..1; null = absent)
mem_copy_util_mean_ratio        NVML memory-copy utilization, mean
power_mean_w, power_p95_w       board power, W
sm_clock_mean_hz, mem_clock_mean_hz  clocks, Hz
fb_used_max_bytes               device memory in use, max, bytes
pcie_tx/rx_mean_bytes_per_s     PCIe rates; nvlink_tx/rx_mean_bytes_per_s NVLink rates
busy_share ... stuck_profiler_share  fraction of samples in each state above (0..1)
busy_s, busy_tensor_idle_s, memory_bound_s, idle_s, allocated_idle_s  share x span_s, s
has_profiling                   any DCGM profiling (DCP) field present in the window
profiling_fields                number of distinct profiling fields present
null_values                     field values reported as blank (N/A, sentinels) in the window
ratio_clamped_values            profiling ratios in (1, 1.5] clamped to 1
ratio_max_raw                   largest profiling ratio before clamping
percent_as_ratio                a ratio field held values > 1.5 (percent fed as ratio)
ratio_as_percent                GPU-Util looked like a 0..1 ratio fed where percent belongs
stalled_fields                  profiling fields constant over >= 30 samples (not 0, not saturated ~1), comma list
excluded                        why the window is unfit for performance rules, or null
==============================  ============================================================
"""

from __future__ import annotations

import re

# per-sample state thresholds (canonical units)
STATE_THRESHOLDS: dict[str, float] = {
    "busy_util": 0.8,
    "tensor_idle": 0.1,
    "gr_engine_guard": 0.5,
    "dram_high": 0.5,
    "idle_util": 0.01,
    "allocated_fb_bytes": float(1 << 30),
    "stuck_util": 0.9,
    "stuck_gr_engine": 0.01,
    "clamp_max": 1.5,
    "stall_min_samples": 30,
    "stall_saturated": 0.995,
    "excluded_share": 0.5,
}

# metric stem -> canonical field, for mean/p95 columns
RATIO_METRICS: dict[str, str] = {
    "gpu_util": "gpu_util_ratio",
    "gr_engine_active": "gr_engine_active_ratio",
    "sm_active": "sm_active_ratio",
    "sm_occupancy": "sm_occupancy_ratio",
    "tensor_active": "tensor_active_ratio",
    "dram_active": "dram_active_ratio",
    "fp16_active": "fp16_active_ratio",
    "fp32_active": "fp32_active_ratio",
    "fp64_active": "fp64_active_ratio",
}
OTHER_FIELDS = (
    "mem_copy_util_ratio",
    "power_w",
    "sm_clock_hz",
    "mem_clock_hz",
    "fb_used_bytes",
    "pcie_tx_bytes_per_s",
    "pcie_rx_bytes_per_s",
    "nvlink_tx_bytes_per_s",
    "nvlink_rx_bytes_per_s",
    "tensor_hmma_active_ratio",
    "tensor_imma_active_ratio",
    "tensor_dfma_active_ratio",
)
PROF_FIELDS = (
    "gr_engine_active_ratio", "sm_active_ratio", "sm_occupancy_ratio", "tensor_active_ratio",
    "dram_active_ratio", "fp64_active_ratio", "fp32_active_ratio", "fp16_active_ratio",
    "tensor_hmma_active_ratio", "tensor_imma_active_ratio", "tensor_dfma_active_ratio",
)
def _health_fields() -> tuple[str, ...]:
    from ridgeline.analyzer.schema import HEALTH_FIELDS

    return HEALTH_FIELDS


def _throttle_fields() -> tuple[str, ...]:
    from ridgeline.analyzer.fleet.throttle import FIELDS

    return FIELDS


# health fields last: ridgeline.analyzer.fleet.health reduces them (XID codes, counter increases);
# ridgeline.analyzer.fleet.throttle the clock event reasons, temperature and power limit
USED_FIELDS = tuple(dict.fromkeys((*RATIO_METRICS.values(), *OTHER_FIELDS, *_health_fields(), *_throttle_fields())))
KEYS = ("host", "gpu", "gpu_instance")
WIDE_IDENTITY = ("timestamp", "host", "gpu", "gpu_instance", "uuid", "model")  # a wide frame's non-field columns
STATES = ("busy", "tensor_idle", "busy_tensor_idle", "dram_high", "memory_bound", "idle",
          "allocated_idle", "stuck_profiler")
SECONDS = ("busy", "busy_tensor_idle", "memory_bound", "idle", "allocated_idle")
_ENGINE = "in-memory"  # the per-window group-by (small frames, many aggregations)
PARALLEL_CHUNKS = 2  # chunks reduced at the same time (threads: polars and numpy release the GIL)
CHUNK_ROWS = 4_000_000  # long rows per reduction chunk (whole hosts, or GPUs of a larger host; ~25 bytes each)

_DUR_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|min|h|d)?\s*$")
_UNIT_S = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0, None: 1.0}


def parse_duration_s(text: str | float | int | None, *, what: str = "duration") -> float | None:
    """'5m' -> 300.0, '2h' -> 7200.0, '30s' / '30' -> 30.0, None -> None."""
    if text is None:
        return None
    if isinstance(text, (int, float)):
        return float(text)
    m = _DUR_RE.match(str(text))
    if not m:
        from ridgeline.errors import UsageError

        raise UsageError(f"{what} {text!r}: expected a duration such as 30s, 5m, 1h, 1d")
    return float(m.group(1)) * _UNIT_S[m.group(2)]


def _polars_every(seconds: float) -> str:
    us = int(round(seconds * 1_000_000))
    return f"{us}us"




def _gid_expr(seed: int = 20260105):
    """One integer per (host, gpu, gpu_instance): grouping on it is far cheaper than on strings.
    :func:`reduce_windows` checks the ids are distinct over the input (else tries another seed)."""
    import polars as pl

    return pl.struct(*KEYS).hash(seed=seed).alias("_gid")


def _fold_per_timestamp(lf, th, gid=None):
    """Long rows of one chunk -> (one row per (GPU, timestamp) with one column per field, ordered).

    The rows are first brought into (GPU, timestamp) order: a vectorized check says whether
    they already are (every reader of a time-ordered host writes them so), else they are sorted
    (stable, so rows keep their input order within a (GPU, timestamp)). Consecutive rows with
    the same (GPU, timestamp) then form a run; each value is scattered into a (field x run)
    array in one vectorized step. A field given twice at one timestamp keeps its last value.
    The second value returned is always True: the rows come out sorted by (GPU, timestamp)
    with no repeats.
    """
    import numpy as np
    import polars as pl

    nf = len(USED_FIELDS)
    # in-memory engine: the chunk is bounded (the host/GPU filter is pushed into the scan) and,
    # measured on the synthetic fleet, it reads a chunk with ~10% less CPU than the streaming
    # engine at the same peak memory
    df = lf.select(gid if gid is not None else _gid_expr(), "timestamp", "_fi", "value").collect()
    if df.height == 0:
        return pl.DataFrame(), True
    if not _non_decreasing(df, strict=False):
        # GPUs interleaved per tick (a store in time order): a stable sort on the GPU alone (~4x
        # cheaper than on GPU and time) orders them; rows grouped by field (an unpivoted wide
        # table) or out of time order need the full sort. Stable either way: rows keep their
        # input order within a (GPU, timestamp)
        df = df.sort(_gid_key(df), maintain_order=True)
        if not _non_decreasing(df, strict=False):
            df = df.sort(_gid_key(df), "timestamp", maintain_order=True)

    run = df.select(pl.struct("_gid", "timestamp").rle_id()).to_series().to_numpy()
    n_runs = int(run[-1]) + 1
    fi = df.get_column("_fi").to_numpy()
    val = df.get_column("value").to_numpy(allow_copy=True).astype(np.float64, copy=False)
    present = np.flatnonzero(np.bincount(fi, minlength=nf))  # fields this chunk has
    slot = np.zeros(nf, dtype=np.int64)
    slot[present] = np.arange(len(present)) * n_runs
    grid = np.full(len(present) * n_runs, np.nan)
    grid[slot[fi] + run] = val  # 1-D scatter into (present field x run): one vectorized step
    grid = grid.reshape(len(present), n_runs)
    starts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]])
    nulls = np.bincount(run[np.isnan(val)], minlength=n_runs)
    cols = {"_gid": df.get_column("_gid").gather(starts), "timestamp": df.get_column("timestamp").gather(starts)}
    cols.update({USED_FIELDS[i]: pl.Series(USED_FIELDS[i], grid[k], nan_to_null=True) for k, i in enumerate(present)})
    cols["_nulls"] = nulls
    out = pl.DataFrame(cols)
    have = set(present.tolist())
    missing = [f for i, f in enumerate(USED_FIELDS) if i not in have]
    return out.with_columns([pl.lit(None, pl.Float64).alias(f) for f in missing]), True


def _gid_key(df):
    """The sort key for ``_gid``: as UInt32 when every id fits (the GPU index of a one-host
    partition), the same order at about half the cost of sorting the 64-bit ids (measured:
    2 M long rows 193 -> ~90 ms)."""
    import polars as pl

    top = df.get_column("_gid").max()
    return pl.col("_gid").cast(pl.UInt32) if top is not None and top < 2**32 else pl.col("_gid")


def _sort_by_gid(df):
    """``df`` stably sorted by ``_gid`` (rows keep their order within a GPU), as
    ``df.sort("_gid", maintain_order=True)``. A partition holds few GPUs: their row numbers are
    gathered by a group-by (which keeps the rows' order within each group), the groups put in
    ``_gid`` order, and the rows taken once. On a 172,800-row host of 8 GPUs ~2 ms for the
    order where polars' stable sort took ~6-8 ms (and numpy's radix sort would import numpy,
    ~0.07 CPU s of start-up the wide path does not otherwise pay)."""
    import polars as pl

    order = (df.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_i"), "_gid").group_by("_gid").agg("_i")
             .sort("_gid").get_column("_i").explode())
    return df[order]


def _non_decreasing(df, *, strict: bool) -> bool:
    """Rows of ``df`` ordered by (``_gid``, ``timestamp``)? ``strict``: also no (GPU, time) twice."""
    import polars as pl

    if df.height < 2:
        return True
    g, g0 = pl.col("_gid"), pl.col("_gid").shift(1)
    t, t0 = pl.col("timestamp"), pl.col("timestamp").shift(1)
    later = (t > t0) if strict else (t >= t0)
    return bool(df.select(((g > g0) | ((g == g0) & later)).slice(1).all()).item())


def _with_identity(df):
    """Add the identity columns a frame lacks (as nulls of the TELEMETRY types)."""
    import polars as pl

    types = {"host": pl.String, "gpu": pl.Int64, "gpu_instance": pl.String, "uuid": pl.String, "model": pl.String}
    missing = [pl.lit(None, t).alias(c) for c, t in types.items() if c not in df.columns]
    return df.with_columns(missing) if missing else df


def _ident_and_gid(df):
    """One row per GPU series of ``df`` (an eager partition, long or wide) with its ``_gid``,
    uuid and model (the largest named, as over the whole input), and the ``_gid`` expression.

    One host with whole, indexed GPUs (the usual partition): the GPU index is the id (no
    hashing per row). Otherwise a 64-bit hash of (host, gpu, gpu_instance), checked distinct.
    """
    import polars as pl

    host = df.get_column("host")
    one_host = host.null_count() == 0 and bool((host == host[0]).all()) if df.height else True
    whole = df.get_column("gpu_instance").null_count() == df.height and df.get_column("gpu").null_count() == 0
    has_names = df.get_column("uuid").null_count() < df.height or df.get_column("model").null_count() < df.height
    if one_host and whole:
        gid = pl.col("gpu").cast(pl.UInt64).alias("_gid")
        if has_names:
            ident = df.group_by("gpu").agg(pl.col("uuid").max(), pl.col("model").max())
        else:
            ident = df.select(pl.col("gpu").unique()).with_columns(
                pl.lit(None, pl.String).alias("uuid"), pl.lit(None, pl.String).alias("model"))
        ident = ident.with_columns(
            pl.lit(host[0] if df.height else None, pl.String).alias("host"),
            pl.lit(None, pl.String).alias("gpu_instance"),
        )
        return ident.with_columns(gid), gid
    ident = df.group_by(list(KEYS)).agg(pl.col("uuid").max(), pl.col("model").max())
    seed = 20260105
    while ident.select(_gid_expr(seed).n_unique()).item() != ident.height:  # 64-bit collision: ~never
        seed += 1
    gid = _gid_expr(seed)
    return ident.with_columns(gid), gid


def _fold_wide(df, gid=None):
    """A partition's wide frame (one row per GPU and timestamp, one column per canonical field,
    ``_nulls`` = blank values in the row) -> (rows ordered by (GPU, time) with ``_gid``, ident).
    ``gid``: the ``_gid`` expression of the whole partition (a time slice of it; ident is then None).

    Repeated (GPU, timestamp) rows are merged as the long table would be: per field the last
    row's value (blank included), blanks summed. None when no analyzed field is present.
    """
    import polars as pl

    present = [f for f in USED_FIELDS if f in df.columns]
    if not present:
        return None, None
    df = _with_identity(df)
    if "_nulls" not in df.columns:  # blanks per row, over the columns holding any (a null count is known)
        nully = [f for f in present if df.get_column(f).null_count()]
        df = df.with_columns((pl.sum_horizontal([pl.col(f).is_null() for f in nully]) if nully
                              else pl.lit(0, pl.Int64)).alias("_nulls"))
    ident, gid = _ident_and_gid(df) if gid is None else (None, gid)
    if df.get_column("timestamp").null_count():  # a filter copies every column: only when one is needed
        df = df.filter(pl.col("timestamp").is_not_null())
    df = df.select(gid, "timestamp", *present, pl.col("_nulls").cast(pl.Int64))
    # a store in time order shows its GPUs interleaved within its first rows: no pass over all
    if not (_non_decreasing(df.head(1024), strict=True) and _non_decreasing(df, strict=True)):
        # rows in time order, GPUs interleaved (the usual store): a stable sort on the GPU alone
        # (~4x cheaper than on GPU and time) orders them; out-of-order times need the full sort
        df = _sort_by_gid(df)
        if not _non_decreasing(df, strict=True):
            df = df.sort(_gid_key(df), "timestamp", maintain_order=True)
        if not _non_decreasing(df, strict=True):  # a (GPU, timestamp) given twice
            df = df.group_by("_gid", "timestamp", maintain_order=True).agg(
                *[pl.col(f).last() for f in present], pl.col("_nulls").sum())
    missing = [pl.lit(None, pl.Float64).alias(f) for f in USED_FIELDS if f not in present]
    return (df.with_columns(missing) if missing else df), ident


def wide_to_long(frame):
    """A wide frame (identity + canonical field columns) -> TELEMETRY-like long rows
    (timestamp, identity, field, value) of the fields the reduction uses, column by column."""
    import polars as pl

    cols = frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns
    frame = _with_identity(frame)
    ident = ["timestamp", "host", "gpu", "gpu_instance", "uuid", "model"]
    parts = [frame.select(*ident, pl.lit(f).alias("field"), pl.col(f).cast(pl.Float64).alias("value"))
             for f in USED_FIELDS if f in cols]
    if not parts:
        return frame.select(*ident, pl.lit(None, pl.String).alias("field"), pl.lit(None, pl.Float64).alias("value")).head(0)
    return pl.concat(parts, how="vertical")


def _fold_long(df):
    """A partition's long rows (eager) -> (rows ordered by (GPU, time) with ``_gid``, ident)."""
    import polars as pl

    df = _with_identity(df)
    ident, gid = _ident_and_gid(df)
    lf = df.lazy().select(
        "timestamp", *KEYS, "value",
        pl.col("field").cast(pl.Enum(list(USED_FIELDS)), strict=False).to_physical().cast(pl.Int32).alias("_fi"),
    ).filter(pl.col("_fi").is_not_null() & pl.col("timestamp").is_not_null())
    wide, _ordered = _fold_per_timestamp(lf, None, gid)
    if not wide.height:
        return None, None
    return wide, ident


def _reduce_wide(wide, *, window_s: float | None, th: dict[str, float], ordered: bool = False, series=None,
                 has: set | None = None):
    """Per-timestamp wide rows (eager) -> window rows, in one lazy query.

    ``ordered``: the rows are known to be sorted by (GPU, timestamp) without repeats.
    Profiling fields with no value at all in ``wide`` skip the clamp and stall checks (their
    results are zero / absent anyway).
    """
    import polars as pl

    if not ordered:
        import numpy as np

        g = wide.get_column("_gid").to_numpy()
        t = wide.get_column("timestamp").to_physical().to_numpy()
        ordered = bool(np.all((g[1:] > g[:-1]) | ((g[1:] == g[:-1]) & (t[1:] > t[:-1])))) if len(g) > 1 else True
        if not ordered:  # interleaved GPUs (dmon ticks) or out-of-order input
            wide = wide.sort("_gid", "timestamp")
    # fields holding at least one value (the others are all null: their aggregates are known)
    if has is None:  # given (with ``series``) by a partition reduced in time slices (telemetry_slices)
        has = {c for c in USED_FIELDS if c in wide.columns and wide.get_column(c).null_count() < wide.height}
    if wide.height <= WINDOW_CHUNK_ROWS * WINDOW_WHOLE_SHARE:
        return _window_query(wide, has, window_s=window_s, th=th, series=series)
    # a large partition (one host's long text capture) in slices of whole GPUs: every step of the
    # query is per GPU, so the windows are the same, and its per-row temporaries (gaps, states,
    # window keys) are held for one slice at a time instead of the whole partition
    runs = wide.get_column("_gid").rle().struct.field("len").to_list()
    out, start, size = [], 0, 0
    for n in runs:
        if size and size + n > WINDOW_CHUNK_ROWS:
            out.append(_window_query(wide.slice(start, size), has, window_s=window_s, th=th, series=series))
            start, size = start + size, 0
        size += n
    out.append(_window_query(wide.slice(start, size), has, window_s=window_s, th=th, series=series))
    return pl.concat(out, how="vertical")


# rows of one window query: a partition above this is reduced in slices of whole GPUs (the
# query's per-row temporaries are held for one slice; on an 84 MB dmon file, peak RSS 275 MB at
# 1 << 19, 249 MB at 1 << 18, 238 MB at 1 << 17; CPU on the wide store the same within noise)
WINDOW_CHUNK_ROWS = 1 << 17
# a partition up to 1.5x that is reduced in one query: each query costs ~4-5 ms of CPU whatever
# its size (building and optimizing the plan), so splitting a 6-hour host of 8 GPUs (172,800 rows)
# in two cost ~7% of its reduction for ~14 MB less held at once; larger partitions (a day of a
# host, an 84 MB dmon capture) are sliced as before
WINDOW_WHOLE_SHARE = 1.5


def _window_query(wide, has: set, *, window_s: float | None, th: dict[str, float], series=None):
    """Rows sorted by (GPU, time) without repeats -> their window rows (``has``: the fields
    holding a value anywhere in the partition)."""
    import polars as pl

    lf = wide.lazy()
    same = pl.col("_gid") == pl.col("_gid").shift(1)
    gap = pl.when(same).then(pl.col("timestamp").diff().dt.total_microseconds() / 1e6).otherwise(None)
    lf = lf.with_columns(gap.alias("_gap"))
    # per GPU: sample interval (median gap) and extent, joined to the (few) window rows afterwards
    # (the rows are sorted by _gid: flagged so, the group-by takes slices instead of hashing)
    interval = lf.with_columns(pl.col("_gid").set_sorted()).group_by("_gid").agg(
        pl.col("_gap").median().fill_null(1.0).alias("interval_s"), pl.col("timestamp").min().alias("_t0"),
        pl.col("timestamp").max().alias("_t1"),
    ) if series is None else series.lazy()  # series: the whole GPU series' (telemetry_slices)

    # clamp-and-flag profiling ratios: only the fields holding a value above 1 in these rows get
    # per-row temporaries (the others are their own raw values: no copy of each profiling column)
    prof_present = [f for f in PROF_FIELDS if f in has]
    tops = wide.select([pl.col(f).max() for f in prof_present]).row(0) if prof_present else ()
    over = [f for f, top in zip(prof_present, tops) if top is not None and top > 1.0]
    if over:
        clamped_terms = [((pl.col(f) > 1.0) & (pl.col(f) <= th["clamp_max"])).cast(pl.Int64).fill_null(0) for f in over]
        lf = lf.with_columns(
            pl.sum_horizontal(clamped_terms).alias("_clamped"),
            pl.max_horizontal([pl.col(f) for f in over]).alias("_ratio_raw_max"),
            *[pl.when(pl.col(f) > th["clamp_max"]).then(pl.col(f))
              .when(pl.col(f) > 1.0).then(1.0).otherwise(pl.col(f)).alias(f) for f in over],
        )

    util = pl.coalesce(pl.col("gpu_util_ratio"), pl.col("gr_engine_active_ratio"))
    gr = pl.col("gr_engine_active_ratio")
    tensor = pl.col("tensor_active_ratio")
    dram = pl.col("dram_active_ratio")
    fb = pl.col("fb_used_bytes")
    idle = (util <= th["idle_util"]) & (gr.is_null() | (gr <= th["idle_util"]))
    states = {
        "busy": util >= th["busy_util"],
        "tensor_idle": tensor <= th["tensor_idle"],
        "busy_tensor_idle": (util >= th["busy_util"]) & (tensor <= th["tensor_idle"]) & (gr >= th["gr_engine_guard"]),
        "dram_high": dram >= th["dram_high"],
        "memory_bound": (dram >= th["dram_high"]) & (tensor <= th["tensor_idle"]),
        "idle": idle,
        "allocated_idle": idle & (fb >= th["allocated_fb_bytes"]),
        "stuck_profiler": (pl.col("gpu_util_ratio") >= th["stuck_util"]) & (gr <= th["stuck_gr_engine"]),
    }
    # Boolean (a bit a row, not 8 bytes): the mean of a Boolean is the share of true, nulls left out
    lf = lf.with_columns([e.alias(f"_st_{k}") for k, e in states.items()])
    from ridgeline.analyzer.fleet import health, throttle

    health_rows = health.row_columns(has) + throttle.row_columns(has)
    if health_rows:
        lf = lf.with_columns(health_rows)

    # rows are sorted by (GPU, time), so each (GPU, window) is one contiguous block: grouping on
    # the block number, flagged sorted, lets polars aggregate slices instead of gathered rows
    if window_s is None:
        lf = lf.with_columns(pl.col("_gid").rle_id().set_sorted().alias("_seg"))
        first = [pl.col("_gid").first().alias("_gid")]
    else:
        lf = lf.with_columns(pl.col("timestamp").dt.truncate(_polars_every(window_s)).alias("window_start"))
        lf = lf.with_columns(pl.struct("_gid", "window_start").rle_id().set_sorted().alias("_seg"))
        first = [pl.col("_gid").first().alias("_gid"), pl.col("window_start").first().alias("window_start")]
    util_raw = pl.col("gpu_util_ratio")  # never clamped (not a profiling field)
    frac_part = ((util_raw * 100 - (util_raw * 100).round(0)).abs() > 1e-6)
    aggs = [
        *first,
        pl.col("timestamp").min().alias("first_sample"),
        pl.col("timestamp").max().alias("last_sample"),
        pl.len().alias("samples"),
        pl.col("_gap").max().alias("max_gap_s"),
        pl.col("_nulls").sum().cast(pl.Int64).alias("null_values"),
        (pl.col("_clamped").sum().cast(pl.Int64) if over else pl.lit(0, pl.Int64)).alias("ratio_clamped_values"),
        ((pl.max_horizontal([pl.col("_ratio_raw_max").max()] * bool(over) + [pl.col(f).max() for f in prof_present if f not in over]))
         if prof_present else pl.lit(None, pl.Float64)).alias("ratio_max_raw"),
        ((pl.col("_ratio_raw_max") > th["clamp_max"]).any() if over else pl.lit(False)).alias("percent_as_ratio"),
    ]
    absent = []  # aggregates of fields without a value in this partition: null, known without a pass
    if "gpu_util_ratio" in has:
        aggs.append(((util_raw.max() <= 0.01) & (util_raw.max() > 0)
                     # half or more of the samples above 0 fractional (a filter per group cost ~1 ms)
                     & ((frac_part & (util_raw > 0)).sum() >= 0.5 * (util_raw > 0).sum())
                     ).fill_null(False).alias("ratio_as_percent"))
    else:
        absent.append(pl.lit(False).alias("ratio_as_percent"))
    # values no GPU can report (GPU-Util outside 0..100%, negative power): the window is excluded
    # and RL205 names the values
    for f, fn, name in (("gpu_util_ratio", "min", "_util_min"), ("gpu_util_ratio", "max", "_util_max"),
                        ("power_w", "min", "_power_min")):
        (aggs if f in has else absent).append(
            getattr(pl.col(f), fn)().alias(name) if f in has else pl.lit(None, pl.Float64).alias(name))

    def field_agg(f, e, name):
        (aggs if f in has else absent).append(e.alias(name) if f in has else pl.lit(None, pl.Float64).alias(name))

    for stem, f in RATIO_METRICS.items():
        field_agg(f, pl.col(f).mean(), f"{stem}_mean_ratio")
        field_agg(f, pl.col(f).quantile(0.95, interpolation="linear"), f"{stem}_p95_ratio")
    field_agg("mem_copy_util_ratio", pl.col("mem_copy_util_ratio").mean(), "mem_copy_util_mean_ratio")
    field_agg("power_w", pl.col("power_w").mean(), "power_mean_w")
    field_agg("power_w", pl.col("power_w").quantile(0.95, interpolation="linear"), "power_p95_w")
    field_agg("sm_clock_hz", pl.col("sm_clock_hz").mean(), "sm_clock_mean_hz")
    field_agg("mem_clock_hz", pl.col("mem_clock_hz").mean(), "mem_clock_mean_hz")
    field_agg("fb_used_bytes", pl.col("fb_used_bytes").max(), "fb_used_max_bytes")
    for f, name in (("pcie_tx_bytes_per_s", "pcie_tx_mean_bytes_per_s"), ("pcie_rx_bytes_per_s", "pcie_rx_mean_bytes_per_s"),
                    ("nvlink_tx_bytes_per_s", "nvlink_tx_mean_bytes_per_s"),
                    ("nvlink_rx_bytes_per_s", "nvlink_rx_mean_bytes_per_s")):
        field_agg(f, pl.col(f).mean(), name)
    for st in STATES:
        # the share of true among the known rows as sum / count: what mean() gives, ~1 ms less a
        # partition (a Boolean's group mean is not its popcount in polars); no known row: null
        n = pl.col(f"_st_{st}").count()
        aggs.append(pl.when(n > 0).then(pl.col(f"_st_{st}").sum() / n).alias(f"{st}_share"))
    # profiling fields: present in the window (count), and constant (stalled) over it. Stall
    # checks read the clamped values: a window whose raw maximum is below stall_saturated (< 1)
    # had nothing clamped, and one whose raw maximum is not stays at or above it after clamping
    for i, f in enumerate(prof_present):
        aggs += [pl.col(f).count().alias(f"_n{i}"), pl.col(f).min().alias(f"_lo{i}"), pl.col(f).max().alias(f"_hi{i}")]
    aggs += health.window_aggs(has) + throttle.window_aggs(has)
    out = health.finish(lf.group_by("_seg").agg(aggs).drop("_seg"))
    out = out.join(interval, on="_gid", how="left")
    if window_s is None:
        out = out.with_columns(pl.col("_t0").alias("window_start"))
    stall_n = int(th["stall_min_samples"])
    stall_exprs = [
        pl.when((pl.col(f"_n{i}") >= stall_n) & (pl.col(f"_lo{i}") == pl.col(f"_hi{i}"))
                & (pl.col(f"_hi{i}") > 0) & (pl.col(f"_hi{i}") < th["stall_saturated"]))
        .then(pl.lit(f)).otherwise(None)
        for i, f in enumerate(prof_present)
    ]
    out = out.with_columns(
        *absent,
        (pl.sum_horizontal([(pl.col(f"_n{i}") > 0).cast(pl.Int64) for i in range(len(prof_present))])
         if prof_present else pl.lit(0, pl.Int64)).alias("profiling_fields"),
        (pl.concat_str(stall_exprs, separator=",", ignore_nulls=True) if stall_exprs
         else pl.lit(None, pl.String)).alias("stalled_fields"),
        # a profiling ratio below 0 cannot be (a tensor-active of -0.5): the window is implausible
        (pl.concat_str([pl.when(pl.col(f"_lo{i}") < 0).then(pl.format("{} {}", pl.lit(f.removesuffix("_ratio")),
                                                                       pl.col(f"_lo{i}").round(3)))
                        for i, f in enumerate(prof_present)], separator=", ", ignore_nulls=True)
         if prof_present else pl.lit(None, pl.String)).alias("_neg_prof"),
    ).drop([f"_{k}{i}" for i in range(len(prof_present)) for k in ("n", "lo", "hi")])

    if window_s is None:
        out = out.with_columns(
            (pl.col("_t1") + pl.duration(microseconds=(pl.col("interval_s") * 1e6).round(0).cast(pl.Int64)))
            .alias("window_end")
        )
    else:
        out = out.with_columns(
            (pl.col("window_start") + pl.duration(microseconds=int(round(window_s * 1e6)))).alias("window_end")
        )
    length = (pl.col("window_end") - pl.col("window_start")).dt.total_microseconds() / 1e6
    # coverage is of the time observed: the window cut to the GPU's first sample .. last + 1 interval
    # (a 6 s capture in a 5 min window is fully covered, not 2%)
    seen_end = pl.col("_t1") + pl.duration(microseconds=(pl.col("interval_s") * 1e6).round(0).cast(pl.Int64))
    observed = (
        (pl.min_horizontal(pl.col("window_end"), seen_end) - pl.max_horizontal(pl.col("window_start"), pl.col("_t0")))
        .dt.total_microseconds() / 1e6
    )
    out = out.with_columns(
        pl.min_horizontal(pl.col("samples") * pl.col("interval_s"), length).alias("span_s"),
        observed.alias("_observed_s"),
    ).with_columns(
        pl.when(pl.col("_observed_s") > 0).then(pl.col("span_s") / pl.col("_observed_s")).otherwise(1.0)
        .clip(0.0, 1.0).alias("coverage_ratio"),
        (pl.col("profiling_fields") > 0).alias("has_profiling"),
        pl.when(pl.col("stalled_fields") == "").then(None).otherwise(pl.col("stalled_fields")).alias("stalled_fields"),
    )
    out = out.with_columns([(pl.col(f"{st}_share").fill_null(0.0) * pl.col("span_s")).alias(f"{st}_s") for st in SECONDS])
    bad_util = (pl.col("_util_min") < 0) | (pl.col("_util_max") > 1.0 + 1e-9)
    bad_power = pl.col("_power_min") < 0
    bad_prof = pl.col("_neg_prof").is_not_null() & (pl.col("_neg_prof") != "")
    implausible = pl.concat_str(
        [pl.when(bad_util.fill_null(False)).then(pl.format("GPU-Util {}%..{}%", (pl.col("_util_min") * 100).round(1),
                                                           (pl.col("_util_max") * 100).round(1))),
         pl.when(bad_power.fill_null(False)).then(pl.format("power {} W", pl.col("_power_min").round(1))),
         pl.when(bad_prof).then(pl.col("_neg_prof"))],
        separator=", ", ignore_nulls=True)
    out = out.with_columns(
        pl.when((bad_util | bad_power | bad_prof).fill_null(False)).then(pl.lit("implausible values: ") + implausible)
        .when(pl.col("stuck_profiler_share") >= th["excluded_share"]).then(pl.lit("stuck profiler: GPU-Util high, GR_ENGINE_ACTIVE ~0"))
        .when(pl.col("percent_as_ratio")).then(pl.lit("profiling ratio above 1.5: percent fed as ratio"))
        .when(pl.col("ratio_as_percent")).then(pl.lit("GPU-Util below 1% with fractional percents: ratio fed as percent"))
        .when(pl.col("stalled_fields").is_not_null()).then(pl.lit("stalled profiling fields: ") + pl.col("stalled_fields"))
        .otherwise(None).alias("excluded")
    )
    return out.collect(engine=_ENGINE)


def _finish_columns(df):
    import polars as pl

    from ridgeline.analyzer.schema import WINDOW_COLUMNS, polars_schema

    from ridgeline.analyzer.fleet.classes import class_expr

    types = polars_schema(WINDOW_COLUMNS)
    exprs = [(pl.col(c).cast(t) if c in df.columns else pl.lit(None, dtype=t).alias(c)) for c, t in types.items()]
    return df.select(exprs).with_columns(class_expr()).sort(["host", "gpu", "gpu_instance", "window_start"], nulls_last=True)


def empty_windows():
    import polars as pl

    return _finish_columns(pl.DataFrame({"host": []}, schema={"host": pl.String}).clear())


def _options(window, warmup, thresholds) -> tuple[float | None, float | None, dict[str, float]]:
    """(window seconds or None for 'all', warm-up seconds or None, thresholds), checked."""
    th = dict(STATE_THRESHOLDS)
    if thresholds:
        unknown = set(thresholds) - set(th)
        if unknown:
            from ridgeline.errors import UsageError

            raise UsageError(f"unknown telemetry threshold(s): {', '.join(sorted(unknown))}")
        th.update(thresholds)
    window_s = None if window in (None, "all") else parse_duration_s(window, what="--window")
    if window_s is not None and window_s <= 0:
        from ridgeline.errors import UsageError

        raise UsageError(f"--window must be > 0, got {window!r}")
    return window_s, parse_duration_s(warmup, what="--warmup"), th


def reduce_windows(lf, *, window: str | float | None = "5m", warmup: str | float | None = None,
                   thresholds: dict[str, float] | None = None, chunk_rows: int = CHUNK_ROWS):
    """TELEMETRY long table -> WINDOW table (DataFrame), see the module docstring.

    ``window``: "5m", "1h", "30s", ... or "all" (one window per GPU for the whole run).
    ``warmup``: leading span dropped per GPU ("2m"). ``thresholds``: overrides of
    :data:`STATE_THRESHOLDS`. Memory stays bounded by reducing hosts in chunks of about
    ``chunk_rows`` long rows, each read with its host/GPU filter pushed into the scan.
    """
    import polars as pl

    window_s, warmup_s, th = _options(window, warmup, thresholds)
    lf = lf.lazy() if isinstance(lf, pl.DataFrame) else lf
    # identity of every GPU series (and its size, to cut hosts into chunks): a cheap,
    # low-cardinality pass over the identity columns only. Most inputs name no GPU instance,
    # UUID or model (a cheap null check says so): then host and GPU alone are grouped, which
    # saves hashing three more (all-null) columns per row
    optional = ("gpu_instance", "uuid", "model")
    if any(lf.select(pl.col(*optional).is_not_null().any()).collect(engine="streaming").row(0)):
        ident = lf.group_by(list(KEYS)).agg(
            pl.len().alias("n"), pl.col("uuid").max().alias("uuid"), pl.col("model").max().alias("model"),
        ).collect(engine="streaming")
    else:
        types = lf.collect_schema()
        ident = lf.group_by("host", "gpu").agg(pl.len().alias("n")).collect(engine="streaming").select(
            "host", "gpu", pl.lit(None, types["gpu_instance"]).alias("gpu_instance"), "n",
            pl.lit(None, types["uuid"]).alias("uuid"), pl.lit(None, types["model"]).alias("model"),
        )
    # fields the reduction does not use become null codes and are dropped (an integer test)
    lf = lf.select(
        "timestamp", *KEYS, "uuid", "model", "value",
        pl.col("field").cast(pl.Enum(list(USED_FIELDS)), strict=False).to_physical().cast(pl.Int32).alias("_fi"),
    ).filter(pl.col("_fi").is_not_null() & pl.col("timestamp").is_not_null())
    if ident.height == 0:
        return empty_windows()
    seed = 20260105
    while ident.select(_gid_expr(seed).n_unique()).item() != ident.height:  # 64-bit collision: ~never
        seed += 1
    ident = ident.with_columns(_gid_expr(seed))
    # chunks of about chunk_rows long rows: whole hosts, or the GPUs of a host larger than that
    # (smaller chunks also fold faster: the per-timestamp grid stays in cache)
    counts = ident.group_by("host").agg(pl.col("n").sum()).sort("host", nulls_last=True)
    chunks: list[list] = []  # [(host, None = all its GPUs | [gpu, ...])]
    cur: list = []
    size = 0
    for host, n in counts.iter_rows():
        if n > chunk_rows:
            if cur:
                chunks.append(cur)
                cur, size = [], 0
            per_gpu = (ident.filter(pl.col("host").is_null() if host is None else pl.col("host") == host)
                       .group_by("gpu").agg(pl.col("n").sum()).sort("gpu", nulls_last=True))
            gpus: list = []
            gsize = 0
            for gpu, gn in per_gpu.iter_rows():
                if gpus and gsize + gn > chunk_rows:
                    chunks.append([(host, gpus)])
                    gpus, gsize = [], 0
                gpus.append(gpu)
                gsize += gn
            chunks.append([(host, gpus)])
            continue
        if cur and size + n > chunk_rows:
            chunks.append(cur)
            cur, size = [], 0
        cur.append((host, None))
        size += n
    if cur:
        chunks.append(cur)

    def chunk_filter(chunk):
        def eq(col, v):
            return pl.col(col).is_null() if v is None else pl.col(col) == v

        def among(col, values):
            named = [v for v in values if v is not None]
            cond = pl.col(col).is_in(named) if named else pl.lit(False)
            return cond | pl.col(col).is_null() if None in values else cond

        whole = [h for h, g in chunk if g is None]
        conds = [among("host", whole)] if whole else []
        conds += [eq("host", h) & among("gpu", g) for h, g in chunk if g is not None]
        return pl.any_horizontal(conds) if len(conds) > 1 else conds[0]

    def reduce_chunk(chunk):
        cond = chunk_filter(chunk)
        sub = lf if len(chunks) == 1 else lf.filter(cond)
        chunk_ident = ident.filter(cond)
        gid = _gid_expr(seed)
        if (len({h for h, _g in chunk}) == 1 and chunk_ident.get_column("gpu_instance").null_count() == chunk_ident.height
                and chunk_ident.get_column("gpu").null_count() == 0):
            # one host, whole GPUs: the GPU index is already a unique id (no per-row hashing)
            gid = pl.col("gpu").cast(pl.UInt64).alias("_gid")
            chunk_ident = chunk_ident.with_columns(gid)
        wide, ordered = _fold_per_timestamp(sub, th, gid)
        if warmup_s:
            t0 = pl.col("timestamp").min().over("_gid")
            wide = wide.filter(pl.col("timestamp") >= t0 + pl.duration(microseconds=int(round(warmup_s * 1e6))))
        if not wide.height:
            return None
        part = _reduce_wide(wide, window_s=window_s, th=th, ordered=ordered)
        return part.join(chunk_ident.drop("n"), on="_gid", how="left")

    if len(chunks) == 1:
        parts = [reduce_chunk(chunks[0])]
    else:
        # two chunks in flight: one is read and decoded while the other is folded (numpy and
        # the per-window group-by are mostly single-threaded); memory stays ~2 chunks
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=PARALLEL_CHUNKS) as pool:
            parts = list(pool.map(reduce_chunk, chunks))
    parts = [p for p in parts if p is not None]
    if not parts:
        return empty_windows()
    return _finish_columns(pl.concat(parts, how="diagonal_relaxed"))
