"""Helpers shared by the telemetry rules (RL2xx). Not a rule module (no ``rlNNN_`` prefix).

Telemetry rules read ``ctx.windows`` (the WINDOW table of
:func:`ridgeline.analyzer.fleet.telemetry.reduce_windows`, a polars DataFrame). ``ctx.telemetry``
(the long table, DataFrame or LazyFrame) is not needed by them: everything they judge has
been reduced per window, so a fleet-day never has to be in memory for the rules to run.
"""

from __future__ import annotations

from typing import Any


KEYS = ("host", "gpu", "gpu_instance")


def windows(ctx) -> Any:
    """The WINDOW table or None when there is no telemetry."""
    w = getattr(ctx, "windows", None)
    if w is None or not hasattr(w, "height") or w.height == 0:
        return None
    return w


def usable(w):
    """Windows fit for performance rules: not excluded by RL205's checks."""
    import polars as pl

    return w.filter(pl.col("excluded").is_null())


def measured_windows(ctx, *columns: str, where=None):
    """Windows fit for performance rules (:func:`usable`) in which every one of ``columns`` was
    measured (not null) and ``where`` (a polars expression) holds; None without telemetry."""
    import polars as pl

    w = windows(ctx)
    if w is None:
        return None
    cond = pl.all_horizontal([pl.col(x).is_not_null() for x in columns]) if columns else pl.lit(True)
    if where is not None:
        cond = cond & where
    return usable(w).filter(cond)


def spans(w, flag):
    """Merge consecutive flagged windows of each GPU into spans.

    ``flag``: polars boolean expression over window columns. Returns one row per span with
    keys, ``span_start``, ``span_end``, ``windows`` and the sums/means rules need.
    """
    import polars as pl

    if w is None or w.height == 0:
        return None
    w = w.sort([*KEYS, "window_start"], nulls_last=True).with_columns(flag.fill_null(False).alias("_flag"))
    prev_flag = pl.col("_flag").shift(1).over(list(KEYS)).fill_null(False)
    prev_end = pl.col("window_end").shift(1).over(list(KEYS))
    new = pl.col("_flag") & (~prev_flag | (prev_end != pl.col("window_start")).fill_null(True))
    w = w.with_columns(new.cast(pl.Int64).cum_sum().over(list(KEYS)).alias("_span"))
    w = w.filter(pl.col("_flag"))
    if w.height == 0:
        return w
    weight = pl.col("span_s")

    def wmean(col: str):
        den = pl.when(pl.col(col).is_not_null()).then(weight).otherwise(None).sum()
        return pl.when(den > 0).then((pl.col(col) * weight).sum() / den).otherwise(None)

    return w.group_by([*KEYS, "_span"]).agg(
        pl.col("window_start").min().alias("span_start"),
        pl.col("window_end").max().alias("span_end"),
        pl.len().alias("windows"),
        pl.col("span_s").sum().alias("observed_s"),
        pl.col("uuid").max().alias("uuid"),
        pl.col("model").max().alias("model"),
        *[pl.col(c).sum().alias(c) for c in ("busy_tensor_idle_s", "memory_bound_s", "allocated_idle_s", "idle_s", "busy_s")],
        *[wmean(c).alias(c) for c in ("gpu_util_mean_ratio", "gr_engine_active_mean_ratio", "sm_active_mean_ratio",
                                       "tensor_active_mean_ratio", "dram_active_mean_ratio", "fp32_active_mean_ratio",
                                       "fp16_active_mean_ratio", "fb_used_max_bytes")],
    ).sort([*KEYS, "span_start"], nulls_last=True)


def per_gpu(span_rows, seconds_col: str):
    """Group span rows by GPU: list of (key dict, list of span dicts), largest total first."""
    groups: dict[tuple, list[dict]] = {}
    for r in span_rows.iter_rows(named=True):
        groups.setdefault((r["host"], r["gpu"], r["gpu_instance"]), []).append(r)
    out = [(dict(zip(KEYS, k)), v) for k, v in groups.items()]
    out.sort(key=lambda kv: -sum(s.get(seconds_col) or 0.0 for s in kv[1]))
    return out


def span_text(start, end) -> str:
    """:func:`ridgeline.analyzer.fleet.summary.span_text` (imported on use: the registry imports every rule for any input)."""
    from ridgeline.analyzer.fleet.summary import span_text as text

    return text(start, end)


def subject(key: dict[str, Any]) -> str:
    from ridgeline.analyzer.fleet.summary import describe_subject

    return describe_subject(key)


def spans_text(spans_: list[dict], limit: int = 3) -> str:
    shown = [span_text(s["span_start"], s["span_end"]) for s in spans_[:limit]]
    more = f" (+{len(spans_) - limit} more)" if len(spans_) > limit else ""
    return ", ".join(shown) + more


def wavg(spans_: list[dict], col: str, weight: str = "observed_s") -> float | None:
    num = den = 0.0
    for s in spans_:
        v, w = s.get(col), s.get(weight) or 0.0
        if v is not None and v == v and w:  # skip missing and NaN
            num += v * w
            den += w
    return num / den if den else None


def pct(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{100 * x:.0f}%"


def minutes(s: float | None) -> str:
    if s is None:
        return "n/a"
    if s >= 5400:
        return f"{s / 3600:.1f} h"
    if s >= 90:
        return f"{s / 60:.1f} min"
    return f"{s:.0f} s"


def total_span_s(w) -> float:
    return float(w.get_column("span_s").sum() or 0.0)
