"""What-if projections checked against the fixture generator's physics.

The generator (fixtures/generate.py) times every launch as ``max(FLOPs / peak, bytes / bw) /
fraction`` on catalogue roofs, with the same seeded jitter for the same workload on any GPU; so
the expected ratios here come from the catalogue (bandwidths, peaks, the Hopper mma.sync ratio)
and the model's shapes, never from ridgeline's output.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.kernels.gpus import lookup
from ridgeline.analyzer.kernels.whatif import (
    HOPPER_HMMA_OVER_HGMMA,
    estimate_batch,
    parse_spec,
    project_batch,
    project_gpu,
    remedy_time,
    run_specs,
)
from ridgeline.errors import UsageError
from ridgeline.pipeline import analyze_paths

SCENARIOS = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios"
FLOOR = 2.0e-6


def _run(name: str):
    folder = SCENARIOS / name
    files = sorted(folder.glob("profile.*"))
    return analyze_paths(files, run_rules=False)


@pytest.fixture(scope="module")
def b8_h100():
    return _run("decode-b8-h100")


@pytest.fixture(scope="module")
def b8_h200():
    return _run("decode-b8-h200")


def test_memory_bound_launches_scale_with_bandwidth_h100_to_h200(b8_h100):
    h100, h200 = lookup("H100 SXM")[0], lookup("H200")[0]
    ratio = h100.dram_bw_bytes_per_s / h200.dram_bw_bytes_per_s  # 3.35 / 4.8
    p = project_gpu(b8_h100.kernels, h200, launch_floor_s=FLOOR)
    mem = p.launches.filter((pl.col("bound") == "memory") & (pl.col("duration_s") * ratio > FLOOR))
    assert mem.height > 100
    expected = mem["duration_s"] * ratio
    assert (mem["projected_duration_s"] - expected).abs().max() < 1e-12
    assert set(mem["projected_bound"].unique()) == {"memory"}
    # latency-bound launches (the launch floor) keep their time
    lat = p.launches.filter(pl.col("bound") == "latency")
    assert lat.height and (lat["projected_duration_s"] == lat["duration_s"]).all()


def test_h200_projection_matches_the_step_measured_on_h200(b8_h100, b8_h200):
    """The generator ran the same step on H200 with the same jitter: the projection is that step."""
    p = project_gpu(b8_h100.kernels, lookup("H200")[0], launch_floor_s=FLOOR)
    measured = b8_h200.total_gpu_time_s
    assert p.projected_duration_s == pytest.approx(measured, rel=0.01)
    assert p.duration_s == pytest.approx(b8_h100.total_gpu_time_s)
    assert p.speedup > 1.3


def test_projecting_onto_the_profiled_gpu_repeats_the_measured_times(b8_h100):
    p = project_gpu(b8_h100.kernels, lookup("H100 SXM")[0], launch_floor_s=FLOOR)
    known = p.launches.filter(pl.col("bound") != "unknown")
    assert ((known["projected_duration_s"] - known["duration_s"]).abs() <= known["duration_s"] * 1e-9).all()
    assert any("already ran on H100 SXM" in n for n in p.notes)


def test_compute_bound_launches_scale_with_the_peak_of_their_path():
    """Prefill on H100 -> A100: wgmma GEMMs by 989/312; FlashAttention-2 (mma.sync) ran against
    Hopper's mma.sync roof (2/3 of 989) and meets A100's full mma.sync peak."""
    res = _run("prefill-2048-h100")
    h100, a100 = lookup("H100 SXM")[0], lookup("A100 SXM 80GB")[0]
    p = project_gpu(res.kernels, a100, launch_floor_s=FLOOR)
    launches = res.kernels.select("kernel_family", "tensor_path", "bound", "precision").hstack(
        p.launches.select("projected_duration_s", "projected_bound", "duration_s"))
    both = launches.filter((pl.col("bound") == "compute") & (pl.col("projected_bound") == "compute")
                           & (pl.col("precision") == "fp16_tensor"))
    wg = both.filter(pl.col("tensor_path") == "hgmma")
    mma = both.filter(pl.col("tensor_path") == "hmma")
    assert wg.height and mma.height
    r_wg = h100.peak("fp16_tensor") / a100.peak("fp16_tensor")
    r_mma = h100.peak("fp16_tensor") * HOPPER_HMMA_OVER_HGMMA / a100.peak("fp16_tensor")
    assert ((wg["projected_duration_s"] / wg["duration_s"] - r_wg).abs() < 1e-6).all()
    assert ((mma["projected_duration_s"] / mma["duration_s"] - r_mma).abs() < 1e-6).all()
    assert p.projected_duration_s > p.duration_s * 2


def test_compute_bound_launches_unchanged_on_h200_where_only_bandwidth_differs():
    res = _run("prefill-2048-h100")
    p = project_gpu(res.kernels, lookup("H200")[0], launch_floor_s=FLOOR)
    comp = p.launches.filter(pl.col("bound") == "compute")
    assert comp.height
    assert ((comp["projected_duration_s"] - comp["duration_s"]).abs() <= comp["duration_s"] * 1e-9).all()


def test_a_precision_the_target_lacks_keeps_the_measured_time():
    res = _run("decode-b8-fp8-h100")
    p = project_gpu(res.kernels, lookup("A100 SXM 80GB")[0], launch_floor_s=FLOOR)
    assert any("no fp8_tensor peak" in n for n in p.notes)
    fp8 = res.kernels.select("precision").hstack(p.launches.select("duration_s", "projected_duration_s",
                                                                    "projected_bound"))
    fp8 = fp8.filter(pl.col("precision") == "fp8_tensor")
    assert fp8.height and (fp8["projected_duration_s"] == fp8["duration_s"]).all()
    assert set(fp8["projected_bound"].unique()) == {"unknown"}


def test_batch_8_to_64_on_h100(b8_h100):
    """Weight GEMMs stay memory-bound (64 < ridge 295): same bytes, same time. Attention reads 8x
    the KV cache: 8x the time. Tokens per second = batch / step time."""
    h100 = lookup("H100 SXM")[0]
    p = project_batch(b8_h100.kernels, 64, gpu=h100, launch_floor_s=FLOOR)
    assert p.batch == 8 and "launch shapes" in p.batch_source
    k = b8_h100.kernels.select("kernel_family").hstack(p.launches.select("bound", "duration_s",
                                                                         "projected_duration_s", "projected_bound"))
    gemm = k.filter((pl.col("kernel_family") == "gemm") & (pl.col("bound") == "memory"))
    assert gemm.height and ((gemm["projected_duration_s"] - gemm["duration_s"]).abs() < 1e-15).all()
    assert set(gemm["projected_bound"].unique()) == {"memory"}
    attn = k.filter((pl.col("kernel_family") == "attention") & (pl.col("bound") == "memory"))
    assert attn.height
    assert ((attn["projected_duration_s"] / attn["duration_s"] - 8.0).abs() < 1e-9).all()
    assert p.tokens_per_s == pytest.approx(8 / p.duration_s)
    assert p.projected_tokens_per_s == pytest.approx(64 / p.projected_duration_s)
    assert p.projected_tokens_per_s > 4 * p.tokens_per_s  # weights read once for 8x the tokens


def test_batch_that_reaches_the_ridge_and_where_memory_stops_it(b8_h100):
    """Llama-3-8B-like (fixtures/generate.py): 32 layers, 8 KV heads of 128, bf16, context 1024."""
    h100 = lookup("H100 SXM")[0]
    p = project_batch(b8_h100.kernels, 64, gpu=h100, launch_floor_s=FLOOR)
    ridge = h100.peak("fp16_tensor") / h100.dram_bw_bytes_per_s  # 295 FLOP/B; bf16: ~1 FLOP/B per token
    assert p.ridge_batch == pytest.approx(ridge, rel=0.02)
    kv_per_seq = 32 * 1024 * 2 * 8 * 128 * 2  # layers x context x (K, V) x kv heads x head dim x bf16
    # the weights are what the GEMMs read: about 8.0e9 params x 2 bytes
    weights = float(b8_h100.kernels.filter(pl.col("kernel_family") == "gemm")["dram_bytes"].sum())
    assert 15e9 < weights < 17e9
    # the attention launches also read the queries (batch x heads x 128 x 2 x 2 bytes per layer)
    assert p.max_batch_by_memory == pytest.approx((h100.memory_bytes - weights) / kv_per_seq, rel=0.01)


def test_batch_projection_toward_256_is_close_to_the_generated_step():
    """b8 -> b256 against the generator's own b256 step: optimistic (activation bytes left out)
    but within 15%."""
    b8, b256 = _run("decode-b8-h100"), _run("decode-b256-h100")
    p = project_batch(b8.kernels, 256, gpu=lookup("H100 SXM")[0], launch_floor_s=FLOOR)
    assert p.projected_duration_s <= b256.total_gpu_time_s
    assert p.projected_duration_s == pytest.approx(b256.total_gpu_time_s, rel=0.15)


def test_tile_padding_holds_gemm_flops_until_the_tile_is_full():
    """decode-b1 on H100: the GEMMs count 8 rows (padded), the norms launch 1 block: batch 1, and
    batch 8 costs the GEMMs no extra FLOPs."""
    res = _run("decode-b1-h100")
    est = estimate_batch(res.kernels)
    assert est.batch == 1 and est.padded and est.flop_tokens == pytest.approx(8, rel=0.05)
    p = project_batch(res.kernels, 8, gpu=lookup("H100 SXM")[0], launch_floor_s=FLOOR)
    assert any("tile padding" in n for n in p.notes)
    gemm = p.kernels.filter(pl.col("kernel_family") == "gemm")
    assert ((gemm["projected_duration_s"] - gemm["duration_s"]).abs() < 1e-15).all()
    assert p.projected_tokens_per_s == pytest.approx(8 * p.tokens_per_s, rel=0.3)


def test_given_batch_wins(b8_h100):
    p = project_batch(b8_h100.kernels, 16, batch=4, launch_floor_s=FLOOR)
    assert p.batch == 4 and p.batch_source.startswith("given")
    assert any("memory unknown" in n for n in p.notes)


def test_specs_parse_and_fail_clearly(b8_h100):
    assert parse_spec("batch=64") == ("batch", 64)
    assert parse_spec(" Batch = 2 ") == ("batch", 2)
    assert parse_spec("h200") == ("gpu", "h200")
    for bad in ("batch=0", "batch=x", "batch=1.5", ""):
        with pytest.raises(UsageError, match="what-if"):
            parse_spec(bad)
    with pytest.raises(UsageError, match="unknown GPU"):
        run_specs(b8_h100.kernels, ["Z9000"])
    out = run_specs(b8_h100.kernels, ["H200", "batch=16"], gpu=lookup("H100")[0])
    assert [p.scenario for p in out] == ["H200", "batch=16"]
    with pytest.raises(UsageError, match="needs kernels"):
        run_specs(None, ["H200"])


# ------------------------------------------------------------------------------------------
# wiring: CLI, JSON, terminal, HTML, plot
# ------------------------------------------------------------------------------------------
B8 = SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv"


def _cli(args):
    from click.testing import CliRunner

    from ridgeline.cli import cli

    return CliRunner().invoke(cli, [str(a) for a in args])


def test_json_what_if_has_one_object_per_spec_in_order():
    import json

    r = _cli(["analyze", B8, "--what-if", "h200", "--what-if", "batch=64", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    from ridgeline.render.kernels.whatif import WHAT_IF_KEYS

    assert [w["scenario"] for w in doc["what_if"]] == ["H200", "batch=64"]
    for w in doc["what_if"]:
        assert list(w) == list(WHAT_IF_KEYS)
        assert w["duration_s"] == pytest.approx(doc["total_gpu_time_s"])
        assert w["projected_duration_s"] == pytest.approx(sum(k["projected_duration_s"] for k in w["kernels"]))
        for k in w["kernels"]:
            assert {"kernel_name", "kernel_label", "duration_s", "projected_duration_s", "bound",
                    "projected_bound"} <= set(k)
    assert doc["what_if"][1]["batch"] == 8 and doc["what_if"][1]["projected_batch"] == 64
    plain = json.loads(_cli(["analyze", B8, "--format", "json"]).output)
    assert plain["what_if"] == []


def test_terminal_and_html_show_measured_and_projected(tmp_path):
    r = _cli(["analyze", B8, "--what-if", "H200"])
    assert r.exit_code == 0, r.output
    block = r.output.split("What if:", 1)[1]
    assert "on H200: 6.311 ms ->" in block and "faster" in block and "assumes:" in block
    out = tmp_path / "r.html"
    r = _cli(["report", B8, "--what-if", "batch=32", "-o", out])
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert '<section id="what-if">' in text and "batch 8 -&gt; 32" in text and "plot-what-if-" in text


def test_plot_draws_projected_points_hollow():
    from ridgeline.render.plots import roofline_figure

    res = analyze_paths([B8], run_rules=False, what_if=["H200"])
    fig = roofline_figure(res, what_if=res.what_if[0])
    gids = {a.get_gid() for a in fig.axes[0].collections}
    assert "what-if:points" in gids
    coll = next(a for a in fig.axes[0].collections if a.get_gid() == "what-if:points")
    assert (coll.get_facecolors().size == 0) or (coll.get_facecolors()[:, 3] == 0).all()


@pytest.mark.parametrize("args, text", [
    (["--what-if", "Z9000"], "unknown GPU"),
    (["--what-if", "batch=0"], "batch=N"),
    (["--batch", "0", "--what-if", "batch=8"], "--batch"),
])
def test_bad_what_if_is_one_line_exit_2(args, text):
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "ridgeline.cli", "analyze", str(B8), *args], capture_output=True, check=False,
                       text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and text in p.stderr and "Traceback" not in p.stderr


def test_markdown_report_has_the_what_if_section():
    r = _cli(["report", B8, "--what-if", "H200", "--format", "markdown", "-o", "-"])
    assert r.exit_code == 0, r.output
    section = r.output.split("### What if", 1)[1].split("### Inputs", 1)[0]
    assert "**H200**: on H200: 6.311 ms" in section and "| Kernel | Measured | Projected |" in section


def test_real_h200_decode_rl101_impact_targets_each_groups_ridge():
    """The shared SGLang H200 decode page (batch 1; nvjet pads to 8 rows, fused_moe to its block):
    RL101's impact is computed at the batch its own message says reaches the ridge."""
    import re

    from ridge_inputs import SAMPLES

    path = SAMPLES / "ncu" / "moeresearch-h200-sglang-qwen3-30b-R_short_decode-RAWPAGE-2232cols.csv"
    if not path.exists():
        pytest.skip("shared H200 decode sample not present (../shared/samples)")
    res = analyze_paths([path], what_if=["batch=64", "H100"])
    rl101 = [f for f in res.findings if f.code == "RL101"]
    assert rl101
    for f in rl101:
        ridge_tokens = float(re.search(r"the ridge needs ~([0-9,]+)", f.message).group(1).replace(",", ""))
        ev = {e.metric: e.value for e in f.evidence}
        assert ev["batch_now"] == 1
        assert abs(ev["batch_for_impact"] - ridge_tokens) <= 1 + 0.01 * ridge_tokens
        assert 0 < f.impact_s <= ev["duration_s"]
    batch, gpu = res.what_if
    assert any("MoE" in n for n in batch.notes) and any("part of a step" in n for n in batch.notes)
    assert batch.max_batch_by_memory is None
    assert gpu.projected_duration_s > gpu.duration_s  # H100 has less bandwidth than H200


def test_gpu_contradicting_the_export_points_to_what_if():
    with pytest.raises(UsageError, match=r'contradicts the export.*use --what-if "H200"'):
        analyze_paths([B8], gpu="H200", run_rules=False)


def test_bound_flips_where_the_ridge_moves():
    """Batch-256 decode GEMMs sit at ~235 FLOP/B: memory side of H100's bf16 ridge (989/3.35 = 295),
    compute side of H200's (989/4.8 = 206). On H200 their time is the compute time at the same
    fraction: duration x (FLOPs / 989e12) / (bytes / 3.35e12) = duration x intensity x 3.35 / 989."""
    h100, h200 = lookup("H100 SXM")[0], lookup("H200")[0]
    res = _run("decode-b256-h100")
    p = project_gpu(res.kernels, h200, launch_floor_s=FLOOR)
    k = res.kernels.select("kernel_family", "intensity_dram", "precision", "peak_bw_bytes_per_s", "peak_flops_per_s").hstack(
        p.launches.select("bound", "projected_bound", "duration_s", "projected_duration_s"))
    ridge100 = h100.peak("fp16_tensor") / h100.dram_bw_bytes_per_s
    ridge200 = h200.peak("fp16_tensor") / h200.dram_bw_bytes_per_s
    flip = k.filter((pl.col("kernel_family") == "gemm") & (pl.col("precision") == "fp16_tensor")
                    & (pl.col("intensity_dram") > ridge200) & (pl.col("intensity_dram") < ridge100)
                    & (pl.col("bound") == "memory"))
    assert flip.height
    assert set(flip["projected_bound"].unique()) == {"compute"}
    # each launch against its own roofs (the datasheet peak scaled to its own SM clock; H200's bf16
    # peak is H100's, so the compute roof it moves to is its own)
    assert h200.peak("fp16_tensor") == h100.peak("fp16_tensor")
    expected = flip["duration_s"] * flip["intensity_dram"] * flip["peak_bw_bytes_per_s"] / flip["peak_flops_per_s"]
    assert ((flip["projected_duration_s"] / expected - 1).abs() < 1e-6).all()


def test_remedy_time_keeps_each_launch_at_its_achieved_fraction():
    """remedy_time (the rules' impacts): time x roof time after / roof time before, per launch; a
    compute-bound launch given twice the peak and half the bytes halves; a memory-bound one given
    half the bytes halves; latency-bound and unknown launches keep their time."""
    peak, bw = 989e12, 3.35e12
    rows = pl.DataFrame({
        "duration_s": [1e-3, 0.4e-3, 5e-6, 1e-3],
        "flops": [400e9, 1.9e9, 1e6, None],
        "dram_bytes": [1e9, 1e9, 1e3, None],
        "peak_flops_per_s": [peak] * 4,
        "peak_bw_bytes_per_s": [bw] * 4,
        "bound": ["compute", "memory", "latency", "unknown"],
    })
    compute_now, compute_after = max(400e9 / peak, 1e9 / bw), max(400e9 / (2 * peak), 0.5e9 / bw)
    memory_now, memory_after = max(1.9e9 / peak, 1e9 / bw), max(1.9e9 / (2 * peak), 0.5e9 / bw)
    expect = 1e-3 * compute_after / compute_now + 0.4e-3 * memory_after / memory_now + 5e-6 + 1e-3
    assert remedy_time(rows, dram_scale=0.5, peak_scale=2.0) == pytest.approx(expect)
    assert remedy_time(rows) == pytest.approx(float(rows["duration_s"].sum()))  # no remedy, no change


def test_batch_what_if_on_gemms_alone_speaks_of_rows_not_tokens(b8_h100):
    """The same decode fixture's GEMMs without any LLM kernel (no attention, norm, RoPE...): a GEMM
    benchmark. The projection is the same model, in GEMM words: no tokens/s, no decode step."""
    from ridgeline.analyzer.kernels.workload import llm_evidence
    from ridgeline.render.kernels.whatif import batch_lines, headline

    gemms = b8_h100.kernels.filter(pl.col("kernel_family") == "gemm")
    assert llm_evidence(gemms) is None and llm_evidence(b8_h100.kernels) is not None
    p = project_batch(gemms, 64, batch=8, gpu=lookup("H100 SXM")[0], launch_floor_s=FLOOR)
    llm = project_batch(b8_h100.kernels, 64, batch=8, gpu=lookup("H100 SXM")[0], launch_floor_s=FLOOR)
    assert p.llm_evidence is None and llm.llm_evidence
    assert p.tokens_per_s is None and p.projected_tokens_per_s is None
    assert llm.tokens_per_s == pytest.approx(8 / llm.duration_s)
    text = " ".join([headline(p), *batch_lines(p), *p.assumptions, *p.notes]).lower()
    assert "token" not in text and "decode" not in text and "kv cache" not in text
    assert headline(p).startswith("rows per weight read (M) 8 -> 64 on H100 SXM: GPU time ")
    # the GEMMs' time is the same model either way (memory-bound weights: same bytes, same time)
    assert p.projected_duration_s == pytest.approx(
        float(llm.launches.filter(b8_h100.kernels["kernel_family"] == "gemm")["projected_duration_s"].sum()))


def test_what_if_tables_use_the_launch_and_stall_words(b8_h100):
    """The per-kernel what-if table names bounds as every view does: latency-bound kernels are
    launch- or stall-bound (measured by their kind, projected by their projected duration)."""
    p = project_gpu(b8_h100.kernels, lookup("H200")[0], launch_floor_s=FLOOR)
    words = set(p.kernels["bound"].drop_nulls()) | set(p.kernels["projected_bound"].drop_nulls())
    assert "latency" not in words and "launch" in words
    assert words <= {"memory", "compute", "launch", "stall", "unknown"}
    # a 2.6 us launch stays launch-bound on a faster GPU; with a 1 us threshold it reads stall-bound
    norm = p.kernels.filter(pl.col("kernel_family") == "norm").row(0, named=True)
    assert (norm["bound"], norm["projected_bound"]) == ("launch", "launch")
    q = project_gpu(b8_h100.kernels, lookup("H200")[0], launch_floor_s=FLOOR, launch_bound_max_s=1e-6)
    assert q.kernels.filter(pl.col("kernel_family") == "norm")["projected_bound"][0] == "stall"
