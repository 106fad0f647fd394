"""RL410 exposed-communication on hand-built per-device rows (the analysis that fills them is
tested in tests/analyzer/timeline/test_comm.py): a firing and a quiet case, numbers computed by hand."""

from __future__ import annotations

import polars as pl

from ridgeline.analyzer.schema import TIMELINE_DEVICE_COLUMNS, polars_schema
from ridgeline.analyzer.timeline.busy import TimelineAnalysis
from ridgeline.rules.base import Context
from ridgeline.rules.engine import get_rule


def ctx(**row) -> Context:
    base = {"source": "trace.json", "device": 0, "capture_s": 1.0, "kernel_busy_s": 0.8, "busy_s": 0.8}
    devices = pl.DataFrame([{**base, **row}], schema=polars_schema(TIMELINE_DEVICE_COLUMNS))
    return Context(timeline=TimelineAnalysis(devices=devices, kernel_shares=None, bins=None))


def test_rl410_exposed_communication_fires():
    (f,) = get_rule("RL410")().check(ctx(comm_kernels=10, comm_busy_s=0.4, comm_exposed_s=0.3, compute_busy_s=0.5,
                                       comm_overlap_share=0.25, rank=3))
    assert f.subject == "gpu:0 communication"
    # 0.3 s of a 1 s capture = 30%; communication 0.4 of 0.8 s kernel time = 50%
    assert f.message == ("rank 3: communication exposed 30% of the 1 s capture (>= 10%): 300 ms of 400 ms "
                         "communication (10 NCCL/collective kernels) ran with no compute kernel beside it "
                         "(overlap 25%); communication is 50% of kernel time")
    assert f.impact_s == 0.3 and f.impact_share == 0.3


def test_rl410_exposed_communication_quiet():
    rule = get_rule("RL410")()
    assert rule.check(ctx(comm_kernels=10, comm_busy_s=0.4, comm_exposed_s=0.099, comm_overlap_share=0.75)) == []
    assert rule.check(ctx(comm_kernels=0, comm_busy_s=0.0, comm_exposed_s=0.0)) == []
    assert rule.check(ctx()) == []  # rows without the communication columns filled (older documents)


def test_rl410_remedy_in_the_programs_terms():
    rule = get_rule("RL410")()
    row = dict(comm_kernels=4, comm_busy_s=0.4, comm_exposed_s=0.3)
    (torch,) = rule.check(ctx(framework="pytorch", **row))
    (other,) = rule.check(ctx(**row))
    assert "bucket_cap_mb" in torch.remedy and "FSDP" in torch.remedy
    assert "bucket_cap_mb" not in other.remedy and "own stream" in other.remedy
