"""What a kernel IS: its family, its library and a display label, from its full demangled name.

A short name hides what a kernel is (FlashAttention-3 is ``cutlass::device_kernel``, FlashInfer's
RoPE contains "flash"), so kernels are classified by the FULL name ncu prints, template arguments
and parameter list included, against :data:`FAMILY_TABLE`: an ordered, versioned table of
regular expressions (data, not code). The first row whose pattern matches wins, so specific rows
come before generic ones. Rules, labels, plots and what-ifs all read the result; the rules do not
match names themselves.

Each row gives:

- ``family``: one of :data:`FAMILIES` (a small closed vocabulary, documented there);
- ``library``: one of :data:`LIBRARIES`, or None where the row cannot tell; a row without a
  library takes it from the name's leading namespace (:data:`NAMESPACE_LIBRARIES`:
  ``vllm::`` -> vLLM, ``at::`` -> PyTorch ATen...), otherwise it stays None (unknown);
- ``label``: a template for a short display label (<= :data:`LABEL_MAX` characters, longer ones
  are cut in the middle, keeping the distinguishing tail). ``{group}`` is a named group of the
  pattern or a derived field (:data:`DERIVED_FIELDS`); ``{group|words}`` turns ``_`` into spaces,
  ``{group|lower}`` lowers it, ``{group|hide}`` prints nothing but requires the group; a
  ``[...]`` part is left out when a field inside it did not match. A row without a label gets
  ``<library prefix> <base name>``.

Pattern shorthand: ``<NS>`` stands for any run of namespaces, anonymous ones included
(``at::native::(anonymous namespace)::``). Patterns are matched case-insensitively.

Triton kernels carry no template arguments or parameter list in ncu's names (``fused_moe_kernel``),
but neither do ``extern "C"`` CUDA kernels, so a bare name alone is not proof: a name is called
Triton when it starts with ``triton_`` (TorchInductor), ends with ``_triton`` (SGLang's helpers),
or a row names a known Triton kernel (vLLM/SGLang ``fused_moe_kernel``, the Triton decode
attention ``_fwd_kernel_stage1/2``, vLLM's ``kernel_unified_attention_*``).

Adding a kernel: add or extend a row (specific before generic), add a case naming that row to
``tests/analyzer/kernels/test_families.py``, bump :data:`FAMILY_TABLE_VERSION`, and regenerate
``docs/kernel-families.md`` and the rows' literals (``ridgeline/analyzer/kernels/family_literals.py``) with
``python scripts/gen_families_doc.py``.

Speed: a name is searched only with the rows whose literals it contains (``gemm``, ``nccl``...:
:mod:`ridgeline.analyzer.kernels.regex_literals`, a necessary condition read from each pattern), and a
row's pattern is compiled on first use: classifying the 85 kernels of a 16-rank A100 trace took
52 ms of regex searches and compiles, now 15 ms.
"""

from __future__ import annotations

import dataclasses
import functools
import re

FAMILY_TABLE_VERSION = "3"

LABEL_MAX = 48

# family -> what it means (the docs page prints this table)
FAMILIES: dict[str, str] = {
    "gemm": "dense weight GEMM/GEMV (cuBLAS, CUTLASS, Marlin, Triton/Inductor matmul, implicit-GEMM convolutions): intensity grows with tokens per weight read",
    "grouped_gemm": "grouped / MoE expert GEMMs (CUTLASS grouped GEMM, Triton fused_moe_kernel, TensorRT-LLM MoE GEMMs, Marlin MoE): weight GEMMs whose tokens are split across experts",
    "gemm_aux": "GEMM-adjacent work that is not a matrix product: cuBLAS split-K reductions, cuBLASLt/CUTLASS epilogues",
    "attention": "fused attention that reads the KV cache (or K/V): FlashAttention 2/3, FlashInfer decode/prefill, FlashMLA, vLLM paged attention, TensorRT-LLM XQA/MMHA/fmha_v2, cuDNN SDPA, xformers/PyTorch mem-efficient fmha, Triton decode attention",
    "attention_aux": "attention-adjacent kernels that never read the KV cache: split-KV combine, MergeStates, FA3 scheduler/metadata (prepare_varlen_num_blocks), KV-cache writes (reshape_and_cache)",
    "rope": "rotary position embedding (FlashInfer BatchQKApplyRotary*, vLLM rotary_embedding)",
    "norm": "RMSNorm, LayerNorm, fused add+norm, qk-norm",
    "activation": "gated activations and their products (act_and_mul, silu_and_mul, gelu_and_mul)",
    "moe_routing": "MoE routing and bookkeeping: top-k gating softmax, moe_align_block_size, expert token sort/count, permute, moe sum",
    "softmax": "softmax outside attention (PyTorch softmax_warp_forward, cunn_SoftMax*)",
    "reduction": "reductions: ATen reduce_kernel, CUB DeviceReduce, Triton/Inductor persistent and loop reductions (triton_per_*, triton_red_*)",
    "elementwise": "pointwise math: ATen vectorized/unrolled elementwise kernels, Triton/Inductor pointwise (triton_poi_*)",
    "copy": "data movement without math: direct_copy, cat, transpose, memcpy-like kernels",
    "fill": "writes generated values without reading inputs: fill, arange, random initialisation",
    "index": "index/gather/scatter/embedding/indexSelect",
    "scan_sort": "scans, sorts, selections, top-k (CUB DeviceScan/RadixSort/Select, ATen sort)",
    "communication": "collectives and point-to-point: NCCL/RCCL (SendRecv included), custom all-reduce (vLLM/SGLang cross_device_reduce, PyTorch symmetric-memory multimem/one-shot/two-shot, TensorRT-LLM), custom all-gather/reduce-scatter/all-to-all, MSCCL, DeepEP dispatch/combine; timed apart from compute (docs/timeline.md)",
    "quantize": "quantization and dequantization kernels (fp8/int8/fp4 casts with scales)",
    "sampling": "token sampling: FlashInfer sampling, top-k/top-p, multinomial, penalties",
    "other": "none of the above (the table has no row for it)",
}

# library -> how it is recognised (printed on the docs page)
LIBRARIES: dict[str, str] = {
    "cuBLAS": "nvjet_*, sm*_xmma_gemm_*, ampere/volta/turing_*gemm*, gemv*/gemmk1 kernels, cublasLt::*, splitKreduce",
    "CUTLASS": "cutlass::device_kernel<cutlass::gemm::...>, cutlass::Kernel<cutlass_80_tensorop_...>",
    "FlashAttention-2": "flash_fwd_kernel, flash_fwd_splitkv_kernel, flash_bwd_*_kernel and their combine",
    "FlashAttention-3": "flash::FlashAttnFwdSm90 / FlashAttnFwdCombine / prepare_varlen_num_blocks_kernel",
    "FlashInfer": "BatchDecode/BatchPrefill/Single* kernels, MergeStates, norm::*RMSNormKernel, activation::act_and_mul_kernel, BatchQKApplyRotary*, sampling::*",
    "FlashMLA": "flash_fwd_splitkv_mla_kernel, get_mla_metadata_kernel, mla combine",
    "Triton": "triton_* (TorchInductor), *_triton, and named Triton kernels (fused_moe_kernel, _fwd_kernel_stage1/2, kernel_unified_attention_*)",
    "vLLM": "vllm:: namespace (paged_attention, rms_norm, rotary_embedding, act_and_mul, cross_device_reduce, reshape_and_cache)",
    "SGLang": "sglang:: namespace and SGLang's own kernels (fused_qknorm_warp)",
    "PyTorch ATen": "at:: / at::native:: kernels, PyTorch's softmax_warp_forward and mem-efficient attention",
    "CUB": "cub:: and at_cuda_detail:: (PyTorch's copy of CUB) Device* kernels",
    "TensorRT-LLM": "tensorrt_llm:: namespace, XQA (kernel_mha, xqa_kernel), MMHA, fmha_v2_*",
    "NCCL": "ncclDevKernel_* / ncclKernel_*",
    "cuDNN": "cudnn_generated_* (SDPA), *_scudnn_* convolutions, sm*_xmma_fprop/dgrad/wgrad",
    "xformers": "fmha_cutlassF/B_* outside PyTorch, xformers:: namespace",
}

# leading namespace -> library, for rows that do not name one
NAMESPACE_LIBRARIES: dict[str, str] = {
    "vllm": "vLLM",
    "sglang": "SGLang",
    "sgl_kernel": "SGLang",
    "flashinfer": "FlashInfer",
    "at": "PyTorch ATen",
    "c10": "PyTorch ATen",
    "at_cuda_detail": "CUB",
    "cub": "CUB",
    "tensorrt_llm": "TensorRT-LLM",
    "cutlass": "CUTLASS",
    "cublasLt": "cuBLAS",
    "cublas": "cuBLAS",
    "xformers": "xformers",
}

# how a library is written at the start of a default label
LABEL_PREFIX: dict[str, str] = {"PyTorch ATen": "ATen", "FlashAttention-2": "FA2", "FlashAttention-3": "FA3"}

# Families whose intensity grows with tokens per weight read (RL101 decode-GEMM advice).
WEIGHT_GEMM_FAMILIES = frozenset({"gemm", "grouped_gemm"})
# Families that read the KV cache (RL102 attention / KV-cache advice).
KV_CACHE_FAMILIES = frozenset({"attention"})
# Families where GEMM implementation advice (autotune cuBLASLt, CUTLASS) can apply; which tool
# to tune is the library's (a Triton fused_moe is tuned by its Triton config, not cuBLASLt).
GEMM_FAMILIES = frozenset({"gemm", "grouped_gemm"})


@dataclasses.dataclass(frozen=True)
class FamilyRow:
    """One row of :data:`FAMILY_TABLE` (``id`` is stable: tests and docs name rows by it)."""

    id: str
    pattern: str
    family: str
    library: str | None = None
    label: str | None = None


@dataclasses.dataclass(frozen=True)
class KernelKind:
    """What one kernel name is: ``row`` is the id of the table row that matched (or ``fallback``)."""

    family: str
    library: str | None
    label: str
    row: str


R = FamilyRow
# fmt: off
FAMILY_TABLE: tuple[FamilyRow, ...] = (
    # ---- communication
    R("nccl", r"nccl(?:Dev)?Kernel_(?P<op>\w+?)(?:\(|<|$)", "communication", "NCCL", "NCCL {op}"),
    R("custom-allreduce", r"cross_device_reduce|(?<!sm)all_?reduce", "communication", None, None),
    R("collective", r"(?<![a-z])(?:all_?gather|reduce_?scatter|all_?to_?allv?)(?![a-z])|mscclKernel_|deep_ep::inter(?:node)?|deep_ep::intranode::", "communication", None, None),
    # ---- attention_aux (before attention: these names contain attention words)
    R("flashmla-combine", r"flash_fwd(?:_splitkv)?_mla_combine_kernel|get_mla_metadata_kernel", "attention_aux", "FlashMLA", "FlashMLA {base}"),
    R("fa2-combine", r"flash_fwd_splitkv_combine_kernel", "attention_aux", "FlashAttention-2", "FlashAttention-2 split-KV combine"),
    R("fa3-combine", r"flash::FlashAttnFwdCombine", "attention_aux", "FlashAttention-3", "FlashAttention-3 split-KV combine[ {tile}]"),
    R("fa3-prepare", r"flash::prepare_varlen_num_blocks", "attention_aux", "FlashAttention-3", "FlashAttention-3 prepare_varlen_num_blocks"),
    R("fa3-bwd-aux", r"flash::FlashAttnBwd(?P<k>Pre|Post)process", "attention_aux", "FlashAttention-3", "FlashAttention-3 bwd {k|lower}process"),
    R("fa2-bwd-aux", r"flash_bwd_(?P<k>dot_do_o|convert_dq|convert_dkv|clear_dkvaccum)_kernel", "attention_aux", "FlashAttention-2", "FlashAttention-2 bwd {k}"),
    R("flashinfer-merge", r"(?P<k>\w*MergeStates?\w*?)Kernel", "attention_aux", "FlashInfer", "FlashInfer {k}"),
    R("merge-attn-states", r"merge_attn_states_kernel", "attention_aux", None, None),
    R("vllm-paged-reduce", r"paged_attention_v2_reduce_kernel", "attention_aux", "vLLM", "vLLM paged_attention_v2 reduce"),
    R("kv-cache-write", r"(?P<k>reshape_and_cache(?:_flash)?|concat_and_cache_mla|store_kvcache)(?:_kernel)?(?:<|\(|$)", "attention_aux", None, None),
    R("kv-indices", r"create_\w*kv_indices\w*", "attention_aux", None, None),
    R("triton-decode-attn-reduce", r"^_fwd_kernel_stage2$", "attention_aux", "Triton", "Triton decode attention stage2"),
    R("vllm-unified-attn-reduce", r"^reduce_segments$", "attention_aux", "Triton", "Triton unified_attention reduce_segments"),
    # ---- rope (the generic rope row comes after the specific attention rows: their template
    # arguments may name a RoPE mode)
    R("flashinfer-rope", r"BatchQKApply(?P<llama>Llama31)?Rotary(?P<pos>PosIds)?(?P<cache>CosSinCache)?(?P<hp>\w*HeadParallelism)?Kernel", "rope", "FlashInfer", "FlashInfer RoPE[ llama3.1{llama|hide}][ cos/sin cache{cache|hide}][ head-parallel{hp|hide}]"),
    R("vllm-rope", r"vllm::(?P<k>\w*rotary_embedding)_kernel", "rope", "vLLM", "vLLM {k}"),
    # ---- attention
    R("fa3-fwd", r"flash::FlashAttn(?P<dir>Fwd|Bwd)Sm(?P<sm>\d+)", "attention", "FlashAttention-3", "FlashAttention-3 {dir|lower} (sm{sm})[ {tile}]"),
    R("flashmla", r"flash_fwd_splitkv_mla_kernel|flash_mla|flashmla|flash::mla::", "attention", "FlashMLA", "FlashMLA decode"),
    R("fa2", r"flash_(?P<k>fwd_splitkv|fwd|bwd_dq_dk_dv\w*?)_kernel(?:.*?kernel_traits<(?P<hd>\d+), (?P<bm>\d+), (?P<bn>\d+))?", "attention", "FlashAttention-2", "FlashAttention-2 {k|words}[ hdim{hd}][ {bm}x{bn}]"),
    R("flashinfer-attn", r"(?P<k>(?:Batch|Single)(?:Decode|Prefill|POD)With\w*?|Batch\w*MLA\w*?)Kernel", "attention", "FlashInfer", "FlashInfer {k}"),
    R("vllm-paged-attn", r"paged_attention_v(?P<v>[12])_kernel", "attention", "vLLM", "vLLM paged_attention_v{v}"),
    R("trtllm-xqa", r"xqa_kernel|(?<![a-z])kernel_mha(?![a-z])", "attention", "TensorRT-LLM", "TensorRT-LLM XQA"),
    R("trtllm-mmha", r"masked_multihead_attention|mmha::", "attention", "TensorRT-LLM", "TensorRT-LLM MMHA"),
    R("trtllm-fmha-v2", r"fmha_v2_(?:flash_attention_)?(?P<dt>[a-z0-9]+)_\w*?sm(?P<sm>\d+)", "attention", "TensorRT-LLM", "TensorRT-LLM fmha_v2 {dt} sm{sm}"),
    R("trtllm-gen-fmha", r"(?P<k>fmhaSm\d+\w*?Kernel)", "attention", "TensorRT-LLM", "TensorRT-LLM {k}"),
    R("cudnn-sdpa", r"cudnn_generated\w*?sdpa\w*?(?P<dir>fprop|bprop)", "attention", "cuDNN", "cuDNN SDPA {dir}"),
    R("aten-mem-eff-fmha", r"fmha_cutlass(?P<dir>[FB])_(?P<k>\w+?)(?:\(|<|$).*PyTorchMemEffAttention", "attention", "PyTorch ATen", "ATen mem-eff fmha{dir} {k|words}"),
    R("xformers-fmha", r"fmha_cutlass(?P<dir>[FB])_(?P<k>\w+?)(?:\(|<|$)", "attention", "xformers", "xformers fmha{dir} {k|words}"),
    R("triton-decode-attn", r"^_fwd_(?P<g>grouped_)?kernel_stage1$", "attention", "Triton", "Triton decode attention stage1[ (grouped{g|hide})]"),
    R("vllm-unified-attn", r"^kernel_unified_attention_(?P<k>\w+)$", "attention", "Triton", "Triton unified_attention {k}"),
    R("flashinfer-sampling", r"sampling::(?P<k>\w+?)Kernel", "sampling", "FlashInfer", "FlashInfer {k}"),
    R("rope", r"rotary|(?<![a-z])rope(?![a-z])|_rope_", "rope", None, None),
    R("attention", r"attention|attn|fmha|(?<![a-z])mha(?![a-z])|xformers|flash_|flash::", "attention", None, None),
    # ---- norm
    R("flashinfer-norm", r"norm::(?P<gemma>Gemma)?(?P<fused>FusedAdd)?(?P<k>RMSNorm|LayerNorm|QKRMSNorm)Kernel", "norm", "FlashInfer", "FlashInfer {k}[ (Gemma{gemma|hide})][ (fused add{fused|hide})]"),
    R("sglang-qknorm", r"fused_qknorm\w*(?:<(?P<hd>\d+))?", "norm", "SGLang", "SGLang qk-norm[ hdim{hd}]"),
    R("vllm-rms-norm", r"vllm::(?P<fused>fused_add_)?(?P<k>rms_norm\w*?)_kernel", "norm", "vLLM", "vLLM {k}[ (fused add{fused|hide})]"),
    R("norm", r"rms_?norm|layer_?norm|group_?norm|batch_?norm|qk_?norm|RowwiseMoments", "norm", None, None),
    # ---- activation
    R("flashinfer-act-and-mul", r"(?:^|\s|flashinfer::)activation::act_and_mul_kernel<[^,]*, &?<NS>(?P<act>[a-z]+)", "activation", "FlashInfer", "FlashInfer act_and_mul ({act})"),
    R("act-and-mul", r"act_and_mul_kernel<[^,]*, &?<NS>(?P<act>[a-z]+)", "activation", None, "{lib} act_and_mul ({act})"),
    R("activation", r"(?:silu|gelu|relu|swiglu|geglu)_and_mul|act_and_mul|swiglu|geglu", "activation", None, None),
    # ---- MoE routing
    R("moe-routing", r"topkGating|topk_?softmax|moe_align|count_and_sort_expert|expert_tokens|moe_(?:sum|permute|unpermute)|expandInputRows|finalizeMoeRouting|grouped_topk|moe_fused_gate", "moe_routing", None, "MoE {base}"),
    # ---- grouped GEMM (before gemm)
    R("triton-fused-moe", r"^(?:void )?fused_moe_kernel(?P<q>_gptq_awq)?", "grouped_gemm", "Triton", "Triton fused_moe[ (gptq/awq{q|hide})]"),
    R("cutlass-grouped", r"cutlass::.*(?:GroupProblemShape|Grouped)", "grouped_gemm", "CUTLASS", "CUTLASS grouped GEMM[ {tile}]"),
    R("trtllm-moe-gemm", r"MoeFCGemm|tensorrt_llm.*moe_?gemm", "grouped_gemm", "TensorRT-LLM", "TensorRT-LLM MoE GEMM[ {tile}]"),
    R("marlin-moe", r"marlin_?moe|moe_wna16", "grouped_gemm", None, "Marlin MoE"),
    R("grouped-gemm", r"grouped_?gemm|moe_?gemm", "grouped_gemm", None, None),
    # ---- GEMM aux (before gemm)
    R("cublas-splitk-reduce", r"splitKreduce_kernel", "gemm_aux", "cuBLAS", "cuBLAS splitKreduce"),
    R("cutlass-splitk-reduce", r"cutlass::.*ReduceSplitK", "gemm_aux", "CUTLASS", "CUTLASS ReduceSplitK"),
    R("cublaslt-aux", r"cublasLt::(?:\w+::)*(?P<k>\w+)", "gemm_aux", "cuBLAS", "cuBLASLt {k}"),
    # ---- GEMM
    R("cublas-nvjet", r"^(?:void )?nvjet_(?P<types>[a-z0-9]+)_(?P<tile>\d+x\d+)(?:_\d+x\d+_(?P<cluster>\d+x\d+))?(?=(?:\w*?_(?P<sk>splitK))?)", "gemm", "cuBLAS", "cuBLAS nvjet {types} {tile}[ {cluster}][ splitK{sk|hide}]"),
    R("cublas-xmma-gemm", r"sm(?P<sm>\d+)_xmma_gemm_(?P<dt>[a-z]+\d+)\w*?_(?P<lay>[nt]{2})_[nt]_(?:tilesize(?P<tile>\d+x\d+)x\d+)?", "gemm", "cuBLAS", "cuBLAS sm{sm} xmma gemm {dt}[ {tile}] {lay}"),
    R("cudnn-xmma-conv", r"sm(?P<sm>\d+)_xmma_(?P<op>fprop|dgrad|wgrad)_(?P<k>\w+?)_(?P<dt>[a-z]+\d+)", "gemm", "cuDNN", "cuDNN sm{sm} xmma {op} {dt}"),
    R("cudnn-conv", r"(?P<arch>ampere|volta|turing|maxwell|sm\d+)_(?P<k>[a-z0-9]*cudnn\w*?)_(?P<tile>\d+x\d+)", "gemm", "cuDNN", "cuDNN {arch} {k} {tile}"),
    R("cublas-legacy-gemm", r"(?P<arch>ampere|volta|turing|maxwell|hopper)_(?P<k>\w*?gemm)_(?:(?P<dt>[a-z]+\d+)_)?(?P<tile>\d+x\d+)(?:_(?P<sl>sliced\d+x\d+))?\w*?_(?P<lay>[nt]{2})(?:_\w+)?$", "gemm", "cuBLAS", "cuBLAS {arch} {k|words} {tile}[ {sl}] {lay}"),
    R("cublas-gemvx", r"(?:^|\s|::)kernel<.*?cublasGemv", "gemm", "cuBLAS", "cuBLAS gemvx"),
    R("cublas-gemv", r"^(?:void )?(?:cublas\w*::)?(?P<k>gemv\w*?|gemmk1|gemmSN_\w+?|gemmSmall\w*?|dot)_kernel", "gemm", "cuBLAS", "cuBLAS {k}"),
    R("cutlass2-gemm", r"cutlass_(?P<sm>\d+)_(?P<op>tensorop|simt|wmma_tensorop)_(?P<k>\w*?gemm)\w*?_(?P<tile>\d+x\d+)_\d+x\d+_(?P<lay>[nt]{2})", "gemm", "CUTLASS", "CUTLASS sm{sm} {op} {k|words} {tile} {lay}"),
    R("cutlass3-gemm", r"(?:^|\s|cutlass::)device_kernel<(?:cutlass::gemm::kernel::|(?=Gemm))(?P<k>\w+)(?:(?=.*?Sm(?P<sm>\d+)))?", "gemm", "CUTLASS", "CUTLASS {k}[ sm{sm}][ {tile}]"),
    R("marlin", r"(?<![a-z])marlin", "gemm", None, None),
    R("triton-tem-mm", r"^triton_tem_(?P<k>\w*?(?:mm|matmul)\w*)$", "gemm", "Triton", "Triton template {k}"),
    R("gemm", r"gemm|gemv|matmul|wgmma|xmma|cutlass.*tensorop|(?<![a-z])b?mm(?![a-z0-9])", "gemm", None, None),
    # ---- PyTorch ATen, specific before the elementwise catch-all
    R("aten-softmax", r"softmax_warp_(?:forward|backward)|cunn_SoftMax\w*|at::native::.*softmax", "softmax", "PyTorch ATen", None),
    R("aten-reduce", r"\bat::(?:native::)?<NS>reduce_kernel<.*?(?:(?P<op>[a-z]\w*?)_functor|(?P<op2>[A-Z]\w*?)Ops<)", "reduction", "PyTorch ATen", "ATen reduce[: {op}][: {op2}]"),
    R("aten-index-elementwise", r"\bat::(?:native::)?<NS>index_elementwise_kernel<.*?(?P<k>index_put|index)_kernel_impl", "index", "PyTorch ATen", "ATen {k}"),
    R("aten-scatter-gather", r"\bat::(?:native::)?<NS>(?P<k>\w*(?:scatter|gather)\w*?)(?:_kernel)?(?:<|\()", "index", "PyTorch ATen", "ATen {k}"),
    R("aten-index", r"\bat::(?:native::)?<NS>(?P<k>index\w*|\w*embedding\w*|take\w*|put_kernel\w*)", "index", "PyTorch ATen", "ATen {k}"),
    R("aten-cat", r"\bat::(?:native::)?<NS>(?P<k>\w*CatArray\w*)", "copy", "PyTorch ATen", "ATen cat ({k})"),
    R("aten-sort", r"\bat::(?:native::)?<NS>(?P<k>\w*[sS]ort\w*|gatherTopK|\w*topk\w*)", "scan_sort", "PyTorch ATen", "ATen {k}"),
    R("aten-sampling", r"\bat::(?:native::)?<NS>(?P<k>\w*[mM]ultinomial\w*)", "sampling", "PyTorch ATen", "ATen {k}"),
    R("aten-random", r"distribution_elementwise\w*<.*?(?P<op>uniform|normal|bernoulli|random|exponential|geometric|cauchy|log_normal)", "fill", "PyTorch ATen", "ATen random: {op}"),
    R("aten-arange", r"elementwise_kernel_with_index<.*?(?P<op>arange|linspace|range|logspace)", "fill", "PyTorch ATen", "ATen elementwise: {op}"),
    R("aten-fill", r"elementwise_kernel\w*<.*?FillFunctor", "fill", "PyTorch ATen", "ATen elementwise: {aten_op}"),
    R("aten-copy", r"elementwise_kernel\w*<.*?(?:direct_copy|copy_kernel|copy_device_to_device)", "copy", "PyTorch ATen", "ATen elementwise: {aten_op}"),
    R("aten-elementwise", r"(?:^|\s|::)(?:vectorized_|unrolled_)?elementwise_kernel\w*<.*?(?:at::|c10::)", "elementwise", "PyTorch ATen", "ATen elementwise: {aten_op}"),
    R("aten-transpose", r"\bat::(?:native::)?<NS>(?P<k>\w*transpose\w*?)(?:_kernel)?(?:<|\()", "copy", "PyTorch ATen", "ATen {k}"),
    # ---- CUB
    R("cub-reduce", r"\b(?:cub|at_cuda_detail)::<NS>(?P<k>Device(?:Segmented)?Reduce\w*?)(?:Kernel)?(?:<|\()", "reduction", "CUB", "CUB {k}"),
    R("cub", r"\b(?:cub|at_cuda_detail)::<NS>(?P<k>Device\w*?)(?:Kernel)?(?:<|\()", "scan_sort", "CUB", "CUB {k}"),
    # ---- TorchInductor / Triton
    R("triton-poi", r"^triton_poi_(?P<k>\w+)$", "elementwise", "Triton", "Triton pointwise {k}"),
    R("triton-reduction", r"^triton_(?P<kind>per|red)_(?P<k>\w+)$", "reduction", "Triton", "Triton {kind} {k}"),
    # ---- everything else that names what it does
    R("sampling", r"(?<!up)(?<!down)sampl(?:e|ing)|top_?k_?top_?p|top_?p_?renorm|multinomial|penalt", "sampling", None, None),
    R("quantize", r"quant|fp8_cast|cvt_\w*fp4|fp4_\w*cvt", "quantize", None, None),
    R("softmax", r"softmax", "softmax", None, None),
    R("reduction", r"reduce|reduction", "reduction", None, None),
    R("transpose-copy", r"transpose|memcpy|(?<![a-z])copy(?![a-z])|_copy_kernel", "copy", None, None),
    R("aten-other", r"(?:^|\s)at::(?:native::)?<NS>(?P<k>\w+)", "other", "PyTorch ATen", None),
)
# fmt: on
del R

_NS = r"(?:(?:\w+|<unnamed>|\(anonymous namespace\))::)*"

# derived fields a label may use besides the pattern's groups
DERIVED_FIELDS = {
    "base": "the kernel's base name (namespaces, parameters and long template arguments dropped)",
    "tile": "the largest cute::C<> or GemmShape<> triple of the name as AxBxC (the CTA tile shape), if any",
    "aten_op": "the functor or op an ATen elementwise kernel applies (direct_copy, CUDAFunctorOnSelf_add<int>)",
    "lib": "the row's library as a label prefix",
}


def _compile_row(row: FamilyRow) -> re.Pattern:
    return re.compile(row.pattern.replace("<NS>", _NS), re.IGNORECASE)


@functools.lru_cache(maxsize=None)
def _row_pattern(i: int) -> re.Pattern:
    """Row ``i``'s compiled pattern, compiled on first use (a row no name reaches is never compiled)."""
    return _compile_row(FAMILY_TABLE[i])


@functools.lru_cache(maxsize=None)
def _row_literals() -> tuple[tuple[tuple[str, ...], ...] | None, ...]:
    """Per row, what every name it matches contains (:func:`ridgeline.analyzer.kernels.regex_literals.required_literals`; None: always search):
    the substring test that skips most rows' regex for a name (:mod:`ridgeline.analyzer.kernels.regex_literals`).

    Read from the generated :mod:`ridgeline.analyzer.kernels.family_literals` (deriving them parses every
    pattern: ~6 ms of a short run) where its copy of the row's pattern is the row's pattern, else
    derived here: a stale file is never wrong, only slower."""
    from ridgeline.analyzer.kernels.family_literals import ROW_LITERALS

    out = []
    for row in FAMILY_TABLE:
        stored = ROW_LITERALS.get(row.id)
        out.append(stored[1] if stored is not None and stored[0] == row.pattern else _derive_literals(row))
    return tuple(out)


def _derive_literals(row: FamilyRow) -> tuple[tuple[str, ...], ...] | None:
    from ridgeline.analyzer.kernels.regex_literals import required_literals

    return required_literals(row.pattern.replace("<NS>", _NS), re.IGNORECASE)


def family_literals_module() -> str:
    """The text of ``ridgeline/analyzer/kernels/family_literals.py`` (``python scripts/gen_families_doc.py``)."""
    lines = ['"""Generated by scripts/gen_families_doc.py from analyzer/families.FAMILY_TABLE: do not edit.',
             "",
             "Row id -> (its pattern, what every name it matches contains: regex_literals.required_literals).",
             'A row whose pattern differs from the one here derives its literals at run time."""',
             "",
             "ROW_LITERALS = {"]
    for row in FAMILY_TABLE:
        lines.append(f"    {row.id!r}: ({row.pattern!r}, {_derive_literals(row)!r}),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _first_match(name: str, *, prefilter: bool = True):
    """(row, match) of the first row of the table whose pattern matches ``name``, else None."""
    from ridgeline.analyzer.kernels.regex_literals import meets

    low = name.lower() if prefilter and name.isascii() else None
    literals = _row_literals() if low is not None else ()
    for i, row in enumerate(FAMILY_TABLE):
        if low is not None and not meets(low, literals[i]):
            continue
        m = _row_pattern(i).search(name)
        if m is not None:
            return row, m
    return None


@functools.lru_cache(maxsize=None)
def family_patterns(family: str) -> tuple[re.Pattern, ...]:
    """The compiled patterns of one family's rows: a name none of them matches is not of that
    family (whatever row comes first), without compiling or searching the whole table."""
    return tuple(_compile_row(row) for row in FAMILY_TABLE if row.family == family)


# ------------------------------------------------------------------ name helpers
def _strip_void(name: str) -> str:
    name = name.strip()
    return name[5:] if name.startswith("void ") else name


def _split_top(name: str) -> tuple[str, str]:
    """``(function path, template arguments)`` of a demangled name; return type and parameters
    dropped (:func:`ridgeline.names.parse`: ``enable_if<...>::type kernel<...>`` is ``kernel``)."""
    from ridgeline.names import parse

    p = parse(name)
    path = f"{p.namespace}::{p.function}" if p.namespace else p.function
    return path, p.template_args or ""


def _last_component(path: str) -> str:
    return path.rsplit("::", 1)[-1].strip()


_WRAPPERS = {"device_kernel", "Kernel", "Kernel2", "kernel", "enable_sm90_or_later", "enable_sm80_to_sm89"}
_IDENT = re.compile(r"[A-Za-z_]\w*")


def base_name(name: str) -> str:
    """A short, readable name: ``void at::foo<4, Bar>(int)`` -> ``foo<4, Bar>``; wrappers opened.

    ``cutlass::device_kernel<ns::Thing<...>>`` becomes ``device_kernel<Thing>`` so a bare
    ``device_kernel`` is never a name.
    """
    path, targs = _split_top(name)
    if not _last_component(path):  # no function name before the first '<' or '(': the name as it is
        return _strip_void(name)[:LABEL_MAX]
    base = _last_component(path)
    if base not in _WRAPPERS:
        base = re.sub(r"(?<=\w)_?[kK]ernel$", "", base) or base
    if base in _WRAPPERS and targs:
        inner = _IDENT.findall(targs.split("<", 1)[0])
        first = inner[-1] if inner else "?"
        if first in _WRAPPERS:  # enable_sm90_or_later<flash::X<...>>
            rest = targs.split("<", 1)[1] if "<" in targs else ""
            words = _IDENT.findall(rest.split("<", 1)[0])
            first = words[-1] if words else first
        return f"{base}<{first}>"
    if targs and len(targs) <= 24 and "::" not in targs and "(" not in targs:
        return f"{base}<{targs}>"
    return base


_TILE_TRIPLE = re.compile(r"cute::tuple<cute::C<(\d+)>, cute::C<(\d+)>, cute::C<(\d+)>\s*>|GemmShape<(\d+), (\d+), (\d+)>")


def _tile(name: str) -> str | None:
    best = None
    for m in _TILE_TRIPLE.finditer(name):
        dims = tuple(int(x) for x in m.groups() if x is not None)
        if best is None or dims[0] * dims[1] * dims[2] > best[0] * best[1] * best[2]:
            best = dims
    if best is None or best[0] * best[1] * best[2] <= 1:
        return None
    return "x".join(str(d) for d in best)


_ATEN_WRAPPERS = {"AUnaryFunctor", "BUnaryFunctor", "BinaryFunctor", "func_wrapper_t", "gpu_kernel_impl",
                  "gpu_kernel_impl_nocast", "OpaqueType", "TensorIteratorBase", "TrivialOffsetCalculator",
                  "LoadWithCast", "StoreWithCast", "LoadWithoutCast", "StoreWithoutCast", "OffsetCalculator"}
_ATEN_OP_PATTERNS = (
    re.compile(r"(\w+?)_kernel_cuda\b"),
    re.compile(r"(\w*Functor\w*(?:<[\w ]+>)?)"),
    re.compile(r"(\w+?)_cuda_out\b"),
    re.compile(r"(\w+?(?:KernelImpl|_kernel_impl|_kernel))\b"),
)


def _aten_op(name: str) -> str | None:
    _, targs = _split_top(name)
    text = targs or name
    for pat in _ATEN_OP_PATTERNS:
        for m in pat.finditer(text):
            op = m.group(1)
            if op.split("<", 1)[0] not in _ATEN_WRAPPERS and not op.startswith("gpu_kernel"):
                return op
    return None


_TRITON_BARE = re.compile(r"^(?:triton_\w+|\w+_triton)$")


def _namespace_library(name: str) -> str | None:
    """The library a name's leading namespace says (``vllm::`` -> vLLM), or Triton for bare
    ``triton_*`` / ``*_triton`` names; None when neither tells."""
    if _TRITON_BARE.match(name.strip()):
        return "Triton"
    path, _ = _split_top(name)
    first = path.split("::", 1)[0] if "::" in path else ""
    return NAMESPACE_LIBRARIES.get(first)


# ------------------------------------------------------------------ labels
_OPTIONAL = re.compile(r"\[([^\[\]]*)\]")
_FIELD = re.compile(r"\{(\w+)(?:\|(\w+))?\}")


class _Missing(Exception):
    pass


def _render(template: str, fields: dict[str, str | None]) -> str:
    def field(m: re.Match) -> str:
        value = fields.get(m.group(1))
        if not value:
            raise _Missing(m.group(1))
        f = m.group(2)
        if f == "hide":
            return ""
        if f == "lower":
            return value.lower()
        if f == "words":
            return value.replace("_", " ").strip()
        return value

    def optional(m: re.Match) -> str:
        try:
            return _FIELD.sub(field, m.group(1))
        except _Missing:
            return ""

    text = _OPTIONAL.sub(optional, template)
    try:
        text = _FIELD.sub(field, text)
    except _Missing as e:
        raise ValueError(f"label template {template!r} needs field {e} that did not match") from None
    return " ".join(text.split())


def shorten(label: str, limit: int = LABEL_MAX) -> str:
    """Cut a long label in the middle, keeping its start and its distinguishing tail."""
    if len(label) <= limit:
        return label
    tail = max(8, limit // 4)
    return label[: limit - tail - 1].rstrip() + "…" + label[-tail:]


def _prefix(library: str | None) -> str:
    return LABEL_PREFIX.get(library, library) if library else ""


def _default_label(library: str | None, name: str) -> str:
    base = base_name(name)
    if base.startswith("device_kernel<") and library:
        base = base[len("device_kernel<") : -1]
    p = _prefix(library)
    label = f"{p} {base}".strip() if p and not base.lower().startswith(p.lower()) else base
    if len(label) > LABEL_MAX and "<" in label:  # drop template arguments before cutting the name
        label = label.split("<", 1)[0]
    return label


# ------------------------------------------------------------------ API
@functools.lru_cache(maxsize=4096)
def classify_name(name: str) -> KernelKind:
    """Family, library and label of one full kernel name (first matching row of :data:`FAMILY_TABLE`)."""
    kind = _classify(name)
    return kind if len(kind.label) <= LABEL_MAX else KernelKind(kind.family, kind.library, shorten(kind.label),
                                                               kind.row)


def full_label(name: str) -> str:
    """The display label of ``name`` before it is cut to :data:`LABEL_MAX` characters: what a page
    with room (the HTML report's tables) shows where the label was cut."""
    return _classify(name).label


@functools.lru_cache(maxsize=4096)
def _classify(name: str) -> KernelKind:
    """:func:`classify_name` with the label at its full length."""
    if not name or not name.strip():
        return KernelKind("other", None, "(no name)", "fallback")
    hit = _first_match(name)
    if hit is not None:
        row, m = hit
        library = row.library or _namespace_library(name)
        if row.label is None:
            label = _default_label(library, name)
        else:
            fields: dict[str, str | None] = {k: v for k, v in m.groupdict().items()}
            fields["lib"] = _prefix(library) or None
            if "{base" in row.label and not fields.get("base"):
                fields["base"] = base_name(name)
            if "{tile" in row.label and not fields.get("tile"):
                fields["tile"] = _tile(name)
            if "{aten_op" in row.label and not fields.get("aten_op"):
                fields["aten_op"] = _aten_op(name) or base_name(name)
            if fields["lib"] is None and "{lib}" in row.label:
                fields["lib"] = "?"
            try:
                label = _render(row.label, fields)
            except ValueError:  # a template field this name did not fill: never fail on a name
                label = _default_label(library, name)
        return KernelKind(row.family, library, label, row.id)
    library = _namespace_library(name)
    return KernelKind("other", library, _default_label(library, name), "fallback")


def family_columns(df, *, name_column: str = "kernel_name", fallback_column: str = "short_name", unique_labels: bool = True):
    """``df`` (a polars DataFrame or LazyFrame) with ``kernel_family``, ``kernel_library`` and
    ``kernel_label`` added (or replaced); a LazyFrame stays lazy once its distinct names are read.

    Each distinct name is classified once and mapped back (a hash lookup, no Python per launch).
    The name is ``name_column``, or ``fallback_column`` where that is null; a null name gives
    null columns. With ``unique_labels``, distinct names that share a label within ``df`` get the
    part of the name that tells them apart (:func:`ridgeline.names.distinct_labels`: the tile or
    template arguments that differ, ``cuBLAS gemvx <7>`` / ``<6>``), so grouping by label never
    merges different kernels and no two kernels of one result are displayed alike.
    """
    import polars as pl

    lazy = isinstance(df, pl.LazyFrame)
    cols = df.collect_schema().names() if lazy else df.columns
    key = pl.col(name_column) if name_column in cols else pl.lit(None, dtype=pl.String)
    if fallback_column in cols:
        key = pl.coalesce(key, pl.col(fallback_column))
    distinct = df.select(key.alias("_n")).unique()
    if lazy:
        distinct = distinct.collect()
    names = sorted(n for n in distinct["_n"].to_list() if n is not None)
    kinds = [classify_name(n) for n in names]
    labels = [k.label for k in kinds]
    if unique_labels:
        from ridgeline.names import distinct_labels

        labels = distinct_labels(labels, names, LABEL_MAX)
    s = pl.String
    return df.with_columns(
        key.replace_strict(names, [k.family for k in kinds], default=None, return_dtype=s).alias("kernel_family"),
        key.replace_strict(names, [k.library for k in kinds], default=None, return_dtype=s).alias("kernel_library"),
        key.replace_strict(names, labels, default=None, return_dtype=s).alias("kernel_label"),
    )


def is_weight_gemm(family: str | None) -> bool:
    """True for weight GEMMs (dense and grouped/MoE): RL101's decode-GEMM advice applies."""
    return family in WEIGHT_GEMM_FAMILIES


def reads_kv_cache(family: str | None) -> bool:
    """True for kernels that read the KV cache: RL102's attention/KV advice applies."""
    return family in KV_CACHE_FAMILIES


def is_gemm(family: str | None) -> bool:
    """True where GEMM implementation advice (tile/autotuning) can apply."""
    return family in GEMM_FAMILIES


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def families_markdown() -> str:
    """The kernel-family reference page (``docs/kernel-families.md``), generated from the table."""
    out = [
        "# Kernel families",
        "",
        "<!-- generated by scripts/gen_families_doc.py from ridgeline/analyzer/kernels/families.py: do not edit -->",
        "",
        f"Table version {FAMILY_TABLE_VERSION}, {len(FAMILY_TABLE)} rows.",
        "",
        "ridgeline decides what a kernel is from its **full demangled name** as ncu prints it",
        "(template arguments and parameter list included), against the ordered table below: the",
        "first row whose pattern matches (case-insensitive) wins; a name no row matches is `other`.",
        "Each launch gets `kernel_family`, `kernel_library` (null when unknown) and `kernel_label`",
        f"(a display label of at most {LABEL_MAX} characters naming the family and what distinguishes",
        "the kernel). Two different names that share a label in one input get the part of the name",
        "that tells them apart (the function where the label hid it, else the template arguments",
        "that differ, else the parameters, else the namespace: `cuBLAS gemvx <7>` and `<6>`); only",
        "names that differ in spelling alone get ` #2`. See docs/names.md.",
        "",
        "## Families",
        "",
        "| family | what it holds | rules |",
        "|---|---|---|",
    ]
    for fam, text in FAMILIES.items():
        notes = []
        if fam in WEIGHT_GEMM_FAMILIES:
            notes.append("weight GEMM (RL101)")
        if fam in KV_CACHE_FAMILIES:
            notes.append("reads the KV cache (RL102)")
        if fam in GEMM_FAMILIES:
            notes.append("GEMM tuning advice")
        out.append(f"| `{fam}` | {_md(text)} | {', '.join(notes)} |")
    out += [
        "",
        "## Libraries",
        "",
        "A row names its library; a row that does not takes it from the name's leading namespace",
        "(" + ", ".join(f"`{k}::` {v}" for k, v in NAMESPACE_LIBRARIES.items()) + "); otherwise it",
        "is null. Triton kernels have bare names in ncu (no template arguments, no parameters), as",
        "`extern \"C\"` CUDA kernels do, so a bare name alone is not proof: a name is Triton when it",
        "starts with `triton_` (TorchInductor), ends with `_triton`, or a row names a known Triton",
        "kernel.",
        "",
        "| library | recognised by |",
        "|---|---|",
    ]
    out += [f"| {lib} | {_md(text)} |" for lib, text in LIBRARIES.items()]
    out += [
        "",
        "## Labels",
        "",
        "A label template uses the pattern's named groups and derived fields; `{x|words}` turns `_`",
        "into spaces, `{x|lower}` lowers, `{x|hide}` prints nothing but needs `x`; a `[...]` part is",
        "dropped when a field in it did not match. A row without a template gets",
        "`<library> <base name>`. Derived fields:",
        "",
    ]
    out += [f"- `{k}`: {v}" for k, v in DERIVED_FIELDS.items()]
    out += [
        "",
        "In patterns `<NS>` stands for any run of namespaces, anonymous ones included.",
        "",
        "## The table (first match wins)",
        "",
        "| # | row | family | library | label | pattern |",
        "|---|---|---|---|---|---|",
    ]
    for i, row in enumerate(FAMILY_TABLE, 1):
        label = f"`{_md(row.label)}`" if row.label else "(default)"
        lib = row.library or "(namespace)"
        out.append(f"| {i} | `{row.id}` | `{row.family}` | {lib} | {label} | `{_md(row.pattern)}` |")
    out += [
        "",
        "To add a kernel: add or extend a row (specific rows before generic ones), add a case that",
        "names the row to `tests/analyzer/kernels/test_families.py`, bump `FAMILY_TABLE_VERSION`, and run",
        "`python scripts/gen_families_doc.py`.",
        "",
    ]
    return "\n".join(out)
