"""What RL112 (launch-bound) and RL113 (stall-bound) share: the latency-bound launches of one kind.

The classifier (ridgeline.analyzer.kernels.roofline) sets ``bound = "latency"`` and ``latency_kind``;
tables built by hand without ``latency_kind`` get it from ``duration_s`` against the default
threshold (ridgeline.analyzer.kernels.latency.with_latency_kind), so both rules see the same split.
"""

from __future__ import annotations

from typing import Any

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context


def latency_launches(ctx: Context, kind: str, *, max_s: float):
    """(all launches, the latency-bound launches of ``kind``) or None without a kernel table."""
    import polars as pl

    from ridgeline.analyzer.kernels.latency import with_latency_kind

    df = K.launches(ctx)
    if df is None:
        return None
    cache = K._cache(ctx)
    key = ("latency_kind", max_s)
    if key not in cache:
        cache[key] = with_latency_kind(df, max_s=max_s)
    df = cache[key]
    lat = df.filter((pl.col("bound").fill_null("") == "latency") & (pl.col("latency_kind") == kind))
    return df, lat


def top_groups(lat: Any):
    """Latency-bound launches grouped by what the kernel is, most time first."""
    import polars as pl

    label = "kernel_label" if "kernel_label" in lat.columns else "subject"
    return (
        lat.group_by(pl.coalesce(pl.col(label), pl.col("subject")).alias("who"))
        .agg(t=pl.col("duration_s").sum(), n=pl.len())
        .sort(["t", "who"], descending=[True, False])
    )


def gap_to_roof(lat: Any) -> float | None:
    """Their time minus their time at the roof (never below the launch floor), summed over the
    launches placed on the roofline; None when none was (a bound from ncu's Speed-of-Light
    throughputs has no roof to measure a gap to)."""
    import polars as pl

    if lat.get_column("time_to_roof_s").is_null().all():
        return None
    return float(lat.select((pl.col("duration_s") - pl.col("time_to_roof_s")).clip(lower_bound=0.0).sum()).item() or 0.0)
