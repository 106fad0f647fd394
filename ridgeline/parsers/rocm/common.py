"""What every ROCm reader shares: number casts, AMD kernel names, the records' checks and the result."""

from __future__ import annotations

from ridgeline.errors import InputError

#: rocprof writes kernel symbols with the code object's descriptor suffix (``foo.kd``,
#: ``void foo<...>(...) [clone .kd]``): removed so names match the same kernel from other tools
KD_SUFFIX_RE = r"(\s*\[clone \.kd\]|\.kd)$"


def num(col: str, dtype=None):
    """A column's cells as numbers (strings in JSON, grouping commas removed); unparsable -> null."""
    import polars as pl

    v = pl.col(col).cast(pl.String).str.strip_chars().str.replace_all(",", "", literal=True).cast(pl.Float64, strict=False)
    return pl.when(v.abs() < 2.0**62).then(v).cast(dtype or pl.Int64)


def kernel_name(col: str):
    import polars as pl

    return pl.col(col).cast(pl.String).str.replace(KD_SUFFIX_RE, "")


def read_csv_text(path, what: str):
    """The whole CSV as strings (header = first line), or an InputError naming what was expected."""
    import polars as pl

    from ridgeline.parsers.paths import polars_path

    try:
        df = pl.read_csv(polars_path(path), infer_schema=False, truncate_ragged_lines=True)
    except (pl.exceptions.PolarsError, OSError) as err:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected {what}, got {plain_reason(err)}") from err
    return df.rename({c: c.strip() for c in df.columns})


def problems(need: dict[str, object]):
    """A ``_problem`` expression: the first needed cell (column -> parsed expression) that is given
    but not a number, or missing."""
    import polars as pl

    expr = None
    for col, parsed in need.items():
        given = pl.col(col).cast(pl.String).str.strip_chars().fill_null("") != ""
        cond_missing, cond_bad = ~given, given & parsed.is_null()
        for cond, text in ((cond_missing, pl.lit(f"no {col} (a row cut short?)")),
                           (cond_bad, pl.format("{} is {}", pl.lit(col), pl.col(col).cast(pl.String)))):
            expr = pl.when(cond).then(text) if expr is None else expr.when(cond).then(text)
    return expr.otherwise(pl.lit(None, dtype=pl.String)) if expr is not None else pl.lit(None, dtype=pl.String)


def finish(path, out, kind: str, *, strict: bool, where, notes: list[str], tool: str,
           devices: dict[int, str] | None = None, device_properties: dict | None = None, api=None,
           host_api: str | None = None, host_calls_total: int = 0):
    """Check the records, cast to TIMELINE and return the :class:`TimelineTables` (vendor ``amd``).
    ``api``: host calls (start_ns, end_ns, name, thread_id, process_id, correlation_id) or None; the
    kernels' ``launch_ns`` is the start of the call with their correlation id."""
    import polars as pl

    from ridgeline.parsers.timeline.common import TimelineTables, _dims_and_kinds, _finish_activities, check_records, \
        pytorch_capture
    from ridgeline.result import path_label

    src = path_label(path)
    out, skipped = check_records(path, out, strict=strict, where=where)
    out = out.with_columns(pl.col("start_ns").cast(pl.Int64), pl.col("end_ns").cast(pl.Int64))
    if api is not None:
        from ridgeline.parsers.timeline.common import _finish_api, check_host_calls

        api = check_host_calls(path, api.with_columns(pl.lit("runtime").alias("kind")), strict=strict,
                               where=lambda r: f"host call {r}", notes=notes)
        if api is not None and api.height and "correlation_id" in out.columns:
            first = api.filter(pl.col("correlation_id").is_not_null()).group_by("correlation_id").agg(
                pl.col("start_ns").min().alias("launch_ns"))
            out = out.join(first, on="correlation_id", how="left", maintain_order="left")
        api = _finish_api(api, src) if api is not None else None
    acts = _finish_activities(_dims_and_kinds(out), src, devices or {})
    if not acts.height:  # a header and nothing else: said, never an empty analysis
        from ridgeline.parsers.timeline.holdings import judge

        notes.append(judge({}, events=0, skipped=len(skipped), tool=tool, unit="data row").note(path))
    return TimelineTables(src, kind, acts, api=api, host_api=host_api, host_calls_total=host_calls_total,
                          notes=notes, skipped=skipped, vendor="amd",
                          devices=dict(devices or {}), device_properties=dict(device_properties or {}),
                          framework=pytorch_capture(acts))


def grid_blocks(grid: object, group: object):
    """HSA grid sizes count work-items; ridgeline's grid counts blocks (workgroups): ceil(grid / group)."""
    import polars as pl

    return pl.when(group > 0).then((grid + group - 1) // group).otherwise(None)
