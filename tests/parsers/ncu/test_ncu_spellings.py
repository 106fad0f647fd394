"""One quantity, several spellings (issue 20 items 2-5): the table and the readers agree.

Frames are built in the test (raw-page shape: a units row, then launches) and go through the
raw CSV derivation the ``.ncu-rep`` reader uses too. Expected figures are derived from the
numbers put in, never copied from output.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ridgeline.analyzer.kernels.roofline import classify
from ridgeline.analyzer.schema import KERNEL_COLUMNS
from ridgeline.parsers.ncu import metrics as V
from ridgeline.parsers.ncu.csv_reader import kernels_from_raw_frame, read_ncu
from ridgeline.parsers.ncu.spellings import SPELLINGS, canonical, quantities_held, quantity_of
from ridgeline.result import Skipped

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT.parent / "shared" / "samples"
FFMA = "sass_thread_inst_executed_op_ffma_pred_on"

# one synthetic launch: 100 SMs at 1.6 GHz for 20,000 cycles = 12,500 ns
SMS, CLOCK, CYCLES = 100, 1.6e9, 20_000.0
DURATION_NS = CYCLES / CLOCK * 1e9


def frame(*launches: dict, cc: str = "9.0"):
    """Raw-page-shaped frame of strings from {metric: value} dicts (units row first)."""
    import polars as pl

    names = sorted({k for launch in launches for k in launch})
    ident = ["ID", "Kernel Name", "CC"]
    units = {n: ("ns" if n == "gpu__time_duration.sum" else "") for n in names}
    rows = [{"ID": None, "Kernel Name": None, "CC": None, **units}]
    for i, launch in enumerate(launches):
        rows.append({"ID": str(i), "Kernel Name": f"k{i}", "CC": cc,
                     **{n: (None if launch.get(n) is None else repr(float(launch[n]))) if n in launch else "n/a"
                        for n in names}})
    cols = ident + names
    return pl.DataFrame({c: [r.get(c) for r in rows] for c in cols}, schema={c: pl.String for c in cols})


def derive(*launches: dict, cc: str = "9.0", skipped=None, notes=None):
    k, _units = kernels_from_raw_frame(Path("t.csv"), frame(*launches, cc=cc), skipped=skipped, notes=notes)
    return k


# --------------------------------------------------------------------------------------
# cycles: every spelling gives the same FLOPs from a per-cycle rate
# --------------------------------------------------------------------------------------
CYCLE_SPELLINGS = {
    "sm .avg": {"sm__cycles_elapsed.avg": CYCLES},
    "smsp .avg": {"smsp__cycles_elapsed.avg": CYCLES},
    "smsp .sum / (SMs x 4)": {"smsp__cycles_elapsed.sum": CYCLES * SMS * 4, V.SM_COUNT: SMS},
    "sm .sum / SMs": {"sm__cycles_elapsed.sum": CYCLES * SMS, V.SM_COUNT: SMS},
    "smsp clock x duration": {"smsp__cycles_elapsed.avg.per_second": CLOCK, "gpu__time_duration.sum": DURATION_NS},
    "sm clock x duration": {"sm__cycles_elapsed.avg.per_second": CLOCK, "gpu__time_duration.sum": DURATION_NS},
    "gpc max": {"gpc__cycles_elapsed.max": CYCLES},
}


@pytest.mark.parametrize("spelling", list(CYCLE_SPELLINGS))
def test_flops_from_a_rate_per_cycle_with_every_cycle_spelling(spelling):
    rate = 1000.0  # FFMA per elapsed cycle -> 2 FLOPs each
    k = derive({f"smsp__{FFMA}.sum.per_cycle_elapsed": rate,
                "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed": 0.0,
                "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed": 0.0,
                **CYCLE_SPELLINGS[spelling]})
    r = k.row(0, named=True)
    assert r["flops_fp32"] == pytest.approx(2 * rate * CYCLES)
    assert "x cycles (" in r["flops_fp32_source"]  # the cycle spelling read is named


def test_derived_x2_rate_and_peak_spellings():
    """derived__smsp__..._x2 is the achieved FFMA rate x 2, derived__sm__..._x2 the peak x 2."""
    k = derive({f"derived__smsp__{FFMA}_x2": 2 * 500.0, "smsp__cycles_elapsed.sum": CYCLES * SMS * 4, V.SM_COUNT: SMS,
                "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed": 10.0,
                "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed": 10.0,
                f"derived__sm__{FFMA}_x2": 2 * 12_800.0, "sm__cycles_elapsed.avg.per_second": CLOCK})
    r = k.row(0, named=True)
    assert r["flops_fp32"] == pytest.approx((10 + 10 + 2 * 500) * CYCLES)
    assert r["peak_flops_fp32_per_s"] == pytest.approx(12_800 * 2 * CLOCK)


def test_tensor_rate_per_cycle_uses_any_cycle_spelling():
    k = derive({"sm__ops_path_tensor_src_fp16.sum.per_cycle_elapsed": 4096.0,
                "smsp__cycles_elapsed.sum": CYCLES * SMS * 4, V.SM_COUNT: SMS})
    assert k.row(0, named=True)["flops_tensor_fp16"] == pytest.approx(4096 * CYCLES)


# --------------------------------------------------------------------------------------
# the table and the readers agree: each spelling alone fills its KERNEL column
# --------------------------------------------------------------------------------------
FIRST = {"duration_s": {"gpu__time_duration.sum": DURATION_NS}, "cycles": {"sm__cycles_elapsed.avg": CYCLES},
         "sm_clock_hz": {"sm__cycles_elapsed.avg.per_second": CLOCK}}


def concrete(name: str) -> str:
    """A pattern spelling -> one real name it matches."""
    for fill in ("hmma", "fp16", "elapsed"):
        if "*" not in name:
            break
        if "_src_*" in name and name.index("*") == name.index("_src_*") + 5:
            name = name.replace("*", "fp16", 1)
        elif name.endswith("sustained_*"):
            name = name[:-1] + "elapsed"
        else:
            name = name.replace("*", "imma" if "pipe" in name else fill, 1)
    return name


CASES = [(q, i) for q, spellings in SPELLINGS.items() for i in range(len(spellings))
         if q in KERNEL_COLUMNS or q == "cycles"]


@pytest.mark.parametrize("quantity, index", CASES, ids=[f"{q}-{i}" for q, i in CASES])
def test_each_spelling_alone_gives_its_column(quantity, index):
    spelling = SPELLINGS[quantity][index]
    launch: dict[str, float] = {}
    for need in spelling:
        if need.startswith("@"):
            launch.update(FIRST[need[1:]])
        else:
            launch[concrete(need)] = 40.0 if "pct_of_peak" in need else 1000.0
    if quantity == "peak_flops_tensor_per_s":  # a tensor roof is the peak of what ran
        launch[concrete(spelling[0]).removesuffix(V.TENSOR_PEAK_SUFFIX) + ".sum"] = 1e6
    held = quantities_held(launch)
    assert quantity in held
    cc = "7.0" if spelling[0] in V.VOLTA_TENSOR_COUNTERS else "9.0"
    k = derive(launch, cc=cc)
    if quantity == "cycles":  # no column of its own: a rate per cycle needs it
        k = derive({**launch, f"smsp__{FFMA}.sum.per_cycle_elapsed": 1.0,
                    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed": 0.0,
                    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed": 0.0})
        assert k.row(0, named=True)["flops_fp32"] is not None
        return
    if quantity.endswith("_per_s") and quantity in V.RATE_RECIPES:  # rates are kept where no duration is
        assert "gpu__time_duration.sum" not in launch
    r = k.row(0, named=True)
    assert r[quantity] is not None, (quantity, spelling)
    src = r.get(quantity + "_source") or r.get(quantity.removesuffix("_per_s") + "_per_s_source")
    if quantity + "_source" in KERNEL_COLUMNS and not spelling[0].startswith("derived__") and src != V.DEVICE_DRAM_PEAK_SOURCE:
        assert concrete(spelling[0]).split(".")[0] in (src or ""), src


def test_no_spelling_no_figure():
    """Held exactly when a spelling is there: a frame with unrelated metrics holds and gives nothing."""
    launch = {"launch__registers_per_thread": 32.0, "sm__warps_active.avg.pct_of_peak_sustained_active": 50.0}
    held = quantities_held(launch)
    r = derive(launch).row(0, named=True)
    for q in ("flops_fp32", "flops_fp64", "flops_fp16", "flops_tensor", "dram_bytes", "duration_s"):
        assert q not in held and r[q] is None


def test_quantity_of_and_canonical():
    assert quantity_of("smsp__cycles_elapsed.sum") == "cycles"
    assert quantity_of("gpc__cycles_elapsed.max") == "cycles"
    assert quantity_of("sm__cycles_elapsed.avg.per_second") == "sm_clock_hz"
    assert quantity_of(f"smsp__{FFMA}.sum.per_cycle_elapsed") == "flops_fp32"
    assert quantity_of(f"derived__smsp__{FFMA}_x2") == "flops_fp32"
    assert quantity_of(f"derived__sm__{FFMA}_x2") == "peak_flops_fp32_per_s"
    assert quantity_of("sm__ops_path_tensor_src_int8.sum") == "flops_tensor"
    assert quantity_of("sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active") == "tensor_pipe_active_ratio"
    assert quantity_of("Theoretical DRAM Bytes Accessible") == "peak_dram_bytes_per_s"
    assert quantity_of("DRAM Bandwidth") == "dram_bytes"
    assert quantity_of("launch__registers_per_thread") is None
    # "Memory Throughput" is % (busiest unit) or byte/second (DRAM): ambiguous without its unit
    assert canonical("Memory Throughput") == "Memory Throughput"
    assert canonical("Memory Throughput", "byte/second") == "dram__bytes.sum.per_second"


# --------------------------------------------------------------------------------------
# failed replays
# --------------------------------------------------------------------------------------
def test_launch_with_every_counter_nan_is_skipped_with_the_reason():
    skipped: list[Skipped] = []
    good = {"gpu__time_duration.sum": DURATION_NS, "dram__bytes.sum": 1e6}
    bad = {"gpu__time_duration.sum": math.nan, "dram__bytes.sum": None}
    k = derive(good, bad, good, skipped=skipped)
    assert k.height == 2 and k["launch_id"].to_list() == [0, 2]
    assert len(skipped) == 1 and skipped[0].item == "launch 1 (kernel k1)"
    assert "NaN" in skipped[0].reason and "replay" in skipped[0].reason


def test_failed_replay_whose_peaks_survive_is_skipped_with_how_to_profile_it_again():
    """The hardware peaks (.peak_sustained) are device constants a failed replay keeps: they do not
    make the launch measured, so it is never analyzed as a launch lacking its FLOP counters."""
    skipped: list[Skipped] = []
    peaks = {"dram__bytes.sum.peak_sustained": 96.0, f"sm__{FFMA}.sum.peak_sustained": 10_752.0}
    good = {**peaks, "gpu__time_duration.sum": DURATION_NS, "dram__bytes.sum": 1e6, f"smsp__{FFMA}.sum": 1e6}
    bad = {**peaks, "gpu__time_duration.sum": None, "dram__bytes.sum": math.nan, f"smsp__{FFMA}.sum": None}
    k = derive(good, bad, skipped=skipped)
    assert k["launch_id"].to_list() == [0]
    assert [s.item for s in skipped] == ["launch 1 (kernel k1)"]
    reason = skipped[0].reason
    assert "replay of this launch failed" in reason and "--kernel-name regex:'k1' --launch-count 1" in reason
    assert "--replay-mode application" in reason and "--set roofline" not in reason


# --------------------------------------------------------------------------------------
# zero is zero, not collected is unknown (item 4); precision from the tensor pipe (item 5)
# --------------------------------------------------------------------------------------
BASE = {"gpu__time_duration.sum": 100_000.0, "dram__bytes.sum": 60e6, "dram__bytes.sum.peak_sustained": 64.0,
        "dram__cycles_elapsed.avg.per_second": 10e9, f"sm__{FFMA}.sum.peak_sustained": 10_000.0,
        "sm__cycles_elapsed.avg.per_second": CLOCK, "sm__cycles_elapsed.avg": CYCLES}
FP32_ZERO = {f"smsp__{FFMA}.sum": 0.0, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": 0.0,
             "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0}
FP64_ZERO = {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum": 0.0,
             "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum": 0.0,
             "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum": 0.0}


def place(launch, cc="8.6"):
    df, _roofs = classify(derive(launch, cc=cc))
    return df.row(0, named=True)


def test_counters_collected_as_zero_are_zero_flops_memory_bound():
    r = place({**BASE, **FP32_ZERO, **FP64_ZERO})
    assert r["flops"] == 0.0 and r["intensity_dram"] == 0.0
    assert r["bound"] == "memory" and r["missing"] == []
    # 60 MB in 100 us = 600 GB/s of a 64 B x 10 GHz = 640 GB/s roof
    assert r["roof_fraction"] == pytest.approx(600e9 / 640e9)


def test_fp32_not_collected_is_unknown_not_intensity_zero():
    r = place({**BASE, **FP64_ZERO})  # FP64 collected as 0, FP32 never collected
    assert r["flops"] is None and r["intensity_dram"] is None and r["precision"] is None
    assert r["bound"] == "unknown" and r["missing"] == ["sm__sass_thread_inst_executed_op_*_pred_on.sum"]


def test_work_counted_in_a_collected_precision_is_a_lower_bound():
    r = place({**BASE, **FP64_ZERO, "sm__ops_path_tensor_src_fp16.sum": 5e9}, cc="8.0")
    assert r["flops"] == 5e9 and r["precision"] == "fp16_tensor"


IMMA = "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active"
HMMA = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"


def test_imma_pipe_active_without_tensor_counters_labels_int8_and_flops_unknown():
    epilogue = {**FP32_ZERO, f"smsp__{FFMA}.sum": 1e6}  # a little FP32 work (scaling)
    r = place({**BASE, **epilogue, **FP64_ZERO, IMMA: 11.6, HMMA: 0.0}, cc="8.0")
    assert r["tensor_pipe_active_ratio"] == pytest.approx(0.116)
    assert r["tensor_pipe_precision"] == "int8_tensor" and r["precision"] == "int8_tensor"
    assert r["flops"] is None and r["bound"] == "unknown"
    assert any("sm__ops_path_tensor" in m for m in r["missing"])
    assert "TensorRooflineChart" in r["missing_hint"]


def test_hmma_activity_from_register_moves_does_not_relabel():
    """HFMA2.MMA moves show a few % on the HMMA pipe in kernels with no MMA: below the 5% floor."""
    epilogue = {**FP32_ZERO, f"smsp__{FFMA}.sum": 1e6}
    r = place({**BASE, **epilogue, **FP64_ZERO, HMMA: 2.7}, cc="8.0")
    assert r["tensor_pipe_precision"] == "fp16_tensor" and r["precision"] == "fp32"
    assert r["flops"] == 2e6


def test_pipe_prefers_elapsed_and_names_its_counter():
    el = "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_elapsed"
    r = derive({**BASE, IMMA: 20.0, el: 10.0}).row(0, named=True)
    assert r["tensor_pipe_active_ratio"] == pytest.approx(0.10) and r["tensor_pipe_source"] == el


# --------------------------------------------------------------------------------------
# section export with human labels (generated fixture, NCU-FORMATS 4.2b)
# --------------------------------------------------------------------------------------
LABELS = ROOT / "fixtures" / "ncu" / "details-section-roofline-labels.csv"


def test_section_labels_give_roofs_and_a_placement_by_rate():
    res = read_ncu([LABELS])
    k = res.kernels
    assert k.height == 2 and k["duration_s"].null_count() == 2 and k["flops_fp32"].null_count() == 2
    df, roofs = classify(k)
    sgemm, axpy = df.row(0, named=True), df.row(1, named=True)
    # roofs: 43,520 FLOP/cycle x 2.01 GHz; 128 B/cycle x 13.78 GHz
    assert sgemm["peak_flops_per_s"] == pytest.approx(43_520 * 2.01e9)
    assert sgemm["peak_bw_bytes_per_s"] == pytest.approx(128 * 13.78e9)
    # achieved: (FADD 500 + FMUL 500 + FFMA ops 20,000) per cycle x 2.01 GHz over 156.55 GB/s
    assert sgemm["achieved_flops_per_s"] == pytest.approx(21_000 * 2.01e9)
    assert sgemm["intensity_dram"] == pytest.approx(21_000 * 2.01e9 / 156.55e9)
    assert sgemm["bound"] == "compute" and sgemm["roof_fraction"] == pytest.approx(21_000 / 43_520)
    assert axpy["bound"] == "memory" and axpy["roof_fraction"] == pytest.approx(1.2e12 / (128 * 13.78e9))
    # what the file lacks, said plainly: the duration only
    for r in (sgemm, axpy):
        assert r["missing"] == ["gpu__time_duration.sum"] and r["missing_hint"] == "--metrics gpu__time_duration.sum"
        assert r["time_to_roof_s"] is None
    assert any("no duration" in n for n in res.notes)


def test_section_label_file_holds_rates_and_peaks_not_totals():
    import polars as pl

    names = pl.read_csv(LABELS, infer_schema=False)["Metric Name"].unique().to_list()
    held = quantities_held(names)
    assert {"peak_flops_fp32_per_s", "peak_dram_bytes_per_s", "flops_fp32_per_s", "dram_bytes_per_s"} <= held
    assert not {"duration_s", "flops_fp32", "dram_bytes"} & held


# --------------------------------------------------------------------------------------
# the real RTX 2080 Ti report (shared sample; skipped when absent)
# --------------------------------------------------------------------------------------
RTX2080 = SAMPLES / "ncu-rep" / "tanvisharma-rtx2080ti-sgemm-3136_64_64.ncu-rep"


def test_rtx2080ti_roofline_section_report_is_placed():
    if not RTX2080.exists():
        pytest.skip("shared samples absent")
    pytest.importorskip("ncu_report")
    from ridgeline.parsers.ncu.rep import read_ncu_rep

    res, _rules = read_ncu_rep(RTX2080)
    r = res.kernels.row(0, named=True)
    # volta_sgemm_32x128_nn, grid (2, 25): 25 x 128 = 3,200 rows padded from 3,136, 2 x 32 = 64
    # columns, K = 64: 3,200 x 64 x 64 FFMA (2 FLOPs) + one FMUL per output (alpha)
    assert r["flops_fp32"] == pytest.approx(2 * 3200 * 64 * 64 + 3200 * 64, rel=1e-9)
    assert "smsp__cycles_elapsed.sum" in r["flops_fp32_source"]
    assert r["peak_flops_fp32_per_s"] == pytest.approx(4352 * 2 * r["sm_clock_hz"])
    assert r["tensor_pipe_active_ratio"] == 0.0
    df, _roofs = classify(res.kernels)
    placed = df.row(0, named=True)
    assert placed["precision"] == "fp32" and placed["bound"] != "unknown" and placed["missing"] == []


def test_docs_name_every_quantity():
    page = (ROOT / "docs" / "ncu-spellings.md").read_text(encoding="utf-8")
    assert "one quantity, several spellings" in page
    for quantity in SPELLINGS:
        assert f"`{quantity}`" in page or quantity in page, quantity


def test_uncounted_tensor_work_is_noted_with_its_activity(tmp_path):
    from ridgeline.pipeline import _note_uncounted_tensor_work

    epilogue = {**FP32_ZERO, f"smsp__{FFMA}.sum": 1e6}
    df, _roofs = classify(derive({**BASE, **epilogue, **FP64_ZERO, IMMA: 11.6}, cc="8.0"))
    notes: list[str] = []
    _note_uncounted_tensor_work(df, notes)
    assert len(notes) == 1 and "int8_tensor up to 11.6% of the pipe" in notes[0]


class _Metric:
    ValueKind_STRING, ValueKind_UINT64, ValueKind_UINT32, ValueKind_DOUBLE, ValueKind_FLOAT = range(5)

    def __init__(self, value, unit=""):
        self.value, self._unit = value, unit

    def has_value(self):
        return True

    def kind(self):
        return self.ValueKind_DOUBLE

    def as_double(self):
        return self.value

    def unit(self):
        return self._unit


class _Action:
    NameBase_DEMANGLED = 0

    def __init__(self, name, metrics, rules):
        self._name, self._metrics, self._rules = name, metrics, rules

    def name(self, _base=None):
        return self._name

    def metric_names(self):
        return list(self._metrics)

    def metric_by_name(self, n):
        return _Metric(*self._metrics[n]) if n in self._metrics else None

    def rule_results_as_dicts(self):
        return self._rules

    def nvtx_state(self):
        return None


def test_ncu_rep_failed_replay_is_skipped_and_rules_stay_with_their_launch(monkeypatch, tmp_path):
    """Report path: a launch whose every counter is NaN is skipped; ncu's rule results of the
    launches after it keep their own launch ids."""
    import sys
    import types

    from ridgeline.parsers.ncu.rep import MAGIC, read_ncu_rep

    def rule(title):
        return [{"rule_identifier": "SOL", "name": "sol", "section_identifier": "SpeedOfLight",
                 "rule_message": {"type": 2, "title": title, "message": "m"}}]

    ok = {"gpu__time_duration.sum": (10_000.0, "ns"), "dram__bytes.sum": (1e6, "byte")}
    nan = {"gpu__time_duration.sum": (math.nan, "ns"), "dram__bytes.sum": (math.nan, "byte")}
    actions = [_Action("a", ok, rule("first")), _Action("b", nan, rule("failed")), _Action("c", ok, rule("third"))]
    rng = types.SimpleNamespace(num_actions=lambda: 3, action_by_idx=lambda i: actions[i])
    report = types.SimpleNamespace(num_ranges=lambda: 1, range_by_idx=lambda i: rng)
    monkeypatch.setitem(sys.modules, "ncu_report", types.SimpleNamespace(load_report=lambda p: report))
    path = tmp_path / "r.ncu-rep"
    path.write_bytes(MAGIC + b"\0" * 16)
    res, rules = read_ncu_rep(path)
    assert res.kernels["kernel_name"].to_list() == ["a", "c"]
    assert [s.item for s in res.skipped] == ["launch 1 (kernel b)"]
    assert dict(zip(rules["id"].to_list(), rules["title"].to_list())) == {"0": "first", "2": "third"}


def test_details_pairs_tell_ambiguous_labels_apart():
    dur = ("Duration", "usecond")
    assert "dram_bytes" in quantities_held([dur, ("Memory Throughput", "Gbyte/second")])
    assert "dram_bytes" not in quantities_held([dur, ("Memory Throughput", "%")])
    assert "dram_bytes" not in quantities_held(["Duration", "Memory Throughput"])  # bare: neither


def test_details_page_failed_replay_with_surviving_peaks_is_skipped(tmp_path):
    """The details page: a launch whose measured rows are all nan and whose peak rows survive is a
    failed replay (skipped, with how to profile it again), not a bad value and not an unknown launch."""
    from ridgeline.parsers.ncu.csv_reader import read_ncu

    head = '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Section Name","Metric Name","Metric Unit","Metric Value"'
    rows = [head]
    for launch, value in ((0, "1000000"), (1, "nan")):
        for name, unit, v in (("dram__bytes.sum", "byte", value), ("gpu__time_duration.sum", "ns", value if launch else "5000"),
                              ("dram__bytes.sum.peak_sustained", "byte/cycle", "96")):
            rows.append(f'"{launch}","1","app","host","k{launch}","1","7","Command line profiler metrics","{name}","{unit}","{v}"')
    path = tmp_path / "details.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    res = read_ncu([path])  # strict: the nan of a failed replay is no bad value
    assert res.kernels["launch_id"].to_list() == [0]
    assert [s.item for s in res.skipped] == ["launch 1 (kernel k1)"]
    assert "replay of this launch failed" in res.skipped[0].reason
