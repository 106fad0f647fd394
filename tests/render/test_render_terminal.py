"""Terminal report: 80 columns, sections, roofs with sources, findings order, windows hook."""

import sys
import types

import pytest

from ridgeline.pipeline import analyze_paths
from ridgeline.render.terminal import fmt_seconds, format_result, shorten, time_by_bound
from ridgeline.result import Skipped
from ridgeline.rules.base import Finding
from ridge_inputs import write_mini_ncu


@pytest.fixture
def result(tmp_path):
    return analyze_paths([write_mini_ncu(tmp_path / "p.csv")], run_rules=False)


def test_sections_and_width(result):
    long = "x" * 200
    result.findings = [
        Finding(code="RL999", name="made-up", severity="warning", subject="small", message="m " * 60,
                remedy="r", impact_s=1e-5, impact_share=0.01),
        Finding(code="RL998", name="made-up", severity="critical", subject=long, message="big", remedy="fix it",
                impact_s=5e-4, impact_share=0.48),
    ]
    result.skipped = [Skipped("p.csv", "launch 9", "duration does not parse"),
                      Skipped("p.csv", "launch 10", "duration does not parse")]
    text = format_result(result, top=5)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "GPU: H100 SXM" in text
    assert "datasheet" in text and "measured by ncu" not in text  # roofs from the catalogue
    assert "(ridge = compute roof / DRAM roof, FLOP/B)" in text
    assert any("BF16 TC" in ln and ln.split()[-2:] == ["295", "datasheet"] for ln in lines)
    assert "Skipped: 2 items" in text and "duration does not parse" in text
    # findings printed in the order given (the engine sorts by impact)
    assert text.index("RL999") < text.index("RL998")
    assert "-> fix it" in text


def test_where_the_time_goes_shares(result):
    shares = time_by_bound(result)
    assert shares["compute"] == pytest.approx(1e-3 / 1.04e-3)
    assert shares["memory"] == pytest.approx(40e-6 / 1.04e-3)
    text = format_result(result)
    assert "4% memory-bound, 96% compute-bound, 0% unknown" in text


def test_top_limits_the_table(result):
    text = format_result(result, top=1)
    assert "Top kernels by GPU time (1 of 2)" in text
    table = text.split("Top kernels", 1)[1].split("\n\n", 1)[0]
    assert "gemm" in table and "gemv" not in table


def test_windows_are_rendered_by_the_telemetry_renderer(result, monkeypatch):
    fake = types.ModuleType("ridgeline.render.fleet.telemetry")
    fake.format_windows = lambda r: "WINDOWS GO HERE\n"
    monkeypatch.setitem(sys.modules, "ridgeline.render.fleet.telemetry", fake)
    result.windows = object()
    assert "WINDOWS GO HERE" in format_result(result)


def test_formatting_helpers():
    assert fmt_seconds(1.5e-3) == "1.5 ms"
    assert fmt_seconds(2e-6) == "2 us"
    assert fmt_seconds(None) == "-"
    assert shorten("abcdefghij", 5) == "abcd~"
    assert shorten("abc", 5) == "abc"


def test_truncated_names_stay_distinct():
    from ridgeline.render.terminal import distinct_labels

    a = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x64x64_warpgroupsize1x1x1_kernel"
    b = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x128x64_warpgroupsize1x1x1_kernel"
    labels = distinct_labels([a, b, "short", a], 25)
    assert all(len(x) <= 25 for x in labels)
    assert labels[0] != labels[1] and labels[0] == labels[3]
    assert "128x64" in labels[0] and "64x128" in labels[1]
    assert labels[2] == "short"


def test_kernel_table_columns_stay_apart_at_a_full_share(tmp_path):
    """A kernel holding all the GPU time prints '100.0%': the share column must not run into the
    time column (it did at 6 characters wide)."""
    from ridge_inputs import HEADER, UNITS

    path = tmp_path / "one.csv"
    row = [0, 1, "app", "host", "void gemv<bf16>(float*)", 1, 7, "(128, 1, 1)", "(1024, 1, 1)", 0, "9.0",
           "NVIDIA H100 80GB HBM3", 33554432, 999000000, 33554432, 0, 0, 0]  # 999 ms: the widest time
    path.write_text("\n".join(",".join(f'"{c}"' for c in line) for line in (HEADER, UNITS, row)) + "\n")
    text = format_result(analyze_paths([path], run_rules=False))
    table = text.split("Top kernels", 1)[1].splitlines()
    head, line = table[1], table[2]
    cells = line.split()
    assert "999 ms" in line and cells[cells.index("ms") + 1] == "100.0%"
    assert head.index("share") + len("share") == line.index("100.0%") + len("100.0%")  # right-aligned under its head
