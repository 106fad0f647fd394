"""Host names in fixed-width columns, never cut so that two hosts look alike.

``llm-action-node-a01`` and ``llm-action-node-a02`` cut to 11 characters both read
``llm-action~``. :func:`host_labels` gives each host the text its column shows instead: the
full name when every name fits; else, when the hosts share a prefix and/or suffix ending at a
separator (``-``, ``.``, ``_``), the names without it (``a01``, ``a02``), said once in a legend
line; else the full name, which the table then puts on a line of its own above the row.
"""

from __future__ import annotations

from ridgeline.render.text import inline

SEPARATORS = "-._"


def _common_prefix(names: list[str]) -> str:
    import os

    p = os.path.commonprefix(names)
    cut = max(p.rfind(c) for c in SEPARATORS)
    return p[: cut + 1] if cut >= 0 else ""


def host_labels(hosts, width: int) -> tuple[dict[str, str], str | None]:
    """``({host: shown text}, legend line or None)``; see the module docstring. A shown text
    longer than ``width`` means: print the name on a line of its own."""
    names = sorted({inline(h or "?") for h in hosts})
    full = {h: h for h in names}
    if all(len(h) <= width for h in names) or len(names) < 2:
        return full, None
    prefix = _common_prefix(names)
    suffix = _common_prefix([h[::-1] for h in names])[::-1]
    if len(prefix) + len(suffix) >= min(len(h) for h in names):
        suffix = ""
    if len(prefix) >= min(len(h) for h in names):
        prefix = ""
    if not prefix and not suffix:
        return full, None
    short = {h: h[len(prefix): len(h) - len(suffix)] for h in names}
    if len(set(short.values())) < len(names) or any(len(s) > width for s in short.values()):
        return full, None
    shown = f"{prefix}*{suffix}"
    return short, f"host column: names shown without their common part ({shown}, * = the name shown)"
