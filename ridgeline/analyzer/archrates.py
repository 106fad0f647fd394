"""Per-architecture rates: dense FLOP per SM per clock, by compute capability and precision.

One table (:data:`RATES`) serves two purposes:

* **Checking the catalogue.** Every figure ``gpus.json`` flags as *derived* must equal
  ``sm_count x rate x clock`` for its compute capability (tests/analyzer/test_gpus_catalogue.py),
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

Figures are FLOP (an FMA counts 2; integer tensor ops count as ops) per SM per clock, dense
(no 2:4 sparsity). Tensor figures have two rates on GA10x, AD10x and GB20x: the full rate
(datacenter and workstation parts) and the **half** rate GeForce parts run fp16/bf16/tf32 and
fp8 with FP32 accumulate, which is what cuBLAS and PyTorch use (``HALF_RATE_ON_GEFORCE``);
integer tensor ops run at the full rate on both. Sources, per architecture:

* 7.0 Volta (V100): Volta whitepaper: 64 FP32 + 32 FP64 FMA, 8 tensor cores x 64 FMA per SM;
  FP16 at 2 x FP32.
* 7.5 Turing (T4, RTX 20, Quadro RTX, GTX 16): Turing whitepaper: 64 FP32 FMA, FP64 1/32,
  FP16 2 x FP32; 8 tensor cores x 64 FP16 FMA, INT8 2x that. GeForce: FP32 accumulate at half
  (RTX 2080 Ti FE: 56.9 TFLOPS at 1635 MHz = 68 x 512 x 1.635 GHz). TU116/TU117 (GTX 16xx)
  have no tensor cores (:data:`NO_TENSOR_NAMES`).
* 8.0 GA100 (A100, A800, A30): A100 whitepaper: 64 FP32 + 32 FP64 FMA, FP16 4 x FP32,
  4 tensor cores x 256 FP16 FMA, TF32 1/2, INT8 2x, FP64 tensor 64 FMA.
* 8.6 GA10x (A40, A10, A16, A2, RTX A-series, RTX 30): GA102 whitepaper: 128 FP32 FMA, FP16 at
  the FP32 rate, FP64 1/64; 4 tensor cores x 128 FP16 FMA (RTX 3090: 71 TFLOPS FP16 with FP32
  accumulate = 82 x 512 x 1.695 GHz, 142 with FP16 accumulate; A40: 149.7 = 84 x 1024 x 1.74 GHz).
* 8.9 AD10x (L4, L40, L40S, RTX Ada, RTX 40): Ada whitepaper: GA10x rates plus FP8 at 2 x FP16
  (RTX 4090: FP16/FP32-acc 165.2, FP8/FP32-acc 330.3, INT8 660.6 at 2.52 GHz x 128 SMs).
* 9.0 Hopper (H100, H800, H200, H20, GH200): H100 whitepaper: 128 FP32 + 64 FP64 FMA, FP16 2 x
  FP32; dense tensor per SM per clock 4096 FP16 (989 TFLOPS = 132 x 4096 x 1.83 GHz), TF32 1/2,
  FP8 and INT8 2x, FP64 tensor 256.
* 10.0 Blackwell (B200, GB200): B200 datasheet figures / 148 SMs at ~1.85 GHz: FP16 8192, FP8
  and INT8 16384, TF32 4096, FP64 and FP64 tensor 128.
* 12.0 / 12.1 Blackwell RTX (RTX 50, RTX PRO Blackwell, GB10): Blackwell RTX whitepaper: the
  AD10x per-SM rates (RTX 5090: FP16/FP32-acc 209.5, FP8/FP32-acc 419, INT8 838 TOPS at
  2.407 GHz x 170 SMs); FP4 is counted under fp8_tensor and its 2x rate is not modelled.
"""

from __future__ import annotations

import re

# (compute capability) -> architecture name and dense FLOP per SM per clock per precision key
RATES: dict[str, tuple[str, dict[str, float]]] = {
    "7.0": ("Volta", {"fp64": 64, "fp32": 128, "fp16": 256, "fp16_tensor": 1024}),
    "7.5": ("Turing", {"fp64": 4, "fp32": 128, "fp16": 256, "fp16_tensor": 1024, "int8_tensor": 2048}),
    "8.0": ("Ampere (GA100)", {"fp64": 64, "fp32": 128, "fp16": 512, "tf32_tensor": 1024, "fp16_tensor": 2048,
                               "int8_tensor": 4096, "fp64_tensor": 128}),
    "8.6": ("Ampere (GA10x)", {"fp64": 4, "fp32": 256, "fp16": 256, "tf32_tensor": 512, "fp16_tensor": 1024,
                               "int8_tensor": 2048}),
    "8.9": ("Ada Lovelace", {"fp64": 4, "fp32": 256, "fp16": 256, "tf32_tensor": 512, "fp16_tensor": 1024,
                             "fp8_tensor": 2048, "int8_tensor": 2048}),
    "9.0": ("Hopper", {"fp64": 128, "fp32": 256, "fp16": 512, "tf32_tensor": 2048, "fp16_tensor": 4096,
                       "fp8_tensor": 8192, "int8_tensor": 8192, "fp64_tensor": 256}),
    "10.0": ("Blackwell", {"fp64": 128, "fp32": 256, "fp16": 512, "tf32_tensor": 4096, "fp16_tensor": 8192,
                           "fp8_tensor": 16384, "int8_tensor": 16384, "fp64_tensor": 128}),
    "12.0": ("Blackwell RTX", {"fp64": 4, "fp32": 256, "fp16": 256, "tf32_tensor": 512, "fp16_tensor": 1024,
                               "fp8_tensor": 2048, "int8_tensor": 2048}),
    "12.1": ("Blackwell RTX", {"fp64": 4, "fp32": 256, "fp16": 256, "tf32_tensor": 512, "fp16_tensor": 1024,
                               "fp8_tensor": 2048, "int8_tensor": 2048}),
}

#: tensor precisions a GeForce part runs at half rate with FP32 accumulate (int8 keeps its rate)
HALF_RATE_ON_GEFORCE = ("tf32_tensor", "fp16_tensor", "fp8_tensor")

#: device names (normalized words) of parts without tensor cores on an architecture that has them
NO_TENSOR_NAMES = re.compile(r"\bgtx\s*16\d\d", re.IGNORECASE)

DERIVED_SOURCE = "derived-from-device-attributes"


def arch_name(cc: str | None) -> str | None:
    """Architecture name for a compute capability ("9.0" -> "Hopper"); None when unknown."""
    entry = RATES.get(str(cc)) if cc else None
    return entry[0] if entry else None


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


def derive_gpu(name: str | None, *, cc: str | None, sm_count: float | None, clock_hz: float | None,
               dram_bw_bytes_per_s: float | None = None):
    """A :class:`~ridgeline.analyzer.gpus.GPU` for a device the catalogue does not know, from the
    attributes ncu recorded: compute peaks ``sm_count x per_sm_rate x clock_hz`` (clock: the
    device's maximum SM clock), ``datasheet_clock_hz`` that clock (so a recorded SM clock scales
    it as it scales catalogue figures). None when the compute capability is not in :data:`RATES`
    or the SM count or clock is missing."""
    from ridgeline.analyzer.gpus import GPU, PRECISIONS

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
