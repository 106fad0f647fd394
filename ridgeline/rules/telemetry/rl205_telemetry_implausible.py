"""RL205 telemetry-implausible."""

from __future__ import annotations

from ridgeline.rules.telemetry import common as T
from ridgeline.rules.base import Context, Evidence, Finding, Rule

# excluded-reason prefix (set by the reduction) -> (short label, remedy)
EXCLUSIONS = {
    "implausible values": (
        "implausible values (GPU-Util outside 0..100%, a negative power or profiling ratio)",
        "Check the exporter or the conversion that produced these values (scale, sign, counter wrap); windows "
        "holding them are left out of the performance rules.",
    ),
    "stuck profiler": (
        "stuck profiler: GPU-Util >= 90% while GR_ENGINE_ACTIVE ~0",
        "Restart the DCGM profiling watch (e.g. `dcgmi dmon -e 1001` once, or restart dcgm-exporter) and make sure "
        "no Nsight/CUPTI session holds the profiler; do not read these windows as idle tensor cores.",
    ),
    "profiling ratio above 1.5": (
        "profiling ratio above 1.5: a percent was fed where a 0..1 ratio belongs",
        "Export DCGM_FI_PROF_* as ratios (0..1), not as Grafana percentunit x100 values, or name the column by its "
        "DCGM field so ridgeline scales it.",
    ),
    "GPU-Util below 1%": (
        "GPU-Util below 1% with fractional percents: a 0..1 ratio was fed where percent belongs",
        "Export DCGM_FI_DEV_GPU_UTIL in percent (0..100) or name the column gpu_util_ratio if it is already a ratio.",
    ),
    "stalled profiling fields": (
        "profiling fields constant and non-zero (stalled)",
        "Check that DCGM is still updating the watch (dcgm-exporter restarts, hostengine health); stale values are "
        "not measurements.",
    ),
}


class TelemetryImplausible(Rule):
    """Telemetry that is missing, stale or on the wrong scale: which GPUs and spans, and why
    the other telemetry rules leave them out.

    What it finds
    -------------
    Per GPU: windows the reduction excluded from the performance rules (a stuck profiler,
    GPU-Util >= 90% with GR_ENGINE_ACTIVE ~0, in at least half the samples; profiling ratios
    above 1.5, i.e. percent fed as ratio; GPU-Util that reads like a 0..1 ratio fed as
    percent; profiling fields constant and non-zero over >= 30 samples), profiling ratios in
    (1, 1.5] clamped to 1 (seen on MIG instances), time gaps longer than ``gap_factor`` x the
    sample interval (and ``min_gap_s``), many blank values (N/A, DCGM sentinels); and, once for
    the input, GPUs without DCGM profiling fields at all.

    Why it matters
    --------------
    Telemetry faults look like performance problems: a stuck profiler reads as idle tensor
    cores on a busy GPU (dcgm-exporter #662), a percent fed as a ratio reads as 100x activity,
    missing profiling fields hide everything GPU-Util cannot show. Findings from such data
    would be wrong, so the other RL2xx rules skip the excluded windows and this rule says so.

    What to do
    ----------
    Fix the collection named in each finding (restart the profiling watch, export the right
    scale, enable DCP fields in the dcgm-exporter counters CSV, check the scrape pipeline for
    gaps), then re-run. Findings on MIG instances: compare instance ratios with each other,
    not with whole-GPU thresholds. GPUs that cannot report profiling fields at all (GeForce,
    a vGPU guest, older than Volta: ``ridgeline.analyzer.fleet.dcgm_support``) get a remedy for
    that hardware, never one to enable fields they lack.

    Example
    -------
    ``host:node7 gpu:2``: ``stuck profiler: GPU-Util >= 90% while GR_ENGINE_ACTIVE ~0 in
    2026-01-05T08:00:00Z..2026-01-05T09:00:00Z (1.0 h); excluded from RL201-RL204``.
    """

    code = "RL205"
    name = "telemetry-implausible"
    severity = "warning"
    severities = ("info",)
    family = "telemetry"
    thresholds = {
        "gap_factor": (3.0, "a gap counts when longer than this many sample intervals"),
        "min_gap_s": (10.0, "and longer than this many seconds"),
        "min_null_share": (0.2, "report blank values when they are at least this many per sample"),
        "list_limit": (6, "GPUs named in a fleet-wide finding before '+N more'"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        w = T.windows(ctx)
        if w is None:
            return []
        p = self.params
        c = pl.col
        out: list[Finding] = []

        # 1. excluded windows, one finding per GPU and reason
        for prefix, (label, remedy) in EXCLUSIONS.items():
            sp = T.spans(w, c("excluded").str.starts_with(prefix))
            if sp is None or sp.height == 0:
                continue
            for key, spans in T.per_gpu(sp, "observed_s"):
                observed = sum(s["observed_s"] or 0.0 for s in spans)
                ev = [Evidence("excluded_s", observed, "s", "telemetry")]
                extra = ""
                if prefix == "implausible values":  # name the values
                    vals = (
                        w.filter(c("excluded").str.starts_with(prefix)
                                 & pl.all_horizontal([(c(k) == v) if v is not None else c(k).is_null()
                                                      for k, v in key.items()]))
                        .get_column("excluded").str.strip_prefix(prefix + ": ").unique(maintain_order=True).to_list()
                    )
                    extra = f": {'; '.join(vals[:3])}"
                    ev.append(Evidence("implausible_values", "; ".join(vals), "text", "telemetry"))
                elif prefix == "stuck profiler":
                    util = T.wavg(spans, "gpu_util_mean_ratio")
                    gr = T.wavg(spans, "gr_engine_active_mean_ratio")
                    extra = f" (mean GPU-Util {T.pct(util)}, GR_ENGINE {T.pct(gr)})"
                    ev += [Evidence("gpu_util_mean_ratio", util, "ratio", "telemetry: DCGM_FI_DEV_GPU_UTIL"),
                           Evidence("gr_engine_active_mean_ratio", gr, "ratio", "telemetry: DCGM_FI_PROF_GR_ENGINE_ACTIVE")]
                out.append(self.finding(
                    subject=T.subject(key),
                    message=f"{label} in {T.spans_text(spans)} ({T.minutes(observed)}){extra}; excluded from RL201-RL204",
                    remedy=remedy,
                    evidence=tuple(ev),
                    impact_s=None,
                    confidence="measured",
                    subject_kind="telemetry",
                ))

        keys = list(T.KEYS)
        per_gpu = w.group_by(keys).agg(
            c("ratio_clamped_values").sum().alias("clamped"),
            c("ratio_max_raw").max().alias("ratio_max"),
            c("null_values").sum().alias("nulls"),
            c("samples").sum().alias("samples"),
            c("has_profiling").any().alias("has_prof"),
            c("gpu_util_mean_ratio").is_not_null().any().alias("has_util"),
            c("interval_s").first().alias("interval_s"),
            (c("max_gap_s") > pl.max_horizontal(c("interval_s") * p["gap_factor"], pl.lit(p["min_gap_s"])))
            .sum().alias("gap_windows"),
            c("max_gap_s").max().alias("max_gap"),
            c("window_start").min().alias("first"),
            c("window_end").max().alias("last"),
        ).sort(keys, nulls_last=True)

        for r in per_gpu.iter_rows(named=True):
            subj = T.subject(r)
            if r["clamped"]:
                mig = " on a MIG instance (per-instance normalization)" if r["gpu_instance"] is not None else ""
                out.append(self.finding(
                    subject=subj, severity="info",
                    message=(f"{r['clamped']} profiling ratios above 1 (max {r['ratio_max']:.3f} > 1){mig}; "
                             "clamped to 1 for the other rules"),
                    remedy="Compare MIG-instance ratios with each other, not with whole-GPU thresholds.",
                    evidence=(Evidence("ratio_clamped_values", r["clamped"], "count", "telemetry"),
                              Evidence("ratio_max_raw", r["ratio_max"], "ratio", "telemetry")),
                    confidence="measured", subject_kind="telemetry",
                ))
            if r["gap_windows"]:
                limit = max(p["gap_factor"] * (r["interval_s"] or 0.0), p["min_gap_s"])
                out.append(self.finding(
                    subject=subj, severity="info",
                    message=(f"time gaps in {r['gap_windows']} windows, longest {T.minutes(r['max_gap'])} "
                             f"> {T.minutes(limit)}"
                             + (f" (sample interval {r['interval_s']:.3g} s)" if r["interval_s"] is not None else "")),
                    remedy="Check the collector and scrape pipeline for restarts or dropped scrapes; gaps lower coverage_ratio.",
                    evidence=(Evidence("max_gap_s", r["max_gap"], "s", "telemetry"),
                              Evidence("interval_s", r["interval_s"], "s", "derived")),
                    confidence="measured", subject_kind="telemetry",
                ))
            if r["samples"] and r["nulls"] / r["samples"] >= p["min_null_share"]:
                out.append(self.finding(
                    subject=subj, severity="info",
                    message=(f"{r['nulls']} blank values (N/A or DCGM not-supported sentinel) in {r['samples']} samples; "
                             "kept as missing, never 0"),
                    remedy="Expected for profiling warm-up ticks and unsupported fields; many blanks mean the field is not collected.",
                    evidence=(Evidence("null_values", r["nulls"], "count", "telemetry"),),
                    confidence="measured", subject_kind="telemetry",
                ))

        no_prof = per_gpu.filter(~c("has_prof") & c("has_util"))
        if no_prof.height:
            from ridgeline.analyzer.fleet.dcgm_support import ENABLE, profiling_unsupported

            models = (w.group_by(keys).agg(c("model").drop_nulls().first()) if "model" in w.columns
                      else per_gpu.select(keys).with_columns(pl.lit(None, dtype=pl.String).alias("model")))
            # one finding per kind of GPU: a remedy fits the hardware it names (GeForce and vGPU
            # have no profiling fields to enable)
            groups: dict[tuple[str, str] | None, list[tuple[str, str | None]]] = {}
            for r in no_prof.join(models, on=keys, how="left", nulls_equal=True).iter_rows(named=True):
                groups.setdefault(profiling_unsupported(r["model"]), []).append((T.subject(r), r["model"]))
            lim = int(p["list_limit"])
            for kind, members in groups.items():
                names = [n for n, _m in members]
                shown = ", ".join(names[:lim]) + (f" (+{len(names) - lim} more)" if len(names) > lim else "")
                gpus = sorted({m for _n, m in members if m})
                if kind is None:
                    why, remedy = "only GPU-Util-based rules ran there", ENABLE
                else:
                    why, remedy = f"{', '.join(gpus)} is {kind[0]}; only GPU-Util-based rules ran there", kind[1]
                out.append(self.finding(
                    subject="telemetry", severity="info",
                    message=(f"no DCGM profiling fields (GR_ENGINE/SM/TENSOR/DRAM_ACTIVE) for {len(names)} GPU(s): "
                             f"{shown}; {why}"),
                    remedy=remedy,
                    evidence=(Evidence("gpus_without_profiling", len(names), "count", "telemetry"),
                              *(Evidence("gpu_model", m, "name", "telemetry") for m in gpus)),
                    confidence="measured", subject_kind="telemetry",
                ))
        return out
