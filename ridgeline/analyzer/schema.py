"""The normalized tables every stage agrees on -- documented in one place.

Data flows one way: file -> parser -> KERNEL table -> classifier -> ROOFLINE table ->
rules -> findings -> renderers. Telemetry: file -> parser -> TELEMETRY long table ->
reduction -> WINDOW table -> telemetry rules.

Column names are snake_case and carry their unit (``duration_s``, ``dram_bytes``,
``tensor_active_ratio``). Vendor names (``dram__bytes.sum``, ``DCGM_FI_PROF_*``) never
appear here: they live in the parsers' mapping tables.

A value that was not measured is **null**, never 0. Every ``*_source`` column says where
the figure next to it came from: the ncu counters it was computed from (a recipe string
such as ``"sm__sass_thread_inst_executed_op_{fadd,fmul}+2*ffma"``), ``"catalogue"`` for
datasheet values, or null when the figure is missing.

Each schema below is a mapping ``column -> (polars dtype name, description)``; use
:func:`polars_schema` to get real polars dtypes (imports polars lazily).
"""

from __future__ import annotations

import re

# --------------------------------------------------------------------------------------
# KERNEL table: one row per profiled launch, produced by ridgeline.parsers.ncu.csv_reader
# --------------------------------------------------------------------------------------
KERNEL_COLUMNS: dict[str, tuple[str, str]] = {
    "id": ("str", "stable launch id: the ncu ID, prefixed with '<file index>:' when several files are read"),
    "launch_id": ("i64", "ncu's ID column (launch index within the profiling session, not a kernel identity)"),
    "source": ("str", "input file the launch came from, as given on the command line"),
    "process_id": ("i64", "profiled process id"),
    "process_name": ("str", "profiled process name"),
    "host_name": ("str", "host the profile was taken on"),
    "device": ("i64", "CUDA device index (null in layouts that do not record it)"),
    "device_name": ("str", "device name as recorded by ncu (device__attribute_display_name), null if absent"),
    "cc": ("str", "compute capability, e.g. '9.0' (null if absent)"),
    "sm_count": ("i64", "SMs on the device (device__attribute_multiprocessor_count), null if absent"),
    "max_sm_clock_hz": ("f64", "maximum SM clock of the device (device__attribute_max_gpu_frequency_khz, else clock_rate), null if absent"),
    "context": ("i64", "CUDA context"),
    "stream": ("i64", "CUDA stream"),
    "kernel_name": ("str", "kernel name exactly as ncu printed it"),
    "short_name": ("str", "the function's name as recorded, namespaces kept: no return type (void, enable_if<...>::type), template arguments, parameters or anonymous namespaces (ridgeline.names.short_name, docs/names.md); joins across tools use the full name"),
    "block_size": ("str", "block dimensions as printed, e.g. '(128, 1, 1)'"),
    "grid_size": ("str", "grid dimensions as printed"),
    "block_threads": ("i64", "threads per block (product of block_size)"),
    "grid_blocks": ("i64", "blocks in the grid (product of grid_size)"),
    "duration_s": ("f64", "kernel duration in seconds"),
    "duration_s_source": ("str", "counters duration_s came from"),
    "flops_fp64": ("f64", "FP64 FLOPs on CUDA cores: dadd + dmul + 2*dfma"),
    "flops_fp32": ("f64", "FP32 FLOPs on CUDA cores: fadd + fmul + 2*ffma (+ Blackwell paired ops)"),
    "flops_fp16": ("f64", "FP16/BF16 FLOPs on CUDA cores, ncu convention: 2*hadd + 2*hmul + 4*hfma"),
    "flops_tensor": ("f64", "tensor-core FLOPs, all precisions (sum of the flops_tensor_* columns present)"),
    "flops_tensor_fp16": ("f64", "tensor FLOPs with fp16/bf16 inputs"),
    "flops_tensor_tf32": ("f64", "tensor FLOPs with tf32 inputs"),
    "flops_tensor_fp8": ("f64", "tensor FLOPs with fp8 (or fp4/fp6) inputs"),
    "flops_tensor_int8": ("f64", "tensor integer ops (int8/int4/int1), counted as ops"),
    "flops_tensor_fp64": ("f64", "tensor FLOPs with fp64 inputs (DMMA)"),
    "flops_fp64_source": ("str", "counters flops_fp64 came from"),
    "flops_fp32_source": ("str", "counters flops_fp32 came from"),
    "flops_fp16_source": ("str", "counters flops_fp16 came from"),
    "flops_tensor_source": ("str", "counters flops_tensor came from"),
    "dram_bytes": ("f64", "bytes moved to/from device memory (dram__bytes.sum or read+write)"),
    "l2_bytes": ("f64", "bytes through L2 (lts__t_bytes.sum; ncu's lts2xbar cycles x 32 B only when that is all the export has, named in the source)"),
    "l1_bytes": ("f64", "bytes through L1/TEX (l1tex__t_bytes.sum; ncu's LSU writeback cycles x 128 B only when that is all the export has)"),
    "dram_bytes_source": ("str", "counters dram_bytes came from"),
    "l2_bytes_source": ("str", "counters l2_bytes came from"),
    "l1_bytes_source": ("str", "counters l1_bytes came from"),
    "flops_fp32_per_s": ("f64", "achieved FP32 FLOP/s the export recorded as a rate (per-cycle rates x SM clock); set only for launches without a duration (section exports), whose totals are unknown"),
    "flops_fp64_per_s": ("f64", "achieved FP64 FLOP/s recorded as a rate; set only for launches without a duration"),
    "dram_bytes_per_s": ("f64", "achieved DRAM bytes/s recorded as a rate (dram__bytes.sum.per_second); set only for launches without a duration"),
    "flops_per_s_source": ("str", "counters flops_fp32_per_s came from"),
    "dram_bytes_per_s_source": ("str", "counters dram_bytes_per_s came from"),
    "sm_clock_hz": ("f64", "SM clock during the launch (sm__cycles_elapsed.avg.per_second)"),
    "dram_clock_hz": ("f64", "DRAM clock during the launch (dram__cycles_elapsed.avg.per_second)"),
    "peak_flops_fp64_per_s": ("f64", "FP64 CUDA-core peak the export recorded (peak_sustained x clock)"),
    "peak_flops_fp32_per_s": ("f64", "FP32 CUDA-core peak the export recorded"),
    "peak_flops_fp16_per_s": ("f64", "FP16 CUDA-core peak the export recorded"),
    "peak_flops_tensor_per_s": ("f64", "DENSE tensor peak the export recorded for the precision and instruction path the launch used (ops-weighted when it used several): per-cycle peak x SM clock"),
    "peak_flops_tensor_per_s_source": ("str", "counters the tensor peak came from (their .peak_sustained, halved where a Hopper total records the 2:4-sparse rate)"),
    "tensor_path": ("str", "tensor instruction families that carried the launch's ops, from per-family counters: 'hgmma' (Hopper warpgroup wgmma), 'hmma' (mma.sync), 'hgmma+hmma', '-sparse' suffix for 2:4-sparse ops; null when only totals were collected"),
    "tensor_pipe_active_ratio": ("f64", "tensor pipe activity of the busiest instruction family (0-1 of its peak; elapsed cycles preferred over active ones), from ncu's pipe counters, collected even without FLOP counters; null when not collected"),
    "tensor_pipe_precision": ("str", "precision that busiest family computes in: 'int8_tensor' (IMMA/IGMMA), 'fp16_tensor' (HMMA/HGMMA: fp16, bf16 or tf32 inputs), 'fp8_tensor' (QGMMA), 'fp64_tensor' (DMMA); null when no family was active"),
    "tensor_pipe_source": ("str", "counter tensor_pipe_active_ratio came from"),
    "peak_dram_bytes_per_s": ("f64", "DRAM bandwidth peak the export recorded (or derived from device attributes)"),
    "peak_dram_bytes_per_s_source": ("str", "counters the DRAM peak came from"),
    "peak_l2_bytes_per_s": ("f64", "L2 bandwidth peak the export recorded: lts__t_bytes (or ncu's lts2xbar x 32 B) peak_sustained x L2 clock; null if not recorded"),
    "peak_l2_bytes_per_s_source": ("str", "counters the L2 peak came from ('lts2xbar' in it: ncu's L2-to-crossbar definition, not lts__t_bytes)"),
    "peak_l1_bytes_per_s": ("f64", "L1/TEX bandwidth peak the export recorded: l1tex__t_bytes (or ncu's LSU writeback x 128 B) peak_sustained x L1 clock; null if not recorded"),
    "peak_l1_bytes_per_s_source": ("str", "counters the L1 peak came from ('lsu_writeback' in it: ncu's writeback definition, not l1tex__t_bytes)"),
    "dram_throughput_pct": ("f64", "gpu__dram_throughput / 'DRAM Throughput' percent of peak, when recorded"),
    "sm_throughput_pct": ("f64", "sm__throughput / 'Compute (SM) Throughput' percent of peak, when recorded"),
    "memory_throughput_pct": ("f64", "gpu__compute_memory_throughput / 'Memory Throughput' percent of peak: ncu's busiest memory unit (L1, L2 or DRAM), when recorded (since 1.7)"),
    "achieved_occupancy_pct": ("f64", "achieved occupancy: active warps over the SM's maximum, percent (sm__warps_active.avg.pct_of_peak_sustained_active / 'Achieved Occupancy'), when recorded (since 1.5)"),
    "theoretical_occupancy_pct": ("f64", "theoretical occupancy the launch configuration allows, percent (sm__maximum_warps_per_active_cycle_pct / 'Theoretical Occupancy'), when recorded (since 1.5)"),
    "issue_slots_busy_pct": ("f64", "share of issue slots that issued an instruction, percent (sm__inst_issued.avg.pct_of_peak_sustained_active / 'Issue Slots Busy'), when recorded (since 1.5)"),
    "warp_cycles_per_issue": ("f64", "average cycles between two instructions a warp issues (smsp__average_warp_latency_per_inst_issued.ratio / 'Warp Cycles Per Issued Instruction'), when recorded (since 1.5)"),
    "stall_top_reason": ("str", "warp stall reason with the most cycles per issued instruction among those recorded (smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio), e.g. 'long_scoreboard'; null when none recorded (since 1.5)"),
    "stall_top_cycles_per_issue": ("f64", "cycles per issued instruction that warps spent stalled on stall_top_reason (since 1.5)"),
}

# --------------------------------------------------------------------------------------
# ROOFLINE table: KERNEL columns + these, produced by ridgeline.analyzer.kernels.roofline.classify
# --------------------------------------------------------------------------------------
ROOFLINE_COLUMNS: dict[str, tuple[str, str]] = {
    "gpu": ("str", "catalogue name of the GPU whose roofs were used, e.g. 'H100 SXM'"),
    "precision": ("str", "dominant precision: fp64, fp32, fp16, tf32_tensor, fp16_tensor (bf16 too), fp8_tensor, int8_tensor, fp64_tensor; null if no FLOPs"),
    "flops": ("f64", "total FLOPs (all precisions, CUDA cores + tensor)"),
    "intensity_dram": ("f64", "arithmetic intensity at DRAM, FLOP/byte"),
    "intensity_l2": ("f64", "arithmetic intensity at L2, FLOP/byte"),
    "intensity_l1": ("f64", "arithmetic intensity at L1, FLOP/byte"),
    "achieved_flops_per_s": ("f64", "flops / duration_s"),
    "achieved_dram_bytes_per_s": ("f64", "dram_bytes / duration_s"),
    "peak_flops_per_s": ("f64", "compute roof for the dominant precision"),
    "peak_flops_source": ("str", "'ncu' (measured by the profiler), 'catalogue' or 'derived-from-device-attributes' (SMs x per-SM rate x clock, for a GPU the catalogue lacks)"),
    "peak_bw_bytes_per_s": ("f64", "DRAM bandwidth roof"),
    "peak_bw_source": ("str", "'ncu', 'ncu-device-attributes', 'catalogue' or 'derived-from-device-attributes'"),
    "ridge_flop_per_byte": ("f64", "peak_flops_per_s / peak_bw_bytes_per_s"),
    "roof_flops_per_s": ("f64", "attainable FLOP/s at this intensity: min(peak, intensity * bandwidth)"),
    "bound": ("str", "'memory', 'compute', 'latency' (far below every roof it has, or no longer than the launch floor: see ridgeline.analyzer.kernels.roofline) or 'unknown'; bound_source says what decided it"),
    "bound_source": ("str", "what decided bound: 'roofline' (measured counters and roofs placed the launch), 'ncu-speed-of-light' (the roofline could not place it: ncu's own Speed-of-Light throughputs, sm_throughput_pct against memory_throughput_pct, decided; ridgeline.analyzer.kernels.speed_of_light), null when nothing decides (bound 'unknown') (since 1.7)"),
    "latency_kind": ("str", "for bound 'latency' only: 'launch' (no longer than RL112.launch_bound_max_s, 20 us by default: launch overhead matters) or 'stall' (longer: the warps stall); null for other bounds (ridgeline.analyzer.kernels.latency) (since 1.5)"),
    "roof_fraction": ("f64", "achieved_flops_per_s / roof_flops_per_s (0..1, may slightly exceed 1)"),
    "ridge_distance": ("f64", "intensity_dram / ridge_flop_per_byte (<1 memory side, >1 compute side)"),
    "time_to_roof_s": ("f64", "duration at 100% of the roof, never below the launch floor: max(flops / peak, dram_bytes / bandwidth, launch floor) (upper bound on savings is duration_s - this)"),
    "busiest_roof_fraction": ("f64", "achieved share of the busiest roof the launch has: max of FLOP/s / compute peak of its precision, DRAM, L2 and L1 bytes/s / their bandwidth roofs (where measured); below the latency threshold on every roof -> bound 'latency'; for a launch bound_source 'ncu-speed-of-light' decided: the busier of ncu's SM and memory throughputs"),
    "missing": ("list[str]", "metrics whose absence made the kernel 'unknown' (empty list otherwise)"),
    "missing_hint": ("str", "the ncu option that collects the missing metrics"),
    "peak_l2_bw_bytes_per_s": ("f64", "L2 bandwidth roof used (median recorded L2 peak of the device; never from the catalogue), null if none recorded"),
    "peak_l1_bw_bytes_per_s": ("f64", "L1 bandwidth roof used (median recorded L1 peak of the device; never from the catalogue), null if none recorded"),
    "kernel_family": ("str", "what the kernel is, from its full demangled name (ridgeline.analyzer.kernels.families, docs/kernel-families.md): gemm, grouped_gemm, attention, attention_aux, rope, norm, elementwise, ..."),
    "kernel_library": ("str", "library the kernel comes from (cuBLAS, CUTLASS, FlashAttention-3, FlashInfer, Triton, PyTorch ATen, ...), null when the name does not tell"),
    "kernel_label": ("str", "short display label naming the family and the distinguishing part, e.g. 'FlashAttention-3 fwd (sm90) 128x128x128', unique per kernel name within an analysis: names that share a family label get the part that tells them apart, 'cuBLAS gemvx <7>' / '<6>' (docs/names.md); the displayed name of every view"),
    "roof_level": ("str", "binding roof: 'dram', 'l2' or 'l1' (the memory level whose roof is lowest at the launch's intensities, i.e. largest bytes / bandwidth) or 'compute' when the compute roof is below every memory roof; levels without bytes or roof are left out; null when bound is unknown or decided by ncu's speed-of-light (no roof placed the launch)"),
}

# --------------------------------------------------------------------------------------
# KERNEL SUMMARY: one row per short/kernel name, ridgeline.analyzer.kernels.roofline.summarize
# --------------------------------------------------------------------------------------
SUMMARY_COLUMNS: dict[str, tuple[str, str]] = {
    "kernel_name": ("str", "kernel name"),
    "short_name": ("str", "short name"),
    "kernel_family": ("str", "kernel family (see the ROOFLINE table)"),
    "kernel_label": ("str", "display label (see the ROOFLINE table)"),
    "launches": ("i64", "number of launches"),
    "total_duration_s": ("f64", "sum of duration_s"),
    "time_share": ("f64", "share of total GPU time in the input (0..1)"),
    "intensity_dram": ("f64", "time-weighted arithmetic intensity (total flops / total dram bytes)"),
    "precision": ("str", "dominant precision by time"),
    "bound": ("str", "bound holding most of this name's time"),
    "bound_source": ("str", "what decided that bound for the launches holding most of its time: 'roofline', 'ncu-speed-of-light' or null (see the ROOFLINE table) (since 1.7)"),
    "latency_kind": ("str", "when bound is 'latency': 'launch' or 'stall', the kind holding most of this name's latency-bound time; null otherwise (since 1.5)"),
    "roof_fraction": ("f64", "time-weighted fraction of roof"),
    "saving_upper_bound_s": ("f64", "sum over launches of duration_s - time_to_roof_s (upper bound)"),
}

# --------------------------------------------------------------------------------------
# NCU_RULES: ncu's own rule results stored in a .ncu-rep, ridgeline.parsers.ncu.rep
# (evidence shown beside ridgeline's findings, never turned into findings)
# --------------------------------------------------------------------------------------
NCU_RULE_COLUMNS: dict[str, tuple[str, str]] = {
    "id": ("str", "launch id, as in the KERNEL table"),
    "short_name": ("str", "short kernel name of the launch"),
    "source": ("str", "report file"),
    "rule": ("str", "ncu rule identifier, e.g. 'SOLBottleneck'"),
    "rule_name": ("str", "ncu rule name as ncu shows it"),
    "section": ("str", "ncu section the rule belongs to"),
    "type": ("str", "ncu message type: ok, optimization, warning, error, none"),
    "title": ("str", "ncu message title (null when empty)"),
    "message": ("str", "ncu message text (ncu's markup kept)"),
    "speedup_type": ("str", "ncu's speedup estimate kind: local (this kernel) or global (the whole run); null without estimate"),
    "estimated_speedup_pct": ("f64", "ncu's estimated speedup in percent (its own model, not ridgeline's impact)"),
}

# --------------------------------------------------------------------------------------
# TIMELINE: one row per GPU activity (kernel, memcpy, memset), ridgeline.parsers.timeline.reader
# (Nsight Systems sqlite / nsys stats cuda_gpu_trace / PyTorch profiler traces)
# --------------------------------------------------------------------------------------
TIMELINE_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "kind": ("str", "'kernel', 'memcpy' or 'memset'"),
    "device": ("i64", "CUDA device index (null when the format does not record it)"),
    "device_name": ("str", "GPU name when the capture records it (TARGET_INFO_GPU, deviceProperties, the Device column)"),
    "process_id": ("i64", "process that launched it, when recorded"),
    "stream": ("i64", "CUDA stream"),
    "start_ns": ("i64", "start, ns on the capture's clock (nsys: since session start; Kineto: trace us x 1000)"),
    "end_ns": ("i64", "end, ns on the same clock"),
    "name": ("str", "kernel name as recorded (demangled where the format has it); copies '[CUDA memcpy HtoD]', '[CUDA memset]'"),
    "short_name": ("str", "kernels: ridgeline's short name (same rule as the KERNEL table's); others: name"),
    "correlation_id": ("i64", "CUPTI correlation id linking it to the host API call that launched it"),
    "launch_ns": ("i64", "start of the host runtime/driver call that launched it (same correlation id; capture clock); "
                  "null when the file records no such call"),
    "copy_kind": ("str", "memcpy direction: HtoD, DtoH, DtoD, PtoP, HtoH or other; null for kernels and memsets"),
    "bytes": ("i64", "bytes copied or set (copies and memsets)"),
    "grid_size": ("str", "grid dimensions '(x, y, z)' when recorded"),
    "block_size": ("str", "block dimensions '(x, y, z)' when recorded"),
    "grid_blocks": ("i64", "blocks in the grid"),
    "block_threads": ("i64", "threads per block"),
    "coll_group": ("str", "communication kernels: the process group, where the trace records it (Kineto "
                   "'Process Group Name')"),
    "coll_seq": ("i64", "communication kernels: the collective's sequence number in its group, where recorded (Kineto 'Seq')"),
    "coll_bytes": ("i64", "communication kernels: message size as nccl-tests counts it (the larger of Kineto's 'In msg "
                   "nelems' and 'Out msg nelems' x the dtype's size), where recorded"),
    "coll_group_size": ("i64", "communication kernels: ranks in the process group, where recorded (Kineto 'Group size')"),
}

# HOST_API: one row per host call (CUDA runtime/driver API, PyTorch ops) when the format has them
HOST_API_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "kind": ("str", "'runtime' (CUDA runtime API), 'driver' (CUDA driver API), 'cpu_op' (PyTorch operator), "
             "'annotation' (Kineto user_annotation: ProfilerStep#N, record_function), 'python' (Python function, "
             "with_stack traces) or 'nvtx' (an NVTX range)"),
    "process_id": ("i64", "process id"),
    "thread_id": ("i64", "thread id"),
    "start_ns": ("i64", "start, ns on the capture's clock"),
    "end_ns": ("i64", "end, ns"),
    "name": ("str", "call name as recorded, e.g. 'cudaLaunchKernel_v7000', 'cudaStreamSynchronize'"),
    "correlation_id": ("i64", "CUPTI correlation id (runtime/driver calls)"),
    "op_input_dims": ("str", "PyTorch ops recorded with shapes (Kineto args 'Input Dims'): the input shapes as compact JSON "
                      "text, e.g. '[[4096,100],[100,64]]'; null otherwise"),
    "op_input_types": ("str", "Kineto args 'Input type' as compact JSON text, e.g. '[\"float\",\"c10::BFloat16\"]'"),
    "op_concrete_inputs": ("str", "Kineto args 'Concrete Inputs' (scalar argument values) as compact JSON text"),
}

#: synchronizing host calls (names without nsys' _vNNNN suffix): the host blocks until the GPU
#: (or a stream/event) is done. Blocking cudaMemcpy (not ...Async) waits for the copy and the
#: work queued before it; cudaMemcpyAsync is not listed (PyTorch's .item() shows up as
#: cudaMemcpyAsync + cudaStreamSynchronize, and the second is caught).
SYNC_CALLS = (
    "cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cudaThreadSynchronize",
    "cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyToSymbol", "cudaMemcpyFromSymbol",
    "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize",
    "cuMemcpy", "cuMemcpyDtoH", "cuMemcpyHtoD", "cuMemcpyDtoD", "cuMemcpy2D", "cuMemcpy3D",
    # HIP (ROCm) equivalents; hipMemcpyWithStream is a blocking copy on a stream (PyTorch on ROCm uses
    # it for .item()/.cpu()/.to() host copies)
    "hipDeviceSynchronize", "hipStreamSynchronize", "hipEventSynchronize", "hipCtxSynchronize",
    "hipMemcpy", "hipMemcpyWithStream", "hipMemcpy2D", "hipMemcpy3D", "hipMemcpyToSymbol", "hipMemcpyFromSymbol",
    "hipMemcpyDtoH", "hipMemcpyHtoD", "hipMemcpyDtoD",
)
SYNC_RE = "^(?:" + "|".join(re.escape(n) for n in SYNC_CALLS) + r")(?:_v[0-9]+|_ptds|_ptsz)*$"

#: host rows the step view reads besides the synchronizing calls (ridgeline.analyzer.timeline.steps; docs/timeline.md):
#: calls that put GPU work in a queue: kernel/graph launches, async copies and memsets (their correlation id
#: places each GPU activity in the step whose host range issued it)
LAUNCH_RE = r"(?i)^(?:cuda|cu|hip)[A-Za-z0-9]*(?:Launch|Memcpy|Memset)[A-Za-z0-9]*(?:_v[0-9]+|_ptds|_ptsz)*$"
#: step ranges: PyTorch's ``ProfilerStep#N`` and NVTX/record_function ranges named like a numbered step
STEP_RE = r"(?i)^(?:ProfilerStep#[0-9]+|(?:train[_ ]?)?(?:step|iteration|iter)[ _#:]?[0-9]+)$"
#: the host fetching the next batch: PyTorch's ``enumerate(DataLoader)#_...DataLoaderIter.__next__``,
#: ``DataLoader``/``dataloader`` ranges and the loader iterator's ``__next__``/``_next_data``
DATALOADER_RE = r"(?i)dataloader|_next_data\b|DataLoaderIter"

# TIMELINE_TOTALS: nsys stats summaries (totals only: no start/end, no gaps)
TIMELINE_TOTALS_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "report": ("str", "nsys stats report: cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum, nvtx_sum"),
    "category": ("str", "'kernel', 'api', 'memory' or 'nvtx'"),
    "name": ("str", "kernel, API call, memory operation or NVTX range name"),
    "short_name": ("str", "kernels: ridgeline's short name; others: name"),
    "total_s": ("f64", "total time, s"),
    "count": ("i64", "instances or calls"),
    "time_share": ("f64", "the report's own Time (%) / 100 (share within that report)"),
}

# TIMELINE_DEVICES: one row per file x device, ridgeline.analyzer.timeline.busy.analyze_one (how each
# figure is computed: that module's docstring); KERNEL_SHARES: one row per kernel short name
TIMELINE_DEVICE_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "device_name": ("str", "GPU name when recorded"),
    "start_ns": ("i64", "first activity start on the device (capture clock)"),
    "end_ns": ("i64", "last activity end"),
    "capture_s": ("f64", "end_ns - start_ns, s"),
    "kernels": ("i64", "kernel launches"),
    "memcpys": ("i64", "copies"),
    "memsets": ("i64", "memsets"),
    "kernel_busy_s": ("f64", "union of kernel intervals (overlaps counted once), s"),
    "busy_s": ("f64", "union of kernel, copy and memset intervals, s"),
    "idle_s": ("f64", "capture_s - busy_s"),
    "idle_launch_s": ("f64", "idle in gaps <= launch_gap_s, and the first launch_gap_s after a late launch call "
                      "(launch overhead; ridgeline.analyzer.timeline.idle_causes)"),
    "idle_sync_s": ("f64", "idle in longer gaps while the host sat in a synchronizing call before launching the next work"),
    "idle_host_s": ("f64", "idle in longer gaps before the next work's launch call (the host was late: CPU-bound)"),
    "idle_queued_s": ("f64", "idle in longer gaps after the next work was launched (waiting on another stream, an "
                      "event or a collective)"),
    "idle_other_s": ("f64", "the rest: longer gaps whose next work has no launch record (unknown cause); "
                     "idle_launch_s + idle_sync_s + idle_host_s + idle_queued_s + idle_other_s = idle_s"),
    "gaps": ("i64", "gaps between busy intervals"),
    "launch_gaps": ("i64", "gaps <= launch_gap_s"),
    "memcpy_busy_s": ("f64", "union of copy intervals, s"),
    "memset_busy_s": ("f64", "union of memset intervals, s"),
    "copy_only_s": ("f64", "busy_s - union(kernels, memsets): copies with no kernel running"),
    "htod_s": ("f64", "sum of host-to-device copy durations"),
    "dtoh_s": ("f64", "sum of device-to-host copy durations"),
    "dtod_s": ("f64", "sum of device-to-device and peer copy durations"),
    "copy_bytes": ("i64", "bytes copied"),
    "sync_api_s": ("f64", "union of synchronizing host calls within the capture, s"),
    "host_calls": ("i64", "host runtime/driver API calls in the file"),
    "host_api": ("str", "where the file's host API calls come from (nsys CUPTI_ACTIVITY_KIND_RUNTIME, Kineto cuda_runtime events); "
                 "null: the file records none, so idle_sync_s is 0 and not told apart from idle_other_s"),
    "vendor": ("str", "GPU vendor the capture names: 'nvidia', 'amd' (ROCm: HIP calls, AMD device properties) or null"),
    "framework": ("str", "'pytorch' for PyTorch profiler traces and captures with PyTorch's own kernels (at::native, c10, triton_*), else null"),
    "idle_host_cpu": ("str", "what the CPU was doing before the late launches: the CPU ops, annotations or Python "
                      "functions (Kineto) covering most of that time, with their share of it; null where none is recorded"),
    "launch_records": ("i64", "activities with a launch record (the host call with their correlation id)"),
    "launch_delay_median_s": ("f64", "median of start - launch call start over those, s (null without launch records)"),
    "launch_delay_p90_s": ("f64", "90th percentile of start - launch call start, s"),
    "queue_depth_median": ("f64", "median, over launches, of the device's activities launched and not started yet"),
    "queue_depth_max": ("i64", "the most activities launched and not started at one launch"),
    "short_kernels": ("i64", "kernels shorter than short_kernel_s"),
    "short_kernel_time_s": ("f64", "their summed duration"),
    "median_short_kernel_s": ("f64", "their median duration"),
    "median_gap_before_short_s": ("f64", "median gap before each short kernel (start - latest earlier kernel end, >= 0)"),
    "median_kernel_s": ("f64", "median kernel duration"),
    # communication (ridgeline.analyzer.timeline.comm) and ranks (ridgeline.analyzer.timeline.ranks)
    "comm_kernels": ("i64", "communication kernel launches (NCCL/RCCL, custom all-reduce, multimem; the family table's communication rows)"),
    "compute_busy_s": ("f64", "union of the other (compute) kernels' intervals, s"),
    "comm_busy_s": ("f64", "union of communication kernel intervals, s"),
    "comm_exposed_s": ("f64", "part of comm_busy_s with no compute kernel running on the device, s (<= comm_busy_s)"),
    "comm_overlap_share": ("f64", "1 - comm_exposed_s / comm_busy_s: communication hidden behind compute; null without communication"),
    "rank": ("i64", "distributed rank of the process that drove the device; null when unknown"),
    "rank_from": ("str", "where rank comes from: 'trace' (Kineto distributedInfo.rank), 'environment' (nsys: the profiled process's RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID...), 'file name' or 'file order' (several per-rank files)"),
    "world_size": ("i64", "ranks in the job as the file records it (Kineto distributedInfo.world_size); null when not recorded"),
}

# TIMELINE_STREAMS: one row per file x device x stream, ridgeline.analyzer.timeline.idle_causes.stream_rows
STREAM_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "stream": ("i64", "CUDA stream"),
    "activities": ("i64", "kernels, copies and memsets on the stream"),
    "launch_records": ("i64", "of those, the ones with a launch record (host call with the same correlation id)"),
    "launch_delay_median_s": ("f64", "median of start - launch call start, s"),
    "launch_delay_p90_s": ("f64", "90th percentile of start - launch call start, s"),
    "queue_depth_median": ("f64", "median, over the stream's launches, of its activities launched and not started yet"),
    "queue_depth_max": ("i64", "the most of its activities launched and not started at one launch"),
}

KERNEL_SHARE_COLUMNS: dict[str, tuple[str, str]] = {
    "short_name": ("str", "kernel short name (same rule as the KERNEL table)"),
    "kernel_label": ("str", "display label, unique per kernel name (family label plus what tells kernels apart; docs/names.md)"),
    "name": ("str", "the kernel's full (demangled) name as recorded: one row per name"),
    "launches": ("i64", "launches on the timeline"),
    "total_s": ("f64", "summed duration, s"),
    "median_s": ("f64", "median duration, s (several files: the median of the files' medians)"),
    "wall_share": ("f64", "total_s / sum of capture_s over devices (kernels overlapping on several streams each count their own time, so shares can sum past 1)"),
    "busy_share": ("f64", "total_s / sum of kernel durations on the timeline"),
}


# --------------------------------------------------------------------------------------
# TELEMETRY long table: one row per (timestamp, gpu, field), ridgeline.parsers.telemetry.reader
# --------------------------------------------------------------------------------------
TELEMETRY_COLUMNS: dict[str, tuple[str, str]] = {
    "timestamp": ("datetime_us_utc", "sample time, UTC"),
    "host": ("str", "host name (exporter Hostname/hostname/instance, or given by --host)"),
    "gpu": ("i64", "GPU index (parent GPU for MIG instances); null when unknown"),
    "uuid": ("str", "GPU UUID when known"),
    "gpu_instance": ("str", "MIG GPU instance ('GPU_I_ID' or dmon 'GPU-I <id>'); null for a whole GPU"),
    "model": ("str", "GPU model name when known"),
    "field": ("str", "canonical field name, e.g. gpu_util_ratio, tensor_active_ratio (see TELEMETRY_FIELDS)"),
    "value": ("f64", "value in canonical units (ratios 0..1); null = not reported (never 0)"),
    "source": ("str", "input file"),
    "pod": ("str", "k8s pod owning the GPU, 'namespace/pod' (exporter exported_pod|pod labels); null if none"),
    "labels": ("str", "the series' workload labels (exporter text, Prometheus JSON and pulls, and the Parquet stores saved from them, which keep them per row): every label but the GPU's identity (gpu, UUID, device, modelName, Hostname, GPU_I_*...), as name=\"value\" pairs sorted by name and joined by ','; what --by pod|namespace|job|label=NAME groups by; null if none"),
}

# canonical telemetry field -> (unit, description)
TELEMETRY_FIELDS: dict[str, tuple[str, str]] = {
    "gpu_util_ratio": ("ratio", "NVML GPU-Util: fraction of time >= 1 kernel ran (converted from percent)"),
    "mem_copy_util_ratio": ("ratio", "NVML memory utilization: fraction of time memory was read/written"),
    "gr_engine_active_ratio": ("ratio", "DCGM GR_ENGINE_ACTIVE"),
    "sm_active_ratio": ("ratio", "DCGM SM_ACTIVE"),
    "sm_occupancy_ratio": ("ratio", "DCGM SM_OCCUPANCY"),
    "tensor_active_ratio": ("ratio", "DCGM PIPE_TENSOR_ACTIVE"),
    "dram_active_ratio": ("ratio", "DCGM DRAM_ACTIVE"),
    "fp64_active_ratio": ("ratio", "DCGM PIPE_FP64_ACTIVE"),
    "fp32_active_ratio": ("ratio", "DCGM PIPE_FP32_ACTIVE"),
    "fp16_active_ratio": ("ratio", "DCGM PIPE_FP16_ACTIVE"),
    "tensor_hmma_active_ratio": ("ratio", "DCGM PIPE_TENSOR_HMMA_ACTIVE"),
    "tensor_imma_active_ratio": ("ratio", "DCGM PIPE_TENSOR_IMMA_ACTIVE"),
    "tensor_dfma_active_ratio": ("ratio", "DCGM PIPE_TENSOR_DFMA_ACTIVE"),
    "pcie_tx_bytes_per_s": ("byte/s", "PCIe transmit rate"),
    "pcie_rx_bytes_per_s": ("byte/s", "PCIe receive rate"),
    "nvlink_tx_bytes_per_s": ("byte/s", "NVLink transmit rate"),
    "nvlink_rx_bytes_per_s": ("byte/s", "NVLink receive rate"),
    "power_w": ("W", "board power draw"),
    "sm_clock_hz": ("Hz", "SM clock"),
    "mem_clock_hz": ("Hz", "memory clock"),
    "gpu_temp_c": ("C", "GPU temperature"),
    "power_limit_w": ("W", "board power limit (DCGM POWER_MGMT_LIMIT, nvidia-smi power.limit)"),
    "clock_event_reasons_mask": ("mask", "DCGM CLOCK_THROTTLE_REASONS / CLOCKS_EVENT_REASONS: NVML clock event reasons bitmask (ridgeline.analyzer.fleet.throttle)"),
    "fb_used_bytes": ("byte", "device memory in use"),
    "fb_free_bytes": ("byte", "device memory free"),
    "fb_total_bytes": ("byte", "device memory total"),
    # health (ridgeline.analyzer.fleet.health): an XID code, 0/1 flags and cumulative counters
    "xid_last_code": ("code", "DCGM XID_ERRORS: code of the last XID error seen, 0 = none"),
    "ecc_sbe_volatile_count": ("count", "single-bit ECC errors since the driver loaded (cumulative)"),
    "ecc_dbe_volatile_count": ("count", "double-bit ECC errors since the driver loaded (cumulative)"),
    "ecc_sbe_aggregate_count": ("count", "single-bit ECC errors over the GPU's life (cumulative)"),
    "ecc_dbe_aggregate_count": ("count", "double-bit ECC errors over the GPU's life (cumulative)"),
    "row_remap_pending_flag": ("flag", "1 = a row remap is pending (GPU reset needed)"),
    "row_remap_failure_flag": ("flag", "1 = a row remap failed"),
    "remapped_rows_correctable_count": ("count", "rows remapped for correctable errors (cumulative)"),
    "remapped_rows_uncorrectable_count": ("count", "rows remapped for uncorrectable errors (cumulative)"),
    "nvlink_crc_flit_error_count": ("count", "NVLink flit CRC errors, all links (cumulative)"),
    "nvlink_crc_data_error_count": ("count", "NVLink data CRC errors, all links (cumulative)"),
    "nvlink_replay_error_count": ("count", "NVLink replays, all links (cumulative)"),
    "pcie_replay_count": ("count", "PCIe replays (cumulative)"),
}
# health fields (reduced by ridgeline.analyzer.fleet.health): an XID code, 0/1 flags, cumulative counters
HEALTH_FIELDS: tuple[str, ...] = tuple(k for k, (unit, _d) in TELEMETRY_FIELDS.items() if unit in ("code", "flag", "count"))

# --------------------------------------------------------------------------------------
# WINDOW table: one row per host/gpu/gpu_instance/window, ridgeline.analyzer.fleet.telemetry.reduce_windows
# --------------------------------------------------------------------------------------
WINDOW_COLUMNS: dict[str, tuple[str, str]] = {
    "host": ("str", "host name"),
    "gpu": ("i64", "GPU index (parent GPU for MIG instances)"),
    "gpu_instance": ("str", "MIG GPU instance, null for a whole GPU"),
    "uuid": ("str", "GPU UUID when known"),
    "model": ("str", "GPU model when known"),
    "window_start": ("datetime_us_utc", "window start, UTC"),
    "window_end": ("datetime_us_utc", "window end, UTC"),
    "first_sample": ("datetime_us_utc", "the window's first sample, UTC (window_start is a floor) (since 1.7)"),
    "last_sample": ("datetime_us_utc", "the window's last sample, UTC (since 1.7)"),
    "samples": ("i64", "timestamps reported in the window (N/A-only ticks included)"),
    "interval_s": ("f64", "inferred sample interval (median gap), s"),
    "span_s": ("f64", "time observed, s: samples x interval_s, <= window length (the figure every view calls observed)"),
    "coverage_ratio": ("f64", "span_s / the GPU's extent in the window (first sample .. last + 1 interval): a gap lowers it"),
    "max_gap_s": ("f64", "largest gap between consecutive samples ending in the window, s"),
    "gpu_util_mean_ratio": ("f64", "mean gpu util (0..1)"),
    "gpu_util_p95_ratio": ("f64", "95th percentile gpu util (0..1)"),
    "gr_engine_active_mean_ratio": ("f64", "mean gr engine active (0..1)"),
    "gr_engine_active_p95_ratio": ("f64", "95th percentile gr engine active (0..1)"),
    "sm_active_mean_ratio": ("f64", "mean sm active (0..1)"),
    "sm_active_p95_ratio": ("f64", "95th percentile sm active (0..1)"),
    "sm_occupancy_mean_ratio": ("f64", "mean sm occupancy (0..1)"),
    "sm_occupancy_p95_ratio": ("f64", "95th percentile sm occupancy (0..1)"),
    "tensor_active_mean_ratio": ("f64", "mean tensor active (0..1)"),
    "tensor_active_p95_ratio": ("f64", "95th percentile tensor active (0..1)"),
    "dram_active_mean_ratio": ("f64", "mean dram active (0..1)"),
    "dram_active_p95_ratio": ("f64", "95th percentile dram active (0..1)"),
    "fp16_active_mean_ratio": ("f64", "mean fp16 active (0..1)"),
    "fp16_active_p95_ratio": ("f64", "95th percentile fp16 active (0..1)"),
    "fp32_active_mean_ratio": ("f64", "mean fp32 active (0..1)"),
    "fp32_active_p95_ratio": ("f64", "95th percentile fp32 active (0..1)"),
    "fp64_active_mean_ratio": ("f64", "mean fp64 active (0..1)"),
    "fp64_active_p95_ratio": ("f64", "95th percentile fp64 active (0..1)"),
    "mem_copy_util_mean_ratio": ("f64", "mean NVML memory-copy utilization (0..1)"),
    "power_mean_w": ("f64", "mean board power, W"),
    "power_p95_w": ("f64", "95th percentile board power, W"),
    "sm_clock_mean_hz": ("f64", "mean SM clock, Hz"),
    "mem_clock_mean_hz": ("f64", "mean memory clock, Hz"),
    "fb_used_max_bytes": ("f64", "max device memory in use, bytes"),
    "pcie_tx_mean_bytes_per_s": ("f64", "mean PCIe TX, B/s"),
    "pcie_rx_mean_bytes_per_s": ("f64", "mean PCIe RX, B/s"),
    "nvlink_tx_mean_bytes_per_s": ("f64", "mean NVLink TX, B/s"),
    "nvlink_rx_mean_bytes_per_s": ("f64", "mean NVLink RX, B/s"),
    "busy_share": ("f64", "fraction of samples in state busy (0..1)"),
    "tensor_idle_share": ("f64", "fraction of samples in state tensor_idle (0..1)"),
    "busy_tensor_idle_share": ("f64", "fraction of samples in state busy_tensor_idle (0..1)"),
    "dram_high_share": ("f64", "fraction of samples in state dram_high (0..1)"),
    "memory_bound_share": ("f64", "fraction of samples in state memory_bound (0..1)"),
    "idle_share": ("f64", "fraction of samples in state idle (0..1)"),
    "allocated_idle_share": ("f64", "fraction of samples in state allocated_idle (0..1)"),
    "stuck_profiler_share": ("f64", "fraction of samples in state stuck_profiler (0..1)"),
    "busy_s": ("f64", "busy_share x span_s, s"),
    "busy_tensor_idle_s": ("f64", "busy_tensor_idle_share x span_s, s"),
    "memory_bound_s": ("f64", "memory_bound_share x span_s, s"),
    "idle_s": ("f64", "idle_share x span_s, s"),
    "allocated_idle_s": ("f64", "allocated_idle_share x span_s, s"),
    "has_profiling": ("bool", "any DCGM profiling field present"),
    "profiling_fields": ("i64", "distinct profiling fields present"),
    "null_values": ("i64", "values reported blank (N/A, sentinel) in the window"),
    "ratio_clamped_values": ("i64", "profiling ratios in (1, 1.5] clamped to 1"),
    "ratio_max_raw": ("f64", "largest profiling ratio before clamping"),
    "percent_as_ratio": ("bool", "a ratio field held values > 1.5 (percent fed as ratio)"),
    "ratio_as_percent": ("bool", "GPU-Util looked like a ratio fed as percent"),
    "stalled_fields": ("str", "profiling fields constant and non-zero over >= 30 samples"),
    "excluded": ("str", "why the window is unfit for performance rules, or null"),
    "class": ("str", "class of the window's GPU time, first match in ridgeline.analyzer.fleet.classes.CLASS_ORDER: "
              "unavailable, unknown, idle, idle_allocated, tensor_bound, compute_bound, memory_bound, io_bound, "
              "busy_low_throughput, busy"),
    # health (ridgeline.analyzer.fleet.health); null where the input carries no such series
    "health_fields": ("i64", "distinct health fields (XID, ECC, row remap, NVLink/PCIe error counters) reported in the window; 0/null: nothing known about health"),
    "xid_codes": ("str", "new XID codes in the window (value non-zero and changed from the GPU's previous one), comma list in order of first sight"),
    "xid_first_seen": ("datetime_us_utc", "time the first new XID of the window was reported"),
    "xid_at_start_code": ("i64", "non-zero XID code already held at the GPU's first sample (may predate the capture)"),
    "ecc_sbe_increase_count": ("f64", "single-bit ECC errors added in the window (larger of volatile and aggregate counter increases)"),
    "ecc_dbe_increase_count": ("f64", "double-bit ECC errors added in the window (larger of volatile and aggregate counter increases)"),
    "ecc_dbe_first_seen": ("datetime_us_utc", "first sample in the window whose double-bit ECC count rose"),
    "remapped_rows_correctable_increase_count": ("f64", "rows remapped for correctable errors added in the window"),
    "remapped_rows_uncorrectable_increase_count": ("f64", "rows remapped for uncorrectable errors added in the window"),
    "row_remap_pending": ("bool", "a row remap was pending in the window (GPU reset needed)"),
    "row_remap_failure": ("bool", "a row remap failure was reported in the window"),
    "row_remap_first_seen": ("datetime_us_utc", "first sample in the window with a pending or failed row remap"),
    "nvlink_crc_increase_count": ("f64", "NVLink flit + data CRC errors added in the window"),
    "nvlink_replay_increase_count": ("f64", "NVLink replays added in the window"),
    "pcie_replay_increase_count": ("f64", "PCIe replays added in the window"),
    "counter_resets": ("i64", "health counters that went down in the window (driver reload / exporter restart); the increase counts the new value from zero"),
}


def _throttle_columns() -> dict[str, tuple[str, str]]:
    from ridgeline.analyzer.fleet.throttle import window_schema

    return window_schema()


# clock event (throttle) reasons, temperature, power limit (ridgeline.analyzer.fleet.throttle)
WINDOW_COLUMNS.update(_throttle_columns())

_DTYPES = {
    "str": "String",
    "i64": "Int64",
    "f64": "Float64",
    "bool": "Boolean",
}


def polars_schema(columns: dict[str, tuple[str, str]]):
    """Return ``{column: polars dtype}`` for one of the schemas above."""
    import polars as pl

    out = {}
    for name, (kind, _doc) in columns.items():
        if kind == "list[str]":
            out[name] = pl.List(pl.String)
        elif kind == "datetime_us_utc":
            out[name] = pl.Datetime("us", "UTC")
        else:
            out[name] = getattr(pl, _DTYPES[kind])
    return out


def markdown_table(columns: dict[str, tuple[str, str]]) -> str:
    """Render a schema as a Markdown table (used for docs/schema.md)."""
    lines = ["| column | type | meaning |", "|---|---|---|"]
    for name, (kind, doc) in columns.items():
        lines.append(f"| `{name}` | {kind} | {doc} |")
    return "\n".join(lines)


# OP_GROUPS: PyTorch ops on the roofline, one row per (input, device, op, input shapes, dtypes),
# ridgeline.analyzer.ops.groups (models: docs/op-models.md)
OP_GROUP_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "op": ("str", "the leaf CPU op that launched the kernels (innermost op on the launching thread); null: kernels "
           "launched outside any op (no launch record, graph replays, library threads), a row of their own"),
    "input_dims": ("str", "the op's Input Dims as compact JSON text (null: shapes not recorded)"),
    "input_types": ("str", "the op's Input type as compact JSON text"),
    "calls": ("i64", "op calls in the group (calls that launched kernels)"),
    "kernels": ("i64", "kernels those calls launched"),
    "gpu_time_s": ("f64", "sum over calls of the union of each call's kernel intervals, s"),
    "share": ("f64", "gpu_time_s / the device's kernel time in op groups"),
    "flops": ("f64", "modelled FLOPs of all calls (null: no model for the op or its shapes)"),
    "bytes": ("f64", "modelled bytes, each operand read once and the output written once: a lower bound on DRAM traffic"),
    "precision": ("str", "the roof the op runs on (a PRECISIONS key: from the dtype, and the kernel for fp32 GEMMs on TF32)"),
    "achieved_flops_per_s": ("f64", "flops / gpu_time_s"),
    "achieved_bytes_per_s": ("f64", "bytes / gpu_time_s"),
    "roof_time_s": ("f64", "max(flops / peak of the precision, bytes / DRAM bandwidth) on the device's GPU (datasheet; "
                    "null: GPU not in the catalogue, or no model)"),
    "bound": ("str", "'compute' or 'memory': the larger term of roof_time_s"),
    "roof_fraction": ("f64", "roof_time_s / gpu_time_s (above 1: the model or the peak is wrong for this group)"),
    "saving_s": ("f64", "gpu_time_s - roof_time_s, at least 0: the time reaching the roof would save"),
    "model": ("str", "the model applied (the op name in docs/op-models.md), null: none"),
    "kernel": ("str", "the kernel the group's calls ran most often"),
}

# OP_COVERAGE: per input and device, how much kernel time the op models cover
OP_COVERAGE_COLUMNS: dict[str, tuple[str, str]] = {
    "source": ("str", "input file"),
    "device": ("i64", "CUDA device index"),
    "kernel_time_s": ("f64", "kernel time in op groups (sum of the groups' gpu_time_s)"),
    "model_coverage": ("f64", "share of kernel_time_s in groups with a model, 0 to 1"),
}
