"""Kernel groups of two runs matched by kernel identity when their launch shape or name changed.

``ridgeline diff`` first pairs kernel groups by short name and launch shape (grid, block). A batch
change renames nearly every group that way: the grid follows the batch, and libraries pick other
template arguments (tile sizes, split counts). Left there, the diff would show every kernel as
vanished and appeared. :func:`match_by_identity` pairs the groups that only one run has, in two
steps, each on the groups the previous step left:

1. **same kernel, other launch shape**: equal :func:`ridgeline.names.join_key` (function name and
   normalised template arguments, namespaces and spelling aside);
2. **same function, other template arguments**: equal :func:`ridgeline.names.function_name`.

At each step every group of one run with a key is merged with every group of the other run with
the same key into one row (several shapes on a side are summed: launches, GPU time, FLOPs and
DRAM bytes; the bound holding most of the time; the roof fraction time-weighted), so nothing is
paired by guess: a function that ran as three shapes last night and two tonight is one row,
"3 -> 2 shapes". Groups no step matches stay appeared or vanished.

Pure Python over the groups :func:`ridgeline.analyzer.nightly.diff.kernel_groups` builds.
"""

from __future__ import annotations

from typing import Any, Callable

from ridgeline import names

STEPS: tuple[tuple[str, Callable[[str], Any]], ...] = (
    ("launch shape", names.join_key),  # same kernel (function + template arguments), other grid/block
    ("template arguments", names.function_name),  # same function, other template arguments
)


def _full_name(key: tuple, group: dict) -> str:
    return str(group.get("kernel_name") or key[0])


def merge_groups(groups: list[dict[str, Any]], total: float | None) -> dict[str, Any]:
    """One group from several (sums; bound by time; roof fraction time-weighted)."""
    if len(groups) == 1:
        return dict(groups[0])
    out: dict[str, Any] = {"launches": sum(g.get("launches") or 0 for g in groups),
                           "time_s": sum(g.get("time_s") or 0.0 for g in groups),
                           "kernel_name": groups[0].get("kernel_name")}
    if all(g.get("flops") is not None and g.get("dram_bytes") is not None for g in groups):
        out["flops"] = sum(g["flops"] for g in groups)
        out["dram_bytes"] = sum(g["dram_bytes"] for g in groups)
        out["intensity"] = out["flops"] / out["dram_bytes"] if out["dram_bytes"] > 0 else None
    else:
        out["flops"] = out["dram_bytes"] = out["intensity"] = None
    bound_time: dict[str, float] = {}
    for g in groups:
        for b, t in (g.get("bound_time_s") or {g.get("bound") or "unknown": g.get("time_s") or 0.0}).items():
            bound_time[b] = bound_time.get(b, 0.0) + t
    out["bound_time_s"] = bound_time
    out["bound"] = max(sorted(bound_time), key=lambda b: bound_time[b]) if bound_time else "unknown"
    weight = rf = 0.0
    for g in groups:
        if g.get("roof_fraction") is None:
            continue
        w = g.get("roof_time_s", g.get("time_s")) or 0.0
        rf += g["roof_fraction"] * w
        weight += w
    out["roof_fraction"] = rf / weight if weight > 0 else None
    out["roof_time_s"] = weight
    out["share"] = out["time_s"] / total if total else None
    return out


def match_by_identity(gb: dict[tuple, dict], tb: float | None, gn: dict[tuple, dict], tn: float | None
                      ) -> list[tuple[str, str, list[tuple], list[tuple], dict, dict]]:
    """Pairs of groups only one run has: ``(how, label, base keys, new keys, merged base, merged new)``;
    ``how`` names what differs (``launch shape`` or ``template arguments``)."""
    only_b = [k for k in gb if k not in gn]
    only_n = [k for k in gn if k not in gb]
    out = []
    for how, keyfn in STEPS:
        by_b: dict[Any, list[tuple]] = {}
        by_n: dict[Any, list[tuple]] = {}
        for k in only_b:
            by_b.setdefault(keyfn(_full_name(k, gb[k])), []).append(k)
        for k in only_n:
            by_n.setdefault(keyfn(_full_name(k, gn[k])), []).append(k)
        for ident in [i for i in by_b if i in by_n]:
            kb, kn = by_b[ident], by_n[ident]
            shorts = {k[0] for k in kb + kn}
            label = shorts.pop() if len(shorts) == 1 else (names.function_name(_full_name(kb[0], gb[kb[0]])) or kb[0][0])
            out.append((how, label, kb, kn, merge_groups([gb[k] for k in kb], tb), merge_groups([gn[k] for k in kn], tn)))
        matched_b = {k for _, _, kb, _, _, _ in out for k in kb}
        matched_n = {k for _, _, _, kn, _, _ in out for k in kn}
        only_b = [k for k in only_b if k not in matched_b]
        only_n = [k for k in only_n if k not in matched_n]
    return out
