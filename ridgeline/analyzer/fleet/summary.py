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

    wasted = busy-but-tensor-idle seconds (windows not excluded, with profiling data) +
    allocated-but-idle seconds: an upper bound of GPU time that did no tensor work.
    ``memory_bound_h`` is the part of busy_tensor_idle_h during which DRAM was busy too
    (per window the smaller of the memory-bound and busy-tensor-idle seconds): time spent
    moving bytes, where the lever is batching or fewer bytes rather than finding idle GPUs.
    Columns: host[, gpu, gpu_instance], gpus, windows, span_h, busy_tensor_idle_h,
    memory_bound_h, allocated_idle_h, wasted_gpu_h, wasted_share (of span), rank.
    """
    import polars as pl

    keys = ["host"] if by == "host" else list(KEYS)
    if windows is None or windows.height == 0:
        return pl.DataFrame(schema={**{k: pl.String for k in keys}, "wasted_gpu_h": pl.Float64})
    w = windows.with_columns(
        *waste_columns(),
        pl.concat_str([pl.col("host").fill_null("?"), pl.col("gpu").cast(pl.String).fill_null("?"),
                       pl.col("gpu_instance").fill_null("")], separator="/").alias("_gpu_id"),
    )
    out = w.group_by(keys).agg(
        pl.col("_gpu_id").n_unique().alias("gpus"),
        pl.len().alias("windows"),
        (pl.col("span_s").sum() / 3600).alias("span_h"),
        (pl.col("_bti").sum() / 3600).alias("busy_tensor_idle_h"),
        (pl.col("_mb").sum() / 3600).alias("memory_bound_h"),
        (pl.col("_ai").sum() / 3600).alias("allocated_idle_h"),
    ).with_columns(
        (pl.col("busy_tensor_idle_h") + pl.col("allocated_idle_h")).alias("wasted_gpu_h"),
    ).with_columns(
        pl.when(pl.col("span_h") > 0).then(pl.col("wasted_gpu_h") / pl.col("span_h")).otherwise(None).alias("wasted_share"),
    ).sort(["wasted_gpu_h", *keys], descending=[True] + [False] * len(keys), nulls_last=True)
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
