"""ridgeline.synth, the scenario generator as a library.

Expected values are the physics of fixtures/README.md, computed here: decode GEMM intensity ~
batch (bf16) and ~ 2 x batch (fp8), the bf16 ridge on H100 989e12 / 3.35e12 = 295 FLOP/B, decode
attention 4 FLOP/B; telemetry behaviours map to the telemetry rules that describe them.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ridgeline import synth
from ridgeline.errors import UsageError
from ridgeline.pipeline import analyze_paths
from ridgeline.testing import assert_kernel, kernel_table

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "fixtures" / "scenarios"
H100_RIDGE = 989e12 / 3.35e12


def _analyze(step: synth.Step, tmp_path: Path, name: str = "p.ncu-raw.csv", **kw):
    return analyze_paths([step.write_ncu(tmp_path / name, **kw)])


def test_decode_step_is_the_committed_scenario_but_for_its_header():
    """fixtures/generate.py drives the library: the same workload gives the same launches, byte for byte."""
    text = synth.decode_step(batch=8, gpu="H100", context=1024).ncu_text()
    committed = (SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv").read_text(encoding="utf-8")
    ours, theirs = text.splitlines(), committed.splitlines()
    assert ours[0].startswith("SYNTHETIC") and theirs[0].startswith("SYNTHETIC")
    assert "ridgeline.synth" in ours[0] and "fixtures/generate.py" in theirs[0]
    assert ours[1] == theirs[1] and ours[3:] == theirs[3:]  # line 3: the (synthetic) ncu command line
    assert len(ours) == len(theirs) > 300


# batch >= 8: below it, Hopper's skinny GEMM tiles pad (and ncu counts) 8 token rows
@pytest.mark.parametrize("batch, weights, per_batch", [(8, "bf16", 1), (32, "bf16", 1), (8, "fp8", 2)])
def test_decode_gemm_intensity_follows_batch(tmp_path, batch, weights, per_batch):
    result = _analyze(synth.decode_step(batch=batch, weights=weights), tmp_path)
    table = kernel_table(result)
    gemms = table.filter(pl.col("family") == "gemm", pl.col("precision") == ("fp8_tensor" if weights == "fp8"
                                                                             else "fp16_tensor"))
    assert gemms.height >= 4
    for x in gemms["intensity_dram"]:
        assert x == pytest.approx(per_batch * batch, rel=0.15)
    assert_kernel(result, kernel="flash_fwd_splitkv_kernel", bound="memory", min_intensity=3.8, max_intensity=4.2)


def test_gemms_cross_the_ridge_between_batch_256_and_512(tmp_path):
    r256 = _analyze(synth.decode_step(batch=256), tmp_path, "b256.csv")
    r512 = _analyze(synth.decode_step(batch=512, context=512), tmp_path, "b512.csv")
    assert_kernel(r256, "gemm", bound="memory", max_intensity=H100_RIDGE, ignore_below_share=0.01)
    assert_kernel(r512, "gemm", bound="compute", min_intensity=H100_RIDGE, ignore_below_share=0.01)


def test_prefill_and_launch_bound_steps(tmp_path):
    pf = _analyze(synth.prefill(tokens=2048), tmp_path, "pf.csv")
    assert_kernel(pf, "gemm", bound="compute", min_intensity=H100_RIDGE, ignore_below_share=0.01)
    lb = _analyze(synth.launch_bound_step(launches=500), tmp_path, "lb.csv")
    assert lb.kernels.height == 500
    assert {f.code for f in lb.findings} >= {"RL106"}


def test_the_same_step_on_h200_runs_memory_bound_kernels_by_the_bandwidth_ratio():
    h100, h200 = synth.decode_step(batch=8, gpu="H100"), synth.decode_step(batch=8, gpu="h200")
    for a, b in zip(h100.launches, h200.launches):
        if a.role.startswith("gemm") and a.bound == "memory":
            assert a.duration_s / b.duration_s == pytest.approx(4.8 / 3.35, rel=1e-6)


@pytest.mark.parametrize("layout", synth.NCU_LAYOUTS)
def test_every_layout_says_synthetic_and_reads_back(tmp_path, layout):
    step = synth.decode_step(batch=8, gpu="A100")
    path = step.write_ncu(tmp_path / f"{layout}.csv", layout=layout)
    assert path.read_text(encoding="utf-8").splitlines()[0].startswith("SYNTHETIC")
    result = analyze_paths([path], gpu="a100-sxm-80gb" if layout == "details-2021" else None)
    assert result.kernels.height == len(step.launches)
    assert result.gpu_name == "A100 SXM 80GB"


def test_custom_model_shapes(tmp_path):
    tiny = synth.Model("tiny", hidden=1024, layers=2, heads=8, kv_heads=2, mlp=4096, vocab=32000)
    step = synth.decode_step(batch=16, model=tiny, context=256)
    assert len(step.launches) == 1 + 2 * 11 + 6  # embedding, 11 kernels per layer, norm, head, sampling, tiny
    qkv = next(k for k in step.launches if k.role == "gemm:qkv")
    assert qkv.tensor_flops == 2 * 16 * (8 + 2 * 2) * 128 * 1024


def test_output_is_deterministic_and_the_seed_changes_the_jitter():
    a = synth.decode_step(batch=8).ncu_text()
    assert a == synth.decode_step(batch=8).ncu_text()
    assert a != synth.decode_step(batch=8, seed=1).ncu_text()


def test_telemetry_behaviours_are_what_the_rules_find(tmp_path):
    kinds = ["memory_bound", "idle_allocated", "busy_tensor_idle", "stuck_profiler", "no_profiling", "training"]
    path = synth.write_telemetry(tmp_path / "node07.dmon", kinds, minutes=60, interval_s=15)
    head = path.read_text(encoding="utf-8").splitlines()
    assert head[0].startswith("# SYNTHETIC") and head[1].startswith("dcgmi dmon -e ") and "-d 15000" in head[1]
    result = analyze_paths([path], interval_s=15)
    by = {}
    for f in result.findings:
        by.setdefault(f.code, set()).add(f.subject)
    assert "host:node07 gpu:1" in by["RL203"]  # idle but allocated
    assert "host:node07 gpu:2" in by["RL201"]  # busy with idle tensor cores
    assert any(s == "host:node07 gpu:3" for s in by["RL205"])  # the stuck profiler
    assert not any("gpu:5" in s for s in by.get("RL201", ()) | by.get("RL203", ()))  # training is fine


def test_exporter_telemetry_has_timestamps_and_a_custom_behaviour(tmp_path):
    custom = {"gr_active": 0.5, "sm_active": 0.4, "tensor_active": 0.2, "dram_active": 0.3}
    path = synth.write_telemetry(tmp_path / "gpu-node-1.prom", ["training", custom], minutes=5, interval_s=15,
                                 format="exporter")
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# SYNTHETIC")
    result = analyze_paths([path])
    assert result.windows.height >= 2 and set(result.windows["host"]) == {"gpu-node-1"}


@pytest.mark.parametrize("call, message", [
    (lambda: synth.decode_step(gpu="V100"), "GPU 'V100': expected one of H100, H200, A100, B200"),
    (lambda: synth.decode_step(model="gpt-5"), "model 'gpt-5'"),
    (lambda: synth.decode_step(weights="int4"), "weights 'int4'"),
    (lambda: synth.decode_step().ncu_text(layout="summary"), "layout 'summary'"),
    (lambda: synth.telemetry_text(["sleepy"]), "behaviour 'sleepy' of GPU 0"),
])
def test_bad_arguments_are_usage_errors(call, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        call()
