"""Every catalogue entry is internally consistent, and derived figures reproduce from their formula.

A figure flagged ``derived`` in gpus.json was computed as SMs x per-SM rate (archrates.RATES for
the entry's compute capability, halved for FP32-accumulate tensor work on GeForce parts) x clock,
or for an AMD entry as CUs x per-CU rate (archtable.AMD_RATES for its gfx target) x clock.
The clock is the entry's ``datasheet_clock_hz`` when it states one; otherwise the clock implied by
a datasheet (non-derived) figure of the same unit class (CUDA-core or tensor), so ratio
derivations ("fp16 = 2 x FP32", "FP8 = 2 x FP16 tensor") are checked the same way.
"""

import pytest

from ridgeline.analyzer.kernels.archrates import AMD_RATES, RATES, unit_rate
from ridgeline.analyzer.kernels.gpus import CUDA_CORE_PRECISIONS, PRECISIONS, TENSOR_PRECISIONS, catalogue, lookup

BUNDLED = [g for g in catalogue() if g.origin == "catalogue"]


def _rate(g, p):
    return unit_rate(g, p)


def _table(g):
    """The entry's per-unit rates: RATES by compute capability, AMD_RATES by gfx target."""
    return AMD_RATES[g.gfx][1] if g.vendor == "AMD" else RATES[g.cc][1]


def _implied_clock(g, p):
    stated = g.datasheet_clock(p)
    if stated:
        return stated
    group = TENSOR_PRECISIONS if p in TENSOR_PRECISIONS else CUDA_CORE_PRECISIONS
    order = ("fp32", "fp16", "fp64") if group is CUDA_CORE_PRECISIONS else ("fp16_tensor", "tf32_tensor", "int8_tensor", "fp8_tensor")
    other = ("fp32", "fp16", "fp64") if group is TENSOR_PRECISIONS else ()
    for q in (*order, *other):  # a part whose every tensor figure is derived: the CUDA-core clock
        if q in g.peak_flops and q not in g.derived and _rate(g, q):
            return g.peak(q) / (g.sm_count * _rate(g, q))
    return None


@pytest.mark.parametrize("gpu", BUNDLED, ids=lambda g: g.name)
def test_entry_consistent(gpu):
    assert gpu.source and gpu.sm_count > 0 and gpu.dram_bw_bytes_per_s > 0 and gpu.memory_bytes > 0
    assert gpu.vendor in ("NVIDIA", "AMD")
    if gpu.vendor == "AMD":  # a gfx target, no CUDA compute capability
        assert gpu.gfx in AMD_RATES and gpu.cc == "", f"{gpu.name}: {gpu.gfx} has no per-CU rates"
    else:
        assert gpu.cc in RATES and not gpu.gfx, f"{gpu.name}: CC {gpu.cc} has no per-SM rates"
    assert gpu.segment in ("datacenter", "workstation", "geforce")
    assert set(gpu.derived) <= set(gpu.peak_flops)
    doc = gpu.to_dict()
    for p, peak in gpu.peak_flops.items():
        assert p in PRECISIONS
        # ridge = peak / bandwidth, in the object and in what `ridgeline gpus --format json` prints
        assert gpu.ridge(p) == pytest.approx(peak / gpu.dram_bw_bytes_per_s)
        assert doc["ridge_flop_per_byte"][p] == pytest.approx(peak / gpu.dram_bw_bytes_per_s)
        # the architecture has the unit the entry claims
        assert _table(gpu).get(p), f"{gpu.name}: {gpu.target} has no {p} unit"
    # a part with tensor cores: tensor fp16 beats CUDA-core fp32
    if "fp16_tensor" in gpu.peak_flops:
        assert gpu.peak("fp16_tensor") > gpu.peak("fp32")


@pytest.mark.parametrize("gpu", [g for g in BUNDLED if g.derived], ids=lambda g: g.name)
def test_derived_figures_reproduce_from_formula(gpu):
    for p in gpu.derived:
        clock = _implied_clock(gpu, p)
        assert clock, f"{gpu.name}: no clock to check derived {p} against"
        expected = gpu.sm_count * _rate(gpu, p) * clock
        # datasheet figures carry 3 significant digits: 1% covers their rounding, not a 2x slip
        assert gpu.peak(p) == pytest.approx(expected, rel=0.01), f"{gpu.name} {p}"


@pytest.mark.parametrize("gpu", [g for g in BUNDLED if g.datasheet_clock("fp32")], ids=lambda g: g.name)
def test_fp32_matches_sm_count_and_clock(gpu):
    """The datasheet FP32 figure agrees with SMs x FP32 rate x the stated clock (a typo in either shows)."""
    expected = gpu.sm_count * _rate(gpu, "fp32") * gpu.datasheet_clock("fp32")
    assert gpu.peak("fp32") == pytest.approx(expected, rel=0.02)


def test_geforce_tensor_is_fp32_accumulate_rate():
    # RTX 3090, GA102 whitepaper: 71 TFLOPS FP16 with FP32 accumulate (142 with FP16 accumulate)
    assert lookup("RTX 3090")[0].peak("fp16_tensor") == pytest.approx(71.2e12, rel=0.01)
    # RTX 5090, RTX Blackwell whitepaper: 209.5 (FP16/FP32-acc), 419 (FP8/FP32-acc), 838 INT8
    g = lookup("NVIDIA GeForce RTX 5090")[0]
    assert g.peak("fp16_tensor") == pytest.approx(209.5e12, rel=0.005)
    assert g.peak("fp8_tensor") == pytest.approx(419e12, rel=0.005)
    assert g.peak("int8_tensor") == pytest.approx(838e12, rel=0.005)
    # workstation and datacenter Ada run FP32 accumulate at full rate: L40S 362 = 142 x 1024 x 2.52 GHz
    assert lookup("L40S")[0].peak("fp16_tensor") == pytest.approx(142 * 1024 * 2.52e9, rel=0.02)
    # GTX 16xx: no tensor cores
    assert not any(p.endswith("_tensor") for p in lookup("NVIDIA GeForce GTX 1660 Ti")[0].peak_flops)


@pytest.mark.parametrize("spelling, expected", [
    ("NVIDIA GeForce RTX 5090", "RTX 5090"),
    ("NVIDIA GeForce RTX 3090", "RTX 3090"),
    ("NVIDIA GeForce RTX 3070", "RTX 3070"),
    ("NVIDIA GeForce RTX 2080 Ti", "RTX 2080 Ti"),
    ("NVIDIA GeForce RTX 2080 SUPER", "RTX 2080 SUPER"),
    ("NVIDIA GeForce GTX 1660 Ti", "GTX 1660 Ti"),
    ("NVIDIA GeForce RTX 5060 Ti", "RTX 5060 Ti"),
    ("NVIDIA A800-SXM4-80GB", "A800 SXM 80GB"),
    ("NVIDIA A800 80GB PCIe", "A800 PCIe 80GB"),
    ("Tesla V100S-PCIE-32GB", "V100S PCIe"),
    ("Tesla V100-PCIE-16GB", "V100 PCIe"),
    ("Tesla V100-SXM2-16GB", "V100 SXM2"),
    ("NVIDIA RTX 4000 Ada Generation", "RTX 4000 Ada"),
    ("Quadro RTX 8000", "Quadro RTX 8000"),
    ("NVIDIA GeForce RTX 3080 12GB", "RTX 3080 12GB"),
    ("NVIDIA GeForce RTX 3080", "RTX 3080"),
    ("NVIDIA H200 NVL", "H200 NVL"),
    ("NVIDIA A30", "A30"),
])
def test_alias_table_matches_recorded_names(spelling, expected):
    assert lookup(spelling)[0].name == expected


def test_listing_groups_by_segment_and_architecture(capsys):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["gpus"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    headings = [line for line in lines if not line.startswith(" ") and ("(CC " in line or "(gfx" in line)]
    assert "GeForce, Blackwell RTX (CC 12.0)" in headings and "Datacenter, Hopper (CC 9.0)" in headings
    assert "Datacenter, CDNA 3 (gfx942)" in headings and "Datacenter, CDNA 2 (gfx90a)" in headings
    assert len(headings) == len(set(headings))  # one heading per group
    import re

    row_re = re.compile(r"^  (.+?) +[0-9.]+( +(-|[0-9.]+)){8}$")  # name, TB/s, 8 ridge points

    def name_of(line):
        m = row_re.match(line)
        assert m, line
        return m.group(1)

    rows = [name_of(line) for line in lines if line.startswith("  ")]
    assert sorted(rows) == sorted(g.name for g in catalogue())  # every GPU listed once
    # a GPU sits under its own segment and architecture
    under = {}
    current = None
    for line in lines:
        if line in headings:
            current = line
        elif line.startswith("  ") and current:
            under[name_of(line)] = current
    assert under["RTX 3070"] == "GeForce, Ampere (GA10x) (CC 8.6)"
    assert under["A800 SXM 80GB"] == "Datacenter, Ampere (GA100) (CC 8.0)"
    assert under["MI300X"] == "Datacenter, CDNA 3 (gfx942)" and under["MI250 GCD"] == "Datacenter, CDNA 2 (gfx90a)"
    assert under["MI355X"] == "Datacenter, CDNA 4 (gfx950)" and under["MI100"] == "Datacenter, CDNA (gfx908)"
    # grouped by vendor: every NVIDIA row under the NVIDIA banner, every AMD row under the AMD one
    banners = [i for i, line in enumerate(lines) if line.startswith("== ")]
    assert [lines[i].split()[1] for i in banners] == ["NVIDIA", "AMD"]
    amd_start = banners[1]
    for i, line in enumerate(lines):
        if line.startswith("  "):
            vendor = next(g.vendor for g in catalogue() if g.name == name_of(line))
            assert (i > amd_start) == (vendor == "AMD"), line
