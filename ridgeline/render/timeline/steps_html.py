"""HTML tables for the timeline's steps (ridgeline.analyzer.timeline.steps) and fusion candidates
(ridgeline.analyzer.timeline.fusion), under the report's Timeline section."""

from __future__ import annotations

from pathlib import Path

MAX_STEP_ROWS = 200
ARROW = " \u2192 "  # between a fusion candidate's kernels: a browser never breaks it in two, as it did "-" / ">"


def steps_html(tl) -> str:
    from ridgeline.render.htmltext import esc, fmt_seconds

    steps = getattr(tl, "steps", None)
    if steps is None or not steps.height:
        return ""
    parts = ['<h3 id="steps">Steps</h3><p class="muted">Per step, the device time from the first GPU start of the '
             "work the step launched to the next step's; split into compute, exposed communication, copies while no "
             "kernel runs and idle (data loader: idle while the host fetched the next batch). Outlier: above median + "
             "3 robust standard deviations (docs/timeline.md#steps).</p>",
             '<table class="sortable"><thead><tr><th>file</th><th>device</th><th>step</th><th class="num">time</th>'
             '<th class="num">compute</th><th class="num">comm exposed</th><th class="num">copies</th>'
             '<th class="num">idle</th><th class="num">data loader</th><th>outlier</th></tr></thead><tbody>']

    def cell(v):
        return f'<td class="num" data-v="{v}">{esc(fmt_seconds(v))}</td>'

    for r in steps.head(MAX_STEP_ROWS).iter_rows(named=True):
        flag = {True: "outlier", False: "", None: "not judged (last)"}[r["outlier"]]
        parts.append(f'<tr><td class="name">{esc(Path(r["source"]).name)}</td><td>gpu:{esc(str(r["device"]))}</td>'
                     f'<td>{esc(r["step"])}</td>' + cell(r["step_s"]) + cell(r["compute_s"]) + cell(r["comm_exposed_s"])
                     + cell(r["copy_s"]) + cell(r["idle_s"]) + cell(r["dataloader_s"]) + f"<td>{esc(flag)}</td></tr>")
    parts.append("</tbody></table>")
    if steps.height > MAX_STEP_ROWS:
        parts.append(f'<p class="muted">First {MAX_STEP_ROWS} of {steps.height} steps; all in --format json.</p>')
    return "".join(parts)


def fusion_html(tl) -> str:
    from ridgeline.render.htmltext import esc, fmt_seconds

    fusion = getattr(tl, "fusion", None)
    if fusion is None or not fusion.height:
        return ""
    parts = ['<h3 id="fusion">Fusion candidates</h3><p class="muted">The same sequence of short kernels launched back '
             "to back on a stream, many times: idle = device time between them, what fusing them or capturing them "
             "in a CUDA graph gives back at most; host = launch time saved (docs/timeline.md#fusion).</p>",
             '<table class="sortable"><thead><tr><th>device</th><th>kernels</th><th class="num">count</th>'
             '<th class="num">span</th><th class="num">idle between</th><th class="num">host launches</th>'
             "</tr></thead><tbody>"]
    from ridgeline.render.htmltext import kernel_displays

    rows = fusion.sort(["gap_s", "count"], descending=True).to_dicts()
    # the sequence from its kernels' labels at full length (the page has room; cut labels made two
    # different sequences read alike)
    import polars as pl

    from ridgeline.analyzer.kernels.families import family_columns

    labels: dict = {}
    names = sorted({n for r in rows for n in r["names"] if n is not None})
    if names:
        lab = family_columns(pl.DataFrame({"name": names}), name_column="name", fallback_column="name")
        labels = dict(zip(names, kernel_displays(zip(lab["kernel_label"].to_list(), names))))
    for r in rows:
        host = r["launch_host_s"]
        # an arrow the browser never breaks in two ("-" / ">")
        seq = ARROW.join(labels.get(n) or str(n) for n in r["names"]) if labels else r["sequence"]
        parts.append(f'<tr><td>gpu:{esc(str(r["device"]))}</td><td class="name" title="{esc(ARROW.join(r["names"]))}">'
                     f'{esc(seq)}</td><td class="num">{r["count"]:,}</td>'
                     f'<td class="num" data-v="{r["span_s"]}">{esc(fmt_seconds(r["span_s"]))}</td>'
                     f'<td class="num" data-v="{r["gap_s"]}">{esc(fmt_seconds(r["gap_s"]))}</td>'
                     f'<td class="num" data-v="{host if host is not None else ""}">{esc(fmt_seconds(host))}</td></tr>')
    parts.append("</tbody></table>")
    return "".join(parts)
