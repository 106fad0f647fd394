"""The partition engine of the telemetry reduction: one partition (a host's rows, or a day of them
from a pull: :mod:`ridgeline.analyzer.fleet.slices`) reduced to window rows by
:mod:`ridgeline.analyzer.fleet.telemetry`'s per-partition query, partitions reduced here (a few at a
time on threads) or on a Dask cluster (``--engine dask``), with the sample counts and the refused
partitions gathered as they complete. The results are the same whatever the engine."""

from __future__ import annotations

from typing import Any

from ridgeline.analyzer.fleet.telemetry import (
    KEYS,
    WIDE_IDENTITY,
    _finish_columns,
    _fold_long,
    _fold_wide,
    _options,
    _reduce_wide,
    _with_identity,
    empty_windows,
    wide_to_long,
)

# ------------------------------------------------------------------------------------------
# partitions: one pure function per partition, cross-partition steps on the window table
# ------------------------------------------------------------------------------------------
def reduce_partition(part, *, window: str | float | None = "5m", warmup: str | float | None = None,
                     thresholds: dict[str, float] | None = None):
    """One partition -> its window rows (a DataFrame with the WINDOW columns, sorted).

    ``part`` is a list of ``(layout, frame)`` items, all holding the rows of the same GPU
    series (usually one host's): ``layout`` is ``"wide"`` (one row per GPU and timestamp:
    ``timestamp``, identity columns ``host, gpu, gpu_instance, uuid, model`` where known, one
    Float64 column per canonical field, optionally ``_nulls`` = blank values in the row) or
    ``"long"`` (the TELEMETRY long table); ``frame`` a DataFrame or LazyFrame. A bare DataFrame
    is read as one wide item; an item may name its input as a third element,
    ``(layout, frame, source)`` (:func:`reduce_partitions` then counts its samples per source).
    Pure: no state outside its arguments, so any engine can map it.
    A GPU series must not be split over partitions (its sample interval, gaps, warm-up and
    ``window="all"`` span all its rows).
    """
    import polars as pl

    if isinstance(part, (pl.DataFrame, pl.LazyFrame)):
        part = [("wide", part)]
    window_s, warmup_s, th = _options(window, warmup, thresholds)
    out, _rows, _counts, _found = _reduce_part(part, window_s=window_s, th=th, warmup_s=warmup_s)
    return empty_windows() if out is None else _finish_columns(out)


def _gather(completed, total: int, progress, counts: dict | None = None, problems: list | None = None) -> list:
    """Window tables of finished partition futures (local threads or Dask, in completion order),
    reporting partitions done and rows read after each; ``counts`` receives the samples and
    blank values per source (summed over partitions), ``problems`` what the partitions' check
    left out."""
    results, done, rows = [], 0, 0
    for fut in completed:
        result = fut.result()
        if isinstance(result, BaseException):  # a partition's input error, returned by a Dask worker
            raise result
        out, n, part_counts, found = result
        results.append(out)
        if problems is not None:
            problems.extend(found)
        done, rows = done + 1, rows + n
        if counts is not None:
            for source, (k, z) in part_counts.items():
                k0, z0 = counts.get(source, (0, 0))
                counts[source] = (k0 + k, z0 + z)
        if progress is not None:
            progress(done, total, rows)
    return results


def _sample_counts(layout: str, frame, source) -> dict:
    """``{source: (samples, blank values)}`` of one partition item, counted as the TELEMETRY
    long table of that item holds them (what :func:`ridgeline.analyzer.accounting.sample_counts`
    counts over the long table, here on rows already in memory): a long item by its ``source``
    column (or, when ``source`` is given, every row as that input's); a wide item (``source`` its
    input) as one sample per field column and row (every
    column but the identity ones, as the readers unpivot it), blank when null (the readers'
    wide frames hold NaN, infinities and DCGM blank sentinels as null already). Sources
    without a sample are left out."""
    import polars as pl

    from ridgeline.result import path_label  # keyed as the tables name an input (accounting)

    if layout != "wide":
        if "source" not in frame.columns or not frame.height:
            return {}
        if source is not None:  # a reader's long table: every row names this input
            return {path_label(source): (frame.height, frame.get_column("value").null_count())}
        df = frame.group_by("source").agg(pl.len().alias("n"), pl.col("value").null_count().alias("z"))
        return {str(s): (int(n), int(z)) for s, n, z in df.iter_rows()}
    fields = [c for c in frame.columns if c not in WIDE_IDENTITY]
    if source is None or not frame.height or not fields:
        return {}
    return {path_label(source): (frame.height * len(fields), sum(frame.get_column(c).null_count() for c in fields))}


def _reduce_part(part, *, window_s, th, warmup_s, check=None):
    """The partition function the engines map: ``(window rows or None, input rows read, sample
    counts per source, items the check left out)``. Items are ``(layout, frame)`` or ``(layout,
    frame, source)``. ``check(frame, source) -> (frame, left_out)``: the input's own checks of a
    collected frame (GPU ids and times in range; a Parquet scan is only read here), given by
    the caller (the analyzer knows no reader); it raises to refuse the input."""
    import polars as pl

    if len(part) == 1 and part[0][0] == "sliced":  # one host's rows in time slices (analyzer.fleet.slices)
        return part[0][1].reduce(part[0][2] if len(part[0]) > 2 else None, window_s=window_s, th=th,
                                 warmup_s=warmup_s, check=check)
    items = [(it[0], it[1].collect() if isinstance(it[1], pl.LazyFrame) else it[1], it[2] if len(it) > 2 else None)
             for it in part]
    found: list = []
    if check is not None:
        checked = []
        for layout, f, source in items:
            f, left_out = check(f, source)
            found.extend(left_out)
            checked.append((layout, f, source))
        items = checked
    counts: dict = {}
    for layout, f, source in items:
        for k, (n, z) in _sample_counts(layout, f, source).items():
            n0, z0 = counts.get(k, (0, 0))
            counts[k] = (n0 + n, z0 + z)
    frames = [(layout, f) for layout, f, _source in items]
    rows = sum(f.height for _layout, f in frames)
    if len(frames) == 1 and frames[0][0] == "wide":
        wide, ident = _fold_wide(frames[0][1])
    else:  # several inputs of one host (or a long table): merged as long rows, as the long table would be
        long = [wide_to_long(f) if layout == "wide" else _with_identity(f) for layout, f in frames]
        cols = ["timestamp", *KEYS, "uuid", "model", "field", "value"]
        wide, ident = _fold_long(pl.concat([f.select(cols) for f in long], how="vertical_relaxed"))
    if wide is None or not wide.height:
        return None, rows, counts, found
    if warmup_s:
        t0 = pl.col("timestamp").min().over("_gid")
        wide = wide.filter(pl.col("timestamp") >= t0 + pl.duration(microseconds=int(round(warmup_s * 1e6))))
        if not wide.height:
            return None, rows, counts, found
    out = _reduce_wide(wide, window_s=window_s, th=th, ordered=True)
    return out.join(ident, on="_gid", how="left"), rows, counts, found


def _reduce_part_returning_errors(part, **kw):
    """:func:`_reduce_part` for Dask workers: an error (a value out of range, a corrupt file, a
    library's complaint about the data) comes back as the result and is raised by the client,
    where it becomes the one-line error it is (or exit 3 for a bug), instead of a worker's
    "Compute Failed" log with its traceback on stderr."""
    try:
        return _reduce_part(part, **kw)
    except Exception as err:  # noqa: BLE001 - raised again by the client (_gather)
        return err


ENGINES = ("local", "dask")
LOCAL_THREADS = 2  # partitions reduced at the same time by the local engine (polars releases the GIL)


def reduce_partitions(parts, *, window: str | float | None = "5m", warmup: str | float | None = None,
                      thresholds: dict[str, float] | None = None, engine: str = "local",
                      scheduler: Any = None, workers: int | None = None, progress=None,
                      counts: dict | None = None, check=None, problems: list | None = None):
    """Map :func:`reduce_partition` over ``parts`` and concatenate: the WINDOW table.

    ``engine``: ``"local"`` (threads in this process, two partitions at a time) or ``"dask"``
    (``dask.distributed``: ``scheduler`` is a scheduler address such as
    ``tcp://10.0.0.5:8786`` or a ``distributed.Client``; None starts a ``LocalCluster`` of
    ``workers`` processes on this machine). The frames of each partition travel to the worker
    pickled: a Parquet scan as its plan (the worker reads the files, so they must be on a
    shared file system), parsed text as its rows. ``progress(done, total, rows)`` is called
    after each partition. Cross-partition steps (daily typicals, fleet summary) run on the
    result, as for any window table. ``counts``: a dict that receives ``{source: (samples,
    blank values)}`` of the items that name their source (``(layout, frame, source)``) and of
    long items, as :func:`ridgeline.analyzer.accounting.sample_counts` counts the long table.
    ``check``: a picklable ``check(frame, source) -> (frame, left_out)`` run on each item once it
    is read (see :func:`_reduce_part`); ``problems`` receives what it left out.
    """
    import polars as pl

    window_s, warmup_s, th = _options(window, warmup, thresholds)
    parts = list(parts)
    kw = {"window_s": window_s, "th": th, "warmup_s": warmup_s, "check": check}
    if engine not in ENGINES:
        from ridgeline.errors import UsageError

        raise UsageError(f"--engine {engine!r}: expected one of {', '.join(ENGINES)}")
    results = []
    if not parts:
        pass
    elif engine == "dask":
        results = _map_dask(parts, kw, scheduler=scheduler, workers=workers, progress=progress, counts=counts,
                            problems=problems)
    else:
        from concurrent.futures import ThreadPoolExecutor, as_completed

        with ThreadPoolExecutor(max_workers=min(LOCAL_THREADS, len(parts))) as pool:
            futures = [pool.submit(_reduce_part, p, **kw) for p in parts]
            results = _gather(as_completed(futures), len(parts), progress, counts, problems)
    results = [r for r in results if r is not None]
    if not results:
        return empty_windows()
    return _finish_columns(pl.concat(results, how="diagonal_relaxed"))


DASK_EXTRA_MESSAGE = ("--engine dask needs dask.distributed, which is not installed: "
                      "pip install 'ridgeline[dask]'")


def dask_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None and importlib.util.find_spec("dask") is not None


def _map_dask(parts, kw, *, scheduler, workers, progress, counts=None, problems=None):
    if not dask_available():
        from ridgeline.errors import UsageError

        raise UsageError(DASK_EXTRA_MESSAGE)
    from distributed import Client, LocalCluster, as_completed

    own_cluster = own_client = None
    if scheduler is None:
        own_cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
        client = own_client = Client(own_cluster)
    elif isinstance(scheduler, str):
        try:
            client = own_client = Client(scheduler)
        except (OSError, ValueError, TypeError) as err:  # unreachable, or not an address
            from ridgeline.errors import UsageError

            raise UsageError(f"--scheduler {scheduler}: cannot reach a Dask scheduler there ({err})") from None
    else:
        client = scheduler  # a Client the caller owns
    try:
        futures = client.map(_reduce_part_returning_errors, parts, pure=False, **kw)
        return _gather(as_completed(futures), len(parts), progress, counts, problems)
    finally:
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()
