"""A one-line progress report on stderr for long work (telemetry partitions).

Shown only when stderr is a terminal (pipes, logs and CI stay clean) and not silenced
(``--quiet``); redrawn at most every ``min_interval_s`` and erased when the work is done.
"""

from __future__ import annotations

import sys
import time


class Progress:
    """``progress(done, total, rows)``: ``done`` of ``total`` partitions, ``rows`` read so far."""

    def __init__(self, what: str = "partitions", *, stream=None, enabled: bool | None = None,
                 min_interval_s: float = 0.2, clock=time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.what = what
        self.min_interval_s = min_interval_s
        self.clock = clock
        self.t0 = clock()
        self.last = None
        self.width = 0

    def line(self, done: int, total: int, rows: int) -> str:
        secs = max(self.clock() - self.t0, 1e-9)
        rate = rows / secs
        unit = f"{rate / 1e6:.1f} M" if rate >= 1e6 else f"{rate / 1e3:.0f} k" if rate >= 1e3 else f"{rate:.0f} "
        return f"ridgeline: {done}/{total} {self.what}, {rows:,} rows, {unit}rows/s"

    def __call__(self, done: int, total: int, rows: int) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if done < total and self.last is not None and now - self.last < self.min_interval_s:
            return
        self.last = now
        text = self.line(done, total, rows)
        self.stream.write("\r" + text.ljust(self.width))
        self.width = len(text)
        if done >= total:
            self.stream.write("\r" + " " * self.width + "\r")
        self.stream.flush()
