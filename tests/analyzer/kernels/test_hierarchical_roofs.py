"""Hierarchical roofline: L2/L1 bandwidth roofs from the peaks the export recorded.

Parser recipes (per-cycle peak x cache clock), the classifier's cache roofs and binding level
(``roof_level``), the L2/L1 slopes on the plot and RL108 using the measured L2 roof. Every
expected number is computed here by hand from the SYNTHETIC fixture text
(fixtures/ncu/make_fixtures.py) or from the rows built below.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest


from rule_cases import launch, run  # noqa: E402

from ridgeline.analyzer.kernels.roofline import classify, summarize  # noqa: E402
from ridgeline.analyzer.schema import KERNEL_COLUMNS, polars_schema  # noqa: E402
from ridgeline.parsers.ncu.csv_reader import read_ncu  # noqa: E402
from ridgeline.result import AnalysisResult, Roof  # noqa: E402

FIX = Path(__file__).resolve().parents[3] / "fixtures" / "ncu"
H100 = "NVIDIA H100 80GB HBM3"

# raw-units-row.csv, launch 0 (H100): lts__t_bytes.sum.peak_sustained 2560 B/cycle at
# lts__cycles_elapsed.avg.per_second 1.755 GHz; l1tex__t_bytes.sum.peak_sustained 16896
# B/cycle at l1tex__cycles_elapsed.avg.per_second 1.83 GHz
L2_PEAK = 2560 * 1.755e9  # 4.4928e12 B/s
L1_PEAK = 16896 * 1.83e9  # 3.091968e13 B/s


def _rows(path):
    k = read_ncu([path]).kernels
    return {r["id"]: r for r in k.iter_rows(named=True)}


# ------------------------------------------------------------------------------ parser
def test_nersc_recipe_peak_is_peak_sustained_times_cache_clock():
    r = _rows(FIX / "raw-units-row.csv")
    assert r["0"]["peak_l2_bytes_per_s"] == pytest.approx(4.4928e12)
    assert r["0"]["peak_l1_bytes_per_s"] == pytest.approx(3.091968e13)
    assert r["0"]["peak_l2_bytes_per_s_source"] == "lts__t_bytes.sum.peak_sustained x lts__cycles_elapsed.avg.per_second"
    assert r["0"]["peak_l1_bytes_per_s_source"] == (
        "l1tex__t_bytes.sum.peak_sustained x l1tex__cycles_elapsed.avg.per_second"
    )


def test_absent_or_zero_peaks_are_null_never_zero():
    r = _rows(FIX / "raw-units-row.csv")
    # V100 launch: every cache peak counter printed n/a
    for c in ("peak_l2_bytes_per_s", "peak_l2_bytes_per_s_source", "peak_l1_bytes_per_s", "peak_l1_bytes_per_s_source"):
        assert r["1"][c] is None
    # launch 2 printed an L2 peak of 0 (failed replay): no roof, no source; its L1 peak stands
    assert r["2"]["peak_l2_bytes_per_s"] is None and r["2"]["peak_l2_bytes_per_s_source"] is None
    assert r["2"]["peak_l1_bytes_per_s"] == pytest.approx(L1_PEAK)
    # an export without any cache peak counter
    r21 = _rows(FIX / "details-2021-15col-rules-ragged.csv")
    assert all(v["peak_l2_bytes_per_s"] is None and v["peak_l1_bytes_per_s"] is None for v in r21.values())


def test_ncu_section_derived_peaks_use_the_lts2xbar_and_writeback_definitions():
    # raw-autoscaled-units.csv: derived__lts__lts2xbar_bytes.sum.peak_sustained 2.56 Kbyte (per
    # cycle) at 1.40 Ghz; derived__l1tex__lsu_writeback_bytes_mem_lg.sum.peak_sustained 8.704
    # Kbyte at 1.50 Ghz
    (r,) = _rows(FIX / "raw-autoscaled-units.csv").values()
    assert r["peak_l2_bytes_per_s"] == pytest.approx(2560 * 1.4e9)  # 3.584e12
    assert r["peak_l1_bytes_per_s"] == pytest.approx(8704 * 1.5e9)  # 1.3056e13
    assert "lts2xbar" in r["peak_l2_bytes_per_s_source"]
    assert "lts__cycles_elapsed.avg.per_second" in r["peak_l2_bytes_per_s_source"]
    assert "lsu_writeback_bytes_mem_lg" in r["peak_l1_bytes_per_s_source"]


RAW_HEAD = ["ID", "Kernel Name", "Device"]


def _raw(tmp_path, metrics: dict[str, str]) -> Path:
    names = list(metrics)
    head = ",".join(f'"{c}"' for c in RAW_HEAD + ["gpu__time_duration.sum", *names])
    row = ",".join(f'"{v}"' for v in ["0", "k", "0", "1000", *metrics.values()])
    p = tmp_path / "raw.csv"
    p.write_text(head + "\n" + row + "\n")
    return p


def test_counter_fallbacks_cycles_times_bytes_per_cycle(tmp_path):
    # crossbar cycles x 32 B, LSU writeback cycles (local/global/shared, CC 9.0+) x 128 B
    p = _raw(
        tmp_path,
        {
            "l1tex__cycles_elapsed.avg.per_second": "1500000000",
            "l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained": "132",
            "lts__cycles_elapsed.avg.per_second": "1600000000",
            "lts__lts2xbar_cycles_active.sum.peak_sustained": "96",
        },
    )
    r = _rows(p)["0"]
    assert r["peak_l2_bytes_per_s"] == pytest.approx(96 * 32 * 1.6e9)  # 4.9152e12
    assert r["peak_l1_bytes_per_s"] == pytest.approx(132 * 128 * 1.5e9)  # 2.5344e13
    assert r["peak_l2_bytes_per_s_source"] == (
        "32*lts__lts2xbar_cycles_active.sum.peak_sustained x lts__cycles_elapsed.avg.per_second"
    )
    assert r["peak_l1_bytes_per_s_source"] == (
        "128*l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained x l1tex__cycles_elapsed.avg.per_second"
    )


def test_lts_t_bytes_peak_wins_over_lts2xbar_and_clock_is_required(tmp_path):
    p = _raw(
        tmp_path,
        {
            "lts__cycles_elapsed.avg.per_second": "2000000000",
            "lts__lts2xbar_cycles_active.sum.peak_sustained": "96",
            "lts__t_bytes.sum.peak_sustained": "3000",
            # an L1 peak without the L1 clock: no L1 roof
            "l1tex__t_bytes.sum.peak_sustained": "16896",
        },
    )
    r = _rows(p)["0"]
    assert r["peak_l2_bytes_per_s"] == pytest.approx(3000 * 2e9)
    assert r["peak_l2_bytes_per_s_source"].startswith("lts__t_bytes.sum.peak_sustained")
    assert r["peak_l1_bytes_per_s"] is None and r["peak_l1_bytes_per_s_source"] is None


def test_roofline_section_only_export_gets_cache_bytes_in_the_same_definition(tmp_path):
    # what `ncu --set roofline` records: ncu's derived L2/L1 rates and peaks, no lts__t_bytes
    p = _raw(
        tmp_path,
        {
            "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained": "16896",
            "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second": "1000000000000",
            "derived__lts__lts2xbar_bytes.sum.peak_sustained": "5120",
            "derived__lts__lts2xbar_bytes.sum.per_second": "2500000000000",
            "l1tex__cycles_elapsed.avg.per_second": "1750000000",
            "lts__cycles_elapsed.avg.per_second": "1750000000",
        },
    )
    r = _rows(p)["0"]
    # duration 1000 ns: L2 2.5e12 B/s x 1e-6 s = 2.5e6 B; L1 1e12 x 1e-6 = 1e6 B
    assert r["l2_bytes"] == pytest.approx(2.5e6)
    assert r["l1_bytes"] == pytest.approx(1e6)
    assert "lts2xbar" in r["l2_bytes_source"] and r["l2_bytes_source"].endswith("x duration")
    assert "lsu_writeback_bytes_mem_lgds" in r["l1_bytes_source"]
    assert r["peak_l2_bytes_per_s"] == pytest.approx(5120 * 1.75e9)  # 8.96e12
    assert r["peak_l1_bytes_per_s"] == pytest.approx(16896 * 1.75e9)


def test_lts_t_bytes_stay_first_for_l2_bytes(tmp_path):
    p = _raw(tmp_path, {"derived__lts__lts2xbar_bytes.sum.per_second": "2500000000000", "lts__t_bytes.sum": "7"})
    r = _rows(p)["0"]
    assert r["l2_bytes"] == 7 and r["l2_bytes_source"] == "lts__t_bytes.sum"


# ------------------------------------------------------------------------------ classifier
@pytest.fixture(scope="module")
def fixture_run():
    return classify(read_ncu([FIX / "raw-units-row.csv"]).kernels)


def test_cache_roofs_are_measured_medians_per_device_never_catalogue(fixture_run):
    df, roofs = fixture_run
    cache = [r for r in roofs if r.kind == "bandwidth" and r.level in ("l2", "l1")]
    # only the H100 recorded cache peaks; the V100 gets none (the catalogue has none to give)
    assert [(r.level, r.source) for r in cache] == [("l2", "ncu"), ("l1", "ncu")]
    l2 = cache[0]
    assert l2.value == pytest.approx(L2_PEAK)
    # launch 2's L2 peak was 0 (null): the median is over the one launch that recorded it
    assert l2.detail.startswith(f"median of 1 launch on {H100}: peak_l2_bytes_per_s = lts__t_bytes.sum.peak_sustained")
    assert cache[1].value == pytest.approx(L1_PEAK)
    assert "median of 2 launches" in cache[1].detail
    by_id = {r["id"]: r for r in df.iter_rows(named=True)}
    assert by_id["0"]["peak_l2_bw_bytes_per_s"] == pytest.approx(L2_PEAK)
    assert by_id["2"]["peak_l2_bw_bytes_per_s"] == pytest.approx(L2_PEAK)  # the device's roof
    assert by_id["1"]["peak_l2_bw_bytes_per_s"] is None and by_id["1"]["peak_l1_bw_bytes_per_s"] is None


def test_roof_level_of_the_fixture_launches(fixture_run):
    df, _ = fixture_run
    by_id = {r["id"]: r for r in df.iter_rows(named=True)}
    h = by_id["0"]
    # time at each roof: DRAM 167.5e6 / (1280 x 2.6171875e9 = 3.35e12) = 50 us;
    # L2 400e6 / 4.4928e12 = 89.0 us; L1 800e6 / 3.092e13 = 25.9 us;
    # compute 2.000009180e9 / (540672 x 1.83e9) = 2.0 us -> the L2 roof binds
    assert h["roof_level"] == "l2"
    # DRAM classification unchanged: memory-bound, fraction = (167.5e6 / 100 us) / 3.35e12 = 0.5
    assert h["bound"] == "memory"
    assert h["roof_fraction"] == pytest.approx(0.5)
    # attainable FLOP/s at L2 (intensity_l2 x L2 roof) is below the DRAM one
    flops = 2e9 + (1000 + 2000 + 2 * 3000) + (2 * 10 + 2 * 20 + 4 * 30)
    assert h["intensity_l2"] == pytest.approx(flops / 400e6)
    assert h["intensity_l2"] * L2_PEAK < h["intensity_dram"] * 3.35e12
    assert by_id["1"]["roof_level"] == "dram"  # V100: no cache roofs, memory-bound at DRAM
    assert by_id["2"]["bound"] == "unknown" and by_id["2"]["roof_level"] is None


def _kernels(*rows):
    base = dict(device_name=H100, duration_s=1e-3)
    return pl.DataFrame([{**base, "kernel_name": f"k{i}", "id": str(i), **r} for i, r in enumerate(rows)],
                        schema=polars_schema(KERNEL_COLUMNS))


def test_roof_level_is_the_lowest_roof_at_the_launchs_intensities():
    # H100 catalogue: fp32 66.9e12 FLOP/s, DRAM 3.35e12 B/s (ridge 19.97). Measured L2 10e12,
    # L1 30e12 B/s on every launch.
    roofs = dict(peak_l2_bytes_per_s=10e12, peak_l1_bytes_per_s=30e12,
                 peak_l2_bytes_per_s_source="lts__t_bytes.sum.peak_sustained x lts__cycles_elapsed.avg.per_second")
    k = _kernels(
        # AI_dram 100 (compute side at DRAM); AI_l2 100e9/20e9 = 5 -> 5 x 10e12 = 50e12 < 66.9e12: L2
        dict(flops_fp32=100e9, dram_bytes=1e9, l2_bytes=20e9, l1_bytes=20e9, **roofs),
        # AI_dram 100, AI_l2 50 (500e12), AI_l1 100e9/40e9 = 2.5 -> 75e12 > 66.9e12: compute
        dict(flops_fp32=100e9, dram_bytes=1e9, l2_bytes=2e9, l1_bytes=40e9, **roofs),
        # AI_dram 100; AI_l2 50 -> 500e12; AI_l1 100e9/100e9 = 1 -> 30e12 < 66.9e12: L1
        dict(flops_fp32=100e9, dram_bytes=1e9, l2_bytes=2e9, l1_bytes=100e9, **roofs),
        # AI_dram 1 -> 3.35e12; AI_l2 0.5 -> 5e12; AI_l1 0.1 -> 3e12: L1 is lowest
        dict(flops_fp32=1e9, dram_bytes=1e9, l2_bytes=2e9, l1_bytes=10e9, **roofs),
        # zero FLOPs (copy): times 1e9/3.35e12 = 299 us at DRAM, 5e9/10e12 = 500 us at L2: L2
        dict(flops_fp32=0.0, dram_bytes=1e9, l2_bytes=5e9, **roofs),
        # no cache bytes counted: DRAM as before
        dict(flops_fp32=1e9, dram_bytes=1e9, **roofs),
    )
    df, _ = classify(k)
    got = dict(zip(df["id"], df["roof_level"]))
    assert got == {"0": "l2", "1": "compute", "2": "l1", "3": "l1", "4": "l2", "5": "dram"}
    assert dict(zip(df["id"], df["bound"])) == {
        "0": "compute", "1": "compute", "2": "compute", "3": "memory", "4": "memory", "5": "memory"
    }


def test_ties_follow_bound_then_the_outer_cache():
    # measured roofs, numbers exact in binary: DRAM 4e12 B/s, fp32 64e12 FLOP/s (ridge 16),
    # L2 8e12 and L1 16e12 B/s on every launch
    peaks = dict(peak_dram_bytes_per_s=4e12, peak_flops_fp32_per_s=64e12,
                 peak_l2_bytes_per_s=8e12, peak_l1_bytes_per_s=16e12)
    k = _kernels(
        # AI_dram 16e9 / 1e9 = 16 == ridge: compute by the DRAM rule, and roof_level agrees
        dict(flops_fp32=16e9, dram_bytes=1e9, **peaks),
        # L2 4e9 / 8e12 = 500 us == L1 8e9 / 16e12 = 500 us > DRAM 250 us: the outer cache, L2
        dict(flops_fp32=1e9, dram_bytes=1e9, l2_bytes=4e9, l1_bytes=8e9, **peaks),
        # L2 2e9 / 8e12 = 250 us == DRAM 1e9 / 4e12: a cache binds only when strictly longer
        dict(flops_fp32=1e9, dram_bytes=1e9, l2_bytes=2e9, **peaks),
    )
    df, _ = classify(k)
    assert df["bound"].to_list() == ["compute", "memory", "memory"]
    assert df["roof_level"].to_list() == ["compute", "l2", "dram"]


def test_no_measured_cache_peak_means_no_cache_roof_even_with_gpu():
    k = _kernels(dict(flops_fp32=1e9, dram_bytes=1e9, l2_bytes=4e9, l1_bytes=8e9))
    df, roofs = classify(k, gpu="H100")
    assert [r.level for r in roofs if r.kind == "bandwidth"] == ["dram"]
    r = df.row(0, named=True)
    assert r["peak_l2_bw_bytes_per_s"] is None and r["peak_l1_bw_bytes_per_s"] is None
    assert r["roof_level"] == "dram"


def test_cache_roofs_are_per_device():
    a100 = "NVIDIA A100-SXM4-80GB"
    k = _kernels(
        dict(flops_fp32=1e9, dram_bytes=1e9, l2_bytes=1e9, peak_l2_bytes_per_s=6e12),
        dict(flops_fp32=1e9, dram_bytes=1e9, l2_bytes=1e9, peak_l2_bytes_per_s=8e12),
        dict(device_name=a100, flops_fp32=1e9, dram_bytes=1e9, l2_bytes=1e9, peak_l2_bytes_per_s=5e12),
    )
    df, roofs = classify(k)
    l2 = sorted((r.value, r.detail.split(":")[0]) for r in roofs if r.level == "l2")
    assert l2 == [(5e12, f"median of 1 launch on {a100}"), (7e12, f"median of 2 launches on {H100}")]
    assert df["peak_l2_bw_bytes_per_s"].to_list() == [6e12, 8e12, 5e12]  # each launch's own (its clock)


# ------------------------------------------------------------------------------ plot
def test_plot_draws_the_measured_l2_and_l1_slopes(fixture_run):
    from ridgeline.render import plots

    df, roofs = fixture_run
    h100 = df.filter(pl.col("device_name") == H100)
    res = AnalysisResult(kernels=h100, summary=summarize(h100), roofs=[r for r in roofs if "V100" not in (r.detail or "")])
    fig = plots.roofline_figure(res)
    try:
        lines = {ln.get_gid(): ln for ln in fig.axes[0].get_lines() if ln.get_gid()}
        for gid, bw in (("roof:bandwidth:l2", L2_PEAK), ("roof:bandwidth:l1", L1_PEAK)):
            xs, ys = lines[gid].get_data()
            assert len(xs) >= 2
            for x, y in zip(xs, ys):
                assert y == pytest.approx(bw * x, rel=1e-9)  # slope = the measured roof
        assert "L2 4.49 TB/s" in lines["roof:bandwidth:l2"].get_label()
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_plot_has_no_l2_slope_without_a_measured_l2_roof():
    from ridgeline.render import plots

    df, roofs = classify(read_ncu([FIX / "details-2021-15col-rules-ragged.csv"]).kernels, gpu="A100")
    fig = plots.roofline_figure(AnalysisResult(kernels=df, summary=summarize(df), roofs=roofs))
    try:
        gids = {ln.get_gid() for ln in fig.axes[0].get_lines()}
        assert "roof:bandwidth:dram" in gids
        assert not {"roof:bandwidth:l2", "roof:bandwidth:l1"} & gids
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


# ------------------------------------------------------------------------------ RL108
def test_rl108_uses_the_l2_roof_measured_on_the_groups_gpu():
    from ridgeline.rules.engine import get_rule

    # DRAM AI 300e9 / 0.5e9 = 600 >= 295; L2 AI 300e9 / 7.5e9 = 40; measured L2 roof 5e12 ->
    # L2 ridge 989e12 / 5e12 = 197.8 (the assumed 3 x DRAM would give 98.4)
    src = "lts__t_bytes.sum.peak_sustained x lts__cycles_elapsed.avg.per_second"
    rows = [
        launch("gemm", duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, l2_bytes=7.5e9,
               peak_l2_bw_bytes_per_s=5e12, peak_l2_bytes_per_s_source=src),
    ]
    # a recorded roof of another device in ctx must not be used over the group's own
    other = [Roof(kind="bandwidth", value=12e12, source="ncu", level="l2")]
    (f,) = run(get_rule("RL108"), rows, extra={"roofs": other})
    assert "L2 ridge 198 FLOP/B" in f.message
    assert f.confidence == "measured"
    ev = {e.metric: e for e in f.evidence}
    assert ev["l2_bw_bytes_per_s"].value == 5e12
    assert ev["l2_bw_bytes_per_s"].source == f"measured: {src}"


def test_rl108_quiet_when_the_measured_l2_roof_leaves_room():
    from ridgeline.rules.engine import get_rule

    # L2 AI 40; measured L2 roof 30e12 -> ridge 33 < 40: L2 is not the wall
    rows = [launch("gemm", duration_s=1e-3, flops=300e9, dram_bytes=0.5e9, l2_bytes=7.5e9,
                   peak_l2_bw_bytes_per_s=30e12)]
    assert run(get_rule("RL108"), rows) == []


def test_pipeline_reports_the_cache_roofs():
    from ridgeline.pipeline import analyze_paths

    res = analyze_paths([FIX / "raw-units-row.csv"])
    levels = {(r.level, r.source) for r in res.roofs if r.kind == "bandwidth"}
    assert ("l2", "ncu") in levels and ("l1", "ncu") in levels
    assert "roof_level" in res.kernels.columns
