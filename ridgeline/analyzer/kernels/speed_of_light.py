"""The bound of a launch the roofline cannot place, from ncu's own Speed-of-Light throughputs.

An export taken with ncu's basic set (or ``--section SpeedOfLight``) has no FLOP counters, yet
ncu measured how busy the SM and the memory system were: ``sm__throughput`` (the busiest SM
unit: issue, pipes, ...) and ``gpu__compute_memory_throughput`` (the busiest memory unit: L1,
L2 or DRAM), both ``.avg.pct_of_peak_sustained_elapsed``. ncu's own SpeedOfLight rule reads the
bottleneck from these two figures; ridgeline does the same where its roofline has nothing to
place a launch with (FLOPs, DRAM bytes, duration or a roof missing), and says so:
``bound_source`` is ``"ncu-speed-of-light"`` there (``"roofline"`` where measured counters and
roofs placed the launch, null where nothing decides).

Each side is a figure and whether it is complete:

* **compute**: the largest of ``sm_throughput_pct``, the tensor pipe's activity
  (``tensor_pipe_active_ratio``) and achieved FLOP/s over the compute roof where both are known.
  Complete when ``sm_throughput_pct`` was recorded (it is the busiest SM unit, so nothing else
  on the SM side can be busier); the others are lower bounds.
* **memory**: the largest of ``memory_throughput_pct``, ``dram_throughput_pct`` and achieved DRAM
  bytes/s over the DRAM roof. Complete when ``memory_throughput_pct`` was recorded.

Decision, in order (``t`` = the latency threshold, RL112's ``max_roof_fraction``, 10%):

1. both sides complete and both below ``t``: ``latency`` (no unit explains the time);
2. memory above compute, compute complete, memory at or above ``t``: ``memory``;
3. compute at or above memory, memory complete, compute at or above ``t``: ``compute`` (a tie
   is compute, as intensity == ridge is on the roofline);
4. otherwise nothing decides: ``unknown``.

A decided launch no longer than the launch floor is ``latency``, as on the roofline. ncu calls
both sides under 60% latency-limited; ridgeline keeps 10-60% on the memory/compute side, as it
does for launches it places (ridgeline.analyzer.kernels.roofline, "Latency class"). The busier
side's figure is the launch's ``busiest_roof_fraction``; ``roof_fraction``, ``roof_level`` and
``time_to_roof_s`` stay null (no roof placed the launch, no saving is claimed).
"""

from __future__ import annotations

#: ``bound_source`` values
ROOFLINE = "roofline"
SPEED_OF_LIGHT = "ncu-speed-of-light"


def _pct(expr):
    """A percentage as a fraction; NaN and negative read as not recorded."""
    import polars as pl

    v = expr / 100.0
    return pl.when(v.is_nan() | (v < 0)).then(None).otherwise(v)


def sides():
    """(compute figure, compute complete, memory figure, memory complete): polars expressions
    over ROOFLINE columns (fractions of peak, null when nothing on that side was recorded)."""
    import polars as pl

    def finite(e):
        return pl.when(e.is_nan() | e.is_infinite()).then(None).otherwise(e)

    sm = _pct(pl.col("sm_throughput_pct"))
    mem = _pct(pl.col("memory_throughput_pct"))
    compute = pl.max_horizontal(
        sm,
        pl.col("tensor_pipe_active_ratio"),
        finite(pl.col("achieved_flops_per_s") / pl.col("peak_flops_per_s")),
    )
    memory = pl.max_horizontal(
        mem,
        _pct(pl.col("dram_throughput_pct")),
        finite(pl.col("achieved_dram_bytes_per_s") / pl.col("peak_bw_bytes_per_s")),
    )
    return compute, sm.is_not_null(), memory, mem.is_not_null()


def decide(*, latency_fraction: float, launch_floor_s: float):
    """(bound, busiest fraction): the Speed-of-Light verdict of every launch (null where nothing
    decides) and its busier side's figure. The caller applies it where the roofline did not."""
    import polars as pl

    compute, c_done, memory, m_done = sides()
    c, m = compute.fill_null(-1.0), memory.fill_null(-1.0)
    t = latency_fraction
    bound = (
        pl.when(c_done & m_done & (c < t) & (m < t)).then(pl.lit("latency"))
        .when(c_done & (m > c) & (m >= t)).then(pl.lit("memory"))
        .when(m_done & (c >= m) & (c >= t)).then(pl.lit("compute"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    floor = (pl.col("duration_s") <= launch_floor_s).fill_null(False)
    bound = pl.when(bound.is_not_null() & floor).then(pl.lit("latency")).otherwise(bound)
    busiest = pl.when(bound.is_not_null()).then(pl.max_horizontal(compute, memory))
    return bound, busiest


#: how the views mark a bound the Speed-of-Light throughputs decided, and the legend saying so
MARK = "*"
LEGEND = "*: bound from ncu's Speed-of-Light throughputs (SM against memory); the roofline could not place it"


def mark(bound_source: str | None) -> str:
    """The mark a view prints after a bound: :data:`MARK` where ncu's Speed-of-Light decided it."""
    return MARK if bound_source == SPEED_OF_LIGHT else ""
