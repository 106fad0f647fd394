"""JSON document: NaN/inf to null, generated schema pages are current."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from ridgeline.pipeline import analyze_paths
from ridgeline.render.jsonout import TOP_LEVEL, clean, json_schema_markdown, render_json, to_document
from ridgeline.render.schemadoc import schema_markdown
from ridge_inputs import write_mini_ncu

ROOT = Path(__file__).resolve().parents[2]


def test_clean_replaces_non_finite_numbers():
    import datetime as dt

    assert clean({"a": float("nan"), "b": [float("inf"), 1.5], "c": (1, 2)}) == {"a": None, "b": [None, 1.5], "c": [1, 2]}
    assert clean(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)) == "2026-01-02T03:04:05+00:00"


def test_infinite_intensity_is_null_in_json(tmp_path):
    import polars as pl

    r = analyze_paths([write_mini_ncu(tmp_path / "p.csv")], run_rules=False)
    r.kernels = r.kernels.with_columns(pl.lit(math.inf).alias("intensity_dram"))
    text = render_json(r)
    assert "Infinity" not in text and "NaN" not in text
    doc = json.loads(text)
    assert all(k["intensity_dram"] is None for k in doc["kernels"])
    assert list(doc) == list(TOP_LEVEL)


def test_document_without_kernels_keeps_every_key():
    from ridgeline.result import AnalysisResult

    doc = to_document(AnalysisResult())
    assert list(doc) == list(TOP_LEVEL)
    assert doc["kernels"] == [] and doc["telemetry"] is None and doc["gpu"]["name"] is None


@pytest.mark.parametrize("page, make", [("schema.md", schema_markdown), ("json-schema.md", json_schema_markdown)])
def test_generated_pages_are_current(page, make):
    path = ROOT / "docs" / page
    assert path.exists(), f"docs/{page} missing: run python scripts/gen_schema_docs.py"
    assert path.read_text(encoding="utf-8") == make(), f"docs/{page} is stale: run python scripts/gen_schema_docs.py"


def test_generator_check_mode_passes():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_schema_docs.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_kernels_array_in_pieces_joins_to_polars_whole_array(monkeypatch):
    # issue 32 item 11: the kernels array is written a slice of launches at a time; the pieces
    # join to polars' own write_json of the whole table, cut only between records
    import polars as pl

    from ridgeline.render import jsonout

    df = pl.DataFrame({"kernel": ["a::b", 'q"u\nx', None, "z", "w"], "dur": [1.5, float("nan"), None, 2e-9, float("inf")]})
    monkeypatch.setattr(jsonout, "_RECORDS_PER_PIECE", 2)
    pieces = list(jsonout._records_json(df, ("kernel", "dur", "absent")))
    assert len(pieces) == 4 and all(p.startswith(",{") for p in pieces[1:3]) and pieces[-1] == "]"
    assert "".join(pieces) == df.with_columns(pl.lit(None).alias("absent")).write_json()
