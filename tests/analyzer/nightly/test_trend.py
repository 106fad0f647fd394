"""ridgeline diff over several nights: the band (median +/- max(k x 1.4826 x MAD, floor)), which
subject regressed, missing hosts, GPU model changes, ordering, the CLI's exit codes.

Nights come from the synth API (tests/nights.py: SYNTHETIC dcgm-exporter scrapes read by
``ridgeline telemetry``) where the fleet behaves in a known way; the band arithmetic is checked
on small hand-made documents whose numbers are chosen so the expected band follows from the
definition."""

from __future__ import annotations

import copy
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ridgeline.analyzer.nightly.diff import DIFF_THRESHOLDS, compare
from ridgeline.analyzer.nightly.trend import MAD_TO_SIGMA, Night, band, trend
from ridgeline.cli import cli

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import nights as N  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def run(*args):
    return CliRunner().invoke(cli, ["diff", *map(str, args)])


@pytest.fixture(scope="module")
def fleet_nights(tmp_path_factory) -> Path:
    """Five calm nights (2026-01-01..05) and four tonights: node03 regressing (one GPU idle while
    allocated), node04 missing, calm, node02 on other GPUs."""
    root = tmp_path_factory.mktemp("nights")
    N.write_nights(root, [dict(N.CALM) for _ in range(5)])
    regress = dict(N.CALM, node03=["idle_allocated", "training"])
    missing = {h: b for h, b in N.CALM.items() if h != "node04"}
    for name, plan, gpu in (("regress", regress, None), ("missing", missing, None), ("calm", dict(N.CALM), None),
                            ("model", dict(N.CALM), {"node02": "A100"})):
        doc = N.night(root / "scrapes" / name, 5, plan, gpu=gpu)
        (root / f"{name}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def _doc(hosts: dict[str, tuple[float, float]], *, start: str | None = None, groups=None) -> dict:
    """A minimal telemetry document: host -> (wasted GPU-h, observed GPU-h)."""
    by_host = [{"host": h, "gpus": 1, "span_h": s, "wasted_gpu_h": w, "wasted_share": w / s} for h, (w, s) in hosts.items()]
    tel = {"fleet": {"by_host": by_host, "by_gpu": []},
           "windows": [{"host": h, "gpu": 0, "window_start": start, "window_end": start} for h in hosts] if start else []}
    if groups is not None:
        tel["groups"] = groups
    return {"schema_version": "1.5", "kernels": [], "findings": [], "telemetry": tel}


def _nights(shares: list[float], host: str = "h1") -> list[Night]:
    return [Night(f"n{i}", _doc({host: (s * 10.0, 10.0)})) for i, s in enumerate(shares)]


# ------------------------------------------------------------------------------------------
# the band
# ------------------------------------------------------------------------------------------
def test_band_is_median_plus_k_scaled_mad():
    values = [0.10, 0.12, 0.08, 0.11, 0.09]  # median 0.10; deviations 0, .02, .02, .01, .01 -> MAD 0.01
    b = band(values, 3.0, 0.0)
    assert b["median"] == pytest.approx(0.10) and b["mad"] == pytest.approx(0.01)
    assert b["sigma"] == pytest.approx(MAD_TO_SIGMA * 0.01)
    assert (b["low"], b["high"]) == (pytest.approx(0.10 - 3 * 0.014826), pytest.approx(0.10 + 3 * 0.014826))
    assert band(values, 3.0, 0.2)["high"] == pytest.approx(0.30)  # the floor wins over a quiet spread
    assert band([0.4] * 5, 3.0, 0.0)["high"] == pytest.approx(0.4)  # MAD 0: the band is the floor alone


def test_noisy_baselines_widen_the_band_and_k_narrows_it():
    shares = [0.20, 0.30, 0.25, 0.35, 0.15]  # median 0.25, MAD 0.05 -> sigma 0.0741, 3 sigma 0.222 > floor 0.10
    high = 0.25 + 3 * MAD_TO_SIGMA * 0.05
    for tonight, expected in ((high - 0.01, "within"), (high + 0.01, "regression"), (0.05, "within"), (0.02, "better")):
        tr = trend(_nights(shares), Night("tonight", _doc({"h1": (tonight * 10.0, 10.0)})))
        row = next(r for r in tr.rows if r["scope"] == "host")
        assert row["status"] == expected and row["high"] == pytest.approx(high)
        assert tr.regressed == (expected == "regression")  # low = 0.25 - 0.222 = 0.028
    tight = trend(_nights(shares), Night("tonight", _doc({"h1": (4.0, 10.0)})), overrides={"trend_k": 1})
    assert [r["status"] for r in tight.rows if r["scope"] == "host"] == ["regression"]  # 0.40 > 0.25 + 0.074 (floor 0.10)
    assert any("host h1: wasted share 40% tonight" in r for r in tight.regressions)
    better = trend(_nights([0.6, 0.7, 0.65]), Night("tonight", _doc({"h1": (1.0, 10.0)})))
    assert [r["status"] for r in better.rows if r["scope"] == "host"] == ["better"] and not better.regressed


def test_too_few_nights_and_window():
    shares = [0.1, 0.1, 0.1, 0.1]
    nights = _nights(shares) + [Night("n9", _doc({"h1": (1.0, 10.0), "fresh": (0.0, 10.0)}))]
    tr = trend(nights, Night("tonight", _doc({"h1": (1.0, 10.0), "fresh": (9.0, 10.0)})))
    fresh = next(r for r in tr.rows if r["subject"] == "fresh")
    assert fresh["status"] == "too few nights" and fresh["nights"] == 1 and not fresh["regression"]
    brand_new = trend(nights, Night("tonight", _doc({"h1": (1.0, 10.0), "other": (9.0, 10.0)})))
    assert next(r for r in brand_new.rows if r["subject"] == "other")["status"] == "new"
    # only the latest trend_window baselines count: the three old high nights fall out
    old_high = _nights([0.9, 0.9, 0.9]) + _nights([0.1, 0.1, 0.1])
    tr = trend(old_high, Night("tonight", _doc({"h1": (5.0, 10.0)})), overrides={"trend_window": 3}, order="as given")
    row = next(r for r in tr.rows if r["scope"] == "host")
    assert row["nights"] == 3 and row["median"] == pytest.approx(0.1) and row["status"] == "regression"
    assert any("3 older baseline(s)" in n for n in tr.notices)


def test_findings_new_tonight_are_those_no_night_had():
    def doc(*findings):
        d = _doc({"h1": (1.0, 10.0)})
        d["findings"] = [{"code": c, "subject": subj, "severity": sev, "message": "m"} for c, subj, sev in findings]
        return d

    old = ("RL201", "host:h1 gpu:0", "warning")
    nights = [Night("n0", doc(old)), Night("n1", doc()), Night("n2", doc())]
    tonight = Night("tonight", doc(old, ("RL201", "host:h1 gpu:1", "warning"), ("RL207", "host:h1 gpu:1", "info")))
    tr = trend(nights, tonight)
    assert [(f["code"], f["regression"]) for f in tr.findings] == [("RL201", True), ("RL207", False)]
    assert tr.regressions == ["new warning finding RL201 on host:h1 gpu:1 (in none of the 3 nights)"]
    assert not trend(nights, tonight, overrides={"new_finding_severity": "critical"}).regressed


def test_groups_list_gets_a_band():
    def doc(w):
        return _doc({"h1": (1.0, 10.0)}, groups=[{"key": {"pod": "train-0"}, "gpus": 4, "gpu_hours": 8.0,
                                                  "wasted_gpu_hours": w}])
    tr = trend([Night(f"n{i}", doc(0.4)) for i in range(4)], Night("tonight", doc(4.0)))
    row = next(r for r in tr.rows if r["scope"] == "group")
    assert row["subject"] == "pod=train-0" and row["status"] == "regression" and row["tonight"] == pytest.approx(0.5)
    assert any(r.startswith("group pod=train-0: wasted share 50%") for r in tr.regressions)


# ------------------------------------------------------------------------------------------
# generated fleets
# ------------------------------------------------------------------------------------------
def test_one_host_regressing_is_named(fleet_nights):
    res = run(fleet_nights / "nights", fleet_nights / "regress.json")
    assert res.exit_code == 1, res.output
    assert "host node03: wasted share 50% tonight" in res.stdout.replace("\n    ", " ")
    assert max(len(line) for line in res.stdout.splitlines()) <= 80
    doc = json.loads(run(fleet_nights / "nights", fleet_nights / "regress.json", "--format", "json").stdout)
    assert doc["mode"] == "trend" and doc["regressed"] and doc["order"] == "document time"
    assert [b["label"][-15:] for b in doc["baselines"]] == [f"2026-01-0{d}.json" for d in range(1, 6)]
    flagged = {(r["scope"], r["subject"]) for r in doc["rows"] if r["regression"]}
    # one GPU of 8 idle: the fleet's share rises 12.5 points (> 5), node03's 50 (> 10)
    assert flagged == {("fleet", "fleet"), ("host", "node03"), ("gpu", "node03 gpu 0")}
    assert all(r["status"] == "within" for r in doc["rows"] if r["subject"] in ("node01", "node02", "node04"))
    # findings new tonight (in none of the five nights) are all about the GPU that changed
    assert all(f["subject"].startswith("host:node03 gpu:0") for f in doc["findings"])
    calm = run(fleet_nights / "nights", fleet_nights / "calm.json")
    assert calm.exit_code == 0 and "No regression" in calm.stdout
    assert json.loads(run(fleet_nights / "nights", fleet_nights / "calm.json", "--format", "json").stdout)["findings"] == []


def test_missing_host_is_named_never_judged(fleet_nights):
    res = run(fleet_nights / "nights", fleet_nights / "missing.json", "--format", "json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and not doc["regressed"]
    rows = {(r["scope"], r["subject"]): r for r in doc["rows"]}
    assert rows[("host", "node04")]["status"] == "missing" and not rows[("host", "node04")]["regression"]
    assert any("node04" in n and "missing" in n for n in doc["notices"])
    assert rows[("fleet", "fleet")]["status"] == "within"


def test_gpu_model_change_is_named(fleet_nights):
    res = run(fleet_nights / "nights", fleet_nights / "model.json", "--format", "json")
    doc = json.loads(res.stdout)
    changed = [n for n in doc["notices"] if "GPU model changed" in n]
    assert len(changed) == 1 and "on 2 GPU(s) (node02 gpu 0, node02 gpu 1)" in changed[0] and "A100" in changed[0]
    rows = {r["subject"]: r for r in doc["rows"] if r["scope"] == "gpu"}
    assert rows["node02 gpu 0"]["status"] == "too few nights" and rows["node02 gpu 0"]["nights"] == 0
    assert rows["node01 gpu 0"]["status"] == "within"
    # pairwise: the same change named
    base = json.loads((fleet_nights / "nights" / "2026-01-05.json").read_text())
    cmp = compare(base, json.loads((fleet_nights / "model.json").read_text()))
    assert [n for n in cmp.notices if "GPU model changed" in n] == [
        f"GPU model changed on 2 GPU(s) (node02 gpu 0, node02 gpu 1): {row_model(base)} -> {row_model(json.loads((fleet_nights / 'model.json').read_text()))}"]
    row = next(r for r in cmp.gpus if r["host"] == "node02" and r["gpu"] == 0)
    assert "H100" in row["model_base"] and "A100" in row["model_new"]


def row_model(doc: dict) -> str:
    return next(w["model"] for w in doc["telemetry"]["windows"] if w["host"] == "node02")


def test_folder_only_order_and_fallbacks(fleet_nights, tmp_path):
    folder = tmp_path / "nights"
    shutil.copytree(fleet_nights / "nights", folder)
    # names out of time order: the document's time decides, and the latest is tonight
    (folder / "2026-01-03.json").rename(folder / "zz-first.json")
    shutil.copy(fleet_nights / "regress.json", folder / "aa-tonight.json")
    (folder / "README.txt").write_text("not a night")
    doc = json.loads(run(folder, "--format", "json").stdout)
    assert doc["tonight"].endswith("aa-tonight.json") and doc["regressed"]
    assert [Path(b["label"]).name for b in doc["baselines"]][2] == "zz-first.json"
    assert any("not named *.json" in n for n in doc["notices"])
    # tonight inside the folder it is compared with is not its own baseline
    res = run(folder, folder / "aa-tonight.json", "--format", "json")
    assert len(json.loads(res.stdout)["baselines"]) == 5
    # two baselines (< trend_min_baselines = 3): pairwise with the latest, said so
    res = run(fleet_nights / "nights" / "2026-01-01.json", fleet_nights / "nights" / "2026-01-02.json",
              fleet_nights / "missing.json", "--format", "json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["base"].endswith("2026-01-02.json") and "mode" not in doc
    assert any("fewer than trend_min_baselines" in n for n in doc["notices"])
    cfg = tmp_path / "ridgeline.toml"
    cfg.write_text("[tool.ridgeline.diff]\ntrend_min_baselines = 2\n", encoding="utf-8")
    res = run(fleet_nights / "nights" / "2026-01-01.json", fleet_nights / "nights" / "2026-01-02.json",
              fleet_nights / "regress.json", "--format", "json", "--config", cfg)
    assert res.exit_code == 1 and json.loads(res.stdout)["mode"] == "trend"


def test_bad_inputs_are_exit_2(fleet_nights, tmp_path):
    from ridgeline.cli import main

    empty = tmp_path / "empty"
    empty.mkdir()
    bad = tmp_path / "bad"
    shutil.copytree(fleet_nights / "nights", bad)
    (bad / "2026-01-09.json").write_text("{not json")
    analyze = tmp_path / "analyze"
    shutil.copytree(fleet_nights / "nights", analyze)
    (analyze / "2026-01-09.json").write_text(json.dumps(
        {"schema_version": "1.5", "kernels": [{"kernel_name": "k", "duration_s": 1.0}], "findings": [], "telemetry": None}))
    for args in ((empty, fleet_nights / "calm.json"), (analyze, fleet_nights / "calm.json"),
                 (fleet_nights / "calm.json",), (bad, bad / "2026-01-09.json")):
        with pytest.raises(SystemExit) as err:
            main(["diff", *map(str, args)])
        assert err.value.code == 2, args
    # a past night that is not JSON is left out and named; the trend says how many nights it stood on
    res = run(bad, fleet_nights / "calm.json")
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "judged on 5 of 6 past nights: 1 left out" in text and "2026-01-09.json" in "".join(text.split())
    for key, value in (("trend_min_baselines", "0"), ("trend_window", "2.5"), ("trend_k", "-1")):
        res = run(fleet_nights / "nights", fleet_nights / "calm.json", "--threshold", f"{key}={value}")
        assert res.exit_code == 2 or "must be" in str(res.exception), (key, res.output)


def test_markdown_output(fleet_nights):
    res = run(fleet_nights / "nights", fleet_nights / "regress.json", "--format", "markdown")
    assert res.exit_code == 1 and "**Regression**" in res.stdout and "| ! | node03 | wasted share |" in res.stdout


# ------------------------------------------------------------------------------------------
# kernels
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def decode_doc() -> dict:
    res = CliRunner().invoke(cli, ["analyze", str(ROOT / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"),
                                   "--format", "json"])
    return json.loads(res.stdout)


def test_kernel_trend_names_the_slower_kernel(decode_doc):
    def scaled(factor: float, only: str | None = None) -> dict:
        doc = copy.deepcopy(decode_doc)
        for r in doc["kernels"]:
            if only is None or r["short_name"] == only:
                r["duration_s"] *= factor
        doc["total_gpu_time_s"] = sum(r["duration_s"] for r in doc["kernels"])
        return doc

    nights = [Night(f"n{i}", scaled(f)) for i, f in enumerate((1.00, 1.01, 0.99, 1.02, 0.98))]
    top = max(decode_doc["kernels"], key=lambda r: r["duration_s"])["short_name"]
    tr = trend(nights, Night("tonight", scaled(1.5, top)))
    flagged = [r for r in tr.rows if r["regression"]]
    assert {r["scope"] for r in flagged} <= {"kernel", "total"} and flagged
    assert all(r["subject"].startswith(top) for r in flagged if r["scope"] == "kernel")
    same = trend(nights, Night("tonight", scaled(1.01)))
    assert not same.regressed  # 1% is inside every kernel's band (floor kernel_time_rel = 10%)
    assert DIFF_THRESHOLDS["kernel_time_rel"] == 0.10


def test_docs_show_the_trend_and_cron():
    text = (ROOT / "docs" / "nightly.md").read_text(encoding="utf-8")
    assert "ridgeline diff nights/ tonight.json" in text or "ridgeline diff \"$OUT/nights\"" in text
    for key in ("trend_k", "trend_min_baselines", "trend_window", "1.4826"):
        assert key in text
    assert os.path.exists(ROOT / "ridgeline" / "analyzer" / "nightly" / "trend.py")


# ------------------------------------------------------------------------------------------
# real DCGM samples (../shared/samples/dcgm; skipped when absent)
# ------------------------------------------------------------------------------------------
from ridge_inputs import SAMPLES  # noqa: E402

DCGM = sorted(p for p in (SAMPLES / "dcgm").glob("*") if p.is_file() and p.name != "MANIFEST.md") \
    if (SAMPLES / "dcgm").is_dir() else []
needs_samples = pytest.mark.skipif(not DCGM, reason="../shared/samples is absent")


def _telemetry(*paths) -> dict | None:
    res = CliRunner().invoke(cli, ["telemetry", *map(str, paths), "--interval", "1s", "--start",
                                   "2026-01-05T00:00:00Z", "--format", "json"])
    return json.loads(res.stdout) if res.exit_code in (0, 1) else None


@needs_samples
@pytest.mark.parametrize("path", DCGM, ids=[p.name[:40] for p in DCGM])
def test_dcgm_real_sample_against_itself_changes_nothing(path):
    """Any real file: compared with itself (a pair, or three nights of it) nothing changes, nothing
    regresses, and every subject with enough nights is within its band."""
    doc = _telemetry(path)
    if doc is None or not doc.get("telemetry"):
        pytest.skip("not telemetry ridgeline reads")
    from ridgeline.render.nightly.diff import changed_rows

    cmp = compare(doc, doc)
    assert not cmp.regressed and changed_rows(cmp.gpus) == [] and changed_rows(cmp.hosts) == [] and not cmp.notices
    tr = trend([Night(f"n{i}", doc) for i in range(3)], Night("tonight", doc))
    assert not tr.regressed and {r["status"] for r in tr.rows} <= {"within", "no data"}


@needs_samples
def test_dcgm_real_host_missing_tonight(tmp_path):
    """Two real dmon captures as two hosts last night, one of them tonight: the other is missing,
    named, never a regression; the host both nights have is unchanged."""
    x8 = SAMPLES / "dcgm" / "llm-action-h800x8-dcgmi-dmon-nvlink.txt"
    x4 = SAMPLES / "dcgm" / "llm-action-h800x4-dcgmi-dmon-nvlink.txt"
    if not (x8.is_file() and x4.is_file()):
        pytest.skip("the llm-action dmon captures are absent")
    for folder, files in (("base", (x8, x4)), ("new", (x8,))):
        (tmp_path / folder).mkdir()
        for f in files:
            shutil.copy(f, tmp_path / folder / f.name)
    base, new = _telemetry(tmp_path / "base"), _telemetry(tmp_path / "new")
    cmp = compare(base, new, new_label="tonight")
    assert not cmp.regressed and cmp.fleet["hosts_missing"] == [x4.stem] and cmp.fleet["hosts_compared"] == 1
    assert {r["host"] for r in cmp.hosts if r["status"] == "missing"} == {x4.stem}
    from ridgeline.render.nightly.diff import changed_rows

    assert all(r["status"] == "missing" for r in changed_rows(cmp.gpus))
    tr = trend([Night(f"n{i}", base) for i in range(3)], Night("tonight", new))
    assert not tr.regressed
    assert {r["subject"] for r in tr.rows if r["status"] == "missing" and r["scope"] == "host"} == {x4.stem}
