"""GPU catalogue: datasheet numbers, ridge points, name matching, errors."""

import json
from importlib import resources

import pytest

from ridgeline.analyzer.kernels.gpus import PRECISIONS, catalogue, lookup, normalize
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
            "RTX 5070", "H800", "GB200", "RTX 6000 Ada", "RTX PRO 6000", "A40"]


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
    raw = json.loads(resources.files("ridgeline.analyzer.kernels").joinpath("gpus.json").read_text("utf-8"))
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
        # device names as ncu records them for the GPUs added with issue 15
        ("NVIDIA GB200", "GB200"),
        ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000"),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX PRO 6000"),
        ("NVIDIA A40", "A40"),
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


def test_gb200_is_the_nvl72_datasheet_divided_per_gpu():
    """GB200 NVL72 rack totals (72 GPUs: FP8 720 PFLOPS with sparsity, 576 TB/s) per GPU, dense."""
    gb200 = by_name("GB200")
    assert gb200.peak("fp8_tensor") == pytest.approx(720e15 / 72 / 2)
    assert gb200.dram_bw_bytes_per_s == pytest.approx(576e12 / 72)
    # the tensor ladder halves per precision step, as on every Blackwell datasheet column
    assert gb200.peak("fp16_tensor") == pytest.approx(gb200.peak("fp8_tensor") / 2)
    assert gb200.peak("tf32_tensor") == pytest.approx(gb200.peak("fp16_tensor") / 2)
    assert gb200.cc == "10.0" and gb200.sm_count == 152
    assert set(gb200.derived) == {"fp16"}
    # GB200's GPU runs at 1,200 W against the HGX B200's 1,000 W: every roof at least the B200's
    b200 = by_name("B200")
    assert all(gb200.peak(p) >= b200.peak(p) for p in b200.peak_flops)


def test_rtx_6000_ada_from_its_sparse_fp8_figure():
    ada = by_name("RTX 6000 Ada")
    assert ada.peak("fp8_tensor") == pytest.approx(1457e12 / 2)  # datasheet: 1,457 TFLOPS with sparsity
    assert ada.peak("fp32") == 91.1e12 and ada.dram_bw_bytes_per_s == 960e9
    assert ada.sm_count == 142 and ada.cc == "8.9"
    # the derived ladder is stated as such: FP16 (FP32 accumulate) half of FP8, TF32 a quarter
    assert ada.peak("fp16_tensor") == pytest.approx(ada.peak("fp8_tensor") / 2)
    assert ada.peak("tf32_tensor") == pytest.approx(ada.peak("fp8_tensor") / 4)
    assert {"fp16_tensor", "tf32_tensor", "int8_tensor"} <= set(ada.derived)
    assert "fp8_tensor" not in ada.derived
    # FP32 = 18,176 CUDA cores x 2 FLOP x ~2.505 GHz boost
    assert ada.peak("fp32") == pytest.approx(18176 * 2 * 2.505e9, rel=0.01)


def test_rtx_pro_6000_blackwell_from_its_ai_tops():
    pro = by_name("RTX PRO 6000")
    # 4,000 AI TOPS = FP4 with sparsity: FP4 dense 2,000, FP8 dense 1,000
    assert pro.peak("fp8_tensor") == pytest.approx(4000e12 / 2 / 2)
    assert pro.dram_bw_bytes_per_s == pytest.approx(512 / 8 * 28e9)  # 512-bit GDDR7 at 28 Gbps
    assert pro.memory_bytes == 96e9 and pro.sm_count == 188 and pro.cc == "12.0"
    assert "fp8_tensor" in pro.derived and "fp32" not in pro.derived


def test_max_q_edition_matches_the_pro_6000_only_with_a_warning_note():
    gpu, note = lookup("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition")
    assert gpu.name == "RTX PRO 6000" and "pass --gpu if wrong" in note


@pytest.mark.parametrize("name", ["NVIDIA GB300", "NVIDIA GH100"])
def test_near_names_of_new_entries_are_not_silently_matched(name):
    """GB300 and a bare GH100 die are other parts: unknown, with the way to add them."""
    with pytest.raises(UsageError, match=r"tool\.ridgeline\.gpus"):
        lookup(name)


@pytest.mark.parametrize("name, expected", [("GB200", "GB200"), ("NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada"),
                                            ("Quadro RTX 6000", "Quadro RTX 6000"), ("NVIDIA A16", "A16"),
                                            ("rtx pro 6000 blackwell", "RTX PRO 6000"), ("A40", "A40"),
                                            ("NVIDIA GH200 480GB", "GH200"), ("NVIDIA GH200 144G HBM3e", "GH200 144GB"),
                                            ("NVIDIA A10", "A10")])
def test_gpus_command_shows_each_new_entry_with_its_source(capsys, name, expected):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["gpus", name])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    assert out.startswith(expected) and by_name(expected).source[:40] in " ".join(out.split())
    assert "None" not in out


@pytest.mark.parametrize("device, expected", [("NVIDIA GH200 480GB", "GH200"), ("NVIDIA GH200 144G HBM3e", "GH200 144GB"),
                                              ("NVIDIA A10", "A10"), ("NVIDIA A10G", "A10G")])
def test_gh200_and_a10_device_names_resolve_to_their_own_entries(device, expected):
    gpu, _note = lookup(device)
    assert gpu.name == expected


def test_gh200_is_an_h100_sxm_gpu_with_other_memory():
    """The GH200's GPU is the H100 SXM's (132 SMs, same clocks): same compute roofs, its own memory;
    '480GB' names the CPU's LPDDR5X, the GPU has 96 GB HBM3 at 4 TB/s (144 GB HBM3e at 4.9 TB/s)."""
    h100, gh, gh144 = by_name("H100 SXM"), by_name("GH200"), by_name("GH200 144GB")
    for g in (gh, gh144):
        assert g.peak_flops == h100.peak_flops and g.sm_count == 132 and g.cc == "9.0"
    assert (gh.memory_bytes, gh.dram_bw_bytes_per_s) == (96e9, 4.0e12)
    assert (gh144.memory_bytes, gh144.dram_bw_bytes_per_s) == (144e9, 4.9e12)
    # the bf16 ridge moves with bandwidth only: 989e12 / 4.0e12
    assert gh.peak("fp16_tensor") / gh.dram_bw_bytes_per_s == pytest.approx(989e12 / 4.0e12)


def test_a10_tensor_rates_follow_from_its_sms_and_clock():
    a10 = by_name("A10")
    # 72 SMs x 4 tensor cores x 128 dense fp16 FMA per clock (GA102: half of GA100's 256) x 2 FLOP x 1.695 GHz
    # (datasheet: 125 TFLOPS)
    assert a10.peak("fp16_tensor") == pytest.approx(72 * 4 * 128 * 2 * 1.695e9, rel=0.01)
    assert a10.peak("tf32_tensor") == pytest.approx(a10.peak("fp16_tensor") / 2)
    assert a10.peak("int8_tensor") == pytest.approx(a10.peak("fp16_tensor") * 2)
    assert a10.peak("fp32") == pytest.approx(9216 * 2 * 1.695e9, rel=0.01)
    assert "fp8_tensor" not in a10.peak_flops  # Ampere: no FP8 tensor cores
    assert a10.dram_bw_bytes_per_s == 600e9 and a10.sm_count == 72
