"""Per-architecture rates: dense FLOP per SM per clock, by compute capability and precision.

One table (:data:`RATES`) serves two purposes:

* **Checking the catalogue.** Every figure ``gpus.json`` flags as *derived* must equal
  ``sm_count x rate x clock`` for its compute capability (tests/analyzer/kernels/test_gpus_catalogue.py),
  and the datasheet figures agree with it within rounding: a typo in either shows.
* **Roofs for a GPU the catalogue does not know** (:func:`derive_gpu`). When the export
  recorded no peak for a precision and the device name is not in the catalogue, the compute
  roof is ``SMs x rate x SM clock`` from the device attributes ncu records
  (``device__attribute_multiprocessor_count``, ``device__attribute_max_gpu_frequency_khz`` or
  ``device__attribute_clock_rate``, ``device__attribute_compute_capability_major/minor``); the
  DRAM roof is ``2 x memory_clock_rate x bus_width / 8`` (computed by the ncu parser). Such roofs
  carry the source ``derived-from-device-attributes`` and the formula in their detail.

Checked against ncu's own per-cycle peaks in the shared real reports: RTX 2080 Ti (CC 7.5, 68 SMs)
records 4352 FFMA and 136 DFMA per cycle (64 and 2 per SM: 128 and 4 FLOP); H100 PCIe (CC 9.0,
114 SMs) 14,592 FFMA, 7296 DFMA and 14,592 HFMA2 per cycle (256, 128 and 512 FLOP per SM).

The table itself, with the source of every row, is :mod:`ridgeline.analyzer.kernels.archtable` (re-exported
here as :data:`RATES`); it sits below :mod:`ridgeline.analyzer.kernels.gpus` (whose ``GPU.arch`` names an
architecture from it), and this module above both, so they import no circle.
"""

from __future__ import annotations

import re

from ridgeline.analyzer.kernels.archtable import AMD_RATES, RATES, arch_name  # noqa: F401  (re-exported)

#: tensor precisions a GeForce part runs at half rate with FP32 accumulate (int8 keeps its rate)
HALF_RATE_ON_GEFORCE = ("tf32_tensor", "fp16_tensor", "fp8_tensor")

#: device names (normalized words) of parts without tensor cores on an architecture that has them
NO_TENSOR_NAMES = re.compile(r"\bgtx\s*16\d\d", re.IGNORECASE)

DERIVED_SOURCE = "derived-from-device-attributes"


def is_geforce(name: str | None) -> bool:
    """A GeForce (or TITAN) part by its device name: FP32-accumulate tensor work at half rate."""
    return bool(name) and bool(re.search(r"\b(geforce|titan)\b|\b[gr]tx\s*[1-5]0[5-9]0", str(name), re.IGNORECASE))


def per_sm_rate(cc: str | None, precision: str, *, half_accumulate: bool = False, tensor_cores: bool = True) -> float | None:
    """Dense FLOP per SM per clock for ``precision`` on compute capability ``cc``; None when the
    architecture has no such unit (or is not in the table)."""
    entry = RATES.get(str(cc)) if cc else None
    if entry is None:
        return None
    rate = entry[1].get(precision)
    if rate is None:
        return None
    if precision.endswith("_tensor"):
        if not tensor_cores:
            return None
        if half_accumulate and precision in HALF_RATE_ON_GEFORCE and cc not in ("7.0", "8.0", "9.0", "10.0"):
            rate /= 2
    return float(rate)


def per_cu_rate(gfx: str | None, precision: str) -> float | None:
    """Dense FLOP per compute unit per clock for ``precision`` on an AMD gfx target
    (:data:`~ridgeline.analyzer.kernels.archtable.AMD_RATES`); None when the CU has no such unit
    (or the target is not in the table)."""
    entry = AMD_RATES.get(str(gfx).lower()) if gfx else None
    rate = entry[1].get(precision) if entry else None
    return float(rate) if rate is not None else None


def unit_rate(gpu, precision: str) -> float | None:
    """Dense FLOP per unit (SM or CU) per clock of a catalogue GPU for ``precision``: the per-SM
    rate of its compute capability (halved for GeForce FP32-accumulate tensor work) or the per-CU
    rate of its gfx target."""
    if getattr(gpu, "vendor", "NVIDIA") == "AMD":
        return per_cu_rate(gpu.gfx, precision)
    return per_sm_rate(gpu.cc, precision, half_accumulate=gpu.half_rate_accumulate)


def derive_gpu(name: str | None, *, cc: str | None, sm_count: float | None, clock_hz: float | None,
               dram_bw_bytes_per_s: float | None = None):
    """A :class:`~ridgeline.analyzer.kernels.gpus.GPU` for a device the catalogue does not know, from the
    attributes ncu recorded: compute peaks ``sm_count x per_sm_rate x clock_hz`` (clock: the
    device's maximum SM clock), ``datasheet_clock_hz`` that clock (so a recorded SM clock scales
    it as it scales catalogue figures). None when the compute capability is not in :data:`RATES`
    or the SM count or clock is missing."""
    from ridgeline.analyzer.kernels.gpus import GPU, PRECISIONS

    if not cc or cc not in RATES or not sm_count or not clock_hz or sm_count <= 0 or clock_hz <= 0:
        return None
    geforce = is_geforce(name)
    tensor = not (name and NO_TENSOR_NAMES.search(str(name)))
    arch = RATES[cc][0]
    peaks, formulas = {}, {}
    for p in PRECISIONS:
        rate = per_sm_rate(cc, p, half_accumulate=geforce, tensor_cores=tensor)
        if rate is None:
            continue
        peaks[p] = sm_count * rate * clock_hz
        why = " (GeForce: FP32 accumulate at half rate)" if geforce and p in HALF_RATE_ON_GEFORCE and rate < RATES[cc][1][p] else ""
        formulas[p] = (f"{int(sm_count)} SMs x {rate:g} FLOP/clk/SM ({p}, CC {cc} {arch}{why}) x "
                       f"{clock_hz / 1e9:.4g} GHz")
    label = name or f"unnamed CC {cc} device"
    return GPU(
        name=label,
        family=label,
        aliases=(),
        cc=cc,
        sm_count=int(sm_count),
        memory_bytes=0,
        dram_bw_bytes_per_s=float(dram_bw_bytes_per_s or 0.0),
        peak_flops=peaks,
        source=(f"derived from the device attributes ncu recorded: {int(sm_count)} SMs, CC {cc} ({arch}), "
                f"max SM clock {clock_hz / 1e9:.4g} GHz, and ridgeline's per-SM rates for CC {cc}"),
        notes="not in the GPU catalogue: roofs derived, not datasheet figures",
        derived=tuple(peaks),
        datasheet_clock_hz={"default": float(clock_hz)},
        segment="geforce" if geforce else "",
        origin=DERIVED_SOURCE,
        derivation=formulas,
    )
