"""Steps (ridgeline.analyzer.timeline.steps) and fusion candidates (ridgeline.analyzer.timeline.fusion): generated
traces whose answers follow from their construction, and the real Kineto trace with ProfilerStep
ranges (ground truth computed here from the trace's own events)."""

from __future__ import annotations

import gzip
import json
import sqlite3

import numpy as np
import pytest

from ridge_inputs import SAMPLES
from ridgeline.analyzer.timeline.fusion import _non_overlapping, fusion_candidates
from ridgeline.analyzer.timeline.busy import analyze_timeline
from ridgeline.parsers.timeline.reader import read_timeline

HTA_RANK0 = SAMPLES / "kineto" / "hta-a100sxm80-16rank-negative-queue-rank0.json.gz"

# --- a generated Kineto trace: 6 steps (times in us) -------------------------------------------
# host step i covers [H_i, H_{i+1} - 100); its work is issued from b_i (= H_i, but step 4 first spends
# 1000 us in the data loader, so b_4 = H_4 + 1000):
#   compute kernel launched at b+100, runs [b+200, b+500) on stream 7
#   NCCL kernel    launched at b+110, runs [b+400, b+600) on stream 13 (100 us of it exposed)
#   HtoD copy      issued at b+120 (cudaMemcpyAsync), runs [b+650, b+700)
H = [0, 1000, 2000, 3000, 4000, 6000]
B = [0, 1000, 2000, 3000, 5000, 6000]


def _x(cat, name, ts, dur, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0 if cat in ("kernel", "gpu_memcpy") else 100,
            "tid": 7 if cat in ("kernel", "gpu_memcpy") else 1, "ts": ts, "dur": dur, "args": args}


def _trace(tmp_path):
    ev, corr = [], 1
    for i, (h, b) in enumerate(zip(H, B)):
        end = (H[i + 1] if i + 1 < len(H) else h + 1000) - 100
        ev.append(_x("user_annotation", f"ProfilerStep#{10 + i}", h, end - h))
        for lt, cat, name, gs, ge, stream, call in (
                (100, "kernel", "void gemm_kernel<float>(float*)", 200, 500, 7, "cudaLaunchKernel"),
                (110, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)", 400, 600, 13, "cudaLaunchKernel"),
                (120, "gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 650, 700, 7, "cudaMemcpyAsync")):
            ev.append(_x("cuda_runtime", call, b + lt, 5, correlation=corr))
            ev.append(_x(cat, name, b + gs, ge - gs, correlation=corr, device=0, stream=stream, bytes=1024))
            corr += 1
    ev.append(_x("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 4000, 1000))
    p = tmp_path / "steps.json"
    p.write_text(json.dumps({"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}]}))
    return p


def test_generated_steps_split_and_outlier(tmp_path):
    a = analyze_timeline([read_timeline(_trace(tmp_path), host_calls="sync")])
    s = a.steps.sort("index")
    assert s.get_column("step").to_list() == [f"ProfilerStep#{10 + i}" for i in range(6)]
    assert set(s.get_column("placed_by")) == {"launch"}
    # windows tile from each step's first GPU start (b+200); the last ends at its own last end (b+700)
    w0 = [b + 200 for b in B]
    want_len = [w0[i + 1] - w0[i] for i in range(5)] + [500]
    assert [round(x * 1e6) for x in s.get_column("step_s")] == want_len
    for r, length in zip(s.iter_rows(named=True), want_len):
        us = {k: round(r[k] * 1e6) for k in ("compute_s", "comm_s", "comm_exposed_s", "copy_s", "idle_s", "dataloader_s")}
        assert us["compute_s"] == 300 and us["comm_s"] == 200 and us["comm_exposed_s"] == 100 and us["copy_s"] == 50
        assert us["idle_s"] == length - 450
        assert us["compute_s"] + us["comm_exposed_s"] + us["copy_s"] + us["idle_s"] == length
        # the loader ran 4000-5000 us, inside step 3's window [3200, 5200) where the GPU idled from 3700
        assert us["dataloader_s"] == (1000 if r["step"] == "ProfilerStep#13" else 0)
        assert r["activities"] == 3
    # median 1000 us, MAD 0 -> threshold 1000 + 3 x 10 us: only the 2000 us step; the last is not judged
    assert s.get_column("outlier").to_list() == [False, False, False, True, False, None]


def test_ranges_sum_the_work_launched_inside_them(tmp_path):
    """ProfilerStep#10..#15 are one phase, ProfilerStep#*: 6 ranges, 18 activities launched inside,
    kernel time 6 x (300 + 200) us, GPU union 6 x ([b+200, b+600) + [b+650, b+700)) = 6 x 450 us.
    The data-loader range launched nothing: no row."""
    a = analyze_timeline([read_timeline(_trace(tmp_path), host_calls="sync")])
    r = a.ranges
    assert r.get_column("range").to_list() == ["ProfilerStep#*"]
    row = r.row(0, named=True)
    assert row["count"] == 6 and row["activities"] == 18 and row["kind"] == "annotation"
    assert round(row["kernel_s"] * 1e6) == 6 * 500 and round(row["gpu_s"] * 1e6) == 6 * 450
    assert row["ranges_dropped"] == 0


def test_outlier_rule_is_median_plus_three_robust_sigmas():
    import polars as pl

    from ridgeline.analyzer.timeline.steps import flag_outliers

    vals = [100.0, 102.0, 98.0, 101.0, 99.0, 150.0, 300.0]  # the last (300) is not judged, nor in the median
    judged = np.array(vals[:-1])
    med = np.median(judged)
    threshold = med + 3 * max(1.4826 * np.median(np.abs(judged - med)), 0.01 * med)
    df = pl.DataFrame({"source": ["a"] * 7, "device": [0] * 7, "index": list(range(7)), "step_s": vals})
    got = flag_outliers(df).get_column("outlier").to_list()
    assert got == [v > threshold for v in vals[:-1]] + [None]
    assert got == [False] * 5 + [True, None]
    two = pl.DataFrame({"source": ["a"] * 3, "device": [0] * 3, "index": [0, 1, 2], "step_s": [1.0, 9.0, 1.0]})
    assert flag_outliers(two).get_column("outlier").to_list() == [False, False, None]  # too few steps to judge


def _run(capsys, *args):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return exc.value.code, out.out


def test_generated_steps_in_json_and_terminal(tmp_path, capsys):
    path = _trace(tmp_path)
    _code, out = _run(capsys, "analyze", path, "--format", "json")
    steps = json.loads(out)["timeline"]["steps"]
    assert len(steps) == 6 and steps[3]["outlier"] is True and steps[5]["outlier"] is None
    _code, out = _run(capsys, "analyze", path)
    assert "6 steps, median 1 ms" in out and "outlier step ProfilerStep#13" in out and "data-loader stall" in out
    _run(capsys, "report", path, "-o", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<h3 id="steps">' in page and page.count("<td>ProfilerStep#") == 6 and "<td>outlier</td>" in page


def test_no_step_ranges_no_steps(tmp_path):
    ev = [_x("kernel", "k", 10, 5, device=0, stream=7, correlation=1), _x("cuda_runtime", "cudaLaunchKernel", 1, 2, correlation=1),
          _x("cpu_op", "Optimizer.step#SGD.step", 0, 20)]  # an optimizer step is not a training step
    p = tmp_path / "t.json"
    p.write_text(json.dumps({"traceEvents": ev}))
    assert analyze_timeline([read_timeline(p, host_calls="sync")]).steps.height == 0


def test_nvtx_step_ranges_from_an_nsys_export(tmp_path):
    """NVTX push/pop ranges named like steps (eventType 59) in a minimal nsys sqlite export; an
    operator range (aten::mm) is no step. No launch records: work is placed by its GPU start."""
    p = tmp_path / "n.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)")
    con.executemany("INSERT INTO StringIds VALUES (?, ?)", [(1, "void k<int>(int)"), (2, "iteration 1")])
    con.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
                   correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER, gridX INTEGER,
                   gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER)""")
    con.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, 1, 1, 1, 1, 1, 1, 32, 1, 1)",
                    [(100, 400, 1), (1100, 1300, 2), (2100, 2200, 3)])
    con.execute("""CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER,
                   globalTid INTEGER)""")
    con.executemany("INSERT INTO NVTX_EVENTS VALUES (?, ?, ?, ?, ?, 281474976710657)", [
        (0, 900, 59, "iteration 0", None), (1000, 1900, 59, None, 2), (2000, 2900, 60, "iteration 2", None),
        (50, 60, 59, "aten::mm", None), (5, None, 34, "a mark", None)])
    con.commit()
    con.close()
    s = analyze_timeline([read_timeline(p, host_calls="sync")]).steps
    assert s.get_column("step").to_list() == ["iteration 0", "iteration 1", "iteration 2"]
    assert set(s.get_column("placed_by")) == {"gpu time"}
    assert [round(x * 1e9) for x in s.get_column("step_s")] == [1000, 1000, 100]
    assert [round(x * 1e9) for x in s.get_column("compute_s")] == [300, 200, 100]


@pytest.mark.skipif(not HTA_RANK0.is_file(), reason="../shared/samples is absent")
def test_real_profiler_steps_match_the_trace():
    """Each step's activities = the GPU events whose launch call (same correlation id) lies in the
    step's ProfilerStep range, counted here from the raw events; the split adds up per step."""
    raw = json.load(gzip.open(HTA_RANK0))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"], e["name"]) for e in raw
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    calls = {e["args"]["correlation"]: e["ts"] for e in raw if e.get("cat") in ("cuda_runtime", "cuda_driver")
             and isinstance(e.get("args"), dict) and "correlation" in e["args"]}
    want = {name: 0 for _s, _e, name in steps}
    firsts = {}
    for e in raw:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e.get("ph") == "X":
            t = calls.get(e["args"].get("correlation"), e["ts"])
            for s0, s1, name in steps:
                if s0 <= t < s1:
                    want[name] += 1
                    firsts[name] = min(firsts.get(name, e["ts"]), e["ts"])
    a = analyze_timeline([read_timeline(HTA_RANK0, host_calls="sync")])
    s = a.steps.sort("index")
    assert dict(zip(s.get_column("step"), s.get_column("activities"))) == want
    assert [round(x / 1000) for x in s.get_column("start_ns")] == [round(firsts[n]) for _a, _b, n in steps]
    total = s.get_column("compute_s") + s.get_column("comm_exposed_s") + s.get_column("copy_s") + s.get_column("idle_s")
    assert np.allclose(total.to_numpy(), s.get_column("step_s").to_numpy(), atol=1e-9)
    # the NCCL SendRecv kernels are communication: some of every step's communication is exposed
    assert (s.get_column("comm_s") > 0).all() and (s.get_column("comm_exposed_s") <= s.get_column("comm_s")).all()


# --- fusion -----------------------------------------------------------------------------------
def _kernels(tmp_path, seq):
    """seq: (name, start_us, dur_us) on one stream, each launched 1 us before it starts (launch call 3 us)."""
    ev = []
    for i, (name, ts, dur) in enumerate(seq, 1):
        ev.append(_x("kernel", name, ts, dur, device=0, stream=7, correlation=i))
        ev.append(_x("cuda_runtime", "cudaLaunchKernel", ts - 1, 3, correlation=i))
    p = tmp_path / "f.json"
    p.write_text(json.dumps({"traceEvents": ev}))
    return read_timeline(p, host_calls="sync")


def test_fusion_finds_the_repeated_triple(tmp_path):
    """A(5) +2 B(3) +2 C(4), ten times, 200 us apart (> the 50 us gap: each triple is its own run),
    and one long kernel: one candidate, A -> B -> C x10, 2 x 2 us idle inside each occurrence."""
    seq, t = [], 0
    for _ in range(10):
        seq += [("void a_kernel<1>()", t, 5), ("void b_kernel<2>()", t + 7, 3), ("void c_kernel<3>()", t + 12, 4)]
        t += 200
    seq.append(("void long_kernel()", t, 500))
    tl = _kernels(tmp_path, seq)
    f = fusion_candidates(tl.activities, tl.api, "f")
    assert f.height == 1  # A -> B and B -> C lie inside A -> B -> C and occur no more often
    r = f.row(0, named=True)
    assert r["n"] == 3 and r["count"] == 10 and r["names"] == ["void a_kernel<1>()", "void b_kernel<2>()", "void c_kernel<3>()"]
    assert r["span_s"] == pytest.approx(10 * 16e-6) and r["kernel_s"] == pytest.approx(10 * 12e-6)
    assert r["gap_s"] == pytest.approx(10 * 4e-6)
    assert r["launch_host_s"] == pytest.approx(10 * 2 * 3e-6)  # two launches saved x the 3 us median call


def test_fusion_ignores_long_kernels_and_long_gaps(tmp_path):
    seq = []
    for i in range(10):  # pairs separated by 60 us (> 50 us) or with a 100 us kernel: no run of 2
        seq += [("void a()", i * 400, 5), ("void b()", i * 400 + 65, 5), ("void c()", i * 400 + 200, 100),
                ("void d()", i * 400 + 301, 5)]
    tl = _kernels(tmp_path, seq)
    f = fusion_candidates(tl.activities, tl.api, "f")
    assert "void c()" not in {n for names in f.get_column("names").to_list() for n in names}
    assert not any(names[:2] == ["void a()", "void b()"] for names in f.get_column("names").to_list())


def test_fusion_counts_only_device_idle_and_no_span_past_the_capture(tmp_path):
    """Issue 32 item 6: four streams run A(10) +5 B(10) +5, three times, at the same moments. A
    gap of one stream is idle only where no other stream works; the occurrences on the four
    streams cover the same time once. Device idle: 5 us inside each A -> B, 5 us between: 25 us of
    the 85 us capture (the old sum: 4 x 85 us of span, 4 x 25 us of "idle")."""
    ev, corr = [], 0
    for stream in (7, 8, 9, 10):
        for rep in range(3):
            for name, t in (("void a_kernel()", 30 * rep), ("void b_kernel()", 30 * rep + 15)):
                corr += 1
                ev.append(_x("kernel", name, t, 10, device=0, stream=stream, correlation=corr))
    p = tmp_path / "streams.json"
    p.write_text(json.dumps({"traceEvents": ev}))
    a = analyze_timeline([read_timeline(p, host_calls="sync")])
    dev = a.devices.row(0, named=True)
    assert dev["capture_s"] == pytest.approx(85e-6) and dev["idle_s"] == pytest.approx(25e-6)
    f = a.fusion
    assert f.height >= 1
    for r in f.iter_rows(named=True):
        assert r["span_s"] <= dev["capture_s"] + 1e-12, r
        assert r["gap_s"] <= dev["idle_s"] + 1e-12, r
        assert r["gap_s"] <= r["span_s"] - r["kernel_s"] + 1e-12 and r["kernel_s"] <= r["span_s"] + 1e-12, r
    best = f.sort("gap_s", descending=True).row(0, named=True)
    assert best["gap_s"] == pytest.approx(25e-6) and best["span_s"] == pytest.approx(85e-6)


def test_overlapping_occurrences_count_once():
    pos = [0, 1, 2, 3, 4, 5]  # A A A A A A A: "A A" starts everywhere, fits 3 times
    assert _non_overlapping(pos, 2) == [0, 2, 4]
    assert _non_overlapping([0, 5, 9], 3) == [0, 5, 9]


@pytest.mark.skipif(not HTA_RANK0.is_file(), reason="../shared/samples is absent")
def test_kernel_table_keeps_template_instantiations_apart():
    """Item 7: one row per full name; the labels tell rows apart; no row exceeds its name's time."""
    import polars as pl

    tl = read_timeline(HTA_RANK0, host_calls="sync")
    a = analyze_timeline([tl])
    k = a.kernel_shares
    kernels = tl.activities.filter(pl.col("kind") == "kernel")
    assert k.height == kernels.get_column("name").n_unique()
    assert k.get_column("kernel_label").n_unique() == k.height
    assert int(k.get_column("launches").sum()) == kernels.height
    per_name = kernels.group_by("name").agg(((pl.col("end_ns") - pl.col("start_ns")).sum() / 1e9).alias("t"))
    joined = k.join(per_name, on="name")
    assert np.allclose(joined.get_column("total_s").to_numpy(), joined.get_column("t").to_numpy())


# --- nested or overlapping step ranges (issue 35, class 7): the innermost owns, none vanishes ----
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from ridgeline.analyzer.timeline.steps import owner_segments  # noqa: E402


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40)), min_size=1, max_size=8),
       st.lists(st.integers(-5, 110), max_size=30))
def test_each_launch_belongs_to_the_innermost_open_range(spans, launches):
    import bisect

    ranges = sorted((s, s + d) for s, d in spans)
    starts, ends = [s for s, _e in ranges], [e for _s, e in ranges]
    seg_s, owner = owner_segments(starts, ends)
    for t in launches:
        k = bisect.bisect_right(seg_s, t) - 1
        got = owner[k] if k >= 0 else -1
        open_ = [(s, i) for i, (s, e) in enumerate(ranges) if s <= t < e]
        assert got == (max(open_)[1] if open_ else -1)


def test_a_nested_profiler_step_keeps_its_work_and_the_outer_step_its_own(tmp_path):
    # ProfilerStep#1 [0, 1000) holds ProfilerStep#2 [300, 600): kernels launched at 100 (outer),
    # 400 (nested) and 800 (outer again, after the nested one ended)
    ev, corr = [_x("user_annotation", "ProfilerStep#1", 0, 1000), _x("user_annotation", "ProfilerStep#2", 300, 300)], 1
    for launch in (100, 400, 800):
        ev.append(_x("cuda_runtime", "cudaLaunchKernel", launch, 5, correlation=corr))
        ev.append(_x("kernel", "void gemm_kernel<float>(float*)", launch + 50, 100, correlation=corr, device=0, stream=7))
        corr += 1
    p = tmp_path / "nested.json"
    p.write_text(json.dumps({"traceEvents": ev, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}]}))
    s = analyze_timeline([read_timeline(p, host_calls="sync")]).steps.sort("index")
    got = dict(zip(s.get_column("step").to_list(), s.get_column("activities").to_list()))
    assert got == {"ProfilerStep#1": 2, "ProfilerStep#2": 1}  # all three placed; none vanished
