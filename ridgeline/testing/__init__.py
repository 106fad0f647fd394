"""Performance tests without a GPU: assertions and expectation files over checked-in profiles.

Public surface (see docs/perf-tests.md)::

    from ridgeline.testing import analyze, assert_kernel, assert_no_findings, assert_time_share

    def test_prefill(ridgeline_analyze):            # fixture from the pytest plugin
        result = ridgeline_analyze("profiles/prefill.ncu-raw.csv")   # analyzed once per session
        assert_kernel(result, "gemm", bound="compute", min_roof_fraction=0.7, ignore_below_share=0.01)
        assert_no_findings(result, min_severity="warning", ignore=["RL107"])
        assert_time_share(result, bound="latency", at_most=0.05)   # "launch" or "stall": one kind of it

* :func:`analyze` -- an :class:`~ridgeline.result.AnalysisResult` for profile paths, memoized per
  process (the plugin's ``ridgeline_analyze`` fixture resolves paths next to the test file);
* :func:`assert_kernel`, :func:`assert_no_findings`, :func:`assert_time_share` -- assertions;
* :func:`kernel_table` -- the kernel groups they judge, one row each (a polars DataFrame);
* files named ``*.ridgeline.toml`` are expectation files (:mod:`ridgeline.testing.expectations`),
  run by ``ridgeline check`` and collected by pytest as one test item per expectation.

The pytest plugin (:mod:`ridgeline.testing.plugin`) is registered through the ``pytest11`` entry
point; it does nothing until a test uses the fixture or a ``*.ridgeline.toml`` file is collected.
Importing this package imports neither polars nor the analyzer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_CACHE: dict = {}
# the helpers load on first use (PEP 562), so the plugin's import stays a few milliseconds
_LAZY = {
    "assert_kernel": "ridgeline.testing.asserts",
    "assert_no_findings": "ridgeline.testing.asserts",
    "assert_time_share": "ridgeline.testing.asserts",
    "kernel_table": "ridgeline.testing.kernels",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ridgeline.testing' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


def analyze(*paths: str | Path, cache: dict | None = None, **options: Any):
    """Analyze profile paths (ncu exports and/or telemetry) together, as ``ridgeline analyze`` does.

    Keyword options are those of :func:`ridgeline.pipeline.analyze_paths` (``gpu``, ``select``,
    ``ignore``, ``thresholds``, ``config``...), except that no ``./ridgeline.toml`` is read unless
    named (``config="ridgeline.toml"``): a test's verdicts do not depend on the folder it runs in.
    The result is memoized per process (or in ``cache``), keyed by the resolved paths, their size
    and modification time, and the options.
    """
    from ridgeline.pipeline import analyze_paths

    options.setdefault("config", {})

    if len(paths) == 1 and isinstance(paths[0], (list, tuple)):
        paths = tuple(paths[0])
    cache = _CACHE if cache is None else cache
    stamps = []
    for p in paths:
        q = Path(p)
        st = q.stat() if q.exists() else None
        stamps.append((str(q.resolve()), st.st_size if st else None, st.st_mtime_ns if st else None))
    key = (tuple(stamps), repr(sorted(options.items(), key=lambda kv: kv[0])))
    if key not in cache:
        try:
            cache[key] = analyze_paths(list(paths), **options)
        except Exception as err:  # noqa: BLE001 - the same error again for every test that asks
            cache[key] = err
    value = cache[key]
    if isinstance(value, BaseException):
        raise value
    return value


__all__ = ["analyze", "assert_kernel", "assert_no_findings", "assert_time_share", "kernel_table"]
