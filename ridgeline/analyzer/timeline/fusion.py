"""Fusion candidates: the same short sequence of short kernels, launched back to back, many times.

Per device and stream, kernels in start order form *runs*: consecutive kernels each no longer
than ``fuse_kernel_s`` (default 50 us) with at most ``fuse_gap_s`` (default 50 us) of idle
between one's end and the next one's start. A longer kernel or a longer gap ends a run. Every
window of n = 2..6 consecutive kernels inside a run is an n-gram; n-grams are counted by a hash
of their kernel-name ids (a polynomial over uint64 on polars Series, no per-event Python), and an n-gram's
occurrences that overlap (``A A A`` holds ``A A`` twice) are counted once (greedy, left to right).

Per candidate: ``count``; ``span_s``, the time the occurrences cover (the union of their
windows, each from its first kernel's start to its last end: occurrences on several streams that
run at once are counted once, so no span exceeds the capture); ``kernel_s``, the union of the
occurrences' kernels' time; ``gap_s``, the time inside those windows when the *device* was idle
(no kernel, copy or memset on any stream: another stream's work in a sequence's gap is not idle
time): what fusing the kernels into one (or capturing them in a CUDA graph, which removes the
launch gaps but not the kernels' own prologues) would give back on the GPU at most;
``launch_host_s`` = count x (n - 1) x the median launch call's host time (when the trace has launch
calls): the host time saved by launching one kernel (or one graph) instead of n.
``gap_s`` <= ``span_s`` - ``kernel_s`` <= ``span_s`` <= the capture.

Candidates are ranked by ``gap_s`` + ``launch_host_s`` (first by a vectorized upper bound: each
occurrence's own stream's gaps, overlapping occurrences counted; the best :data:`PRESELECT` per n are then scored exactly) and picked in that order; one whose
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
    "span_s": ("f64", "time the occurrences cover: the union of their first-start-to-last-end windows (never more "
               "than the capture)"),
    "kernel_s": ("f64", "union of the occurrences' kernel time"),
    "gap_s": ("f64", "device idle inside the occurrences' windows (no work on any stream): what fusing or graph "
              "capture gives back at most"),
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
    from ridgeline.analyzer.timeline.intervals import merge_intervals

    work = acts.select("device", "start_ns", "end_ns")  # every kind: a copy on another stream is no idle time
    rows = []
    for (device,), part in k.group_by(["device"], maintain_order=True):
        dev = work.filter(pl.col("device").is_null() if device is None else pl.col("device") == device)
        busy = merge_intervals(dev.get_column("start_ns"), dev.get_column("end_ns"))
        rows += _device_candidates(part, source, device, int(fuse_kernel_s * 1e9), int(fuse_gap_s * 1e9), launch_ns, top,
                                   busy=busy)
    if not rows:
        return empty_fusion()
    # readable labels (docs/names.md) for the few names in the candidates only
    from ridgeline.analyzer.kernels.families import family_columns

    names = sorted({n for r in rows for n in r["names"]})
    short = dict(k.filter(pl.col("name").is_in(names)).unique("name").select("name", "short_name").iter_rows())
    labelled = family_columns(pl.DataFrame({"name": names, "short_name": [short.get(n) for n in names]}),
                              name_column="name", fallback_column="short_name")
    label = {n: lb or short.get(n) or n for n, lb in labelled.select("name", "kernel_label").iter_rows()}
    for r in rows:
        r["sequence"] = " -> ".join(label.get(n, n) for n in r["names"])
    return pl.DataFrame(rows, schema=polars_schema(FUSION_COLUMNS))


def _ngram_occurrences(s, e, ids, run, dur_cum, launch_ns):
    """The occurrences (``cid``, ``n``, ``pos``: start positions, overlapping ones included, sorted by
    cid and position) of the best :data:`PRESELECT` n-grams of each length n by their rough score
    (``cid``: ``n * PRESELECT`` + the n-gram's rank by hash). Ties in the rough score at the cut go
    to the smaller hash, as a stable sort of the hashes would have them. One query per n (a
    group_by on one hash column per n is several times faster than one on (n, hash), and ``top_k``
    than a sort of every n-gram)."""
    import polars as pl

    size = s.len()
    index = pl.int_range(size, dtype=pl.Int64, eager=True)
    found = []
    for n in range(NGRAM_MIN, min(NGRAM_MAX, size) + 1):
        m = size - n + 1
        valid = run.slice(0, m) == run.slice(n - 1, m)
        if not valid.any():
            continue
        h = ids.slice(0, m)
        for j in range(1, n):
            h = h * _P + ids.slice(j, m)
        pos = pl.col("pos")
        gap = ((pl.lit(e).gather(pos + (n - 1)) - pl.lit(s).gather(pos))
               - (pl.lit(dur_cum).gather(pos + n) - pl.lit(dur_cum).gather(pos)))
        grams = pl.DataFrame({"h": h, "pos": index.slice(0, m), "valid": valid}).lazy().filter("valid").select(
            "h", "pos", gap.alias("gap"))
        # rough score per n-gram, overlapping occurrences counted (an upper bound: vectorized); only
        # the best PRESELECT per n are scored exactly (_device_candidates)
        count = pl.len().cast(pl.Int64)
        rough = pl.col("gap").sum().cast(pl.Float64) + (count * (n - 1)).cast(pl.Float64) * float(launch_ns or 0.0)
        best = (grams.group_by("h").agg(pl.when(count < 2).then(pl.lit(-1.0)).otherwise(rough).alias("rough"))
                .filter(pl.col("rough") > 0).top_k(PRESELECT, by=["rough", "h"], reverse=[False, True])
                .select("h", (pl.col("h").rank("dense").cast(pl.Int64) - 1 + n * PRESELECT).alias("cid")))
        found.append(grams.join(best, on="h", how="inner").select("cid", pl.lit(n, dtype=pl.Int64).alias("n"), "pos"))
    if not found:
        return None
    return pl.concat(pl.collect_all(found)).sort("cid", "pos")


def _group_union(frame):
    """Per group ``g``, the union of intervals ``[a, b)`` -> frame (g, a, b) of disjoint intervals.
    One sort and one running maximum for all groups: each group is moved past the one before it
    (times from the earliest start, plus g x the whole span: no two groups' intervals meet; g <= 7 x
    PRESELECT and a capture within the readers' 30 days keep that inside int64)."""
    import polars as pl

    if not frame.height:
        return frame.select("g", "a", "b")
    base, top = frame.get_column("a").min(), frame.get_column("b").max()
    shift = pl.col("g").cast(pl.Int64) * (top - base + 1) - base
    d = frame.select("g", (pl.col("a") + shift).alias("a"), (pl.col("b") + shift).alias("b"), shift.alias("s")).sort("a")
    reach = pl.col("b").cum_max()
    new = (pl.col("a") > reach.shift(1)).fill_null(True)
    return (d.with_columns(reach.alias("m"), new.cum_sum().alias("seg")).group_by("seg")
            .agg(pl.col("g").first(), (pl.col("a").min() - pl.col("s").first()).alias("a"),
                 (pl.col("m").max() - pl.col("s").first()).alias("b")))


def _exact_scores(occ, s, e, busy):
    """Per candidate (``cid``, in order): n, count, first position, span (the union of its
    occurrences' windows), kernel time (the union of their kernels) and the device idle inside
    the windows (``busy``: the device's work, merged), in ns."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import covered_between

    size = s.len()
    ends = [pl.when(pl.col("n") > j).then(pl.lit(e).gather(pl.min_horizontal(pl.col("pos") + j, pl.lit(size - 1))))
            for j in range(NGRAM_MAX)]
    windows = occ.select(pl.col("cid").alias("g"), pl.lit(s).gather(pl.col("pos")).alias("a"),
                         pl.max_horizontal(ends).alias("b"))
    members = occ.select(pl.col("cid").alias("g"), "pos", pl.int_ranges(0, pl.col("n")).alias("j")).explode("j") \
        .select("g", (pl.col("pos") + pl.col("j")).alias("i")) \
        .select("g", pl.lit(s).gather(pl.col("i")).alias("a"), pl.lit(e).gather(pl.col("i")).alias("b"))
    spans = _group_union(windows)
    busy_in = covered_between(busy[0], busy[1], spans.get_column("a"), spans.get_column("b"))
    spans = spans.with_columns(busy_in.alias("busy")).group_by("g").agg(
        (pl.col("b") - pl.col("a")).sum().alias("span"), pl.col("busy").sum())
    kern = _group_union(members).group_by("g").agg((pl.col("b") - pl.col("a")).sum().alias("kern"))
    per = occ.group_by("cid", maintain_order=True).agg(pl.col("n").first(), pl.len().alias("count"),
                                                       pl.col("pos").first().alias("first"))
    return (per.join(spans, left_on="cid", right_on="g", how="left", maintain_order="left")
            .join(kern, left_on="cid", right_on="g", how="left", maintain_order="left")
            .select("cid", "n", "count", "first", "span", "kern",
                    # idle inside the windows: never below 0, never more than the windows minus the kernels
                    pl.min_horizontal(pl.col("span") - pl.col("busy"), pl.col("span") - pl.col("kern"))
                    .clip(lower_bound=0).alias("idle")))


def _device_candidates(part, source, device, short_ns, gap_ns, launch_ns, top, busy=None):
    """``busy``: the device's work (all kinds, all streams) merged into disjoint sorted intervals
    (``intervals.merge_intervals``); default: the kernels in ``part``."""
    import polars as pl

    from ridgeline.analyzer.timeline.intervals import merge_intervals

    if busy is None:
        busy = merge_intervals(part.get_column("start_ns"), part.get_column("end_ns"))

    size = part.height
    short = (pl.col("end_ns") - pl.col("start_ns")) <= short_ns
    stream = pl.col("stream").fill_null(-1)
    brk = ((stream != stream.shift(1)) | ((pl.col("start_ns") - pl.col("end_ns").shift(1)) > gap_ns)
           | ~short.shift(1)).fill_null(True)
    cols = part.select(
        "start_ns", "end_ns", "nid",
        # a long kernel is in no run (a run of its own, never n >= 2)
        pl.when(short).then(brk.cum_sum().cast(pl.Int64)).otherwise(-pl.int_range(1, pl.len() + 1, dtype=pl.Int64))
        .alias("run"),
        (pl.col("end_ns") - pl.col("start_ns")).cum_sum().alias("cum"))
    s, e, ids, run = (cols.get_column(c) for c in ("start_ns", "end_ns", "nid", "run"))
    dur_cum = pl.concat([pl.Series([0], dtype=pl.Int64), cols.get_column("cum")])
    occ = _ngram_occurrences(s, e, ids, run, dur_cum, launch_ns)
    if occ is None or not occ.height:
        return []
    # overlapping occurrences (A A A holds A A twice): counted once, greedy left to right
    step = pl.col("pos").diff().over("cid")
    overlapping = occ.filter((step < pl.col("n")).any().over("cid"))
    if overlapping.height:
        fixed = [(cid, n, _non_overlapping(pos, n)) for cid, n, pos in
                 overlapping.group_by("cid", maintain_order=True).agg(pl.col("n").first(), "pos").iter_rows()]
        occ = pl.concat([occ.filter(~pl.col("cid").is_in(overlapping.get_column("cid").unique().implode())),
                         pl.DataFrame({"cid": [c for c, _n, _p in fixed], "n": [n for _c, n, _p in fixed],
                                       "pos": [p for _c, _n, p in fixed]},
                                      schema={"cid": pl.Int64, "n": pl.Int64, "pos": pl.List(pl.Int64)}).explode("pos")]
                        ).sort("cid", "pos")
    occ = occ.filter(pl.len().over("cid") >= 2)
    if not occ.height:
        return []
    # exact scores of all candidates at once: the union of each one's windows, its kernels, the device idle inside
    per = _exact_scores(occ, s, e, busy)
    scored = []
    offset = 0
    for _cid, n, count, first, span, kern, idle in per.iter_rows():
        host = count * (n - 1) * launch_ns if launch_ns is not None else None
        scored.append((idle + (host or 0.0), n, first, offset, count, span, kern, idle, host))
        offset += count
    scored.sort(key=lambda t: (-t[0], -t[1], t[2]))
    occ_pos = occ.get_column("pos")
    names = part.get_column("name")
    covered = pl.Series([False], dtype=pl.Boolean).new_from_index(0, size)  # kernels in a picked candidate's occurrences
    rows = []
    for score, n, first, offset, count, span, kern, idle, host in scored:
        if len(rows) >= top or score <= 0:
            break
        pos = occ_pos.slice(offset, count)
        members = pl.concat([pos + j for j in range(n)])
        if pl.select(pl.lit(covered).gather(members).mean()).item() > MAX_SHARED:
            continue
        covered.scatter(members, True)
        rows.append({
            "source": source, "device": device, "n": n,
            "sequence": None, "names": names.slice(first, n).to_list(),
            "count": count, "span_s": span / 1e9, "kernel_s": kern / 1e9, "gap_s": idle / 1e9,
            "launch_host_s": host / 1e9 if host is not None else None,
        })
    return rows
