"""Pull DCGM telemetry from a live Prometheus (or Thanos, Mimir, VictoriaMetrics) HTTP API.

:func:`pull` asks ``/api/v1/query_range`` for every DCGM field ridgeline knows
(:data:`ridgeline.parsers.telemetry.dcgm_fields.FIELDS`), under every name the field goes by (exporter
3.x/4.x names, the 4.6 renames, the 1.x lower-case names: one ``{__name__=~"A|B|C"}`` selector
per field), and returns the TELEMETRY long table the file readers produce: the same reduction and
rules run on it. Each series is converted by the Prometheus JSON reader's own converter
(:func:`ridgeline.parsers.telemetry.prometheus_json.series_frame`), so a pull and a saved answer of the
same data give the same rows.

How a pull is cut into requests (a *chunk* = one field, one group of hosts, one time span):

* **time**: the start is aligned down to a multiple of ``step``; spans hold at most
  ``max_points`` evaluation points (Prometheus refuses more than 11,000 points per series) and
  never cross a time slice boundary (``slice_s``, default one UTC day), so each answer falls in
  one slice of the spill;
* **hosts**: when the ``Hostname`` label (listed by ``/api/v1/label/Hostname/values`` for the
  fields and selector asked) has more than ``hosts_per_query`` values, each request names one
  group of hosts (``Hostname=~"a|b|..."``), plus one request for series without the label, so a
  request stays far below the server's 50 M samples per query;
* requests run ``concurrency`` at a time, each bounded whole by ``timeout_s`` and its answer by
  ``max_answer_bytes`` (:mod:`ridgeline.sources.client`); a timeout, a connection error, HTTP 429
  or 5xx is retried ``retries`` times with exponential backoff (``Retry-After`` honoured,
  capped); when the first ``concurrency`` requests all end without a usable answer and none was
  answered, the pull stops with one line; points outside a request's span are dropped, counted
  in a note;
* each answer is converted as it arrives, its repeated samples dropped, and written to a
  temporary per-host, per-time-slice Parquet folder (:mod:`ridgeline.sources.spill`), then
  dropped: at most ``concurrency + 1`` answers are alive at once, each at most one slice long;
  the reduction then reads one time slice of one host at a time
  (:mod:`ridgeline.analyzer.fleet.slices`, the same windows as a whole-host reduction) and
  ``--save`` writes one (host, day) at a time, so the pull's memory does not grow with its length;
* a chunk that still fails is listed by name (field, hosts, span) in ``skipped``: its samples
  are absent, so its windows have those fields missing (null), never 0. ``strict=True`` makes
  it an error instead. ``skipped`` lists the first 20 items of each kind (failed requests,
  malformed points or series, by reason) and one "N more like this" entry with the count of
  the rest (:mod:`ridgeline.skiplog`), so its size does not grow with the pull's length.

Errors that make the whole pull pointless are one :class:`PrometheusError` line (exit 2): a
server that cannot be reached, HTTP 401/403, a query the server rejects (a bad ``--match``), an
answer that is not the Prometheus API. Secrets (bearer token, password, user info in the URL)
never appear in messages, notes or ``inputs``: the URL is read once by
:func:`ridgeline.sources.url.parse` and shown without its user info.

Prometheus semantics to know: ``query_range`` returns, at each step, the latest sample at most
5 minutes old (the server's lookback delta), so a series that stops is repeated for up to 5
minutes, and a step longer than the scrape interval samples the data while a shorter one
repeats samples: use the scrape interval (dcgm-exporter collects every 30 s by default).

Needs ``httpx`` (``pip install 'ridgeline[prometheus]'``), imported when a pull starts.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
from typing import Any, Callable, Iterable

from ridgeline.errors import UsageError
from ridgeline.result import InputInfo, Skipped
from ridgeline.sources.client import MAX_ANSWER_BYTES, ChunkFailed as _ChunkFailed, Client as _Client, PrometheusError

MAX_POINTS = 11_000  # Prometheus' limit of points per series in one query_range answer
HOSTS_PER_QUERY = 32  # Hostname values per request once a fleet is split by host
HOST_LABEL = "Hostname"  # dcgm-exporter's host label (the 1.x exporter's 'hostname' is not split on)
QUEUED = 1  # requests submitted beyond --concurrency, so a worker starts the next one while an answer converts




@dataclasses.dataclass(frozen=True)
class Auth:
    """How to authenticate; every field optional. Never printed (``repr`` hides the secrets)."""

    bearer_token: str | None = dataclasses.field(default=None, repr=False)
    username: str | None = None
    password: str | None = dataclasses.field(default=None, repr=False)
    ca_bundle: str | None = None
    client_cert: str | None = None
    client_key: str | None = None
    insecure: bool = False

    def secrets(self) -> list[str]:
        return [s for s in (self.bearer_token, self.password) if s]


@dataclasses.dataclass(frozen=True)
class Chunk:
    """One request: a field (all its names), a group of hosts (None = every host), a span."""

    field: str  # canonical field
    names: tuple[str, ...]  # metric names it goes by
    hosts: tuple[str, ...] | None  # None: no host matcher; (): series without a Hostname label
    start: float  # epoch seconds, first evaluation time
    end: float  # epoch seconds, last evaluation time (inclusive)

    def label(self) -> str:
        if self.hosts is None:
            who = "all hosts"
        elif not self.hosts:
            who = f"series without a {HOST_LABEL} label"
        elif len(self.hosts) <= 3:
            who = "host " + ",".join(self.hosts)
        else:
            who = f"hosts {self.hosts[0]}..{self.hosts[-1]} ({len(self.hosts)})"
        return f"field {self.field} ({self.names[0]}), {who}, {_iso(self.start)}..{_iso(self.end)}"


@dataclasses.dataclass
class Pull:
    """What :func:`pull` returns. The samples are on disk (:class:`ridgeline.sources.spill.Spill`),
    one lazy scan per host: :meth:`source` is what the reduction reads, :meth:`save` writes the
    store host by host; :attr:`frame` collects them all in memory (for small pulls and tests).
    :meth:`close` removes the temporary files (also done when the object is collected)."""

    spill: Any  # ridgeline.sources.spill.Spill
    info: InputInfo
    skipped: list[Skipped]
    notes: list[str]
    failed: list[tuple[Chunk, str]]  # chunks that failed after retries, with the reason
    chunks: int  # requests planned (query_range)

    @property
    def rows(self) -> int:
        """Samples kept (after repeats were dropped)."""
        return self.spill.total

    @property
    def frame(self):
        """Every sample as one in-memory TELEMETRY long table, sorted by host, GPU, time, field."""
        from ridgeline.parsers.telemetry.reader import finish
        from ridgeline.sources.spill import ORDER

        return finish(self.spill.scan(), source=self.info.path).collect().sort(ORDER, nulls_last=True)

    def source(self):
        """The pull as a telemetry input for :func:`ridgeline.pipeline.reduce_telemetry`'s
        ``extra``: its long table, and per host its time slices (hosts known without reading),
        which the reduction reads one at a time (:mod:`ridgeline.analyzer.fleet.slices`)."""
        from ridgeline.analyzer.fleet.slices import SLICED, TimeSlices
        from ridgeline.parsers.telemetry.reader import TelemetrySource, finish

        self.sliced = {h: TimeSlices(self.spill.host_slices(h)) for h in self.spill.hosts()}
        return TelemetrySource(self.info.path, "telemetry-long", finish(self.spill.scan(), source=self.info.path),
                               hosts={h: [(SLICED, t)] for h, t in self.sliced.items()})

    @property
    def max_rows_read(self) -> int:
        """The most long rows read back at once (repeats, --save, the reduction): one slice of one host."""
        return max([self.spill.max_rows_read, *(t.max_rows_read for t in getattr(self, "sliced", {}).values())])

    def save(self, folder):
        """Write the store at ``folder`` (:func:`ridgeline.sources.store.save`), one host and time
        slice (a day by default: one store partition) at a time; returns the StoreReport of all."""
        from ridgeline.sources.store import save_each

        return save_each(self.spill.slice_frames(), folder)

    def close(self) -> None:
        self.spill.close()


# ------------------------------------------------------------------------------------------
# times, durations, selectors
# ------------------------------------------------------------------------------------------
_DUR_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_DUR_UNIT = {"ms": 1e-3, "s": 1.0, None: 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_duration(text: str, *, what: str) -> float:
    """``15s``, ``5m``, ``1h``, ``1d``, ``1w`` or plain seconds -> seconds (> 0)."""
    m = _DUR_RE.match(str(text))
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"{what} {text!r}: expected a duration such as 15s, 5m, 1h or 1d")
    return float(m.group(1)) * _DUR_UNIT[m.group(2)]


def parse_time(text: str, *, now: _dt.datetime | None = None, what: str = "--from") -> _dt.datetime:
    """RFC 3339 (``2026-01-05T00:00:00Z``; no zone = UTC), a date (``2026-01-05`` = its midnight
    UTC), epoch seconds, ``now``, or relative to now: ``-24h``, ``now-1d``, ``now-30m``."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    raw = str(text).strip()
    low = raw.lower()
    if low == "now":
        return now
    m = re.fullmatch(r"(?:now)?\s*([-+])\s*(.+)", low)
    if m:
        try:
            span = parse_duration(m.group(2), what=what)
        except UsageError:
            span = None
        if span is not None:
            return now + _dt.timedelta(seconds=span if m.group(1) == "+" else -span)
    if re.fullmatch(r"\d{9,11}(\.\d+)?", raw):
        return _dt.datetime.fromtimestamp(float(raw), tz=_dt.timezone.utc)
    try:
        value = _dt.datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UsageError(f"{what} {text!r}: expected RFC 3339 (2026-01-05T00:00:00Z), a date, "
                         "'now' or a relative time such as -24h") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=_dt.timezone.utc)


def selector_matchers(match: str | None) -> str:
    """``{cluster="a",Hostname=~"node-.*"}`` (braces optional) -> ``cluster="a",Hostname=~"node-.*"``."""
    if not match:
        return ""
    text = match.strip()
    if text.startswith("{"):
        if not text.endswith("}"):
            raise UsageError(f"--match {match!r}: expected a label selector such as {{cluster=\"a\"}}")
        text = text[1:-1]
    text = text.strip().strip(",").strip()
    if text and not re.search(r"(=|!=|=~|!~)\s*\"", text):
        raise UsageError(f"--match {match!r}: expected label matchers such as {{cluster=\"a\",Hostname=~\"node-.*\"}}")
    return text


def _regex_alternation(values: Iterable[str]) -> str:
    """Values as an anchored RE2 alternation inside a PromQL double-quoted string."""
    escaped = [re.sub(r"([\\.+*?()|\[\]{}^$])", r"\\\1", v) for v in values]
    alt = "|".join(escaped)
    return alt.replace("\\", "\\\\").replace('"', '\\"')


def chunk_query(chunk: Chunk, matchers: str) -> str:
    """The PromQL selector of a chunk: ``{__name__=~"A|B", <--match>, Hostname=~"h1|h2"}``."""
    parts = [f'__name__=~"{_regex_alternation(chunk.names)}"']
    if matchers:
        parts.append(matchers)
    if chunk.hosts is not None:
        parts.append(f'{HOST_LABEL}=~"{_regex_alternation(chunk.hosts)}"' if chunk.hosts else f'{HOST_LABEL}=""')
    return "{" + ",".join(parts) + "}"


def field_names() -> dict[str, tuple[str, ...]]:
    """canonical field -> every metric name it goes by (exporter name first)."""
    from ridgeline.parsers.telemetry.dcgm_fields import FIELDS

    return {f.canonical: (f.exporter, *f.aliases) for f in FIELDS}


def plan_chunks(fields: dict[str, tuple[str, ...]], host_groups: list[tuple[str, ...] | None], *,
                start: float, end: float, step: float, max_points: int = MAX_POINTS,
                slice_s: float | None = None) -> list[Chunk]:
    """Chunks covering [start, end] on the step grid, at most ``max_points`` points each and,
    with ``slice_s``, none crossing a multiple of ``slice_s`` seconds from the epoch."""
    import math

    if max_points < 2:
        raise UsageError(f"--max-points must be at least 2, got {max_points}")
    spans = []
    k = 0  # points start + k * step (no float drift over long pulls)
    last = math.floor((end - start) / step + 1e-9)
    while k <= last:
        n = min(max_points - 1, last - k)  # points after the span's first
        t = start + k * step
        if slice_s:
            boundary = (math.floor(t / slice_s + 1e-9) + 1) * slice_s
            n = min(n, math.ceil((boundary - t) / step - 1e-9) - 1)  # the last point before the boundary
        spans.append((t, start + (k + n) * step))
        k += n + 1
    return [Chunk(field, names, hosts, s, e) for field, names in fields.items()
            for hosts in host_groups for s, e in spans]


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def safe_url(url: str) -> str:
    """The URL as it may be shown: no user info, query or fragment (:mod:`ridgeline.sources.url`)."""
    from ridgeline.sources.url import parse, shown

    try:
        return parse(url).shown
    except UsageError:
        return shown(url)


# ------------------------------------------------------------------------------------------
# the pull
# ------------------------------------------------------------------------------------------
def pull(url: str, *, start: _dt.datetime, end: _dt.datetime, step_s: float = 15.0, match: str | None = None,
         auth: Auth | None = None, concurrency: int = 4, timeout_s: float = 60.0, retries: int = 3,
         backoff_s: float = 0.5, max_points: int = MAX_POINTS, hosts_per_query: int = HOSTS_PER_QUERY,
         strict: bool = False, fields: dict[str, tuple[str, ...]] | None = None,
         progress: Callable[[int, int], None] | None = None, spill_dir: str | None = None,
         slice_s: float = 86400.0, max_answer_bytes: int = MAX_ANSWER_BYTES) -> Pull:
    """Pull ``[start, end]`` from the server at ``url``; see the module docstring. The samples
    are written to a temporary folder (in ``spill_dir``, default ``$TMPDIR``) as they arrive, in
    time slices of ``slice_s`` seconds: see :mod:`ridgeline.sources.spill`."""
    from ridgeline.parsers.telemetry.dcgm_fields import lookup_exporter
    from ridgeline.parsers.telemetry.prometheus_json import series_frame
    from ridgeline.sources.spill import Spill

    if end <= start:
        raise UsageError(f"--to {end.isoformat()} is not after --from {start.isoformat()}")
    if concurrency < 1:
        raise UsageError(f"--concurrency must be at least 1, got {concurrency}")
    if hosts_per_query < 1:
        raise UsageError(f"--hosts-per-query must be at least 1, got {hosts_per_query}")
    matchers = selector_matchers(match)
    fields = fields or field_names()
    t0 = (start.timestamp() // step_s) * step_s
    t1 = end.timestamp()
    client = _Client(url, auth or Auth(), timeout_s=timeout_s, retries=retries, backoff_s=backoff_s,
                     max_answer_bytes=max_answer_bytes)
    from ridgeline.skiplog import CappedSkipped

    notes: list[str] = []
    skipped = CappedSkipped()  # a few of each kind, the rest counted: never one entry per sample
    try:
        try:  # one cheap request first: reachable, authorized, speaks the Prometheus API
            client.get_json("api/v1/query", params={"query": "1", "time": f"{t1:.3f}"})
        except _ChunkFailed as err:
            raise client._fatal(str(err)) from None
        all_names = [n for names in fields.values() for n in names]
        selector = chunk_query(Chunk("", tuple(all_names), None, t0, t1), matchers)
        try:
            hosts = client.get_json(f"api/v1/label/{HOST_LABEL}/values",
                                    params={"match[]": selector, "start": f"{t0:.3f}", "end": f"{t1:.3f}"}) or []
        except _ChunkFailed as err:
            raise client._fatal(f"cannot list {HOST_LABEL} values: {err}") from None
        if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
            raise client._fatal(f"expected a list of {HOST_LABEL} values from api/v1/label/{HOST_LABEL}/values, "
                                f"got {type(hosts).__name__}" + ("" if not isinstance(hosts, list) else " items"
                                                                  " that are not all text"))
        hosts = sorted(hosts)
        if len(hosts) > hosts_per_query:
            groups: list[tuple[str, ...] | None] = [tuple(hosts[i:i + hosts_per_query])
                                                    for i in range(0, len(hosts), hosts_per_query)]
            groups.append(())  # series without a Hostname label
            notes.append(f"{client.url}: {len(hosts)} hosts, asked in {len(groups) - 1} groups of at most "
                         f"{hosts_per_query}")
        else:
            groups = [None]
        chunks = plan_chunks(fields, groups, start=t0, end=t1, step=step_s, max_points=max_points, slice_s=slice_s)
        spill = Spill(spill_dir, slice_s=slice_s)
        try:
            failed, n_points, seen_fields, repeats, outside = _run(client, chunks, matchers, step_s, concurrency,
                                                                   progress, series_frame, lookup_exporter, spill,
                                                                   groups, strict=strict, skipped=skipped)
            repeats += spill.dedupe()
        except BaseException:
            spill.close()
            raise
    finally:
        client.close()
    for chunk, reason in failed:
        skipped.append(Skipped(client.url, chunk.label(), f"request failed: {reason}; these samples are "
                                                            "missing (null), not 0"))
    if failed:
        if strict:
            chunk, reason = failed[0]
            more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
            raise PrometheusError(f"{client.url}: {chunk.label()}: {reason}{more}; without --strict such "
                                  "chunks are listed and their windows left missing")
        notes.append(f"{client.url}: {len(failed)} of {len(chunks)} requests failed after retries (listed under "
                     "skipped); the fields they cover are missing (null) in those windows, not 0")
    absent = [f"{names[0]} ({field})" for field, names in fields.items() if field not in seen_fields
              and not any(c.field == field for c, _ in failed)]
    if absent and seen_fields:
        notes.append(f"{client.url}: no series for {len(absent)} of {len(fields)} fields in this range"
                     + (" and selector" if matchers else "") + ": " + ", ".join(absent))
    if repeats:
        # a sample seen twice (a field exported under its old and new name, or one GPU scraped by
        # two jobs) is kept once
        notes.append(f"{client.url}: {repeats} samples came twice (a field under two names, or "
                     "a GPU scraped by two jobs); kept once")
    if outside:
        notes.append(f"{client.url}: {outside} points were outside the time span their request asked for "
                     "(a server or proxy answering for other times); dropped")
    bad = spill.total_nulls
    if bad:
        notes.append(f"{client.url}: {bad} points were NaN/Inf or not numbers; kept as missing (null)")
    info = InputInfo(client.url, "prometheus-api", n_points)
    return Pull(spill=spill, info=info, skipped=skipped.items(), notes=notes, failed=failed, chunks=len(chunks))


def _run(client: _Client, chunks: list[Chunk], matchers: str, step_s: float, concurrency: int, progress,
         series_frame, lookup_exporter, spill, groups, *, strict: bool = False, skipped: list | None = None):
    """Run the chunks ``concurrency`` at a time; convert each answer as it arrives, keep each of
    its samples once and write them to ``spill`` (then drop them): memory holds the answers in
    flight, never the pull. Returns ``(failed, points received, fields seen, repeats dropped, points outside)``.
    Each series is
    checked as a saved answer's would be (:func:`~ridgeline.parsers.telemetry.prometheus_json.check_series`):
    a series that is not ``{"metric": {...}, "values": [[t, "v"], ...]}`` is an error naming the
    request and the series (strict), else left out and listed. Points outside the span their
    request asked for are dropped and counted (the last item returned)."""
    import itertools
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

    import polars as pl

    from ridgeline.errors import InputError
    from ridgeline.parsers.telemetry.prometheus_json import check_series
    from ridgeline.parsers.telemetry.reader import finish
    from ridgeline.parsers.telemetry.common import workload_labels
    from ridgeline.sources.spill import LABEL_ID, SAMPLE_KEY

    skipped = [] if skipped is None else skipped
    index = {id(c): i for i, c in enumerate(chunks)}
    group_of = {g: i for i, g in enumerate(groups)}

    def fetch(chunk: Chunk):
        data = client.get_json("api/v1/query_range", data={
            "query": chunk_query(chunk, matchers), "start": f"{chunk.start:.3f}", "end": f"{chunk.end:.3f}",
            "step": f"{step_s:g}",
        })
        if not isinstance(data, dict) or data.get("resultType") != "matrix":
            raise client._fatal("expected a matrix from query_range, got "
                                f"{(data or {}).get('resultType') if isinstance(data, dict) else type(data).__name__}")
        result = data.get("result") or []
        if not isinstance(result, list):
            raise client._fatal(f"expected a list of series in the query_range answer for {chunk.label()}, "
                                f"got {type(result).__name__}")
        return result

    failed = []
    n_points = repeats = outside = answered = unanswered = 0
    seen_fields: set[str] = set()
    done = 0
    def convert(chunk: Chunk, result: list) -> None:
        nonlocal n_points, repeats, outside
        frames = []
        for i, series in enumerate(result):
            try:
                labels, points = check_series(client.url, f"{chunk.label()}, series {i}", series,
                                              strict=strict, skipped=skipped)
            except InputError as err:  # --strict: the first malformed series ends the pull
                text = str(err).removeprefix(f"{client.url}: ").replace(" (--lenient skips such points "
                                                                       "and series)", "")
                raise client._fatal(f"{text} (without --strict such series are skipped and "
                                    "listed)") from None
            fd = lookup_exporter(str(labels.get("__name__", "")))
            if fd is None or not points:
                continue
            n_points += len(points)
            seen_fields.add(fd.canonical)
            lid = spill.label_id(workload_labels(labels))  # the series' labels as a number (Spill.add)
            frames.append(series_frame(labels, points, fd).with_columns(pl.lit(lid, pl.UInt32).alias(LABEL_ID)))
        if frames:
            frame = pl.concat(frames, how="vertical")
            del frames
            # query_range evaluates at start + k * step only: a point outside the asked span is not
            # an answer to this request (and would land in another chunk's slice), so it is dropped
            # and counted; 1 ms of slack for the 3 decimals the span was asked with
            ts = pl.col("timestamp").dt.epoch("us")
            inside = ts.is_between(int(chunk.start * 1e6) - 1000, int(chunk.end * 1e6) + 1000)
            n_out = frame.select((~inside).sum()).item()
            if n_out:
                outside += n_out
                frame = frame.filter(inside)
            kept = frame.unique(subset=SAMPLE_KEY, keep="first", maintain_order=True)
            repeats += frame.height - kept.height
            spill.add(index[id(chunk)], group_of[chunk.hosts],
                      finish(kept, source=client.url).with_columns(kept.get_column(LABEL_ID)))

    # at most concurrency + QUEUED requests submitted at once, each answer converted, written to the
    # spill and dropped as soon as it arrives: the answers alive at any time are those few, whatever
    # the pull's length (each at most --max-points x the series of one field and host group)
    todo = iter(chunks)
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        futures: dict = {}
        try:
            for chunk in itertools.islice(todo, concurrency + QUEUED):
                futures[pool.submit(fetch, chunk)] = chunk
            while futures:
                finished, _ = wait(futures, return_when=FIRST_COMPLETED)
                for fut in finished:
                    chunk = futures.pop(fut)
                    try:
                        result = fut.result()
                    except _ChunkFailed as err:
                        failed.append((chunk, str(err)))
                        unanswered += err.unanswered
                        if not answered and unanswered >= concurrency and done + 1 < len(chunks):
                            # the first --concurrency requests all went without a usable answer (timed
                            # out, no connection, over --max-answer) and none was answered: the others
                            # would end the same; say so now, not after each has waited out --timeout
                            client.stop()
                            raise client._fatal(f"the first {unanswered} requests all ended without a usable "
                                                f"answer ({failed[0][1]}); stopped before the other "
                                                f"{len(chunks) - done - 1}") from None
                    else:
                        answered += 1
                        del fut
                        convert(chunk, result)
                        del result
                    done += 1
                    if progress is not None:
                        progress(done, len(chunks))
                    nxt = next(todo, None)
                    if nxt is not None:
                        futures[pool.submit(fetch, nxt)] = nxt
                del finished
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    failed.sort(key=lambda cf: (cf[0].field, cf[0].hosts or (), cf[0].start))
    return failed, n_points, seen_fields, repeats, outside
