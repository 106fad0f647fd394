"""ridgeline.testing's assertion helpers and kernel selection, on the synthetic scenarios.

Expected values come from the scenarios' physics (fixtures/MANIFEST.md): prefill GEMMs are
compute-bound (intensity > ridge 295 FLOP/B on H100), decode GEMMs at batch 8 sit at ~8 FLOP/B,
the 1-row LM head of a prefill is memory-bound.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ridgeline.testing import analyze, assert_kernel, assert_no_findings, assert_time_share, kernel_table

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "fixtures" / "scenarios"
PREFILL = SCENARIOS / "prefill-2048-h100" / "profile.ncu-raw.csv"
DECODE = SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv"
LAUNCH = SCENARIOS / "launch-bound-h100" / "profile.ncu-raw.csv"


@pytest.fixture(scope="module")
def prefill():
    return analyze(PREFILL)


@pytest.fixture(scope="module")
def decode():
    return analyze(DECODE)


def test_importing_the_plugin_imports_no_polars_and_no_analyzer():
    code = ("import sys, ridgeline.testing, ridgeline.testing.plugin; "
            "print(sorted(m for m in ('polars', 'pandas', 'ridgeline.pipeline', 'ridgeline.rules.engine', "
            "'ridgeline.parsers.ncu.csv_reader') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_plugin_is_registered_as_a_pytest11_entry_point():
    from importlib.metadata import entry_points

    found = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert found.get("ridgeline") == "ridgeline.testing.plugin"


def _ridgeline_imports(path: Path) -> set[str]:
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in found if m.startswith("ridgeline")}


def test_nothing_below_the_testing_and_synth_packages_imports_them():
    bad = []
    for layer in ("parsers", "analyzer", "rules", "render"):
        for path in (REPO / "ridgeline" / layer).rglob("*.py"):
            if any(m.startswith(("ridgeline.testing", "ridgeline.synth")) for m in _ridgeline_imports(path)):
                bad.append(str(path.relative_to(REPO)))
    assert not bad


def test_synth_writes_files_from_the_gpu_catalogue_alone():
    """ridgeline.synth may read the catalogue; it never reaches parsers, rules, the pipeline or renderers."""
    allowed = ("ridgeline.synth", "ridgeline.errors", "ridgeline.analyzer.kernels.gpus")
    bad = {f"{p.name}: {m}" for p in (REPO / "ridgeline" / "synth").rglob("*.py")
           for m in _ridgeline_imports(p) if not m.startswith(allowed)}
    assert not bad


def test_analyze_is_memoized(prefill):
    assert analyze(PREFILL) is prefill
    assert analyze(str(PREFILL)) is prefill  # same file, spelled differently


def test_kernel_table_groups_like_the_rules(prefill):
    table = kernel_table(prefill)
    assert table["time_share"].sum() == pytest.approx(1.0, rel=1e-6)
    big = table.filter(family="gemm", launches=32)
    assert big.height == 4 and set(big["bound"]) == {"compute"}
    # finding subjects are kernel-group subjects
    subjects = set(table["subject"])
    assert {f.subject for f in prefill.findings if f.subject_kind == "kernel"} <= subjects


def test_assert_kernel_passes_on_prefill_gemms(prefill):
    assert_kernel(prefill, "gemm", bound="compute", min_roof_fraction=0.7, min_intensity=295,
                  ignore_below_share=0.01)
    assert_kernel(prefill, family="gemm", exclude="64x256", bound="compute")  # the LM head's tile
    assert_kernel(prefill, pattern=r"^sm90_xmma_gemm", bound=("compute", "memory"))


def test_assert_kernel_names_the_memory_bound_lm_head(prefill):
    with pytest.raises(AssertionError) as exc:
        assert_kernel(prefill, "gemm", bound="compute")
    text = str(exc.value)
    table = kernel_table(prefill).filter(bound="memory", family="gemm")
    lm_head = [s for s in table["subject"]]
    assert len(lm_head) == 1 and lm_head[0] in text
    assert "1 problem" in text and "bound 'memory', expected 'compute'" in text
    # the roof of its own launches (per-launch peaks: ~295 FLOP/B on H100) and where it came from
    ridge = table["ridge_flop_per_byte"][0]
    assert 290 < ridge < 300 and f"ridge {ridge:.0f} FLOP/B" in text and "(ncu)" in text
    assert "H100 SXM" in text and "prefill-2048-h100" in text  # which profile, which GPU


def test_assert_kernel_roof_fraction_message_gives_roof_and_source(prefill):
    with pytest.raises(AssertionError) as exc:
        assert_kernel(prefill, "flash_fwd_kernel", min_roof_fraction=0.6)
    text = str(exc.value)
    assert "kernels matching /flash_fwd_kernel/" in text
    from ridgeline.rules.kernels import fmt_si

    row = kernel_table(prefill).filter(short_name="flash_fwd_kernel").to_dicts()[0]
    assert f"{row['subject']} (bf16/fp16 on H100 SXM" in text  # named by its label, as findings name it
    assert f"at {row['roof_fraction'] * 100:.0f}% of its roof, expected >= 60%" in text
    # the kernel's own roof (its instruction path's peak), with the source the analysis gave it
    assert row["peak_flops_source"] == "ncu"
    assert f"bf16/fp16 compute roof {fmt_si(row['peak_flops_per_s'], 'FLOP/s')} (ncu)" in text
    assert f"achieved {fmt_si(row['achieved_flops_per_s'], 'FLOP/s')}" in text


def test_decode_gemms_fail_a_compute_expectation_with_the_ridge(decode):
    with pytest.raises(AssertionError) as exc:
        assert_kernel(decode, "gemm", bound="compute", ignore_below_share=0.01)
    text = str(exc.value)
    assert "now on the memory side of the ridge: intensity 8 FLOP/B < ridge 295 FLOP/B" in text
    table = kernel_table(decode)
    big = table.filter(pl.col("family") == "gemm", pl.col("time_share") >= 0.01)
    assert big.height >= 4 and text.count("bound 'memory', expected 'compute'") == big.height
    assert all(s in text for s in big["subject"])


def test_selecting_nothing_is_a_failure_that_lists_the_largest_kernels(decode):
    with pytest.raises(AssertionError, match=r"no kernel group selected \(kernels matching /no_such_kernel/\)"):
        assert_kernel(decode, "no_such_kernel", bound="memory")


def test_exact_kernel_name_and_compiled_regex(decode):
    assert_kernel(decode, kernel="flash_fwd_splitkv_kernel", bound="memory", max_intensity=5)
    assert_kernel(decode, re.compile(r"splitkv_kernel$"), bound="memory")
    with pytest.raises(AssertionError, match="intensity 4 FLOP/B, expected >= 10 FLOP/B"):
        assert_kernel(decode, kernel="flash_fwd_splitkv_kernel", min_intensity=10)


def test_allowed_findings_on_a_kernel(decode):
    assert_kernel(decode, kernel="flash_fwd_splitkv_kernel", allow_findings=["RL102"])
    with pytest.raises(AssertionError, match=r"finding RL102 attention-memory-bound \(warning\) not allowed"):
        assert_kernel(decode, kernel="flash_fwd_splitkv_kernel", allow_findings=[])


def test_bad_arguments_are_value_errors_naming_the_choice(decode):
    with pytest.raises(ValueError, match="bound 'compte': expected one of compute, latency, launch, memory, stall, unknown"):
        assert_kernel(decode, "gemm", bound="compte")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        assert_kernel(decode, pattern="gemm(", bound="memory")
    with pytest.raises(ValueError, match="select kernels one way"):
        assert_kernel(decode, "gemm", family="attention", bound="memory")


def test_assert_no_findings(decode):
    with pytest.raises(AssertionError) as exc:
        assert_no_findings(decode, min_severity="warning")
    text = str(exc.value)
    n = sum(1 for f in decode.findings if f.severity in ("warning", "critical"))
    assert f"{n} problems" in text and "RL101" in text and "RL102" in text and "remedy: " in text
    assert_no_findings(decode, min_severity="warning", ignore=["RL101", "RL102"])
    assert_no_findings(decode, min_severity="critical")
    with pytest.raises(AssertionError, match="RL107 profile-dominated-by-one-regime \\(info\\)"):
        assert_no_findings(decode, min_severity="info", ignore=["RL101", "RL102"])
    assert_no_findings(decode, min_severity="info", ignore="RL10")  # a prefix: RL101 .. RL109

def _share(result, bound: str) -> float:
    k = result.kernels
    return k.filter(pl.col("bound") == bound)["duration_s"].sum() / result.total_gpu_time_s


def test_assert_time_share(decode):
    # decode at batch 8: no compute-bound time; launch-floor kernels are latency-bound, the rest memory
    assert_time_share(decode, bound="compute", at_most=0.0)
    assert_time_share(decode, bound=("memory", "latency"), at_least=0.999)
    latency = _share(decode, "latency")
    assert 0 < latency < 0.5
    assert_time_share(decode, bound="latency", at_most=latency * 1.01)
    with pytest.raises(AssertionError) as exc:
        assert_time_share(decode, bound="latency", at_most=latency / 2)
    text = str(exc.value)
    table = kernel_table(decode)
    top = table.filter(bound="latency").sort("duration_s", descending=True)["subject"][0]
    assert f"{latency * 100:.2g}% of GPU time" in text and f"largest: {top} (" in text
    with pytest.raises(AssertionError) as exc:
        assert_time_share(decode, "attention", at_most=0.01)
    text = str(exc.value)
    assert "share of GPU time in family 'attention' <= 1%" in text
    assert f"largest: {table.filter(family='attention')['subject'][0]} (" in text
    with pytest.raises(ValueError, match="give at_most, at_least or both"):
        assert_time_share(decode, bound="memory")


def test_a_latency_bound_kernel_is_explained_as_such(decode):
    with pytest.raises(AssertionError) as exc:
        assert_kernel(decode, kernel="vllm::fused_add_rms_norm_kernel", bound="memory")
    text = str(exc.value)
    # a 2.6 us launch: the launch-bound kind of the latency class, said as such
    assert "bound 'latency (launch)', expected 'memory'" in text
    assert "launch-bound: no roof explains its time (busiest roof at " in text and "mean launch " in text
    assert_kernel(decode, kernel="vllm::fused_add_rms_norm_kernel", bound="latency")  # the union
    assert_kernel(decode, kernel="vllm::fused_add_rms_norm_kernel", bound="launch")
    with pytest.raises(AssertionError, match="expected 'stall'"):
        assert_kernel(decode, kernel="vllm::fused_add_rms_norm_kernel", bound="stall")


def test_launch_bound_profile_is_all_latency():
    result = analyze(LAUNCH)
    assert_time_share(result, bound="latency", at_least=0.999)  # ~3 us kernels: the launch floor
    # "latency" is the union of its two kinds: ~3 us launches are all launch-bound, none stall-bound
    assert_time_share(result, bound="launch", at_least=0.999)
    assert_time_share(result, bound="stall", at_most=0.0)
    assert_time_share(result, bound=("compute", "memory"), at_most=0.0)
    with pytest.raises(AssertionError, match="RL106"):
        assert_no_findings(result)
    assert_no_findings(result, ignore=["RL106", "RL112"])


def test_families_are_the_analyzers(decode):
    """Selection by family reads the analyzer's kernel_family (docs/kernel-families.md)."""
    table = kernel_table(decode)
    norms = set(table.filter(family="norm")["subject"])
    assert norms and norms == set(table.filter(pl.col("short_name").str.contains("rms_norm"))["subject"])
    assert_kernel(decode, "norm", bound=("memory", "latency"))  # a family, not a regex
    assert_kernel(decode, "attention_aux", bound=("memory", "latency"))  # split-KV combine, KV-cache write
    with pytest.raises(AssertionError, match=r"no kernel group selected \(family 'grouped_gemm'\)"):
        assert_kernel(decode, "grouped_gemm", bound="memory")  # a known family this profile lacks


def test_a_table_without_family_columns_gets_them(decode):
    import copy

    result = copy.copy(decode)
    result.kernels = decode.kernels.drop("kernel_family", "kernel_label", "kernel_library")
    assert kernel_table(result)["subject"].to_list() == kernel_table(decode)["subject"].to_list()
    assert kernel_table(result)["family"].to_list() == kernel_table(decode)["family"].to_list()
