"""Interval arithmetic on sorted polars Series (no per-row Python): unions of intervals and the
covered length before given times, and numpy's median / linear quantile. Shared by the timeline
analysis (:mod:`ridgeline.analyzer.timeline.busy`), the idle causes (:mod:`ridgeline.analyzer.timeline.idle_causes`),
the communication figures (:mod:`ridgeline.analyzer.timeline.comm`), steps, fusion candidates and ranges.
Times are int64 nanoseconds, kept exact (no float on the way).

Why polars and not numpy: start-up. ``import numpy`` costs ~50 ms and ~15 MB of a short run (a
14 MB trace analyses in ~0.4 s), and polars, loaded anyway to read the trace, does the same work.
Analysing a Kineto trace or an nsys export therefore never imports numpy, not even through polars
(``to_numpy()``, a Series built from an ndarray): tests/test_no_numpy.py. The helpers accept
Series or plain sequences and return Int64 Series; tests compare them with numpy's own functions
(tests/analyzer/timeline/test_intervals.py).

What a call costs decides the shape of the code. Series arithmetic, comparisons, ``filter``,
``zip_with``, ``slice``, ``new_from_index``, ``sum``/``min``/``max``/``quantile`` run natively (a
few us); most other Series methods (``gather``, ``search_sorted``, ``cum_max``, ``shift``,
``clip``, ``fill_null``, ``unique``...) run a DataFrame query each (~50-100 us, against ~1 us for
numpy). So each helper is one or two queries whatever its length, and a loop over groups (range
names, fusion candidates) becomes one query over all of them. Polars evaluates a sub-expression
used twice in one query twice: a search feeds several gathers as a column of an earlier query.

Numpy idioms and their spelling here: ``np.maximum.reduceat(e, starts_of_runs)`` over runs of a
running maximum is the running maximum at each run's last element; ``np.searchsorted`` is
``search_sorted(side=...)``, whose unsigned index is cast to Int64 before any subtraction; an
integer Series divided by a float *scalar* is multiplied by its reciprocal in polars (last-bit
differences from numpy's division), so seconds are divided by a Series of 1e9 where they leave as
a column.
"""

from __future__ import annotations


def series(values, dtype=None):
    """``values`` as a polars Series (Int64 unless ``dtype``): a Series is cast, not copied, when it
    has the dtype already; anything else (a list, a range, a numpy array in tests) is converted."""
    import polars as pl

    dtype = dtype or pl.Int64
    if isinstance(values, pl.Series):
        return values if values.dtype == dtype else values.cast(dtype)
    return pl.Series(values, dtype=dtype)


def empty(dtype=None):
    """An empty Series (Int64 unless ``dtype``)."""
    import polars as pl

    return pl.Series([], dtype=dtype or pl.Int64)


def full(value, n: int, dtype=None):
    """A Series of ``n`` times ``value`` (native: no query)."""
    import polars as pl

    return pl.Series([value], dtype=dtype or pl.Int64).new_from_index(0, n)


def where(mask, yes, no):
    """``np.where(mask, yes, no)`` for Series (``yes``/``no`` Series of mask's length or scalars)."""
    import polars as pl

    n = mask.len()
    dtype = yes.dtype if isinstance(yes, pl.Series) else no.dtype if isinstance(no, pl.Series) else pl.Int64
    if not isinstance(yes, pl.Series):
        yes = full(yes, n, dtype)
    if not isinstance(no, pl.Series):
        no = full(no, n, dtype)
    return yes.zip_with(mask, no)


def maximum(a, b):
    """Elementwise maximum of two Series of one length (``b`` may be a scalar)."""
    return where(a >= b, a, b)


def minimum(a, b):
    """Elementwise minimum of two Series of one length (``b`` may be a scalar)."""
    return where(a <= b, a, b)


def merge_intervals(starts, ends):
    """Union of intervals -> (starts, ends) of disjoint sorted intervals (Int64 Series).

    Sorted by start, each interval's end raised to its start, a new union member begins where a
    start lies past the running maximum of the ends before it; that member ends at the running
    maximum at its last interval (numpy's ``np.maximum.reduceat`` over the runs). Two queries."""
    import polars as pl

    s = series(starts)
    if not s.len():
        return s, series(ends)
    run = pl.DataFrame({"s": s, "e": maximum(series(ends), s)}).sort("s").select("s", pl.col("e").cum_max())
    s, run = run.get_column("s"), run.get_column("e")
    n = s.len()
    new = s.slice(1) > run.slice(0, n - 1)  # interval i + 1 starts a new member
    first, last = pl.Series([True]), pl.Series([True])
    return s.filter(pl.concat([first, new])), run.filter(pl.concat([new, last]))


def _covered_expr(ms, me, col: str, index: str | None = None):
    """Expression: the covered length of (ms, me) before each value of column ``col``, whose
    ``np.searchsorted(ms, col, "right")`` is column ``index`` (default ``col + "_i"``)."""
    import polars as pl

    i = pl.col(index or col + "_i")
    j = pl.when(i > 0).then(i - 1).otherwise(0)  # (when/then: max_horizontal and clip cost ~3x more per call)
    length = me - ms
    before = length.cum_sum() - length
    last_s, last_len = pl.lit(ms).gather(j), pl.lit(length).gather(j)
    into = pl.col(col) - last_s
    partial = pl.when(into < 0).then(0).when(into > last_len).then(last_len).otherwise(into)
    return pl.when(i > 0).then(pl.lit(before).gather(j) + partial).otherwise(0)


def _searched(ms, cols: dict):
    """Frame of ``cols`` (name -> Int64 Series) with each one's search index into ``ms`` (one query)."""
    import polars as pl

    frame = pl.DataFrame({k: series(v) for k, v in cols.items()})
    return frame.with_columns(pl.lit(ms).search_sorted(pl.col(k), side="right").cast(pl.Int64).alias(k + "_i")
                              for k in cols)


def coverage(ms, me, t):
    """Covered length of disjoint sorted intervals (ms, me) before each time in ``t`` (Int64 Series;
    two queries: polars evaluates a repeated sub-expression, such as the search, each time)."""
    t = series(t)
    if not ms.len() or not t.len():
        return full(0, t.len())
    return _searched(ms, {"t": t}).select(_covered_expr(ms, me, "t")).to_series()


def coverages(unions, t):
    """``[coverage(ms, me, t) for ms, me in unions]`` in two queries."""
    import polars as pl

    t = series(t)
    frame = pl.DataFrame({"t": t}).with_columns(
        pl.lit(ms).search_sorted(pl.col("t"), side="right").cast(pl.Int64).alias(f"t{k}_i")
        for k, (ms, _me) in enumerate(unions) if ms.len())
    out = frame.select((_covered_expr(ms, me, "t", f"t{k}_i") if ms.len() else pl.repeat(0, pl.len(), dtype=pl.Int64))
                       .alias(f"c{k}") for k, (ms, me) in enumerate(unions))
    return [out.get_column(f"c{k}") for k in range(len(unions))]


def covered_between(ms, me, a, b):
    """Covered length of disjoint sorted intervals (ms, me) inside each ``[a[i], b[i])`` (two queries)."""
    a, b = series(a), series(b)
    if not ms.len() or not a.len():
        return full(0, a.len())
    return _searched(ms, {"a": a, "b": b}).select(_covered_expr(ms, me, "b") - _covered_expr(ms, me, "a")).to_series()


def union_len(ms, me) -> int:
    """Total length of disjoint intervals."""
    return int((me - ms).sum()) if ms.len() else 0


_EXACT = 2.0 ** 53  # integers beyond this do not all convert to float64 exactly


def _neighbours(a, q: float):
    """The two values around position ``q * (n - 1)`` in sorted order and the fraction between them,
    as numpy reads them (Python numbers: ints stay ints where a float would round them)."""
    import math

    import polars as pl

    if not isinstance(a, pl.Series):
        a = pl.Series(a)
    n = a.len()
    pos = q * (n - 1)
    lo, hi = int(math.floor(pos)), int(math.ceil(pos))  # as polars' "lower" and "higher"
    x, y = a.quantile(q, "lower"), a.quantile(q, "higher")
    if a.dtype.is_integer() and max(abs(x), abs(y)) >= _EXACT:  # exact integers where float would round
        s = a.sort()
        x, y = s[lo], s[hi]
    elif a.dtype.is_integer():
        x, y = int(x), int(y)
    elif a.dtype != pl.Float64:
        x, y = float(x), float(y)
    return x, y, pos - lo


def quantile(a, q: float) -> float:
    """``np.quantile(a, q)`` (the default, linear method: the value at ``q * (n - 1)`` between its
    two neighbours in sorted order), with numpy's own arithmetic (its ``_lerp``): the same number.
    The neighbours come from polars' ``quantile(q, "lower"/"higher")`` (selection, no sort)."""
    x, y, t = _neighbours(a, q)
    d = y - x
    return float(y - d * (1 - t)) if t >= 0.5 else float(x + d * t)


def median(a) -> float:
    """``np.median(a)``: the middle value, or the mean of the two middle ones (numpy adds them as
    float64 and halves the sum)."""
    x, y, _t = _neighbours(a, 0.5)
    return (float(x) + float(y)) / 2


def unique_sorted(a):
    """``np.unique(a)`` of a 1-D Series (sorted distinct values)."""
    import polars as pl

    a = a if isinstance(a, pl.Series) else pl.Series(a)
    return a.unique().sort()
