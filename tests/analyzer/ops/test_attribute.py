"""Leaf-op attribution on small SYNTHETIC traces (tests/analyzer/ops/op_traces.py)."""

from __future__ import annotations

import msgspec
import pytest

from ridgeline.analyzer.ops.attribute import op_calls, op_kernels
from ridgeline.parsers.timeline.reader import read_timeline
from tests.analyzer.ops.op_traces import linear_trace, write



# only the fields the External-id check reads (a full json.loads of the 14 MB trace costs seconds)
class _Args(msgspec.Struct):
    ext: int | None = msgspec.field(default=None, name="External id")
    correlation: int | None = None


class _Event(msgspec.Struct):
    cat: str | None = None
    name: str | None = None
    args: _Args | None = None


class _Doc(msgspec.Struct):
    traceEvents: list[_Event]  # noqa: N815


@pytest.mark.parametrize("old_ids", [False, True])
@pytest.mark.parametrize("host_calls", ["all", "sync"])
def test_kernels_belong_to_the_leaf_op_and_parents_get_none(tmp_path, host_calls, old_ids):
    tl = read_timeline(write(tmp_path, linear_trace(old_ids=old_ids)), host_calls=host_calls)
    calls = op_calls(op_kernels(tl.activities, tl.api))
    rows = {r["op"]: r for r in calls.to_dicts()}
    assert set(rows) == {"aten::addmm", "aten::bmm", None}  # aten::linear (the parent) holds no kernel
    addmm = rows["aten::addmm"]
    assert addmm["kernels"] == 2
    assert addmm["kernel_ns"] == 20_000
    assert addmm["gpu_ns"] == 15_000  # [100, 110) u [105, 115): the overlap counted once
    assert addmm["op_input_dims"] == "[[512],[4096,1024],[1024,512],[],[]]"
    assert rows["aten::bmm"]["gpu_ns"] == 4_000
    assert rows[None]["kernels"] == 1 and rows[None]["gpu_ns"] == 3_000  # the stray kernel: a row of its own
    assert calls["kernels"].sum() == tl.activities.height  # every kernel in exactly one row


def test_a_launch_at_an_ops_end_is_not_in_it(tmp_path):
    from tests.analyzer.ops.op_traces import trace

    inner = ("aten::mm", 10, 5, [[2, 3], [3, 4]], ["float", "float"], [], [(15, 30, 1, 7)])
    outer = ("aten::matmul", 5, 20, [[2, 3], [3, 4]], ["float", "float"], [inner], [])
    tl = read_timeline(write(tmp_path, trace([outer])), host_calls="sync")
    calls = op_calls(op_kernels(tl.activities, tl.api))
    assert calls["op"].to_list() == ["aten::matmul"]  # at t=15 aten::mm [10, 15) has ended


def test_the_stack_agrees_with_external_ids_on_the_b200_trace():
    """Newer Kineto builds give each kernel the ``External id`` of the op that launched it; on the
    shared B200 vLLM trace the thread-stack attribution (which older builds need) finds that same op
    for every kernel."""
    import gzip
    from pathlib import Path

    path = Path(__file__).resolve().parents[4] / "shared" / "samples" / "kineto" / "tracelens-b200x8-vllm-eager_trace.json.gz"
    if not path.exists():
        pytest.skip("shared samples absent")
    events = msgspec.json.decode(gzip.open(path).read(), type=_Doc).traceEvents
    ops = {e.args.ext: e.name for e in events if e.cat == "cpu_op"}
    want = {e.args.correlation: ops.get(e.args.ext) for e in events if e.cat == "kernel"}
    tl = read_timeline(path, host_calls="sync")
    k = op_kernels(tl.activities, tl.api)
    got = dict(zip(k["correlation_id"].to_list(), k["op"].to_list()))
    assert len(want) == 768 and sum(v is not None for v in want.values()) >= 760
    assert got == want
