"""Fusion candidates: the same short sequence of short kernels, launched back to back, many times.

Per device and stream, kernels in start order form *runs*: consecutive kernels each no longer
than ``fuse_kernel_s`` (default 50 us) with at most ``fuse_gap_s`` (default 50 us) of idle
between one's end and the next one's start. A longer kernel or a longer gap ends a run. Every
window of n = 2..6 consecutive kernels inside a run is an n-gram; n-grams are counted by a hash
of their kernel-name ids (a polynomial over uint64 on polars Series, no per-event Python), and an n-gram's
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

from ridgeline.analyzer.schema import LAUNCH_RE

FUSE_KERNEL_S = 50e-6
FUSE_GAP_S = 50e-6
NGRAM_MIN, NGRAM_MAX = 2, 6
TOP = 10
#: a candidate whose occurrences' kernels are more than this share inside higher-ranked candidates' is left out
MAX_SHARED = 0.5
#: n-grams per n scored exactly (the rest are ranked by a vectorized upper bound first)
PRESELECT = 100
_P = 1099511628211  # FNV prime: the hash's multiplier (uint64 arithmetic wraps around, as in FNV)

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


def _non_overlapping(pos: list[int], n: int) -> list[int]:
    """Greedy left-to-right over sorted positions: occurrences starting at least n after the last one kept."""
    keep, nxt = [], -1
    for p in pos:
        if p >= nxt:
            keep.append(p)
            nxt = p + n
    return keep


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


def _ngram_groups(s, e, ids, run, dur_cum, n: int, launch_ns):
    """The best :data:`PRESELECT` n-grams of length ``n`` by their rough score, best first: a frame
    of ``pos`` (sorted start positions, overlapping ones included) and ``min_step`` (the smallest
    distance between two of them). Ties in the rough score go to the smaller hash, as a stable sort
    of the hashes would have them."""
    import polars as pl

    from ridgeline.analyzer.intervals import series

    m = s.len() - n + 1
    valid = run.slice(0, m) == run.slice(n - 1, m)
    if not valid.any():
        return None
    h = ids.slice(0, m)
    for j in range(1, n):
        h = h * _P + ids.slice(j, m)
    pos = valid.arg_true().cast(pl.Int64)
    # rough score per n-gram, overlapping occurrences counted (an upper bound: vectorized); only
    # the best PRESELECT per n are scored exactly (_device_candidates)
    gap = (e.gather(pos + (n - 1)) - s.gather(pos)) - (dur_cum.gather(pos + n) - dur_cum.gather(pos))
    size = pl.len().cast(pl.Int64)
    rough = (pl.col("gap").sum().cast(pl.Float64) + (size * (n - 1)).cast(pl.Float64) * float(launch_ns or 0.0))
    return (pl.DataFrame({"h": h.filter(valid), "pos": pos, "gap": series(gap)})
            .group_by("h").agg(pl.col("pos").sort(), pl.col("pos").sort().diff().min().alias("min_step"),
                               pl.when(size < 2).then(pl.lit(-1.0)).otherwise(rough).alias("rough"))
            .sort(["rough", "h"], descending=[True, False]).head(PRESELECT)
            .filter(pl.col("rough") > 0).select("pos", "min_step"))


def _device_candidates(part, source, device, short_ns, gap_ns, launch_ns, top):
    import polars as pl

    from ridgeline.analyzer.intervals import where

    s = part.get_column("start_ns")
    e = part.get_column("end_ns")
    ids = part.get_column("nid")
    stream = part.get_column("stream").fill_null(-1)
    size = s.len()
    short = (e - s) <= short_ns
    brk = pl.concat([pl.Series([True]), (stream.slice(1) != stream.slice(0, size - 1))
                     | ((s.slice(1) - e.slice(0, size - 1)) > gap_ns) | ~short.slice(0, size - 1)])
    # a long kernel is in no run (a run of its own, never n >= 2)
    run = where(short, brk.cum_sum().cast(pl.Int64), -pl.int_range(1, size + 1, dtype=pl.Int64, eager=True))
    dur_cum = pl.concat([pl.Series([0], dtype=pl.Int64), (e - s).cum_sum()])
    cands = []  # (n, sorted positions of the occurrences, overlapping ones removed)
    for n in range(NGRAM_MIN, NGRAM_MAX + 1):
        if size - n + 1 <= 0:
            break
        groups = _ngram_groups(s, e, ids, run, dur_cum, n, launch_ns)
        if groups is None:
            continue
        for pos, min_step in zip(groups.get_column("pos"), groups.get_column("min_step").to_list()):
            if min_step is not None and min_step < n:
                pos = pl.Series(_non_overlapping(pos.to_list(), n), dtype=pl.Int64)
            if pos.len() >= 2:
                cands.append((n, pos))
    if not cands:
        return []
    # exact scores of all candidates at once: span and kernel time of each occurrence, summed per candidate
    cid = pl.concat([pl.repeat(c, pos.len(), dtype=pl.Int64, eager=True) for c, (_n, pos) in enumerate(cands)])
    all_pos = pl.concat([pos for _n, pos in cands])
    last = pl.concat([pos + (n - 1) for n, pos in cands])
    sums = (pl.DataFrame({"cid": cid, "span": e.gather(last) - s.gather(all_pos),
                          "kern": dur_cum.gather(last + 1) - dur_cum.gather(all_pos)})
            .group_by("cid").agg(pl.col("span").sum(), pl.col("kern").sum()).sort("cid"))
    scored = []
    for (n, pos), span, kern in zip(cands, sums.get_column("span").to_list(), sums.get_column("kern").to_list()):
        host = pos.len() * (n - 1) * launch_ns if launch_ns is not None else None
        scored.append((span - kern + (host or 0.0), n, pos, span, kern, host))
    scored.sort(key=lambda t: (-t[0], -t[1], t[2][0]))
    names = part.get_column("name")
    covered = pl.repeat(False, size, dtype=pl.Boolean, eager=True)  # kernels already in a picked candidate's occurrences
    rows = []
    for score, n, pos, span, kern, host in scored:
        if len(rows) >= top or score <= 0:
            break
        members = pl.concat([pos + j for j in range(n)])
        if covered.gather(members).mean() > MAX_SHARED:
            continue
        covered.scatter(members, True)
        first = pos[0]
        rows.append({
            "source": source, "device": device, "n": n,
            "sequence": None, "names": names.slice(first, n).to_list(),
            "count": pos.len(), "span_s": span / 1e9, "kernel_s": kern / 1e9, "gap_s": (span - kern) / 1e9,
            "launch_host_s": host / 1e9 if host is not None else None,
        })
    return rows
