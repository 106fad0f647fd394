"""The telemetry store: what a pull fetched, kept as hive-partitioned wide Parquet.

Layout (``ridgeline telemetry DIR`` reads it back, see :mod:`ridgeline.parsers.telemetry.table`)::

    DIR/date=2026-01-05/host=node01/part-0.parquet

One file per UTC day and host. The host in the folder name is encoded by the one partition codec,
:mod:`ridgeline.parsers.telemetry.hive` (percent-encoded UTF-8; rows without a host go to Hive's
``host=__HIVE_DEFAULT_PARTITION__``, apart from a host named ``unknown``), and every reader of the
store decodes it with the same module, so the hosts read back are exactly the hosts saved. The
store never writes through a symbolic link that leads outside it (a partition folder or file that
is one is refused before anything is written), and its reader lists and leaves out such links.
Columns: ``timestamp`` (UTC), ``gpu``, ``uuid``, ``gpu_instance``,
``model``, then one column per canonical field (``gpu_util_ratio``, ``tensor_active_ratio``, ...;
canonical units, so nothing is scaled again on reading). ``date`` and ``host`` live in the path.
A partition holds a column for each field its host exported (so partitions may differ; the
reader normalizes each set of files on its own); a value that was not reported is null, never 0.

Workload labels: a ``labels`` column (after ``model``) keeps, per row (GPU and timestamp), the
TELEMETRY table's ``labels`` (the series' workload labels, ``name="value"`` pairs sorted by name:
``container="main",namespace="team-a",pod="train-0"``), what ``--by pod|namespace|job|label=NAME``
groups by. One value per row, not time ranges: a pod rescheduled to another GPU mid-day is simply
another value from that row on, and the store's merge (rows added, blanks filled) needs no range
arithmetic. Each label set is held once, not once a row: the rows come with ``labels`` as a
Categorical (a number a row, :meth:`ridgeline.sources.spill.Spill.slice_frames`), the row's set is
picked by that number, and the column is written as a Parquet dictionary without the Arrow schema
(:func:`ridgeline.atomic.write_parquet`'s ``dictionary``), so it reads back as the text saved and a
store written before (a plain text column) reads and merges as ever. Series with 10,000 labels
(300 KB) took 342 MB for a 1 h pull and 838 MB for 4 h while saving (the text copied per row by
the pivot and by polars' writer); 185 and 221 MB now, the partition 16 and 18 KB.
Where the source's series carry several label sets at one timestamp (a hand-over inside one
scrape), the row keeps the largest, as :func:`ridgeline.analyzer.fleet.groups.label_runs` picks per
timestamp, so the groups read from the store are the source's. The column is written only in a
partition where some row has labels (like a field: no column of nulls); a store written before
labels were kept has none anywhere, and ``--by pod`` on it says so.

Writes are atomic: each partition is written to a hidden temporary file in its folder and
renamed into place (:mod:`ridgeline.atomic`), so a run that dies midway leaves whole partitions
only. A partition that already exists is merged: rows it lacks (by timestamp and GPU) are added, and
values it lacks (a field a failed request left out) are filled, its own values kept; the file is
then rewritten the same atomic way. A partition that already holds everything is left untouched,
so re-running a night fills only what is missing.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

ID_COLUMNS = ("timestamp", "gpu", "uuid", "gpu_instance", "model")
LABELS = "labels"  # the workload labels column (see the module docstring)
KEY_COLUMNS = ("timestamp", "gpu", "uuid", "gpu_instance")
PART_NAME = "part-0.parquet"


@dataclasses.dataclass
class StoreReport:
    written: list[str] = dataclasses.field(default_factory=list)  # new partitions
    extended: list[str] = dataclasses.field(default_factory=list)  # existing ones that gained rows
    unchanged: list[str] = dataclasses.field(default_factory=list)  # existing ones already complete
    rows_added: int = 0  # new rows (filled values in existing rows are not counted)

    def summary(self, folder) -> str:
        parts = [f"{len(self.written)} new partition(s)"]
        if self.extended:
            parts.append(f"{len(self.extended)} extended")
        if self.unchanged:
            parts.append(f"{len(self.unchanged)} already complete, left as they were")
        return f"saved to {folder}: " + ", ".join(parts) + f" ({self.rows_added} rows written)"


def wide_frame(long: Any):
    """TELEMETRY long rows -> one row per timestamp / host / GPU, one column per field, and the
    row's workload ``labels`` (the largest of its series' label sets; null: none) when the rows
    carry a ``labels`` column."""
    import polars as pl

    from ridgeline.analyzer.schema import TELEMETRY_FIELDS

    df = long.collect() if isinstance(long, pl.LazyFrame) else long
    present = set(df.get_column("field").unique().drop_nulls().to_list())
    fields = [f for f in TELEMETRY_FIELDS if f in present] + sorted(present - set(TELEMETRY_FIELDS))
    index = ["host", *ID_COLUMNS]
    wide = df.select(*index, "field", "value").pivot(on="field", index=index, values="value",
                                                     aggregate_function="first")
    labels = []
    if LABELS in df.columns:
        # as a Categorical: the largest label set of a row is picked by its number (Categorical
        # order is the text's), never a copy of its text per row (10,000 labels: 300 KB a row)
        per_row = df.group_by(index).agg(pl.col(LABELS).cast(pl.Categorical).max())
        wide = wide.join(per_row, on=index, how="left", nulls_equal=True, maintain_order="left")
        labels = [LABELS]
    return wide.select(*index, *labels, *[pl.col(f) if f in wide.columns else pl.lit(None, pl.Float64).alias(f)
                                          for f in fields])


def _cells(df) -> int:
    """Non-null values in a frame."""
    return int(sum(df.get_column(c).len() - df.get_column(c).null_count() for c in df.columns))


def _merge(old, new):
    """``old`` with the rows it lacks from ``new`` added and its null cells filled from ``new``
    (a field a failed request left out last time); ``old``'s values win where both have one."""
    import polars as pl

    keys = list(KEY_COLUMNS)
    old = old.with_columns(pl.col(k).cast(new.schema[k]) for k in keys if k in new.columns)
    joined = old.join(new, on=keys, how="full", coalesce=True, suffix="__new", nulls_equal=True)
    columns = list(dict.fromkeys([*old.columns, *new.columns]))
    out = []
    for c in columns:
        if c in keys:
            out.append(pl.col(c))
        elif c in old.columns and c in new.columns:
            out.append(pl.coalesce(pl.col(c), pl.col(f"{c}__new")).alias(c))
        else:
            out.append(pl.col(c))
    return joined.select(out).sort(["gpu", "gpu_instance", "timestamp"], nulls_last=True)


def partition_path(date: str, host: str | None) -> Path:
    """``date=DAY/host=HOST/part-0.parquet``, HOST encoded by the one partition codec
    (:func:`ridgeline.parsers.telemetry.hive.encode`: exact on read-back; no host is Hive's
    ``__HIVE_DEFAULT_PARTITION__``, never the string ``unknown``)."""
    from ridgeline.parsers.telemetry import hive

    return Path(f"date={hive.encode(date)}") / f"host={hive.encode(host)}" / PART_NAME


def _shown(host: str, limit: int = 80) -> str:
    """A host name for an error line: its repr (control characters escaped), the start of it when
    long, with its length."""
    if len(host) <= limit:
        return repr(host)
    return f"{host[:limit]!r}... ({len(host)} characters)"


def _inside(path: Path, root: Path) -> bool:
    import os

    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def refuse_links_out(folder: str | Path, rel: Path) -> None:
    """A UsageError when the partition folder or file ``rel`` of the store at ``folder`` is (or
    sits under) a symbolic link that leads outside the store: writing through it would put a
    partition, or replace a file, outside it."""
    from ridgeline.errors import UsageError

    folder = Path(folder)
    step = folder
    for part in rel.parts:
        step = step / part
        if step.is_symlink() and not _inside(step, folder):
            raise UsageError(f"--save {folder}: {step.relative_to(folder)} is a symbolic link that leads outside "
                             "the store; the store never writes through one (remove the link, or save elsewhere)")


def save(long: Any, folder: str | Path) -> StoreReport:
    """Write ``long`` (TELEMETRY rows) into the store at ``folder``; see the module docstring."""
    import polars as pl

    from ridgeline.atomic import write_parquet
    from ridgeline.errors import UsageError
    from ridgeline.parsers.telemetry import hive

    folder = Path(folder)
    report = StoreReport()
    wide = wide_frame(long)
    if not wide.height:
        return report
    wide = wide.with_columns(
        pl.col("timestamp").dt.strftime("%Y-%m-%d").alias("_date"),
        pl.col("host").alias("_host"),
    )
    parts = []
    for (date, host), part in wide.group_by(["_date", "_host"], maintain_order=True):
        try:
            rel = partition_path(date, host)
        except hive.ReservedValue as err:
            raise UsageError(f"--save {folder}: cannot save host {_shown(host)}: {err}; rename the host (--host, "
                             "or the source's Hostname label)") from None
        parts.append((rel, part))
    for rel, _part in parts:  # before anything is written: no partition leads out of the store
        refuse_links_out(folder, rel)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for rel, part in parts:
            target = folder / rel
            rows = part.drop("_date", "_host", "host").sort(["gpu", "gpu_instance", "timestamp"], nulls_last=True)
            # a field this host did not export is no column at all (not a column of nulls, which
            # would read back as blank values)
            # (nor a labels column without a label)
            rows = rows.select([c for c in rows.columns if c in ID_COLUMNS or rows.get_column(c).null_count() < rows.height])
            if target.exists():
                old = pl.read_parquet(target, hive_partitioning=False)
                if LABELS in old.columns:  # (as the new rows hold it, so the two coalesce)
                    old = old.with_columns(pl.col(LABELS).cast(pl.Categorical))
                merged = _merge(old, rows)
                if merged.height == old.height and _cells(merged) == _cells(old):
                    report.unchanged.append(str(rel))
                    continue
                report.extended.append(str(rel))
                report.rows_added += merged.height - old.height
                rows = merged
            else:
                report.written.append(str(rel))
                report.rows_added += rows.height
            target.parent.mkdir(parents=True, exist_ok=True)
            # atomic; a full disk is an OSError, not polars' ComputeError; the labels column as a
            # Parquet dictionary (each label set once) that reads back as text
            write_parquet(rows, target, dictionary=[c for c in (LABELS,) if c in rows.columns])
    except OSError as err:
        raise UsageError(f"--save {folder}: cannot write the store ({err.strerror or err})") from None
    return report


def save_each(frames, folder: str | Path) -> StoreReport:
    """:func:`save` of each frame in turn (e.g. one host's rows at a time, so that a long pull is
    never one frame in memory), one report for all. Frames must not share a (date, host)
    partition with one another (each host's rows in one frame do not)."""
    report = StoreReport()
    for frame in frames:
        part = save(frame, folder)
        report.written += part.written
        report.extended += part.extended
        report.unchanged += part.unchanged
        report.rows_added += part.rows_added
    return report
