"""Roofline and telemetry figures: assertions on what is drawn, not only that a file exists.

Expected values come from the hand-built result in ``_render_sample`` (synthetic numbers).
"""

from __future__ import annotations

import copy
import math
from datetime import datetime, timezone
from pathlib import Path

import pytest

from _render_sample import (
    DRAM_BW,
    L2_BW,
    PEAK_BF16,
    PEAK_FP8,
    PEAK_FP32,
    PIPE_NAME,
    SCRIPT_NAME,
    make_result,
)
from ridgeline.errors import UsageError
from ridgeline.render import plots

matplotlib = pytest.importorskip("matplotlib")


def _bound_is(bound):
    import polars as pl

    return pl.col("bound") == bound


def _by_gid(fig, prefix):
    ax = fig.axes[0]
    return [a for a in ax.get_children() if (a.get_gid() or "").startswith(prefix)]


def _roof_legend(fig):
    """The roofs legend: inside the axes, or below them when there are many roofs."""
    found = [a for a in fig.axes[0].get_children() + fig.legends if a.get_gid() == "legend:roofs"]
    assert len(found) == 1
    return found[0]


def _line(fig, gid):
    found = [ln for ln in fig.axes[0].get_lines() if ln.get_gid() == gid]
    assert len(found) == 1, f"expected one line {gid!r}, got {len(found)}"
    return found[0]


@pytest.fixture(scope="module")
def result():
    return make_result()


@pytest.fixture(scope="module")
def fig(result):
    return plots.roofline_figure(result)


def test_axes_are_log_log_with_units(fig):
    ax = fig.axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_yscale() == "log"
    assert "FLOP/byte" in ax.get_xlabel()
    assert "FLOP/s" in ax.get_ylabel()
    assert "H100 SXM" in ax.get_title(loc="left")
    assert "decode.csv" in ax.get_title(loc="left")


def test_bandwidth_slopes_equal_the_roofs(fig):
    for gid, bw in (("roof:bandwidth:dram", DRAM_BW), ("roof:bandwidth:l2", L2_BW)):
        xs, ys = _line(fig, gid).get_data()
        for x, y in zip(xs, ys):
            assert y / x == pytest.approx(bw, rel=1e-9)


def test_compute_roofs_are_flat_at_the_peaks_and_start_at_the_ridge(fig):
    for prec, peak in (("fp32", PEAK_FP32), ("fp16_tensor", PEAK_BF16), ("fp8_tensor", PEAK_FP8)):
        xs, ys = _line(fig, f"roof:compute:{prec}").get_data()
        assert list(ys) == [pytest.approx(peak)] * len(ys)
        # the flat roof meets the DRAM slope at the ridge point: peak / bandwidth
        assert xs[0] == pytest.approx(peak / DRAM_BW)
        ridge = _line(fig, f"ridge:{prec}")
        assert ridge.get_xdata()[0] == pytest.approx(peak / DRAM_BW)


def test_ridge_points_are_labelled_with_their_value(fig):
    texts = {t.get_gid(): t.get_text() for t in fig.axes[0].texts}
    # 989e12 / 3.35e12 = 295.2; 1979e12 / 3.35e12 = 590.7; 67e12 / 3.35e12 = 20
    assert "295" in texts["ridge-label:fp16_tensor"]
    assert "591" in texts["ridge-label:fp8_tensor"]
    assert "20 FLOP/B" in texts["ridge-label:fp32"]


def test_legend_names_each_roof_with_its_source(fig):
    legend = _roof_legend(fig)
    labels = [t.get_text() for t in legend.get_texts()]
    assert any("DRAM" in t and "measured by ncu" in t for t in labels)
    assert any("FP8 TC" in t and "catalogue" in t for t in labels)
    assert any("BF16 TC" in t and "989 TFLOP/s" in t and "measured by ncu" in t for t in labels)


def test_one_point_per_kernel_name_with_counters(fig, result):
    (coll,) = _by_gid(fig, "kernels:0")
    offsets = coll.get_offsets()
    # six kernel names, one of them (rotary_embedding_kernel) without FLOP/byte counters
    assert result.summary.height == 6
    assert len(offsets) == 5
    xs = sorted(float(x) for x, _y in offsets)
    assert xs == pytest.approx([0.9, 1.0, 2.0, 5.0, 600.0])
    # gemv: 4 launches of 400 us at 80% of min(989e12, 1.0 * 3.35e12)
    gemv = next(y for x, y in offsets if x == pytest.approx(1.0))
    assert gemv == pytest.approx(0.8 * 3.35e12)
    legend = next(a for a in fig.axes[0].get_children() if a.get_gid() == "legend:kernels")
    assert any("1 kernel name not drawn (counters missing: 1)" in t.get_text() for t in legend.get_texts())


def test_point_area_follows_time_share_and_colour_follows_bound(fig):
    (coll,) = _by_gid(fig, "kernels:0")
    sizes = list(coll.get_sizes())
    offsets = [tuple(map(float, o)) for o in coll.get_offsets()]
    by_x = dict(zip([round(x, 6) for x, _ in offsets], sizes))
    # gemv has 1.6 ms of 3.8 ms, flash 1.0 ms: the bigger share gets the bigger point
    assert by_x[1.0] > by_x[0.9] > by_x[2.0]
    colors = coll.get_facecolors()
    hexes = [matplotlib.colors.to_hex(c[:3]) for c in colors]
    xs = [round(x, 6) for x, _ in offsets]
    assert hexes[xs.index(600.0)] == plots.BOUND_COLORS["compute"].lower()
    assert hexes[xs.index(1.0)] == plots.BOUND_COLORS["memory"].lower()


def test_top_kernels_are_labelled_without_overlap(fig):
    labels = _by_gid(fig, "label:")
    texts = [t.get_text() for t in labels]
    assert "cuBLAS gemv_bf16" in texts  # kernels are labelled by what they are (analyzer.kernels.families)
    assert SCRIPT_NAME in texts  # drawn as plain text
    # shortened at token boundaries, first and last words kept (the tile sizes tell GEMMs apart)
    assert any(t.startswith("cuBLAS sm90 xmma") and " \u2026 " in t and t.endswith(" tn") for t in texts), texts
    renderer = fig.canvas.get_renderer()
    from matplotlib.text import Text

    boxes = []
    for t in labels:
        t.update_positions(renderer)
        boxes.append(Text.get_window_extent(t, renderer))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b)
    ax_box = fig.axes[0].get_window_extent(renderer)
    for b in boxes:  # nothing clipped by the axes
        assert ax_box.x0 <= b.x0 and b.x1 <= ax_box.x1 and ax_box.y0 <= b.y0 and b.y1 <= ax_box.y1


def test_per_launch_draws_one_point_per_launch(result):
    fig = plots.roofline_figure(result, per_launch=True)
    (coll,) = _by_gid(fig, "kernels:0")
    with_counters = result.kernels.filter(result.kernels["intensity_dram"].is_not_null()).height
    assert with_counters == 10
    assert len(coll.get_offsets()) == 10
    assert "per launch" in fig.axes[0].get_title(loc="left")


def test_several_inputs_share_one_plot_with_a_marker_each():
    runs = [(f"batch {b}", make_result(b, with_telemetry=False)) for b in (1, 8, 32, 256)]
    fig = plots.roofline_figure(runs)
    colls = [_by_gid(fig, f"kernels:{i}")[0] for i in range(4)]
    paths = {tuple(map(tuple, c.get_paths()[0].vertices.round(3))) for c in colls}
    assert len(paths) == 4  # four different marker shapes
    legend = next(a for a in fig.axes[0].get_children() if a.get_gid() == "legend:kernels")
    names = [t.get_text() for t in legend.get_texts()]
    for b in (1, 8, 32, 256):
        assert f"batch {b}" in names
    # the GEMV marches toward the ridge: intensity = batch (1, 8, 32, 256 FLOP/B)
    march = _line(fig, "march:0")
    assert list(march.get_xdata()) == pytest.approx([1.0, 8.0, 32.0, 256.0])
    assert "4 inputs" in fig.axes[0].get_title(loc="left")


def test_compare_gpu_draws_the_catalogue_roofs():
    from ridgeline.analyzer.kernels.gpus import lookup

    other, _ = lookup("B200")
    fig = plots.roofline_figure(make_result(with_telemetry=False), compare_gpu="B200")
    xs, ys = _line(fig, "compare:bandwidth:dram").get_data()
    assert ys[0] / xs[0] == pytest.approx(other.dram_bw_bytes_per_s)
    xs, ys = _line(fig, "compare:compute:fp16_tensor").get_data()
    assert ys[0] == pytest.approx(other.peak_flops["fp16_tensor"])
    legend = _roof_legend(fig)
    assert any("B200" in t.get_text() and "catalogue" in t.get_text() for t in legend.get_texts())
    assert "vs B200" in fig.axes[0].get_title(loc="left")


def test_dollar_signs_in_names_are_not_mathtext(tmp_path):
    res = make_result(with_telemetry=False)
    import polars as pl

    res.summary = res.summary.with_columns(
        pl.when(pl.col("kernel_name") == PIPE_NAME).then(pl.lit("cost$1$2 kernel")).otherwise(pl.col("short_name")).alias("short_name")
    )
    res.kernels = res.kernels.with_columns(
        pl.when(pl.col("kernel_name") == PIPE_NAME).then(pl.lit("cost$1$2 kernel")).otherwise(pl.col("short_name")).alias("short_name")
    )
    for t in ("summary", "kernels"):  # the label is what the plot prints
        setattr(res, t, getattr(res, t).with_columns(
            pl.when(pl.col("kernel_name") == PIPE_NAME).then(pl.lit("cost$1$2 kernel"))
            .otherwise(pl.col("kernel_label")).alias("kernel_label")))
    fig = plots.roofline_figure(res, top=10)
    out = plots.save_figure(fig, tmp_path / "dollar.png")
    assert out.stat().st_size > 1000
    texts = [t.get_text() for t in _by_gid(fig, "label:")]
    assert r"cost\$1\$2 kernel" in texts  # escaped, so matplotlib prints the dollars


@pytest.mark.parametrize("suffix,magic", [(".png", b"\x89PNG"), (".svg", b"<?xml"), (".pdf", b"%PDF")])
def test_save_figure_picks_format_by_suffix(fig, tmp_path, suffix, magic):
    path = plots.save_figure(fig, tmp_path / f"roofline{suffix}")
    data = path.read_bytes()
    assert data.startswith(magic)
    assert len(data) > 5000


def test_svg_escapes_kernel_names(fig):
    svg = plots.figure_svg(fig)
    assert "<script" not in svg.lower()
    assert "&lt;script&gt;" in svg


def test_unknown_suffix_is_a_usage_error(fig, tmp_path):
    with pytest.raises(UsageError, match=r"\.png"):
        plots.save_figure(fig, tmp_path / "roofline.jpg")


def test_result_without_roofs_still_draws_points():
    res = make_result(with_telemetry=False)
    res.roofs = []
    res.gpu_name = None
    fig = plots.roofline_figure(res)
    assert len(_by_gid(fig, "kernels:0")[0].get_offsets()) == 5
    assert not _by_gid(fig, "roof:")
    # no catalogue GPU: the title names the device the launches recorded (the JSON's gpu.label)
    assert "NVIDIA H100 80GB HBM3" in fig.axes[0].get_title(loc="left")
    import polars as pl

    res.kernels = res.kernels.with_columns(pl.lit(None, dtype=pl.String).alias("device_name"))
    assert "unknown GPU" in plots.roofline_figure(res).axes[0].get_title(loc="left")


def test_telemetry_small_multiples_shade_the_flagged_window(result):
    fig = plots.telemetry_figure(result)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert len(axes) == 2  # node1 GPU 0 and GPU 1
    titles = [ax.get_title(loc="left") for ax in axes]
    # the flagged GPU comes first (fleets have more GPUs than panels)
    assert "GPU 1" in titles[0] and "RL201" in titles[0]
    assert "GPU 0" in titles[1] and "RL201" not in titles[1]
    for k, ax in enumerate(axes):
        gids = {ln.get_gid() for ln in ax.get_lines()}
        assert {f"telemetry:{k}:gpu_util_ratio", f"telemetry:{k}:tensor_active_ratio",
                f"telemetry:{k}:dram_active_ratio"} <= gids
    assert axes[0].get_ylabel() == "% of time"
    # GPU 1 tensor activity is 4% in the flagged window: values are drawn as percent
    tensor = next(ln for ln in axes[0].get_lines() if ln.get_gid() == "telemetry:0:tensor_active_ratio")
    assert min(tensor.get_ydata()) == pytest.approx(4.0)
    shaded = [p for p in axes[0].patches if (p.get_gid() or "").startswith("flagged:")]
    assert len(shaded) == 1 and shaded[0].get_gid() == "flagged:0:RL201"
    assert not [p for p in axes[1].patches if (p.get_gid() or "").startswith("flagged:")]
    import matplotlib.dates as mdates

    span = shaded[0]  # an axvspan Rectangle: x and width in date numbers
    assert mdates.num2date(span.get_x()) == datetime(2026, 1, 5, 10, 5, tzinfo=timezone.utc)
    assert mdates.num2date(span.get_x() + span.get_width()) == datetime(2026, 1, 5, 10, 10, tzinfo=timezone.utc)


def test_telemetry_shades_windows_from_the_window_table_when_the_finding_names_only_the_gpu():
    import polars as pl

    from ridgeline.rules.base import Finding

    res = make_result()
    t0 = datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc)
    starts = [t0.replace(minute=m) for m in (0, 5, 10)]
    ends = [t0.replace(minute=m) for m in (5, 10, 15)]
    res.windows = pl.DataFrame(
        {
            "host": ["node1"] * 3, "gpu": [1] * 3, "gpu_instance": [None] * 3,
            "window_start": starts, "window_end": ends,
            "busy_tensor_idle_share": [0.0, 1.0, 0.0], "excluded": [None, None, None],
        },
        schema_overrides={"gpu_instance": pl.String, "excluded": pl.String},
    )
    res.findings = [Finding(code="RL201", name="busy-gpu-idle-tensor-cores", severity="warning",
                            subject="host:node1 gpu:1", message="m", remedy="r", subject_kind="gpu")]
    fig = plots.telemetry_figure(res)
    ax = fig.axes[0]
    shaded = [p for p in ax.patches if (p.get_gid() or "").startswith("flagged:")]
    assert len(shaded) == 1  # only the 10:05-10:10 window had the state RL201 counts
    import matplotlib.dates as mdates

    assert mdates.num2date(shaded[0].get_x()) == starts[1]


def test_telemetry_figure_is_none_without_telemetry():
    assert plots.telemetry_figure(make_result(with_telemetry=False)) is None


def test_finding_span_reads_subject_and_evidence():
    from ridgeline.rules.base import Evidence, Finding

    f = Finding(code="RL299", name="x", severity="info", subject="host:a gpu:2", message="m", remedy="r",
                evidence=(Evidence("window_start", "2026-01-05T10:00:00Z", "time", "telemetry"),),
                subject_kind="telemetry")
    span = plots.finding_span(f)
    assert span["host"] == "a" and span["gpu"] == "2"
    assert span["start"] == datetime(2026, 1, 5, 10, 0, tzinfo=timezone.utc) and span["end"] is None
    kernel = Finding(code="RL101", name="x", severity="info", subject="gemv", message="m", remedy="r")
    assert plots.finding_span(kernel) is None


def test_si_formatting():
    assert plots.si(989e12, "FLOP/s") == "989 TFLOP/s"
    assert plots.si(3.35e12, "B/s") == "3.35 TB/s"
    assert plots.si(None, "B/s") == "n/a"
    assert not math.isnan(plots.point_area(0.5))


# ----------------------------------------------------------------------------------------
# end to end: synthetic fixtures -> pipeline -> figure / CLI
# ----------------------------------------------------------------------------------------
SCENARIOS = Path(__file__).resolve().parents[3] / "fixtures" / "scenarios"


def _scenario(name: str) -> Path:
    path = SCENARIOS / name
    if not path.exists():
        pytest.skip(f"fixture scenario {name} not present")
    return path


def _cli(*args: str) -> tuple[int, str]:
    import contextlib
    import io

    from ridgeline.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        with pytest.raises(SystemExit) as exc:
            main(list(args))
    return exc.value.code, err.getvalue()


def test_end_to_end_decode_batch8_profile():
    from ridgeline.pipeline import analyze_paths

    profile = _scenario("decode-b8-h100") / "profile.ncu-raw.csv"
    result = analyze_paths([profile])
    fig = plots.roofline_figure(result)
    # the synthetic H100 export records ncu peaks equal to the datasheet: 989 TFLOP/s bf16, 3.35 TB/s
    xs, ys = _line(fig, "roof:bandwidth:dram").get_data()
    assert ys[0] / xs[0] == pytest.approx(3.35e12, rel=0.01)
    xs, ys = _line(fig, "roof:compute:fp16_tensor").get_data()
    assert ys[0] == pytest.approx(989e12, rel=0.01)
    legend = _roof_legend(fig)
    assert any("measured by ncu" in t.get_text() for t in legend.get_texts())
    colls = _by_gid(fig, "kernels:0")  # kernels:0 and kernels:0:latency (a marker of their own)
    assert {c.get_gid() for c in colls} == {"kernels:0", "kernels:0:latency"}
    (lat,) = [c for c in colls if c.get_gid().endswith(":latency")]
    assert len(lat.get_offsets()) == result.summary.filter(pl_col_pos("intensity_dram")).filter(
        _bound_is("latency")).height
    drawable = result.summary.filter(pl_col_pos("intensity_dram")).height
    assert sum(len(c.get_offsets()) for c in colls) == drawable
    coll = next(c for c in colls if c.get_gid() == "kernels:0")
    # decode at batch 8 with bf16 weights: the GEMMs sit at ~8 FLOP/B (MANIFEST: 7.97-7.98)
    assert sum(1 for x, _y in coll.get_offsets() if 7.5 < x < 8.5) >= 1
    assert "H100 SXM" in fig.axes[0].get_title(loc="left")


def pl_col_pos(name):
    import polars as pl

    return pl.col(name).is_not_null() & (pl.col(name) > 0)


def test_cli_roofline_sweep_writes_png_and_svg(tmp_path):
    b1 = _scenario("decode-b1-h100") / "profile.ncu-raw.csv"
    b8 = _scenario("decode-b8-h100") / "profile.ncu-raw.csv"
    for name in ("sweep.png", "sweep.svg"):
        out = tmp_path / name
        rc, err = _cli("roofline", str(b1), str(b8), "--label", "batch 1", "--label", "batch 8", "-o", str(out))
        assert rc == 0, err
        assert out.stat().st_size > 10_000
    svg = (tmp_path / "sweep.svg").read_text()
    assert "batch 8" in svg  # the legend entry, as an SVG text comment
    assert (tmp_path / "sweep.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_roofline_usage_errors_are_one_line(tmp_path):
    b8 = _scenario("decode-b8-h100") / "profile.ncu-raw.csv"
    rc, err = _cli("roofline", str(b8), "-o", str(tmp_path / "x.jpg"))
    assert rc == 2 and err.count("\n") == 1 and ".png" in err
    rc, err = _cli("roofline", str(b8), "--label", "a", "--label", "b", "-o", str(tmp_path / "x.png"))
    assert rc == 2 and "--label" in err
    rc, err = _cli("roofline", str(b8), "--compare-gpu", "NoSuchGPU9000", "-o", str(tmp_path / "x.png"))
    assert rc == 2 and err.count("\n") == 1


def test_cli_analyze_plot_option(tmp_path):
    b8 = _scenario("decode-b8-h100") / "profile.ncu-raw.csv"
    out = tmp_path / "roof.svg"
    rc, err = _cli("analyze", str(b8), "--plot", str(out), "-o", str(tmp_path / "a.txt"))
    assert rc == 0, err
    assert out.read_text().lstrip().startswith("<?xml")


def test_many_launches_are_rasterized_in_vector_output():
    import polars as pl

    res = make_result(with_telemetry=False)
    res.kernels = pl.concat([res.kernels] * 600)  # 6,600 launches, 6,000 with counters
    fig = plots.roofline_figure(res, per_launch=True, top=3)
    (coll,) = _by_gid(fig, "kernels:0")
    assert len(coll.get_offsets()) == 6000
    assert coll.get_rasterized()
    svg = plots.figure_svg(fig)
    assert "data:image/png;base64," in svg
    assert svg.count("<use") < 1000  # not one element per marker


def test_l2_and_l1_intensities_are_marked_for_labelled_kernels():
    import polars as pl

    res = make_result(with_telemetry=False)
    # four times the DRAM bytes through L2, ten times through L1 -> intensities /4 and /10
    res.kernels = res.kernels.with_columns(
        (pl.col("dram_bytes") * 4).alias("l2_bytes"), (pl.col("dram_bytes") * 10).alias("l1_bytes")
    )
    fig = plots.roofline_figure(res)
    (l2,) = _by_gid(fig, "level:l2")
    (l1,) = _by_gid(fig, "level:l1")
    labelled = len(_by_gid(fig, "label:"))
    assert len(l2.get_offsets()) == len(l1.get_offsets()) == 5  # top 8 asked, 5 names drawable
    assert labelled >= 4
    xs_l2 = sorted(float(x) for x, _ in l2.get_offsets())
    assert xs_l2 == pytest.approx([0.9 / 4, 1.0 / 4, 2.0 / 4, 5.0 / 4, 600.0 / 4])
    xs_l1 = sorted(float(x) for x, _ in l1.get_offsets())
    assert xs_l1 == pytest.approx([0.09, 0.1, 0.2, 0.5, 60.0])
    assert "L2" in fig.axes[0].get_xlabel()
    # no level markers without the byte counters, nor on multi-input plots
    assert not _by_gid(plots.roofline_figure(make_result(with_telemetry=False)), "level:")
    assert not _by_gid(plots.roofline_figure([("a", res), ("b", res)]), "level:")


def test_roofs_measured_on_several_devices_are_drawn_once():
    from ridgeline.result import Roof

    res = make_result(with_telemetry=False)
    res.roofs = res.roofs + [Roof("compute", 950e12, "ncu", precision="fp16_tensor"),
                             Roof("bandwidth", 3.2e12, "ncu", level="dram")]
    fig = plots.roofline_figure(res)
    xs, ys = _line(fig, "roof:compute:fp16_tensor").get_data()  # exactly one line
    assert ys[0] == pytest.approx(PEAK_BF16)  # the higher of 989 and 950 TFLOP/s
    xs, ys = _line(fig, "roof:bandwidth:dram").get_data()
    assert ys[0] / xs[0] == pytest.approx(DRAM_BW)
    legend = _roof_legend(fig)
    assert any("highest of 2" in t.get_text() and "BF16 TC" in t.get_text() for t in legend.get_texts())


def test_summary_only_result_places_names_at_their_fraction_of_the_roof():
    res = make_result(with_telemetry=False)
    res.kernels = None  # e.g. a result rebuilt from a summary table
    fig = plots.roofline_figure(res)
    (coll,) = _by_gid(fig, "kernels:0")
    pts = {round(float(x), 6): float(y) for x, y in coll.get_offsets()}
    assert len(pts) == 5
    assert pts[1.0] == pytest.approx(0.8 * 1.0 * DRAM_BW)  # gemv: 80% of min(989e12, 1 x 3.35e12)
    assert pts[600.0] == pytest.approx(0.7 * PEAK_BF16)  # GEMM past the ridge: 70% of the bf16 peak


def test_roofs_of_all_inputs_on_one_gpu_are_drawn_and_a_second_gpu_is_dashed():
    from ridgeline.result import Roof

    bf16_run = make_result(with_telemetry=False)
    bf16_run.roofs = [r for r in bf16_run.roofs if r.precision != "fp8_tensor"]
    fp8_run = make_result(with_telemetry=False)  # same GPU, its export also measured the fp8 roof
    other = make_result(with_telemetry=False)
    other.gpu_name = "H200"
    other.roofs = [Roof("bandwidth", 4.8e12, "ncu", level="dram"), Roof("compute", PEAK_BF16, "ncu", precision="fp16_tensor")]
    fig = plots.roofline_figure([("bf16", bf16_run), ("fp8", fp8_run), ("h200", other)])
    assert _line(fig, "roof:compute:fp8_tensor").get_ydata()[0] == pytest.approx(PEAK_FP8)
    h200 = _line(fig, "roof:bandwidth:dram:1")
    xs, ys = h200.get_data()
    assert ys[0] / xs[0] == pytest.approx(4.8e12)
    assert h200.get_linestyle() != "-"
    assert _line(fig, "roof:bandwidth:dram").get_linestyle() == "-"
    labels = [t.get_text() for t in _roof_legend(fig).get_texts()]
    assert any(t.startswith("H200: DRAM 4.8 TB/s") for t in labels)


def test_cli_roofline_of_telemetry_only_is_an_input_error(tmp_path):
    prom = _scenario("telemetry-exporter-mig") / "dcgm-exporter.prom"
    b8 = _scenario("decode-b8-h100") / "profile.ncu-raw.csv"
    rc, err = _cli("roofline", str(prom), "-o", str(tmp_path / "x.png"))
    assert rc == 2 and err.count("\n") == 1
    assert "found none" in err
    # mixed: the telemetry input is left out (and said so), the profile is drawn
    rc, err = _cli("roofline", str(b8), str(prom), "-o", str(tmp_path / "y.png"))
    assert rc == 0, err
    assert "left out" in err and (tmp_path / "y.png").exists()


def test_latency_points_are_coloured_and_named_by_their_kind():
    """The decode fixture's ~2.6 us launches are launch-bound: the legend says so, in the launch
    colour; a stall-bound kernel (a copy of the result with its kind changed) gets the stall colour."""
    import polars as pl
    from matplotlib.colors import to_rgba

    from ridgeline.pipeline import analyze_paths

    result = analyze_paths([_scenario("decode-b8-h100") / "profile.ncu-raw.csv"])
    fig = plots.roofline_figure(result)
    legends = [a for a in fig.axes[0].get_children() if hasattr(a, "get_texts")] + list(fig.legends)
    texts = [t.get_text() for lg in legends for t in lg.get_texts()]
    assert "launch-bound" in texts and "stall-bound" not in texts and "latency-bound" not in texts
    (lat,) = _by_gid(fig, "kernels:0:latency")
    assert {tuple(c) for c in lat.get_facecolors()} == {to_rgba(plots.BOUND_COLORS["launch"], 0.75)}
    stalled = copy.copy(result)
    stalled.kernels = result.kernels.with_columns(
        pl.when(pl.col("bound") == "latency").then(pl.lit("stall")).otherwise(pl.col("latency_kind")).alias("latency_kind"))
    stalled.summary = result.summary.with_columns(
        pl.when(pl.col("bound") == "latency").then(pl.lit("stall")).otherwise(pl.col("latency_kind")).alias("latency_kind"))
    fig = plots.roofline_figure(stalled)
    (lat,) = _by_gid(fig, "kernels:0:latency")
    assert {tuple(c) for c in lat.get_facecolors()} == {to_rgba(plots.BOUND_COLORS["stall"], 0.75)}


# ---- the march (issue 24 item 1): the same kernel across inputs is one connected series
def _texts(fig, prefix):
    return [t for t in fig.axes[0].texts if (t.get_gid() or "").startswith(prefix)]


def test_march_joins_one_kernel_across_three_inputs_with_arrows_in_input_order():
    runs = [(f"decode-b{b}-h100", make_result(b, with_telemetry=False)) for b in (1, 8, 64)]
    fig = plots.roofline_figure(runs)
    march = _line(fig, "march:0")
    xs = list(march.get_xdata())
    assert len(xs) == 3 and xs == sorted(xs)  # one point per input, left to right as the batch grows
    steps = [a for a in fig.axes[0].texts if (a.get_gid() or "").startswith("march-step:0:")]
    assert len(steps) == 2  # an arrowhead per step between consecutive inputs
    for a in steps:  # each arrow points the way the inputs were given (toward higher intensity here)
        (x0, _), (x1, _) = a.xyann, a.xy
        assert x1 > x0
    tags = " ".join(t.get_text() for t in _texts(fig, "march-tag:"))
    for tag in ("b1", "b8", "b64"):  # points labelled by what differs between the inputs
        assert tag in tags.replace(",", " ").split()


def test_a_marching_kernel_is_labelled_once_without_an_input_tag():
    runs = [(f"batch {b}", make_result(b, with_telemetry=False)) for b in (1, 8, 32)]
    series = plots.march_series([plots.kernel_points(r) for _l, r in runs], limit=plots.MARCH_MAX)
    assert series, "the synthetic sweep has kernels common to every input"
    fig = plots.roofline_figure(runs)
    labels = [t.get_text() for t in _texts(fig, "label:")]
    for chain in series:
        short = str(chain[-1][1]["short"])
        hits = [t for t in labels if t.startswith(plots.shorten(short, 30)[:12])]
        assert len(hits) <= 1, (short, hits)
        assert all("[" not in t for t in hits)


def test_march_series_joins_differently_spelled_arguments_but_not_lookalikes():
    def pt(name, x, share=0.3):
        return {"name": name, "short": name.split("<")[0], "x": x, "y": x * 1e12, "share": share, "bound": "memory"}

    a = [pt("ns::gemv<(int)128, float>(float*)", 1.0), pt("other<1>(int)", 0.5, 0.1), pt("other<2>(int)", 0.6, 0.1)]
    b = [pt("ns::gemv<128, float>(float*, int)", 8.0), pt("other<1>(long)", 0.7, 0.1), pt("other<2>(long)", 0.8, 0.1)]
    series = plots.march_series([a, b], limit=10)
    by_first = {chain[0][1]["name"]: [p["name"] for _i, p in chain] for chain in series}
    # the same function and template arguments in another spelling: one kernel
    assert by_first["ns::gemv<(int)128, float>(float*)"] == ["ns::gemv<(int)128, float>(float*)",
                                                             "ns::gemv<128, float>(float*, int)"]
    # instantiations keep their own identity: other<1> never joins other<2>
    for names in by_first.values():
        assert not ({"other<1>(int)", "other<1>(long)"} & set(names) and {"other<2>(int)", "other<2>(long)"} & set(names))
    assert by_first["other<1>(int)"] == ["other<1>(int)", "other<1>(long)"]
    # order: heaviest first
    assert series[0][0][1]["name"].startswith("ns::gemv")


def test_each_tensor_path_has_its_roof_and_no_roof_wears_a_bound_colour():
    """Issue 37 item 9: the mma.sync roof RL101 measures against is drawn beside the wgmma one (it
    was folded into it), and launch-bound points never share a roof's colour."""
    from ridgeline.result import Roof

    res = make_result(with_telemetry=False)
    res.roofs = [r for r in res.roofs if not (r.kind == "compute" and r.precision == "fp16_tensor")] + [
        Roof("compute", PEAK_BF16, "ncu", precision="fp16_tensor", path="hgmma"),
        Roof("compute", PEAK_BF16 * 2 / 3, "ncu", precision="fp16_tensor", path="hmma")]
    fig = plots.roofline_figure(res)
    assert _line(fig, "roof:compute:fp16_tensor").get_ydata()[0] == pytest.approx(PEAK_BF16)
    assert _line(fig, "roof:compute:fp16_tensor@hmma").get_ydata()[0] == pytest.approx(PEAK_BF16 * 2 / 3)
    texts = [t.get_text() for t in _roof_legend(fig).get_texts()]
    assert any("(mma.sync)" in t for t in texts) and any("(wgmma)" in t for t in texts)
    bound = {c.lower() for c in plots.BOUND_COLORS.values()}
    assert not bound & {c.lower() for c in plots.PRECISION_COLORS.values()}


def test_no_roofs_no_empty_legend_box():
    res = make_result(with_telemetry=False)
    res.roofs = []
    fig = plots.roofline_figure(res)
    assert not _by_gid(fig, "legend:roofs")
    assert any(t.get_gid() == "note:no-roofs" for t in fig.axes[0].texts)
