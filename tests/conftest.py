"""Shared pytest options, and the test helpers' folder on ``sys.path``.

``pytest --update-goldens`` rewrites ``fixtures/scenarios/*/expected.json`` from the current
rules instead of comparing against it (use it when a change of findings is intended, then read
the diff before committing).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# tests/ mirrors the package (tests/parsers/, tests/analyzer/, ...); the shared helpers
# (ridge_inputs, rule_cases, telemetry_cases, _render_sample, ...) live at tests/ and are
# imported by plain name from every folder
TESTS = Path(__file__).resolve().parent
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))


def pytest_addoption(parser):
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="rewrite fixtures/scenarios/*/expected.json from the current analysis instead of comparing",
    )


@pytest.fixture
def update_goldens(request) -> bool:
    return bool(request.config.getoption("--update-goldens"))
