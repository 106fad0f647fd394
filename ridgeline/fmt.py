"""One place for how numbers read: SI rates, durations and percentages, in named styles.

Terminal tables, the HTML/Markdown report, plot labels and finding messages each keep the look
their readers know, and those looks are written down here once as :class:`Style` values rather
than as twin functions that drift apart:

* ``TERMINAL``: "-" for a missing value, "us", minutes from 60 s, 3 significant figures (``%.3g``).
* ``HTML``: "n/a", "µs", minutes from 120 s (a 90 s step reads better as seconds), no nanoseconds.
* ``MESSAGE`` (finding messages): "n/a", "us", never minutes or hours (profiles are short), numbers
  rounded by magnitude (``7.9``, ``29.5``, ``295``) so a message reads like a sentence.
* ``PLOT``: "n/a", prefixes up to exa, digits chosen by the caller.

Every renderer and the rules import from here (``ridgeline.rules`` may not import renderers).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Callable

_PREFIXES = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def g3(v: float) -> str:
    """3 significant figures, ``%g`` style: 989, 3.35, 0.0123."""
    return f"{v:.3g}"


def sig3(v: float) -> str:
    """Rounded by magnitude, trailing zeros dropped: 295, 29.5, 7.9, 0.41."""
    av = abs(v)
    if av >= 100:
        return f"{v:.0f}"
    if av >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.2f}".rstrip("0").rstrip(".")


@dataclasses.dataclass(frozen=True)
class Style:
    missing: str  # text for a value that is None (or not finite)
    number: Callable[[float], str]  # how a scaled number is written
    micro: str = "us"  # the microsecond unit
    minutes_from_s: float | None = 60.0  # durations from this many seconds read in minutes/hours; None: never
    nanoseconds: bool = True  # below 1 us: ns (else the value stays in the micro unit)
    zero_duration: str | None = None  # text for a duration of exactly 0 (None: formatted like any value)
    top_prefix: str = "P"  # the largest SI prefix used
    missing_with_unit: bool = False  # SI: "n/a B/s" instead of "n/a"
    adaptive_percent: bool = False  # percents below 1% get one decimal (0.4%)


TERMINAL = Style(missing="-", number=g3, zero_duration="0 s")
HTML = Style(missing="n/a", number=g3, micro="\u00b5s", minutes_from_s=120.0, nanoseconds=False)
MESSAGE = Style(missing="n/a", number=sig3, minutes_from_s=None, missing_with_unit=True, adaptive_percent=True)
PLOT = Style(missing="n/a", number=g3, top_prefix="E")


def _finite(value) -> bool:
    return value is not None and not (isinstance(value, float) and not math.isfinite(value))


def si(value: float | None, unit: str, style: Style = TERMINAL, *, digits: int | None = None) -> str:
    """``3.35e12, "B/s"`` -> ``"3.35 TB/s"``; ``digits`` overrides the style's figures (``%.{d}g``)."""
    if not _finite(value):
        return f"{style.missing} {unit}" if style.missing_with_unit else style.missing
    num = style.number if digits is None else (lambda v: f"{v:.{digits}g}")
    prefixes = _PREFIXES[[p for _s, p in _PREFIXES].index(style.top_prefix):]
    for scale, prefix in prefixes:
        if abs(value) >= scale:
            return f"{num(value / scale)} {prefix}{unit}"
    return f"{num(value)} {unit}"


def duration(value: float | None, style: Style = TERMINAL) -> str:
    """Seconds in the unit that reads best: ``0.0041`` -> ``"4.1 ms"``."""
    if not _finite(value):
        return style.missing
    num, a = style.number, abs(value)
    if style.minutes_from_s is not None:
        if a >= 3600:
            return f"{num(value / 3600)} h"
        if a >= style.minutes_from_s:
            return f"{num(value / 60)} min"
    if a >= 1:
        return f"{num(value)} s"
    if a >= 1e-3:
        return f"{num(value * 1e3)} ms"
    if a >= 1e-6 or not style.nanoseconds:
        if a == 0 and style.zero_duration is not None:
            return style.zero_duration
        return f"{num(value * 1e6)} {style.micro}"
    if a == 0 and style.zero_duration is not None:
        return style.zero_duration
    return f"{num(value * 1e9)} ns"


def percent(ratio: float | None, style: Style = TERMINAL, *, digits: int = 0, missing: str | None = None) -> str:
    """``0.3617`` -> ``"36%"``; ``digits`` decimals (MESSAGE: one decimal below 1%)."""
    if not _finite(ratio):
        return style.missing if missing is None else missing
    pct = ratio * 100
    if style.adaptive_percent:
        return f"{pct:.0f}%" if abs(pct) >= 1 or pct == 0 else f"{pct:.1f}%"
    return f"{pct:.{digits}f}%"


# ------------------------------------------------------------------------------------------
# relative time: inputs without timestamps (dcgmi dmon without --start) are placed at the Unix
# epoch; a date in 1970 is then no date, only the time since the first tick
# ------------------------------------------------------------------------------------------
RELATIVE_BEFORE_YEAR = 1971  # no real capture is this old


def is_relative(t) -> bool:
    """A timestamp of an input without absolute time (placed at 1970-01-01 UTC by the readers)."""
    return t is not None and getattr(t, "year", 9999) < RELATIVE_BEFORE_YEAR


def clock(t, fmt: str = "%m-%d %H:%M", *, seconds: bool = False) -> str:
    """``t`` as ``fmt``, or for relative time the time since the first tick, ``+1:05`` (h:mm,
    ``+1:05:30`` with ``seconds``): never a 1970 date. ``"?"`` for None."""
    if t is None:
        return "?"
    if not is_relative(t):
        return t.strftime(fmt)
    import datetime as _dt

    total = int((t - _dt.datetime(1970, 1, 1, tzinfo=t.tzinfo)).total_seconds())
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"+{h}:{m:02d}:{s:02d}" if seconds else f"+{h}:{m:02d}"
