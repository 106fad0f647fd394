"""Every rule survives a null in every nullable column (issue 20, item 1).

A value that was not measured is null (ridgeline.analyzer.schema), so any nullable column of
the ROOFLINE, SUMMARY and WINDOW tables can be null in a real file: a cuBLAS GEMV with no FP
counters has no precision and so no ridge, a dmon file has no tensor column, an export without
a device name has no ``gpu``. Rules must skip what they cannot judge, never raise.

The frames here start from real analyses of the bundled fixtures (so every column holds the
values the analyzer really writes, consistent with each other) and then null one column, in one
launch and in all launches, for every nullable column; hypothesis then nulls random sets of
columns in random rows. Each context runs every registered rule of the family.

The non-nullable columns are the analyzer's keys; ``test_keys_are_never_null`` checks that the
analyzer indeed fills them, so the list cannot hide a real null.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ridgeline.analyzer.schema import WINDOW_COLUMNS
from ridgeline.rules.base import Context
from ridgeline.rules.engine import run_rules

ROOT = Path(__file__).resolve().parents[2]
SCEN = ROOT / "fixtures" / "scenarios"
KERNEL_INPUTS = {
    "decode": SCEN / "decode-b8-h100" / "profile.ncu-raw.csv",
    "prefill": SCEN / "prefill-2048-h100" / "profile.ncu-raw.csv",
    "details": SCEN / "kernel-inefficiency-h100" / "profile.ncu-details.csv",
}
TELEMETRY_INPUT = SCEN / "telemetry-fleet"
# keys the analyzer always fills (checked below); every other column may be null
KERNEL_KEYS = {"id", "kernel_name", "short_name", "source", "missing", "bound", "kernel_family", "kernel_label"}
SUMMARY_KEYS = {"kernel_name", "short_name", "kernel_family", "kernel_label", "launches", "bound"}
WINDOW_KEYS = {"host", "window_start", "window_end", "samples"}

_CACHE: dict = {}


def _analysis(name):
    if name not in _CACHE:
        from ridgeline.pipeline import analyze_paths

        path = KERNEL_INPUTS[name] if name in KERNEL_INPUTS else TELEMETRY_INPUT
        _CACHE[name] = analyze_paths([str(path)], run_rules=False, gpu="H100 SXM" if name in KERNEL_INPUTS else None)
    return _CACHE[name]


def _ctx(result, *, kernels=None, summary=None, windows=None) -> Context:
    """A fresh context (the rules' per-context cache lives in ``extra``) like the pipeline's."""
    from ridgeline.analyzer.kernels.gpus import lookup

    return Context(
        kernels=result.kernels if kernels is None else kernels,
        summary=result.summary if summary is None else summary,
        gpu=lookup(result.gpu_name) if result.gpu_name else None,
        windows=result.windows if windows is None else windows,
        total_gpu_time_s=result.total_gpu_time_s,
        extra={"roofs": list(result.roofs), "gpu_match": result.gpu_match, "inputs": list(result.inputs),
               "skipped": list(result.skipped), "notes": list(result.notes), "metrics": None},
    )


def _null(df: pl.DataFrame, col: str, rows: str | list[int]) -> pl.DataFrame:
    """``df`` with ``col`` null in ``rows`` ("all", "first" or a list of row indices)."""
    dtype = df.schema[col]
    if rows == "all":
        return df.with_columns(pl.lit(None, dtype=dtype).alias(col))
    idx = [0] if rows == "first" else rows
    mask = pl.int_range(pl.len()).is_in(idx)
    return df.with_columns(pl.when(mask).then(None).otherwise(pl.col(col)).alias(col))


def _nullable(df: pl.DataFrame, keys: set[str]) -> list[str]:
    return [c for c in df.columns if c not in keys and c != "missing"]


def _run(ctx: Context, family) -> None:
    findings = run_rules(ctx, family=family)
    for f in findings:  # nothing formats a missing number as text
        assert "None" not in f.message and "nan" not in f.message.lower().replace("nanos", ""), f.message


@pytest.mark.parametrize("name", list(KERNEL_INPUTS))
def test_keys_are_never_null(name):
    """The frames carry every schema column (so each is nulled below) and the keys are filled."""
    from ridgeline.analyzer.schema import KERNEL_COLUMNS, ROOFLINE_COLUMNS, SUMMARY_COLUMNS

    r = _analysis(name)
    assert set(KERNEL_COLUMNS) | set(ROOFLINE_COLUMNS) <= set(r.kernels.columns)
    assert set(SUMMARY_COLUMNS) <= set(r.summary.columns)
    for col in KERNEL_KEYS:
        assert r.kernels[col].null_count() == 0, col
    for col in SUMMARY_KEYS:
        assert r.summary[col].null_count() == 0, col
    w = _analysis("telemetry").windows
    for col in WINDOW_KEYS:
        assert w[col].null_count() == 0, col


@pytest.mark.parametrize("rows", ["first", "all"])
@pytest.mark.parametrize("name", list(KERNEL_INPUTS))
def test_kernel_rules_with_each_column_null(name, rows):
    r = _analysis(name)
    # sanity: the base frame produces findings, so the rules do read these frames
    assert run_rules(_ctx(r), family=("kernel", "data"))
    for col in _nullable(r.kernels, KERNEL_KEYS):
        try:
            _run(_ctx(r, kernels=_null(r.kernels, col, rows)), ("kernel", "data"))
        except Exception as exc:  # name the column in the failure
            raise AssertionError(f"ROOFLINE column {col!r} null in {rows} launch(es): {exc!r}") from exc
    for col in _nullable(r.summary, SUMMARY_KEYS):
        try:
            _run(_ctx(r, summary=_null(r.summary, col, rows)), ("kernel", "data"))
        except Exception as exc:
            raise AssertionError(f"SUMMARY column {col!r} null in {rows} row(s): {exc!r}") from exc


@pytest.mark.parametrize("rows", ["first", "all"])
def test_telemetry_rules_with_each_window_column_null(rows):
    r = _analysis("telemetry")
    w = r.windows
    assert set(WINDOW_COLUMNS) <= set(w.columns)
    assert run_rules(_ctx(r), family="telemetry")
    for col in _nullable(w, WINDOW_KEYS):
        try:
            _run(_ctx(r, windows=_null(w, col, rows)), "telemetry")
        except Exception as exc:
            raise AssertionError(f"WINDOW column {col!r} null in {rows} window(s): {exc!r}") from exc


@st.composite
def _nulls(draw, cols, height):
    chosen = draw(st.lists(st.sampled_from(cols), min_size=1, max_size=8, unique=True))
    return [(c, draw(st.one_of(st.just("all"), st.lists(st.integers(0, height - 1), min_size=1, max_size=5))))
            for c in chosen]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_kernel_rules_with_random_nulls(data):
    name = data.draw(st.sampled_from(list(KERNEL_INPUTS)))
    r = _analysis(name)
    df = r.kernels
    for col, rows in data.draw(_nulls(_nullable(df, KERNEL_KEYS), df.height)):
        df = _null(df, col, rows)
    _run(_ctx(r, kernels=df), ("kernel", "data"))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_telemetry_rules_with_random_nulls(data):
    r = _analysis("telemetry")
    w = r.windows
    for col, rows in data.draw(_nulls(_nullable(w, WINDOW_KEYS), w.height)):
        w = _null(w, col, rows)
    _run(_ctx(r, windows=w), "telemetry")


# what a launch without a precision lacks: no FLOPs counted, so no compute roof, ridge, roof
# position or intensity (the bytes, duration and bandwidth roof stay)
NO_PRECISION = ("precision", "flops", "intensity_dram", "intensity_l2", "intensity_l1", "achieved_flops_per_s",
                "peak_flops_per_s", "peak_flops_source", "ridge_flop_per_byte", "roof_flops_per_s", "roof_fraction",
                "ridge_distance")


# rules that place a launch against its compute roof or ridge (decode GEMMs, compute-bound on CUDA
# cores, below the compute roof, regime, L2 ridge, GEMM on CUDA cores, TF32)
NEEDS_PRECISION = {"RL101", "RL104", "RL105", "RL107", "RL108", "RL109", "RL110"}


@pytest.mark.parametrize("rows", ["first", "all"])
@pytest.mark.parametrize("bound", [None, "memory", "latency", "unknown"])
@pytest.mark.parametrize("name", list(KERNEL_INPUTS))
def test_kernel_rules_on_launches_without_precision(name, rows, bound):
    """A GEMV whose FP counters were not collected (issue 20, item 1): whatever bound the
    classifier gave it, every rule runs; rules needing a precision skip it."""
    r = _analysis(name)
    df = r.kernels
    for col in NO_PRECISION:
        df = _null(df, col, rows)
    if bound is not None:
        mask = pl.int_range(pl.len()) == 0 if rows == "first" else pl.lit(True)
        df = df.with_columns(pl.when(mask).then(pl.lit(bound)).otherwise(pl.col("bound")).alias("bound"))
    _run(_ctx(r, kernels=df), ("kernel", "data"))
    if rows == "all":  # no launch has a precision: the rules that judge one against a compute roof say nothing
        found = run_rules(_ctx(r, kernels=df), family=("kernel", "data"))
        assert not {f.code for f in found} & NEEDS_PRECISION, [(f.code, f.message) for f in found]


def test_rl107_skips_a_gemv_without_precision():
    """RL107 judges the GEMM time it can place against a ridge; a GEMV with no precision (no
    ridge) is left out instead of ending the run (float(None) before the fix)."""
    from rule_cases import H100_BF16, H100_BW, launch, run

    from ridgeline.rules.kernel.rl107_profile_dominated_by_one_regime import ProfileDominatedByOneRegime

    gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"
    # compute-bound GEMM: 1e12 FLOP over 1e9 B (intensity 1000 > ridge 989e12/3.35e12 = 295)
    rows = [launch(gemm, id="1", duration_s=2e-3, flops=1e12, dram_bytes=1e9)]
    gemv = launch("gemv2T_kernel_val<float>", id="2", duration_s=1e-4, dram_bytes=2e8, precision=None, peak_flops=None)
    gemv.update(bound="memory", ridge_flop_per_byte=None, missing=[])
    found = run(ProfileDominatedByOneRegime, rows + [gemv])
    assert len(found) == 1
    ev = {e.metric: e.value for e in found[0].evidence}
    assert ev["ridge_flop_per_byte"] == pytest.approx(H100_BF16 / H100_BW)
    assert ev["gemm_time_s"] == pytest.approx(2e-3)  # the GEMV's 0.1 ms is not placed
    # only the GEMV: nothing to place, no finding, no exception
    assert run(ProfileDominatedByOneRegime, [gemv]) == []
