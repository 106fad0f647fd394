"""The numpy-free helpers of analyzer/timeline/intervals.py (polars Series) against numpy computed here,
on random inputs and on the edge cases: no interval, one, touching, nested and identical ones,
zero-length ones, ends before starts; medians and quantiles of odd and even lengths, ints and
floats, and integers past 2**53 (where a float would round them).

The numpy reference implementations below are the ones the timeline analysis used before it
dropped numpy (start-up: a ~50 ms import); tests may import numpy, the analysis may not
(tests/test_no_numpy.py)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ridgeline.analyzer.timeline.idle_causes import NO_LAUNCH, gap_causes, queue_depths
from ridgeline.analyzer.timeline.intervals import (coverage, coverages, covered_between, median, merge_intervals, quantile,
                                          unique_sorted)
from ridgeline.analyzer.timeline.steps import _intersect


# ----------------------------------------------------------------------------- numpy references
def np_merge(starts, ends):
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
    return s[idx], np.maximum.reduceat(e, idx)


def np_coverage(ms, me, t):
    t = np.asarray(t, dtype=np.int64)
    if ms.size == 0:
        return np.zeros(t.shape, dtype=np.int64)
    cum = np.concatenate([[0], np.cumsum(me - ms)])
    i = np.searchsorted(ms, t, side="right")
    j = np.maximum(i - 1, 0)
    return np.where(i > 0, cum[j] + np.clip(t - ms[j], 0, me[j] - ms[j]), 0)


def np_intersect(as_, ae, bs, be):
    if not as_.size or not bs.size:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    pts = np.unique(np.concatenate([as_, ae, bs, be]))
    lo, hi = pts[:-1], pts[1:]
    mid = lo + (hi - lo) // 2

    def inside(us, ue):
        i = np.searchsorted(us, mid, side="right") - 1
        return (i >= 0) & (mid < ue[np.maximum(i, 0)]) & (mid >= us[np.maximum(i, 0)])

    keep = inside(as_, ae) & inside(bs, be) & (hi > lo)
    return np_merge(lo[keep], hi[keep])


def np_gap_causes(a, b, launch, sync_s, sync_e, launch_gap_ns):
    length = b - a
    short = length <= launch_gap_ns
    known = launch != NO_LAUNCH
    lc = np.where(known, np.clip(launch, a, b), b)
    sync = np_coverage(sync_s, sync_e, lc) - np_coverage(sync_s, sync_e, a)
    host_window, tail = lc - a, b - lc
    launch_tail = np.where(known & (launch > a), np.minimum(tail, int(launch_gap_ns)), 0)
    long_ = ~short
    return {"launch": int(length[short].sum() + launch_tail[long_].sum()), "sync": int(sync[long_].sum()),
            "host": int((host_window - sync)[long_ & known].sum()),
            "queued": int((tail - launch_tail)[long_ & known].sum()),
            "other": int((host_window - sync)[long_ & ~known].sum())}


def _random_intervals(rng, n, span=200, longest=40):
    s = rng.integers(0, span, n)
    return s, s + rng.integers(-3, longest, n)  # a few end before they start: raised to the start


EDGE_CASES = [
    ([], []),                                    # none
    ([5], [9]),                                  # one
    ([5], [5]),                                  # one of zero length
    ([0, 10], [10, 20]),                         # touching: one union member
    ([0, 2, 3], [10, 5, 4]),                     # nested
    ([1, 1, 1], [4, 4, 4]),                      # identical
    ([7, 1], [3, 2]),                            # unsorted, an end before its start
    ([2**62, 2**62 + 1], [2**62 + 5, 2**62 + 3]),  # epoch-like nanoseconds, past float64's exact integers
]


# ----------------------------------------------------------------------------- tests
@pytest.mark.parametrize("starts,ends", EDGE_CASES)
def test_merge_and_coverage_edge_cases_equal_numpys(starts, ends):
    ms, me = merge_intervals(starts, ends)
    ws, we = np_merge(starts, ends)
    assert ms.to_list() == ws.tolist() and me.to_list() == we.tolist()
    assert ms.dtype == me.dtype == pl.Int64
    t = sorted({*starts, *ends, *(x + 1 for x in starts), *(x - 1 for x in ends), -1, 0, 2**62 + 2})
    assert coverage(ms, me, t).to_list() == np_coverage(ws, we, t).tolist()


def test_merge_coverage_intersect_equal_numpys_on_random_intervals():
    rng = np.random.default_rng(22)
    for trial in range(300):
        s, e = _random_intervals(rng, int(rng.integers(0, 25)))
        ms, me = merge_intervals(pl.Series(s.tolist(), dtype=pl.Int64), pl.Series(e.tolist(), dtype=pl.Int64))
        ws, we = np_merge(s, e)
        assert ms.to_list() == ws.tolist() and me.to_list() == we.tolist(), (s, e)
        # the union is disjoint and sorted, and as long as the covered points
        assert all(b < c for b, c in zip(me.to_list()[:-1], ms.to_list()[1:]))
        t = rng.integers(-10, 260, int(rng.integers(0, 12)))
        assert coverage(ms, me, t.tolist()).to_list() == np_coverage(ws, we, t).tolist()
        none = merge_intervals([], [])
        assert [c.to_list() for c in coverages([(ms, me), none, (ms, me)], t.tolist())] == \
            [np_coverage(ws, we, t).tolist(), [0] * t.size, np_coverage(ws, we, t).tolist()]
        a = rng.integers(-10, 250, t.size)
        b = a + rng.integers(0, 30, t.size)
        assert covered_between(ms, me, a.tolist(), b.tolist()).to_list() == \
            (np_coverage(ws, we, b) - np_coverage(ws, we, a)).tolist()
        s2, e2 = _random_intervals(rng, int(rng.integers(0, 25)))
        os_, oe = merge_intervals(s2.tolist(), e2.tolist())
        ws2, we2 = np_merge(s2, e2)
        got = _intersect(ms, me, os_, oe)
        want = np_intersect(ws, we, ws2, we2)
        assert got[0].to_list() == want[0].tolist() and got[1].to_list() == want[1].tolist()


def test_gap_causes_and_queue_depths_equal_numpys_on_random_gaps():
    rng = np.random.default_rng(8)
    for trial in range(200):
        n = int(rng.integers(0, 15))
        a = np.sort(rng.integers(0, 10_000, n))
        b = a + rng.integers(1, 400, n)
        launch = np.where(rng.random(n) < 0.2, NO_LAUNCH, a + rng.integers(-300, 500, n)).astype(np.int64)
        ss, se = np_merge(*_random_intervals(rng, int(rng.integers(0, 10)), span=10_000, longest=600))
        got = gap_causes(a, b, launch, ss, se, 10.0)
        assert got == np_gap_causes(a, b, launch, ss, se, 10.0)
        assert sum(got.values()) == int((b - a).sum())
        start = launch + rng.integers(-5, 50, n)
        launch_l = np.abs(launch % 1000)
        want = (np.searchsorted(np.sort(launch_l), launch_l, side="right")
                - np.searchsorted(np.sort(np.maximum(start, launch_l)), launch_l, side="right"))
        assert queue_depths(launch_l, start).to_list() == want.tolist()


@pytest.mark.parametrize("n", [1, 2, 3, 10, 11, 1001])
@pytest.mark.parametrize("dtype", [np.int64, np.float64])
def test_quantile_and_median_equal_numpys(n, dtype):
    rng = np.random.default_rng(n)
    a = (rng.integers(-10**12, 10**12, n) if dtype is np.int64 else rng.normal(size=n) * 1e6).astype(dtype)
    s = pl.Series(a.tolist())
    for q in (0.0, 0.1, 0.25, 0.5, 0.9, 0.95, 1.0):
        assert quantile(s, q) == float(np.quantile(a, q))
    assert median(s) == float(np.median(a))


def test_quantile_and_median_of_integers_past_float_precision():
    a = np.array([2**60 + 1, 2**60 + 3, 2**62 + 7, 5, 2**61 + 1, 2**60 + 2], np.int64)
    for n in (len(a), len(a) - 1):  # even and odd
        s = pl.Series(a[:n].tolist())
        assert median(s) == float(np.median(a[:n]))
        for q in (0.1, 0.5, 0.9):
            assert quantile(s, q) == float(np.quantile(a[:n], q))


@pytest.mark.parametrize("n", [0, 1, 2, 50, 5000])
def test_unique_equals_numpys_unique(n):
    rng = np.random.default_rng(n)
    a = rng.integers(0, 7, n)
    assert unique_sorted(pl.Series(a.tolist(), dtype=pl.Int64)).to_list() == np.unique(a).tolist()
