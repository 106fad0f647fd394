"""Telemetry inputs: detect the format of each file from its content and read it into the
TELEMETRY long table (:data:`ridgeline.analyzer.schema.TELEMETRY_COLUMNS`).

Formats (``InputInfo.kind``):

* ``dcgm-dmon``          ``dcgmi dmon`` text (all three header dialects)
* ``dcgm-exporter``      dcgm-exporter ``/metrics`` scrapes (Prometheus text, many per file)
* ``prometheus-json``    Prometheus HTTP API ``query_range`` / ``query`` answers
* ``nvidia-smi-csv``     ``nvidia-smi --query-gpu=... --format=csv``
* ``nvidia-smi-dmon``    ``nvidia-smi dmon``
* ``telemetry-csv`` / ``telemetry-parquet``  our documented long or wide table
  (see :mod:`ridgeline.parsers.telemetry.table`), Parquet folders may be hive-partitioned.

:func:`scan_telemetry` returns a polars **LazyFrame** (text formats are parsed eagerly and
wrapped; Parquet stays a lazy scan, so a day of a fleet is never loaded whole), the list of
inputs read and the list of skipped items with reasons. Times are UTC; formats without
a time (``dcgmi dmon``) get ``start + tick * interval`` and a note saying they are relative
when no ``start`` was given.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import functools
import os
from pathlib import Path
from typing import Any

from ridgeline.errors import InputError, UsageError
from ridgeline.parsers.paths import polars_path
from ridgeline.result import InputInfo, Skipped
from ridgeline.parsers.sniff import describe_head
from ridgeline.parsers.paths import not_regular, refuse_if_not_regular, walk
from ridgeline.parsers.telemetry import hive

KINDS = (
    "dcgm-dmon",
    "dcgm-exporter",
    "prometheus-json",
    "nvidia-smi-csv",
    "nvidia-smi-dmon",
    "telemetry-csv",
    "telemetry-parquet",
)

EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
HEAD_BYTES = 65536


@dataclasses.dataclass
class Options:
    """What the user told us about inputs that do not say it themselves."""

    tz: str | None = None  # zone of naive local timestamps (nvidia-smi); None = UTC + note
    time_format: str | None = None  # --time-format: month-first, day-first or a strftime pattern (nvidia-smi CSV)
    naive_times: bool = False  # an nvidia-smi CSV's times carried no zone (read in tz)
    interval_s: float | None = None  # tick interval for dmon / exporter scrapes without times
    host: str | None = None  # host for inputs that carry none
    start: _dt.datetime | None = None  # first tick of inputs without timestamps
    notes: list[str] = dataclasses.field(default_factory=list)
    # False (--lenient): a cell that is not a number is read as missing, a row without a usable
    # GPU id or time is skipped, each listed (lenient_skipped, per file) instead of an InputError
    strict: bool = True
    lenient_skipped: list = dataclasses.field(default_factory=list)
    # folder -> its readable Parquet files, when a corrupt one was left out of the folder's scan
    parquet_files: dict = dataclasses.field(default_factory=dict)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def start_time(self, path: str, what: str) -> _dt.datetime:
        if self.start is not None:
            return self.start
        self.note(f"{path}: {what} has no timestamps; times are relative, shown as time since the first "
                  "tick (+h:mm; give --start to anchor them to a date)")
        return EPOCH


# ------------------------------------------------------------------------------------------
# detection
# ------------------------------------------------------------------------------------------
def _head(path: Path) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(HEAD_BYTES)


def detect_telemetry_format(path) -> str | None:
    """Return the telemetry kind of ``path`` (see :data:`KINDS`) from its first bytes, or None.

    A directory is ``telemetry-parquet`` when it holds Parquet files (hive-partitioned or
    not), otherwise None (expand it with :func:`expand_paths`).
    """
    p = Path(path)
    if p.is_dir():
        return "telemetry-parquet" if any(p.rglob("*.parquet")) else None
    try:
        head = _head(p)
    except OSError:
        return None
    if head.startswith(b"PAR1"):
        return "telemetry-parquet" if _parquet_is_telemetry(p) else None
    text = head.decode("utf-8", errors="replace").lstrip("\ufeff")
    stripped = text.lstrip()
    if stripped.startswith("{") or stripped.startswith("["):
        if '"resultType"' in text or ('"status"' in text and ('"data"' in text or '"errorType"' in text)):
            return "prometheus-json"
        return None
    lines = [ln.rstrip("\r") for ln in text.splitlines()[:200]]
    if any(ln.startswith("#Entity") or ln.startswith("# Entity") for ln in lines):
        return "dcgm-dmon"
    low = [ln.strip().lower() for ln in lines if ln.strip()]
    hdr = [ln.lstrip("#").split() for ln in low[:5] if ln.startswith("#")]
    if low and low[0].startswith("#") and any("gpu" in h for h in hdr) and any("idx" in h for h in hdr):
        return "nvidia-smi-dmon"  # '# gpu pwr ...' / '# Idx W ...' (or '#Date Time gpu ...' with -o DT)
    from ridgeline.parsers.telemetry import dcgm_exporter

    # the head may end inside a line (a label longer than HEAD_BYTES): that line is read as cut
    cut = len(head) == HEAD_BYTES and not head.endswith(b"\n") and len(text.splitlines()) <= 200
    if dcgm_exporter.looks_like(lines, cut=cut):
        return "dcgm-exporter"
    if low:
        first = low[0]
        if ("utilization.gpu" in first or "memory.used" in first or "power.draw" in first
                or first.startswith("timestamp, name") or first.startswith("timestamp, index")):
            return "nvidia-smi-csv"
        from ridgeline.parsers.telemetry import table as telemetry_table

        if telemetry_table.header_layout(lines[0]) is not None:
            return "telemetry-csv"
    return None


def _parquet_is_telemetry(path: Path) -> bool:
    try:  # polars reads the footer itself (pyarrow would add ~0.15 s of imports to every run)
        import polars as pl

        names = list(pl.read_parquet_schema(polars_path(path)))
    except Exception:  # noqa: BLE001 - unreadable parquet is simply "not telemetry"
        return False
    from ridgeline.parsers.telemetry import table as telemetry_table

    return telemetry_table.layout_of_columns(names) is not None


# ------------------------------------------------------------------------------------------
# path expansion
# ------------------------------------------------------------------------------------------
def expand_paths(paths) -> list[tuple[Path, bool]]:
    """Files and folders -> list of (path, explicit). Folders are walked in sorted order;
    a folder holding Parquet files is kept whole (one hive-partitioned scan)."""
    out: list[tuple[Path, bool]] = []
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    for raw in paths:
        p = Path(raw)
        if not p.exists() and not p.is_symlink():
            raise InputError(p, "no such file or directory")
        if p.is_dir():
            parquet_dirs = set()
            for f in walk(p):  # FIFOs, sockets and dangling links too: the caller lists them as skipped
                if f.suffix == ".parquet" and f.is_file():
                    parquet_dirs.add(p)
                    continue
                out.append((f, False))
            if parquet_dirs:
                out.append((p, False))
        else:
            refuse_if_not_regular(p)  # a FIFO named on the command line would block the read
            out.append((p, True))
    return out


# normalization shared by all parsers: ridgeline.parsers.telemetry.common (the format readers
# import it without importing this dispatcher, so no import circle)
from ridgeline.parsers.telemetry.common import (  # noqa: E402,F401  (re-exported)
    IDENTITY,
    check_tz,
    empty_frame,
    finish,
    parse_local_times,
    wide_to_long_rows,
)


# ------------------------------------------------------------------------------------------
# dispatch
# ------------------------------------------------------------------------------------------
_READERS = {  # kind -> (module, function): only the reader a file needs is imported
    "dcgm-dmon": ("dcgm_dmon", "read_dmon"),
    "dcgm-exporter": ("dcgm_exporter", "read_exporter"),
    "prometheus-json": ("prometheus_json", "read_prometheus_json"),
    "nvidia-smi-csv": ("nvidia_smi", "read_query_csv"),
    "nvidia-smi-dmon": ("nvidia_smi", "read_smi_dmon"),
    "telemetry-csv": ("table", "read_table_csv"),
    "telemetry-parquet": ("table", "scan_table_parquet"),
}


def _reader(kind: str):
    import importlib

    module, name = _READERS[kind]
    return getattr(importlib.import_module(f"ridgeline.parsers.telemetry.{module}"), name)


@dataclasses.dataclass
class TelemetrySource:
    """One telemetry input, read (text) or planned (Parquet).

    ``long``: the TELEMETRY long table (LazyFrame; a Parquet scan stays lazy). ``wide``: the
    same rows as a per-timestamp wide frame when the input is a wide table (see
    :func:`ridgeline.parsers.telemetry.table.wide_frame`), else None; the reduction reads it
    without unpivoting. ``hosts``: host -> that host's rows (the frame the reduction reads,
    filtered; the filter prunes a hive store's other ``host=`` folders; several frames when the
    host's files have different columns), when the host names are known without reading the data
    (hive ``host=`` folders), else None.
    """

    path: str
    kind: str
    long: Any
    wide: Any = None
    hosts: dict | None = None  # host -> [(layout, frame)]

    @property
    def layout(self) -> str:
        return "wide" if self.wide is not None else "long"

    @property
    def frame(self):
        return self.wide if self.wide is not None else self.long


def _dmon_wide():
    from ridgeline.parsers.telemetry import dcgm_dmon

    return dcgm_dmon.read_dmon_wide


def _smi_wide():
    from ridgeline.parsers.telemetry import nvidia_smi

    return nvidia_smi.read_query_csv_wide


# readers that return (wide or None, long or None, InputInfo, skipped)
WIDE_READERS = {"dcgm-dmon": _dmon_wide, "nvidia-smi-csv": _smi_wide}


def _read_one(path, *, opts, kind: str | None = None):
    """One file by its reader: ``((wide or None, long frame or None), InputInfo, skipped)``, the
    frames checked by :func:`ridgeline.parsers.guard.check_telemetry_frame`."""
    from ridgeline.parsers import guard

    kind = kind or detect_telemetry_format(path)
    if kind in WIDE_READERS:  # read straight into the wide frame (the long table is derived, lazily)
        wide, frame, info, skip = WIDE_READERS[kind]()(path, opts=opts)
    else:
        wide = None
        frame, info, skip = _reader(kind)(path, opts=opts)
    # the checks list what they leave out or merge (repeated samples: in strict mode too)
    saved, opts.lenient_skipped = opts.lenient_skipped, []
    try:
        wide = guard.check_telemetry_frame(wide, path, opts=opts)
        frame = guard.check_telemetry_frame(frame, path, opts=opts)
        skip = [*skip, *opts.lenient_skipped]
    finally:
        opts.lenient_skipped = saved
    return (wide, frame), info, skip


def scan_telemetry_sources(
    paths,
    *,
    tz: str | None = None,
    interval_s: float | None = None,
    host: str | None = None,
    start: _dt.datetime | None = None,
    notes: list[str] | None = None,
    found_in_folders=frozenset(),
    strict: bool = True,
    strict_folders: bool = False,
    check_folder_pages: bool = True,
    time_format: str | None = None,
) -> tuple[list[TelemetrySource], list[InputInfo], list[Skipped]]:
    """Like :func:`scan_telemetry` (same options, checks, notes and skipped items), but one
    :class:`TelemetrySource` per input instead of one concatenated long table: the shape the
    per-partition reduction (:func:`telemetry_partitions`) reads.

    ``check_folder_pages=False`` leaves out the up-front decoding of every page of a folder's
    Parquet files (a second read of the whole store) unless reading the folder fails here; a
    caller that passes it and then fails reading the sources calls again with it True (what
    :func:`ridgeline.pipeline.reduce_telemetry` does), so a corrupt file is handled the same.
    """
    check_tz(tz)
    from ridgeline.parsers.telemetry.times import check_time_format

    check_time_format(time_format)
    if interval_s is not None and not interval_s > 0:
        raise UsageError(f"--interval must be > 0 seconds, got {interval_s}")
    if start is not None and start.tzinfo is None:
        start = start.replace(tzinfo=_dt.timezone.utc)
    opts = Options(tz=tz, interval_s=interval_s, host=host, start=start, strict=strict, time_format=time_format)
    sources: list[TelemetrySource] = []
    inputs: list[InputInfo] = []
    skipped: list[Skipped] = []
    expanded = expand_paths(paths)
    from ridgeline.parsers.paths import links_out

    for note in links_out([paths] if isinstance(paths, (str, os.PathLike)) else paths, expanded):
        opts.note(note)
    if strict_folders:  # --strict given: what no reader may open in a folder is refused, all named at once
        from ridgeline.parsers.paths import refuse_unusable

        refuse_unusable((p, why) for p, explicit in expanded if not explicit for why in [not_regular(p)] if why)
    for path, explicit in expanded:
        why_not = None if explicit else not_regular(path)
        if why_not is not None:  # never opened (a FIFO would block)
            if strict_folders:
                raise InputError(path, "expected a regular file", actual=why_not)
            skipped.append(Skipped(str(path), "file", f"not read: {why_not} (found in a folder)"))
            continue
        kind = detect_telemetry_format(path)
        if kind is None:
            if explicit:
                raise InputError(
                    path,
                    "expected telemetry: dcgmi dmon text, dcgm-exporter scrape, Prometheus JSON, "
                    "nvidia-smi CSV/dmon, or a long/wide telemetry CSV/Parquet table",
                    actual=describe_head(path),
                )
            skipped.append(Skipped(str(path), "file", "not a recognized telemetry format"))
            continue
        from ridgeline.parsers import guard  # the readers' boundary: library errors translated, values checked

        what = guard.WHAT.get(kind, kind)
        folder = kind == "telemetry-parquet" and Path(path).is_dir() and not explicit
        if kind == "telemetry-parquet" and Path(path).is_dir() and _leave_out_links(path, what, skipped, opts):
            continue
        read = functools.partial(_read_source, path, kind, what, opts)
        try:
            if kind == "telemetry-parquet" and str(path) in found_in_folders and Path(path).is_file():
                guard.check_parquet_pages(path)
            if folder and check_folder_pages and _check_folder(path, what, skipped, opts, strict_folders):
                continue
            try:
                src, info, skip = read()
            except InputError:
                if not folder or check_folder_pages:
                    raise
                # the check deferred: run now, it lists the corrupt files and leaves them out
                before = opts.parquet_files.get(str(path))
                if _check_folder(path, what, skipped, opts, strict_folders):
                    continue
                if opts.parquet_files.get(str(path)) == before:
                    raise  # no corrupt file: the error was something else
                src, info, skip = read()
        except InputError as err:
            if (explicit and str(path) not in found_in_folders) or (strict_folders and not explicit):
                raise
            skipped.append(Skipped(str(path), "file", f"unreadable {what}: {err}"))
            continue
        sources.append(src)
        inputs.append(info)
        skipped.extend(skip)
    if tz is None and opts.naive_times:
        opts.note("nvidia-smi timestamps carry no zone; read as UTC (give --tz to set the zone)")
    if notes is not None:
        notes.extend(n for n in opts.notes if n not in notes)
    return sources, inputs, skipped


def _read_source(path, kind: str, what: str, opts: Options):
    """One input read by its reader and planned: ``(TelemetrySource, InputInfo, skipped)``."""
    from ridgeline.parsers import guard

    (wide, frame), info, skip = guard.read_guarded(functools.partial(_read_one, kind=kind), kind, path, opts=opts)
    src = guard.collect_guarded(functools.partial(_build_source, path, kind, wide, frame, skip, opts), path, what)
    return src, info, skip


def _build_source(path, kind: str, wide, frame, skip, opts: Options) -> TelemetrySource:
    """The :class:`TelemetrySource` of one input read by its reader (a Parquet input planned)."""
    import polars as pl

    from ridgeline.parsers import guard
    from ridgeline.parsers.telemetry import table as telemetry_table

    if wide is not None:
        frame = wide_to_long_rows(wide.lazy())
    src = TelemetrySource(str(path), kind, finish(frame, source=str(path)).lazy(),
                          wide=None if wide is None else wide.lazy())
    if kind == "telemetry-parquet":
        _plan_parquet(src, path, opts)
    elif kind == "telemetry-csv":
        with open(path, encoding="utf-8", errors="replace") as fh:  # the header line, not the whole file
            head = fh.readline().splitlines()[:1]
        # (lenient: only when nothing was left out or blanked; else the long rows are reduced)
        clean = opts.strict or not any(x.reason.endswith(guard.LENIENT_ENDINGS) for x in skip)
        if clean and head and telemetry_table.header_layout(head[0]) == "wide":
            # the CSV was read and checked by the reader; its wide frame comes from the same text
            raw = pl.read_csv(polars_path(path), infer_schema_length=10000,
                              null_values=["", "NA", "N/A", "null", "NaN", "nan"])
            src.wide = telemetry_table.wide_frame(raw.lazy(), opts=opts)
    return src


def _check_folder(path, what: str, skipped: list[Skipped], opts: Options, strict_folders: bool) -> bool:
    """Decode every page of a folder's Parquet files (they are read as one scan), so a corrupt
    one is never read halfway: each corrupt file is listed in ``skipped`` and left out of the
    folder's scan (``opts.parquet_files``); True when none is left. ``strict_folders`` (--strict
    given): the first corrupt file is an InputError."""
    from ridgeline.parsers import guard

    from ridgeline.parsers.telemetry.table import parquet_files

    bad = []
    files = parquet_files(path, opts=opts)  # (less the links that lead out of the folder)
    for f in files:
        try:
            guard.check_parquet_pages(f)
        except InputError as err:
            if strict_folders:  # --strict given: a bad file in a folder is an error
                raise
            bad.append((f, err))
    skipped.extend(Skipped(str(f), "file", f"unreadable {what}: {err}") for f, err in bad)
    if bad and len(bad) == len(files):
        return True
    if bad:
        left_out = {f for f, _err in bad}
        opts.parquet_files[str(path)] = [str(f) for f in files if f not in left_out]
    return False


def _leave_out_links(path, what: str, skipped: list[Skipped], opts: Options) -> bool:
    """A Parquet folder (a store) is never read through a symbolic link that leads outside it:
    each such link (to a partition folder or a file) is listed in ``skipped`` and its files left
    out of the folder's scan (``opts.parquet_files``; a link to a folder inside is not followed
    either, its files are read where they are). A link that leads nowhere (a loop, a link to
    nothing) is left out of the scan too; the folder walk lists it. True when no Parquet file is left."""
    root = Path(path)
    top = os.path.realpath(root)

    def inside(p) -> bool:
        real = os.path.realpath(p)
        return real == top or real.startswith(top.rstrip(os.sep) + os.sep)

    links = False
    left_out = []
    for dirpath, dirnames, filenames in os.walk(root):  # (a link to a folder is listed, not entered)
        for name in [*dirnames, *filenames]:
            p = Path(dirpath) / name
            if not p.is_symlink():
                continue
            links = True
            if not p.exists():  # a loop or a link to nothing: listed by the folder walk, left out of the scan
                left_out.append(p)
            elif not inside(p):
                kind = "folder" if name in dirnames else "file"
                left_out.append(p)
                skipped.append(Skipped(str(p), "file", f"a symbolic link to a {kind} outside {path}: not read (a "
                                                       f"{what} folder is read only from what lies inside it)"))
    if not links:
        return False
    gone = set(left_out)
    files = [str(f) for f in sorted(root.rglob("*.parquet")) if f not in gone]  # (rglob enters no folder link)
    opts.parquet_files[str(path)] = files
    return not files


def _plan_parquet(src: TelemetrySource, path: Path, opts: Options) -> None:
    """A wide Parquet input's wide frame(s) and, for a hive store with ``host=`` folders, each
    host's frames. Files with different columns (hosts exporting different fields) are scanned
    per column set, as the long reader does, so a field a file lacks is absent, not blank."""
    import polars as pl

    from ridgeline.parsers.telemetry import table as telemetry_table

    groups = telemetry_table._column_groups(path, opts=opts) if path.is_dir() else None
    if groups is not None and len(groups) > 1:
        scans = [(files, telemetry_table.wide_frame(hive.scan(files), opts=opts))
                 for files in groups]
        if any(w is None for _files, w in scans):
            return  # a long (or odd) table among them: the long rows are reduced
        hosts: dict = {}
        host_files: dict = {}
        for files, w in scans:
            by_host = telemetry_table.hive_host_files(path, files)  # files: the readable ones
            if by_host is None or "host" not in w.collect_schema().names():
                return
            for h, fs in by_host.items():
                hosts.setdefault(h, []).append(("wide", w.filter(telemetry_table.host_is(h))))
                host_files.setdefault(h, []).extend(fs)
        src.wide = pl.concat([w for _files, w in scans], how="diagonal_relaxed")
        src.hosts = {h: _host_items(items, sorted(host_files[h]), opts) for h, items in hosts.items()}
        return
    source = telemetry_table.parquet_source(path, opts=opts)
    raw = hive.scan(source, missing_columns="insert", extra_columns="ignore")
    src.wide = telemetry_table.wide_frame(raw, opts=opts)
    files = telemetry_table.hive_host_files(path, opts.parquet_files.get(str(path)))
    if files is not None and "host" in raw.collect_schema().names():
        src.hosts = {h: _host_items([(src.layout, src.frame.filter(telemetry_table.host_is(h)))] if src.wide is not None
                                    else None, fs, opts) or [(src.layout, src.frame.filter(telemetry_table.host_is(h)))]
                     for h, fs in files.items()}


def _host_items(whole, files: list[str], opts: Options) -> list | None:
    """One host's partition items of a wide hive Parquet input (``whole``: its items read whole,
    None for a long table): its files as time slices, each a UTC day of one file's wide frame
    (:mod:`ridgeline.analyzer.fleet.slices`: the reduction holds one day of the host at a
    time, whatever the store's length), when they are a store's day files and the host is large
    (:func:`ridgeline.parsers.telemetry.table.day_slices`); else ``whole``."""
    import polars as pl

    from ridgeline.parsers.telemetry import table as telemetry_table

    if whole is None or len(files) < 2:
        return whole
    days = telemetry_table.day_slices(files)
    if days is None:
        return whole
    from ridgeline.analyzer.fleet.slices import SLICED, TimeSlices

    slices = []
    for lo, hi, day_files in days:
        for f in day_files:  # a file's own columns (a field a day lacks is absent, not blank)
            frame = telemetry_table.wide_frame(hive.scan(f), opts=opts)
            if frame is None:
                return whole
            slices.append((lo, hi, frame))
    return [(SLICED, TimeSlices(slices, layout="wide"))]


def long_table(sources):
    """The TELEMETRY long table of ``sources`` (one LazyFrame; nothing is read)."""
    import polars as pl

    if not sources:
        return empty_frame().lazy()
    frames = [s.long for s in sources]
    return frames[0] if len(frames) == 1 else pl.concat(frames, how="vertical")


def _source_of(src: TelemetrySource):
    """The ``source`` every row of ``src`` names: its path for a file (its reader's long table is
    finished with it), None for a long table read elsewhere (a Prometheus pull)."""
    return None if src.kind == "telemetry-long" else src.path


def telemetry_partitions(sources) -> list[list[tuple[str, Any]]]:
    """The reduction's partitions: one per host (all inputs naming it), each a list of
    ``(layout, LazyFrame, source)`` items (:func:`ridgeline.analyzer.fleet.partitions.reduce_partition`):
    ``source`` is the input path, which every row of a file's long table names (None for a long
    table read elsewhere, whose ``source`` column says).

    Hive ``host=`` folders give the hosts without reading data; other inputs are asked for
    their distinct hosts (parsed text is in memory; a Parquet file without host folders is
    read once for its host column). Hosts are ordered by name, nameless last.
    """
    import polars as pl

    by_host: dict = {}
    for src in sources:
        if src.hosts is not None:
            for h, items in src.hosts.items():
                by_host.setdefault(h, []).extend((layout, f, _source_of(src)) for layout, f in items)
            continue
        frame = src.frame
        hosts = frame.select(pl.col("host").unique()).collect().get_column("host").to_list()
        for h in hosts:
            sub = frame if len(hosts) == 1 else frame.filter(
                pl.col("host").is_null() if h is None else pl.col("host") == h)
            by_host.setdefault(h, []).append((src.layout, sub, _source_of(src)))
    from ridgeline.analyzer.fleet.slices import SLICED

    for h, items in by_host.items():
        if len(items) > 1 and any(it[0] == SLICED for it in items):
            # a host in several inputs is reduced whole (its rows merged as one long table): a
            # time-sliced item among them is read whole too
            by_host[h] = [whole for it in items
                          for whole in ([(*w, it[2]) for w in it[1].whole()] if it[0] == SLICED else [it])]
    return [by_host[h] for h in sorted(by_host, key=lambda h: (h is None, str(h)))]


def scan_telemetry(
    paths,
    *,
    tz: str | None = None,
    interval_s: float | None = None,
    host: str | None = None,
    start: _dt.datetime | None = None,
    notes: list[str] | None = None,
    found_in_folders=frozenset(),
    strict: bool = True,
    strict_folders: bool = False,
    time_format: str | None = None,
) -> tuple[Any, list[InputInfo], list[Skipped]]:
    """Read telemetry files/folders into one TELEMETRY LazyFrame.

    ``tz``: zone of naive local timestamps (nvidia-smi CSV); default UTC, with a note.
    ``time_format``: how nvidia-smi CSV timestamps are spelled when the data cannot say
    (``month-first``, ``day-first`` or a strftime pattern; :mod:`ridgeline.parsers.telemetry.times`).
    ``interval_s``: tick interval of ``dcgmi dmon`` / ``nvidia-smi dmon`` (their ``-d``;
    default 1 s) and of exporter scrapes without timestamps (default 30 s, the exporter's
    collect interval). ``host``: host name for inputs that carry none (default: file stem).
    ``start``: time of the first tick for inputs without timestamps (default 1970-01-01 UTC,
    flagged as relative). ``notes``: a list that receives human-readable notes (additive
    extension of the agreed API; pass one to see them). ``found_in_folders``: file paths the
    caller found by expanding a folder; an unreadable one is skipped and listed, not fatal.
    ``strict`` (default True): a cell that is not a number, a GPU id or a time out of range is an
    InputError naming file, line and column; False (``--lenient``): the cell is read as missing
    (null), or the row skipped where it means nothing without it (GPU id, time), each listed in
    ``skipped`` with its line and reason. ``strict_folders``: a corrupt file in a folder (a Parquet
    store's file included) is an InputError too (default: listed and left out; the rest is read).

    Returns ``(LazyFrame, inputs, skipped)``. Raises InputError for an explicit file that is
    not telemetry, UsageError for a bad option.
    """
    sources, inputs, skipped = scan_telemetry_sources(paths, tz=tz, interval_s=interval_s, host=host,
                                                      start=start, notes=notes,
                                                      found_in_folders=found_in_folders, strict=strict,
                                                      strict_folders=strict_folders, time_format=time_format)
    return long_table(sources), inputs, skipped


def read_telemetry(paths, **kw):
    """Eager variant of :func:`scan_telemetry`: ``(DataFrame, inputs, skipped)``."""
    lf, inputs, skipped = scan_telemetry(paths, **kw)
    return lf.collect(), inputs, skipped
