"""The points a roofline draws, from a finished result: one per kernel name (totals over its
launches) or one per launch, with the reason a kernel cannot be drawn; drawing-side only."""

from __future__ import annotations

import math
from typing import Any

from ridgeline.analyzer.kernels.latency import view_bound, view_bound_expr
from ridgeline.render.plot_style import _with_kind


# ----------------------------------------------------------------------------------------
# kernel points (aggregated per name, or per launch) -- drawing-side only
# ----------------------------------------------------------------------------------------
def projected_points(projection) -> list[dict[str, Any]]:
    """One point per kernel name where a ``--what-if`` projection puts it (projected FLOPs over
    projected DRAM bytes, projected FLOPs over projected time), coloured by its measured bound."""
    import polars as pl

    df = getattr(projection, "launches", None)
    if df is None or not df.height:
        return []
    total = df.get_column("duration_s").sum() or 0.0
    ok = pl.col("projected_flops").is_not_null() & pl.col("projected_dram_bytes").is_not_null()
    g = df.filter(ok).group_by("kernel_name").agg(
        pl.col("projected_flops").sum().alias("_f"), pl.col("projected_dram_bytes").sum().alias("_b"),
        pl.col("projected_duration_s").sum().alias("_t"), pl.col("duration_s").sum().alias("_d"),
    )
    bound = {r["kernel_name"]: r["bound"] for r in projection.kernels.select("kernel_name", "bound").to_dicts()}
    out = []
    for r in g.iter_rows(named=True):
        if not r["_f"] or not r["_b"] or not r["_t"]:
            continue
        out.append({"name": r["kernel_name"], "x": r["_f"] / r["_b"], "y": r["_f"] / r["_t"],
                    "share": (r["_d"] or 0.0) / total if total else 0.0, "bound": bound.get(r["kernel_name"]) or "unknown"})
    return sorted(out, key=lambda p: -p["share"])


def kernel_points(result, *, per_launch: bool = False) -> list[dict[str, Any]]:
    """The points a roofline draws for one result, biggest share of GPU time first.

    Each point: ``name`` (full), ``short`` (label), ``x`` (FLOP/byte at DRAM), ``y`` (achieved
    FLOP/s), ``share`` (0..1 of GPU time), ``bound``. Per name, x and y are totals over the
    launches (total FLOPs / total DRAM bytes, total FLOPs / total time); share and bound come
    from the SUMMARY table when present. Names whose intensity or throughput is missing are
    returned with ``x``/``y`` = None (the plot counts them instead of drawing them).
    """
    import polars as pl

    kernels = result.kernels
    summary = result.summary
    if kernels is None and summary is None:
        return []
    if kernels is not None:
        kernels = _with_kind(kernels)
    if kernels is None:
        # summary only: y from the time-weighted fraction of the roof at that intensity
        rows = []
        for r in summary.iter_rows(named=True):
            x = r.get("intensity_dram")
            y = None
            if x is not None and r.get("roof_fraction") is not None:
                roof = _attainable(result, x, r.get("precision"))
                y = None if roof is None else r["roof_fraction"] * roof
            rows.append(
                {
                    "name": r.get("kernel_name") or r.get("short_name"),
                    "short": r.get("kernel_label") or r.get("short_name") or r.get("kernel_name"),
                    "x": x,
                    "y": y,
                    "share": r.get("time_share") or 0.0,
                    "bound": view_bound(r.get("bound"), r.get("latency_kind")) or "unknown",
                    "launches": r.get("launches"),
                }
            )
        return _clean_points(rows)

    total = kernels.select(pl.col("duration_s").sum()).item() or 0.0
    if per_launch:
        df = kernels.select(
            pl.col("kernel_name").alias("name"),
            _label_expr(kernels).alias("short"),
            pl.col("intensity_dram").alias("x"),
            pl.col("achieved_flops_per_s").alias("y"),
            (pl.col("duration_s") / total if total else pl.lit(0.0)).alias("share"),
            view_bound_expr().fill_null("unknown").alias("bound"),
            pl.lit(1).alias("launches"),
            pl.col("intensity_l2").alias("x_l2"),
            pl.col("intensity_l1").alias("x_l1"),
            _why(pl.col("flops").is_not_null() & pl.col("dram_bytes").is_not_null(), pl.col("flops"), pl.col("dram_bytes")),
        )
        return _clean_points(df.to_dicts())

    # one point per kernel name; the grouping key follows the SUMMARY table
    key = "kernel_name"
    if summary is not None and summary.height and "short_name" in summary.columns:
        if summary.height == kernels.select(pl.col("short_name").n_unique()).item() and (
            summary.height != kernels.select(pl.col("kernel_name").n_unique()).item()
        ):
            key = "short_name"
    flops_ok = pl.col("flops").is_not_null() & pl.col("dram_bytes").is_not_null()
    agg = kernels.group_by(key, maintain_order=True).agg(
        pl.col("kernel_name").first().alias("name"),
        _label_expr(kernels).first().alias("short"),
        pl.col("flops").filter(flops_ok).sum().alias("_f"),
        pl.col("dram_bytes").filter(flops_ok).sum().alias("_b"),
        pl.col("duration_s").filter(pl.col("flops").is_not_null()).sum().alias("_tf"),
        pl.col("duration_s").sum().alias("_t"),
        pl.len().alias("launches"),
        view_bound_expr().fill_null("unknown").mode().first().alias("_bound"),
        flops_ok.any().alias("_ok"),
        *[
            (
                pl.col("flops").filter(pl.col("flops").is_not_null() & pl.col(b).is_not_null()).sum()
                / pl.col(b).filter(pl.col("flops").is_not_null() & pl.col(b).is_not_null()).sum()
            ).alias(f"x_{lvl}")
            for lvl, b in (("l2", "l2_bytes"), ("l1", "l1_bytes"))
        ],
    )
    agg = agg.with_columns(
        pl.when(pl.col("_ok") & (pl.col("_b") > 0)).then(pl.col("_f") / pl.col("_b")).alias("x"),
        pl.when(pl.col("_ok") & (pl.col("_tf") > 0)).then(pl.col("_f") / pl.col("_tf")).alias("y"),
        (pl.col("_t") / total if total else pl.lit(0.0)).alias("share"),
        _why(pl.col("_ok"), pl.col("_f"), pl.col("_b")),
    )
    if summary is not None and summary.height and key in summary.columns:
        summary = _with_kind(summary)
        if "bound" in summary.columns:
            summary = summary.with_columns(view_bound_expr().alias("bound"))
        cols = [key] + [c for c in ("time_share", "bound") if c in summary.columns]
        agg = agg.join(summary.select(cols).unique(key, keep="first"), on=key, how="left")
        if "time_share" in agg.columns:
            agg = agg.with_columns(pl.coalesce("time_share", "share").alias("share"))
        if "bound" in agg.columns:
            agg = agg.with_columns(pl.coalesce("bound", "_bound").alias("bound"))
    if "bound" not in agg.columns:
        agg = agg.with_columns(pl.col("_bound").alias("bound"))
    rows = agg.select("name", "short", "x", "y", "share", "bound", "launches", "why", "x_l2", "x_l1").to_dicts()
    return _clean_points(rows)


def _why(ok, flops, dram_bytes):
    """Why a point cannot sit on log axes: counters missing, or a zero it cannot show."""
    import polars as pl

    return (
        pl.when(~ok).then(pl.lit("counters missing"))
        .when(flops <= 0).then(pl.lit("no FLOPs"))
        .when(dram_bytes <= 0).then(pl.lit("no DRAM bytes"))
        .otherwise(pl.lit(None, dtype=pl.String))
        .alias("why")
    )


def _label_expr(frame):
    """A kernel's display label: ``kernel_label`` where the table has it, else its short name."""
    import polars as pl

    return pl.coalesce("kernel_label", "short_name") if "kernel_label" in frame.columns else pl.col("short_name")


def _clean_points(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for r in rows:
        for k in ("x", "y", "x_l2", "x_l1"):
            v = r.get(k)
            r[k] = float(v) if v is not None and math.isfinite(float(v)) and float(v) > 0 else None
        if r["x"] is None or r["y"] is None:
            r["why"] = r.get("why") or "counters missing"
        else:
            r["why"] = None
        r["share"] = float(r.get("share") or 0.0)
        r["bound"] = r.get("bound") or "unknown"
        r["short"] = r.get("short") or r.get("name") or "?"
        r["name"] = r.get("name") or r["short"]
    rows.sort(key=lambda r: -r["share"])
    return rows


def _attainable(result, x: float, precision: str | None) -> float | None:
    bw = next((r.value for r in result.roofs if r.kind == "bandwidth" and r.level == "dram"), None)
    peaks = [r for r in result.roofs if r.kind == "compute"]
    peak = next((r.value for r in peaks if r.precision == precision), None)
    if peak is None and peaks:
        peak = max(r.value for r in peaks)
    if bw is None or peak is None:
        return None
    return min(peak, x * bw)

