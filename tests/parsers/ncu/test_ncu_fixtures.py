"""Hand-written ncu fixtures (fixtures/ncu, synthetic): values computed by hand from the text."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema
from ridgeline.errors import InputError
from ridgeline.parsers.ncu.csv_reader import detect_ncu_layout, read_ncu, short_name

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "ncu"


def fx(name: str) -> Path:
    return FIX / name


def row(res, launch_id):
    k = res.kernels
    return k.filter(k["id"] == str(launch_id)).row(0, named=True)


def test_committed_fixtures_match_their_generator():
    spec = importlib.util.spec_from_file_location("make_ncu_fixtures", FIX / "make_fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in mod.FILES:
        assert (FIX / name).read_bytes() == mod.render(name), name


def test_schema_exact_names_order_and_types():
    res = read_ncu([fx("raw-units-row.csv")])
    assert res.kernels.schema == pl.Schema(polars_schema(KERNEL_COLUMNS))


# --- details 2019 -------------------------------------------------------------------------
def test_details_2019_labels_noise_and_volta():
    res = read_ncu([fx("details-2019-12col-labels.csv")])
    assert res.inputs[0].kind == "ncu-details" and res.inputs[0].rows == 2
    r0, r1 = row(res, 0), row(res, 1)
    assert r0["duration_s"] == pytest.approx(12288e-9)
    assert r0["duration_s_source"] == "'Duration' (gpu__time_duration.sum)"
    assert r1["duration_s"] == pytest.approx(25.6e-6)  # "usecond","25.60"
    assert r0["dram_throughput_pct"] == 61.5  # SOL FB; "Memory [%]" 70.00 is not DRAM
    assert r0["sm_throughput_pct"] == 20.25
    assert r0["sm_clock_hz"] == 1.38e9 and r0["dram_clock_hz"] == 8.77e8
    assert (r0["block_threads"], r0["grid_blocks"]) == (256, 1024)
    assert r0["flops_fp32"] == 262144 + 0 + 2 * 1048576
    assert r0["dram_bytes"] == 4194304
    # tensor count 0 -> exactly no tensor work; CC unknown does not matter then
    assert r0["cc"] is None and r0["flops_tensor"] == 0.0
    # CC 7.0 from device attributes: 2,048 HMMA x 512
    assert r1["cc"] == "7.0"
    assert r1["flops_tensor_fp16"] == 2048 * 512 and r1["flops_tensor"] == 2048 * 512
    assert "512" in r1["flops_tensor_source"]
    # the cut row (line 24) is reported, the app/ncu lines are just noise
    assert [s.item for s in res.skipped] == ["line 24"]
    assert any("non-CSV" in n for n in res.notes)


# --- details 2021 with rules ---------------------------------------------------------------
def test_details_2021_ragged_rules():
    res = read_ncu([fx("details-2021-15col-rules-ragged.csv")])
    r0, r1 = row(res, 0), row(res, 1)
    assert r0["duration_s"] == pytest.approx(10_000 / 1e9)
    assert r0["dram_bytes"] == (1000 + 500) * 32
    assert r0["dram_bytes_source"] == "32*dram__sectors_read.sum + 32*dram__sectors_write.sum"
    assert r0["l2_bytes"] == 2000 * 32
    assert r0["flops_fp16"] == 2 * 10 + 2 * 0 + 4 * 1000
    assert r0["flops_fp64"] == 5 + 5 + 2 * 10
    assert r0["flops_fp32"] == 100 + 100 + 2 * 100
    assert r1["flops_fp32"] is None  # fmul missing: no partial sum
    assert r1["dram_bytes"] == 8 * 32
    assert r0["short_name"] == "at::native::vectorized_elementwise_kernel"
    assert r1["short_name"] == "at::native::softmax_warp_forward"
    assert r0["kernel_name"].count(",") >= 3
    long = res.metrics[str(fx("details-2021-15col-rules-ragged.csv"))]
    assert long.filter(pl.col("Rule Type") == "WRN").height == 2  # rule rows are kept


# --- details 2023, several processes/devices, tensor counters --------------------------------
@pytest.mark.parametrize("name", ["details-2023-15col-multiprocess.csv", "details-2023-15col-utf16.csv"])
def test_details_2023_tensor_buckets(name):
    res = read_ncu([fx(name)])
    k = res.kernels
    assert k["process_id"].to_list() == [500, 501, 501]
    assert k["device"].to_list() == [0, 1, 1]
    assert k["stream"].to_list() == [7, 13, 13]
    r0, r1, r2 = row(res, 0), row(res, 1), row(res, 2)
    # totals win over the identical per-family counter: no double count
    assert r0["flops_tensor_fp16"] == 1_073_741_824
    assert r0["flops_tensor"] == 1_073_741_824
    assert r0["flops_tensor_fp64"] is None  # n/a
    assert r0["flops_tensor_tf32"] == 0.0
    assert r0["dram_bytes"] == 30_000_000 + 2_000_000
    assert r0["duration_s"] == pytest.approx(20480e-9)
    # only families: summed per precision
    assert r1["flops_tensor_fp16"] == 1_000_000 + 2_000_000
    assert r1["flops_tensor_int8"] == 500
    assert r1["flops_tensor"] == 3_000_500
    assert "op_hgmma" in r1["flops_tensor_source"]
    assert r1["short_name"] == "cutlass::Kernel2"
    assert r1["grid_blocks"] == 66 * 2
    assert r2["flops_tensor_fp8"] == 4_000_000_000 and r2["flops_tensor_fp16"] == 96
    assert r2["flops_tensor"] == 4_000_000_096


# --- details 2025 with speedup columns -----------------------------------------------------
def test_details_2025_speedup_bom_crlf_autoscaled_labels():
    assert detect_ncu_layout(fx("details-2025-20col-speedup-bom-crlf.csv")) == "details"
    res = read_ncu([fx("details-2025-20col-speedup-bom-crlf.csv")])
    r = row(res, 0)
    assert r["duration_s"] == pytest.approx(12.8e-6)
    assert r["sm_clock_hz"] == pytest.approx(1965e6)
    assert r["dram_clock_hz"] == pytest.approx(3.99e9)
    assert r["dram_throughput_pct"] == 54.9
    assert r["sm_throughput_pct"] == 30.0
    # Memory Workload Analysis "Memory Throughput" 4.20 Tbyte/second x 12.8 us
    assert r["dram_bytes"] == pytest.approx(4.2e12 * 12.8e-6)
    assert "Memory Throughput" in r["dram_bytes_source"] and "duration" in r["dram_bytes_source"]
    assert r["short_name"] == "decode_attention_kernel"
    assert r["cc"] == "10.0" and r["grid_blocks"] == 592


# --- raw page with units row ----------------------------------------------------------------
def test_raw_units_row_peaks_devices_zero_duration():
    res = read_ncu([fx("raw-units-row.csv")])
    assert res.inputs[0].kind == "ncu-raw" and res.inputs[0].rows == 3
    r0, r1, r2 = row(res, 0), row(res, 1), row(res, 2)
    assert r0["device_name"] == "NVIDIA H100 80GB HBM3" and r1["device_name"] == "Tesla V100-SXM2-32GB"
    assert r0["duration_s"] == pytest.approx(100_000e-9)
    assert r0["flops_fp32"] == 1000 + 2000 + 2 * 3000
    assert r0["flops_fp16"] == 2 * 10 + 2 * 20 + 4 * 30
    assert r0["flops_fp64"] == 0
    assert r0["flops_tensor_fp16"] == 2_000_000_000
    assert r0["peak_flops_fp32_per_s"] == pytest.approx(16896 * 2 * 1.83e9)
    assert r0["peak_flops_fp64_per_s"] == pytest.approx(8448 * 2 * 1.83e9)
    assert r0["peak_flops_fp16_per_s"] == pytest.approx(16896 * 4 * 1.83e9)
    assert r0["peak_flops_tensor_per_s"] == pytest.approx(540672 * 1.83e9)
    assert r0["peak_dram_bytes_per_s"] == pytest.approx(1280 * 2_617_187_500)
    assert r0["peak_dram_bytes_per_s_source"] == "dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second"
    assert (r0["dram_bytes"], r0["l2_bytes"], r0["l1_bytes"]) == (167_500_000, 400_000_000, 800_000_000)
    assert r0["dram_throughput_pct"] == 50.0 and r0["sm_throughput_pct"] == 75.5
    # V100, CC 7.0: HMMA count x 512; DRAM peak from attributes (counters n/a)
    assert r1["cc"] == "7.0" and r1["device"] == 1
    assert r1["flops_tensor_fp16"] == 1000 * 512
    assert r1["peak_dram_bytes_per_s"] == pytest.approx(2 * 877_000e3 * 4096 / 8)
    assert r1["peak_dram_bytes_per_s_source"] == "ncu-device-attributes"
    # zero duration: kept, null, reason recorded
    assert r2["duration_s"] is None
    assert r2["duration_s_source"].startswith("rejected (non-positive duration)")
    assert r2["dram_bytes"] == 1000
    assert any("zero or negative duration" in n for n in res.notes)
    assert res.units[str(fx("raw-units-row.csv"))]["dram__bytes.sum.peak_sustained"] == "byte/cycle"
    wide = res.metrics[str(fx("raw-units-row.csv"))]
    assert wide["launch__func_cache_config"].to_list() == ["CachePreferNone", "CachePreferShared", "CachePreferNone"]


def test_raw_autoscaled_rates_and_unknown_unit():
    res = read_ncu([fx("raw-autoscaled-units.csv")])
    r = row(res, 0)
    assert r["duration_s"] == pytest.approx(50e-6)
    assert r["dram_bytes"] == pytest.approx(2e9 * 50e-6)  # Gbyte/second x duration
    assert r["l2_bytes"] == pytest.approx(300e3)  # Kbyte = 1,000 bytes
    assert r["l1_bytes"] == pytest.approx(1.5e6)
    assert r["sm_clock_hz"] == pytest.approx(1.5e9)  # cycle/nsecond
    assert r["dram_clock_hz"] == pytest.approx(2.6e9)  # Ghz
    # (fadd 2 + fmul 0 + 2 x (derived x2 8.00 / 2)) per cycle x 75,000 smsp cycles
    assert r["flops_fp32"] == pytest.approx((2 + 0 + 2 * 4) * 75_000)
    assert "per_cycle_elapsed" in r["flops_fp32_source"]
    # the counter actually read is named: ffma came from ncu's derived x2 metric
    assert "2*derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2/2" in r["flops_fp32_source"]
    assert r["flops_tensor_fp16"] == pytest.approx(1000 * 75_000)
    assert r["peak_flops_fp32_per_s"] == pytest.approx(33792 * 1.5e9)
    assert r["sm_throughput_pct"] == 42.0  # unknown unit: value kept
    assert any("furlong" in n for n in res.notes)


def test_two_header_blocks_and_noise():
    res = read_ncu([fx("raw-two-blocks-noise.csv")])
    k = res.kernels
    assert k["id"].to_list() == ["0", "1", "1/0"]
    assert k["kernel_name"].to_list() == ["k_first", "k_second", "k_third"]
    assert k["dram_bytes"].to_list() == [1000, 3000, 5000]
    assert [s.item for s in res.skipped] == ["line 6"]


def test_several_files_prefix_ids():
    res = read_ncu([fx("raw-two-blocks-noise.csv"), fx("missing-counters.csv")])
    assert res.kernels["id"].to_list() == ["0:0", "0:1", "0:1/0", "1:0"]
    assert [i.rows for i in res.inputs] == [3, 1]
    assert set(res.kernels["source"]) == {str(fx("raw-two-blocks-noise.csv")), str(fx("missing-counters.csv"))}


def test_missing_counters_are_null_not_zero():
    r = row(read_ncu([fx("missing-counters.csv")]), 0)
    assert r["duration_s"] == pytest.approx(1e-6)
    for c in ("flops_fp32", "flops_fp16", "flops_fp64", "flops_tensor", "dram_bytes", "l2_bytes", "peak_dram_bytes_per_s"):
        assert r[c] is None, c
        if c + "_source" in r:
            assert r[c + "_source"] is None
    assert r["sm_throughput_pct"] == 12.5


# --- malformed inputs -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, line, words",
    [
        ("bad-truncated.csv", 6, ["truncated"]),
        ("bad-cut-row-middle.csv", 4, ["unterminated quote"]),
        ("bad-wrong-header.csv", 1, ["expected an ncu details header", "ID,Name,Value"]),
        ("bad-nonnumeric-details.csv", 3, ["dram__bytes.sum", "expected a number", "'lots'"]),
        ("bad-nonnumeric-raw.csv", 5, ["gpu__time_duration.sum", "'abc'"]),
        ("bad-decimal-comma.csv", 3, ["decimal comma", "LC_ALL=C", "15,72"]),
        ("empty.csv", None, ["empty file"]),
        ("error-only-nvgpuctrperm.csv", None, ["ERR_NVGPUCTRPERM", "no CSV"]),
        ("no-kernels-profiled.csv", None, ["No kernels were profiled"]),
        ("summary-page.csv", None, ["--print-summary", "--page raw"]),
    ],
)
def test_malformed_inputs_one_line_errors(name, line, words):
    with pytest.raises(InputError) as exc:
        read_ncu([fx(name)])
    msg = str(exc.value)
    assert "\n" not in msg
    assert msg.startswith(str(fx(name)) + (f":{line}:" if line else ":"))
    assert exc.value.line == line
    for w in words:
        assert w in msg


def test_lenient_mode_nulls_and_lists_bad_cells():
    res = read_ncu([fx("bad-nonnumeric-details.csv")], strict=False)
    assert res.kernels["dram_bytes"].to_list() == [None, 128.0]
    assert [(s.item, "lots" in s.reason) for s in res.skipped] == [("line 3", True)]
    res = read_ncu([fx("bad-truncated.csv")], strict=False)
    assert res.kernels.height == 2 and [s.item for s in res.skipped] == ["line 6"]
    res = read_ncu([fx("bad-cut-row-middle.csv")], strict=False)
    assert res.kernels["duration_s"].to_list() == [pytest.approx(1e-6), pytest.approx(2e-6)]
    assert [s.item for s in res.skipped] == ["line 4"]


def test_decimal_comma_refused_even_when_lenient():
    with pytest.raises(InputError, match="LC_ALL=C"):
        read_ncu([fx("bad-decimal-comma.csv")], strict=False)


def test_layout_detection_by_content_not_name(tmp_path):
    p = tmp_path / "profile.raw.csv"  # misleading name
    p.write_bytes(fx("details-2023-15col-multiprocess.csv").read_bytes())
    assert detect_ncu_layout(p) == "details"
    assert detect_ncu_layout(fx("raw-units-row.csv")) == "raw"
    assert detect_ncu_layout(fx("details-2023-15col-utf16.csv")) == "details"
    for name in ("empty.csv", "bad-wrong-header.csv", "summary-page.csv", "error-only-nvgpuctrperm.csv"):
        assert detect_ncu_layout(fx(name)) is None
    assert detect_ncu_layout(tmp_path / "missing.csv") is None


@pytest.mark.parametrize(
    "name, short",
    [
        ("void cutlass::Kernel<cutlass::gemm::kernel::Gemm<float, 4>>(cutlass::gemm::kernel::Gemm<float, 4>::Params)", "cutlass::Kernel"),
        ("ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn"),
        ("unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)", "gemm_naive_kernel"),
        ("void (anonymous namespace)::foo<int>(int)", "foo"),
        ("cuda_compute_flux(int,int*,float*,float*,float*)", "cuda_compute_flux"),
        ("void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl<at::native::"
         "CUDAFunctor_add<float>>(at::TensorIteratorBase &, const T1 &)::[lambda(int) (instance 1)]>(int, T3)",
         "at::native::elementwise_kernel"),
        ("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4, false, false, cutlass::bfloat16_t>, "
         "true, false>(Flash_fwd_params)", "flash::flash_fwd_kernel"),
    ],
)
def test_short_name_rule(name, short):
    assert short_name(name) == short


@pytest.mark.parametrize(
    "src, bucket",
    [
        ("fp64", "fp64"),  # not fp6!
        ("fp16_dst_fp16", "fp16"),
        ("bf16_dst_fp32", "fp16"),
        ("fp16_bf16_tf32_dst_fp32", "fp16"),  # CC 7.5 shared path
        ("tf32_dst_fp32", "tf32"),
        ("fp8_sparsity_off", "fp8"),
        ("fp4_fp6_fp8_dst_fp16", "fp8"),
        ("fp4_dst_fp32", "fp8"),
        ("int8_sparsity_on", "int8"),
        ("int4", "int8"),
        ("int1", "int8"),
        ("fp2_dst_fp32", None),
    ],
)
def test_tensor_precision_buckets(src, bucket):
    from ridgeline.parsers.ncu.metrics import tensor_bucket

    assert tensor_bucket(src) == bucket


def _raw_file(tmp_path, metrics, values, name="x.csv"):
    ident = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
             "Grid Size", "Device", "CC"]
    q = lambda fs: ",".join(f'"{f}"' for f in fs)  # noqa: E731
    lines = [q(ident + [m for m, _u in metrics]), q([""] * len(ident) + [u for _m, u in metrics])]
    for i, vals in enumerate(values):
        lines.append(q([str(i), "1", "a", "h", "k", "1", "7", "(1, 1, 1)", "(1, 1, 1)", "0", "10.0"] + list(vals)))
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def test_blackwell_paired_fp32_per_second_rates_sparse_and_unknown_tensor(tmp_path):
    s = "sm__sass_thread_inst_executed_op_{}_pred_on.sum"
    metrics = [
        ("gpu__time_duration.sum", "usecond"),
        (s.format("fadd"), "inst"), (s.format("fmul"), "inst"), (s.format("ffma"), "inst"),
        (s.format("fadd2"), "inst"), (s.format("fmul2"), "inst"), (s.format("ffma2"), "inst"),
        ("smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_second", "inst/second"),
        ("smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_second", "inst/second"),
        ("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_second", "Ginst/second"),
        ("sm__ops_path_tensor_src_fp64.sum", ""),
        ("sm__ops_path_tensor_src_fp8_sparsity_on.sum", ""),
        ("sm__ops_path_tensor_src_fp2_dst_fp32.sum", ""),
    ]
    p = _raw_file(tmp_path, metrics, [["10.00", "1", "2", "3", "4", "5", "6", "1000000", "0", "1.50", "77", "1000", "5"]])
    res = read_ncu([p])
    r = row(res, 0)
    # fadd + fmul + 2 ffma + 2 fadd2 + 2 fmul2 + 4 ffma2
    assert r["flops_fp32"] == 1 + 2 + 2 * 3 + 2 * 4 + 2 * 5 + 4 * 6
    assert "ffma2" in r["flops_fp32_source"]
    # rates x duration: (1e6 + 0 + 2 x 1.5e9 inst/s) x 10 us
    assert r["flops_fp64"] == pytest.approx((1e6 + 0 + 2 * 1.5e9) * 10e-6)
    assert "per_second" in r["flops_fp64_source"] and "duration" in r["flops_fp64_source"]
    assert r["flops_tensor_fp64"] == 77 and r["flops_tensor_fp8"] == 1000
    assert r["flops_tensor"] == 1077  # the unknown fp2 counter is not counted...
    assert any("fp2_dst_fp32" in n for n in res.notes)  # ...and said so
    assert any("sparsity_on" in n for n in res.notes)


def test_no_units_row_assumes_base_units(tmp_path):
    ident = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC"'
    p = tmp_path / "nounits.csv"
    p.write_text(ident + ',"gpu__time_duration.sum","dram__bytes.sum"\n"0","1","a","h","k","1","7","(2, 2, 1)","(3, 1, 1)","0","8.0","2500","4096"\n')
    res = read_ncu([p])
    r = row(res, 0)
    assert r["duration_s"] == pytest.approx(2500e-9)  # ns assumed for gpu__time_duration.sum
    assert r["dram_bytes"] == 4096 and r["block_threads"] == 4 and r["grid_blocks"] == 3
    assert any("without a units row" in n for n in res.notes)


def test_decimal_comma_seen_in_a_metric_no_recipe_reads(tmp_path):
    # the counters ridgeline reads look like C numbers ("1.024"), but another column gives the
    # locale away: refuse rather than read 1.024 ns
    metrics = [("gpu__time_duration.sum", "ns"), ("numa__cpu_affinity", ""), ("sm__warps_active.avg.pct_of_peak_sustained_active", "%")]
    p = _raw_file(tmp_path, metrics, [["1.024", "0,12", "66,61"]])
    with pytest.raises(InputError) as exc:
        read_ncu([p])
    assert "LC_ALL=C" in str(exc.value)
    assert exc.value.line == 3 and exc.value.column == "sm__warps_active.avg.pct_of_peak_sustained_active"
    # a list-valued attribute alone ("0,12") is not taken for a decimal comma
    p2 = _raw_file(tmp_path, metrics[:2], [["1024", "0,12"]], name="y.csv")
    assert read_ncu([p2]).kernels["duration_s"][0] == pytest.approx(1024e-9)


@pytest.mark.parametrize(
    "text",
    [
        '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
        '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n',
        '"ID","Process ID","Kernel Name","gpu__time_duration.sum"\n"","","","ns"\n',
    ],
    ids=["details-header-only", "raw-units-row-only"],
)
def test_header_without_launches_is_an_error(tmp_path, text):
    p = tmp_path / "h.csv"
    p.write_text(text)
    with pytest.raises(InputError, match="at least one profiled launch"):
        read_ncu([p])


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read file"):
        read_ncu([tmp_path / "nope.csv"])


def test_a_document_quoting_ncu_is_not_an_ncu_log_and_a_binary_is_named(tmp_path):
    """Issue 37 item 12: a MANIFEST.md quoting 'No kernels were profiled' was refused as 'ncu
    profiled no kernels'; /bin/ls as 'binary data (tried utf-16-be)'."""
    from ridgeline.errors import InputError
    from ridgeline.parsers.ncu.blocks import _decode, _no_csv_reason

    doc = "# Samples\n| file | failed ncu capture: app output + '==WARNING== No kernels were profiled.' |\n"
    assert "profiled no kernels" not in _no_csv_reason(doc)
    assert "profiled no kernels" in _no_csv_reason("app output\n==WARNING== No kernels were profiled.\n")
    elf = b"\x7fELF\x02\x01\x01" + b"\x00" * 4000
    with pytest.raises(InputError, match=r"an executable or shared library \(ELF\)"):
        _decode(elf, tmp_path / "ls")
    zeros = bytes([0, 0, 0, 7]) * 1000  # zero bytes, but not in UTF-16's every-other order
    with pytest.raises(InputError) as err:
        _decode(zeros, tmp_path / "x")
    assert "utf-16" not in str(err.value) and "got binary data" not in str(err.value)
    assert _decode("a,b\n".encode("utf-16-le") * 50, tmp_path / "y").startswith(b"a,b")
