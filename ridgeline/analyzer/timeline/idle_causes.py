"""Why the GPU waited: every nanosecond of a device's idle time in exactly one cause, and the
launch delay and queue depth per stream.

Tables in, numbers out (polars Series, :mod:`ridgeline.analyzer.timeline.intervals`; no per-row Python). Idle time is the union's
holes on a device (:mod:`ridgeline.analyzer.timeline.busy`): each gap runs from the end of the busy
interval before it (``a``) to the start of the work that ends it (``b``). That work's launch
record decides the cause: ``L``, the start of the host runtime/driver call that launched it
(TIMELINE ``launch_ns``, joined by correlation id: Kineto ``cuda_runtime``/``cuda_driver``
events, nsys ``CUPTI_ACTIVITY_KIND_RUNTIME``; where several activities start at ``b``, the
earliest launch among them). Then, for a gap of length ``b - a``:

* ``idle_launch_s`` — a gap no longer than ``launch_gap_s`` (default 10 us) is launch
  overhead, whole; in a longer gap launched late (``a < L``), the first ``launch_gap_s`` after
  the launch call too (the call's own latency to the GPU);
* ``idle_sync_s`` — the part of ``[a, min(L, b)]`` (the GPU idle, the next work not launched
  yet) during which the host sat in a synchronizing call (:data:`ridgeline.analyzer.schema.SYNC_CALLS`,
  CUDA and HIP names): the host waited on the GPU, so it could not launch;
* ``idle_host_s`` — the rest of ``[a, min(L, b)]``: the GPU had run dry and the host had not
  launched the next work yet: the CPU is the bottleneck (Python, data loading, the framework);
* ``idle_queued_s`` — after the launch: the whole gap when the work was launched before the GPU
  went idle (``L <= a``), else what remains of ``[L, b]`` past the launch overhead: the work sat
  in the queue waiting on something else (another stream, an event, a collective);
* ``idle_other_s`` — long gaps whose next work has no launch record (formats without host
  calls: nsys stats CSVs, legacy traces; work launched before a capture window): as before,
  the sync share is told apart where the file has synchronizing calls, the rest is unknown.

Overlaps are resolved by that order in time: before ``L`` the host is to blame (sync where it
was blocked, else host-late), after ``L`` the queue is; a synchronizing call running while the
work is already queued does not delay it and is not counted. The five parts sum to ``idle_s``
exactly (integer nanoseconds).

Launch delay: ``start_ns - launch_ns`` of every activity with a launch record (median and 90th
percentile). Queue depth: when an activity is launched, how many activities on the same
device (per stream: on the same stream) were launched and had not started yet (median and max).
"""

from __future__ import annotations


# the causes' names as every view prints them (the table's columns, RL401's split and remedy,
# the legend): one word each, never "other" in one view and "unknown" in another
IDLE_CAUSE_WORDS = {"launch": "launch", "sync": "sync", "host": "host", "queued": "queued", "other": "other"}


def gap_causes(a, b, launch, sync_s, sync_e, launch_gap_ns: float) -> dict[str, int]:
    """Idle ns per cause over gaps ``[a[i], b[i]]`` (int64 Series), ``launch[i]`` the next work's launch
    call start (int64, or a negative sentinel ``NO_LAUNCH`` where unknown), sync calls as disjoint
    sorted intervals. Returns ``{"launch", "sync", "host", "queued", "other"}`` in ns."""
    from ridgeline.analyzer.timeline.intervals import covered_between, maximum, minimum, series, where

    a, b, launch = series(a), series(b), series(launch)
    sync_s, sync_e = series(sync_s), series(sync_e)
    length = b - a
    short = length <= launch_gap_ns
    known = launch != NO_LAUNCH
    lc = where(known, minimum(maximum(launch, a), b), b)  # end of the host window (unknown: the whole gap)
    sync = covered_between(sync_s, sync_e, a, lc)
    host_window = lc - a
    tail = b - lc
    late = known & (launch > a)
    launch_tail = where(late, minimum(tail, int(launch_gap_ns)), 0)
    long_ = ~short
    return {
        "launch": int(length.filter(short).sum() + launch_tail.filter(long_).sum()),
        "sync": int(sync.filter(long_).sum()),
        "host": int((host_window - sync).filter(long_ & known).sum()),
        "queued": int((tail - launch_tail).filter(long_ & known).sum()),
        "other": int((host_window - sync).filter(long_ & ~known).sum()),
    }


NO_LAUNCH = -(1 << 63)  # int64 min: no launch record (real times are within +-7.3e18 ns, the year 2200)


def next_launch(acts, gap_end):
    """For each gap end (Int64 Series), the earliest ``launch_ns`` among the device's activities
    starting exactly there (:data:`NO_LAUNCH` where none has a launch record)."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import empty

    if not gap_end.len():
        return empty()
    firsts = (acts.group_by("start_ns").agg(pl.col("launch_ns").min()).sort("start_ns")
              .with_columns(pl.col("launch_ns").fill_null(NO_LAUNCH)))
    starts = pl.lit(firsts.get_column("start_ns"))
    i = starts.search_sorted(pl.col("b"), side="left").cast(pl.Int64)
    i = pl.when(i < firsts.height).then(i).otherwise(firsts.height - 1)
    hit = starts.gather(i) == pl.col("b")
    return pl.DataFrame({"b": gap_end}).select(
        pl.when(hit).then(pl.lit(firsts.get_column("launch_ns")).gather(i)).otherwise(NO_LAUNCH)).to_series()


def queue_depths(launch, start):
    """At each launch, how many of these activities were launched (at or before it) and had not
    started yet; an activity that starts before its launch call (clock skew) is never queued."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import maximum, series

    launch = series(launch)
    start = maximum(series(start), launch)
    return pl.DataFrame({"launch": launch}).select(
        pl.lit(launch.sort()).search_sorted(pl.col("launch"), side="right").cast(pl.Int64)
        - pl.lit(start.sort()).search_sorted(pl.col("launch"), side="right").cast(pl.Int64)).to_series()


def host_late_windows(a, b, launch, launch_gap_ns: float):
    """``(starts, ends)``: ``[a, L]`` of the longer gaps whose next work was launched late (``a < L``),
    the time the GPU had run dry before the launch call (host late and sync), disjoint and sorted."""
    from ridgeline.analyzer.timeline.intervals import minimum, series

    a, b, launch = series(a), series(b), series(launch)
    m = ((b - a) > launch_gap_ns) & (launch != NO_LAUNCH) & (launch > a)
    return a.filter(m), minimum(launch.filter(m), b.filter(m))


#: HOST_API kinds that say what the CPU was doing (Kineto cpu_op, user_annotation, python_function)
CONTEXT_KINDS = ("cpu_op", "annotation", "python")
#: annotations that span a whole step say nothing about the gap: left out of the naming
STEP_RE = r"^ProfilerStep#[0-9]+$"


def context_events(api):
    """The HOST_API rows that name CPU work (:data:`CONTEXT_KINDS`, step annotations left out), or None."""
    import polars as pl

    if api is None or not api.height:
        return None
    ctx = api.filter(pl.col("kind").is_in(CONTEXT_KINDS) & ~pl.col("name").fill_null("").str.contains(STEP_RE))
    return ctx.select("kind", "name", "thread_id", "start_ns", "end_ns") if ctx.height else None


def host_late_activity(ctx, ws, we, top: int = 3) -> str | None:
    """The CPU work covering most of the host-late windows: ``"aten::copy_ (cpu_op) 62%, ..."``, the
    ``top`` names by their *self* time in the windows (an event's overlap minus its children's, so an
    outer frame such as ``_call_impl`` or a step annotation does not win by containing everything),
    each as a share of the windows' total; None without context events or windows.

    Events nest per thread (Kineto writes properly nested ``X`` events); the stack pass that finds
    each event's parent runs in Python over the events that overlap a window only (a few per late
    launch), never over the whole trace."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import covered_between

    total = int((we - ws).sum()) if ws.len() else 0
    if ctx is None or not total:
        return None
    over = covered_between(ws, we, ctx.get_column("start_ns"), ctx.get_column("end_ns"))
    hit = (ctx.with_columns(over.alias("over")).filter(pl.col("over") > 0)
           .sort(["thread_id", "start_ns", "end_ns"], descending=[False, False, True], nulls_last=True))
    if not hit.height:
        return None
    own = _own_time(hit)
    best = (hit.with_columns(own.alias("own")).group_by("name", "kind").agg(pl.col("own").sum())
            .filter(pl.col("own") > 0).sort(["own", "name"], descending=[True, False]).head(top))
    if not best.height:
        return None
    return ", ".join(f"{n} ({k}) {100 * o / total:.0f}%" for n, k, o in best.select("name", "kind", "own").iter_rows())


def _own_time(hit):
    """Each event's ``over`` less that of the events nested in it (``hit`` sorted by thread, start,
    end descending): a stack of open events per thread; an event ending within the one on top
    (after popping those that ended before it started) gives its time up to it. A Python loop over
    plain lists (iter_rows built a tuple per row through polars: twice the time); pointer jumping
    in polars took longer (a round per level of Python-frame nesting, 40 levels on a vLLM trace)."""
    import polars as pl

    over_l = hit.get_column("over").to_list()
    ends = hit.get_column("end_ns").to_list()
    own = list(over_l)
    stack: list[int] = []
    last_thread = object()
    for i, thread, start, end in zip(range(len(ends)), hit.get_column("thread_id").to_list(),
                                     hit.get_column("start_ns").to_list(), ends):
        if thread != last_thread:
            stack, last_thread = [], thread
        while stack and ends[stack[-1]] <= start:
            stack.pop()
        if stack and ends[stack[-1]] >= end:  # nested in the event on top: not its own time
            own[stack[-1]] -= over_l[i]
        stack.append(i)
    return pl.Series("own", own, dtype=pl.Int64)


def device_causes(acts, busy_s, busy_e, sync_s, sync_e, launch_gap_ns: float, context=None) -> dict:
    """One device's activities (TIMELINE rows with ``launch_ns``) and busy union -> the idle causes
    (``idle_*_s``), what the CPU did before late launches (``context``: :func:`context_events`),
    launch records, launch delay and queue depth (the TIMELINE_DEVICE columns)."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import full

    n = max(busy_s.len() - 1, 0)
    gap_a, gap_b = busy_e.slice(0, n), busy_s.slice(1)
    has = "launch_ns" in acts.columns
    launch = next_launch(acts, gap_b) if has else full(NO_LAUNCH, gap_b.len())
    c = gap_causes(gap_a, gap_b, launch, sync_s, sync_e, launch_gap_ns)
    row = {f"idle_{k}_s": v / 1e9 for k, v in c.items()}
    row["idle_host_cpu"] = host_late_activity(context, *host_late_windows(gap_a, gap_b, launch, launch_gap_ns)) \
        if c["host"] else None
    launched = acts.filter(pl.col("launch_ns").is_not_null()) if has else acts.clear()
    row["launch_records"] = launched.height
    row["launch_delay_median_s"] = row["launch_delay_p90_s"] = None
    row["queue_depth_median"] = row["queue_depth_max"] = None
    if launched.height:
        row.update(_launch_figures(launched))
    return row


def _launch_figures(launched) -> dict:
    """Launch delay (median, p90) and queue depth (median, max) of activities with launch records."""
    from ridgeline.analyzer.timeline.intervals import median, quantile

    delay = launched.get_column("start_ns") - launched.get_column("launch_ns")
    depth = queue_depths(launched.get_column("launch_ns"), launched.get_column("start_ns"))
    return {"launch_delay_median_s": median(delay) / 1e9, "launch_delay_p90_s": quantile(delay, 0.9) / 1e9,
            "queue_depth_median": median(depth), "queue_depth_max": int(depth.max())}


def stream_rows(acts, source, device) -> list[dict]:
    """The STREAM rows of one device (a stream per row; activities without a stream id: stream null)."""
    import polars as pl

    rows = []
    has = "launch_ns" in acts.columns
    for (stream,), part in acts.group_by(["stream"], maintain_order=True):
        launched = part.filter(pl.col("launch_ns").is_not_null()) if has else part.clear()
        row = {"source": source, "device": device, "stream": stream, "activities": part.height,
               "launch_records": launched.height, "launch_delay_median_s": None, "launch_delay_p90_s": None,
               "queue_depth_median": None, "queue_depth_max": None}
        if launched.height:
            row.update(_launch_figures(launched))
        rows.append(row)
    return rows


def streams_frame(rows):
    import polars as pl

    from ridgeline.analyzer.schema import STREAM_COLUMNS, polars_schema

    schema = polars_schema(STREAM_COLUMNS)
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
