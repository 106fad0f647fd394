"""rocprofv3 ``kernel_trace.csv`` in each header era (issue 33), generated here from the headers the
rocprofv3 documentation prints for each ROCm release (``Agent_Id`` a bare number, then ``"Agent N"``;
``Thread_Id``/``Dispatch_Id`` added; ``Stream_Id`` and register counts added; ``rocpd convert``'s
``Guid`` first with its own capitalisation). Every era must give the same timeline."""

from __future__ import annotations

import pytest

from ridgeline.errors import InputError
from ridgeline.parsers.timeline.reader import detect_timeline_format, read_timeline

ERAS = {
    # ROCm 6.1/6.2 first rocprofv3 releases
    "earliest": ('"Kind","Agent_Id","Queue_Id","Kernel_Id","Kernel_Name","Correlation_Id","Start_Timestamp",'
                 '"End_Timestamp","Private_Segment_Size","Group_Segment_Size","Workgroup_Size_X","Workgroup_Size_Y",'
                 '"Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"',
                 lambda a, i, name, s, e: f'"KERNEL_DISPATCH",{a},1,{10 + i % 2},"{name}",{i},{s},{e},0,0,256,1,1,1024,2,1'),
    "early": ('"Kind","Agent_Id","Queue_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name","Correlation_Id",'
              '"Start_Timestamp","End_Timestamp","Private_Segment_Size","Group_Segment_Size","Workgroup_Size_X",'
              '"Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"',
              lambda a, i, name, s, e: f'"KERNEL_DISPATCH",{a},1,74441,{i + 1},{10 + i % 2},"{name}",{i},{s},{e},0,0,'
                                       '256,1,1,1024,2,1'),
    "current": ('"Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id","Kernel_Name",'
                '"Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size","Scratch_Size","VGPR_Count",'
                '"Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X","Workgroup_Size_Y","Workgroup_Size_Z",'
                '"Grid_Size_X","Grid_Size_Y","Grid_Size_Z"',
                lambda a, i, name, s, e: f'"KERNEL_DISPATCH","Agent {a}",1,0,74441,{i + 1},{10 + i % 2},"{name}",{i},'
                                         f'{s},{e},0,0,16,0,32,256,1,1,1024,2,1'),
    "rocpd-convert": ('"Guid","Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
                      '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","Lds_Block_Size","Scratch_Size",'
                      '"Vgpr_Count","Accum_Vgpr_Count","Sgpr_Count","Workgroup_Size_X","Workgroup_Size_Y",'
                      '"Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"',
                      lambda a, i, name, s, e: f'"00006409-00d1-70d1-a5cb-b5ab88214544","KERNEL_DISPATCH","Agent {a}",1,'
                                               f'0,74441,{i + 1},{10 + i % 2},"{name}",{i},{s},{e},0,0,16,0,32,256,1,1,'
                                               '1024,2,1'),
}
T0 = 1614963487781917


def _write(tmp_path, era: str, n: int = 8, bad: int | None = None, lower: bool = False):
    header, row = ERAS[era]
    lines = [header.lower() if lower else header]
    for i in range(n):
        s = T0 + 5000 * i
        e = "x" if bad == i else s + 2000 + 1000 * (i % 2)
        lines.append(row(4, i, f"k{i % 2}(float*)", s, e))
    path = tmp_path / f"{era}_kernel_trace.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("era", list(ERAS))
@pytest.mark.parametrize("lower", [False, True])
def test_every_header_era_gives_the_same_timeline(tmp_path, era, lower):
    path = _write(tmp_path, era, lower=lower)
    assert detect_timeline_format(path) == "rocprofv3-kernel-trace"
    tl = read_timeline(path)
    acts = tl.activities
    assert tl.vendor == "amd" and acts.height == 8
    assert set(acts.get_column("device")) == {4}  # 4 and "Agent 4" alike
    assert (acts.get_column("end_ns") - acts.get_column("start_ns")).sum() == 4 * 2000 + 4 * 3000
    assert acts.get_column("grid_size")[0] == "(4, 2, 1)" and acts.get_column("block_threads")[0] == 256
    assert set(acts.get_column("name")) == {"k0(float*)", "k1(float*)"}


def test_a_damaged_row_is_named_by_its_line(tmp_path):
    path = _write(tmp_path, "current", bad=3)
    with pytest.raises(InputError) as err:
        read_timeline(path)
    assert "line 5" in str(err.value) and "end_timestamp" in str(err.value)
    assert read_timeline(path, strict=False).activities.height == 7


def test_a_header_alone_is_said(tmp_path):
    path = _write(tmp_path, "current", n=0)
    tl = read_timeline(path)
    assert tl.activities.height == 0 and tl.notes


AGENT_INFO = ('"Node_Id","Logical_Node_Id","Agent_Type","Cpu_Cores_Count","Simd_Count","Wave_Front_Size","Cu_Count",'
              '"Name","Product_Name"\n0,0,"CPU",192,0,0,192,"AMD EPYC 9654","AMD EPYC 9654"\n'
              '1,1,"CPU",192,0,0,192,"AMD EPYC 9654","AMD EPYC 9654"\n'
              '4,2,"GPU",0,1216,64,304,"gfx942","AMD Instinct MI300X"\n')
HIP_API = ('"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"\n'
           '"HIP_COMPILER_API_EXT","__hipRegisterFatBinary",70,70,900,1,2\n'
           + "".join(f'"HIP_RUNTIME_API","hipLaunchKernel",70,70,{i},{T0 + 5000 * i - 700},{T0 + 5000 * i - 600}\n'
                     for i in range(8))
           + f'"HIP_RUNTIME_API_EXT","hipDeviceSynchronize",70,70,99,{T0 + 100},{T0 + 60000}\n')


def test_the_siblings_name_the_gpu_and_give_the_host_calls(tmp_path):
    """rocprofv3's <pid>_agent_info.csv and <pid>_hip_api_trace.csv beside <pid>_kernel_trace.csv."""
    path = _write(tmp_path, "current")
    (tmp_path / "current_agent_info.csv").write_text(AGENT_INFO)
    (tmp_path / "current_hip_api_trace.csv").write_text(HIP_API)
    (tmp_path / "current_memory_copy_trace.csv").write_text(
        '"Kind","Direction","Stream_Id","Source_Agent_Id","Destination_Agent_Id","Correlation_Id","Start_Timestamp",'
        f'"End_Timestamp"\n"MEMORY_COPY","MEMORY_COPY_HOST_TO_DEVICE",0,"Agent 0","Agent 4",50,{T0 - 9000},{T0 - 1000}\n')
    tl = read_timeline(path)
    copies = tl.activities.filter(tl.activities.get_column("kind") == "memcpy")
    assert copies.get_column("copy_kind").to_list() == ["HtoD"] and copies.get_column("device").to_list() == [0]
    acts = tl.activities.filter(tl.activities.get_column("kind") == "kernel")
    assert tl.devices == {0: "AMD Instinct MI300X"} and set(acts.get_column("device")) == {0}  # Agent 4 = GPU 0
    assert tl.device_properties[0] == {"unit_count": 304, "warp_size": 64, "gfx": "gfx942"}
    assert tl.host_calls_total == 9 and "hipDeviceSynchronize" in set(tl.api.get_column("name"))
    assert acts.sort("start_ns").get_column("launch_ns").to_list() == [T0 + 5000 * i - 700 for i in range(8)]


def test_a_damaged_sibling_is_said_and_the_trace_still_read(tmp_path):
    path = _write(tmp_path, "current")
    (tmp_path / "current_agent_info.csv").write_text('"Node_Id","Name"\n1,"x"\n')
    tl = read_timeline(path)
    assert tl.activities.height == 8 and any("agent_info.csv not used" in n for n in tl.notes)


def test_a_damaged_copy_row_is_named_in_its_own_file(tmp_path):
    path = _write(tmp_path, "current")
    (tmp_path / "current_memory_copy_trace.csv").write_text(
        '"Kind","Direction","Source_Agent_Id","Destination_Agent_Id","Start_Timestamp","End_Timestamp"\n'
        f'"MEMORY_COPY","MEMORY_COPY_HOST_TO_DEVICE","Agent 0","Agent 4",{T0},{T0 - 5}\n')
    with pytest.raises(InputError) as err:
        read_timeline(path)
    assert "current_memory_copy_trace.csv line 2" in str(err.value) and "end before start" in str(err.value)
