"""`ridgeline check`: expectation files recorded with --write, checked against the same and other
profiles; exit codes 0/1/2 like `analyze --fail-on`.

Physics (fixtures/MANIFEST.md): decode GEMMs cross the ridge between batch 256 and 512 on H100,
so expectations recorded on decode-b512 (GEMMs compute-bound) fail on decode-b256 (memory-bound);
prefill GEMMs are compute-bound, decode-b8 GEMMs memory-bound.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ridgeline.cli import main
from ridgeline.testing import analyze, expectations, kernel_table

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "scenarios"
B512 = SCENARIOS / "decode-b512-h100" / "profile.ncu-raw.csv"
B256 = SCENARIOS / "decode-b256-h100" / "profile.ncu-raw.csv"
PREFILL = SCENARIOS / "prefill-2048-h100" / "profile.ncu-raw.csv"
DECODE = SCENARIOS / "decode-b8-h100" / "profile.ncu-raw.csv"


def _flat(text: str) -> str:
    """The report with its 80-column wrapping undone."""
    return " ".join(text.split())


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(map(str, args)))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@pytest.fixture
def recorded(tmp_path, capsys):
    """decode-b512 recorded into perf/b512.ridgeline.toml (profile copied under profiles/)."""
    (tmp_path / "profiles").mkdir()
    shutil.copy(B512, tmp_path / "profiles" / "b512.csv")
    path = tmp_path / "perf" / "b512.ridgeline.toml"
    path.parent.mkdir()
    code, out, err = run(capsys, "check", "--write", path, tmp_path / "profiles" / "b512.csv")
    assert code == 0 and f"wrote {path}" in err
    return path


def test_write_records_every_big_kernel_with_its_verdict(recorded):
    spec = expectations.load(recorded)
    assert spec.profiles == [recorded.parent / "../profiles/b512.csv"]  # relative to the file
    table = kernel_table(analyze(B512))
    big = table.filter(table.get_column("time_share") >= 0.01)
    assert [e.name for e in spec.expectations] == big.get_column("subject").to_list()
    for e, row in zip(spec.expectations, big.to_dicts()):
        assert e.bound == (row["bound"],)
        lo, hi = e.roof_fraction  # absolute tolerance 0.1 around the recorded value
        assert lo == pytest.approx(row["roof_fraction"] - 0.1, abs=1e-3)
        assert hi == pytest.approx(row["roof_fraction"] + 0.1, abs=1e-3)
        lo, hi = e.intensity  # relative tolerance 20%
        assert lo == pytest.approx(row["intensity_dram"] * 0.8, rel=1e-3)
    assert spec.min_severity == "warning"
    text = recorded.read_text()
    assert "smaller kernel groups (< 1% of GPU time each) have no [[expect]]" in text
    assert 'findings = ["RL102"]' in text  # attention's finding recorded as allowed


def test_write_then_check_on_the_same_profile_passes(recorded, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path / "profiles")  # the file finds its profile relative to itself
    code, out, err = run(capsys, "check", recorded)
    assert code == 0, out + err
    n = len(expectations.load(recorded).item_names())
    assert f"{n} expectations: {n} passed, 0 failed" in out
    assert "FAIL" not in out


def test_kernels_that_moved_left_of_the_ridge_fail_by_name(recorded, capsys):
    code, out, err = run(capsys, "check", recorded, B256)
    assert code == 1
    moved = [r["subject"] for r in kernel_table(analyze(B256)).to_dicts()
             if r["family"] == "gemm" and r["time_share"] >= 0.01]
    assert len(moved) == 5
    for name in moved:
        assert f"  FAIL  {name}" in out
    assert out.count("- bound 'memory', expected 'compute'") == len(moved)
    assert "now on the memory side of the ridge: intensity 2" in _flat(out)  # ~239 FLOP/B < 295
    attention = kernel_table(analyze(B256)).filter(family="attention")["subject"][0]
    assert f"  ok    {attention}" in out  # attention stays memory-bound
    assert "failed" in out.splitlines()[-1]
    # the report fits 80 columns except where one word (a path) is longer
    assert all(len(line) <= 80 or " " not in line.strip() or len(max(line.split(), key=len)) > 40
               for line in out.splitlines())


def test_family_expectation_written_by_hand_prefill_vs_decode(tmp_path, capsys):
    path = tmp_path / "gemm.ridgeline.toml"
    path.write_text(f'''
[profile]
paths = ["{PREFILL.as_posix()}"]

[[expect]]
name = "GEMMs stay compute-bound"
family = "gemm"
ignore_below_share = 0.01
bound = "compute"
''')
    code, out, _ = run(capsys, "check", path)
    assert code == 0 and "  ok    GEMMs stay compute-bound" in out
    code, out, _ = run(capsys, "check", path, DECODE)
    assert code == 1
    assert "  FAIL  GEMMs stay compute-bound" in out
    biggest = kernel_table(analyze(DECODE)).filter(family="gemm")["subject"][0]
    assert f"{biggest} (bf16/fp16 on H100 SXM" in _flat(out)
    assert "intensity 8 FLOP/B < ridge 295 FLOP/B" in _flat(out)


def test_write_again_keeps_the_edited_tolerance(recorded, capsys):
    text = recorded.read_text().replace("roof_fraction = 0.1  #", "roof_fraction = 0.02  #")
    recorded.write_text(text)
    code, _out, err = run(capsys, "check", "--write", recorded)  # no profile: the file's own
    assert code == 0, err
    spec = expectations.load(recorded)
    assert spec.tolerance["roof_fraction"] == 0.02
    lo, hi = spec.expectations[0].roof_fraction
    assert hi - lo == pytest.approx(0.04, abs=1e-6)


def test_new_warning_fails_the_findings_item(recorded, capsys, tmp_path):
    text = recorded.read_text().replace('findings = ["RL102"]', "findings = []")
    recorded.write_text(text)
    code, out, _ = run(capsys, "check", recorded)
    assert code == 1
    attention = kernel_table(analyze(B512)).filter(family="attention")["subject"][0]
    assert f"  FAIL  {attention}" in out
    assert "finding RL102 attention-memory-bound (warning) not allowed (allowed: none)" in _flat(out)


@pytest.mark.parametrize("body, message", [
    ("[profile]\npaths = ['x.csv']\n[[expect]]\nfamily = 'gemm'\nroof_fration = 0.5\n",
     "expect #1: unknown key 'roof_fration'"),
    ("[profile]\npaths = ['x.csv']\n[[expect]]\nfamily = 'gemm'\n", "expect #1: expects nothing"),
    ("[profile]\npaths = ['x.csv']\n[[expect]]\nfamily = 'gemm'\nroof_fraction = [0.9, 0.1]\n",
     "low end above high end"),
    ("[profile]\npaths = ['x.csv']\n[findings]\nallow = ['E501']\n", "expected a rule code or prefix"),
    ("[profile\n", "expected valid TOML"),
])
def test_bad_expectation_files_exit_2_with_one_line(tmp_path, capsys, body, message):
    path = tmp_path / "bad.ridgeline.toml"
    path.write_text(body)
    code, out, err = run(capsys, "check", path, DECODE)
    assert code == 2 and out == ""
    assert err.startswith("ridgeline: error: ") and message in err and err.count("\n") == 1


def test_a_file_without_profiles_needs_them_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "x.ridgeline.toml"
    path.write_text("[[expect]]\nfamily = 'gemm'\nbound = 'memory'\n")
    code, _out, err = run(capsys, "check", path)
    assert code == 2 and "[profile] paths: expected a list of profile files" in err
    code, out, _err = run(capsys, "check", path, DECODE)
    assert code == 0 and "  ok    gemm" in out


def test_missing_profile_exits_2(tmp_path, capsys):
    path = tmp_path / "x.ridgeline.toml"
    path.write_text("[profile]\npaths = ['missing.csv']\n[[expect]]\nfamily = 'gemm'\nbound = 'memory'\n")
    code, _out, err = run(capsys, "check", path)
    assert code == 2 and "missing.csv: no such file or folder" in err


def test_unknown_bound_in_a_file_exits_2(tmp_path, capsys):
    path = tmp_path / "x.ridgeline.toml"
    path.write_text("[[expect]]\nfamily = 'gemm'\nbound = 'compte'\n")
    code, _out, err = run(capsys, "check", path, DECODE)
    assert code == 2 and "bound 'compte': expected one of" in err


def test_write_without_profiles_for_a_new_file_is_a_usage_error(tmp_path, capsys):
    code, _out, err = run(capsys, "check", "--write", tmp_path / "new.ridgeline.toml")
    assert code == 2 and "name the profile(s) to record" in err


def test_written_strings_survive_toml_quoting():
    tomllib = expectations._toml()
    for name in ['void f<(int)"x">(float*)', "a\\b", "tab\there"]:
        assert tomllib.loads(f"k = {expectations._q(name)}")["k"] == name


KERNEL_SCENARIOS = sorted(p.parent.name for p in SCENARIOS.glob("*/profile.ncu-*.csv"))


@pytest.mark.parametrize("name", KERNEL_SCENARIOS)
def test_write_then_check_passes_on_every_scenario(tmp_path, name):
    """Whatever a profile holds (duplicate names at several precisions, kernels without FLOPs,
    unknown bounds), the file --write records from it holds on it."""
    profile = next((SCENARIOS / name).glob("profile.ncu-*.csv"))
    path = tmp_path / f"{name}.ridgeline.toml"
    text, _result = expectations.write(path, [profile], min_share=0.0)
    assert text.splitlines().count("[[expect]]") == kernel_table(analyze(profile)).height
    spec = expectations.load(path)
    outcomes = expectations.check_all(spec, expectations.analyze(spec))
    assert len(outcomes) == kernel_table(analyze(profile)).height + 1
    failed = [(n, o.problems) for n, o in outcomes if not o.passed]
    assert not failed


# ---- names TOML cannot hold raw (issue 35, class 8): escaped, read back exact ---------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NAMES = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
HOSTILE = st.text(st.one_of(st.sampled_from(["\x7f", "\x00", "\x1b", "\x85", "\u202e", "\u2028", "\ufeff", "\t", '"',
                                              "\\", "\U000e0001"]),
                            st.characters(exclude_categories=("Cs",))), max_size=30)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.one_of(NAMES, HOSTILE))
def test_every_string_reads_back_from_the_toml_written(name):
    tomllib = expectations._toml()
    doc = tomllib.loads(f"k = {expectations._q(name)}\n{expectations._key(name or 'x')} = 1\n"
                        f"{expectations._comment('# ' + name)}\n")
    assert doc["k"] == name and doc[name or "x"] == 1


def test_a_lone_surrogate_is_written_as_the_replacement_character():
    assert expectations._toml().loads(f"k = {expectations._q('a' + chr(0xD800) + 'b')}")["k"] == "a\ufffdb"


@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(HOSTILE.map(lambda s: "void gemm" + s.replace("\x00", "") + "<bf16>(float*)"))
def test_check_write_records_a_hostile_kernel_name_it_can_read_back(tmp_path_factory, name):
    from ridge_inputs import write_mini_ncu

    folder = tmp_path_factory.mktemp("hostile")
    profile = write_mini_ncu(folder / "p.csv")
    text = profile.read_text(encoding="utf-8").replace("void gemm<bf16>(float*)", name.replace('"', '""'))
    profile.write_text(text, encoding="utf-8", newline="")
    path = folder / "p.ridgeline.toml"
    expectations.write(path, [profile], min_share=0.0)
    spec = expectations.load(path)  # the file it wrote reads back
    assert name in {e.get("kernel") for e in expectations._read(path)["expect"]}
    outcomes = expectations.check_all(spec, expectations.analyze(spec))
    assert all(o.passed for _n, o in outcomes), [(n, o.problems) for n, o in outcomes if not o.passed]
