"""The synthetic fixtures: committed files equal what fixtures/generate.py writes, and the
numbers in them follow the physics stated in fixtures/README.md (expected values computed by
hand here from the model shapes, not read back from the generator)."""

from __future__ import annotations

import csv
import importlib.util
import io
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "fixtures" / "scenarios"
DEMO = REPO / "ridgeline" / "data" / "demo"

H100_BW = 3.35e12
H200_BW = 4.8e12


def _load_generator():
    spec = importlib.util.spec_from_file_location("ridgeline_fixture_generator", REPO / "fixtures" / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("regen")
    _load_generator().write_all(root)
    return root


def _generated_files(root: Path) -> list[Path]:
    out = []
    for base in (root / "fixtures", root / "ridgeline" / "data" / "demo"):
        out += [p for p in base.rglob("*") if p.is_file()]
    return sorted(out)


def test_committed_fixtures_equal_generator_output(regenerated):
    files = _generated_files(regenerated)
    assert len(files) > 15
    differ = []
    for p in files:
        rel = p.relative_to(regenerated)
        committed = REPO / rel
        if not committed.exists() or committed.read_bytes() != p.read_bytes():
            differ.append(str(rel))
    assert not differ, f"stale fixtures (run python fixtures/generate.py): {differ}"


def test_no_committed_file_the_generator_does_not_write(regenerated):
    allowed_by_hand = {"expected.json"}
    extra = []
    for p in list(SCENARIOS.rglob("*")) + list(DEMO.rglob("*")):
        if not p.is_file() or p.name in allowed_by_hand or "__pycache__" in p.parts:
            continue
        if not (regenerated / p.relative_to(REPO)).exists():
            extra.append(str(p.relative_to(REPO)))
    assert not extra, f"files not produced by the generator: {extra}"


def test_every_file_says_synthetic_and_how_to_regenerate(regenerated):
    for p in _generated_files(regenerated):
        head = p.read_text(encoding="utf-8")[:600]
        assert "SYNTHETIC" in head, p
        assert "python fixtures/generate.py" in head, p


def test_sizes_stay_small():
    total = 0
    for folder in SCENARIOS.iterdir():
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        assert size < 2_000_000, f"{folder.name}: {size} bytes"
        total += size
    assert total < 15_000_000


def test_check_mode_reports_a_modified_file(tmp_path):
    gen = _load_generator()
    gen.write_all(tmp_path)
    assert gen.check(tmp_path) == []
    victim = tmp_path / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"
    victim.write_text(victim.read_text(encoding="utf-8").replace("NVIDIA H100", "NVIDIA H1OO", 1), encoding="utf-8")
    assert gen.check(tmp_path) == ["fixtures/scenarios/decode-b8-h100/profile.ncu-raw.csv: differs"]


# ------------------------------------------------------------------------------------------
# reading the exports back with the csv module (independent of ridgeline's parser)
# ------------------------------------------------------------------------------------------
def _csv_block(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID",'))
    body = [ln for ln in lines[start:] if ln.startswith('"')]
    return list(csv.reader(io.StringIO("\n".join(body))))


def _raw(path: Path) -> list[dict[str, str]]:
    rows = _csv_block(path)
    header, _units, data = rows[0], rows[1], rows[2:]
    return [dict(zip(header, r)) for r in data]


def _details(path: Path) -> dict[tuple[str, str], str]:
    rows = _csv_block(path)
    header = rows[0]
    out = {}
    for r in rows[1:]:
        d = dict(zip(header, r))
        if d.get("Metric Name"):
            out[(d["ID"], d["Metric Name"])] = d["Metric Value"]
    return out


def _first(rows, needle):
    return next(r for r in rows if needle in r["Kernel Name"])


QKV_TILE_DECODE = "tilesize64x64x64"  # the decode QKV GEMM's name


def test_decode_b8_qkv_gemm_counters_match_hand_arithmetic():
    rows = _raw(SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv")
    assert len(rows) == 1 + 32 * 11 + 6  # embedding, 11 kernels x 32 layers, norm, lm head, 2 sampling, 2 tiny
    qkv = _first(rows, QKV_TILE_DECODE)
    # Q, K, V out features: (32 + 2*8) heads x 128 = 6144; K = hidden 4096; M = batch 8
    assert int(qkv["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]) == 2 * 8 * 6144 * 4096
    assert int(qkv["dram__bytes.sum"]) == 6144 * 4096 * 2 + 8 * 4096 * 2 + 8 * 6144 * 2
    # memory-bound at 84% of 3.35 TB/s (+-2% jitter)
    t = int(qkv["gpu__time_duration.sum"]) * 1e-9
    assert t == pytest.approx(50_495_488 / H100_BW / 0.84, rel=0.025)
    assert qkv["device__attribute_display_name"] == "NVIDIA H100 80GB HBM3"
    assert qkv["CC"] == "9.0"
    # recorded peaks: 989 TFLOP/s dense (wgmma, sparsity off) and 3.35 TB/s at the recorded clocks;
    # as in real Hopper exports the bf16 total's peak is the 2:4-sparse rate, twice the dense one,
    # and the legacy mma.sync path's dense rate is 2/3 of wgmma's
    clock = float(qkv["sm__cycles_elapsed.avg.per_second"])
    fam = "sm__ops_path_tensor_op_{}_src_bf16_dst_fp32_sparsity_{}.sum"
    tensor_peak = float(qkv[fam.format("hgmma", "off") + ".peak_sustained"]) * clock
    assert tensor_peak == pytest.approx(989e12, rel=0.002)
    assert float(qkv["sm__ops_path_tensor_src_bf16_dst_fp32.sum.peak_sustained"]) * clock == pytest.approx(2 * 989e12, rel=0.002)
    assert float(qkv[fam.format("hmma", "off") + ".peak_sustained"]) * clock == pytest.approx(989e12 * 2 / 3, rel=0.002)
    assert int(qkv[fam.format("hgmma", "off")]) == 2 * 8 * 6144 * 4096 and int(qkv[fam.format("hmma", "off")]) == 0
    bw = float(qkv["dram__bytes.sum.peak_sustained"]) * float(qkv["dram__cycles_elapsed.avg.per_second"])
    assert bw == pytest.approx(H100_BW, rel=0.001)


def test_decode_attention_reads_the_kv_cache():
    rows = _raw(SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv")
    attn = _first(rows, "flash_fwd_splitkv_kernel")
    b, ctx, heads, kv, hd = 8, 1024, 32, 8, 128
    assert int(attn["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]) == 4 * b * ctx * heads * hd
    kv_bytes = b * ctx * 2 * kv * hd * 2
    assert kv_bytes <= int(attn["dram__bytes.sum"]) <= kv_bytes * 1.01


def test_fp8_weights_halve_the_gemm_bytes():
    rows = _raw(SCENARIOS / "decode-b8-fp8-h100" / "profile.ncu-raw.csv")
    qkv = _first(rows, "e4m3e4m3_bf16f32_f32_tn_n_" + QKV_TILE_DECODE)
    assert int(qkv["sm__ops_path_tensor_src_fp8_sparsity_off.sum"]) == 2 * 8 * 6144 * 4096
    assert int(qkv["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]) == 0
    assert int(qkv["dram__bytes.sum"]) == 6144 * 4096 * 1 + 8 * 4096 * 1 + 8 * 6144 * 2


def test_h200_memory_bound_kernels_are_faster_by_the_bandwidth_ratio():
    h100 = _raw(SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv")
    h200 = _raw(SCENARIOS / "decode-b8-h200" / "profile.ncu-raw.csv")
    assert len(h100) == len(h200)
    gate_up = [(a, b) for a, b in zip(h100, h200) if "tilesize128x64x64" in a["Kernel Name"]]
    assert len(gate_up) == 32
    for a, b in gate_up:
        ratio = int(a["gpu__time_duration.sum"]) / int(b["gpu__time_duration.sum"])
        assert ratio == pytest.approx(H200_BW / H100_BW, rel=0.002)
    assert h200[0]["device__attribute_display_name"] == "NVIDIA H200"


def test_prefill_gemms_are_compute_limited():
    rows = _raw(SCENARIOS / "prefill-2048-h100" / "profile.ncu-raw.csv")
    qkv = _first(rows, "tilesize128x128x64")
    flops = 2 * 2048 * 6144 * 4096
    assert int(qkv["sm__ops_path_tensor_src_bf16_dst_fp32.sum"]) == flops
    t = int(qkv["gpu__time_duration.sum"]) * 1e-9
    assert t == pytest.approx(flops / 989e12 / 0.72, rel=0.025)
    assert flops / int(qkv["dram__bytes.sum"]) > 295


def test_old_layout_has_kernel_time_nsecond_and_grouping():
    path = SCENARIOS / "decode-b8-a100-ncu2021" / "profile.ncu-details.csv"
    rows = _csv_block(path)
    assert rows[0] == ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context",
                       "Stream", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]
    dur = [r for r in rows[1:] if r[9] == "gpu__time_duration.sum"]
    assert dur and all(r[10] == "nsecond" for r in dur)
    assert any("," in r[11] for r in rows[1:] if r[9] == "dram__bytes.sum")
    assert all(len(r) == 12 for r in rows)


def test_rules_layout_rows_are_ragged_like_ncu():
    path = SCENARIOS / "kernel-inefficiency-h100" / "profile.ncu-details.csv"
    rows = _csv_block(path)
    assert len(rows[0]) == 20
    widths = {len(r) for r in rows[1:]}
    assert widths == {16, 20}  # metric rows: 15 values + trailing comma; rule rows: all 20
    rule_rows = [r for r in rows[1:] if len(r) == 20]
    assert {r[11] for r in rule_rows} == {"SpeedOfLight"} and all(r[12] == "" for r in rule_rows)


def test_inefficient_copy_reaches_thirty_percent_of_bandwidth():
    vals = _details(SCENARIOS / "kernel-inefficiency-h100" / "profile.ncu-details.csv")
    rows = _csv_block(SCENARIOS / "kernel-inefficiency-h100" / "profile.ncu-details.csv")
    copy_ids = {r[0] for r in rows[1:] if "gpu_kernel_impl_nocast" in r[4]}
    assert len(copy_ids) == 2
    for lid in copy_ids:
        bw = float(vals[(lid, "dram__bytes.sum")]) / (float(vals[(lid, "gpu__time_duration.sum")]) * 1e-9)
        assert bw / H100_BW == pytest.approx(0.30, abs=0.01)


def test_launch_bound_profile_is_many_tiny_launches():
    rows = _raw(SCENARIOS / "launch-bound-h100" / "profile.ncu-raw.csv")
    assert len(rows) == 2000
    durations = [int(r["gpu__time_duration.sum"]) for r in rows]
    assert all(2500 <= d <= 3500 for d in durations)
    assert max(int(r["dram__bytes.sum"]) for r in rows) <= 6144


def test_dmon_fleet_shape():
    text = (SCENARIOS / "telemetry-fleet" / "node04.dmon").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert any(ln.startswith("dcgmi dmon -e ") and "-d 15000" in ln for ln in lines)
    rows = [ln for ln in lines if ln.startswith("GPU")]
    # 6 whole GPUs + 2 GPUs split into 2 MIG instances each = 10 entities x 480 ticks
    assert len(rows) == 10 * 480
    mig = [ln for ln in rows if ln.startswith("GPU-I ")]
    assert len(mig) == 4 * 480
    # MIG instances report no GPU_UTIL; PROF fields of GPU 2 are never reported
    assert all(ln.split()[2] == "N/A" for ln in mig)
    gpu2 = [ln.split() for ln in rows if ln.startswith("GPU 2 ")]
    assert all(parts[-4:] == ["N/A"] * 4 for parts in gpu2)


def test_exporter_lines_carry_timestamps():
    text = (SCENARIOS / "telemetry-exporter-mig" / "dcgm-exporter.prom").read_text(encoding="utf-8")
    samples = [ln for ln in text.splitlines() if ln.startswith("DCGM_FI_")]
    stamps = {int(ln.rsplit(" ", 1)[1]) for ln in samples}
    assert len(stamps) == 80 and max(stamps) - min(stamps) == 79 * 15000
    mig_util = [ln for ln in samples if ln.startswith("DCGM_FI_DEV_GPU_UTIL") and "GPU_I_ID" in ln]
    assert mig_util == []
    assert not any(ln.startswith("DCGM_FI_PROF_") and 'gpu="1"' in ln for ln in samples)


def test_new_details_layout_has_the_2023_columns():
    rows = _csv_block(SCENARIOS / "decode-b32-h100" / "profile.ncu-details.csv")
    assert rows[0] == ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                       "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit",
                       "Metric Value"]
    assert {len(r) for r in rows} == {15}
    units = {r[12]: r[13] for r in rows[1:]}
    assert units["gpu__time_duration.sum"] == "ns" and units["sm__cycles_elapsed.avg.per_second"] == "hz"
    # --launch-skip 331 --launch-count 28: IDs restart at 0 in the export
    assert sorted({int(r[0]) for r in rows[1:]}) == list(range(28))


def test_generation_is_deterministic(tmp_path):
    gen = _load_generator()
    gen.build(tmp_path)
    first = dict(gen._WRITTEN)
    gen.build(tmp_path)
    assert first == gen._WRITTEN
