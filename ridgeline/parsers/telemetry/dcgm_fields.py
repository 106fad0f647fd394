"""DCGM / nvidia-smi vocabulary as data: vendor names -> canonical telemetry field + scale.

Nothing here parses; parsers look names up in these tables. The canonical fields and their
units are :data:`ridgeline.analyzer.schema.TELEMETRY_FIELDS`. ``scale`` multiplies the raw
value into the canonical unit (percent -> ratio 0.01, MiB -> bytes 1048576, MHz -> Hz 1e6).

Sources (facts, see DCGM-FORMATS notes): DCGM 4.6 ``dcgm_fields.h`` ids and exporter names
(unchanged since 2.x), the 4.6 "Field Naming Standard" renames (kept as aliases; DCGM keeps
the old names too), dcgm-exporter 1.x (gpu-monitoring-tools) lower-case names, ``dcgmi dmon``
short names, ``nvidia-smi --query-gpu`` properties and ``nvidia-smi dmon`` columns.

Health fields (XID, ECC, row remapping, NVLink CRC/replay, PCIe replay; ids, 4.6 names and
dmon short names from DCGM's ``dcgmlib/dcgm_fields.h`` and ``dcgmlib/src/dcgm_fields.cpp``):
``xid_last_code`` is the code of the last XID seen (0 = none), ``*_flag`` fields are 0/1, and the
``*_count`` fields are cumulative counters (volatile ECC counts reset on driver reload, aggregate
ones persist; the reduction turns them into increases per window, see
:mod:`ridgeline.analyzer.fleet.health`). ``raw_unit`` "count" / "code" / "flag": scale 1.

Clock event reasons (field 112, ``DCGM_FI_DEV_CLOCK_THROTTLE_REASONS``, renamed
``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` in DCGM's ``dcgm_fields.h``, which keeps the old name as a
deprecated alias; dmon short name ``DVCCTR``) is a bitmask, ``raw_unit`` "mask"; the power limit is
field 160 ``DCGM_FI_DEV_POWER_MGMT_LIMIT`` (``PMLMT``). See :mod:`ridgeline.analyzer.fleet.throttle`.

A DCGM field whose id is known but which ridgeline does not analyze (energy, retired pages,
...) maps to nothing: parsers list such series in ``skipped`` by name.
"""

from __future__ import annotations

import dataclasses

PERCENT = 0.01
MIB = 1048576.0
MHZ = 1e6

# DCGM "blank" sentinels: int64 values >= 0x7ffffffffffffff0 (9223372036854775792) and
# doubles >= 1.40737488355328e14 mean not-supported / not-found / no-permission.
INT64_BLANK_MIN = 0x7FFFFFFFFFFFFFF0
FP64_BLANK_MIN = 1.40737488355328e14


@dataclasses.dataclass(frozen=True)
class FieldDef:
    field_id: int
    exporter: str  # dcgm-exporter metric name (= DCGM C macro name up to 4.5)
    canonical: str  # TELEMETRY_FIELDS key
    scale: float  # raw * scale = canonical unit
    raw_unit: str  # "%", "ratio", "MiB", "MHz", "W", "C", "B/s"
    dmon: str | None = None  # dcgmi dmon short name
    aliases: tuple[str, ...] = ()  # 4.6 renamed names, 1.x exporter names


FIELDS: tuple[FieldDef, ...] = (
    FieldDef(100, "DCGM_FI_DEV_SM_CLOCK", "sm_clock_hz", MHZ, "MHz", "SMCLK",
             ("dcgm_sm_clock",)),
    FieldDef(101, "DCGM_FI_DEV_MEM_CLOCK", "mem_clock_hz", MHZ, "MHz", "MMCLK",
             ("dcgm_memory_clock",)),
    # clock event (throttle) reasons: a bitmask of nvmlClocksEventReason* bits, decoded by
    # ridgeline.analyzer.fleet.throttle; dmon short name DVCCTR (dcgm_fields.cpp)
    FieldDef(112, "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "clock_event_reasons_mask", 1.0, "mask", "DVCCTR",
             ("DCGM_FI_DEV_CLOCKS_EVENT_REASONS",)),
    FieldDef(150, "DCGM_FI_DEV_GPU_TEMP", "gpu_temp_c", 1.0, "C", "TMPTR",
             ("dcgm_gpu_temp", "DCGM_FI_DEV_GPU_TEMP_CELSIUS")),
    FieldDef(155, "DCGM_FI_DEV_POWER_USAGE", "power_w", 1.0, "W", "POWER",
             ("dcgm_power_usage", "DCGM_FI_DEV_BOARD_POWER_WATTS")),
    FieldDef(160, "DCGM_FI_DEV_POWER_MGMT_LIMIT", "power_limit_w", 1.0, "W", "PMLMT",
             ("DCGM_FI_DEV_BOARD_POWER_LIMIT_REQUESTED_WATTS",)),
    FieldDef(203, "DCGM_FI_DEV_GPU_UTIL", "gpu_util_ratio", PERCENT, "%", "GPUTL",
             ("dcgm_gpu_utilization", "DCGM_FI_DEV_GPU_UTIL_RATIO")),
    FieldDef(204, "DCGM_FI_DEV_MEM_COPY_UTIL", "mem_copy_util_ratio", PERCENT, "%", "MCUTL",
             ("dcgm_mem_copy_utilization",)),
    FieldDef(250, "DCGM_FI_DEV_FB_TOTAL", "fb_total_bytes", MIB, "MiB", "FBTTL",
             ("dcgm_fb_total",)),
    FieldDef(251, "DCGM_FI_DEV_FB_FREE", "fb_free_bytes", MIB, "MiB", "FBFRE",
             ("dcgm_fb_free",)),
    FieldDef(252, "DCGM_FI_DEV_FB_USED", "fb_used_bytes", MIB, "MiB", "FBUSD",
             ("dcgm_fb_used",)),
    FieldDef(1001, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gr_engine_active_ratio", 1.0, "ratio", "GRACT",
             ("DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO",)),
    FieldDef(1002, "DCGM_FI_PROF_SM_ACTIVE", "sm_active_ratio", 1.0, "ratio", "SMACT",
             ("DCGM_FI_PROF_SM_UTIL_RATIO",)),
    FieldDef(1003, "DCGM_FI_PROF_SM_OCCUPANCY", "sm_occupancy_ratio", 1.0, "ratio", "SMOCC",
             ("DCGM_FI_PROF_SM_OCCUPANCY_RATIO",)),
    FieldDef(1004, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "tensor_active_ratio", 1.0, "ratio", "TENSO",
             ("DCGM_FI_PROF_TENSOR_UTIL_RATIO",)),
    FieldDef(1005, "DCGM_FI_PROF_DRAM_ACTIVE", "dram_active_ratio", 1.0, "ratio", "DRAMA",
             ("DCGM_FI_PROF_DRAM_UTIL_RATIO",)),
    FieldDef(1006, "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "fp64_active_ratio", 1.0, "ratio", "FP64A",
             ("DCGM_FI_PROF_FP64_UTIL_RATIO",)),
    FieldDef(1007, "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "fp32_active_ratio", 1.0, "ratio", "FP32A",
             ("DCGM_FI_PROF_FP32_UTIL_RATIO",)),
    FieldDef(1008, "DCGM_FI_PROF_PIPE_FP16_ACTIVE", "fp16_active_ratio", 1.0, "ratio", "FP16A",
             ("DCGM_FI_PROF_FP16_UTIL_RATIO",)),
    FieldDef(1009, "DCGM_FI_PROF_PCIE_TX_BYTES", "pcie_tx_bytes_per_s", 1.0, "B/s", "PCITX"),
    FieldDef(1010, "DCGM_FI_PROF_PCIE_RX_BYTES", "pcie_rx_bytes_per_s", 1.0, "B/s", "PCIRX"),
    FieldDef(1011, "DCGM_FI_PROF_NVLINK_TX_BYTES", "nvlink_tx_bytes_per_s", 1.0, "B/s", "NVLTX"),
    FieldDef(1012, "DCGM_FI_PROF_NVLINK_RX_BYTES", "nvlink_rx_bytes_per_s", 1.0, "B/s", "NVLRX"),
    FieldDef(1013, "DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", "tensor_imma_active_ratio", 1.0, "ratio", "TIMMA"),
    FieldDef(1014, "DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", "tensor_hmma_active_ratio", 1.0, "ratio", "THMMA"),
    FieldDef(1015, "DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", "tensor_dfma_active_ratio", 1.0, "ratio", "TDFMA"),
    # health (aliases: the DCGM 4.6 names; the old ones stay defined as macros)
    FieldDef(230, "DCGM_FI_DEV_XID_ERRORS", "xid_last_code", 1.0, "code", "XIDER",
             ("DCGM_FI_DEV_XID_ERROR", "dcgm_xid_errors")),
    FieldDef(202, "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "pcie_replay_count", 1.0, "count", "RPCTR",
             ("DCGM_FI_DEV_PCIE_REPLAY_TOTAL", "dcgm_pcie_replay_counter")),
    FieldDef(310, "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "ecc_sbe_volatile_count", 1.0, "count", "ESVTL"),
    FieldDef(311, "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "ecc_dbe_volatile_count", 1.0, "count", "EDVTL"),
    FieldDef(312, "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "ecc_sbe_aggregate_count", 1.0, "count", "ESATL"),
    FieldDef(313, "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "ecc_dbe_aggregate_count", 1.0, "count", "EDATL"),
    FieldDef(393, "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "remapped_rows_uncorrectable_count", 1.0, "count",
             "URMPS", ("DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL",)),
    FieldDef(394, "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "remapped_rows_correctable_count", 1.0, "count",
             "CRMPS", ("DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL",)),
    FieldDef(395, "DCGM_FI_DEV_ROW_REMAP_FAILURE", "row_remap_failure_flag", 1.0, "flag", "RRF",
             ("DCGM_FI_DEV_ROW_REMAP_FAILED",)),
    FieldDef(396, "DCGM_FI_DEV_ROW_REMAP_PENDING", "row_remap_pending_flag", 1.0, "flag", "RRP"),
    FieldDef(409, "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "nvlink_crc_flit_error_count", 1.0, "count",
             "NFELT", ("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_TOTAL",)),
    FieldDef(419, "DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_COUNT_TOTAL", "nvlink_crc_data_error_count", 1.0, "count",
             "NDELT", ("DCGM_FI_DEV_NVLINK_CRC_DATA_ERROR_TOTAL",)),
    FieldDef(429, "DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "nvlink_replay_error_count", 1.0, "count",
             "NRELT", ("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_TOTAL",)),
)

# canonical fields whose values must lie in 0..1
RATIO_FIELDS: frozenset[str] = frozenset(f.canonical for f in FIELDS if f.raw_unit in ("ratio", "%"))
# DCGM profiling (DCP) fields: absent on vGPU, consumer GPUs, pre-Volta, no DCP module
PROFILING_FIELDS: frozenset[str] = frozenset(f.canonical for f in FIELDS if 1001 <= f.field_id <= 1015)
# health fields (XID code, 0/1 flags, cumulative error counters)
HEALTH_FIELDS: tuple[str, ...] = tuple(f.canonical for f in FIELDS if f.raw_unit in ("code", "flag", "count"))


def blank_to_null(value):
    """NaN, infinities and DCGM blank sentinels (float blanks >= FP64_BLANK_MIN) -> null: the
    rule every telemetry value goes through (``value`` a Float64 polars expression)."""
    import polars as pl

    return pl.when(value.is_nan() | value.is_infinite() | (value.abs() >= FP64_BLANK_MIN)).then(None).otherwise(value)


def scaled(num, scale):
    """``num`` (polars expression) in canonical units: percent is divided by 100 (exact:
    70 % -> 0.7, not 0.7000000000000001); other scales multiply. ``scale``: a float or a
    polars expression holding one per row."""
    import polars as pl

    if isinstance(scale, (int, float)):
        return num / 100.0 if scale == PERCENT else num * float(scale)
    return pl.when(scale == PERCENT).then(num / 100.0).otherwise(num * scale)


def _by_name() -> dict[str, FieldDef]:
    out: dict[str, FieldDef] = {}
    for f in FIELDS:
        for name in (f.exporter, *f.aliases):
            out[name.lower()] = f
    return out


_BY_NAME = _by_name()
_BY_DMON = {f.dmon: f for f in FIELDS if f.dmon}
_BY_ID = {f.field_id: f for f in FIELDS}


def lookup_exporter(name: str) -> FieldDef | None:
    """Exporter metric name (any case; 1.x and 4.6 aliases accepted) -> FieldDef or None."""
    return _BY_NAME.get(name.strip().lower())


def lookup_dmon(short: str) -> FieldDef | None:
    """``dcgmi dmon`` short name (``TENSO``) -> FieldDef or None."""
    return _BY_DMON.get(short.strip().upper())


def lookup_id(field_id: int) -> FieldDef | None:
    return _BY_ID.get(int(field_id))


def name_map() -> dict[str, tuple[str, float]]:
    """Every accepted lower-case column/field name -> (canonical field, scale).

    Includes the canonical names themselves (scale 1), exporter names and aliases, and the
    dmon short names. Used by the table reader (long ``field`` values, wide column names).
    """
    from ridgeline.analyzer.schema import TELEMETRY_FIELDS

    out: dict[str, tuple[str, float]] = {c: (c, 1.0) for c in TELEMETRY_FIELDS}
    for name, f in _BY_NAME.items():
        out[name] = (f.canonical, f.scale)
    for short, f in _BY_DMON.items():
        out.setdefault(short.lower(), (f.canonical, f.scale))
    return out


# nvidia-smi --query-gpu property (lower case, without the " [unit]" suffix) -> (field, scale)
# Units inside values (" %", " MiB", " W", " MHz") are stripped before scaling.
NVIDIA_SMI_QUERY: dict[str, tuple[str, float]] = {
    "utilization.gpu": ("gpu_util_ratio", PERCENT),
    "utilization.memory": ("mem_copy_util_ratio", PERCENT),
    "memory.used": ("fb_used_bytes", MIB),
    "memory.free": ("fb_free_bytes", MIB),
    "memory.total": ("fb_total_bytes", MIB),
    "power.draw": ("power_w", 1.0),
    "power.draw.average": ("power_w", 1.0),
    "power.draw.instant": ("power_w", 1.0),
    "clocks.sm": ("sm_clock_hz", MHZ),
    "clocks.current.sm": ("sm_clock_hz", MHZ),
    "clocks.mem": ("mem_clock_hz", MHZ),
    "clocks.current.memory": ("mem_clock_hz", MHZ),
    "temperature.gpu": ("gpu_temp_c", 1.0),
    "power.limit": ("power_limit_w", 1.0),
    # the active clock event reasons as a hex bitmask ("0x0000000000000004"); renamed from
    # clocks_throttle_reasons.* by newer drivers (see HEX_QUERY)
    "clocks_throttle_reasons.active": ("clock_event_reasons_mask", 1.0),
    "clocks_event_reasons.active": ("clock_event_reasons_mask", 1.0),
}
# nvidia-smi --query-gpu properties whose values are hexadecimal ("0x...")
NVIDIA_SMI_HEX = frozenset({"clocks_throttle_reasons.active", "clocks_event_reasons.active"})
# nvidia-smi --query-gpu properties that identify the row rather than measure
NVIDIA_SMI_IDENTITY = {"timestamp": "timestamp", "index": "gpu", "name": "model", "uuid": "uuid",
                       "gpu_name": "model", "gpu_uuid": "uuid"}

# `nvidia-smi dmon` column (lower case) -> (field, scale). `sm` is NVML GPU-Util, not SM_ACTIVE.
NVIDIA_SMI_DMON: dict[str, tuple[str, float]] = {
    "pwr": ("power_w", 1.0),
    "gtemp": ("gpu_temp_c", 1.0),
    "sm": ("gpu_util_ratio", PERCENT),
    "mem": ("mem_copy_util_ratio", PERCENT),
    "mclk": ("mem_clock_hz", MHZ),
    "pclk": ("sm_clock_hz", MHZ),
    "fb": ("fb_used_bytes", MIB),
}
