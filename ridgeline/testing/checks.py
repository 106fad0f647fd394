"""The checks behind the assertion helpers and the expectation files.

Each check takes a finished :class:`~ridgeline.result.AnalysisResult` and returns a
:class:`Outcome`: what was checked, in words, and one line per problem naming the kernel, the
measured value against the expected one and the roof with its source. Nothing here raises on a
failed expectation; :mod:`ridgeline.testing.asserts` turns outcomes into ``AssertionError`` and
:mod:`ridgeline.testing.expectations` into test items and exit codes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from ridgeline.testing.kernels import (GROUP_KEYS, KNOWN_BOUNDS, Selector, bound_filter, bound_matches, kernel_table,
                                       launch_rows)

SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}

Range = tuple  # (low or None, high or None)


@dataclass
class Outcome:
    """What one check found: ``what`` it checked, and ``problems`` (empty when it passed)."""

    what: str
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # the subjects it looked at

    @property
    def passed(self) -> bool:
        return not self.problems

    def message(self, where: str | None = None) -> str:
        """Several lines: the check, where, and each problem indented under it."""
        head = self.what + (f" in {where}" if where else "")
        if self.passed:
            return head + ": ok"
        n = len(self.problems)
        lines = [f"{head}: {n} problem{'s' if n != 1 else ''}"]
        lines += [f"  {p}" for p in self.problems]
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# formatting
# ------------------------------------------------------------------------------------------
def _pct(x: float | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    pct = x * 100
    if pct == 0 or abs(pct) >= 10:
        return f"{pct:.0f}%"
    return f"{pct:.2g}%" if abs(pct) >= 0.1 else f"{pct:.1g}%"


def _num(x: float | None) -> str:
    from ridgeline.rules.kernels import fmt

    return fmt(x)


def _ms(seconds: float | None) -> str:
    from ridgeline.rules.kernels import fmt_s

    return fmt_s(seconds)


def format_range(rng: Range, fmt_one) -> str:
    lo, hi = rng
    if lo is not None and hi is not None:
        return f"between {fmt_one(lo)} and {fmt_one(hi)}"
    if lo is not None:
        return f">= {fmt_one(lo)}"
    return f"<= {fmt_one(hi)}"


def _outside(value: float | None, rng: Range | None) -> bool:
    if rng is None or (rng[0] is None and rng[1] is None):
        return False
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    lo, hi = rng
    return (lo is not None and value < lo) or (hi is not None and value > hi)


def _label(row: dict) -> str:
    """``subject (bf16/fp16 on H100 SXM, 32 launches, 42% of GPU time)``."""
    from ridgeline.rules.kernels import plural, precision_label

    bits = [precision_label(row.get("precision")) + (f" on {row['gpu']}" if row.get("gpu") else ""),
            plural(int(row.get("launches") or 0), "launch"), f"{_pct(row.get('time_share'))} of GPU time"]
    return f"{row['subject']} ({', '.join(bits)})"


def roof_text(row: dict) -> str:
    """The roof a group's fraction is measured against, with its value and source."""
    from ridgeline.rules.kernels import fmt_si, precision_label

    intensity, ridge = row.get("intensity_dram"), row.get("ridge_flop_per_byte")
    memory_side = row.get("bound") == "memory" if intensity is None or ridge is None else intensity < ridge
    if memory_side:
        return (f"the DRAM bandwidth roof {fmt_si(row.get('peak_bw_bytes_per_s'), 'B/s')} "
                f"({row.get('peak_bw_source') or 'no source'}); achieved "
                f"{fmt_si(row.get('achieved_dram_bytes_per_s'), 'B/s')}")
    return (f"the {precision_label(row.get('precision'))} compute roof "
            f"{fmt_si(row.get('peak_flops_per_s'), 'FLOP/s')} ({row.get('peak_flops_source') or 'no source'}); "
            f"achieved {fmt_si(row.get('achieved_flops_per_s'), 'FLOP/s')}")


def _placement(row: dict) -> str:
    """``intensity 8 FLOP/B < ridge 295 FLOP/B (bf16/fp16 roof 989 TFLOP/s (ncu) / DRAM 3.35 TB/s (ncu))``."""
    from ridgeline.rules.kernels import fmt_si, precision_label

    intensity, ridge = row.get("intensity_dram"), row.get("ridge_flop_per_byte")
    if intensity is None or ridge is None:
        return "intensity or ridge unknown (FLOP or byte counters, or a roof, missing)"
    op = "<" if intensity < ridge else ">="
    return (f"intensity {_num(intensity)} FLOP/B {op} ridge {_num(ridge)} FLOP/B "
            f"({precision_label(row.get('precision'))} roof {fmt_si(row.get('peak_flops_per_s'), 'FLOP/s')} "
            f"({row.get('peak_flops_source') or 'no source'}) / DRAM "
            f"{fmt_si(row.get('peak_bw_bytes_per_s'), 'B/s')} ({row.get('peak_bw_source') or 'no source'}))")


def ridge_text(row: dict) -> str:
    """Which side of the ridge a group sits on, and the roofs with their sources."""
    intensity, ridge = row.get("intensity_dram"), row.get("ridge_flop_per_byte")
    if intensity is None or ridge is None:
        return _placement(row)
    side = "memory side of the ridge" if intensity < ridge else "compute side of the ridge"
    return f"now on the {side}: {_placement(row)}"


def latency_text(row: dict) -> str:
    """Why a group is latency-bound: no roof explains its time."""
    from ridgeline.rules.kernels import fmt_s

    busiest = row.get("busiest_roof_fraction")
    mean = (row.get("duration_s") or 0.0) / max(int(row.get("launches") or 1), 1)
    from ridgeline.analyzer.kernels.latency import bound_label

    word = bound_label("latency", row.get("latency_kind"))
    return (f"{word}: no roof explains its time (" + (f"busiest roof at {_pct(busiest)}, " if busiest is not None
                                                             else "") + f"mean launch {fmt_s(mean)}; "
            + _placement(row) + ")")


def _bounds(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _check_bound_names(bounds: Iterable[str], result) -> None:
    from ridgeline.errors import UsageError

    known = set(KNOWN_BOUNDS)
    kernels = getattr(result, "kernels", None)
    if kernels is not None and "bound" in kernels.columns:
        known |= {b for b in kernels.get_column("bound").drop_nulls().unique().to_list() if b}
    for b in bounds:
        if b not in known:
            raise UsageError(f"bound {b!r}: expected one of {', '.join(sorted(known))}")


def _no_kernels(result, selector: Selector, table) -> str:
    if table is None:
        return "the input holds no kernel launches (telemetry only, or an empty export)"
    names = table.get_column("subject").head(5).to_list()
    more = f", ... ({table.height} groups)" if table.height > 5 else ""
    return f"no kernel group selected ({selector.describe()}); the largest are: {', '.join(names)}{more}"


# ------------------------------------------------------------------------------------------
# the checks
# ------------------------------------------------------------------------------------------
def check_kernels(result, selector: Selector, *, bound: str | Sequence[str] | None = None,
                  roof_fraction: Range | None = None, intensity: Range | None = None,
                  time_share: Range | None = None, findings: Sequence[str] | None = None,
                  min_severity: str = "warning", required: bool = True, table=None) -> Outcome:
    """Every selected kernel group meets each expectation given.

    ``bound``: one verdict or several allowed ones; ``roof_fraction``, ``intensity`` (FLOP/B at
    DRAM), ``time_share``: ``(low, high)`` with either end None; ``findings``: the rule codes (or
    prefixes) allowed on these kernels at or above ``min_severity``. ``required``: selecting no
    kernel at all is a problem.
    """
    bounds = _bounds(bound)
    _check_bound_names(bounds, result)
    if table is None:
        table = kernel_table(result)
    outcome = Outcome(f"{selector.describe()}")
    chosen = selector.apply(table) if table is not None else None
    if chosen is None or not chosen.height:
        if required:
            outcome.problems.append(_no_kernels(result, selector, table))
        return outcome
    allowed = None if findings is None else tuple(str(f).upper() for f in findings)
    by_subject: dict[str, list] = {}
    if allowed is not None:
        for f in getattr(result, "findings", []) or []:
            if SEVERITY_RANK.get(f.severity, -1) >= SEVERITY_RANK[min_severity]:
                by_subject.setdefault(f.subject, []).append(f)
    for row in chosen.to_dicts():
        outcome.checked.append(row["subject"])
        parts = []
        placement = False  # the kernel's place against the ridge explains the failure
        if bounds and not bound_matches(row.get("bound"), row.get("latency_kind"), bounds):
            want = " or ".join(repr(b) for b in bounds)
            got = row.get("bound") + (f" ({row['latency_kind']})" if row.get("latency_kind") else "") if row.get("bound") else None
            parts.append(f"bound {got!r}, expected {want}")
            placement = True
        if _outside(row.get("roof_fraction"), roof_fraction):
            parts.append(f"at {_pct(row.get('roof_fraction'))} of its roof, expected "
                         f"{format_range(roof_fraction, _pct)} (roof: {roof_text(row)})")
        if _outside(row.get("intensity_dram"), intensity):
            parts.append(f"intensity {_num(row.get('intensity_dram'))} FLOP/B, expected "
                         f"{format_range(intensity, _num)} FLOP/B")
            placement = True
        if _outside(row.get("time_share"), time_share):
            parts.append(f"{_pct(row.get('time_share'))} of GPU time, expected {format_range(time_share, _pct)}")
        if allowed is not None:
            for f in by_subject.get(row["subject"], []):
                if not f.code.startswith(allowed):
                    parts.append(f"finding {f.code} {f.name} ({f.severity}) not allowed "
                                 f"(allowed: {', '.join(allowed) or 'none'}): {f.message}")
        if placement:
            parts.append(latency_text(row) if row.get("bound") == "latency" else ridge_text(row))
        if parts:
            outcome.problems.append(f"{_label(row)}:" + "".join(f"\n    - {p}" for p in parts))
    return outcome


def check_findings(result, *, min_severity: str = "warning", ignore: Sequence[str] = (),
                   allowed_on: dict[str, Sequence[str]] | None = None) -> Outcome:
    """No finding at or above ``min_severity`` except those ``ignore`` names (codes or prefixes such
    as ``RL106``, ``RL9``) and, per subject, those ``allowed_on[subject]`` names."""
    from ridgeline.errors import UsageError

    if min_severity not in SEVERITY_RANK:
        raise UsageError(f"min_severity {min_severity!r}: expected one of {', '.join(SEVERITY_RANK)}")
    ignore = tuple(str(c).strip().upper() for c in ignore)
    allowed_on = allowed_on or {}
    what = f"no {min_severity}-or-worse findings" + (f" (ignoring {', '.join(ignore)})" if ignore else "")
    outcome = Outcome(what)
    for f in getattr(result, "findings", []) or []:
        if SEVERITY_RANK.get(f.severity, -1) < SEVERITY_RANK[min_severity]:
            continue
        if ignore and f.code.startswith(ignore):
            continue
        extra = tuple(str(c).upper() for c in allowed_on.get(f.subject, ()))
        if extra and f.code.startswith(extra):
            continue
        impact = f" [impact {_pct(f.impact_share)} of GPU time]" if f.impact_share else ""
        outcome.problems.append(f"{f.code} {f.name} ({f.severity}) on {f.subject}: {f.message}{impact}"
                                + (f"\n    remedy: {f.remedy}" if f.remedy else ""))
    return outcome


def check_time_share(result, *, bound: str | Sequence[str] | None = None, selector: Selector | None = None,
                     at_most: float | None = None, at_least: float | None = None, table=None) -> Outcome:
    """The share of all GPU time spent in launches with ``bound`` (and, with ``selector``, of those
    kernels) lies within ``[at_least, at_most]``."""
    import polars as pl

    from ridgeline.errors import UsageError

    if at_most is None and at_least is None:
        raise UsageError("time share: give at_most, at_least or both")
    bounds = _bounds(bound)
    _check_bound_names(bounds, result)
    parts = []
    if bounds:
        parts.append(" or ".join(bounds) + "-bound launches")
    if selector is not None and selector != Selector():
        parts.append(("of " if bounds else "") + selector.describe())
    subject = " ".join(parts) or "all launches"
    rng = (at_least, at_most)
    outcome = Outcome(f"share of GPU time in {subject} {format_range(rng, _pct)}")
    if table is None:
        table = kernel_table(result)
    if table is None:
        outcome.problems.append("the input holds no kernel launches (telemetry only, or an empty export)")
        return outcome
    df = launch_rows(result.kernels)
    keys = list(GROUP_KEYS)
    chosen = selector.apply(table) if selector is not None else table
    df = df.join(chosen.select(*keys, "subject"), on=keys, how="inner", nulls_equal=True)
    if bounds:
        df = df.filter(bound_filter(bounds))
    total = result.total_gpu_time_s or result.kernels.get_column("duration_s").sum()
    spent = df.get_column("duration_s").sum() if df.height else 0.0
    share = (spent / total) if total else None
    if _outside(share, rng):
        top = (df.group_by("subject").agg(pl.col("duration_s").sum()).sort("duration_s", descending=True)
               .head(5).to_dicts()) if df.height else []
        largest = ", ".join(f"{r['subject']} ({_pct(r['duration_s'] / total)})" for r in top) if total else ""
        outcome.problems.append(
            f"{_pct(share)} of GPU time ({_ms(spent)} of {_ms(total)}), expected "
            f"{format_range(rng, _pct)}" + (f"; largest: {largest}" if largest else ""))
    return outcome
