"""Per-architecture rates as data: compute capability -> architecture name and dense FLOP per SM
per clock, per precision key. What is derived from it (per-SM rates for GeForce parts, roofs
for a GPU the catalogue does not know) is :mod:`ridgeline.analyzer.kernels.archrates`; the catalogue
(:mod:`ridgeline.analyzer.kernels.gpus`) names architectures from it. This module imports nothing of
ridgeline, so both can import it.

Figures are FLOP (an FMA counts 2; integer tensor ops count as ops) per SM per clock, dense
(no 2:4 sparsity). Tensor figures have two rates on GA10x, AD10x and GB20x: the full rate
(datacenter and workstation parts) and the **half** rate GeForce parts run fp16/bf16/tf32 and
fp8 with FP32 accumulate, which is what cuBLAS and PyTorch use (``archrates.HALF_RATE_ON_GEFORCE``);
integer tensor ops run at the full rate on both. Sources, per architecture:

* 7.0 Volta (V100): Volta whitepaper: 64 FP32 + 32 FP64 FMA, 8 tensor cores x 64 FMA per SM;
  FP16 at 2 x FP32.
* 7.5 Turing (T4, RTX 20, Quadro RTX, GTX 16): Turing whitepaper: 64 FP32 FMA, FP64 1/32,
  FP16 2 x FP32; 8 tensor cores x 64 FP16 FMA, INT8 2x that. GeForce: FP32 accumulate at half
  (RTX 2080 Ti FE: 56.9 TFLOPS at 1635 MHz = 68 x 512 x 1.635 GHz). TU116/TU117 (GTX 16xx)
  have no tensor cores (:data:`ridgeline.analyzer.kernels.archrates.NO_TENSOR_NAMES`).
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

AMD Instinct GPUs (:data:`AMD_RATES`) are keyed by their gfx target, not a compute capability:
HIP reports a major.minor pair for them too (gfx90a: 9.0, gfx942: 9.4, gfx950: 9.5,
:func:`hip_version`), which collides with CUDA's (9.0 is also Hopper), so an AMD entry has no
``cc``. Figures are FLOP per **compute unit** (CU) per clock, dense; the keys mean on AMD:
fp64 = vector FP64, fp64_tensor = matrix (MFMA) FP64, fp16_tensor = matrix FP16/BF16 (CDNA 1
runs BF16 at half the FP16 rate: the roof is the FP16 one), tf32_tensor = matrix XF32 (CDNA 3
only), fp8_tensor / int8_tensor = matrix FP8 / INT8, and **fp32 = the CU's FP32 ceiling**: the
larger of packed vector FP32 (v_pk_fma_f32, CDNA 2 on) and matrix FP32 (MFMA F32), 256 on every
CDNA part (plain vector FP32 is 128 on CDNA 1 and 2: a kernel may reach twice that). Vector
FP16 (packed half) is on no datasheet ridgeline cites and is left out. Sources, per target:

* gfx908 CDNA (MI100): ROCm docs, MI100 microarchitecture table (FLOPS/clock/CU: vector FP64 64,
  matrix FP32 256, vector FP32 128, matrix FP16 1024, matrix BF16 512); INT8 1024 as rocWMMA's
  MfmaPerfTraits<MI100, int8_t> and AMD's 184.6 TOPS (120 CUs x 1.502 GHz). No FP64 matrix unit
  (AMD lists FP64 matrix = vector, 11.5 TFLOPS).
* gfx90a CDNA 2 (MI210, MI250, MI250X): ROCm docs, MI250 microarchitecture table (matrix FP64
  256, vector FP64 128, matrix FP32 256, packed FP32 256, vector FP32 128, matrix FP16/BF16/INT8
  1024). No XF32/TF32 and no FP8.
* gfx942 CDNA 3 (MI300X, MI300A, MI325X): ROCm docs, MI300 microarchitecture table (matrix FP64
  256, vector FP64 128, matrix and vector FP32 256, TF32 1024, matrix FP16/BF16 2048, FP8 and INT8
  4096; dense: rocprofiler-compute's speed-of-light config uses 4096 for MFMA F16 and 8192 for
  INT8 on gfx942, the 2:4-sparse rates).
* gfx950 CDNA 4 (MI350X, MI355X): FP8 8192 per CU per clock (AMD's ISSCC 2026 paper as reported:
  doubled from CDNA 3's 4096, 32 CUs per XCD); FP16/BF16 4096, INT8 8192, FP32 256, FP64 vector
  and matrix 128 are the published MI350X figures (FP16 2.31 PFLOPS, FP8 4.61, INT8 4.61 POPS,
  FP32 144.2, FP64 72.1 TFLOPS, as a third-party spec page reproduces them) divided by 256 CUs x
  2.2 GHz, the clock a real MI350X records. Weaker sources than the ROCm tables above: no AMD
  document ridgeline can cite states the CDNA 4 per-CU rates. No TF32 figure is published (left
  out); FP6/FP4 (2x FP8) are counted under fp8_tensor and their rate is not modelled.
"""

from __future__ import annotations

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


def arch_name(cc: str | None) -> str | None:
    """Architecture name for a compute capability ("9.0" -> "Hopper"); None when unknown."""
    entry = RATES.get(str(cc)) if cc else None
    return entry[0] if entry else None


# (gfx target) -> architecture name and dense FLOP per compute unit per clock per precision key
AMD_RATES: dict[str, tuple[str, dict[str, float]]] = {
    "gfx908": ("CDNA", {"fp64": 64, "fp32": 256, "fp16_tensor": 1024, "int8_tensor": 1024}),
    "gfx90a": ("CDNA 2", {"fp64": 128, "fp32": 256, "fp16_tensor": 1024, "int8_tensor": 1024, "fp64_tensor": 256}),
    "gfx942": ("CDNA 3", {"fp64": 128, "fp32": 256, "tf32_tensor": 1024, "fp16_tensor": 2048, "fp8_tensor": 4096,
                          "int8_tensor": 4096, "fp64_tensor": 256}),
    "gfx950": ("CDNA 4", {"fp64": 128, "fp32": 256, "fp16_tensor": 4096, "fp8_tensor": 8192, "int8_tensor": 8192,
                          "fp64_tensor": 128}),
}


def amd_arch_name(gfx: str | None) -> str | None:
    """Architecture name for an AMD gfx target ("gfx942" -> "CDNA 3"); None when not tabled."""
    entry = AMD_RATES.get(str(gfx).lower()) if gfx else None
    return entry[0] if entry else None


def hip_version(gfx: str | None) -> str | None:
    """The major.minor pair HIP reports for a gfx target (hipDeviceProp_t major/minor, what
    PyTorch's Kineto writes as computeMajor/computeMinor): the digits before the last two are the
    major version, the next one (hex) the minor, the last the stepping: gfx90a -> "9.0",
    gfx942 -> "9.4", gfx950 -> "9.5", gfx1201 -> "12.0". None for anything else."""
    import re

    m = re.fullmatch(r"gfx([0-9]{1,2})([0-9a-f])([0-9a-f])", str(gfx or "").strip().lower())
    return f"{int(m.group(1))}.{int(m.group(2), 16)}" if m else None
