"""The physics of one transformer step: devices, models, launches and their durations.

Moved from ``fixtures/generate.py`` (which now drives it); see fixtures/README.md for the model.
A :class:`Launch` carries the work a kernel must do (tensor FLOPs, CUDA-core instruction counts,
DRAM bytes) and :func:`finish` gives it a duration that reaches a stated fraction of the roof it
is under, never below a launch floor::

    duration = max(flops / peak_flops, dram_bytes / dram_bw) / fraction     (>= floor, +-2% jitter)

GPU roofs come from ridgeline's catalogue (``ridgeline.analyzer.kernels.gpus``); only what a profiler
records about a device and the catalogue lacks lives in :data:`DEVICES`.
"""

from __future__ import annotations

import dataclasses
import math
import random

# ------------------------------------------------------------------------------------------
# GPUs: roofs come from ridgeline's catalogue; only identity facts a profiler records live here
# ------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class DeviceFacts:
    """What ncu/DCGM record about a device that the catalogue does not hold."""

    catalogue_name: str
    display_name: str  # device__attribute_display_name / DCGM modelName
    bus_width_bits: int  # device__attribute_global_memory_bus_width
    sm_clock_hz: float  # clock during profiling (captured with --clock-control none)
    max_clock_khz: int  # device__attribute_clock_rate / max_gpu_frequency_khz
    l2_bytes: int


DEVICES = {
    "H100": DeviceFacts("H100 SXM", "NVIDIA H100 80GB HBM3", 5120, 1.830e9, 1980000, 52428800),
    "H200": DeviceFacts("H200", "NVIDIA H200", 6144, 1.830e9, 1980000, 52428800),
    "A100": DeviceFacts("A100 SXM 80GB", "NVIDIA A100-SXM4-80GB", 5120, 1.410e9, 1410000, 41943040),
    "B200": DeviceFacts("B200", "NVIDIA B200", 7680, 1.965e9, 1965000, 132644864),
}


@dataclasses.dataclass(frozen=True)
class Device:
    key: str
    facts: DeviceFacts
    gpu: object  # ridgeline.analyzer.kernels.gpus.GPU

    @property
    def cc(self) -> str:
        cc = getattr(self.gpu, "cc")
        if isinstance(cc, (tuple, list)):
            return f"{cc[0]}.{cc[1]}"
        return str(cc)

    @property
    def sm_count(self) -> int:
        return int(self.gpu.sm_count)

    @property
    def bw(self) -> float:
        return float(self.gpu.dram_bw_bytes_per_s)

    def peak(self, precision: str) -> float:
        return float(self.gpu.peak_flops[precision])

    @property
    def dram_bytes_per_cycle(self) -> int:
        return 2 * self.facts.bus_width_bits // 8  # double data rate x bus width

    @property
    def dram_clock_hz(self) -> float:
        return self.bw / self.dram_bytes_per_cycle

    @property
    def memory_bytes(self) -> int:
        return int(self.gpu.memory_bytes)


def _catalogue_gpu(name: str):
    """The catalogue entry for ``name`` via ridgeline.analyzer.kernels.gpus.lookup."""
    from ridgeline.analyzer.kernels.gpus import lookup

    gpu, _note = lookup(name)
    return gpu


def device(key: str) -> Device:
    facts = DEVICES[key]
    return Device(key, facts, _catalogue_gpu(facts.catalogue_name))


# ------------------------------------------------------------------------------------------
# Models
# ------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    mlp: int
    vocab: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def qkv_out(self) -> int:
        return (self.heads + 2 * self.kv_heads) * self.head_dim

    def layer_params(self) -> int:
        h = self.hidden
        return self.qkv_out * h + h * h + 2 * self.mlp * h + h * self.mlp

    def params(self) -> int:
        return self.layers * self.layer_params() + 2 * self.vocab * self.hidden


LLAMA_8B = Model("Llama-3-8B-like", 4096, 32, 32, 8, 14336, 128256)
LLAMA_70B = Model("Llama-3-70B-like", 8192, 80, 64, 8, 28672, 128256)


# ------------------------------------------------------------------------------------------
# Launches
# ------------------------------------------------------------------------------------------
@dataclasses.dataclass
class Launch:
    """One kernel launch with the work it does and what it took."""

    name: str
    role: str  # gemm:qkv, gemm:o, gemm:gate_up, gemm:down, gemm:lm_head, attention, norm, ...
    block: tuple[int, int, int]
    grid: tuple[int, int, int]
    tensor_flops: float = 0.0
    tensor_precision: str | None = None  # "bf16" | "fp8" | None
    # Hopper tensor instruction path: "hgmma" (warpgroup wgmma: cuBLAS/CUTLASS sm90) or "hmma"
    # (legacy mma.sync: FlashAttention-2, Triton without wgmma), whose dense peak is 2/3 of hgmma's
    tensor_path: str = "hgmma"
    ffma: int = 0
    fadd: int = 0
    fmul: int = 0
    hfma: int = 0
    hadd: int = 0
    hmul: int = 0
    dram_bytes: float = 0.0
    l2_factor: float = 1.15
    l1_factor: float = 1.3
    fraction: float = 0.8  # fraction of the roof the kernel reaches
    floor_s: float = 2.6e-6  # launch/latency floor
    registers: int = 128
    # filled by finish()
    duration_s: float = 0.0
    bound: str = ""  # ground truth: memory | compute | latency
    read_fraction: float = 0.9

    @property
    def cuda_flops(self) -> float:
        # ncu conventions: fp32 fadd + fmul + 2*ffma; fp16 2*hadd + 2*hmul + 4*hfma (half2)
        return self.fadd + self.fmul + 2 * self.ffma + 2 * self.hadd + 2 * self.hmul + 4 * self.hfma

    @property
    def flops(self) -> float:
        return self.tensor_flops + self.cuda_flops

    @property
    def intensity(self) -> float:
        return self.flops / self.dram_bytes if self.dram_bytes else math.inf


HMMA_OVER_HGMMA = 360448 / 540672  # Hopper dense mma.sync rate / dense wgmma rate (ncu, H200)


def path_factor(dev: Device, k: Launch) -> float:
    """The launch's reachable tensor peak as a fraction of the datasheet's (wgmma) peak."""
    return HMMA_OVER_HGMMA if dev.cc.startswith("9") and k.tensor_path == "hmma" else 1.0


def finish(launches: list[Launch], dev: Device, rng: random.Random) -> list[Launch]:
    """Give every launch a duration: max(compute time, memory time) / fraction, jittered."""
    for k in launches:
        if k.tensor_precision == "fp8":
            t_compute = k.tensor_flops / (dev.peak("fp8_tensor") * path_factor(dev, k))
        elif k.tensor_precision == "bf16":
            t_compute = k.tensor_flops / (dev.peak("fp16_tensor") * path_factor(dev, k))
        else:
            t_compute = 0.0
        t_compute += (k.fadd + k.fmul + 2 * k.ffma) / dev.peak("fp32")
        t_compute += (2 * k.hadd + 2 * k.hmul + 4 * k.hfma) / dev.peak("fp16")
        t_memory = k.dram_bytes / dev.bw
        t_roof = max(t_compute, t_memory)
        jitter = 1.0 + rng.uniform(-0.02, 0.02)
        t = t_roof / k.fraction * jitter
        floor = k.floor_s * (1.0 + rng.uniform(-0.12, 0.12))
        if t < floor:
            k.duration_s = floor
            k.bound = "latency"
        else:
            k.duration_s = t
            k.bound = "compute" if t_compute > t_memory else "memory"
    return launches


# kernel names (as ncu prints them: demangled, commas inside)
def _xmma(prec: str, tile: str, wg: str, seg: str, sm: str = "sm90") -> str:
    ab = "bf16bf16_bf16f32_f32" if prec == "bf16" else "e4m3e4m3_bf16f32_f32"
    return f"{sm}_xmma_gemm_{ab}_tn_n_tilesize{tile}_warpgroupsize{wg}_execute_segment_k_{seg}_kernel__5x_cublas"


def _ampere_xmma(tile: str) -> str:
    return f"ampere_bf16_s16816gemm_bf16_{tile}_ldg8_f2f_stages_64x3_tn"


def gemm_name(dev: Device, role: str, prec: str, m: int) -> str:
    if dev.cc.startswith("8"):
        return _ampere_xmma({"qkv": "128x64", "o": "64x64", "gate_up": "256x128", "down": "128x128",
                             "lm_head": "256x128"}.get(role, "128x128"))
    big = m >= 1024
    tiles = {
        "qkv": ("128x128x64", "1x1x1", "off") if big else ("64x64x64", "1x1x1", "off"),
        "o": ("128x128x64", "1x1x1", "on") if big else ("64x32x64", "1x1x1", "on"),
        "gate_up": ("256x128x64", "2x1x1", "off") if big else ("128x64x64", "1x1x1", "off"),
        "down": ("128x256x64", "1x2x1", "on") if big else ("64x128x64", "1x1x1", "on"),
        "lm_head": ("128x256x64", "2x1x1", "off") if big else ("64x256x64", "1x1x1", "off"),
    }[role]
    if m <= 64 and role == "lm_head":
        tiles = ("64x256x64", "1x1x1", "off")
    return _xmma(prec, *tiles, sm="sm100" if dev.cc.startswith("10") else "sm90")


BF = "c10::BFloat16"
FA_TRAITS = "Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t> >"
FA_PREFILL_TRAITS = "Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >"
NAMES = {
    "embed": "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
    "rms_norm": f"void vllm::rms_norm_kernel<{BF}>({BF}*, {BF} const*, {BF} const*, float, int, int)",
    "fused_add_rms_norm": f"void vllm::fused_add_rms_norm_kernel<{BF}, 8>({BF}*, {BF}*, {BF} const*, float, int, int)",
    "rotary": f"void vllm::rotary_embedding_kernel<{BF}, true>(long const*, {BF}*, {BF}*, {BF} const*, int, long, long, int, int, int)",
    "cache": "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, __nv_bfloat16*, long const*, int, int, int, int, int, int, float const*, float const*)",
    "attn_decode": f"void flash_fwd_splitkv_kernel<{FA_TRAITS}, false, false, false, false, true, true, false, false>(Flash_fwd_params)",
    "attn_combine": f"void flash_fwd_splitkv_combine_kernel<{FA_TRAITS}, 4, 3, true>(Flash_fwd_params)",
    "attn_prefill": f"void flash_fwd_kernel<{FA_PREFILL_TRAITS}, false, true, false, false, true, true, false, false>(Flash_fwd_params)",
    "silu_mul": f"void vllm::act_and_mul_kernel<{BF}, &(({BF} vllm::silu_kernel<{BF}>({BF} const&))), true>({BF}*, {BF} const*, int)",
    "quant_fp8": f"void vllm::dynamic_per_token_scaled_fp8_quant_kernel<{BF}, c10::Float8_e4m3fn>(c10::Float8_e4m3fn*, float*, {BF} const*, float const*, int)",
    "softmax": "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)",
    "argmax": "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4> >(at::native::ReduceOp<float, at::native::ArgMaxOps<float>, unsigned int, long, 4>)",
    "fill": "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<int>, at::detail::Array<char*, 1>)",
    "add": "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
    "mul": "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)",
    "copy": "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1> >(int, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<1>, at::native::memory::StoreWithCast<1>)",
    "sum": "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
    "strided_copy": "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda()#12}::operator()() const::{lambda(c10::BFloat16)#1} const&)::{lambda(int)#1})",
    "sgemm": "ampere_sgemm_128x128_tn",
    "layer_norm": "void at::native::(anonymous namespace)::LayerNormForwardCUDAKernel<c10::BFloat16, float>(long, float const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16*)",
}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _gemm(dev: Device, role: str, m: int, n: int, k: int, wprec: str, *, fraction: float,
          act_bytes: int = 2, out_bytes: int = 2) -> Launch:
    """Y[m,n] = X[m,k] @ W[n,k]^T: FLOPs 2*m*n*k; DRAM bytes = weights + activations in/out."""
    wbytes = 1 if wprec == "fp8" else 2
    if wprec == "fp8":
        act_bytes = 1
    dram = n * k * wbytes + m * k * act_bytes + m * n * out_bytes
    # Hopper cuBLAS kernels for skinny GEMMs (nvjet_tst_64x8) pad the token dimension to their
    # 8-wide tile: the tensor pipe computes (and ncu counts) 8 rows even when fewer tokens exist
    rows_computed = 8 if dev.cc.startswith("9") and m < 8 else m
    tile_n = 128
    grid = (_cdiv(n, tile_n), _cdiv(m, 128) if m >= 1024 else 1, 1 if m >= 1024 else 2)
    return Launch(
        name=gemm_name(dev, role, wprec, m), role=f"gemm:{role}", block=(384, 1, 1), grid=grid,
        tensor_flops=2.0 * rows_computed * n * k, tensor_precision=wprec, fmul=m * n,  # epilogue alpha scale
        dram_bytes=dram, l2_factor=1.08 if m < 1024 else 2.6, l1_factor=1.2 if m < 1024 else 4.0,
        fraction=fraction, floor_s=3.5e-6, registers=168,
    )


def _elementwise(name_key: str, role: str, elems: int, bytes_moved: float, *, ffma=0, fadd=0, fmul=0,
                 fraction=0.6, block=256, rows: int | None = None) -> Launch:
    """``rows``: one block per token row, as vLLM's and FlashInfer's norm kernels launch."""
    return Launch(
        name=NAMES[name_key], role=role, block=(block, 1, 1),
        grid=(rows if rows else max(1, min(65535, _cdiv(elems, block * 8))), 1, 1),
        ffma=ffma, fadd=fadd, fmul=fmul, dram_bytes=bytes_moved, fraction=fraction,
        l2_factor=1.05, l1_factor=1.1, registers=32,
    )


def decoder_step(model: Model, dev: Device, *, phase: str, batch: int = 1, tokens: int = 1,
                 context: int = 0, wprec: str = "bf16") -> list[Launch]:
    """The launches of one forward step, in order.

    decode: ``batch`` sequences, one new token each, ``context`` cached tokens per sequence.
    prefill: one sequence of ``tokens`` tokens (causal attention, logits of the last token only).
    """
    h, hd, nh, nkv = model.hidden, model.head_dim, model.heads, model.kv_heads
    m = batch if phase == "decode" else tokens  # rows through the GEMMs
    big = m >= 1024
    gemm_frac = 0.72 if big else (0.78 if m >= 256 else 0.84)
    out: list[Launch] = []
    out.append(_elementwise("embed", "embedding", m * h, m * h * 2 * 2 + m * 8, fraction=0.5))
    for layer in range(model.layers):
        if layer == 0:
            out.append(_elementwise("rms_norm", "norm", m * h, rows=m, bytes_moved=m * h * 2 * 2 + h * 2,
                                    ffma=m * h, fmul=2 * m * h, fadd=m * 32, fraction=0.62, block=1024))
        else:
            out.append(_elementwise("fused_add_rms_norm", "norm", m * h, rows=m, bytes_moved=m * h * 2 * 4 + h * 2,
                                    ffma=m * h, fmul=2 * m * h, fadd=m * h + m * 32, fraction=0.62,
                                    block=1024))
        if wprec == "fp8":
            out.append(_elementwise("quant_fp8", "quantize", m * h, m * h * 3 + m * 4,
                                    fmul=2 * m * h, fraction=0.55, block=1024))
        out.append(_gemm(dev, "qkv", m, model.qkv_out, h, wprec, fraction=gemm_frac))
        q_k = m * (nh + nkv) * hd
        out.append(_elementwise("rotary", "rotary", q_k, q_k * 2 * 2 + m * hd * 2 * 2,
                                ffma=q_k, fmul=q_k, fraction=0.55, block=512))
        out.append(_elementwise("cache", "kv_cache_write", m * nkv * hd * 2, m * nkv * hd * 2 * 2 * 2 + m * 8,
                                fraction=0.5, block=128))
        if phase == "decode":
            kv_bytes = batch * context * 2 * nkv * hd * 2
            q_bytes = batch * nh * hd * 2 * 2
            attn = Launch(
                name=NAMES["attn_decode"], role="attention", block=(128, 1, 1),
                grid=(1, batch * nkv, max(1, min(16, _cdiv(132 * 2, batch * nkv)))),  # (1, seqs x kv heads, splits)
                tensor_flops=4.0 * batch * context * nh * hd, tensor_precision="bf16",
                ffma=batch * nh * context, fmul=batch * nh * context, fadd=batch * nh * context,
                dram_bytes=kv_bytes + q_bytes, fraction=0.55 if batch * context < 8192 else 0.72,
                l2_factor=1.1, l1_factor=1.6, floor_s=4.0e-6, registers=255, tensor_path="hmma",
            )
            out.append(attn)
            out.append(Launch(
                name=NAMES["attn_combine"], role="attention_combine", block=(128, 1, 1),
                grid=(_cdiv(batch * nh, 4), 1, 1), ffma=batch * nh * hd * 4, fmul=batch * nh * 16,
                dram_bytes=batch * nh * hd * 4 * 4 + batch * nh * hd * 2, fraction=0.4, registers=64,
            ))
        else:
            t = tokens
            causal_pairs = t * (t + 1) / 2
            attn = Launch(
                name=NAMES["attn_prefill"], role="attention", block=(128, 1, 1),
                grid=(_cdiv(t, 128), nh, 1),
                tensor_flops=4.0 * causal_pairs * nh * hd, tensor_precision="bf16",
                ffma=int(causal_pairs * nh), fmul=int(causal_pairs * nh), fadd=int(causal_pairs * nh),
                dram_bytes=t * (nh + 2 * nkv) * hd * 2 + t * nh * hd * 2,
                fraction=0.55, l2_factor=3.0, l1_factor=6.0, registers=255, tensor_path="hmma",
            )
            out.append(attn)
        out.append(_gemm(dev, "o", m, h, nh * hd, wprec, fraction=gemm_frac))
        out.append(_elementwise("fused_add_rms_norm", "norm", m * h, rows=m, bytes_moved=m * h * 2 * 4 + h * 2,
                                ffma=m * h, fmul=2 * m * h, fadd=m * h + m * 32, fraction=0.62, block=1024))
        if wprec == "fp8":
            out.append(_elementwise("quant_fp8", "quantize", m * h, m * h * 3 + m * 4,
                                    fmul=2 * m * h, fraction=0.55, block=1024))
        out.append(_gemm(dev, "gate_up", m, 2 * model.mlp, h, wprec, fraction=gemm_frac))
        out.append(_elementwise("silu_mul", "activation", m * model.mlp, m * model.mlp * 2 * 3,
                                fmul=2 * m * model.mlp, fadd=m * model.mlp, fraction=0.65, block=1024))
        if wprec == "fp8":
            out.append(_elementwise("quant_fp8", "quantize", m * model.mlp, m * model.mlp * 3 + m * 4,
                                    fmul=2 * m * model.mlp, fraction=0.55, block=1024))
        out.append(_gemm(dev, "down", m, h, model.mlp, wprec, fraction=gemm_frac))
    out.append(_elementwise("fused_add_rms_norm", "norm", m * h, rows=m, bytes_moved=m * h * 2 * 4 + h * 2,
                            ffma=m * h, fmul=2 * m * h, fadd=m * h + m * 32, fraction=0.62, block=1024))
    rows = batch if phase == "decode" else 1  # prefill: logits of the last position only
    # the LM head stays bf16 even with fp8 weights elsewhere (common practice)
    out.append(_gemm(dev, "lm_head", rows, model.vocab, h, "bf16", fraction=0.84, out_bytes=4))
    out.append(_elementwise("softmax", "sampling", rows * model.vocab, rows * model.vocab * 4 * 2,
                            fmul=rows * model.vocab, fadd=2 * rows * model.vocab, fraction=0.5, block=1024))
    out.append(_elementwise("argmax", "sampling", rows * model.vocab, rows * model.vocab * 4 + rows * 8,
                            fraction=0.5, block=512))
    out.append(_elementwise("fill", "tiny", 64, 256, fraction=0.5))
    out.append(_elementwise("copy", "tiny", rows, rows * 16, fraction=0.5))
    return out


# the launch-bound step: a Python loop of per-token PyTorch ops, each a one-block kernel
TINY_CYCLE = (("fill", 0, 0, 0, 1024), ("add", 0, 512, 0, 6144), ("mul", 0, 0, 512, 6144),
              ("copy", 0, 0, 0, 4096), ("sum", 0, 512, 0, 2100))


def tiny_launches(count: int) -> list[Launch]:
    """``count`` launches of five tiny elementwise/reduce kernels (grid of 1 block, <= 6 KB each)."""
    launches = []
    for i in range(count):
        key, ffma, fadd, fmul, byts = TINY_CYCLE[i % len(TINY_CYCLE)]
        launches.append(Launch(name=NAMES[key], role=f"tiny:{key}", block=(128, 1, 1), grid=(1, 1, 1),
                               ffma=ffma, fadd=fadd, fmul=fmul, dram_bytes=byts, fraction=0.5, floor_s=3.0e-6,
                               registers=24, l2_factor=1.0, l1_factor=1.0))
    return launches
