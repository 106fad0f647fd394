"""A package that took the place of a module keeps that module's public names importable.

``ridgeline.parsers.ncu`` was one module before the readers were grouped by source (issue 36);
it is now a package whose reader is ``ridgeline.parsers.ncu.csv_reader``. So that
``from ridgeline.parsers.ncu import read_ncu`` keeps working, the package's ``__init__`` sets
``__getattr__ = former_module(__name__, "ridgeline.parsers.ncu.csv_reader", {...})``: the listed
names are loaded from the new module on first use (PEP 562), nothing is imported before, and any
other name is an AttributeError at once, so the package's own submodules load as usual.
The packages that do this, and their names, are listed in docs/architecture.md.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable


def former_module(package: str, module: str, names: Iterable[str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that serves ``names`` from ``module``."""
    served = frozenset(names)

    def __getattr__(name: str) -> Any:
        if name not in served:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        return getattr(importlib.import_module(module), name)

    return __getattr__
