"""What DCGM would have sampled: ``dcgmi dmon`` text and dcgm-exporter scrapes, as text.

Moved from ``fixtures/generate.py``. Every file starts with a comment saying it is SYNTHETIC.
"""

from __future__ import annotations

import dataclasses
import random
import zlib

from ridgeline.synth.workload import Device, Launch

SYNTHETIC_NOTE = "SYNTHETIC telemetry made by ridgeline.synth (not a real capture)"

# ------------------------------------------------------------------------------------------
# DCGM telemetry
# ------------------------------------------------------------------------------------------
# (exporter name, dmon short name, kind) ; kind: pct (int percent), ratio (0..1), mib, watt
FIELDS = {
    "gpu_util": ("DCGM_FI_DEV_GPU_UTIL", "GPUTL", 203, "pct", "GPU utilization (in %)."),
    "mem_copy_util": ("DCGM_FI_DEV_MEM_COPY_UTIL", "MCUTL", 204, "pct", "Memory utilization (in %)."),
    "fb_used": ("DCGM_FI_DEV_FB_USED", "FBUSD", 252, "mib", "Framebuffer memory used (in MiB)."),
    "power": ("DCGM_FI_DEV_POWER_USAGE", "POWER", 155, "watt", "Power draw (in W)."),
    "gr_active": ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GRACT", 1001, "ratio", "Ratio of time the graphics engine is active."),
    "sm_active": ("DCGM_FI_PROF_SM_ACTIVE", "SMACT", 1002, "ratio", "The ratio of cycles an SM has at least 1 warp assigned."),
    "tensor_active": ("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "TENSO", 1004, "ratio", "Ratio of cycles the tensor (HMMA) pipe is active."),
    "dram_active": ("DCGM_FI_PROF_DRAM_ACTIVE", "DRAMA", 1005, "ratio", "Ratio of cycles the device memory interface is active sending or receiving data."),
    "sm_clock": ("DCGM_FI_DEV_SM_CLOCK", "SMCLK", 100, "int", "SM clock frequency (in MHz)."),
    "temp": ("DCGM_FI_DEV_GPU_TEMP", "TMPTR", 150, "int", "GPU temperature (in C)."),
    "power_limit": ("DCGM_FI_DEV_POWER_MGMT_LIMIT", "PMLMT", 160, "watt", "Current power limit (in W)."),
    "clock_reasons": ("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DVCCTR", 112, "int",
                      "Current clock throttle reasons (bitmask)."),
}
CLOCK_FIELDS = ("sm_clock", "temp", "power_limit", "clock_reasons")
# throttle causes of clock_series: (clock factor, power limit factor, temperature C, reasons mask).
# Mask bits: NVML nvmlClocksEventReason* (0x4 SW power cap, 0x8 HW slowdown, 0x20 SW thermal,
# 0x40 HW thermal; see ridgeline.analyzer.fleet.throttle.REASONS)
THROTTLE_CAUSES = {
    "power_cap": (0.62, 0.45, 66.0, 0x4),  # power limit set to 315 of 700 W: held at the cap, clock down
    "thermal": (0.70, 1.0, 91.0, 0x20 | 0x40),  # too hot: thermal slowdown
    "hw_slowdown": (0.45, 1.0, 70.0, 0x8),  # HW slowdown (power brake / external signal)
}
DMON_FIELDS = ("gpu_util", "mem_copy_util", "fb_used", "power", "gr_active", "sm_active", "tensor_active",
               "dram_active")
PROF = ("gr_active", "sm_active", "tensor_active", "dram_active")


@dataclasses.dataclass
class GpuSeries:
    """One GPU (or MIG instance) over time: field -> list of values (None = not reported)."""

    host: str
    gpu: int
    uuid: str
    model: str
    values: dict[str, list[float | None]]
    instance: str | None = None  # MIG GPU instance id
    profile: str | None = None  # MIG profile, e.g. "3g.40gb"
    dmon_entity: str | None = None  # e.g. "GPU-I 21" for dmon
    # workload labels the exporter adds (pod, namespace, container, ...): one dict for the whole
    # run, or [(first tick, dict or None), ...] for a GPU that changes hands (None: no workload)
    labels: dict | list | None = None

    def labels_at(self, tick: int) -> dict | None:
        if self.labels is None or isinstance(self.labels, dict):
            return self.labels
        current = None
        for first, lab in self.labels:
            if tick >= first:
                current = lab
        return current


def step_activity(launches: list[Launch], dev: Device, *, gap_s: float) -> dict[str, float]:
    """DCGM ratios for a workload that repeats ``launches`` back to back with ``gap_s`` idle per step."""
    busy = sum(k.duration_s for k in launches)
    step = busy + gap_s
    tensor = 0.0
    for k in launches:
        if k.tensor_precision:
            tensor += k.tensor_flops / dev.peak("fp8_tensor" if k.tensor_precision == "fp8" else "fp16_tensor")
    dram = sum(k.dram_bytes for k in launches) / dev.bw
    sm = sum(k.duration_s * min(1.0, (k.grid[0] * k.grid[1] * k.grid[2]) / dev.sm_count) for k in launches)
    return {
        "gr_active": busy / step,
        "sm_active": sm / step,
        "tensor_active": tensor / step,
        "dram_active": dram / step,
    }


# a low-traffic window on a serving GPU: kernels still run most of the time (small batches,
# launch overhead, polling) but each busy second does far less tensor and DRAM work
LOW_TRAFFIC = {"gr_active": 0.6, "sm_active": 0.45, "tensor_active": 0.12, "dram_active": 0.2}

# DCGM activity of the workload archetypes that do not depend on the GPU ("memory_bound" is a
# decode step's own activity, see step_activity), and the framebuffer each keeps in use (MiB)
ARCHETYPES = {
    # continuous batching of prefill + decode at a busy hour: real tensor work
    "serving_mix": {"gr_active": 0.96, "sm_active": 0.83, "tensor_active": 0.27, "dram_active": 0.47},
    "training": {"gr_active": 0.97, "sm_active": 0.91, "tensor_active": 0.46, "dram_active": 0.38},
    "busy_tensor_idle": {"gr_active": 0.96, "sm_active": 0.22, "tensor_active": 0.004, "dram_active": 0.06},
    "idle_allocated": {"gr_active": 0.0, "sm_active": 0.0, "tensor_active": 0.0, "dram_active": 0.0},
}
ARCHETYPE_FB_MIB = {"idle_allocated": 71000, "busy_tensor_idle": 23000, "training": 66000}
DEFAULT_FB_MIB = 52000
STUCK_FROM = 0.75  # share of the capture after which a stuck profiler reads 0 with GPU-Util 100


def pin_gpu_util(rng: random.Random, vals: dict, n: int) -> None:
    """GPU-Util of a busy GPU whose tensor cores idle: 97..100% every tick."""
    vals["gpu_util"] = [float(min(100, 97 + rng.randint(0, 3))) for _ in range(n)]


def stick_profiler(vals: dict, n: int) -> int:
    """From :data:`STUCK_FROM` of the capture on, every PROF ratio reads 0 while GPU-Util reads
    100 (a stuck profiling module); returns the first stuck tick."""
    stuck = int(n * STUCK_FROM)
    for f in PROF:
        vals[f] = [v if i < stuck else 0.0 for i, v in enumerate(vals[f])]
    vals["gpu_util"] = [v if i < stuck else 100.0 for i, v in enumerate(vals["gpu_util"])]
    return stuck


def synth_series(rng: random.Random, n: int, base: dict[str, float], *, fb_mib: float, power_idle=72.0,
                 power_max=700.0, noise=0.02, scale=None) -> dict[str, list[float | None]]:
    """Turn steady-state ratios into n samples with noise.

    ``scale[i]`` multiplies the activity of tick i: a number for every PROF field, or a dict
    field -> factor (e.g. :data:`LOW_TRAFFIC`).
    """
    out: dict[str, list[float | None]] = {f: [] for f in DMON_FIELDS}
    for i in range(n):
        s = 1.0 if scale is None else scale[i]
        factor = s if isinstance(s, dict) else {f: s for f in PROF}
        # relative noise plus a little absolute noise (real low ratios wobble in the 3rd decimal);
        # a field whose base is exactly 0 (idle) stays exactly 0
        r = {}
        for f in PROF:
            v = base.get(f, 0.0) * factor.get(f, 1.0)
            if v > 0:
                v = v * (1.0 + rng.uniform(-noise, noise)) + rng.uniform(-0.002, 0.002)
            r[f] = max(0.0, min(1.0, v))
        busy = r["gr_active"]
        util = 0 if busy < 0.005 else min(100, int(round(100 * min(1.0, busy * 1.25 + 0.02))))
        if base.get("gpu_util_override") is not None:
            util = int(base["gpu_util_override"])
        out["gpu_util"].append(float(util))
        out["mem_copy_util"].append(float(min(100, int(round(100 * r["dram_active"] * 1.05)))))
        out["fb_used"].append(float(int(fb_mib)))
        load = max(r["tensor_active"] * 1.1, r["dram_active"] * 0.85, r["sm_active"] * 0.5)
        out["power"].append(round(power_idle + (power_max - power_idle) * min(1.0, load) + rng.uniform(-4, 4), 3))
        for f in PROF:
            out[f].append(round(r[f], 3))
    return out


def clock_series(rng: random.Random, vals: dict, n: int, *, cause: str | None = None, boost_mhz: float = 1980.0,
                 power_limit_w: float = 700.0, factor: float = 1.0) -> None:
    """Add SM clock, temperature, power limit and clock throttle reasons to ``vals`` (in place).

    A working GPU runs at ``boost_mhz`` x ``factor`` (+-1%); ``cause`` (a key of
    :data:`THROTTLE_CAUSES`) throttles it: the clock and (power cap) the power limit fall, power
    is held at the lower limit, the temperature and the reasons mask say why. An idle tick
    (GPU-Util 0) reports the GPU-idle reason (0x1) at a low clock.
    """
    clock_f, limit_f, temp_c, mask = THROTTLE_CAUSES[cause] if cause else (1.0, 1.0, 62.0, 0)
    limit = round(power_limit_w * limit_f, 3)
    out = {f: [] for f in CLOCK_FIELDS}
    for i in range(n):
        idle = not vals["gpu_util"][i]
        out["sm_clock"].append(float(345 if idle else int(round(boost_mhz * factor * clock_f * (1 + rng.uniform(-0.01, 0.01))))))
        out["temp"].append(float(int(round((38.0 if idle else temp_c) + rng.uniform(-1, 1)))))
        out["power_limit"].append(limit)
        out["clock_reasons"].append(float(0x1 if idle else mask))
        if not idle and vals["power"][i] is not None:
            vals["power"][i] = round(min(vals["power"][i], limit - rng.uniform(1, 6)), 3)
    vals.update(out)


def _uuid(host: str, gpu: int, salt: str = "") -> str:
    h = f"{zlib.crc32((host + str(gpu) + salt).encode()):08x}{zlib.crc32((salt + host + 'x' + str(gpu)).encode()):08x}"
    h = (h * 2)[:32]
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def dmon_text(series: list[GpuSeries], *, interval_ms: int, fields=DMON_FIELDS, warmup_ticks: int = 2,
              banner: str = "", note: str = SYNTHETIC_NOTE) -> str:
    """``dcgmi dmon`` text (DCGM 3.x dialect: 10-wide entity column, header every 14 ticks).

    dmon rows carry no timestamps: the command line is recorded first so readers know -d.
    """
    ids = ",".join(str(FIELDS[f][2]) for f in fields)
    # dmon has no comment syntax: readers list these two lines as text before the header
    parts = [f"# {note}" + (f" -- {banner}" if banner else "") + "\n"]
    parts.append(f"dcgmi dmon -e {ids} -d {interval_ms}\n")
    width = 13
    head = "#Entity   " + "".join(FIELDS[f][1].ljust(width) for f in fields)
    units = "ID        " + "".join(("W" if FIELDS[f][3] == "watt" else "").ljust(width) for f in fields)
    n = len(next(iter(series[0].values.values())))
    for tick in range(n):
        if tick % 14 == 0:
            parts.append(head.rstrip() + "\n" + units.rstrip() + "\n")
        for s in series:
            ent = s.dmon_entity or f"GPU {s.gpu}"
            cells = []
            for f in fields:
                val = s.values[f][tick]
                kind = FIELDS[f][3]
                if val is None or (tick < warmup_ticks and f in PROF):
                    cell = "N/A"
                elif kind == "ratio":
                    cell = f"{val:.3f}"
                elif kind == "watt":
                    cell = f"{val:.3f}"
                elif kind == "int":
                    cell = str(int(val))
                else:
                    cell = str(int(val))
                cells.append(cell.ljust(width))
            parts.append(ent.ljust(10) + "".join(cells) + "\n")
    return "".join(parts)


def exporter_text(series: list[GpuSeries], *, start_ms: int, interval_ms: int,
                  fields=("gpu_util", "fb_used", "power", "gr_active", "tensor_active", "dram_active"),
                  note: str = SYNTHETIC_NOTE) -> str:
    """dcgm-exporter /metrics scrapes appended to one file, each sample with its timestamp (ms).

    Values: ints as %d, doubles as %f (6 decimals); a missing value means the line is absent.
    """
    n = len(next(iter(series[0].values.values())))
    parts = [f"# {note}\n"]
    for tick in range(n):
        ts = start_ms + tick * interval_ms
        for f in fields:
            name, _short, _fid, kind, help_text = FIELDS[f]
            lines = []
            for s in series:
                val = s.values.get(f, [None] * n)[tick]
                if val is None:
                    continue
                labels = (f'gpu="{s.gpu}",UUID="{s.uuid}",device="nvidia{s.gpu}",modelName="{s.model}"')
                if s.instance is not None:
                    labels += f',GPU_I_PROFILE="{s.profile}",GPU_I_ID="{s.instance}"'
                labels += f',Hostname="{s.host}",DCGM_FI_DRIVER_VERSION="550.90.07"'
                for k, v in (s.labels_at(tick) or {}).items():
                    labels += f',{k}="{v}"'
                text = f"{val:f}" if kind in ("ratio", "watt") else str(int(val))
                lines.append(f"{name}{{{labels}}} {text} {ts}\n")
            if lines:
                ptype = "gauge"
                parts.append(f"# HELP {name} {help_text}\n# TYPE {name} {ptype}\n")
                parts.extend(lines)
    return "".join(parts)
