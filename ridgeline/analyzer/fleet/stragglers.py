"""Stragglers: GPUs of one group that lag their peers, sustained, and what the group loses.

A synchronous job (data-parallel training, tensor-parallel inference) waits at every collective
for its slowest rank: one GPU running 30% slower holds all its peers to its pace. This module
finds such GPUs in the WINDOW table (:func:`ridgeline.analyzer.fleet.telemetry.reduce_windows` /
``reduce_partitions``) and gathers the evidence that explains them.

Where it runs: the per-sample work (decoding the clock event reasons bitmask, temperature, power
limit) is done in the per-partition reduction by :mod:`ridgeline.analyzer.fleet.throttle`, local or
Dask alike. The comparison with the peers runs here, on the window table, because a group (a pod,
a Slurm job, a label) may span partitions (hosts); it is a few polars window expressions over
one row per GPU and window, deterministic, so local and Dask window tables give the same result.

Method (thresholds in :data:`THRESHOLDS`, overridable, and as RL209's thresholds):

1. Groups: the GPUs sharing the values of ``keys`` (``("host",)`` by default; any columns of the
   window table, e.g. a pod or job column added by the grouping step) and, with windowed
   output, the same ``window_start`` (windows are aligned to the clock, so peers are compared
   over the same minutes). With ``--window all`` (one row per GPU), the whole runs are compared.
   Windows excluded by the plausibility checks (RL205) take no part.
   MIG instances (``gpu_instance`` set) take no part: they share their parent GPU's clock and
   power, and their activity scales with their profile, not with their health.
2. Metrics: the GPUs of a workload group (a pod, a job: ``keys`` other than ``host``) do the
   same work, so SM clock (``sm_clock_mean_hz``), tensor activity (``tensor_active_mean_ratio``)
   and board power (``power_mean_w``) are compared. The GPUs of a host may run different jobs
   (a decode server next to a training job): tensor activity and power are then the workload's,
   not the card's, so with the default host grouping only the SM clock is compared (a busy GPU
   runs at its boost clock unless something caps it; ``metrics=`` / RL209's
   ``host_all_metrics`` = 1 compare all three on hosts that run one job).
   Per metric m compared: the group median M and the
   median absolute deviation MAD (both robust: one slow GPU among eight moves neither). A GPU
   lags in m when, with at least ``min_group_gpus`` GPUs reporting m in the window,

   * its shortfall ``lag = 1 - x / M`` is at least ``min_lag`` (10%), and
   * ``M - x`` exceeds ``mad_k`` x 1.4826 x MAD (1.4826 x MAD estimates the standard deviation
     of normal noise: with peers that scatter, only an outlier beyond their scatter counts), and
   * the group is working and so is the GPU: the group's median utilization (GPU-Util, or
     GR_ENGINE_ACTIVE where GPU-Util is absent) and the GPU's own are at least ``busy_util``
     (an idle GPU next to busy ones is not a straggler of their job; RL203 speaks of it).
3. Sustained: at least ``min_windows`` consecutive lagging windows of the GPU form an episode.
4. What the group loses: per window the pace lag is the larger of the SM-clock and tensor
   lags (when neither lags, the power lag stands in); the group's GPU-hours in the window
   (every GPU of the group, its ``span_s``) times that lag, summed over the episode. The group
   runs at the straggler's pace, so that share of its GPU time bought nothing.
5. Evidence, over the episode (span-weighted means): the share of samples under each clock
   event reason (:data:`ridgeline.analyzer.fleet.throttle.REASONS`), temperature (mean and max) and
   power against the power limit, with the group medians of temperature, power and power
   limit for comparison.

:func:`find_stragglers` returns one row per episode (columns in :data:`EPISODE_COLUMNS`).
"""

from __future__ import annotations

from typing import Any

from ridgeline.analyzer.robust import MAD_TO_SIGMA

GPU = ("host", "gpu", "gpu_instance")
THRESHOLDS: dict[str, tuple[Any, str]] = {
    "min_group_gpus": (3, "GPUs of the group reporting the metric in the window (a median needs peers)"),
    "min_lag": (0.10, "relative shortfall below the group median (0.10 = 10% below)"),
    "mad_k": (3.0, "the shortfall must exceed this many robust standard deviations (1.4826 x MAD) of the group"),
    "min_windows": (3, "consecutive lagging windows before a GPU is called a straggler"),
    "busy_util": (0.5, "group median and the GPU's own utilization (GPU-Util or GR_ENGINE_ACTIVE) needed"),
}
# window column, label, unit word for messages
METRICS: tuple[tuple[str, str], ...] = (
    ("sm_clock_mean_hz", "SM clock"),
    ("tensor_active_mean_ratio", "tensor activity"),
    ("power_mean_w", "power"),
)
PACE = ("sm_clock_mean_hz", "tensor_active_mean_ratio")  # metrics that measure the pace of work
EPISODE_COLUMNS = (
    "group", *GPU, "uuid", "model", "span_start", "span_end", "windows", "observed_s", "group_gpus",
    "group_gpu_s", "lost_gpu_s", "pace_lag", "lagging",
    *[f"{c}{s}" for c, _l in METRICS for s in ("", "_group_median", "_lag")],
    "gpu_temp_mean_c", "gpu_temp_max_c", "gpu_temp_mean_c_group_median", "power_limit_w",
    "power_limit_w_group_median", "clock_reason_samples",
)


def thresholds(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """The defaults of :data:`THRESHOLDS` with ``overrides`` applied (unknown names refused)."""
    th = {k: v for k, (v, _d) in THRESHOLDS.items()}
    for k, v in (overrides or {}).items():
        if k not in th:
            from ridgeline.errors import UsageError

            raise UsageError(f"unknown straggler threshold {k!r}; known: {', '.join(sorted(th))}")
        th[k] = v
    return th


def default_metrics(keys) -> tuple[str, ...]:
    """The metrics compared for a grouping (see the module docstring, step 2)."""
    return tuple(c for c, _l in METRICS) if set(keys) - {"host"} else ("sm_clock_mean_hz",)


def window_lags(windows, keys=("host",), overrides: dict[str, Any] | None = None,
                metrics: tuple[str, ...] | None = None):
    """The window rows (not excluded) with, per metric, ``<m>_group_median``, ``<m>_lag`` (the
    relative shortfall, null unless the GPU lags in it) and ``lagging`` (any metric), plus
    ``group_gpus`` and ``group_gpu_s`` (the group's GPUs and covered seconds in the window)
    and ``pace_lag`` (see the module docstring). ``metrics``: the window columns compared (a
    subset of :data:`METRICS`; default :func:`default_metrics`)."""
    import polars as pl

    th = thresholds(overrides)
    keys = list(keys)
    missing = [k for k in keys if k not in windows.columns]
    if missing:
        from ridgeline.errors import UsageError

        raise UsageError(f"straggler groups: no column {', '.join(missing)} in the window table")
    compared = set(metrics or default_metrics(keys))
    w = windows.filter(pl.col("excluded").is_null() & pl.col("gpu_instance").is_null())
    if not w.height:
        return None
    aligned = w.group_by(list(GPU)).len().get_column("len").max() > 1
    wkeys = keys + (["window_start"] if aligned else [])
    gpu_id = pl.concat_str([pl.col("host").fill_null("?"), pl.col("gpu").cast(pl.String).fill_null("?"),
                            pl.col("gpu_instance").fill_null("")], separator="/")
    util = pl.coalesce(pl.col("gpu_util_mean_ratio"), pl.col("gr_engine_active_mean_ratio"))
    w = w.with_columns(util.alias("_util"), gpu_id.alias("_gpu_id"))
    w = w.with_columns(
        pl.col("_util").median().over(wkeys).alias("_group_util"),
        pl.col("_gpu_id").n_unique().over(wkeys).alias("group_gpus"),
        pl.col("span_s").sum().over(wkeys).alias("group_gpu_s"),
        *[pl.col(c).median().over(wkeys).alias(f"{c}_group_median") for c, _l in METRICS],
        *[pl.col(c).count().over(wkeys).alias(f"_{c}_n") for c, _l in METRICS],
        *[pl.col(c).median().over(wkeys).alias(f"{c}_group_median")
          for c in ("gpu_temp_mean_c", "power_limit_w")],
    )
    w = w.with_columns([(pl.col(c) - pl.col(f"{c}_group_median")).abs().median().over(wkeys).alias(f"_{c}_mad")
                        for c, _l in METRICS])
    busy = (pl.col("_group_util") >= th["busy_util"]) & (pl.col("_util") >= th["busy_util"])
    lags = []
    for c, _l in METRICS:
        med = pl.col(f"{c}_group_median")
        lag = 1.0 - pl.col(c) / med
        ok = (pl.lit(c in compared) & (pl.col(f"_{c}_n") >= th["min_group_gpus"]) & (med > 0) & (lag >= th["min_lag"])
              & ((med - pl.col(c)) > th["mad_k"] * MAD_TO_SIGMA * pl.col(f"_{c}_mad")) & busy)
        lags.append(pl.when(ok.fill_null(False)).then(lag).otherwise(None).alias(f"{c}_lag"))
    w = w.with_columns(lags)
    pace = pl.max_horizontal([pl.col(f"{c}_lag") for c in PACE])
    w = w.with_columns(
        pl.any_horizontal([pl.col(f"{c}_lag").is_not_null() for c, _l in METRICS]).alias("lagging"),
        pl.coalesce(pace, pl.col("power_mean_w_lag")).alias("pace_lag"),
    )
    return w.drop([c for c in w.columns if c.startswith("_") and c not in ("_gpu_id",)]).drop("_gpu_id")


def find_stragglers(windows, keys=("host",), overrides: dict[str, Any] | None = None,
                    metrics: tuple[str, ...] | None = None):
    """Straggler episodes (one row per GPU and run of at least ``min_windows`` consecutive
    lagging windows), worst loss first; an empty frame when there is none. ``keys``: the columns
    that define a group; ``metrics``: as :func:`window_lags` (see the module docstring)."""
    import polars as pl

    from ridgeline.analyzer.fleet.throttle import SHARE_COLUMNS

    th = thresholds(overrides)
    keys = list(keys)
    w = window_lags(windows, keys, overrides, metrics) if windows is not None and windows.height else None
    if w is None or not w.filter(pl.col("lagging")).height:
        return pl.DataFrame(schema={c: pl.Float64 for c in EPISODE_COLUMNS}).clear()
    gpu = list(GPU)
    w = w.sort([*gpu, "window_start"], nulls_last=True)
    prev_flag = pl.col("lagging").shift(1).over(gpu).fill_null(False)
    prev_end = pl.col("window_end").shift(1).over(gpu)
    new = pl.col("lagging") & (~prev_flag | (prev_end != pl.col("window_start")).fill_null(True))
    w = w.with_columns(new.cast(pl.Int64).cum_sum().over(gpu).alias("_episode")).filter(pl.col("lagging"))
    weight = pl.col("span_s")

    def wmean(col: str):
        den = pl.when(pl.col(col).is_not_null()).then(weight).otherwise(None).sum()
        return pl.when(den > 0).then((pl.col(col) * weight).sum() / den).otherwise(None)

    present = set(w.columns)
    shares = [c for c in SHARE_COLUMNS if c in present]
    group = pl.concat_str([pl.format("{}:{}", pl.lit(k.removeprefix("by:")), pl.col(k).cast(pl.String).fill_null("?")) for k in keys],
                          separator=" ")
    out = w.with_columns(group.alias("group")).group_by([*gpu, "_episode"]).agg(
        pl.col("group").first(),
        pl.col("uuid").max(), pl.col("model").max(),
        pl.col("window_start").min().alias("span_start"),
        pl.col("window_end").max().alias("span_end"),
        pl.len().alias("windows"),
        pl.col("span_s").sum().alias("observed_s"),
        pl.col("group_gpus").max(),
        pl.col("group_gpu_s").sum(),
        (pl.col("group_gpu_s") * pl.col("pace_lag").fill_null(0.0)).sum().alias("lost_gpu_s"),
        *[wmean(c).alias(c) for c in ("pace_lag",)],
        *[wmean(f"{c}{s}").alias(f"{c}{s}") for c, _l in METRICS for s in ("", "_group_median", "_lag")],
        *[wmean(c).alias(c) for c in ("gpu_temp_mean_c", "gpu_temp_mean_c_group_median", "power_limit_w_group_median")
          if c in present],
        *[pl.col(c).max().alias(c) for c in ("gpu_temp_max_c", "power_limit_w") if c in present],
        *([pl.col("clock_reason_samples").sum()] if "clock_reason_samples" in present else []),
        *[wmean(c).alias(c) for c in shares],
    ).filter(pl.col("windows") >= th["min_windows"])
    out = out.with_columns(
        pl.concat_str([pl.when(pl.col(f"{c}_lag").is_not_null()).then(pl.lit(c)) for c, _l in METRICS],
                      separator=",", ignore_nulls=True).alias("lagging"),
    ).drop("_episode")
    return out.sort(["lost_gpu_s", *gpu], descending=[True, False, False, False], nulls_last=True)
