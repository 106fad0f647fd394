"""Nsight Compute vocabulary as data: column names, section labels and roofline recipes.

Everything vendor-specific the ncu parser knows lives here, so a renamed metric or a new
release is a table edit. Sources of each fact (see the project's NCU-FORMATS notes):
NVIDIA's ``SpeedOfLight*RooflineChart`` section files (recipes, peaks), the NERSC roofline
methodology (``dram__bytes``, ``lts__t_bytes``, ``l1tex__t_bytes``, cycles/clock time) and
real exports from 2019.5 to 2026.2 (column sets, labels, unit spellings).

A recipe is a list of alternatives tried in order, per launch: the first whose required
counters are all present (not null) gives the value, and the ``*_source`` column names
exactly those counters.
"""

from __future__ import annotations

import dataclasses
import re

# --------------------------------------------------------------------------------------
# CSV columns
# --------------------------------------------------------------------------------------
#: identity columns (header name -> KERNEL column); whichever are present
IDENTITY_COLUMNS: dict[str, str] = {
    "ID": "launch_id",
    "Process ID": "process_id",
    "Process Name": "process_name",
    "Host Name": "host_name",
    "Kernel Name": "kernel_name",
    "Context": "context",
    "Stream": "stream",
    "Block Size": "block_size",
    "Grid Size": "grid_size",
    "Device": "device",
    "CC": "cc",
}
#: details-page columns that hold the metric (long form)
DETAILS_METRIC_COLUMNS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")
#: optional rule columns (2021.2+ with sections; speedup columns ~2023+)
DETAILS_RULE_COLUMNS = (
    "Rule Name",
    "Rule Type",
    "Rule Description",
    "Estimated Speedup Type",
    "Estimated Speedup",
)
#: columns of ncu's --print-summary CSV (rejected: per-launch data is lost there)
SUMMARY_MARKERS = ("Invocations", "Minimum", "Maximum", "Average")

# --------------------------------------------------------------------------------------
# Section labels (details pages without --print-metric-name name) -> raw metric names.
# Keyed by (label, base unit after conversion) because one label can mean two things:
# "Memory Throughput" is a percent in SpeedOfLight and byte/second in MemoryWorkloadAnalysis.
# --------------------------------------------------------------------------------------
SECTION_LABELS: dict[tuple[str, str], str] = {
    ("Duration", "second"): "gpu__time_duration.sum",
    ("DRAM Throughput", "%"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    ("SOL FB", "%"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",  # 2019.x label
    ("DRAM Frequency", "hz"): "dram__cycles_elapsed.avg.per_second",
    ("Memory Frequency", "hz"): "dram__cycles_elapsed.avg.per_second",  # 2019.x label
    ("SM Frequency", "hz"): "sm__cycles_elapsed.avg.per_second",
    ("Elapsed Cycles", "cycle"): "gpc__cycles_elapsed.max",
    ("SM Active Cycles", "cycle"): "sm__cycles_active.avg",
    ("Compute (SM) Throughput", "%"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ("Compute (SM) [%]", "%"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ("SM [%]", "%"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",  # 2019.x label
    ("SOL SM", "%"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    # "Memory [%]" / "Memory Throughput" (%) is the busiest memory unit, NOT DRAM: it is kept
    # under its own name and never used as dram_throughput_pct.
    ("Memory Throughput", "%"): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory [%]", "%"): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("Memory Throughput", "byte/second"): "dram__bytes.sum.per_second",
    ("L1/TEX Cache Throughput", "%"): "l1tex__throughput.avg.pct_of_peak_sustained_active",
    ("L2 Cache Throughput", "%"): "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    ("SOL L2", "%"): "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    ("SOL TEX", "%"): "l1tex__throughput.avg.pct_of_peak_sustained_active",
    ("Block Size", ""): "launch__block_size",
    ("Grid Size", ""): "launch__grid_size",
    ("Threads", "thread"): "launch__thread_count",
    ("Registers Per Thread", "register/thread"): "launch__registers_per_thread",
    # Occupancy, Compute Workload and Warp State Statistics sections (stall-bound evidence)
    ("Achieved Occupancy", "%"): "sm__warps_active.avg.pct_of_peak_sustained_active",
    ("Theoretical Occupancy", "%"): "sm__maximum_warps_per_active_cycle_pct",
    ("Issue Slots Busy", "%"): "sm__inst_issued.avg.pct_of_peak_sustained_active",
    ("Warp Cycles Per Issued Instruction", ""): "smsp__average_warp_latency_per_inst_issued.ratio",
    ("Warp Cycles Per Issued Instruction", "cycle"): "smsp__average_warp_latency_per_inst_issued.ratio",
}

#: labels of ncu's roofline chart bodies (``--section SpeedOfLight_RooflineChart`` details
#: pages, with a ``Body Item Label`` column) -> the metric each prints, whatever its unit
#: (NVIDIA's section files; NCU-FORMATS 4.2b). "Theoretical ... Operations" are the peak FMA
#: FLOPs per cycle (derived ``_x2`` metrics), "... Per Cycle" the achieved rates per elapsed cycle.
SECTION_LABELS_ANY_UNIT: dict[str, str] = {
    "Theoretical Predicated-On FFMA Operations": "derived__sm__sass_thread_inst_executed_op_ffma_pred_on_x2",
    "Theoretical Predicated-On DFMA Operations": "derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2",
    "Theoretical DRAM Bytes Accessible": "dram__bytes.sum.peak_sustained",
    "Predicated-On FADD Thread Instructions Executed Per Cycle": "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
    "Predicated-On FMUL Thread Instructions Executed Per Cycle": "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
    "Predicated-On FFMA Operations Per Cycle": "derived__smsp__sass_thread_inst_executed_op_ffma_pred_on_x2",
    "Predicated-On DADD Thread Instructions Executed Per Cycle": "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed",
    "Predicated-On DMUL Thread Instructions Executed Per Cycle": "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed",
    "Predicated-On DFMA Operations Per Cycle": "derived__smsp__sass_thread_inst_executed_op_dfma_pred_on_x2",
    "DRAM Bandwidth": "dram__bytes.sum.per_second",
}

#: unit assumed when a metric is printed with a blank unit (or a raw page has no units row):
#: ncu's base units. Device clock attributes are printed in kHz without a unit.
UNITS_WHEN_BLANK: dict[str, str] = {
    "gpu__time_duration.sum": "ns",
    "device__attribute_memory_clock_rate": "Khz",
    "device__attribute_clock_rate": "Khz",
    "device__attribute_max_gpu_frequency_khz": "Khz",
}

#: string-valued metrics the KERNEL table uses
STRING_METRICS = ("device__attribute_display_name",)

# --------------------------------------------------------------------------------------
# Recipes
# --------------------------------------------------------------------------------------
DURATION = "@duration"  # pseudo-metric: the launch's duration_s, once computed
CYCLES = "@cycles"  # pseudo-metric: the launch's elapsed SM cycles (per SM), once computed
SM_COUNT = "device__attribute_multiprocessor_count"
SASS = "sass_thread_inst_executed_op_{op}_pred_on"


@dataclasses.dataclass(frozen=True)
class Term:
    metric: str
    factor: float = 1.0
    optional: bool = False  # added when present (Blackwell paired FP32 ops)


@dataclasses.dataclass(frozen=True)
class Alt:
    """sum(factor * metric) [* scale] [/ divide]"""

    terms: tuple[Term, ...]
    scale: str | None = None
    divide: str | None = None

    def metrics(self) -> list[str]:
        out = [t.metric for t in self.terms]
        out += [m for m in (self.scale, self.divide) if m]
        return out

    def label(self) -> str:
        parts = []
        for t in self.terms:
            f = "" if t.factor == 1 else f"{t.factor:g}*"
            parts.append(f"{f}{t.metric}")
        text = " + ".join(parts)
        if self.scale:
            text = (f"({text})" if len(self.terms) > 1 else text) + " x " + (
                "duration" if self.scale == DURATION else self.scale
            )
        if self.divide:
            text += f" / {self.divide}"
        return text


def _alt(terms, scale=None, divide=None) -> Alt:
    return Alt(tuple(Term(*t) if isinstance(t, tuple) else Term(t) for t in terms), scale, divide)


def _flop_alts(ops: list[tuple[str, float]], optional: list[tuple[str, float]] = ()) -> list[Alt]:
    """Totals (.sum), then per-cycle rates x elapsed cycles, then per-second rates x duration;
    sm__ before smsp__ (same totals)."""
    alts = []
    forms = [(".sum", None), (".sum.per_cycle_elapsed", CYCLES), (".sum.per_second", DURATION)]
    for suffix, scale in forms:
        for unit in ("sm__", "smsp__"):
            terms = [Term(unit + SASS.format(op=op) + suffix, f) for op, f in ops]
            terms += [Term(unit + SASS.format(op=op) + suffix, f, True) for op, f in optional]
            alts.append(Alt(tuple(terms), scale))
    return alts


FLOP_RECIPES: dict[str, list[Alt]] = {
    "flops_fp64": _flop_alts([("dadd", 1), ("dmul", 1), ("dfma", 2)]),
    # Blackwell (ncu 2025.4+) paired FP32 instructions count double (fma2: 4 FLOPs)
    "flops_fp32": _flop_alts([("fadd", 1), ("fmul", 1), ("ffma", 2)], [("fadd2", 2), ("fmul2", 2), ("ffma2", 4)]),
    # ncu's own convention (SpeedOfLight_HierarchicalHalfRooflineChart): HADD/HMUL/HFMA are
    # counted as half2 instructions, 2/2/4 FLOPs. NERSC's scripts use 1/1/2, i.e. half of this.
    "flops_fp16": _flop_alts([("hadd", 2), ("hmul", 2), ("hfma", 4)]),
}

DURATION_RECIPE: list[Alt] = [
    _alt(["gpu__time_duration.sum"]),
    _alt(["sm__cycles_elapsed.avg"], divide="sm__cycles_elapsed.avg.per_second"),
    _alt(["smsp__cycles_elapsed.avg"], divide="smsp__cycles_elapsed.avg.per_second"),
]

#: elapsed cycles of one SM (= of one SMSP: same clock), what every ``.per_cycle_elapsed`` rate
#: is per. ``sm__X.sum.per_cycle_elapsed = sm__X.sum / sm__cycles_elapsed.avg`` and the smsp__
#: form divides by ``smsp__cycles_elapsed.avg``: the same count. Reports with the roofline section
#: often hold only ``smsp__cycles_elapsed.sum`` (all SMSPs: SMs x 4 since Volta, the oldest GPU
#: ncu profiles), the clock (``.avg.per_second``, times the duration) or ``gpc__cycles_elapsed.max``
#: (ncu's "Elapsed Cycles": the slowest GPC on the GPC clock, which runs with the SM clock; within
#: ~1% of the SM count on real reports, so last).
CYCLES_RECIPE: list[Alt] = [
    _alt(["sm__cycles_elapsed.avg"]),
    _alt(["smsp__cycles_elapsed.avg"]),
    _alt([("smsp__cycles_elapsed.sum", 0.25)], divide=SM_COUNT),
    _alt(["sm__cycles_elapsed.sum"], divide=SM_COUNT),
    _alt(["smsp__cycles_elapsed.avg.per_second"], scale=DURATION),
    _alt(["sm__cycles_elapsed.avg.per_second"], scale=DURATION),
    _alt(["gpc__cycles_elapsed.max"]),
]

BYTE_RECIPES: dict[str, list[Alt]] = {
    "dram_bytes": [
        _alt(["dram__bytes.sum"]),
        _alt(["dram__bytes_read.sum", "dram__bytes_write.sum"]),
        _alt(["dram__bytes_op_read.sum", "dram__bytes_op_write.sum"]),  # CC 12.0 exports
        _alt([("dram__sectors_read.sum", 32), ("dram__sectors_write.sum", 32)]),
        _alt([("dram__sectors.sum", 32)]),
        _alt(["dram__bytes.sum.per_second"], scale=DURATION),
        _alt(["dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second"], scale=DURATION),
    ],
    "l2_bytes": [
        _alt(["lts__t_bytes.sum"]),
        _alt([("lts__t_sectors.sum", 32)]),
        _alt(["lts__t_bytes.sum.per_second"], scale=DURATION),
        # last resort, what `--set roofline` collects: ncu's own definition (L2 -> crossbar, 32 B
        # a cycle), named in the source; matches the lts2xbar L2 peak
        _alt([("lts__lts2xbar_cycles_active.sum.per_second", 32)], scale=DURATION),
    ],
    "l1_bytes": [
        _alt(["l1tex__t_bytes.sum"]),
        _alt([("l1tex__t_sectors.sum", 32)]),
        _alt(["l1tex__t_bytes.sum.per_second"], scale=DURATION),
        # ncu's roofline sections: LSU writeback cycles x 128 B (see peak_l1_bytes_per_s)
        _alt([("l1tex__lsu_writeback_active_mem_lgds.sum.per_second", 128)], scale=DURATION),
        _alt([("l1tex__lsu_writeback_active_mem_lg.sum.per_second", 128)], scale=DURATION),
        _alt([("l1tex__lsu_writeback_active.sum.per_second", 128)], scale=DURATION),
    ],
}

CLOCKS: dict[str, list[str]] = {
    "sm_clock_hz": ["sm__cycles_elapsed.avg.per_second", "smsp__cycles_elapsed.avg.per_second"],
    "dram_clock_hz": ["dram__cycles_elapsed.avg.per_second"],
}

def _rate_alts(ops: list[tuple[str, float]]) -> list[Alt]:
    """Achieved FLOP/s as the roofline sections chart them: per-cycle rates x SM clock, or per second."""
    alts = []
    for suffix, scale in ((".sum.per_cycle_elapsed", "@sm_clock_hz"), (".sum.per_second", None)):
        for unit in ("smsp__", "sm__"):
            alts.append(Alt(tuple(Term(unit + SASS.format(op=op) + suffix, f) for op, f in ops), scale))
    return alts


#: achieved rates, read for launches WITHOUT a duration (section exports): their totals are
#: unknown, their place on the roofline is not (intensity = FLOP/s over bytes/s)
RATE_RECIPES: dict[str, list[Alt]] = {
    "flops_fp32_per_s": _rate_alts([("fadd", 1), ("fmul", 1), ("ffma", 2)]),
    "flops_fp64_per_s": _rate_alts([("dadd", 1), ("dmul", 1), ("dfma", 2)]),
    "dram_bytes_per_s": [
        _alt(["dram__bytes.sum.per_second"]),
        _alt(["dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second"]),
    ],
}

#: peaks the export recorded: per-cycle peak x factor x clock
PEAK_RECIPES: dict[str, list[Alt]] = {
    "peak_flops_fp64_per_s": [
        _alt([("sm__" + SASS.format(op="dfma") + ".sum.peak_sustained", 2)], scale="@sm_clock_hz"),
    ],
    "peak_flops_fp32_per_s": [
        _alt([("sm__" + SASS.format(op="ffma") + ".sum.peak_sustained", 2)], scale="@sm_clock_hz"),
    ],
    "peak_flops_fp16_per_s": [
        _alt([("sm__" + SASS.format(op="hfma") + ".sum.peak_sustained", 4)], scale="@sm_clock_hz"),
    ],
    "peak_dram_bytes_per_s": [
        _alt(["dram__bytes.sum.peak_sustained"], scale="dram__cycles_elapsed.avg.per_second"),
    ],
    # L2 and L1 roofs: bytes/cycle peak x the cache's own clock. The NERSC definition first
    # (all traffic through the tag stage, the one l2_bytes/l1_bytes are counted with), then the
    # one ncu's hierarchical roofline sections use: L2 -> crossbar cycles x 32 B, L1
    # writeback cycles x 128 B (local/global(+shared) since CC 7.5/9.0, all before). The source
    # string names the counters, so "lts2xbar"/"lsu_writeback" in it says which definition.
    "peak_l2_bytes_per_s": [
        _alt(["lts__t_bytes.sum.peak_sustained"], scale="lts__cycles_elapsed.avg.per_second"),
        _alt([("lts__lts2xbar_cycles_active.sum.peak_sustained", 32)], scale="lts__cycles_elapsed.avg.per_second"),
    ],
    "peak_l1_bytes_per_s": [
        _alt(["l1tex__t_bytes.sum.peak_sustained"], scale="l1tex__cycles_elapsed.avg.per_second"),
        _alt([("l1tex__lsu_writeback_active_mem_lgds.sum.peak_sustained", 128)], scale="l1tex__cycles_elapsed.avg.per_second"),
        _alt([("l1tex__lsu_writeback_active_mem_lg.sum.peak_sustained", 128)], scale="l1tex__cycles_elapsed.avg.per_second"),
        _alt([("l1tex__lsu_writeback_active.sum.peak_sustained", 128)], scale="l1tex__cycles_elapsed.avg.per_second"),
    ],
}
#: recorded bandwidth peaks of the cache levels: KERNEL column -> memory level of its roof
CACHE_PEAK_LEVELS = {"peak_l2_bytes_per_s": "l2", "peak_l1_bytes_per_s": "l1"}

#: derived__ metrics of ncu's roofline sections, rewritten to the counters they stand for:
#: derived name -> (counter, divide by). [section files: derived__sm__..._x2 is the per-cycle
#: peak x 2; derived__smsp__..._x2 the achieved per-cycle rate x 2]
DERIVED_ALIASES: dict[str, tuple[str, float]] = {}
for _op, _f in (("dfma", 2), ("ffma", 2), ("hfma", 4), ("hadd", 2), ("hmul", 2), ("fadd2", 2), ("fmul2", 2), ("ffma2", 4)):
    DERIVED_ALIASES[f"derived__sm__{SASS.format(op=_op)}_x{_f}"] = (f"sm__{SASS.format(op=_op)}.sum.peak_sustained", _f)
    DERIVED_ALIASES[f"derived__smsp__{SASS.format(op=_op)}_x{_f}"] = (
        f"smsp__{SASS.format(op=_op)}.sum.per_cycle_elapsed",
        _f,
    )
# hierarchical roofline sections: byte peaks defined as cycle peaks x bytes per cycle
for _d, _t, _f in (
    ("lts__lts2xbar_bytes", "lts__lts2xbar_cycles_active", 32),
    ("l1tex__lsu_writeback_bytes_mem_lgds", "l1tex__lsu_writeback_active_mem_lgds", 128),  # CC 9.0+
    ("l1tex__lsu_writeback_bytes_mem_lg", "l1tex__lsu_writeback_active_mem_lg", 128),  # CC 7.5-8.9
    ("l1tex__lsu_writeback_bytes", "l1tex__lsu_writeback_active", 128),  # up to CC 7.2
):
    DERIVED_ALIASES[f"derived__{_d}.sum.peak_sustained"] = (f"{_t}.sum.peak_sustained", _f)
    DERIVED_ALIASES[f"derived__{_d}.sum.per_second"] = (f"{_t}.sum.per_second", _f)

#: DRAM peak from device attributes when no peak counter was collected (theoretical):
#: 2 (DDR) x memory_clock_rate [kHz] x 1e3 x bus_width [bit] / 8
DEVICE_DRAM_PEAK = ("device__attribute_memory_clock_rate", "device__attribute_global_memory_bus_width")
DEVICE_DRAM_PEAK_SOURCE = "ncu-device-attributes"

DEVICE_ATTRIBUTES = (
    "device__attribute_display_name",
    "device__attribute_memory_clock_rate",
    "device__attribute_global_memory_bus_width",
    "device__attribute_compute_capability_major",
    "device__attribute_compute_capability_minor",
    "device__attribute_device_index",
    # SM count and maximum SM clock: roofs derived for a GPU the catalogue does not know
    # (ridgeline.analyzer.kernels.archrates); the clock attributes are in kHz
    "device__attribute_multiprocessor_count",
    "device__attribute_max_gpu_frequency_khz",
    "device__attribute_clock_rate",
    "launch__block_size",
    "launch__grid_size",
    "launch__device_id",
)

PERCENT_METRICS: dict[str, list[str]] = {
    "dram_throughput_pct": [
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    ],
    "sm_throughput_pct": ["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
    # ncu's Speed-of-Light "Memory Throughput": the busiest memory unit (L1, L2 or DRAM), which with
    # sm_throughput_pct decides the bound of a launch the roofline cannot place (analyzer.kernels.speed_of_light)
    "memory_throughput_pct": ["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"],
    # stall-bound evidence (ridgeline.analyzer.kernels.latency); smsp__ forms are the same averages per sub-partition
    "achieved_occupancy_pct": [
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "smsp__warps_active.avg.pct_of_peak_sustained_active",
    ],
    "theoretical_occupancy_pct": ["sm__maximum_warps_per_active_cycle_pct"],
    "issue_slots_busy_pct": [
        "sm__inst_issued.avg.pct_of_peak_sustained_active",
        "smsp__issue_active.avg.pct_of_peak_sustained_active",
    ],
    "warp_cycles_per_issue": ["smsp__average_warp_latency_per_inst_issued.ratio"],
}

#: ncu's warp stall reasons (Warp State Statistics): cycles per issued instruction a warp spent
#: stalled on each, ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio``; the
#: parser keeps the largest recorded one (stall_top_reason, stall_top_cycles_per_issue)
STALL_REASONS = (  # as ncu 2025-2026 writes them on Hopper (the H200 raw pages in shared/samples)
    "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle", "long_scoreboard",
    "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction", "not_selected", "selected",
    "short_scoreboard", "sleeping", "tex_throttle", "wait", "warpgroup_arrive",
)
#: reasons that are not stalls (the warp issued, or another warp was picked)
NOT_STALLS = ("selected", "not_selected")
STALL_METRIC = "smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"

# --------------------------------------------------------------------------------------
# Tensor cores
# --------------------------------------------------------------------------------------
#: totals are sm__ops_path_tensor_src_*; per-instruction-family counters have _op_<family>_
TENSOR_TOTAL_RE = re.compile(r"^sm__ops_path_tensor_src_([a-z0-9_]+?)(\.sum(\.per_cycle_elapsed|\.per_second)?)$")
TENSOR_FAMILY_RE = re.compile(r"^sm__ops_path_tensor_op_[a-z0-9]+_src_([a-z0-9_]+?)(\.sum(\.per_cycle_elapsed|\.per_second)?)$")
TENSOR_PEAK_SUFFIX = ".sum.peak_sustained"
#: (regex on what follows "src_", i.e. the input precision first; bucket), first match wins.
#: fp4/fp6 go with fp8 (one column); CC 7.5's src_fp16_bf16_tf32 path is counted as fp16.
TENSOR_BUCKETS: list[tuple[str, str]] = [
    (r"^fp64(_|$)", "fp64"),
    (r"^(fp4|fp6|fp8)(_|$)", "fp8"),
    (r"^int(8|4|1)(_|$)", "int8"),
    (r"^tf32(_|$)", "tf32"),
    (r"^(fp16|bf16)(_|$)", "fp16"),
]
TENSOR_COLUMNS = {
    "fp16": "flops_tensor_fp16",
    "tf32": "flops_tensor_tf32",
    "fp8": "flops_tensor_fp8",
    "int8": "flops_tensor_int8",
    "fp64": "flops_tensor_fp64",
}
#: Volta: one HMMA.884 warp instruction = 512 FLOPs. Valid only on CC 7.0 (an Ampere
#: m16n8k16 HMMA is 4096): elsewhere the counter is kept but gives no FLOPs.
VOLTA_TENSOR_COUNTERS = ("sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum")
VOLTA_TENSOR_FLOPS_PER_INST = 512
VOLTA_CC = "7.0"


#: tensor-pipe activity per instruction family, collected by the default and detailed sets even
#: when no FLOP counter is: ``sm__pipe_tensor_op_<family>_cycles_active`` and
#: ``sm__inst_executed_pipe_tensor_op_<family>`` as % of peak (elapsed or active cycles), and
#: ``sm__pipe_tensor_cycles_active`` (all families: 0 says no tensor instruction ran).
TENSOR_PIPE_RE = re.compile(
    r"^(?:sm|smsp)__(?:pipe_tensor(?:_op_([a-z]+))?_cycles_active|inst_executed_pipe_tensor_op_([a-z]+))"
    r"\.avg\.pct_of_peak_sustained_(elapsed|active)$"
)
#: the family's instruction -> the tensor precision it computes in (NVIDIA's SASS families:
#: HMMA/HGMMA fp16, bf16 or tf32 inputs (labelled fp16_tensor, the family's common case),
#: IMMA/IGMMA integer, QGMMA fp8, DMMA fp64; BMMA/BGMMA are 1-bit and name no precision)
TENSOR_PIPE_PRECISION: dict[str, str] = {
    "hmma": "fp16_tensor",
    "hgmma": "fp16_tensor",
    "imma": "int8_tensor",
    "igmma": "int8_tensor",
    "qgmma": "fp8_tensor",
    "dmma": "fp64_tensor",
}


def tensor_bucket(src: str) -> str | None:
    for pattern, bucket in TENSOR_BUCKETS:
        if re.search(pattern, src):
            return bucket
    return None


def static_metric_names() -> set[str]:
    """Every fixed metric name a recipe may read (tensor counters are matched by pattern)."""
    names: set[str] = set(STRING_METRICS) | set(DEVICE_ATTRIBUTES) | set(DEVICE_DRAM_PEAK)
    for alts in (*FLOP_RECIPES.values(), DURATION_RECIPE, CYCLES_RECIPE, *BYTE_RECIPES.values(), *PEAK_RECIPES.values(),
                 *RATE_RECIPES.values()):
        for alt in alts:
            names.update(m for m in alt.metrics() if not m.startswith("@"))
    for lst in (*CLOCKS.values(), *PERCENT_METRICS.values()):
        names.update(lst)
    names.update(VOLTA_TENSOR_COUNTERS)
    names.update(STALL_METRIC.format(reason=r) for r in STALL_REASONS)
    names.update(DERIVED_ALIASES)
    names.update(["sm__cycles_elapsed.avg", "smsp__cycles_elapsed.avg"])
    return names


#: the tensor counters the derivation reads, by pattern: the precision totals and per-family counts
#: (TENSOR_TOTAL_RE, TENSOR_FAMILY_RE) with their ``.sum.peak_sustained`` rates (TENSOR_PEAK_SUFFIX),
#: and the tensor-pipe activity (TENSOR_PIPE_RE). The other rollups ncu prints for the same counters
#: (``.avg``, ``.max``, ``.min``, ``.pct_of_peak...``: 450 of a Hopper full-section page's 600
#: tensor columns) are not read. One regex, for polars too (details pages filter Metric Name with it).
TENSOR_METRIC_PATTERN = (r"^sm__ops_path_tensor_(?:op_[a-z0-9]+_)?src_[a-z0-9_]+?"
                         r"\.sum(?:\.per_cycle_elapsed|\.per_second|\.peak_sustained)?$|" + TENSOR_PIPE_RE.pattern)
_TENSOR_METRIC_RE = re.compile(TENSOR_METRIC_PATTERN)


def is_tensor_metric(name: str) -> bool:
    return name.startswith(("sm__ops_path_tensor_", "sm__pipe", "smsp__pipe", "sm__inst", "smsp__inst")) \
        and _TENSOR_METRIC_RE.match(name) is not None


NEEDED_METRICS = frozenset(static_metric_names())


def needed_metric(name: str) -> bool:
    """True for a column the derivation (:mod:`ridgeline.parsers.ncu.derive`) can read: the one
    declaration of what the readers keep (raw page by columns, raw and details frames, .ncu-rep).
    Every other metric stays in ``NcuResult.metrics`` only."""
    return name in NEEDED_METRICS or is_tensor_metric(name)
