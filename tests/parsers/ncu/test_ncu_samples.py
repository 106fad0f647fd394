"""Every real ncu export in the shared samples folder parses; values checked by hand.

The samples are third-party files (see shared/samples/ncu/MANIFEST.md); they are read in
place and never copied into the repository. Tests skip when the folder is absent.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.analyzer.schema import KERNEL_COLUMNS
from ridgeline.parsers.ncu.csv_reader import detect_ncu_layout, read_ncu

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "ncu"

XPLACER = "xplacer-v100-aws-nvnsightcucli-details-thousands-cfd097K.log.csv"
LELEUCAS = "leleucas-a100-details-rules-bert_attention.csv"
GARDENIA = "gardenia-a100-details-printfp-gemm.csv"
B200 = "roofline-analysis-b200-raw-flashinfer-decode-b64.csv"
RTX5070 = "gpu-roofline-profiler-rtx5070-win-details-gemm_naive.csv"

# file -> (layout, launches) from the MANIFEST
EXPECTED = {
    XPLACER: ("details", 100),
    LELEUCAS: ("details", 26),
    GARDENIA: ("details", 3),
    B200: ("raw", 64),
    RTX5070: ("details", 1),
}


def sample(name: str) -> Path:
    p = SAMPLES / name
    if not p.exists():
        pytest.skip(f"sample {name} not available")
    return p


@pytest.fixture(scope="module")
def parsed():
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = read_ncu([sample(name)])
        return cache[name]

    return get


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_parses_with_manifest_launch_count(name, parsed):
    layout, launches = EXPECTED[name]
    assert detect_ncu_layout(sample(name)) == layout
    res = parsed(name)
    k = res.kernels
    assert list(k.columns) == list(KERNEL_COLUMNS)
    assert k.height == launches
    assert res.inputs[0].rows == launches
    assert res.inputs[0].kind == f"ncu-{layout}"
    assert k["id"].n_unique() == launches
    assert k["kernel_name"].null_count() == 0
    assert not [s for s in res.skipped if "line" in s.item and "truncated" in s.reason]


def test_xplacer_labels_and_thousands(parsed):
    k = parsed(XPLACER).kernels
    first = k.row(0, named=True)
    # "Duration","nsecond","8,992" -> 8992e-9 s
    assert first["duration_s"] == pytest.approx(8992e-9)
    assert first["duration_s_source"] is not None
    # "SOL FB","%","43.86"; "SM [%]","%","21.73"; "SM Frequency","cycle/second","1,177,954,478.05"
    assert first["dram_throughput_pct"] == pytest.approx(43.86)
    assert first["sm_throughput_pct"] == pytest.approx(21.73)
    assert first["sm_clock_hz"] == pytest.approx(1_177_954_478.05)
    assert first["dram_clock_hz"] == pytest.approx(795_373_665.48)
    # Launch Statistics "Block Size" 192, "Grid Size" 506
    assert first["block_threads"] == 192 and first["grid_blocks"] == 506
    assert first["short_name"] == "cuda_compute_step_factor"
    # no FLOP counters at all in this export
    for col in ("flops_fp64", "flops_fp32", "flops_fp16", "flops_tensor", "dram_bytes"):
        assert k[col].null_count() == k.height, col
    assert k["device_name"].null_count() == k.height  # the 2019 layout records no device


def test_leleucas_cycles_over_clock_and_volta_counter_on_ampere(parsed):
    res = parsed(LELEUCAS)
    k = res.kernels
    first = k.row(0, named=True)
    # sm__cycles_elapsed.avg 5,388.33 / sm__cycles_elapsed.avg.per_second 935,474,537.04
    assert first["duration_s"] == pytest.approx(5388.33 / 935_474_537.04)
    assert "sm__cycles_elapsed.avg" in first["duration_s_source"]
    assert first["dram_bytes"] == 128.0
    assert first["l2_bytes"] == 675_328.0
    assert first["l1_bytes"] == 262_144.0
    # ffma 327,680 -> 2 * 327680
    assert first["flops_fp32"] == 655_360.0
    # hfma 65,536 = 32 x sm__inst_executed_pipe_tensor.sum 2,048 with no hadd/hmul: the compiler's
    # HFMA2.MMA register moves, not fp16 math and no MMA -> 0 FP16 and 0 tensor FLOPs, with a note
    assert first["flops_fp16"] == 0.0 and "HFMA2.MMA" in first["flops_fp16_source"]
    assert first["flops_tensor"] == 0.0
    assert any("HFMA2.MMA" in n for n in res.notes)
    assert res.metrics[str(sample(LELEUCAS))].filter(
        res.metrics[str(sample(LELEUCAS))]["Metric Name"] == "sm__inst_executed_pipe_tensor.sum"
    ).height == 26
    assert first["short_name"] == "at::native::distribution_elementwise_grid_stride_kernel"
    assert len(first["kernel_name"]) > 1000
    assert k.filter(k["kernel_name"] == "ampere_sgemm_128x128_tn")["short_name"].to_list() == ["ampere_sgemm_128x128_tn"]


def test_gardenia_printfp_smsp_counters(parsed):
    k = parsed(GARDENIA).kernels
    first = k.row(0, named=True)
    assert first["cc"] == "8.0" and first["device"] == 0
    assert first["dram_bytes"] == 5_318_969_728.0
    assert first["flops_fp32"] == 2 * 838_860_800.0
    assert first["duration_s"] == pytest.approx(5_143_174_222.52 / 764_999_989.86)
    assert first["duration_s_source"].startswith("smsp__cycles_elapsed.avg")
    assert first["flops_fp32_source"].startswith("smsp__")
    # smsp__inst_executed_pipe_tensor.sum = 0.00: no tensor work at all, exactly
    assert first["flops_tensor"] == 0.0
    assert first["block_size"] == "(32, 32, 1)" and first["grid_blocks"] == 640 * 1280


def test_b200_raw_page(parsed):
    res = parsed(B200)
    k = res.kernels
    assert k.height == 64
    assert set(k["device_name"]) == {"NVIDIA B200"}
    assert set(k["cc"]) == {"10.0"}
    for col in ("flops_fp64", "flops_fp32", "flops_fp16", "flops_tensor", "dram_bytes"):
        assert k[col].null_count() == 64, col
    # 2 x 3,996,000 kHz x 1e3 x 7680 bit / 8
    peak = 2 * 3_996_000e3 * 7680 / 8
    assert peak == pytest.approx(7.67e12, rel=1e-3)
    assert k["peak_dram_bytes_per_s"].to_list() == [pytest.approx(peak)] * 64
    assert set(k["peak_dram_bytes_per_s_source"]) == {"ncu-device-attributes"}
    first, second = k.row(0, named=True), k.row(1, named=True)
    assert first["duration_s"] == pytest.approx(14976e-9)
    assert second["duration_s"] == pytest.approx(629824e-9)
    assert first["block_threads"] == 16 * 8 and second["grid_blocks"] == 128 * 8
    assert first["short_name"] == "PersistentVariableLengthMergeStatesKernel"
    wide = res.metrics[str(sample(B200))]
    assert wide.height == 64 and wide.width >= 475
    assert res.units[str(sample(B200))]["gpu__time_duration.sum"] == "ns"


def test_rtx5070_bom_crlf_unnamed_and_op_read_write(parsed):
    k = parsed(RTX5070).kernels
    r = k.row(0, named=True)
    assert r["cc"] == "12.0"
    assert r["dram_bytes"] == 54_207_744 + 26_601_216
    assert "dram__bytes_op_read.sum" in r["dram_bytes_source"]
    assert r["duration_s"] == pytest.approx(9_589_248e-9)
    assert r["kernel_name"].startswith("unnamed>::")
    assert r["short_name"] == "gemm_naive_kernel"
    assert r["sm_throughput_pct"] == pytest.approx(97.32)


def test_all_samples_at_once_prefix_ids():
    names = sorted(EXPECTED)
    paths = [sample(n) for n in names]
    res = read_ncu(paths)
    assert res.kernels.height == sum(v[1] for v in EXPECTED.values())
    assert res.kernels["id"].n_unique() == res.kernels.height
    assert res.kernels["id"][0] == "0:0"
    assert [i.path for i in res.inputs] == [str(p) for p in paths]
