"""Collectives matched across ranks: each instance split into transfer and wait, and who held the others back.

What one rank's trace records of a collective
---------------------------------------------
One communication kernel per collective per rank (:func:`comm_events`: the kernels
:mod:`ridgeline.analyzer.timeline.comm` calls communication), its start and end on that rank's
clock. A synchronous collective cannot finish before its last rank arrives: NCCL's kernel spins
until every peer joins, so each rank's kernel time is *waiting* (for the late ranks) plus
*transfer* (moving the bytes once all are there).

Which kernels are one collective instance (column ``matched_by``)
-----------------------------------------------------------------
* ``group+seq``: where the trace records the process group and the collective's sequence
  number (columns ``coll_group``/``coll_seq`` of the activities, when a reader fills them from
  Kineto's ``Process Group Name`` and ``seq`` args): the kernels of one (group, seq) are one
  instance.
* ``order``: otherwise, the n-th kernel of a group on each rank is the n-th instance of that
  group; the group is the recorded process group, else the collective's name (all_reduce,
  all_gather...: nothing else tells the process groups apart). The ranks must agree: a group
  whose count differs between ranks is not matched (a note says which), and an instance whose
  ranks disagree on the collective or on its message size (``coll_bytes``, where recorded) is
  left out and counted.
  Point-to-point kernels (``send_recv``: NCCL SendRecv, which PyTorch's all_to_all runs) pair
  two ranks at a time, so order cannot match them: they are matched only by group and sequence.

Per instance (:data:`COLLECTIVE_COLUMNS`)
-----------------------------------------
``transfer_s`` = the shortest kernel duration across the ranks (the last rank to arrive waits
least; what remains is moving the bytes); each rank's wait = its duration - ``transfer_s``;
``wait_s`` = the longest wait; ``start_skew_s`` / ``end_skew_s`` = latest - earliest start / end
across ranks (ranks' clocks are taken as one: Kineto traces of one job record host clock
microseconds, aligned to the extent the hosts' clocks agree; within one node they are one
clock); ``last_rank`` = the rank that started last (ties: the lowest rank).

Bus bandwidth (NCCL's definition, NVIDIA nccl-tests ``doc/PERFORMANCE.md``): ``algbw = bytes /
transfer_s``, ``busbw = algbw x factor``, the factor for ``n`` ranks: all_reduce ``2(n-1)/n``;
all_gather, reduce_scatter and all_to_all ``(n-1)/n``; broadcast, reduce and send_recv ``1``.
``bytes`` is the collective's size as nccl-tests counts it (all_gather: the gathered output;
reduce_scatter: the input), where the trace records it; null otherwise, and so is the
bandwidth. ``link_peak_bytes_per_s`` is the link's peak where the GPU catalogue knows it (null
today: the catalogue records no NVLink/PCIe/InfiniBand peak), ``busbw_vs_peak`` the ratio.

Per rank (:func:`rank_waits`, :data:`RANK_WAIT_COLUMNS`)
--------------------------------------------------------
``comm_wait_s`` (the sum of its waits), ``arrived_last`` (instances where it was
``last_rank``), ``imposed_wait_s`` (the others' waits summed over the instances it arrived
last at: what its lateness cost them). The *arrival straggler* (:func:`arrival_straggler`) is
the rank that imposed the most wait; verdicts need at least
:data:`ridgeline.analyzer.timeline.ranks.MIN_RANKS` ranks in the instances, as RL411's do.
"""

from __future__ import annotations

import re

COMM_EVENT_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "stream": ("i64", "CUDA stream"),
    "name": ("str", "the collective: all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv"),
    "kernel": ("str", "kernel name as recorded"),
    "start_ns": ("i64", "kernel start, ns on the capture's clock"),
    "end_ns": ("i64", "kernel end"),
    "group": ("str", "process group, where the trace records it"),
    "seq": ("i64", "the collective's sequence number in its group, where the trace records it"),
    "bytes": ("i64", "message size as nccl-tests counts it, where the trace records it"),
    "group_size": ("i64", "ranks in the process group, where the trace records it"),
}

COLLECTIVE_COLUMNS: dict[str, tuple[str, str]] = {
    "group": ("str", "process group as recorded, else the collective's name"),
    "seq": ("i64", "sequence number in the group (matched_by 'order': 0-based order in the group per rank)"),
    "name": ("str", "the collective: all_reduce, all_gather, reduce_scatter, broadcast, reduce, all_to_all, send_recv"),
    "matched_by": ("str", "'group+seq' (recorded by the trace) or 'order' (n-th kernel of that collective per rank)"),
    "ranks": ("i64", "ranks whose kernel of this instance was captured"),
    "group_size": ("i64", "ranks in the group where recorded, else the ranks captured"),
    "bytes": ("i64", "message size as nccl-tests counts it; null when the trace does not record it"),
    "start_ns": ("i64", "earliest start across the ranks"),
    "end_ns": ("i64", "latest end across the ranks"),
    "transfer_s": ("f64", "the shortest kernel duration across the ranks: moving the bytes once all ranks are there"),
    "wait_s": ("f64", "the longest wait: a rank's duration - transfer_s"),
    "start_skew_s": ("f64", "latest start - earliest start across the ranks"),
    "end_skew_s": ("f64", "latest end - earliest end across the ranks"),
    "last_rank": ("i64", "the rank that started last (ties: the lowest)"),
    "algbw_bytes_per_s": ("f64", "bytes / transfer_s; null without bytes"),
    "busbw_bytes_per_s": ("f64", "algbw x NCCL's bus factor for the collective and group size (nccl-tests "
                          "doc/PERFORMANCE.md)"),
    "link_peak_bytes_per_s": ("f64", "the link's peak where the GPU catalogue knows it, else null"),
    "busbw_vs_peak": ("f64", "busbw / link peak; null without either"),
}

RANK_WAIT_COLUMNS: dict[str, tuple[str, str]] = {
    "rank": ("i64", "rank"),
    "collectives": ("i64", "matched collective instances this rank took part in"),
    "comm_s": ("f64", "its kernel time in those instances"),
    "comm_wait_s": ("f64", "its waits summed: kernel time - the instance's transfer_s"),
    "arrived_last": ("i64", "instances where it started last"),
    "imposed_wait_s": ("f64", "the other ranks' waits summed over the instances it arrived last at"),
}

#: kernel names -> the collective (NCCL <= 2.18 ``ncclKernel_AllReduce_...``, 2.19+ ``ncclDevKernel_...``, RCCL)
_NCCL_KERNEL = re.compile(r"nccl(?:Dev)?Kernel_([A-Za-z]+)")
_WORDS = (("alltoall", "all_to_all"), ("allreduce", "all_reduce"), ("allgather", "all_gather"),
          ("reducescatter", "reduce_scatter"), ("broadcast", "broadcast"), ("sendrecv", "send_recv"),
          ("send", "send_recv"), ("recv", "send_recv"), ("reduce", "reduce"))
#: matched only by group and sequence (module docstring)
POINT_TO_POINT = "send_recv"


def collective_of(text: str | None) -> str | None:
    """The collective a kernel name (``ncclDevKernel_AllReduce_Sum_bf16_RING_LL``, a custom
    ``cross_device_reduce_2stage``) or a recorded ``Collective name`` (``_allgather_base``,
    ``all_gather_into_tensor``, ``allreduce``) is; None when neither tells."""
    if not text:
        return None
    m = _NCCL_KERNEL.search(text)
    word = re.sub(r"[^a-z]", "", (m.group(1) if m else text).lower())
    for key, name in _WORDS:
        if key in word and (key != "reduce" or m or word == "reduce"):  # a custom kernel's "reduce": all-reduce
            return name
    if "reduce" in (text or "").lower():  # custom all-reduce kernels (cross_device_reduce_*, multimem...)
        return "all_reduce"
    return None


def bus_factor(name: str | None, n: int | None) -> float | None:
    """NCCL's bus bandwidth factor for ``n`` ranks (nccl-tests doc/PERFORMANCE.md), None when unknown."""
    if not n or n < 1 or name is None:
        return None
    if name == "all_reduce":
        return 2 * (n - 1) / n
    if name in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    if name in ("broadcast", "reduce", "send_recv"):
        return 1.0
    return None


def empty(columns):
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    return pl.DataFrame(schema=polars_schema(columns))


def comm_events(acts, source: str):
    """One file's communication kernels (COMM_EVENT_COLUMNS), kept compact: the matching needs
    these rows only. ``coll_group``/``coll_seq``/``coll_bytes``/``coll_group_size`` are read where
    the activities carry them."""
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema
    from ridgeline.analyzer.timeline.comm import comm_mask

    if acts is None or not acts.height:
        return empty(COMM_EVENT_COLUMNS)
    k = acts.filter(pl.col("kind") == "kernel")
    k = k.filter(comm_mask(k.get_column("name")))
    if not k.height:
        return empty(COMM_EVENT_COLUMNS)

    def opt(col, dtype):
        return (pl.col(col) if col in k.columns else pl.lit(None)).cast(dtype)

    coll = {n: collective_of(n) for n in k.get_column("name").unique().to_list()}  # once per distinct name
    out = k.select(
        pl.lit(source).alias("source"), pl.col("device"), pl.col("stream"),
        pl.col("name").replace_strict(coll, default=None, return_dtype=pl.String).alias("name"),
        pl.col("name").alias("kernel"), pl.col("start_ns"), pl.col("end_ns"),
        opt("coll_group", pl.String).alias("group"), opt("coll_seq", pl.Int64).alias("seq"),
        opt("coll_bytes", pl.Int64).alias("bytes"), opt("coll_group_size", pl.Int64).alias("group_size"),
    ).filter(pl.col("name").is_not_null())
    return out.select([pl.col(c).cast(t) for c, t in polars_schema(COMM_EVENT_COLUMNS).items()])


def _one_rank_note(devices, events, notes) -> None:
    """Communication kernels of one rank of a larger job: say the coverage (``1 of 16 ranks``) and
    that nothing was matched across ranks."""
    import polars as pl

    if notes is None or devices is None or "world_size" not in devices.columns:
        return
    d = devices.filter(pl.col("rank").is_not_null() & pl.col("world_size").is_not_null())
    if not d.height or d.get_column("rank").n_unique() != 1:
        return
    world = int(d.get_column("world_size").max())
    if world > 1:
        notes.append(f"{events.height:,} communication kernel(s) of rank {d.get_column('rank')[0]} only: 1 of {world} "
                     "ranks captured, so no collective is matched across ranks and no rank is compared (give the "
                     "ranks' traces together, e.g. their folder, to split each collective into transfer and wait)")


def _by_order(ev):
    """Events without a recorded sequence number, numbered in order per rank and group (the
    recorded process group, else the collective's name): ``matched_by`` 'order'."""
    import polars as pl

    return ev.sort("rank", "start_ns", "end_ns").with_columns(
        pl.coalesce("group", "name").alias("group")).with_columns(
        pl.int_range(pl.len()).over("rank", "group").cast(pl.Int64).alias("seq"), pl.lit("order").alias("matched_by"))


def _ranked_events(events, devices):
    """The events with each device's rank (devices: the ranked TIMELINE_DEVICE_COLUMNS rows)."""
    import polars as pl

    r = devices.select("source", "device", "rank").filter(pl.col("rank").is_not_null()).unique(["source", "device"])
    return events.join(r, on=["source", "device"], how="inner", nulls_equal=True)


def match_collectives(events, devices, notes: list[str] | None = None, link_peak_bytes_per_s: float | None = None):
    """COLLECTIVE_COLUMNS, one row per collective instance matched on two ranks or more (module
    docstring); ``notes`` receives what could not be matched and why."""
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema
    from ridgeline.analyzer.timeline.ranks import ranked

    d = ranked(devices)
    if events is None or not events.height:
        return empty(COLLECTIVE_COLUMNS)
    if d is None:
        _one_rank_note(devices, events, notes)
        return empty(COLLECTIVE_COLUMNS)
    ev = _ranked_events(events, d)
    if ev.get_column("rank").n_unique() < 2:
        return empty(COLLECTIVE_COLUMNS)
    say = notes.append if notes is not None else (lambda _n: None)
    by_seq = ev.filter(pl.col("group").is_not_null() & pl.col("seq").is_not_null()).with_columns(
        pl.lit("group+seq").alias("matched_by"))
    rest = ev.filter(pl.col("group").is_null() | pl.col("seq").is_null())
    p2p = rest.filter(pl.col("name") == POINT_TO_POINT)
    if p2p.height:
        say(f"{p2p.height:,} point-to-point (SendRecv) kernel(s) are not matched across ranks: the traces record no "
            "process group and sequence number, and their order pairs two ranks at a time")
    rest = _by_order(rest.filter(pl.col("name") != POINT_TO_POINT))
    if rest.height:
        counts = rest.group_by("group", "rank").len().group_by("group").agg(
            pl.col("len").min().alias("lo"), pl.col("len").max().alias("hi"), pl.col("rank").n_unique().alias("n"))
        nranks = rest.get_column("rank").n_unique()
        bad = counts.filter((pl.col("lo") != pl.col("hi")) | (pl.col("n") != nranks)).sort("group")
        for group, lo, hi, n in bad.select("group", "lo", "hi", "n").iter_rows():
            say(f"{group} not matched across ranks by order: {lo} to {hi} kernels per rank on {n} of {nranks} ranks "
                "(the traces record no sequence number; a capture that starts or stops mid-collective on some ranks "
                "shifts the order)")
        rest = rest.filter(~pl.col("group").is_in(bad.get_column("group").implode()))
    ev = pl.concat([by_seq, rest], how="vertical_relaxed") if rest.height else by_seq
    if not ev.height:
        return empty(COLLECTIVE_COLUMNS)
    ev = ev.with_columns((pl.col("end_ns") - pl.col("start_ns")).alias("d"))
    key = ["group", "seq", "matched_by"]
    g = ev.group_by(key).agg(
        pl.col("name").first(), pl.col("rank").n_unique().alias("ranks"),
        pl.col("group_size").max(), pl.col("bytes").min().alias("bmin"), pl.col("bytes").max().alias("bytes"),
        pl.col("name").n_unique().alias("names"),
        pl.col("start_ns").min(), pl.col("end_ns").max(), pl.col("d").min().alias("transfer_ns"),
        pl.col("d").max().alias("dmax"),
        (pl.col("start_ns").max() - pl.col("start_ns").min()).alias("start_skew_ns"),
        (pl.col("end_ns").max() - pl.col("end_ns").min()).alias("end_skew_ns"),
        pl.col("rank").sort_by(pl.col("start_ns"), pl.col("rank"), descending=[True, False]).first().alias("last_rank"),
    ).filter(pl.col("ranks") >= 2)
    mismatch = g.filter((pl.col("names") > 1) | (pl.col("bmin") != pl.col("bytes")))
    if mismatch.height:
        say(f"{mismatch.height:,} collective instance(s) left out: their ranks disagree on the collective or its "
            "message size")
        g = g.filter((pl.col("names") == 1) & (pl.col("bmin") == pl.col("bytes")).fill_null(True))
    n_eff = pl.coalesce("group_size", "ranks")
    n = n_eff.cast(pl.Float64)
    factor = (pl.when(pl.col("name") == "all_reduce").then(2 * (n - 1) / n)  # bus_factor, as an expression
              .when(pl.col("name").is_in(["all_gather", "reduce_scatter", "all_to_all"])).then((n - 1) / n)
              .when(pl.col("name").is_in(["broadcast", "reduce", "send_recv"])).then(pl.lit(1.0)))
    algbw = pl.when(pl.col("transfer_ns") > 0).then(pl.col("bytes") / (pl.col("transfer_ns") / 1e9))
    out = g.with_columns(
        n_eff.alias("group_size"),
        (pl.col("transfer_ns") / 1e9).alias("transfer_s"), ((pl.col("dmax") - pl.col("transfer_ns")) / 1e9).alias("wait_s"),
        (pl.col("start_skew_ns") / 1e9).alias("start_skew_s"), (pl.col("end_skew_ns") / 1e9).alias("end_skew_s"),
        algbw.alias("algbw_bytes_per_s"), (algbw * factor).alias("busbw_bytes_per_s"),
        pl.lit(link_peak_bytes_per_s, dtype=pl.Float64).alias("link_peak_bytes_per_s"),
    ).with_columns((pl.col("busbw_bytes_per_s") / pl.col("link_peak_bytes_per_s")).alias("busbw_vs_peak"))
    return out.select([pl.col(c).cast(t) for c, t in polars_schema(COLLECTIVE_COLUMNS).items()]).sort(
        "start_ns", "group", "seq")


def rank_waits(events, devices, collectives):
    """RANK_WAIT_COLUMNS per rank, from the matched instances (module docstring)."""
    import polars as pl

    from ridgeline.analyzer.timeline.ranks import ranked

    d = ranked(devices)
    if d is None or collectives is None or not collectives.height:
        return empty(RANK_WAIT_COLUMNS)
    ev = _ranked_events(events, d)
    ev = pl.concat([ev.filter(pl.col("group").is_not_null() & pl.col("seq").is_not_null()).with_columns(
        pl.lit("group+seq").alias("matched_by")),
        _by_order(ev.filter((pl.col("group").is_null() | pl.col("seq").is_null()) & (pl.col("name") != POINT_TO_POINT)))],
        how="vertical_relaxed")
    inst = collectives.select("group", "seq", "matched_by", (pl.col("transfer_s") * 1e9).round().cast(pl.Int64).alias("t"),
                              "last_rank")
    j = ev.join(inst, on=["group", "seq", "matched_by"], how="inner").with_columns(
        ((pl.col("end_ns") - pl.col("start_ns") - pl.col("t")).clip(lower_bound=0)).alias("w"))
    j = j.with_columns(pl.col("w").sum().over("group", "seq").alias("w_all"))
    per = j.group_by("rank").agg(
        pl.len().cast(pl.Int64).alias("collectives"), ((pl.col("end_ns") - pl.col("start_ns")).sum() / 1e9).alias("comm_s"),
        (pl.col("w").sum() / 1e9).alias("comm_wait_s"),
        (pl.col("rank") == pl.col("last_rank")).sum().cast(pl.Int64).alias("arrived_last"),
        (pl.when(pl.col("rank") == pl.col("last_rank")).then(pl.col("w_all") - pl.col("w")).otherwise(0).sum() / 1e9)
        .alias("imposed_wait_s"),
    )
    return per.select(list(RANK_WAIT_COLUMNS)).sort("rank")


def arrival_straggler(waits, *, min_ranks: int | None = None) -> dict | None:
    """The rank whose late arrivals cost the others the most wait (``imposed_wait_s``), with
    ``arrived_last`` and the instances; None with fewer than ``min_ranks`` ranks or no wait."""
    from ridgeline.analyzer.timeline.ranks import MIN_RANKS

    if waits is None or not waits.height or waits.height < (min_ranks or MIN_RANKS):
        return None
    rows = list(waits.iter_rows(named=True))
    top = max(rows, key=lambda r: (r["imposed_wait_s"] or 0.0, r["arrived_last"], -r["rank"]))
    if not top["imposed_wait_s"]:
        return None
    return {"rank": top["rank"], "arrived_last": top["arrived_last"], "imposed_wait_s": top["imposed_wait_s"],
            "instances": max(r["collectives"] for r in rows), "ranks": len(rows),
            "others_wait_s": sum(r["comm_wait_s"] or 0.0 for r in rows if r is not top)}

