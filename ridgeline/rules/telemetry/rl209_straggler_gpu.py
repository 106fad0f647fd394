"""RL209 straggler-gpu."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule

_LABELS = {
    "sm_clock_mean_hz": "SM clock",
    "tensor_active_mean_ratio": "tensor activity",
    "power_mean_w": "power",
}
_REASON_LABELS = {
    "gpu_idle": "GPU idle", "app_clocks": "applications clocks setting", "sw_power_cap": "SW power cap",
    "hw_slowdown": "HW slowdown", "sync_boost": "sync boost", "sw_thermal": "SW thermal slowdown",
    "hw_thermal": "HW thermal slowdown", "hw_power_brake": "HW power brake", "display_clocks": "display clock setting",
}


def _value(col: str, x: float | None) -> str:
    if x is None:
        return "n/a"
    if col == "sm_clock_mean_hz":
        return f"{x / 1e9:.2f} GHz"
    if col == "power_mean_w":
        return f"{x:.0f} W"
    return T.pct(x)


def _hours(s: float) -> str:
    return f"{s / 3600:.1f} GPU-h"


class StragglerGpu(Rule):
    """A GPU lags its group's median SM clock, tensor activity or power for several windows: a synchronous job runs at its pace.

    What it finds
    -------------
    GPUs of one group (the GPUs of a host by default; the grouping columns when the report groups
    by pod or job) whose SM clock (``sm_clock_mean_hz``), tensor activity
    (``tensor_active_mean_ratio``) or board power (``power_mean_w``) is at least ``min_lag``
    (on a host, where GPUs may run different jobs, the SM clock alone unless
    ``host_all_metrics`` is 1; MIG instances are not compared)
    below the group's median in the same window, and further below it than ``mad_k`` robust
    standard deviations (1.4826 x the median absolute deviation) of the group, while the group
    and the GPU are working (median and own utilization >= ``busy_util``), in at least
    ``min_windows`` consecutive windows, with at least ``min_group_gpus`` GPUs reporting the
    metric. The method is :mod:`ridgeline.analyzer.fleet.stragglers`; windows excluded by RL205 take no
    part. The evidence: the share of samples under each clock event (throttle) reason
    (``DCGM_FI_DEV_CLOCK_THROTTLE_REASONS``, decoded by :mod:`ridgeline.analyzer.fleet.throttle`),
    temperature, and power against the power limit, each next to the group's median.

    Why it matters
    --------------
    A synchronous job (data- or tensor-parallel) waits at every collective for its slowest
    GPU: one GPU at 60% of its peers' clock holds all of them to 60%. The loss is the group's,
    not the GPU's: the group's GPU-hours over the episode times the straggler's pace lag (the
    larger of its SM-clock and tensor lags; the power lag where neither is reported).

    What to do
    ----------
    Follow the reason: a power limit set below its peers' (raise it: ``nvidia-smi -i N -pl W``,
    or find who lowered it); thermal slowdown (fans, airflow, the slot; drain if it persists); HW
    slowdown or power brake (drain the node, check the power supply and the board, run
    ``dcgmi diag -r 3``). With no reason reported, look at the GPU's links, its host, and other
    processes on it. Until then, keep synchronous jobs off the GPU (or the node).

    Example
    -------
    ``host:node01 gpu:3``: ``lags the other 7 GPUs of host:node01 for 30.0 min
    (2026-01-05T08:00:00Z..2026-01-05T08:30:00Z): SM clock 1.23 GHz vs median 1.98 GHz (-38%);
    clock event reasons: SW power cap 100% of samples; power limit
    315 W (group median 700 W); 66 C (group median 62 C, max 67 C); a synchronous job on the
    group runs at its pace: 1.5 GPU-h of the group's 4.0 GPU-h lost (38% pace lag)``.
    """

    code = "RL209"
    name = "straggler-gpu"
    severity = "warning"
    family = "telemetry"
    thresholds = {
        "min_group_gpus": (3, "GPUs of the group reporting the metric in the window (a median needs peers)"),
        "min_lag": (0.10, "relative shortfall below the group median (0.10 = 10% below)"),
        "mad_k": (3.0, "the shortfall must exceed this many robust standard deviations (1.4826 x MAD) of the group"),
        "min_windows": (3, "consecutive lagging windows before a GPU is called a straggler"),
        "busy_util": (0.5, "group median and the GPU's own utilization (GPU-Util or GR_ENGINE_ACTIVE) needed"),
        "min_reason_share": (0.05, "share of samples under a clock event reason before it is named"),
        "host_all_metrics": (0, "1: compare tensor activity and power within a host too (hosts that run one job); "
                                "0: the SM clock only, when grouping by host"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        from ridgeline.analyzer.fleet.stragglers import find_stragglers
        from ridgeline.analyzer.fleet.throttle import REASONS, SLOWDOWNS

        w = T.windows(ctx)
        if w is None:
            return []
        keys = tuple((ctx.extra or {}).get("group_keys") or ("host",))
        if keys != ("host",):  # GPUs in no group (no pod, no job) are not one another's peers
            w = w.drop_nulls([k for k in keys if k in w.columns])
        p = self.params
        from ridgeline.analyzer.fleet.stragglers import METRICS, default_metrics

        metrics = tuple(c for c, _l in METRICS) if p["host_all_metrics"] else default_metrics(keys)
        episodes = find_stragglers(w, keys, {k: p[k] for k in ("min_group_gpus", "min_lag", "mad_k", "min_windows",
                                                                "busy_util")}, metrics)
        total = T.total_span_s(w)
        out = []
        for r in episodes.iter_rows(named=True):
            lagging = [c for c in (r["lagging"] or "").split(",") if c]
            parts = [f"{_LABELS[c]} {_value(c, r[c])} vs median {_value(c, r[c + '_group_median'])} "
                     f"(-{100 * r[c + '_lag']:.0f}%)" for c in lagging]
            head = (f"lags the other {r['group_gpus'] - 1} GPUs of {r['group']} for {T.minutes(r['observed_s'])} "
                    f"({T.span_text(r['span_start'], r['span_end'])}): " + ", ".join(parts))
            evidence_text = []
            reasons = []
            if r.get("clock_reason_samples"):
                reasons = [(name, r.get(f"throttle_{name}_share") or 0.0) for _b, name, _c, _m in REASONS
                           if name != "gpu_idle" and (r.get(f"throttle_{name}_share") or 0.0) >= p["min_reason_share"]]
                evidence_text.append("clock event reasons: " + (
                    ", ".join(f"{_REASON_LABELS[n]} {T.pct(s)} of samples" for n, s in reasons)
                    if reasons else "none reported"))
            limit, limit_med = r.get("power_limit_w"), r.get("power_limit_w_group_median")
            if limit is not None:
                evidence_text.append(f"power limit {limit:.0f} W" + (f" (group median {limit_med:.0f} W)"
                                                                      if limit_med is not None else ""))
            temp, temp_med, temp_max = r.get("gpu_temp_mean_c"), r.get("gpu_temp_mean_c_group_median"), r.get("gpu_temp_max_c")
            if temp is not None:
                evidence_text.append(f"{temp:.0f} C (group median {temp_med:.0f} C, max {temp_max:.0f} C)"
                                     if temp_med is not None else f"{temp:.0f} C")
            lost = r["lost_gpu_s"] or 0.0
            loss = (f"a synchronous job on the group runs at its pace: {_hours(lost)} of the group's "
                    f"{_hours(r['group_gpu_s'])} lost ({100 * (r['pace_lag'] or 0.0):.0f}% pace lag)")
            message = "; ".join([head, *evidence_text, loss])
            names = {n for n, _s in reasons}
            subject = T.subject(r)
            gpu = r["gpu"] if r["gpu"] is not None else "N"
            if "sw_power_cap" in names and limit is not None and limit_med and limit < 0.95 * limit_med:
                remedy = (f"Its power limit is below its peers': raise it (nvidia-smi -i {gpu} -pl {limit_med:.0f}) "
                          "or find who lowered it; keep synchronous jobs off it until then.")
            elif names & {"sw_thermal", "hw_thermal"}:
                remedy = ("Thermal slowdown: check fans, airflow and the slot of this GPU; drain the node if it "
                          "keeps throttling.")
            elif names & set(SLOWDOWNS):
                remedy = ("HW slowdown / power brake: drain the node, check its power supply and the board, and run "
                          "dcgmi diag -r 3.")
            elif "sw_power_cap" in names:
                remedy = ("It reaches its power cap at a lower clock than its peers: check its cooling and run "
                          "dcgmi diag -r 3; keep synchronous jobs off it if it persists.")
            else:
                remedy = ("No clock event reason explains it: check the GPU's PCIe/NVLink links, its host (CPU, data "
                          "loading) and other processes on it.")
            out.append(self.finding(
                subject=subject,
                message=message,
                remedy=remedy,
                evidence=(
                    *[Evidence(f"{c}_lag", r[f"{c}_lag"], "ratio", "derived: 1 - value / group median")
                      for c in _LABELS],
                    Evidence("sm_clock_mean_hz", r["sm_clock_mean_hz"], "Hz", "telemetry: DCGM_FI_DEV_SM_CLOCK"),
                    Evidence("power_mean_w", r["power_mean_w"], "W", "telemetry: DCGM_FI_DEV_POWER_USAGE"),
                    Evidence("power_limit_w", limit, "W", "telemetry: DCGM_FI_DEV_POWER_MGMT_LIMIT"),
                    Evidence("gpu_temp_max_c", temp_max, "C", "telemetry: DCGM_FI_DEV_GPU_TEMP"),
                    *[Evidence(f"throttle_{n}_share", s, "ratio", "telemetry: DCGM_FI_DEV_CLOCK_THROTTLE_REASONS")
                      for n, s in reasons],
                    Evidence("group_gpu_s", r["group_gpu_s"], "s", "derived: the group's covered GPU-seconds"),
                    Evidence("lost_gpu_s", lost, "s", "derived: group GPU-seconds x pace lag"),
                ),
                impact_s=lost,
                impact_share=(lost / total) if total else None,
                confidence="measured",
                subject_kind="gpu",
            ))
        return out
