"""Ranges: GPU work per annotated host range (NVTX ranges, ``record_function`` annotations).

Host ranges are the HOST_API rows of kind ``annotation`` (Kineto ``user_annotation``:
``record_function`` blocks, ``ProfilerStep#N``, ``nccl:all_reduce``, ``## forward ##``) and
``nvtx`` (nsys ``NVTX_EVENTS`` push/pop and start/end ranges, e.g. ``torch.autograd.profiler.
emit_nvtx``'s one range per operator). Numbered names are one range: ``ProfilerStep#12`` and
``#13`` are ``ProfilerStep#*`` (digits after ``#`` or ``op_id =``/``seq =`` are dropped), so a
range name is a phase, not an occurrence.

Per device and range name (inclusive: work launched in a nested range counts for the outer one
too):

* ``count``: ranges of that name; ``host_s``: the union of their host intervals;
* ``activities``, ``kernel_s``: GPU activities whose launch call (correlation id, as in
  :mod:`ridgeline.analyzer.timeline.steps`; without launch records, their GPU start) lies inside one of the
  ranges, and the summed duration of those that are kernels;
* ``gpu_s``: the union of those activities' GPU intervals (the device time the phase's work
  occupied, overlaps counted once).

All names at once, no loop over them: host intervals merged per name, activities matched to
them by an inequality join (``join_where``; a name's merged intervals are disjoint, so an
activity counts once per name) and unions measured per name and device (:func:`_union_length`).

The :data:`TOP` names with the most ``gpu_s`` per device are kept, plus ``ranges_dropped`` on the
first row saying how many were left out (never silently).
"""

from __future__ import annotations

TOP = 30

RANGE_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "range": ("str", "range name, numbers after '#', 'op_id =', 'seq =' replaced by '*' (one row per phase)"),
    "kind": ("str", "'annotation' (Kineto user_annotation / record_function) or 'nvtx'"),
    "count": ("i64", "ranges of that name"),
    "host_s": ("f64", "union of the ranges' host intervals"),
    "activities": ("i64", "GPU activities launched inside the ranges (nested ranges count for the outer one too)"),
    "kernel_s": ("f64", "summed duration of those activities that are kernels"),
    "gpu_s": ("f64", "union of those activities' GPU intervals"),
    "ranges_dropped": ("i64", "first row of a device: range names left out past the top 30 by gpu_s; else null"),
}


def empty_ranges():
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    return pl.DataFrame(schema=polars_schema(RANGE_COLUMNS))


def range_name():
    """Polars expression: the range's phase name (numbers of an occurrence replaced by ``*``)."""
    import polars as pl

    return (pl.col("name").str.replace_all(r"#[0-9]+", "#*")
            .str.replace_all(r"(op_id|seq) = [0-9]+", "$1 = *"))


def analyze_ranges(acts, api, source: str, top: int = TOP):
    """One file's activities and host rows -> RANGE_COLUMNS frame (see the module docstring)."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import full
    from ridgeline.analyzer.schema import polars_schema

    if api is None or not api.height or acts is None or not acts.height:
        return empty_ranges()
    r = api.filter(pl.col("kind").is_in(["annotation", "nvtx"]) & (pl.col("end_ns") > pl.col("start_ns")))
    if not r.height:
        return empty_ranges()
    r = r.with_columns(range_name().alias("range"))
    launches = api.filter(pl.col("kind").is_in(["runtime", "driver"]) & pl.col("correlation_id").is_not_null()
                          ).group_by("correlation_id").agg(pl.col("start_ns").min().alias("launch_ns"))
    a = acts.select("device", "kind", "start_ns", "end_ns", "correlation_id")
    a = a.join(launches, on="correlation_id", how="left") if launches.height else a.with_columns(
        pl.lit(None, dtype=pl.Int64).alias("launch_ns"))
    a = a.select(pl.col("device").fill_null(-1).alias("dev"), (pl.col("kind") == "kernel").fill_null(False).alias("is_k"),
                 "start_ns", "end_ns", pl.coalesce("launch_ns", "start_ns").alias("launch_ns"))
    # range names (and kinds) in order of first appearance, each with its host intervals merged
    groups = r.group_by(["range", "kind"], maintain_order=True).agg(pl.len().alias("count")).with_row_index("g")
    host = _merged(r.join(groups.select("range", "kind", "g"), on=["range", "kind"], how="inner")
                   .select("g", pl.col("start_ns").alias("s"), pl.col("end_ns").alias("e")), ["g"])
    host_s = host.group_by("g").agg((pl.col("he") - pl.col("hs")).sum().alias("host_ns"))
    # every activity launched inside a merged range (disjoint per name: once per name), per name and device
    hit = a.join_where(host, pl.col("launch_ns") >= pl.col("hs"), pl.col("launch_ns") < pl.col("he"))
    if not hit.height:
        return empty_ranges()
    per = (_union_length(hit.select("g", "dev", pl.col("start_ns").alias("s"), pl.col("end_ns").alias("e"),
                                    pl.when("is_k").then(pl.col("end_ns") - pl.col("start_ns")).otherwise(0).alias("k")),
                         ["g", "dev"])
           .group_by("g", "dev").agg(pl.len().alias("activities"), pl.col("k").sum().alias("kernel_ns"),
                                     pl.col("covered").sum().alias("gpu_ns"))
           .join(groups, on="g").join(host_s, on="g").sort("g", "dev"))
    giga = pl.lit(full(1e9, per.height, pl.Float64))  # a column: polars divides by a scalar as x * (1 / 1e9)
    out = per.select(pl.lit(source, dtype=pl.String).alias("source"),
                     pl.when(pl.col("dev") >= 0).then(pl.col("dev")).alias("device"), "range", "kind", "count",
                     (pl.col("host_ns") / giga).alias("host_s"), "activities", (pl.col("kernel_ns") / giga).alias("kernel_s"),
                     (pl.col("gpu_ns") / giga).alias("gpu_s"))
    schema = polars_schema(RANGE_COLUMNS)
    out = out.select([pl.col(c).cast(t) for c, t in schema.items() if c != "ranges_dropped"])
    out = out.sort(["device", "gpu_s", "range"], descending=[False, True, False], nulls_last=True)
    counts = out.group_by("device").agg(pl.len().alias("_n"))
    kept = out.filter(pl.int_range(pl.len()).over("device") < top).join(counts, on="device", how="left",
                                                                        nulls_equal=True, maintain_order="left")
    first = pl.int_range(pl.len()).over("device") == 0
    kept = kept.with_columns(pl.when(first).then(pl.col("_n") - pl.len().over("device")).alias("ranges_dropped"))
    return kept.select([pl.col(c).cast(t) for c, t in schema.items()])


def _union_length(df, keys):
    """``df`` (columns ``s``, ``e`` and the ``keys``) with ``covered``: what each interval adds to
    the union of the intervals before it with the same keys (sorted by keys and start), so that
    the sum of ``covered`` per key is the length of that key's union. With ``run`` the running
    maximum of the ends (each raised to its start) and ``prev`` the one before: ``run - max(s, prev)``
    (``prev`` null at a key's first interval), never negative."""
    import polars as pl

    run = pl.max_horizontal("e", "s").cum_max().over(keys)
    df = df.sort([*keys, "s"]).with_columns(run.alias("run"))
    return df.with_columns((pl.col("run") - pl.max_horizontal("s", pl.col("run").shift(1).over(keys))).alias("covered"))


def _merged(df, keys):
    """Per keys, the union of the intervals ``s``, ``e`` as disjoint sorted intervals ``hs``, ``he``
    (one row each, with the keys): a member starts where a start lies past the running maximum of
    the ends before it."""
    import polars as pl

    run = pl.max_horizontal("e", "s").cum_max().over(keys)
    df = df.sort([*keys, "s"]).with_columns(run.alias("run"))
    new = (pl.col("s") > pl.col("run").shift(1).over(keys)).fill_null(True)
    return (df.with_columns(new.cum_sum().alias("member"))
            .group_by("member", maintain_order=True)
            .agg(*[pl.col(k).first() for k in keys], pl.col("s").first().alias("hs"), pl.col("run").last().alias("he"))
            .drop("member"))
