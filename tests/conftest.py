"""Shared pytest options.

``pytest --update-goldens`` rewrites ``fixtures/scenarios/*/expected.json`` from the current
rules instead of comparing against it (use it when a change of findings is intended, then read
the diff before committing).
"""

from __future__ import annotations

import pytest


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
