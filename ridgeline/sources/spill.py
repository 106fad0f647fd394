"""Where a Prometheus pull keeps its samples: Parquet files on disk, one folder per host.

A long pull (weeks of a fleet) holds far more samples than the windows they reduce to: held in
memory as one long table, then concatenated, de-duplicated and sorted, a 20-day pull of 128 GPUs
took 10.5 GB. So each converted answer (one chunk: one field, one group of hosts, one time span)
is written to disk as it arrives and dropped: :meth:`Spill.add` splits the chunk's rows by host
and by *time slice* (``slice_s`` seconds, default one UTC day, counted from the epoch) and writes
``h<N>/s<slice>-c<chunk index>.parquet``. Afterwards each host is a list of time slices, each a
lazy scan of its files (:meth:`Spill.host_slices`): the reduction reads one slice of one host at
a time (:mod:`ridgeline.analyzer.fleet.slices`), the store is written one (host, day) at a
time and repeats are found one (host, slice) at a time, so peak memory is set by one slice of
one host and by the windows, not by the pull's length or the fleet's size. Files are ordered by
the chunk's place in the plan, not by arrival, so a host's rows come back in the same order
whatever the order the requests finished in. :attr:`Spill.max_rows_read` counts the most rows
any of these steps read at once (tests check it stays one slice).

Samples seen twice are kept once, as before: within a chunk (a field under two names, a GPU
scraped by two jobs) when the chunk is added, and across chunks by :meth:`Spill.dedupe`, which
re-reads only the (host, slice) parts whose rows came from more than one group of hosts (chunks
of one field cover disjoint time spans and disjoint host groups, so no other pair of chunks can
share a sample, and a repeated sample has the same timestamp, hence the same slice).

The folder is a private temporary directory (``tempfile``, under ``$TMPDIR`` unless
``folder`` says where), removed by :meth:`Spill.close` or when the object is collected. It needs
about as much disk as the samples take in Parquet (tens of bytes per sample at most).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# one sample: a (time, GPU series, field); what makes a row a repeat of another
SAMPLE_KEY = ["timestamp", "host", "gpu", "gpu_instance", "uuid", "field"]
ORDER = ["host", "gpu", "gpu_instance", "timestamp", "field"]  # the order of Pull.frame


SLICE_S = 86400.0  # default time slice: one UTC day (the store's partition)
LABEL_ID = "_labels_id"  # in the files: a number per distinct workload label set (see Spill.add)


class Spill:
    """A temporary folder of per-host, per-time-slice Parquet files; see the module docstring."""

    def __init__(self, folder: str | Path | None = None, *, slice_s: float = SLICE_S):
        import tempfile

        from ridgeline.errors import UsageError

        if not slice_s > 0:
            raise UsageError(f"the pull's time slice must be > 0 s, got {slice_s!r}")
        try:
            self._tmp = tempfile.TemporaryDirectory(prefix="ridgeline-pull-", dir=folder)
        except OSError as err:
            raise UsageError(f"cannot make a temporary folder for the pull in {folder or tempfile.gettempdir()} "
                             f"({err.strerror or err}); set TMPDIR to a writable folder") from None
        self.path = Path(self._tmp.name)
        self.slice_us = max(1, int(round(slice_s * 1e6)))
        self._dirs: dict[Any, Path] = {}  # host (None included) -> its folder
        self._parts: dict[Any, dict[Any, list[tuple[int, Path]]]] = {}  # host -> slice (None: no time) -> files
        self._groups: dict[Any, dict[Any, set[int]]] = {}  # host -> slice -> host groups its rows came from
        self.rows: dict[Any, int] = {}  # host -> samples kept
        self.nulls: dict[Any, int] = {}  # host -> samples whose value is missing (null)
        self.max_rows_read = 0  # the most rows dedupe/save/reduction read back at once (one slice)
        self._label_ids: dict[str, int] = {}  # workload label set -> its number in the files
        self._columns: list[str] | None = None  # the rows' columns, in the order they came

    def close(self) -> None:
        self._tmp.cleanup()

    def _folder(self, host) -> Path:
        if host not in self._dirs:
            d = self.path / f"h{len(self._dirs)}"
            d.mkdir()
            self._dirs[host] = d
        return self._dirs[host]

    def _write(self, frame, target: Path) -> None:
        from ridgeline.atomic import write_parquet
        from ridgeline.errors import UsageError

        try:
            write_parquet(frame, target, compression="zstd", statistics=False)  # full disk: OSError
        except OSError as err:
            raise UsageError(f"cannot keep the pulled samples in {self.path} ({err.strerror or err}); "
                             "set TMPDIR to a folder with more room") from None

    def label_id(self, labels: str | None) -> int | None:
        """The number that stands for the workload label set ``labels`` in the files."""
        if labels is None:
            return None
        return self._label_ids.setdefault(labels, len(self._label_ids))

    def _encode(self, frame):
        """``labels`` replaced by its number (:data:`LABEL_ID`; given by the caller per series,
        else found here). A series' labels are one text repeated on each of its rows: polars
        holds it once (string views) but the Parquet writer and readers copy it per row or per
        row group, so a series with 10,000 labels (300 KB) made a pull's memory grow with its
        length (1 h: 1.0 GB, 4 h: 3.3 GB); as a number it costs 4 bytes a row, and the text is
        joined back, as views of one copy, when the rows are read (:meth:`_decode`)."""
        import polars as pl

        if self._columns is None:
            self._columns = [c for c in frame.columns if c != LABEL_ID]
        if LABEL_ID in frame.columns:
            return frame.drop("labels", strict=False)
        if "labels" not in frame.columns:
            return frame
        ids = {t: self.label_id(t) for t in frame.get_column("labels").unique().drop_nulls().to_list()}
        return frame.with_columns(pl.col("labels").replace_strict(ids, default=None, return_dtype=pl.UInt32)
                                  .alias(LABEL_ID)).drop("labels")

    def _decode(self, lf, *, categorical: bool = False):
        """Rows read back (a LazyFrame) with their ``labels`` text again, in the columns' order;
        ``categorical``: as a Categorical column (each label set held once, a number a row: what
        the store writes as a Parquet dictionary, :mod:`ridgeline.sources.store`)."""
        import polars as pl

        if self._columns is None or "labels" not in self._columns:
            return lf
        table = pl.LazyFrame({LABEL_ID: pl.Series(list(self._label_ids.values()), dtype=pl.UInt32),
                              "labels": pl.Series(list(self._label_ids), dtype=pl.String)})
        if categorical:
            table = table.with_columns(pl.col("labels").cast(pl.Categorical))
        return lf.join(table, on=LABEL_ID, how="left", maintain_order="left").select(self._columns)

    def add(self, index: int, group: int, frame) -> None:
        """Write chunk ``index`` (its rows in TELEMETRY form, de-duplicated; ``group``: the index
        of its host group) as one file per host and time slice, and drop it. The ``labels`` text
        is kept as a number (:meth:`_encode`); a frame may bring those numbers itself in a
        :data:`LABEL_ID` column (:meth:`label_id`), which saves hashing each row's text."""
        import polars as pl

        if not frame.height:
            return
        frame = self._encode(frame)
        key = pl.col("timestamp").dt.epoch("us").floordiv(self.slice_us).alias("_slice")
        for (host, sl), part in frame.with_columns(key).group_by("host", "_slice", maintain_order=True):
            part = part.drop("_slice")
            name = "none" if sl is None else f"{sl:+012d}"
            target = self._folder(host) / f"s{name}-c{index:07d}.parquet"
            self._write(part, target)
            self._parts.setdefault(host, {}).setdefault(sl, []).append((index, target))
            self._groups.setdefault(host, {}).setdefault(sl, set()).add(group)
            self.rows[host] = self.rows.get(host, 0) + part.height
            self.nulls[host] = self.nulls.get(host, 0) + part.select(pl.col("value").null_count()).item()

    def _slice_keys(self, host) -> list:
        """The host's slices in time order (rows without a time first)."""
        return sorted(self._parts.get(host, {}), key=lambda k: (k is not None, k or 0))

    def _files(self, host, sl=...) -> list[Path]:
        """The host's files in time order, then plan order (``sl``: one slice only)."""
        keys = self._slice_keys(host) if sl is ... else [sl]
        return [f for k in keys for _i, f in sorted(self._parts[host][k], key=lambda e: e[0])]

    def _read(self, files):
        import polars as pl

        rows = pl.concat([pl.read_parquet(f) for f in files], how="vertical")
        self.max_rows_read = max(self.max_rows_read, rows.height)
        return rows

    def dedupe(self) -> int:
        """Keep once the samples a host got from two host groups (see the module docstring);
        returns how many rows were dropped. Reads one (host, slice) at a time."""
        import polars as pl

        dropped = 0
        for host, slices in self._groups.items():
            for sl, groups in slices.items():
                if len(groups) < 2:
                    continue
                files = self._files(host, sl)
                rows = self._read(files)
                kept = rows.unique(subset=SAMPLE_KEY, keep="first", maintain_order=True)
                if kept.height == rows.height:
                    continue
                dropped += rows.height - kept.height
                first = min(self._parts[host][sl], key=lambda e: e[0])  # the merged rows take its place
                tmp = first[1].with_name(first[1].name + ".merged.tmp")
                self._write(kept, tmp)
                for f in files:
                    f.unlink()
                tmp.rename(first[1])
                self._parts[host][sl] = [first]
                self.rows[host] -= rows.height - kept.height
                self.nulls[host] -= (rows.select(pl.col("value").null_count()).item()
                                     - kept.select(pl.col("value").null_count()).item())
        return dropped

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    @property
    def total_nulls(self) -> int:
        return sum(self.nulls.values())

    def hosts(self) -> list:
        """Hosts ordered by name, nameless last (the reduction's partition order)."""
        return sorted(self._dirs, key=lambda h: (h is None, str(h)))

    def host_frame(self, host):
        """One host's rows: a lazy scan of its files, in time slice then plan order."""
        import polars as pl

        return self._decode(pl.scan_parquet(self._files(host), hive_partitioning=False))

    def host_frames(self) -> dict:
        """host -> its lazy scan (nothing read yet)."""
        return {h: self.host_frame(h) for h in self.hosts()}

    def host_slices(self, host) -> list:
        """One host's rows as ``[(lo, hi, LazyFrame)]`` in time order: each scan holds exactly
        the rows with ``lo <= timestamp < hi`` (UTC datetimes); rows without a time, if any,
        come first as ``(None, None, scan)``. What :class:`ridgeline.analyzer.fleet.slices.TimeSlices`
        takes."""
        import datetime as _dt

        import polars as pl

        epoch = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
        out = []
        for k in self._slice_keys(host):
            scan = self._decode(pl.scan_parquet(self._files(host, k), hive_partitioning=False))
            if k is None:
                out.append((None, None, scan))
            else:
                lo = epoch + _dt.timedelta(microseconds=k * self.slice_us)
                out.append((lo, lo + _dt.timedelta(microseconds=self.slice_us), scan))
        return out

    def slice_frames(self):
        """Each (host, slice)'s rows, read one at a time (what --save writes, one day at a time),
        ``labels`` Categorical (:meth:`_decode`)."""
        for h in self.hosts():
            for k in self._slice_keys(h):
                yield self._decode(self._read(self._files(h, k)).lazy(), categorical=True).collect()

    def scan(self):
        """Every row: one lazy scan (empty TELEMETRY table when nothing was kept)."""
        import polars as pl

        from ridgeline.parsers.telemetry.common import empty_frame

        files = [f for h in self.hosts() for f in self._files(h)]
        if not files:
            return empty_frame().lazy()
        return self._decode(pl.scan_parquet(files, hive_partitioning=False))
