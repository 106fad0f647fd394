"""RL411 straggler-rank."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.timeline import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class StragglerRank(Rule):
    """One rank computes longer than the others while they wait in collectives.

    What it finds
    -------------
    A job of per-rank timelines (devices carrying ``rank``: Kineto ``distributedInfo.rank``, or
    one file per rank, see ``ridgeline.analyzer.timeline.ranks``) where the rank with the longest
    compute time (``compute_busy_s``: union of its non-communication kernels) exceeds the median
    of the other ranks by at least ``min_excess`` of that median, and the other ranks' median
    exposed communication (``comm_exposed_s``) is at least ``min_wait`` x the excess and longer
    than the straggler's own: the others sat in collectives waiting for it. A verdict needs the
    ranks it compares: at least ``min_ranks`` ranks captured (the others' median is then of two
    ranks or more; with two, which one is late cannot be told from which one waits). The message
    says how many of the job's ranks were captured where the traces record the world size
    (``4 of 128 ranks captured``): a rank slower than the captured ones may not be the job's slowest.

    Where collectives are matched across ranks (``ridgeline.analyzer.timeline.collectives``), the
    message also names the *arrival straggler*: the rank whose late arrivals imposed the most wait
    on the others, how often it arrived last and what it cost them; where it is not the compute
    straggler it says so. Without a compute straggler, a rank that arrived last at half the matched
    collectives or more, imposing on each other rank a wait of at least ``min_excess`` of their
    median compute, is named on its own: its delay comes before its kernels (host work, data
    loading, launches). A slow link is no straggler: every rank then spends long in transfer and
    waits little, and the collectives table (``timeline.collectives``) shows it.

    Why it matters
    --------------
    A synchronous job runs at the pace of its slowest rank. Every collective waits until the
    last rank arrives, so one slow rank's extra compute is paid by every other GPU as idle
    communication time; its fix speeds up the whole job, while tuning the other ranks buys
    nothing.

    What to do
    ----------
    Find why that rank does more or slower work: uneven data (sequence lengths, padding,
    MoE expert load — balance the batches or the experts), uneven model partitioning (pipeline
    stages, tensor shards), or a slower GPU (clocks, thermal or power throttling, a degraded
    link: compare its telemetry with the others'). Then look at its own timeline.

    Example
    -------
    ``rank 2 (rank2.json gpu:0)``: ``rank 2 computes 12.0 ms, 3.00x the other 3 ranks' median
    4.0 ms, while they wait 8.0 ms (median) exposed in collectives (rank 2: 2.0 ms)``.
    """

    code = "RL411"
    name = "straggler-rank"
    severity = "warning"
    family = "timeline"
    thresholds = {
        "min_excess": (0.1, "fires when the slowest rank's compute exceeds the other ranks' median by this share"),
        "min_wait": (0.5, "and the other ranks' median exposed communication is at least this multiple of the excess"),
        "min_ranks": (3, "and at least this many ranks were captured (the others' median is of two ranks or more)"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        from pathlib import Path

        from ridgeline.analyzer.timeline.ranks import straggler

        tl = ctx.timeline
        if tl is None:
            return []
        from ridgeline.analyzer.timeline.collectives import arrival_straggler

        arrival = arrival_straggler(getattr(tl, "rank_waits", None), min_ranks=int(self.params["min_ranks"]))
        s = straggler(tl.devices, min_excess=self.params["min_excess"], min_wait=self.params["min_wait"],
                      min_ranks=int(self.params["min_ranks"]))
        if s is None:
            return self.late_arrival(tl, arrival)
        r = s["row"]
        dev = "gpu:?" if r["device"] is None else f"gpu:{r['device']}"
        others = s["ranks"] - 1
        share = s["impact_s"] / r["capture_s"] if r["capture_s"] else None
        return [self.finding(
            subject=f"rank {r['rank']} ({Path(r['source']).name} {dev})",
            message=(f"rank {r['rank']} computes {K.fmt_s(s['compute_s'])}, "
                     f"{s['compute_s'] / s['others_median_compute_s']:.2f}x the other {others} rank(s)' median "
                     f"{K.fmt_s(s['others_median_compute_s'])}, while they wait {K.fmt_s(s['others_median_exposed_s'])} "
                     f"(median) exposed in collectives (rank {r['rank']}: {K.fmt_s(s['own_exposed_s'])})"
                     + (f"; {s['ranks']} of {s['world_size']} ranks captured: a rank not captured may be slower"
                        if s.get("world_size") and s["world_size"] > s["ranks"] else "")
                     + (f"; ranks from {r['rank_from']}" if r.get("rank_from") and r["rank_from"] != "trace" else "")
                     + agreement(r["rank"], arrival)),
            remedy=("Balance that rank's work (sequence lengths, padding, MoE expert load, pipeline/tensor shards) or "
                    "check its GPU (clocks, throttling, links against the others' telemetry); the other ranks gain "
                    "nothing from tuning until it catches up."),
            evidence=(
                Evidence("rank", r["rank"], "count", "measured"),
                Evidence("compute_busy_s", s["compute_s"], "s", "measured"),
                Evidence("others_median_compute_s", s["others_median_compute_s"], "s", "derived"),
                Evidence("excess_s", s["excess_s"], "s", "derived"),
                Evidence("others_median_comm_exposed_s", s["others_median_exposed_s"], "s", "derived"),
                Evidence("comm_exposed_s", s["own_exposed_s"], "s", "derived"),
                Evidence("ranks", s["ranks"], "count", "measured"),
                *((Evidence("world_size", s["world_size"], "count", "measured"),) if s.get("world_size") else ()),
            ),
            impact_s=s["impact_s"],
            impact_share=share,
            confidence="derived",
            subject_kind="timeline",
        )]

    def late_arrival(self, tl, arrival) -> list[Finding]:
        """No compute straggler, but one rank arrives last at the collectives and the others wait for
        it: its delay comes before its kernels (host work, data loading, launches)."""
        import polars as pl

        from ridgeline.analyzer.timeline.ranks import ranked

        d = ranked(tl.devices)
        if arrival is None or d is None or 2 * arrival["arrived_last"] < arrival["instances"]:
            return []
        others = arrival["ranks"] - 1
        med = d.filter(pl.col("rank") != arrival["rank"]).get_column("compute_busy_s").median()
        if not others or not med or arrival["imposed_wait_s"] / others < self.params["min_excess"] * med:
            return []
        from ridgeline.analyzer.timeline.ranks import coverage, rank_table

        captured, world = coverage(rank_table(tl.devices))
        cov = (f"; {arrival['ranks']} of {world} ranks captured: a rank not captured may be later"
               if world and world > arrival["ranks"] else "")
        return [self.finding(
            subject=f"rank {arrival['rank']}",
            message=(f"no rank computes longer than the others by {K.fmt_pct(self.params['min_excess'])}"
                     + agreement(None, arrival) + f" ({others} other rank(s) captured): its delay comes before its "
                     "kernels (host work, data loading, launches)" + cov),
            remedy=("Look at that rank's host timeline before the collectives it is late for: data loading, CPU ops, "
                    "launch delays; the other ranks gain nothing from tuning until it arrives on time."),
            evidence=(
                Evidence("rank", arrival["rank"], "count", "measured"),
                Evidence("arrived_last", arrival["arrived_last"], "count", "derived"),
                Evidence("imposed_wait_s", arrival["imposed_wait_s"], "s", "derived"),
                Evidence("ranks", arrival["ranks"], "count", "measured"),
            ),
            impact_s=arrival["imposed_wait_s"] / others if others else None,
            confidence="derived",
            subject_kind="timeline",
        )]


def agreement(compute_rank: int | None, arrival: dict | None) -> str:
    """The arrival straggler beside the compute straggler, as a clause: they agree, or the rank the
    collectives wait for is another ('' without matched collectives)."""
    if arrival is None:
        return ""
    late = (f"rank {arrival['rank']} arrived last at {arrival['arrived_last']:,} of {arrival['instances']:,} matched "
            f"collectives, imposing {K.fmt_s(arrival['imposed_wait_s'])} of wait on the others")
    if compute_rank is None or arrival["rank"] == compute_rank:
        return f"; {late}"
    return (f"; yet {late}: the collectives wait for another rank than the one that computes longest, so its delay "
            "comes before its kernels (host work, data loading, launches), or the compute excess is hidden elsewhere")
