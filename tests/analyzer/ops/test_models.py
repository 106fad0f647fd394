"""GEMM models from recorded shapes, FLOPs and bytes computed by hand; docs/op-models.md lists each model."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ridgeline.analyzer.ops.models import GEMM_MODELS, with_models

# (op, Input Dims, Input type, kernel) -> (flops, bytes, precision), by hand
CASES = [
    ("aten::mm", "[[64,4096],[4096,100]]", '["float","float"]', "ampere_sgemm_128x64_nn",
     2 * 64 * 100 * 4096, 4 * (64 * 4096 + 4096 * 100 + 64 * 100), "fp32"),
    ("aten::mm", "[[64,4096],[4096,100]]", '["float","float"]', "cutlass_80_tensorop_s1688gemm_64x64",
     2 * 64 * 100 * 4096, 4 * (64 * 4096 + 4096 * 100 + 64 * 100), "tf32_tensor"),
    ("aten::addmm", "[[128],[888,2880],[2880,128],[],[]]", '["c10::BFloat16","c10::BFloat16","c10::BFloat16","Scalar","Scalar"]',
     "nvjet", 654_704_640, 6_079_744, "fp16_tensor"),  # B200 vLLM sample: 2*888*128*2880; 2*(128+888*2880+2880*128+888*128)
    ("aten::bmm", "[[8,128,64],[8,64,256]]", '["float","float"]', "k",
     2 * 8 * 128 * 256 * 64, 4 * (8 * 128 * 64 + 8 * 64 * 256 + 8 * 128 * 256), "fp32"),
    ("aten::baddbmm", "[[8,128,256],[8,128,64],[8,64,256],[],[]]", '["c10::Half","c10::Half","c10::Half","Scalar","Scalar"]',
     "k", 2 * 8 * 128 * 256 * 64, 2 * (8 * 128 * 256 + 8 * 128 * 64 + 8 * 64 * 256 + 8 * 128 * 256), "fp16_tensor"),
    ("aten::linear", "[[4,32,1024],[512,1024],[512]]", '["c10::BFloat16","c10::BFloat16","c10::BFloat16"]', "k",
     2 * 128 * 512 * 1024, 2 * (128 * 1024 + 512 * 1024 + 512 + 128 * 512), "fp16_tensor"),
    ("aten::matmul", "[[4,32,1024],[1024,512]]", '["float","float"]', "k",
     2 * 128 * 512 * 1024, 4 * (128 * 1024 + 1024 * 512 + 128 * 512), "fp32"),
    ("aten::matmul", "[[2,3,32,64],[2,3,64,16]]", '["float","float"]', "k",
     2 * 6 * 32 * 16 * 64, 4 * (6 * 32 * 64 + 6 * 64 * 16 + 6 * 32 * 16), "fp32"),
    ("aten::matmul", "[[64],[64]]", '["float","float"]', "k", None, None, None),  # a dot product: no GEMM model
    ("aten::mm", None, None, "k", None, None, None),  # shapes not recorded
    ("aten::mm", "[[64,4096],[4096,100]]", '["c10::ComplexFloat","c10::ComplexFloat"]', "k", None, None, None),
    ("aten::relu", "[[64,4096]]", '["float"]', "k", None, None, None),
]


def _calls(cases):
    return pl.DataFrame({"op": [c[0] for c in cases], "op_input_dims": [c[1] for c in cases],
                         "op_input_types": [c[2] for c in cases], "kernel": [c[3] for c in cases]},
                        schema={"op": pl.String, "op_input_dims": pl.String, "op_input_types": pl.String, "kernel": pl.String})


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}{c[1]}" for c in CASES])
def test_gemm_flops_and_bytes_by_hand(case):
    got = with_models(_calls([case])).row(0, named=True)
    op, _d, _t, _k, flops, nbytes, precision = case
    assert (got["flops"], got["bytes"], got["precision"]) == (flops, nbytes, precision)
    assert got["model"] == (op if flops is not None else None)


def test_every_model_is_documented():
    page = (Path(__file__).resolve().parents[3] / "docs" / "op-models.md").read_text()
    for m in GEMM_MODELS:
        assert f"`{m.op}`" in page and m.flops in page


@pytest.mark.parametrize("dims,types", [
    ("[[1.5,2],[2,3]]", '["float","float"]'),  # not whole numbers
    ("[[4,8],[8,2]]", "5"),  # Input type not a list
    ('[["a"],{"b":1}]', '[["float"],null]'),
    ("[[4611686018427387904,4],[4,4611686018427387904]]", '["float","float"]'),  # products past int64
    ("[[0,8],[8,2]]", '["float","float"]'),  # an empty matrix: 0 FLOPs, no model
    ("", ""), ("[", "["),
])
def test_damaged_shapes_give_no_model_and_no_error(dims, types):
    got = with_models(_calls([("aten::mm", dims, types, "k")])).row(0, named=True)
    assert got["model"] is None and got["flops"] is None
