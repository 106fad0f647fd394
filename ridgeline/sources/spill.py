"""Where a Prometheus pull keeps its samples: Parquet files on disk, one folder per host.

A long pull (weeks of a fleet) holds far more samples than the windows they reduce to: held in
memory as one long table, then concatenated, de-duplicated and sorted, a 20-day pull of 128 GPUs
took 10.5 GB. So each converted answer (one chunk: one field, one group of hosts, one time span)
is written to disk as it arrives and dropped: :meth:`Spill.add` splits the chunk's rows by host
and writes ``h<N>/c<chunk index>.parquet``. Afterwards each host is one lazy scan of its files
(:meth:`Spill.host_frames`), which is what the reduction reads, one host (partition) at a time,
as it reads a ``--save`` store: peak memory is set by the largest host's samples and by the
windows, not by the pull's length or the fleet's size. Files are named by the chunk's place in
the plan, not by arrival, so a host's rows come back in the same order whatever the order the
requests finished in.

Samples seen twice are kept once, as before: within a chunk (a field under two names, a GPU
scraped by two jobs) when the chunk is added, and across chunks by :meth:`Spill.dedupe`, which
re-reads only the hosts whose rows came from more than one group of hosts (chunks of one field
cover disjoint time spans and disjoint host groups, so no other pair of chunks can share a
sample). The folder is a private temporary directory (``tempfile``, under ``$TMPDIR`` unless
``folder`` says where), removed by :meth:`Spill.close` or when the object is collected. It needs
about as much disk as the samples take in Parquet (tens of bytes per sample at most).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# one sample: a (time, GPU series, field); what makes a row a repeat of another
SAMPLE_KEY = ["timestamp", "host", "gpu", "gpu_instance", "uuid", "field"]
ORDER = ["host", "gpu", "gpu_instance", "timestamp", "field"]  # the order of Pull.frame


class Spill:
    """A temporary folder of per-host Parquet files; see the module docstring."""

    def __init__(self, folder: str | Path | None = None):
        import tempfile

        from ridgeline.errors import UsageError

        try:
            self._tmp = tempfile.TemporaryDirectory(prefix="ridgeline-pull-", dir=folder)
        except OSError as err:
            raise UsageError(f"cannot make a temporary folder for the pull in {folder or tempfile.gettempdir()} "
                             f"({err.strerror or err}); set TMPDIR to a writable folder") from None
        self.path = Path(self._tmp.name)
        self._dirs: dict[Any, Path] = {}  # host (None included) -> its folder
        self._groups: dict[Any, set[int]] = {}  # host -> host groups its rows came from
        self.rows: dict[Any, int] = {}  # host -> samples kept
        self.nulls: dict[Any, int] = {}  # host -> samples whose value is missing (null)

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

    def add(self, index: int, group: int, frame) -> None:
        """Write chunk ``index`` (its rows in TELEMETRY form, de-duplicated; ``group``: the index
        of its host group) as one file per host, and drop it."""
        import polars as pl

        if not frame.height:
            return
        for (host,), part in frame.group_by("host", maintain_order=True):
            self._write(part, self._folder(host) / f"c{index:07d}.parquet")
            self._groups.setdefault(host, set()).add(group)
            self.rows[host] = self.rows.get(host, 0) + part.height
            self.nulls[host] = self.nulls.get(host, 0) + part.select(pl.col("value").null_count()).item()

    def _files(self, host) -> list[Path]:
        return sorted(self._dirs[host].glob("c*.parquet"))

    def dedupe(self) -> int:
        """Keep once the samples a host got from two host groups (see the module docstring);
        returns how many rows were dropped. Reads one such host at a time."""
        import polars as pl

        dropped = 0
        for host, groups in self._groups.items():
            if len(groups) < 2:
                continue
            files = self._files(host)
            rows = pl.concat([pl.read_parquet(f) for f in files], how="vertical")
            kept = rows.unique(subset=SAMPLE_KEY, keep="first", maintain_order=True)
            if kept.height == rows.height:
                continue
            dropped += rows.height - kept.height
            self._write(kept, files[0].with_name("c0000000-merged.parquet.tmp"))
            for f in files:
                f.unlink()
            files[0].with_name("c0000000-merged.parquet.tmp").rename(files[0])
            self.rows[host] = kept.height
            self.nulls[host] = kept.select(pl.col("value").null_count()).item()
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
        """One host's rows: a lazy scan of its files, in plan order."""
        import polars as pl

        return pl.scan_parquet(self._files(host), hive_partitioning=False)

    def host_frames(self) -> dict:
        """host -> its lazy scan (nothing read yet)."""
        return {h: self.host_frame(h) for h in self.hosts()}

    def scan(self):
        """Every row: one lazy scan (empty TELEMETRY table when nothing was kept)."""
        import polars as pl

        from ridgeline.parsers.telemetry_common import empty_frame

        files = [f for h in self.hosts() for f in self._files(h)]
        if not files:
            return empty_frame().lazy()
        return pl.scan_parquet(files, hive_partitioning=False)
