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
_IDX_RE = re.compile(r"IDX:([0-9,\-]+)")
_TRES_GPU_RE = re.compile(r"gres/gpu(?::[^=,]+)?=(\d+)")
_GRES_GPU_RE = re.compile(r"(?:^|,)gpu(?::[^:,(]+)?:(\d+)")


def looks_like(head: str) -> bool:
    first = head.splitlines()[0] if head else ""
    names = {c.strip().lower() for c in first.split("|")}
    return "|" in first and {"jobid", "nodelist"} <= names


def expand_ranges(text: str) -> list[int]:
    """``'0-3,5'`` -> ``[0, 1, 2, 3, 5]``; ValueError when not such a list."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        a, _, b = part.partition("-")
        lo, hi = int(a), int(b) if b else int(a)
        if hi < lo or hi - lo > 100_000:
            raise ValueError(part)
        out.extend(range(lo, hi + 1))
    return out


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
        if hi < lo or hi - lo > 100_000:
            raise ValueError(part)
        width = len(a) if a.startswith("0") else 0
        out.extend(str(i).zfill(width) for i in range(lo, hi + 1))
    return out


def expand_nodelist(text: str) -> list[str]:
    """Slurm host list -> host names: ``'gpu[01-02],cpu5'`` -> ``['gpu01', 'gpu02', 'cpu5']``;
    ``'r[1-2]-n[1-2]'`` -> every combination. ValueError when malformed."""
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
        text = path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as err:
        raise InputError(path, f"cannot read the jobs file ({err.strerror or err})") from None
    lines = text.splitlines()
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
                raise InputError(path, "expected GPU indices such as 0-3,5", line=i + 1,
                                 column=header[idx_col] if idx_col is not None else "IDX", actual=idx_text) from None
        get = lambda c: (cells[col[c]].strip() or None) if c in col else None  # noqa: E731
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


def _zone(tz: str | None):
    if tz is None:
        return _dt.timezone.utc
    from zoneinfo import ZoneInfo

    return ZoneInfo(tz)
