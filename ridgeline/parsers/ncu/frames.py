"""Nsight Compute header blocks -> metric frames: the raw page (one row per launch) and the details
page (long: one row per launch x metric, section labels mapped), cells checked (strict: a bad
cell is an error naming file, line and metric; lenient: null and listed), locale refused, short
names. The second of the ncu parser's three jobs (:mod:`ridgeline.parsers.ncu.csv_reader`)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

from ridgeline.errors import InputError
from ridgeline.parsers.ncu import metrics as V
from ridgeline.result import Skipped
from ridgeline.units import parse_unit, scale_expr
from ridgeline.parsers.ncu import blocks as B
from ridgeline.parsers.ncu import checks as C
from ridgeline.parsers.ncu.blocks import _Block, _has_id  # noqa: F401


# ======================================================================================
# value level
# ======================================================================================
def _short_name(name: str) -> str:
    """The function's qualified name (:func:`ridgeline.names.short_name`: no return type,
    template arguments, parameters or anonymous namespaces); the name itself when it has none."""
    from ridgeline.names import short_name as _fn

    return _fn(name) or name


def _dims_product(text: str) -> int | None:
    nums = re.findall(r"[0-9]+", text.replace(",", " ") if "(" in text else text.replace(",", ""))
    if not nums:
        return None
    out = 1
    for n in nums:
        out *= int(n)
    return out


def short_name(name: str | None) -> str | None:
    """Public helper: see the module docstring for the rule."""
    return None if name is None else _short_name(name)


class _Ctx:
    """Per-file state shared by the layout readers."""

    def __init__(self, path: Path, strict: bool, skipped: list[Skipped], notes: list[str]):
        self.path = path
        self.strict = strict
        self.skipped = skipped
        self.notes = notes
        self.unknown_units: set[str] = set()


def _bad_cells(ctx: _Ctx, blk: _Block, frame, value_cols: Iterable[tuple[str, str]]):
    """Check cells; raise (strict) or record (lenient). ``value_cols``: (frame column, metric label).

    ``frame`` must carry ``__row``. Returns the set of (row, column) flagged bad when lenient.
    """
    import polars as pl

    from ridgeline.units import bad_number_expr, decimal_comma_expr

    cols = list(value_cols)
    if not cols or frame.height == 0:
        return
    flags = frame.select(
        *[bad_number_expr(pl.col(c)).any().alias(f"b{i}") for i, (c, _l) in enumerate(cols)],
        *[decimal_comma_expr(pl.col(c)).any().alias(f"d{i}") for i, (c, _l) in enumerate(cols)],
    ).row(0)
    n = len(cols)
    for i, (c, label) in enumerate(cols):
        if flags[n + i]:
            hit = frame.filter(decimal_comma_expr(pl.col(c))).select("__row", c, *(["__label"] if "__label" in frame.columns else [])).row(0)
            raise InputError(
                ctx.path,
                "numbers written with a decimal comma (a non-English locale); re-export with LC_ALL=C",
                line=blk.line_of(hit[0]),
                column=hit[2] if len(hit) > 2 else label,
                actual=hit[1],
            )
    for i, (c, label) in enumerate(cols):
        if not flags[i]:
            continue
        extra = ["__label"] if "__label" in frame.columns else []
        bad = frame.filter(bad_number_expr(pl.col(c))).select("__row", c, *extra)
        if ctx.strict:
            r = bad.row(0)
            raise InputError(
                ctx.path,
                "expected a number",
                line=blk.line_of(r[0]),
                column=r[2] if extra else label,
                actual=r[1],
            )
        for r in bad.iter_rows():
            ctx.skipped.append(
                Skipped(
                    str(ctx.path),
                    f"line {blk.line_of(r[0])}",
                    f"column {r[2] if extra else label!r}: not a number {r[1]!r}; read as null",
                )
            )


def _launch_rows(df):
    """Rows with a launch ID (drops a units row and blank lines), without copying when possible."""
    missing = df.select((~_has_id()).fill_null(True).arg_true()).to_series()
    if missing.len() == 0:
        return df
    if missing.len() == 1 and missing[0] == 0:  # the raw page's units row
        return df.slice(1)
    return df.filter(_has_id())





def _check_locale(ctx: _Ctx, blk: _Block, frame, cols: list[str]) -> None:
    """Refuse decimal-comma exports from a sample of every value column (not only the ones the
    recipes read: a file whose counters happen to look like C numbers, "1.234", would
    otherwise be read wrong without a word)."""
    import polars as pl

    from ridgeline.units import decimal_comma_expr

    if not cols or frame.height == 0:
        return
    head = frame.head(B.LOCALE_SAMPLE_ROWS)
    # every decimal-comma spelling holds a comma: a literal search finds the few columns that need
    # the pattern; first over all the columns' cells joined (one expression: a page of 2,000 C-locale
    # columns holds no comma in them at all), then column by column only when one was found
    if not head.select(pl.concat_str(pl.col(cols), separator="\x1f", ignore_nulls=True)
                       .str.contains(",", literal=True).any()).item():
        return
    commas = head.select(pl.col(cols).str.contains(",", literal=True).any()).row(0)
    cols = [c for c, has in zip(cols, commas) if has]
    flags = head.select([decimal_comma_expr(pl.col(c)).any().alias(f"c{i}") for i, c in enumerate(cols)]).row(0) \
        if cols else ()
    for c, hit in zip(cols, flags):
        if hit:
            r = head.filter(decimal_comma_expr(pl.col(c))).row(0, named=True)
            column = r.get("Metric Name") or c
            raise InputError(
                ctx.path,
                "numbers written with a decimal comma (a non-English locale); re-export with LC_ALL=C",
                line=blk.line_of(r["__row"]),
                column=column,
                actual=r[c],
            )


# --------------------------------------------------------------------------------------
# raw page
# --------------------------------------------------------------------------------------
def _raw_block(ctx: _Ctx, blk: _Block, df):
    """-> (wide metric frame M with identity columns + canonical Float64 metrics, units, present)"""
    import polars as pl

    from ridgeline.units import number_expr

    every = blk.head if blk.head is not None else df  # every column (the first rows when read by columns)
    units: dict[str, str] = {}
    if every.height and every["ID"][0] in (None, ""):
        first = every.row(0)
        units = {c: (v or "") for c, v in zip(every.columns, first) if c != "__row"}
    df = C.dedupe_raw_launches(ctx, blk, _launch_rows(df))
    every = _launch_rows(every) if blk.head is not None else df
    cols = set(df.columns)
    wanted = [c for c in df.columns if V.needed_metric(c)]
    numeric = [c for c in wanted if c not in V.STRING_METRICS]
    # counters have a rollup suffix (x.sum, x.avg.pct_of_peak...); suffix-less attributes may hold
    # lists such as "0,12" and are not sampled
    _check_locale(ctx, blk, every, [c for c in every.columns if "__" in c and "." in c and not c.startswith("__")])
    # from here on only the columns the derivation reads (a full-section page has 2,000+ others)
    ident = [c for c in df.columns if c in V.IDENTITY_COLUMNS]
    keep = dict.fromkeys(["__row", *ident, *[c for c in V.STRING_METRICS if c in cols], *wanted])
    if len(keep) < df.width:
        df = df.select(list(keep))
    # the native float cast, once per column: its values are the metrics where it read every
    # present cell; the others (n/a, grouping commas, garbage: fewer nulls before than after the
    # cast) need the slow path
    floats = df.select("__row", pl.col(numeric).cast(pl.Float64, strict=False))
    slow = {c for c in numeric if df.get_column(c).null_count() != floats.get_column(c).null_count()}
    _bad_cells(ctx, blk, df, [(c, c) for c in numeric if c in slow])
    key = ["ID"] + (["Process ID"] if "Process ID" in df.columns else [])
    counters = [c for c in numeric if C.is_measured_counter(c)]  # what ncu_derive's failed-replay test reads
    replay_failed = pl.all_horizontal([C.nan_or_missing(pl.col(c)) for c in counters]) if counters else None
    bad = C.bad_value_rows(ctx, blk, df, [(c, c) for c in numeric], key, replay_failed,
                           floats=floats, plain=set(numeric) - slow)
    if bad is not None:  # lenient: launches with a bad value are left out (listed in skipped)
        df = df.join(bad, on=key, how="anti", nulls_equal=True)
        floats = floats.filter(pl.col("__row").is_in(df.get_column("__row").implode()))
    if not units and numeric:
        ctx.notes.append(f"{ctx.path}: raw page without a units row: assumed ncu base units (--print-units base)")
    exprs, slow_exprs = [], []
    for c in numeric:
        unit = units.get(c, "") or V.UNITS_WHEN_BLANK.get(c, "")
        info = parse_unit(unit)
        if not info.known:
            ctx.unknown_units.add(f"{unit!r} ({c})")
        if c in slow:
            slow_exprs.append(scale_expr(number_expr(pl.col(c)), info).alias(c))
        else:  # fast_number_expr on the values already cast
            exprs.append(scale_expr(pl.when(pl.col(c).is_finite()).then(pl.col(c)), info).alias(c))
    strings = [c for c in V.STRING_METRICS if c in cols]
    m = pl.concat([df.select(*ident, *strings, *slow_exprs), floats.select(exprs)], how="horizontal")
    return m.select(*ident, *strings, *numeric), units, set(wanted)


# --------------------------------------------------------------------------------------
# details page
# --------------------------------------------------------------------------------------
_LABELS = {label for (label, _b) in V.SECTION_LABELS} | set(V.SECTION_LABELS_ANY_UNIT)


def _details_block(ctx: _Ctx, blk: _Block, df):
    import polars as pl

    from ridgeline.units import fast_number_expr, needs_slow_expr, number_expr

    key = ["ID"] + (["Process ID"] if "Process ID" in df.columns else [])
    df = C.dedupe_details_launches(ctx, blk, _launch_rows(df))
    ident = [c for c in df.columns if c in V.IDENTITY_COLUMNS]
    first_rows = df.filter(pl.col("ID").ne_missing(pl.col("ID").shift(1)) | (pl.int_range(pl.len()) == 0))
    launches = first_rows.select(ident).unique(subset=key, keep="first", maintain_order=True)

    _check_locale(
        ctx,
        blk,
        df.head(20 * B.LOCALE_SAMPLE_ROWS).filter(
            pl.col("Metric Name").str.contains(".", literal=True) | (pl.col("Metric Unit").fill_null("") != "")
        ),
        ["Metric Value"],
    )
    names = pl.col("Metric Name")
    wanted = list(V.NEEDED_METRICS | _LABELS)
    sub = df.filter(names.is_in(wanted) | names.str.contains(V.TENSOR_METRIC_PATTERN)).select(
        *key, "__row", *(["Section Name"] if "Section Name" in df.columns else []), "Metric Name", "Metric Unit", "Metric Value"
    )
    # unit -> factor, base (a handful of distinct spellings)
    unit_col = pl.col("Metric Unit").fill_null("")
    distinct = [u or "" for u in sub.get_column("Metric Unit").unique().to_list()]
    exps, bases = {}, {}
    for u in distinct:
        info = parse_unit(u)
        exps[u], bases[u] = info.exponent, info.base
        if not info.known:
            ctx.unknown_units.add(repr(u))
    exp = unit_col.replace_strict(exps, default=0, return_dtype=pl.Int32)
    # metrics printed with a blank unit: ncu's base unit for them
    for metric, unit in V.UNITS_WHEN_BLANK.items():
        info = parse_unit(unit)
        exp = pl.when((names == metric) & (unit_col == "")).then(pl.lit(info.exponent, dtype=pl.Int32)).otherwise(exp)
    sub = sub.with_columns(
        exp.alias("__exp"),
        unit_col.replace_strict(bases, default="", return_dtype=pl.String).alias("__base"),
    )
    sub = sub.with_columns(
        pl.lit(10.0).pow(pl.col("__exp").clip(lower_bound=0)).alias("__mul"),
        pl.lit(10.0).pow((-pl.col("__exp")).clip(lower_bound=0)).alias("__div"),
    )
    label_map = {f"{label}\x1f{base}": canon for (label, base), canon in V.SECTION_LABELS.items()}
    is_raw_name = names.is_in(list(V.NEEDED_METRICS)) | names.str.contains(V.TENSOR_METRIC_PATTERN)
    sub = sub.with_columns(
        pl.when(is_raw_name)
        .then(names)
        .otherwise(
            pl.coalesce(
                names.replace_strict(V.SECTION_LABELS_ANY_UNIT, default=None, return_dtype=pl.String),
                pl.concat_str([names, pl.lit("\x1f"), pl.col("__base")]).replace_strict(label_map, default=None, return_dtype=pl.String),
            )
        )
        .alias("__canon")
    ).filter(pl.col("__canon").is_not_null())
    string_rows = sub.filter(pl.col("__canon").is_in(list(V.STRING_METRICS)))
    num = sub.filter(~pl.col("__canon").is_in(list(V.STRING_METRICS))).rename({"Metric Name": "__label"})
    value = pl.col("Metric Value")
    if num.height and num.select(needs_slow_expr(value)).item():
        _bad_cells(ctx, blk, num, [("Metric Value", "Metric Value")])
        parsed = number_expr(value)
    else:
        parsed = fast_number_expr(value)
    # a failed replay: every measured metric of the launch NaN or n/a (its peaks are constants and survive)
    peak = pl.col("__canon").str.contains(r"\.peak_[a-z_]+$")
    replay_failed = (C.nan_or_missing(pl.col("Metric Value")) | peak).all().over(key)
    bad = C.bad_value_rows(ctx, blk, num, [("Metric Value", "Metric Value")], key, replay_failed)
    twice = C.conflicting_metric_rows(ctx, blk, num, key)
    if twice is not None:
        bad = twice if bad is None else pl.concat([bad, twice.cast(bad.schema)]).unique(maintain_order=True)
    if bad is not None:  # lenient: launches with a bad value are left out (listed in skipped)
        num = num.join(bad, on=key, how="anti", nulls_equal=True)
        string_rows = string_rows.join(bad, on=key, how="anti", nulls_equal=True)
        launches = launches.join(bad, on=key, how="anti", nulls_equal=True)
    num = num.with_columns((parsed * pl.col("__mul") / pl.col("__div")).alias("__v"))
    # section labels used in this block: named next to the counter in *_source columns
    labels_used = dict(
        num.filter(pl.col("__label") != pl.col("__canon")).select("__canon", "__label").unique(subset="__canon").iter_rows()
    )
    present = set(num.get_column("__canon").unique().to_list()) | set(string_rows.get_column("__canon").unique().to_list())
    m = launches
    if num.height:
        wide = num.pivot(on="__canon", index=key, values="__v", aggregate_function="first")
        m = m.join(wide, on=key, how="left", nulls_equal=True, maintain_order="left")
    if string_rows.height:
        wide_s = string_rows.pivot(on="__canon", index=key, values="Metric Value", aggregate_function="first")
        m = m.join(wide_s, on=key, how="left", nulls_equal=True, maintain_order="left")
    return m, present, labels_used
