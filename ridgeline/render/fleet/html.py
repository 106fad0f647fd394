"""The fleet page: what the HTML report adds for telemetry (issue 23 item 6).

Three sections, all drawn from the WINDOW table (never the samples), as inline SVG a strict CSP
allows (no script, no network):

* **Waste by host and time** -- a heatmap: one row per host (most wasted GPU-hours first), one
  column per time bin, the cell's shade the share of the host's observed GPU time in that bin
  that was wasted (windows of class idle_allocated or unavailable: the figures of
  :func:`ridgeline.analyzer.fleet.summary.fleet_summary`; busy time far from every roof is
  underuse, not waste). Each cell's tooltip says the numbers.
* **Groups** -- the per-group table (pods, jobs, labels) when the result carries groups.
* **GPUs** -- per GPU (most wasted first, at most :data:`MAX_GPU_ROWS`): wasted GPU-hours, mean
  tensor activity, and sparklines of tensor activity and SM clock over the windows.

Bins: windows fall in at most :data:`MAX_BINS` columns of equal length from the first window
start to the last window end (a long night in 5-minute windows is binned, never dropped).
"""

from __future__ import annotations

import math
from typing import Any

MAX_BINS = 96
MAX_HOSTS = 64
MAX_GPU_ROWS = 64
SPARK_W, SPARK_H = 120, 22
CELL_H = 18
WASTE_RGB = (213, 94, 0)  # Okabe-Ito vermillion


def _shade(share: float | None) -> str:
    if share is None:
        return "#f2f2f2"
    s = max(0.0, min(1.0, share))
    r, g, b = (round(255 - (255 - c) * s) for c in WASTE_RGB)
    return f"#{r:02x}{g:02x}{b:02x}"


def waste_frame(windows):
    """Per window: host, gpu key, start, end, observed seconds and wasted seconds (the one
    classification the fleet and group tables share: the window's span when its ``class`` is
    idle_allocated or unavailable, :data:`ridgeline.analyzer.fleet.classes.WASTED_CLASSES`)."""
    import polars as pl

    from ridgeline.analyzer.fleet.classes import WASTED_CLASSES

    return windows.select(
        pl.col("host").fill_null("?"),
        pl.concat_str([pl.col("host").fill_null("?"), pl.col("gpu").cast(pl.String).fill_null("?"),
                       pl.col("gpu_instance").fill_null("")], separator="/").alias("gpu_key"),
        "gpu", "gpu_instance", "model", "window_start", "window_end",
        pl.col("span_s").fill_null(0.0).alias("observed_s"),
        pl.when(pl.col("class").is_in(list(WASTED_CLASSES))).then(pl.col("span_s").fill_null(0.0)).otherwise(0.0)
        .alias("wasted_s"),
        "tensor_active_mean_ratio", "sm_clock_mean_hz",
    )


def heatmap_cells(windows, *, max_bins: int = MAX_BINS):
    """``(hosts, bins, cells)``: hosts most wasted first; bins as (start, end) datetimes;
    cells as {(host, bin index): (wasted_s, observed_s)}."""
    import polars as pl

    w = waste_frame(windows).filter(pl.col("window_start").is_not_null())
    if not w.height:
        return [], [], {}
    t0 = w["window_start"].min()
    t1 = w.select(pl.coalesce("window_end", "window_start").max()).item()
    total = max((t1 - t0).total_seconds(), 1e-9)
    n = max(1, min(max_bins, w["window_start"].n_unique()))
    width = total / n
    w = w.with_columns(
        ((pl.col("window_start") - t0).dt.total_microseconds() / 1e6 / width).floor().cast(pl.Int64)
        .clip(0, n - 1).alias("bin")
    )
    agg = w.group_by("host", "bin").agg(pl.col("wasted_s").sum(), pl.col("observed_s").sum())
    order = (w.group_by("host").agg(pl.col("wasted_s").sum()).sort(["wasted_s", "host"], descending=[True, False]))
    hosts = order["host"].to_list()
    from datetime import timedelta

    bins = [(t0 + timedelta(seconds=k * width), t0 + timedelta(seconds=(k + 1) * width)) for k in range(n)]
    cells = {(h, b): (ws, os_) for h, b, ws, os_ in agg.select("host", "bin", "wasted_s", "observed_s").iter_rows()}
    return hosts, bins, cells


def _when(t, t0, *, say_relative: bool = True) -> str:
    """A bin edge as a person reads it: UTC date and time, or time since the start for inputs
    without a clock (their times start at the epoch: never a 1970 date)."""
    if t0.year <= 1970:
        sec = (t - t0).total_seconds()
        text = f"+{sec / 3600:.2f} h" if sec >= 3600 else f"+{sec / 60:.0f} min"
        return text + (" (relative time)" if say_relative else "")
    return f"{t:%Y-%m-%d %H:%M} UTC"


# Average advance of a glyph, in em, in the widest common sans (DejaVu Sans, what a Linux browser
# falls back to): the SVG is sized from these so its text stays inside it in any browser
_NARROW, _WIDE, _DIGIT, _OTHER = 0.34, 0.84, 0.64, 0.60


def text_width(text: str, size: float) -> float:
    """A generous estimate of ``text``'s width in px at font size ``size`` (see the constants)."""
    w = 0.0
    for ch in str(text):
        if ch in "il.,:;|!'I[]()-/ ":
            w += _NARROW
        elif ch in "mwMW@%" or ch.isupper() or ord(ch) > 0x2000:
            w += _WIDE
        elif ch.isdigit():
            w += _DIGIT
        else:
            w += _OTHER
    return w * size


HOST_LABEL_MAX_PX = 260  # a longer host name is shortened at a separator (full name in its tooltip)


def host_row_labels(hosts: list[str], size: float = 12) -> dict[str, str]:
    """The text each heatmap row shows: the host name, or where it would take more than
    :data:`HOST_LABEL_MAX_PX`, its start and end cut at separators around an ellipsis; names stay
    distinct (two hosts never read alike) and the full name is the row's tooltip."""
    from ridgeline.render.fit import fit_names

    return fit_names(hosts, lambda t: text_width(t, size) <= HOST_LABEL_MAX_PX)


def heatmap_svg(windows) -> str:
    """The waste heatmap as inline SVG, sized so that every label, the time axis and the scale lie
    inside its viewBox (row labels right-aligned to the cells, never cut on the left)."""
    from ridgeline.render.htmltext import esc

    hosts, bins, cells = heatmap_cells(windows)
    if not hosts:
        return ""
    shown = hosts[:MAX_HOSTS]
    labels = host_row_labels([str(h) for h in shown])
    pad = 4
    label_w = pad + 8 + max(text_width(labels[str(h)], 12) for h in shown)
    label_w = math.ceil(label_w)
    n = len(bins)
    cell_w = max(6, min(28, 900 // n))
    cells_w = cell_w * n
    s0, e_last = bins[0][0], bins[-1][1]
    relative = s0.year <= 1970
    first, last = _when(s0, s0, say_relative=False), _when(e_last, s0, say_relative=False)
    suffix = " (relative time)" if relative else ""
    # the time axis: the first bin's start under its left edge, the last bin's end under its right
    # edge; where the cells are too narrow for both, one line "start – end" from the left edge
    two = text_width(first, 10) + text_width(last + suffix, 10) + 12 <= cells_w
    axis = [(label_w, "start", first + ("" if two else f" – {last}{suffix}"))]
    if two:
        axis.append((label_w + cells_w, "end", last + suffix))
    axis_right = max(x + (text_width(t, 10) if a == "start" else 0) for x, a, t in axis)
    scale = (0.0, 0.25, 0.5, 0.75, 1.0)
    step = 46
    scale_right = label_w + (len(scale) - 1) * step + 15 + text_width("100%", 10)
    width = math.ceil(max(label_w + cells_w, axis_right, scale_right) + pad)
    height = CELL_H * len(shown) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="heatmap" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="wasted share of GPU time by host and time">']
    for i, h in enumerate(shown):
        y = i * CELL_H
        shown_name = labels[str(h)]
        title = f"<title>{esc(h)}</title>" if shown_name != str(h) else ""
        out.append(f'<text x="{label_w - 6}" y="{y + CELL_H - 5}" text-anchor="end" font-size="12">{title}'
                   f"{esc(shown_name)}</text>")
        for b, (s, e) in enumerate(bins):
            ws, os_ = cells.get((h, b), (None, None))
            share = (ws / os_) if os_ else None
            tip = (f"{h} {_when(s, s0)}–{_when(e, s0)}: " + (
                f"{ws / 3600:.2f} of {os_ / 3600:.2f} GPU-h wasted ({share:.0%})" if share is not None else "no data"))
            out.append(f'<rect x="{label_w + b * cell_w}" y="{y}" width="{cell_w - 1}" height="{CELL_H - 1}" '
                       f'fill="{_shade(share)}" data-share="{"" if share is None else f"{share:.4f}"}">'
                       f"<title>{esc(tip)}</title></rect>")
    y = len(shown) * CELL_H + 14
    for x, anchor, text in axis:
        out.append(f'<text x="{x}" y="{y}" font-size="10"' + (' text-anchor="end"' if anchor == "end" else "")
                   + f">{esc(text)}</text>")
    for k, share in enumerate(scale):  # the scale
        x = label_w + k * step
        out.append(f'<rect x="{x}" y="{y + 8}" width="12" height="10" fill="{_shade(share)}" stroke="#ccc"/>'
                   f'<text x="{x + 15}" y="{y + 17}" font-size="10">{share:.0%}</text>')
    out.append("</svg>")
    return "".join(out)


def spark_svg(values: list[float | None], *, lo: float | None = None, hi: float | None = None,
              colour: str = "#0072B2", label: str = "") -> str:
    """A sparkline: ``values`` in order, scaled to ``lo..hi`` (default: their own range); gaps
    (None) break the line."""
    from ridgeline.render.htmltext import esc

    finite = [v for v in values if v is not None and math.isfinite(v)]
    if not finite:
        return '<span class="muted">no data</span>'
    lo = min(finite) if lo is None else lo
    hi = max(finite) if hi is None else hi
    span = (hi - lo) or 1.0
    n = len(values)
    step = SPARK_W / max(n - 1, 1)
    segs, cur = [], []
    for i, v in enumerate(values):
        if v is None or not math.isfinite(v):
            if cur:
                segs.append(cur)
            cur = []
            continue
        y = SPARK_H - 2 - (SPARK_H - 4) * (max(lo, min(hi, v)) - lo) / span
        cur.append(f"{i * step:.1f},{y:.1f}")
    if cur:
        segs.append(cur)
    lines = "".join(
        (f'<polyline points="{" ".join(s)}" fill="none" stroke="{colour}" stroke-width="1.3"/>' if len(s) > 1 else
         f'<circle cx="{s[0].split(",")[0]}" cy="{s[0].split(",")[1]}" r="1.5" fill="{colour}"/>')
        for s in segs
    )
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="spark" width="{SPARK_W}" height="{SPARK_H}" '
            f'viewBox="0 0 {SPARK_W} {SPARK_H}" role="img" aria-label="{esc(label)}"><title>{esc(label)}</title>'
            f"{lines}</svg>")


def gpu_rows(windows, *, limit: int = MAX_GPU_ROWS) -> tuple[list[dict[str, Any]], int]:
    """Per GPU, most wasted first: host, gpu, model, observed and wasted GPU-hours, mean tensor
    activity and the per-window series for the sparklines. Returns (rows, total GPUs)."""
    import polars as pl

    w = waste_frame(windows).sort("gpu_key", "window_start")
    g = w.group_by("gpu_key", maintain_order=True).agg(
        pl.col("host").first(), pl.col("gpu").first(), pl.col("gpu_instance").first(),
        pl.col("model").drop_nulls().first(),
        (pl.col("observed_s").sum() / 3600).alias("observed_h"),
        (pl.col("wasted_s").sum() / 3600).alias("wasted_h"),
        # null, never NaN, where no window holds tensor activity (the JSON's null; the cell's data-v empty)
        pl.when(pl.col("observed_s").filter(pl.col("tensor_active_mean_ratio").is_not_null()).sum() > 0)
        .then((pl.col("tensor_active_mean_ratio") * pl.col("observed_s")).sum()
              / pl.col("observed_s").filter(pl.col("tensor_active_mean_ratio").is_not_null()).sum())
        .otherwise(None).alias("tensor_mean"),
        pl.col("tensor_active_mean_ratio").alias("tensor_series"),
        pl.col("sm_clock_mean_hz").alias("clock_series"),
    ).sort(["wasted_h", "gpu_key"], descending=[True, False])
    return g.head(limit).to_dicts(), g.height


def group_rows(result) -> list[dict[str, Any]]:
    """The result's groups (``--by``/``--jobs``), worst first, when it carries any."""
    groups = getattr(result, "groups", None)
    if groups is None:
        return []
    if hasattr(groups, "rows"):  # ridgeline.analyzer.fleet.groups.GroupReport
        rows = groups.rows()
    else:
        rows = groups.to_dicts() if hasattr(groups, "to_dicts") else list(groups)
    return sorted(rows, key=lambda r: -(r.get("wasted_gpu_hours") or 0.0))


def fleet_sections(result) -> str:
    """The fleet sections of the report page, or "" without telemetry windows."""
    from ridgeline.render.htmltext import esc, fmt_pct

    w = getattr(result, "windows", None)
    if w is None or not getattr(w, "height", 0):
        return ""
    parts = ['<section id="fleet"><h2>Fleet: where GPU time was wasted</h2>',
             '<p class="muted">Wasted = windows idle with memory allocated (engine below its noise floor) or '
             "unavailable (a critical health event): time thrown away; busy time far from every roof is underused "
             "(work done badly), not wasted (the figures of the telemetry table). Shade = wasted share of the host's "
             "observed GPU time in that time bin; hover a cell for its numbers.</p>",
             f'<figure id="fleet-heatmap">{heatmap_svg(w)}</figure>']
    hosts, _bins, _cells = heatmap_cells(w)
    if len(hosts) > MAX_HOSTS:
        parts.append(f'<p class="muted">{MAX_HOSTS} of {len(hosts)} hosts shown (most wasted first); all are in the '
                     "JSON output.</p>")
    groups = group_rows(result)
    if groups:
        parts.append('<h3>Groups</h3><table class="sortable" id="group-table"><thead><tr><th>group</th>'
                     '<th class="num">GPUs</th><th class="num">GPU-h</th><th class="num">wasted GPU-h</th>'
                     '<th class="num">wasted</th><th class="num">underused GPU-h</th><th>notes</th></tr></thead><tbody>')
        for r in groups:
            key = r.get("key")
            key_text = ", ".join(f"{k}={v}" for k, v in key.items()) if isinstance(key, dict) else str(key)
            gh, wh = r.get("gpu_hours"), r.get("wasted_gpu_hours")
            share = (wh / gh) if gh and wh is not None else None
            notes = list(r.get("notes") or []) + ([f"underused: {r['underused_remedy']}"] if r.get("underused_remedy") else [])
            uh = r.get("underused_gpu_hours")
            parts.append(
                f'<tr><td class="name">{esc(key_text)}</td><td class="num">{esc(r.get("gpus"))}</td>'
                f'<td class="num" data-v="{gh or ""}">{"" if gh is None else f"{gh:.2f}"}</td>'
                f'<td class="num" data-v="{wh or ""}">{"" if wh is None else f"{wh:.2f}"}</td>'
                f'<td class="num" data-v="{share or ""}">{esc(fmt_pct(share))}</td>'
                f'<td class="num" data-v="{uh or ""}">{"" if uh is None else f"{uh:.2f}"}</td>'
                f'<td>{esc("; ".join(notes) if isinstance(notes, list) else notes)}</td></tr>')
        parts.append("</tbody></table>")
    rows, total = gpu_rows(w)
    parts.append('<h3>GPUs</h3><table class="sortable" id="gpu-table"><thead><tr><th>host</th><th>GPU</th>'
                 '<th>model</th><th class="num">GPU-h</th><th class="num">wasted GPU-h</th>'
                 '<th class="num">tensor active</th><th>tensor active over time</th><th>SM clock over time</th>'
                 "</tr></thead><tbody>")
    clocks = [v for r in rows for v in (r["clock_series"] or []) if v is not None]
    c_lo, c_hi = (min(clocks), max(clocks)) if clocks else (None, None)
    for r in rows:
        gpu = "?" if r["gpu"] is None else str(r["gpu"])
        if r.get("gpu_instance"):
            gpu += f" gi:{r['gpu_instance']}"
        t_mean = r["tensor_mean"]
        clock_note = (f"SM clock {c_lo / 1e6:.0f}\u2013{c_hi / 1e6:.0f} MHz across the GPUs shown"
                      if c_lo is not None else "SM clock")
        parts.append(
            f'<tr><td class="name">{esc(r["host"])}</td><td>{esc(gpu)}</td><td>{esc(r["model"] or "")}</td>'
            f'<td class="num" data-v="{r["observed_h"]}">{r["observed_h"]:.2f}</td>'
            f'<td class="num" data-v="{r["wasted_h"]}">{r["wasted_h"]:.2f}</td>'
            f'<td class="num" data-v="{"" if t_mean is None else t_mean}">{esc(fmt_pct(t_mean))}</td>'
            f'<td>{spark_svg(r["tensor_series"] or [], lo=0.0, hi=1.0, colour="#D55E00", label="tensor active 0-100%")}</td>'
            f'<td>{spark_svg(r["clock_series"] or [], lo=c_lo, hi=c_hi, colour="#0072B2", label=clock_note)}</td></tr>')
    parts.append("</tbody></table>")
    if total > len(rows):
        parts.append(f'<p class="muted">{len(rows)} of {total} GPUs shown (most wasted first); all are in the JSON '
                     "output.</p>")
    from ridgeline.render.fleet.measures import html_table

    parts.append(html_table(w))
    parts.append("</section>")
    return "".join(parts)
