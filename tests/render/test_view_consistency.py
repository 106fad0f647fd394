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
    # the labels and counts too (tests/view_labels.py): a finding message, a count, a bound label
    import html as _html

    msg = doc["findings"][0]["message"]
    assert _html.escape(msg) in texts["html"]
    page = texts["html"].replace(_html.escape(msg), _html.escape(msg.replace("FLOP/B", "FLOP/b", 1)))
    assert any("finding #1 message" in m for m in view_mismatches(doc, {"html": page}))
    n = len(doc["findings"])
    md_text = texts["markdown"].replace(f"### Findings ({n})", f"### Findings ({n + 1})")
    assert any("findings count" in m for m in view_mismatches(doc, {"markdown": md_text}))
    assert "| memory |" in texts["markdown"]
    md_text = texts["markdown"].replace("| memory |", "| compute |", 1)
    assert any("kernel bound" in m for m in view_mismatches(doc, {"markdown": md_text}))


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
    # issue 37 item 1: a trace no catalogue GPU matched is titled by the devices it recorded
    devices = {d["device_name"] for d in (doc.get("timeline") or {}).get("devices") or [] if d.get("device_name")}
    if devices and doc["gpu"]["name"] is None:
        assert doc["gpu"]["label"] == ", ".join(sorted(devices))
        assert f"\u2014 {doc['gpu']['label']} \u2014" in texts["html"] and "unknown GPU" not in texts["markdown"]
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


def _telemetry_csv(path: Path, fields: dict[str, float], *, model: str = "", seconds: int = 30) -> Path:
    """A long telemetry CSV (generated here): GPU 0 of node-a, one sample a second, each field constant."""
    from datetime import datetime, timedelta, timezone

    t0 = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    lines = ["timestamp,host,gpu,model,field,value"]
    for k in range(seconds):
        t = (t0 + timedelta(seconds=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
        lines += [f"{t},node-a,0,{model},{f},{v}" for f, v in fields.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_telemetry_columns_print_their_own_field(tmp_path):
    """Issue 37 item 4: without GPU-Util the util column prints "-" (the JSON's null), never
    GR_ENGINE's busy share under the GPU-Util label; a temperature and NVLink / PCIe rates the
    windows hold are printed, each held to the JSON; a util copied from gract is caught."""
    from ridgeline.pipeline import analyze_paths

    path = _telemetry_csv(tmp_path / "t.csv", {"gr_engine_active_ratio": 0.9, "tensor_active_ratio": 0.3,
                                               "gpu_temp_c": 32.0, "nvlink_rx_bytes_per_s": 2.5e9,
                                               "pcie_tx_bytes_per_s": 4e8})
    doc, texts = render_views(analyze_paths([path]))
    (w,) = doc["telemetry"]["windows"]
    assert w["gpu_util_mean_ratio"] is None and w["gpu_temp_mean_c"] == pytest.approx(32.0)
    assert_views_match_json(doc, texts)
    checked: dict = {}
    view_mismatches(doc, texts, checked=checked)
    assert checked.get("terminal:column") and checked.get("html:gpu table"), checked
    term = texts["terminal"]
    assert "Other measures per GPU" in term and "2.5 GB/s" in term and "400 MB/s" in term
    row = next(ln for ln in term.splitlines() if ln.startswith("node-a"))
    toks = row.split()
    assert toks[toks.index("100%") + 1] == "-", row  # util (after cov): no GPU-Util in the file
    wrong = term.replace(row, row.replace("100%    -", "100%  90%", 1))
    assert wrong != term
    assert any("util column" in m for m in view_mismatches(doc, {"terminal": wrong}))
    assert not any("no numeric field" in n for n in doc["notes"])
    page = texts["html"]
    assert 'id="measures-table"' in page and ">2.5 GB/s<" in page  # the report page shows them too
    wrong = page.replace('data-v="2500000000.0"', 'data-v="2400000000.0"', 1)
    assert wrong != page and any("measure" in m for m in view_mismatches(doc, {"html": wrong}))


def test_every_view_names_the_gpu_the_json_labels(tmp_path):
    """Issue 37 item 1: a run no catalogue GPU matched (telemetry here, a Kineto trace in the
    sweep) is titled by the devices its input recorded, in every view, as gpu.label says; a view
    naming another GPU is caught."""
    from ridgeline.pipeline import analyze_paths

    path = _telemetry_csv(tmp_path / "t.csv", {"gpu_util_ratio": 0.5}, model="NVIDIA L40S")
    doc, texts = render_views(analyze_paths([path]))
    assert doc["gpu"]["name"] is None and doc["gpu"]["label"] == "NVIDIA L40S"
    assert_views_match_json(doc, texts)
    for view in ("markdown", "html"):
        wrong = texts[view].replace("NVIDIA L40S", "unknown GPU", 1)
        assert any("GPU" in m for m in view_mismatches(doc, {view: wrong})), view
