"""Hopper tensor roofs: dense, per instruction path, at the clock they were computed at.

Real H200 raw page (../shared/samples, skipped when absent) and small hand-written exports
(synthetic, written by the helpers below).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ridgeline.pipeline import analyze_paths
from ridge_inputs import SAMPLES

H200_DECODE = SAMPLES / "ncu" / "moeresearch-h200-sglang-qwen3-30b-R_short_decode-RAWPAGE-2232cols.csv"
FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"

HGMMA_DENSE, HGMMA_SPARSE, HMMA_DENSE = 540672, 1081344, 360448  # ops/cycle, whole H200 (ncu peak_sustained)


def _clock_of(detail: str) -> float:
    m = re.search(r"at SM clock ([0-9.]+) GHz", detail)
    assert m, detail
    return float(m.group(1)) * 1e9


@pytest.fixture(scope="module")
def h200():
    if not H200_DECODE.exists():
        pytest.skip("shared H200 decode sample not present (../shared/samples)")
    return analyze_paths([H200_DECODE])


def test_h200_tensor_roofs_are_dense_per_path_at_their_stated_clock(h200):
    tensor = [r for r in h200.roofs if r.kind == "compute" and r.precision == "fp16_tensor"]
    assert {r.path for r in tensor} == {"hgmma", "hmma"}
    for r in tensor:
        per_cycle = r.value / _clock_of(r.detail)
        expected = HGMMA_DENSE if r.path == "hgmma" else HMMA_DENSE
        # the stated clock is printed with 3 significant figures
        assert per_cycle == pytest.approx(expected, rel=0.003), (r.path, r.detail)
        assert per_cycle < HGMMA_SPARSE * 0.75  # never the 2:4-sparse rate
        assert "sparsity_off" in r.detail
    # ridge against the measured DRAM roof: ~216 FLOP/B on wgmma, not ~426
    assert h200.ridge("fp16_tensor") is not None
    dram = next(r for r in h200.roofs if r.kind == "bandwidth" and r.level == "dram")
    wg = next(r for r in tensor if r.path == "hgmma")
    assert 190 < wg.value / dram.value < 230


def test_h200_paths_per_kernel_and_no_false_sparse_note(h200):
    import polars as pl

    k = h200.kernels
    path = dict(k.filter(pl.col("flops_tensor") > 0).select("short_name", "tensor_path").unique().iter_rows())
    assert path["fused_moe_kernel"] == "hmma"  # Triton MoE GEMM: mma.sync
    assert all(v == "hgmma" for name, v in path.items() if name.startswith("nvjet"))
    assert not any("sparse" in n for n in h200.notes), h200.notes
    # every *_sparsity_on*.sum count in the file is 0: no launch is on a sparse path
    assert not any("sparse" in (p or "") for p in k["tensor_path"].to_list())


def _raw(path: Path, header: list[str], units: list[str], rows: list[list]) -> Path:
    q = lambda cells: ",".join(f'"{c}"' for c in cells)  # noqa: E731
    path.write_text("\n".join([q(header), q(units), *[q(r) for r in rows]]) + "\n", encoding="utf-8")
    return path


ID = ["ID", "Kernel Name", "Device", "CC", "device__attribute_display_name"]


def test_hopper_totals_without_family_counters_are_halved_and_say_so(tmp_path):
    total = "sm__ops_path_tensor_src_bf16_dst_fp32"
    header = ID + ["gpu__time_duration.sum", "dram__bytes.sum", "sm__cycles_elapsed.avg.per_second",
                   f"{total}.sum", f"{total}.sum.peak_sustained"]
    units = ["", "", "", "", "", "ns", "byte", "hz", "", ""]
    f = _raw(tmp_path / "p.csv", header, units,
             [[0, "gemm", 0, "9.0", "NVIDIA H100 80GB HBM3", 1000000, 1e8, 1.5e9, 5e11, HGMMA_SPARSE]])
    res = analyze_paths([f])
    row = res.kernels.row(0, named=True)
    assert row["peak_flops_tensor_per_s"] == pytest.approx(HGMMA_DENSE * 1.5e9)
    assert "2:4-sparse" in row["peak_flops_tensor_per_s_source"]
    assert row["tensor_path"] is None


def test_ampere_totals_keep_their_own_rate(tmp_path):
    total = "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off"
    header = ID + ["gpu__time_duration.sum", "dram__bytes.sum", "sm__cycles_elapsed.avg.per_second",
                   f"{total}.sum", f"{total}.sum.peak_sustained"]
    units = ["", "", "", "", "", "ns", "byte", "hz", "", ""]
    f = _raw(tmp_path / "p.csv", header, units,
             [[0, "gemm", 0, "8.0", "NVIDIA A100-SXM4-80GB", 1000000, 1e8, 1.41e9, 5e11, 221184]])
    row = analyze_paths([f]).kernels.row(0, named=True)
    assert row["peak_flops_tensor_per_s"] == pytest.approx(221184 * 1.41e9)


def test_mixed_paths_are_weighed_by_time_and_sparse_ops_are_noted(tmp_path):
    fam = "sm__ops_path_tensor_op_{}_src_bf16_dst_fp32_sparsity_{}"
    cols, vals = [], []
    for op, sp, ops, peak in (("hgmma", "off", 3e11, HGMMA_DENSE), ("hgmma", "on", 0, HGMMA_SPARSE),
                              ("hmma", "off", 1e11, HMMA_DENSE), ("hmma", "on", 2e10, 540672)):
        cols += [fam.format(op, sp) + ".sum", fam.format(op, sp) + ".sum.peak_sustained"]
        vals += [ops, peak]
    header = ID + ["gpu__time_duration.sum", "dram__bytes.sum", "sm__cycles_elapsed.avg.per_second", *cols]
    units = ["", "", "", "", "", "ns", "byte", "hz"] + [""] * len(cols)
    f = _raw(tmp_path / "p.csv", header, units, [[0, "k", 0, "9.0", "NVIDIA H200", 1000000, 1e8, 1.0e9, *vals]])
    res = analyze_paths([f])
    row = res.kernels.row(0, named=True)
    ops = 3e11 + 1e11 + 2e10
    cycles = 3e11 / HGMMA_DENSE + 1e11 / HMMA_DENSE + 2e10 / 540672
    assert row["peak_flops_tensor_per_s"] == pytest.approx(ops / cycles * 1.0e9)
    assert row["tensor_path"] == "hgmma+hmma+hmma-sparse"
    assert any("sparse tensor paths" in n and "1 launch" in n for n in res.notes)


def test_datasheet_roof_scales_to_the_recorded_clock(tmp_path):
    header = ID + ["gpu__time_duration.sum", "dram__bytes.sum", "sm__cycles_elapsed.avg.per_second",
                   *[f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum" for op in ("fadd", "fmul", "ffma")]]
    units = ["", "", "", "", "", "ns", "byte", "hz", "inst", "inst", "inst"]
    f = _raw(tmp_path / "p.csv", header, units,
             [[0, "sgemm", 0, "8.0", "NVIDIA A100-SXM4-80GB", 1000000, 1e8, 765e6, 0, 0, 5e9]])
    res = analyze_paths([f])
    fp32 = next(r for r in res.roofs if r.kind == "compute" and r.precision == "fp32")
    assert fp32.source == "catalogue"
    assert fp32.value == pytest.approx(19.5e12 * 765e6 / 1.41e9)
    assert "19.5 TFLOP/s at 1.41 GHz" in fp32.detail and "0.765 GHz" in fp32.detail
    row = res.kernels.row(0, named=True)
    # achieved 1e10 FLOP / 1 ms = 10 TFLOP/s against the 10.6 TFLOP/s it could reach at 765 MHz
    assert row["peak_flops_per_s"] == pytest.approx(fp32.value)


def test_catalogue_corrections():
    from ridgeline.analyzer.kernels.gpus import lookup

    b200, _ = lookup("B200")
    assert b200.peak("fp32") == 75e12 and b200.peak("fp64") == 37e12  # HGX B200 column, not GB200's
    h200, _ = lookup("H200")
    assert h200.memory_bytes == 141e9
    h100, _ = lookup("H100 SXM")
    # the datasheet's dense bf16 figure at its clock is the per-cycle rate ncu records
    assert h100.peak("fp16_tensor") / h100.datasheet_clock("fp16_tensor") == pytest.approx(HGMMA_DENSE, rel=0.001)
    assert h100.peak("fp32") / h100.datasheet_clock("fp32") == pytest.approx(132 * 128 * 2, rel=0.002)


def test_gpus_command_prints_gb(capsys):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["gpus", "h200"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "141 GB" in out and "GiB" not in out


def test_hfma2_mma_register_moves_do_not_set_the_precision():
    path = SAMPLES / "ncu" / "leleucas-a100-details-rules-bert_attention.csv"
    if not path.exists():
        pytest.skip("shared A100 sample absent")
    import polars as pl

    res = analyze_paths([path], gpu="A100")
    k = res.kernels
    idiom = k.filter(pl.col("flops_fp16_source").str.contains("HFMA2.MMA", literal=True).fill_null(False))
    assert idiom.height > 0
    assert (idiom["flops_fp16"] == 0).all() and (idiom["flops_tensor"] == 0).all()
    assert "fp16" not in set(idiom["precision"].drop_nulls()) and "fp16_tensor" not in set(idiom["precision"].drop_nulls())
    assert any("HFMA2.MMA" in n for n in res.notes)
    # the integer add kernel is not an fp16 kernel
    add = k.filter(pl.col("kernel_name").str.contains("CUDAFunctorOnSelf_add", literal=True))
    assert add.height == 0 or set(add["precision"].drop_nulls()) <= {"fp32"}


def test_hfma_with_real_half_math_keeps_its_flops(tmp_path):
    ops = ["hadd", "hmul", "hfma"]
    header = ID + ["gpu__time_duration.sum", "dram__bytes.sum", "sm__inst_executed_pipe_tensor.sum",
                   *[f"sm__sass_thread_inst_executed_op_{o}_pred_on.sum" for o in ops]]
    units = ["", "", "", "", "", "ns", "byte", "inst", "inst", "inst", "inst"]
    f = _raw(tmp_path / "p.csv", header, units, [
        [0, "movs", 0, "8.0", "NVIDIA A100-SXM4-80GB", 10000, 1e6, 100, 0, 0, 3200],  # the idiom
        [1, "half", 0, "8.0", "NVIDIA A100-SXM4-80GB", 10000, 1e6, 100, 10, 0, 3200],  # hadd: real math
    ])
    k = analyze_paths([f]).kernels
    assert k.row(0, named=True)["flops_fp16"] == 0
    assert k.row(1, named=True)["flops_fp16"] == 2 * 10 + 4 * 3200


def test_kernel_counts_agree_and_a_launch_without_duration_shows_no_time(tmp_path, capsys):
    from ridgeline.cli import main

    header = ID + ["gpu__time_duration.sum", "dram__bytes.sum"]
    units = ["", "", "", "", "", "ns", "byte"]
    # two kernels sharing a short name (template arguments differ), no FLOP counters; one launch
    # of a third kernel has no duration at all
    f = _raw(tmp_path / "p.csv", header, units, [
        [0, "void k<1>(int)", 0, "9.0", "NVIDIA H100 80GB HBM3", 5000, 1e6],
        [1, "void k<2>(int)", 0, "9.0", "NVIDIA H100 80GB HBM3", 5000, 1e6],
        [2, "void nodur(int)", 0, "9.0", "NVIDIA H100 80GB HBM3", "n/a", 1e6],
    ])
    with pytest.raises(SystemExit):
        main(["analyze", str(f)])
    out = capsys.readouterr().out
    assert "3 launches of 3 kernels" in out
    assert "roofline inputs missing for 3 launches of 3 kernels" in out
    row = next(ln for ln in out.splitlines() if "nodur" in ln)
    assert " 0 s " not in row and " - " in row


def test_h200_decode_verdicts(h200):
    """The verdicts a performance engineer would give this MoE decode step at batch 1."""
    import polars as pl

    k = h200.kernels
    total = k["duration_s"].sum()
    share = {b: t / total for b, t in k.group_by("bound").agg(pl.col("duration_s").sum()).iter_rows()}
    assert share.get("latency", 0) > 0.5 and share.get("compute", 0) == 0  # mostly launch/latency-bound
    fa3 = k.filter(pl.col("kernel_label").str.starts_with("FlashAttention-3 fwd"))
    assert fa3.height == 1 and fa3["kernel_family"][0] == "attention" and fa3["bound"][0] == "latency"
    rope = k.filter(pl.col("kernel_name").str.contains("BatchQKApplyRotaryPosIds", literal=True))
    assert set(rope["kernel_family"]) == {"rope"}
    moe = k.filter(pl.col("kernel_name") == "fused_moe_kernel")
    assert set(moe["kernel_family"]) == {"grouped_gemm"} and set(moe["tensor_path"]) == {"hmma"}
    by = {}
    for f in h200.findings:
        by.setdefault(f.code, []).append(f)
    # no KV-cache or memory-access advice for FA3 at 1% of a roof, none for RoPE
    fa3_label, rope_label = fa3["kernel_label"][0], rope["kernel_label"][0]
    assert all(f.subject not in (fa3_label, rope_label) for code in ("RL102", "RL103") for f in by.get(code, []))
    assert "RL112" in by  # the latency finding carries the launch-count remedies
    rl101 = {f.subject: f for f in by["RL101"]}
    assert "Triton fused_moe" in rl101
    assert "launch shapes say ~1" in rl101["Triton fused_moe"].message
    nvjet = [f for s, f in rl101.items() if s.startswith("cuBLAS nvjet")]
    # each launch's ridge is at its own clocks (both peaks per launch): ~209-216 FLOP/B for these
    ridges = [int(re.search(r"the ridge needs ~(\d+)", f.message).group(1)) for f in nvjet]
    assert nvjet and all(200 <= r <= 230 for r in ridges), ridges


def test_tensor_roof_fraction_agrees_with_ncus_own_dense_percentage(h200):
    """ncu's ..._sparsity_off.sum.pct_of_peak_sustained_elapsed is measured against the dense rate:
    ridgeline's achieved tensor FLOP/s over its roof must agree with it, launch by launch."""
    import polars as pl

    metrics = next(iter(h200_metrics().values()))
    pct_col = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.pct_of_peak_sustained_elapsed"
    ops_col = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"
    assert pct_col in metrics.columns
    ncu = metrics.select(pl.col("ID").cast(pl.Int64).alias("launch_id"),
                         pl.col(pct_col).cast(pl.Float64).alias("pct"), pl.col(ops_col).cast(pl.Float64).alias("ops"))
    k = h200.kernels.join(ncu, on="launch_id").filter((pl.col("ops") > 0) & (pl.col("tensor_path") == "hgmma"))
    assert k.height >= 3
    ours = k["flops_tensor"] / k["duration_s"] / k["peak_flops_tensor_per_s"] * 100
    for a, b in zip(ours.to_list(), k["pct"].to_list()):
        assert a == pytest.approx(b, rel=0.05, abs=0.05)


def h200_metrics():
    from ridgeline.parsers.ncu.csv_reader import read_ncu

    return read_ncu([str(H200_DECODE)]).metrics
