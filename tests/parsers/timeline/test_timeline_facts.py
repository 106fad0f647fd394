"""Timeline facts (issue 20, item 9): the Trace Event array form, one list of every input format,
one host-call flag per input shared by legend and rules, the GPU vendor (ROCm traces), and the
nsys GUI kernel summary / cuda_kern_exec_sum CSVs with strict units.

Fixtures: fixtures/timeline/generate.py (capture.rocm.kineto.json, capture.legacy-autograd.json:
built from the documented formats, see its docstring); real samples in ../shared/samples (skipped
when absent). Expected numbers come from the generator's construction or from the files' own
columns (Instances x Avg = Total Time, Count x KAvg = the kernel summary's total).
"""

from __future__ import annotations

import gzip
import importlib.util
import inspect
import json
import re
from pathlib import Path

import pytest

from ridgeline.errors import InputError
from ridgeline.pipeline import EXPECTED_FORMATS, analyze_paths
from ridgeline.parsers.timeline.reader import read_timeline

ROOT = Path(__file__).resolve().parents[3]
FIX = ROOT / "fixtures" / "timeline"
SHARED = ROOT.parent / "shared" / "samples"

_spec = importlib.util.spec_from_file_location("timeline_generate", FIX / "generate.py")
GEN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(GEN)

WITH_HOST = ["capture.kineto.json", "capture.rocm.kineto.json", "capture-2022.sqlite", "capture-2024.sqlite"]
NO_HOST = ["capture_cuda_gpu_trace.csv", "capture_cuda_gpu_trace_gui.csv", "capture.legacy-autograd.json"]
NVIDIA_WORDS = ("CUDA graph", "cudaDeviceSynchronize", "cudaMemcpy", "ncu ", "Nsight Compute", "--set roofline")


def run(capsys, *args):
    from ridgeline.cli import main

    with pytest.raises(SystemExit) as exc:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return exc.value.code, out.out, out.err


def device0(result):
    d = result.timeline.devices
    return d.filter(d["device"] == 0).row(0, named=True)


def sample(sub, name):
    p = SHARED / sub / name
    if not p.exists():
        pytest.skip(f"{name} not available")
    return p


# ---------------------------------------------------------------- a. the array form, one format list
def test_legacy_autograd_array_form_is_read_with_the_constructed_figures():
    res = analyze_paths([FIX / "capture.legacy-autograd.json"], run_rules=False)
    d = device0(res)
    kernels = [a for a in GEN.ACTIVITIES if a[1] == "kernel" and a[2] == 0]
    assert d["kernels"] == len(kernels) == 5
    assert d["capture_s"] == pytest.approx((max(a[5] for a in kernels) - min(a[4] for a in kernels)) / 1e9, abs=1e-12)
    assert d["busy_s"] == pytest.approx(GEN.EXPECTED["kernel_busy_s"], abs=1e-12)  # no copies in this format
    assert d["host_api"] is None and d["idle_sync_s"] == 0  # no runtime calls recorded
    assert any("legacy autograd profiler" in n for n in res.notes)


@pytest.mark.parametrize("variant", ["gzip", "no-closing-bracket", "gzip-no-closing-bracket"])
def test_array_form_variants_read_the_same(variant, tmp_path):
    text = (FIX / "capture.legacy-autograd.json").read_text().rstrip()
    assert text.endswith("]")
    if "no-closing" in variant:  # the Trace Event format makes the closing bracket optional
        text = text[:-1].rstrip() + ",\n"
    data = text.encode()
    p = tmp_path / ("t.json.gz" if "gzip" in variant else "t.json")
    p.write_bytes(gzip.compress(data) if "gzip" in variant else data)
    want = read_timeline(FIX / "capture.legacy-autograd.json").activities
    got = read_timeline(p).activities
    assert got.drop("source").equals(want.drop("source"))


def test_every_detector_format_is_in_the_one_format_table():
    from ridgeline.parsers.formats import FORMATS
    from ridgeline.parsers.timeline.nsys_csv import STATS_REPORTS
    from ridgeline.parsers.telemetry.reader import detect_telemetry_format

    telemetry = set(re.findall(r'return "([a-z-]+)"', inspect.getsource(detect_telemetry_format)))
    assert {"dcgm-dmon", "dcgm-exporter", "telemetry-parquet"} <= telemetry  # the scan finds the returns
    ids = {f"telemetry:{t}" for t in telemetry}
    ids |= {"timeline:nsys-sqlite", "timeline:kineto", "timeline:nsys-stats:cuda_gpu_trace"}
    ids |= {f"timeline:nsys-stats:{r}" for r in STATS_REPORTS}
    ids |= {"ncu:raw", "ncu:details", "ncu:report"}
    assert ids <= set(FORMATS), sorted(ids - set(FORMATS))
    for _family, what in FORMATS.values():
        assert what in EXPECTED_FORMATS


def test_an_unrecognised_file_lists_every_family(capsys, tmp_path):
    p = tmp_path / "x.txt"
    p.write_text("hello,world\n1,2\n")
    code, _out, err = run(capsys, "analyze", p)
    assert code == 2 and len(err.strip().splitlines()) == 1
    for words in ("Nsight Compute", "Nsight Systems", "PyTorch profiler trace", "cuda_kern_exec_sum", "GPU telemetry"):
        assert words in err


def test_a_gzip_file_that_is_not_a_trace_says_what_is_inside(capsys, tmp_path):
    p = tmp_path / "x.csv.gz"
    p.write_bytes(gzip.compress(b"hello,world\n1,2\n"))
    code, _out, err = run(capsys, "analyze", p)
    assert code == 2 and "gzip-compressed" in err and "decompress it first" in err and "hello,world" in err


# ---------------------------------------------------------------- b. one host-call flag per input
@pytest.mark.parametrize("name", WITH_HOST + NO_HOST)
def test_legend_and_rules_read_the_same_host_call_flag(name, capsys):
    res = analyze_paths([FIX / name])
    d = device0(res)
    has = name in WITH_HOST
    assert bool(d["host_api"]) is has
    code, out, _err = run(capsys, "analyze", FIX / name)
    assert code == 0
    legend = out.split("Timeline:")[1].split("Kernels by")[0]
    assert ("records no host API calls" in legend) is not has
    rl401 = [f for f in res.findings if f.code == "RL401"]
    assert rl401, "the constructed capture is idle 54-72% of the time"
    assert ("host synchronizing" in rl401[0].message) is has
    assert ("records no host calls" in rl401[0].message) is not has
    code, js, _err = run(capsys, "analyze", FIX / name, "--format", "json")
    dev = [x for x in json.loads(js)["timeline"]["devices"] if x["device"] == 0][0]
    assert (dev["host_api"] is not None) is has


def test_real_sqlite_and_kineto_legends_name_their_host_calls(capsys):
    for sub, name in (("nsys", "pipit-a100-nsys2022.2.1-saxpy-mpi.sqlite"),
                      ("kineto", "hta-a100sxm80-16rank-negative-queue-rank0.json.gz")):
        path = SHARED / sub / name
        if not path.exists():
            continue
        code, out, _err = run(capsys, "analyze", path)
        assert code == 0 and "records no host" not in out and "host calls:" in out.replace("\n", " ")


# ---------------------------------------------------------------- c. the vendor
def test_rocm_trace_names_amd_keeps_the_figures_and_counts_hip_syncs(capsys):
    res = analyze_paths([FIX / "capture.rocm.kineto.json"])
    d = device0(res)
    exp = GEN.EXPECTED
    for key in ("capture_s", "busy_s", "kernel_busy_s", "idle_s", "memcpy_busy_s"):
        assert d[key] == pytest.approx(exp[key], abs=1e-12), key  # the same capture as the CUDA trace
    for key, want in GEN.EXPECTED_CAUSES.items():  # hipMemcpyWithStream is the sync, hipMemcpyAsync the launch
        assert d[key] == pytest.approx(want, abs=1e-12), key
    assert d["vendor"] == "amd" and d["device_name"] == GEN.ROCM_GPU
    assert d["htod_s"] == pytest.approx(100e-6, abs=1e-12)  # 'Memcpy HtoD (Host -> Device)' read as HtoD
    code, out, _err = run(capsys, "analyze", FIX / "capture.rocm.kineto.json")
    assert code == 0 and "AMD (ROCm/HIP)" in out and "HIP graphs" in out
    for word in NVIDIA_WORDS:
        assert word not in out, word
    code, js, _err = run(capsys, "analyze", FIX / "capture.rocm.kineto.json", "--format", "json")
    doc = json.loads(js)
    assert {x["vendor"] for x in doc["timeline"]["devices"]} == {"amd"}
    for f in doc["findings"]:
        for word in NVIDIA_WORDS:
            assert word not in f["remedy"] and word not in f["message"], (f["code"], word)


def test_a_long_hip_memcpy_with_stream_is_host_synchronization(tmp_path):
    """A 463 ms hipMemcpyWithStream over a gap between two kernels: the gap is sync time."""
    gap_us = 463_000.0
    events = [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 0.0, "dur": 50.0,
         "args": {"device": 0, "stream": 1, "correlation": 1}},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipMemcpyWithStream", "pid": 9, "tid": 9, "ts": 50.0,
         "dur": gap_us, "args": {"correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 1, "ts": 50.0 + gap_us, "dur": 50.0,
         "args": {"device": 0, "stream": 1, "correlation": 3}},
    ]
    p = tmp_path / "rocm.json"
    p.write_text(json.dumps({"deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X", "warpSize": 64}],
                             "traceEvents": events}))
    res = analyze_paths([p])
    d = device0(res)
    assert d["idle_sync_s"] == pytest.approx(gap_us / 1e6, abs=1e-9) and d["idle_other_s"] == pytest.approx(0, abs=1e-9)
    rl401 = [f for f in res.findings if f.code == "RL401"][0]
    assert "host synchronizing 463 ms" in rl401.message


def test_nvidia_captures_keep_cuda_wording():
    res = analyze_paths([FIX / "capture.kineto.json"])
    assert device0(res)["vendor"] == "nvidia"
    assert "CUDA graphs" in [f for f in res.findings if f.code == "RL401"][0].remedy


def test_an_amd_timeline_is_not_joined_with_an_nvidia_profile():
    import polars as pl

    from ridgeline.analyzer.timeline.busy import analyze_timeline, join_roofline

    tl = analyze_timeline([read_timeline(FIX / "capture.rocm.kineto.json")])
    names = tl.kernel_shares.get_column("short_name").to_list()
    prof = pl.DataFrame({"short_name": names, "duration_s": [1e-3] * len(names)})
    join_roofline(tl, prof)
    assert tl.join is None and any("AMD" in n for n in tl.join_notes)
    nv = analyze_timeline([read_timeline(FIX / "capture.kineto.json")])
    join_roofline(nv, prof)
    assert nv.join is not None and nv.join.height == len(names)


def test_a_join_of_two_gpus_says_so_and_counts_kernel_names_as_the_tables_do():
    """Issue 37 item 7: an RTX 2080 Ti profile joined with an A100 timeline without a word, and
    '3 timeline only' (distinct short names) beside a table of 102 kernel names."""
    import polars as pl

    from ridgeline.analyzer.timeline.busy import analyze_timeline, gpu_mismatch, join_roofline
    from ridgeline.render.timeline.postmortem import timeline_lines

    tl = analyze_timeline([read_timeline(FIX / "capture.kineto.json")])
    k = tl.kernel_shares
    prof = pl.DataFrame({"kernel_name": ["only_profiled"], "short_name": ["only_profiled"], "duration_s": [1e-3],
                         "device_name": ["NVIDIA GeForce RTX 2080 Ti"]})
    tl.devices = tl.devices.with_columns(pl.lit("NVIDIA A100-SXM4-80GB").alias("device_name"))
    join_roofline(tl, prof)
    assert tl.unmatched_counts == {"profile": 1, "timeline": k.get_column("name").n_unique(), "ambiguous": 0}
    text = " ".join(" ".join(timeline_lines(tl_result(tl))).split())
    assert f"{k.get_column('name').n_unique()} timeline only (kernel names)" in text
    assert "Different GPUs: the profile is from NVIDIA GeForce RTX 2080 Ti, the timeline from NVIDIA A100-SXM4-80GB" in text
    assert any("different GPUs" in n for n in tl.join_notes)
    # one model under two spellings is one GPU; an unnamed side is no evidence of a difference
    same = pl.DataFrame({"device_name": ["Tesla V100-SXM2-16GB"]})
    assert gpu_mismatch(same, pl.DataFrame({"device_name": ["NVIDIA V100-SXM2-16GB"]})) == ""
    assert gpu_mismatch(same, pl.DataFrame({"device_name": [None]}, schema={"device_name": pl.String})) == ""


def tl_result(tl):
    import types

    return types.SimpleNamespace(timeline=tl)


# ---------------------------------------------------------------- d. nsys CSVs
def test_gui_kernel_summary_reads_human_units():
    p = sample("nsys", "cclbench-hopper-vllm-moe-EPLBOFF-gui-kernsum-units.csv")
    import polars as pl

    tot = read_timeline(p).totals
    raw = pl.read_csv(p, infer_schema=False)
    assert tot.height == raw.height and set(tot.get_column("report")) == {"cuda_gpu_kern_sum"}
    unit = {"ns": 1e-9, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}

    def secs(cell):
        v, u = cell.split()
        return float(v) * unit[u]

    for row, (total_s, count) in zip(raw.iter_rows(named=True), tot.select("total_s", "count").iter_rows()):
        assert total_s == pytest.approx(secs(row["Total Time"]), rel=1e-12)
        assert count == int(row["Instances"])
        # Total = Instances x Avg, to the rounding of Avg (3 decimals in its own unit)
        avg = secs(row["Avg"])
        assert total_s == pytest.approx(count * avg, abs=count * 0.0005 * unit[row["Avg"].split()[1]] + 1e-3 * total_s)


def test_kern_exec_sum_agrees_with_the_same_captures_kernel_summary():
    ex = sample("nsys", "tornadovm-rtx4090-nsys2024.5.1-gpullama3-nsys-12-llm-fp16_cuda_kern_exec_sum.csv")
    ks = sample("nsys", "tornadovm-rtx4090-nsys2024.5.1-gpullama3-nsys-12-llm-fp16_cuda_gpu_kern_sum.csv")
    got = read_timeline(ex).totals
    kern = got.filter(got["category"] == "kernel")
    want = {n: (t, c) for n, t, c in read_timeline(ks).totals.select("name", "total_s", "count").iter_rows()}
    assert set(kern.get_column("name")) == set(want)
    for name, total_s, count in kern.select("name", "total_s", "count").iter_rows():
        assert count == want[name][1]
        assert total_s == pytest.approx(want[name][0], abs=count * 0.05e-9 + 1e-12)  # KAvg printed to 0.1 ns
    api = got.filter(got["category"] == "api")
    assert api.get_column("name").to_list() == ["cuLaunchKernel"]
    assert api.get_column("count").item() == kern.get_column("count").sum()


def _gui_csv(tmp_path, cell):
    p = tmp_path / "kernsum.csv"
    p.write_text("Time,Total Time,Instances,Avg,Med,Min,Max,StdDev,Name\n"
                 "60.00%,1.500 ms,3,500.000 μs,500.000 μs,400.000 μs,600.000 μs,1.000 μs,kernel_a\n"
                 f"40.00%,{cell},2,500.000 μs,500.000 μs,400.000 μs,600.000 μs,1.000 μs,kernel_b\n")
    return p


def test_gui_kernel_summary_fixture(tmp_path):
    tot = read_timeline(_gui_csv(tmp_path, "1.000 ms")).totals
    assert tot.get_column("total_s").to_list() == pytest.approx([1.5e-3, 1.0e-3], abs=1e-15)
    assert tot.get_column("time_share").to_list() == pytest.approx([0.6, 0.4])


def test_an_unknown_unit_is_an_error_naming_line_and_column(tmp_path, capsys):
    p = _gui_csv(tmp_path, "1.5 min")
    with pytest.raises(InputError) as exc:
        read_timeline(p)
    assert exc.value.line == 3 and exc.value.column == "Total Time" and exc.value.actual == "1.5 min"
    code, _out, err = run(capsys, "analyze", p)
    assert code == 2 and f"{p}:3" in err and "'Total Time'" in err and "Traceback" not in err


def test_a_group_of_devices_shares_the_summed_capture(capsys):
    """RL4xx findings on several devices: the group's share is of the devices' summed capture
    (each device's share is of its own capture), so it never passes 100%."""
    p = sample("nsys", "nsysai-h100x2-nsys2026.2.1-fastvideo-wan-infer-1s-window.sqlite")
    res = analyze_paths([p])
    rl403 = [f for f in res.findings if f.code == "RL403"]
    assert len(rl403) == 2
    caps = {r["device"]: r["capture_s"] for r in res.timeline.devices.iter_rows(named=True)}
    want = sum(f.impact_s for f in rl403) / sum(caps.values())
    code, out, _err = run(capsys, "analyze", p)
    got = re.search(r"RL403 warning\s+2 devices\s+\[up to [^,]+, ([0-9.]+)% of capture time\]", out)
    assert code == 0 and got and float(got.group(1)) == pytest.approx(100 * want, abs=0.05) and want <= 1


@pytest.mark.parametrize("name, torch", [("capture.kineto.json", True), ("capture-2024.sqlite", False),
                                         ("capture.rocm.kineto.json", True)])
def test_pytorch_knobs_only_for_pytorch_programs(name, torch):
    """The fixture's kernels (ns::scale_kernel, gemm_tile_kernel) are not PyTorch's: an nsys capture
    of them gets CUDA API wording; a PyTorch profiler trace is PyTorch by construction."""
    res = analyze_paths([FIX / name])
    assert (device0(res)["framework"] == "pytorch") is torch
    text = " ".join(f.remedy for f in res.findings if f.code.startswith("RL4"))
    assert ("torch.compile" in text) is torch and (".item()" in text) is torch
    if not torch:
        assert "cudaStreamBeginCapture" in text and "cudaMemcpyAsync" in text


def test_pytorch_kernels_mark_an_nsys_capture_as_pytorch():
    from ridgeline.parsers.timeline.common import pytorch_capture
    import polars as pl

    def acts(*names):
        return pl.DataFrame({"kind": ["kernel"] * len(names), "name": list(names)})

    assert pytorch_capture(acts("void at::native::vectorized_elementwise_kernel<4>(int)", "saxpy")) == "pytorch"
    assert pytorch_capture(acts("triton_poi_fused_add_0")) == "pytorch"
    assert pytorch_capture(acts("clover::par_ranged2d_kernel", "saxpy", "my_at::native_lookalike")) is None


def test_a_large_array_form_trace_falls_back_to_the_whole_parse(tmp_path):
    from ridgeline.parsers.timeline.kineto import read_kineto

    whole = read_kineto(FIX / "capture.legacy-autograd.json", stream_min_bytes=1 << 60)
    chunked = read_kineto(FIX / "capture.legacy-autograd.json", stream_min_bytes=0, chunk_bytes=64)
    assert whole.activities.equals(chunked.activities) and whole.activities.height == 6
