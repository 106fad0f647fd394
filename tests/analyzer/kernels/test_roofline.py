"""Classifier on hand-built KERNEL tables: expected numbers computed by hand here."""

import polars as pl
import pytest

from ridgeline.analyzer.kernels.roofline import classify, summarize
from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS, SUMMARY_COLUMNS, polars_schema

H100 = "NVIDIA H100 80GB HBM3"
BW = 3.35e12
BF16 = 989e12


def kernels(*rows):
    """KERNEL table from partial rows: every column not given is null."""
    return pl.DataFrame(list(rows), schema=polars_schema(KERNEL_COLUMNS))


def row(id, name, **kw):
    base = dict(id=str(id), kernel_name=name, short_name=name, device_name=H100)
    base.update(kw)
    return base


def one(df, id):
    return df.filter(pl.col("id") == str(id)).row(0, named=True)


def test_output_has_kernel_and_roofline_columns_in_order():
    out, _ = classify(kernels(row(1, "k", duration_s=1e-3, flops_fp32=1.0, dram_bytes=1.0)))
    assert out.columns == list(KERNEL_COLUMNS) + list(ROOFLINE_COLUMNS)
    assert dict(out.schema) == polars_schema(KERNEL_COLUMNS) | polars_schema(ROOFLINE_COLUMNS)


def test_decode_gemv_is_memory_bound_at_intensity_one():
    # bf16 GEMV: 2 FLOP per weight, 2 bytes per weight -> AI 1 FLOP/B
    weights = 4096 * 4096
    flops, nbytes, dur = 2.0 * weights, 2.0 * weights, 20e-6
    out, roofs = classify(kernels(row(1, "gemv", duration_s=dur, flops_tensor_fp16=flops, flops_tensor=flops, dram_bytes=nbytes)))
    r = one(out, 1)
    assert r["precision"] == "fp16_tensor"
    assert r["intensity_dram"] == pytest.approx(1.0)
    assert r["bound"] == "memory"
    assert r["gpu"] == "H100 SXM"
    assert r["peak_flops_source"] == "catalogue" and r["peak_bw_source"] == "catalogue"
    assert r["ridge_flop_per_byte"] == pytest.approx(BF16 / BW)
    assert r["ridge_distance"] == pytest.approx(1.0 / (BF16 / BW))
    # roof at AI 1 is 1 x bandwidth; fraction = achieved / roof = achieved bandwidth / BW
    assert r["roof_flops_per_s"] == pytest.approx(BW)
    assert r["roof_fraction"] == pytest.approx((flops / dur) / BW)
    assert r["time_to_roof_s"] == pytest.approx(nbytes / BW)
    assert r["missing"] == [] and r["missing_hint"] is None
    assert {(x.kind, x.source) for x in roofs} == {("bandwidth", "catalogue"), ("compute", "catalogue")}


def test_big_gemm_is_compute_bound():
    m = n = k = 8192
    flops = 2.0 * m * n * k
    nbytes = 2.0 * (m * k + k * n + m * n)
    dur = 1.6e-3
    out, _ = classify(kernels(row(2, "gemm", duration_s=dur, flops_tensor_fp16=flops, dram_bytes=nbytes, flops_fp32=1e6)))
    r = one(out, 2)
    assert r["intensity_dram"] == pytest.approx((flops + 1e6) / nbytes)
    assert r["bound"] == "compute"
    assert r["roof_flops_per_s"] == pytest.approx(BF16)
    assert r["roof_fraction"] == pytest.approx(((flops + 1e6) / dur) / BF16)
    assert r["time_to_roof_s"] == pytest.approx((flops + 1e6) / BF16)
    assert r["ridge_distance"] > 1


def test_missing_counters_make_unknown_with_hint():
    out, _ = classify(
        kernels(
            row(1, "no_flops", duration_s=1e-3, dram_bytes=1e6),
            row(2, "no_bytes", duration_s=1e-3, flops_fp32=1e6),
            row(3, "no_time", flops_fp32=1e6, dram_bytes=1e6),
            row(4, "zero_time", duration_s=0.0, flops_fp32=1e6, dram_bytes=1e6),
        )
    )
    r1, r2, r3, r4 = (one(out, i) for i in (1, 2, 3, 4))
    assert all(r["bound"] == "unknown" for r in (r1, r2, r3, r4))
    assert all(r["roof_fraction"] is None and r["time_to_roof_s"] is None for r in (r1, r2, r3, r4))
    assert any("sm__sass_thread_inst_executed_op" in m for m in r1["missing"])
    assert "--set roofline" in r1["missing_hint"]
    assert r2["missing"] == ["dram__bytes.sum"]
    assert "--metrics dram__bytes.sum" in r2["missing_hint"]
    assert r3["missing"] == ["gpu__time_duration.sum"] and r4["missing"] == ["gpu__time_duration.sum"]


def test_zero_flops_with_bytes_is_memory_bound_at_intensity_zero():
    out, _ = classify(kernels(row(1, "copy", duration_s=1e-3, flops_fp32=0.0, dram_bytes=2e9)))
    r = one(out, 1)
    assert r["bound"] == "memory"
    assert r["intensity_dram"] == 0.0
    assert r["precision"] is None
    assert r["roof_fraction"] == pytest.approx((2e9 / 1e-3) / BW)
    assert r["time_to_roof_s"] == pytest.approx(2e9 / BW)


def test_zero_flops_and_zero_bytes_is_unknown_not_memory():
    out, _ = classify(kernels(row(1, "idle", duration_s=1e-6, flops_fp32=0.0, dram_bytes=0.0)))
    r = one(out, 1)
    assert r["bound"] == "unknown" and r["missing"] == []
    assert "roofline does not describe" in r["missing_hint"]


def test_measured_peaks_override_catalogue():
    kw = dict(duration_s=1e-3, flops_fp32=1e9, dram_bytes=1e8)
    out, roofs = classify_roofline_only(
        kernels(
            row(1, "k", peak_flops_fp32_per_s=50e12, peak_dram_bytes_per_s=3.0e12, peak_dram_bytes_per_s_source="dram__bytes.sum.peak_sustained x dram__cycles_elapsed.avg.per_second", **kw),
            row(2, "k", peak_flops_fp32_per_s=60e12, peak_dram_bytes_per_s=3.2e12, **kw),
            row(3, "k", peak_flops_fp32_per_s=70e12, peak_dram_bytes_per_s=3.1e12, **kw),
        )
    )
    r = one(out, 2)
    # each launch against its own recorded peaks (per-cycle peak x its own clock), not the catalogue's 66.9
    assert r["peak_flops_per_s"] == 60e12 and r["peak_flops_source"] == "ncu"
    assert r["peak_bw_bytes_per_s"] == 3.2e12 and r["peak_bw_source"] == "ncu"
    ai = 1e9 / 1e8
    assert r["bound"] == "memory"  # 10 < 60e12/3.2e12
    assert r["roof_fraction"] == pytest.approx((1e9 / 1e-3) / (ai * 3.2e12))
    assert one(out, 1)["roof_fraction"] == pytest.approx((1e8 / 1e-3) / 3.0e12)
    # the roofs listed and drawn: the device's median
    sources = {(x.kind, x.source, x.value) for x in roofs}
    assert ("compute", "ncu", 60e12) in sources and ("bandwidth", "ncu", 3.1e12) in sources
    assert len([x for x in roofs if x.kind == "bandwidth"]) == 1


def test_a_launch_without_a_recorded_peak_gets_its_devices_median():
    kw = dict(duration_s=1e-3, flops_fp32=1e9, dram_bytes=1e8)
    out, _ = classify_roofline_only(kernels(
        row(1, "k", peak_flops_fp32_per_s=50e12, peak_dram_bytes_per_s=3.0e12, **kw),
        row(2, "k", peak_flops_fp32_per_s=70e12, peak_dram_bytes_per_s=3.2e12, **kw),
        row(3, "k", **kw),
    ))
    r = one(out, 3)
    assert r["peak_flops_per_s"] == 60e12 and r["peak_bw_bytes_per_s"] == 3.1e12 and r["peak_bw_source"] == "ncu"


def test_device_attribute_bandwidth_is_labelled():
    out, roofs = classify(
        kernels(row(1, "k", duration_s=1e-3, flops_fp32=1e9, dram_bytes=1e8, peak_dram_bytes_per_s=7.67e12,
                    peak_dram_bytes_per_s_source="2 x device__attribute_memory_clock_rate x device__attribute_global_memory_bus_width / 8"))
    )
    assert one(out, 1)["peak_bw_source"] == "ncu-device-attributes"
    assert any(x.source == "ncu-device-attributes" for x in roofs)


def test_unknown_device_without_measured_peaks_asks_for_gpu_and_gpu_option_fixes_it():
    k = kernels(row(1, "k", device_name="Mystery GPU", duration_s=1e-3, flops_fp32=1e9, dram_bytes=1e9))
    out, roofs = classify(k)
    r = one(out, 1)
    assert r["bound"] == "unknown" and "--gpu" in r["missing_hint"] and r["gpu"] is None
    assert roofs == []
    out, _ = classify(k, gpu="A100")
    r = one(out, 1)
    assert r["gpu"] == "A100 SXM 80GB" and r["bound"] == "memory"
    assert r["peak_flops_per_s"] == 19.5e12


def test_each_device_gets_its_own_roofs():
    kw = dict(duration_s=1e-3, flops_tensor_fp16=2e11, dram_bytes=1e9)  # AI 200
    out, roofs = classify(kernels(row(1, "k", **kw), row(2, "k", device_name="NVIDIA A100-SXM4-80GB", **kw)))
    h, a = one(out, 1), one(out, 2)
    assert h["gpu"] == "H100 SXM" and a["gpu"] == "A100 SXM 80GB"
    assert h["bound"] == "memory"  # 200 < 989/3.35 = 295
    assert a["bound"] == "compute"  # 200 > 312/2.039 = 153
    assert h["ridge_flop_per_byte"] == pytest.approx(989 / 3.35)
    assert a["ridge_flop_per_byte"] == pytest.approx(312 / 2.039)
    assert len([x for x in roofs if x.kind == "bandwidth"]) == 2


def test_dominant_precision_is_largest_flop_count():
    out, _ = classify(
        kernels(
            row(1, "mixed", duration_s=1e-3, flops_fp32=5e9, flops_tensor_fp8=1e9, flops_tensor=1e9, dram_bytes=1e9),
            row(2, "tc", duration_s=1e-3, flops_fp32=1e8, flops_tensor_fp8=1e9, flops_tensor=1e9, dram_bytes=1e9),
            row(3, "volta", duration_s=1e-3, flops_tensor=1e9, dram_bytes=1e9),
        )
    )
    assert one(out, 1)["precision"] == "fp32"
    assert one(out, 2)["precision"] == "fp8_tensor"
    assert one(out, 2)["peak_flops_per_s"] == 1979e12
    assert one(out, 3)["precision"] == "fp16_tensor"  # tensor FLOPs without a split
    assert one(out, 1)["flops"] == pytest.approx(6e9)


def test_missing_kernel_columns_are_added_as_null():
    df = pl.DataFrame({"id": ["1"], "kernel_name": ["k"], "duration_s": [1e-3], "device_name": [H100]})
    out, _ = classify(df)
    assert out.columns == list(KERNEL_COLUMNS) + list(ROOFLINE_COLUMNS)
    assert one(out, 1)["bound"] == "unknown"


def test_summarize_shares_and_weighted_values():
    out, _ = classify_roofline_only(
        kernels(
            row(1, "gemv", duration_s=3e-3, flops_tensor_fp16=1e9, dram_bytes=1e9),
            row(2, "gemv", duration_s=1e-3, flops_tensor_fp16=3e9, dram_bytes=1e9),
            row(3, "other", duration_s=4e-3, dram_bytes=1e9),  # unknown: no FLOPs
        )
    )
    s = summarize(out)
    assert s.columns == list(SUMMARY_COLUMNS)
    g = s.filter(pl.col("kernel_name") == "gemv").row(0, named=True)
    assert g["launches"] == 2
    assert g["total_duration_s"] == pytest.approx(4e-3)
    assert g["time_share"] == pytest.approx(0.5)
    assert g["intensity_dram"] == pytest.approx(4e9 / 2e9)
    assert g["bound"] == "memory"
    rf1 = (1e9 / 3e-3) / BW
    rf2 = (1e9 / 1e-3) / BW
    assert g["roof_fraction"] == pytest.approx((rf1 * 3e-3 + rf2 * 1e-3) / 4e-3)
    assert g["saving_upper_bound_s"] == pytest.approx((3e-3 - 1e9 / BW) + (1e-3 - 1e9 / BW))
    o = s.filter(pl.col("kernel_name") == "other").row(0, named=True)
    assert o["bound"] == "unknown" and o["saving_upper_bound_s"] is None and o["roof_fraction"] is None
    # most time first
    assert s.get_column("total_duration_s").to_list() == sorted(s.get_column("total_duration_s").to_list(), reverse=True)
    assert s.get_column("time_share").sum() == pytest.approx(1.0)


def classify_roofline_only(k, **kw):
    """The roofline arithmetic alone: no latency class, no launch floor."""
    return classify(k, latency_fraction=0.0, launch_floor_s=0.0, **kw)


from hypothesis import given, settings, strategies as st  # noqa: E402

positive = st.floats(min_value=1e3, max_value=1e15, allow_nan=False, allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(flops=positive, nbytes=positive, dur=st.floats(min_value=1e-7, max_value=1.0), tensor=st.booleans())
def test_roofline_identities(flops, nbytes, dur, tensor):
    col = "flops_tensor_fp16" if tensor else "flops_fp32"
    out, _ = classify(kernels(row(1, "k", duration_s=dur, dram_bytes=nbytes, **{col: flops})))
    r = one(out, 1)
    peak = BF16 if tensor else 66.9e12
    ai = flops / nbytes
    side = "memory" if ai < peak / BW else "compute"
    # latency: every roof below 10%, or no longer than the 2 us launch floor
    busiest = max(flops / dur / peak, nbytes / dur / BW)
    assert r["busiest_roof_fraction"] == pytest.approx(busiest)
    assert r["bound"] == ("latency" if busiest < 0.10 or dur <= 2e-6 else side)
    # the latency class splits at 20 us: launch-bound at or below, stall-bound above; null elsewhere
    assert r["latency_kind"] == (None if r["bound"] != "latency" else "launch" if dur <= 20e-6 else "stall")
    assert r["roof_flops_per_s"] == pytest.approx(min(peak, ai * BW))
    assert r["roof_fraction"] * r["roof_flops_per_s"] == pytest.approx(flops / dur)
    t_roof = max(flops / peak, nbytes / BW)
    assert r["time_to_roof_s"] == pytest.approx(max(t_roof, 2e-6))  # the launch floor is never a saving
    # at 100% of the roof the launch would take exactly t_roof
    assert t_roof == pytest.approx(dur * r["roof_fraction"])
    assert (r["ridge_distance"] < 1) == (side == "memory")


def test_measured_roof_names_its_clock():
    k = kernels(row(1, "k", duration_s=1e-3, flops_fp32=1e9, dram_bytes=1e9, sm_clock_hz=1.5e9,
                    dram_clock_hz=2.6e9, peak_flops_fp32_per_s=50e12, peak_dram_bytes_per_s=3e12))
    _, roofs = classify(k)
    compute = next(r for r in roofs if r.kind == "compute")
    bandwidth = next(r for r in roofs if r.kind == "bandwidth")
    assert compute.source == "ncu" and "SM clock 1.5 GHz" in compute.detail
    assert bandwidth.source == "ncu" and "DRAM clock 2.6 GHz" in bandwidth.detail
