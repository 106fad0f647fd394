"""ridgeline diff: two analyze documents and two telemetry documents made by ridgeline itself from
the fixture scenarios, then changed in known ways (a kernel slower, a finding added, a host
wasting more), so each change is a regression or noise by construction."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ridgeline.analyzer.nightly.diff import DIFF_THRESHOLDS, compare, kernel_groups
from ridgeline.cli import cli
from ridgeline.errors import InputError, UsageError

ROOT = Path(__file__).resolve().parents[3]
SCEN = ROOT / "fixtures" / "scenarios"


def _json(*args) -> dict:
    res = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def analyze_doc() -> dict:
    return _json("analyze", str(SCEN / "decode-b8-h100" / "profile.ncu-raw.csv"))


@pytest.fixture(scope="module")
def telemetry_doc() -> dict:
    return _json("telemetry", str(SCEN / "telemetry-fleet"), "--interval", "15s", "--start", "2026-01-05T08:00:00Z")


def _slow_down(doc: dict, factor: float, *, top: int = 0) -> tuple[dict, tuple]:
    """A copy of ``doc`` whose ``top``-th kernel group (by time) takes ``factor`` x longer."""
    new = copy.deepcopy(doc)
    groups, _ = kernel_groups(doc)
    key = sorted(groups, key=lambda k: -groups[k]["time_s"])[top]
    for r in new["kernels"]:
        if ((r.get("short_name") or r.get("kernel_name")), r.get("grid_size"), r.get("block_size")) == key:
            r["duration_s"] *= factor
    new["total_gpu_time_s"] = sum(r["duration_s"] for r in new["kernels"])
    return new, key


def test_identical_documents_have_no_change(analyze_doc):
    cmp = compare(analyze_doc, analyze_doc)
    assert not cmp.regressed
    assert all(r["status"] == "both" and r["time_delta_s"] == 0 for r in cmp.kernels)
    assert cmp.findings == {"new": [], "resolved": [], "changed": []}
    assert [h["share_base"] for h in cmp.headline] == [h["share_new"] for h in cmp.headline]


def test_slower_kernel_group_is_a_regression(analyze_doc):
    new, key = _slow_down(analyze_doc, 1.3)
    cmp = compare(analyze_doc, new)
    row = next(r for r in cmp.kernels if (r["kernel"], r["grid"], r["block"]) == key)
    assert row["regression"] and row["time_delta_rel"] == pytest.approx(0.3)
    assert cmp.kernels[0] is row  # largest change first
    assert any(key[0] in r for r in cmp.regressions)
    # the same change under a looser threshold is noise
    loose = compare(analyze_doc, new, overrides={"kernel_time_rel": 0.5, "total_time_rel": 0.5})
    assert not loose.regressed and not any(r["regression"] for r in loose.kernels)


def test_growth_below_the_absolute_threshold_is_noise(analyze_doc):
    groups, _ = kernel_groups(analyze_doc)
    small = sorted(groups, key=lambda k: groups[k]["time_s"])
    idx = len(groups) - 1 - next(i for i, k in enumerate(small) if groups[k]["time_s"] * 0.5 < DIFF_THRESHOLDS["kernel_time_abs_s"])
    new, key = _slow_down(analyze_doc, 1.5, top=idx)
    cmp = compare(analyze_doc, new)
    row = next(r for r in cmp.kernels if (r["kernel"], r["grid"], r["block"]) == key)
    assert row["time_delta_rel"] == pytest.approx(0.5) and not row["regression"]


def test_kernels_matched_by_launch_shape_appear_and_vanish(analyze_doc):
    """A group whose grid changed is the same kernel (matched by identity, not appeared + vanished);
    a kernel no identity step pairs (another function) vanished, its replacement appeared."""
    new = copy.deepcopy(analyze_doc)
    first = new["kernels"][0]
    name, shape = first["short_name"], first["grid_size"]
    moved = [r for r in new["kernels"] if r["short_name"] == name and r["grid_size"] == shape]
    for r in moved:
        r["grid_size"] = "(999, 1, 1)"
    cmp = compare(analyze_doc, new)
    row = next(r for r in cmp.kernels if r["kernel"] == name and r["matched_by"])
    assert row["status"] == "both" and row["matched_by"] == "launch shape"
    assert row["shapes_base"] == [{"kernel": name, "grid": shape, "block": first["block_size"]}]
    assert row["shapes_new"][0]["grid"] == "(999, 1, 1)" and row["time_delta_s"] == pytest.approx(0.0, abs=1e-12)
    assert cmp.totals["appeared"] == 0 and cmp.totals["vanished"] == 0 and cmp.totals["matched_by_identity"] == 1
    for r in moved:  # another function entirely: nothing to match it with
        r["short_name"] = r["kernel_name"] = "brand_new_kernel"
    cmp = compare(analyze_doc, new)
    status = {(r["kernel"], r["grid"]): r["status"] for r in cmp.kernels}
    assert status[(name, shape)] == "vanished"
    assert status[("brand_new_kernel", "(999, 1, 1)")] == "appeared"
    assert cmp.totals["appeared"] == 1 and cmp.totals["vanished"] == 1


def test_batch_change_matches_kernels_by_identity():
    """decode batch 8 -> 32 on the same H100: grids follow the batch, so nearly every (name, grid,
    block) group changes. Matched by kernel identity (names.join_key, then function name), each
    kernel of batch 8 that also runs at batch 32 is one row; only kernels batch 32 does not run
    (per its ncu capture) vanish."""
    b8 = _json("analyze", str(SCEN / "decode-b8-h100" / "profile.ncu-raw.csv"))
    b32 = _json("analyze", str(SCEN / "decode-b32-h100" / "profile.ncu-details.csv"))
    from ridgeline.names import function_name

    funcs = lambda doc: {function_name(r["kernel_name"]) for r in doc["kernels"]}  # noqa: E731
    only_b8, only_b32 = funcs(b8) - funcs(b32), funcs(b32) - funcs(b8)
    cmp = compare(b8, b32)
    assert cmp.totals["vanished"] == len([r for r in cmp.kernels if function_name(r["kernel"]) in only_b8])
    assert cmp.totals["appeared"] == len([r for r in cmp.kernels if function_name(r["kernel"]) in only_b32])
    shared = [r for r in cmp.kernels if r["status"] == "both"]
    assert {function_name(r["kernel"]) for r in shared} == funcs(b8) & funcs(b32)
    assert cmp.totals["matched_by_identity"] >= 5  # flash, norms, rotary, KV cache, act: grids follow the batch
    # times are summed, never lost: the rows add up to each run's GPU time
    assert sum(r["time_base_s"] or 0 for r in cmp.kernels) == pytest.approx(cmp.totals["time_base_s"])
    assert sum(r["time_new_s"] or 0 for r in cmp.kernels) == pytest.approx(cmp.totals["time_new_s"])
    from ridgeline.render.nightly.diff import format_diff

    assert "same kernel, launch shape changed" in format_diff(cmp)


def test_bound_values_are_open_strings(analyze_doc):
    new = copy.deepcopy(analyze_doc)
    changed = [r for r in new["kernels"] if r["bound"] != "latency"][:5]
    for r in changed[:3]:
        r["bound"] = "latency"
    for r in changed[3:]:
        r["bound"] = "some-future-bound"  # a value no version knows yet
    cmp = compare(analyze_doc, new)
    latency = next(h for h in cmp.headline if h["bound"] == "latency")
    assert latency["share_new"] > (latency["share_base"] or 0.0)
    future = next(h for h in cmp.headline if h["bound"] == "some-future-bound")
    assert future["share_base"] is None and future["share_new"] > 0
    from ridgeline.render.nightly.diff import format_diff, render_diff_markdown

    assert "latency" in format_diff(cmp) and "| some-future-bound |" in render_diff_markdown(cmp)


def test_findings_new_resolved_and_severity(analyze_doc):
    base = copy.deepcopy(analyze_doc)
    new = copy.deepcopy(analyze_doc)
    warning = next(f for f in base["findings"] if f["severity"] == "warning")
    base["findings"].remove(warning)  # absent last night: new tonight
    resolved = new["findings"].pop()  # gone tonight
    info = next((f for f in new["findings"] if f["severity"] == "info"), None)
    if info is not None:
        info["severity"] = "critical"
    cmp = compare(base, new)
    assert [(f["code"], f["subject"]) for f in cmp.findings["new"]] == [(warning["code"], warning["subject"])]
    assert cmp.findings["new"][0]["regression"]
    assert (resolved["code"], resolved["subject"]) in [(f["code"], f["subject"]) for f in cmp.findings["resolved"]]
    if info is not None:
        assert cmp.findings["changed"][0]["severity_base"] == "info" and cmp.findings["changed"][0]["regression"]
    # a new info finding is not a regression by default
    only_info = compare(base, new, overrides={"new_finding_severity": "critical"})
    assert not any(f["regression"] for f in only_info.findings["new"])


def test_telemetry_waste_regression(telemetry_doc):
    same = compare(telemetry_doc, telemetry_doc)
    assert same.kind == "telemetry" and not same.regressed and same.kernels == []
    assert same.fleet["wasted_gpu_h_base"] == pytest.approx(sum(h["wasted_gpu_h"] for h in telemetry_doc["telemetry"]["fleet"]["by_host"]))
    assert 0 < same.fleet["coverage_new"] <= 1
    new = copy.deepcopy(telemetry_doc)
    host = new["telemetry"]["fleet"]["by_host"][-1]
    extra = 0.3 * host["span_h"]  # 30 points of the host's GPU-hours
    host["wasted_gpu_h"] += extra
    host["allocated_idle_h"] += extra
    host["wasted_share"] = host["wasted_gpu_h"] / host["span_h"]
    cmp = compare(telemetry_doc, new)
    row = next(r for r in cmp.hosts if r["host"] == host["host"])
    assert row["regression"] and row["wasted_delta_h"] == pytest.approx(extra)
    assert cmp.hosts[0] is row
    fleet_span = sum(h["span_h"] for h in new["telemetry"]["fleet"]["by_host"])
    assert cmp.fleet["regression"] == (extra / fleet_span > DIFF_THRESHOLDS["fleet_waste_share"])
    assert cmp.regressed


def test_cli_exit_codes_and_formats(analyze_doc, tmp_path):
    base, new = tmp_path / "base.json", tmp_path / "new.json"
    base.write_text(json.dumps(analyze_doc), encoding="utf-8")
    new.write_text(json.dumps(_slow_down(analyze_doc, 1.3)[0]), encoding="utf-8")
    run = CliRunner().invoke
    assert run(cli, ["diff", str(base), str(base)]).exit_code == 0
    res = run(cli, ["diff", str(base), str(new)])
    assert res.exit_code == 1 and "REGRESSION" in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) <= 80
    res = run(cli, ["diff", str(base), str(new), "--format", "json"])
    doc = json.loads(res.stdout)
    assert res.exit_code == 1 and doc["regressed"] and doc["kind"] == "analyze"
    res = run(cli, ["diff", str(base), str(new), "--format", "markdown"])
    assert res.exit_code == 1 and "**Regression**" in res.stdout and "| --- |" in res.stdout
    res = run(cli, ["diff", str(base), str(new), "--threshold", "kernel_time_rel=0.5", "--threshold", "total_time_rel=0.5"])
    assert res.exit_code == 0, res.stdout
    cfg = tmp_path / "ridgeline.toml"
    cfg.write_text("[tool.ridgeline.diff]\nkernel_time_rel = 0.5\ntotal_time_rel = 0.5\n", encoding="utf-8")
    assert run(cli, ["diff", str(base), str(new), "--config", str(cfg)]).exit_code == 0
    cfg.write_text("[tool.ridgeline.diff]\nkernel_time = 0.5\n", encoding="utf-8")
    res = run(cli, ["diff", str(base), str(new), "--config", str(cfg)])
    assert isinstance(res.exception, UsageError) and "kernel_time" in str(res.exception)


def test_bad_inputs_are_exit_2(analyze_doc, telemetry_doc, tmp_path):
    with pytest.raises(InputError, match="same kind"):
        compare(analyze_doc, telemetry_doc)
    newer = dict(analyze_doc, schema_version="2.0")
    with pytest.raises(InputError, match="schema version"):
        compare(analyze_doc, newer)
    assert not compare(analyze_doc, dict(analyze_doc, schema_version="1.0")).regressed  # minor versions compare
    with pytest.raises(InputError, match="ridgeline JSON document"):
        compare({"status": "success", "data": {}}, analyze_doc)
    from ridgeline.cli import main

    good = tmp_path / "good.json"
    good.write_text(json.dumps(analyze_doc), encoding="utf-8")
    for name, content in (("broken.json", "{not json"), ("list.json", "[1, 2]"), ("bin.json", b"\xff\xfe\x00")):
        bad = tmp_path / name
        (bad.write_bytes if isinstance(content, bytes) else bad.write_text)(content)
        with pytest.raises(SystemExit) as err:
            main(["diff", str(good), str(bad)])
        assert err.value.code == 2


def test_latency_kinds_are_compared_as_the_views_show_them(analyze_doc):
    """A launch-bound group whose launches grow past the launch-bound threshold turns stall-bound:
    the diff says launch -> stall (the word every view shows), and the headline splits the two."""
    launch_rows = [r for r in analyze_doc["kernels"] if r["bound"] == "latency" and r.get("latency_kind") == "launch"]
    assert launch_rows  # the decode fixture's norms, RoPE, KV writes... run ~2.6 us
    key = (launch_rows[0].get("short_name") or launch_rows[0].get("kernel_name"), launch_rows[0].get("grid_size"),
           launch_rows[0].get("block_size"))
    new = copy.deepcopy(analyze_doc)
    for r in new["kernels"]:
        if ((r.get("short_name") or r.get("kernel_name")), r.get("grid_size"), r.get("block_size")) == key:
            r["latency_kind"] = "stall"
            r["duration_s"] = 50e-6
    new["total_gpu_time_s"] = sum(r["duration_s"] for r in new["kernels"])
    cmp = compare(analyze_doc, new)
    row = next(r for r in cmp.kernels if (r["kernel"], r.get("grid"), r.get("block")) == key
               or r["kernel"] == key[0])
    assert (row["bound_base"], row["bound_new"]) == ("launch", "stall")
    heads = {h["bound"]: h for h in cmp.headline}
    assert heads["stall"]["share_base"] is None and heads["stall"]["share_new"] > 0
    assert "latency" not in heads  # every launch of both documents has its kind
    # a document from before the split (no latency_kind) reads as plain 'latency'
    old = copy.deepcopy(analyze_doc)
    for r in old["kernels"]:
        r.pop("latency_kind", None)
    assert "latency" in {h["bound"] for h in compare(old, analyze_doc).headline}


# ------------------------------------------------------------------------------------------
# pairwise telemetry on generated nights (tests/nights.py: synth scrapes read by ridgeline)
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two_nights(tmp_path_factory) -> dict:
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    import nights as N

    root = tmp_path_factory.mktemp("pair")
    wasteful = dict(N.CALM, node01=["idle_allocated", "training"], node02=["busy_tensor_idle", "training"])
    return {
        "base": N.night(root / "base", 0, wasteful),
        # node02..04 (1 GPU of 6 wasted) sent nothing: the fleet's share would rise from 2/8 to 1/2
        "missing": N.night(root / "missing", 1, {"node01": wasteful["node01"]}),
        "one_gpu": N.night(root / "one", 1, dict(wasteful, node03=["training", "idle_allocated"])),
    }


def test_missing_hosts_are_named_not_a_regression(two_nights):
    cmp = compare(two_nights["base"], two_nights["missing"], new_label="tonight")
    assert not cmp.regressed, cmp.regressions
    hosts = {r["host"]: r for r in cmp.hosts}
    assert {h for h, r in hosts.items() if r["status"] == "missing"} == {"node02", "node03", "node04"}
    assert all(r["wasted_delta_h"] is None and not r["regression"] for r in hosts.values() if r["status"] == "missing")
    f = cmp.fleet
    assert f["hosts_compared"] == 1 and f["hosts_missing"] == ["node02", "node03", "node04"]
    assert f["wasted_share_base"] == pytest.approx(f["wasted_share_new"]) == pytest.approx(0.5)  # node01 alone
    assert any("3 host(s) missing from tonight" in n for n in cmp.notices)
    # findings on the missing hosts were not resolved: nothing was heard from those hosts
    assert all(not f["subject"].startswith(("host:node02 ", "host:node03 ", "host:node04 "))
               for f in cmp.findings["resolved"])
    assert cmp.findings["missing"] and all(f["subject"].split()[0] in ("host:node02", "host:node03", "host:node04")
                                           for f in cmp.findings["missing"])
    from ridgeline.render.nightly.diff import format_diff, render_diff_markdown

    text = format_diff(cmp)
    assert "No regression" in text and "(the 1 host in both runs)" in text and "node02 (missing)" in text
    assert "missing" in render_diff_markdown(cmp)
    # the old comparison of all hosts would have called this a regression (1/8 -> 1/2 of GPU-hours:
    # node01's idle-allocated GPU; node02's busy-with-idle-tensor-cores GPU is underused, not wasted)
    all_b = sum(h["wasted_gpu_h"] for h in two_nights["base"]["telemetry"]["fleet"]["by_host"]) / sum(
        h["span_h"] for h in two_nights["base"]["telemetry"]["fleet"]["by_host"])
    assert all_b == pytest.approx(1 / 8) and 0.5 - all_b > DIFF_THRESHOLDS["fleet_waste_share"]


def test_gpu_table_lists_only_gpus_that_changed(two_nights):
    from ridgeline.render.nightly.diff import changed_rows, format_diff, render_diff_markdown

    cmp = compare(two_nights["base"], two_nights["one_gpu"])
    changed = changed_rows(cmp.gpus)
    assert [(r["host"], r["gpu"]) for r in changed] == [("node03", 1)]  # the one GPU that turned idle
    text = format_diff(cmp)
    gpu_part = text[text.index("GPUs that changed"):text.index("Findings")]
    assert "node03 gpu1" in gpu_part and "7 unchanged not shown" in gpu_part
    assert not any(f"node0{h} gpu" in gpu_part for h in (1, 2, 4))
    md_part = render_diff_markdown(cmp)
    md_part = md_part[md_part.index("### GPUs"):]
    assert md_part.count("| node0") == 1
    same = compare(two_nights["base"], two_nights["base"])
    assert changed_rows(same.gpus) == [] and "GPUs: no change" in format_diff(same)


def test_gpu_model_change_of_profiles_is_named(analyze_doc):
    """The same decode step on H100 and on H200: the diff names the change of GPU (kernel times
    compare two GPUs), and is silent when both runs name the same one."""
    h200 = _json("analyze", str(SCEN / "decode-b8-h200" / "profile.ncu-raw.csv"))
    assert analyze_doc["gpu"]["name"] != h200["gpu"]["name"]
    cmp = compare(analyze_doc, h200)
    assert cmp.notices == [f"GPU model changed: {analyze_doc['gpu']['name']} -> {h200['gpu']['name']} "
                           "(kernel times compare two GPUs)"]
    from ridgeline.render.nightly.diff import format_diff, render_diff_markdown

    assert "GPU model changed" in format_diff(cmp) and "GPU model changed" in render_diff_markdown(cmp)
    assert compare(analyze_doc, analyze_doc).notices == []
