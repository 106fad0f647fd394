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
  :mod:`ridgeline.analyzer.steps`; without launch records, their GPU start) lies inside one of the
  ranges, and the summed duration of those that are kernels;
* ``gpu_s``: the union of those activities' GPU intervals (the device time the phase's work
  occupied, overlaps counted once).

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

    from ridgeline.analyzer.intervals import merge_intervals
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
    a = a.with_columns(pl.coalesce("launch_ns", "start_ns").alias("launch_ns")).sort("launch_ns")
    launch = a.get_column("launch_ns")
    dev = a.get_column("device").fill_null(-1)
    s = a.get_column("start_ns")
    e = a.get_column("end_ns")
    is_k = (a.get_column("kind") == "kernel").fill_null(False)
    from ridgeline.analyzer.intervals import search, unique_sorted

    devices = [(d, dev == d) for d in unique_sorted(dev).to_list()]
    rows = []
    for (name, kind), part in r.group_by(["range", "kind"], maintain_order=True):
        hs, he = merge_intervals(part.get_column("start_ns"), part.get_column("end_ns"))
        i = search(hs, launch, "right") - 1
        inside = (i >= 0) & (launch < he.gather(i.clip(0, None)))
        for d, on_d in devices:
            m = inside & on_d
            if not m.any():
                continue
            us, ue = merge_intervals(s.filter(m), e.filter(m))
            mk = m & is_k
            rows.append({"source": source, "device": None if d < 0 else int(d), "range": name, "kind": kind,
                         "count": part.height, "host_s": int((he - hs).sum()) / 1e9, "activities": int(m.sum()),
                         "kernel_s": int((e.filter(mk) - s.filter(mk)).sum()) / 1e9, "gpu_s": int((ue - us).sum()) / 1e9})
    if not rows:
        return empty_ranges()
    schema = polars_schema(RANGE_COLUMNS)
    out = pl.DataFrame(rows, schema={c: t for c, t in schema.items() if c != "ranges_dropped"})
    out = out.sort(["device", "gpu_s", "range"], descending=[False, True, False], nulls_last=True)
    counts = out.group_by("device").agg(pl.len().alias("_n"))
    kept = out.filter(pl.int_range(pl.len()).over("device") < top).join(counts, on="device", how="left",
                                                                        nulls_equal=True, maintain_order="left")
    first = pl.int_range(pl.len()).over("device") == 0
    kept = kept.with_columns(pl.when(first).then(pl.col("_n") - pl.len().over("device")).alias("ranges_dropped"))
    return kept.select([pl.col(c).cast(t) for c, t in schema.items()])
