"""RL411 straggler-rank on hand-built per-rank rows (the generated 4-rank job end to end is in
tests/analyzer/timeline/test_comm.py): a firing and a quiet case, numbers computed by hand."""

from __future__ import annotations

import polars as pl
import pytest

from ridgeline.analyzer.schema import TIMELINE_DEVICE_COLUMNS, polars_schema
from ridgeline.analyzer.timeline.busy import TimelineAnalysis
from ridgeline.rules.base import Context
from ridgeline.rules.engine import get_rule


def ctx(compute, exposed, rank_from="trace", world=None) -> Context:
    rows = [{"source": f"rank{r}.json", "device": 0, "capture_s": 2.0, "rank": r, "rank_from": rank_from,
             "compute_busy_s": c, "comm_busy_s": e + 0.1, "comm_exposed_s": e, "world_size": world}
            for r, (c, e) in enumerate(zip(compute, exposed))]
    devices = pl.DataFrame(rows, schema=polars_schema(TIMELINE_DEVICE_COLUMNS))
    return Context(timeline=TimelineAnalysis(devices=devices, kernel_shares=None, bins=None))


def test_rl411_straggler_rank_fires():
    # rank 1 computes 1.5 s, the others' median 1.0 s: excess 0.5 s (50%); they wait 0.4 s (median of
    # 0.3, 0.4, 0.5) >= 0.5 x 0.5 s and more than rank 1's own 0.05 s
    (f,) = get_rule("RL411")().check(ctx([1.0, 1.5, 0.9, 1.1], [0.4, 0.05, 0.5, 0.3]))
    assert f.subject == "rank 1 (rank1.json gpu:0)"
    assert f.message == ("rank 1 computes 1.5 s, 1.50x the other 3 rank(s)' median 1 s, while they wait 400 ms "
                         "(median) exposed in collectives (rank 1: 50 ms)")
    assert f.impact_s == pytest.approx(0.4)  # min(0.5 s excess, 0.4 s waited)
    assert f.impact_share == pytest.approx(0.2)  # of rank 1's 2 s capture


def test_rl411_straggler_rank_quiet():
    rule = get_rule("RL411")()
    assert rule.check(ctx([1.0, 1.09, 1.0], [0.4, 0.05, 0.5])) == []  # 9% over the median: under 10%
    assert rule.check(ctx([1.0, 1.5, 1.0], [0.2, 0.05, 0.2])) == []  # others waited 0.2 s < 0.5 x 0.5 s
    assert rule.check(ctx([1.0, 1.5, 1.0], [0.4, 0.45, 0.4])) == []  # the slow rank waits as long: not a straggler
    assert rule.check(ctx([1.5], [0.0])) == []  # one rank is no job


def test_rl411_needs_the_ranks_it_compares():
    """Issue 32 item 5: two ranks are too few for a verdict (min_ranks 3: the others' median is of
    two ranks or more); the threshold is data."""
    rule = get_rule("RL411")
    assert rule().check(ctx([1.0, 3.0], [2.5, 0.5])) == []  # rank 1 of two "3x the other's median": no verdict
    assert rule({"min_ranks": 2}).check(ctx([1.0, 3.0], [2.5, 0.5]))  # allowed by a lower threshold
    assert rule().check(ctx([1.0, 3.0, 1.0], [2.5, 0.5, 2.5]))


def test_rl411_says_how_many_of_the_jobs_ranks_were_captured():
    (f,) = get_rule("RL411")().check(ctx([1.0, 1.5, 0.9, 1.1], [0.4, 0.05, 0.5, 0.3], world=128))
    assert f.message.endswith("; 4 of 128 ranks captured: a rank not captured may be slower")
    assert {e.metric: e.value for e in f.evidence}["world_size"] == 128
    (f,) = get_rule("RL411")().check(ctx([1.0, 1.5, 0.9, 1.1], [0.4, 0.05, 0.5, 0.3], world=4))
    assert "captured" not in f.message  # every rank of the job is here
