"""GitHub-flavoured Markdown report (for CI job summaries) from a finished AnalysisResult.

Same facts as the HTML page, no plots. Every string from an input goes through :func:`md`,
which neutralises what would break a table cell or start markup: ``|``, backticks, ``<``/``>``/
``&`` (GitHub would otherwise treat ``<script>`` as HTML), and control characters and line breaks
(shown escaped, ``\\x1b``, ``\\n``: ridgeline.render.safe_text.inline).
"""

from __future__ import annotations

import re

from ridgeline.analyzer.kernels.latency import VIEW_LABELS, view_bound
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


EVIDENCE_SHOWN = 4  # evidence items per finding in the folded details (all are in the JSON)


def _source_kind(source: object) -> str:
    """``measured: dram__bytes.sum + ...`` -> ``measured``: the kind of a figure, not its recipe."""
    text = str(source or "")
    return text.split(":", 1)[0].strip() or text


def _evidence_text(items) -> str:
    return "; ".join(
        f"{md(e.metric)} {md(fmt_num(e.value) if isinstance(e.value, float) else e.value)} {md(e.unit)}"
        f" ({md(_source_kind(e.source))})"
        for e in items
    )


def _remedy_lines(findings) -> list[str]:
    """Findings that share a rule and a remedy say the remedy once; the evidence they share (the
    same ridge, the same peaks) is said once too, and each finding shows what is its own."""
    groups: dict[tuple[str, str], list[tuple[int, object]]] = {}
    for i, f in enumerate(findings, 1):
        groups.setdefault((f.code, f.remedy), []).append((i, f))
    out = []
    for (code, remedy), members in groups.items():
        nums = ", ".join(f"#{i}" for i, _f in members)
        out.append(f"- **{md(code)}** ({nums}): {md(remedy)}")

        def key(e):
            return (e.metric, repr(e.value), e.unit)

        common = set.intersection(*[{key(e) for e in f.evidence} for _i, f in members]) if len(members) > 1 else set()
        if common:
            first = [e for e in members[0][1].evidence if key(e) in common]
            out.append(f"  - all: {_evidence_text(first[:EVIDENCE_SHOWN])}")
        for i, f in members:
            own = [e for e in f.evidence if key(e) not in common]
            if not own:
                continue
            more = len(own) - EVIDENCE_SHOWN
            out.append(f"  - #{i} {md(f.subject)}: {_evidence_text(own[:EVIDENCE_SHOWN])}"
                       + (f"; {more} more in the JSON" if more > 0 else ""))
    return out


def render_markdown(result, *, title: str | None = None, top: int = MAX_KERNELS) -> str:
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
        lines.append(f"**Top finding:** {md(f.code)} {md(f.name)} on {md(f.subject)}: {md(f.message)}  ")
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
    for note in result.notes or []:
        lines.append(f"- {md(note)}")
    if result.notes:
        lines.append("")

    findings = sorted_findings(result)
    lines += [f"### Findings ({len(findings)})", ""]
    if findings:
        rows = []
        for i, f in enumerate(findings, 1):
            impact = fmt_seconds(f.impact_s) if f.impact_s is not None else "\u2014"
            if f.impact_share is not None:
                impact += f" ({fmt_pct(f.impact_share)})"
            rows.append(
                [str(i), md(f.severity), f"{md(f.code)} {md(f.name)}", md(f.subject), md(f.message), impact,
                 md(f.confidence)]
            )
        lines += _table(
            ["#", "Severity", "Rule", "Subject", "Finding", "Impact", "Confidence"],
            rows,
            ["r", "l", "l", "l", "l", "r", "l"],
        )
        # what to do and the evidence, folded: a pull request shows one line per finding; every
        # figure's full recipe (the counters summed) is in the JSON and the HTML report
        lines += ["", "<details><summary>What to do, and the evidence</summary>", ""]
        lines += _remedy_lines(findings)
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
                    md(r.get("precision") or "n/a"),
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
        ["Group", "GPUs", "GPU-h", "Wasted GPU-h", "Wasted"],
        [[md(r["key"]), f"{r['gpus'] or 0:,}", fmt_num(r["gpu_hours"]), fmt_num(r["wasted_gpu_hours"]),
          fmt_pct(r["gpu_hours"] and (r["wasted_gpu_hours"] or 0.0) / r["gpu_hours"])] for r in rows[:limit]],
        ["l", "r", "r", "r", "r"],
    )
    notes = [f"- **{md(r['key'])}**: {md(n)}" for r in rows[:limit] for n in (r.get("notes") or [])]
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
