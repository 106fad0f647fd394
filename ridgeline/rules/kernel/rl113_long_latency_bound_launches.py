"""RL113 long-latency-bound-launches (stall-bound)."""

from __future__ import annotations

from ridgeline.analyzer.kernels.latency import LAUNCH_BOUND_MAX_S, STALL, STALL_SECTIONS, stall_evidence
from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule
from ridgeline.rules.kernel.latency_common import latency_launches

#: stall evidence columns (KERNEL table) averaged per kernel, weighted by launch time
STALL_COLUMNS = ("achieved_occupancy_pct", "theoretical_occupancy_pct", "issue_slots_busy_pct", "warp_cycles_per_issue")


class LongLatencyBoundLaunches(Rule):
    """Long launches no roof explains (stall-bound) hold a large share of GPU time.

    What it finds
    -------------
    Kernels whose launches the classifier put in the ``latency`` class (busiest roof below
    RL112's ``max_roof_fraction``) and that last longer than RL112's ``launch_bound_max_s``
    (default 20 us): ``latency_kind = "stall"``. One finding per kernel holding at least
    ``min_time_share`` of the profiled GPU time. When the export has ncu's Occupancy, Scheduler
    or Warp State Statistics metrics (achieved/theoretical occupancy, issue slots busy, warp
    cycles per issued instruction, ``smsp__average_warps_issue_stalled_*_per_issue_active``) the
    finding quotes them and the remedy follows the dominant one; without them it names the ncu
    sections to collect.

    Why it matters
    --------------
    Such a launch runs long enough that launch overhead is a few percent of it at most, so
    CUDA graphs and fusion cannot buy much; yet no compute or memory roof explains its time.
    Its warps are waiting: on dependent memory accesses with too few warps resident to hide
    them (low occupancy, a grid smaller than the GPU), on scattered or uncoalesced accesses
    that move few useful bytes per request, on serialized atomics or barriers; or it does work
    the FLOP counters do not count (integer arithmetic, address math, random-number
    generation, SFU transcendentals), so its real pipe may be busy while the FP roofs look
    empty. A naive SGEMM at 19% of its roof is compute-bound and inefficient (RL105); one at 2%
    is stall-bound.

    What to do
    ----------
    Look inside the kernel, not at the launch count: read ncu's Warp State Statistics (top
    stall reason), Occupancy (achieved vs theoretical, the limiter) and Scheduler Statistics
    sections (``ncu --section WarpStateStats --section Occupancy --section SchedulerStats``).
    Raise occupancy or give each warp more independent work, coalesce and reuse memory
    accesses (shared-memory tiling), cut atomics and barriers, and check the instruction mix
    (``--section InstructionStats``) for integer or SFU work the roofline does not show.

    Example
    -------
    A curand initialisation kernel on A100: ``stall-bound: 13.4 s (28.6% of GPU time, >= 5%)
    over 2 launches of 6.7 s, busiest roof at 0.4% < 10%, each longer than the 20 us launch-bound
    limit; no occupancy or warp-stall metrics in the export``.
    """

    code = "RL113"
    name = "long-latency-bound-launches"
    severity = "warning"
    family = "kernel"
    thresholds = {
        "min_time_share": (0.05, "ignore kernels whose stall-bound launches hold less than this share of GPU time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        from ridgeline.rules.kernel.rl112_short_latency_bound_launches import ShortLatencyBoundLaunches as RL112

        # RL112's thresholds define the class (the pipeline passes them, overrides included; without
        # them RL112's defaults, read off the rule: the engine that runs this rule is not imported)
        latency = ctx.extra.get("latency_thresholds") or {k: v for k, (v, _d) in RL112.thresholds.items()}
        max_s = latency.get("launch_bound_max_s", LAUNCH_BOUND_MAX_S)
        max_fraction = latency.get("max_roof_fraction")
        got = latency_launches(ctx, STALL, max_s=max_s)
        if got is None:
            return []
        _df, lat = got
        total = K.total_gpu_time(ctx)
        if not lat.height or not total:
            return []
        c = pl.col
        have = [col for col in STALL_COLUMNS if col in lat.columns]
        w = c("duration_s").fill_null(0.0)

        def weighted(col: str):
            known = c(col).is_not_null() & c("duration_s").is_not_null()
            return pl.when((w * known).sum() > 0).then((c(col) * w).filter(known).sum() / w.filter(known).sum()).alias(col)

        aggs = [weighted(col) for col in have]
        if "stall_top_reason" in lat.columns:
            aggs.append(c("stall_top_reason").sort_by(w, descending=True).drop_nulls().first().alias("stall_top_reason"))
            aggs.append(c("stall_top_cycles_per_issue").sort_by(w, descending=True).drop_nulls().first()
                        .alias("stall_top_cycles_per_issue"))
        g = (
            lat.group_by("subject", maintain_order=True)
            .agg(
                launches=pl.len(),
                duration_s=c("duration_s").sum(),
                shortest_s=c("duration_s").min(),
                busiest=c("busiest_roof_fraction").max(),
                flops=c("flops").sum(),
                flops_known=c("flops").is_not_null().any(),
                impact_s=pl.when(c("time_to_roof_s").count() > 0)  # none placed on the roofline: unknown
                .then((c("duration_s") - c("time_to_roof_s")).clip(lower_bound=0.0).sum()),
                *aggs,
            )
            .with_columns(time_share=c("duration_s") / total)
            .filter(c("time_share") >= self.params["min_time_share"])
            .sort(["duration_s", "subject"], descending=[True, False])
        )
        out = []
        for row in g.iter_rows(named=True):
            share, limit = K.fmt_pct_vs(row["time_share"], self.params["min_time_share"])
            n = row["launches"]
            text, specific = stall_evidence(row)
            busiest = row.get("busiest")
            parts = [
                f"stall-bound: {K.fmt_s(row['duration_s'])} ({share} of GPU time, >= {limit}) over "
                f"{K.plural(n, 'launch')}" + (f" of {K.fmt_s(row['duration_s'] / n)} on average" if n > 1 else ""),
            ]
            if busiest is not None and max_fraction is not None:
                shown, limit_s = K.fmt_pct_vs(busiest, max_fraction)  # never "10% < 10%"
                shown = "<0.1%" if busiest < 0.0005 else shown  # never "0.0%" for a measured rate
                parts.append(f"busiest roof at {shown} < {limit_s}")
            parts.append(f"each longer than the {K.fmt_s(max_s)} launch-bound limit")
            if row["flops_known"] and not row["flops"]:
                parts.append("no floating-point work counted (integer, SFU or memory-access work the FLOP counters miss)")
            parts.append(text if text else "no occupancy or warp-stall metrics in the export")
            generic = ("raise occupancy or independent work per warp, coalesce and reuse memory accesses (shared-memory "
                       "tiling), cut atomics and barriers, and check the instruction mix for integer/SFU work the roofline "
                       "does not count")
            if specific:
                remedy = f"Look inside the kernel: {specific}; then {generic}."
            elif text:
                remedy = f"Look inside the kernel: {generic}."
            else:
                remedy = (f"Look inside the kernel: re-profile with ncu {STALL_SECTIONS} to see "
                          f"the top warp stall and the occupancy limiter; {generic}.")
            evidence = [
                Evidence("launches", n, "count", "measured"),
                Evidence("duration_s", row["duration_s"], "s", "measured"),
                Evidence("time_share", row["time_share"], "ratio", "derived"),
                Evidence("shortest_launch_s", row["shortest_s"], "s", "measured"),
                Evidence("launch_bound_max_s", max_s, "s", "threshold"),
                Evidence("busiest_roof_fraction", busiest, "ratio", "derived"),
            ]
            for col in (*have, "stall_top_reason", "stall_top_cycles_per_issue"):
                if row.get(col) is not None:
                    unit = "%" if col.endswith("_pct") else ("name" if col == "stall_top_reason" else "cycles")
                    evidence.append(Evidence(col, row[col], unit, "measured"))
            evidence.append(Evidence("impact_basis", "gap to the roof (their time minus their time at the roof): what "
                                     "removing the stalls buys at best", "text", "derived"))
            imp = float(row["impact_s"]) if row["impact_s"] is not None else None
            out.append(
                self.finding(
                    subject=row["subject"],
                    message="; ".join(parts),
                    remedy=remedy,
                    evidence=tuple(evidence),
                    impact_s=imp,
                    impact_share=imp / total if imp is not None else None,
                    confidence="measured" if text else "derived",
                )
            )
        return out
