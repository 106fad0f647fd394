"""The latency split reads the same in every view: JSON, terminal, Markdown, HTML.

The decode fixture (fixtures/scenarios/decode-b8-h100, synthetic: fixtures/MANIFEST.md) holds
launch-bound launches (norms, RoPE, KV writes at ~2.6 us); a copy with those launches made
20x longer (past the 20 us threshold, same work) holds stall-bound ones. Shares are computed here
from the JSON document's own records.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.kernels.roofline import summarize
from ridgeline.pipeline import analyze_paths
from ridgeline.render.html import render_html
from ridgeline.render.jsonout import render_json
from ridgeline.render.markdown import render_markdown
from ridgeline.render.terminal import format_result

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"


@pytest.fixture(scope="module")
def decode():
    return analyze_paths([FIXTURE])


def _shares(doc) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in doc["kernels"]:
        word = k["latency_kind"] if k["bound"] == "latency" else k["bound"]
        out[word] = out.get(word, 0.0) + k["duration_s"]
    total = sum(out.values())
    return {b: t / total for b, t in out.items()}


def _stretched(result):
    """The same run with its latency-bound launches 20x longer: past the threshold, stall-bound."""
    from ridgeline.analyzer.kernels.latency import LAUNCH_BOUND_MAX_S

    new = copy.copy(result)
    lat = pl.col("bound") == "latency"
    k = result.kernels.with_columns(
        pl.when(lat).then(pl.col("duration_s") * 20).otherwise(pl.col("duration_s")).alias("duration_s"))
    k = k.with_columns(pl.when(lat).then(pl.when(pl.col("duration_s") <= LAUNCH_BOUND_MAX_S).then(pl.lit("launch"))
                                         .otherwise(pl.lit("stall"))).alias("latency_kind"))
    new.kernels = k
    new.summary = summarize(k)
    new.total_gpu_time_s = float(k["duration_s"].sum())
    new.findings = []
    return new


@pytest.mark.parametrize("stretch", [False, True])
def test_every_view_shows_the_same_split(decode, stretch):
    result = _stretched(decode) if stretch else decode
    doc = json.loads(render_json(result))
    shares = _shares(doc)
    kind = "stall" if stretch else "launch"
    assert shares.get(kind, 0) > 0.05 and ("launch" if stretch else "stall") not in shares
    assert all(k["latency_kind"] is None for k in doc["kernels"] if k["bound"] != "latency")
    pct = f"{shares[kind]:.0%}"
    terminal = " ".join(format_result(result).split())
    assert f"{pct} {kind}-bound" in terminal
    pct1 = f"{shares[kind] * 100:.1f}%"  # the report pages print one decimal
    assert f"{kind}-bound {pct1}" in render_markdown(result)
    assert f"{kind}-bound: <b>{pct1}</b>" in render_html(result)
    # the kernel tables say the kind, never the bare class
    assert f'<td class="bound-{kind}">{kind}</td>' in render_html(result)
    where = terminal.split("Where the time goes:", 1)[1].split("Findings", 1)[0]
    assert "latency-bound" not in where  # the class is shown by its kinds
