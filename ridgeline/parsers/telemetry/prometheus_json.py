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
from ridgeline.parsers.telemetry.dcgm_fields import scaled
from ridgeline.parsers.telemetry.common import workload_labels
from ridgeline.result import InputInfo, Skipped


def _first(labels: dict, names) -> str | None:
    for n in names:
        v = labels.get(n)
        if v not in (None, ""):
            return v
    return None


def gpu_index(label) -> int | None:
    """A ``gpu`` label as an index: ASCII digits only (``"²"`` passes ``str.isdigit()``), else None."""
    import re

    from ridgeline.parsers.guard import MAX_GPU_INDEX

    if label is None or not re.fullmatch(r"[0-9]{1,9}", str(label)):
        return None
    value = int(label)
    return value if value <= MAX_GPU_INDEX else None


# seconds since 1970 a sample may carry (1970-01-01 .. 2200-01-01)
_MAX_TS_S = 7258118400.0


class _Skip(Exception):
    """A series or answer left out by a lenient read (already listed)."""


def check_series(path, where: str, series, *, strict: bool = True, skipped: list | None = None) -> tuple[dict, list]:
    """A result entry's labels and points, shape and types checked; InputError otherwise.

    ``where`` names the entry (``answer 0, series 3``). Points are ``[ts, "value"]`` with ts a
    number of seconds in 1970..2200 and the value a string or number. Lenient (``strict``
    False): a bad point is left out, a series with bad labels or shape is left out whole, each
    listed in ``skipped`` with its place and reason (then ``({}, [])`` for a series).
    """
    import math

    from ridgeline.parsers.guard import MAX_GPU_INDEX

    def refuse(err: InputError, item: str, then: str):
        if strict:
            raise err
        # the reason without the place (``item`` names it): alike items share a reason, so the
        # accounting's skipped_reasons and the "N more like this" entries group them
        what = str(err.expected).removeprefix(f"{item}: ")
        skipped.append(Skipped(str(path), item, what + (f", got {str(err.actual)[:60]!r}" if err.actual is not None
                                                          else "") + f"; {then}"))

    try:
        if not isinstance(series, dict):
            refuse(InputError(path, f"{where}: expected an object with 'metric' and 'values'" + _HINT,
                              actual=type(series).__name__), where, "series skipped")
            raise _Skip
        labels = series.get("metric", {})
        if labels is None:
            labels = {}
        if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
            refuse(InputError(path, f"{where}: expected 'metric' to be an object of string labels" + _HINT,
                              actual=str(labels)[:60]), where, "series skipped")
            raise _Skip
        gpu = labels.get("gpu")
        if gpu not in (None, "") and gpu_index(gpu) is None:
            refuse(InputError(path, f"{where}: expected a 'gpu' label 0..{MAX_GPU_INDEX} in ASCII digits" + _HINT,
                              actual=gpu), where, "series skipped")
            raise _Skip
        key = "values" if "values" in series else "value"
        raw = series.get(key)
        if raw is None:
            return labels, []
        points = raw if key == "values" else [raw]
        if not isinstance(points, list):
            refuse(InputError(path, f"{where}: expected '{key}' to be a list of [timestamp, \"value\"]" + _HINT,
                              actual=type(points).__name__), where, "series skipped")
            raise _Skip
    except _Skip:
        return {}, []
    good = []
    for i, point in enumerate(points):
        if point is None or point == []:  # an empty point is skipped, as before
            continue
        err = None
        if not isinstance(point, list) or len(point) != 2:
            err = InputError(path, f"{where}, point {i}: expected [timestamp, \"value\"]" + _HINT, actual=str(point)[:60])
        else:
            ts, value = point
            if isinstance(ts, bool) or not isinstance(ts, (int, float)):
                err = InputError(path, f"{where}, point {i}: expected a timestamp in seconds (a number)" + _HINT,
                                 actual=str(ts)[:60])
            elif not (isinstance(ts, int) or math.isfinite(ts)) or not 0 <= ts < _MAX_TS_S:
                err = InputError(path, f"{where}, point {i}: expected a timestamp between 1970 and 2200 in seconds"
                                 + _HINT, actual=ts)
            elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
                err = InputError(path, f"{where}, point {i}: expected a value string such as \"0.5\"" + _HINT,
                                 actual=str(value)[:60])
        if err is not None:
            refuse(err, f"{where}, point {i}", "point skipped")
            continue
        good.append(point)
    return labels, good


_HINT = " (--lenient skips such points and series)"


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
        pl.lit(gpu_index(gpu), pl.Int64).alias("gpu"),
        pl.lit(_first(labels, ("UUID", "uuid", "gpu_uuid")), pl.String).alias("uuid"),
        pl.lit(labels.get("GPU_I_ID"), pl.String).alias("gpu_instance"),
        pl.lit(_first(labels, ("modelName", "model_name")), pl.String).alias("model"),
        pl.lit(fd.canonical).alias("field"),
        scaled(pl.col("raw").cast(pl.Float64, strict=False), fd.scale).alias("value"),
        pl.lit(f"{ns}/{pod}" if pod and ns else pod, pl.String).alias("pod"),
        pl.lit(workload_labels(labels), pl.String).alias("labels"),
    )


def read_prometheus_json(path, *, opts):
    """Parse a saved Prometheus query answer. Returns (DataFrame, InputInfo, skipped)."""
    import polars as pl

    from ridgeline.parsers.telemetry.dcgm_fields import lookup_exporter

    from ridgeline.parsers.jsontext import JSONLimitError, loads, read_bytes

    path = Path(path)
    try:
        # a byte-order mark is no JSON; a lone surrogate in a label is kept as its escape's text;
        # size and nesting bounded as for every JSON input
        raw = read_bytes(path)
        doc = loads(raw)
    except JSONLimitError as err:
        raise InputError(path, f"expected Prometheus API JSON, got {err}") from None
    except UnicodeDecodeError as err:
        raise InputError(path, "expected UTF-8 Prometheus API JSON", line=raw.count(b"\n", 0, err.start) + 1,
                         actual=f"byte 0x{raw[err.start]:02x}") from None
    except json.JSONDecodeError as err:
        from ridgeline.parsers.plain import plain_reason

        raise InputError(path, f"expected Prometheus API JSON, got {plain_reason(err)}", line=err.lineno) from err
    answers = doc if isinstance(doc, list) else [doc]
    skipped: list[Skipped] = []
    strict = getattr(opts, "strict", True)

    def refuse(err: InputError, ai: int) -> None:
        """An answer of the wrong shape: an error, or (lenient) listed and left out."""
        if strict:
            raise err
        skipped.append(Skipped(str(path), f"answer {ai}", f"{err.expected}"
                               + (f", got {str(err.actual)[:60]!r}" if err.actual is not None else "")
                               + "; answer skipped"))

    frames = []
    n_points = 0
    for ai, ans in enumerate(answers):
        if not isinstance(ans, dict) or "data" not in ans:
            if isinstance(ans, dict) and ans.get("status") == "error":
                skipped.append(Skipped(str(path), f"answer {ai}", f"Prometheus error: {ans.get('error', '?')}"))
                continue
            refuse(InputError(path, "expected {'status': ..., 'data': {'resultType': ..., 'result': [...]}}",
                              actual=str(ans)[:60]), ai)
            continue
        data = ans["data"]
        if not isinstance(data, dict):
            refuse(InputError(path, f"answer {ai}: expected 'data' to be an object with resultType and result",
                              actual=type(data).__name__), ai)
            continue
        rtype = data.get("resultType")
        if rtype not in ("matrix", "vector"):
            refuse(InputError(path, "expected resultType 'matrix' or 'vector'", actual=rtype), ai)
            continue
        result = data.get("result", [])
        if not isinstance(result, list):
            refuse(InputError(path, f"answer {ai}: expected 'result' to be a list of series", actual=str(result)[:60]), ai)
            continue
        for si, series in enumerate(result):
            labels, points = check_series(path, f"answer {ai}, series {si}", series, strict=strict, skipped=skipped)
            name = labels.get("__name__")
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
        from ridgeline.parsers.telemetry.common import empty_frame

        out = empty_frame()
    else:
        out = pl.concat(frames)
    bad = out.filter(pl.col("value").is_null()).height
    if bad:
        opts.note(f"{path}: {bad} points were NaN/Inf or not numbers; kept as missing (null)")
    return out, InputInfo(str(path), "prometheus-json", n_points), skipped
