"""GitHub-flavoured Markdown report (for CI job summaries) from a finished AnalysisResult.

Same facts as the HTML page, no plots. Every string from an input goes through :func:`md`,
which neutralises what would break a table cell or start markup: ``|``, backticks, ``<``/``>``/
``&`` (GitHub would otherwise treat ``<script>`` as HTML), and control characters and line breaks
(shown escaped, ``\\x1b``, ``\\n``: ridgeline.render.safe_text.inline).
"""

from __future__ import annotations

import re

from ridgeline.analyzer.kernels.latency import VIEW_LABELS, view_bound
from ridgeline.analyzer.kernels.precisions import label as precision_label
from ridgeline.analyzer.kernels.speed_of_light import LEGEND as SOL_LEGEND, mark as sol_mark
from ridgeline.render.html import (
    BOUND_ORDER,
    describe_inputs,
    gpu_title,
    fmt_num,
    fmt_pct,
    fmt_seconds,
    kernel_rows,
    roof_rows,
    skipped_groups,
    sorted_findings,
    telemetry_overview,
    time_by_bound,
)
from ridgeline.render.safe_text import inline

MAX_KERNELS = 25

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#~|])")


def md(value: object) -> str:
    """Escape a value for a GFM table cell or a line of text."""
    text = inline(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_SPECIAL.sub(r"\\\1", text)
    return " ".join(text.split())


def _table(header: list[str], rows: list[list[str]], align: list[str] | None = None) -> list[str]:
    align = align or ["l"] * len(header)
    sep = ["---:" if a == "r" else "---" for a in align]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _remedy_lines(findings) -> list[str]:
    """Findings that share a rule and a remedy say the remedy once, with the numbers of the
    findings it is for; the evidence stays in the JSON and the HTML report (issue 37 item 11: a job
    summary carries the verdicts, not the figures behind them)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, f in enumerate(findings, 1):
        groups.setdefault((f.code, f.remedy), []).append(i)
    return [f"- **{md(code)}** ({', '.join(f'#{i}' for i in nums)}): {md(remedy)}"
            for (code, remedy), nums in groups.items()]


#: a GitHub job summary's budget (bytes): the page drops detail, plan by plan, until it fits
BUDGET_BYTES = 6 * 1024 - 64
#: (kernel rows, finding rows, characters of a finding's message; None: all) and whether the
#: remedies and the inputs / skipped tables are folded in: tried in order until the page fits
#: :data:`BUDGET_BYTES`; whatever is left out is in the JSON and the HTML report
PLANS: tuple[tuple[int | None, int | None, int | None, bool, bool], ...] = (
    (None, None, None, True, True),
    (10, None, None, True, True),
    (10, None, None, True, False),
    (10, None, 160, True, False),
    (5, 10, 160, True, False),
    (5, 5, 120, False, False),
)
CUT_NOTE = "*Cut to fit the job-summary budget: every figure is in the JSON (`--format json`) and the HTML report.*"


def render_markdown(result, *, title: str | None = None, top: int = MAX_KERNELS,
                    budget: int | None = BUDGET_BYTES) -> str:
    """The report as GitHub-flavoured Markdown, under ``budget`` bytes (None: no budget): each of
    :data:`PLANS` in turn, the first that fits; past the last, the page is cut at a line and says so."""
    text = ""
    for kernels, findings, chars, remedies, inputs in PLANS:
        text = _render(result, title=title, top=min(top, kernels or top), findings_max=findings, message_max=chars,
                       remedies=remedies, inputs=inputs)
        if budget is None or len(text.encode("utf-8")) < budget:
            return text
    return _cut(text, budget)


def _cut(text: str, budget: int) -> str:
    """``text`` cut at a line so that it and :data:`CUT_NOTE` fit ``budget`` bytes; an open
    ``<details>`` is closed."""
    room = budget - len(CUT_NOTE.encode("utf-8")) - 40
    kept: list[str] = []
    size = 0
    for line in text.split("\n"):
        size += len(line.encode("utf-8")) + 1
        if size > room:
            break
        kept.append(line)
    opened = sum(1 for ln in kept if ln.startswith("<details>")) - sum(1 for ln in kept if ln.startswith("</details>"))
    return "\n".join(kept + ["", *(["</details>", ""] * max(0, opened)), CUT_NOTE, ""])


def _clip(text: str, limit: int | None) -> str:
    """``text`` cut at a word to at most ``limit`` characters, an ellipsis saying so (None: whole)."""
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "\u2026"


def _render(result, *, title: str | None, top: int, findings_max: int | None, message_max: int | None,
            remedies: bool, inputs: bool) -> str:
    tel = telemetry_overview(result)
    gpu = gpu_title(result)
    title = title or f"ridgeline report \u2014 {gpu} \u2014 {describe_inputs(result)}"
    lines = [f"## {md(title)}", ""]
    gpu_line = f"**GPU:** {md(gpu)}"
    if result.gpu_match:
        gpu_line += f" (chosen from {md(result.gpu_match)})"
    lines.append(gpu_line + "  ")
    if result.kernels is not None:
        lines.append(f"**GPU time profiled:** {fmt_seconds(result.total_gpu_time_s)}  ")
    if tel:
        g, h = tel["gpus"], tel["hosts"]
        lines.append(
            f"**Telemetry:** {g} GPU{'s' if g != 1 else ''} on {h} host{'s' if h != 1 else ''} "
            f"over {fmt_seconds(tel['duration_s'])}  "
        )
    top_findings = sorted_findings(result)
    if top_findings:
        f = top_findings[0]
        lines.append(f"**Top finding:** {md(f.code)} {md(f.name)} on {md(f.subject)}: {md(_clip(f.message, message_max))}  ")
    shares = time_by_bound(result)
    if shares:
        lines.append(
            "**Where the time goes:** "
            + ", ".join(f"{VIEW_LABELS[b]} {fmt_pct(shares[b])}" for b in BOUND_ORDER if b in shares)
        )
    lines.append("")
    roofs = roof_rows(result)
    if roofs:
        lines += ["### Roofs used", ""]
        lines += _table(
            ["Roof", "Value", "Ridge point", "Source"],
            [
                [md(r["what"]), md(r["value_text"]), f"{r['ridge']:.3g} FLOP/B" if r["ridge"] else "", md(r["source"])]
                for r in roofs
            ],
            ["l", "r", "r", "l"],
        )
        lines.append("")
    if not inputs and result.notes:  # the notes go where the inputs went: the JSON and the HTML report
        lines += [f"{len(result.notes)} note(s) on the inputs: in the JSON and the HTML report.", ""]
    elif result.notes:
        lines += [f"- {md(note)}" for note in result.notes] + [""]

    findings = sorted_findings(result)
    lines += [f"### Findings ({len(findings)})", ""]
    if findings:
        rows = []
        for i, f in enumerate(findings[:findings_max], 1):
            impact = fmt_seconds(f.impact_s) if f.impact_s is not None else "\u2014"
            if f.impact_share is not None:
                impact += f" ({fmt_pct(f.impact_share)})"
            rows.append(
                [str(i), md(f.severity), f"{md(f.code)} {md(f.name)}", md(f.subject), md(_clip(f.message, message_max)), impact,
                 md(f.confidence)]
            )
        lines += _table(
            ["#", "Severity", "Rule", "Subject", "Finding", "Impact", "Confidence"],
            rows,
            ["r", "l", "l", "l", "l", "r", "l"],
        )
        if findings_max is not None and len(findings) > findings_max:
            lines += ["", f"{len(findings) - findings_max} more findings in the JSON and the HTML report."]
        # what to do, folded: a pull request shows one line per finding; the evidence is in the
        # JSON and the HTML report
        if remedies:
            lines += ["", "<details><summary>What to do (the evidence: JSON and HTML report)</summary>", ""]
            lines += _remedy_lines(findings[:findings_max])
            lines += ["", "</details>"]
    else:
        lines.append("No rule fired.")
    lines.append("")

    krows, total = kernel_rows(result, limit=top)
    if krows:
        shown = f" (top {len(krows)} of {total} by GPU time)" if total > len(krows) else ""
        lines += [f"### Kernels{shown}", ""]
        lines += _table(
            ["Kernel", "Launches", "GPU time", "Share", "Intensity (FLOP/B)", "Precision", "Bound", "% of roof"],
            [
                [
                    md(r.get("kernel_label") or r.get("short_name") or r.get("kernel_name")),
                    f"{r.get('launches') or 0:,}",
                    fmt_seconds(r.get("total_duration_s")),
                    fmt_pct(r.get("time_share")),
                    fmt_num(r.get("intensity_dram")),
                    md(precision_label(r.get("precision"))),
                    md((view_bound(r.get("bound"), r.get("latency_kind")) or "unknown") + sol_mark(r.get("bound_source"))),
                    fmt_pct(r.get("roof_fraction"), 0),
                ]
                for r in krows
            ],
            ["l", "r", "r", "r", "r", "l", "l", "r"],
        )
        lines.append("")
        if any(sol_mark(r.get("bound_source")) for r in krows):
            lines += [md(SOL_LEGEND), ""]

    lines += _groups_markdown(result)
    lines += _timeline_markdown(result)
    from ridgeline.render.kernels.whatif import markdown_lines

    lines += markdown_lines(result, md=md)
    if not inputs:
        n = len(result.skipped or [])
        lines += [f"{len(result.inputs or [])} input(s), {n} skipped item(s): listed in the JSON and the HTML report.", ""]
        return "\n".join(lines)
    lines += ["<details><summary>Inputs and skipped rows</summary>", "", "### Inputs", ""]
    if result.inputs:
        lines += _table(
            ["File", "Read as", "Rows"],
            [[md(i.path), md(i.kind), f"{i.rows:,}"] for i in result.inputs],
            ["l", "l", "r"],
        )
    else:
        lines.append("No inputs were read.")
    lines.append("")
    groups = skipped_groups(result)
    lines += [f"### Skipped ({len(result.skipped or [])})", ""]
    if groups:
        lines += _table(
            ["Source", "Reason", "Count", "Examples"],
            [
                [md(g["source"]), md(g["reason"]), f"{g['count']:,}",
                 md("; ".join(g["items"]) + ("; \u2026" if g["count"] > len(g["items"]) else ""))]
                for g in groups
            ],
            ["l", "l", "r", "l"],
        )
    else:
        lines.append("Nothing was skipped.")
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def _groups_markdown(result, limit: int = 20) -> list[str]:
    """The per-group table of ``--by`` / ``--jobs`` (worst first), its notes folded."""
    from ridgeline.render.fleet.html import group_rows

    rows = group_rows(result)
    if not rows:
        return []
    by = getattr(result.groups, "by", None) or []
    lines = [f"### Groups by {md(', '.join(by) or 'workload')} ({len(rows)})", ""]
    lines += _table(
        ["Group", "GPUs", "GPU-h", "Wasted GPU-h", "Wasted", "Underused GPU-h"],
        [[md(r["key"]), f"{r['gpus'] or 0:,}", fmt_num(r["gpu_hours"]), fmt_num(r["wasted_gpu_hours"]),
          fmt_pct(r["gpu_hours"] and (r["wasted_gpu_hours"] or 0.0) / r["gpu_hours"]),
          fmt_num(r.get("underused_gpu_hours"))] for r in rows[:limit]],
        ["l", "r", "r", "r", "r", "r"],
    )
    notes = [f"- **{md(r['key'])}**: {md(n)}" for r in rows[:limit]
             for n in list(r.get("notes") or []) + ([f"underused: {r['underused_remedy']}"] if r.get("underused_remedy") else [])]
    if len(rows) > limit:
        lines.append(f"\n{len(rows) - limit} more groups in the JSON output.")
    if notes:
        lines += ["", "<details><summary>Notes to forward</summary>", "", *notes, "", "</details>"]
    lines.append("")
    return lines


def _timeline_markdown(result) -> list[str]:
    """``### Timeline``: busy/idle per device (shares of capture), when a timeline was read."""
    from pathlib import Path

    tl = getattr(result, "timeline", None)
    if tl is None or tl.devices is None or not tl.devices.height:
        return []
    from ridgeline.analyzer.timeline.busy import IDLE_CAUSES_LEGEND, host_calls_legend

    vendors = sorted({v for v in tl.devices.get_column("vendor").to_list() if v}) if "vendor" in tl.devices.columns else []
    lines = ["### Timeline", "",
             "Shares of each device's capture (first to last GPU activity); idle split: launch gaps, host "
             f"synchronizing, host late, queued, other; {md(host_calls_legend(tl.devices))}; {md(IDLE_CAUSES_LEGEND)}."
             + (f" GPU vendor: {', '.join(vendors)}." if vendors else ""), ""]
    rows = []
    for r in tl.devices.iter_rows(named=True):
        cap = r["capture_s"] or 0.0

        def share(v, known=True):
            return "n/a" if not known else (fmt_pct(v / cap) if cap and v is not None else "-")

        dev = ("gpu:?" if r["device"] is None else f"gpu:{r['device']}")
        rows.append([md(Path(r["source"]).name), md(dev), fmt_seconds(cap), share(r["busy_s"]), share(r["kernel_busy_s"]),
                     share(r["idle_s"]), share(r["idle_launch_s"]), share(r["idle_sync_s"], bool(r.get("host_api"))),
                     share(r["idle_host_s"], bool(r.get("host_api"))), share(r["idle_queued_s"], bool(r.get("host_api"))),
                     share(r["idle_other_s"])])
    lines += _table(["File", "Device", "Capture", "Busy", "Kernels", "Idle", "Launch", "Sync", "Host late", "Queued",
                     "Other"], rows, ["l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "r"])
    lines.append("")
    from ridgeline.render.timeline.comm import markdown_lines

    lines += markdown_lines(tl, _table, md)
    return lines
