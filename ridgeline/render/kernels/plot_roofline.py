"""The roofline figure: DRAM (and L2/L1) slopes, one flat roof per precision, ridge points,
kernels as points (area = share of GPU time, colour = bound, marker = input), the march of one
kernel across inputs, what-if projections and a comparison GPU's roofs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ridgeline.analyzer.kernels.latency import VIEW_BOUNDS
from ridgeline.render.kernels.plot_labels import MARCH_COLOR, MARCH_MAX, _draw_march, _place_labels, distinct_tags, label_text, march_series
from ridgeline.render.kernels.plot_points import kernel_points, projected_points
from ridgeline.render.plot_style import (
    BOUND_COLORS,
    BOUND_LABELS,
    INPUT_MARKERS,
    LATENCY_BOUNDS,
    LATENCY_MARKER,
    LEVEL_LABELS,
    LEVEL_STYLES,
    PRECISION_COLORS,
    PRECISION_LABELS,
    RASTERIZE_ABOVE,
    SOURCE_LABELS,
    _decade_ceil,
    _decade_floor,
    _finite_pos,
    _new_figure,
    fit_text_width,
    plain,
    si,
)


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
    for r in roofs:  # each tensor path keeps its roof (RL101 measures mma.sync kernels against theirs)
        groups.setdefault((r.kind, r.precision, r.level, getattr(r, "path", None)), []).append(r)
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

    ``compare_gpu``: a catalogue :class:`~ridgeline.analyzer.kernels.gpus.GPU` (or a name for
    :func:`ridgeline.analyzer.kernels.gpus.lookup`) whose datasheet roofs are drawn in grey for
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

    from ridgeline.render.text import tensor_path_label

    labelled = _as_labelled(results)
    if compare_gpu is not None and isinstance(compare_gpu, str):
        from ridgeline.analyzer.kernels.gpus import lookup

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
    ridge_texts = []
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
        top_of_precision = {}
        for r in compute:  # the highest roof of a precision is its plain one; lower paths are dashed
            top_of_precision[r.precision] = r
        for r in compute:
            ridge = r.value / bw_dram if bw_dram else None
            x_start = ridge if ridge else xmin
            lower_path = top_of_precision.get(r.precision) is not r
            path_txt = f" ({tensor_path_label(r.path)})" if getattr(r, "path", None) else ""
            (ln,) = ax.plot(
                [x_start, xmax],
                [r.value, r.value],
                color=PRECISION_COLORS.get(r.precision or "", "#444444"),
                linewidth=2.0 if not lower_path else 1.6,
                linestyle=gpu_style or ((0, (5, 2)) if lower_path else "-"),
                alpha=alpha,
                label=f"{prefix}{PRECISION_LABELS.get(r.precision or '', r.precision)}{path_txt} "
                f"{si(r.value, 'FLOP/s')} ({SOURCE_LABELS.get(r.source, r.source)}"
                f"{', ' + r.detail.split(',')[0] if r.detail and r.detail.startswith('highest of') else ''})",
                zorder=2,
            )
            ln.set_gid(f"roof:compute:{r.precision}" + (f"@{r.path}" if lower_path else "") + (f":{gi}" if gi else ""))
            roof_handles.append(ln)
            if ridge and gi == 0:
                (mk,) = ax.plot(
                    [ridge], [r.value], marker="o", markersize=6, markerfacecolor="white",
                    markeredgecolor=PRECISION_COLORS.get(r.precision or "", "#444444"),
                    markeredgewidth=1.6, linestyle="none", zorder=4,
                )
                mk.set_gid(f"ridge:{r.precision}" + (f"@{r.path}" if lower_path else ""))
                ridge_texts.append(ax.annotate(
                    f"ridge {ridge:.3g} FLOP/B",
                    (ridge, r.value),
                    xytext=(-4, 5),
                    textcoords="offset points",
                    ha="right",
                    va="bottom",
                    fontsize=8.5,
                    color="#333333",
                    gid=f"ridge-label:{r.precision}" + (f"@{r.path}" if lower_path else ""),
                ))

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
        # each kernel's label is unique in its result (families.family_columns); shortened to fit
        # at token boundaries, the labels are kept apart too (render.fit), so two kernels never read alike
        from ridgeline.render.fit import fit_labels

        uniq = list(dict.fromkeys(str(p["short"]) for p in drawable if p["short"]))
        width = 24 if multi else 30
        cut = dict(zip(uniq, fit_labels(uniq, width)))
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
        from ridgeline.render.fit import fit_labels

        shorts = [str(chain[-1][1]["short"]) for chain in series]
        names = fit_labels(shorts, 30)
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
    leg1 = None
    if not roof_handles:  # no roofs (GPU not identified): a line that says so, not an empty legend box
        ax.text(0.01, 0.985, "No roofs: the GPU was not identified (pass --gpu)", transform=ax.transAxes,
                ha="left", va="top", fontsize=9, color="#555555", gid="note:no-roofs")
    elif len(roof_handles) <= 5:
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
    if leg1 is not None:
        leg1.set_gid("legend:roofs")

    if title is None:
        from ridgeline.render.facts import UNKNOWN_GPU, gpu_label

        gpus = sorted({label for _l, res in labelled if (label := gpu_label(res))})  # the JSON's gpu.label
        gpu_txt = ", ".join(gpus) if gpus else UNKNOWN_GPU
        what = f"{len(labelled)} inputs" if multi else labelled[0][0]
        title = f"Roofline \u2014 {gpu_txt} \u2014 {what}"
        if per_launch:
            title += " (per launch)"
        if compare_gpu is not None:
            title += f" vs {compare_gpu.name}"
    fit_text_width(fig, ax.set_title(plain(title), fontsize=13, loc="left"), width_px=fig.bbox.width - 70)  # a long input name never runs off the canvas

    _separate_ridge_labels(fig, ax, ridge_texts)
    _place_labels(fig, ax, to_label, scatters, multi=multi, labels=[l for l, _ in labelled])
    return fig



def _separate_ridge_labels(fig, ax, texts) -> None:
    """Ridge labels of roofs close together (a wgmma and an mma.sync roof) would print on each
    other above-left of their points: a label that overlaps one placed before moves below-right of
    its point, then below-left, then above-right."""
    if len(texts) < 2:
        return
    from matplotlib.text import Text

    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    ax_box = ax.get_window_extent(renderer)
    placed = []
    for t in sorted(texts, key=lambda t: -t.xy[1]):  # the highest roof keeps its place
        for xytext, ha, va in (((-4, 5), "right", "bottom"), ((6, -5), "left", "top"),
                               ((-4, -5), "right", "top"), ((6, 5), "left", "bottom")):
            t.set_position(xytext)
            t.set_ha(ha)
            t.set_va(va)
            t.update_positions(renderer)
            bb = Text.get_window_extent(t, renderer)
            inside = ax_box.x0 <= bb.x0 and bb.x1 <= ax_box.x1 and ax_box.y0 <= bb.y0 and bb.y1 <= ax_box.y1
            if inside and not any(bb.overlaps(p) for p in placed):
                break
        placed.append(bb)
