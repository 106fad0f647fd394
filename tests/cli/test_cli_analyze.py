"""`ridgeline analyze` and `ridgeline gpus`: exit codes, one-line errors, formats."""

import json
import re
from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS
from ridgeline.cli import main
from ridge_inputs import SAMPLES, SCENARIOS, write_mini_ncu

DOCS = Path(__file__).resolve().parents[2] / "docs" / "json-schema.md"


def run(capsys, *args):
    with pytest.raises(SystemExit) as exc:
        main(list(map(str, args)))
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


@pytest.fixture
def mini(tmp_path):
    return write_mini_ncu(tmp_path / "profile.csv")


def test_table_report_fits_80_columns(capsys, mini):
    code, out, err = run(capsys, "analyze", mini)
    assert code == 0
    assert "H100 SXM" in out and "Where the time goes" in out
    assert "gemm" in out and "gemv" in out
    assert "catalogue" in out  # each roof says its source
    assert max(len(line) for line in out.splitlines()) <= 80


def test_missing_file_one_line_exit_2(capsys, tmp_path):
    code, out, err = run(capsys, "analyze", tmp_path / "missing.csv")
    assert code == 2
    assert err.count("\n") == 1 and "missing.csv" in err and "no such file" in err
    assert "Traceback" not in err


def test_wrong_header_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "other.csv"
    bad.write_text("time,value\n1,2\n")
    code, out, err = run(capsys, "analyze", bad)
    assert code == 2
    assert err.count("\n") == 1 and "other.csv" in err and "expected" in err


def test_unknown_gpu_one_line_exit_2(capsys, mini):
    code, out, err = run(capsys, "analyze", mini, "--gpu", "H1OO")
    assert code == 2
    assert err.count("\n") == 1 and "unknown GPU" in err and "H100 SXM" in err


def _documented(section: str) -> list[str]:
    """Keys listed in the first column of a section's table in docs/json-schema.md."""
    text = DOCS.read_text(encoding="utf-8")
    body = text.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", body, flags=re.M)


def test_json_document_has_exactly_the_documented_keys(capsys, mini):
    code, out, err = run(capsys, "analyze", mini, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == _documented("Top-level keys")
    assert list(doc["gpu"]) == _documented("`gpu`")
    assert len(doc["kernels"]) == 3
    for record in doc["kernels"]:
        assert list(record) == _documented("`kernels[]`")
    assert list(doc["summary"][0]) == _documented("`summary[]`")
    assert list(doc["roofs"][0]) == _documented("`roofs[]`")
    for f in doc["findings"]:
        assert list(f) == _documented("`findings[]`")
    assert doc["schema_version"] == "1.7"
    assert doc["gpu"]["name"] == "H100 SXM"
    assert doc["gpu"]["peaks"]["fp16_tensor"]["ridge_flop_per_byte"] == pytest.approx(989 / 3.35)
    gemv = next(k for k in doc["kernels"] if k["short_name"] == "gemv")
    assert gemv["bound"] == "memory" and gemv["intensity_dram"] == pytest.approx(1.0)
    assert gemv["missing"] == []
    assert doc["telemetry"] is None


def test_json_to_file(capsys, mini, tmp_path):
    target = tmp_path / "out.json"
    code, out, err = run(capsys, "analyze", mini, "--format", "json", "-o", target)
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["gpu"]["name"] == "H100 SXM"


def test_csv_output_is_the_launch_table(capsys, mini, tmp_path):
    target = tmp_path / "launches.csv"
    code, _out, _err = run(capsys, "analyze", mini, "--format", "csv", "-o", target)
    assert code == 0
    df = pl.read_csv(target)
    assert df.columns == list(KERNEL_COLUMNS) + list(ROOFLINE_COLUMNS)
    assert df.height == 3
    assert df.get_column("missing").dtype == pl.String  # lists joined for CSV


def test_csv_to_stdout(capsys, mini):
    code, out, _err = run(capsys, "analyze", mini, "--format", "csv")
    assert code == 0
    assert out.splitlines()[0].startswith("id,launch_id,source")
    assert len(out.splitlines()) == 4


def test_parquet_keeps_types_and_needs_a_path(capsys, mini, tmp_path):
    target = tmp_path / "launches.parquet"
    code, _out, _err = run(capsys, "analyze", mini, "--format", "parquet", "-o", target)
    assert code == 0
    df = pl.read_parquet(target)
    assert df.schema["missing"] == pl.List(pl.String)
    assert df.height == 3
    code, _out, err = run(capsys, "analyze", mini, "--format", "parquet")
    assert code == 2 and "-o" in err


def test_fail_on_sets_exit_code(capsys, mini):
    code, out, _ = run(capsys, "analyze", mini, "--format", "json")
    severities = {f["severity"] for f in json.loads(out)["findings"]}
    code, _, _ = run(capsys, "analyze", mini, "--fail-on", "warning")
    assert code == (1 if severities & {"warning", "critical"} else 0)
    code, _, _ = run(capsys, "analyze", mini, "--fail-on", "critical")
    assert code == (1 if "critical" in severities else 0)
    code, _, _ = run(capsys, "analyze", mini, "--fail-on", "warning", "--ignore", "RL")
    assert code == 0  # every rule ignored: nothing can fail


def test_select_accepts_comma_separated_codes(capsys, mini):
    code, out, _ = run(capsys, "analyze", mini, "--format", "json", "--select", "RL101,RL103")
    assert code == 0
    assert {f["code"] for f in json.loads(out)["findings"]} <= {"RL101", "RL103"}


def test_help_teaches_by_example(capsys):
    code, out, _ = run(capsys, "analyze", "--help")
    assert code == 0 and "ridgeline analyze profile.csv" in out
    code, out, _ = run(capsys, "gpus", "--help")
    assert code == 0 and "ridgeline gpus" in out


def test_gpus_lists_ridge_points(capsys):
    code, out, _ = run(capsys, "gpus")
    assert code == 0
    h100 = next(line for line in out.splitlines() if line.strip().startswith("H100 SXM"))
    assert f"{989 / 3.35:.0f}" in h100.split()  # 295 FLOP/B for bf16
    assert max(len(line) for line in out.splitlines()) <= 80


def test_gpus_json_and_detail(capsys):
    code, out, _ = run(capsys, "gpus", "--format", "json")
    assert code == 0
    data = {g["name"]: g for g in json.loads(out)}
    assert data["H100 SXM"]["ridge_flop_per_byte"]["fp16_tensor"] == pytest.approx(989 / 3.35)
    code, out, _ = run(capsys, "gpus", "a100")
    assert code == 0 and "A100 SXM 80GB" in out and "most common" in out
    code, _, err = run(capsys, "gpus", "nonsense-gpu")
    assert code == 2 and "unknown GPU" in err


SAMPLE_FILES = sorted((SAMPLES / "ncu").glob("*.csv")) if (SAMPLES / "ncu").is_dir() else []


@pytest.mark.skipif(not SAMPLE_FILES, reason="shared samples absent")
@pytest.mark.parametrize("path", SAMPLE_FILES, ids=lambda p: p.name[:40])
def test_real_samples_analyze_cleanly(capsys, path):
    code, out, err = run(capsys, "analyze", path, "--format", "json")
    if code == 2 and "profiled no kernels" in err:  # ncu's "No kernels were profiled" log
        assert path.name in err and len(err.strip().splitlines()) == 1, err
        return
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kernels"], "every real sample has launches"
    for k in doc["kernels"]:
        assert k["bound"] in ("memory", "compute", "latency", "unknown")
        if k["bound"] == "unknown":
            assert k["missing"] or k["missing_hint"]


@pytest.mark.skipif(not (SAMPLES / "ncu").is_dir(), reason="shared samples absent")
def test_b200_sample_uses_measured_device_attribute_bandwidth(capsys):
    path = SAMPLES / "ncu" / "roofline-analysis-b200-raw-flashinfer-decode-b64.csv"
    if not path.exists():
        pytest.skip("sample absent")
    code, out, _ = run(capsys, "analyze", path, "--format", "json")
    doc = json.loads(out)
    assert doc["gpu"]["name"] == "B200"
    assert doc["gpu"]["dram_bw_source"] == "ncu-device-attributes"
    # 2 x 3,996,000 kHz x 7680 bit / 8 = 7.67 TB/s
    assert doc["gpu"]["dram_bw_bytes_per_s"] == pytest.approx(2 * 3_996_000e3 * 7680 / 8, rel=1e-3)
    # no FLOP or byte counters: nothing guessed
    assert {k["bound"] for k in doc["kernels"]} == {"unknown"}


@pytest.mark.skipif(not (SAMPLES / "ncu").is_dir(), reason="shared samples absent")
def test_sample_without_device_name_is_classified_with_gpu_option(capsys):
    path = SAMPLES / "ncu" / "leleucas-a100-details-rules-bert_attention.csv"
    if not path.exists():
        pytest.skip("sample absent")
    code, out, _ = run(capsys, "analyze", path, "--format", "json", "--gpu", "A100")
    doc = json.loads(out)
    bounds = {k["bound"] for k in doc["kernels"]}
    assert "unknown" not in bounds and bounds <= {"memory", "compute", "latency"}
    assert doc["gpu"]["name"] == "A100 SXM 80GB"


SCENARIO_DIRS = sorted(p for p in SCENARIOS.glob("*") if list(p.glob("*ncu*"))) if SCENARIOS.is_dir() else []


@pytest.mark.skipif(not SCENARIO_DIRS, reason="fixtures not generated")
@pytest.mark.parametrize("folder", SCENARIO_DIRS, ids=lambda p: p.name)
def test_fixture_scenarios_analyze_on_the_right_gpu(capsys, folder):
    code, out, err = run(capsys, "analyze", folder, "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    suffix = folder.name.rsplit("-", 1)[-1]
    if suffix in ("h100", "h200", "a100"):
        assert doc["gpu"]["name"].lower().startswith(suffix)


NCU_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "ncu"
GOOD = sorted(p for p in NCU_FIXTURES.glob("*.csv") if p.name.startswith(("details-", "raw-", "missing-")))
BAD = sorted(p for p in NCU_FIXTURES.glob("*.csv") if p.name.startswith(("bad-", "empty", "error-", "no-kernels", "summary-")))


@pytest.mark.skipif(not GOOD, reason="ncu fixtures absent")
@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_parser_fixtures_analyze(capsys, path):
    # --gpu names the GPU of exports that do not; raw-units-row.csv names H100 and V100 itself.
    # --gpu must agree with the compute capability a fixture records: the catalogue's default
    # GPU of that CC (H100 SXM when none is recorded)
    from ridgeline.analyzer.kernels.gpus import catalogue
    from ridgeline.pipeline import read_kernel_files

    names_devices = path.name == "raw-units-row.csv"
    parsed, _rules = read_kernel_files([path], strict=False)
    ccs = parsed.kernels.get_column("cc").drop_nulls().unique().to_list()
    gpu = next(g.name for g in catalogue() if g.family_default and g.cc == ccs[0]) if ccs else "H100 SXM"
    code, out, err = run(capsys, "analyze", path, "--format", "json", *([] if names_devices else ["--gpu", gpu]))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["kernels"]
    assert doc["gpu"]["name"] == ("H100 SXM, V100 SXM2" if names_devices else gpu)
    for k in doc["kernels"]:
        # a launch placed by rate (section export, no duration) is classified and still lists
        # the duration it lacks (docs/ncu-spellings.md)
        by_rate = k["duration_s"] is None and k["missing"] == ["gpu__time_duration.sum"]
        # one the roofline could not place may be bound by ncu's Speed-of-Light throughputs, and says so
        by_sol = k["bound_source"] == "ncu-speed-of-light" and k["bound"] != "unknown"
        assert (k["bound"] == "unknown") == bool(k["missing"] or k["missing_hint"]) or (by_rate and k["bound"] != "unknown") or by_sol
        assert (k["bound_source"] is None) == (k["bound"] == "unknown")


@pytest.mark.skipif(not BAD, reason="ncu fixtures absent")
@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_fixtures_fail_with_one_line(capsys, path):
    code, out, err = run(capsys, "analyze", path)
    assert code == 2
    assert err.count("\n") == 1 and path.name in err and "Traceback" not in err


def test_specific_reason_from_the_ncu_parser_is_kept(capsys, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    code, _, err = run(capsys, "analyze", empty)
    assert code == 2 and "empty" in err and "empty.csv" in err


def test_unknown_file_error_shows_what_was_found(capsys, tmp_path):
    bad = tmp_path / "tv.csv"
    bad.write_text("time,value\n1,2\n")
    code, _, err = run(capsys, "analyze", bad)
    assert code == 2 and "got 'time,value'" in err


@pytest.mark.skipif(not (NCU_FIXTURES / "bad-nonnumeric-raw.csv").exists(), reason="ncu fixtures absent")
def test_lenient_lists_what_it_skipped(capsys):
    path = NCU_FIXTURES / "bad-nonnumeric-raw.csv"
    code, _, _ = run(capsys, "analyze", path)
    assert code == 2
    code, out, err = run(capsys, "analyze", path, "--lenient", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["skipped"] and all(s["source"].endswith("bad-nonnumeric-raw.csv") for s in doc["skipped"])


def test_missing_config_file_is_a_usage_error(capsys, mini, tmp_path):
    code, _, err = run(capsys, "analyze", mini, "--config", tmp_path / "nope.toml")
    assert code == 2 and "nope.toml" in err and err.count("\n") == 1


def test_config_file_ignores_rules(capsys, mini, tmp_path):
    cfg = tmp_path / "ridgeline.toml"
    cfg.write_text('[tool.ridgeline]\nignore = ["RL"]\n')
    code, out, _ = run(capsys, "analyze", mini, "--format", "json", "--config", cfg)
    assert code == 0 and json.loads(out)["findings"] == []


def test_unwritable_output_is_a_one_line_error(capsys, mini, tmp_path):
    target = tmp_path / "no-such-dir" / "out.json"
    for fmt in ("json", "csv", "parquet", "table"):
        code, _, err = run(capsys, "analyze", mini, "--format", fmt, "-o", target)
        assert code == 2 and "cannot write" in err and err.count("\n") == 1, fmt
