"""RL410 exposed-communication: a firing and a quiet case, numbers computed by hand."""

from __future__ import annotations

from rule_cases import launch, run  # tests/rule_cases.py (tests/conftest.py puts tests/ on sys.path)

from ridgeline.rules.engine import get_rule


def test_rl410_exposed_communication_fires():
    rows = [
        # TODO: launches that meet the condition, e.g.
        # launch("kernel_name", duration_s=1e-3, flops=8e9, dram_bytes=1e9),
    ]
    (f,) = run(get_rule("RL410"), rows)
    assert f.code == "RL410"
    assert f.message == "TODO: the exact message, numbers computed by hand"


def test_rl410_exposed_communication_quiet():
    rows = [
        # TODO: launches just on the other side of each threshold
    ]
    assert rows, "write the quiet case"
    assert run(get_rule("RL410"), rows) == []
