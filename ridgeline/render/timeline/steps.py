"""Terminal lines for the timeline's steps (ridgeline.analyzer.timeline.steps) and fusion candidates
(ridgeline.analyzer.timeline.fusion): a few lines each under the Timeline block; the full tables are in
``--format json`` (``timeline.steps``, ``timeline.fusion``)."""

from __future__ import annotations

WIDTH = 80


def step_lines(tl, width: int = WIDTH) -> list[str]:
    """Per device: steps, median step and the split of all steps' time, outliers, data-loader stalls."""
    import polars as pl

    from ridgeline.render.text import fmt_seconds, shorten

    steps = getattr(tl, "steps", None)
    if steps is None or not steps.height:
        return []
    lines = ["", "Steps: GPU time per step, split (docs/timeline.md#steps)"]
    several = steps.get_column("source").n_unique() > 1
    for (source, device), part in steps.group_by(["source", "device"], maintain_order=True):
        tot = float(part.get_column("step_s").sum())

        def share(c):
            return f"{100 * float(part.get_column(c).sum()) / tot:.0f}%" if tot else "-"

        med = float(part.get_column("step_s").median())
        loader = float(part.get_column("dataloader_s").sum())
        where = (f"{source.rsplit('/', 1)[-1]} " if several else "") + f"gpu:{device}"
        lines.append(f"  {where}: {part.height} steps, median {fmt_seconds(med)}")
        lines.append(f"    compute {share('compute_s')}, communication exposed {share('comm_exposed_s')}, "
                     f"copies {share('copy_s')}, idle {share('idle_s')} of step time")
        if loader:
            lines.append(f"    data-loader stall: {fmt_seconds(loader)} of GPU idle while the host fetched the next batch"
                         f" ({share('dataloader_s')} of step time)")
        for r in part.filter(pl.col("outlier").fill_null(False)).iter_rows(named=True):
            lines.append(f"    outlier step {shorten(r['step'], 30)}: {fmt_seconds(r['step_s'])} "
                         f"(median {fmt_seconds(med)}; idle {fmt_seconds(r['idle_s'])})")
    return lines


def fusion_lines(tl, top: int = 3, width: int = WIDTH) -> list[str]:
    """The top fusion candidates over all devices, by device idle inside the sequences."""
    from ridgeline.render.text import fmt_seconds, shorten

    fusion = getattr(tl, "fusion", None)
    if fusion is None or not fusion.height:
        return []
    best = fusion.sort(["gap_s", "count"], descending=True).head(top)
    lines = ["", f"Fusion candidates: short kernels back to back ({best.height} of {fusion.height}; "
                 "docs/timeline.md#fusion)"]
    from ridgeline.render.fit import fit_names

    rows = best.to_dicts()
    several = fusion.get_column("device").n_unique() > 1  # the same sequence on two GPUs: say which
    heads = [f"  x{r['count']:,} " + (f"gpu:{r['device']} " if several else "") for r in rows]
    room = width - max(len(h) for h in heads)
    # shortened at word ends and never alike: two candidates never print the same line
    seqs = fit_names([_runs(r["sequence"]) for r in rows], lambda t: len(t) <= room)
    for r, head in zip(rows, heads):
        host = f", launches {fmt_seconds(r['launch_host_s'])} host" if r["launch_host_s"] is not None else ""
        lines.append(shorten(head + seqs[_runs(r["sequence"])], width))
        lines.append(f"     {fmt_seconds(r['span_s'])}, {fmt_seconds(r['gap_s'])} idle between{host}: fuse or graph")
    return lines


def _runs(sequence: str) -> str:
    """``A -> A -> A -> B`` -> ``A x3 -> B``: repeated labels once, with their count."""
    out: list[list] = []
    for label in sequence.split(" -> "):
        if out and out[-1][0] == label:
            out[-1][1] += 1
        else:
            out.append([label, 1])
    return " -> ".join(f"{label} x{n}" if n > 1 else label for label, n in out)
