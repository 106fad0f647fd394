"""Kernel-name patterns: which names count as GEMM-like or attention-like (Python and polars agree)."""

from __future__ import annotations

import polars as pl
import pytest

from ridgeline.rules.patterns import family_expr, kernel_family

CASES = [
    ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "gemm"),
    ("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn", "gemm"),
    ("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN", "gemm"),
    ("void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(T1::Params)", "gemm"),
    ("gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>", "gemm"),
    ("matmul_kernel", "gemm"),
    ("Marlin<256, 1, 8, 8, 4, 8>", "gemm"),
    ("flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>>", "attention"),
    ("fmha_cutlassF_bf16_aligned_64x64_rf_sm80", "attention"),
    ("void vllm::paged_attention_v2_kernel<__nv_bfloat16, 128, 16, 128, 512>", "attention"),
    ("flashinfer::BatchDecodeWithPagedKVCacheKernel<...>", "attention"),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3", "attention"),
    ("xformers::attention::fmha_fwd", "attention"),
    ("void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>", None),
    ("void at::native::(anonymous namespace)::upsample_linear1d_out_frame<float>", None),
    ("void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>", None),
    ("vllm::fused_add_rms_norm_kernel", None),
    # attention-adjacent, never reads the KV cache: not judged as attention
    ("void flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false>, 4, 1, true>(Flash_fwd_params)", None),
    ("void flashinfer::PersistentVariableLengthMergeStatesKernel<8u, 16u, 8u, 4u, __nv_bfloat16>(...)", None),
    ("", None),
]


@pytest.mark.parametrize("name, family", CASES)
def test_kernel_family(name, family):
    assert kernel_family(name) == family


def test_polars_expression_agrees_with_python():
    df = pl.DataFrame({"kernel_name": [n for n, _ in CASES] + [None], "short_name": [None] * len(CASES) + ["gemm_x"]})
    got = df.select(family_expr().alias("f"))["f"].to_list()
    assert got == [f for _, f in CASES] + ["gemm"]  # falls back to the short name when the full one is null
