"""Helpers shared by the timeline rules (RL4xx): the per-device rows and their subject."""

from __future__ import annotations

from typing import Any

from ridgeline.rules.base import Context


def devices(ctx: Context) -> list[dict[str, Any]]:
    """Rows of the timeline's per-device table (TIMELINE_DEVICE_COLUMNS) with a capture."""
    tl = ctx.timeline
    if tl is None or tl.devices is None or not tl.devices.height:
        return []
    return [r for r in tl.devices.iter_rows(named=True) if r["capture_s"] and r["capture_s"] > 0]


def several_sources(ctx: Context) -> bool:
    tl = ctx.timeline
    return tl is not None and tl.devices is not None and tl.devices.get_column("source").n_unique() > 1


def subject(ctx: Context, row: dict[str, Any]) -> str:
    """``gpu:<device>`` (``<file> gpu:<device>`` with several timeline files)."""
    from pathlib import Path

    dev = "gpu:?" if row["device"] is None else f"gpu:{row['device']}"
    return f"{Path(row['source']).name} {dev}" if several_sources(ctx) else dev


def option(ctx: Context, name: str) -> float:
    from ridgeline.analyzer.timeline import DEFAULT_OPTIONS

    tl = ctx.timeline
    return float((tl.options if tl is not None else DEFAULT_OPTIONS).get(name, DEFAULT_OPTIONS[name]))


def weight_by_wall_time(findings: list, timeline, kernels) -> list:
    """Kernel findings re-weighted by the timeline's wall time, most impactful first.

    With a profile and a timeline joined by short name (:func:`ridgeline.analyzer.timeline.
    join_roofline`), a kernel finding's ``impact_share`` becomes ``impact_s / profiled time of
    its kernel name x that name's wall_share``: the share of the real run's wall time the
    finding could save, instead of the share of the profiled time. ``impact_s`` stays in profiled
    seconds; a ``wall_share`` evidence item is added. Findings of unmatched names and of other
    subjects keep their share. The list is re-sorted (Finding.sort_key).
    """
    import dataclasses
    import re

    import polars as pl

    from ridgeline.analyzer.timeline import wall_shares
    from ridgeline.rules.base import Evidence

    shares = wall_shares(timeline)
    if not shares or kernels is None or not kernels.height:
        return findings
    profiled = dict(kernels.group_by("short_name").agg(pl.col("duration_s").sum()).iter_rows())
    out = []
    for f in findings:
        name = re.sub(r" \[[^\]]*\]$", "", f.subject) if f.subject_kind == "kernel" else None
        if name in shares and f.impact_s is not None and profiled.get(name):
            share = min(1.0, f.impact_s / profiled[name]) * shares[name]
            f = dataclasses.replace(f, impact_share=share, evidence=tuple(f.evidence) + (
                Evidence("wall_share", shares[name], "ratio", "measured: timeline"),))
        out.append(f)
    return sorted(out, key=lambda f: f.sort_key)
