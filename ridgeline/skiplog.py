"""A ``skipped`` list whose size does not grow with the input: the first few items of each kind,
then one entry that counts the rest ("N more like this").

A long Prometheus pull that meets a malformed point in every answer, or a flaky server that
fails one request in ten, would otherwise list one :class:`~ridgeline.result.Skipped` per point
or request: a list (and a JSON document) that grows with the samples, not with the windows.
:class:`CappedSkipped` is a drop-in ``list`` for the readers' ``skipped`` arguments: ``append``
keeps the first :data:`PER_KIND` items of each *kind* (same source, same reason once its
per-item values are masked: quoted values after ``got``, numbers, dates) and only counts the
others; :meth:`CappedSkipped.items` returns the kept items plus, per kind that overflowed, one
entry ``Skipped(source, "N more like this", reason of the first one left out, count=N)``.
Nothing is dropped silently: the accounting adds each entry's ``count`` (see
:func:`ridgeline.analyzer.accounting.accounting`), so ``read = used + missing + skipped`` still
holds, and the kinds and their totals are in ``accounting[].skipped_reasons``.
"""

from __future__ import annotations

import re

from ridgeline.result import Skipped

PER_KIND = 20  # items listed per kind before "N more like this"

_VARIABLE = re.compile(r"\d{4}-\d\d-\d\dT[\d:]+Z|\d+(?:\.\d+)?")


def kind_of(item: Skipped) -> tuple[str, str]:
    """``(source, reason)`` with the per-item values masked: what makes two items alike."""
    reason = item.reason.split(", got ")[0]
    return str(item.source), _VARIABLE.sub("#", reason)


class CappedSkipped(list):
    """A list of Skipped that keeps :data:`PER_KIND` of each kind and counts the rest."""

    def __init__(self, per_kind: int = PER_KIND):
        super().__init__()
        self.per_kind = per_kind
        self._seen: dict[tuple[str, str], int] = {}
        self._more: dict[tuple[str, str], list] = {}  # kind -> [first item left out, count]

    def append(self, item: Skipped) -> None:  # type: ignore[override]
        kind = kind_of(item)
        n = self._seen.get(kind, 0) + getattr(item, "count", 1)
        self._seen[kind] = n
        if n <= self.per_kind:
            super().append(item)
        elif kind in self._more:
            self._more[kind][1] += getattr(item, "count", 1)
        else:
            self._more[kind] = [item, getattr(item, "count", 1)]

    def extend(self, items) -> None:  # type: ignore[override]
        for item in items:
            self.append(item)

    def items(self) -> list[Skipped]:
        """The kept items, then one counted entry per kind that had more."""
        out = list(self)
        for first, n in self._more.values():
            out.append(Skipped(first.source, f"{n} more like this", first.reason, count=n))
        return out

    @property
    def total(self) -> int:
        """Items appended (listed or counted)."""
        return sum(self._seen.values())
