"""RL206 profile-telemetry-agreement."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class ProfileTelemetryAgreement(Rule):
    """Does production telemetry tell the same story as the ncu profile?

    What it finds
    -------------
    When both a profile (ROOFLINE table) and telemetry (windows) are given, compares the
    share of profiled kernel time that is memory-bound (``bound == "memory"``, weighted by
    ``duration_s``) with the time-weighted DRAM_ACTIVE of the busy telemetry windows
    (GPU-Util >= ``busy_util``). Agreement: mostly memory-bound kernels and DRAM_ACTIVE >=
    ``dram_high``, or mostly compute-bound kernels and DRAM_ACTIVE below it. Disagreement is
    a warning; missing DRAM_ACTIVE makes it an info saying the comparison could not be made.

    Why it matters
    --------------
    A profile is one run with one batch size and one input; telemetry is what the fleet did.
    If the profile says memory-bound but the GPUs' memory interface is quiet in production
    (or the reverse), the profiled run does not represent the workload, the telemetry covers
    a different job, or the profiler and DCGM overlapped (they share one profiling lock). The
    roofline remedies only apply to the workload they were measured on.

    What to do
    ----------
    On agreement, act on the kernel findings (RL1xx). On disagreement, profile the
    production configuration (same batch size, sequence lengths, precision) or check that
    the telemetry windows cover the profiled job; DCGM profiling pauses while ncu runs.

    Example
    -------
    ``profile``: ``disagree: 82% of profiled kernel time is memory-bound but busy-window
    DRAM_ACTIVE is 18% (< 50%) over 3.2 h``.
    """

    code = "RL206"
    name = "profile-telemetry-agreement"
    severity = "info"
    severities = ("warning",)
    family = "telemetry"
    thresholds = {
        "memory_share": (0.5, "kernels count as mostly memory-bound at or above this share of classified time"),
        "dram_high": (0.5, "busy-window DRAM_ACTIVE at or above this reads as memory-bound"),
        "busy_util": (0.5, "telemetry windows with mean GPU-Util (or GR_ENGINE) at or above this are compared"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        k = getattr(ctx, "kernels", None)
        w = T.windows(ctx)
        if k is None or w is None or not hasattr(k, "height") or k.height == 0:
            return []
        if "bound" not in k.columns or "duration_s" not in k.columns:
            return []
        p = self.params
        c = pl.col
        cls = k.filter(c("bound").is_in(["memory", "compute"]) & c("duration_s").is_not_null())
        total = cls.get_column("duration_s").sum() if cls.height else 0.0
        if not total:
            return []
        mem = cls.filter(c("bound") == "memory").get_column("duration_s").sum() / total
        busy = T.usable(w).filter(
            pl.coalesce(c("gpu_util_mean_ratio"), c("gr_engine_active_mean_ratio")) >= p["busy_util"]
        )
        dram_rows = busy.filter(c("dram_active_mean_ratio").is_not_null())
        ev = [Evidence("memory_bound_time_share", mem, "ratio", "derived: ROOFLINE bound x duration_s")]
        if dram_rows.height == 0:
            return [self.finding(
                subject="profile",
                message=(f"cannot compare: {T.pct(mem)} of profiled kernel time is memory-bound, but the telemetry has "
                         "no busy windows with DRAM_ACTIVE"),
                remedy="Collect DCGM_FI_PROF_DRAM_ACTIVE (in the default dcgm-exporter counters) over the same workload.",
                evidence=tuple(ev), confidence="derived", subject_kind="profile",
            )]
        span = dram_rows.get_column("span_s").sum()
        dram = (dram_rows.get_column("dram_active_mean_ratio") * dram_rows.get_column("span_s")).sum() / span
        ev.append(Evidence("busy_dram_active_mean_ratio", dram, "ratio", "telemetry: DCGM_FI_PROF_DRAM_ACTIVE"))
        ev.append(Evidence("busy_window_s", span, "s", "telemetry"))
        mostly_mem = mem >= p["memory_share"]
        dram_high = dram >= p["dram_high"]
        side = "memory-bound" if mostly_mem else "compute-bound"
        kshare = mem if mostly_mem else 1 - mem
        cmp_ = ">=" if dram_high else "<"
        if mostly_mem == dram_high:
            return [self.finding(
                subject="profile", severity="info",
                message=(f"agree: {T.pct(kshare)} of profiled kernel time is {side} and busy-window DRAM_ACTIVE is "
                         f"{T.pct(dram)} ({cmp_} {T.pct(p['dram_high'])}) over {T.minutes(span)}"),
                remedy="The profile represents the fleet's workload: act on the kernel findings (RL1xx).",
                evidence=tuple(ev), confidence="derived", subject_kind="profile",
            )]
        return [self.finding(
            subject="profile", severity="warning",
            message=(f"disagree: {T.pct(kshare)} of profiled kernel time is {side} but busy-window DRAM_ACTIVE is "
                     f"{T.pct(dram)} ({cmp_} {T.pct(p['dram_high'])}) over {T.minutes(span)}"),
            remedy=("Profile the production configuration (batch size, sequence lengths, precision) or check that the "
                    "telemetry covers the profiled job before acting on kernel findings."),
            evidence=tuple(ev), confidence="derived", subject_kind="profile",
        )]
