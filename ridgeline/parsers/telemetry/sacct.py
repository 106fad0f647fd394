"""Slurm accounting (``sacct --parsable2``) -> the JOBS table: which job held which node (and GPU) when.

``ridgeline telemetry ... --jobs FILE`` joins the telemetry windows with it on host, GPU and
time (:mod:`ridgeline.analyzer.fleet.groups`). Made by, for example::

    sacct --allusers --parsable2 --starttime now-1days --endtime now \\
          --format JobID,User,Account,JobName,State,NodeList,Start,End,AllocTRES > jobs.txt

The first line is the header (``|``-separated names, any order, case ignored). Needed:
``JobID``, ``NodeList``, ``Start``, ``End``; read when present: ``User``, ``Account``,
``JobName``, ``State``, ``AllocTRES`` / ``ReqTRES`` (``gres/gpu=4`` or ``gres/gpu:a100=4``),
``AllocGRES`` (``gpu:4``) and GPU indices, from any field holding ``IDX:0-3`` (the form of
``scontrol show job -d``) or a column named ``GPUIndex`` / ``GPU_IDX`` / ``IDX`` (``0-3,5``).
``--parsable`` output (a ``|`` ending every line) is read too.

Rows:

* job steps (``123.batch``, ``123.extern``, ``123.0``) run inside their job's allocation: not
  rows of their own (counted in a note);
* a job that never started (``Start`` ``Unknown``/``None``, or ``NodeList`` ``None assigned``)
  held no GPU: listed as skipped with its line;
* ``End`` ``Unknown`` (still running when sacct ran): open-ended, null ``end``.

Times have no zone in sacct output (the cluster's local time): they are read in ``--tz``
(default UTC, with a note). ``NodeList`` uses Slurm's host-list syntax: ``gpu[01-04,07]``,
``a[1-2]-ib[3-4]`` (every combination), several lists joined by commas; zero padding is kept.

A row with the wrong number of fields, an unreadable time or a malformed node list is an
:class:`~ridgeline.errors.InputError` naming the file, the line and the column.

Bounds (a few hundred bytes must not ask for gigabytes; each is one line naming the line):

* a GPU index is ``0..4095`` (:data:`ridgeline.parsers.guard.MAX_GPU_INDEX`), so an index range
  holds at most 4,096 GPUs: ``0-100000`` is refused before anything is expanded;
* one node list expands to at most :data:`MAX_HOSTS_PER_ROW` hosts (every combination of its
  ranges counted before any name is made: ``a[1-1000]-b[1-1000]`` is a million);
* a file gives at most :data:`MAX_ROWS` job-host rows in all.

Encoding: UTF-8; a file that begins with a UTF-16 or UTF-32 byte-order mark (PowerShell's
``>`` writes UTF-16) is decoded as such; NUL bytes without a mark (UTF-16 without one), or bytes
that are no UTF-8, are refused naming the line.

Output (:data:`JOBS_COLUMNS`): one row per job and node: ``job``, ``user``, ``account``,
``name``, ``host`` (as written in NodeList), ``gpus`` (GPU indices on that node as a list,
null = not given: every GPU of the node), ``alloc_gpus`` (GPUs the job allocated, all nodes;
null when the file does not say), ``start``, ``end`` (UTC), ``line``.
"""

from __future__ import annotations

import datetime as _dt
import re
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.result import Skipped

REQUIRED = ("jobid", "nodelist", "start", "end")
INDEX_COLUMNS = ("gpuindex", "gpu_idx", "idx", "gpuidx")
JOBS_COLUMNS = ("job", "user", "account", "name", "host", "gpus", "alloc_gpus", "start", "end", "line")
_NOT_STARTED = {"", "unknown", "none", "(null)"}
MAX_HOSTS_PER_ROW = 65_536  # hosts one node list may name (the largest machines have ~11,000 nodes)
MAX_ROWS = 1_000_000  # job-host rows one file may give
_IDX_RE = re.compile(r"IDX:([0-9,\-]+)")
_TRES_GPU_RE = re.compile(r"gres/gpu(?::[^=,]+)?=(\d+)")
_GRES_GPU_RE = re.compile(r"(?:^|,)gpu(?::[^:,(]+)?:(\d+)")


def looks_like(head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    names = {c.strip().lower() for c in first.split("|")}
    return "|" in first and {"jobid", "nodelist"} <= names


def expand_ranges(text: str) -> list[int]:
    """``'0-3,5'`` -> ``[0, 1, 2, 3, 5]`` (GPU indices, each 0..MAX_GPU_INDEX, each once);
    ValueError when not such a list (nothing is expanded before every bound is checked)."""
    from ridgeline.parsers.guard import MAX_GPU_INDEX

    spans = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        a, sep, b = part.partition("-")
        if not a.strip().isdigit() or (sep and not b.strip().isdigit()) or len(a) > 6 or len(b) > 6:
            raise ValueError(part)
        lo, hi = int(a), int(b) if b else int(a)
        if hi < lo or hi > MAX_GPU_INDEX:
            raise ValueError(part)
        spans.append((lo, hi))
    if not spans:
        raise ValueError(text)
    return sorted({i for lo, hi in spans for i in range(lo, hi + 1)})


def _expand_bracket(body: str) -> list[str]:
    """``'01-04,07'`` -> ``['01', '02', '03', '04', '07']`` (zero padding of the lower bound kept)."""
    out: list[str] = []
    for part in body.split(","):
        part = part.strip()
        a, _, b = part.partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            raise ValueError(part)
        if not b:
            out.append(a)
            continue
        lo, hi = int(a), int(b)
        if hi < lo or hi - lo >= MAX_HOSTS_PER_ROW:
            raise TooMany(hi - lo + 1)
        width = len(a) if a.startswith("0") else 0
        out.extend(str(i).zfill(width) for i in range(lo, hi + 1))
    return out


class TooMany(ValueError):
    """A node list naming more than :data:`MAX_HOSTS_PER_ROW` hosts (``count``: how many)."""

    def __init__(self, count: int):
        super().__init__(count)
        self.count = count


def _bracket_size(body: str) -> int:
    """How many names ``'01-04,07'`` stands for, without making them (ValueError when malformed)."""
    n = 0
    for part in body.split(","):
        a, _, b = part.strip().partition("-")
        if not a.isdigit() or (b and not b.isdigit()):
            raise ValueError(part)
        n += int(b) - int(a) + 1 if b else 1
    return n


def expand_nodelist(text: str) -> list[str]:
    """Slurm host list -> host names: ``'gpu[01-02],cpu5'`` -> ``['gpu01', 'gpu02', 'cpu5']``;
    ``'r[1-2]-n[1-2]'`` -> every combination. ValueError when malformed; :class:`TooMany` when it
    names more than :data:`MAX_HOSTS_PER_ROW` hosts (counted before any name is made)."""
    names: list[str] = []
    depth, cur = 0, ""
    items = []
    for ch in text.strip():
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(text)
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise ValueError(text)
    items.append(cur)
    total = 0
    for item in items:  # count first: every combination of the ranges, before any name is made
        size = 1
        for piece in re.split(r"(\[[^\]]*\])", item.strip()):
            if piece.startswith("["):
                size *= max(_bracket_size(piece[1:-1]), 0)
                if size > MAX_HOSTS_PER_ROW:
                    raise TooMany(size)
        total += size
        if total > MAX_HOSTS_PER_ROW:
            raise TooMany(total)
    for item in items:
        item = item.strip()
        if not item:
            continue
        expanded = [""]
        for piece in re.split(r"(\[[^\]]*\])", item):
            if piece.startswith("["):
                choices = _expand_bracket(piece[1:-1])
                expanded = [e + c for e in expanded for c in choices]
            elif piece:
                if "[" in piece or "]" in piece:
                    raise ValueError(text)
                expanded = [e + piece for e in expanded]
        names.extend(expanded)
    if not names:
        raise ValueError(text)
    return names


def _time(text: str, tz):
    t = _dt.datetime.fromisoformat(text.strip())
    if t.tzinfo is None:
        t = t.replace(tzinfo=tz)
    return t.astimezone(_dt.timezone.utc)


def read_sacct(path, *, tz: str | None = None, notes: list[str] | None = None):
    """Read ``sacct --parsable2`` text: ``(JOBS DataFrame, skipped)``. See the module docstring."""
    import polars as pl

    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise InputError(path, f"cannot read the jobs file ({err.strerror or err})") from None
    lines = _decode(path, raw).splitlines()
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None or not looks_like(lines[first]):
        raise InputError(path, "expected sacct --parsable2 output: a header line such as "
                         "JobID|User|Account|NodeList|Start|End", line=None if first is None else first + 1,
                         actual=None if first is None else lines[first][:80])
    header = [c.strip() for c in lines[first].split("|")]
    trailing = header[-1] == ""  # --parsable: every line ends with '|'
    if trailing:
        header = header[:-1]
    names = [c.lower() for c in header]
    missing = [c for c in REQUIRED if c not in names]
    if missing:
        raise InputError(path, "expected the columns JobID, NodeList, Start and End in the header", line=first + 1,
                         actual=", ".join(header))
    col = {n: i for i, n in enumerate(names)}
    zone = _zone(tz)
    tres_cols = [col[c] for c in ("alloctres", "reqtres") if c in col]
    gres_cols = [col[c] for c in ("allocgres", "reqgres", "gres") if c in col]
    idx_col = next((col[c] for c in INDEX_COLUMNS if c in col), None)
    rows: list[dict] = []
    skipped: list[Skipped] = []
    steps = 0
    for i in range(first + 1, len(lines)):
        ln = lines[i]
        if not ln.strip():
            continue
        cells = ln.split("|")
        if trailing and cells and cells[-1] == "":
            cells = cells[:-1]
        if len(cells) != len(header):
            raise InputError(path, f"expected {len(header)} '|'-separated fields as in the header", line=i + 1,
                             actual=f"{len(cells)} fields: {ln}")
        job = cells[col["jobid"]].strip()
        if not job:
            raise InputError(path, "expected a job id", line=i + 1, column=header[col["jobid"]], actual="")
        if "." in job:  # a step (123.batch, 123.0): inside its job's allocation
            steps += 1
            continue
        start_s, end_s, nodes_s = (cells[col[c]].strip() for c in ("start", "end", "nodelist"))
        if start_s.lower() in _NOT_STARTED or nodes_s.lower() in ("none assigned", "", "(null)"):
            skipped.append(Skipped(str(path), f"job {job} (line {i + 1})", "never started: no node or start time"))
            continue
        try:
            start = _time(start_s, zone)
        except ValueError:
            raise InputError(path, "expected a time such as 2026-01-05T08:00:00", line=i + 1,
                             column=header[col["start"]], actual=start_s) from None
        end = None
        if end_s.lower() not in _NOT_STARTED:
            try:
                end = _time(end_s, zone)
            except ValueError:
                raise InputError(path, "expected a time such as 2026-01-05T09:00:00 or Unknown", line=i + 1,
                                 column=header[col["end"]], actual=end_s) from None
            if end < start:
                raise InputError(path, "expected End at or after Start", line=i + 1, column=header[col["end"]],
                                 actual=end_s)
        try:
            hosts = expand_nodelist(nodes_s)
        except TooMany as err:
            raise InputError(path, f"expected at most {MAX_HOSTS_PER_ROW:,} hosts in one node list (Slurm's "
                             f"host-list syntax; this one names {err.count:,})", line=i + 1,
                             column=header[col["nodelist"]], actual=nodes_s) from None
        except ValueError:
            raise InputError(path, "expected a Slurm node list such as gpu[01-04,07]", line=i + 1,
                             column=header[col["nodelist"]], actual=nodes_s) from None
        alloc = None
        for c in tres_cols:
            m = _TRES_GPU_RE.search(cells[c])
            if m:
                alloc = int(m.group(1))
                break
        if alloc is None:
            for c in gres_cols:
                m = _GRES_GPU_RE.search(cells[c])
                if m:
                    alloc = int(m.group(1))
                    break
        gpus = None
        idx_text = cells[idx_col].strip() if idx_col is not None else ""
        if not idx_text:
            m = next((m for c in cells if (m := _IDX_RE.search(c))), None)
            idx_text = m.group(1) if m else ""
        if idx_text and idx_text.lower() not in ("n/a", "none"):
            try:
                gpus = expand_ranges(idx_text)
            except ValueError:
                from ridgeline.parsers.guard import MAX_GPU_INDEX

                raise InputError(path, f"expected GPU indices 0..{MAX_GPU_INDEX} such as 0-3,5", line=i + 1,
                                 column=header[idx_col] if idx_col is not None else "IDX", actual=idx_text) from None
        get = lambda c: (cells[col[c]].strip() or None) if c in col else None  # noqa: E731
        if len(rows) + len(hosts) > MAX_ROWS:
            raise InputError(path, f"expected at most {MAX_ROWS:,} job-host rows in one jobs file; line {i + 1} "
                             f"would make {len(rows) + len(hosts):,} (split the sacct query by time)", line=i + 1)
        for h in hosts:
            rows.append({"job": job, "user": get("user"), "account": get("account"), "name": get("jobname"),
                         "host": h, "gpus": gpus, "alloc_gpus": alloc, "start": start, "end": end, "line": i + 1})
    if notes is not None:
        if steps:
            notes.append(f"{path}: {steps} job step row(s) (JobID with '.') read as part of their job's allocation")
        if tz is None and rows:
            notes.append(f"{path}: sacct times carry no zone; read as UTC (give --tz for the cluster's zone)")
    schema = {"job": pl.String, "user": pl.String, "account": pl.String, "name": pl.String, "host": pl.String,
              "gpus": pl.List(pl.Int64), "alloc_gpus": pl.Int64, "start": pl.Datetime("us", "UTC"),
              "end": pl.Datetime("us", "UTC"), "line": pl.Int64}
    return pl.DataFrame(rows, schema=schema), skipped


_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xef\xbb\xbf", "utf-8"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def _decode(path: Path, raw: bytes) -> str:
    """The jobs file's text: UTF-8, or UTF-16/32 after a byte-order mark; else an InputError
    naming the line (see the module docstring)."""
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom):].decode(codec)
            except UnicodeDecodeError as err:
                line = raw[len(bom):len(bom) + err.start].decode(codec, "replace").count("\n") + 1
                raise InputError(path, f"expected {codec.upper()} text after its byte-order mark, got bytes that are "
                                 f"not {codec.upper()}", line=line) from None
    if b"\x00" in raw:
        line = raw[:raw.index(b"\x00")].count(b"\n") + 1
        raise InputError(path, "expected UTF-8 text (sacct --parsable2 output), got NUL bytes: UTF-16 without a "
                         "byte-order mark? (convert it: iconv -f UTF-16LE -t UTF-8)", line=line)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[:err.start].count(b"\n") + 1
        raise InputError(path, "expected UTF-8 text (sacct --parsable2 output), got bytes that are not UTF-8",
                         line=line, actual=raw[max(0, err.start - 10):err.start + 10].decode("utf-8", "backslashreplace")) from None


def _zone(tz: str | None):
    if tz is None:
        return _dt.timezone.utc
    from zoneinfo import ZoneInfo

    return ZoneInfo(tz)
