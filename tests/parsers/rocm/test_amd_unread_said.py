"""AMD outputs ridgeline does not read yet are refused in one line that says what they are (issue 33:
"every refusal of an AMD file ... names what it looks like"), never as "got 'Dispatch_ID,GPU_ID,...'".
Headers generated here from the documented layouts (rocprof-compute workload files, rocprofv3
counter_collection.csv and API traces, rocprof v1 --pmc CSV)."""

from __future__ import annotations

import contextlib
import io

import pytest

HEADERS = {
    "pmc_perf.csv": ("Dispatch_ID,GPU_ID,Grid_Size,Workgroup_Size,Kernel_Name,Start_Timestamp,End_Timestamp,GRBM_COUNT,"
                     "SQ_WAVES\n0,2,1024,256,k,1,2,3,4\n", "rocprof-compute (omniperf) pmc_perf.csv"),
    "roofline.csv": ("device,HBMBw,HBMBwLow,hbmBwHigh,FP32Flops\n0,4244,4200,4290,127000\n", "rocprof-compute roofline.csv"),
    "sysinfo.csv": ("workload_name,command,gpu_model,gpu_arch\nbmm1,./a,MI300X_A1,gfx942\n", "rocprof-compute sysinfo.csv"),
    "counter_collection.csv": ('"Correlation_Id","Dispatch_Id","Agent_Id","Queue_Id","Process_Id","Thread_Id","Grid_Size",'
                               '"Kernel_Id","Kernel_Name","Workgroup_Size","LDS_Block_Size","Scratch_Size","VGPR_Count",'
                               '"SGPR_Count","Counter_Name","Counter_Value"\n1,1,"Agent 2",1,7,7,1024,3,"k",256,0,0,8,16,'
                               '"SQ_WAVES",16\n', "rocprofv3 counter_collection.csv"),
    "hip_api_trace.csv": ('"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp",'
                          '"Kind"\n"HIP_RUNTIME_API","hipMalloc",7,7,1,10,20,"HIP_RUNTIME_API"\n',
                          "rocprofv3 trace CSV other than kernel_trace.csv"),
    "pmc_results.csv": ('"Index","KernelName","gpu-id","queue-id","queue-index","pid","tid","grd","wgr","SQ_WAVES"\n'
                        '0,"k.kd",2,0,0,7,7,1024,256,16\n', "rocprof v1 counter CSV"),
}


@pytest.mark.parametrize("name", list(HEADERS))
def test_an_unread_amd_output_is_refused_by_name(tmp_path, name):
    from ridgeline.cli import main

    text, what = HEADERS[name]
    path = tmp_path / name
    path.write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        with pytest.raises(SystemExit) as exit_:
            main(["analyze", str(path)])
    assert exit_.value.code == 2
    line = err.getvalue().strip()
    assert "\n" not in line and path.name in line and what in line and "does not read yet" in line, line
