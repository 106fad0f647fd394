"""Golden tests: the whole analysis on every synthetic scenario in fixtures/scenarios/.

1. The set of (rule code, subject) findings equals the scenario's ``expected.json`` exactly.
   ``pytest tests/test_golden.py --update-goldens`` rewrites expected.json when a change is
   intended (then read the diff: each entry should make physical sense, see MANIFEST.md).
2. Physics checked directly on the analysis, not against goldens: decode GEMM intensity ~ batch
   (bf16) and ~ 2 x batch (fp8); GEMMs cross the ridge between batch 256 and 512; attention is
   memory-bound at every batch; on H200 memory-bound kernels take 3.35/4.8 of the H100 time.
   Expected values are computed here from the model shapes and datasheet numbers.
"""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "fixtures" / "scenarios"
NAMES = sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()) if SCENARIOS.is_dir() else []

# options a user would pass on the command line for inputs that do not say them
OPTIONS = {
    "telemetry-fleet": {"interval_s": 15.0},  # dcgmi dmon -d 15000 (dmon rows carry no time)
}

H100_RIDGE_BF16 = 989e12 / 3.35e12  # 295 FLOP/B
BW_RATIO_H200_H100 = 4.8 / 3.35  # 1.433


def _need(module: str, why: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not there yet: {why}")


@functools.lru_cache(maxsize=None)
def analyze(name: str):
    from ridgeline.pipeline import analyze_paths

    folder = SCENARIOS / name
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.name != "expected.json")
    return analyze_paths(files, **OPTIONS.get(name, {}))


def _subject(text: str, name: str) -> str:
    """Subjects must not depend on where the repository lives."""
    return text.replace(str(SCENARIOS / name) + "/", "").replace(str(REPO) + "/", "")


def _findings(result, name: str) -> list[dict]:
    seen = {}
    for f in result.findings:
        key = (f.code, _subject(f.subject, name))
        seen.setdefault(key, {"code": f.code, "name": f.name, "severity": f.severity, "subject": key[1]})
    return [seen[k] for k in sorted(seen)]


@pytest.mark.parametrize("name", NAMES)
def test_golden_findings(name, update_goldens):
    _need("ridgeline.rules.engine", "goldens compare rule findings")
    _need("ridgeline.pipeline", "goldens run the whole analysis")
    got = _findings(analyze(name), name)
    path = SCENARIOS / name / "expected.json"
    if update_goldens:
        doc = {
            "scenario": name,
            "about": "Golden findings (rule code, subject) for this SYNTHETIC scenario; compared exactly by "
                     "tests/test_golden.py. Rewrite with: pytest tests/test_golden.py --update-goldens "
                     "(then read the diff). Ground truth: fixtures/MANIFEST.md.",
            "options": OPTIONS.get(name, {}),
            "findings": got,
        }
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"{path.relative_to(REPO)} is missing: run pytest tests/test_golden.py --update-goldens")
    want = json.loads(path.read_text(encoding="utf-8"))["findings"]
    want_set = {(f["code"], f["subject"]) for f in want}
    got_set = {(f["code"], f["subject"]) for f in got}
    assert got_set == want_set, (
        f"{name}: new {sorted(got_set - want_set)}; gone {sorted(want_set - got_set)} "
        "(intended? pytest tests/test_golden.py --update-goldens)"
    )


# ------------------------------------------------------------------------------------------
# physics, straight from the analysis
# ------------------------------------------------------------------------------------------
def _summary(name: str):
    _need("ridgeline.pipeline", "physics checks run the whole analysis")
    result = analyze(name)
    assert result.summary is not None and result.summary.height > 0
    return result, result.summary.to_dicts()


def _gemms(rows, precision: str | None = None):
    out = [r for r in rows if "gemm" in r["kernel_name"]]
    if precision:
        out = [r for r in out if r["precision"] == precision]
    assert out
    return out


def _attention(rows):
    out = [r for r in rows if r["kernel_name"].startswith("void flash_fwd_splitkv_kernel")]
    assert len(out) == 1
    return out[0]


@pytest.mark.parametrize("batch", [1, 8, 32, 256])
def test_decode_gemm_intensity_tracks_batch_bf16(batch):
    result, rows = _summary(f"decode-b{batch}-h100")
    for r in _gemms(rows, "fp16_tensor"):
        # AI = 2*B*N*K / (2*N*K + 2*B*(N+K)) ~ B while B << N, K; below 8 tokens Hopper's cuBLAS
        # tile pads the token dimension to 8, so the counted FLOPs say 8
        assert r["intensity_dram"] == pytest.approx(max(batch, 8), rel=0.15), r["kernel_name"]
    assert result.ridge("fp16_tensor") == pytest.approx(H100_RIDGE_BF16, rel=0.01)


def test_decode_gemm_intensity_doubles_with_fp8_weights():
    _, rows = _summary("decode-b8-fp8-h100")
    fp8 = _gemms(rows, "fp8_tensor")
    assert len(fp8) == 4  # QKV, O, gate-up, down (the LM head stays bf16)
    for r in fp8:
        assert r["intensity_dram"] == pytest.approx(2 * 8, rel=0.15), r["kernel_name"]


def test_fp8_decode_on_b200_and_70b_on_h200():
    # B200, batch 64, fp8 weights: AI ~ 2 x 64, far below the fp8 ridge 4.5e15 / 7.7e12 = 584
    result, rows = _summary("decode-b64-fp8-b200")
    assert result.gpu_name == "B200"
    for r in _gemms(rows, "fp8_tensor"):
        assert r["intensity_dram"] == pytest.approx(128, rel=0.15) and r["bound"] == "memory"
    assert result.ridge("fp8_tensor") == pytest.approx(4.5e15 / 7.7e12, rel=0.01)
    # 70B-like: 64 query heads share 8 KV heads -> attention 4 * 64 / (2 * 8 * 2) = 8 FLOP/B
    _, rows = _summary("decode-b16-llama70b-fp8-h200")
    assert _attention(rows)["intensity_dram"] == pytest.approx(8, rel=0.05)
    for r in _gemms(rows, "fp8_tensor"):
        assert r["intensity_dram"] == pytest.approx(2 * 16, rel=0.15)


def test_gemms_cross_the_ridge_between_batch_256_and_512():
    ridge = H100_RIDGE_BF16
    for batch in (1, 8, 32):
        _, rows = _summary(f"decode-b{batch}-h100")
        assert all(r["bound"] == "memory" and r["intensity_dram"] < 0.15 * ridge for r in _gemms(rows))
    # batch 256: GEMMs at ~0.8 of the ridge (weights still dominate the bytes): near, memory side
    _, rows = _summary("decode-b256-h100")
    for r in _gemms(rows):
        assert 0.7 * ridge < r["intensity_dram"] < ridge and r["bound"] == "memory", r["kernel_name"]
    # batch 512: every GEMM is past the ridge
    _, rows = _summary("decode-b512-h100")
    for r in _gemms(rows):
        assert r["intensity_dram"] > ridge and r["bound"] == "compute", r["kernel_name"]


@pytest.mark.parametrize("name", ["decode-b1-h100", "decode-b8-h100", "decode-b32-h100", "decode-b256-h100",
                                  "decode-b512-h100", "decode-b8-h200", "decode-b8-fp8-h100"])
def test_decode_attention_is_memory_bound_at_every_batch(name):
    _, rows = _summary(name)
    attn = _attention(rows)
    # 4*B*L*heads*hd FLOPs over B*L*2*kv_heads*hd*2 bytes = heads/kv_heads = 4 FLOP/B
    assert attn["intensity_dram"] == pytest.approx(32 / 8, rel=0.05)
    assert attn["bound"] == "memory"


def test_prefill_gemms_are_compute_bound():
    _, rows = _summary("prefill-2048-h100")
    big = [r for r in _gemms(rows) if r["launches"] == 32]
    assert len(big) == 4
    assert all(r["bound"] == "compute" and r["intensity_dram"] > H100_RIDGE_BF16 for r in big)


def test_h200_runs_memory_bound_kernels_faster_by_the_bandwidth_ratio():
    r100, rows100 = _summary("decode-b8-h100")
    r200, rows200 = _summary("decode-b8-h200")
    assert r100.gpu_name == "H100 SXM" and r200.gpu_name == "H200"
    t100 = {r["kernel_name"]: r["total_duration_s"] for r in rows100}
    t200 = {r["kernel_name"]: r["total_duration_s"] for r in rows200}
    gemms = [r["kernel_name"] for r in _gemms(rows100)]
    for k in gemms:
        assert t200[k] / t100[k] == pytest.approx(1 / BW_RATIO_H200_H100, rel=0.03), k
    # the whole step gains less than 1.43x: launch-floor kernels do not speed up
    speedup = r100.total_gpu_time_s / r200.total_gpu_time_s
    assert 1.2 < speedup < BW_RATIO_H200_H100


# ------------------------------------------------------------------------------------------
# findings that the physics of each scenario calls for (a guard against --update-goldens
# accepting a physically wrong change); rule codes are stable once published
# ------------------------------------------------------------------------------------------
def _by_code(name: str) -> dict[str, list]:
    _need("ridgeline.rules.engine", "these checks read rule findings")
    out: dict[str, list] = {}
    for f in analyze(name).findings:
        out.setdefault(f.code, []).append(f)
    return out


def _gemm_subjects(name: str) -> set[str]:
    return {r["short_name"] or r["kernel_name"] for r in _summary(name)[1] if "gemm" in r["kernel_name"]}


@pytest.mark.parametrize("batch", [1, 8, 32])
def test_small_batch_decode_flags_every_weight_gemm(batch):
    name = f"decode-b{batch}-h100"
    flagged = {f.subject for f in _by_code(name).get("RL101", [])}
    assert flagged and all("gemm" in s.lower() for s in flagged)
    big = {r["kernel_label"] for r in _summary(name)[1]
           if r["kernel_family"] == "gemm" and r["time_share"] >= 0.01}
    assert big <= flagged  # every GEMM holding >= 1% of the time is called memory-bound


@pytest.mark.parametrize("name", ["decode-b256-h100", "decode-b512-h100", "prefill-2048-h100"])
def test_no_small_batch_finding_where_gemms_sit_near_or_past_the_ridge(name):
    assert "RL101" not in _by_code(name)


@pytest.mark.parametrize("name", ["decode-b1-h100", "decode-b8-h100", "decode-b32-h100", "decode-b256-h100",
                                  "decode-b512-h100", "decode-b8-h200", "decode-b8-fp8-h100"])
def test_decode_attention_is_called_memory_bound(name):
    subjects = {f.subject for f in _by_code(name).get("RL102", [])}
    assert any(s.startswith("FlashAttention-2 fwd splitkv") for s in subjects), subjects


def test_prefill_profile_is_recognised_as_prefill():
    notes = _by_code("prefill-2048-h100").get("RL107", [])
    assert notes and "prefill" in notes[0].message


def test_inefficiency_findings():
    found = _by_code("kernel-inefficiency-h100")
    assert any("sgemm" in f.subject for f in found.get("RL104", []))  # fp32 GEMM on CUDA cores
    assert any("LayerNorm" in f.subject for f in found.get("RL103", []))  # 30% of DRAM bandwidth


def test_launch_bound_profile_is_flagged():
    assert "RL106" in _by_code("launch-bound-h100")


def test_fleet_findings_match_the_planted_cases():
    found = _by_code("telemetry-fleet")
    idle = [f.subject for f in found.get("RL203", [])]
    assert any("node02" in s and "gpu:6" in s for s in idle)  # idle but allocated
    busy = [f.subject for f in found.get("RL201", [])]
    assert sum("node02" in s for s in busy) == 6  # busy with idle tensor cores
    stuck = [f.subject for f in found.get("RL205", [])]
    assert any("node03" in s and "gpu:7" in s for s in stuck)  # stuck profiler
    sag = [f.subject for f in found.get("RL204", [])]
    assert sum("node03" in s for s in sag) == 7  # low-traffic sag on the serving-mix GPUs


def test_tile_padding_is_not_read_as_tokens():
    # decode at batch 1 on H100: the GEMMs' counted FLOPs are padded to 8 rows (AI ~8), the norm
    # launches run one block per token (grid 1): RL101 gives 8 as an upper bound and says why
    found = _by_code("decode-b1-h100").get("RL101", [])
    assert found
    for f in found:
        assert "at most ~8 tokens per weight read by the FLOPs counted" in f.message
        assert "launch shapes say ~1" in f.message and "tile padding" in f.message
        ev = {e.metric: e for e in f.evidence}
        assert ev["tokens_by_launch_shape"].value == 1
    # at batch 8 there is no padding to report
    assert all("padding" not in f.message for f in _by_code("decode-b8-h100").get("RL101", []))


# ------------------------------------------------------------------------------------------
# pictures: every scenario's plots keep their text readable (issue 37's done-when)
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_scenario_plots_keep_their_text_inside_and_apart(name):
    """The roofline and telemetry figures of each scenario (the analysis the goldens made): every
    text inside the figure, no two texts on each other (tests/plot_text.py)."""
    _need("ridgeline.pipeline", "plots draw the whole analysis")
    from plot_text import text_problems

    from ridgeline.render import plots

    result = analyze(name)
    problems = []
    if result.summary is not None and result.summary.height:
        problems += text_problems(plots.roofline_figure(result), name=f"{name} roofline")
    fig = plots.telemetry_figure(result) if result.telemetry is not None else None
    if fig is not None:
        problems += text_problems(fig, name=f"{name} telemetry")
    assert problems == []
