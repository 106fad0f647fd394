"""Normalization shared by every telemetry reader: the empty TELEMETRY frame, wide -> long rows,
casting to the TELEMETRY schema, local times -> UTC, time-zone checks.

The format readers (dcgm_dmon, nvidia_smi, prometheus_json, ...) and the dispatcher
(:mod:`ridgeline.parsers.telemetry.reader`) both import this module; it imports neither of them.
"""

from __future__ import annotations

import re

from ridgeline.errors import UsageError
from ridgeline.result import path_label

# ------------------------------------------------------------------------------------------
def empty_frame():
    import polars as pl

    from ridgeline.analyzer.schema import TELEMETRY_COLUMNS, polars_schema

    return pl.DataFrame(schema=polars_schema(TELEMETRY_COLUMNS))


IDENTITY = ("timestamp", "host", "gpu", "gpu_instance", "uuid", "model")

# labels that name the GPU, the exporter or the metric, not the workload on the GPU: left out of
# the ``labels`` column (which ``--by pod|namespace|job|label=NAME`` groups by)
GPU_LABELS = frozenset({
    "__name__", "gpu", "UUID", "uuid", "gpu_uuid", "device", "modelName", "model_name", "pci_bus_id",
    "GPU_I_ID", "GPU_I_PROFILE", "Hostname", "hostname", "err_code", "err_msg",
})  # and every DCGM_FI_* label (driver versions, process names: facts about the GPU, not a workload)
# a value is runs of plain characters between escapes ("unrolled"): Python's re keeps no backtracking
# state per character, so a 50 MB label costs its own size, not 170 times it ((?:[^"\\]|\\.)* did)
_LABEL_PAIR_RE = re.compile(r'([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"([^"\\]*(?:\\.[^"\\]*)*)"')


def workload_labels(labels) -> str | None:
    """A series' labels (a dict, or Prometheus text ``{a="b",...}``) -> the ``labels`` column:
    the workload labels (all but :data:`GPU_LABELS` and ``DCGM_FI_*``) as ``name="value"`` pairs sorted by name and
    joined by ``,`` (values as written, escapes kept), or None when none is left. One canonical
    spelling, so the same label set read from text or JSON compares equal."""
    if labels is None:
        return None
    if isinstance(labels, str):
        pairs = _LABEL_PAIR_RE.findall(labels)
    else:
        pairs = [(k, str(v).replace("\\", "\\\\").replace('"', '\\"')) for k, v in labels.items()]
    kept = sorted((k, v) for k, v in pairs if k not in GPU_LABELS and not k.startswith("DCGM_FI_"))
    return ",".join(f'{k}="{v}"' for k, v in kept) or None


def pod_of_labels(labels):
    """The TELEMETRY ``pod`` column (``namespace/pod``) from a ``labels`` column expression, by
    the exporter readers' rule: ``exported_pod`` | ``pod``, with ``exported_namespace`` |
    ``namespace`` when there is one (the ``exported_*`` form first)."""
    import polars as pl

    def first(names):
        found = [labels.str.extract(r'(?:^|,)' + n + r'="((?:[^"\\]|\\.)*)"', 1) for n in names]
        return pl.coalesce([pl.when(x == "").then(None).otherwise(x) for x in found])

    pod, ns = first(("exported_pod", "pod")), first(("exported_namespace", "namespace"))
    return pl.when(ns.is_null()).then(pod).otherwise(ns + "/" + pod)


def wide_to_long_rows(wide):
    """A reader's wide frame (identity columns + one column per canonical field) -> long rows
    (identity, field, value), field by field in column order (Data- or LazyFrame)."""
    import polars as pl

    cols = wide.collect_schema().names() if isinstance(wide, pl.LazyFrame) else wide.columns
    ident = [c for c in cols if c in IDENTITY]
    fields = [c for c in cols if c not in IDENTITY]
    return pl.concat([wide.select(*ident, pl.lit(f).alias("field"), pl.col(f).alias("value")) for f in fields])


def finish(frame, *, source: str):
    """Cast a parser's frame (Data- or LazyFrame) to the TELEMETRY schema, in schema order.

    Missing identity columns become null; ``source`` is filled; values that are NaN, infinite
    or DCGM blank sentinels become null (never 0).
    """
    import polars as pl

    from ridgeline.analyzer.schema import TELEMETRY_COLUMNS, polars_schema
    from ridgeline.parsers.telemetry.dcgm_fields import FP64_BLANK_MIN

    schema = polars_schema(TELEMETRY_COLUMNS)
    names = frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns
    exprs = []
    for col, dtype in schema.items():
        if col == "source":
            exprs.append(pl.lit(None if source is None else path_label(source), dtype=pl.String).alias("source"))
        elif col == "value":
            v = pl.col("value").cast(pl.Float64)
            exprs.append(
                pl.when(v.is_nan() | v.is_infinite() | (v.abs() >= FP64_BLANK_MIN))
                .then(None).otherwise(v).alias("value")
            )
        elif col in names:
            exprs.append(pl.col(col).cast(dtype))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(col))
    return frame.select(exprs)


def parse_local_times(expr, *, tz: str | None, fmt: str | None = None):
    """Naive local time strings/datetimes -> UTC, via ``tz`` (IANA name; None = UTC)."""
    import polars as pl

    e = expr.str.to_datetime(fmt, time_unit="us", strict=False) if fmt is not None else expr
    return e.dt.replace_time_zone(tz or "UTC", ambiguous="earliest", non_existent="null") \
        .dt.convert_time_zone("UTC").cast(pl.Datetime("us", "UTC"))


def check_tz(tz: str | None) -> None:
    if tz is None:
        return
    try:
        import zoneinfo

        zoneinfo.ZoneInfo(tz)
    except Exception as err:  # noqa: BLE001
        raise UsageError(f"--tz {tz!r}: not a known IANA time zone (e.g. Europe/Berlin, UTC)") from err


