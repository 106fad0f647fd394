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
