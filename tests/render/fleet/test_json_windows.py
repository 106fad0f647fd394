"""The telemetry windows of the JSON document are written by polars, one record per line (issue
21: a long pull's document must take memory in proportion to its windows, without a Python
dict per window). The parsed document must equal :func:`to_document`'s, value for value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "telemetry"


def _result(path: Path):
    from ridgeline.pipeline import reduce_telemetry
    from ridgeline.result import AnalysisResult

    counts: dict = {}
    _lf, inputs, skipped, windows = reduce_telemetry([str(path)], window="1m", sample_counts=counts)
    return AnalysisResult(inputs=inputs, windows=windows, skipped=skipped, sample_counts=counts)


@pytest.mark.parametrize("name", ["long.csv", "hive", "dmon-v24-mig.txt", "prometheus-range.json"])
def test_windows_parse_back_as_to_document_writes_them(name):
    from ridgeline.render.jsonout import clean, render_json, to_document

    result = _result(FIXTURES / name)
    n = result.windows.height
    assert n >= 1
    text = render_json(result)
    doc = json.loads(text)
    assert doc == json.loads(json.dumps(clean(to_document(result)), allow_nan=False))
    assert len(doc["telemetry"]["windows"]) == n
    # one line per window: n lines of the text are the records, in order
    lines = [ln.rstrip(",") for ln in text.splitlines() if ln.startswith('{"')]
    assert [json.loads(ln) for ln in lines] == doc["telemetry"]["windows"]


def test_nan_and_infinite_window_values_are_null():
    import polars as pl

    from ridgeline.render.jsonout import render_json

    result = _result(FIXTURES / "long.csv")
    cols = [c for c, t in result.windows.schema.items() if t == pl.Float64]
    result.windows = result.windows.with_columns(pl.lit(float("nan")).alias(cols[0]),
                                                 pl.lit(float("inf")).alias(cols[1]))
    doc = json.loads(render_json(result))
    assert all(w[cols[0]] is None and w[cols[1]] is None for w in doc["telemetry"]["windows"])
    assert doc["telemetry"]["windows"][0]["window_start"].endswith("+00:00")  # ISO 8601, as clean() writes it
