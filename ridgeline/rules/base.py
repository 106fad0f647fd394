"""The finding format and the rule interface every rule module implements.

A rule is a module ``ridgeline/rules/rl<code>_<slug>.py`` (e.g. ``rl101_decode_gemm_memory_bound.py``)
that defines exactly one subclass of :class:`Rule`. Its class attributes carry the code,
name, default severity and thresholds (named, documented defaults a config file may
override); its docstring has the fixed sections ``What it finds``, ``Why it matters``,
``What to do`` and ``Example``. ``check(ctx)`` reads only normalized columns from the
:class:`Context` and returns findings.

Nulls: a value that was not measured is null (ridgeline.analyzer.schema), and every column but
the analyzer's keys may be null in a real file -- a GEMV whose FP counters were not collected has
no precision, so no compute roof and no ridge. A rule leaves out what it cannot judge (a launch
without a ridge is on neither side of one) and never formats a missing number; it never raises.
``tests/rules/test_rules_null_columns.py`` runs every rule on real fixture analyses with each
nullable ROOFLINE, SUMMARY and WINDOW column null in one row and in all rows, and with random
sets of nulls.

Codes: ``RL`` + family digit + two digits. 1xx kernel/roofline, 2xx telemetry, 3xx
run-to-run, 4xx timeline (Nsight Systems, PyTorch profiler), 9xx input and data quality. A published code is never reused.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

CODE_RE = re.compile(r"^RL[1-9][0-9]{2}$")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEVERITIES = ("info", "warning", "critical")
DOC_SECTIONS = ("What it finds", "Why it matters", "What to do", "Example")
# where an evidence figure came from
SOURCES = ("measured", "derived", "catalogue", "config", "telemetry")


@dataclasses.dataclass(frozen=True)
class Evidence:
    """One number a finding rests on."""

    metric: str  # normalized column or derived quantity name, e.g. "intensity_dram"
    value: float | int | str | None
    unit: str  # "FLOP/B", "s", "ratio", "%", "B/s", ...
    source: str  # one of SOURCES, optionally with detail: "measured: dram__bytes.sum"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Finding:
    """What a rule says about one subject."""

    code: str
    name: str
    severity: str
    subject: str  # a kernel name group, "gpu:H100 SXM", "host:node1 gpu:3", "window:...", "profile"
    message: str  # measured value against threshold, one line
    remedy: str  # imperative, one line
    evidence: tuple[Evidence, ...] = ()
    impact_s: float | None = None  # upper bound of GPU seconds saved if the subject reached its roof
    impact_share: float | None = None  # impact_s / total GPU time (0..1)
    confidence: str = "measured"  # measured | derived | catalogue
    subject_kind: str = "kernel"  # kernel | gpu | host | window | profile | telemetry | timeline
    # codes of the other findings on the same subject: one saving is counted once, on the finding
    # with the largest impact; the others keep impact null and name it here (see engine.share_impacts)
    related: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["evidence"] = [e.to_dict() for e in self.evidence]
        return d

    @property
    def sort_key(self) -> tuple:
        """Most impactful first, within each source.

        Profile findings (kernel, profile) come first, then telemetry findings (gpu, host,
        window, telemetry): microseconds of a profile and GPU-hours of a fleet are not one
        scale, so each source is ranked on its own. Within a source, impact as a share of the
        GPU time it observed (``impact_share``), then in seconds. Ties: severity, code, subject.
        """
        sev = {"critical": 0, "warning": 1, "info": 2}.get(self.severity, 3)
        source = 0 if self.subject_kind in ("kernel", "profile") else 1
        return (source, -(self.impact_share or 0.0), -(self.impact_s or 0.0), sev, self.code, self.subject)


@dataclasses.dataclass
class Context:
    """Everything a rule may read. Tables are polars DataFrames with normalized columns.

    ``kernels``: ROOFLINE table (KERNEL + ROOFLINE columns, one row per launch) or None.
    ``summary``: per-kernel-name SUMMARY table or None.
    ``gpu``: the catalogue entry used (ridgeline.analyzer.kernels.gpus.GPU) or None.
    ``telemetry``: TELEMETRY long table or None; ``windows``: per-GPU/per-window reduction or None.
    ``total_gpu_time_s``: the denominator for impact shares.
    """

    kernels: Any = None
    summary: Any = None
    gpu: Any = None
    telemetry: Any = None
    windows: Any = None
    total_gpu_time_s: float | None = None
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    timeline: Any = None  # ridgeline.analyzer.timeline.busy.TimelineAnalysis (timeline inputs) or None


class Rule:
    """Base class. Subclasses set the class attributes and implement :meth:`check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str] = "warning"
    # every other severity a finding of this rule may carry (RL208: info and warning besides its
    # critical); the engine refuses any other, and the catalogue lists the range
    severities: ClassVar[tuple[str, ...]] = ()
    family: ClassVar[str] = "kernel"  # kernel | telemetry | data
    aliases: ClassVar[tuple[str, ...]] = ()
    # threshold name -> (default value, one-line description)
    thresholds: ClassVar[dict[str, tuple[Any, str]]] = {}

    def __init__(self, overrides: dict[str, Any] | None = None) -> None:
        self.params = {k: v for k, (v, _doc) in self.thresholds.items()}
        for key, value in (overrides or {}).items():
            if key not in self.params:
                from ridgeline.errors import UsageError

                raise UsageError(
                    f"{self.code}: unknown threshold {key!r}; known: {', '.join(sorted(self.params)) or 'none'}"
                )
            self.params[key] = type(self.params[key])(value) if self.params[key] is not None else value

    def check(self, ctx: Context) -> list[Finding]:  # pragma: no cover - interface
        raise NotImplementedError

    def finding(self, **kw: Any) -> Finding:
        """Build a finding pre-filled with this rule's code, name and severity."""
        kw.setdefault("severity", self.severity)
        return Finding(code=self.code, name=self.name, **kw)
