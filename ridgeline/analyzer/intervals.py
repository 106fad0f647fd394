"""Interval arithmetic on sorted numpy arrays (no per-row Python): unions of intervals and the
covered length before given times. Shared by the timeline analysis (:mod:`ridgeline.analyzer.timeline`),
the idle causes (:mod:`ridgeline.analyzer.idle_causes`) and the step view
(:mod:`ridgeline.analyzer.steps`). Times are int64 nanoseconds."""

from __future__ import annotations


def merge_intervals(starts, ends):
    """Union of intervals -> (starts, ends) of disjoint sorted intervals (numpy int64 arrays)."""
    import numpy as np

    s = np.asarray(starts, dtype=np.int64)
    e = np.asarray(ends, dtype=np.int64)
    if s.size == 0:
        return s, e
    order = np.argsort(s, kind="stable")
    s, e = s[order], np.maximum(e[order], s[order])
    run_max = np.maximum.accumulate(e)
    new = np.empty(s.size, dtype=bool)
    new[0] = True
    new[1:] = s[1:] > run_max[:-1]
    idx = np.flatnonzero(new)
    out_s = s[idx]
    out_e = np.maximum.reduceat(e, idx)
    return out_s, out_e


def coverage(ms, me, t):
    """Covered length of disjoint sorted intervals (ms, me) before each time in ``t``."""
    import numpy as np

    t = np.asarray(t, dtype=np.int64)
    if ms.size == 0:
        return np.zeros(t.shape, dtype=np.int64)
    lengths = me - ms
    cum = np.concatenate([[0], np.cumsum(lengths)])
    i = np.searchsorted(ms, t, side="right")  # intervals starting at or before t
    before = cum[np.maximum(i - 1, 0)]
    last_s = ms[np.maximum(i - 1, 0)]
    last_e = me[np.maximum(i - 1, 0)]
    partial = np.clip(t - last_s, 0, last_e - last_s)
    return np.where(i > 0, before + partial, 0)


def quantile(a, q: float) -> float:
    """``np.quantile(a, q)`` (the default, linear method: the value at ``q * (n - 1)`` between its
    two neighbours in sorted order), by partitioning around those two neighbours: the same number,
    and numpy's quantile imports numpy.ma on first use (~40 ms of a short run's start-up)."""
    import numpy as np

    a = np.asarray(a)
    pos = q * (a.size - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, a.size - 1)
    part = np.partition(a, [lo, hi])
    x, y, t = part[lo], part[hi], pos - lo
    d = y - x
    return float(y - d * (1 - t)) if t >= 0.5 else float(x + d * t)


def unique_sorted(a):
    """``np.unique(a)`` of a 1-D array (sorted distinct values) without numpy.ma's import."""
    import numpy as np

    s = np.sort(np.asarray(a), kind="stable")
    if s.size < 2:
        return s
    return s[np.concatenate(([True], s[1:] != s[:-1]))]


def sorted_runs(a):
    """A sorted 1-D array -> (its distinct values, the index where each starts, how many of each):
    ``np.unique(a, return_index=True, return_counts=True)`` for sorted input, without numpy.ma."""
    import numpy as np

    a = np.asarray(a)
    if not a.size:
        return a, np.empty(0, np.intp), np.empty(0, np.intp)
    at = np.flatnonzero(np.concatenate(([True], a[1:] != a[:-1])))
    return a[at], at, np.diff(np.append(at, a.size))
