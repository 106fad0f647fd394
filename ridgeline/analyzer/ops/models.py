"""FLOPs and bytes of a PyTorch op from its recorded shapes (``Input Dims``, ``Input type``):
the models as data (:data:`GEMM_MODELS`), evaluated as polars expressions over the op-call table
(:func:`ridgeline.analyzer.ops.attribute.op_calls`), never per row in Python.

Bytes are each operand read once and the output written once: a **lower bound** on DRAM
traffic (re-reads of tiles that do not stay in cache, split-K workspaces and the like add to it).
Every model, its formula and its source: docs/op-models.md (a test holds the page to this table).
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class GemmModel:
    op: str  # the leaf op's name as PyTorch records it
    layout: str  # how M, N, K (and the batch) are read from the shapes: see _mnk
    a: int  # argument index of the left operand in Input Dims
    b: int  # of the right operand
    c: int | None  # of the added input (bias / C), read once; None: none
    flops: str  # the formula, as written in docs/op-models.md
    source: str


_SRC = "PyTorch aten/src/ATen/native/native_functions.yaml (argument order); 2 FLOPs per multiply-add"
GEMM_MODELS = (
    GemmModel("aten::mm", "mk,kn", 0, 1, None, "2·M·N·K", _SRC),
    GemmModel("aten::addmm", "mk,kn", 1, 2, 0, "2·M·N·K", _SRC),
    GemmModel("aten::bmm", "bmk,bkn", 0, 1, None, "2·B·M·N·K", _SRC),
    GemmModel("aten::baddbmm", "bmk,bkn", 1, 2, 0, "2·B·M·N·K", _SRC),
    GemmModel("aten::linear", "linear", 0, 1, 2, "2·M·N·K, M = product of the input's leading dims", _SRC),
    GemmModel("aten::matmul", "matmul", 0, 1, None, "2·M·N·K (2-D right operand) or 2·B·M·N·K (batched)", _SRC),
)

#: ``Input type`` -> (bytes per element, the precision key of the roof a GEMM of that type runs on;
#: ridgeline.analyzer.kernels.gpus.PRECISIONS). fp32 GEMMs: see :data:`TF32_KERNEL_RE`.
DTYPES = {
    "double": (8, "fp64"), "float": (4, "fp32"), "c10::Half": (2, "fp16_tensor"), "c10::BFloat16": (2, "fp16_tensor"),
    "c10::Float8_e4m3fn": (1, "fp8_tensor"), "c10::Float8_e5m2": (1, "fp8_tensor"),
    "c10::Float8_e4m3fnuz": (1, "fp8_tensor"), "c10::Float8_e5m2fnuz": (1, "fp8_tensor"),
    "signed char": (1, "int8_tensor"), "char": (1, "int8_tensor"),
}
#: an fp32 GEMM whose kernel is a TF32 tensor-core one (cuBLAS ``*tf32*``, CUTLASS ``tensorop_s1688``,
#: ``tensorop_s16816``-style names on Ampere+) runs on the TF32 roof, else on the FP32 (CUDA-core) one
TF32_KERNEL_RE = r"(?i)tf32|tensorop_s16"


def _arg(i: int):
    """The shape of argument ``i`` (a list of ints; null where absent or not a plain tensor shape)."""
    import polars as pl

    return (pl.col("op_input_dims").str.extract_all(r"\[[0-9, ]*\]").list.get(i, null_on_oob=True)
            .str.strip_chars("[]").str.split(",").cast(pl.List(pl.Int64), strict=False))


def _prod(x):
    import polars as pl

    return x.list.eval(pl.element().product()).list.first()


def _mnk(m: GemmModel):
    """(batch, M, N, K) expressions for a model's layout."""
    import polars as pl

    a, b = _arg(m.a), _arg(m.b)
    lead = _prod(a.list.slice(0, a.list.len() - 1))
    if m.layout == "mk,kn":
        ok = (a.list.len() == 2) & (b.list.len() == 2)
        return pl.when(ok).then(1), a.list.get(0, null_on_oob=True), b.list.get(1, null_on_oob=True), a.list.get(1, null_on_oob=True)
    if m.layout == "bmk,bkn":
        ok = (a.list.len() == 3) & (b.list.len() == 3)
        return (pl.when(ok).then(a.list.get(0, null_on_oob=True)), a.list.get(1, null_on_oob=True),
                b.list.get(2, null_on_oob=True), a.list.get(2, null_on_oob=True))
    if m.layout == "linear":  # x [..., K] @ weight[N, K]^T
        ok = (a.list.len() >= 1) & (b.list.len() == 2)
        return pl.when(ok).then(1), lead, b.list.get(0, null_on_oob=True), a.list.last()
    # matmul: x [..., K] @ w [K, N] (M = the leading dims' product), or batched [.., M, K] @ [.., K, N]
    flat = (a.list.len() >= 2) & (b.list.len() == 2)
    batched = (a.list.len() >= 3) & (b.list.len() == a.list.len())
    batch = pl.when(flat).then(1).when(batched).then(_prod(a.list.slice(0, a.list.len() - 2)))
    mm = pl.when(flat).then(lead).when(batched).then(a.list.get(-2, null_on_oob=True))
    return batch, mm, b.list.last(), a.list.last()


def gemm_columns():
    """Expressions adding ``model`` (the op name whose model applied), ``flops``, ``bytes``,
    ``precision`` and ``m``, ``n``, ``k``, ``batch`` to op-call rows (null: no GEMM model)."""
    import polars as pl

    # the quoted names, read by pattern (a damaged Input type, e.g. a number, reads as none: never an error)
    types = pl.col("op_input_types").str.extract_all(r'"[^"\\]*"').list.eval(pl.element().str.strip_chars('"'))
    out = {c: None for c in ("batch", "m", "n", "k", "flops", "bytes", "dtype")}
    for m in GEMM_MODELS:
        batch, mm, n, k = _mnk(m)
        numel = _prod(_arg(m.a)) + _prod(_arg(m.b)) + batch * mm * n
        if m.c is not None:
            numel = numel + _prod(_arg(m.c)).fill_null(0)
        dtype = types.list.get(m.a, null_on_oob=True)
        size = dtype.replace_strict({k: v[0] for k, v in DTYPES.items()}, default=None, return_dtype=pl.Int64)
        vals = {"batch": batch, "m": mm, "n": n, "k": k, "flops": 2 * batch * mm * n * k, "bytes": numel * size,
                "dtype": dtype}
        hit = pl.col("op") == m.op
        for c, v in vals.items():
            out[c] = (pl.when(hit).then(v) if out[c] is None else out[c].when(hit).then(v))
    cols = [out[c].alias(c) for c in out]
    return cols


def with_models(calls):
    """Op-call rows -> the same with the model columns (:func:`gemm_columns`) and ``precision``;
    ``model`` is null where no model applied (an unknown op, shapes not recorded or not readable)."""
    import polars as pl

    is_gemm = pl.col("op").is_in([m.op for m in GEMM_MODELS]) & pl.col("op_input_dims").is_not_null()
    cand, rest = calls.filter(is_gemm), calls.filter(~is_gemm)  # the shape expressions run on GEMM rows only
    calls = pl.concat([cand.with_columns(gemm_columns()),
                       rest.with_columns(pl.lit(None, pl.Int64).alias(c) for c in ("batch", "m", "n", "k", "flops", "bytes"))
                       .with_columns(pl.lit(None, pl.String).alias("dtype"))], how="vertical_relaxed")
    prec = pl.col("dtype").replace_strict({k: v[1] for k, v in DTYPES.items()}, default=None, return_dtype=pl.String)
    prec = pl.when((prec == "fp32") & pl.col("kernel").str.contains(TF32_KERNEL_RE)).then(pl.lit("tf32_tensor")).otherwise(prec)
    got = calls.with_columns(prec.alias("precision"))
    # (shapes past int64 wrap in the products: a model whose figures are not positive is no model)
    ok = (pl.col("flops") > 0).fill_null(False) & (pl.col("bytes") > 0).fill_null(False) & pl.col("precision").is_not_null()
    return got.with_columns(pl.when(ok).then(pl.col("op")).alias("model"),
                            *(pl.when(ok).then(pl.col(c)).alias(c) for c in ("flops", "bytes", "precision")))
