"""The fleet's ranking and the words for a GPU and a span: the wasted GPU-hours per GPU or host
(``fleet_summary``, on the classification :func:`waste_columns` shares with the group report),
and how a finding names a GPU and a window (``describe_subject``, ``span_text``).

Kept apart from :mod:`ridgeline.analyzer.fleet.telemetry`, which reduces the long table to
windows; this module reads those windows.
"""

from __future__ import annotations

from typing import Any

from ridgeline.analyzer.fleet.telemetry import KEYS


def waste_columns():
    """Per window, the wasted seconds by cause (the one classification fleet and group reports
    share): ``_bti`` busy with idle tensor cores (windows not excluded, with profiling data),
    ``_mb`` the part of it with DRAM busy (memory-bound), ``_ai`` idle with memory allocated."""
    import polars as pl

    ok = pl.col("excluded").is_null() & pl.col("has_profiling")
    return (
        pl.when(ok).then(pl.col("busy_tensor_idle_s")).otherwise(0.0).fill_null(0.0).alias("_bti"),
        pl.when(ok).then(pl.min_horizontal(pl.col("memory_bound_s"), pl.col("busy_tensor_idle_s")))
        .otherwise(0.0).fill_null(0.0).alias("_mb"),
        pl.col("allocated_idle_s").fill_null(0.0).alias("_ai"),
    )


def fleet_summary(windows, *, by: str = "gpu"):
    """Rank GPUs (``by="gpu"``) or hosts (``by="host"``) by wasted GPU-hours.

    wasted = the hours of the window classes that throw GPU time away
    (:data:`ridgeline.analyzer.fleet.classes.WASTED_CLASSES`: idle with memory allocated, or
    unavailable); underused = the hours of the busy classes far from the tensor/FP roofs
    (memory-bound, I/O-bound, busy-low-throughput, busy): work done badly, never waste.
    ``busy_tensor_idle_h`` / ``memory_bound_h`` / ``allocated_idle_h`` are the per-sample states
    (:func:`waste_columns`), kept as evidence: ``memory_bound_h`` is the part of busy_tensor_idle_h
    during which DRAM was busy too.
    Columns: host[, gpu, gpu_instance], gpus, windows, span_h, busy_tensor_idle_h,
    memory_bound_h, allocated_idle_h, idle_allocated_h, unavailable_h, wasted_gpu_h,
    underused_gpu_h, wasted_share, underused_share (of span), rank.
    """
    import polars as pl

    from ridgeline.analyzer.fleet.classes import UNDERUSED_CLASSES, WASTED_CLASSES

    keys = ["host"] if by == "host" else list(KEYS)
    if windows is None or windows.height == 0:
        return pl.DataFrame(schema={**{k: pl.String for k in keys}, "wasted_gpu_h": pl.Float64})
    w = windows.with_columns(
        *waste_columns(),
        pl.concat_str([pl.col("host").fill_null("?"), pl.col("gpu").cast(pl.String).fill_null("?"),
                       pl.col("gpu_instance").fill_null("")], separator="/").alias("_gpu_id"),
    )
    klass = pl.col("class") if "class" in w.columns else pl.lit(None, pl.String)
    span = pl.col("span_s").fill_null(0.0)
    out = w.group_by(keys).agg(
        pl.col("_gpu_id").n_unique().alias("gpus"),
        pl.len().alias("windows"),
        (pl.col("span_s").sum() / 3600).alias("span_h"),
        (pl.col("_bti").sum() / 3600).alias("busy_tensor_idle_h"),
        (pl.col("_mb").sum() / 3600).alias("memory_bound_h"),
        (pl.col("_ai").sum() / 3600).alias("allocated_idle_h"),
        *[(pl.when(klass == c).then(span).otherwise(0.0).sum() / 3600).alias(f"{c}_h")
          for c in sorted(set(WASTED_CLASSES))],
        (pl.when(klass.is_in(list(UNDERUSED_CLASSES))).then(span).otherwise(0.0).sum() / 3600).alias("underused_gpu_h"),
    ).with_columns(
        pl.sum_horizontal([pl.col(f"{c}_h") for c in WASTED_CLASSES]).alias("wasted_gpu_h"),
    ).with_columns(
        pl.when(pl.col("span_h") > 0).then(pl.col("wasted_gpu_h") / pl.col("span_h")).otherwise(None).alias("wasted_share"),
        pl.when(pl.col("span_h") > 0).then(pl.col("underused_gpu_h") / pl.col("span_h")).otherwise(None)
        .alias("underused_share"),
    ).sort(["wasted_gpu_h", "underused_gpu_h", *keys], descending=[True, True] + [False] * len(keys), nulls_last=True)
    return out.with_columns(pl.int_range(1, pl.len() + 1).alias("rank"))


def describe_subject(row: dict[str, Any], *, with_window: bool = False) -> str:
    """'host:node1 gpu:3' (+ ' gi:2') (+ ' window:2026-01-01T00:00Z..00:05Z')."""
    parts = [f"host:{row.get('host') or '?'}", f"gpu:{'?' if row.get('gpu') is None else row.get('gpu')}"]
    if row.get("gpu_instance") is not None:
        parts.append(f"gi:{row['gpu_instance']}")
    if with_window and row.get("window_start") is not None:
        parts.append("window:" + span_text(row["window_start"], row.get("window_end")))
    return " ".join(parts)


def span_text(start, end) -> str:
    """``2026-01-05T08:00:00Z..2026-01-05T08:05:00Z``; for inputs without absolute time (placed at
    1970 by the readers) the time since the first tick: ``+0:00:00..+0:05:00 (relative time)``."""
    from ridgeline.fmt import clock, is_relative

    def fmt(t):
        return clock(t, "%Y-%m-%dT%H:%M:%SZ", seconds=True)

    tail = " (relative time)" if is_relative(start) else ""
    if end is None:
        return fmt(start) + tail
    return f"{fmt(start)}..{fmt(end)}{tail}"
