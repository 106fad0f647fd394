"""One self-contained HTML report page from a finished :class:`~ridgeline.result.AnalysisResult`.

Everything is inline: CSS, the plots as SVG, a few lines of JavaScript that sort the kernel
table. No fonts, scripts, images or styles are fetched, and a Content-Security-Policy meta tag
forbids the page from fetching anything (the one script is allowed by its hash). Every string
that came from an input (kernel names, paths, subjects, messages) goes through
:func:`html.escape`; the SVG plots are produced by matplotlib (which escapes text) and then
stripped of comments, XML prologue and metadata and given unique ids.
"""

from __future__ import annotations

import base64
import hashlib
import math
from pathlib import Path
from typing import Any

from ridgeline import __version__
from ridgeline.analyzer.kernels.latency import VIEW_BOUNDS, VIEW_LABELS, view_bound
from ridgeline.analyzer.kernels.speed_of_light import LEGEND as SOL_LEGEND, mark as sol_mark
from ridgeline.render.plot_style import BOUND_COLORS as PLOT_BOUND_COLORS
from ridgeline.render.plot_style import PRECISION_LABELS

SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}
# the bounds as every view shows them: the latency class split into launch- and stall-bound
BOUND_ORDER = VIEW_BOUNDS
BOUND_COLORS = PLOT_BOUND_COLORS  # the page's badges in the plots' colours
PRECISION_NAMES = PRECISION_LABELS  # one table of precision names for the plots and the page
SOURCE_NAMES = {
    "ncu": "measured by ncu",
    "ncu-device-attributes": "ncu device attributes",
    "catalogue": "catalogue (datasheet)",
    "derived-from-device-attributes": "derived from device attributes (SMs x per-SM rate x clock)",
}
MAX_KERNEL_ROWS = 500
MAX_SKIPPED_EXAMPLES = 3


from ridgeline.render.htmltext import esc, esc_breakable, fmt_num, fmt_pct, fmt_seconds, fmt_si  # noqa: E402,F401



def roof_rows(result) -> list[dict[str, Any]]:
    """The roofs used, one dict each: what, value (formatted), source, ridge (FLOP/B) or None
    (the ridge of each roof as the JSON document records it: ridgeline.render.facts)."""
    from ridgeline.render.facts import roof_ridges
    from ridgeline.render.terminal import tensor_path_label

    rows = []
    for r, ridge in zip(result.roofs, roof_ridges(result)):
        if r.kind == "compute":
            what = PRECISION_NAMES.get(r.precision or "", r.precision or "compute")
            if r.path:  # two roofs of one precision (wgmma, mma.sync): name the path each is for
                what += f" ({tensor_path_label(r.path)})"
        else:
            what = f"{(r.level or 'memory').upper()} bandwidth"
        rows.append(
            {
                "kind": r.kind,
                "what": what,
                "value": r.value,
                "value_text": fmt_si(r.value, r.unit),
                "source": SOURCE_NAMES.get(r.source, r.source),
                "detail": r.detail,
                "ridge": ridge,
            }
        )
    return rows


def time_by_bound(result) -> dict[str, float]:
    """Share of GPU time per bound ('memory', 'compute', 'latency', 'unknown'): ridgeline.render.facts."""
    from ridgeline.render.facts import time_by_bound as shares

    return shares(result)


def sorted_findings(result) -> list:
    return sorted(result.findings or [], key=lambda f: f.sort_key)


def skipped_groups(result) -> list[dict[str, Any]]:
    """Skipped items grouped by (source, reason): count and the first few items."""
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for s in result.skipped or []:
        g = groups.setdefault((s.source, s.reason), {"source": s.source, "reason": s.reason, "count": 0, "items": []})
        g["count"] += 1
        if len(g["items"]) < MAX_SKIPPED_EXAMPLES:
            g["items"].append(s.item)
    return sorted(groups.values(), key=lambda g: (-g["count"], g["source"], g["reason"]))


def kernel_rows(result, limit: int = MAX_KERNEL_ROWS) -> tuple[list[dict[str, Any]], int]:
    """SUMMARY rows, most GPU time first (at most ``limit``), and the total number of names."""
    if result.summary is None or not result.summary.height:
        return [], 0
    df = result.summary.sort("time_share", descending=True, nulls_last=True)
    return df.head(limit).to_dicts(), df.height


def telemetry_overview(result) -> dict[str, Any] | None:
    """GPUs, hosts, models and time span seen in the telemetry, or None without telemetry."""
    import polars as pl

    from ridgeline.render.facts import telemetry_gpu_count

    tel = result.telemetry
    windows = getattr(result, "windows", None)
    has_windows = windows is not None and getattr(windows, "height", 0)
    if (tel is None or not getattr(tel, "height", 0)) and not has_windows:
        return None
    # GPUs and hosts as the JSON's telemetry.windows count them (the plot frame holds plotted fields only)
    keys = (windows if has_windows else tel).select("host").unique()
    if tel is not None and getattr(tel, "height", 0):
        span = tel.select(pl.col("timestamp").min().alias("a"), pl.col("timestamp").max().alias("b")).row(0)
    else:
        span = windows.select(pl.col("window_start").min().alias("a"), pl.col("window_end").max().alias("b")).row(0)
    frame = windows if has_windows else tel
    models = sorted({str(m) for m in frame["model"].unique().to_list() if m}) if "model" in frame.columns else []
    return {
        "gpus": telemetry_gpu_count(result),
        "hosts": keys.height,
        "models": models,
        "start": span[0],
        "end": span[1],
        "duration_s": (span[1] - span[0]).total_seconds() if span[0] is not None and span[1] is not None else None,
    }


def _input_name(path: str) -> str:
    """An input as a title names it: a file inside a hive-partitioned store (``store/host=a/
    date=x/part-0.parquet``) is named by its store folder, not by ``part-0.parquet``."""
    p = Path(path)
    parents = [q for q in p.parents if q.name]
    hive = [q for q in parents if "=" in q.name]
    if hive:
        top = hive[-1].parent
        return (top.name or str(top)) + "/"
    return p.name


def describe_inputs(result) -> str:
    names = list(dict.fromkeys(_input_name(i.path) for i in result.inputs or []))
    if not names:
        return "no inputs"
    return names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more"


def gpu_title(result) -> str:
    """The GPU a page is about, as every view names it: :func:`ridgeline.render.facts.gpu_title`
    (the JSON's ``gpu.label``, or "unknown GPU")."""
    from ridgeline.render.facts import gpu_title as title

    return title(result)


# ----------------------------------------------------------------------------------------
# SVG embedding
# ----------------------------------------------------------------------------------------
from ridgeline.render.htmltext import embed_svg  # noqa: E402,F401  (re-exported)


def _plot_svgs(result, *, per_launch: bool, top: int, compare_gpu) -> list[tuple[str, str, str]]:
    """(id, caption, inline svg) for each plot that applies; a plot that fails is reported."""
    from ridgeline.render import plots

    out = []
    has_kernels = (result.kernels is not None and result.kernels.height) or (
        result.summary is not None and result.summary.height
    )
    if has_kernels:
        fig = plots.roofline_figure(result, per_launch=per_launch, top=top, compare_gpu=compare_gpu)
        caption = (
            "Roofline: arithmetic intensity at DRAM (FLOP/byte) against achieved FLOP/s. "
            "Lines are the roofs (source in the legend), circles the ridge points; point area is "
            "the kernel's share of GPU time, colour its bound."
        )
        out.append(("roofline", caption, embed_svg(plots.figure_svg(fig), "r-", "Roofline plot")))
    if result.telemetry is not None and getattr(result.telemetry, "height", 0):
        fig = plots.telemetry_figure(result)
        if fig is not None:
            caption = (
                "Telemetry per GPU: GPU-Util (a kernel was running) against tensor-core and DRAM "
                "activity. Shaded spans were flagged by a rule."
            )
            out.append(("telemetry", caption, embed_svg(plots.figure_svg(fig), "t-", "Telemetry plot")))
    if getattr(result, "timeline", None) is not None:
        from ridgeline.render.timeline.plot import timeline_figure

        fig = timeline_figure(result)
        if fig is not None:
            caption = ("Timeline per device: share of each time bin the GPU was busy (shaded: any activity; "
                       "line: kernels; orange: copies). The gaps are idle time the roofline cannot see.")
            out.append(("timeline", caption, embed_svg(plots.figure_svg(fig), "tl-", "Timeline plot")))
    return out


# ----------------------------------------------------------------------------------------
# page
# ----------------------------------------------------------------------------------------
CSS = """
:root { --fg:#1b1b1b; --muted:#5a5a5a; --line:#d9d9d9; --bg:#ffffff; --soft:#f5f6f7;
  --mem:#0072B2; --cmp:#D55E00; --unk:#8C8C8C; --crit:#B00020; --warn:#9A6200; --info:#33658A; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; color: var(--fg); background: var(--bg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1200px; margin: 0 auto; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
.sub { color: var(--muted); margin: 0 0 16px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(220px, 1fr)); gap: 12px; }
.card { background: var(--soft); border-radius: 6px; padding: 10px 14px; }
.card .k { color: var(--muted); font-size: 13px; }
.card .v { font-size: 18px; font-weight: 600; overflow-wrap: anywhere; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; font-size: 14px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { overflow-wrap: anywhere; max-width: 640px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
td.subj { min-width: 11em; max-width: 300px; }
#roofs td:first-child { white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:focus { outline: 2px solid var(--mem); }
table.sortable th[aria-sort="ascending"]::after { content: " \\25B2"; font-size: 11px; }
table.sortable th[aria-sort="descending"]::after { content: " \\25BC"; font-size: 11px; }
.sev { font-weight: 600; padding: 1px 6px; border-radius: 4px; color: #fff; font-size: 12px; }
.sev-critical { background: var(--crit); } .sev-warning { background: var(--warn); } .sev-info { background: var(--info); }
.bound-memory { color: var(--mem); font-weight: 600; } .bound-compute { color: var(--cmp); font-weight: 600; }
.bound-unknown { color: var(--unk); font-weight: 600; } .bound-latency, .bound-launch { color: #A0508A; font-weight: 600; }
.bound-stall { color: #007A59; font-weight: 600; }
.bar { display: flex; height: 22px; border-radius: 4px; overflow: hidden; margin: 6px 0; background: var(--soft); }
.bar span { display: block; height: 100%; }
.legend span { display: inline-block; margin-right: 16px; }
.sw { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 5px; vertical-align: -1px; }
figure { margin: 12px 0 24px; }
figure svg.plot { width: 100%; height: auto; max-width: 1100px; display: block; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 4px; }
details summary { cursor: pointer; color: var(--muted); }
ul.ev { margin: 4px 0 0; padding-left: 18px; font-size: 13px; }
li { overflow-wrap: anywhere; }
.remedy { margin-top: 3px; }
.muted { color: var(--muted); }
.verdict { background: #FFF6D6; border-left: 4px solid #E69F00; padding: 8px 12px; margin: 14px 0; overflow-wrap: anywhere; }
span.name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
@media print { figure, tr, .card { break-inside: avoid; } body { padding: 0; } }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
"""

# Sort a table by the clicked header: numbers by data-v, text otherwise; empty cells last.
JS = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.tHead.rows[0].cells;
  Array.prototype.forEach.call(heads, function (th, col) {
    th.tabIndex = 0;
    function sort() {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      function key(row) { var c = row.cells[col]; return c.hasAttribute("data-v") ? c.getAttribute("data-v") : c.textContent; }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        if (x === "" || y === "") { return (x === "") - (y === ""); }
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    }
    th.addEventListener("click", sort);
    th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
  });
});
"""


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
        f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'"
    )


def _num_cell(value, text: str | None = None) -> str:
    v = "" if value is None or (isinstance(value, float) and not math.isfinite(value)) else repr(float(value))
    return f'<td class="num" data-v="{esc(v)}">{esc(text if text is not None else fmt_num(value))}</td>'


def _summary_section(result) -> str:
    parts = ['<section id="summary"><h2>Summary</h2><div class="cards">']
    tel = telemetry_overview(result)
    gpu = gpu_title(result)
    cards = [("GPU", gpu, result.gpu_match and f"chosen from {result.gpu_match}")]
    if result.kernels is not None:
        cards.append(("GPU time profiled", fmt_seconds(result.total_gpu_time_s), None))
    if tel:
        cards.append(
            ("Telemetry", f"{tel['gpus']} GPU{'s' if tel['gpus'] != 1 else ''} on {tel['hosts']} host"
             f"{'s' if tel['hosts'] != 1 else ''}", f"over {fmt_seconds(tel['duration_s'])}" if tel["duration_s"] else None)
        )
    if result.kernels is not None:
        n_names = result.summary.height if result.summary is not None else None
        cards.append(("Launches", f"{result.kernels.height:,}", n_names is not None and f"{n_names:,} kernel names"))
    sev_counts: dict[str, int] = {}
    for f in result.findings or []:
        sev_counts[f.severity] = sev_counts.get(f.severity, 0) + 1
    sev_txt = ", ".join(f"{n} {s}" for s, n in sorted(sev_counts.items(), key=lambda kv: SEVERITY_ORDER.get(kv[0], 9)))
    cards.append(("Findings", str(len(result.findings or [])), sev_txt or None))
    for k, v, sub in cards:
        parts.append(
            f'<div class="card"><div class="k">{esc(k)}</div><div class="v">{esc(v)}</div>'
            + (f'<div class="k">{esc(sub)}</div>' if sub else "")
            + "</div>"
        )
    parts.append("</div>")

    top = sorted_findings(result)
    if top:
        f = top[0]
        parts.append(
            f'<p class="verdict"><b>Top finding:</b> <code>{esc(f.code)}</code> {esc(f.name)} on '
            f'<span class="name">{esc(f.subject)}</span>: {esc(f.message)} <b>Do:</b> {esc(f.remedy)}</p>'
        )
    shares = time_by_bound(result)
    if shares:
        parts.append("<h3>Where the GPU time goes</h3><div class=\"bar\" role=\"img\" aria-label=\"share of GPU time by bound\">")
        for b in BOUND_ORDER:
            if shares.get(b):
                parts.append(
                    f'<span style="width:{shares[b] * 100:.2f}%;background:{BOUND_COLORS[b]}" '
                    f'title="{esc(VIEW_LABELS[b])} {fmt_pct(shares[b])}"></span>'
                )
        parts.append('</div><div class="legend">')
        for b in BOUND_ORDER:
            if b in shares:
                parts.append(
                    f'<span><i class="sw" style="background:{BOUND_COLORS[b]}"></i>'
                    f"{esc(VIEW_LABELS[b])}: <b>{fmt_pct(shares[b])}</b></span>"
                )
        parts.append("</div>")

    rows = roof_rows(result)
    if not rows and result.kernels is None:
        pass  # telemetry only: no roofline
    elif rows:
        parts.append(
            '<h3>Roofs used</h3><table id="roofs"><thead><tr><th>Roof</th><th class="num">Value</th>'
            '<th class="num">Ridge point</th><th>Source</th></tr></thead><tbody>'
        )
        for r in rows:
            ridge = f"{r['ridge']:.3g} FLOP/B" if r["ridge"] else ""
            src = esc(r["source"]) + (f' <span class="muted">({esc_breakable(r["detail"])})</span>' if r["detail"] else "")
            parts.append(
                f"<tr><td>{esc(r['what'])}</td><td class=\"num\">{esc(r['value_text'])}</td>"
                f"<td class=\"num\">{esc(ridge)}</td><td>{src}</td></tr>"
            )
        parts.append("</tbody></table>")
    else:
        parts.append('<p class="muted">No roofs: the GPU was not identified (pass --gpu).</p>')
    if result.notes:
        parts.append("<h3>Notes</h3><ul>" + "".join(f"<li>{esc_breakable(n)}</li>" for n in result.notes) + "</ul>")
    parts.append("</section>")
    return "".join(parts)


def _findings_section(result) -> str:
    findings = sorted_findings(result)
    parts = [f'<section id="findings"><h2>Findings ({len(findings)})</h2>']
    if not findings:
        parts.append('<p class="muted">No rule fired.</p></section>')
        return "".join(parts)
    parts.append(
        '<p class="muted">Sorted by impact: the GPU time the finding\'s remedy would save at best (an upper '
        "bound: the gap to the roof, or what the remedy buys when it changes the work, as a bigger batch does; "
        "each finding's evidence names its basis).</p>"
        '<table id="findings-table" class="sortable"><thead><tr><th class="num">#</th><th>Severity</th>'
        '<th>Rule</th><th>Subject</th><th>What was measured / what to do</th><th class="num">Impact</th>'
        "<th>Confidence</th></tr></thead><tbody>"
    )
    for i, f in enumerate(findings, 1):
        ev = ""
        if f.evidence:
            items = "".join(
                f"<li><code>{esc(e.metric)}</code> = {esc(fmt_num(e.value) if isinstance(e.value, float) else e.value)}"
                f" {esc(e.unit)} <span class=\"muted\">({esc(e.source)})</span></li>"
                for e in f.evidence
            )
            ev = f'<details><summary>evidence ({len(f.evidence)})</summary><ul class="ev">{items}</ul></details>'
        impact = fmt_seconds(f.impact_s) if f.impact_s is not None else "\u2014"
        if f.impact_share is not None:
            impact += f" ({fmt_pct(f.impact_share)})"
        sev_rank = SEVERITY_ORDER.get(f.severity, 9)
        parts.append(
            f'<tr><td class="num" data-v="{i}">{i}</td>'
            f'<td data-v="{sev_rank}"><span class="sev sev-{esc(f.severity)}">{esc(f.severity)}</span></td>'
            f"<td><code>{esc(f.code)}</code><br><span class=\"muted\">{esc(f.name)}</span></td>"
            f'<td class="name subj">{esc(f.subject)}</td>'
            f'<td>{esc(f.message)}<div class="remedy"><b>Do:</b> {esc(f.remedy)}</div>{ev}</td>'
            f'<td class="num" data-v="{esc("" if f.impact_s is None else repr(float(f.impact_s)))}">{esc(impact)}</td>'
            f"<td>{esc(f.confidence)}</td></tr>"
        )
    parts.append("</tbody></table></section>")
    return "".join(parts)


def _kernels_section(result) -> str:
    rows, total = kernel_rows(result)
    if not rows:
        return ""
    shown = f" (top {len(rows)} of {total} by GPU time)" if total > len(rows) else ""
    parts = [
        f'<section id="kernels"><h2>Kernels{esc(shown)}</h2>'
        '<p class="muted">One row per kernel name, all its launches together. Click a header to sort. '
        'Gap to roof: GPU time above the roof that bounds each launch; a finding\'s saving can exceed it when its '
        'remedy changes the work (a bigger batch).</p>'
        '<table id="kernel-table" class="sortable"><thead><tr><th>Kernel</th><th class="num">Launches</th>'
        '<th class="num">GPU time</th><th class="num">Share</th><th class="num">Intensity (FLOP/B)</th>'
        '<th>Precision</th><th>Bound</th><th class="num">% of roof</th>'
        '<th class="num" title="GPU time of the launches minus their time at the roof that bounds each (the '
        'gap to the roof, summary.saving_upper_bound_s); a finding\'s saving is what its remedy buys and can be '
        'larger when the remedy changes the work, e.g. a bigger batch">Gap to roof</th>'
        "</tr></thead><tbody>"
    ]
    from ridgeline.render.htmltext import kernel_displays

    shown_names = kernel_displays((r.get("kernel_label") or r.get("short_name") or r.get("kernel_name"),
                                   r.get("kernel_name")) for r in rows)  # uncut: the page has room
    for r, short in zip(rows, shown_names):
        bound = view_bound(r.get("bound"), r.get("latency_kind")) or "unknown"
        sol_title = f' title="{esc(SOL_LEGEND)}"' if sol_mark(r.get("bound_source")) else ""
        prec = r.get("precision")
        parts.append(
            f'<tr><td class="name" title="{esc(r.get("kernel_name"))}">{esc(short)}</td>'
            + _num_cell(r.get("launches"), f"{r.get('launches') or 0:,}")
            + _num_cell(r.get("total_duration_s"), fmt_seconds(r.get("total_duration_s")))
            + _num_cell(r.get("time_share"), fmt_pct(r.get("time_share")))
            + _num_cell(r.get("intensity_dram"))
            + f"<td>{esc(PRECISION_NAMES.get(prec, prec) if prec else 'n/a')}</td>"
            + f'<td class="bound-{esc(bound)}"{sol_title}>{esc(bound + sol_mark(r.get("bound_source")))}</td>'
            + _num_cell(r.get("roof_fraction"), fmt_pct(r.get("roof_fraction"), 0))
            + _num_cell(r.get("saving_upper_bound_s"), fmt_seconds(r.get("saving_upper_bound_s")))
            + "</tr>"
        )
    parts.append("</tbody></table>")
    if any(sol_mark(r.get("bound_source")) for r in rows):
        parts.append(f'<p class="muted">{esc(SOL_LEGEND)}</p>')
    parts.append("</section>")
    return "".join(parts)


def _inputs_section(result) -> str:
    parts = ['<section id="inputs"><h2>Inputs</h2>']
    if result.inputs:
        parts.append(
            '<table id="inputs-table"><thead><tr><th>File</th><th>Read as</th><th class="num">Rows</th>'
            "</tr></thead><tbody>"
        )
        for i in result.inputs:
            parts.append(
                f'<tr><td class="name">{esc_breakable(i.path)}</td><td>{esc(i.kind)}</td>'
                f'<td class="num">{i.rows:,}</td></tr>'
            )
        parts.append("</tbody></table>")
    else:
        parts.append('<p class="muted">No inputs were read.</p>')
    groups = skipped_groups(result)
    n = len(result.skipped or [])
    parts.append(f"<h3>Skipped ({n})</h3>")
    if groups:
        parts.append(
            '<table id="skipped-table"><thead><tr><th>Source</th><th>Reason</th><th class="num">Count</th>'
            "<th>Examples</th></tr></thead><tbody>"
        )
        for g in groups:
            ex = "; ".join(g["items"]) + ("; \u2026" if g["count"] > len(g["items"]) else "")
            parts.append(
                f'<tr><td class="name">{esc(g["source"])}</td><td>{esc(g["reason"])}</td>'
                f'<td class="num">{g["count"]:,}</td><td class="name">{esc_breakable(ex)}</td></tr>'
            )
        parts.append("</tbody></table>")
    else:
        parts.append('<p class="muted">Nothing was skipped: every item read was analyzed.</p>')
    parts.append("</section>")
    return "".join(parts)


def _postmortem_sections(result) -> str:
    from ridgeline.render.timeline.postmortem_html import ncu_rules_section, timeline_section, utilization_section

    return utilization_section(result) + timeline_section(result) + ncu_rules_section(result)


def _fleet_sections(result) -> str:
    from ridgeline.render.fleet.html import fleet_sections

    return fleet_sections(result)


def _what_if_section(result, plots: bool = True) -> str:
    from ridgeline.render.kernels.whatif import html_section

    return html_section(result, plots=plots)


def render_html(
    result,
    *,
    title: str | None = None,
    plots: bool = True,
    per_launch: bool = False,
    top: int = 8,
    compare_gpu=None,
) -> str:
    """The report page as one HTML string (UTF-8, self-contained)."""
    gpu = gpu_title(result)
    if title is None:
        title = f"ridgeline report \u2014 {gpu} \u2014 {describe_inputs(result)}"
    plot_html = ""
    if plots:
        figs = _plot_svgs(result, per_launch=per_launch, top=top, compare_gpu=compare_gpu)
        if figs:
            plot_html = '<section id="plots"><h2>Plots</h2>' + "".join(
                f'<figure id="plot-{pid}">{svg}<figcaption>{esc(cap)}</figcaption></figure>'
                for pid, cap, svg in figs
            ) + "</section>"
    body = "".join(
        [
            _summary_section(result),
            _fleet_sections(result),
            _findings_section(result),
            _postmortem_sections(result),
            plot_html,
            _what_if_section(result, plots),
            _kernels_section(result),
            _inputs_section(result),
        ]
    )
    script = JS.strip()
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp(script)}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>\n"
        f"<body><main><h1>{esc(title)}</h1>"
        f'<p class="sub">Generated by ridgeline {esc(__version__)}. Roof sources: figures measured by '
        "the profiler win over datasheet (catalogue) figures; each roof says which it is.</p>"
        f"{body}"
        f"<footer>ridgeline {esc(__version__)} \u00b7 self-contained page: no network access.</footer>"
        f"</main><script>{script}</script></body></html>\n"
    )


def write_html(result, path, **kw) -> Path:
    path = Path(path)
    path.write_text(render_html(result, **kw), encoding="utf-8")
    return path
