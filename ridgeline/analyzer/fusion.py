"""Fusion candidates: the same short sequence of short kernels, launched back to back, many times.

Per device and stream, kernels in start order form *runs*: consecutive kernels each no longer
than ``fuse_kernel_s`` (default 50 us) with at most ``fuse_gap_s`` (default 50 us) of idle
between one's end and the next one's start. A longer kernel or a longer gap ends a run. Every
window of n = 2..6 consecutive kernels inside a run is an n-gram; n-grams are counted by a hash
of their kernel-name ids (a polynomial over uint64, numpy, no per-event Python), and an n-gram's
occurrences that overlap (``A A A`` holds ``A A`` twice) are counted once (greedy, left to right).

Per candidate: ``count``; ``span_s`` (first start to last end, summed: kernel time plus the
gaps between them); ``kernel_s``; ``gap_s`` = span_s - kernel_s, the device idle inside the
sequences: what fusing the kernels into one (or capturing them in a CUDA graph, which removes
the launch gaps but not the kernels' own prologues) would give back on the GPU at most;
``launch_host_s`` = count x (n - 1) x the median launch call's host time (when the trace has launch
calls): the host time saved by launching one kernel (or one graph) instead of n.

Candidates are ranked by ``gap_s`` + ``launch_host_s`` (first by a vectorized upper bound that counts
overlapping occurrences; the best :data:`PRESELECT` per n are then scored exactly) and picked in that order; one whose
occurrences are made, more than half (:data:`MAX_SHARED`), of kernels already in a picked
candidate's occurrences is left out, so no gap is offered twice (``A B`` inside ``A B C`` x 172;
``A A A A`` and ``A A A A A`` over one run of ``A``). The top :data:`TOP` per device are kept.
"""

from __future__ import annotations

import numpy as np

from ridgeline.analyzer.schema import LAUNCH_RE

FUSE_KERNEL_S = 50e-6
FUSE_GAP_S = 50e-6
NGRAM_MIN, NGRAM_MAX = 2, 6
TOP = 10
#: a candidate whose occurrences' kernels are more than this share inside higher-ranked candidates' is left out
MAX_SHARED = 0.5
#: n-grams per n scored exactly (the rest are ranked by a vectorized upper bound first)
PRESELECT = 100
_P = np.uint64(1099511628211)  # FNV prime: the hash's multiplier

FUSION_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "n": ("i64", "kernels in the sequence"),
    "sequence": ("str", "the kernels' readable labels (docs/names.md), ' -> ' between them"),
    "names": ("list[str]", "the kernels' full names, in order"),
    "count": ("i64", "occurrences (overlapping ones once)"),
    "span_s": ("f64", "summed first-start-to-last-end of the occurrences (kernel time plus the gaps inside)"),
    "kernel_s": ("f64", "summed kernel time of the occurrences"),
    "gap_s": ("f64", "span_s - kernel_s: device idle inside the sequences (what fusing or graph capture gives back at most)"),
    "launch_host_s": ("f64", "count x (n - 1) x median launch call time: host launch time one launch instead of n saves; "
                      "null without launch calls in the trace"),
}


def empty_fusion():
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    return pl.DataFrame(schema=polars_schema(FUSION_COLUMNS))


def _launch_cost_ns(api) -> float | None:
    import polars as pl

    if api is None or not api.height:
        return None
    d = api.filter(pl.col("kind").is_in(["runtime", "driver"]) & pl.col("name").str.contains(LAUNCH_RE)).select(
        (pl.col("end_ns") - pl.col("start_ns")).median()).item()
    return float(d) if d is not None else None


def _non_overlapping(pos: np.ndarray, n: int) -> np.ndarray:
    """Greedy left-to-right: occurrences starting at least n after the last one kept."""
    if pos.size < 2 or np.diff(pos).min() >= n:
        return pos
    keep, nxt = [], -1
    for p in pos.tolist():
        if p >= nxt:
            keep.append(p)
            nxt = p + n
    return np.asarray(keep, dtype=pos.dtype)


def fusion_candidates(acts, api, source: str, *, fuse_kernel_s: float = FUSE_KERNEL_S, fuse_gap_s: float = FUSE_GAP_S,
                      top: int = TOP):
    """One file's activities -> FUSION_COLUMNS frame (see the module docstring)."""
    import polars as pl

    from ridgeline.analyzer.schema import polars_schema

    if acts is None or not acts.height:
        return empty_fusion()
    k = acts.filter(pl.col("kind") == "kernel").select(
        "device", "stream", "start_ns", "end_ns", pl.col("name").fill_null("?"),
        pl.coalesce("short_name", "name").fill_null("?").alias("short_name"))
    if k.height < 2:
        return empty_fusion()
    k = k.sort("device", "stream", "start_ns").with_columns(pl.col("name").rank("dense").cast(pl.UInt64).alias("nid"))
    launch_ns = _launch_cost_ns(api)
    rows = []
    for (device,), part in k.group_by(["device"], maintain_order=True):
        rows += _device_candidates(part, source, device, int(fuse_kernel_s * 1e9), int(fuse_gap_s * 1e9), launch_ns, top)
    if not rows:
        return empty_fusion()
    # readable labels (docs/names.md) for the few names in the candidates only
    from ridgeline.analyzer.families import family_columns

    names = sorted({n for r in rows for n in r["names"]})
    short = dict(k.filter(pl.col("name").is_in(names)).unique("name").select("name", "short_name").iter_rows())
    labelled = family_columns(pl.DataFrame({"name": names, "short_name": [short.get(n) for n in names]}),
                              name_column="name", fallback_column="short_name")
    label = {n: lb or short.get(n) or n for n, lb in labelled.select("name", "kernel_label").iter_rows()}
    for r in rows:
        r["sequence"] = " -> ".join(label.get(n, n) for n in r["names"])
    return pl.DataFrame(rows, schema=polars_schema(FUSION_COLUMNS))


def _device_candidates(part, source, device, short_ns, gap_ns, launch_ns, top):
    s = part.get_column("start_ns").to_numpy()
    e = part.get_column("end_ns").to_numpy()
    ids = part.get_column("nid").to_numpy()
    stream = part.get_column("stream").fill_null(-1).to_numpy()
    short = (e - s) <= short_ns
    brk = np.ones(s.size, dtype=bool)
    brk[1:] = (stream[1:] != stream[:-1]) | ((s[1:] - e[:-1]) > gap_ns) | ~short[:-1]
    run = np.cumsum(brk)
    run = np.where(short, run, -np.arange(1, s.size + 1))  # a long kernel is in no run (a run of its own, never n>=2)
    dur_cum = np.concatenate([[0], np.cumsum(e - s)])
    cands = []
    for n in range(NGRAM_MIN, NGRAM_MAX + 1):
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
        # rough score per n-gram, overlapping occurrences counted (an upper bound: vectorized); only
        # the best PRESELECT per n are scored exactly below
        gap = (e[pos + n - 1] - s[pos]) - (dur_cum[pos + n] - dur_cum[pos])
        rough = np.add.reduceat(gap, starts).astype(np.float64) + sizes * (n - 1) * (launch_ns or 0.0)
        rough[sizes < 2] = -1.0
        best = np.argsort(-rough, kind="stable")[:PRESELECT]
        for g in best[rough[best] > 0].tolist():
            cands.append((n, pos[starts[g]:starts[g] + sizes[g]]))
    if not cands:
        return []
    scored = []
    for n, pos in cands:
        pos = _non_overlapping(np.sort(pos), n)
        if pos.size < 2:
            continue
        span = int((e[pos + n - 1] - s[pos]).sum())
        kern = int((dur_cum[pos + n] - dur_cum[pos]).sum())
        host = pos.size * (n - 1) * launch_ns if launch_ns is not None else None
        scored.append((span - kern + (host or 0.0), n, pos, span, kern, host))
    scored.sort(key=lambda t: (-t[0], -t[1], int(t[2][0])))
    names = part.get_column("name")
    covered = np.zeros(s.size, dtype=bool)  # kernels already in a picked candidate's occurrences
    rows = []
    for score, n, pos, span, kern, host in scored:
        if len(rows) >= top or score <= 0:
            break
        members = (pos[:, None] + np.arange(n)).ravel()
        if covered[members].mean() > MAX_SHARED:
            continue
        covered[members] = True
        first = int(pos[0])
        rows.append({
            "source": source, "device": device, "n": n,
            "sequence": None, "names": names.slice(first, n).to_list(),
            "count": int(pos.size), "span_s": span / 1e9, "kernel_s": kern / 1e9, "gap_s": (span - kern) / 1e9,
            "launch_host_s": host / 1e9 if host is not None else None,
        })
    return rows
