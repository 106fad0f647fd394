"""Kernel families: what a kernel is, from its full demangled name (ridgeline.analyzer.kernels.families).

CASES is a table of kernel names with the row that must match them and the expected family,
library and label. Names marked ``# sample`` are copied from the shared ncu exports (see
shared/samples/ncu/MANIFEST.md), parameter lists sometimes shortened; the others are public
kernel names of the libraries as ncu/nsys print them (written from the libraries' sources and
published profiles); names marked ``# synthetic`` only exercise a generic row.
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from ridgeline.names import join_key
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.analyzer.kernels import families as fam
from ridgeline.analyzer.kernels.families import (
    FAMILIES,
    FAMILY_TABLE,
    LIBRARIES,
    classify_name,
    family_columns,
    families_markdown,
    is_weight_gemm,
    reads_kv_cache,
)

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT.parent / "shared" / "samples" / "ncu"

ATEN = "PyTorch ATen"
FA2 = "FlashAttention-2"
FA3 = "FlashAttention-3"
TRT = "TensorRT-LLM"

# (row id, name, family, library, label)
CASES = [
    # ---- communication
    ("nccl", "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "communication", "NCCL", "NCCL AllReduce_Sum_bf16_RING_LL"),
    ("custom-allreduce", "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData *, vllm::RankSignals, vllm::Signal *, __nv_bfloat16 *, int, int)", "communication", "vLLM", "vLLM cross_device_reduce_1stage"),
    ("nccl", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "communication", "NCCL", "NCCL SendRecv_RING_SIMPLE_Sum_int8_t"),  # sample (NCCL <= 2.18 / RCCL spelling)
    ("custom-allreduce", "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, unsigned int**, unsigned long, unsigned long)", "communication", None, "multimem_all_reduce"),  # sample (vLLM on B200)
    ("collective", "void c10d::symmetric_memory::multimem_all_gather_kernel<16>(char*, char*, unsigned long, unsigned int**, unsigned long, unsigned long)", "communication", None, "multimem_all_gather<16>"),  # synthetic
    ("collective", "mscclKernel_Sum_bf16_LL(ncclDevComm*, mscclAlgo*, mscclWork*)", "communication", None, "mscclKernel_Sum_bf16_LL"),  # synthetic
    # ---- attention_aux
    ("flashmla-combine", "void flash_fwd_splitkv_mla_combine_kernel<cutlass::bfloat16_t, 512, 64>(Flash_fwd_mla_params)", "attention_aux", "FlashMLA", "FlashMLA flash_fwd_splitkv_mla_combine"),
    ("fa2-combine", "void flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t>>, 4, 1, true>(Flash_fwd_params)", "attention_aux", FA2, "FlashAttention-2 split-KV combine"),
    ("fa3-combine", "void cutlass::device_kernel<flash::FlashAttnFwdCombine<cute::tuple<cute::C<8>, cute::C<128>>, 7, 256, 1, false, true, cutlass::bfloat16_t, float, cutlass::arch::Sm90>>(T1::Params)", "attention_aux", FA3, "FlashAttention-3 split-KV combine"),
    ("fa3-prepare", "void flash::prepare_varlen_num_blocks_kernel<1, 1>(int, int, int, const int *, const int *, const int *, const int *, const int *, const int *, int, int, int, int, int, cutlass::FastDivmod, cutlass::FastDivmod, int *, int *, int *, int *, int *, bool, bool, bool, int)", "attention_aux", FA3, "FlashAttention-3 prepare_varlen_num_blocks"),  # sample
    ("fa3-bwd-aux", "void cutlass::device_kernel<flash::FlashAttnBwdPreprocess<cute::tuple<cute::C<64>, cute::C<128>>, cutlass::bfloat16_t, float, false, 0>>(T1::Params)", "attention_aux", FA3, "FlashAttention-3 bwd preprocess"),
    ("fa2-bwd-aux", "void flash_bwd_dot_do_o_kernel<true, Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t>>>(Flash_bwd_params)", "attention_aux", FA2, "FlashAttention-2 bwd dot_do_o"),
    ("flashinfer-merge", "void PersistentVariableLengthMergeStatesKernel<8, 16, 8, 4, __nv_bfloat16, __nv_bfloat16, int>(T5 *, float *, T7 *, T6 *, float *, unsigned int, unsigned int *, unsigned int)", "attention_aux", "FlashInfer", "FlashInfer PersistentVariableLengthMergeStates"),  # sample
    ("flashinfer-merge", "void flashinfer::MergeStateKernel<true, 8, 16, 2, 4, __nv_bfloat16, __nv_bfloat16>(__nv_bfloat16 *, float *, __nv_bfloat16 *, float *, __nv_bfloat16 *, float *, unsigned int, unsigned int)", "attention_aux", "FlashInfer", "FlashInfer MergeState"),
    ("merge-attn-states", "void vllm::merge_attn_states_kernel<__nv_bfloat16, 128>(__nv_bfloat16 *, float *, const __nv_bfloat16 *, const float *, const __nv_bfloat16 *, const float *, unsigned int, unsigned int, unsigned int)", "attention_aux", "vLLM", "vLLM merge_attn_states<__nv_bfloat16, 128>"),
    ("vllm-paged-reduce", "void vllm::paged_attention_v2_reduce_kernel<__nv_bfloat16, 128, 128, 512>(__nv_bfloat16 *, const float *, const float *, const __nv_bfloat16 *, const int *, int)", "attention_aux", "vLLM", "vLLM paged_attention_v2 reduce"),
    ("kv-cache-write", "void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16, __nv_bfloat16, (vllm::Fp8KVCacheDataType)0>(const __nv_bfloat16 *, const __nv_bfloat16 *, __nv_bfloat16 *, __nv_bfloat16 *, const long *, long, long, long, long, int, int, int, const float *, const float *)", "attention_aux", "vLLM", "vLLM reshape_and_cache_flash"),
    ("kv-cache-write", "store_kvcache", "attention_aux", None, "store_kvcache"),
    ("kv-indices", "create_flashinfer_kv_indices_triton", "attention_aux", "Triton", "Triton create_flashinfer_kv_indices_triton"),
    ("triton-decode-attn-reduce", "_fwd_kernel_stage2", "attention_aux", "Triton", "Triton decode attention stage2"),
    ("vllm-unified-attn-reduce", "reduce_segments", "attention_aux", "Triton", "Triton unified_attention reduce_segments"),
    # ---- rope: FlashInfer's RoPE is not attention
    ("flashinfer-rope", "void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheEnhancedHeadParallelismKernel<1, 0, 128, 8, 16, __nv_bfloat16, long>(T6 *, T6 *, T6 *, T6 *, T6 *, T6 *, T6 *, float *, T7 *, unsigned int, unsigned int)", "rope", "FlashInfer", "FlashInfer RoPE cos/sin cache head-parallel"),  # sample
    ("flashinfer-rope", "void flashinfer::BatchQKApplyRotaryPosIdsKernel<false, 128, 8, 16, __nv_bfloat16, long>(__nv_bfloat16 *, __nv_bfloat16 *, __nv_bfloat16 *, __nv_bfloat16 *, long *, unsigned int, unsigned int, unsigned int, unsigned int, float, float)", "rope", "FlashInfer", "FlashInfer RoPE"),
    ("vllm-rope", "void vllm::rotary_embedding_kernel<c10::BFloat16, true>(const long *, c10::BFloat16 *, c10::BFloat16 *, const c10::BFloat16 *, int, long, long, long, int, int, int)", "rope", "vLLM", "vLLM rotary_embedding"),
    ("rope", "fused_rope_kernel", "rope", None, "fused_rope"),  # SGLang, bare as in published nsys tables
    # ---- attention
    ("fa3-fwd", "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1>>, cute::tuple<cute::C<128>, cute::C<128>, cute::C<128>>, 128, cutlass::bfloat16_t, float, arch::Sm90, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, cutlass::bfloat16_t>, flash::CollectiveEpilogueFwd<cute::tuple<cute::C<128>, cute::C<128>, cute::C<128>>, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1>>, cutlass::bfloat16_t, arch::Sm90, 256, 1, 1, 0, 0>, flash::VarlenDynamicPersistentTileScheduler<128, 128, 256, 128, 0, 1, 1, 1, 1, 1>>>>(T1::Params)", "attention", FA3, "FlashAttention-3 fwd (sm90) 128x128x128"),  # sample
    ("fa3-fwd", "void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnBwdSm90<flash::CollectiveMainloopBwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1>>, cute::tuple<cute::C<64>, cute::C<128>, cute::C<128>>, false>>>>(T1::Params)", "attention", FA3, "FlashAttention-3 bwd (sm90) 64x128x128"),
    ("flashmla", "void flash_fwd_splitkv_mla_kernel<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>, true, SharedStorageMLA<Flash_fwd_kernel_traits_mla<576, 64, 64, 8, cutlass::bfloat16_t, 512>>>(Flash_fwd_mla_params)", "attention", "FlashMLA", "FlashMLA decode"),
    ("fa2", "void flash_fwd_splitkv_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t, Flash_kernel_traits<128, 64, 128, 4, cutlass::bfloat16_t>>, true, false, false, false, true, true, false, false>(Flash_fwd_params)", "attention", FA2, "FlashAttention-2 fwd splitkv hdim128 64x128"),
    ("fa2", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::half_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::half_t>>, false, true, false, false, true, true, false>(flash::Flash_fwd_params)", "attention", FA2, "FlashAttention-2 fwd hdim64 128x128"),
    ("flashinfer-attn", "void BatchDecodeWithPagedKVCacheKernel<0, 2, 1, 8, 16, 4, 2, DefaultAttention<0, 0, 0, 0>, Params>(T9)", "attention", "FlashInfer", "FlashInfer BatchDecodeWithPagedKVCache"),  # sample
    ("flashinfer-attn", "void flashinfer::BatchPrefillWithPagedKVCacheKernel<KernelTraits<(MaskMode)1, 128, 1, 4, 8, 8, 1, 4, (PosEncodingMode)0, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, int, DefaultAttention<false, false, false, false>>, Params>(T2)", "attention", "FlashInfer", "FlashInfer BatchPrefillWithPagedKVCache"),
    ("vllm-paged-attn", "void vllm::paged_attention_v2_kernel<__nv_bfloat16, __nv_bfloat16, 128, 16, 128, (vllm::Fp8KVCacheDataType)0, false, 512>(float *, float *, __nv_bfloat16 *, const __nv_bfloat16 *, const __nv_bfloat16 *, const __nv_bfloat16 *, int, float, const int *, const int *, int, const float *, int, int, int, const float *, const float *, int, int, int)", "attention", "vLLM", "vLLM paged_attention_v2"),
    ("trtllm-xqa", "kernel_mha", "attention", TRT, "TensorRT-LLM XQA"),
    ("trtllm-mmha", "void tensorrt_llm::kernels::mmha::masked_multihead_attention_kernel<__nv_bfloat16, __nv_bfloat16, tensorrt_llm::kernels::KVBlockArray, tensorrt_llm::kernels::Multihead_attention_params<__nv_bfloat16, false>, 128, 128, 256, false, false, false, false, false, 0, 0>(T4, T3)", "attention", TRT, "TensorRT-LLM MMHA"),
    ("trtllm-fmha-v2", "fmha_v2_flash_attention_bf16_64_128_S_qkv_128_causal_sm90_kernel_nl_tiled", "attention", TRT, "TensorRT-LLM fmha_v2 bf16 sm90"),
    ("trtllm-gen-fmha", "fmhaSm100Kernel_QkvBfloat16OBfloat16H128PagedKvCausalP32VarSeqQ128Kv128PersistentContext", "attention", TRT, "TensorRT-LLM fmhaSm100Kernel"),
    ("cudnn-sdpa", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0", "attention", "cuDNN", "cuDNN SDPA fprop"),
    ("aten-mem-eff-fmha", "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)", "attention", ATEN, "ATen mem-eff fmhaF bf16 aligned 64x64 rf sm80"),
    ("xformers-fmha", "fmha_cutlassB_f16_aligned_64x64_k64_sm80(AttentionBackwardKernel<cutlass::arch::Sm80, cutlass::half_t, true, false, false, 64, 64, 64, false>::Params)", "attention", "xformers", "xformers fmhaB f16 aligned 64x64 k64 sm80"),
    ("triton-decode-attn", "_fwd_grouped_kernel_stage1", "attention", "Triton", "Triton decode attention stage1 (grouped)"),
    ("vllm-unified-attn", "kernel_unified_attention_2d", "attention", "Triton", "Triton unified_attention 2d"),
    ("attention", "attn_fwd", "attention", None, "attn_fwd"),  # Triton tutorial / ROCm flash attention, bare
    # ---- sampling (FlashInfer's sampling namespace is not attention)
    ("flashinfer-sampling", "void flashinfer::sampling::TopKTopPSamplingFromProbKernel<1024u, (cub::BlockScanAlgorithm)2, (cub::BlockReduceAlgorithm)2, 4u, false, float, int>(float *, int *, int *, float *, int *, float *, unsigned int, unsigned int, unsigned long, unsigned long)", "sampling", "FlashInfer", "FlashInfer TopKTopPSamplingFromProb"),
    # ---- norm
    ("flashinfer-norm", "void norm::FusedAddRMSNormKernel<8, __nv_bfloat16>(T2 *, T2 *, T2 *, unsigned int, unsigned int, unsigned int, float, float)", "norm", "FlashInfer", "FlashInfer RMSNorm (fused add)"),  # sample
    ("flashinfer-norm", "void norm::RMSNormKernel<8, __nv_bfloat16>(T2 *, T2 *, T2 *, unsigned int, unsigned int, unsigned int, float, float)", "norm", "FlashInfer", "FlashInfer RMSNorm"),  # sample
    ("flashinfer-norm", "void flashinfer::norm::GemmaFusedAddRMSNormKernel<8, __nv_bfloat16>(__nv_bfloat16 *, __nv_bfloat16 *, __nv_bfloat16 *, unsigned int, unsigned int, unsigned int, float, float)", "norm", "FlashInfer", "FlashInfer RMSNorm (Gemma) (fused add)"),
    ("sglang-qknorm", "void <unnamed>::fused_qknorm_warp<128, 1, __nv_bfloat16>(<unnamed>::QKNormParams)", "norm", "SGLang", "SGLang qk-norm hdim128"),  # sample
    ("vllm-rms-norm", "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16 *, c10::BFloat16 *, const c10::BFloat16 *, float, int, int)", "norm", "vLLM", "vLLM rms_norm (fused add)"),
    ("vllm-rms-norm", "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16 *, const c10::BFloat16 *, const c10::BFloat16 *, float, int, int)", "norm", "vLLM", "vLLM rms_norm"),
    ("norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, const c10::BFloat16 *, const c10::BFloat16 *, const c10::BFloat16 *, float *, float *, c10::BFloat16 *)", "norm", ATEN, "ATen vectorized_layer_norm"),
    # ---- activation
    ("flashinfer-act-and-mul", "void activation::act_and_mul_kernel<__nv_bfloat16, &silu<float>>(T1 *, const T1 *, int)", "activation", "FlashInfer", "FlashInfer act_and_mul (silu)"),  # sample
    ("act-and-mul", "void vllm::act_and_mul_kernel<c10::BFloat16, &vllm::silu_kernel<c10::BFloat16>, true>(c10::BFloat16 *, const c10::BFloat16 *, int)", "activation", "vLLM", "vLLM act_and_mul (silu)"),
    ("activation", "void vllm::silu_and_mul_kernel<c10::BFloat16>(c10::BFloat16 *, const c10::BFloat16 *, int)", "activation", "vLLM", "vLLM silu_and_mul"),
    # ---- MoE routing
    ("moe-routing", "void topkGatingSoftmax<__nv_bfloat16, 8, 128, 4, 16>(const T1 *, const bool *, float *, int, int *, int, int, int, bool, float, const float *)", "moe_routing", None, "MoE topkGatingSoftmax"),  # sample
    ("moe-routing", "void moe_align_block_size_kernel<int>(const T1 *, int *, int *, int *, int, int, unsigned long, int *, bool, int, int)", "moe_routing", None, "MoE moe_align_block_size<int>"),  # sample
    ("moe-routing", "void count_and_sort_expert_tokens_kernel<int>(const T1 *, int *, int *, unsigned long)", "moe_routing", None, "MoE count_and_sort_expert_tokens<int>"),  # sample
    ("moe-routing", "void vllm::moe::moe_sum_kernel<c10::BFloat16, 8>(c10::BFloat16 *, const c10::BFloat16 *, int)", "moe_routing", "vLLM", "MoE moe_sum"),
    # ---- grouped GEMM
    ("triton-fused-moe", "fused_moe_kernel", "grouped_gemm", "Triton", "Triton fused_moe"),  # sample
    ("triton-fused-moe", "fused_moe_kernel_gptq_awq", "grouped_gemm", "Triton", "Triton fused_moe (gptq/awq)"),
    ("cutlass-grouped", "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int>>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1>>, cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative>, cute::tuple<cute::C<128>, cute::C<256>, cute::C<64>>, cutlass::bfloat16_t>>>(T1::Params)", "grouped_gemm", "CUTLASS", "CUTLASS grouped GEMM 128x256x64"),
    ("trtllm-moe-gemm", "void cutlass::Kernel<cutlass::gemm::kernel::MoeFCGemm<cutlass::gemm::threadblock::MmaMultistage<cutlass::gemm::GemmShape<128, 128, 64>, cutlass::gemm::GemmShape<64, 64, 64>, cutlass::gemm::GemmShape<16, 8, 16>>, cutlass::gemm::threadblock::GemmBatchedIdentityThreadblockSwizzle, (cutlass::gemm::kernel::GroupScheduleMode)0>>(T1::Params)", "grouped_gemm", TRT, "TensorRT-LLM MoE GEMM 128x128x64"),
    ("marlin-moe", "void marlin_moe_wna16::Marlin<(vllm::ScalarType::Id)5, 256, 1, 8, 8, 4, 8, false, 4, 8, false>(const int4 *, const int4 *, int4 *, int4 *, const int4 *, const int4 *, const int *, const int *, const int *, const int *, const float *, int, bool, int, int, int, int, int *, bool, bool, bool, int)", "grouped_gemm", None, "Marlin MoE"),
    ("grouped-gemm", "void grouped_gemm_kernel<__nv_bfloat16>(const __nv_bfloat16 **, const __nv_bfloat16 **, __nv_bfloat16 **, const int *, int)", "grouped_gemm", None, "grouped_gemm<__nv_bfloat16>"),  # synthetic
    # ---- GEMM aux
    ("cublas-splitk-reduce", "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float, __nv_bfloat16, 0, float, __nv_bfloat16, __nv_bfloat16, 1, 0, 0>(cublasLt::cublasSplitKParams<T6>, const T4 *, const T10 *, T9 *, T5 *, const T6 *, const T6 *, const T11 *, const T4 *, T11 *, void *, long, T6 *, int *, T6 *, T6 *, const T6 *, const T6 *, const T6 *, const T6 *, const T6 *)", "gemm_aux", "cuBLAS", "cuBLAS splitKreduce"),  # sample
    ("cutlass-splitk-reduce", "void cutlass::Kernel<cutlass::reduction::kernel::ReduceSplitK<cutlass::MatrixShape<4, 128>, cutlass::epilogue::thread::LinearCombination<float, 4, float, float>, cutlass::reduction::thread::ReduceAdd<float, float, 4>, 4>>(T1::Params)", "gemm_aux", "CUTLASS", "CUTLASS ReduceSplitK"),
    ("cublaslt-aux", "void cublasLt::epilogue::impl::globalKernel<8, 32, float, float, float, true, true, true, false>(cublasLt::epilogue::impl::globalParams)", "gemm_aux", "cuBLAS", "cuBLASLt globalKernel"),
    # ---- GEMM
    ("cublas-nvjet", "nvjet_tst_64x8_64x16_4x1_v_bz_splitK_TNT", "gemm", "cuBLAS", "cuBLAS nvjet tst 64x8 4x1 splitK"),  # sample
    ("cublas-nvjet", "nvjet_tst_64x8_64x16_2x1_v_bz_TNT", "gemm", "cuBLAS", "cuBLAS nvjet tst 64x8 2x1"),  # sample
    ("cublas-nvjet", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_TNN", "gemm", "cuBLAS", "cuBLAS nvjet hsh 128x256 2x1"),
    ("cublas-xmma-gemm", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cgasize1x2x1_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", "gemm", "cuBLAS", "cuBLAS sm90 xmma gemm bf16 128x256 tn"),
    ("cudnn-xmma-conv", "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_stage4_warpsize2x2x1_g1_tensor16x8x16_kernel", "gemm", "cuDNN", "cuDNN sm80 xmma fprop bf16"),
    ("cudnn-conv", "ampere_scudnn_128x64_relu_interior_nn_v1", "gemm", "cuDNN", "cuDNN ampere scudnn 128x64"),
    ("cublas-legacy-gemm", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_tn", "gemm", "cuBLAS", "cuBLAS ampere bf16 s16816gemm 128x128 tn"),
    ("cublas-legacy-gemm", "ampere_sgemm_32x32_sliced1x4_tn", "gemm", "cuBLAS", "cuBLAS ampere sgemm 32x32 sliced1x4 tn"),  # sample
    ("cublas-legacy-gemm", "ampere_sgemm_128x128_nn", "gemm", "cuBLAS", "cuBLAS ampere sgemm 128x128 nn"),  # sample
    # NCU-FORMATS 4.2b: ncu's spelling (return type first, namespaces dropped) and nsys's (RTX 5090 sample)
    ("cublas-gemvx", "enable_if<!T7, void>::type kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, 0, 1, 1, 0, 7, 0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13, T6, T6)", "gemm", "cuBLAS", "cuBLAS gemvx"),
    ("cublas-gemvx", "std::enable_if<!T7, void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, __nv_bfloat16, float, (bool)0, (bool)1, (bool)1, (bool)0, (int)7, (bool)0, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<const __nv_bfloat16>, cublasGemvTensorStridedBatched<__nv_bfloat16>, float>>(T13, T6, T6)", "gemm", "cuBLAS", "cuBLAS gemvx"),
    ("cublas-gemv", "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<const float>, cublasGemvTensorStridedBatched<float>, float>>(T13, T6, T6)", "gemm", "cuBLAS", "cuBLAS gemv2T"),
    ("cutlass2-gemm", "void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(T1::Params)", "gemm", "CUTLASS", "CUTLASS sm80 tensorop bf16 s16816gemm 64x64 tn"),
    ("cutlass3-gemm", "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<4, cute::tuple<cute::C<1>, cute::C<2>, cute::C<1>>, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, cute::tuple<cute::C<128>, cute::C<128>, cute::C<64>>, cutlass::bfloat16_t>>>(T1::Params)", "gemm", "CUTLASS", "CUTLASS GemmUniversal sm90 128x128x64"),
    ("marlin", "void marlin::Marlin<256, 1, 8, 8, 4, 8>(const int4 *, const int4 *, int4 *, const int4 *, int, int, int, int *, int)", "gemm", None, "Marlin<256, 1, 8, 8, 4, 8>"),
    ("triton-tem-mm", "triton_tem_fused_mm_0", "gemm", "Triton", "Triton template fused_mm_0"),
    ("gemm", "void gemm_v0<float>(T1 *, T1 *, T1 *, int, int, int)", "gemm", None, "gemm_v0<float>"),  # sample
    ("gemm", "unnamed>::gemm_naive_kernel(const float *, const float *, float *, int, int, int)", "gemm", None, "gemm_naive"),  # sample
    ("gemm", "matmul_kernel", "gemm", None, "matmul"),
    # ---- PyTorch ATen
    ("aten-softmax", "void <unnamed>::softmax_warp_forward<float, float, float, (int)5, (bool)0, (bool)0>(T2 *, const T1 *, int, int, int, const bool *, int, bool)", "softmax", ATEN, "ATen softmax_warp_forward"),  # sample
    ("aten-reduce", "void at::native::reduce_kernel<(int)128, (int)4, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator ()(at::TensorIterator &)::[lambda(float, float) (instance 1)]>, unsigned int, float, (int)4>>(T3)", "reduction", ATEN, "ATen reduce: sum"),  # sample
    ("aten-reduce", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>>(T3)", "reduction", ATEN, "ATen reduce: Mean"),
    ("aten-index-elementwise", "void at::index_elementwise_kernel<128, 4, void at::gpu_index_kernel<void at::index_put_kernel_impl<at::OpaqueType<4>>(at::TensorIterator &, c10::ArrayRef<long>, c10::ArrayRef<long>)::[lambda(char *, const char *, long) (instance 1)]>(at::TensorIteratorBase &, c10::ArrayRef<long>, c10::ArrayRef<long>, const T1 &, bool)::[lambda(int) (instance 1)]>(long, T3)", "index", ATEN, "ATen index_put"),  # sample
    ("aten-index-elementwise", "void at::index_elementwise_kernel<128, 4, void at::gpu_index_kernel<void at::index_kernel_impl<at::OpaqueType<4>>(at::TensorIteratorBase &, c10::ArrayRef<long>, c10::ArrayRef<long>)::[lambda(char *, const char *, long) (instance 1)]>(at::TensorIteratorBase &, c10::ArrayRef<long>, c10::ArrayRef<long>, const T1 &, bool)::[lambda(int) (instance 1)]>(long, T3)", "index", ATEN, "ATen index"),  # sample
    ("aten-scatter-gather", "void at::native::_scatter_gather_elementwise_kernel<128, 4, void at::native::_cuda_scatter_gather_internal_kernel<true, long>::operator ()<at::native::ReduceAdd>(at::TensorIterator &, long, long, long, const T1 &)::[lambda(int) (instance 1)]>(int, T3)", "index", ATEN, "ATen _scatter_gather_elementwise"),
    ("aten-index", "void at::<unnamed>::indexSelectSmallIndex<c10::BFloat16, long, unsigned int, 2, 2, (int)-2>(cuda::TensorInfo<T1, T3>, cuda::TensorInfo<const T1, T3>, cuda::TensorInfo<const T2, T3>, int, int, T3, long)", "index", ATEN, "ATen indexSelectSmallIndex"),  # sample
    ("aten-cat", "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2>, unsigned int, 3, 64, 64>(T1 *, at::native::(anonymous namespace)::CatArrInputTensorMetadata<T1, T2, T4, T5>, at::native::(anonymous namespace)::TensorSizeStride<T2, 4>, int, T2)", "copy", ATEN, "ATen cat (CatArrayBatchedCopy)"),
    ("aten-sort", "void at::native::bitonicSortKVInPlace<2, -1, 16, 16, float, long, at::native::GTOp<float, true>, unsigned int>(at::cuda::detail::TensorInfo<T5, T8>, T8, T8, T8, at::cuda::detail::TensorInfo<T6, T8>, T8, T7)", "scan_sort", ATEN, "ATen bitonicSortKVInPlace"),
    ("aten-sampling", "void at::native::(anonymous namespace)::sampleMultinomialOnce<float, float>(long *, long, int, const T1 *, const float *, int, int, int, int)", "sampling", ATEN, "ATen sampleMultinomialOnce"),
    ("aten-random", "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, (int)4, void at::native::templates::cuda::uniform_and_transform<float, float, (unsigned long)4, at::CUDAGeneratorImpl *, void at::native::templates::cuda::uniform_kernel<at::CUDAGeneratorImpl *>(at::TensorIteratorBase &, double, double, T1)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, T4)::[lambda(curandStatePhilox4_32_10 *) (instance 2)]>(int, at::PhiloxCudaState, T3, T4)", "fill", ATEN, "ATen random: uniform"),  # sample
    ("aten-arange", "void <unnamed>::elementwise_kernel_with_index<int, at::arange_cuda_out(const c10::Scalar &, const c10::Scalar &, const c10::Scalar &, at::Tensor &)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 3)]::operator ()() const::[lambda(long) (instance 1)]>(T1, T2, function_traits<T2>::result_type *)", "fill", ATEN, "ATen elementwise: arange"),  # sample
    ("aten-fill", "void at::vectorized_elementwise_kernel<4, at::FillFunctor<int>, std::array<char *, 1>>(int, T2, T3)", "fill", ATEN, "ATen elementwise: FillFunctor<int>"),  # sample
    ("aten-copy", "void at::unrolled_elementwise_kernel<at::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator ()() const::[lambda() (instance 3)]::operator ()() const::[lambda(int) (instance 1)], std::array<char *, 2>, 4, TrivialOffsetCalculator<1, unsigned int>, TrivialOffsetCalculator<1, unsigned int>, memory::LoadWithCast<1>, memory::StoreWithCast<1>>(int, T1, T2, T4, T5, T6, T7)", "copy", ATEN, "ATen elementwise: direct_copy"),  # sample
    ("aten-elementwise", "void at::vectorized_elementwise_kernel<4, at::CUDAFunctorOnSelf_add<int>, std::array<char *, 2>>(int, T2, T3)", "elementwise", ATEN, "ATen elementwise: CUDAFunctorOnSelf_add<int>"),  # sample
    ("aten-elementwise", "void at::native::vectorized_elementwise_kernel<(int)4, at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>>, at::detail::Array<char *, (int)2>>(int, T2, T3)", "elementwise", ATEN, "ATen elementwise: MulFunctor<float>"),  # sample
    ("aten-elementwise", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase &, at::native::GeluType)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 4)]::operator ()() const::[lambda(c10::BFloat16) (instance 1)], at::detail::Array<char *, 2>>(int, T2, T3)", "elementwise", ATEN, "ATen elementwise: GeluCUDAKernelImpl"),
    ("aten-transpose", "void at::native::(anonymous namespace)::transpose_kernel<float>(float *, const float *, int, int)", "copy", ATEN, "ATen transpose"),  # synthetic
    # ---- CUB
    ("cub-reduce", "void cub::CUB_200200_800_NS::DeviceReduceSingleTileKernel<cub::CUB_200200_800_NS::DeviceReducePolicy<float, int, cub::CUB_200200_800_NS::Sum>::Policy600, float *, float *, int, cub::CUB_200200_800_NS::Sum, float>(T2, T3, T4, T5, T6)", "reduction", "CUB", "CUB DeviceReduceSingleTile"),
    ("cub", "void at_cuda_detail::DeviceScanKernel<at_cuda_detail::DeviceScanPolicy<int, std::plus<int>>::Policy900, const int *, int *, at_cuda_detail::ScanTileState<int, 1>, std::plus<int>, at_cuda_detail::NullType, unsigned int, int, 0>(T2, T3, T4, int, T5, T6, T7)", "scan_sort", "CUB", "CUB DeviceScan"),  # sample
    ("cub", "void at_cuda_detail::DeviceScanInitKernel<at_cuda_detail::ScanTileState<int, 1>>(T1, int)", "scan_sort", "CUB", "CUB DeviceScanInit"),  # sample
    # ---- TorchInductor
    ("triton-poi", "triton_poi_fused_clamp_sub_0", "elementwise", "Triton", "Triton pointwise fused_clamp_sub_0"),  # sample
    ("triton-reduction", "triton_per_fused_copy__mul_sum_0", "reduction", "Triton", "Triton per fused_copy__mul_sum_0"),  # sample
    ("triton-reduction", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_12", "reduction", "Triton", "Triton red fused__to_copy_add_mean_…pow_rsqrt_12"),
    # ---- generic rows
    ("sampling", "void TopKTopPSamplingFromProbKernel<1024u, 4u, false, float, int>(float *, int *, int *, float *, int *, float *, unsigned int, unsigned int)", "sampling", None, "TopKTopPSamplingFromProb"),
    ("quantize", "void per_token_group_quant_8bit_kernel<__nv_bfloat16, c10::Float8_e4m3fn, false>(const __nv_bfloat16 *, void *, float *, int, int, float, float, float, int, int)", "quantize", None, "per_token_group_quant_8bit"),
    ("softmax", "softmax_kernel", "softmax", None, "softmax"),  # Triton tutorial, bare
    ("reduction", "void block_reduce_sum<float>(const float *, float *, int)", "reduction", None, "block_reduce_sum<float>"),  # synthetic
    ("transpose-copy", "void matrix_transpose_kernel<32>(float *, const float *, int, int)", "copy", None, "matrix_transpose<32>"),  # synthetic
    ("aten-other", "void at::native::(anonymous namespace)::upsample_linear1d_out_frame<float>(int, float, bool, at::GenericPackedTensorAccessor<const float, 3, at::DefaultPtrTraits, long>, at::GenericPackedTensorAccessor<float, 3, at::DefaultPtrTraits, long>)", "other", ATEN, "ATen upsample_linear1d_out_frame<float>"),
    # ---- no row: family other
    ("fallback", "cuda_compute_flux(int,int*,float*,float*,float*)", "other", None, "cuda_compute_flux"),  # sample
    ("fallback", "void randomInit<float>(T1 *, int, int, unsigned int)", "other", None, "randomInit<float>"),  # sample
    ("fallback", "void cutlass::device_kernel<mylib::FancyKernel<cute::tuple<cute::C<64>>>>(T1::Params)", "other", "CUTLASS", "CUTLASS FancyKernel"),  # synthetic
]


@pytest.mark.parametrize("row, name, family, library, label", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_case_table(row, name, family, library, label):
    k = classify_name(name)
    assert (k.row, k.family, k.library, k.label) == (row, family, library, label)


def test_every_table_row_is_hit_by_a_case():
    hit = {c[0] for c in CASES}
    dead = [r.id for r in FAMILY_TABLE if r.id not in hit]
    assert not dead, f"rows no test case reaches (dead or untested): {dead}"


def test_table_is_well_formed():
    ids = [r.id for r in FAMILY_TABLE]
    assert len(ids) == len(set(ids)), "row ids must be unique"
    for r in FAMILY_TABLE:
        assert r.family in FAMILIES, r.id
        assert r.library is None or r.library in LIBRARIES, r.id
    assert set(fam.WEIGHT_GEMM_FAMILIES) | set(fam.KV_CACHE_FAMILIES) | set(fam.GEMM_FAMILIES) <= set(FAMILIES)
    assert set(fam.NAMESPACE_LIBRARIES.values()) <= set(LIBRARIES)


def test_every_family_and_library_in_the_vocabulary_is_reachable():
    families = {c[2] for c in CASES}
    assert families == set(FAMILIES), set(FAMILIES) ^ families
    libraries = {c[3] for c in CASES} - {None}
    assert libraries == set(LIBRARIES), set(LIBRARIES) ^ libraries


@pytest.mark.parametrize("name", [c[1] for c in CASES])
def test_labels_are_short_and_never_a_bare_template(name):
    label = classify_name(name).label
    assert 0 < len(label) <= fam.LABEL_MAX
    assert not re.fullmatch(r"(?:\w+ )?(?:cutlass::)?(?:device_kernel|Kernel|Kernel2)", label), label
    assert "device_kernel" not in label


def test_distinct_cases_rarely_share_a_label():
    by_label: dict[str, set[str]] = {}
    for _, name, *_rest in CASES:
        # one kernel in two tools' spellings (ridgeline.names.join_key) is one kernel: one label
        by_label.setdefault(classify_name(name).label, set()).add(join_key(name))
    shared = {lab: names for lab, names in by_label.items() if len(names) > 1}
    assert not shared, shared


# ---------------------------------------------------------------- the issue's named confusions
def test_issue_confusions_are_resolved():
    rope = classify_name("void flashinfer::BatchQKApplyRotaryPosIdsCosSinCacheKernel<false, 128, 8, 16, __nv_bfloat16, long>(...)")
    assert rope.family == "rope" and not reads_kv_cache(rope.family)
    combine = classify_name("void flash_fwd_splitkv_combine_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4, false, false, cutlass::bfloat16_t>, 4, 1, true>(Flash_fwd_params)")
    assert combine.family == "attention_aux" and not reads_kv_cache(combine.family)
    splitk = classify_name("void splitKreduce_kernel<(int)32, (int)16, int, float, float, float, float, (bool)1, (bool)0, (bool)0>(cublasSplitKParams<T6>, const T4 *, const T5 *, T5 *, const T6 *, const T6 *, const T7 *, const T4 *, T7 *, void *, long, T6 *, int *)")
    assert splitk.family == "gemm_aux" and not is_weight_gemm(splitk.family)
    moe = classify_name("fused_moe_kernel")
    assert is_weight_gemm(moe.family) and not reads_kv_cache(moe.family)
    fa3 = next(c[1] for c in CASES if c[0] == "fa3-fwd")
    k = classify_name(fa3)
    assert reads_kv_cache(k.family) and not is_weight_gemm(k.family) and not fam.is_gemm(k.family)
    # attention whose template arguments name a RoPE mode is still attention
    fused = classify_name("void flashinfer::BatchPrefillWithPagedKVCacheKernel<KernelTraits<(MaskMode)1, 128, (PosEncodingMode)1, RoPE>, Params>(T2)")
    assert fused.family == "attention"
    assert is_weight_gemm("gemm") and is_weight_gemm("grouped_gemm") and not is_weight_gemm(None)
    assert not reads_kv_cache("attention_aux") and not reads_kv_cache(None)


def test_empty_name():
    k = classify_name("")
    assert k.family == "other" and k.library is None and k.label


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300) | st.sampled_from([c[1] for c in CASES]).flatmap(lambda n: st.integers(0, len(n)).map(lambda i: n[:i])))
def test_any_string_classifies_without_error(name):
    k = classify_name(name)
    assert k.family in FAMILIES
    assert 0 < len(k.label) <= fam.LABEL_MAX


def test_shorten_keeps_the_tail():
    s = fam.shorten("x" * 60 + "_tail_12")
    assert len(s) == fam.LABEL_MAX and s.endswith("_tail_12") and "…" in s
    assert fam.shorten("short") == "short"


def test_bad_label_template_is_reported():
    with pytest.raises(ValueError, match="needs field"):
        fam._render("{nope}", {})


# ---------------------------------------------------------------- polars
def test_family_columns_classifies_distinct_names_once_and_keeps_rows():
    names = ["fused_moe_kernel", "nvjet_tst_64x8_64x16_2x1_v_bz_TNT", "fused_moe_kernel", None, "attn_fwd"]
    df = pl.DataFrame({"kernel_name": names, "short_name": [None, None, None, "softmax_kernel", None], "x": range(5)})
    fam.classify_name.cache_clear()
    out = family_columns(df)
    assert out["x"].to_list() == list(range(5))
    assert out["kernel_family"].to_list() == ["grouped_gemm", "gemm", "grouped_gemm", "softmax", "attention"]
    assert out["kernel_library"].to_list() == ["Triton", "cuBLAS", "Triton", None, None]
    assert out["kernel_label"][0] == classify_name("fused_moe_kernel").label
    assert fam.classify_name.cache_info().misses == 4  # four distinct names, not five rows


def test_family_columns_replaces_existing_columns_and_handles_null_names():
    df = pl.DataFrame({"kernel_name": [None, "matmul_kernel"], "kernel_family": ["x", "y"]}, schema_overrides={"kernel_name": pl.String})
    out = family_columns(df)
    assert out.columns.count("kernel_family") == 1
    assert out["kernel_family"].to_list() == [None, "gemm"]
    assert out["kernel_label"].to_list() == [None, "matmul"]


def test_family_columns_accepts_a_lazy_frame():
    df = pl.DataFrame({"kernel_name": ["fused_moe_kernel", "attn_fwd"]})
    out = family_columns(df.lazy())
    assert isinstance(out, pl.LazyFrame)
    assert out.collect().equals(family_columns(df))


def test_family_columns_makes_colliding_labels_unique():
    a = "void splitKreduce_kernel<(int)32, (int)16, int, float, float, float, float, (bool)1, (bool)0, (bool)0>(cublasSplitKParams<T6>)"
    b = "void splitKreduce_kernel<(int)32, (int)16, int, float, float, float, float, (bool)1, (bool)1, (bool)0>(cublasSplitKParams<T6>)"
    assert classify_name(a).label == classify_name(b).label
    out = family_columns(pl.DataFrame({"kernel_name": [b, a, b]}))
    labels = out["kernel_label"].to_list()
    assert labels[0] == labels[2] != labels[1]
    # the template argument that tells them apart (the 9th: (bool)0 / (bool)1), not a counter
    assert sorted(set(labels)) == ["cuBLAS splitKreduce <0>", "cuBLAS splitKreduce <1>"]
    assert family_columns(pl.DataFrame({"kernel_name": [a, b]}), unique_labels=False)["kernel_label"].n_unique() == 1


# ---------------------------------------------------------------- docs
def test_docs_page_is_current():
    doc = ROOT / "docs" / "kernel-families.md"
    current = doc.read_text(encoding="utf-8") if doc.exists() else ""
    assert current == families_markdown(), "docs/kernel-families.md is stale: run python scripts/gen_families_doc.py"


def test_docs_page_names_every_row_family_and_library():
    md = families_markdown()
    assert f"Table version {fam.FAMILY_TABLE_VERSION}" in md
    for r in FAMILY_TABLE:
        assert f"`{r.id}`" in md
    for f in FAMILIES:
        assert f"`{f}`" in md
    for lib in LIBRARIES:
        assert f"| {lib} |" in md


# ---------------------------------------------------------------- every real sample
def _sample_files():
    return sorted(SAMPLES.glob("*.csv")) if SAMPLES.is_dir() else []


@pytest.mark.skipif(not _sample_files(), reason="shared samples not available")
def test_every_kernel_name_of_every_sample_classifies():
    from ridgeline.parsers.ncu.csv_reader import read_ncu

    from ridgeline.errors import InputError

    seen = 0
    for path in _sample_files():
        try:
            kernels = family_columns(read_ncu([path]).kernels)
        except InputError as e:  # a file with no launches (ncu profiled none) is refused in one line
            assert path.name in str(e) and "\n" not in str(e), e
            continue
        for name, label, family in kernels.select("kernel_name", "kernel_label", "kernel_family").unique().iter_rows():
            seen += 1
            assert family in FAMILIES, (path.name, name)
            assert label and len(label) <= fam.LABEL_MAX + 3, (path.name, name, label)
            assert "device_kernel" not in label and label.split()[-1] not in {"Kernel", "kernel"}, (path.name, name, label)
    assert seen > 20


def test_a_name_that_starts_with_a_bracket_is_labelled_as_written():
    # hostile or odd names (rendered as text by the HTML report) never grow in the label
    assert classify_name("<script>alert('x')</script>").label == "<script>alert('x')</script>"


def test_a_family_pre_check_never_disagrees_with_the_first_match():
    """family_patterns(f) only rules names out: every name classified into f is matched by one of
    f's patterns, and the communication test (analyzer/comm.is_comm_name, which relies on it)
    agrees with the whole table on every case name and on names that only resemble a collective."""
    from ridgeline.analyzer.timeline.comm import COMM_FAMILY, is_comm_name
    from ridgeline.analyzer.kernels.families import FAMILY_TABLE, classify_name, family_patterns

    names = [c[1] for c in CASES] + ["sm90_xmma_gemm_allreduce_fused", "reduce_kernel", "all_to_all_tail", "", "gather"]
    for family in {row.family for row in FAMILY_TABLE}:
        for name in names:
            if name and classify_name(name).family == family and classify_name(name).row != "fallback":
                assert any(rx.search(name) for rx in family_patterns(family)), (family, name)
    for name in names:
        assert is_comm_name(name) == (bool(name) and classify_name(name).family == COMM_FAMILY), name
