"""The pytest plugin (entry point ``pytest11: ridgeline``), inactive until used.

* Fixture ``ridgeline_analyze``: a function ``(*paths, **options) -> AnalysisResult``; relative
  paths are looked up next to the requesting test file, then under pytest's rootdir; each
  distinct input is analyzed once per session. A file ridgeline cannot read fails the test
  with ridgeline's one-line error, not a traceback.
* Collection of ``*.ridgeline.toml`` expectation files: one test item per ``[[expect]]`` and one
  for ``[findings]``, named after the expectation; a failure prints the problems, nothing else.

Disable with ``-p no:ridgeline``. Importing this module imports neither polars nor the analyzer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ridgeline.errors import RidgelineError

_CACHE_KEY = pytest.StashKey[dict]()


def _cache(config) -> dict:
    cache = config.stash.get(_CACHE_KEY, None)
    if cache is None:
        cache = {}
        config.stash[_CACHE_KEY] = cache
    return cache


def _resolve(raw, here: Path, root: Path) -> Path:
    path = Path(raw)
    if path.is_absolute():
        return path
    for base in (here, root):
        if (base / path).exists():
            return (base / path).resolve()
    return (here / path).resolve()  # the error then names the place next to the test


@pytest.fixture
def ridgeline_analyze(request):
    """Analyze profile paths once per session: ``result = ridgeline_analyze("profiles/x.csv")``.

    Options are those of ``ridgeline.pipeline.analyze_paths`` (``gpu="h100-sxm"``, ``ignore=["RL9"]``...).
    """
    from ridgeline.testing import analyze

    here = Path(str(request.path)).parent
    root = Path(str(request.config.rootpath))
    cache = _cache(request.config)

    def run(*paths, **options):
        __tracebackhide__ = True
        if not paths:
            raise TypeError("ridgeline_analyze() needs at least one profile path")
        if len(paths) == 1 and isinstance(paths[0], (list, tuple)):
            paths = tuple(paths[0])
        resolved = [_resolve(p, here, root) for p in paths]
        try:
            return analyze(*resolved, cache=cache, **options)
        except RidgelineError as err:
            message = f"ridgeline: error: {err}"
        pytest.fail(message, pytrace=False)  # outside the except: no "during handling" chain

    return run


def pytest_collect_file(file_path, parent):
    if file_path.name.endswith(".ridgeline.toml"):
        return ExpectationFile.from_parent(parent, path=file_path)
    return None


class ExpectationFailed(Exception):
    """An expectation of a ``*.ridgeline.toml`` file does not hold (message: the problems)."""


class ExpectationFile(pytest.File):
    """A ``*.ridgeline.toml`` file: one item per expectation."""

    def collect(self):
        from ridgeline.testing import expectations

        spec = expectations.load(self.path)
        for name in spec.item_names():
            # "::" separates node-id parts; keep kernel names' C++ scopes out of the id
            yield ExpectationItem.from_parent(self, name=name.replace("::", "."), spec=spec, expectation=name)

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, RidgelineError):
            return f"ridgeline: error: {excinfo.value}"
        return super().repr_failure(excinfo)


class ExpectationItem(pytest.Item):
    def __init__(self, *, spec, expectation: str, **kwargs):
        super().__init__(**kwargs)
        self.spec = spec
        self.expectation = expectation

    def runtest(self):
        from ridgeline.testing import expectations

        result = expectations.analyze(self.spec, _cache(self.config))
        outcome = expectations.check_one(self.spec, self.expectation, result)
        if not outcome.passed:
            shown = ", ".join(p.name for p in self.spec.profiles)
            raise ExpectationFailed(outcome.message(f"{shown}" + (f" on {result.gpu_name}" if result.gpu_name else "")))

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ExpectationFailed):
            return str(excinfo.value)
        if isinstance(excinfo.value, RidgelineError):
            return f"ridgeline: error: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.path, None, f"{self.path.name}::{self.name}"
