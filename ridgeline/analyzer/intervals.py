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
