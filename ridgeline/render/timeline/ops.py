"""Terminal lines for PyTorch op groups on the roofline (ridgeline.analyzer.ops.groups): the model
coverage per device and the groups with the most to save; the full table is in ``--format json``
(``timeline.op_groups``, ``timeline.op_coverage``)."""

from __future__ import annotations

import re
import textwrap

WIDTH = 80
TOP = 8


def op_lines(tl, width: int = WIDTH) -> list[str]:
    """'Ops on the roofline': coverage per device, then the top groups by saving (modelled ones),
    each with its calls, GPU time, achieved TFLOP/s, roof fraction and bound."""
    import polars as pl

    from ridgeline.analyzer.kernels.precisions import LABELS
    from ridgeline.analyzer.ops.groups import coverage
    from ridgeline.render.text import fmt_pct, fmt_seconds, shorten

    g = getattr(tl, "op_groups", None)
    if g is None or not g.height:
        return []
    lines = ["", "Ops on the roofline (FLOPs, bytes from recorded shapes: docs/op-models.md)"]
    cov = coverage(g)
    several = cov.get_column("source").n_unique() > 1
    for r in cov.iter_rows(named=True):
        where = (f"{r['source'].rsplit('/', 1)[-1]} " if several else "") + f"gpu:{r['device']}"
        lines.append(f"  {where}: {fmt_pct(r['model_coverage'], 1)} of {fmt_seconds(r['kernel_time_s'])} kernel time "
                     "in modelled op groups")
    top = g.filter(pl.col("model").is_not_null()).head(TOP)
    if not top.height:
        lines.append("  no op with a model (GEMMs so far): nothing placed on the roofline")
        return lines
    name_w = width - (2 + 5 + 8 + 8 + 5 + 8 + 8)
    lines.append(f"  {'op (input shapes)':<{name_w}}{'calls':>5}{'time':>8}{'TFLOP/s':>8}{'roof':>5}{'on':>8}{'bound':>8}")
    for r in top.iter_rows(named=True):
        dims = re.sub(r"(,\[\])+\]$", "]", r["input_dims"] or "")  # trailing scalar arguments left out
        label = shorten(f"{r['op'].removeprefix('aten::')} {dims}", name_w - 1)
        tflops = f"{r['achieved_flops_per_s'] / 1e12:.1f}" if r["achieved_flops_per_s"] is not None else "-"
        frac = fmt_pct(r["roof_fraction"]) if r["roof_fraction"] is not None else "-"
        prec = LABELS.get(r["precision"] or "", "")
        lines.append(f"  {label:<{name_w}}{r['calls']:>5,}{fmt_seconds(r['gpu_time_s']):>8}{tflops:>8}{frac:>5}"
                     f"{prec:>8}{(r['bound'] or '-'):>8}")
    lines += textwrap.wrap("roof = time at the datasheet peak of the precision ('on') or at DRAM bandwidth (bytes: "
                           "each operand once, a lower bound), / time taken; all groups: --format json", width,
                           initial_indent="  ", subsequent_indent="  ")
    return lines
