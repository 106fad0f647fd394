"""Clock event (throttle) reasons, temperature and power limit per GPU x window.

Called from the per-partition reduction (:func:`ridgeline.analyzer.fleet.telemetry._window_query`),
like :mod:`ridgeline.analyzer.fleet.health`, so it runs wherever the reduction runs (local threads or
Dask) and gives the same rows.

The input field ``clock_event_reasons_mask`` is DCGM field 112
(``DCGM_FI_DEV_CLOCK_THROTTLE_REASONS``; ``DCGM_FI_DEV_CLOCKS_EVENT_REASONS`` in newer
``dcgm_fields.h``, which keeps the old name as a deprecated alias; ``dcgmi dmon`` short name
``DVCCTR``) or nvidia-smi's ``clocks_throttle_reasons.active`` / ``clocks_event_reasons.active``
(a hex string). DCGM passes NVML's ``nvmlDeviceGetCurrentClocksEventReasons`` bitmask through
unchanged; the bits are NVML's ``nvmlClocksEventReason*`` constants (formerly
``nvmlClocksThrottleReason*``; ``nvml.h``, and the same values in NVIDIA's ``nvidia-ml-py``
bindings): see :data:`REASONS`.

Window columns (null where the input carries no such series):

* ``throttle_<reason>_share``: the fraction of the window's samples with a reported mask in
  which that bit was set (0..1). ``gpu_idle`` is the normal state of an idle GPU and
  ``sw_power_cap`` is common under full load (the board holds its power limit by lowering the
  clock); the slowdowns (``hw_slowdown``, ``sw_thermal``, ``hw_thermal``, ``hw_power_brake``) are
  the ones that point at the card, its cooling or its power supply.
* ``clock_reason_samples``: samples with a reported mask in the window.
* ``gpu_temp_mean_c``, ``gpu_temp_max_c``: GPU temperature (``DCGM_FI_DEV_GPU_TEMP``).
* ``power_limit_w``: the board power limit (``DCGM_FI_DEV_POWER_MGMT_LIMIT``, nvidia-smi
  ``power.limit``), largest value in the window.

:mod:`ridgeline.analyzer.fleet.stragglers` reads these as the evidence of a straggler.
"""

from __future__ import annotations

MASK = "clock_event_reasons_mask"
# canonical fields this module reduces (added to the reduction's USED_FIELDS)
FIELDS = (MASK, "gpu_temp_c", "power_limit_w")

# (bit, short name, NVML constant, meaning). Source: nvml.h nvmlClocksEventReason* (values
# 0x1..0x100; the same in nvidia-ml-py's pynvml.py); DCGM field 112 carries this mask.
REASONS: tuple[tuple[int, str, str, str], ...] = (
    (0x1, "gpu_idle", "nvmlClocksEventReasonGpuIdle", "GPU idle: nothing running, clocks lowered"),
    (0x2, "app_clocks", "nvmlClocksEventReasonApplicationsClocksSetting",
     "clocks held by the applications-clocks setting (nvidia-smi -ac / locked clocks)"),
    (0x4, "sw_power_cap", "nvmlClocksEventReasonSwPowerCap",
     "software power cap: the board is at its power limit and lowered the clock to stay there"),
    (0x8, "hw_slowdown", "nvmlClocksEventReasonHwSlowdown",
     "hardware slowdown (clock cut by half or more): thermal, power brake or an external signal"),
    (0x10, "sync_boost", "nvmlClocksEventReasonSyncBoost",
     "sync boost: held to the clock of the other GPUs of its sync-boost group"),
    (0x20, "sw_thermal", "nvmlClocksEventReasonSwThermalSlowdown",
     "software thermal slowdown: GPU or memory temperature above its limit"),
    (0x40, "hw_thermal", "nvmlClocksEventReasonHwThermalSlowdown",
     "hardware thermal slowdown: the GPU is too hot"),
    (0x80, "hw_power_brake", "nvmlClocksEventReasonHwPowerBrakeSlowdown",
     "hardware power brake: an external power-brake signal (the power supply)"),
    (0x100, "display_clocks", "nvmlClocksEventReasonDisplayClockSetting",
     "clocks held by the display clock setting"),
)
# reasons that point at the card, its cooling or power rather than the workload
SLOWDOWNS = ("hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake")
SHARE_COLUMNS = tuple(f"throttle_{name}_share" for _b, name, _c, _m in REASONS)
MEANINGS = {name: meaning for _b, name, _c, meaning in REASONS}


def decode(mask: int | None) -> list[str]:
    """The reason names set in one mask value (None: nothing known)."""
    if mask is None:
        return []
    m = int(mask)
    return [name for bit, name, _c, _m in REASONS if m & bit]


def row_columns(has: set) -> list:
    """Per-row temporaries: one 0/1 column per reason (null where no mask was reported)."""
    import polars as pl

    if MASK not in has:
        return []
    m = pl.col(MASK).cast(pl.Int64, strict=False)
    return [((m & bit) != 0).alias(f"_thr_{name}") for bit, name, _c, _m in REASONS]  # Boolean: mean = share


def window_aggs(has: set) -> list:
    """Aggregations per (GPU, window) of the fields in ``has`` (null columns are added by the
    reduction's schema for the others)."""
    import polars as pl

    aggs = []
    if MASK in has:
        aggs.append(pl.col(MASK).count().cast(pl.Int64).alias("clock_reason_samples"))
        aggs += [pl.col(f"_thr_{name}").mean().alias(f"throttle_{name}_share") for _b, name, _c, _m in REASONS]
    if "gpu_temp_c" in has:
        aggs += [pl.col("gpu_temp_c").mean().alias("gpu_temp_mean_c"), pl.col("gpu_temp_c").max().alias("gpu_temp_max_c")]
    if "power_limit_w" in has:
        aggs.append(pl.col("power_limit_w").max().alias("power_limit_w"))
    return aggs


def window_schema() -> dict[str, tuple[str, str]]:
    """The WINDOW columns this module adds (type, description), for the schema table."""
    out = {
        "clock_reason_samples": ("i64", "samples with a clock event (throttle) reasons mask in the window"),
    }
    for _b, name, const, meaning in REASONS:
        out[f"throttle_{name}_share"] = ("f64", f"fraction of those samples with {const} set: {meaning}")
    out.update({
        "gpu_temp_mean_c": ("f64", "mean GPU temperature, C"),
        "gpu_temp_max_c": ("f64", "max GPU temperature, C"),
        "power_limit_w": ("f64", "board power limit (DCGM_FI_DEV_POWER_MGMT_LIMIT / nvidia-smi power.limit), max in the window, W"),
    })
    return out
