"""TIMELINE tables -> busy/idle per device, the idle split, launch-bound figures, kernel shares.

Tables in, tables out (polars; interval arithmetic on sorted polars Series, :mod:`ridgeline.analyzer.timeline.intervals`,
no per-row Python).
Per device (``source`` x ``device``), with every GPU activity of the capture:

* ``capture_s``: last activity end - first activity start on that device.
* ``kernel_busy_s``: length of the union of kernel intervals (overlapping streams counted once);
  ``busy_s``: the same over kernels, copies and memsets together; ``idle_s = capture_s - busy_s``.
* Idle time is the sum of the gaps between consecutive busy intervals (the union's holes), split
  by cause from the launch record of the work that ends each gap
  (:mod:`ridgeline.analyzer.timeline.idle_causes`, docs/timeline.md):

  - ``idle_launch_s``: gaps no longer than ``launch_gap_s`` (default 10 us), and the first
    ``launch_gap_s`` after a late launch call: launch overhead;
  - ``idle_sync_s``: before the next work's launch call, the host inside a synchronizing call
    (:data:`SYNC_CALLS`: device/stream/event synchronize, blocking copies; CUDA and HIP names);
  - ``idle_host_s``: the rest of the time before the launch call (the host was late: CPU-bound);
    ``idle_host_cpu`` names the CPU work of that time where the trace records it;
  - ``idle_queued_s``: after the launch call (the work waited on another stream, an event or a
    collective);
  - ``idle_other_s``: long gaps whose next work has no launch record (unknown).

  The five sum to ``idle_s`` exactly. Launch delay and queue depth: per device here, per stream
  in ``streams``.

  Host calls come from the same file (nsys ``CUPTI_ACTIVITY_KIND_RUNTIME``, Kineto
  ``cuda_runtime``/``cuda_driver`` events, HIP names on ROCm); the per-device ``host_api`` column
  says where they came from, null for files that record none (nsys stats CSVs, legacy autograd
  traces, Kineto traces without runtime events): those put every long gap into ``idle_other_s``
  and every view shows the sync share as n/a. The legend, RL401 and RL403 all read that one flag.
* ``framework``: ``pytorch`` for Kineto traces and captures with PyTorch's own kernels, else null:
  remedies name ``torch.compile`` only for PyTorch programs.
* ``vendor``: ``nvidia``/``amd``/null from the reader (ROCm traces: ``amd``); rules word their
  remedies for it and the roofline join is skipped for non-NVIDIA timelines (ncu profiles are
  NVIDIA-only, so a name match across vendors would be a coincidence).
* Launch-bound figures: kernels shorter than ``short_kernel_s`` (default 10 us), their median
  duration and the median gap before each of them (start - the latest end of the kernels
  before it on the device, clipped at 0).
* Copies: time per direction (HtoD, DtoH, DtoD/PtoP), ``copy_only_s`` (copies running while no
  kernel or memset runs: the SMs idle with the copy engines busy), ``sync_api_s`` (union of
  synchronizing host calls within the device's capture).

Kernel shares (``kernel_shares``): per short name, launches and total time on the timeline, and
``wall_share`` = total time / the sum of capture_s over devices (the share of the real run's
wall time, not of the profiled time).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ridgeline.analyzer.schema import SYNC_CALLS, SYNC_RE  # noqa: E402,F401 - re-exported

DEFAULT_OPTIONS = {
    "launch_gap_s": 10e-6,
    "short_kernel_s": 10e-6,
    "plot_bins": 300,
}

from ridgeline.analyzer.schema import KERNEL_SHARE_COLUMNS, TIMELINE_DEVICE_COLUMNS  # noqa: E402,F401
from ridgeline.analyzer.timeline.intervals import coverage, merge_intervals  # noqa: E402,F401 - re-exported


@dataclasses.dataclass
class TimelineAnalysis:
    """What :func:`analyze_timeline` returns (kept on AnalysisResult.timeline)."""

    devices: Any  # TIMELINE_DEVICE_COLUMNS frame
    kernel_shares: Any  # KERNEL_SHARE_COLUMNS frame
    bins: Any  # plot frame: source, device, t0_s, t1_s, kernel_ratio, copy_ratio, busy_ratio
    streams: Any = None  # STREAM_COLUMNS frame: launch delay and queue depth per stream (idle_causes)
    totals: Any = None  # TIMELINE_TOTALS frame (nsys stats summaries) or None
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    inputs: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    join: Any = None  # per profiled kernel name: timeline share joined with the roofline (join_roofline)
    unmatched_profile: list[str] = dataclasses.field(default_factory=list)
    unmatched_timeline: list[str] = dataclasses.field(default_factory=list)
    ambiguous: list[str] = dataclasses.field(default_factory=list)  # profiled names with several candidates
    profiled_kernels: int = 0  # distinct profiled kernel names the join looked at
    # kernel names (full, the unit of the kernel tables) on one side only / ambiguous: the counts every
    # view prints; the lists above are their short names, deduplicated, so fewer
    unmatched_counts: dict[str, int] = dataclasses.field(default_factory=dict)
    # the profile's GPU(s) and the timeline's where they differ ("" when they agree or one is unnamed)
    gpu_mismatch: str = ""
    totals_labels: dict[str, str] = dataclasses.field(default_factory=dict)  # totals kernel name -> display label
    join_notes: list[str] = dataclasses.field(default_factory=list)
    steps: Any = None  # STEP_COLUMNS frame (ridgeline.analyzer.timeline.steps)
    fusion: Any = None  # FUSION_COLUMNS frame (ridgeline.analyzer.timeline.fusion)
    ranges: Any = None  # RANGE_COLUMNS frame (ridgeline.analyzer.timeline.ranges)
    comm_events: Any = None  # COMM_EVENT_COLUMNS frame: communication kernels (ridgeline.analyzer.timeline.collectives)
    collectives: Any = None  # COLLECTIVE_COLUMNS frame: collectives matched across ranks
    rank_waits: Any = None  # RANK_WAIT_COLUMNS frame: per rank, waits in collectives and late arrivals
    op_groups: Any = None  # PyTorch op groups on the roofline (ridgeline.analyzer.ops.groups), None without CPU ops

    @property
    def capture_s(self) -> float:
        return float(self.devices.get_column("capture_s").sum()) if self.devices is not None and self.devices.height else 0.0


# --------------------------------------------------------------------------------------
# analysis
# --------------------------------------------------------------------------------------
def sync_filter():
    """Polars predicate: HOST_API rows that are synchronizing runtime/driver calls."""
    import polars as pl

    return pl.col("kind").is_in(["runtime", "driver"]) & pl.col("name").str.contains(SYNC_RE)


def _sync_intervals(api):
    from ridgeline.analyzer.timeline.intervals import empty

    if api is None or not api.height:
        return empty(), empty()
    sync = api.filter(sync_filter())
    return merge_intervals(sync.get_column("start_ns"), sync.get_column("end_ns"))


def _device_row(acts, source, device, device_name, sync_s, sync_e, opts, host_calls=0, host_api=None, vendor=None,
                framework=None, context=None):
    import polars as pl

    from ridgeline.analyzer.timeline.comm import device_figures
    from ridgeline.analyzer.timeline.intervals import median, union_len

    launch_gap_ns = opts["launch_gap_s"] * 1e9
    short_ns = opts["short_kernel_s"] * 1e9
    s_all = acts.get_column("start_ns")
    e_all = acts.get_column("end_ns")
    masks = acts.select((pl.col("kind") == k).fill_null(False).alias(k) for k in ("kernel", "memcpy", "memset"))
    is_k, is_c, is_m = masks.get_column("kernel"), masks.get_column("memcpy"), masks.get_column("memset")
    t0, t1 = int(s_all.min()), int(e_all.max())
    bs, be = merge_intervals(s_all, e_all)
    ks, ke = merge_intervals(s_all.filter(is_k), e_all.filter(is_k))
    cs, ce = merge_intervals(s_all.filter(is_c), e_all.filter(is_c))
    ms_, me_ = merge_intervals(s_all.filter(is_m), e_all.filter(is_m))
    kms, kme = merge_intervals(s_all.filter(is_k | is_m), e_all.filter(is_k | is_m))
    busy = union_len(bs, be)
    gap_len = bs.slice(1) - be.slice(0, max(be.len() - 1, 0))
    launch = gap_len <= launch_gap_ns
    idle = (t1 - t0) - busy
    from ridgeline.analyzer.timeline.idle_causes import device_causes

    causes = device_causes(acts, bs, be, sync_s, sync_e, launch_gap_ns, context)  # idle_*_s by cause, launch delay, queue
    ends = coverage(sync_s, sync_e, [t0, t1])
    sync_api = int(ends[1] - ends[0])
    # kernels: durations and the gap before each one (device order; the first kernel has none: -1)
    k = acts.filter(pl.col("kind") == "kernel").sort("start_ns").select(
        (pl.col("end_ns") - pl.col("start_ns")).alias("d"),
        (pl.col("start_ns") - pl.col("end_ns").cum_max().shift(1)).clip(0).fill_null(-1).alias("gap"))
    kd, gap_before = k.get_column("d"), k.get_column("gap")
    short = kd < short_ns
    short_gaps = gap_before.filter(short & (gap_before >= 0))
    short_kd = kd.filter(short)
    copies = acts.filter(pl.col("kind") == "memcpy").with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("d"))

    def dir_s(kinds):
        return float(copies.filter(pl.col("copy_kind").is_in(kinds)).get_column("d").sum()) / 1e9 if copies.height else 0.0

    return {
        "source": source,
        "device": device,
        "device_name": device_name,
        "start_ns": t0,
        "end_ns": t1,
        "capture_s": (t1 - t0) / 1e9,
        "kernels": int(is_k.sum()),
        "memcpys": int(is_c.sum()),
        "memsets": int(is_m.sum()),
        "kernel_busy_s": union_len(ks, ke) / 1e9,
        "busy_s": busy / 1e9,
        "idle_s": idle / 1e9,
        **causes,
        "gaps": int(gap_len.len()),
        "launch_gaps": int(launch.sum()),
        "memcpy_busy_s": union_len(cs, ce) / 1e9,
        "memset_busy_s": union_len(ms_, me_) / 1e9,
        "copy_only_s": (busy - union_len(kms, kme)) / 1e9,
        "htod_s": dir_s(["HtoD"]),
        "dtoh_s": dir_s(["DtoH"]),
        "dtod_s": dir_s(["DtoD", "PtoP"]),
        "copy_bytes": int(copies.get_column("bytes").fill_null(0).sum()) if copies.height else 0,
        "sync_api_s": sync_api / 1e9,
        "host_calls": host_calls,
        "host_api": host_api,
        "vendor": vendor,
        "framework": framework,
        "short_kernels": int(short.sum()),
        "short_kernel_time_s": float(short_kd.sum()) / 1e9 if k.height else 0.0,
        "median_short_kernel_s": median(short_kd) / 1e9 if short_kd.len() else None,
        "median_gap_before_short_s": median(short_gaps) / 1e9 if short_gaps.len() else None,
        "median_kernel_s": median(kd) / 1e9 if k.height else None,
        **device_figures(acts.get_column("name"), s_all, e_all, is_k, merge_intervals, coverage),
    }, (bs, be, ks, ke, cs, ce)


def _bins(source, device, t0, t1, unions, n):
    """Plot bins: ``n`` equal bins from t0 to t1 (edges as ``np.linspace(t0, t1, n + 1)`` rounded
    half to even: float64 ``i * step + t0``, the last edge t1) and the busy share of each."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import coverages, full, maximum

    bs, be, ks, ke, cs, ce = unions
    n = max(1, min(n, int((t1 - t0) // 1000) or 1))  # no bins shorter than 1 us
    step = (float(t1) - float(t0)) / n
    edges = pl.select(pl.concat([(pl.int_range(0, n, dtype=pl.Int64).cast(pl.Float64) * step + float(t0)).round(0),
                                 pl.lit(float(t1), dtype=pl.Float64)]).cast(pl.Int64)).to_series()
    lo, hi = edges.slice(0, n), edges.slice(1)
    width = maximum(hi - lo, 1)
    giga = full(1e9, n, pl.Float64)  # a Series: polars divides by a scalar as x * (1 / 1e9), numpy does not

    kernel, copy, busy = ((c.slice(1) - c.slice(0, n)) / width for c in coverages([(ks, ke), (cs, ce), (bs, be)], edges))
    return {
        "source": [source] * n,
        "device": [device] * n,
        "t0_s": (lo - t0) / giga,
        "t1_s": (hi - t0) / giga,
        "kernel_ratio": kernel,
        "copy_ratio": copy,
        "busy_ratio": busy,
    }


def analyze_one(tl, **options) -> TimelineAnalysis:
    """One file's TimelineTables -> TimelineAnalysis (see the module docstring)."""
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    opts = {**DEFAULT_OPTIONS, **{k: v for k, v in options.items() if v is not None}}
    unknown = set(opts) - set(DEFAULT_OPTIONS)
    if unknown:
        from ridgeline.errors import UsageError

        raise UsageError(f"unknown timeline option(s) {', '.join(sorted(unknown))}; known: {', '.join(DEFAULT_OPTIONS)}")
    from ridgeline.analyzer.timeline import idle_causes

    acts = tl.activities
    rows, bins, stream_rows = [], [], []
    if acts is not None and acts.height:
        sync_s, sync_e = _sync_intervals(tl.api)
        context = idle_causes.context_events(tl.api)
        for (device,), part in acts.group_by(["device"], maintain_order=True):
            name = part.get_column("device_name").drop_nulls()
            row, unions = _device_row(part, tl.source, device, name[0] if name.len() else tl.devices.get(device),
                                      sync_s, sync_e, opts, tl.host_calls_total, tl.host_api, tl.vendor,
                                      getattr(tl, "framework", None), context)
            rank = getattr(tl, "rank", None)
            row.update(rank=rank, rank_from=getattr(tl, "rank_from", None) if rank is not None else None,
                       world_size=getattr(tl, "world_size", None))
            rows.append(row)
            stream_rows += idle_causes.stream_rows(part, tl.source, device)
            bins.append(_bins(tl.source, device, row["start_ns"], row["end_ns"], unions, int(opts["plot_bins"])))
    devices = pl.DataFrame(rows, schema=polars_schema(TIMELINE_DEVICE_COLUMNS)) if rows else \
        pl.DataFrame(schema=polars_schema(TIMELINE_DEVICE_COLUMNS))
    if rows:
        devices = devices.sort("source", "device")
    bin_schema = {"source": pl.String, "device": pl.Int64, "t0_s": pl.Float64, "t1_s": pl.Float64,
                  "kernel_ratio": pl.Float64, "copy_ratio": pl.Float64, "busy_ratio": pl.Float64}
    bin_df = pl.concat([pl.DataFrame(b, schema=bin_schema) for b in bins]) if bins else pl.DataFrame(schema=bin_schema)
    shares = _kernel_durations(acts)
    from ridgeline.analyzer.timeline.fusion import fusion_candidates
    from ridgeline.analyzer.timeline.ranges import analyze_ranges
    from ridgeline.analyzer.timeline.steps import analyze_steps
    from ridgeline.analyzer.timeline.collectives import comm_events

    from ridgeline.analyzer.kernels.identify import identification_notes
    from ridgeline.analyzer.ops.groups import trace_op_groups

    # a device named generically ("AMD Radeon Graphics") is identified from its recorded properties
    notes = identification_notes(tl.devices, getattr(tl, "device_properties", {}) or {}, source=tl.source,
                                 devices=[r["device"] for r in rows]) if tl.devices else []
    return TimelineAnalysis(devices=devices, kernel_shares=shares, bins=bin_df, totals=tl.totals, options=opts,
                            inputs=[tl.source], streams=idle_causes.streams_frame(stream_rows), notes=notes,
                            steps=analyze_steps(acts, tl.api, tl.source),
                            fusion=fusion_candidates(acts, tl.api, tl.source), ranges=analyze_ranges(acts, tl.api, tl.source),
                            comm_events=comm_events(acts, tl.source),
                            op_groups=trace_op_groups(tl))


def _kernel_durations(acts):
    """name, short_name, launches, total_s, median_s per full kernel name (distinct names are
    distinct kernels: two instantiations of one template are two rows, docs/names.md)."""
    import polars as pl

    schema = {"name": pl.String, "short_name": pl.String, "launches": pl.Int64, "total_s": pl.Float64,
              "median_s": pl.Float64}
    if acts is None or not acts.height:
        return pl.DataFrame(schema=schema)
    return (
        acts.filter(pl.col("kind") == "kernel")
        .with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("d"))
        # whole ns summed (exact, the same every run: a float sum's last bits follow the threads' split)
        .group_by("name", maintain_order=True)
        .agg(pl.col("short_name").first(), pl.len().cast(pl.Int64).alias("launches"), (pl.col("d").sum() / 1e9).alias("total_s"),
             (pl.col("d").median() / 1e9).alias("median_s"))
        .select([pl.col(c).cast(t) for c, t in schema.items()])
    )


def combine(parts: list[TimelineAnalysis]) -> TimelineAnalysis:
    """Several files' analyses -> one (devices stacked; kernel shares summed by name)."""
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    devices = pl.concat([p.devices for p in parts], how="vertical") if parts else pl.DataFrame(
        schema=polars_schema(TIMELINE_DEVICE_COLUMNS))
    bins = pl.concat([p.bins for p in parts], how="vertical") if parts else None
    streams = pl.concat([p.streams for p in parts if p.streams is not None], how="vertical") \
        if any(p.streams is not None for p in parts) else None
    totals = [p.totals for p in parts if p.totals is not None]
    k = pl.concat([p.kernel_shares for p in parts], how="vertical") if parts else None
    capture = float(devices.get_column("capture_s").sum()) if devices.height else 0.0
    if k is not None and k.height:
        k = k.group_by("name", maintain_order=True).agg(  # (in order: the float sums below are the same every run)
            pl.col("short_name").first(),
            pl.col("launches").sum(),
            pl.col("total_s").sum(),
            # median of the per-file medians weighted by nothing: exact with one file
            pl.col("median_s").median(),
        )
        total = float(k.get_column("total_s").sum())
        k = k.with_columns(
            (pl.col("total_s") / capture if capture else pl.lit(None, dtype=pl.Float64)).alias("wall_share"),
            (pl.col("total_s") / total if total else pl.lit(None, dtype=pl.Float64)).alias("busy_share"),
        ).sort(["total_s", "name"], descending=[True, False], nulls_last=True)
        from ridgeline.analyzer.kernels.families import family_columns

        k = family_columns(k, name_column="name", fallback_column="short_name").with_columns(
            pl.coalesce(pl.col("kernel_label"), pl.col("short_name"), pl.lit("<unnamed kernel>")).alias("kernel_label"))
        k = k.select([pl.col(c).cast(t) for c, t in polars_schema(KERNEL_SHARE_COLUMNS).items()])
    else:
        k = pl.DataFrame(schema=polars_schema(KERNEL_SHARE_COLUMNS))
    tot = pl.concat(totals, how="vertical") if totals else None
    from ridgeline.analyzer.timeline.ranks import fill_ranks

    rank_notes: list[str] = []
    ranked = fill_ranks(devices, rank_notes)
    out = TimelineAnalysis(
        devices=ranked,
        # each file's notes (a device identified from its properties), then the job's rank notes
        notes=list(dict.fromkeys([n for p in parts for n in p.notes] + rank_notes)),
        totals_labels=totals_labels(tot),
        kernel_shares=k,
        bins=bins,
        streams=streams,
        totals=tot,
        options=parts[0].options if parts else dict(DEFAULT_OPTIONS),
        inputs=[i for p in parts for i in p.inputs],
    )
    from ridgeline.analyzer.timeline.fusion import empty_fusion
    from ridgeline.analyzer.timeline.steps import empty_steps

    out.steps = pl.concat([p.steps if p.steps is not None else empty_steps() for p in parts]) if parts else empty_steps()
    out.fusion = pl.concat([p.fusion if p.fusion is not None else empty_fusion() for p in parts]) if parts else empty_fusion()
    from ridgeline.analyzer.timeline.ranges import empty_ranges

    out.ranges = pl.concat([p.ranges if p.ranges is not None else empty_ranges() for p in parts]) if parts else empty_ranges()
    from ridgeline.analyzer.timeline import collectives as C

    ev = [p.comm_events for p in parts if p.comm_events is not None and p.comm_events.height]
    out.comm_events = pl.concat(ev) if ev else C.empty(C.COMM_EVENT_COLUMNS)
    notes: list[str] = []
    out.collectives = C.match_collectives(out.comm_events, ranked, notes)
    out.rank_waits = C.rank_waits(out.comm_events, ranked, out.collectives)
    out.notes += [n for n in notes if n not in out.notes]
    from ridgeline.analyzer.ops.groups import ORDER as OPS_ORDER, ORDER_KW as OPS_ORDER_KW

    ops = [p.op_groups for p in parts if getattr(p, "op_groups", None) is not None]
    out.op_groups = pl.concat(ops, how="vertical_relaxed").sort(*OPS_ORDER, **OPS_ORDER_KW) \
        if ops else None
    return out


def totals_labels(totals) -> dict[str, str]:
    """Display label per kernel name of the nsys stats totals: the family label, unique per full
    name (two GEMVs whose short names are both ``internal::gemvx::kernel`` read
    ``cuBLAS gemvx <7>`` and ``<6>``: docs/names.md). Renderers show it instead of the short name."""
    import polars as pl

    from ridgeline.analyzer.kernels.families import family_columns

    if totals is None or not totals.height:
        return {}
    names = totals.filter((pl.col("category") == "kernel") & pl.col("name").is_not_null()).select("name").unique()
    if not names.height:
        return {}
    labelled = family_columns(names, name_column="name", fallback_column="name")
    return dict(labelled.select("name", "kernel_label").iter_rows())


def analyze_timeline(tables, **options) -> TimelineAnalysis:
    """TimelineTables (one or several files) -> TimelineAnalysis."""
    return combine([analyze_one(t, **options) for t in tables])


# --------------------------------------------------------------------------------------
# roofline x timeline
# --------------------------------------------------------------------------------------
def join_roofline(analysis: TimelineAnalysis, roofline) -> None:
    """Join the ROOFLINE table and the timeline's kernels by kernel name (in place).

    The tools spell one kernel differently (ncu drops namespaces and casts, keeps return types),
    so names are paired by :func:`ridgeline.names.match_names` over the distinct FULL names of
    each side (docs/names.md): equal up to spelling; else same function and same template
    arguments, namespaces aside; else the same function where one side's name is bare and each
    side has one such kernel. A name with several candidates is ambiguous and reported, never
    joined by guess; two names whose template arguments differ are two kernels.

    ``join``: one row per matched profiled kernel name: kernel_name, short_name (profile's),
    timeline_name, match (exact/key/function), profiled launches and time, timeline launches,
    total_s, wall_share, busy_share. ``unmatched_profile`` / ``unmatched_timeline``: short names
    of the kernels on one side only; ``ambiguous``: profiled short names with several
    candidates. A note says how many of the profile's kernels matched, and which did not.
    """
    import polars as pl

    from ridgeline.names import match_names

    if roofline is None or not roofline.height:
        return
    devs = analysis.devices
    if devs is not None and devs.height and "vendor" in devs.columns and (devs.get_column("vendor") == "amd").any():
        analysis.join_notes.append("roofline x timeline: not joined: the timeline is from an AMD GPU (ROCm), the Nsight "
                                   "Compute profile from an NVIDIA GPU; the same kernel name would be a coincidence")
        return
    cols = roofline.columns
    key = pl.coalesce(pl.col("kernel_name"), pl.col("short_name")) if "kernel_name" in cols else pl.col("short_name")
    prof = roofline.filter(key.is_not_null()).group_by(key.alias("kernel_name")).agg(
        pl.col("short_name").drop_nulls().first().alias("short_name"),
        pl.len().cast(pl.Int64).alias("profiled_launches"),
        pl.col("duration_s").sum().alias("profiled_s"),
    )
    tl = analysis.kernel_shares
    if tl is None or not tl.height:
        totals = analysis.totals
        if totals is not None and totals.height and (totals.get_column("category") == "kernel").any():
            tl = totals.filter((pl.col("category") == "kernel") & pl.col("name").is_not_null()).group_by("name").agg(
                pl.col("short_name").first(), pl.col("count").sum().alias("launches"), pl.col("total_s").sum())
            tl = tl.with_columns((pl.col("total_s") / pl.col("total_s").sum()).alias("busy_share"),
                                 pl.lit(None, dtype=pl.Float64).alias("wall_share"))
        else:
            return
    m = match_names(prof.get_column("kernel_name").to_list(), tl.get_column("name").to_list())
    pairs = pl.DataFrame({"kernel_name": list(m.pairs), "timeline_name": list(m.pairs.values()),
                          "match": [m.how[n] for n in m.pairs]},
                         schema={"kernel_name": pl.String, "timeline_name": pl.String, "match": pl.String})
    tl_cols = tl.select(pl.col("name").alias("timeline_name"), "launches", "total_s", "wall_share", "busy_share")
    analysis.join = (prof.join(pairs, on="kernel_name", how="inner").join(tl_cols, on="timeline_name", how="left")
                     .select("kernel_name", "short_name", "timeline_name", "match", "profiled_launches", "profiled_s",
                             "launches", "total_s", "wall_share", "busy_share")
                     .sort(["total_s", "kernel_name"], descending=[True, False], nulls_last=True))
    p_short = dict(prof.select("kernel_name", "short_name").iter_rows())
    t_short = dict(tl.select("name", "short_name").iter_rows())
    analysis.unmatched_profile = sorted({p_short.get(n) or n for n in m.unmatched_left})
    analysis.unmatched_timeline = sorted({t_short.get(n) or n for n in m.unmatched_right})
    analysis.ambiguous = sorted({p_short.get(n) or n for n in m.ambiguous_left})
    analysis.profiled_kernels = prof.height
    analysis.unmatched_counts = {"profile": len(m.unmatched_left), "timeline": len(m.unmatched_right),
                                 "ambiguous": len(m.ambiguous_left)}
    analysis.gpu_mismatch = gpu_mismatch(roofline, devs)
    missed = sorted({*analysis.unmatched_profile, *analysis.ambiguous})
    c = analysis.unmatched_counts
    analysis.join_notes.append(
        f"roofline x timeline: {len(m.pairs)} of {prof.height} profiled kernel name(s) matched on the timeline by name "
        f"(tools' spellings normalised: docs/names.md); not matched (kernel names): "
        f"{c['profile']} profiled only, {c['ambiguous']} ambiguous (several candidates, "
        f"not joined), {c['timeline']} on the timeline only"
        + (f" (profiled, not matched: {', '.join(missed[:5])}{'...' if len(missed) > 5 else ''})" if missed else "")
    )
    if analysis.gpu_mismatch:
        analysis.join_notes.append(f"roofline x timeline: {analysis.gpu_mismatch}")


def gpu_mismatch(roofline, devices) -> str:
    """A sentence when the profile and the timeline name different GPU models (an ``.ncu-rep`` from an
    RTX 2080 Ti beside an nsys export from an A100): names may still match, but the two describe
    different hardware, so a joined kernel's roofline figures are not its timeline's. ``""`` when
    they agree or either side names no GPU."""
    def names(df) -> set[str]:
        if df is None or "device_name" not in df.columns:
            return set()
        return {str(n).strip() for n in df.get_column("device_name").drop_nulls().unique().to_list() if str(n).strip()}

    def model(name: str) -> str:  # the words that name the part: "NVIDIA GeForce RTX 2080 Ti" -> "geforce rtx 2080 ti"
        return " ".join(w for w in name.lower().replace("-", " ").split() if w not in ("nvidia", "tesla"))

    prof, tl = names(roofline), names(devices)
    if not prof or not tl or {model(n) for n in prof} & {model(n) for n in tl}:
        return ""
    return (f"different GPUs: the profile is from {', '.join(sorted(prof))}, the timeline from {', '.join(sorted(tl))}; "
            "kernels joined by name are not one run, so their roofline figures and timeline shares describe "
            "different hardware")


#: the idle causes past launch and sync, in the words every view's legend uses (idle_causes)
IDLE_CAUSES_LEGEND = ("host = the GPU ran dry before the host launched the next work (CPU-bound); queued = the next "
                      "work was launched and waited on a dependency; other = work with no launch record")


def host_calls_legend(devices) -> str:
    """What the idle split's sync share rests on, from each device row's ``host_api`` flag: the one
    sentence the terminal, Markdown, HTML and plot legends use."""
    rows = [] if devices is None or not devices.height else devices.select("source", "host_api").unique().rows()
    have = sorted({h for _s, h in rows if h})
    lacking = [s for s, h in rows if not h]
    if have and not lacking:
        return f"sync = host in a synchronizing call (host calls: {', '.join(have)})"
    if lacking and not have:
        return "sync n/a: the file records no host API calls, so synchronization is not told apart from other"
    return (f"sync = host in a synchronizing call (host calls from {', '.join(have)}); n/a for files that record "
            "no host API calls")


def wall_shares(analysis: TimelineAnalysis | None) -> dict[str, float]:
    """Profiled kernel name (``kernel_name``, else short name) -> share of wall time (busy share
    where the timeline has no capture); joined names only, empty without a join."""
    if analysis is None or analysis.join is None or not analysis.join.height:
        return {}
    out = {}
    for name, share, busy in analysis.join.select("kernel_name", "wall_share", "busy_share").iter_rows():
        v = share if share is not None else busy
        if v is not None:
            out[name] = float(v)
    return out
