"""CPU ops' recorded shapes (``Input Dims``, ``Input type``, ``Concrete Inputs``) reach HOST_API as
compact JSON text, the same from the fast and the standard reader, in both ``host_calls`` modes."""

from __future__ import annotations

import json

import pytest

from ridgeline.parsers.timeline import kineto, kineto_fast
from tests.analyzer.ops.op_traces import linear_trace


@pytest.mark.parametrize("host_calls", ["all", "sync"])
def test_shapes_are_text_columns_on_cpu_op_rows_from_both_readers(host_calls):
    doc = linear_trace()
    doc["traceEvents"][0]["args"]["Concrete Inputs"] = ["", "", "", "1", "[1, 1]"]
    data = json.dumps(doc).encode()
    fast = kineto_fast.decode_document(data, host_calls)
    assert fast is not None
    slow = kineto._kineto_frames(json.loads(data)["traceEvents"], host_calls)
    for f, s in ((fast[2], slow[1]),):
        assert f.to_dicts() == s.to_dicts()
    host = fast[2]
    row = host.filter(host["name"] == "aten::addmm").row(0, named=True)
    assert row["op_input_dims"] == "[[512],[4096,1024],[1024,512],[],[]]"
    assert json.loads(row["op_input_types"])[0] == "c10::BFloat16"
    linear = host.filter(host["name"] == "aten::linear").row(0, named=True)
    assert linear["op_concrete_inputs"] == '["","","","1","[1, 1]"]'
    runtime = host.filter(host["kind"] == "runtime")
    assert runtime["op_input_dims"].null_count() == runtime.height
