"""Reduce one partition (one host) read in time slices: memory bounded by one slice, any length.

:func:`ridgeline.analyzer.fleet.partitions._reduce_part` reads a partition whole (one host's rows, all
of them), so its peak memory grows with the host's samples, i.e. with the pull's length: the
20-day Prometheus pull of issue 21. A partition item ``("sliced", TimeSlices(...))`` instead
holds the host's long rows as a list of time slices, each a lazy frame (a Prometheus pull's
spill: one UTC day per slice, :meth:`ridgeline.sources.spill.Spill.host_slices`), and is reduced
here one *range* at a time: ranges are the slices' bounds aligned down to a multiple of the
window (windows are aligned to the epoch, ``dt.truncate``), so no window is cut by a range.

The windows are the same, value for value, as the whole-partition reduction's (tests compare
them), because everything that reaches across a range is carried over exactly:

1. **identity** (pass 1, rows read and checked, nothing folded): the GPU series, their UUID and
   model (the largest named, as over the whole input), hence the same ``_gid`` for every range;
   the sample counts and the rows the input's check left out are taken here, once; the first
   sample time of each GPU (for ``--warmup``) too;
2. **per-GPU statistics** (pass 2, each range folded to one row per GPU and timestamp): the
   first and last sample time after the warm-up, the fields that hold a value anywhere (``has``)
   and the sample interval, the *median* of all gaps between consecutive samples, computed
   exactly from a histogram of gap values (``gid, gap, count``) the ranges add to; the gap
   across a range boundary is measured from the last sample time the previous range carried;
3. **windows** (pass 3): each range's rows are reduced by the same window query with the
   per-GPU statistics and ``has`` given, after one *carry row* per GPU seen before: the time of
   its last earlier sample and each field's last earlier value (what ``forward_fill().shift(1)``
   reads: the XID seen before, the counters' previous value), so a range's first gap, first
   XID change and first counter increase are the whole series'. The carry row lies before the
   range, in a window of its own, which is dropped.

**Wide slices** (``TimeSlices(..., layout="wide")``): a Parquet store's day files of one host
(:func:`ridgeline.parsers.telemetry.reader._plan_parquet`), each slice the reader's wide frame of one
UTC day (one row per GPU and timestamp). The passes are the same; a range is folded by
:func:`ridgeline.analyzer.fleet.telemetry._fold_wide` with the partition's ``_gid`` instead of the long
rows' fold, and counted as the wide item it is, so the windows equal the whole-host wide
reduction's (tests compare them) and the store is never unpivoted.

**Two reads instead of three**: when the partition is one host of whole GPUs (no MIG instance,
every row with a GPU index: the usual store or pull), the GPU id is the GPU index whatever the
other ranges hold, so passes 1 and 2 run in one read of each range (the warm-up cut is known in
time: ranges come in time order, so a GPU's first sample lies in the first range that has it).
Otherwise the first range that shows a MIG instance, another host or a GPU without index stops
that and the two passes run as described.

Memory: one range of one host's long rows (read, checked, folded) plus one row per GPU (carry,
statistics) plus the histogram of gap values (as many rows as distinct gaps per GPU: a handful
for telemetry on a fixed scrape grid; at most the samples for jittered clocks) plus the window
rows. The price is three reads of each range (the first one does not fold; two for one host of
whole GPUs, above). ``--window all``
(one window per GPU over the whole run) cannot be cut by time: it reduces the partition whole.
"""

from __future__ import annotations

import dataclasses
from typing import Any

SLICED = "sliced"  # the layout of a partition item holding TimeSlices


@dataclasses.dataclass
class TimeSlices:
    """One partition's TELEMETRY long rows cut by time: ``slices`` is ``[(lo, hi, LazyFrame)]``
    in time order, each frame holding exactly the rows with ``lo <= timestamp < hi`` (UTC
    datetimes; a ``(None, None, frame)`` first holds rows without a time). Picklable (the
    frames travel as their plans). ``max_rows_read`` records the most rows read at once."""

    slices: list
    max_rows_read: int = 0
    layout: str = "long"  # or "wide": each slice a wide frame (one row per GPU and timestamp)

    def whole(self) -> list:
        """All the slices' rows as partition items ``[(layout, LazyFrame)]``, for a partition that
        is not cut: one item, or (wide frames whose columns differ) one per frame, merged by the
        reduction as the long table would merge them."""
        import polars as pl

        frames = [f for _lo, _hi, f in self.slices]
        if len(frames) == 1:
            return [(self.layout, frames[0])]
        if self.layout == "wide" and len({tuple(f.collect_schema().items()) for f in frames}) > 1:
            return [(self.layout, f) for f in frames]
        return [(self.layout, pl.concat(frames, how="vertical"))]

    def reduce(self, source, **kw):
        """What :func:`ridgeline.analyzer.fleet.partitions._reduce_part` calls for this item (it does not
        import this module, which imports it): :func:`reduce_sliced`."""
        return reduce_sliced(self, source, **kw)


def reduce_sliced(sliced: TimeSlices, source, *, window_s, th, warmup_s, check=None):
    """:func:`ridgeline.analyzer.fleet.partitions._reduce_part` of a TimeSlices item: ``(window rows or
    None, input rows read, sample counts per source, items the check left out)``."""
    import polars as pl

    from ridgeline.analyzer.fleet import telemetry as T
    from ridgeline.analyzer.fleet import partitions as TP

    if window_s is None or len(sliced.slices) < 2:  # --window all, or nothing to cut
        if not sliced.slices:
            return None, 0, {}, []
        items = [(layout, frame, source) for layout, frame in sliced.whole()]
        return TP._reduce_part(items, window_s=window_s, th=th, warmup_s=warmup_s, check=check)
    ranges = _ranges(sliced.slices, window_s)
    wide_layout = sliced.layout == "wide"

    def load(rng, record=None):
        frames = _read_range_frames(rng) if wide_layout else [_read_range(rng)]
        kept = []
        for df in frames:  # (wide: each file's frame on its own, with its own columns)
            sliced.max_rows_read = max(sliced.max_rows_read, df.height)
            if check is not None:
                df, left_out = check(df, source)
                if record is not None:
                    record["found"].extend(left_out)
            if record is not None:
                record["rows"] += df.height
                for k, (n, z) in TP._sample_counts(sliced.layout, df, source).items():
                    n0, z0 = record["counts"].get(k, (0, 0))
                    record["counts"][k] = (n0 + n, z0 + z)
            if wide_layout:
                present = [f for f in T.USED_FIELDS if f in df.columns]
                if not present:  # no analyzed field: no sample (as its long rows would be none)
                    continue
                # blank values of the fields this file has: a field it lacks is no blank
                df = df.with_columns(pl.sum_horizontal([pl.col(f).is_null() for f in present])
                                     .cast(pl.Int64).alias("_nulls"))
            kept.append(T._with_identity(df))
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else pl.concat(kept, how="diagonal_relaxed")

    def fold(df, gid, cutoff):
        """A range's rows (loaded) -> per-timestamp wide rows after the warm-up, or None."""
        if df is None:
            return None
        if wide_layout:
            wide = T._fold_wide(df, gid)[0]
            if wide is None or not wide.height:
                return None
            wide = wide.select("_gid", "timestamp", *T.USED_FIELDS, "_nulls")  # the long fold's columns
        else:
            lf = df.lazy().select(
                "timestamp", *T.KEYS, "value", fi.to_physical().cast(pl.Int32).alias("_fi"),
            ).filter(pl.col("_fi").is_not_null() & pl.col("timestamp").is_not_null())
            wide, _ordered = T._fold_per_timestamp(lf, None, gid)
            if not wide.height:
                return None
        if cutoff is not None:
            wide = (wide.join(cutoff, on="_gid", how="left", maintain_order="left")
                    .filter(pl.col("timestamp") >= pl.col("_cut")).drop("_cut"))
        return wide if wide.height else None

    def first_times(df):
        # a wide row is a sample of every field column it has
        return (df.filter((pl.lit(True) if wide_layout else fi.is_not_null()) & pl.col("timestamp").is_not_null())
                .group_by(list(T.KEYS)).agg(pl.col("timestamp").min().alias("_first")))

    def cutoff_of(firsts, gid):
        if not warmup_s or not firsts:
            return None
        us = int(round(warmup_s * 1e6))
        return (pl.concat(firsts, how="vertical_relaxed").group_by(list(T.KEYS)).agg(pl.col("_first").min())
                .select(gid, (pl.col("_first") + pl.duration(microseconds=us)).alias("_cut")))

    fi = _field_index()
    # passes 1 and 2 at once, when the GPU id needs no look at the whole partition: one host of
    # whole GPUs (the usual store or pull), whose id is the GPU index in every range. The warm-up
    # cut is known in time: ranges come in time order, so a GPU's first sample is in the first
    # range that has it. Else (MIG instances, several hosts, a GPU without index): the two passes.
    simple = pl.col("gpu").cast(pl.UInt64).alias("_gid")
    record: dict[str, Any] = {"rows": 0, "counts": {}, "found": []}
    stats, idents, firsts, hosts = _Stats(), [], [], set()
    for rng in ranges:
        df = load(rng, record)
        if df is None:
            continue
        host = df.get_column("host")
        if (host.null_count() or df.get_column("gpu").null_count()
                or df.get_column("gpu_instance").null_count() < df.height or host.n_unique() > 1
                or len(hosts | {host[0]}) > 1):
            stats = None
            break
        hosts.add(host[0])
        idents.append(df.group_by(list(T.KEYS)).agg(pl.col("uuid").max(), pl.col("model").max()))
        if warmup_s:
            firsts.append(first_times(df))
        stats.add(fold(df, simple, cutoff_of(firsts, simple)))
        del df
    if stats is None:
        # pass 1: identity, counts, checks, first sample time per GPU series
        record = {"rows": 0, "counts": {}, "found": []}
        idents, firsts = [], []
        for rng in ranges:
            df = load(rng, record)
            if df is None:
                continue
            idents.append(df.group_by(list(T.KEYS)).agg(pl.col("uuid").max(), pl.col("model").max()))
            if warmup_s:
                firsts.append(first_times(df))
            del df
    if not idents:
        return None, record["rows"], record["counts"], record["found"]
    ident_rows = pl.concat(idents, how="vertical_relaxed").group_by(list(T.KEYS)).agg(
        pl.col("uuid").max(), pl.col("model").max())
    del idents
    if not ident_rows.height:
        return None, record["rows"], record["counts"], record["found"]
    ident, gid = T._ident_and_gid(ident_rows)
    cutoff = cutoff_of(firsts, gid)

    def folded(rng):
        return fold(load(rng), gid, cutoff)

    if stats is None:
        # pass 2: per-GPU first/last time, gap histogram (exact median), fields with a value
        stats = _Stats()
        for rng in ranges:
            stats.add(folded(rng))
    if stats.ext is None:
        return None, record["rows"], record["counts"], record["found"]
    series = stats.ext.join(_median(stats.hist), on="_gid", how="left").with_columns(pl.col("interval_s").fill_null(1.0))
    has = stats.has

    # pass 3: the windows of each range, after one carry row per GPU seen before
    out, carry = [], None
    for rng in ranges:
        wide = folded(rng)
        if wide is None:
            continue
        rows = wide if carry is None else _with_carry(carry, wide.select(carry.columns))
        part = T._reduce_wide(rows, window_s=window_s, th=th, ordered=True, series=series, has=has)
        if carry is not None:
            part = part.filter(pl.col("window_start") >= rng[0])
        if part.height:
            out.append(part)
        carry = _carry(rows)
        del wide, rows
    if not out:
        return None, record["rows"], record["counts"], record["found"]
    windows = pl.concat(out, how="vertical").join(ident, on="_gid", how="left")
    return windows, record["rows"], record["counts"], record["found"]


class _Stats:
    """Per-GPU statistics of a partition's folded ranges, added range by range in time order:
    first and last time (``ext``), the histogram of gaps between samples (``hist``: the gap from
    the previous range's last sample included), the fields that hold a value (``has``)."""

    def __init__(self):
        self.hist = self.ext = self.last = None
        self.has: set = set()

    def add(self, wide) -> None:
        import polars as pl

        from ridgeline.analyzer.fleet.telemetry import USED_FIELDS

        if wide is None:
            return
        self.has |= {c for c in USED_FIELDS if wide.get_column(c).null_count() < wide.height}
        times = wide.select("_gid", "timestamp")
        if self.last is not None:  # each GPU's last time before this range, then its times here
            times = pl.concat([self.last, times], how="vertical").sort("_gid", "timestamp", maintain_order=True)
        same = pl.col("_gid") == pl.col("_gid").shift(1)
        gaps = times.select("_gid", pl.when(same).then(pl.col("timestamp").diff().dt.total_microseconds() / 1e6)
                            .otherwise(None).alias("gap")).drop_nulls("gap")
        counts = gaps.group_by("_gid", "gap").agg(pl.len().alias("n"))
        self.hist = counts if self.hist is None else pl.concat([self.hist, counts]).group_by("_gid", "gap").agg(
            pl.col("n").sum())
        span = wide.group_by("_gid").agg(pl.col("timestamp").min().alias("_t0"), pl.col("timestamp").max().alias("_t1"))
        self.ext = span if self.ext is None else pl.concat([self.ext, span]).group_by("_gid").agg(
            pl.col("_t0").min(), pl.col("_t1").max())
        tail = wide.group_by("_gid").agg(pl.col("timestamp").last())
        self.last = (tail if self.last is None else pl.concat([self.last, tail]).group_by("_gid").agg(
            pl.col("timestamp").max())).sort("_gid")


def _field_index():
    """The reduction's field code of a long row (null: a field the reduction does not use)."""
    import polars as pl

    from ridgeline.analyzer.fleet.telemetry import USED_FIELDS

    return pl.col("field").cast(pl.Enum(list(USED_FIELDS)), strict=False)


def _ranges(slices, window_s: float) -> list:
    """``[(lo, hi, [frames])]``: the slices' bounds aligned down to a multiple of the window
    (from the epoch, as ``dt.truncate`` aligns windows); the first range also takes the rows
    without a time, the last has no upper bound. A frame goes to each range it overlaps."""
    import datetime as _dt

    epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
    w_us = max(1, int(round(window_s * 1e6)))

    def align(t):
        us = (t - epoch) // _dt.timedelta(microseconds=1)
        return epoch + _dt.timedelta(microseconds=(us // w_us) * w_us)

    timed = [(lo, hi, f) for lo, hi, f in slices if lo is not None]
    untimed = [f for lo, _hi, f in slices if lo is None]
    bounds = sorted({align(lo) for lo, _hi, _f in timed})
    out = []
    for i, lo in enumerate(bounds):
        hi = bounds[i + 1] if i + 1 < len(bounds) else None
        frames = [f for a, b, f in timed if b > lo and (hi is None or a < hi)]
        out.append((None if i == 0 else lo, hi, frames, untimed if i == 0 else []))
    return out


def _read_range(rng):
    """A range's rows (collected): its frames filtered to ``lo <= timestamp < hi``."""
    import polars as pl

    lo, hi, frames, untimed = rng
    cond = None
    if lo is not None:
        cond = pl.col("timestamp") >= lo
    if hi is not None:
        cond = pl.col("timestamp") < hi if cond is None else cond & (pl.col("timestamp") < hi)
    parts = [f.filter(cond) if cond is not None else f for f in frames] + list(untimed)
    return pl.concat(parts, how="vertical").collect()


def _read_range_frames(rng):
    """A range's rows of each frame (collected, one DataFrame per frame: wide files may differ
    in their columns), filtered to ``lo <= timestamp < hi``."""
    import polars as pl

    lo, hi, frames, untimed = rng
    cond = pl.lit(True)
    if lo is not None:
        cond = cond & (pl.col("timestamp") >= lo)
    if hi is not None:
        cond = cond & (pl.col("timestamp") < hi)
    return [f.filter(cond).collect() for f in frames] + [f.collect() for f in untimed]


def _median(hist):
    """Per ``_gid``: the median of its gaps from ``(gid, gap, n)`` counts, as polars' ``median``
    computes it over the gaps themselves (linear: ``lower + (upper - lower) * 0.5``)."""
    import polars as pl

    if hist is None or not hist.height:
        return pl.DataFrame(schema={"_gid": pl.UInt64, "interval_s": pl.Float64})
    h = hist.sort("_gid", "gap").with_columns(
        pl.col("n").cum_sum().over("_gid").alias("_to"), pl.col("n").sum().over("_gid").alias("_total"))
    h = h.with_columns((pl.col("_to") - pl.col("n")).alias("_from"))  # ranks [_from, _to) hold this gap
    lo_rank = (pl.col("_total") - 1) // 2
    hi_rank = pl.col("_total") // 2
    lower = h.filter((pl.col("_from") <= lo_rank) & (lo_rank < pl.col("_to"))).select("_gid", pl.col("gap").alias("_lo"))
    upper = h.filter((pl.col("_from") <= hi_rank) & (hi_rank < pl.col("_to"))).select("_gid", pl.col("gap").alias("_hi"))
    return lower.join(upper, on="_gid").select(
        "_gid", (pl.col("_lo") + (pl.col("_hi") - pl.col("_lo")) * 0.5).alias("interval_s"))


def _with_carry(carry, wide):
    """The carry rows (one per GPU, before the range) and the range's rows (sorted by GPU and
    time), in (GPU, time) order: each GPU's carry row put before its rows by concatenating
    slices, not by sorting the range (a sort copies every column of a day of the host)."""
    import polars as pl

    carry = carry.sort("_gid")
    rle = wide.get_column("_gid").rle()
    lens, gids = rle.struct.field("len").to_list(), rle.struct.field("value").to_list()
    starts = [0]
    for n in lens[:-1]:
        starts.append(starts[-1] + n)
    cg = carry.get_column("_gid").to_list()
    pieces, ci, wi = [], 0, 0
    while ci < len(cg) or wi < len(gids):
        if wi >= len(gids) or (ci < len(cg) and cg[ci] <= gids[wi]):
            pieces.append(carry.slice(ci, 1))
            ci += 1
        else:
            pieces.append(wide.slice(starts[wi], lens[wi]))
            wi += 1
    return pl.concat(pieces, how="vertical", rechunk=False)


def _carry(rows):
    """One row per GPU for the next range: its last sample time and each field's last value
    (the state ``forward_fill().shift(1)`` reads), blank count 0. Its window is dropped."""
    import polars as pl

    from ridgeline.analyzer.fleet.telemetry import USED_FIELDS

    return rows.group_by("_gid", maintain_order=True).agg(
        pl.col("timestamp").last(), *[pl.col(f).drop_nulls().last() for f in USED_FIELDS],
        pl.lit(0, pl.Int64).alias("_nulls"),
    ).select(rows.columns).sort("_gid")
