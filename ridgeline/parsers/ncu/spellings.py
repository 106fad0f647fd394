"""One quantity, several spellings: which ncu metric names give each figure ridgeline reads.

ncu writes one quantity in several forms, and which form a file holds depends on the set or
section it was collected with, the page it was exported from and the release. The roofline
sections, for instance, store no FLOP totals: they store rates per elapsed cycle
(``smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed``) beside a cycle
count that may itself be ``smsp__cycles_elapsed.avg``, ``smsp__cycles_elapsed.sum`` (all SMSPs:
SMs x 4), the clock times the duration, or ``gpc__cycles_elapsed.max``. A figure is read from the
first spelling the file holds, and it is *missing* only when no spelling is there.

:data:`SPELLINGS` is that table: quantity -> the spellings (sets of metric names) that give it,
in the order the readers try them. It is built from the recipes in
:mod:`ridgeline.parsers.ncu.metrics`, the very lists the CSV and ``.ncu-rep`` readers derive
the KERNEL columns from (both go through :mod:`ridgeline.parsers.ncu.derive`), so the table and
the readers cannot disagree. Quantities are named like the KERNEL columns they fill
(``flops_fp32``, ``dram_bytes``, ``duration_s``, ``peak_flops_fp32_per_s``...) plus ``cycles``
(elapsed SM cycles). In a spelling:

* a plain name is a metric that must be present;
* ``@quantity`` is another quantity in any of its spellings (``@duration_s``, ``@cycles``,
  ``@sm_clock_hz``);
* a name with ``*`` is a pattern (the tensor counters are matched by family).

Other forms of the same metric count too: ncu's ``derived__*_x2``/``_x4`` metrics stand for the
counters they are defined from (:data:`~ridgeline.parsers.ncu.metrics.DERIVED_ALIASES`), and a
section export's human labels ("SM Frequency", "Duration") for the metrics they print
(:data:`~ridgeline.parsers.ncu.metrics.SECTION_LABELS`).

Public API (used by the real-file sweep test): :data:`SPELLINGS`, :func:`quantities_held` and
:func:`quantity_of`. Because the readers try every spelling, a KERNEL figure is null only when
the file holds no spelling of it (or its cells are n/a), so the "collect X" advice built from
null figures (``missing_hint``, RL901) names only what the file does not hold.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Iterable

from ridgeline.parsers.ncu import metrics as V

#: recipe pseudo-metrics -> the quantity they stand for
_PSEUDO_QUANTITY = {V.DURATION: "duration_s", V.CYCLES: "cycles", "@sm_clock_hz": "sm_clock_hz"}

#: tensor FLOPs: per-precision totals and per-family counters, as totals or rates
_TENSOR = ("sm__ops_path_tensor_src_*", "sm__ops_path_tensor_op_*_src_*")


def _spellings_of(alts: list[V.Alt]) -> tuple[tuple[str, ...], ...]:
    out = []
    for alt in alts:
        need = [t.metric for t in alt.terms if not t.optional] + [m for m in (alt.scale, alt.divide) if m]
        out.append(tuple("@" + _PSEUDO_QUANTITY[m] if m in _PSEUDO_QUANTITY else m for m in need))
    return tuple(out)


def _build() -> dict[str, tuple[tuple[str, ...], ...]]:
    table: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name, alts in V.FLOP_RECIPES.items():
        table[name] = _spellings_of(alts)
    tensor = []
    for base in _TENSOR:
        tensor += [(base + ".sum",), (base + ".sum.per_cycle_elapsed", "@cycles"), (base + ".sum.per_second", "@duration_s")]
    # Volta: HMMA.884 instructions x 512 (CC 7.0 only; elsewhere the count gives no FLOPs)
    tensor += [(c,) for c in V.VOLTA_TENSOR_COUNTERS]
    table["flops_tensor"] = tuple(tensor)
    for name, alts in V.BYTE_RECIPES.items():
        table[name] = _spellings_of(alts)
    for name, metrics in V.CLOCKS.items():  # before cycles: a clock is first of all a clock
        table[name] = tuple((m,) for m in metrics)
    table["duration_s"] = _spellings_of(V.DURATION_RECIPE)
    table["cycles"] = _spellings_of(V.CYCLES_RECIPE)
    for name, alts in V.PEAK_RECIPES.items():
        spell = _spellings_of(alts)
        if name == "peak_dram_bytes_per_s":  # theoretical, from device attributes
            spell += (tuple(V.DEVICE_DRAM_PEAK),)
        table[name] = spell
    table["peak_flops_tensor_per_s"] = tuple(
        (base + V.TENSOR_PEAK_SUFFIX, "@sm_clock_hz") for base in _TENSOR
    )
    table["tensor_pipe_active_ratio"] = (
        ("sm__pipe_tensor_op_*_cycles_active.avg.pct_of_peak_sustained_*",),
        ("smsp__pipe_tensor_op_*_cycles_active.avg.pct_of_peak_sustained_*",),
        ("sm__inst_executed_pipe_tensor_op_*.avg.pct_of_peak_sustained_*",),
        ("smsp__inst_executed_pipe_tensor_op_*.avg.pct_of_peak_sustained_*",),
        ("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_*",),  # the whole pipe
        ("smsp__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_*",),
    )
    for name, alts in V.RATE_RECIPES.items():  # achieved rates (read where no duration is)
        table[name] = _spellings_of(alts)
    for name, metrics in V.PERCENT_METRICS.items():
        table[name] = tuple((m,) for m in metrics)
    return table


#: quantity -> its spellings, each a tuple of required metric names / ``@quantity`` / patterns
SPELLINGS: dict[str, tuple[tuple[str, ...], ...]] = _build()

#: FLOP quantities (per precision) and what the roofline needs, for advice texts
FLOP_QUANTITIES = ("flops_fp64", "flops_fp32", "flops_fp16", "flops_tensor")


@functools.lru_cache(maxsize=1)
def _label_names() -> dict[str, str]:
    """Section labels that mean one metric whatever their unit -> that metric."""
    by_label: dict[str, set[str]] = {}
    for (label, _base), canon in V.SECTION_LABELS.items():
        by_label.setdefault(label, set()).add(canon)
    out = {label: next(iter(c)) for label, c in by_label.items() if len(c) == 1}
    return {**out, **V.SECTION_LABELS_ANY_UNIT}


def canonical(name: str, unit: str | None = None) -> str:
    """A metric name as the recipes spell it: ``derived__`` metrics -> the counter they stand for,
    section labels -> the metric they print (``unit``, the base unit, tells "Memory Throughput" %
    from byte/second; without it an ambiguous label stays as it is)."""
    if unit is not None and (name, unit) in V.SECTION_LABELS:
        name = V.SECTION_LABELS[(name, unit)]
    else:
        name = _label_names().get(name, name)
    if name in V.DERIVED_ALIASES:  # labels can print a derived metric
        return V.DERIVED_ALIASES[name][0]
    return name


def _base_unit(unit: str | None) -> str | None:
    if unit is None:
        return None
    from ridgeline.units import parse_unit

    return parse_unit(unit).base


def _matches(need: str, names: set[str]) -> bool:
    if "*" in need:
        return any(fnmatch.fnmatchcase(n, need) for n in names)
    return need in names


def quantities_held(metric_names: Iterable[str | tuple[str, str]]) -> set[str]:
    """The quantities a file could give from its metric names, in any spelling.

    ``metric_names``: the raw page's columns, a details page's ``Metric Name`` values (labels
    included) or a report's metric names. An item may be a ``(name, unit)`` pair (a details
    page's ``Metric Name`` and ``Metric Unit``): the unit tells a label that means two things
    apart ("Memory Throughput" in byte/second is DRAM traffic, in % the busiest unit); a bare
    ambiguous label counts for neither.
    """
    names = set()
    for item in metric_names:
        if isinstance(item, tuple):
            name, unit = item
            names.add(canonical(name, _base_unit(unit)))
        else:
            names.add(canonical(item))
    held: set[str] = set()
    changed = True
    while changed:  # spellings refer to other quantities (@cycles, @duration_s): to a fixed point
        changed = False
        for quantity, spellings in SPELLINGS.items():
            if quantity in held:
                continue
            for spelling in spellings:
                if all((need[1:] in held) if need.startswith("@") else _matches(need, names) for need in spelling):
                    held.add(quantity)
                    changed = True
                    break
    return held


@functools.lru_cache(maxsize=4096)
def quantity_of(metric_name: str) -> str | None:
    """The quantity a metric spells (first where it is a term, not a scale or divisor), or None."""
    name = canonical(metric_name)
    for pass_ in ("term", "any"):
        for quantity, spellings in SPELLINGS.items():
            for spelling in spellings:
                terms = [n for n in spelling if not n.startswith("@")]
                if pass_ == "term":
                    terms = terms[:1]
                if any(fnmatch.fnmatchcase(name, n) if "*" in n else n == name for n in terms):
                    return quantity
    return None
