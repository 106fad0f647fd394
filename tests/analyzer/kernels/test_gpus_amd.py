"""AMD Instinct entries of the GPU catalogue, each checked against the sources its entry names.

Sources (the entries' ``source`` fields hold the full references):
ROCm documentation, microarchitecture tables (MI100; MI250 per OAM = two GCDs; MI300X) and GPU
hardware specifications (CUs, GiB, gfx target, GFXIP major/minor); AMD launch figures as AnandTech
reproduces them (MI210, MI100); AMD's MI250X per-OAM figures; the published MI325X and MI350X
figures (third-party reproductions); rocprofiler-compute sysinfo of real MI100, MI200-class,
MI300A and MI300X devices; the device records of the shared MI350X and MI300X samples.
"""

from __future__ import annotations

import pytest

from ridgeline.analyzer.kernels.archrates import per_cu_rate
from ridgeline.analyzer.kernels.gpus import PRECISIONS, catalogue, lookup, try_lookup
from ridgeline.errors import UsageError

AMD = [g for g in catalogue() if g.vendor == "AMD"]


def by_name(name):
    return next(g for g in catalogue() if g.name == name)


def test_the_amd_entries_the_issue_asks_for_are_there():
    assert {g.name for g in AMD} == {"MI100", "MI210", "MI250 GCD", "MI250X GCD", "MI300X", "MI300A", "MI325X",
                                     "MI350X", "MI355X"}
    for g in AMD:
        assert g.unit == "CU" and g.cc == "" and g.segment == "datacenter" and g.source
        assert set(g.peak_flops) <= set(PRECISIONS)
        assert "fp16" not in g.peak_flops  # vector FP16: on no cited datasheet, left out


@pytest.mark.parametrize("name, gfx, arch, hip, cus", [
    ("MI100", "gfx908", "CDNA", "9.0", 120), ("MI210", "gfx90a", "CDNA 2", "9.0", 104),
    ("MI250 GCD", "gfx90a", "CDNA 2", "9.0", 104), ("MI250X GCD", "gfx90a", "CDNA 2", "9.0", 110),
    ("MI300X", "gfx942", "CDNA 3", "9.4", 304), ("MI300A", "gfx942", "CDNA 3", "9.4", 228),
    ("MI325X", "gfx942", "CDNA 3", "9.4", 304), ("MI350X", "gfx950", "CDNA 4", "9.5", 256),
    ("MI355X", "gfx950", "CDNA 4", "9.5", 256),
])
def test_gfx_target_hip_version_and_cus_as_the_rocm_specification_table(name, gfx, arch, hip, cus):
    """ROCm's GPU hardware specifications: LLVM target, GFXIP major/minor, CUs (per GCD for MI250/X)."""
    g = by_name(name)
    assert (g.gfx, g.arch, g.hip_cc, g.sm_count) == (gfx, arch, hip, cus)
    assert g.to_dict()["vendor"] == "AMD" and g.to_dict()["gfx"] == gfx and g.to_dict()["cc"] is None


def test_mi300x_is_the_rocm_microarchitecture_table():
    g = by_name("MI300X")
    table = {"fp64_tensor": 163.4, "fp64": 81.7, "fp32": 163.4, "tf32_tensor": 653.7, "fp16_tensor": 1307.4,
             "fp8_tensor": 2614.9, "int8_tensor": 2614.9}
    assert {p: g.peak(p) / 1e12 for p in g.peak_flops} == pytest.approx(table)
    assert g.dram_bw_bytes_per_s == 5.3e12 and g.memory_bytes == 192e9 and not g.derived
    # every figure is 304 CUs x the table's FLOPS/CLOCK/CU x 2.1 GHz (the clock real MI300Xs record)
    for p, tflops in table.items():
        assert 304 * per_cu_rate("gfx942", p) * 2.1e9 == pytest.approx(tflops * 1e12, rel=0.001), p
    assert g.ridge("fp16_tensor") == pytest.approx(1307.4 / 5.3)  # ~247 FLOP/B
    assert g.ridge("fp8_tensor") == pytest.approx(2614.9 / 5.3)


@pytest.mark.parametrize("name, oam", [
    # ROCm MI250 table (per OAM, two GCDs); AMD's MI250X per-OAM figures
    ("MI250 GCD", {"fp64": 45.3, "fp64_tensor": 90.5, "fp32": 90.5, "fp16_tensor": 362.1, "int8_tensor": 362.1}),
    ("MI250X GCD", {"fp64": 47.9, "fp64_tensor": 95.7, "fp32": 95.7, "fp16_tensor": 383.0, "int8_tensor": 383.0}),
])
def test_an_mi250_entry_is_one_gcd_the_package_halved(name, oam):
    g = by_name(name)
    assert {p: 2 * g.peak(p) / 1e12 for p in g.peak_flops} == pytest.approx(oam)
    assert g.dram_bw_bytes_per_s == pytest.approx(4096 * 3.2e9 / 8)  # HBM2e per GCD: 1.6384 TB/s, half of 3.2768
    assert g.memory_bytes == 64e9 and "GCD" in g.notes and "two devices" in g.notes
    # CDNA 2: no TF32, no FP8
    assert g.peak("tf32_tensor") is None and g.peak("fp8_tensor") is None
    for p in g.peak_flops:  # CUs x per-CU rate x 1.7 GHz reproduces each halved figure
        assert g.sm_count * per_cu_rate("gfx90a", p) * 1.7e9 == pytest.approx(g.peak(p), rel=0.005), p


def test_mi210_is_its_launch_table_and_has_one_mi250_gcds_roofs():
    g = by_name("MI210")
    assert {p: g.peak(p) / 1e12 for p in g.peak_flops} == pytest.approx(
        {"fp64": 22.6, "fp64_tensor": 45.3, "fp32": 45.3, "fp16_tensor": 181.0, "int8_tensor": 181.0})
    gcd = by_name("MI250 GCD")
    assert g.sm_count == gcd.sm_count and g.dram_bw_bytes_per_s == gcd.dram_bw_bytes_per_s
    for p in gcd.peak_flops:  # the same roofs within datasheet rounding (22.6 vs 45.3 / 2)
        assert g.peak(p) == pytest.approx(gcd.peak(p), rel=0.01)
        assert g.ridge(p) == pytest.approx(gcd.ridge(p), rel=0.01)


def test_mi100_matrix_fp32_ceiling_and_no_fp64_matrix():
    g = by_name("MI100")
    assert {p: g.peak(p) / 1e12 for p in g.peak_flops} == pytest.approx(
        {"fp64": 11.5, "fp32": 46.1, "fp16_tensor": 184.6, "int8_tensor": 184.6})
    assert g.peak("fp64_tensor") is None  # CDNA 1: FP64 "matrix" is the vector rate
    assert g.dram_bw_bytes_per_s == pytest.approx(4096 * 2.4e9 / 8)  # 1,228.8 GB/s
    assert "BF16" in g.notes and "92.3" in g.notes  # the BF16 matrix rate is half: said, not hidden
    assert 120 * 1024 * 1.502e9 == pytest.approx(g.peak("fp16_tensor"), rel=0.001)


def test_mi300a_is_derived_from_its_cus_and_recorded_clock():
    g, x = by_name("MI300A"), by_name("MI300X")
    assert set(g.derived) == set(g.peak_flops) == set(x.peak_flops)
    for p in g.peak_flops:  # 228 / 304 of the MI300X at the same 2.1 GHz
        assert g.peak(p) == pytest.approx(x.peak(p) * 228 / 304, rel=0.001)
    assert g.peak("fp16_tensor") == pytest.approx(980.6e12, rel=0.001)


def test_mi325x_is_the_mi300x_compute_with_hbm3e():
    g, x = by_name("MI325X"), by_name("MI300X")
    assert g.peak_flops == x.peak_flops and g.sm_count == x.sm_count
    assert (g.memory_bytes, g.dram_bw_bytes_per_s) == (256e9, 6e12)
    assert set(g.derived) == {"fp64", "fp64_tensor", "int8_tensor"}
    assert g.ridge("fp16_tensor") == pytest.approx(1307.4 / 6.0)


def test_mi350x_and_mi355x_differ_only_in_clock():
    a, b = by_name("MI350X"), by_name("MI355X")
    assert (a.sm_count, a.memory_bytes, a.dram_bw_bytes_per_s) == (b.sm_count, b.memory_bytes, b.dram_bw_bytes_per_s)
    assert {p: a.peak(p) / 1e12 for p in a.peak_flops} == pytest.approx(
        {"fp64": 72.09, "fp64_tensor": 72.09, "fp32": 144.18, "fp16_tensor": 2306.9, "fp8_tensor": 4613.7,
         "int8_tensor": 4613.7}, rel=0.001)
    for p in a.peak_flops:
        assert b.peak(p) / a.peak(p) == pytest.approx(2.4 / 2.2, rel=0.001)
        assert a.peak(p) == pytest.approx(256 * per_cu_rate("gfx950", p) * 2.2e9, rel=0.001)
    assert b.peak("fp8_tensor") == pytest.approx(5.0e15, rel=0.01)  # "5 PFLOPS FP8"
    for g in (a, b):
        assert g.peak("tf32_tensor") is None and "tf32_tensor left out" in g.notes
    assert set(b.derived) == set(b.peak_flops) and not a.derived


def test_tf32_matrix_only_where_the_hardware_has_it():
    has = {g.name for g in AMD if g.peak("tf32_tensor")}
    assert has == {"MI300X", "MI300A", "MI325X"}  # CDNA 3 (XF32); not CDNA 1/2, none published for CDNA 4
    assert {g.name for g in AMD if g.peak("fp8_tensor")} == {"MI300X", "MI300A", "MI325X", "MI350X", "MI355X"}


@pytest.mark.parametrize("spelling, expected", [
    ("AMD Instinct MI300X", "MI300X"), ("AMD Instinct MI300A", "MI300A"), ("AMD Instinct MI325X", "MI325X"),
    ("AMD Instinct MI350X", "MI350X"), ("AMD Instinct MI355X", "MI355X"), ("AMD Instinct MI210", "MI210"),
    ("AMD Instinct MI100", "MI100"), ("MI250", "MI250 GCD"), ("mi250x", "MI250X GCD"), ("MI300X", "MI300X"),
])
def test_rocm_device_names_resolve(spelling, expected):
    assert lookup(spelling)[0].name == expected


def test_a_virtual_function_suffix_matches_with_a_note():
    gpu, note = lookup("AMD Instinct MI300X VF")
    assert gpu.name == "MI300X" and "pass --gpu if wrong" in note


@pytest.mark.parametrize("name", ["AMD Radeon Graphics", "AMD Instinct MI250X/MI250", "gfx90a", "NVIDIA Graphics Device"])
def test_generic_and_shared_names_are_refused_by_name_matching_with_the_reason(name):
    with pytest.raises(UsageError, match="properties") as err:
        lookup(name)
    assert "\n" not in str(err.value)
    gpu, why = try_lookup(name)
    assert gpu is None and "properties" in why


def test_shared_name_lists_both_parts():
    with pytest.raises(UsageError, match=r"MI250X GCD, MI250 GCD"):
        lookup("AMD Instinct MI250X/MI250")


def test_gpu_amd_against_an_nvidia_export_says_it_has_no_cuda_compute_capability():
    from ridgeline.analyzer.kernels.roofline import match_devices

    with pytest.raises(UsageError, match=r"\(MI300X, AMD gfx942, no CUDA compute capability\) contradicts the export"):
        match_devices([None], gpu="MI300X", ccs={None: "9.0"})


def test_gpus_command_details_an_amd_entry(capsys):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["gpus", "mi300x"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert out.startswith("MI300X") and "AMD CDNA 3, gfx942 (HIP 9.4)" in out and "304 CUs" in out
    assert "compute capability" not in out and "None" not in out


def test_gpus_json_says_vendor_and_unit(capsys):
    import json

    from ridgeline.cli import main

    with pytest.raises(SystemExit):
        main(["gpus", "--format", "json"])
    doc = {g["name"]: g for g in json.loads(capsys.readouterr().out)}
    assert doc["MI250 GCD"]["vendor"] == "AMD" and doc["MI250 GCD"]["unit"] == "CU" and doc["MI250 GCD"]["gfx"] == "gfx90a"
    assert doc["H100 SXM"]["vendor"] == "NVIDIA" and doc["H100 SXM"]["unit"] == "SM" and doc["H100 SXM"]["gfx"] is None


# ---- the device records of the shared real samples agree with the entries -------------------------

def _samples():
    from pathlib import Path

    return Path(__file__).resolve().parents[4] / "shared" / "samples" / "rocm"


def test_the_mi350x_sample_records_the_entrys_cus_and_clock():
    import gzip
    import json

    path = _samples() / "tracelens-mi350x-rocprofv3-sdk-json-aorta-train-908_results.json.gz"
    if not path.is_file():
        pytest.skip("the shared MI350X sample is absent")
    tool = json.loads(gzip.decompress(path.read_bytes()))["rocprofiler-sdk-tool"][0]
    gpus = [a for a in tool["agents"] if a.get("product_name") == "AMD Instinct MI350X"]
    assert gpus
    g = lookup(gpus[0]["product_name"])[0]
    assert g.name == "MI350X"
    for a in gpus:
        assert a["cu_count"] == g.sm_count and a["name"] == g.gfx and a["wave_front_size"] == 64
        assert a["max_engine_clk_fcompute"] * 1e6 == g.datasheet_clock("fp16_tensor")
        assert a["gfx_target_version"] == 90500 and g.hip_cc == "9.5"


def test_the_mi300x_rocpd_sample_records_the_entrys_cus_and_clock():
    import json
    import sqlite3

    path = _samples() / "hgliu-mi300x-rocprofv3-rocpd-ck_bmm-28_results.db"
    if not path.is_file():
        pytest.skip("the shared MI300X rocpd sample is absent")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT name, product_name, extdata FROM rocpd_info_agent WHERE type = 'GPU'").fetchall()
    finally:
        con.close()
    assert rows
    for gfx, product, ext in rows:
        g = lookup(product)[0]
        e = json.loads(ext)
        assert g.name == "MI300X" and gfx == g.gfx
        assert e["cu_count"] == g.sm_count and e["max_engine_clk_fcompute"] * 1e6 == g.datasheet_clock("fp32")


# ---- your own AMD GPU in ridgeline.toml -----------------------------------------------------------

LAB_AMD = {"vendor": "AMD", "gfx": "gfx942", "cu_count": 80, "memory_bytes": 192e9, "dram_bw_bytes_per_s": 4e12,
           "peak_flops": {"fp16_tensor": 300e12}, "source": "illustration, not a real part"}


@pytest.fixture
def clean_catalogue():
    from ridgeline.analyzer.kernels import gpus as G

    G.configure(None)
    yield G
    G.configure(None)


def test_a_configured_amd_gpu(clean_catalogue):
    (gpu,) = clean_catalogue.configure({"Lab AMD": LAB_AMD})
    assert (gpu.vendor, gpu.gfx, gpu.sm_count, gpu.cc, gpu.arch, gpu.hip_cc) == ("AMD", "gfx942", 80, "", "CDNA 3", "9.4")
    assert clean_catalogue.lookup("lab amd")[0] is gpu


@pytest.mark.parametrize("change, message", [
    ({"cc": "9.4"}, "an AMD GPU has no CUDA compute capability and no SMs"),
    ({"sm_count": 80}, "an AMD GPU has no CUDA compute capability and no SMs"),
    ({"gfx": "cdna3"}, 'gfx must be an AMD gfx target such as "gfx942"'),
    ({"cu_count": 0}, "cu_count must be a whole number > 0"),
    ({"cu_count": None}, "missing cu_count (every AMD GPU needs gfx, cu_count"),
    ({"vendor": "Intel"}, "vendor must be one of NVIDIA, AMD"),
])
def test_a_bad_amd_entry_is_one_clear_line(clean_catalogue, change, message):
    entry = {k: v for k, v in {**LAB_AMD, **change}.items() if v is not None}
    with pytest.raises(UsageError) as err:
        clean_catalogue.configure({"Lab AMD": entry})
    assert message in str(err.value) and '[tool.ridgeline.gpus."Lab AMD"]' in str(err.value)


def test_gfx_without_vendor_amd_says_to_add_it(clean_catalogue):
    entry = {"cc": "9.0", "sm_count": 10, "gfx": "gfx942", "memory_bytes": 1e9, "dram_bw_bytes_per_s": 1e12,
             "peak_flops": {"fp32": 1e12}, "source": "x"}
    with pytest.raises(UsageError, match='gfx and cu_count describe an AMD GPU: add vendor = "AMD"'):
        clean_catalogue.configure({"Lab": entry})
