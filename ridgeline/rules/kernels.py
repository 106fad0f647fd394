"""Helpers shared by the kernel rules (RL1xx, RL9xx): grouping launches, formatting numbers.

Rules group launches by kernel name (the short name, else the full name) together with the GPU
and precision they ran on, and read only normalized ROOFLINE columns. Sums skip nulls; a group
whose every value is null gets null, never 0 (missing is not zero).

Group columns made by :func:`kernel_groups`:

``subject`` (the kernel's label, see ``ridgeline.analyzer.kernels.families``), ``gpu``, ``precision``,
``family`` (gemm = weight GEMMs incl. grouped/MoE GEMMs / attention = reads the KV cache / null), ``launches``,
``duration_s``, ``time_share``, ``flops``, ``dram_bytes`` and ``l2_bytes`` (summed over the
launches where FLOPs and those bytes were both measured), ``paired_duration_s`` (duration of
the launches with FLOPs and DRAM bytes), ``intensity_dram``, ``intensity_l2``,
``achieved_flops_per_s``, ``achieved_dram_bytes_per_s``, ``peak_flops_per_s``,
``peak_bw_bytes_per_s``, ``ridge_flop_per_byte``, ``peak_flops_source``, ``peak_bw_source``,
``time_to_roof_s``, ``roof_duration_s`` (duration of launches whose time to roof is known),
``roof_fraction`` (time to roof / duration over those launches), ``impact_s``
(sum of ``max(duration_s - time_to_roof_s, 0)``, null if no launch has a roof),
``flops_tensor``, ``flops_cuda`` (fp64 + fp32 + fp16 on CUDA cores, over launches where the
tensor counter was measured too), ``tensor_measured_launches`` (launches whose tensor FLOP
counter is not null), ``mean_duration_s`` and the ``*_source`` recipe strings.
"""

from __future__ import annotations

import math
from typing import Any

from ridgeline import fmt as numfmt
from ridgeline.rules.base import Context, Evidence
from ridgeline.analyzer.kernels.families import KV_CACHE_FAMILIES, WEIGHT_GEMM_FAMILIES

# how a ROOFLINE precision reads in a message (the one table of precision names)
from ridgeline.analyzer.kernels.precisions import WORDS as PRECISION_LABELS  # noqa: E402

# bytes per weight element when a GEMM's inputs are in this precision (decode: AI ~ 2 * batch / bytes)
WEIGHT_BYTES = {
    "fp64": 8.0,
    "fp64_tensor": 8.0,
    "fp32": 4.0,
    "tf32_tensor": 4.0,
    "fp16": 2.0,
    "fp16_tensor": 2.0,
    "fp8_tensor": 1.0,
    "int8_tensor": 1.0,
}

# the tensor-core precision the same math would use: fp32 -> tf32, fp16 -> bf16/fp16, fp64 -> fp64 tensor
TENSOR_EQUIVALENT = {"fp32": "tf32_tensor", "fp16": "fp16_tensor", "fp64": "fp64_tensor"}


#: thresholds most kernel rules share (``thresholds = {..., "min_time_share": K.MIN_TIME_SHARE}``)
MIN_TIME_SHARE = (0.01, "ignore kernel groups holding less than this share of total GPU time")
MIN_MEAN_DURATION_S = (10e-6, "ignore groups whose mean launch is shorter than this (seconds); see RL106")


def significant(p: dict[str, Any]):
    """A kernel group worth a finding: its share of GPU time reaches ``min_time_share`` (unknown
    share counts) and, where the rule has ``min_mean_duration_s``, its mean launch is that long
    (shorter ones are RL106's: launch overhead, not the kernel, is the wall)."""
    import polars as pl

    expr = pl.col("time_share").fill_null(1.0) >= p["min_time_share"]
    if "min_mean_duration_s" in p:
        expr = expr & (pl.col("mean_duration_s") >= p["min_mean_duration_s"])
    return expr


def left_of_ridge(fraction: float = 1.0):
    """Measured intensity below ``fraction`` x the group's ridge point (memory side of the roofline)."""
    import polars as pl

    c = pl.col
    return c("intensity_dram").is_not_null() & (c("ridge_flop_per_byte") > 0) & (
        c("intensity_dram") < c("ridge_flop_per_byte") * fraction)


def right_of_ridge():
    """Measured intensity at or above the group's ridge point (compute side of the roofline)."""
    import polars as pl

    c = pl.col
    return c("intensity_dram").is_not_null() & (c("ridge_flop_per_byte") > 0) & (
        c("intensity_dram") >= c("ridge_flop_per_byte"))


def family_groups(ctx: Context, family: str):
    """:func:`kernel_groups` of one kernel family (``gemm``, ``attention``...), or None."""
    import polars as pl

    return kernel_groups(ctx, rows=pl.col("family") == family)


def precision_label(precision: str | None) -> str:
    return PRECISION_LABELS.get(precision or "", precision or "unknown precision")


def fmt(x: float | None) -> str:
    """A plain number for messages: 3 significant figures, thousands grouped (7.9, 29.5, 295, 1,234)."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    ax = abs(x)
    if ax >= 100:
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:.1f}".rstrip("0").rstrip(".")
    if ax == 0:
        return "0"
    return f"{x:.2g}" if ax >= 0.01 else f"{x:.1e}"




def fmt_vs(a: float | None, b: float | None) -> tuple[str, str]:
    """Two numbers a message compares (``a < b``), each as :func:`fmt` writes it, with more
    significant figures where that would print them alike: ``1.68 < 1.73``, never ``1.7 < 1.7``."""
    if a is None or b is None or a == b:
        return fmt(a), fmt(b)
    fa, fb = fmt(a), fmt(b)
    digits = 3
    while fa == fb and digits < 12:
        fa, fb = (f"{v:,.{digits}g}" if abs(v) < 1e15 else f"{v:.{digits}e}" for v in (a, b))
        digits += 1
    return fa, fb


def ridges_quoted(ctx: Context, ridges) -> list[float]:
    """The ridges (FLOP/B) a message quotes for launches on several roofs, as the Roofs list shows
    them: each launch's ridge snapped to the roof ridge within 2% (ridgeline.result.roof_ridges),
    else kept; distinct, ascending. Never a median or a blend of two roofs' ridges (issue 37: 177
    quoted between the 137 and 216 ridges of two BF16 tensor paths)."""
    from ridgeline.result import roof_ridges

    known = [r for r in roof_ridges(gpu_roofs(ctx)) if r]
    out: set[float] = set()
    for ridge in ridges:
        if ridge is None or not ridge > 0:
            continue
        near = min(known, key=lambda k: abs(k - ridge), default=None)
        out.add(near if near is not None and abs(near - ridge) <= 0.02 * near else float(f"{ridge:.3g}"))
    return sorted(out)


def roof_ridge(ctx: Context, ridge: float | None, precision: str | None, path: str | None = None) -> float | None:
    """The ridge of the roof a group is placed on, as the Roofs list prints it: the one compute roof
    of that precision (and tensor path, where roofs differ by path); else ``ridge`` snapped as
    :func:`ridges_quoted` does. Per-launch peaks (each launch at its own clock) move a group's own
    ridge off the device's; a message quotes the roof the reader can find (issue 37 item 3)."""
    from ridgeline.result import roof_ridges

    roofs = gpu_roofs(ctx)
    found = [(r, x) for r, x in zip(roofs, roof_ridges(roofs)) if x and r.kind == "compute" and r.precision == precision]
    if len(found) > 1 and path:
        found = [(r, x) for r, x in found if r.path == path] or found
    if len({x for _, x in found}) == 1:
        return found[0][1]
    known = [x for x in roof_ridges(roofs) if x]
    near = min(known, key=lambda k: abs(k - ridge), default=None) if ridge else None
    return near if near is not None and abs(near - ridge) <= 0.02 * near else ridge


def ridges_text(values: list[float]) -> str:
    """``ridge 216 FLOP/B``, ``ridges 137 and 216 FLOP/B``, ``ridges 14.2 to 216 FLOP/B``."""
    if not values:
        return "ridge n/a"
    if len(values) == 1:
        return f"ridge {fmt(values[0])} FLOP/B"
    join = " and " if len(values) == 2 else " to "
    return f"ridges {fmt(values[0])}{join}{fmt(values[-1])} FLOP/B"


def fmt_si(x: float | None, unit: str) -> str:
    """A rate with an SI prefix: fmt_si(3.35e12, "B/s") -> "3.35 TB/s" (ridgeline.fmt, MESSAGE style)."""
    return numfmt.si(x, unit, numfmt.MESSAGE)


def fmt_pct(ratio: float | None) -> str:
    """0.3617 -> "36%"; 0.004 -> "0.4%" (ridgeline.fmt, MESSAGE style)."""
    return numfmt.percent(ratio, numfmt.MESSAGE)


def fmt_pct_vs(ratio: float | None, threshold: float) -> tuple[str, str]:
    """Both as percents, with as many decimals as it takes to tell them apart (49.6% vs 50%)."""
    if ratio is None:
        return "n/a", fmt_pct(threshold)
    for decimals in (0, 1, 2, 3):
        a, b = f"{ratio * 100:.{decimals}f}", f"{threshold * 100:.{decimals}f}"
        if a != b or ratio == threshold:
            return f"{a}%", fmt_pct(threshold)
    return f"{ratio * 100:.3f}%", fmt_pct(threshold)


def fmt_s(seconds: float | None) -> str:
    """Durations: 3.2 s, 41.5 ms, 8.1 us (ridgeline.fmt, MESSAGE style)."""
    return numfmt.duration(seconds, numfmt.MESSAGE)


def plural(n: int, word: str) -> str:
    """plural(1, "launch") -> "1 launch"; plural(1200, "kernel") -> "1,200 kernels"."""
    if n == 1:
        return f"1 {word}"
    return f"{n:,} {word}es" if word.endswith(("ch", "sh", "s", "x")) else f"{n:,} {word}s"


def measured(recipe: str | None) -> str:
    """Evidence source for a counted figure: ``"measured: <counter recipe>"``."""
    return f"measured: {recipe}" if recipe else "measured"


def roof_source(source: str | None) -> str:
    """Evidence source for a roof: ``"ncu"`` (peak the profiler recorded), ``"catalogue"``, or
    ``"derived: ..."`` for a GPU the catalogue lacks (roofs from its device attributes)."""
    if source == "derived-from-device-attributes":
        return "derived: SMs x per-SM rate x clock, from the device attributes ncu recorded"
    return source or "catalogue"


def total_gpu_time(ctx: Context) -> float | None:
    """The denominator of impact shares: ``ctx.total_gpu_time_s``, else the sum of launch durations."""
    if ctx.total_gpu_time_s:
        return float(ctx.total_gpu_time_s)
    if ctx.kernels is None or "duration_s" not in ctx.kernels.columns:
        return None
    total = ctx.kernels["duration_s"].sum()
    return float(total) if total else None


_CACHE_KEY = "_rules_cache"


def _cache(ctx: Context) -> dict:
    """Per-context memo shared by the rules of one run (reset when ``ctx.kernels`` changes)."""
    cache = ctx.extra.get(_CACHE_KEY)
    if not isinstance(cache, dict) or cache.get("kernels") is not ctx.kernels:
        cache = {"kernels": ctx.kernels}
        ctx.extra[_CACHE_KEY] = cache
    return cache


def launches(ctx: Context):
    """The ROOFLINE table with ``subject`` and ``family`` columns added, or None if there is none."""
    import polars as pl

    df = ctx.kernels
    if df is None or df.height == 0:
        return None
    cache = _cache(ctx)
    if "launches" not in cache:
        if ("kernel_label" not in df.columns or "kernel_family" not in df.columns
                or df.get_column("kernel_label").null_count() == df.height):
            from ridgeline.analyzer.kernels.families import family_columns

            df = family_columns(df)
        kf = pl.col("kernel_family")
        cache["launches"] = df.with_columns(
            # a GPU the catalogue does not know is named by the export, never printed as "None"
            gpu=pl.coalesce(pl.col("gpu"), pl.col("device_name"), pl.lit("an unidentified GPU")),
            # kernels are named by what they are (docs/kernel-families.md), not by a short name that
            # hides it (FlashAttention-3 is a cutlass::device_kernel)
            subject=pl.coalesce(pl.col("kernel_label"), pl.col("short_name"), pl.col("kernel_name")).fill_null(
                "<unnamed kernel>"
            ),
            # the two families the roofline rules treat apart: weight GEMMs (RL101) and KV-cache readers (RL102)
            family=pl.when(kf.is_in(list(WEIGHT_GEMM_FAMILIES)))
            .then(pl.lit("gemm"))
            .when(kf.is_in(list(KV_CACHE_FAMILIES)))
            .then(pl.lit("attention"))
            .otherwise(pl.lit(None, dtype=pl.String)),
        )
    return cache["launches"]


def _first(col: str):
    import polars as pl

    return pl.col(col).drop_nulls().first()


def null_sum(expr, known):
    """Sum of ``expr`` over rows where ``known`` holds; null (not 0) when no row is known."""
    import polars as pl

    return pl.when(known.sum() > 0).then(expr.filter(known).sum()).otherwise(None)


def kernel_groups(ctx: Context, *, by: tuple[str, ...] = ("subject", "gpu", "precision"), rows=None,
                  latency: bool = False):
    """Aggregate launches per kernel name group (see the module docstring for the columns).

    Latency-bound launches (``bound == "latency"``: no roof explains their time) are left out
    unless ``latency=True``: the roofline rules judge kernels against a roof, RL112 judges those.

    ``rows`` optionally restricts the launches (a polars boolean expression over ROOFLINE columns,
    ``subject`` and ``family``). Returns None when there is no kernel table. Groups are computed
    once per context and reused: a ``rows`` filter that reads only group keys (``by`` and
    ``family``) is applied to the cached groups; any other filter regroups the launches.
    """
    keys = tuple(by) + (() if "family" in by else ("family",))
    if rows is not None and not set(rows.meta.root_names()) <= set(keys):
        return _groups(ctx, keys, rows, latency)
    if launches(ctx) is None:
        return None
    cache = _cache(ctx)
    if ("groups", keys, latency) not in cache:
        cache[("groups", keys, latency)] = _groups(ctx, keys, None, latency)
    g = cache[("groups", keys, latency)]
    return g if rows is None else g.filter(rows)


def _groups(ctx: Context, by: tuple[str, ...], rows, latency: bool = False):
    import polars as pl

    df = launches(ctx)
    if df is None:
        return None
    if not latency:
        df = df.filter(pl.col("bound").fill_null("") != "latency")
    if rows is not None:
        df = df.filter(rows)
    total = total_gpu_time(ctx)
    c = pl.col
    paired = c("flops").is_not_null() & c("dram_bytes").is_not_null() & c("duration_s").is_not_null()
    paired_l2 = c("flops").is_not_null() & c("l2_bytes").is_not_null()
    roof_known = c("time_to_roof_s").is_not_null() & c("duration_s").is_not_null()
    tensor_known = c("flops_tensor").is_not_null()
    cuda = (
        c("flops_fp64").fill_null(0.0) + c("flops_fp32").fill_null(0.0) + c("flops_fp16").fill_null(0.0)
    )
    cuda_known = tensor_known & (
        c("flops_fp64").is_not_null() | c("flops_fp32").is_not_null() | c("flops_fp16").is_not_null()
    )
    g = df.group_by(list(by), maintain_order=True).agg(
        launches=pl.len(),
        duration_s=c("duration_s").sum(),
        mean_duration_s=c("duration_s").mean(),
        flops=null_sum(c("flops"), paired),
        dram_bytes=null_sum(c("dram_bytes"), paired),
        paired_duration_s=null_sum(c("duration_s"), paired),
        l2_flops=null_sum(c("flops"), paired_l2),
        l2_bytes=null_sum(c("l2_bytes"), paired_l2),
        flops_tensor=null_sum(c("flops_tensor"), cuda_known),
        tensor_measured_launches=tensor_known.sum(),
        flops_cuda=null_sum(cuda, cuda_known),
        peak_flops_per_s=c("peak_flops_per_s").mean(),
        peak_bw_bytes_per_s=c("peak_bw_bytes_per_s").mean(),
        ridge_flop_per_byte=c("ridge_flop_per_byte").mean(),
        peak_flops_source=_first("peak_flops_source"),
        peak_bw_source=_first("peak_bw_source"),
        time_to_roof_s=null_sum(c("time_to_roof_s"), roof_known),
        roof_duration_s=null_sum(c("duration_s"), roof_known),
        impact_s=null_sum((c("duration_s") - c("time_to_roof_s")).clip(lower_bound=0.0), roof_known),
        flops_source=_first("flops_tensor_source"),
        flops_fp32_source=_first("flops_fp32_source"),
        flops_fp16_source=_first("flops_fp16_source"),
        flops_fp64_source=_first("flops_fp64_source"),
        dram_bytes_source=_first("dram_bytes_source"),
        l2_bytes_source=_first("l2_bytes_source"),
        duration_s_source=_first("duration_s_source"),
        kernel_family=_first("kernel_family"),
        kernel_library=_first("kernel_library"),
        tensor_path=_first("tensor_path"),
    )
    share = (c("duration_s") / pl.lit(total)) if total else pl.lit(None, dtype=pl.Float64)
    g = _disambiguate(g, by)
    return g.with_columns(
        time_share=share,
        intensity_dram=pl.when(c("dram_bytes") > 0).then(c("flops") / c("dram_bytes")),
        intensity_l2=pl.when(c("l2_bytes") > 0).then(c("l2_flops") / c("l2_bytes")),
        achieved_flops_per_s=pl.when(c("paired_duration_s") > 0).then(c("flops") / c("paired_duration_s")),
        achieved_dram_bytes_per_s=pl.when(c("paired_duration_s") > 0).then(
            c("dram_bytes") / c("paired_duration_s")
        ),
        roof_fraction=pl.when(c("roof_duration_s") > 0).then(c("time_to_roof_s") / c("roof_duration_s")),
    )


def _disambiguate(g, by: tuple[str, ...]):
    """Name groups that share a subject apart: ``name [fp32]``, ``name [bf16/fp16, H100 SXM]``."""
    import polars as pl

    if "subject" not in by or len(by) == 1:
        return g
    dup = pl.len().over("subject") > 1
    parts = []
    if "precision" in by:
        label = pl.col("precision").replace_strict(PRECISION_LABELS, default=pl.col("precision")).fill_null("no FLOPs")
        parts.append(label)
    if "gpu" in by and g["gpu"].n_unique() > 1:
        parts.append(pl.col("gpu").fill_null("unknown GPU"))
    if not parts:
        return g
    tag = pl.concat_str(parts, separator=", ")
    return g.with_columns(
        subject=pl.when(dup).then(pl.format("{} [{}]", pl.col("subject"), tag)).otherwise(pl.col("subject"))
    )


def compute_tuning_remedy(row: dict[str, Any]) -> str:
    """How to bring a kernel closer to its compute roof, by what it is (family, library, tensor path):
    GEMM autotuning advice goes to GEMMs only."""
    family, library, path = row.get("kernel_family"), row.get("kernel_library"), row.get("tensor_path") or ""
    if family == "attention":
        text = ("Use the attention kernel built for this GPU (FlashAttention-3 / FlashInfer's sm90 path on Hopper), "
                "tune its tile and head-dim split, and read ncu's Warp State section for softmax and exp stalls.")
    elif library == "Triton":
        text = ("Autotune the Triton config (BLOCK_M/N/K, num_warps, num_stages) for these shapes, and read ncu's "
                "Compute Workload and Warp State sections.")
    elif family in ("gemm", "grouped_gemm"):
        text = ("Tune the kernel toward its compute roof: autotune (cuBLASLt, CUTLASS, max-autotune), pad "
                "shapes to tile and SM multiples, and read ncu's Compute Workload and Warp State sections.")
    else:
        text = ("Tune the kernel toward its compute roof: raise occupancy and instruction-level parallelism, "
                "and read ncu's Compute Workload and Warp State sections.")
    if "hmma" in path and "hgmma" not in path:
        text += (" It runs the legacy mma.sync tensor path: a wgmma kernel (sm90 cuBLAS/CUTLASS, FlashAttention-3,"
                 " Triton with wgmma) has a 1.5x higher roof.")
    return text


def cuda_core_share():
    """Group expression: CUDA-core FLOPs / all FLOPs; null when no FLOPs were counted (never NaN)."""
    import polars as pl

    both = pl.col("flops_cuda") + pl.col("flops_tensor")
    return pl.when(both > 0).then(pl.col("flops_cuda") / both)


def flops_recipe(row: dict[str, Any]) -> str | None:
    """The counter recipes behind a group's FLOPs, joined (tensor first)."""
    parts = [
        row.get(k)
        for k in ("flops_source", "flops_fp32_source", "flops_fp16_source", "flops_fp64_source")
        if row.get(k)
    ]
    return " + ".join(parts) if parts else None


def impact(row: dict[str, Any], total: float | None) -> tuple[float | None, float | None]:
    """(impact_s, impact_share) of a group row; share null when the total is unknown."""
    imp = row.get("impact_s")
    if imp is None:
        return None, None
    return float(imp), (float(imp) / total if total else None)


def group_launches(ctx: Context, row: dict[str, Any], *, latency: bool = False):
    """The launches behind one :func:`kernel_groups` row (same subject, GPU, precision and family;
    a subject made unique with `` [tag]`` matches its base name), latency-bound ones only when
    ``latency``; None without a kernel table."""
    import polars as pl

    df = launches(ctx)
    if df is None:
        return None
    subject = row.get("subject")
    names = [subject, subject.rsplit(" [", 1)[0]] if subject and subject.endswith("]") else [subject]
    keep = (pl.col("subject").is_in(names) & pl.col("gpu").eq_missing(row.get("gpu"))
            & pl.col("precision").eq_missing(row.get("precision")))
    if "family" in row:
        keep = keep & pl.col("family").eq_missing(row.get("family"))
    if not latency:
        keep = keep & (pl.col("bound").fill_null("") != "latency")
    return df.filter(keep)


def roof_gap_impact(row: dict[str, Any], total: float | None, remedy: str) -> tuple[float | None, float | None, tuple]:
    """For rules whose remedy IS reaching the roof: (impact_s, share, evidence) with the gap to the
    roof as the impact and an ``impact_basis`` evidence saying so."""
    impact_s, share = impact(row, total)
    basis = (f"gap to the roof: GPU time of these launches minus their time at the roof that bounds each, "
             f"what {remedy} buys at best")
    return impact_s, share, (Evidence("impact_basis", basis, "text", "derived"),)


def remedy_impact(ctx: Context, row: dict[str, Any], total: float | None, *, basis: str,
                  dram_scale: float = 1.0, peak_scale: float = 1.0,
                  latency: bool = False) -> tuple[float | None, float | None, tuple]:
    """What a remedy buys for one group: its launches' GPU time now minus their time with DRAM bytes
    x ``dram_scale`` and compute peak x ``peak_scale``, each at its achieved fraction of its roof
    (``ridgeline.analyzer.kernels.whatif.remedy_time``). Returns (impact_s, share, evidence: the basis,
    stated, and the time after the remedy); the gap to the roof when the launches cannot be found."""
    from ridgeline.analyzer.kernels.whatif import remedy_time

    mine = group_launches(ctx, row, latency=latency)
    if mine is None or not mine.height:
        return roof_gap_impact(row, total, "the remedy")
    t0 = float(mine["duration_s"].fill_null(0.0).sum())
    t1 = remedy_time(mine, dram_scale=dram_scale, peak_scale=peak_scale)
    impact_s = max(t0 - t1, 0.0)
    return impact_s, (impact_s / total if total else None), (
        Evidence("impact_basis", basis, "text", "derived"),
        Evidence("time_after_remedy_s", t1, "s", "derived: what-if model"),
    )


def intensity_evidence(row: dict[str, Any]) -> list[Evidence]:
    """FLOPs, DRAM bytes, intensity, ridge (with their sources) for one group row."""
    return [
        Evidence("flops", row.get("flops"), "FLOP", measured(flops_recipe(row))),
        Evidence("dram_bytes", row.get("dram_bytes"), "B", measured(row.get("dram_bytes_source"))),
        Evidence("intensity_dram", row.get("intensity_dram"), "FLOP/B", "derived"),
        Evidence("ridge_flop_per_byte", row.get("ridge_flop_per_byte"), "FLOP/B", "derived"),
        Evidence("peak_flops_per_s", row.get("peak_flops_per_s"), "FLOP/s", roof_source(row.get("peak_flops_source"))),
        Evidence(
            "peak_bw_bytes_per_s", row.get("peak_bw_bytes_per_s"), "B/s", roof_source(row.get("peak_bw_source"))
        ),
    ]


def time_evidence(row: dict[str, Any]) -> list[Evidence]:
    return [
        Evidence("launches", row.get("launches"), "count", "measured"),
        Evidence("duration_s", row.get("duration_s"), "s", measured(row.get("duration_s_source"))),
        Evidence("time_share", row.get("time_share"), "ratio", "derived"),
    ]


def confidence(*sources: str | None) -> str:
    """Weakest link: "catalogue" if any roof came from the datasheet, "derived" if any was derived
    from device attributes (a GPU the catalogue lacks), else "measured"."""
    if any((s or "catalogue") == "catalogue" for s in sources):
        return "catalogue"
    if any(s == "derived-from-device-attributes" for s in sources):
        return "derived"
    return "measured"


def gpu_roofs(ctx: Context) -> list:
    """The roofs the pipeline used (``ctx.extra["roofs"]``, list of ridgeline.result.Roof)."""
    return list(ctx.extra.get("roofs") or [])


def catalogue_peak(ctx: Context, precision: str) -> float | None:
    """Datasheet peak FLOP/s of ``ctx.gpu`` for one precision, or None."""
    gpu = ctx.gpu
    peaks = getattr(gpu, "peak_flops", None) or {}
    value = peaks.get(precision)
    return float(value) if value else None


def catalogue_gpu(ctx: Context, name: str | None):
    """The catalogue entry for a ROOFLINE ``gpu`` name (``ctx.gpu`` when it matches), or None."""
    gpu = ctx.gpu
    if gpu is not None and (name is None or getattr(gpu, "name", None) == name):
        return gpu
    if not name:
        return None
    from ridgeline.analyzer.kernels.gpus import try_lookup

    found, _note = try_lookup(name)
    return found


def catalogue_peak_of(gpu, precision: str) -> float | None:
    """Datasheet peak FLOP/s of a catalogue entry for one precision, or None."""
    peaks = getattr(gpu, "peak_flops", None) or {}
    value = peaks.get(precision)
    return float(value) if value else None
