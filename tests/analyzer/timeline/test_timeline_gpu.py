"""--gpu on a run of timelines alone gives the run its GPU and its roofs, one fact every line reads
(issue 32 item 7: "GPU: A100 SXM 80GB" came with "Roofs: none (no measured peaks, no catalogue
match: pass --gpu NAME)"); a family name picks the variant the trace records; a trace naming
another GPU is an error, as for profiles (ridgeline.analyzer.timeline.gpu)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

import comm_traces as C
from ridgeline.errors import UsageError
from ridgeline.pipeline import analyze_paths


def _trace(tmp_path, device_name):
    doc = C.trace([C.kernel(C.GEMM, 100 * i, 50) for i in range(4)])
    doc["deviceProperties"] = [{"id": 0, "name": device_name}] if device_name else []
    return C.write(tmp_path / "t.json", doc)


@pytest.mark.parametrize("recorded,gpu,want", [
    ("NVIDIA A100-SXM4-80GB", "A100", "A100 SXM 80GB"),
    ("NVIDIA A100-SXM4-40GB", "A100", "A100 SXM 40GB"),  # the family's variant the trace records
    (None, "H100 SXM", "H100 SXM"),  # a trace naming no device takes --gpu's
])
def test_gpu_gives_the_timeline_run_its_roofs(tmp_path, recorded, gpu, want):
    from ridgeline.analyzer.kernels.gpus import lookup

    res = analyze_paths([_trace(tmp_path, recorded)], gpu=gpu)
    entry = lookup(want)[0]
    assert res.gpu_name == want
    bw = [r for r in res.roofs if r.kind == "bandwidth"]
    assert [r.value for r in bw] == [entry.dram_bw_bytes_per_s]
    assert {r.precision: r.value for r in res.roofs if r.kind == "compute"} == \
        {p: entry.peak(p) for p in {r.precision for r in res.roofs if r.kind == "compute"}}
    assert all(want in r.detail for r in res.roofs)


def test_the_terminal_never_says_no_roofs_after_naming_the_gpu(tmp_path):
    from ridgeline.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["analyze", _trace(tmp_path, "NVIDIA A100-SXM4-80GB"), "--gpu", "A100"])
    text = out.getvalue()
    assert "GPU: A100 SXM 80GB" in text and "Roofs: none" not in text and "DRAM bandwidth" in text
    with contextlib.redirect_stdout(out := io.StringIO()), pytest.raises(SystemExit):
        main(["analyze", _trace(tmp_path, "NVIDIA A100-SXM4-80GB"), "--gpu", "A100", "--format", "json"])
    doc = json.loads(out.getvalue())
    assert doc["gpu"]["name"] == "A100 SXM 80GB" and doc["roofs"]
    assert doc["gpu"]["dram_bw_bytes_per_s"] == [r for r in doc["roofs"] if r["kind"] == "bandwidth"][0]["value"]


def test_gpu_naming_another_gpu_than_the_trace_is_an_error(tmp_path):
    with pytest.raises(UsageError, match=r"contradicts the trace, which names its device 'NVIDIA A100-SXM4-80GB'"):
        analyze_paths([_trace(tmp_path, "NVIDIA A100-SXM4-80GB")], gpu="H100 SXM")


def test_without_gpu_a_timeline_run_claims_no_roofs(tmp_path):
    res = analyze_paths([_trace(tmp_path, "NVIDIA A100-SXM4-80GB")])
    assert res.gpu_name is None and not res.roofs


def test_every_view_prints_the_roofs_the_json_holds(tmp_path):
    from view_consistency import assert_views_match_json, views_of

    path = _trace(tmp_path, "NVIDIA A100-SXM4-40GB")
    res = analyze_paths([path], gpu="A100")
    doc, texts = views_of(res, [path], tmp_path)
    assert doc["roofs"] and doc["gpu"]["name"] == "A100 SXM 40GB"
    assert_views_match_json(doc, texts)
    assert all("Roofs: none" not in t for t in texts.values())
