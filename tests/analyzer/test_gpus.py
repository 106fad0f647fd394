"""GPU catalogue: datasheet numbers, ridge points, name matching, errors."""

import json
from importlib import resources

import pytest

from ridgeline.analyzer.gpus import PRECISIONS, catalogue, lookup, normalize
from ridgeline.errors import UsageError


def by_name(name):
    return next(g for g in catalogue() if g.name == name)


def test_h100_sxm_datasheet_numbers_and_ridge():
    h100 = by_name("H100 SXM")
    assert h100.peak("fp16_tensor") == 989e12
    assert h100.peak("fp8_tensor") == 1979e12
    assert h100.peak("tf32_tensor") == 494.5e12
    assert h100.peak("fp32") == 66.9e12
    assert h100.peak("fp64") == 33.5e12
    assert h100.peak("fp64_tensor") == 66.9e12
    assert h100.dram_bw_bytes_per_s == 3.35e12
    assert h100.sm_count == 132 and h100.cc == "9.0"
    assert h100.ridge("fp16_tensor") == pytest.approx(989 / 3.35)  # ~295 FLOP/B
    assert 290 < h100.ridge("fp16_tensor") < 300
    assert h100.ridge("fp8_tensor") == pytest.approx(1979 / 3.35)


def test_h200_same_compute_more_bandwidth():
    h100, h200 = by_name("H100 SXM"), by_name("H200")
    assert h200.peak_flops == h100.peak_flops
    assert h200.dram_bw_bytes_per_s == 4.8e12
    assert h200.ridge("fp16_tensor") == pytest.approx(989 / 4.8)


def test_a100_bandwidth_by_memory_size():
    assert by_name("A100 SXM 80GB").peak("fp16_tensor") == 312e12
    assert by_name("A100 SXM 80GB").dram_bw_bytes_per_s == 2.039e12
    assert by_name("A100 SXM 40GB").dram_bw_bytes_per_s == 1.555e12
    assert by_name("A100 PCIe 40GB").dram_bw_bytes_per_s == 1.555e12
    assert by_name("A100 SXM 80GB").peak("fp8_tensor") is None  # Ampere has no FP8
    assert by_name("A100 SXM 80GB").ridge("fp8_tensor") is None


REQUIRED = ["H100 SXM", "H100 PCIe", "H100 NVL", "H200", "B200", "A100 SXM 40GB", "A100 SXM 80GB",
            "A100 PCIe 40GB", "A100 PCIe 80GB", "L40S", "L4", "A10G", "V100 SXM2", "RTX 4090", "T4",
            "RTX 5070", "H800"]


def test_catalogue_covers_required_gpus_with_sources():
    names = [g.name for g in catalogue()]
    assert len(names) == len(set(names))
    for name in REQUIRED:
        g = by_name(name)
        assert g.source, name
        assert g.dram_bw_bytes_per_s > 0 and g.sm_count > 0
        assert set(g.peak_flops) <= set(PRECISIONS)
        assert {"fp32", "fp16_tensor"} <= set(g.peak_flops), name
        # tensor fp16 is always faster than fp32 on CUDA cores
        assert g.peak("fp16_tensor") > g.peak("fp32"), name
        assert set(g.derived) <= set(g.peak_flops)


def test_json_file_is_data_with_a_source_per_entry():
    raw = json.loads(resources.files("ridgeline.analyzer").joinpath("gpus.json").read_text("utf-8"))
    assert all(e["source"] for e in raw["gpus"])
    # one default per family
    families = {}
    for e in raw["gpus"]:
        families.setdefault(e["family"], 0)
        families[e["family"]] += bool(e.get("family_default"))
    assert all(v == 1 for v in families.values()), families


@pytest.mark.parametrize(
    "spelling, expected",
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("h100-sxm", "H100 SXM"),
        ("H100 SXM", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA B200", "B200"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM 80GB"),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM 40GB"),
        ("A100-PCIE-40GB", "A100 PCIe 40GB"),
        ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB"),
        ("Tesla V100-SXM2-16GB", "V100 SXM2"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA GeForce RTX 5070", "RTX 5070"),
        ("Tesla T4", "T4"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA H800", "H800"),
        ("rtx4090", "RTX 4090"),
    ],
)
def test_lookup_spellings(spelling, expected):
    gpu, note = lookup(spelling)
    assert gpu.name == expected
    assert expected in note


def test_l4_and_l40s_do_not_collide():
    assert lookup("L4")[0].name == "L4"
    assert lookup("L40S")[0].name == "L40S"


@pytest.mark.parametrize("family, expected", [("H100", "H100 SXM"), ("A100", "A100 SXM 80GB"), ("V100", "V100 SXM2")])
def test_bare_family_picks_most_common_variant_and_says_so(family, expected):
    gpu, note = lookup(family)
    assert gpu.name == expected
    assert "most common" in note


def test_device_name_with_suffix_matches_prefix_with_note():
    gpu, note = lookup("NVIDIA H100 80GB HBM3 MIG 1g.10gb")
    assert gpu.name == "H100 SXM"
    assert "pass --gpu" in note


def test_unknown_gpu_lists_close_matches():
    with pytest.raises(UsageError) as err:
        lookup("H1OO SXM")
    text = str(err.value)
    assert "unknown GPU" in text and "H100 SXM" in text and "\n" not in text


def test_unknown_gpu_without_close_match_lists_known_names():
    with pytest.raises(UsageError, match="known: .*B200"):
        lookup("MI300X")


def test_normalize_ignores_vendor_words_and_punctuation():
    assert normalize("NVIDIA GeForce RTX-4090") == "rtx4090"
    assert normalize("Tesla T4") == "t4"
