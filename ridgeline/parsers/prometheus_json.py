"""Prometheus HTTP API answers (``/api/v1/query_range`` matrix, ``/api/v1/query`` vector)
saved as JSON -> TELEMETRY rows.

Shape: ``{"status": "success", "data": {"resultType": "matrix", "result": [{"metric":
{"__name__": ..., labels...}, "values": [[1795339767.5, "0.03"], ...]}]}}``; a vector has
``"value": [ts, "v"]`` per series. Timestamps are float seconds, values are strings
(``"NaN"``, ``"+Inf"`` -> null). A series without ``__name__`` (a function such as
``rate()`` or ``avg by`` was applied) cannot be mapped to a field and is listed in
``skipped``. Several answers may be concatenated in a JSON list. Labels are read with the
same drift rules as the exporter (``hostname``/``Hostname``/``instance``, ``UUID``,
``GPU_I_ID``, ``modelName``, ``exported_pod``/``pod``).
"""

from __future__ import annotations

import json
from pathlib import Path

from ridgeline.errors import InputError
from ridgeline.parsers.dcgm_fields import scaled
from ridgeline.result import InputInfo, Skipped


def _first(labels: dict, names) -> str | None:
    for n in names:
        v = labels.get(n)
        if v not in (None, ""):
            return v
    return None


def series_frame(labels: dict, points, fd, *, default_host: str | None = None):
    """One Prometheus series (``metric`` labels, ``[[ts, "v"], ...]``) of field ``fd`` -> TELEMETRY
    long rows (without ``source``). Shared with the live source (:mod:`ridgeline.sources.prometheus`)."""
    import polars as pl

    ts, vals = zip(*points)
    host = _first(labels, ("hostname", "Hostname", "instance")) or default_host
    pod = _first(labels, ("exported_pod", "pod"))
    ns = _first(labels, ("exported_namespace", "namespace"))
    gpu = labels.get("gpu")
    return pl.DataFrame({
        "t": pl.Series(ts, dtype=pl.Float64),
        "raw": pl.Series([str(v) for v in vals], dtype=pl.String),
    }).select(
        (pl.col("t") * 1e6).round(0).cast(pl.Int64).cast(pl.Datetime("us", "UTC")).alias("timestamp"),
        pl.lit(host, pl.String).alias("host"),
        pl.lit(int(gpu) if gpu is not None and str(gpu).isdigit() else None, pl.Int64).alias("gpu"),
        pl.lit(_first(labels, ("UUID", "uuid", "gpu_uuid")), pl.String).alias("uuid"),
        pl.lit(labels.get("GPU_I_ID"), pl.String).alias("gpu_instance"),
        pl.lit(_first(labels, ("modelName", "model_name")), pl.String).alias("model"),
        pl.lit(fd.canonical).alias("field"),
        scaled(pl.col("raw").cast(pl.Float64, strict=False), fd.scale).alias("value"),
        pl.lit(f"{ns}/{pod}" if pod and ns else pod, pl.String).alias("pod"),
    )


def read_prometheus_json(path, *, opts):
    """Parse a saved Prometheus query answer. Returns (DataFrame, InputInfo, skipped)."""
    import polars as pl

    from ridgeline.parsers.dcgm_fields import lookup_exporter

    path = Path(path)
    raw = path.read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise InputError(path, "expected UTF-8 Prometheus API JSON", line=raw.count(b"\n", 0, err.start) + 1,
                         actual=f"byte 0x{raw[err.start]:02x}") from None
    except json.JSONDecodeError as err:
        raise InputError(path, "expected Prometheus API JSON", line=err.lineno, actual=err.msg) from err
    answers = doc if isinstance(doc, list) else [doc]
    skipped: list[Skipped] = []
    frames = []
    n_points = 0
    for ai, ans in enumerate(answers):
        if not isinstance(ans, dict) or "data" not in ans:
            if isinstance(ans, dict) and ans.get("status") == "error":
                skipped.append(Skipped(str(path), f"answer {ai}", f"Prometheus error: {ans.get('error', '?')}"))
                continue
            raise InputError(path, "expected {'status': ..., 'data': {'resultType': ..., 'result': [...]}}",
                             actual=str(ans)[:60])
        data = ans["data"]
        rtype = data.get("resultType")
        if rtype not in ("matrix", "vector"):
            raise InputError(path, "expected resultType 'matrix' or 'vector'", actual=rtype)
        for si, series in enumerate(data.get("result", [])):
            labels = series.get("metric", {}) or {}
            name = labels.get("__name__")
            points = series.get("values") if rtype == "matrix" else [series.get("value")]
            points = [p for p in (points or []) if p]
            n_points += len(points)
            if name is None:
                skipped.append(Skipped(str(path), f"series {si} ({len(points)} points)",
                                       "no __name__ label (a function was applied); cannot tell which field it is"))
                continue
            fd = lookup_exporter(name)
            if fd is None:
                skipped.append(Skipped(str(path), f"series {name} ({len(points)} points)", "metric ridgeline does not analyze"))
                continue
            if not points:
                continue
            frames.append(series_frame(labels, points, fd, default_host=opts.host))
    if not frames:
        if n_points == 0 and not skipped:
            raise InputError(path, "expected at least one series in data.result")
        from ridgeline.parsers.telemetry_common import empty_frame

        out = empty_frame()
    else:
        out = pl.concat(frames)
    bad = out.filter(pl.col("value").is_null()).height
    if bad:
        opts.note(f"{path}: {bad} points were NaN/Inf or not numbers; kept as missing (null)")
    return out, InputInfo(str(path), "prometheus-json", n_points), skipped
