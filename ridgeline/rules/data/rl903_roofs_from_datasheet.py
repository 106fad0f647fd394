"""RL903 roofs-from-datasheet."""

from __future__ import annotations

from ridgeline.rules import kernels as K
from ridgeline.rules.base import Context, Evidence, Finding, Rule


class RoofsFromDatasheet(Rule):
    """Roofs taken from the GPU catalogue (datasheet), not measured by the profiler.

    What it finds
    -------------
    GPUs whose launches were placed against a compute or bandwidth roof from the catalogue
    (``peak_flops_source`` or ``peak_bw_source`` = ``catalogue``) for at least
    ``min_time_share`` of GPU time. One info finding per GPU, naming the roofs and how the GPU
    was matched when the pipeline recorded it (``ctx.extra["gpu_match"]``).

    Why it matters
    --------------
    Datasheet peaks assume boost clocks and the exact SKU. The kernels may have run at a lower
    clock (power or thermal limits, ncu's clock control), on a different variant (PCIe vs SXM,
    a MIG slice) or with a different memory configuration. Fractions of roof and the impact
    estimates are then only as good as the match.

    What to do
    ----------
    Collect the roofline sections (``ncu --set roofline``) so the profiler records the peaks at
    the clocks the kernels ran, and check the GPU match (``--gpu`` names the exact variant; see
    ``ridgeline gpus``).

    Example
    -------
    A ``--metrics`` capture without the roofline sections: ``roofs for H100 SXM come from the
    datasheet for 100% of GPU time: compute (bf16/fp16 989 TFLOP/s), bandwidth (3.35 TB/s)``.
    """

    code = "RL903"
    name = "roofs-from-datasheet"
    severity = "info"
    family = "data"
    thresholds = {
        "min_time_share": (0.05, "fires when launches on datasheet roofs hold at least this share of GPU time"),
    }

    def check(self, ctx: Context) -> list[Finding]:
        import polars as pl

        df = K.launches(ctx)
        total = K.total_gpu_time(ctx)
        if df is None or not total:
            return []
        cat_f = pl.col("peak_flops_source") == "catalogue"
        cat_b = pl.col("peak_bw_source") == "catalogue"
        sub = df.filter((cat_f | cat_b).fill_null(False) & pl.col("gpu").is_not_null())
        if sub.height == 0:
            return []
        out = []
        for gpu in sub["gpu"].unique(maintain_order=True).to_list():
            g = sub.filter(pl.col("gpu") == gpu)
            share = float(g["duration_s"].sum()) / total
            if share < self.params["min_time_share"]:
                continue
            compute = (
                g.filter(cat_f.fill_null(False) & pl.col("precision").is_not_null())
                .group_by("precision")
                .agg(peak=pl.col("peak_flops_per_s").first(), t=pl.col("duration_s").sum())
                .sort(["t", "precision"], descending=[True, False])
            )
            bw = g.filter(cat_b.fill_null(False))["peak_bw_bytes_per_s"].drop_nulls()
            parts = []
            evidence = []
            if compute.height:
                peaks = ", ".join(
                    f"{K.precision_label(p)} {K.fmt_si(v, 'FLOP/s')}"
                    for p, v in zip(compute["precision"].to_list(), compute["peak"].to_list())
                )
                parts.append(f"compute ({peaks})")
                evidence += [
                    Evidence(f"peak_flops_{p}", v, "FLOP/s", "catalogue")
                    for p, v in zip(compute["precision"].to_list(), compute["peak"].to_list())
                ]
            if bw.len():
                parts.append(f"bandwidth ({K.fmt_si(float(bw[0]), 'B/s')})")
                evidence.append(Evidence("peak_bw_bytes_per_s", float(bw[0]), "B/s", "catalogue"))
            match = ctx.extra.get("gpu_match")
            if match:
                evidence.append(Evidence("gpu_match", str(match), "text", "derived"))
            evidence.append(Evidence("time_share_on_datasheet_roofs", share, "ratio", "derived"))
            out.append(
                self.finding(
                    subject=f"gpu:{gpu}",
                    message=(
                        f"roofs for {gpu} come from the datasheet for {K.fmt_pct(share)} of GPU time: "
                        f"{', '.join(parts)}"
                    ),
                    remedy=(
                        "Collect the roofline sections (ncu --set roofline) so the profiler records peaks at the "
                        "clocks the kernels ran, and name the exact GPU variant with --gpu if the match is wrong."
                    ),
                    evidence=tuple(evidence),
                    impact_s=None,
                    impact_share=None,
                    confidence="catalogue",
                    subject_kind="gpu",
                )
            )
        return out
