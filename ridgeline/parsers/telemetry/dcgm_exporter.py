"""dcgm-exporter ``/metrics`` text (Prometheus exposition format) -> TELEMETRY rows.

One file may hold many scrapes appended to each other (``while sleep 15; do curl
:9400/metrics; done >> file``). A scrape boundary is a series (metric + label set) seen
again: the k-th occurrence of a series belongs to scrape k. A sample line may carry its own
timestamp (milliseconds since the epoch; OpenMetrics files, ending in ``# EOF``, use
seconds, possibly fractional: told apart by magnitude); otherwise scrape k is at ``start + k * interval``
(default 30 s, the exporter's collect interval).

Labels are read by name with their known drift: host = ``hostname`` | ``Hostname`` |
``instance``; UUID = ``UUID`` | ``uuid`` | ``gpu_uuid``; model = ``modelName`` |
``model_name``; MIG instance = ``GPU_I_ID`` (profile ``GPU_I_PROFILE``); k8s pod =
``exported_pod`` | ``pod`` (with ``exported_namespace`` | ``namespace``). Every other label that
is not the GPU's identity (pod, namespace, container, job, ...) is kept per row in the ``labels``
column (:func:`ridgeline.parsers.telemetry.common.workload_labels`), for ``--by``.

Values: DCGM blank sentinels (int64 >= 0x7ffffffffffffff0, e.g. ``9223372036854775794``;
doubles >= 1.40737488355328e14) and NaN become null. Lines whose value is not a number
(``... ERROR - FAILED TO CONVERT TO STRING``) are listed in ``skipped`` with their line
number. Metrics ridgeline does not analyze are listed once per name.
"""

from __future__ import annotations

import re
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.telemetry.dcgm_fields import scaled
from ridgeline.parsers.telemetry.common import workload_labels
from ridgeline.parsers.telemetry.syntax import SAMPLE_RE
from ridgeline.result import InputInfo, Skipped

DEFAULT_SCRAPE_INTERVAL_S = 30.0
_NAME_RE = re.compile(r"^(dcgm_|DCGM_)[A-Za-z0-9_]*(\{.*\})?\s+\S+")
# the start of a sample line whose label set the detection head cut (a 100,000-character pod label)
_CUT_RE = re.compile(r"^(dcgm_|DCGM_)[A-Za-z0-9_]*\{[^}]*$")


def looks_like(lines: list[str], *, cut: bool = False) -> bool:
    """Head lines of an exporter scrape: # HELP/# TYPE of DCGM metrics, or DCGM sample lines.
    ``cut``: the head ended inside its last line, which may then be a sample's beginning only
    (a label longer than the head is legal)."""
    for i, ln in enumerate(lines):
        s = ln.strip()
        if not s:
            continue
        if s.startswith("# HELP ") or s.startswith("# TYPE "):
            return True
        if s.startswith("#"):
            continue
        if cut and i == len(lines) - 1:
            return bool(_NAME_RE.match(s) or _CUT_RE.match(s))
        return bool(_NAME_RE.match(s))
    return False


def _label(names: tuple[str, ...]):
    import polars as pl

    exprs = [pl.col("labels").str.extract(r'[{,]\s*' + n + r'="([^"]*)"', 1) for n in names]
    return pl.coalesce(exprs) if len(exprs) > 1 else exprs[0]


class _OddText(Exception):
    """A piece polars does not split into lines as Python would (or not UTF-8): the file is
    split by Python instead."""


def _line_pieces(path: Path, chunk_bytes):
    """The file's lines as polars frames, one per piece cut at line ends (see
    :mod:`ridgeline.parsers.text_chunks`). Raises :class:`_OddText` for a piece polars does
    not split as ``str.splitlines()`` would."""
    import polars as pl

    from ridgeline.parsers.text_chunks import odd_breaks as _odd_breaks
    from ridgeline.parsers.text_chunks import line_chunks

    for data, _last in line_chunks(path, chunk_bytes):
        if _odd_breaks(data):
            raise _OddText
        try:
            df = pl.read_lines(data, name="line")
        except Exception as err:  # noqa: BLE001 - not UTF-8
            raise _OddText from err
        del data
        yield df


def read_exporter(path, *, opts, chunk_bytes: int | None = None):
    """Parse one or many dcgm-exporter scrapes. Returns (DataFrame, InputInfo, skipped).

    The file is read in pieces cut at line ends (``chunk_bytes``); each piece's samples become
    numeric columns and a series number at once (a series is a metric and its label set, kept
    once), so the file's lines are never all held as strings; the long rows are built at the
    end from those columns and the series table.
    """
    path = Path(path)
    try:
        return _read_exporter(path, opts, _line_pieces(path, chunk_bytes))
    except _OddText:
        return _read_exporter(path, opts, iter([_read_lines(path)]))


def _read_exporter(path: Path, opts, pieces):
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import FP64_BLANK_MIN, lookup_exporter

    skipped: list[Skipped] = []
    series: dict[tuple, int] = {}  # (metric, labels or None) -> series number
    counts: list[int] = []  # samples per series (good lines)
    known: dict[str, object] = {}  # metric -> field description, or None when not analyzed
    parts = []
    next_line = 1
    n_parsed = n_blank = 0
    all_ts = True
    max_scrape = -1
    sentinel = (pl.col("num").abs() >= FP64_BLANK_MIN) | pl.col("num").is_nan() | pl.col("num").is_infinite()
    for lines in pieces:
        lines = lines.with_row_index("lineno", offset=next_line).with_columns(pl.col("line").str.strip_chars())
        next_line += lines.height
        body = lines.filter((pl.col("line") != "") & ~pl.col("line").str.starts_with("#"))
        del lines
        parsed = _split_samples(body)
        del body
        n_parsed += parsed.height
        # value lines that are not a sample or whose value is no number
        parsed = parsed.with_columns(pl.col("raw").cast(pl.Float64, strict=False).alias("num"))
        nan_like = pl.col("raw").str.to_lowercase().is_in(["nan", "+inf", "-inf", "inf"])
        bad = parsed.filter(pl.col("metric").is_null() | (pl.col("num").is_null() & ~nan_like))
        for no, line in bad.select("lineno", "line").iter_rows():
            if "FAILED TO CONVERT" in line or "ERROR" in line:
                reason = "exporter printed an error instead of a value"
            else:
                reason = "not a Prometheus sample line"
            skipped.append(Skipped(str(path), f"line {no}", f"{reason}: {line[:80]!r}"))
        good = parsed.filter(pl.col("metric").is_not_null() & (pl.col("num").is_not_null() | nan_like))
        del parsed
        if not good.height:
            continue
        # series numbers: the piece's distinct (metric, labels), new ones numbered in order of appearance
        pairs = good.select("metric", "labels").unique(maintain_order=True)
        for metric, labels in pairs.iter_rows():
            if (metric, labels) not in series:
                series[(metric, labels)] = len(series)
                counts.append(0)
            if metric not in known:
                known[metric] = lookup_exporter(metric)
        keys = pairs.with_columns(pl.Series("_sid", [series[k] for k in pairs.iter_rows()], dtype=pl.Int64))
        good = good.join(keys, on=["metric", "labels"], how="left", maintain_order="left", nulls_equal=True)
        # scrape index: k-th time a series (metric + labels) appears, counted from the pieces before
        per = good.group_by("_sid").len()
        offsets = {k: counts[k] for k in per.get_column("_sid").to_list() if counts[k]}
        scrape = pl.int_range(pl.len()).over("_sid")
        if offsets:
            scrape = scrape + pl.col("_sid").replace_strict(offsets, default=0, return_dtype=pl.Int64)
        for k, n in per.iter_rows():
            counts[k] += n
        analyzed = [m for m in pairs.get_column("metric").unique().to_list() if known[m] is not None]
        part = good.filter(pl.col("metric").is_in(analyzed)).select(
            "_sid", "num", pl.col("ts_ms").cast(pl.Float64).alias("_t"), scrape.cast(pl.Int64).alias("scrape"))
        del good
        if part.height:
            n_blank += part.filter(sentinel | pl.col("num").is_null()).height
            all_ts = all_ts and part.get_column("_t").null_count() == 0
            max_scrape = max(max_scrape, int(part.get_column("scrape").max()))
        parts.append(part.rechunk())
    if not series:
        raise InputError(path, "expected dcgm-exporter sample lines such as 'DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",...} 42'")

    # metric vocabulary
    unknown = sorted(m for m, f in known.items() if f is None)
    if unknown:
        by_metric: dict[str, int] = {}
        for (m, _labels), k in series.items():
            by_metric[m] = by_metric.get(m, 0) + counts[k]
        for m in unknown:
            skipped.append(Skipped(str(path), f"series {m} ({by_metric[m]} samples)", "metric ridgeline does not analyze"))
    known = {m: f for m, f in known.items() if f is not None}
    if not known:  # issue 14: no metric ridgeline analyzes (a misspelled name crashed the scrape count)
        raise InputError(path, "expected DCGM metrics ridgeline analyzes (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_*, ...)",
                         actual=", ".join(unknown[:3]))
    if n_blank:
        opts.note(f"{path}: {n_blank} samples carried DCGM blank sentinels or NaN; kept as missing (null), not 0")
    n_scrapes = max_scrape + 1
    interval = opts.interval_s or DEFAULT_SCRAPE_INTERVAL_S
    if not all_ts:
        start = opts.start_time(str(path), "the exporter scrape")
        if n_scrapes > 1 and opts.interval_s is None:
            opts.note(f"{path}: {n_scrapes} scrapes without timestamps; assumed {interval:g} s apart "
                      "(dcgm-exporter collect interval; give --interval)")
        base_us = int(start.timestamp() * 1_000_000)
    else:
        base_us = 0
    # the series table: one row per analyzed series, its labels read once
    rows = [(k, m, labels) for (m, labels), k in series.items() if m in known]
    table = pl.DataFrame({"_sid": [r[0] for r in rows], "metric": [r[1] for r in rows], "labels": [r[2] for r in rows]},
                         schema={"_sid": pl.Int64, "metric": pl.String, "labels": pl.String})
    table = table.with_columns(
        pl.col("metric").replace_strict({m: f.canonical for m, f in known.items()}, return_dtype=pl.String).alias("field"),
        pl.col("metric").replace_strict({m: f.scale for m, f in known.items()}, return_dtype=pl.Float64).alias("scale"),
        pl.col("labels").fill_null("{}"),
    )
    host = _label(("hostname", "Hostname", "instance"))
    if opts.host is not None:
        host = pl.coalesce(host, pl.lit(opts.host))
    pod = _label(("exported_pod", "pod"))
    ns = _label(("exported_namespace", "namespace"))
    label_sets = table.select(pl.col("labels").unique(maintain_order=True)).with_columns(
        host.alias("host"),
        _label(("gpu",)).cast(pl.Int64, strict=False).alias("gpu"),
        _label(("UUID", "uuid", "gpu_uuid")).alias("uuid"),
        _label(("GPU_I_ID",)).alias("gpu_instance"),
        _label(("modelName", "model_name")).alias("model"),
        pl.when(pod.is_null() | (pod == "")).then(None)
        .when(ns.is_null() | (ns == "")).then(pod)
        .otherwise(ns + "/" + pod).alias("pod"),
    )
    label_sets = label_sets.with_columns(  # one Python call per distinct label set, not per row
        pl.col("labels").map_elements(workload_labels, return_dtype=pl.String).alias("workload"))
    # a series with no GPU label at all (no gpu, UUID or GPU_I_ID) belongs to no GPU: listed as
    # skipped, never a phantom GPU "?"
    no_gpu = label_sets.filter(pl.col("gpu").is_null() & pl.col("uuid").is_null() & pl.col("gpu_instance").is_null())
    if no_gpu.height:
        lost = table.join(no_gpu.select("labels"), on="labels", how="semi")
        lost = lost.with_columns(pl.Series("n", [counts[k] for k in lost.get_column("_sid").to_list()], dtype=pl.UInt32))
        lost = lost.group_by("metric", "labels").agg(pl.col("n").sum()).sort("metric", "labels")
        for metric, labels, n in lost.iter_rows():
            skipped.append(Skipped(str(path), f"series {metric} ({n} samples)",
                                   "no gpu, UUID or GPU_I_ID label: not attributable to a GPU"
                                   + (f" (labels {labels})" if labels != "{}" else "")))
        table = table.join(no_gpu.select("labels"), on="labels", how="anti", maintain_order="left")
    table = table.join(label_sets, on="labels", how="left", maintain_order="left").drop("metric", "labels")
    # Prometheus text: integer milliseconds; OpenMetrics: (fractional) seconds
    t = pl.col("_t")
    t_us = pl.when(t.abs() < 1e11).then(t * 1e6).otherwise(t * 1e3).round(0).cast(pl.Int64)
    ts = pl.when(pl.col("_t").is_not_null()).then(t_us).otherwise(
        pl.lit(base_us) + (pl.col("scrape") * interval * 1_000_000).round(0).cast(pl.Int64)
    )
    out = [part.join(table, on="_sid", how="inner", maintain_order="left").select(
        ts.cast(pl.Datetime("us", "UTC")).alias("timestamp"),
        "host", "gpu", "uuid", "gpu_instance", "model",
        pl.col("field"),
        pl.when(sentinel).then(None).otherwise(scaled(pl.col("num"), pl.col("scale"))).alias("value"),
        "pod",
        pl.col("workload").alias("labels"),
    ).rechunk() for part in parts]
    del parts
    out = pl.concat(out, rechunk=False)
    hosts = table.get_column("host").drop_nulls().unique().to_list()
    exporter_pods = [h for h in hosts if h.startswith("dcgm-exporter")]
    if exporter_pods:
        opts.note(f"{path}: host label {exporter_pods[0]!r} looks like the exporter pod, not the node")
    info = InputInfo(str(path), "dcgm-exporter", n_parsed)
    return out, info, skipped


def _read_lines(path: Path):
    """The file's lines as a polars column, split as ``str.splitlines()`` would (polars splits
    on \\n and \\r\\n; a file with other breaks, or not UTF-8, is split by Python)."""
    import polars as pl

    from ridgeline.parsers.text_chunks import line_chunks
    from ridgeline.parsers.text_chunks import odd_breaks as _odd_breaks

    for _piece in line_chunks(path):  # a line past MAX_LINE_BYTES is refused before the file is held whole
        pass
    with open(path, "rb") as fh:
        data = fh.read()
    odd = _odd_breaks(data)
    del data
    if not odd:
        try:
            return pl.read_lines(str(path), name="line")
        except Exception:  # noqa: BLE001 - not UTF-8: Python's decoding (errors replaced)
            pass
    text = path.read_text(encoding="utf-8-sig", errors="replace")  # -sig: a byte-order mark is no text
    return pl.DataFrame({"line": text.splitlines()}, schema={"line": pl.String})


def _split_samples(body):
    """Sample lines -> metric, labels, raw value, ts_ms (SAMPLE_RE's groups; all null when a
    line is no sample). The usual line (one ``{...}`` label set, single spaces after it, ASCII)
    is cut at its braces and spaces, the rest by the regex: the same groups, a fifth of the cost."""
    import polars as pl

    line = pl.col("line")
    ob, cb = line.str.find("{", literal=True), line.str.find("}", literal=True)
    rest = line.str.slice(cb + 1)
    fast = (line.str.contains(SAMPLE_RE) & (line.str.count_matches("{", literal=True) == 1)
            & (line.str.count_matches("}", literal=True) == 1) & (ob < cb)
            & (line.str.len_bytes() == line.str.len_chars())
            & ~rest.str.contains("\t", literal=True) & ~rest.str.contains("  ", literal=True))
    body = body.with_columns(fast.fill_null(False).alias("_fast"))
    quick = body.filter(pl.col("_fast")).with_columns(
        line.str.slice(0, ob).alias("metric"),
        line.str.slice(ob, cb - ob + 1).alias("labels"),
        rest.str.strip_chars_start(" ").str.split_exact(" ", 1).alias("_t"),
    ).with_columns(pl.col("_t").struct.field("field_0").alias("raw"),
                   pl.col("_t").struct.field("field_1").alias("ts_ms")).drop("_t")
    slow = body.filter(~pl.col("_fast")).with_columns(line.str.extract_groups(SAMPLE_RE).alias("g")).unnest("g")
    slow = slow.rename({"1": "metric", "2": "labels", "3": "raw", "4": "ts_ms"})
    cols = ["lineno", "line", "metric", "labels", "raw", "ts_ms"]
    return pl.concat([quick.select(cols), slow.select(cols)]).sort("lineno")
