"""Synthetic TELEMETRY long tables for tests (built here, not captured on a GPU).

``gpu_series(...)`` makes one GPU's samples at a fixed interval from per-field constants or
lists, in canonical units (ratios 0..1, bytes, W); ``table(*parts)`` concatenates them into
the TELEMETRY contract. Each test states its numbers once and computes expectations by hand.
"""

from __future__ import annotations

import datetime as dt

import polars as pl

from ridgeline.analyzer.schema import TELEMETRY_COLUMNS, polars_schema

T0 = dt.datetime(2026, 1, 5, 8, 0, 0, tzinfo=dt.timezone.utc)
GIB = float(1 << 30)
SCHEMA = polars_schema(TELEMETRY_COLUMNS)


def gpu_series(*, host="node1", gpu=0, n=600, interval_s=1.0, start=T0, gpu_instance=None, uuid=None,
               model=None, skip=(), jitter=0.01, **fields) -> pl.DataFrame:
    """n samples of one GPU; each field is a constant, a list of n values (None = null) or a
    callable i -> value. ``skip``: sample indices left out entirely (time gaps). ``jitter``:
    deterministic noise of +-jitter added to non-zero constant ratios (real profiling
    counters never hold a non-zero value exactly; a constant one is a stalled-field signal)."""
    rows = {c: [] for c in SCHEMA}
    for i in range(n):
        if i in skip:
            continue
        ts = start + dt.timedelta(seconds=i * interval_s)
        for name, spec in fields.items():
            if callable(spec):
                v = spec(i)
            elif isinstance(spec, (list, tuple)):
                v = spec[i]
            else:
                v = spec
                if jitter and v and name.endswith("_ratio"):
                    noisy = v + jitter * (((i * 7919) % 13) - 6) / 6
                    v = min(1.0, max(0.0, noisy)) if v <= 1.0 else noisy
            rows["timestamp"].append(ts)
            rows["host"].append(host)
            rows["gpu"].append(gpu)
            rows["uuid"].append(uuid)
            rows["gpu_instance"].append(gpu_instance)
            rows["model"].append(model)
            rows["field"].append(name)
            rows["value"].append(None if v is None else float(v))
            rows["source"].append("synthetic")
            rows["pod"].append(None)
            rows["labels"].append(None)
    return pl.DataFrame(rows, schema=SCHEMA)


def table(*parts: pl.DataFrame) -> pl.DataFrame:
    return pl.concat(parts) if parts else pl.DataFrame(schema=SCHEMA)


# typical states, canonical units
BUSY_NO_TENSOR = dict(gpu_util_ratio=0.95, gr_engine_active_ratio=0.9, sm_active_ratio=0.7,
                      tensor_active_ratio=0.03, dram_active_ratio=0.2, fb_used_bytes=40 * GIB)
BUSY_TENSOR = dict(gpu_util_ratio=0.97, gr_engine_active_ratio=0.95, sm_active_ratio=0.9,
                   tensor_active_ratio=0.45, dram_active_ratio=0.3, fb_used_bytes=60 * GIB)
IDLE_EMPTY = dict(gpu_util_ratio=0.0, gr_engine_active_ratio=0.0, sm_active_ratio=0.0,
                  tensor_active_ratio=0.0, dram_active_ratio=0.0, fb_used_bytes=0.0)
IDLE_ALLOCATED = dict(IDLE_EMPTY, fb_used_bytes=30 * GIB)
STUCK_PROFILER = dict(gpu_util_ratio=1.0, gr_engine_active_ratio=0.0, sm_active_ratio=0.0,
                      tensor_active_ratio=0.0, dram_active_ratio=0.0, fb_used_bytes=70 * GIB)
MEMORY_BOUND = dict(gpu_util_ratio=0.99, gr_engine_active_ratio=0.97, sm_active_ratio=0.9,
                    tensor_active_ratio=0.05, dram_active_ratio=0.75, fb_used_bytes=70 * GIB)
