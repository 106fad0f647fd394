"""Measures of the telemetry windows that the main per-GPU table has no column for (issue 37 item 4):
GPU temperature, NVLink and PCIe throughput. One row per GPU, a column per measure some window
holds; means over the windows weighted by each window's time observed (``span_s``), as the main
table's means are. Nothing when no window holds any of them.

:data:`MEASURES` is the one table of these columns: the terminal (:func:`measure_lines`) and the
report page (:func:`html_table`) print it, and the view-consistency test holds each printed figure
to the JSON windows.
"""

from __future__ import annotations

from ridgeline.render.text import fmt_si, inline, shorten

#: (WINDOW column, header, unit as printed): "C" prints the number with no decimals, else SI units
MEASURES: tuple[tuple[str, str, str], ...] = (
    ("gpu_temp_mean_c", "temp", "C"),
    ("nvlink_rx_mean_bytes_per_s", "nvl rx", "B/s"),
    ("nvlink_tx_mean_bytes_per_s", "nvl tx", "B/s"),
    ("pcie_rx_mean_bytes_per_s", "pcie rx", "B/s"),
    ("pcie_tx_mean_bytes_per_s", "pcie tx", "B/s"),
)
TITLE = "Other measures per GPU (means weighted by time observed)"
LEGEND = {"temp": "temp = mean GPU temperature, C", "nvl": "nvl rx / tx = mean NVLink receive / transmit rate (all links)",
          "pcie": "pcie rx / tx = mean PCIe receive / transmit rate"}
MAX_ROWS = 40
COL_W = 11


def present(windows) -> list[tuple[str, str, str]]:
    """The measures some window holds (a non-null value), in :data:`MEASURES` order."""
    return [m for m in MEASURES if m[0] in windows.columns and windows.get_column(m[0]).null_count() < windows.height]


def per_gpu_means(windows, columns: list[str]):
    """One row per host / GPU / GPU instance (sorted, nulls last): each column's mean over the
    windows holding it, weighted by ``span_s``; null where no window with time observed holds it."""
    import polars as pl

    span = pl.col("span_s").fill_null(0.0)

    def wmean(c):
        ok = pl.col(c).is_not_null() & (span > 0)
        den = pl.when(ok).then(span).otherwise(0.0).sum()
        num = pl.when(ok).then(pl.col(c) * span).otherwise(0.0).sum()
        return pl.when(den > 0).then(num / den).otherwise(None).alias(c)

    keys = ["host", "gpu", "gpu_instance"]
    return windows.group_by(keys).agg(*[wmean(c) for c in columns]).sort(keys, nulls_last=True)


def fmt_measure(value, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if unit == "C" else fmt_si(value, unit)


def measure_lines(windows, *, width: int = 80) -> list[str]:
    """The block (a blank line first), or [] when no window holds any of :data:`MEASURES`."""
    import textwrap

    if windows is None or not windows.height:
        return []
    cols = present(windows)
    if not cols:
        return []
    g = per_gpu_means(windows, [c for c, _h, _u in cols])
    import polars as pl

    longest = int(g.get_column("host").cast(pl.String).str.len_chars().max() or 0)
    host_w = max(11, min(longest, width - 7 - COL_W * len(cols)))
    head = f"{'host':<{host_w}} {'gpu':>5}" + "".join(f"{h:>{COL_W}}" for _c, h, _u in cols)
    lines = ["", TITLE, head, "-" * len(head)]
    for r in g.head(MAX_ROWS).iter_rows(named=True):
        gpu = "?" if r["gpu"] is None else str(r["gpu"])
        if r.get("gpu_instance") is not None:
            gpu += f"/i{r['gpu_instance']}"
        lines.append(f"{shorten(inline(r['host'] or '?'), host_w):<{host_w}} {shorten(gpu, 5):>5}"
                     + "".join(f"{fmt_measure(r[c], u):>{COL_W}}" for c, _h, u in cols))
    if g.height > MAX_ROWS:
        lines.append(f"... {g.height - MAX_ROWS} more GPUs in --format json (telemetry.windows)")
    legend = "; ".join(dict.fromkeys(LEGEND[h.split()[0]] for _c, h, _u in cols))
    lines += textwrap.wrap(legend, width=width, subsequent_indent="  ")
    return lines


def html_table(windows) -> str:
    """``<h3>`` + the table for the report's fleet section ('' when no window holds a measure);
    each cell's ``data-v`` is the mean itself."""
    from ridgeline.render.htmltext import esc

    cols = present(windows)
    if not cols:
        return ""
    g = per_gpu_means(windows, [c for c, _h, _u in cols])
    heads = "".join(f'<th class="num">{esc(h)}</th>' for _c, h, _u in cols)
    parts = ['<h3>Other measures per GPU</h3><p class="muted">Means over the windows weighted by the time observed; '
             + esc("; ".join(dict.fromkeys(LEGEND[h.split()[0]] for _c, h, _u in cols))) + ".</p>"
             '<table class="sortable" id="measures-table"><thead><tr><th>host</th><th>GPU</th>' + heads
             + "</tr></thead><tbody>"]
    for r in g.head(MAX_ROWS * 4).iter_rows(named=True):
        gpu = "?" if r["gpu"] is None else str(r["gpu"])
        if r.get("gpu_instance"):
            gpu += f" gi:{r['gpu_instance']}"
        cells = "".join(f'<td class="num" data-v="{"" if r[c] is None else repr(float(r[c]))}">'
                        f"{esc(fmt_measure(r[c], u))}</td>" for c, _h, u in cols)
        parts.append(f'<tr><td class="name">{esc(r["host"] or "?")}</td><td>{esc(gpu)}</td>{cells}</tr>')
    parts.append("</tbody></table>")
    return "".join(parts)
