"""Op groups on the roofline, on a small SYNTHETIC trace (figures by hand) and on the shared real
Kineto traces (properties: every kernel counted once, coverage in [0, 1])."""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.analyzer.kernels.gpus import lookup
from ridgeline.analyzer.ops.groups import coverage, device_gpus, op_groups
from ridgeline.parsers.timeline.reader import read_timeline
from tests.analyzer.ops.op_traces import linear_trace, write

KINETO = Path(__file__).resolve().parents[4] / "shared" / "samples" / "kineto"


def test_groups_by_hand_on_an_a100(tmp_path):
    tl = read_timeline(write(tmp_path, linear_trace()), host_calls="sync")
    g = op_groups(tl.activities, tl.api, device_gpus(tl.devices))
    rows = {r["op"]: r for r in g.to_dicts()}
    a100 = lookup("NVIDIA A100-SXM4-80GB")[0]
    addmm = rows["aten::addmm"]
    flops, nbytes = 2 * 4096 * 512 * 1024, 2 * (512 + 4096 * 1024 + 1024 * 512 + 4096 * 512)
    assert (addmm["flops"], addmm["bytes"], addmm["precision"]) == (flops, nbytes, "fp16_tensor")
    assert addmm["gpu_time_s"] == pytest.approx(15e-6)
    roof = max(flops / a100.peak("fp16_tensor"), nbytes / a100.dram_bw_bytes_per_s)
    assert addmm["roof_time_s"] == pytest.approx(roof) and addmm["bound"] == "compute"
    assert addmm["roof_fraction"] == pytest.approx(roof / 15e-6)
    assert addmm["saving_s"] == pytest.approx(15e-6 - roof)
    assert addmm["achieved_flops_per_s"] == pytest.approx(flops / 15e-6)
    bmm = rows["aten::bmm"]
    assert bmm["precision"] == "fp32" and bmm["flops"] == 2 * 8 * 128 * 256 * 64
    stray = rows[None]
    assert stray["model"] is None and stray["roof_time_s"] is None and stray["gpu_time_s"] == pytest.approx(3e-6)
    cov = coverage(g).row(0, named=True)
    assert cov["model_coverage"] == pytest.approx(19 / 22)
    assert g["share"].sum() == pytest.approx(1.0)


def test_no_roof_without_a_known_gpu(tmp_path):
    tl = read_timeline(write(tmp_path, linear_trace(gpu="Mystery GPU 9000")), host_calls="sync")
    g = op_groups(tl.activities, tl.api, device_gpus(tl.devices))
    assert g["flops"].null_count() < g.height  # modelled all the same
    assert g["roof_time_s"].null_count() == g.height


@pytest.mark.parametrize("name", ["hta-a100sxm80-16rank-negative-queue-rank0.json.gz",
                                  "tracelens-b200x8-vllm-eager_trace.json.gz",
                                  "hta-mi250-rocm6.2-minitoy-train-radeon-names.json.gz"])
def test_real_traces_count_every_kernel_once(name):
    path = KINETO / name
    if not path.exists():
        pytest.skip("shared samples absent")
    tl = read_timeline(path, host_calls="sync")
    g = op_groups(tl.activities, tl.api, device_gpus(tl.devices))
    kernels = tl.activities.filter(tl.activities["kind"] == "kernel")
    assert g["kernels"].sum() == kernels.height  # each kernel in exactly one group: parents never counted
    cov = coverage(g)
    assert cov["model_coverage"].is_between(0, 1).all()
    busy = (kernels["end_ns"] - kernels["start_ns"]).sum() / 1e9
    assert g["gpu_time_s"].sum() <= busy + 1e-9  # unions: never more than the kernels' summed time


def test_json_and_gpu_option_place_the_groups(tmp_path):
    """In process, as the CLI runs: ``timeline.op_groups`` in the JSON, and ``--gpu`` placing a trace
    whose device the catalogue does not know."""
    import json

    from ridgeline.pipeline import analyze_paths
    from ridgeline.render.jsonout import to_document

    path = write(tmp_path, linear_trace(gpu="Mystery GPU 9000"))
    doc = json.loads(json.dumps(to_document(analyze_paths([path], gpu="H100 SXM"))))
    groups = {g["op"]: g for g in doc["timeline"]["op_groups"]}
    h100 = lookup("H100 SXM")[0]
    flops = 2 * 4096 * 512 * 1024
    nbytes = 2 * (512 + 4096 * 1024 + 1024 * 512 + 4096 * 512)
    roof = max(flops / h100.peak("fp16_tensor"), nbytes / h100.dram_bw_bytes_per_s)
    assert groups["aten::addmm"]["roof_time_s"] == pytest.approx(roof)
    assert doc["timeline"]["op_coverage"][0]["model_coverage"] == pytest.approx(19 / 22)


def test_terminal_table_names_the_groups_and_the_coverage(tmp_path):
    from types import SimpleNamespace

    from ridgeline.render.timeline.ops import op_lines

    tl = read_timeline(write(tmp_path, linear_trace()), host_calls="sync")
    g = op_groups(tl.activities, tl.api, device_gpus(tl.devices))
    lines = op_lines(SimpleNamespace(op_groups=g.with_columns(source=pl_lit("t.json"))))
    text = "\n".join(lines)
    assert "86.4% of" in text  # 19 of 22 us modelled
    assert "addmm [[512],[4096,1024]," in text and ",[],[]" not in text and "BF16 TC" in text
    assert all(len(x) <= 80 for x in lines)


def pl_lit(v):
    import polars as pl

    return pl.lit(v)
