"""Integrity checks on Nsight Compute metric frames: duplicate columns, duplicate launches and bad
values. Part of the ncu parser (:mod:`ridgeline.parsers.ncu.csv_reader` describes the whole); called by
:mod:`ridgeline.parsers.ncu.frames` on every block, whatever container it came from (CSV raw
or details page, ``.ncu-rep`` through the raw-page path).

Decisions (issue 21; ``docs/ncu-damaged.md`` says what each case gives):

* **Bad values.** ncu's counters, durations, clocks and peaks are never negative, infinite or
  NaN. A needed metric holding such a value was *collected with a bad value*; it is not an
  absent metric (``n/a``, blank), so it never becomes "not collected" advice. Strict: an
  :class:`~ridgeline.errors.InputError` naming the file, the line, the metric and the value.
  Lenient: the launch is left out of the KERNEL table and listed in ``skipped`` with every bad
  metric and value (so no figure is computed from half a launch, and the accounting counts it).
* **Duplicate header names.** Copies of one column whose cells are all equal: one is kept and a
  note says so. Copies that differ anywhere: an InputError naming the name, both column
  positions and the first line where they differ (strict and lenient alike: which copy is
  right cannot be known).
* **Duplicate launches.** The same launch key (``ID``, plus ``Process ID`` where printed) twice
  in one header block. Identical rows (details page: identical runs of rows): kept once, each
  later copy listed in ``skipped``. Different values: strict, an InputError naming both lines;
  lenient, the first copy is kept and each later one listed as a conflicting duplicate.
* **One metric twice in one launch** (details page, same section and name): one value is read
  once; different values are an error naming both lines (lenient: the launch skipped, listed).
"""

from __future__ import annotations

from ridgeline.errors import InputError
from ridgeline.result import Skipped

DUP_SUFFIX = "_duplicated_"


def _float(col):
    import polars as pl

    s = col.str.strip_chars()
    s = pl.when(s.str.contains(r"^[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?$")).then(
        s.str.replace_all(",", "", literal=True)).otherwise(s)
    return s.cast(pl.Float64, strict=False)


def bad_value_expr(col, replay_failed=None):
    """Polars expression: True where a cell is a number that no ncu counter can hold (negative,
    infinite, NaN). Blank and ``n/a`` cells are not bad values (they are not measured), and NaN
    is not one where ``replay_failed`` (an expression) is true: a launch whose every counter is
    NaN or n/a is ncu's failed replay, listed as such by ``ncu_derive._skip_failed_replays``."""
    v = _float(col)
    nan = v.is_nan() if replay_failed is None else (v.is_nan() & ~replay_failed)
    return (nan | v.is_infinite() | (v < 0)).fill_null(False)


def is_measured_counter(name: str) -> bool:
    """A metric measured on the launch (``x__y.sum``, ``.avg.pct_of_peak_sustained_elapsed``...), the
    ones a failed replay leaves NaN or n/a. Hardware peaks (``.peak_sustained``, ``.peak_burst``) are
    constants of the device and survive a failed replay, like device attributes and launch
    dimensions (no rollup suffix): they never make a launch look measured."""
    if "__" not in name or "." not in name or name.startswith("__"):
        return False
    return not name.rsplit(".", 1)[-1].startswith("peak_")


def nan_or_missing(col):
    """Polars expression: the cell is NaN, ``n/a``, blank or not a number (no measurement)."""
    v = _float(col)
    return v.is_null() | v.is_nan()


def _why(value: str | None) -> str:
    import math

    try:
        v = float(str(value).replace(",", ""))
    except ValueError:
        return "not a number"
    return "negative" if v < 0 else ("not finite" if math.isnan(v) or math.isinf(v) else "bad")


def _bad_message() -> str:
    return ("expected a finite, non-negative value (the metric was collected with a bad value; "
            "--lenient skips the launch and lists it)")


# --------------------------------------------------------------------------------------
# duplicate header names
# --------------------------------------------------------------------------------------
def dedupe_columns(ctx, blk, df):
    """Resolve repeated header names in ``df`` (polars names copies ``X_duplicated_0``, ...)."""
    import polars as pl

    header = blk.header
    if len(set(header)) == len(header):
        return df
    positions: dict[str, list[int]] = {}
    for i, name in enumerate(header):
        positions.setdefault(name, []).append(i + 1)
    drop = []
    for name, pos in positions.items():
        if len(pos) < 2:
            continue
        copies = [f"{name}{DUP_SUFFIX}{k}" for k in range(len(pos) - 1)]
        copies = [c for c in copies if c in df.columns]
        if name not in df.columns:
            continue
        for k, c in enumerate(copies):
            diff = df.filter(pl.col(name).ne_missing(pl.col(c)))
            if diff.height:
                r = diff.row(0, named=True)
                raise InputError(
                    ctx.path,
                    f"expected one column named {name!r}, found it at columns {pos[0]} and {pos[k + 1]} "
                    f"with different values ({r[name]!r} vs {r[c]!r})",
                    line=blk.line_of(r["__row"]) if "__row" in r else None,
                )
            drop.append(c)
        ctx.notes.append(f"{ctx.path}: column {name!r} appears {len(pos)} times (columns "
                         f"{', '.join(map(str, pos))}) with identical values: one kept")
    return df.drop(drop) if drop else df


# --------------------------------------------------------------------------------------
# duplicate launches
# --------------------------------------------------------------------------------------
def _key(df) -> list[str]:
    return ["ID"] + (["Process ID"] if "Process ID" in df.columns else [])


def _launch_label(row: dict, key: list[str]) -> str:
    text = f"launch ID {row['ID']}"
    return text + (f" (process {row['Process ID']})" if len(key) > 1 else "")


def dedupe_raw_launches(ctx, blk, df):
    """Raw page (launch rows only, ``__row`` present): one row per launch key."""
    import polars as pl

    key = _key(df)
    if df.height < 2 or not df.select(pl.struct(key).is_duplicated().any()).item():
        return df
    values = [c for c in df.columns if c != "__row"]
    first_row = pl.col("__row").min().over(key)
    # rows equal to an earlier row in every column: plain repeats
    repeat = ~pl.struct(values).is_first_distinct()
    later = pl.col("__row") != first_row
    tagged = df.with_columns(repeat.alias("__rep"), later.alias("__later"), first_row.alias("__first"))
    dups = tagged.filter(pl.col("__later"))
    for r in dups.iter_rows(named=True):
        _repeat_seen(ctx, _launch_label(r, key), blk.line_of(r["__first"]), blk.line_of(r["__row"]),
                     identical=r["__rep"], first="line", rows="this row")
    return df.filter(~pl.col("__row").is_in(dups.get_column("__row").implode()))


def _repeat_seen(ctx, label: str, first_line, line, *, identical: bool, first: str, rows: str) -> None:
    """A launch met again at ``line`` (first at ``first_line``): an identical copy is counted once and
    listed; one with other values is an error (strict) or listed with the first kept."""
    if identical:
        ctx.skipped.append(Skipped(str(ctx.path), f"line {line}",
                                   f"{label} repeated (identical to {first} {first_line}); counted once"))
        return
    if ctx.strict:
        raise InputError(ctx.path, f"expected each launch once, {label} appears again with "
                         f"different values (first at line {first_line})", line=line)
    ctx.skipped.append(Skipped(str(ctx.path), f"line {line}",
                               f"{label} appears again with different values (first at line "
                               f"{first_line}); the first kept, {rows} skipped"))


def dedupe_details_launches(ctx, blk, df):
    """Details page (launch rows only): a launch is a run of consecutive rows with one key; a key
    with several runs is a duplicated launch."""
    import polars as pl

    key = _key(df)
    if df.height < 2:
        return df
    change = pl.any_horizontal([pl.col(k).ne_missing(pl.col(k).shift(1)) for k in key]) | (pl.int_range(pl.len()) == 0)
    runs = df.select(*key, "__row", change.cum_sum().alias("__run"))
    per_key = runs.group_by(key).agg(pl.col("__run").n_unique().alias("n"))
    if per_key.get_column("n").max() < 2:
        return df
    fields = [c for c in ("Section Name", "Metric Name", "Metric Unit", "Metric Value") if c in df.columns]
    body = pl.concat_str([pl.col(c).fill_null("\x00") for c in fields], separator="\x1f")
    tagged = df.with_columns(runs.get_column("__run"))
    sig = (tagged.group_by(*key, "__run", maintain_order=True)
           .agg(body.str.join("\x1e").alias("__sig"), pl.col("__row").min().alias("__start")))
    sig = sig.with_columns(
        pl.col("__run").min().over(key).alias("__first_run"),
        pl.col("__start").min().over(key).alias("__first_start"),
        pl.col("__sig").first().over(key).alias("__first_sig"),
    )
    later = sig.filter(pl.col("__run") != pl.col("__first_run"))
    for r in later.iter_rows(named=True):
        _repeat_seen(ctx, _launch_label(r, key), blk.line_of(r["__first_start"]), blk.line_of(r["__start"]),
                     identical=r["__sig"] == r["__first_sig"], first="the rows from line", rows="these rows")
    return tagged.filter(~pl.col("__run").is_in(later.get_column("__run").implode())).drop("__run")


# --------------------------------------------------------------------------------------
# bad values
# --------------------------------------------------------------------------------------
def bad_value_rows(ctx, blk, frame, cols: list[tuple[str, str]], key: list[str], replay_failed=None, *,
                   floats=None, plain=frozenset()):
    """Cells of ``cols`` ((frame column, metric label)) holding bad values.

    Strict: raise on the first. Lenient: list each launch once in ``skipped`` and return the
    frame of its key values (to be left out); None when nothing is bad. ``frame`` carries
    ``__row`` and, on the details page, ``__label`` (the metric name as printed).
    ``replay_failed``: expression true on the rows of launches whose every counter is NaN or
    n/a (their NaN is ncu's mark of a failed replay, not a bad value). ``floats``: ``frame``'s
    rows with the native float cast of the columns in ``plain``, the columns whose every present
    cell that cast read (their cheap pass runs on those numbers; no cell of theirs can be a
    grouped negative).
    """
    import polars as pl

    if not cols or frame.height == 0:
        return None
    # cheap pass first (the native cast; a leading minus for grouped negatives such as -1,234): only
    # columns it flags get the full test, which is per-column expression work on 2,000-column pages
    names = [c for c, _l in cols]
    done = [c for c in names if c in plain] if floats is not None else []
    rest = [c for c in names if c not in set(done)]
    hit: dict[str, bool] = {}
    if done:
        f = pl.col(done)
        hit.update(zip(done, floats.select(((f < 0) | f.is_nan() | f.is_infinite()).any()).row(0)))
    if rest:
        v = pl.col(rest).cast(pl.Float64, strict=False)
        hit.update(zip(rest, frame.select(((v < 0) | v.is_nan() | v.is_infinite()).fill_null(False).any()
                                          | pl.col(rest).str.strip_chars().str.starts_with("-").fill_null(False).any()).row(0)))
    cols = [cl for cl in cols if hit[cl[0]]]
    if not cols:
        return None
    if replay_failed is not None:  # once per row, not once per column (pages have 1,000s of columns)
        frame = frame.with_columns(replay_failed.alias("__replay_failed"))
        replay_failed = pl.col("__replay_failed")
    flags = frame.select([bad_value_expr(pl.col(c), replay_failed).any().alias(f"b{i}")
                          for i, (c, _l) in enumerate(cols)]).row(0)
    hits = [(c, label) for (c, label), f in zip(cols, flags) if f]
    if not hits:
        return None
    extra = ["__label"] if "__label" in frame.columns else []
    found: dict[tuple, list] = {}
    for c, label in hits:
        bad = frame.filter(bad_value_expr(pl.col(c), replay_failed)).select("__row", *key, c, *extra)
        for r in bad.iter_rows(named=True):
            metric = r["__label"] if extra else label
            if ctx.strict:
                raise InputError(ctx.path, _bad_message(), line=blk.line_of(r["__row"]), column=metric, actual=r[c])
            k = tuple(r[x] for x in key)
            found.setdefault(k, [r["__row"]]).append(f"{metric} = {r[c]!r} ({_why(r[c])})")
    for k, (row, *items) in found.items():
        label = f"launch ID {k[0]}" + (f" (process {k[1]})" if len(k) > 1 else "")
        ctx.skipped.append(Skipped(str(ctx.path), f"line {blk.line_of(row)}",
                                   f"{label}: collected with a bad value ({'; '.join(items)}); launch skipped"))
    return pl.DataFrame([list(k) for k in found], schema={x: frame.schema[x] for x in key}, orient="row")


def conflicting_metric_rows(ctx, blk, num, key: list[str]):
    """Details page: one launch printing one metric (same section, same name) twice with different
    values. Strict: an error naming both lines; lenient: the launch's keys (to be left out), listed.
    ``num``: the needed metric rows (``__row``, key, ``__label``, ``Metric Value``, and ``Section
    Name`` where the page has it)."""
    import polars as pl

    if num.height < 2:
        return None
    group = [*key, *(["Section Name"] if "Section Name" in num.columns else []), "__label"]
    dup = num.filter(pl.len().over(group) > 1)
    if dup.height == 0:
        return None
    conflicts = (dup.group_by(group, maintain_order=True)
                 .agg(pl.col("Metric Value").n_unique().alias("__n"), pl.col("__row").min().alias("__a"),
                      pl.col("__row").max().alias("__b"), pl.col("Metric Value").first().alias("__va"),
                      pl.col("Metric Value").last().alias("__vb"))
                 .filter(pl.col("__n") > 1))
    if conflicts.height == 0:
        return None
    rows = list(conflicts.iter_rows(named=True))
    for r in rows:
        where = f"lines {blk.line_of(r['__a'])} and {blk.line_of(r['__b'])}"
        text = (f"{_launch_label(r, key)} prints metric {r['__label']!r} twice with different values "
                f"({r['__va']!r} vs {r['__vb']!r}, {where})")
        if ctx.strict:
            raise InputError(ctx.path, f"expected one value per metric and launch: {text}", line=blk.line_of(r["__b"]))
        ctx.skipped.append(Skipped(str(ctx.path), f"line {blk.line_of(r['__b'])}", f"{text}; launch skipped"))
    return conflicts.select(key).unique(maintain_order=True)
