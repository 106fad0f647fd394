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
``exported_pod`` | ``pod`` (with ``exported_namespace`` | ``namespace``).

Values: DCGM blank sentinels (int64 >= 0x7ffffffffffffff0, e.g. ``9223372036854775794``;
doubles >= 1.40737488355328e14) and NaN become null. Lines whose value is not a number
(``... ERROR - FAILED TO CONVERT TO STRING``) are listed in ``skipped`` with their line
number. Metrics ridgeline does not analyze are listed once per name.
"""

from __future__ import annotations

import re
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.dcgm_fields import scaled
from ridgeline.result import InputInfo, Skipped

SAMPLE_RE = r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?[ \t]+([^ \t]+)(?:[ \t]+(-?[0-9]+(?:\.[0-9]+)?))?[ \t]*$"
DEFAULT_SCRAPE_INTERVAL_S = 30.0
_NAME_RE = re.compile(r"^(dcgm_|DCGM_)[A-Za-z0-9_]*(\{.*\})?\s+\S+")


def looks_like(lines: list[str]) -> bool:
    """Head lines of an exporter scrape: # HELP/# TYPE of DCGM metrics, or DCGM sample lines."""
    for ln in lines:
        s = ln.strip()
        if not s:
            continue
        if s.startswith("# HELP ") or s.startswith("# TYPE "):
            return True
        if s.startswith("#"):
            continue
        return bool(_NAME_RE.match(s))
    return False


def _label(names: tuple[str, ...]):
    import polars as pl

    exprs = [pl.col("labels").str.extract(r'[{,]\s*' + n + r'="([^"]*)"', 1) for n in names]
    return pl.coalesce(exprs) if len(exprs) > 1 else exprs[0]


def read_exporter(path, *, opts):
    """Parse one or many dcgm-exporter scrapes. Returns (DataFrame, InputInfo, skipped)."""
    import polars as pl

    from ridgeline.parsers.dcgm_fields import FP64_BLANK_MIN, lookup_exporter

    path = Path(path)
    lines = _read_lines(path)
    lines = lines.with_row_index("lineno", offset=1).with_columns(pl.col("line").str.strip_chars())
    body = lines.filter((pl.col("line") != "") & ~pl.col("line").str.starts_with("#"))
    parsed = _split_samples(body)
    skipped: list[Skipped] = []

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
    if good.height == 0:
        raise InputError(path, "expected dcgm-exporter sample lines such as 'DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",...} 42'")

    # metric vocabulary
    metrics = good.get_column("metric").unique().to_list()
    mapping = {m: lookup_exporter(m) for m in metrics}
    unknown = sorted(m for m, f in mapping.items() if f is None)
    if unknown:
        counts = dict(good.filter(pl.col("metric").is_in(unknown)).group_by("metric").len().iter_rows())
        for m in unknown:
            skipped.append(Skipped(str(path), f"series {m} ({counts[m]} samples)", "metric ridgeline does not analyze"))
    known = {m: f for m, f in mapping.items() if f is not None}
    if not known:  # issue 14: no metric ridgeline analyzes (a misspelled name crashed the scrape count)
        raise InputError(path, "expected DCGM metrics ridgeline analyzes (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_*, ...)",
                         actual=", ".join(unknown[:3]))
    good = good.filter(pl.col("metric").is_in(list(known)))
    good = good.with_columns(
        pl.col("metric").replace_strict({m: f.canonical for m, f in known.items()}, return_dtype=pl.String).alias("field"),
        pl.col("metric").replace_strict({m: f.scale for m, f in known.items()}, return_dtype=pl.Float64).alias("scale"),
        pl.col("labels").fill_null("{}"),
    )
    sentinel = (pl.col("num").abs() >= FP64_BLANK_MIN) | pl.col("num").is_nan() | pl.col("num").is_infinite()
    n_blank = good.filter(sentinel | pl.col("num").is_null()).height
    if n_blank:
        opts.note(f"{path}: {n_blank} samples carried DCGM blank sentinels or NaN; kept as missing (null), not 0")

    # scrape index: k-th time a series (metric + labels) appears
    good = good.with_columns(pl.int_range(pl.len()).over("metric", "labels").alias("scrape"))
    has_ts = good.get_column("ts_ms").is_not_null()
    n_scrapes = int(good.get_column("scrape").max()) + 1
    interval = opts.interval_s or DEFAULT_SCRAPE_INTERVAL_S
    if not has_ts.all():
        start = opts.start_time(str(path), "the exporter scrape")
        if n_scrapes > 1 and opts.interval_s is None:
            opts.note(f"{path}: {n_scrapes} scrapes without timestamps; assumed {interval:g} s apart "
                      "(dcgm-exporter collect interval; give --interval)")
        base_us = int(start.timestamp() * 1_000_000)
    else:
        base_us = 0
    # Prometheus text: integer milliseconds; OpenMetrics: (fractional) seconds
    t = pl.col("ts_ms").cast(pl.Float64)
    t_us = pl.when(t.abs() < 1e11).then(t * 1e6).otherwise(t * 1e3).round(0).cast(pl.Int64)
    ts = pl.when(pl.col("ts_ms").is_not_null()).then(t_us).otherwise(
        pl.lit(base_us) + (pl.col("scrape") * interval * 1_000_000).round(0).cast(pl.Int64)
    )
    host = _label(("hostname", "Hostname", "instance"))
    if opts.host is not None:
        host = pl.coalesce(host, pl.lit(opts.host))
    pod = _label(("exported_pod", "pod"))
    ns = _label(("exported_namespace", "namespace"))
    # labels are read once per distinct label set (a few per GPU), not once per sample line
    label_sets = good.select(pl.col("labels").unique()).with_columns(
        host.alias("host"),
        _label(("gpu",)).cast(pl.Int64, strict=False).alias("gpu"),
        _label(("UUID", "uuid", "gpu_uuid")).alias("uuid"),
        _label(("GPU_I_ID",)).alias("gpu_instance"),
        _label(("modelName", "model_name")).alias("model"),
        pl.when(pod.is_null() | (pod == "")).then(None)
        .when(ns.is_null() | (ns == "")).then(pod)
        .otherwise(ns + "/" + pod).alias("pod"),
    )
    # a series with no GPU label at all (no gpu, UUID or GPU_I_ID) belongs to no GPU: listed as
    # skipped, never a phantom GPU "?"
    no_gpu = label_sets.filter(pl.col("gpu").is_null() & pl.col("uuid").is_null() & pl.col("gpu_instance").is_null())
    if no_gpu.height:
        lost = good.join(no_gpu.select("labels"), on="labels", how="semi")
        for metric, labels, n in lost.group_by("metric", "labels").len().sort("metric", "labels").iter_rows():
            skipped.append(Skipped(str(path), f"series {metric} ({n} samples)",
                                   "no gpu, UUID or GPU_I_ID label: not attributable to a GPU"
                                   + (f" (labels {labels})" if labels != "{}" else "")))
        good = good.join(no_gpu.select("labels"), on="labels", how="anti")
        label_sets = label_sets.join(no_gpu.select("labels"), on="labels", how="anti")
    out = good.join(label_sets, on="labels", how="left", maintain_order="left").select(
        ts.cast(pl.Datetime("us", "UTC")).alias("timestamp"),
        "host", "gpu", "uuid", "gpu_instance", "model",
        pl.col("field"),
        pl.when(sentinel).then(None).otherwise(scaled(pl.col("num"), pl.col("scale"))).alias("value"),
        "pod",
    )
    hosts = out.get_column("host").drop_nulls().unique().to_list()
    exporter_pods = [h for h in hosts if h.startswith("dcgm-exporter")]
    if exporter_pods:
        opts.note(f"{path}: host label {exporter_pods[0]!r} looks like the exporter pod, not the node")
    info = InputInfo(str(path), "dcgm-exporter", parsed.height)
    return out, info, skipped


def _read_lines(path: Path):
    """The file's lines as a polars column, split as ``str.splitlines()`` would (polars splits
    on \\n and \\r\\n; a file with other breaks, or not UTF-8, is split by Python)."""
    import polars as pl

    from ridgeline.parsers.dcgm_dmon import _odd_breaks

    with open(path, "rb") as fh:
        data = fh.read()
    odd = _odd_breaks(data)
    del data
    if not odd:
        try:
            return pl.read_lines(str(path), name="line")
        except Exception:  # noqa: BLE001 - not UTF-8: Python's decoding (errors replaced)
            pass
    text = path.read_text(encoding="utf-8", errors="replace")
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
