"""Pictures drawn from a finished :class:`~ridgeline.result.AnalysisResult`.

Drawing is separate from analysis: every function here takes results that the pipeline
already built and returns a matplotlib :class:`~matplotlib.figure.Figure`; nothing is parsed
or classified here. :func:`save_figure` writes a figure, choosing the format by suffix.

* :func:`roofline_figure` -- log-log roofline: DRAM slope (plus L2/L1 slopes when those
  roofs exist), one flat compute roof per precision, ridge points labelled, kernels as
  points (area = share of GPU time, colour = bound, marker = input).
* :func:`telemetry_figure` -- per GPU, GPU-Util against tensor-active and DRAM-active over
  time, with the spans that rules flagged shaded.

matplotlib is imported inside the functions (Agg canvas, no pyplot state), so importing this
module is cheap.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable, Sequence

from ridgeline import fmt
from ridgeline.analyzer.latency import VIEW_BOUNDS, VIEW_LABELS, view_bound, view_bound_expr
from ridgeline.errors import UsageError

# Okabe-Ito, the colour-blind-safe palette (Okabe & Ito 2008).
OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky_blue": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}

# points are coloured by the bound every view shows (ridgeline.analyzer.latency.view_bound): the
# latency class split into launch-bound and stall-bound
BOUND_COLORS = {
    "memory": OKABE_ITO["blue"],
    "compute": OKABE_ITO["vermillion"],
    "launch": OKABE_ITO["purple"],
    "stall": "#009E73",  # Okabe-Ito bluish green
    "latency": OKABE_ITO["purple"],
    "unknown": "#8C8C8C",
}
BOUND_LABELS = {**VIEW_LABELS, "unknown": "unknown bound"}
LATENCY_BOUNDS = ("launch", "stall", "latency")  # no roof explains their time
LATENCY_MARKER = "X"  # latency-bound points get a marker of their own (single input) or a hollow one

PRECISION_LABELS = {
    "fp64": "FP64 (CUDA cores)",
    "fp32": "FP32 (CUDA cores)",
    "fp16": "FP16 (CUDA cores)",
    "tf32_tensor": "TF32 tensor",
    "fp16_tensor": "FP16/BF16 tensor",
    "fp8_tensor": "FP8 tensor",
    "int8_tensor": "INT8 tensor (op/s)",
    "fp64_tensor": "FP64 tensor",
}
PRECISION_COLORS = {
    "fp64": "#000000",
    "fp64_tensor": "#555555",
    "fp32": OKABE_ITO["green"],
    "fp16": OKABE_ITO["sky_blue"],
    "tf32_tensor": OKABE_ITO["sky_blue"],
    "fp16_tensor": OKABE_ITO["purple"],
    "fp8_tensor": OKABE_ITO["orange"],
    "int8_tensor": "#A6761D",
}
LEVEL_STYLES = {"dram": "-", "l2": "--", "l1": ":"}
LEVEL_LABELS = {"dram": "DRAM", "l2": "L2", "l1": "L1"}
SOURCE_LABELS = {
    "ncu": "measured by ncu",
    "ncu-device-attributes": "ncu device attributes",
    "catalogue": "catalogue",
    "derived-from-device-attributes": "derived from device attributes",
}
# one marker per input on a multi-input plot
INPUT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h")

SAVE_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
RASTERIZE_ABOVE = 5000  # points per input beyond which vector outputs embed the markers as an image

_FIG_DPI = 100


# ----------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------
def plain(text: object) -> str:
    """Text from an input, made safe for matplotlib: ``$`` would start mathtext (``\\$`` is drawn
    as ``$``); control characters shown escaped (ridgeline.render.safe_text.inline), as in every
    text format. Outside mathtext matplotlib draws a backslash as it is, so none is doubled."""
    from ridgeline.render.safe_text import inline

    return inline(text).replace("$", r"\$")


def si(value: float | None, unit: str, digits: int = 3) -> str:
    """``989e12, "FLOP/s"`` -> ``"989 TFLOP/s"``."""
    return fmt.si(value, unit, fmt.PLOT, digits=digits)


def shorten(name: str, width: int = 32) -> str:
    """A kernel label short enough to sit next to a point."""
    from ridgeline.render.safe_text import inline

    name = " ".join(inline(name).split())
    return name if len(name) <= width else name[: width - 1] + "\u2026"


def _new_figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=_FIG_DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _finite_pos(values: Iterable[Any]) -> list[float]:
    out = []
    for v in values:
        if v is None:
            continue
        try:
            f = float(v)
        except (TypeError, ValueError):
            continue
        if math.isfinite(f) and f > 0:
            out.append(f)
    return out


def _decade_floor(v: float) -> float:
    return 10.0 ** math.floor(math.log10(v))


def _decade_ceil(v: float) -> float:
    return 10.0 ** math.ceil(math.log10(v))


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


# ----------------------------------------------------------------------------------------
# roofline
# ----------------------------------------------------------------------------------------
def _as_labelled(results) -> list[tuple[str, Any]]:
    if isinstance(results, (list, tuple)):
        out = []
        for i, item in enumerate(results):
            if isinstance(item, tuple) and len(item) == 2:
                out.append((str(item[0]), item[1]))
            else:
                out.append((_default_label(item, i), item))
        return out
    return [(_default_label(results, 0), results)]


def _default_label(result, i: int) -> str:
    if getattr(result, "inputs", None):
        ncu = [inp for inp in result.inputs if str(inp.kind).startswith("ncu")]
        names = [Path(inp.path).name for inp in (ncu or result.inputs)]
        return names[0] if len(names) == 1 else f"{names[0]} +{len(names) - 1}"
    return f"input {i + 1}"


def _roof_sets(labelled) -> list[tuple[str, list]]:
    """Distinct GPUs among the inputs, with the roofs used on each."""
    seen: dict[str, list] = {}
    for _label, res in labelled:  # the union over inputs on the same GPU (an fp8 run adds its roof)
        if res.roofs:
            seen.setdefault(res.gpu_name or "GPU", []).extend(res.roofs)
    return [(name, distinct_roofs(roofs)) for name, roofs in seen.items()]


def distinct_roofs(roofs) -> list:
    """One roof per (kind, precision or level): several devices (or clocks) may each have
    measured one; the highest is drawn and its detail says how many there were."""
    import dataclasses

    groups: dict[tuple, list] = {}
    for r in roofs:
        groups.setdefault((r.kind, r.precision, r.level), []).append(r)
    out = []
    for group in groups.values():
        best = max(group, key=lambda r: r.value)
        if len(group) > 1:
            lo = min(r.value for r in group)
            note = f"highest of {len(group)}, lowest {si(lo, best.unit)}"
            best = dataclasses.replace(best, detail=note)
        out.append(best)
    return out


def roofline_figure(
    results,
    *,
    per_launch: bool = False,
    top: int = 8,
    compare_gpu=None,
    title: str | None = None,
    levels: bool = True,
    width: float = 10.0,
    height: float = 6.6,
    what_if=None,
):
    """Draw the roofline of one result, or of several ``(label, result)`` pairs on one plot.

    ``compare_gpu``: a catalogue :class:`~ridgeline.analyzer.gpus.GPU` (or a name for
    :func:`ridgeline.analyzer.gpus.lookup`) whose datasheet roofs are drawn in grey for
    comparison. Returns the Figure; artists carry gids a test can find: ``roof:bandwidth:<level>``,
    ``roof:compute:<precision>``, ``ridge:<precision>``, ``kernels:<input index>``,
    ``compare:...``, ``label:<input index>:<rank>``, ``level:l2`` / ``level:l1``.

    ``levels``: on a single-input plot, also mark the labelled kernels at their L2 and L1
    intensities (same FLOP/s, hollow markers joined to the DRAM point: the hierarchical
    roofline) when those byte counters exist. L2/L1 slopes are drawn when the result carries
    roofs for those levels.
    """
    import numpy as np
    from matplotlib.colors import to_rgba
    from matplotlib.lines import Line2D

    labelled = _as_labelled(results)
    if compare_gpu is not None and isinstance(compare_gpu, str):
        from ridgeline.analyzer.gpus import lookup

        compare_gpu, _note = lookup(compare_gpu)

    roof_sets = _roof_sets(labelled)
    points = [kernel_points(res, per_launch=per_launch) for _l, res in labelled]
    projected = projected_points(what_if) if what_if is not None and len(labelled) == 1 else []

    # ---- axis limits from roofs and points
    xs, ys = [], []
    for pts in points + [projected]:
        xs += [p["x"] for p in pts if p["x"] and p["y"]]
        ys += [p["y"] for p in pts if p["x"] and p["y"]]
    peaks_all, ridges_all, bws_all = [], [], []
    for _gpu, roofs in roof_sets:
        bw_dram = next((r.value for r in roofs if r.kind == "bandwidth" and r.level == "dram"), None)
        for r in roofs:
            if r.kind == "compute" and r.value > 0:
                peaks_all.append(r.value)
                if bw_dram:
                    ridges_all.append(r.value / bw_dram)
            elif r.kind == "bandwidth" and r.value > 0:
                bws_all.append(r.value)
    cmp_peaks: dict[str, float] = {}
    if compare_gpu is not None:
        present = {r.precision for _g, roofs in roof_sets for r in roofs if r.kind == "compute"}
        cmp_peaks = {
            p: v
            for p, v in (compare_gpu.peak_flops or {}).items()
            if v and (p in present or not present)
        }
        peaks_all += list(cmp_peaks.values())
        if compare_gpu.dram_bw_bytes_per_s:
            ridges_all += [v / compare_gpu.dram_bw_bytes_per_s for v in cmp_peaks.values()]
    xs_all = _finite_pos(xs + ridges_all)
    ys_all = _finite_pos(ys + peaks_all)
    xmin = _decade_floor(min(xs_all) / 3) if xs_all else 0.01
    xmax = _decade_ceil(max(xs_all) * 3) if xs_all else 1e4
    xmin = min(xmin, 0.1) if not xs else xmin
    ymax = _decade_ceil(max(ys_all) * 2) if ys_all else 1e15
    ymin_candidates = _finite_pos(ys + [b * xmin for b in bws_all])
    ymin = _decade_floor(min(ymin_candidates) / 2) if ymin_candidates else ymax / 1e6
    ymin = max(ymin, ymax / 1e9)

    fig = _new_figure(width, height)
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_xlabel("Arithmetic intensity at DRAM (FLOP/byte)", fontsize=11)
    ax.set_ylabel("Attainable / achieved throughput (FLOP/s)", fontsize=11)
    ax.grid(True, which="major", color="#DDDDDD", linewidth=0.7)
    ax.grid(True, which="minor", color="#F0F0F0", linewidth=0.5)
    ax.set_axisbelow(True)
    ax.tick_params(labelsize=10)

    roof_handles = []
    for gi, (gpu_name, roofs) in enumerate(roof_sets):
        prefix = f"{gpu_name}: " if len(roof_sets) > 1 else ""
        alpha = 1.0 if gi == 0 else 0.75
        gpu_style = None if gi == 0 else (0, (6, 2 + gi))  # later GPUs: dashed
        compute = sorted((r for r in roofs if r.kind == "compute" and r.value > 0), key=lambda r: r.value)
        bws = [r for r in roofs if r.kind == "bandwidth" and r.value > 0]
        top_peak = compute[-1].value if compute else ymax
        bw_dram = next((r.value for r in bws if r.level == "dram"), None)
        for r in sorted(bws, key=lambda r: ("dram", "l2", "l1").index(r.level) if r.level in ("dram", "l2", "l1") else 9):
            x_end = min(top_peak / r.value, xmax)
            (ln,) = ax.plot(
                [xmin, x_end],
                [r.value * xmin, r.value * x_end],
                color="#222222" if r.level == "dram" else "#666666",
                linestyle=(gpu_style if gpu_style and r.level == "dram" else LEVEL_STYLES.get(r.level or "", "-.")),
                linewidth=2.0 if r.level == "dram" else 1.4,
                alpha=alpha,
                label=f"{prefix}{LEVEL_LABELS.get(r.level or '', r.level)} {si(r.value, 'B/s')} "
                f"({SOURCE_LABELS.get(r.source, r.source)}"
                f"{', ' + r.detail.split(',')[0] if r.detail and r.detail.startswith('highest of') else ''})",
                zorder=2,
            )
            ln.set_gid(f"roof:bandwidth:{r.level}" + (f":{gi}" if gi else ""))
            roof_handles.append(ln)
        for r in compute:
            ridge = r.value / bw_dram if bw_dram else None
            x_start = ridge if ridge else xmin
            (ln,) = ax.plot(
                [x_start, xmax],
                [r.value, r.value],
                color=PRECISION_COLORS.get(r.precision or "", "#444444"),
                linewidth=2.0,
                linestyle=gpu_style or "-",
                alpha=alpha,
                label=f"{prefix}{PRECISION_LABELS.get(r.precision or '', r.precision)} "
                f"{si(r.value, 'FLOP/s')} ({SOURCE_LABELS.get(r.source, r.source)}"
                f"{', ' + r.detail.split(',')[0] if r.detail and r.detail.startswith('highest of') else ''})",
                zorder=2,
            )
            ln.set_gid(f"roof:compute:{r.precision}" + (f":{gi}" if gi else ""))
            roof_handles.append(ln)
            if ridge and gi == 0:
                (mk,) = ax.plot(
                    [ridge], [r.value], marker="o", markersize=6, markerfacecolor="white",
                    markeredgecolor=PRECISION_COLORS.get(r.precision or "", "#444444"),
                    markeredgewidth=1.6, linestyle="none", zorder=4,
                )
                mk.set_gid(f"ridge:{r.precision}")
                ax.annotate(
                    f"ridge {ridge:.3g} FLOP/B",
                    (ridge, r.value),
                    xytext=(-4, 5),
                    textcoords="offset points",
                    ha="right",
                    va="bottom",
                    fontsize=8.5,
                    color="#333333",
                    gid=f"ridge-label:{r.precision}",
                )

    if compare_gpu is not None and compare_gpu.dram_bw_bytes_per_s:
        bw = compare_gpu.dram_bw_bytes_per_s
        top_peak = max(cmp_peaks.values()) if cmp_peaks else ymax
        x_end = min(top_peak / bw, xmax)
        (ln,) = ax.plot(
            [xmin, x_end], [bw * xmin, bw * x_end], color="#999999", linestyle=(0, (6, 3)),
            linewidth=1.4, label=f"{compare_gpu.name} DRAM {si(bw, 'B/s')} (catalogue)", zorder=1,
        )
        ln.set_gid("compare:bandwidth:dram")
        roof_handles.append(ln)
        for prec, peak in sorted(cmp_peaks.items(), key=lambda kv: kv[1]):
            (ln,) = ax.plot(
                [peak / bw, xmax], [peak, peak], color="#999999", linestyle=(0, (6, 3)), linewidth=1.4,
                label=f"{compare_gpu.name} {PRECISION_LABELS.get(prec, prec)} {si(peak, 'FLOP/s')} (catalogue)",
                zorder=1,
            )
            ln.set_gid(f"compare:compute:{prec}")
            roof_handles.append(ln)

    # ---- kernels
    multi = len(labelled) > 1
    # the march: the same kernel across inputs, one series each (labelled once, at its last point)
    series = march_series(points, limit=min(max(top, 1), MARCH_MAX)) if multi and not per_launch else []
    in_series = {(i, id(p)) for chain in series for i, p in chain}
    to_label = []
    unplotted: dict[str, int] = {}
    input_handles = []
    bounds_seen: set[str] = set()
    scatters = []
    per_input_top = max(1, math.ceil(top / len(labelled))) if top > 0 else 0
    for i, ((label, _res), pts) in enumerate(zip(labelled, points)):
        drawable = [p for p in pts if p["x"] and p["y"]]
        for p in pts:
            if p["why"]:
                unplotted[p["why"]] = unplotted.get(p["why"], 0) + 1
        marker = INPUT_MARKERS[i % len(INPUT_MARKERS)] if multi else "o"
        bound_names = list(BOUND_COLORS)
        palette = np.array([to_rgba(BOUND_COLORS[b]) for b in bound_names])
        bounds_seen.update(p["bound"] for p in drawable)
        # latency-bound points: their own marker with one input, hollow in the input's marker with several
        for part, is_latency in (([p for p in drawable if p["bound"] not in LATENCY_BOUNDS], False),
                                 ([p for p in drawable if p["bound"] in LATENCY_BOUNDS], True)):
            if is_latency and not part:
                continue
            sizes = 28.0 + 1400.0 * np.clip(np.array([p["share"] for p in part], dtype=float), 0.0, 1.0)
            codes = np.array([bound_names.index(p["bound"]) if p["bound"] in BOUND_COLORS else
                              bound_names.index("unknown") for p in part], dtype=int)
            colors = palette[codes] if part else None
            style = dict(c=colors, edgecolors="white", linewidths=0.8)
            if is_latency:
                style = (dict(facecolors="none", edgecolors=colors, linewidths=1.6) if multi
                         else dict(c=colors, edgecolors="white", linewidths=0.8))
            coll = ax.scatter(
                np.array([p["x"] for p in part], dtype=float),
                np.array([p["y"] for p in part], dtype=float),
                s=sizes,
                marker=(LATENCY_MARKER if is_latency and not multi else marker),
                alpha=0.75,
                zorder=5,
                **style,
            )
            coll.set_gid(f"kernels:{i}" + (":latency" if is_latency else ""))
            if len(part) > RASTERIZE_ABOVE:  # keep SVG/PDF small: the markers become one image
                coll.set_rasterized(True)
            scatters.append((part, sizes))
        if multi:
            input_handles.append(
                Line2D([], [], marker=marker, linestyle="none", color="#555555", markersize=8, label=plain(label))
            )
        # each kernel's label is unique in its result (families.family_columns); cut to fit, the
        # cut labels are kept apart too (render.text.distinct_labels), so two kernels never read alike
        from ridgeline.render.text import distinct_labels as _distinct

        uniq = list(dict.fromkeys(str(p["short"]) for p in drawable if p["short"]))
        names = {str(p["short"]): str(p.get("name") or p["short"]) for p in drawable if p["short"]}
        width = 24 if multi else 30
        cut = {u: shorten(u, width) for u in uniq}
        counts: dict[str, int] = {}
        for v in cut.values():
            counts[v] = counts.get(v, 0) + 1
        clash = [u for u in uniq if counts[cut[u]] > 1]
        if clash:  # labels that cut to the same text keep the part that differs
            cut.update(zip(clash, _distinct(clash, width, [names[u] for u in clash])))
        seen_text: set[str] = set()
        for rank, p in enumerate(drawable):
            if len(seen_text) >= per_input_top:
                break
            if (i, id(p)) in in_series:  # a marching kernel is labelled once, by its series
                continue
            text = cut.get(str(p["short"]), label_text(p["short"]))
            if text not in seen_text:  # one label per kernel (per-launch points share their kernel's)
                seen_text.add(text)
                to_label.append((i, rank, dict(p, label=text)))

    if projected:  # --what-if: the same kernels where the projection puts them, hollow, same colour
        sizes = 28.0 + 1400.0 * np.clip(np.array([p["share"] for p in projected], dtype=float), 0.0, 1.0)
        colors = [to_rgba(BOUND_COLORS.get(p["bound"], BOUND_COLORS["unknown"])) for p in projected]
        coll = ax.scatter([p["x"] for p in projected], [p["y"] for p in projected], s=sizes, marker="o",
                          facecolors="none", edgecolors=colors, linewidths=1.4, alpha=0.9, zorder=5)
        coll.set_gid("what-if:points")
        scatters.append((projected, sizes))
        input_handles.append(Line2D([], [], marker="o", linestyle="none", markerfacecolor="none",
                                    markeredgecolor="#555555", markersize=8,
                                    label=f"hollow: projected ({plain(what_if.scenario)})"))

    level_handles = []
    if levels and not multi and to_label and not projected:  # hollow markers are the projection's then
        for lvl, marker in (("l2", "^"), ("l1", "v")):
            pts = [p for _i, _r, p in to_label if p.get(f"x_{lvl}")]
            if not pts:
                continue
            lc = ax.scatter(
                [p[f"x_{lvl}"] for p in pts], [p["y"] for p in pts], s=36, marker=marker,
                facecolors="none", edgecolors="#555555", linewidths=1.0, zorder=4,
            )
            lc.set_gid(f"level:{lvl}")
            scatters.append(([{"x": p[f"x_{lvl}"], "y": p["y"]} for p in pts], [36.0] * len(pts)))
            ax.set_xlabel("Arithmetic intensity (FLOP/byte): filled = at DRAM, hollow = at L2 / L1", fontsize=11)
            level_handles.append(
                Line2D([], [], marker=marker, linestyle="none", markerfacecolor="none", markeredgecolor="#555555",
                       markersize=7, label=f"labelled kernels at {LEVEL_LABELS[lvl]} intensity")
            )
        for _i, _r, p in to_label:
            xs_l = [v for v in (p["x"], p.get("x_l2"), p.get("x_l1")) if v]
            if len(xs_l) > 1:
                (ln,) = ax.plot([min(xs_l), max(xs_l)], [p["y"], p["y"]], color="#AAAAAA", linewidth=0.8, zorder=3)
                ln.set_gid("level-link")

    march_handles = []
    if series:
        tags = distinct_tags([l for l, _ in labelled])
        _draw_march(ax, series, tags)
        from ridgeline.render.text import distinct_labels

        shorts = [str(chain[-1][1]["short"]) for chain in series]
        full = [str(chain[-1][1].get("name") or chain[-1][1]["short"]) for chain in series]
        names = distinct_labels(shorts, 30, full) if len(set(shorten(x, 30) for x in shorts)) < len(shorts) else [
            shorten(x, 30) for x in shorts]
        for rank, (chain, text) in enumerate(zip(series, names)):  # the kernel's name once, at its march's end
            i, last = chain[-1]
            to_label.insert(rank, (i, -1 - rank, dict(last, label=text, untagged=True)))
        march_handles.append(Line2D([], [], color=MARCH_COLOR, linewidth=1.3, marker=">", markersize=5,
                                    label="same kernel across inputs, in input order"))

    # ---- legends: roofs (with sources), bounds, inputs
    bound_handles = [
        Line2D([], [], marker=LATENCY_MARKER if b in LATENCY_BOUNDS and not multi else "o", linestyle="none",
               markerfacecolor="none" if b in LATENCY_BOUNDS and multi else BOUND_COLORS[b],
               markeredgecolor=BOUND_COLORS[b] if b in LATENCY_BOUNDS and multi else "white", markersize=9,
               label=BOUND_LABELS[b])
        for b in VIEW_BOUNDS if b in bounds_seen
    ]
    notes = [Line2D([], [], linestyle="none", label="point area = share of GPU time")]
    if unplotted:
        n = sum(unplotted.values())
        what = ("launch" if n == 1 else "launches") if per_launch else ("kernel name" if n == 1 else "kernel names")
        why = ", ".join(f"{k}: {v}" for k, v in sorted(unplotted.items(), key=lambda kv: -kv[1]))
        notes.append(Line2D([], [], linestyle="none", label=f"{n} {what} not drawn ({why})"))
    if len(roof_handles) <= 5:
        leg1 = ax.legend(
            handles=roof_handles, loc="upper left", fontsize=8.5, title="Roofs (source)",
            title_fontsize=9, framealpha=0.92,
        )
        ax.add_artist(leg1)
    else:  # many roofs (several GPUs, a comparison GPU): below the plot, never over the data
        leg1 = fig.legend(
            handles=roof_handles, loc="outside lower center", fontsize=8.5, title="Roofs (source)",
            title_fontsize=9, ncols=2, frameon=False,
        )
    leg2 = ax.legend(
        handles=bound_handles + input_handles + march_handles + level_handles + notes,
        loc="lower right", fontsize=8.5, framealpha=0.92,
        title="Kernels" + (" (marker = input)" if multi else ""), title_fontsize=9,
    )
    leg2.set_gid("legend:kernels")
    leg1.set_gid("legend:roofs")

    if title is None:
        gpus = sorted({res.gpu_name for _l, res in labelled if res.gpu_name})
        gpu_txt = ", ".join(gpus) if gpus else "unknown GPU"
        what = f"{len(labelled)} inputs" if multi else labelled[0][0]
        title = f"Roofline \u2014 {gpu_txt} \u2014 {what}"
        if per_launch:
            title += " (per launch)"
        if compare_gpu is not None:
            title += f" vs {compare_gpu.name}"
    ax.set_title(plain(title), fontsize=13, loc="left")

    _place_labels(fig, ax, to_label, scatters, multi=multi, labels=[l for l, _ in labelled])
    return fig


MARCH_COLOR = "#444444"
MARCH_MAX = 4  # marches drawn at most (the heaviest kernels): more reads as a tangle


def march_key(name: str) -> tuple[str, str | None]:
    """What makes two inputs' kernels "the same kernel" on a march: the function and its
    template arguments in one spelling (:func:`ridgeline.names.join_key`), so a batch sweep whose
    tools spell the arguments differently still joins; parameters and grid sizes do not count."""
    from ridgeline.names import join_key

    return join_key(str(name))


def march_series(points: Sequence[Sequence[dict[str, Any]]], *, limit: int) -> list[list[tuple[int, dict]]]:
    """The kernels that appear (drawn) in more than one input, heaviest first (summed share of GPU
    time), at most ``limit``: each a list of ``(input index, point)`` in input order.

    A kernel joins on its exact name first; a name with no exact partner joins on
    :func:`march_key` when that key is held by one kernel only in each input (two instantiations
    that normalise alike stay apart rather than being joined at random).
    """
    keyed: list[dict[Any, dict]] = []
    for pts in points:
        by_key: dict[Any, dict] = {}
        loose: dict[Any, list[dict]] = {}
        for p in pts:
            if not (p.get("x") and p.get("y")) or p.get("name") is None:
                continue
            by_key.setdefault(("name", str(p["name"])), p)
            loose.setdefault(("key", march_key(p["name"])), []).append(p)
        for k, group in loose.items():
            if len(group) == 1:
                by_key.setdefault(k, group[0])
        keyed.append(by_key)
    names_everywhere: dict[Any, int] = {}
    for by_key in keyed:
        for k in by_key:
            if k[0] == "name":
                names_everywhere[k] = names_everywhere.get(k, 0) + 1
    chains: dict[Any, list[tuple[int, dict]]] = {}
    used: list[set[int]] = [set() for _ in keyed]
    # exact names first, then the loose key for points not yet in a chain
    for kind in ("name", "key"):
        for i, by_key in enumerate(keyed):
            for k, p in by_key.items():
                if k[0] != kind or id(p) in used[i]:
                    continue
                if kind == "key":
                    # a point whose exact name marches already is not joined again
                    if names_everywhere.get(("name", str(p["name"])), 0) > 1:
                        continue
                chain = chains.setdefault(k, [])
                chain.append((i, p))
        for k in [k for k in chains if k[0] == kind]:
            if len(chains[k]) < 2:
                del chains[k]
                continue
            for i, p in chains[k]:
                used[i].add(id(p))
    ordered = sorted(chains.values(), key=lambda c: -sum(float(p.get("share") or 0.0) for _i, p in c))
    return [sorted(c, key=lambda ip: ip[0]) for c in ordered[:max(0, limit)]]


def _draw_march(ax, series, tags: Sequence[str]) -> None:
    """Each series as a line with an arrowhead per step (input order); every point tagged with what
    tells its input apart (``b1``, ``b8``...), once per place, so the march reads without the legend."""
    for rank, chain in enumerate(series):
        xs = [p["x"] for _i, p in chain]
        ys = [p["y"] for _i, p in chain]
        (ln,) = ax.plot(xs, ys, color=MARCH_COLOR, linewidth=1.3, alpha=0.85, zorder=4)
        ln.set_gid(f"march:{rank}")
        for k, ((x0, y0), (x1, y1)) in enumerate(zip(zip(xs, ys), zip(xs[1:], ys[1:]))):
            # the head sits just short of the next point, where it reads as "toward"
            xm = math.exp(math.log(x0) + 0.82 * (math.log(x1) - math.log(x0)))
            ym = math.exp(math.log(y0) + 0.82 * (math.log(y1) - math.log(y0)))
            arrow = ax.annotate("", xy=(xm, ym), xytext=(x0, y0),
                                arrowprops={"arrowstyle": "-|>", "color": MARCH_COLOR, "lw": 1.3,
                                            "mutation_scale": 13, "shrinkA": 0, "shrinkB": 0},
                                zorder=4, annotation_clip=False)
            arrow.set_gid(f"march-step:{rank}:{k}")
    # tags: points of different series at one place share one tag ("b1, b32, b256": attention does not move)
    spots: list[list] = []  # [cx, cy, {input index: tag}, point]
    for _rank, chain in enumerate(series):
        for i, p in chain:
            cx, cy = ax.transData.transform((p["x"], p["y"]))
            tag = tags[i] if i < len(tags) else str(i)
            spot = next((s for s in spots if abs(s[0] - cx) < 12 and abs(s[1] - cy) < 12), None)
            if spot is None:
                spots.append([cx, cy, {i: tag}, p])
            else:
                spot[2].setdefault(i, tag)
                if float(p.get("share") or 0) > float(spot[3].get("share") or 0):
                    spot[3] = p
    for n, (_cx, _cy, by_input, p) in enumerate(spots):
        text = ", ".join(by_input[i] for i in sorted(by_input))
        t = ax.annotate(plain(text), (p["x"], p["y"]), xytext=(0, -4 - math.sqrt(point_area(p["share"])) / 2),
                        textcoords="offset points", ha="center", va="top", fontsize=7.5,
                        color="#222222", zorder=6, annotation_clip=False)
        t.set_gid(f"march-tag:{n}")


def distinct_tags(labels: Sequence[str]) -> list[str]:
    """The part of each input label that tells it apart from the others.

    ``decode-b1-h100, decode-b8-h100, decode-b256-h100`` -> ``b1, b8, b256``: the common
    prefix and suffix are cut at a separator (``-``, ``_``, ``.``, space or ``/``) so a tag never
    starts or ends mid-word. Labels that are all the same, or a single label, are kept whole.
    """
    labels = [str(x) for x in labels]
    if len(set(labels)) < 2:
        return labels
    seps = "-_. /"

    def common_prefix(items: list[str]) -> int:
        n = 0
        for chars in zip(*items):
            if len(set(chars)) > 1:
                break
            n += 1
        # back off to just after the last separator inside the common part
        while n > 0 and items[0][n - 1] not in seps:
            n -= 1
        return n

    pre = common_prefix(labels)
    rev = [x[::-1] for x in labels]
    suf = common_prefix(rev)
    out = []
    for x in labels:
        tag = x[pre: len(x) - suf if suf else None].strip(seps)
        out.append(tag or x)
    return out


def label_text(short: str, input_label: str | None = None) -> str:
    """A point's label: the short kernel name, cut to fit; on multi-input plots, tagged with its input."""
    if input_label is None:
        return shorten(short, 30)
    tag = input_label if len(input_label) <= 14 else input_label[:6] + "\u2026" + input_label[-7:]
    return f"{shorten(short, 24)} [{tag}]"


def point_area(share: float) -> float:
    """Marker area (points^2) for a share of GPU time: the area grows linearly with the share."""
    return 28.0 + 1400.0 * max(0.0, min(1.0, float(share or 0.0)))


_OFFSETS = [  # (dx, dy) in points from the marker's edge, nearest first
    (8, 6, "left", "bottom"),
    (8, -6, "left", "top"),
    (-8, 6, "right", "bottom"),
    (-8, -6, "right", "top"),
    (10, 0, "left", "center"),
    (-10, 0, "right", "center"),
    (0, 10, "center", "bottom"),
    (0, -10, "center", "top"),
    (16, 20, "left", "bottom"),
    (16, -20, "left", "top"),
    (-16, 20, "right", "bottom"),
    (-16, -20, "right", "top"),
    (24, 36, "left", "bottom"),
    (24, -36, "left", "top"),
    (-24, 36, "right", "bottom"),
    (-24, -36, "right", "top"),
    (0, 52, "center", "bottom"),
    (0, -52, "center", "top"),
    (40, 0, "left", "center"),
    (-40, 0, "right", "center"),
]


def _place_labels(fig, ax, items, scatters, *, multi: bool, labels: Sequence[str]) -> None:
    """Label the top kernels, greedily: for each (heaviest first) try offsets around the point
    and keep the first whose box stays inside the axes and clear of the legends, the ridge
    labels, the markers, the roof lines and the labels already placed; else leave it out."""
    from matplotlib.text import Text

    if not items:
        return
    fig.draw_without_rendering()  # settle the constrained layout before measuring
    renderer = fig.canvas.get_renderer()
    import numpy as np

    ax_box = ax.get_window_extent(renderer)
    boxes = [leg.get_window_extent(renderer).extents for leg in ax.get_children() if type(leg).__name__ == "Legend"]
    boxes += [t.get_window_extent(renderer).extents for t in ax.texts]
    obstacles = [np.asarray(boxes, dtype=float).reshape(-1, 4)]
    px = fig.dpi / 72.0
    for drawable, sizes in scatters:  # markers, as squares around their centres (vectorized)
        if not drawable:
            continue
        centres = ax.transData.transform(np.array([[p["x"], p["y"]] for p in drawable]))
        r = np.sqrt(np.asarray(sizes, dtype=float)) / 2 * px
        obstacles.append(np.column_stack([centres[:, 0] - r, centres[:, 1] - r, centres[:, 0] + r, centres[:, 1] + r]))
    obstacle_arr = np.concatenate(obstacles)
    # roof lines as sampled display points (straight in log-log, so straight on screen)
    pts = [np.empty((0, 2))]
    for ln in ax.get_lines():
        gid = ln.get_gid() or ""
        if not gid.startswith(("roof:", "compare:")):
            continue
        xy = ax.transData.transform(np.column_stack([ln.get_xdata(), ln.get_ydata()]))
        for (x0, y0), (x1, y1) in zip(xy[:-1], xy[1:]):
            n = max(2, int(math.hypot(x1 - x0, y1 - y0) / 4))
            t = np.linspace(0.0, 1.0, n + 1)
            pts.append(np.column_stack([x0 + (x1 - x0) * t, y0 + (y1 - y0) * t]))
    line_pts = np.concatenate(pts)

    def blocked(bb, placed_arr) -> bool:
        for arr in (obstacle_arr, placed_arr):
            if len(arr) and np.any((arr[:, 0] < bb.x1) & (arr[:, 2] > bb.x0) & (arr[:, 1] < bb.y1) & (arr[:, 3] > bb.y0)):
                return True
        return bool(len(line_pts)) and bool(np.any(
            (line_pts[:, 0] >= bb.x0) & (line_pts[:, 0] <= bb.x1) & (line_pts[:, 1] >= bb.y0) & (line_pts[:, 1] <= bb.y1)
        ))

    placed = []
    tags = distinct_tags(labels) if multi else []
    for idx, rank, p in items:
        text = (p["label"] if p.get("untagged") else
                label_text(p.get("label") or p["short"], tags[idx] if multi else None))
        cx, cy = ax.transData.transform((p["x"], p["y"]))
        own = math.sqrt(point_area(p["share"])) / 2  # clear the marker itself (in points)
        best = None
        for dx, dy, ha, va in _OFFSETS:
            sx = dx + math.copysign(0.7 * own, dx) if dx else 0.0
            sy = dy + math.copysign(0.7 * own, dy) if dy else 0.0
            ann = ax.annotate(
                plain(text), (p["x"], p["y"]), xytext=(sx, sy), textcoords="offset points",
                ha=ha, va=va, fontsize=8.5, color="#111111", zorder=6,
                arrowprops=(
                    {"arrowstyle": "-", "color": "#888888", "lw": 0.6, "shrinkA": 1, "shrinkB": 2}
                    if abs(sy) > 14 or abs(sx) > 22
                    else None
                ),
                annotation_clip=False,
            )
            # the text's own box (Annotation's extent would include the leader line)
            ann.update_positions(renderer)
            bb = Text.get_window_extent(ann, renderer).expanded(1.03, 1.12)
            inside = bb.x0 >= ax_box.x0 and bb.x1 <= ax_box.x1 and bb.y0 >= ax_box.y0 and bb.y1 <= ax_box.y1
            if inside and not blocked(bb, np.asarray(placed, dtype=float).reshape(-1, 4)):
                best = (ann, bb)
                break
            ann.remove()
        if best is None:
            continue  # no free spot: leave it unlabelled rather than overprint
        ann, bb = best
        ann.set_gid(f"label:{idx}:{rank}")
        placed.append(bb.extents)


# ----------------------------------------------------------------------------------------
# telemetry
# ----------------------------------------------------------------------------------------
TELEMETRY_SERIES = (
    ("gpu_util_ratio", "GPU-Util (NVML)", OKABE_ITO["black"], "-"),
    ("tensor_active_ratio", "tensor active (DCGM)", OKABE_ITO["vermillion"], "-"),
    ("dram_active_ratio", "DRAM active (DCGM)", OKABE_ITO["blue"], "--"),
    ("sm_active_ratio", "SM active (DCGM)", OKABE_ITO["green"], ":"),
)

# Telemetry rules judge per-window states; a finding names the GPU, and the WINDOW table says
# which windows were in the state the rule counts. Rule code -> WINDOW share column.
WINDOW_STATE_COLUMNS = {
    "RL201": "busy_tensor_idle_share",
    "RL202": "memory_bound_share",
    "RL203": "allocated_idle_share",
}

_HOST_RE = re.compile(r"host:(\S+)")
_GI_RE = re.compile(r"\bgi:(\S+)")
_GPU_RE = re.compile(r"gpu:(\S+)")
_WINDOW_RE = re.compile(r"window:(\S+?)(?:/|\.\.)(\S+)")


def _parse_time(value):
    from datetime import datetime, timezone

    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    try:
        t = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def finding_span(finding) -> dict[str, Any] | None:
    """Where a telemetry finding points: ``{"host", "gpu", "start", "end"}`` (any may be None).

    Read from the subject (``host:node1 gpu:3 window:<start>/<end>``) and from evidence named
    ``window_start`` / ``window_end`` (ISO-8601 or datetime). None for non-telemetry findings.
    """
    kind = getattr(finding, "subject_kind", "")
    subject = str(getattr(finding, "subject", "") or "")
    if kind not in ("telemetry", "window", "gpu", "host") and "window:" not in subject:
        return None
    host = _HOST_RE.search(subject)
    gpu = _GPU_RE.search(subject)
    gi = _GI_RE.search(subject)
    span = {
        "host": host.group(1) if host else None,
        "gpu": gpu.group(1) if gpu else None,
        "gpu_instance": gi.group(1) if gi else None,
        "start": None,
        "end": None,
    }
    win = _WINDOW_RE.search(subject)
    if win:
        span["start"], span["end"] = _parse_time(win.group(1)), _parse_time(win.group(2))
    for ev in getattr(finding, "evidence", ()) or ():
        if ev.metric in ("window_start", "start", "start_time"):
            span["start"] = _parse_time(ev.value) or span["start"]
        elif ev.metric in ("window_end", "end", "end_time"):
            span["end"] = _parse_time(ev.value) or span["end"]
    return span


def _downsample(series, max_points: int):
    """At most ``max_points`` (timestamp, value) rows: means over equal time bins (a fleet-day at
    1 s would otherwise put 86,400 points per line into the SVG)."""
    import polars as pl

    if series.height <= max_points:
        return series
    t0 = series["timestamp"].min()
    span_us = (series["timestamp"].max() - t0).total_seconds() * 1e6 or 1.0
    idx = ((pl.col("timestamp") - t0).dt.total_microseconds() / span_us * (max_points - 1)).floor().cast(pl.Int64)
    return (
        series.group_by(idx.alias("_bin"))
        .agg(pl.col("timestamp").min(), pl.col("value").mean())
        .sort("_bin")
        .drop("_bin")
    )


def _span_matches(span, host, gpu, inst) -> bool:
    """Does a finding's subject (host/gpu/gi, any may be absent) name this GPU panel?"""
    if span["host"] is None and span["gpu"] is None and span["start"] is None:
        return False
    if span["host"] is not None and host is not None and span["host"] != str(host):
        return False
    if span["gpu"] not in (None, "?") and gpu is not None and span["gpu"] != str(gpu):
        return False
    if span["gpu_instance"] is not None and span["gpu_instance"] != str(inst):
        return False
    return True


def _flagged_spans(finding, span, windows, host, gpu, inst, sub):
    """(start, end, strength 0..1) to shade on one GPU's panel for one finding."""
    import polars as pl

    if span["start"] is not None or span["end"] is not None:
        return [(span["start"] or sub["timestamp"].min(), span["end"] or sub["timestamp"].max(), 1.0)]
    col = WINDOW_STATE_COLUMNS.get(finding.code)
    if windows is None or col is None or col not in getattr(windows, "columns", ()):
        return []
    w = windows.filter(
        pl.col("host").eq_missing(host) & pl.col("gpu").eq_missing(gpu) & pl.col("gpu_instance").eq_missing(inst)
        & (pl.col(col) > 0)
    )
    if "excluded" in w.columns:
        w = w.filter(pl.col("excluded").is_null())
    return [(r["window_start"], r["window_end"], float(r[col])) for r in w.select("window_start", "window_end", col).iter_rows(named=True)]


def telemetry_figure(result, *, max_panels: int = 16, max_points: int = 1500, title: str | None = None):
    """Small multiples, one panel per GPU: GPU-Util vs tensor-active / DRAM-active over time.

    Spans that telemetry findings point at (see :func:`finding_span`) are shaded. Returns a
    Figure, or None when the result holds no telemetry.
    """
    import polars as pl

    tel = result.telemetry
    if tel is None or not getattr(tel, "height", 0):
        return None
    fields = [s[0] for s in TELEMETRY_SERIES]
    tel = tel.filter(pl.col("field").is_in(fields) & pl.col("value").is_not_null())
    if not tel.height:
        return None
    keys = (
        tel.group_by("host", "gpu", "gpu_instance")
        .agg(pl.len().alias("n"))
        .sort("host", "gpu", "gpu_instance", nulls_last=True)
    )
    groups = keys.select("host", "gpu", "gpu_instance").rows()
    flagged = [(f, sp) for f, sp in ((f, finding_span(f)) for f in result.findings or []) if sp]
    hits = {g: [(f, sp) for f, sp in flagged if _span_matches(sp, *g)] for g in groups}
    # flagged GPUs first (a fleet has more GPUs than panels), then the rest, in name order
    groups.sort(key=lambda g: 0 if hits[g] else 1)
    shown = groups[:max_panels]
    n = len(shown)
    parts = tel.partition_by("host", "gpu", "gpu_instance", as_dict=True, maintain_order=False)
    ncols = 1 if n == 1 else 2
    nrows = math.ceil(n / ncols)
    fig = _new_figure(10.0 if ncols == 2 else 9.0, max(3.2, 2.5 * nrows + 0.8))
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False)
    flagged_by_panel: dict[int, list[str]] = {}
    handles = {}
    for k, (host, gpu, inst) in enumerate(shown):
        ax = axes[k // ncols][k % ncols]
        sub = parts[(host, gpu, inst)].sort("timestamp")
        for field, label, color, style in TELEMETRY_SERIES:
            s = sub.filter(pl.col("field") == field)
            if not s.height:
                continue
            s = _downsample(s.group_by("timestamp").agg(pl.col("value").mean()).sort("timestamp"), max_points)
            (ln,) = ax.plot(
                s["timestamp"].to_list(), (s["value"] * 100).to_list(), color=color, linestyle=style,
                linewidth=1.4, label=label, marker="o" if s.height <= 3 else None, markersize=4,
            )  # a series of a sample or three is drawn as points: a line through one point is invisible
            ln.set_gid(f"telemetry:{k}:{field}")
            handles.setdefault(label, ln)
        shade: dict[tuple, list] = {}
        for f, span in hits[(host, gpu, inst)]:
            flagged_by_panel.setdefault(k, []).append(f.code)
            for t0, t1, strength in _flagged_spans(f, span, result.windows, host, gpu, inst, sub):
                entry = shade.setdefault((t0, t1), [0.0, []])
                entry[0] = max(entry[0], strength)
                entry[1].append(f.code)
        for (t0, t1), (strength, codes) in shade.items():  # one patch per span, however many rules
            patch = ax.axvspan(t0, t1, color=OKABE_ITO["yellow"], alpha=0.15 + 0.4 * min(1.0, strength), zorder=0,
                               linewidth=0)
            patch.set_gid(f"flagged:{k}:{','.join(sorted(set(codes)))}")
            handles.setdefault("span flagged by a rule", patch)
        name = f"{host or 'host ?'} \u00b7 GPU {gpu if gpu is not None else '?'}"
        if inst is not None:
            name += f" \u00b7 GI {inst}"
        codes = sorted(set(flagged_by_panel.get(k, [])))
        if codes:
            name += "  [" + ", ".join(codes) + "]"
        ax.set_title(plain(name), fontsize=10, loc="left")
        ax.set_ylim(-3, 105)
        ax.grid(True, color="#E5E5E5", linewidth=0.6)
        ax.tick_params(labelsize=9)
        if k % ncols == 0:
            ax.set_ylabel("% of time", fontsize=10)
    for k in range(n, nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    t0, t1 = tel.select(pl.col("timestamp").min().alias("a"), pl.col("timestamp").max().alias("b")).row(0)
    xlabel = _time_axis(axes, t0, t1)
    for ax in axes[-1]:
        ax.set_xlabel(xlabel, fontsize=10)
    if handles:
        fig.legend(
            handles=list(handles.values()), labels=list(handles.keys()), loc="outside lower center",
            ncols=min(5, len(handles)), fontsize=9, frameon=False,
        )
    if title is None:
        models = sorted({str(m) for m in tel["model"].unique().to_list() if m}) if "model" in tel.columns else []
        gpu_txt = result.gpu_name or (models[0] if len(models) == 1 else "GPUs")
        srcs = sorted({Path(str(s)).name for s in tel["source"].unique().to_list() if s is not None})
        src_txt = srcs[0] if len(srcs) == 1 else f"{len(srcs)} files"
        title = f"Busy vs. working \u2014 {gpu_txt} \u2014 {src_txt}"
        if len(groups) > n:
            title += f" ({n} of {len(groups)} GPUs, flagged first)"
    fig.suptitle(plain(title), fontsize=13, x=0.01, ha="left")
    return fig


SHORT_SPAN_S = 600.0  # up to this span a time axis counts seconds from the start


def _time_axis(axes, t0, t1) -> str:
    """Tick the panels' time axes so the ticks say what they are, and return the axis label.

    Spans up to :data:`SHORT_SPAN_S` tick in seconds from the first sample (``+5 s``), where
    clock times would be ``:05, :10`` that read like hours; inputs without absolute time (their
    clock starts at the epoch: ``--start`` was not given) tick in elapsed time and say
    "relative time", never a 1970 date; the rest use concise UTC dates.
    """
    import matplotlib.dates as mdates
    import matplotlib.ticker as mticker

    relative = t0 is not None and getattr(t0, "year", 2000) <= 1970
    span = (t1 - t0).total_seconds() if t0 is not None and t1 is not None else 0.0
    if t0 is not None and (relative or span <= SHORT_SPAN_S):
        origin = mdates.date2num(t0)
        unit, scale = ("s", 1.0) if span <= SHORT_SPAN_S else (("min", 60.0) if span <= 6 * 3600 else ("h", 3600.0))

        def fmt(x, _pos):
            v = (x - origin) * 86400.0 / scale
            return f"{v:+.0f} {unit}" if abs(v) >= 1 or v == 0 else f"{v:+.1f} {unit}"

        # ticks at round numbers of the unit from the first sample (a locator in days would not be)
        length = span / scale
        if length <= 0:  # one sample time: one tick
            ticks = [origin]
        raw = max(length, 1e-9) / 5
        mag = 10 ** math.floor(math.log10(raw))
        step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
        if length > 0:
            ticks = [origin + k * step * scale / 86400.0 for k in range(int(length // step) + 1)]
        for row in axes:
            for ax in row:
                ax.xaxis.set_major_locator(mticker.FixedLocator(ticks))
                ax.xaxis.set_major_formatter(mticker.FuncFormatter(fmt))
        if relative:
            return f"elapsed {unit} (relative time: no clock in the input; see --start)"
        return f"{unit} since {t0:%Y-%m-%d %H:%M:%S} UTC"
    for row in axes:
        for ax in row:
            loc = mdates.AutoDateLocator(maxticks=6)
            ax.xaxis.set_major_locator(loc)
            ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(loc))
    return "time (UTC)"


# ----------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------
def save_figure(fig, path, *, dpi: int = 150) -> Path:
    """Write ``fig`` to ``path``; the suffix picks the format (.png, .svg, .pdf)."""
    path = Path(path)
    fmt = SAVE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise UsageError(
            f"cannot write a plot to {str(path)!r}: unknown suffix {path.suffix or '(none)'!r}; "
            f"use one of {', '.join(SAVE_FORMATS)}"
        )
    metadata = {"Date": None} if fmt in ("svg", "pdf") else None
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "ridgeline"}):
        fig.savefig(path, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
    return path


def figure_svg(fig) -> str:
    """The figure as an SVG document string (text drawn as paths, no external fonts)."""
    import io

    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "ridgeline", "svg.fonttype": "path"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buf.getvalue()


def _with_kind(df):
    """``df`` with a ``latency_kind`` column (null when a table from before the split has none)."""
    import polars as pl

    return df if "latency_kind" in df.columns else df.with_columns(pl.lit(None, dtype=pl.String).alias("latency_kind"))
