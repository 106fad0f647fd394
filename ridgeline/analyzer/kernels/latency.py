"""The latency class split in two: launch-bound and stall-bound launches.

A launch is ``bound = "latency"`` when no roof explains its time (see
:mod:`ridgeline.analyzer.kernels.roofline`). That class holds two problems with opposite cures:

* **launch-bound** (``latency_kind = "launch"``): the launch is short, no longer than
  ``launch_bound_max_s`` (:data:`LAUNCH_BOUND_MAX_S`, 20 us by default; RL112's threshold
  ``launch_bound_max_s``). Submitting a kernel costs the host about 2-6 us through the driver
  and runtime (NVIDIA's "Getting Started with CUDA Graphs" measures a few microseconds per
  launch; a 2025 measurement on an RTX 5070 Ti gives 4-6 us), an eager framework adds its own
  dispatch on top, and the GPU's own launch latency and ramp-up/tail of a small grid are a
  few microseconds more. At 20 us these costs are still 10-30% of the launch's time, and the
  GPU sits idle between such launches whenever the host cannot keep ahead; far above it they
  are a few percent. Fewer launches are the cure: CUDA graphs, fusion, persistent kernels.
* **stall-bound** (``latency_kind = "stall"``): the launch is longer than that. Launch
  overhead is a small part of its time, so graphs and fusion cannot buy much; its warps spend
  the time waiting (dependent memory latency, too few warps resident to hide it, a grid
  smaller than the GPU, serialized atomics) or doing work the FLOP and byte counters do not
  see (integer arithmetic, SFU transcendental math, address computation, random-number
  generation). The cure is inside the kernel: occupancy, memory access pattern, more
  independent work per warp. ncu's Warp State Statistics and Occupancy sections say which.

The split depends on duration only: nothing else in every export tells overhead from stall,
and a threshold users can override (``--threshold RL112.launch_bound_max_s=5e-5``) is honest
about being a judgement. The invariant the real-data sweep asserts: no launch longer than the
threshold is called launch-bound, and no launch-overhead remedy is given for one.

**Stall evidence.** When the export has them, the KERNEL columns ``achieved_occupancy_pct``,
``theoretical_occupancy_pct``, ``issue_slots_busy_pct``, ``warp_cycles_per_issue`` and the
dominant warp stall reason (``stall_top_reason`` with ``stall_top_cycles_per_issue``) are read
by :func:`stall_evidence`, which turns them into one sentence and the specific remedy they
point at (RL113). Without them the finding names the ncu sections that collect them.
"""

from __future__ import annotations

from typing import Any

#: longest launch (seconds) that can be launch-bound; longer latency-bound launches are
#: stall-bound (the default of RL112.launch_bound_max_s; see the module docstring)
LAUNCH_BOUND_MAX_S = 20e-6

#: ``latency_kind`` values
LAUNCH = "launch"
STALL = "stall"

#: the ncu sections (and the --section names) that explain a stall-bound launch
STALL_SECTIONS = "--section WarpStateStats --section Occupancy --section SchedulerStats"

#: what a dominant warp stall reason points at (ncu's Warp State Statistics reasons, the
#: metric suffix after ``issue_stalled_``): short text for the finding
STALL_REASON_HINTS: dict[str, str] = {
    "long_scoreboard": "waiting on global/local memory (L1TEX): make accesses coalesced, stage reused data in shared memory, keep more loads in flight",
    "short_scoreboard": "waiting on shared memory or SFU/special math results: avoid bank conflicts, cut transcendental math",
    "lg_throttle": "the local/global memory queue is full: use wider (vectorized) loads, fewer memory instructions",
    "mio_throttle": "the shared-memory/special-math queue is full: fewer shared-memory or SFU instructions per result",
    "tex_throttle": "the texture unit queue is full",
    "math_pipe_throttle": "a math pipe is saturated: the work is integer or SFU math the FLOP counters do not count, or one pipe is oversubscribed",
    "wait": "fixed-latency dependencies between instructions: more independent instructions per warp (ILP)",
    "barrier": "warps wait at __syncthreads: balance the work between barriers",
    "membar": "memory barriers or fences: fewer fences, or atomics with relaxed ordering",
    "branch_resolving": "branch targets: reduce divergent control flow",
    "no_instruction": "the instruction cache misses: smaller or less unrolled code",
    "dispatch_stall": "the dispatcher stalls (pipeline conflicts)",
    "drain": "waiting for memory stores to drain at exit",
    "imc_miss": "constant cache misses: keep constants uniform across the warp",
    "not_selected": "warps were eligible but another was picked: the scheduler is busy (not a stall)",
    "selected": "the warp issued (not a stall)",
    "sleeping": "warps sleep (nanosleep or yielding)",
    "misc": "miscellaneous hardware reasons",
    "warpgroup_arrive": "waiting at a warpgroup arrive (Hopper wgmma)",
    "gmma": "waiting on warpgroup MMA (Hopper wgmma) results",
}


def latency_kind_expr(latency: Any, *, max_s: float = LAUNCH_BOUND_MAX_S):
    """``latency_kind`` of a launch: ``"launch"``/``"stall"`` where ``latency`` (a boolean polars
    expression) holds, by ``duration_s`` against ``max_s``; null elsewhere."""
    import polars as pl

    return (
        pl.when(latency & (pl.col("duration_s") <= max_s))
        .then(pl.lit(LAUNCH))
        .when(latency)
        .then(pl.lit(STALL))
        .otherwise(pl.lit(None, dtype=pl.String))
    )


def with_latency_kind(df: Any, *, max_s: float = LAUNCH_BOUND_MAX_S):
    """``df`` with ``latency_kind`` filled where it is null on a latency-bound launch (tables built
    by hand, or read from an older JSON document): the classifier's rule applied once more."""
    import polars as pl

    lat = pl.col("bound").fill_null("") == "latency"
    filled = latency_kind_expr(lat, max_s=max_s)
    if "latency_kind" not in df.columns:
        return df.with_columns(filled.alias("latency_kind"))
    return df.with_columns(pl.coalesce(pl.col("latency_kind"), filled).alias("latency_kind"))


def bound_label(bound: str | None, latency_kind: str | None = None) -> str:
    """The one display word for a bound, shared by every view: ``launch-bound`` and
    ``stall-bound`` for the two latency kinds, ``latency-bound`` when the kind is unknown."""
    if bound == "latency":
        return {LAUNCH: "launch-bound", STALL: "stall-bound"}.get(latency_kind or "", "latency-bound")
    if bound in (None, ""):
        return "-"
    return bound if bound == "unknown" else f"{bound}-bound"


def bound_key(bound: str | None, latency_kind: str | None = None) -> str | None:
    """A bound with its latency kind, as one string: ``latency:launch``, ``latency:stall``, or the
    bound itself (what the run comparison compares, so a launch that turned stall-bound shows)."""
    if bound == "latency" and latency_kind:
        return f"latency:{latency_kind}"
    return bound


def stall_evidence(row: dict) -> tuple[str, str | None]:
    """(what the Warp State / Occupancy counters say, the remedy they point at) for one group of
    stall-bound launches; ``("", None)`` when the export has none of them."""
    parts: list[str] = []
    remedy = None
    occ = row.get("achieved_occupancy_pct")
    theo = row.get("theoretical_occupancy_pct")
    if occ is not None:
        text = f"achieved occupancy {occ:.0f}%"
        if theo is not None:
            text += f" of {theo:.0f}% theoretical"
        parts.append(text)
        if theo is not None and theo > 0 and occ < 0.6 * theo:
            remedy = "achieved occupancy is well below theoretical: the grid is too small or blocks finish unevenly (tail effect); give the launch more, evenly sized blocks"
        elif (theo if theo is not None else occ) < 35:
            remedy = "occupancy is low: too few warps resident to hide latency; reduce registers or shared memory per block (ncu's Occupancy section names the limiter)"
    issue = row.get("issue_slots_busy_pct")
    if issue is not None:
        parts.append(f"issue slots busy {issue:.0f}%")
    wcpi = row.get("warp_cycles_per_issue")
    if wcpi is not None:
        parts.append(f"{wcpi:.1f} warp cycles per issued instruction")
    reason = row.get("stall_top_reason")
    if reason:
        cyc = row.get("stall_top_cycles_per_issue")
        parts.append(f"top stall: {reason}" + (f" ({cyc:.1f} cycles per issued instruction)" if cyc is not None else ""))
        hint = STALL_REASON_HINTS.get(reason)
        if hint and remedy is None:
            remedy = f"the top warp stall is {reason}: {hint}"
    return ", ".join(parts), remedy


#: the bounds as every view shows them, in order: the latency class split by kind; ``latency``
#: stays for a latency-bound launch whose kind is unknown (a table from before the split)
VIEW_BOUNDS = ("memory", "compute", LAUNCH, STALL, "latency", "unknown")
VIEW_LABELS = {
    "memory": "memory-bound",
    "compute": "compute-bound",
    LAUNCH: "launch-bound",
    STALL: "stall-bound",
    "latency": "latency-bound",
    "unknown": "unknown",
}
#: one line for a view's legend: what launch- and stall-bound mean
VIEW_LEGEND = ("launch/stall: latency-bound (no roof explains the time), short launches (launch overhead) "
               "vs longer ones (warps stall)")


def view_bound(bound: str | None, latency_kind: str | None = None) -> str | None:
    """The bound a view shows: ``launch``/``stall`` for a latency-bound launch of that kind, else the bound."""
    if bound == "latency" and latency_kind in (LAUNCH, STALL):
        return latency_kind
    return bound


def view_bound_expr():
    """:func:`view_bound` over a table's ``bound`` and ``latency_kind`` columns (polars expression)."""
    import polars as pl

    return (
        pl.when((pl.col("bound") == "latency") & pl.col("latency_kind").is_in([LAUNCH, STALL]))
        .then(pl.col("latency_kind"))
        .otherwise(pl.col("bound"))
    )
