"""Assertion helpers for a team's own performance tests.

Each helper raises ``AssertionError`` with a message a person can act on (the kernel, the
measured value against the expected one, the roof and where it came from) and hides its own
frames from pytest's traceback (``__tracebackhide__``), so a failure points at the test line.
"""

from __future__ import annotations

import re
from typing import Sequence

from ridgeline.errors import RidgelineError
from ridgeline.testing import checks
from ridgeline.testing.kernels import kernel_table, make_selector


def _where(result) -> str | None:
    inputs = [_short(i.path) for i in getattr(result, "inputs", []) or []]
    if not inputs:
        return None
    shown = ", ".join(inputs[:3]) + (f" (+{len(inputs) - 3} more)" if len(inputs) > 3 else "")
    gpu = f" on {result.gpu_name}" if getattr(result, "gpu_name", None) else ""
    return shown + gpu


def _short(path: str) -> str:
    """An absolute path under the working folder, shown relative to it."""
    import os

    if os.path.isabs(path):
        try:
            rel = os.path.relpath(path)
        except ValueError:  # another drive (Windows)
            return path
        if not rel.startswith(".."):
            return rel
    return path


def _range(low, high):
    return None if low is None and high is None else (low, high)


def _fail(outcome, result) -> None:
    __tracebackhide__ = True
    raise AssertionError(outcome.message(_where(result)))


def assert_kernel(result, kernels: str | re.Pattern | None = None, *, family: str | None = None,
                  kernel: str | None = None, pattern: str | None = None, exclude: str | None = None,
                  precision: str | None = None, ignore_below_share: float = 0.0,
                  bound: str | Sequence[str] | None = None,
                  min_roof_fraction: float | None = None, max_roof_fraction: float | None = None,
                  min_intensity: float | None = None, max_intensity: float | None = None,
                  min_time_share: float | None = None, max_time_share: float | None = None,
                  allow_findings: Sequence[str] | None = None, min_severity: str = "warning") -> None:
    """Every kernel group selected holds every expectation given; at least one must be selected.

    Select with ``kernels`` (a family such as ``"gemm"`` or ``"attention"``, else a regex searched
    in the kernel names, case-insensitively), or ``family=``, ``kernel=`` (an exact name) or
    ``pattern=``; narrow with ``exclude=`` (regex), ``precision=`` and ``ignore_below_share=``
    (leave out groups holding less than that share of GPU time, e.g. a 1-row LM head).

    Expect: ``bound`` (``"compute"``, ``"memory"``, ``"latency"`` (either kind), ``"launch"`` or
    ``"stall"`` (one kind of latency-bound launch), or several), fraction of the roof
    (0..1), arithmetic intensity at DRAM (FLOP/B), share of all GPU time (0..1), and
    ``allow_findings`` (rule codes or prefixes allowed on these kernels at ``min_severity`` or worse).

    >>> assert_kernel(result, "gemm", bound="compute", min_roof_fraction=0.7)   # doctest: +SKIP
    """
    __tracebackhide__ = True
    try:
        table = kernel_table(result)
        sel = make_selector(kernels, family=family, kernel=kernel, pattern=pattern, exclude=exclude,
                            precision=precision, min_share=ignore_below_share, table=table)
        outcome = checks.check_kernels(
            result, sel, bound=bound, roof_fraction=_range(min_roof_fraction, max_roof_fraction),
            intensity=_range(min_intensity, max_intensity), time_share=_range(min_time_share, max_time_share),
            findings=allow_findings, min_severity=min_severity, table=table)
    except RidgelineError as err:
        raise ValueError(str(err)) from None
    if not outcome.passed:
        _fail(outcome, result)


def assert_no_findings(result, *, min_severity: str = "warning", ignore: Sequence[str] = ()) -> None:
    """No finding at ``min_severity`` or worse, except the rule codes or prefixes in ``ignore``.

    >>> assert_no_findings(result, min_severity="warning", ignore=["RL106"])   # doctest: +SKIP
    """
    __tracebackhide__ = True
    if isinstance(ignore, str):
        ignore = [ignore]
    try:
        outcome = checks.check_findings(result, min_severity=min_severity, ignore=ignore)
    except RidgelineError as err:
        raise ValueError(str(err)) from None
    if not outcome.passed:
        _fail(outcome, result)


def assert_time_share(result, kernels: str | re.Pattern | None = None, *, bound: str | Sequence[str] | None = None,
                      at_most: float | None = None, at_least: float | None = None, family: str | None = None,
                      kernel: str | None = None, pattern: str | None = None, exclude: str | None = None,
                      precision: str | None = None) -> None:
    """The share of all GPU time spent in launches with ``bound`` (and/or in the kernels selected,
    as for :func:`assert_kernel`) is at most / at least the given fraction (0..1). ``"latency"`` is
    the whole latency class, launch-bound and stall-bound launches together; ``"launch"`` and
    ``"stall"`` select one kind.

    >>> assert_time_share(result, bound="latency", at_most=0.05)      # doctest: +SKIP
    >>> assert_time_share(result, "attention", at_most=0.3)            # doctest: +SKIP
    """
    __tracebackhide__ = True
    try:
        table = kernel_table(result)
        sel = make_selector(kernels, family=family, kernel=kernel, pattern=pattern, exclude=exclude,
                            precision=precision, table=table)
        outcome = checks.check_time_share(result, bound=bound, selector=sel, at_most=at_most, at_least=at_least,
                                          table=table)
    except RidgelineError as err:
        raise ValueError(str(err)) from None
    if not outcome.passed:
        _fail(outcome, result)
