"""``--what-if`` projections (:mod:`ridgeline.analyzer.kernels.whatif`) as JSON records, terminal text
and an HTML section: measured and projected side by side, with the model's assumptions."""

from __future__ import annotations

from typing import Any

from ridgeline.analyzer.kernels.whatif import KERNEL_KEYS

# keys of one ``what_if[]`` object, in order (docs/json-schema.md)
WHAT_IF_KEYS: dict[str, str] = {
    "scenario": "the --what-if spec as resolved: a GPU's catalogue name (\"H200\") or \"batch=N\"",
    "kind": "\"gpu\" (same kernels on another GPU) or \"batch\" (the decode step at another batch)",
    "target_gpu": "GPU the projection runs on (the profiled GPU for a batch scenario; null when unknown)",
    "duration_s": "measured GPU time of every launch (s)",
    "projected_duration_s": "projected GPU time of every launch (s)",
    "speedup": "duration_s / projected_duration_s (>1: faster)",
    "batch": "batch scenarios: the profile's decode batch (null for GPU scenarios)",
    "batch_source": "how the batch was found: given (--batch), launch shapes (norm grids) or the weight GEMMs' FLOPs",
    "projected_batch": "batch scenarios: N",
    "tokens_per_s": "batch scenarios: batch / duration_s (as if the profile holds one decode step); null when the "
    "profile does not look like LLM work (llm_evidence null: the batch is the GEMMs' rows per weight read)",
    "projected_tokens_per_s": "batch scenarios: N / projected_duration_s; null as tokens_per_s",
    "ridge_batch": "batch scenarios: the batch at which the weight GEMMs' intensity reaches their ridge",
    "max_batch_by_memory": "batch scenarios: the batch at which weights + KV cache fill the GPU's memory "
    "(null when not estimable)",
    "llm_evidence": "batch scenarios: why the profile reads as LLM work (a kernel family or library, "
    "ridgeline.analyzer.kernels.workload), so the batch is tokens; null: GEMM rows per weight read (since 1.5)",
    "assumptions": "what the projection assumes, one sentence each",
    "notes": "what could not be projected, and why",
    "kernels": "one record per kernel name, most measured time first (keys below)",
}


def records(result) -> list[dict[str, Any]]:
    """The ``what_if`` list of the JSON document."""
    out = []
    for p in getattr(result, "what_if", None) or []:
        d = {
            "scenario": p.scenario, "kind": p.kind, "target_gpu": p.target_gpu, "duration_s": p.duration_s,
            "projected_duration_s": p.projected_duration_s, "speedup": p.speedup, "batch": p.batch,
            "batch_source": p.batch_source, "projected_batch": p.projected_batch, "tokens_per_s": p.tokens_per_s,
            "projected_tokens_per_s": p.projected_tokens_per_s, "ridge_batch": p.ridge_batch,
            "max_batch_by_memory": p.max_batch_by_memory, "llm_evidence": p.llm_evidence,
            "assumptions": list(p.assumptions),
            "notes": list(p.notes), "kernels": p.kernels.select(list(KERNEL_KEYS)).to_dicts(),
        }
        assert list(d) == list(WHAT_IF_KEYS)
        out.append(d)
    return out


def _s(x: float | None) -> str:
    if x is None:
        return "-"
    if x >= 1:
        return f"{x:.3g} s"
    if x >= 1e-3:
        return f"{x * 1e3:.3f} ms"
    return f"{x * 1e6:.1f} us"


def _n(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def _speed(p) -> str:
    s = p.speedup
    if s is None:
        return ""
    if abs(s - 1) < 0.005:
        return "(same)"
    return f"({s:.2f}x faster)" if s > 1 else f"({1 / s:.2f}x slower)"


def headline(p) -> str:
    """One line: the scenario and its step time before and after."""
    if p.kind == "batch" and not getattr(p, "llm_evidence", None):
        # not LLM work: the GEMMs' rows per weight read (M), GPU time, no tokens or decode step
        return (f"rows per weight read (M) {_n(p.batch)} -> {p.projected_batch} on {p.target_gpu or 'the profiled GPU'}: "
                f"GPU time {_s(p.duration_s)} -> {_s(p.projected_duration_s)} {_speed(p)}".rstrip())
    if p.kind == "batch":
        line = (f"batch {_n(p.batch)} -> {p.projected_batch} on {p.target_gpu or 'the profiled GPU'}: step "
                f"{_s(p.duration_s)} -> {_s(p.projected_duration_s)}; tokens/s {_n(p.tokens_per_s)} -> "
                f"{_n(p.projected_tokens_per_s)}")
        return line
    return f"on {p.scenario}: {_s(p.duration_s)} -> {_s(p.projected_duration_s)} {_speed(p)}"


def batch_lines(p) -> list[str]:
    """Batch scenarios: where the batch came from, the ridge, the memory limit."""
    if p.kind != "batch":
        return []
    if not getattr(p, "llm_evidence", None):
        out = [f"rows per weight read {_n(p.batch)}: {p.batch_source}"]
        if p.ridge_batch is not None:
            out.append(f"the GEMMs reach the ridge at ~{_n(p.ridge_batch)} rows per weight read")
        if p.max_batch_by_memory is not None:
            out.append(f"the working set fills {p.target_gpu}'s memory at ~{_n(p.max_batch_by_memory)} rows")
        return out
    out = [f"batch {_n(p.batch)}: {p.batch_source}"]
    if p.ridge_batch is not None:
        out.append(f"the weight GEMMs reach the ridge at batch ~{_n(p.ridge_batch)}")
    if p.max_batch_by_memory is not None:
        out.append(f"weights + KV cache fill {p.target_gpu}'s memory at batch ~{_n(p.max_batch_by_memory)} "
                   "(this context length)")
    return out


def format_text(result, *, top: int = 10, width: int = 80) -> list[str]:
    """Terminal lines (empty without projections)."""
    import textwrap

    projections = getattr(result, "what_if", None) or []
    if not projections:
        return []
    lines = ["What if:"]
    for p in projections:
        lines += textwrap.wrap(headline(p), width=width, initial_indent="  ", subsequent_indent="    ")
        for extra in batch_lines(p):
            lines += textwrap.wrap(extra, width=width, initial_indent="    ", subsequent_indent="      ")
        name_w = max(width - 4 - 9 - 4 - 9 - 2 - 15, 20)
        lines.append(f"    {'kernel':<{name_w}}{'measured':>9}    {'projected':>9}  bound")
        for row in p.kernels.head(top).iter_rows(named=True):
            label = row["kernel_label"] or row["kernel_name"] or "?"
            if len(label) > name_w - 1:
                label = label[: name_w - 2] + "~"
            bound = row["bound"] or "-"
            if row["projected_bound"] != row["bound"]:
                bound += f"->{row['projected_bound'] or '-'}"
            lines.append(f"    {label:<{name_w}}{_s(row['duration_s']):>9} -> {_s(row['projected_duration_s']):>9}"
                         f"  {bound}")
        if p.kernels.height > top:
            lines.append(f"    ... {p.kernels.height - top} more kernel names")
        lines += textwrap.wrap("assumes: " + "; ".join(p.assumptions), width=width, initial_indent="    ",
                               subsequent_indent="      ")
        for note in p.notes:
            lines += textwrap.wrap(f"note: {note}", width=width, initial_indent="    ", subsequent_indent="      ")
    return lines


def _plot(result, p) -> str:
    """The roofline with this projection's points (hollow) and, for a GPU, the target's roofs."""
    from ridgeline.render import plots as P
    from ridgeline.render.htmltext import embed_svg

    has = result.kernels is not None and result.kernels.height
    if not has:
        return ""
    compare = None
    if p.kind == "gpu" and p.target_gpu:
        from ridgeline.analyzer.kernels.gpus import try_lookup

        compare = try_lookup(p.target_gpu)[0]
    fig = P.roofline_figure(result, what_if=p, compare_gpu=compare, top=6)
    prefix = "w" + "".join(ch for ch in p.scenario.lower() if ch.isalnum())[:12] + "-"
    svg = embed_svg(P.figure_svg(fig), prefix, f"Roofline with the {p.scenario} projection")
    import html

    return (f'<figure id="plot-what-if-{html.escape(prefix[:-1])}">{svg}<figcaption>Filled: measured; hollow: '
            f"projected ({html.escape(p.scenario)}), same colour; grey dashed: the target GPU's roofs.</figcaption>"
            "</figure>")


def html_section(result, *, top: int = 15, plots: bool = True) -> str:
    """The report's what-if section (empty string without projections)."""
    projections = getattr(result, "what_if", None) or []
    if not projections:
        return ""
    import html

    e = html.escape
    parts = ['<section id="what-if"><h2>What if</h2>']
    for p in projections:
        parts.append(f"<h3>{e(p.scenario)}</h3><p>{e(headline(p))}</p>")
        for extra in batch_lines(p):
            parts.append(f"<p>{e(extra)}</p>")
        parts.append("<table><thead><tr><th>kernel</th><th>measured</th><th>projected</th><th>bound</th>"
                     "<th>projected bound</th></tr></thead><tbody>")
        for row in p.kernels.head(top).iter_rows(named=True):
            parts.append(
                f"<tr><td>{e(row['kernel_label'] or row['kernel_name'] or '?')}</td>"
                f"<td class=\"num\">{e(_s(row['duration_s']))}</td>"
                f"<td class=\"num\">{e(_s(row['projected_duration_s']))}</td>"
                f"<td>{e(row['bound'] or '-')}</td><td>{e(row['projected_bound'] or '-')}</td></tr>"
            )
        parts.append("</tbody></table>")
        parts.append("<p><small>Assumes: " + e("; ".join(p.assumptions)) + ".</small></p>")
        if plots:
            parts.append(_plot(result, p))
        for note in p.notes:
            parts.append(f"<p><small>Note: {e(note)}</small></p>")
    parts.append("</section>")
    return "\n".join(parts)


def markdown_lines(result, *, md=str, top: int = 10) -> list[str]:
    """The report's what-if section in GitHub-flavoured Markdown (nothing without projections)."""
    projections = getattr(result, "what_if", None) or []
    if not projections:
        return []
    lines = ["### What if", ""]
    for p in projections:
        lines += [f"**{md(p.scenario)}**: {md(headline(p))}", ""]
        for extra in batch_lines(p):
            lines += [f"- {md(extra)}"]
        if batch_lines(p):
            lines.append("")
        lines += ["| Kernel | Measured | Projected | Bound | Projected bound |", "|---|--:|--:|---|---|"]
        for row in p.kernels.head(top).iter_rows(named=True):
            lines.append(f"| {md(row['kernel_label'] or row['kernel_name'] or '?')} | {_s(row['duration_s'])} | "
                         f"{_s(row['projected_duration_s'])} | {row['bound'] or '-'} | {row['projected_bound'] or '-'} |")
        lines += ["", f"Assumes: {md('; '.join(p.assumptions))}.", ""]
        lines += [f"- Note: {md(n)}" for n in p.notes] + ([""] if p.notes else [])
    return lines
