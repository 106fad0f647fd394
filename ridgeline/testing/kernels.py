"""Kernel groups and how a test picks them: by family, by exact name, or by a regex.

A *kernel group* is what the rules call a subject: the launches of one kernel (its label from
``ridgeline.analyzer.kernels.families``, else its short or full name) on one GPU at one precision.
:func:`kernel_table` aggregates the ROOFLINE table of an :class:`~ridgeline.result.AnalysisResult`
into one row per group with the same sums the rules use (``ridgeline.rules.kernels``):
intensity over the launches where FLOPs and DRAM bytes were both measured, fraction of roof as
time-at-roof over duration, share of all GPU time. ``bound`` is the verdict holding most of the
group's time.

Families are the analyzer's ``kernel_family`` (docs/kernel-families.md: gemm, grouped_gemm,
attention, attention_aux, norm, rope, ...); :func:`with_families` is the one place that decides
where they come from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# bound values a test may name; the analyzer's own values are added from the data. ``latency`` is
# the whole latency class (launch-bound and stall-bound together); ``launch`` and ``stall`` are its
# two kinds (ridgeline.analyzer.kernels.latency: ``bound == "latency"`` with that ``latency_kind``)
KNOWN_BOUNDS = ("compute", "memory", "latency", "launch", "stall", "unknown")
LATENCY_KINDS = ("launch", "stall")


def bound_matches(bound, latency_kind, wanted) -> bool:
    """Whether a verdict (``bound`` and ``latency_kind``) is one of ``wanted``: ``latency`` takes
    either kind, ``launch``/``stall`` only a latency-bound verdict of that kind."""
    if bound in wanted:
        return True
    return bound == "latency" and latency_kind in wanted


def bound_filter(wanted):
    """:func:`bound_matches` as a polars expression over ``bound`` and ``latency_kind``."""
    import polars as pl

    wanted = list(wanted)
    return pl.col("bound").is_in(wanted) | ((pl.col("bound") == "latency") & pl.col("latency_kind").is_in(wanted))


def with_families(df):
    """The ROOFLINE table with ``kernel_family`` and ``kernel_label`` (the analyzer's classification
    of each full kernel name); added here when the table does not carry them yet."""
    if ("kernel_label" in df.columns and "kernel_family" in df.columns
            and df.get_column("kernel_label").null_count() < df.height):
        return df
    from ridgeline.analyzer.kernels.families import family_columns

    return family_columns(df)


GROUP_KEYS = ("name", "gpu", "precision")


def launch_rows(df):
    """The ROOFLINE table with the group key ``name`` (label, else short, else full name, as the
    rules' subjects) and ``family`` added: what :func:`kernel_table` groups by :data:`GROUP_KEYS`."""
    import polars as pl

    from ridgeline.analyzer.kernels.latency import with_latency_kind

    c = pl.col
    return with_latency_kind(with_families(df)).with_columns(
        name=pl.coalesce(c("kernel_label"), c("short_name"), c("kernel_name")).fill_null("<unnamed kernel>"),
        family=c("kernel_family"),
    )


def known_families(table=None) -> set[str]:
    """Family names a selector may use: the analyzer's vocabulary and every family in ``table``."""
    from ridgeline.analyzer.kernels.families import FAMILIES

    names = set(FAMILIES)
    if table is not None and "family" in table.columns:
        names |= {f for f in table.get_column("family").drop_nulls().unique().to_list() if f}
    return names


def _by_time(df, column: str, keys: list[str]):
    """Per group, the value of ``column`` holding the most time (ties: alphabetical)."""
    import polars as pl

    return (
        df.filter(pl.col(column).is_not_null())
        .group_by(*keys, column)
        .agg(pl.col("duration_s").fill_null(0.0).sum().alias("_t"))
        .sort([*keys, "_t", column], descending=[False] * len(keys) + [True, False], nulls_last=True)
        .group_by(keys, maintain_order=True)
        .agg(pl.col(column).first())
    )


def _time_weighted(df, column: str):
    """Duration-weighted mean of ``column`` over the launches that have it (null if none or absent)."""
    import polars as pl

    if column not in df.columns:
        return pl.lit(None, dtype=pl.Float64)
    known = pl.col(column).is_not_null() & pl.col("duration_s").is_not_null()
    weight = pl.col("duration_s").filter(known).sum()
    return pl.when(weight > 0).then((pl.col(column) * pl.col("duration_s")).filter(known).sum() / weight)


def kernel_table(result):
    """One row per kernel group of ``result`` (most GPU time first); None when it has no kernels.

    Columns: ``subject`` (the name findings use, disambiguated ``name [precision]`` when one name
    ran at several precisions or GPUs), ``name`` (the kernel's label), ``kernel_name`` (its full
    name), ``short_name``, ``family`` (the analyzer's ``kernel_family``),
    ``gpu``, ``precision``, ``bound``, ``latency_kind`` (``launch``/``stall`` when ``bound`` is
    ``latency``), ``launches``, ``duration_s``, ``time_share``,
    ``intensity_dram``, ``ridge_flop_per_byte``, ``roof_fraction``, ``achieved_flops_per_s``,
    ``achieved_dram_bytes_per_s``, ``peak_flops_per_s``, ``peak_flops_source``,
    ``peak_bw_bytes_per_s``, ``peak_bw_source``, ``busiest_roof_fraction`` (time-weighted share of the
    busiest roof each launch has, where the analyzer reports it: what makes a launch latency-bound).
    """
    import polars as pl

    df = getattr(result, "kernels", None)
    if df is None or not df.height:
        return None
    from ridgeline.rules.kernels import null_sum

    c = pl.col
    df = launch_rows(df)
    keys = list(GROUP_KEYS)
    paired = c("flops").is_not_null() & c("dram_bytes").is_not_null() & c("duration_s").is_not_null()

    total = result.total_gpu_time_s or df.get_column("duration_s").sum() or None
    g = df.group_by(keys, maintain_order=True).agg(
        kernel_name=c("kernel_name").drop_nulls().first(),
        short_name=c("short_name").drop_nulls().first(),
        launches=pl.len().cast(pl.Int64),
        duration_s=c("duration_s").sum(),
        _flops=null_sum(c("flops"), paired),
        _bytes=null_sum(c("dram_bytes"), paired),
        _paired_s=null_sum(c("duration_s"), paired),
        # roof fraction: the duration-weighted mean of the launches' roof_fraction, the SUMMARY
        # table's definition (ridgeline.analyzer.kernels.roofline.summarize), so `check --write` records
        # the figure `analyze` prints. Not time_to_roof / duration: time_to_roof never goes below
        # the launch floor, so on a 2.6 us launch that ratio reads 0.77 where the launch runs at 3%
        # of its roof (issue 20, item 10).
        roof_fraction=_time_weighted(df, "roof_fraction"),
        peak_flops_per_s=c("peak_flops_per_s").mean(),
        peak_flops_source=c("peak_flops_source").drop_nulls().first(),
        peak_bw_bytes_per_s=c("peak_bw_bytes_per_s").mean(),
        peak_bw_source=c("peak_bw_source").drop_nulls().first(),
        ridge_flop_per_byte=c("ridge_flop_per_byte").mean(),
        busiest_roof_fraction=_time_weighted(df, "busiest_roof_fraction"),
    )
    g = g.join(_by_time(df, "bound", keys), on=keys, how="left", nulls_equal=True, maintain_order="left")
    g = g.join(_by_time(df, "family", keys), on=keys, how="left", nulls_equal=True, maintain_order="left")
    g = g.join(_by_time(df, "latency_kind", keys), on=keys, how="left", nulls_equal=True, maintain_order="left")
    g = g.with_columns(pl.when(c("bound") == "latency").then(c("latency_kind")).alias("latency_kind"))
    g = g.with_columns(
        time_share=(c("duration_s") / total) if total else pl.lit(None, dtype=pl.Float64),
        intensity_dram=pl.when(c("_bytes") > 0).then(c("_flops") / c("_bytes")),
        achieved_flops_per_s=pl.when(c("_paired_s") > 0).then(c("_flops") / c("_paired_s")),
        achieved_dram_bytes_per_s=pl.when(c("_paired_s") > 0).then(c("_bytes") / c("_paired_s")),
    )
    g = g.with_columns(subject=_subject(g))
    cols = ["subject", "name", "kernel_name", "short_name", "family", "gpu", "precision", "bound", "latency_kind",
            "launches", "duration_s",
            "time_share", "intensity_dram", "ridge_flop_per_byte", "roof_fraction", "achieved_flops_per_s",
            "achieved_dram_bytes_per_s", "peak_flops_per_s", "peak_flops_source", "peak_bw_bytes_per_s",
            "peak_bw_source", "busiest_roof_fraction"]
    return g.select(cols).sort(["duration_s", "subject"], descending=[True, False], nulls_last=True)


def _subject(g):
    """``name``, or ``name [bf16/fp16]`` / ``name [fp32, H100 SXM]`` when one name has several groups
    (the way the rules name their subjects)."""
    import polars as pl

    from ridgeline.rules.kernels import PRECISION_LABELS

    dup = pl.len().over("name") > 1
    parts = [pl.col("precision").replace_strict(PRECISION_LABELS, default=pl.col("precision")).fill_null("no FLOPs")]
    if g.get_column("gpu").n_unique() > 1:
        parts.append(pl.col("gpu").fill_null("unknown GPU"))
    tag = pl.concat_str(parts, separator=", ")
    return pl.when(dup).then(pl.format("{} [{}]", pl.col("name"), tag)).otherwise(pl.col("name"))


@dataclass(frozen=True)
class Selector:
    """Which kernel groups a check is about. Give one of ``family``, ``kernel`` (an exact label, short
    or full name) or ``pattern`` (a regex searched, case-insensitively, in all three); ``exclude``
    (a regex) removes groups, ``precision`` keeps one precision (``"none"``: launches without FLOPs),
    ``min_share`` drops groups holding
    less than that share of GPU time. No criterion at all selects every group."""

    family: str | None = None
    kernel: str | None = None
    pattern: str | None = None
    exclude: str | None = None
    precision: str | None = None
    min_share: float = 0.0

    def describe(self) -> str:
        if self.family:
            text = f"family {self.family!r}"
        elif self.kernel:
            text = f"kernel {self.kernel!r}"
        elif self.pattern:
            text = f"kernels matching /{self.pattern}/"
        else:
            text = "all kernels"
        extras = []
        if self.precision:
            extras.append(f"precision {self.precision}")
        if self.exclude:
            extras.append(f"excluding /{self.exclude}/")
        if self.min_share:
            extras.append(f"holding >= {self.min_share * 100:g}% of GPU time")
        return text + (f" ({', '.join(extras)})" if extras else "")

    def apply(self, table):
        """The rows of a :func:`kernel_table` this selector picks."""
        import polars as pl

        c = pl.col
        if self.family:
            table = table.filter(c("family") == self.family)
        elif self.kernel:
            table = table.filter((c("subject") == self.kernel) | (c("name") == self.kernel)
                                 | (c("kernel_name") == self.kernel) | (c("short_name") == self.kernel))
        elif self.pattern:
            table = _keep(table, _matches(table, self.pattern))
        if self.exclude:
            table = _keep(table, [not m for m in _matches(table, self.exclude)])
        if self.precision == "none":  # launches without FLOPs (copies, fills)
            table = table.filter(c("precision").is_null())
        elif self.precision:
            table = table.filter(c("precision") == self.precision)
        if self.min_share:
            table = table.filter(c("time_share").fill_null(0.0) >= self.min_share)
        return table


def _keep(table, mask: list[bool]):
    import polars as pl

    return table.with_columns(pl.Series("_keep", mask, dtype=pl.Boolean)).filter(pl.col("_keep")).drop("_keep")


def _matches(table, regex: str) -> list[bool]:
    """Per row: ``regex`` (Python syntax, case-insensitive) found in the label, the short or the full name."""
    rx = re.compile(regex, re.IGNORECASE)
    cols = [table.get_column(c).to_list() for c in ("name", "short_name", "kernel_name")]
    return [any(rx.search(v or "") for v in values) for values in zip(*cols)]


def make_selector(kernels: Any = None, *, family: str | None = None, kernel: str | None = None,
                  pattern: str | None = None, exclude: str | None = None, precision: str | None = None,
                  min_share: float = 0.0, table=None) -> Selector:
    """A :class:`Selector` from the helpers' arguments.

    ``kernels`` (positional) is a family name when it is one (``"gemm"``, ``"attention"``, ``"norm"``:
    the analyzer's vocabulary, docs/kernel-families.md), a compiled ``re.Pattern``, or else a regex.
    """
    from ridgeline.errors import UsageError

    given = [x for x in (kernels, family, kernel, pattern) if x is not None]
    if len(given) > 1:
        raise UsageError("select kernels one way: a positional family/regex, family=, kernel= or pattern=")
    if isinstance(kernels, re.Pattern):
        pattern = kernels.pattern
    elif isinstance(kernels, str):
        if kernels.lower() in known_families(table):
            family = kernels.lower()
        else:
            pattern = kernels
    elif kernels is not None:
        raise UsageError(f"kernels: expected a family name or a regex, got {type(kernels).__name__}")
    for what, rx in (("pattern", pattern), ("exclude", exclude)):
        if rx is not None:
            try:
                re.compile(rx)
            except re.error as err:
                raise UsageError(f"{what} {rx!r} is not a valid regular expression: {err}") from None
    return Selector(family=family, kernel=kernel, pattern=pattern, exclude=exclude, precision=precision,
                    min_share=float(min_share or 0.0))
