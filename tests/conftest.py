"""Shared pytest options, and the test helpers' folder on ``sys.path``.

``pytest --update-goldens`` rewrites ``fixtures/scenarios/*/expected.json`` from the current
rules instead of comparing against it (use it when a change of findings is intended, then read
the diff before committing).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The tests start Python processes of their own (the CLI end to end, the pytest-xdist
# workers); with PYTHONDONTWRITEBYTECODE set, as some machines set it, each compiled every module
# it imports from source again (~0.3 s a process). The test session keeps bytecode instead
# (__pycache__ folders, ignored by git); the variable is dropped before any worker starts.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

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


# ---- running on several workers (pytest-xdist; setup.cfg: -n auto --dist loadgroup) -------------
#
# Two habits keep the parallel run as short as the work allows:
# * a test that uses a module- or session-scoped fixture of its own module (a real Prometheus, a
#   browser, a synthetic fleet, a sweep over the samples) runs on the worker its module's other
#   such tests run on, so the fixture is built once per run, not once per worker;
# * tests marked ``early`` start first: a long test started last leaves the other workers idle.
_SHARED_SCOPES = ("module", "package", "session")


def pytest_configure(config):
    config.addinivalue_line("markers", "early: start this test first (it is long; see tests/conftest.py)")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("xdist_group"):
            continue
        module = getattr(item, "module", None)
        fixtures = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        own = [d for defs in fixtures.values() for d in defs
               if d.scope in _SHARED_SCOPES and module is not None
               and getattr(d.func, "__module__", None) == module.__name__]
        if own:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))
    items.sort(key=lambda item: 0 if item.get_closest_marker("early") else 1)  # stable: the rest keep their order
