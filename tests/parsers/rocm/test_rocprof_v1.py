"""AMD rocprof v1 outputs are read into the timeline tables (issue 33; before, issue 32 item 4, a
rocprof --hip-trace JSON was refused by name, and earlier read as an empty PyTorch trace).

The files are generated here from the documented layouts (rocprof v1's ``results.csv`` header, its
Chrome trace JSON in object or array form, with or without the metadata rows first, ``.json`` or
gzip, and the ``.stats.csv`` summary); the expected figures come from their construction. The real
R9700 files of ../shared/samples/rocm are checked against the figures their MANIFEST gives."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from pathlib import Path

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.timeline.reader import detect_timeline_format, read_timeline

SAMPLES = Path(__file__).resolve().parents[3].parent / "shared" / "samples" / "rocm"
BEGIN = 769537350099688
V1_HEADER = ('"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","lds","scr","arch_vgpr",'
             '"accum_vgpr","sgpr","wave_size","sig","obj","DispatchNs","BeginNs","EndNs","CompleteNs","DurationNs"')


def _dispatch(i: int) -> dict:
    begin = BEGIN + 10_000 * i
    return {"ph": "X", "name": f"kernel_{i % 3}.kd", "pid": 8, "tid": 2375942, "ts": str(begin // 1000), "dur": "7",
            "args": {"KernelName": f"kernel_{i % 3}.kd", "gpu-id": "2", "queue-id": "0", "grd": "1024", "wgr": "256",
                     "DispatchNs": str(begin - 100), "BeginNs": str(begin), "EndNs": str(begin + 7600),
                     "CompleteNs": str(begin + 9000), "DurationNs": "7600"}}


def _meta() -> list[dict]:
    return [{"args": {"name": "GPU0"}, "ph": "M", "pid": 6, "name": "process_name", "sort_index": 1}]


def _run(*args) -> tuple[int, str, str]:
    from ridgeline.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def _v1_csv(rows: int, *, bad_line: int | None = None) -> str:
    lines = [V1_HEADER]
    for i in range(rows):
        b = BEGIN + 10_000 * i
        end = "oops" if bad_line == i + 2 else str(b + 7600)
        lines.append(f'{i},"void k{i % 2}<float>(float*) [clone .kd]",2,0,{2 * i},7,7,1000,256,0,0,16,0,128,32,"0x0",'
                     f'"0x1",{b - 100},{b},{end},{b + 9000},7600')
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("layout", ["object", "object-meta-first", "array"])
@pytest.mark.parametrize("gz", [False, True])
def test_a_rocprof_hip_trace_is_read_as_a_timeline(tmp_path, layout, gz):
    events = (_meta() if layout == "object-meta-first" else []) + [_dispatch(i) for i in range(50)]
    other = {"Agent1.DeviceType": "CPU", "Agent1.MarketingName": "AMDRyzen", "Agent1.ComputeUnit": "192",
             **{f"Agent{n}.{k}": v for n in (2, 3, 4) for k, v in (("DeviceType", "GPU"), ("Name", "gfx1201"),
                ("MarketingName", "AMDRadeonAIPROR9700"), ("ComputeUnit", "64"), ("MemoryProperties.WavefrontSize", "32"))}}
    doc = events if layout == "array" else {"traceEvents": [{}] + events, "otherData": other}
    data = json.dumps(doc).encode()
    path = tmp_path / ("results.json.gz" if gz else "results.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert detect_timeline_format(path) == "rocprof-v1-json"
    tl = read_timeline(path)
    acts = tl.activities
    assert tl.vendor == "amd" and acts.height == 50
    assert set(acts.get_column("device")) == {2}
    assert (acts.get_column("end_ns") - acts.get_column("start_ns")).sum() == 50 * 7600  # BeginNs/EndNs, not ts/dur
    assert set(acts.get_column("name")) == {"kernel_0", "kernel_1", "kernel_2"}  # the .kd suffix removed
    assert acts.get_column("grid_blocks")[0] == 4 and acts.get_column("block_threads")[0] == 256
    if layout != "array":  # rocminfo in otherData: gpu-id 2 is the third GPU agent (CPU agents not counted)
        assert tl.devices[2] == "AMDRadeonAIPROR9700" and 3 not in tl.devices
        assert tl.device_properties[2] == {"unit_count": 64, "warp_size": 32, "gfx": "gfx1201"}
        assert set(acts.get_column("device_name")) == {"AMDRadeonAIPROR9700"}


def test_the_kernel_trace_csv_is_read_with_its_figures(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(_v1_csv(6))
    assert detect_timeline_format(path) == "rocprof-v1-csv"
    tl = read_timeline(path)
    acts = tl.activities
    assert tl.vendor == "amd" and acts.height == 6
    assert acts.get_column("start_ns").min() == BEGIN and acts.get_column("end_ns").max() == BEGIN + 50_000 + 7600
    assert set(acts.get_column("name")) == {"void k0<float>(float*)", "void k1<float>(float*)"}
    assert acts.get_column("grid_blocks")[0] == 4  # ceil(1000 work-items / 256)


ROCMINFO = """*******
Agent 1
*******
  Name:                    AMD Ryzen Threadripper PRO 9995WX 96-Cores
  Marketing Name:          AMD Ryzen Threadripper PRO 9995WX 96-Cores
  Device Type:             CPU
  Compute Unit:            192
*******
Agent 2
*******
  Name:                    gfx1201
  Marketing Name:          AMD Radeon AI PRO R9700
  Device Type:             GPU
  Compute Unit:            64
  Wavefront Size:          32(0x20)
  ISA Info:
    ISA 1
      Name:                    amdgcn-amd-amdhsa--gfx1201
*******
Agent 3
*******
  Name:                    gfx1201
  Marketing Name:          AMD Radeon AI PRO R9700
  Device Type:             GPU
  Compute Unit:            64
  Wavefront Size:          32(0x20)
"""


def test_the_sysinfo_beside_the_trace_names_the_gpu(tmp_path):
    """rocprof v1 writes rocminfo's output as results.sysinfo.txt beside results.csv: gpu-id N is the
    N-th GPU agent (the CPU agent is not counted)."""
    path = tmp_path / "results.csv"
    path.write_text(_v1_csv(3).replace(",2,0,", ",1,0,"))
    (tmp_path / "results.sysinfo.txt").write_text(ROCMINFO)
    tl = read_timeline(path)
    assert set(tl.activities.get_column("device_name")) == {"AMD Radeon AI PRO R9700"}
    assert tl.device_properties[1] == {"unit_count": 64, "warp_size": 32, "gfx": "gfx1201"}


def test_a_damaged_row_is_named_by_line_or_skipped_when_lenient(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(_v1_csv(6, bad_line=4))
    with pytest.raises(InputError) as err:
        read_timeline(path)
    assert "line 4" in str(err.value) and "EndNs" in str(err.value)
    tl = read_timeline(path, strict=False)
    assert tl.activities.height == 5 and len(tl.skipped) == 1 and tl.skipped[0].item == "line 4"


def test_the_stats_csv_is_a_summary(tmp_path):
    path = tmp_path / "results.stats.csv"
    path.write_text('"Name","Calls","TotalDurationNs","AverageNs","Percentage"\n'
                    '"void big<1>(int) [clone .kd]",3,3000000,1000000,75.0\n"small.kd",4,1000000,250000,25.0\n')
    assert detect_timeline_format(path) == "rocprof-stats"
    tl = read_timeline(path)
    assert tl.activities.height == 0 and tl.vendor == "amd"
    tot = tl.totals
    assert tot.get_column("count").to_list() == [3, 4]
    assert tot.get_column("total_s").sum() == pytest.approx(0.004)
    assert tot.get_column("name").to_list() == ["void big<1>(int)", "small"]
    assert any("totals only" in n for n in tl.notes)


@pytest.mark.parametrize("gz", [False, True])
def test_a_rocprofiler_sdk_json_is_read(tmp_path, gz):
    """rocprofv3 --output-format json: dispatches by agent handle and kernel id, named from the
    agents and kernel_symbols tables (the documented layout, one tool entry per process)."""
    gpu = {"id": {"handle": 7}, "type": 2, "gpu_index": 3, "product_name": "AMD Instinct MI350X", "name": "gfx950",
           "cu_count": 256, "wave_front_size": 64}
    cpu = {"id": {"handle": 6}, "type": 1, "gpu_index": -1, "product_name": "AMD EPYC", "name": "AMD EPYC"}
    disp = [{"kind": 11, "operation": 2, "thread_id": 9, "correlation_id": {"internal": i + 1, "external": 0},
             "start_timestamp": 1000 + 100 * i, "end_timestamp": 1040 + 100 * i, "stream_id": {"handle": 1},
             "dispatch_info": {"agent_id": {"handle": 7}, "queue_id": {"handle": 16}, "kernel_id": i % 2,
                               "workgroup_size": {"x": 256, "y": 1, "z": 1}, "grid_size": {"x": 1024, "y": 1, "z": 1}}}
            for i in range(4)]
    copy = [{"kind": 12, "operation": 2, "start_timestamp": 2000, "end_timestamp": 2300, "bytes": 4096,
             "src_agent_id": {"handle": 6}, "dst_agent_id": {"handle": 7}}]
    syms = [{"kernel_id": 0, "kernel_name": "a.kd", "demangled_kernel_name": "a"},
            {"kernel_id": 1, "kernel_name": "_Z1bv.kd", "demangled_kernel_name": "b()"}]
    hip = [{"kind": 1, "operation": 1, "thread_id": 9, "correlation_id": {"internal": i + 1},
            "start_timestamp": 900 + 100 * i, "end_timestamp": 910 + 100 * i} for i in range(4)]
    hip.append({"kind": 1, "operation": 2, "thread_id": 9, "correlation_id": {"internal": 9},
                "start_timestamp": 1300, "end_timestamp": 1900})
    doc = {"rocprofiler-sdk-tool": [{"metadata": {"pid": 1}, "agents": [cpu, gpu], "kernel_symbols": syms,
                                     "strings": {"buffer_records": [{"kind": "NONE", "operations": []},
                                                                    {"kind": "HIP_RUNTIME_API", "operations": [
                                                                        "hipApiName", "hipLaunchKernel",
                                                                        "hipDeviceSynchronize"]}]},
                                     "buffer_records": {"kernel_dispatch": disp, "memory_copy": copy, "hsa_api": [{}],
                                                        "hip_api": hip}}]}
    data = json.dumps(doc).encode()
    path = tmp_path / ("run_results.json.gz" if gz else "run_results.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    assert detect_timeline_format(path) == "rocprofiler-sdk-json"
    tl = read_timeline(path)
    acts = tl.activities
    assert tl.vendor == "amd" and tl.devices == {3: "AMD Instinct MI350X"} and tl.device_properties[3]["gfx"] == "gfx950"
    kernels = acts.filter(acts.get_column("kind") == "kernel")
    assert kernels.height == 4 and set(kernels.get_column("name")) == {"a", "b()"}
    assert (kernels.get_column("end_ns") - kernels.get_column("start_ns")).sum() == 160
    assert set(acts.get_column("device")) == {3} and kernels.get_column("grid_blocks")[0] == 4
    copies = acts.filter(acts.get_column("kind") == "memcpy")
    assert copies.get_column("copy_kind").to_list() == ["HtoD"] and copies.get_column("bytes").to_list() == [4096]
    assert any("1 API call record" in n for n in tl.notes)  # the hsa_api one
    assert tl.host_calls_total == 5 and "hipDeviceSynchronize" in set(tl.api.get_column("name"))
    assert kernels.sort("start_ns").get_column("launch_ns").to_list() == [900, 1000, 1100, 1200]


def test_a_pytorch_trace_with_the_same_arg_names_is_still_read(tmp_path):
    """The PyTorch profiler's categories decide: rocprof's arg names in a Kineto event change nothing."""
    k = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.0, "dur": 2.0,
         "args": {"device": 0, "stream": 7, "correlation": 1, "BeginNs": "1", "EndNs": "2", "DispatchNs": "0"}}
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"traceEvents": [k], "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}]}))
    assert detect_timeline_format(path) == "kineto"


R9700 = sorted(SAMPLES.glob("joursbleu-r9700-*")) if SAMPLES.is_dir() else []


SDK = SAMPLES / "tracelens-mi350x-rocprofv3-sdk-json-aorta-train-908_results.json.gz"


@pytest.mark.skipif(not SDK.is_file(), reason="../shared/samples/rocm is absent")
def test_the_mi350x_sdk_json_reads_its_manifest_figures():
    """MANIFEST: 43,915 kernel_dispatch records, 4,441.7 ms summed, on MI350X agents."""
    tl = read_timeline(SDK)
    acts = tl.activities
    assert acts.height == 43915
    assert (acts.get_column("end_ns") - acts.get_column("start_ns")).sum() / 1e6 == pytest.approx(4441.7, abs=0.05)
    assert set(acts.get_column("device_name")) == {"AMD Instinct MI350X"}


@pytest.mark.skipif(not R9700, reason="../shared/samples/rocm is absent")
def test_the_r9700_run_reads_the_manifest_figures_from_each_file():
    """MANIFEST: 1,963 dispatches on gpu-id 2, 662.14 ms summed, mul_mat_q 90.3% of kernel time."""
    import polars as pl

    for path in R9700:
        tl = read_timeline(path)
        assert tl.vendor == "amd"
        if tl.totals is not None:
            tot = tl.totals
            assert tot.get_column("count").sum() == 1963
            assert tot.get_column("total_s").sum() == pytest.approx(0.66214, abs=1e-5)
            top = tot.sort("total_s", descending=True).row(0, named=True)
        else:
            acts = tl.activities
            assert acts.height == 1963 and set(acts.get_column("device")) == {2}
            assert (acts.get_column("end_ns") - acts.get_column("start_ns")).sum() / 1e9 == pytest.approx(0.66214, abs=1e-5)
            by = acts.group_by("short_name").agg((pl.col("end_ns") - pl.col("start_ns")).sum().alias("t"))
            top = {"short_name": by.sort("t", descending=True).row(0)[0],
                   "time_share": by.get_column("t").max() / by.get_column("t").sum()}
        assert top["short_name"] == "mul_mat_q" and top["time_share"] == pytest.approx(0.903, abs=1e-3)
