"""Fusion candidates on polars (ridgeline.analyzer.timeline.fusion) give the same rows, in the same order, as
the numpy implementation they replaced (kept here as the reference), on random kernel sequences
built to tie: few kernel names, durations and gaps from a handful of values, several streams, long
kernels and long gaps that end runs, and a small PRESELECT so the cut falls among equal rough
scores (broken by the n-gram hash, as numpy's stable sort of the hashes did)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from ridgeline.analyzer.timeline import fusion

_P = np.uint64(1099511628211)


def _np_non_overlapping(pos, n):
    if pos.size < 2 or np.diff(pos).min() >= n:
        return pos
    keep, nxt = [], -1
    for p in pos.tolist():
        if p >= nxt:
            keep.append(p)
            nxt = p + n
    return np.asarray(keep, dtype=pos.dtype)


def _np_union(starts, ends):
    """Disjoint sorted [a, b) intervals covering the given ones."""
    out = []
    for a, b in sorted(zip(starts.tolist(), ends.tolist())):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def np_device_candidates(part, short_ns, gap_ns, launch_ns, top, preselect):
    """The numpy implementation of fusion._device_candidates before the move to polars: (n, names,
    count, span ns, kernel ns, host ns) per row; since issue 32, span, kernel time and idle are
    unions (a window covered twice counts once; idle is the device's, not the stream's)."""
    s = np.asarray(part.get_column("start_ns").to_list(), np.int64)
    e = np.asarray(part.get_column("end_ns").to_list(), np.int64)
    ids = np.asarray(part.get_column("nid").to_list(), np.uint64)
    stream = np.asarray(part.get_column("stream").fill_null(-1).to_list(), np.int64)
    short = (e - s) <= short_ns
    brk = np.ones(s.size, dtype=bool)
    brk[1:] = (stream[1:] != stream[:-1]) | ((s[1:] - e[:-1]) > gap_ns) | ~short[:-1]
    run = np.where(short, np.cumsum(brk), -np.arange(1, s.size + 1))
    dur_cum = np.concatenate([[0], np.cumsum(e - s)])
    cands = []
    for n in range(fusion.NGRAM_MIN, fusion.NGRAM_MAX + 1):
        m = s.size - n + 1
        if m <= 0:
            break
        valid = run[:m] == run[n - 1:]
        if not valid.any():
            continue
        h = np.zeros(m, dtype=np.uint64)
        with np.errstate(over="ignore"):
            for j in range(n):
                h = h * _P + ids[j:j + m]
        pos = np.flatnonzero(valid)
        hv = h[pos]
        order = np.argsort(hv, kind="stable")
        hv, pos = hv[order], pos[order]
        starts = np.flatnonzero(np.r_[True, hv[1:] != hv[:-1]])
        sizes = np.diff(np.r_[starts, hv.size])
        gap = (e[pos + n - 1] - s[pos]) - (dur_cum[pos + n] - dur_cum[pos])
        rough = np.add.reduceat(gap, starts).astype(np.float64) + sizes * (n - 1) * (launch_ns or 0.0)
        rough[sizes < 2] = -1.0
        best = np.argsort(-rough, kind="stable")[:preselect]
        for g in best[rough[best] > 0].tolist():
            cands.append((n, pos[starts[g]:starts[g] + sizes[g]]))
    scored = []
    busy = _np_union(s, e)  # the device's work (here: every kernel of the part)
    for n, pos in cands:
        pos = _np_non_overlapping(np.sort(pos), n)
        if pos.size < 2:
            continue
        members = (pos[:, None] + np.arange(n)).ravel()
        windows = _np_union(s[pos], np.max(e[pos[:, None] + np.arange(n)], axis=1))
        span = sum(b - a for a, b in windows)
        kern = sum(b - a for a, b in _np_union(s[members], e[members]))
        idle = span - sum(max(0, min(b, be) - max(a, bs)) for a, b in windows for bs, be in busy)
        host = pos.size * (n - 1) * launch_ns if launch_ns is not None else None
        scored.append((idle + (host or 0.0), n, pos, span, kern, host))
    scored.sort(key=lambda t: (-t[0], -t[1], int(t[2][0])))
    names = part.get_column("name").to_list()
    covered = np.zeros(s.size, dtype=bool)
    rows = []
    for score, n, pos, span, kern, host in scored:
        if len(rows) >= top or score <= 0:
            break
        members = (pos[:, None] + np.arange(n)).ravel()
        if covered[members].mean() > fusion.MAX_SHARED:
            continue
        covered[members] = True
        rows.append((n, names[int(pos[0]):int(pos[0]) + n], int(pos.size), span, kern, host))
    return rows


def _random_part(rng, size):
    names = [f"void k{i}()" for i in range(int(rng.integers(1, 5)))]
    picked = rng.integers(0, len(names), size)
    dur = rng.choice([2_000, 5_000, 5_000, 9_000, 80_000], size)  # 80 us: longer than fuse_kernel_s, ends a run
    gap = rng.choice([1_000, 1_000, 3_000, 70_000], size)  # 70 us: longer than fuse_gap_s, ends a run
    start = np.cumsum(np.r_[0, (dur + gap)[:-1]])
    stream = rng.choice([7, 7, 7, 9], size) if rng.random() < 0.5 else np.full(size, 7)
    frame = pl.DataFrame({"device": [0] * size, "stream": stream.tolist(), "start_ns": start.tolist(),
                          "end_ns": (start + dur).tolist(), "name": [names[i] for i in picked]})
    return frame.sort("device", "stream", "start_ns").with_columns(pl.col("name").rank("dense").cast(pl.UInt64).alias("nid"))


@pytest.mark.parametrize("preselect", [2, 5, fusion.PRESELECT])
@pytest.mark.parametrize("launch_ns", [None, 4_000.0])
def test_candidates_equal_the_numpy_implementation(monkeypatch, preselect, launch_ns):
    monkeypatch.setattr(fusion, "PRESELECT", preselect)
    rng = np.random.default_rng(preselect * 7 + (launch_ns is None))
    compared = 0
    for trial in range(40):
        part = _random_part(rng, int(rng.integers(2, 400)))
        want = np_device_candidates(part, 50_000, 50_000, launch_ns, fusion.TOP, preselect)
        got = fusion._device_candidates(part, "f", 0, 50_000, 50_000, launch_ns, fusion.TOP)
        assert [(r["n"], r["names"], r["count"], round(r["span_s"] * 1e9), round(r["kernel_s"] * 1e9),
                 None if r["launch_host_s"] is None else r["launch_host_s"] * 1e9) for r in got] == \
            [(n, names, count, span, kern, host) for n, names, count, span, kern, host in want]
        assert [r["span_s"] for r in got] == [span / 1e9 for _n, _names, _c, span, _k, _h in want]
        compared += len(want)
    assert compared > 50  # the sequences do hold candidates
