"""`.ncu-rep` reports read with NVIDIA's reader (extra ridgeline[ncu-rep]).

The real reports in ../shared/samples/ncu-rep (MANIFEST there) are read in place; tests that
need the reader skip when it is not installed, the error paths run always.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ridgeline.analyzer.schema import KERNEL_COLUMNS, NCU_RULE_COLUMNS
from ridgeline.errors import InputError

SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "samples" / "ncu-rep"
GH200 = "cs599k-gh200-silu-pytorch-profile.ncu-rep"
H100 = "cs599k-h100pcie-setfull-rmsnorm-matrix-2025-04-21_v1.ncu-rep"
A10 = "spyinfer-a10-ncu2023.2.0-linear-fp32fp16-report.ncu-rep"
# file -> (launches, GPU name) from the MANIFEST
EXPECTED = {GH200: (10, "NVIDIA GH200 480GB"), H100: (3, "NVIDIA H100 PCIe"), A10: (105, "NVIDIA A10")}


def run(capsys, *args):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def sample(name):
    p = SAMPLES / name
    if not p.exists():
        pytest.skip(f"sample {name} not available")
    return p


needs_reader = pytest.mark.skipif(
    __import__("importlib").util.find_spec("ncu_report") is None, reason="ncu-report (ridgeline[ncu-rep]) not installed")


@needs_reader
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_report_gives_the_kernel_table(name):
    from ridgeline.parsers.ncu.rep import read_ncu_rep

    res, rules = read_ncu_rep(sample(name))
    launches, gpu = EXPECTED[name]
    assert list(res.kernels.columns) == list(KERNEL_COLUMNS)
    assert res.kernels.height == launches
    assert set(res.kernels.get_column("device_name").to_list()) == {gpu}
    assert res.kernels.get_column("duration_s").null_count() == 0
    assert (res.kernels.get_column("duration_s") > 0).all()
    assert res.inputs[0].kind == "ncu-rep"
    assert list(rules.columns) == list(NCU_RULE_COLUMNS)
    assert rules.height > 0
    assert set(rules.get_column("id").to_list()) <= set(res.kernels.get_column("id").to_list())
    metrics = res.metrics[str(sample(name))]
    assert metrics.height == launches and {"id", "range", "nvtx", "gpu__time_duration.sum"} <= set(metrics.columns)


@needs_reader
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_report_and_its_raw_csv_give_the_same_table(name, tmp_path):
    """The same data through ncu's raw page and through the report: identical KERNEL tables."""
    from ncu_rep_helpers import report_to_raw_csv

    from ridgeline.parsers.ncu.csv_reader import read_ncu
    from ridgeline.parsers.ncu.rep import read_ncu_rep

    csv_path = tmp_path / "raw.csv"
    n = report_to_raw_csv(sample(name), csv_path)
    from_csv = read_ncu([csv_path]).kernels.drop("source")
    from_rep, _rules = read_ncu_rep(sample(name))
    assert n == from_rep.kernels.height
    # strings, ints and nulls exactly; floats to 4 ulp: polars' division by a unit's power of ten
    # may differ in the last bit with the frame's chunk layout (the CSV path read in 1 or 3 chunks
    # differs from itself the same way)
    from polars.testing import assert_frame_equal

    assert_frame_equal(from_rep.kernels.drop("source"), from_csv, rel_tol=1e-15, abs_tol=0.0)
    floats = [c for c, t in from_csv.schema.items() if t.is_float()]
    exact = [c for c in from_csv.columns if c not in floats]
    assert from_rep.kernels.select(exact).equals(from_csv.select(exact), null_equal=True)


@needs_reader
def test_full_set_report_measures_flops_bytes_and_peaks():
    from ridgeline.parsers.ncu.rep import read_ncu_rep

    k = read_ncu_rep(sample(H100))[0].kernels
    row = k.row(0, named=True)
    assert row["flops_fp32"] > 0 and row["dram_bytes"] > 0
    assert row["peak_dram_bytes_per_s"] > 1e12 and row["peak_flops_fp32_per_s"] > 1e13
    assert row["short_name"] == "rms_norm_matrix_kernel"
    assert row["block_size"] == "(256, 1, 1)" and row["block_threads"] == 256


@needs_reader
def test_default_set_report_shows_speed_of_light_as_utilization(capsys):
    code, out, _err = run(capsys, "analyze", sample(GH200))
    assert code == 0
    assert "not a roofline verdict" in out
    assert "ncu's own rules" in out and "not ridgeline findings" in out
    assert "RL901" in out  # the roofline counters are missing, and said so


@needs_reader
def test_json_carries_ncu_rules_apart_from_findings(capsys):
    import json

    code, out, _err = run(capsys, "analyze", sample(A10), "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["ncu_rules"] and all(r["rule"] for r in doc["ncu_rules"])
    assert not any(f["code"].startswith("SOL") or f["code"] == r["rule"] for f in doc["findings"] for r in doc["ncu_rules"])
    assert {i["kind"] for i in doc["inputs"]} == {"ncu-rep"}


@needs_reader
def test_report_mixed_with_a_csv_gets_file_prefixed_ids(tmp_path):
    from ridgeline.pipeline import analyze_paths

    fixtures = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"
    res = analyze_paths([sample(H100), fixtures], run_rules=False)
    ids = res.kernels.get_column("id").to_list()
    assert any(i.startswith("0:") for i in ids) and any(i.startswith("1:") for i in ids)
    assert res.ncu_rules is not None and res.ncu_rules.get_column("id").str.starts_with("0:").all()


def _one_line_error(capsys, args, *needles):
    code, out, err = run(capsys, *args)
    err = err.strip().splitlines()
    assert code == 2 and out == "" and len(err) == 1 and err[0].startswith("ridgeline: error: "), err
    for n in needles:
        assert n in err[0], (n, err[0])


def test_without_the_extra_one_line_names_the_extra_and_the_csv_command(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ncu_report", None)  # import fails as when not installed
    _one_line_error(capsys, ["analyze", str(sample(A10))], "ridgeline[ncu-rep]", "ncu --import", "--page raw")


@needs_reader
@pytest.mark.parametrize("cut", [16, 100_000])
def test_truncated_report_is_one_line(capsys, tmp_path, cut):
    bad = tmp_path / "cut.ncu-rep"
    bad.write_bytes(sample(H100).read_bytes()[:cut])
    _one_line_error(capsys, ["analyze", str(bad)], "truncated or corrupt")


def test_nvtx_ranges_become_one_string_per_launch():
    """NVTX through the reader's interface (push/pop and start/end range names per domain)."""
    from ridgeline.parsers.ncu.rep import _nvtx

    class Dom:
        def __init__(self, name, pp, se):
            self._n, self._pp, self._se = name, pp, se

        def name(self):
            return self._n

        def push_pop_ranges(self):
            return self._pp

        def start_end_ranges(self):
            return self._se

    class State:
        doms = {0: Dom("", ["step", "forward"], []), 1: Dom("nccl", [], ["allreduce"])}

        def domains(self):
            return list(self.doms)

        def domain_by_id(self, i):
            return self.doms[i]

    class Action:
        def __init__(self, state):
            self.state = state

        def nvtx_state(self):
            return self.state

    assert _nvtx(Action(State())) == "step > forward > nccl:allreduce"
    assert _nvtx(Action(None)) is None


@needs_reader
def test_html_shows_utilization_and_ncu_rules_beside_findings(tmp_path, capsys):
    page = tmp_path / "r.html"
    code, _out, err = run(capsys, "report", sample(GH200), "-o", page)
    assert code == 0, err
    html = page.read_text()
    assert 'id="utilization"' in html and "not a roofline verdict" in html
    assert 'id="ncu-rules"' in html and "ridgeline findings" in html
    # a ridgeline finding on a kernel is named next to ncu's results for the same kernel
    from ridgeline.pipeline import analyze_paths
    from ridgeline.render.jsonout import to_document
    from ridgeline.rules.base import Finding

    res = analyze_paths([sample(H100)], gpu="h100-pcie")
    res.findings = list(res.findings) + [Finding(code="RL103", name="below-bandwidth-roof", severity="warning",
                                                 subject="rms_norm_matrix_kernel", message="m", remedy="r")]
    doc = to_document(res)
    assert doc["ncu_rules"] and all(r["findings"] == ["RL103"] for r in doc["ncu_rules"])
    assert not any(f["code"] == r["rule"] for f in doc["findings"] for r in doc["ncu_rules"])
