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
