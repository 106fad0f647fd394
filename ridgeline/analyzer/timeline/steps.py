"""Steps: per training/inference step, GPU time split into compute / communication / copies / idle.

Where the steps come from (host ranges, from the timeline's HOST_API table):

* Kineto ``user_annotation`` (older traces: ``cpu_op``) named ``ProfilerStep#N`` — what
  ``torch.profiler.profile(schedule=...)`` with ``prof.step()`` records;
* NVTX ranges in an nsys export (``NVTX_EVENTS``) and ``record_function`` annotations named like a
  numbered step (:data:`ridgeline.analyzer.schema.STEP_RE`: ``ProfilerStep#12``, ``step 3``,
  ``iteration_7``, ``train_step:4``). ``Optimizer.step#SGD.step`` is not a step.

A trace without such ranges has no ``steps`` rows (nothing is guessed).

Which GPU work belongs to which step: the host launched it inside the step's range; where step
ranges nest or overlap (a ``ProfilerStep#N`` inside another, an NVTX ``step 3`` inside a
``ProfilerStep#3``), the innermost one, the range that began last among those open at the launch
(:func:`owner_segments`), so a nested step keeps its own work and the outer step the work
launched before and after it: neither vanishes. Each kernel,
copy and memset is joined to its launch call by correlation id (Kineto ``cuda_runtime`` /
``cuda_driver``, nsys ``CUPTI_ACTIVITY_KIND_RUNTIME``: any host call with the activity's correlation id;
the pipeline reads launches, async copies/memsets (:data:`LAUNCH_RE`) and synchronizing calls). Activities with no launch
record are placed by their own GPU start time (``placed_by`` says which rule a step used). The
GPU may run far behind the host (hundreds of ms of queued work), so host ranges are never used as
GPU windows directly when launches are known.

Per device, step *i*'s GPU window runs from the first GPU start of the work launched in step *i*
to the first GPU start of the work launched in step *i+1* (the last step: to the last end of its
own work). Windows tile the device's time without overlap, so the steps' ``step_s`` add up to the
span from the first step's first activity to the last step's last activity. In each window
(everything that runs there counts, whichever step launched it), an exclusive split that sums to
``step_s`` exactly:

* ``compute_s``: union of non-communication kernels;
* ``comm_exposed_s``: communication kernels (:func:`is_communication`) while no compute kernel
  runs; ``comm_s`` is the union of communication kernels, hidden or not;
* ``copy_s``: copies and memsets while no kernel runs;
* ``idle_s``: nothing runs; ``dataloader_s``: the part of ``idle_s`` during which the host was in
  a data-loader range (:data:`DATALOADER_RE`: ``enumerate(DataLoader)#...__next__``,
  ``_next_data``): a data-loader stall, the GPU waiting for the next batch (``num_workers=0``, slow
  augmentation, no ``pin_memory``). The stall before step *i+1*'s first kernel falls in step
  *i*'s window (that is when the GPU waited).

Outlier steps (per device, at least 3 steps besides the last): ``step_s > median + K * max(1.4826 *
MAD, 1% of the median)``, median and MAD over the steps besides the last, ``K = 3``
(:data:`OUTLIER_K`; MAD: median absolute deviation, scaled so it estimates one standard deviation
for normal data; the floor keeps identical steps from flagging a 1 us difference). Median and MAD ignore the outliers themselves, unlike mean and standard
deviation, so one slow step cannot hide itself. The last step is not judged (``outlier`` null): its
window ends at its own last activity and so holds whatever queue of work was still draining.
"""

from __future__ import annotations

from ridgeline.analyzer.robust import MAD_TO_SIGMA
from ridgeline.analyzer.schema import DATALOADER_RE, STEP_RE

#: outlier threshold in robust standard deviations (median + K * 1.4826 * MAD)
OUTLIER_K = 3.0
#: the smallest spread used for the threshold, as a share of the median step
MIN_SPREAD_SHARE = 0.01


STEP_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "step": ("str", "the step range's name, e.g. ProfilerStep#12"),
    "index": ("i64", "0-based order of the step on this device"),
    "start_ns": ("i64", "GPU window start (first GPU start of the step's work), ns on the capture's clock"),
    "end_ns": ("i64", "GPU window end (the next step's first start; the last step: its last end)"),
    "step_s": ("f64", "GPU window length = compute_s + comm_exposed_s + copy_s + idle_s"),
    "host_step_s": ("f64", "length of the host range"),
    "compute_s": ("f64", "union of non-communication kernels in the window"),
    "comm_s": ("f64", "union of communication kernels in the window (overlapped or not)"),
    "comm_exposed_s": ("f64", "communication while no compute kernel runs"),
    "copy_s": ("f64", "copies and memsets while no kernel runs"),
    "idle_s": ("f64", "nothing runs on the device"),
    "dataloader_s": ("f64", "of idle_s: the host was in a data-loader range (a data-loader stall)"),
    "activities": ("i64", "GPU activities the step launched"),
    "placed_by": ("str", "'launch' (correlation ids to launch calls) or 'gpu time' (no launch records)"),
    "outlier": ("bool", "step_s > median + 3 x max(1.4826 x MAD, 1% of median) over the device's steps but the last "
                "(at least 3); null for the last step, whose window ends at its own last activity, not at a next step's start"),
}


def is_communication(names):
    """Boolean Series: which kernel names (a polars Series of full names) are communication, by
    the kernel family table (the same verdict as the per-device figures, ridgeline.analyzer.timeline.comm)."""
    from ridgeline.analyzer.timeline.comm import comm_mask

    return comm_mask(names)


def empty_steps():
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    return pl.DataFrame(schema=polars_schema(STEP_COLUMNS))


def _union(s, e):
    from ridgeline.analyzer.timeline.intervals import merge_intervals

    return merge_intervals(s, e)


def _covered(us, ue, a, b):
    """Covered length of the disjoint sorted union (us, ue) inside each [a, b) (Series)."""
    from ridgeline.analyzer.timeline.intervals import covered_between

    return covered_between(us, ue, a, b)


def _intersect(as_, ae, bs, be):
    """Intersection of two disjoint sorted unions -> disjoint sorted intervals (Int64 Series)."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import empty, unique_sorted

    if not as_.len() or not bs.len():
        return empty(), empty()
    pts = unique_sorted(pl.concat([as_, ae, bs, be]))
    lo, hi = pts.slice(0, pts.len() - 1), pts.slice(1)
    mid = lo + (hi - lo) // 2

    def inside(us, ue):
        i = pl.lit(us).search_sorted(pl.col("mid"), side="right").cast(pl.Int64) - 1
        j = pl.when(i > 0).then(i).otherwise(0)
        return (i >= 0) & (pl.col("mid") < pl.lit(ue).gather(j)) & (pl.col("mid") >= pl.lit(us).gather(j))

    keep = pl.DataFrame({"mid": mid}).select(inside(as_, ae) & inside(bs, be)).to_series() & (hi > lo)
    return _union(lo.filter(keep), hi.filter(keep))


def step_ranges(api):
    """Host step ranges (name, start_ns, end_ns), sorted, duplicates (same name and start) once."""
    import polars as pl

    if api is None or not api.height:
        return None
    r = api.filter(pl.col("kind").is_in(["annotation", "nvtx", "cpu_op"]) & pl.col("name").str.contains(STEP_RE)
                   & (pl.col("end_ns") > pl.col("start_ns")))
    if not r.height:
        return None
    return r.unique(["name", "start_ns"], keep="first").sort("start_ns").select("name", "start_ns", "end_ns")


def owner_segments(starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """The host time split at every range start and end: ``(segment starts, owner)``, the owner of
    segment ``k`` (from ``starts_k`` to the next segment's start) the index of the range that
    began last among those open there (ties: the later index), -1 where none is open. ``starts``
    sorted. A loop over the ranges (steps, not activities)."""
    import heapq

    points = sorted(set(starts) | set(ends))
    by_start: dict[int, list[int]] = {}
    for i, s in enumerate(starts):
        by_start.setdefault(s, []).append(i)
    heap: list[tuple[int, int]] = []  # (-start, -index): the latest-started open range on top
    seg_s, owner = [], []
    for p in points:
        for i in by_start.get(p, ()):
            heapq.heappush(heap, (-starts[i], -i))
        while heap and ends[-heap[0][1]] <= p:  # closed ranges leave (lazily, from the top)
            heapq.heappop(heap)
        top = -heap[0][1] if heap else -1
        if owner and owner[-1] == top:
            continue
        seg_s.append(p)
        owner.append(top)
    return seg_s, owner


def analyze_steps(acts, api, source: str):
    """One file's TIMELINE activities and HOST_API rows -> STEP_COLUMNS frame (see the module docstring)."""
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    ranges = step_ranges(api)
    if ranges is None or acts is None or not acts.height:
        return empty_steps()
    r_s = ranges.get_column("start_ns")
    r_e = ranges.get_column("end_ns")
    r_names = ranges.get_column("name").to_list()
    launches = api.filter(pl.col("kind").is_in(["runtime", "driver"]) & pl.col("correlation_id").is_not_null()
                          ).group_by("correlation_id").agg(
        pl.col("start_ns").min().alias("launch_ns"))
    by_launch = launches.height > 0
    loader = api.filter(pl.col("kind").is_in(["annotation", "nvtx", "cpu_op"]) & pl.col("name").str.contains(DATALOADER_RE))
    ls, le = _union(loader.get_column("start_ns"), loader.get_column("end_ns"))
    a = acts.select("device", "kind", "name", "start_ns", "end_ns", "correlation_id")
    if by_launch:
        a = a.join(launches, on="correlation_id", how="left")
        # copies from a blocking call (cudaMemcpy) have no launch: placed by their own start
        a = a.with_columns(pl.coalesce("launch_ns", "start_ns").alias("launch_ns"))
    else:
        a = a.with_columns(pl.col("start_ns").alias("launch_ns"))
    rows = []
    for (device,), part in a.group_by(["device"], maintain_order=True):
        rows += _device_steps(part, source, device, r_s, r_e, r_names, ls, le, "launch" if by_launch else "gpu time")
    if not rows:
        return empty_steps()
    out = pl.DataFrame(rows, schema={c: t for c, t in polars_schema(STEP_COLUMNS).items() if c != "outlier"})
    return flag_outliers(out)


def _device_steps(part, source, device, r_s, r_e, r_names, ls, le, placed_by):
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import full, maximum

    # the innermost step range open at each launch (nested or overlapping ranges: the one begun last)
    seg_s, seg_owner = owner_segments(r_s.to_list(), r_e.to_list())
    seg = pl.lit(pl.Series(seg_s, dtype=pl.Int64)).search_sorted(pl.col("launch_ns"), side="right").cast(pl.Int64) - 1
    owner = pl.lit(pl.Series(seg_owner, dtype=pl.Int64)).gather(pl.when(seg > 0).then(seg).otherwise(0))
    cols = part.select(pl.when(seg >= 0).then(owner).otherwise(-1).alias("step_of"),
                       (pl.col("kind") == "kernel").fill_null(False).alias("is_kernel"))
    step_of, is_kernel = cols.get_column("step_of"), cols.get_column("is_kernel")
    s = part.get_column("start_ns")
    e = part.get_column("end_ns")
    comm = is_communication(part.get_column("name")) & is_kernel
    compute = is_kernel & ~comm
    placed = step_of >= 0
    if not placed.any():
        return []
    # per step launched here: its first GPU start, last GPU end, activity count; steps in order of
    # their first start (ties: the earlier step first)
    per = (pl.DataFrame({"sid": step_of.filter(placed), "s": s.filter(placed), "e": e.filter(placed)})
           .group_by("sid").agg(pl.col("s").min().alias("first"), pl.col("e").max().alias("last"),
                                pl.len().cast(pl.Int64).alias("n"))
           .sort("first", "sid"))
    present, w0, counts = per.get_column("sid"), per.get_column("first"), per.get_column("n")
    last = per.get_column("last")
    w1 = maximum(pl.concat([w0.slice(1), last.slice(last.len() - 1)]), w0)
    ks, ke = _union(s.filter(compute), e.filter(compute))
    cms, cme = _union(s.filter(comm), e.filter(comm))
    kall_s, kall_e = _union(s.filter(is_kernel), e.filter(is_kernel))
    bs, be = _union(s, e)
    win = w1 - w0
    compute_t = _covered(ks, ke, w0, w1)
    comm_t = _covered(cms, cme, w0, w1)
    kernel_t = _covered(kall_s, kall_e, w0, w1)
    busy_t = _covered(bs, be, w0, w1)
    idle_t = win - busy_t
    # idle intervals = the holes of the busy union (whole device span), intersected with data-loader ranges
    if ls.len() and bs.len():
        holes_s = pl.concat([pl.Series([w0.min()], dtype=pl.Int64), be])
        holes_e = pl.concat([bs, pl.Series([w1.max()], dtype=pl.Int64)])
        keep = holes_e > holes_s
        is_, ie_ = _intersect(holes_s.filter(keep), holes_e.filter(keep), ls, le)
        loader_t = _covered(is_, ie_, w0, w1)
    else:
        loader_t = full(0, win.len())
    rows = []
    r_start, r_end = r_s.to_list(), r_e.to_list()
    cols = zip(present.to_list(), w0.to_list(), w1.to_list(), win.to_list(), compute_t.to_list(), comm_t.to_list(),
               kernel_t.to_list(), busy_t.to_list(), idle_t.to_list(), loader_t.to_list(), counts.to_list())
    for j, (i, a, b, length, comp, com, kern, busy, idle, loader, count) in enumerate(cols):
        rows.append({
            "source": source, "device": device, "step": r_names[i], "index": j,
            "start_ns": a, "end_ns": b, "step_s": length / 1e9,
            "host_step_s": (r_end[i] - r_start[i]) / 1e9,
            "compute_s": comp / 1e9, "comm_s": com / 1e9,
            "comm_exposed_s": (kern - comp) / 1e9,
            "copy_s": (busy - kern) / 1e9, "idle_s": idle / 1e9,
            "dataloader_s": loader / 1e9, "activities": count, "placed_by": placed_by,
        })
    return rows


def flag_outliers(steps, k: float = OUTLIER_K):
    """Adds ``outlier`` per (source, device): step_s above median + k * max(1.4826 MAD, 1% median)."""
    import polars as pl

    last = pl.col("index") == pl.col("index").max().over("source", "device")
    judged = pl.when(~last).then(pl.col("step_s"))  # the last step's window is not comparable (docstring)
    med = judged.median().over("source", "device")
    mad = (judged - med).abs().median().over("source", "device")
    spread = pl.max_horizontal(mad * MAD_TO_SIGMA, med * MIN_SPREAD_SHARE)
    n = judged.count().over("source", "device")
    flag = (n >= 3) & (pl.col("step_s") > med + k * spread)
    return steps.with_columns(pl.when(last).then(None).otherwise(flag).alias("outlier"))
