"""What Nsight Compute would export for synthetic launches: raw page and details page CSV text.

Moved from ``fixtures/generate.py``. Every export starts with a line saying it is SYNTHETIC
(``note``), before ncu's own ``==PROF==`` lines, which readers skip as non-CSV noise.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import zlib

from ridgeline.synth.workload import HMMA_OVER_HGMMA, Device, Launch

SYNTHETIC_NOTE = "SYNTHETIC profile made by ridgeline.synth (not a real capture)"

# ------------------------------------------------------------------------------------------
# ncu exports
# ------------------------------------------------------------------------------------------
IDENTITY_NEW = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                "Block Size", "Grid Size", "Device", "CC"]
DETAILS_NEW = IDENTITY_NEW + ["Section Name", "Metric Name", "Metric Unit", "Metric Value"]
DETAILS_RULES = DETAILS_NEW + ["Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type",
                               "Estimated Speedup"]
DETAILS_OLD = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Kernel Time", "Context",
               "Stream", "Section Name", "Metric Name", "Metric Unit", "Metric Value"]

OPS = ("dadd", "dfma", "dmul", "fadd", "ffma", "fmul", "hadd", "hfma", "hmul")


def tensor_metric(cc: str, prec: str) -> str:
    """The tensor-pipe operation total ncu reports for inputs of ``prec`` on ``cc``."""
    if cc.startswith("8"):
        return "sm__ops_path_tensor_src_bf16_dst_fp32_sparsity_off" if prec == "bf16" else \
            "sm__ops_path_tensor_src_fp8_sparsity_off"
    if cc.startswith("10"):
        return "sm__ops_path_tensor_src_bf16_dst_fp32" if prec == "bf16" else \
            "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32"
    # 9.0
    return "sm__ops_path_tensor_src_bf16_dst_fp32" if prec == "bf16" else \
        "sm__ops_path_tensor_src_fp8_sparsity_off"


def hopper_tensor_counters(prec: str, total: str, dense: int, ops: float, path: str) -> dict:
    """What a CC 9.0 raw page holds beside the precision total (seen in a real H200 export):
    the bf16 total's peak_sustained is the 2:4-SPARSE rate; per-family counters split the ops
    by instruction path (hgmma = wgmma, hmma = mma.sync) and sparsity, each with its own peak."""
    v: dict[str, tuple[str, object]] = {}
    if prec == "fp8":  # totals split by sparsity; no per-family fp8 counters in that export
        v[f"{total}.sum.peak_sustained"] = ("", dense)
        on = total.replace("_sparsity_off", "_sparsity_on")
        v[f"{on}.sum"] = ("", 0)
        v[f"{on}.sum.peak_sustained"] = ("", 2 * dense)
        return v
    v[f"{total}.sum.peak_sustained"] = ("", 2 * dense)
    for fam, rate in (("hgmma", dense), ("hmma", int(round(dense * HMMA_OVER_HGMMA)))):
        base = f"sm__ops_path_tensor_op_{fam}_src_bf16_dst_fp32"
        v[f"{base}_sparsity_off.sum"] = ("", int(round(ops)) if fam == path else 0)
        v[f"{base}_sparsity_off.sum.peak_sustained"] = ("", rate)
        v[f"{base}_sparsity_on.sum"] = ("", 0)
        v[f"{base}_sparsity_on.sum.peak_sustained"] = ("", 2 * rate if fam == "hgmma" else rate * 3 // 2)
    return v


@dataclasses.dataclass
class Capture:
    """How the (synthetic) profile was taken."""

    dev: Device
    process: str = "python3.12"
    pid: int = 48113
    host: str = "127.0.0.1"
    first_id: int = 0
    start_time: str = "2021-Mar-04 10:15:02"  # old layout 'Kernel Time'
    new_units: bool = True  # ns/hz (2023+) vs nsecond/cycle/second (old)
    precisions: tuple[str, ...] = ("bf16",)
    device_attributes: bool = True


def metric_values(k: Launch, cap: Capture) -> dict[str, tuple[str, object]]:
    """metric name -> (unit, value) for one launch, as ncu would report them."""
    dev = cap.dev
    ns_unit = "ns" if cap.new_units else "nsecond"
    hz_unit = "hz" if cap.new_units else "cycle/second"
    sm_hz = dev.facts.sm_clock_hz * (1.0 + ((hash_int(k.name) % 7) - 3) * 0.0004)
    dram_hz = dev.dram_clock_hz
    dur_ns = max(1, int(round(k.duration_s * 1e9)))
    cycles = dur_ns * 1e-9 * sm_hz
    dram = int(round(k.dram_bytes))
    reads = int(round(dram * k.read_fraction))
    v: dict[str, tuple[str, object]] = {}
    if cap.device_attributes:
        cc_major, cc_minor = dev.cc.split(".")
        mem_khz = int(round(dram_hz / 1e3))
        v.update({
            "device__attribute_clock_rate": ("", dev.facts.max_clock_khz),
            "device__attribute_compute_capability_major": ("", int(cc_major)),
            "device__attribute_compute_capability_minor": ("", int(cc_minor)),
            "device__attribute_display_name": ("", dev.facts.display_name),
            "device__attribute_global_memory_bus_width": ("", dev.facts.bus_width_bits),
            "device__attribute_l2_cache_size": ("", dev.facts.l2_bytes),
            "device__attribute_max_gpu_frequency_khz": ("", dev.facts.max_clock_khz),
            "device__attribute_memory_clock_rate": ("", mem_khz),
            "device__attribute_multiprocessor_count": ("", dev.sm_count),
            "device__attribute_total_memory": ("", dev.memory_bytes),
        })
    else:
        v["device__attribute_display_name"] = ("", dev.facts.display_name)
    v.update({
        "dram__bytes.sum": ("byte", dram),
        "dram__bytes.sum.peak_sustained": ("byte/cycle", dev.dram_bytes_per_cycle),
        "dram__bytes_read.sum": ("byte", reads),
        "dram__bytes_write.sum": ("byte", dram - reads),
        "dram__cycles_elapsed.avg.per_second": (hz_unit, round(dram_hz, 2)),
        "gpu__time_duration.sum": (ns_unit, dur_ns),
        "l1tex__t_bytes.sum": ("byte", int(round(k.dram_bytes * k.l2_factor * k.l1_factor))),
        "launch__block_size": ("", k.block[0] * k.block[1] * k.block[2]),
        "launch__grid_size": ("", k.grid[0] * k.grid[1] * k.grid[2]),
        "launch__registers_per_thread": ("register/thread", k.registers),
        "lts__t_bytes.sum": ("byte", int(round(k.dram_bytes * k.l2_factor))),
        "sm__cycles_elapsed.avg": ("cycle", round(cycles, 2)),
        "sm__cycles_elapsed.avg.per_second": (hz_unit, round(sm_hz, 2)),
    })
    counts = {"fadd": k.fadd, "ffma": k.ffma, "fmul": k.fmul, "hadd": k.hadd, "hfma": k.hfma,
              "hmul": k.hmul, "dadd": 0, "dfma": 0, "dmul": 0}
    for op in OPS:
        v[f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum"] = ("inst", int(counts[op]))
    # per-cycle peaks of the whole GPU at the profiled clock (the catalogue's peaks at that clock)
    clk = dev.facts.sm_clock_hz
    v["sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained"] = (
        "inst/cycle", int(round(dev.peak("fp64") / 2 / clk)))
    v["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"] = (
        "inst/cycle", int(round(dev.peak("fp32") / 2 / clk)))
    v["sm__sass_thread_inst_executed_op_hfma_pred_on.sum.peak_sustained"] = (
        "inst/cycle", int(round(dev.peak("fp16") / 4 / clk)))
    for prec in cap.precisions:
        name = tensor_metric(dev.cc, prec)
        key = "fp16_tensor" if prec == "bf16" else "fp8_tensor"
        value = k.tensor_flops if k.tensor_precision == prec else 0.0
        dense = int(round(dev.peak(key) / clk))
        v[f"{name}.sum"] = ("", int(round(value)))
        if dev.cc.startswith("9"):
            v.update(hopper_tensor_counters(prec, name, dense, value, k.tensor_path))
        else:
            v[f"{name}.sum.peak_sustained"] = ("", dense)
    # percent-of-peak summaries (what the SpeedOfLight section shows)
    t = dur_ns * 1e-9
    dram_pct = 100.0 * k.dram_bytes / t / dev.bw
    if k.tensor_precision:
        sm_pct = 100.0 * k.tensor_flops / t / dev.peak("fp8_tensor" if k.tensor_precision == "fp8" else "fp16_tensor")
    else:
        sm_pct = 100.0 * (k.fadd + k.fmul + 2 * k.ffma) / t / dev.peak("fp32")
    sm_pct = max(sm_pct, min(35.0, dram_pct * 0.4))
    v["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"] = ("%", round(min(dram_pct, 99.0), 2))
    v["sm__throughput.avg.pct_of_peak_sustained_elapsed"] = ("%", round(min(sm_pct, 99.0), 2))
    return v


def hash_int(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def _fmt(value: object, *, grouping: bool) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return f"{value:,}" if grouping else str(value)
    if isinstance(value, float):  # ncu prints floats with 2 decimals
        return f"{value:,.2f}" if grouping else f"{value:.2f}"
    raise TypeError(value)


def _dims(d: tuple[int, int, int]) -> str:
    return f"({d[0]}, {d[1]}, {d[2]})"


def _csv_line(fields: list[str]) -> str:
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n").writerow(fields)
    return buf.getvalue()


def _preamble(cap: Capture, command: str, note: str) -> str:
    return (
        f"{note}\n"
        f"==PROF== Connected to process {cap.pid} (/usr/bin/{cap.process})\n"
        f"==PROF== Synthetic equivalent of: {command}\n"
    )


def _trailer(cap: Capture) -> str:
    return f"==PROF== Disconnected from process {cap.pid}\n"


def ncu_raw_text(launches: list[Launch], cap: Capture, command: str, *, note: str = SYNTHETIC_NOTE) -> str:
    """Raw page, base units: header, units row, one row per launch, metrics sorted by name."""
    rows = [metric_values(k, cap) for k in launches]
    names = sorted(rows[0]) if rows else []
    parts = [_preamble(cap, command, note)]
    parts.append(_csv_line(IDENTITY_NEW + names))
    parts.append(_csv_line([""] * len(IDENTITY_NEW) + [rows[0][n][0] for n in names]))
    for i, (k, vals) in enumerate(zip(launches, rows)):
        ident = [str(cap.first_id + i), str(cap.pid), cap.process, cap.host, k.name, "1", "7",
                 _dims(k.block), _dims(k.grid), "0", cap.dev.cc]
        parts.append(_csv_line(ident + [_fmt(vals[n][1], grouping=False) for n in names]))
    parts.append(_trailer(cap))
    return "".join(parts)


def _kernel_time(cap: Capture, i: int) -> str:
    # one 'Kernel Time' stamp per launch; ncu printed seconds resolution
    base_h, base_m, base_s = 10, 15, 2
    total = base_s + i // 40
    return cap.start_time[:12] + f"{base_h:02d}:{base_m + total // 60:02d}:{total % 60:02d}"


def ncu_details_text(launches: list[Launch], cap: Capture, command: str, *, layout: str,
                     rules: dict[str, tuple[str, str, str, str]] | None = None, note: str = SYNTHETIC_NOTE) -> str:
    """Details page (long form): one row per launch x metric.

    layout: "new" (2023+, 15 columns), "rules" (2023+ with rule columns, 20 columns, ragged
    metric rows, one rule row per launch from ``rules[role]``) or "old" (2019-2021, 12 columns,
    'Kernel Time', nsecond / cycle/second units, thousands separators).
    """
    parts = [_preamble(cap, command, note)]
    header = {"new": DETAILS_NEW, "rules": DETAILS_RULES, "old": DETAILS_OLD}[layout]
    parts.append(_csv_line(header))
    section = "Command line profiler metrics"
    for i, k in enumerate(launches):
        vals = metric_values(k, cap)
        lid = str(cap.first_id + i)
        for name in sorted(vals):
            unit, value = vals[name]
            if layout == "old":
                fields = [lid, str(cap.pid), cap.process, cap.host, k.name, _kernel_time(cap, i), "1", "7",
                          section, name, unit, _fmt(value, grouping=True)]
                parts.append(_csv_line(fields))
            else:
                fields = [lid, str(cap.pid), cap.process, cap.host, k.name, "1", "7", _dims(k.block),
                          _dims(k.grid), "0", cap.dev.cc, section, name, unit, _fmt(value, grouping=False)]
                line = _csv_line(fields)
                if layout == "rules":  # ncu writes plain metric rows short, with a trailing comma
                    line = line[:-1] + ",\n"
                parts.append(line)
        if layout == "rules" and rules and k.role in rules:
            sec_id, rtype, desc, speedup = rules[k.role]
            fields = [lid, str(cap.pid), cap.process, cap.host, k.name, "1", "7", _dims(k.block),
                      _dims(k.grid), "0", cap.dev.cc, sec_id, "", "", "", sec_id + "Rule", rtype, desc,
                      "global", speedup]
            parts.append(_csv_line(fields))
    parts.append(_trailer(cap))
    return "".join(parts)
