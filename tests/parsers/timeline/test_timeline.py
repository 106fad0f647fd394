"""Timelines: readers, busy/idle analysis, RL4xx rules, JSON, the roofline join.

Golden values come from fixtures/timeline/generate.py, whose capture is built so that every
gap and the idle split are known by construction (see its docstring). The real captures in
../shared/samples/{nsys,kineto} are read in place (skipped when absent).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ridgeline.analyzer.schema import HOST_API_COLUMNS, TIMELINE_COLUMNS, TIMELINE_TOTALS_COLUMNS
from ridgeline.errors import InputError
from ridgeline.pipeline import analyze_paths, detect
from ridgeline.parsers.timeline.reader import read_timeline

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "fixtures" / "timeline"
SHARED = ROOT.parent / "shared" / "samples"

_spec = importlib.util.spec_from_file_location("timeline_generate", FIX / "generate.py")
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

WITH_HOST = ["capture.kineto.json", "capture-2022.sqlite", "capture-2024.sqlite"]
NO_HOST = ["capture_cuda_gpu_trace.csv", "capture_cuda_gpu_trace_gui.csv"]


def run(capsys, *args):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def device0(result):
    return result.timeline.devices.filter(result.timeline.devices["device"] == 0).row(0, named=True)


# ---------------------------------------------------------------- golden: known by construction
def test_generator_output_is_committed(tmp_path):
    assert GEN.main(["--check"]) == 0


@pytest.mark.parametrize("name", WITH_HOST + NO_HOST)
def test_every_format_gives_the_constructed_busy_idle_split(name):
    res = analyze_paths([FIX / name], run_rules=False)
    d = device0(res)
    exp = GEN.EXPECTED
    for key in ("capture_s", "busy_s", "kernel_busy_s", "idle_s", "memcpy_busy_s", "copy_only_s"):
        assert d[key] == pytest.approx(exp[key], abs=1e-12), key
    assert d["kernels"] == exp["kernels"] and d["short_kernels"] == exp["short_kernels"]
    if name in WITH_HOST:  # sync 100 us, then the copy launched 84 us late: causes by construction
        for key, want in GEN.EXPECTED_CAUSES.items():
            assert d[key] == pytest.approx(want, abs=1e-12), key
        assert d["host_calls"] > 0
    else:  # no host calls in nsys stats: the long gaps are all "other"
        assert d["idle_launch_s"] == pytest.approx(exp["idle_launch_s"], abs=1e-12)
        assert d["idle_sync_s"] == 0 and d["host_calls"] == 0 and d["idle_host_s"] == d["idle_queued_s"] == 0
        assert d["idle_other_s"] == pytest.approx(exp["idle_sync_s"] + exp["idle_other_s"], abs=1e-12)
    d1 = res.timeline.devices.filter(res.timeline.devices["device"] == 1).row(0, named=True)
    assert d1["capture_s"] == pytest.approx(1e-6) and d1["idle_s"] == 0
    assert d["device_name"] == GEN.GPU


@pytest.mark.parametrize("name", WITH_HOST + NO_HOST)
def test_readers_give_the_normalized_tables(name):
    tl = read_timeline(FIX / name)
    assert list(tl.activities.columns) == list(TIMELINE_COLUMNS)
    assert tl.activities.height == len(GEN.ACTIVITIES)
    k = tl.activities.filter(tl.activities["kind"] == "kernel")
    assert set(k.get_column("short_name")) == {"ns::scale_kernel", "gemm_tile_kernel"}
    assert set(k.get_column("grid_size")) == {"(64, 1, 1)"} and set(k.get_column("block_threads")) == {256}
    copy = tl.activities.filter(tl.activities["kind"] == "memcpy").row(0, named=True)
    assert copy["copy_kind"] == "HtoD" and copy["bytes"] > 1_000_000
    assert k.get_column("copy_kind").null_count() == k.height
    if name in WITH_HOST:
        assert list(tl.api.columns) == list(HOST_API_COLUMNS)
        assert tl.api.filter(tl.api["name"].str.starts_with("cudaStreamSynchronize")).height == 1
    assert detect(FIX / name)[0] == "timeline"


def test_thresholds_are_configurable(capsys):
    res = analyze_paths([FIX / "capture.kineto.json"], run_rules=False, timeline_options={"launch_gap_s": 2e-6})
    d = device0(res)
    # every gap is longer than 2 us now: launch is only the 2 us after the copy's late launch call;
    # the three 3-4 us gaps (no launch records) join M1's 50 us in other
    assert d["idle_launch_s"] == pytest.approx(2e-6, abs=1e-12)
    assert d["idle_queued_s"] == pytest.approx(14e-6, abs=1e-12)
    assert d["idle_other_s"] == pytest.approx(60e-6, abs=1e-12)
    code, out, _err = run(capsys, "analyze", FIX / "capture.kineto.json", "--timeline-launch-gap", "2us", "--format",
                          "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["timeline"]["options"]["launch_gap_s"] == pytest.approx(2e-6)
    assert doc["timeline"]["devices"][0]["idle_launch_s"] == pytest.approx(2e-6)


def test_rules_on_the_golden_capture():
    res = analyze_paths([FIX / "capture.kineto.json"])
    codes = {(f.code, f.subject) for f in res.findings}
    assert ("RL401", "gpu:0") in codes  # idle 54% >= 20%
    assert ("RL403", "gpu:0") in codes  # copy-only 100 us + sync 100 us = 42% >= 10%
    assert not any(c == "RL404" for c, _s in codes)  # copies are 45% of busy time, under 50%
    assert not any(c == "RL402" for c, _s in codes)  # 4 short kernels, under 100
    rl401 = next(f for f in res.findings if f.code == "RL401")
    assert rl401.impact_s == pytest.approx(260e-6) and rl401.impact_share == pytest.approx(260 / 481)
    assert rl401.subject_kind == "timeline"
    res = analyze_paths([FIX / "capture.kineto.json"], thresholds=["RL402.min_short_kernels=2",
                                                                   "RL404.min_copy_share=0.4"])
    codes = {f.code for f in res.findings}
    assert {"RL402", "RL404"} <= codes  # median gap 3 us before 5 us short kernels: ratio 0.6 >= 0.5


def test_terminal_and_json_show_the_timeline(capsys):
    code, out, _err = run(capsys, "analyze", FIX / "capture-2024.sqlite")
    assert code == 0
    assert "Timeline: GPU busy vs idle per device" in out
    assert "RL401" in out and "of capture time" in out
    assert max(len(line) for line in out.splitlines()) <= 80
    code, out, _err = run(capsys, "analyze", FIX / "capture-2024.sqlite", "--format", "json")
    doc = json.loads(out)
    dev = doc["timeline"]["devices"][0]
    for key in ("device", "capture_s", "kernel_busy_s", "busy_s", "idle_s", "idle_launch_s", "idle_sync_s", "idle_other_s"):
        assert key in dev
    assert dev["busy_s"] + dev["idle_s"] == pytest.approx(dev["capture_s"])
    assert doc["timeline"]["kernels"][0]["short_name"] == "gemm_tile_kernel"
    assert doc["ncu_rules"] is None and doc["kernels"] == []


# ---------------------------------------------------------------- roofline x timeline
def _profile(tmp_path, names_durations):
    """A raw-page CSV with the kernels' names and durations only (enough for the join)."""
    lines = ['"ID","Kernel Name","Device","gpu__time_duration.sum","dram__bytes.sum"', '"","","","nsecond","byte"']
    for i, (name, dur) in enumerate(names_durations):
        lines.append(f'"{i}","{name}","0","{dur}","1000000"')
    p = tmp_path / "profile.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_profile_and_timeline_join_by_short_name_and_rank_by_wall_time(tmp_path, capsys):
    prof = _profile(tmp_path, [(GEN.GEMM, 100000), (GEN.SHORT, 5000), ("void only_profiled(int)", 90000)])
    res = analyze_paths([prof, FIX / "capture-2022.sqlite"], gpu="h100-sxm")
    tl = res.timeline
    assert sorted(tl.join.get_column("short_name").to_list()) == ["gemm_tile_kernel", "ns::scale_kernel"]
    assert tl.unmatched_profile == ["only_profiled"]
    gemm = tl.join.filter(tl.join["short_name"] == "gemm_tile_kernel").row(0, named=True)
    assert gemm["wall_share"] == pytest.approx(100e-6 / (481e-6 + 1e-6))
    assert any("1 profiled only" in n for n in res.notes)
    code, out, _err = run(capsys, "analyze", prof, FIX / "capture-2022.sqlite", "--gpu", "h100-sxm", "--format", "json")
    doc = json.loads(out)
    assert doc["timeline"]["join"]["unmatched_profile"] == ["only_profiled"]


def test_kernel_findings_are_ranked_by_wall_time(tmp_path):
    """A kernel that is small in the profile but dominates the real run's timeline moves to the top."""
    import polars as pl

    prof = ROOT / "fixtures" / "scenarios" / "decode-b8-h100" / "profile.ncu-raw.csv"
    alone = analyze_paths([prof])
    kernel_findings = [f for f in alone.findings if f.subject_kind == "kernel"]
    flash = next(f for f in kernel_findings if f.subject.startswith("FlashAttention"))
    assert kernel_findings[0] is not flash  # profiled time puts a GEMM first
    names = alone.kernels.get_column("kernel_name").unique().sort().to_list()
    events, ts = [], 0.0
    for name in names:  # every kernel once (5 us), FlashAttention ten times (500 us each)
        for _ in range(10 if "flash_fwd" in name else 1):
            dur = 500.0 if "flash_fwd" in name else 5.0
            events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
                           "args": {"device": 0, "stream": 7, "correlation": len(events)}})
            ts += dur + 1.0
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    both = analyze_paths([prof, trace])
    assert not both.timeline.unmatched_profile and not both.timeline.unmatched_timeline
    ranked = [f for f in both.findings if f.subject_kind == "kernel"]
    assert ranked[0].subject == flash.subject
    wall = {e.metric: e.value for e in ranked[0].evidence}["wall_share"]
    assert wall == pytest.approx(5000 / (ts - 1.0), rel=1e-9)  # capture: first start to last end
    assert ranked[0].impact_share == pytest.approx(min(1.0, flash.impact_s / alone.kernels.filter(
        pl.col("kernel_label") == flash.subject)["duration_s"].sum()) * wall)
    assert all(any(e.metric == "wall_share" for e in f.evidence) for f in ranked)
    keys = [f.sort_key for f in both.findings]
    assert keys == sorted(keys)


# ---------------------------------------------------------------- errors
def test_nsys_rep_names_the_export_command(capsys, tmp_path):
    rep = tmp_path / "run.nsys-rep"
    rep.write_bytes(b"NVIDIA Tegra Profiler Report 2025@6@1\x00\x01\x02" * 10)
    code, out, err = run(capsys, "analyze", rep)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "nsys export --type sqlite" in err and "run.nsys-rep" in err


@pytest.mark.parametrize("cut", [50, 400])
def test_truncated_kineto_trace_is_one_line(capsys, tmp_path, cut):
    import gzip

    bad = tmp_path / "trace.json.gz"
    bad.write_bytes(gzip.compress((FIX / "capture.kineto.json").read_bytes()[:cut]))
    code, out, err = run(capsys, "analyze", bad)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "truncated or corrupt" in err


def test_kineto_without_gpu_events_says_so(tmp_path):
    doc = json.loads((FIX / "capture.kineto.json").read_text())
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") in ("cuda_runtime", "cpu_op")]
    p = tmp_path / "cpu_only.json"
    p.write_text(json.dumps(doc))
    res = analyze_paths([p])
    assert res.timeline.devices.height == 0
    assert any("nothing analysed on the GPU" in n and "but no kernel, copy or memset record" in n for n in res.notes)
    assert not res.findings


# ---------------------------------------------------------------- real samples
def _samples():
    out = []
    for sub in ("nsys", "kineto"):
        folder = SHARED / sub
        if folder.exists():
            out += sorted(p for p in folder.iterdir() if p.name != "MANIFEST.md")
    return out


@pytest.mark.parametrize("path", _samples(), ids=lambda p: p.name)
def test_every_sample_reads_with_sane_totals(path, capsys):
    if path.suffix in (".nsys-rep", ".qdrep"):
        code, _out, err = run(capsys, "analyze", path)
        assert code == 2 and "nsys export --type sqlite" in err and "Traceback" not in err
        return
    res = analyze_paths([path])
    tl = res.timeline
    assert tl is not None
    for d in tl.devices.iter_rows(named=True):
        assert 0 <= d["kernel_busy_s"] <= d["busy_s"] <= d["capture_s"] + 1e-12
        causes = [d[k] for k in ("idle_launch_s", "idle_sync_s", "idle_host_s", "idle_queued_s", "idle_other_s")]
        assert d["idle_s"] == pytest.approx(sum(causes), abs=1e-9)
        assert min(causes) >= 0
        assert d["copy_only_s"] <= d["memcpy_busy_s"] + 1e-12
    k = tl.kernel_shares
    if k.height:
        assert k.get_column("wall_share").sum() <= 1 + 1e-9 or tl.devices.height > 1
        assert k.get_column("busy_share").sum() == pytest.approx(1.0)
    if tl.totals is not None:
        assert list(tl.totals.columns) == list(TIMELINE_TOTALS_COLUMNS)
        assert any("totals only" in n for n in res.notes)
    code, _out, err = run(capsys, "analyze", path, "--format", "json")
    assert code == 0 and "Traceback" not in err


def test_gpu_trace_agrees_with_its_kernel_summary():
    """The same capture's nsys stats trace and kern_sum: per-name totals agree to the ns."""
    trace = SHARED / "nsys" / "tornadovm-rtx4090-nsys2024.5.1-gpullama3-nsys-12-llm-fp16_cuda_gpu_trace.csv"
    summ = SHARED / "nsys" / "tornadovm-rtx4090-nsys2024.5.1-gpullama3-nsys-12-llm-fp16_cuda_gpu_kern_sum.csv"
    if not trace.exists() or not summ.exists():
        pytest.skip("tornadovm samples not available")
    shares = analyze_paths([trace], run_rules=False).timeline.kernel_shares
    totals = read_timeline(summ).totals
    got = dict(shares.select("name", "total_s").iter_rows())  # one row per full name on both sides
    for name, total_s, count in totals.select("name", "total_s", "count").iter_rows():
        assert got[name] == pytest.approx(total_s, abs=1e-9), name
    assert shares.get_column("launches").sum() == totals.get_column("count").sum()


def test_multi_device_sqlite_names_every_gpu():
    path = SHARED / "nsys" / "pipit-a100x4-nsys2024.5.1-cloverleaf.sqlite"
    if not path.exists():
        pytest.skip("sample not available")
    tl = read_timeline(path)
    assert len(tl.devices) == 4 and set(tl.devices.values()) == {"NVIDIA A100-SXM4-80GB"}
    assert tl.activities.filter(tl.activities["kind"] == "kernel").height == 1312  # MANIFEST


def test_corrupt_sqlite_is_one_line(capsys, tmp_path):
    bad = tmp_path / "x.sqlite"
    bad.write_bytes((FIX / "capture-2024.sqlite").read_bytes()[:2048])
    code, out, err = run(capsys, "analyze", bad)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_html_report_and_plot_show_the_timeline(tmp_path, capsys):
    page = tmp_path / "r.html"
    code, _out, err = run(capsys, "report", FIX / "capture-2024.sqlite", "-o", page)
    assert code == 0, err
    html = page.read_text()
    assert 'id="timeline"' in html and 'id="plot-timeline"' in html
    assert "gemm_tile_kernel" in html and "n/a" not in html.split('id="timeline"')[1].split("</table>")[0]
    png = tmp_path / "t.png"
    code, _out, err = run(capsys, "analyze", FIX / "capture_cuda_gpu_trace.csv", "--plot", png)
    assert code == 0 and png.stat().st_size > 1000 and "(timeline)" in err


# ---------------------------------------------------------------- Kineto read in chunks
def _both(path, chunk):
    from polars.testing import assert_frame_equal

    from ridgeline.parsers.timeline.reader import read_kineto

    whole = read_kineto(path, stream_min_bytes=1 << 60)
    chunked = read_kineto(path, stream_min_bytes=0, chunk_bytes=chunk)
    assert_frame_equal(whole.activities, chunked.activities)
    if whole.api is not None:
        assert_frame_equal(whole.api, chunked.api)
    assert (whole.devices, whole.host_calls_total, whole.notes) == (chunked.devices, chunked.host_calls_total,
                                                                    chunked.notes)
    return whole


@pytest.mark.parametrize("chunk", [64, 300, 5000])
def test_chunked_kineto_reader_equals_the_whole_parse(chunk, tmp_path):
    _both(FIX / "capture.kineto.json", chunk)
    # an event name holding the boundary pattern ('}, {') must not cut an event in two
    doc = json.loads((FIX / "capture.kineto.json").read_text())
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            e["name"] = 'void f<{1}, {2}>(x) }, { "ts": 1 }'
    doc["trailer"] = {"after": [1, 2]}  # keys after the events array
    p = tmp_path / "tricky.json"
    p.write_text(json.dumps(doc, indent=1))
    whole = _both(p, chunk)
    assert whole.activities.filter(whole.activities["kind"] == "kernel").height == 6


def test_chunked_reader_really_streams_the_real_trace():
    from ridgeline.parsers.timeline import kineto as T

    path = SHARED / "kineto" / "hta-a100sxm80-16rank-negative-queue-rank0.json.gz"
    if not path.exists():
        pytest.skip("sample not available")
    meta, gpus, _hosts, _launches, _n = T._kineto_stream(path, "all", 1 << 20)
    assert len(gpus) > 5 and meta["deviceProperties"][0]["name"] == "NVIDIA A100-SXM4-80GB"
    whole = _both(path, 1 << 20)
    assert whole.activities.height == 7747  # kernels 6080 + copies 1390 + memsets 277 (MANIFEST: 6080 kernels)


def test_nsys_stats_saved_from_a_terminal_is_read(tmp_path):
    """`nsys stats ... > out.txt`: nsys' own messages before the CSV, another report after it."""
    body = (FIX / "capture_cuda_gpu_trace.csv").read_text()
    p = tmp_path / "stats.txt"
    p.write_text("Generating SQLite file report.sqlite from report.nsys-rep\n"
                 "Processing [report.sqlite] with [cuda_gpu_trace.py]...\n\n"
                 " ** CUDA GPU Trace (cuda_gpu_trace):\n\n" + body + "\n"
                 "Processing [report.sqlite] with [cuda_api_sum.py]...\n\nTime (%),Total Time (ns),Num Calls,Name\n")
    res = analyze_paths([p], run_rules=False)
    d = device0(res)
    assert d["busy_s"] == pytest.approx(GEN.EXPECTED["busy_s"], abs=1e-12)
    assert any("line(s) before the cuda_gpu_trace table ignored" in n and "only the first report" in n
               for n in res.notes)


def test_markdown_report_has_the_timeline_table(capsys):
    code, out, _err = run(capsys, "report", FIX / "capture_cuda_gpu_trace.csv", "--format", "markdown")
    assert code == 0
    table = out.split("### Timeline")[1].split("###")[0]
    assert "| capture\\_cuda\\_gpu\\_trace.csv | gpu:0 | 481" in table and "n/a" in table  # no host calls: sync n/a
