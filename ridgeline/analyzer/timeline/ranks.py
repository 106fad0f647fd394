"""Ranks: several per-rank timeline files read as ONE distributed job, and its straggler.

Where a device's rank comes from (column ``rank_from`` beside ``rank``)
-----------------------------------------------------------------------
1. ``trace``: the file records it (PyTorch profiler traces: ``distributedInfo.rank`` and
   ``world_size``, written by Kineto when torch.distributed is initialised); ``environment``:
   an Nsight Systems export records the profiled process's environment, where the launcher put
   the rank (``RANK``, ``OMPI_COMM_WORLD_RANK``, ``PMI_RANK``, ``SLURM_PROCID``...:
   :mod:`ridgeline.parsers.timeline.rank_env`).
2. ``file name``: several timeline files, none recording a rank, each with one device, and each
   name carrying a distinct rank number (``rank3``, ``rank_3``, ``rank-3``, ``.r3.``, ``_r3_``).
3. ``file order``: as 2 where the names do not tell: the files sorted by path are ranks 0..n-1
   (a guess, and the column says so).

A file holding several devices without a recorded rank gets no rank (one process may drive
several GPUs; numbering them would be invented). Per-rank nsys exports without a rank in the
environment take 2 or 3.

One job, or no rank table (:func:`job_problem`, said in a note, never silently)
-------------------------------------------------------------------------------
The files are compared as ranks of one job only when they can be: files recording different
world sizes (4 and 2: two jobs) are not merged into one; two files claiming the same rank (two
traces of rank 0: two runs, or a rank captured twice) make no table either, and the note names
the rank and the files; a file among ranked ones that records no rank is named as left out.
(Several devices of one file sharing its rank are one process driving several GPUs, not a
conflict.) A rank or world size that is no whole number in range is named where it is read
(:mod:`ridgeline.parsers.timeline.rank_env`).

The per-rank table (:func:`rank_table`)
---------------------------------------
One row per device with a rank: compute (``compute_busy_s``), communication (``comm_busy_s``),
exposed communication (``comm_exposed_s``), idle (``idle_s``), capture, and the compute time
relative to the median of the ranks. Terminal, Markdown, JSON and HTML show it when at least
two devices carry ranks.

Coverage (:func:`coverage`)
---------------------------
The ranks a job's traces cover: the ranks captured, and the world size the traces record
(Kineto ``distributedInfo.world_size``), when they record one. Two traces of a 128-rank job are
"2 of 128 ranks", never "a job of 2 ranks"; every view and RL411's message state it.

The straggler (:func:`straggler`, rule RL411)
---------------------------------------------
A verdict needs the ranks it compares: at least ``min_ranks`` (:data:`MIN_RANKS`, 3) ranks
captured, so the others' median is of two ranks or more; with fewer, no straggler is named.
In a synchronous job every rank waits in the collective for the slowest to arrive: a collective
kernel spins until all peers join, so the waiting shows up as *exposed communication* on the
fast ranks. The straggler is the rank whose compute time is the longest, when

* it exceeds the median compute of the other ranks by at least ``min_excess`` (a share), and
* the other ranks' median exposed communication is at least ``min_wait`` x that excess (they
  really waited, rather than running at their own pace), and is longer than the straggler's.

Evidence: the straggler's compute vs the others' median, the others' median exposed
communication and the straggler's. The job-time it costs (``impact_s``) is bounded by both
figures: ``min(excess, others' median exposed comm)``; as a share of the straggler's capture.
"""

from __future__ import annotations

import re

RANK_NAME_RE = re.compile(r"(?i)(?:rank[-_]?|(?:^|[-_.])r)(\d{1,5})(?=$|[-_.])")

RANK_TABLE_COLUMNS = ("rank", "source", "device", "rank_from", "capture_s", "compute_busy_s", "comm_busy_s",
                      "comm_exposed_s", "idle_s", "compute_vs_median", "world_size")

#: a rank verdict (RL411's straggler) compares one rank with the median of the others: it needs at
#: least this many ranks captured, so that the median is of two ranks or more (with two ranks, "the
#: others" is one rank, and which of the two is late cannot be told from which one waits)
MIN_RANKS = 3


def rank_from_name(path: str) -> int | None:
    """The rank number a file name carries (``trace_rank3.json``, ``r3.sqlite``), else None."""
    from pathlib import Path

    name = Path(path).name
    m = RANK_NAME_RE.search(name)
    return int(m.group(1)) if m else None


def fill_ranks(devices, notes: list[str] | None = None):
    """``devices`` (TIMELINE_DEVICE_COLUMNS frame) with ``rank``/``rank_from`` filled where the files
    did not record them (module docstring: file name, else file order). ``notes`` receives what
    keeps the files from being one job (:func:`job_problem`) and the ranked files' left-outs."""
    out = _filled(devices)
    if notes is not None and out is not None and out.height and "rank" in out.columns:
        for note in (job_problem(out), _unranked(out)):
            if note and note not in notes:
                notes.append(note)
    return out


def _files(values) -> str:
    values = sorted(set(values))
    return ", ".join(values[:3]) + (f" and {len(values) - 3} more" if len(values) > 3 else "")


def job_problem(devices) -> str | None:
    """Why the ranked devices are not one job's ranks (module docstring), or None."""
    import polars as pl

    if devices is None or not devices.height or "rank" not in devices.columns:
        return None
    d = devices.filter(pl.col("rank").is_not_null())
    if d.get_column("source").n_unique() < 2:
        return None
    if "world_size" in d.columns:
        sizes = d.filter(pl.col("world_size").is_not_null()).group_by("world_size").agg(pl.col("source").unique())
        if sizes.height > 1:
            parts = [f"world size {w}: {_files(s)}" for w, s in sorted(sizes.iter_rows())]
            return ("the traces record different world sizes, so they are ranks of different jobs ("
                    + "; ".join(parts) + "): no rank table or straggler across them (analyze each job on its own)")
    claims = d.group_by("rank").agg(pl.col("source").unique()).filter(pl.col("source").list.len() > 1).sort("rank")
    if claims.height:
        parts = [f"rank {r} by {_files(s)}" for r, s in claims.head(3).iter_rows()]
        more = f" and {claims.height - 3} more rank(s)" if claims.height > 3 else ""
        return ("several traces claim one rank (" + "; ".join(parts) + more + "): not one job's ranks, so no rank "
                "table or straggler (two runs, or a rank captured twice?)")
    return None


def _unranked(devices) -> str | None:
    """A note naming the files that record no rank beside files that do (left out of the table)."""
    import polars as pl

    ranked_sources = set(devices.filter(pl.col("rank").is_not_null()).get_column("source").to_list())
    if len(ranked_sources) < 2:
        return None
    missing = set(devices.filter(pl.col("rank").is_null()).get_column("source").to_list()) - ranked_sources
    if not missing:
        return None
    return f"{_files(missing)} record(s) no rank beside traces that do: left out of the rank table"


def _filled(devices):
    import polars as pl

    if devices is None or not devices.height or "rank" not in devices.columns:
        return devices
    per_source = devices.group_by("source").agg(pl.len().alias("n"), pl.col("rank").is_not_null().any().alias("has"))
    if per_source.height < 2 or per_source.get_column("has").any():
        return devices
    if (per_source.get_column("n") > 1).any():
        return devices
    sources = sorted(per_source.get_column("source").to_list())
    named = [rank_from_name(s) for s in sources]
    if None not in named and len(set(named)) == len(named):
        ranks, how = named, "file name"
    else:
        ranks, how = list(range(len(sources))), "file order"
    mapping = dict(zip(sources, ranks))
    return devices.with_columns(
        pl.col("source").replace_strict(mapping, default=None, return_dtype=pl.Int64).alias("rank"),
        pl.lit(how).alias("rank_from"),
    )


def ranked(devices):
    """The devices that carry a rank, by rank; None unless at least two distinct ranks (one process
    driving four GPUs is rank 0 four times, not a job of four ranks)."""
    import polars as pl

    if devices is None or not devices.height or "rank" not in devices.columns:
        return None
    d = devices.filter(pl.col("rank").is_not_null() & (pl.col("capture_s") > 0))
    if job_problem(d) is not None:  # (said in a note by fill_ranks)
        return None
    return d.sort("rank", "source", "device") if d.get_column("rank").n_unique() >= 2 else None


def rank_table(devices):
    """Per-rank table (RANK_TABLE_COLUMNS), or None when fewer than two devices carry a rank."""
    import polars as pl

    d = ranked(devices)
    if d is None:
        return None
    med = d.get_column("compute_busy_s").median()
    world = _world_size(d)
    return d.with_columns(
        (pl.col("compute_busy_s") / med if med else pl.lit(None, dtype=pl.Float64)).alias("compute_vs_median"),
        pl.lit(world, dtype=pl.Int64).alias("world_size"),
    ).select(RANK_TABLE_COLUMNS)


def _world_size(d) -> int | None:
    """The one world size the ranked devices record (None: none recorded; several are refused by
    :func:`job_problem` before this)."""
    if "world_size" not in d.columns:
        return None
    sizes = d.get_column("world_size").drop_nulls().unique().to_list()
    return int(sizes[0]) if len(sizes) == 1 else None


def coverage(table) -> tuple[int, int | None]:
    """(ranks captured, the job's world size or None) of a :func:`rank_table`."""
    if table is None or not table.height:
        return 0, None
    world = _world_size(table)
    captured = table.get_column("rank").n_unique()
    return captured, (max(world, captured) if world is not None else None)


def straggler(devices, *, min_excess: float = 0.1, min_wait: float = 0.5, min_ranks: int = MIN_RANKS) -> dict | None:
    """The straggling rank's row and evidence (module docstring), or None; None too with fewer
    than ``min_ranks`` ranks (that ran communication) to compare."""
    d = ranked(devices)
    if d is None:
        return None
    rows = [r for r in d.iter_rows(named=True) if (r.get("comm_busy_s") or 0) > 0]
    if len(rows) < max(2, min_ranks) or len({r["rank"] for r in rows}) < max(2, min_ranks):
        return None
    slow = max(rows, key=lambda r: (r["compute_busy_s"] or 0.0, -r["rank"]))
    others = [r for r in rows if r is not slow]
    import statistics  # (here: ~1.5 ms of import a one-rank run does not need)

    med = statistics.median(r["compute_busy_s"] or 0.0 for r in others)
    excess = (slow["compute_busy_s"] or 0.0) - med
    if med <= 0 or excess / med < min_excess:
        return None
    wait = statistics.median(r["comm_exposed_s"] or 0.0 for r in others)
    own_wait = slow["comm_exposed_s"] or 0.0
    if wait < min_wait * excess or wait <= own_wait:
        return None
    return {
        "row": slow,
        "ranks": len(rows),
        "world_size": _world_size(d),
        "compute_s": slow["compute_busy_s"],
        "others_median_compute_s": med,
        "excess_s": excess,
        "excess_share": excess / med,
        "others_median_exposed_s": wait,
        "own_exposed_s": own_wait,
        "impact_s": min(excess, wait),
    }
