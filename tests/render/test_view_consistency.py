"""Every view prints the JSON document's numbers (issue 20, item 10), on the bundled scenarios and
timeline fixtures. Every real file under ../shared/samples gets the same check, once, in the
real-data sweep (tests/test_real_samples.py::test_every_view_prints_the_json_numbers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from view_consistency import Printed, assert_views_match_json, render_views, view_mismatches

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p for p in (ROOT / "fixtures" / "scenarios").glob("*/profile*") if p.is_file())


def _views(path: Path, tmp_path: Path, **kw):
    from ridgeline.errors import InputError
    from ridgeline.testing.expectations import write

    try:
        text, result = write(tmp_path / "x.ridgeline.toml", [path], **kw)
    except InputError as err:  # a file the reader refuses (exit 2) has no views to compare
        pytest.skip(f"refused: {err}")
    return render_views(result, expect_text=text)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.parent.name)
def test_views_match_json_on_scenarios(path, tmp_path):
    doc, texts = _views(path, tmp_path)
    assert doc["summary"] and doc["roofs"]
    assert_views_match_json(doc, texts)
    checked: dict = {}
    view_mismatches(doc, texts, checked=checked)
    # the parsers found the numbers they compare (a view whose layout changed fails here, not silently)
    for key in ("terminal:time", "terminal:share", "terminal:roof", "terminal:ridge", "markdown:ridge",
                "markdown:time", "markdown:roof", "html:ridge", "html:total_duration_s", "html:roof_fraction",
                "html:saving_upper_bound_s", "expect:time_share"):
        assert checked.get(key), (key, checked)
    if any(f.get("impact_s") is not None for f in doc["findings"]):
        assert checked.get("markdown:impact") and checked.get("html:impact"), checked


def test_printed_tolerance_is_the_rounding():
    assert Printed("216").matches(216.4) and not Printed("216").matches(216.6)
    assert Printed("1.2", 1e-3).matches(1.24e-3) and not Printed("1.2", 1e-3).matches(1.26e-3)
    assert Printed("20.9", 0.01).matches(0.2094) and not Printed("20.9", 0.01).matches(0.2096)
    assert Printed("1,234").matches(1234.4)


def test_a_wrong_ridge_is_caught(tmp_path):
    """The check fails on the mismatch issue 20 reported: the mma.sync roof printed with the
    wgmma roof's ridge (the first BF16 roof's, as the Markdown and HTML tables did)."""
    doc, texts = _views(ROOT / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv", tmp_path)
    roofs = [r for r in doc["roofs"] if r["kind"] == "compute" and r.get("path")]
    assert {r["path"] for r in roofs} >= {"hgmma", "hmma"}
    wgmma = next(r for r in roofs if r["path"] == "hgmma")
    mma = next(r for r in roofs if r["path"] == "hmma")
    assert mma["ridge_flop_per_byte"] == pytest.approx(mma["value"] / next(
        r["value"] for r in doc["roofs"] if r["kind"] == "bandwidth" and r["level"] == "dram"))
    good, bad = f"{mma['ridge_flop_per_byte']:.3g} FLOP/B", f"{wgmma['ridge_flop_per_byte']:.3g} FLOP/B"
    assert good in texts["markdown"]
    wrong = dict(texts, markdown=texts["markdown"].replace(good, bad))
    assert any("ridge printed" in m for m in view_mismatches(doc, {"markdown": wrong["markdown"]}))


def test_a_wrong_roof_fraction_in_check_write_is_caught(tmp_path):
    """check --write used to record time-to-roof / duration (0.66 on 2.6 us launches at <1% of the
    roof): such a file no longer matches the JSON."""
    doc, texts = _views(ROOT / "fixtures" / "scenarios" / "launch-bound-h100" / "profile.ncu-raw.csv", tmp_path)
    import re

    wrong = re.sub(r"(?m)^roof_fraction = .*$", "roof_fraction = 0.6648", texts["expect"])
    assert wrong != texts["expect"]
    assert any("roof_fraction" in m for m in view_mismatches(doc, {"expect": wrong}))


TIMELINES = sorted(p for p in (ROOT / "fixtures" / "timeline").iterdir() if p.is_file() and p.suffix != ".md"
                   and not p.name.endswith(".py"))


def _timeline_views(path: Path):
    from ridgeline.errors import InputError
    from ridgeline.pipeline import analyze_paths

    try:
        result = analyze_paths([path])
    except InputError as err:
        pytest.skip(f"refused: {err}")
    return render_views(result)


@pytest.mark.parametrize("path", TIMELINES, ids=lambda p: p.name)
def test_views_match_json_on_timelines(path):
    doc, texts = _timeline_views(path)
    assert_views_match_json(doc, texts)
    if (doc.get("timeline") or {}).get("devices"):
        checked: dict = {}
        view_mismatches(doc, texts, checked=checked)
        for key in ("terminal:capture", "markdown:capture", "html:capture", "html:share"):
            assert checked.get(key), (key, checked)


def test_render_views_for_files(tmp_path):
    """The sweep's entry point: every view of a file, check --write included, with --gpu."""
    from view_consistency import render_views_for

    doc, texts = render_views_for(ROOT / "fixtures" / "scenarios" / "decode-b8-h200" / "profile.ncu-raw.csv", tmp_path,
                                  gpu="H200")
    assert set(texts) == {"terminal", "markdown", "html", "sarif", "github", "expect"}
    assert_views_match_json(doc, texts)
