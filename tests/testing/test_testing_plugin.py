"""The pytest plugin, run the way a team runs it: pytest's own ``pytester`` builds a small
repository (profiles checked in, tests/test_perf.py, *.ridgeline.toml files) and runs pytest in it.

Profiles are copies of the synthetic scenarios (fixtures/scenarios): prefill GEMMs compute-bound,
decode GEMMs at batch 8 memory-bound (fixtures/MANIFEST.md).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"


@pytest.fixture(scope="module", autouse=True)
def _loaded_before_inline_runs():
    """pytester's in-process runs drop the modules first imported during them; polars imported
    twice then fails its own type checks. One analysis here loads everything first."""
    from ridgeline.testing import analyze, expectations  # noqa: F401

    analyze(SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv")


@pytest.fixture
def repo(pytester):
    """A team repository: profiles/ with a prefill and a decode capture."""
    (pytester.path / "profiles").mkdir()
    shutil.copy(SCENARIOS / "prefill-2048-h100" / "profile.ncu-raw.csv", pytester.path / "profiles" / "prefill.csv")
    shutil.copy(SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv", pytester.path / "profiles" / "decode.csv")
    return pytester


TEST_PERF = '''
from ridgeline.testing import assert_kernel, assert_no_findings, assert_time_share

def test_prefill_gemms_compute_bound(ridgeline_analyze):
    result = ridgeline_analyze("../profiles/prefill.csv")     # next to this file
    assert_kernel(result, "gemm", bound="compute", min_roof_fraction=0.7, ignore_below_share=0.01)

def test_prefill_no_latency_time(ridgeline_analyze):
    result = ridgeline_analyze("profiles/prefill.csv")        # under the rootdir
    assert_time_share(result, bound="latency", at_most=0.05)

def test_decode_gemms_compute_bound(ridgeline_analyze):
    result = ridgeline_analyze("profiles/decode.csv")
    assert_kernel(result, "gemm", bound="compute", ignore_below_share=0.01)

def test_decode_no_new_warning(ridgeline_analyze):
    result = ridgeline_analyze("profiles/decode.csv")
    assert_no_findings(result, min_severity="warning", ignore=["RL101"])
'''


def test_helpers_pass_and_fail_with_actionable_messages(repo):
    (repo.path / "tests").mkdir()  # no __init__.py: a "tests" package may be imported already
    (repo.path / "tests" / "test_perf.py").write_text(TEST_PERF)
    res = repo.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(passed=2, failed=2)
    out = res.stdout.str()
    # the failing GEMM expectation names the kernel, measured vs expected, the ridge and the roofs' source
    res.stdout.fnmatch_lines([
        "*AssertionError: family 'gemm' (holding >= 1% of GPU time) in *decode.csv on H100 SXM: 5 problems",
        "*cuBLAS*128x64*(bf16/fp16 on H100 SXM, 32 launches, *% of GPU time):",
        "*- bound 'memory', expected 'compute'",
        "*- now on the memory side of the ridge: intensity 8 FLOP/B < ridge 295 FLOP/B "
        "(bf16/fp16 roof * TFLOP/s (ncu) / DRAM * TB/s (ncu))",
    ])
    res.stdout.fnmatch_lines(["*RL102 attention-memory-bound (warning) on FlashAttention-2*:*",
                              "*remedy: *"])
    # the traceback stops at the test: no frame of ridgeline's internals
    assert "ridgeline/testing/" not in out and "checks.py" not in out and "asserts.py" not in out
    assert out.count("AssertionError") >= 2


def test_fixture_analyzes_each_profile_once_per_session(repo, monkeypatch):
    import ridgeline.pipeline

    calls = []
    real = ridgeline.pipeline.analyze_paths

    def counting(paths, **kw):
        calls.append([Path(p).name for p in paths])
        return real(paths, **kw)

    monkeypatch.setattr(ridgeline.pipeline, "analyze_paths", counting)
    repo.makepyfile(test_a='''
def test_one(ridgeline_analyze):
    assert ridgeline_analyze("profiles/prefill.csv").gpu_name == "H100 SXM"

def test_two(ridgeline_analyze):
    a = ridgeline_analyze("profiles/prefill.csv")
    assert a is ridgeline_analyze("profiles/prefill.csv")
''')
    (repo.path / "prefill.ridgeline.toml").write_text(
        '[profile]\npaths = ["profiles/prefill.csv"]\n[[expect]]\nfamily = "gemm"\nbound = ["compute", "memory"]\n')
    repo.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=3)
    assert calls == [["prefill.csv"]]  # the fixture and the expectation file share one analysis


def test_unreadable_profile_fails_with_one_line(repo):
    (repo.path / "profiles" / "notes.csv").write_text("hello,world\n1,2\n")
    repo.makepyfile(test_b='''
def test_missing(ridgeline_analyze):
    ridgeline_analyze("profiles/nope.csv")

def test_not_a_profile(ridgeline_analyze):
    ridgeline_analyze("profiles/notes.csv")
''')
    res = repo.runpytest("-p", "no:cacheprovider")
    res.assert_outcomes(failed=2)
    res.stdout.fnmatch_lines(["ridgeline: error: *nope.csv: no such file or folder",
                              "ridgeline: error: *notes.csv*expected*"])
    out = res.stdout.str()
    assert "Traceback" not in out and "During handling" not in out and "pipeline.py" not in out


EXPECT = '''
[profile]
paths = ["../profiles/prefill.csv"]

[findings]
min_severity = "warning"
allow = ["RL103"]

[[expect]]
name = "prefill GEMMs compute-bound"
family = "gemm"
ignore_below_share = 0.01
bound = "compute"
roof_fraction = [0.7, 1.05]
intensity = {min = 295}

[[expect]]
name = "attention above half its roof"
kernel = "flash_fwd_kernel"
bound = "compute"
roof_fraction = {min = 0.45}
findings = ["RL105"]

[[expect]]
name = "norms at 80% of DRAM bandwidth"
pattern = "rms_norm"
roof_fraction = {min = 0.8}
'''


def test_expectation_files_are_collected_one_item_per_expectation(repo):
    (repo.path / "perf").mkdir()
    (repo.path / "perf" / "prefill.ridgeline.toml").write_text(EXPECT)
    (repo.path / "perf" / "notes.toml").write_text("not = 'collected'\n")
    res = repo.runpytest("--collect-only", "-q", "-p", "no:cacheprovider")
    res.stdout.fnmatch_lines([
        "perf/prefill.ridgeline.toml::prefill GEMMs compute-bound",
        "perf/prefill.ridgeline.toml::attention above half its roof",
        "perf/prefill.ridgeline.toml::norms at 80% of DRAM bandwidth",
        "perf/prefill.ridgeline.toml::findings",
    ])
    assert "notes.toml" not in res.stdout.str()


def test_expectation_items_pass_and_fail_with_the_problems_only(repo):
    (repo.path / "perf").mkdir()
    (repo.path / "perf" / "prefill.ridgeline.toml").write_text(EXPECT)
    res = repo.runpytest("-p", "no:cacheprovider", "perf")
    res.assert_outcomes(passed=3, failed=1)
    res.stdout.fnmatch_lines([
        "*prefill.ridgeline.toml::norms at 80% of DRAM bandwidth*",
        "norms at 80% of DRAM bandwidth (kernels matching /rms_norm/) in prefill.csv on H100 SXM: 2 problems",
        "  vLLM rms_norm* (fp32 on H100 SXM, 64 launches, *% of GPU time):",
        "    - at *% of its roof, expected >= 80% (roof: the DRAM bandwidth roof * TB/s (ncu); achieved *B/s)",
    ])
    out = res.stdout.str()
    assert "Traceback" not in out and "def runtest" not in out


def test_findings_item_fails_on_a_finding_nobody_allowed(repo):
    (repo.path / "perf").mkdir()
    (repo.path / "perf" / "prefill.ridgeline.toml").write_text(EXPECT.replace('allow = ["RL103"]', "allow = []"))
    res = repo.runpytest("-p", "no:cacheprovider", "perf", "-k", "findings")
    res.assert_outcomes(failed=1, deselected=3)
    # RL105 on flash_fwd_kernel is allowed by its [[expect]]; RL103 on the rotary kernel is not
    res.stdout.fnmatch_lines(["no warning-or-worse findings in prefill.csv on H100 SXM: 1 problem",
                              "  RL103 below-bandwidth-roof (warning) on vLLM rotary*: *"])


def test_a_broken_expectation_file_is_a_one_line_collection_error(repo):
    (repo.path / "perf").mkdir()
    (repo.path / "perf" / "bad.ridgeline.toml").write_text(EXPECT.replace("roof_fraction = [0.7, 1.05]",
                                                                          "roof_fration = [0.7, 1.05]"))
    res = repo.runpytest("-p", "no:cacheprovider", "perf")
    res.assert_outcomes(errors=1)
    res.stdout.fnmatch_lines(["ridgeline: error: *bad.ridgeline.toml: expect #1 ('prefill GEMMs compute-bound'): "
                              "unknown key 'roof_fration'; known: name, family, *"])
    assert "Traceback" not in res.stdout.str()


def test_the_plugin_can_be_disabled(repo):
    (repo.path / "perf").mkdir()
    (repo.path / "perf" / "prefill.ridgeline.toml").write_text(EXPECT)
    res = repo.runpytest("-p", "no:ridgeline", "-p", "no:cacheprovider", "perf")
    assert res.ret == pytest.ExitCode.NO_TESTS_COLLECTED
