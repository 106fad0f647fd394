"""Idle time by cause (ridgeline.analyzer.timeline.idle_causes) and exact Kineto nanoseconds.

The generated capture below (written by the test as a Kineto trace and as an nsys sqlite export)
has one gap per cause, each known by construction; the real traces in ../shared/samples are
checked against a split computed here, in plain Python, from the trace's own records.
"""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from pathlib import Path

import pytest

from ridgeline.analyzer.timeline.idle_causes import gap_causes, NO_LAUNCH, queue_depths
from ridgeline.analyzer.timeline.busy import analyze_one
from ridgeline.parsers.timeline.reader import read_timeline

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "samples"
GAP = 10_000  # the default launch gap, ns

# device 0, stream 7; ns relative to the capture's origin: (start, end, correlation)
KERNELS = [
    (0, 10_000, 1),
    (65_000, 75_000, 2),      # gap A [10000, 65000): launched at 50000 -> host 40000, launch 10000, queued 5000
    (175_000, 185_000, 3),    # gap B [75000, 175000): launched at 20000 (before) -> queued 100000
    (250_000, 260_000, 4),    # gap C [185000, 250000): sync until 230000 (45000), launch call at 240000 ->
    #                           host 10000, launch 10000
    (263_000, 273_000, 5),    # gap D: 3000 <= 10 us -> launch 3000
    (300_000, 310_000, 99),   # gap E [273000, 300000): correlation 99 has no host call -> other 27000
]
# host calls: (name, start, end, correlation)
HOST = [
    ("cudaLaunchKernel", -5_000, -4_000, 1),
    ("cudaLaunchKernel", 20_000, 21_000, 3),
    ("cudaLaunchKernel", 50_000, 51_000, 2),
    ("cudaDeviceSynchronize", 80_000, 120_000, 0),  # during queued gap B: the work was launched, not counted
    ("cudaStreamSynchronize", 180_000, 230_000, 0),
    ("cudaLaunchKernel", 200_000, 201_000, 5),
    ("cudaLaunchKernel", 240_000, 241_000, 4),
]
# what the CPU did (Kineto only): the host-late windows are [10000, 50000) (gap A) and [185000, 240000)
# (gap C, sync included): 95000 ns. aten::to covers 40000 of A with aten::copy_ (25000) inside it: own
# time 15000 and 25000; "load" covers 7000 of C; the step annotation spans everything and is left out.
CPU = [
    ("user_annotation", "ProfilerStep#1", -10_000, 320_000),
    ("cpu_op", "aten::to", 0, 60_000),
    ("cpu_op", "aten::copy_", 20_000, 45_000),
    ("user_annotation", "load", 232_000, 239_000),
]
CPU_TEXT = "aten::copy_ (cpu_op) 26%, aten::to (cpu_op) 16%, load (annotation) 7%"
EXPECTED_NS = {"idle_launch_s": 10_000 + 10_000 + 3_000, "idle_sync_s": 45_000, "idle_host_s": 40_000 + 10_000,
               "idle_queued_s": 5_000 + 100_000, "idle_other_s": 27_000}
IDLE_NS = 55_000 + 100_000 + 65_000 + 3_000 + 27_000
# start - launch of K1..K5: 5000, 15000, 155000, 10000, 63000; queue depth at each launch (in launch
# order K1, K3, K2, K5, K4): 1, 1, 2, 1, 2
DELAY_MEDIAN_NS, DELAY_P90_NS = 15_000, 63_000 + 0.6 * (155_000 - 63_000)  # numpy's linear quantile
BASE_NS = 1_700_000_000_123_456_789  # an epoch-microsecond Kineto clock with nanosecond decimals
KERNEL = "void k<float>(float *)"


def _ts(ns: int) -> str:
    v = BASE_NS + ns
    return f"{v // 1000}.{v % 1000:03d}"


def write_kineto(path: Path) -> Path:
    events = []
    for s, e, corr in KERNELS:
        events.append({"ph": "X", "cat": "kernel", "name": KERNEL, "pid": 0, "tid": 7, "ts": f"@{s}",
                       "dur": (e - s) / 1000, "args": {"device": 0, "stream": 7, "correlation": corr}})
    for name, s, e, corr in HOST:
        events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 42, "tid": 42, "ts": f"@{s}",
                       "dur": (e - s) / 1000, "args": {"correlation": corr}})
    for cat, name, s, e in CPU:
        events.append({"ph": "X", "cat": cat, "name": name, "pid": 42, "tid": 42, "ts": f"@{s}", "dur": (e - s) / 1000,
                       "args": {}})
    text = json.dumps({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": events})
    # the ts as Kineto writes them: bare numbers with three decimals (json.dumps would round a float)
    path.write_text(re.sub(r'"@(-?[0-9]+)"', lambda m: _ts(int(m.group(1))), text))
    return path


def write_nsys(path: Path) -> Path:
    con = sqlite3.connect(path)
    c = con.cursor()
    c.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    names = {KERNEL: 1, "cudaLaunchKernel_v7000": 2, "cudaStreamSynchronize_v3020": 3, "cudaDeviceSynchronize_v3020": 4}
    c.executemany("INSERT INTO StringIds VALUES (?, ?)", [(i, v) for v, i in names.items()])
    c.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
                 streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER, shortName INTEGER,
                 gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER)""")
    c.execute("""CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
                 correlationId INTEGER, nameId INTEGER)""")
    t0, pid = 10_000_000, 42 * 16777216
    for s, e, corr in KERNELS:
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,0,7,?,?,1,1,1,1,1,32,1,1)", (t0 + s, t0 + e, corr, pid))
    for name, s, e, corr in HOST:
        nid = next(i for n, i in names.items() if n.startswith(name + "_"))
        c.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?)", (t0 + s, t0 + e, pid + 42, corr, nid))
    con.commit()
    con.close()
    return path


@pytest.fixture(params=["kineto", "nsys"])
def capture(request, tmp_path):
    return write_kineto(tmp_path / "t.json") if request.param == "kineto" else write_nsys(tmp_path / "t.sqlite")


def test_each_cause_is_known_by_construction(capture):
    a = analyze_one(read_timeline(capture, host_calls="sync"))
    d = a.devices.row(0, named=True)
    assert round(d["idle_s"] * 1e9) == IDLE_NS
    for key, ns in EXPECTED_NS.items():
        assert d[key] == pytest.approx(ns / 1e9, abs=1e-12), key
    assert d["launch_records"] == 5  # K6 has no launch call
    assert d["launch_delay_median_s"] == pytest.approx(DELAY_MEDIAN_NS / 1e9, abs=1e-12)
    assert d["launch_delay_p90_s"] == pytest.approx(DELAY_P90_NS / 1e9, abs=1e-12)
    assert d["queue_depth_median"] == 1 and d["queue_depth_max"] == 2
    assert d["idle_host_cpu"] == (CPU_TEXT if capture.suffix == ".json" else None)  # nsys: NVTX is not read
    s = a.streams.row(0, named=True)
    assert (s["stream"], s["activities"], s["launch_records"], s["queue_depth_max"]) == (7, 6, 5, 2)


def test_rl401_names_each_cause_and_its_remedy(capture):
    from ridgeline.pipeline import analyze_paths

    res = analyze_paths([capture])
    f = next(f for f in res.findings if f.code == "RL401")
    # queued is the largest cause (105 of 250 us): its remedy comes first and never says "feed the GPU"
    assert "queued 105 us" in f.message and "host late 50 us" in f.message and "host synchronizing 45 us" in f.message
    assert f.remedy.index("queued ->") < f.remedy.index("host late ->") and "feed the GPU" not in f.remedy
    assert "other 27 us" in f.message and "launch gaps 23 us" in f.message
    # the word is the table's column: one name per cause in every view (issue 37 item 5)
    from ridgeline.render.timeline.postmortem import timeline_lines

    assert " other" in "\n".join(timeline_lines(res)) and "unknown" not in f.message
    assert (CPU_TEXT in f.remedy) is (capture.suffix == ".json")


def test_gap_causes_resolve_overlaps_in_time_order():
    import numpy as np

    none = np.empty(0, np.int64)
    sync_s, sync_e = np.array([0, 150], np.int64), np.array([40, 400], np.int64)
    a = np.array([10, 100, 1000, 2000], np.int64)
    b = np.array([15, 300, 1100, 2100], np.int64)
    launch = np.array([0, 250, 500, NO_LAUNCH], np.int64)
    got = gap_causes(a, b, launch, sync_s, sync_e, 10)
    # gap [100, 300): sync from 150 to the launch at 250 (100), host 100..150 (50), launch 10, queued 40;
    # gap [1000, 1100): launched at 500, before -> queued 100; gap [2000, 2100): no launch -> other 100
    assert got == {"launch": 5 + 10, "sync": 100, "host": 50, "queued": 40 + 100, "other": 100}
    assert sum(got.values()) == int((b - a).sum())
    assert gap_causes(none, none, none, sync_s, sync_e, 10) == dict.fromkeys(got, 0)


def test_queue_depth_never_counts_work_that_started_before_its_launch_call():
    # third activity: its start (5) precedes its launch record (7): clock skew, never queued
    assert queue_depths([0, 1, 7], [10, 12, 5]).to_list() == [1, 2, 2]


# ---------------------------------------------------------------- exact Kineto nanoseconds
def test_kineto_epoch_microseconds_keep_every_nanosecond(tmp_path):
    acts = read_timeline(write_kineto(tmp_path / "t.json")).activities.sort("start_ns")
    assert [s - BASE_NS for s in acts.get_column("start_ns").to_list()] == [s for s, _e, _c in KERNELS]
    assert [e - BASE_NS for e in acts.get_column("end_ns").to_list()] == [e for _s, e, _c in KERNELS]
    assert acts.get_column("launch_ns").to_list()[:5] == [BASE_NS + n for n in (-5_000, 50_000, 20_000, 240_000, 200_000)]
    # the float64 reading this replaces: the same text through float loses the nanoseconds
    assert round(float(_ts(0)) * 1000) != BASE_NS


def test_kineto_short_kernels_at_epoch_microseconds_are_counted_exactly(tmp_path):
    """Kernels of 9.999 us and gaps of 0.001 us: a float64 reading (256 ns steps at 1.7e15 us) would
    call some of them 10 us and shift their medians."""
    from ridgeline.analyzer.timeline.busy import analyze_one

    events, t = [], 0
    for i in range(200):
        d = 9_999 if i % 2 else 10_001
        events.append({"ph": "X", "cat": "kernel", "name": KERNEL, "pid": 0, "tid": 7, "ts": f"@{t}", "dur": d / 1000,
                       "args": {"device": 0, "stream": 7, "correlation": i}})
        t += d + 1
    text = json.dumps({"traceEvents": events})
    p = tmp_path / "short.json"
    p.write_text(re.sub(r'"@(-?[0-9]+)"', lambda m: _ts(int(m.group(1))), text))
    d = analyze_one(read_timeline(p)).devices.row(0, named=True)
    assert d["short_kernels"] == 100 and d["median_short_kernel_s"] == pytest.approx(9.999e-6, abs=1e-15)
    assert d["idle_s"] == pytest.approx(199e-9, abs=1e-15) and d["idle_launch_s"] == pytest.approx(199e-9, abs=1e-15)


# ---------------------------------------------------------------- real traces
def _real():
    out = []
    for sub, pattern in (("kineto", "*.json*"), ("nsys", "*.sqlite")):
        folder = SHARED / sub
        if folder.exists():
            out += sorted(folder.glob(pattern))
    return out


@pytest.mark.parametrize("path", _real(), ids=lambda p: p.name)
def test_real_traces_causes_sum_to_idle_within_a_nanosecond(path):
    d = analyze_one(read_timeline(path, host_calls="sync")).devices
    for r in d.iter_rows(named=True):
        parts = [r[k] for k in EXPECTED_NS]
        assert min(parts) >= 0
        assert abs(sum(parts) - r["idle_s"]) <= 1e-9 + 1e-15 * r["idle_s"], r["device"]


def _hand_split(path: Path):
    """The idle split of device 0 from the Kineto trace's own records, in plain Python: merge the GPU
    intervals, take each gap's next work and its cudaLaunch* call by correlation id, classify."""
    doc = json.loads(gzip.open(path).read() if path.suffix == ".gz" else path.read_bytes())
    ev = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    gpu = [(e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000, e["args"].get("correlation")) for e in ev
           if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e["args"].get("device", e.get("pid")) == 0]
    assert all(isinstance(s, int) for s, _e, _c in gpu)  # this trace's ts are whole us: exact ints here
    launch = {}
    for e in ev:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("args", {}).get("correlation") is not None:
            c = e["args"]["correlation"]
            launch[c] = min(launch.get(c, e["ts"] * 1000), e["ts"] * 1000)
    calls = sorted((e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000) for e in ev if e.get("cat") == "cuda_runtime"
                   and re.fullmatch(r"cuda(Device|Stream|Event)Synchronize|cudaMemcpy", e["name"]))
    sync = []  # merged: calls on several threads may overlap
    for s, e in calls:
        if sync and s <= sync[-1][1]:
            sync[-1] = (sync[-1][0], max(sync[-1][1], e))
        else:
            sync.append((s, e))
    gpu.sort(key=lambda g: (g[0], g[1]))
    first_launch = {}
    for s, _e, c in gpu:
        if c in launch:
            first_launch[s] = min(first_launch.get(s, launch[c]), launch[c])
    out = dict.fromkeys(("launch", "sync", "host", "queued", "other"), 0)
    end = gpu[0][1]
    for s, e, _c in gpu[1:]:
        if s > end:  # a gap [end, s)
            n = s - end
            L = first_launch.get(s)
            if n <= GAP:
                out["launch"] += n
            else:
                stop = s if L is None else min(max(L, end), s)
                covered = sum(max(0, min(se, stop) - max(ss, end)) for ss, se in sync)
                out["sync"] += covered
                if L is None:
                    out["other"] += stop - end - covered
                else:
                    out["host"] += stop - end - covered
                    tail = s - stop
                    lt = min(tail, GAP) if L > end else 0
                    out["launch"] += lt
                    out["queued"] += tail - lt
        end = max(end, e)
    return out


def test_the_16_rank_a100_trace_is_mostly_queued_as_its_records_say():
    path = SHARED / "kineto" / "hta-a100sxm80-16rank-negative-queue-rank0.json.gz"
    if not path.exists():
        pytest.skip("sample not available")
    want = _hand_split(path)
    d = analyze_one(read_timeline(path, host_calls="sync")).devices.row(0, named=True)
    for cause, ns in want.items():
        assert round(d[f"idle_{cause}_s"] * 1e9) == ns, cause
    # the host was far ahead: queued work is most of the idle time, a late host a small part
    assert want["queued"] > 0.5 * sum(want.values()) and want["host"] < 0.05 * sum(want.values())
    assert d["launch_delay_median_s"] > 0.1 and d["queue_depth_median"] > 100
