"""The bounds of every number a user hands ridgeline in a config file or on the command line.

One table (:data:`BOUNDS`: key -> whole or not, lowest and highest value, unit) and one check
(:func:`check`): a value is a finite number (a TOML or flag string that reads as one is taken),
inside its documented physical range, or a one-line :class:`~ridgeline.errors.UsageError` naming
where it came from (the file and table, or the flag) and the key. Used by the GPU entries of
``[tool.ridgeline.gpus."NAME"]`` (:func:`ridgeline.analyzer.kernels.gpus.parse_entry`), the diff
thresholds of ``[tool.ridgeline.diff]`` and ``--threshold`` (:func:`ridgeline.analyzer.nightly.diff.thresholds`),
``--batch`` and ``--what-if batch=N``.

Why bounds and not only "finite and > 0": a datasheet figure of 1e300 FLOP/s over 1e-300 B/s is
finite and positive, and makes every ridge and projection infinite. The ranges below hold every
GPU of the bundled catalogue with a wide margin on both sides (docs/refusals.md lists them).

:func:`check_depth` bounds how deep a config table may nest (``[a.a.a...]`` 5,000 deep is valid
TOML that Python cannot print), walking it without recursion.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ridgeline.errors import UsageError


@dataclasses.dataclass(frozen=True)
class Bound:
    low: float
    high: float
    unit: str = ""
    whole: bool = False  # a whole number (a count)
    low_open: bool = False  # ``low`` itself is refused (> low, not >= low)


BOUNDS: dict[str, Bound] = {
    # a GPU ([tool.ridgeline.gpus."NAME"]): the bundled catalogue spans 10-188 SMs, 4-186 GB,
    # 128 GB/s-8 TB/s, 70 GFLOP/s-5 PFLOP/s and 1.2-2.6 GHz
    "sm_count": Bound(1, 10_000, "SMs", whole=True),
    "cu_count": Bound(1, 10_000, "compute units", whole=True),  # an AMD GPU's
    "memory_bytes": Bound(1e8, 1e14, "bytes"),
    "dram_bw_bytes_per_s": Bound(1e9, 1e15, "bytes/s"),
    "peak_flops": Bound(1e9, 1e18, "FLOP/s"),
    "datasheet_clock_hz": Bound(1e7, 1e10, "Hz"),
    # the diff's regression thresholds ([tool.ridgeline.diff], diff --threshold)
    "kernel_time_rel": Bound(0, 1_000, "(0.1 is 10%)"),
    "kernel_time_abs_s": Bound(0, 3_600, "seconds"),
    "total_time_rel": Bound(0, 1_000, "(0.1 is 10%)"),
    "total_time_abs_s": Bound(0, 604_800, "seconds (a week)"),
    "fleet_waste_share": Bound(0, 1, ""),
    "host_waste_share": Bound(0, 1, ""),
    "work_activity_drop": Bound(0, 1, "(a ratio)"),
    "trend_k": Bound(0, 1_000, "MADs"),
    "trend_min_baselines": Bound(1, 10_000, "nights", whole=True),
    "trend_window": Bound(1, 10_000, "nights", whole=True),
    # the classes of GPU time ([tool.ridgeline.classes], ridgeline.analyzer.fleet.classes)
    "class_idle_engine_floor": Bound(0, 1, "(a GR_ENGINE_ACTIVE ratio)"),
    "class_allocated_fb_bytes": Bound(0, 1e14, "bytes"),
    "class_tensor_high": Bound(0, 1, "(a ratio)"),
    "class_fp_pipe_high": Bound(0, 1, "(a ratio)"),
    "class_dram_high": Bound(0, 1, "(a ratio)"),
    "class_io_high_bytes_per_s": Bound(0, 1e13, "bytes/s"),
    "class_sm_low": Bound(0, 1, "(a ratio)"),
    "class_low_activity": Bound(0, 1, "(a ratio)"),
    # the command line
    "batch": Bound(0, 1e7, "sequences", low_open=True),  # --batch
    "what_if_batch": Bound(1, 1e7, "sequences", whole=True),  # --what-if batch=N
}

# a config table nested deeper than this is refused (ridgeline's own tables are 3 deep)
MAX_CONFIG_DEPTH = 16


def _fmt(x: float) -> str:
    if x == int(x) and abs(x) < 1e6:
        return f"{int(x):,}"
    return f"{x:g}"


def describe(key: str) -> str:
    """``"a whole number > 0, from 1 to 10,000 SMs"``: what :func:`check` asks of ``key``."""
    b = BOUNDS[key]
    kind = "a whole number" if b.whole else "a number"
    unit = f" {b.unit}" if b.unit else ""
    if b.low == 0:
        return f"{kind} {'>' if b.low_open else '>='} 0, at most {_fmt(b.high)}{unit}"
    return f"{kind} > 0, from {_fmt(b.low)} to {_fmt(b.high)}{unit}"


def check(key: str, value: Any, *, where: str, name: str | None = None, strings: bool = False) -> float | int:
    """``value`` as a number inside ``BOUNDS[key]``; else UsageError ``"{where}: {name} must be ..., got ..."``.

    ``name`` is how the user spelled the key (``peak_flops.fp16_tensor``; default ``key``). With
    ``strings``, a string that reads as a number (``"0.2"``, from a flag) is taken. ``nan``,
    ``inf``, booleans and anything else are refused."""
    b = BOUNDS[key]
    shown = name or key
    v: Any = value
    if strings and isinstance(v, str):
        try:
            v = float(v.strip())
        except ValueError:
            pass
    ok = not isinstance(v, bool) and isinstance(v, (int, float))
    if ok:
        try:
            f = float(v)
        except OverflowError:  # an integer past any float
            f = math.inf
        ok = math.isfinite(f) and (f > b.low if b.low_open else f >= b.low) and f <= b.high
        if ok and b.whole and f != int(f):
            ok = False
    if not ok:
        raise UsageError(f"{where}: {shown} must be {describe(key)}, got {_shown(value)}")
    return int(f) if b.whole else f


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_depth(table: Any, *, where: str, limit: int = MAX_CONFIG_DEPTH) -> None:
    """UsageError when ``table`` (dicts and lists) nests deeper than ``limit``, naming the path
    down to where it passed the limit; iterative, so any depth is safe to walk."""
    stack: list[tuple[Any, int, tuple]] = [(table, 0, ())]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, dict):
            items = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if depth >= limit:
            dotted = ".".join(str(p)[:20] for p in path[:4])
            raise UsageError(f"{where}: {dotted or 'the table'}... nests more than {limit} levels deep "
                             f"(ridgeline's settings are at most 3 deep)")
        for k, v in items:
            if isinstance(v, (dict, list)):
                stack.append((v, depth + 1, path + (k,)))
