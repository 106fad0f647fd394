"""Time spellings of nvidia-smi CSV logs: the vocabulary as data, one floor below the reader.

``nvidia-smi --query-gpu=timestamp,...`` writes ``2026/03/11 15:13:16.507`` (local time, no
zone). Logs written by scripts around it carry other spellings; each is a row of
:data:`SPELLINGS`, recognized from a file's first timestamp:

==================  ==================================  =========================================
spelling            example                             read as
==================  ==================================  =========================================
nvidia-smi          ``2026/03/11 15:13:16.507``         local time in ``--tz`` (default UTC)
iso-offset          ``2025-09-08T17:26:50+08:00``       its own offset (``Z``, ``+0800``, ``+08``
                                                        too; a space for the ``T``); ``--tz`` unused
iso-local           ``2025-09-08 17:26:50.5``           local time in ``--tz``
day-month-year      ``03-11-2026 15:13:16`` (``/``,     month first or day first: the file decides
                    ``.`` too)                          when a day above 12 appears anywhere in it
                                                        (``13-11-2026``: day first), else refused
                                                        naming ``--time-format``
==================  ==================================  =========================================

``--time-format`` (:func:`check_time_format`) settles what the data cannot: ``month-first`` or
``day-first`` for the ambiguous spelling, or a strftime pattern (``%d.%m.%Y %H:%M:%S``; with
``%z`` the times carry their offset) for any file's timestamps.
"""

from __future__ import annotations

import dataclasses
import re

from ridgeline.errors import UsageError

MONTH_FIRST = "month-first"
DAY_FIRST = "day-first"
ORDERS = (MONTH_FIRST, DAY_FIRST)


@dataclasses.dataclass(frozen=True)
class Spelling:
    name: str
    pattern: str  # Python regex of one cell (the file's first timestamp)
    example: str
    zone: bool  # the cells carry their own UTC offset


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("nvidia-smi", r"\d{4}/\d{1,2}/\d{1,2} \d{1,2}:\d{2}:\d{2}(?:\.\d+)?", "2026/03/11 15:13:16.507", False),
    Spelling("iso-offset", r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)? ?(?:Z|[+-]\d{2}(?::?\d{2})?)",
             "2025-09-08T17:26:50+08:00", True),
    Spelling("iso-local", r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?", "2025-09-08 17:26:50", False),
    Spelling("day-month-year", r"\d{1,2}([-/.])\d{1,2}\1\d{4}[T ]\d{1,2}:\d{2}:\d{2}(?:\.\d+)?",
             "03-11-2026 15:13:16", False),
)


def check_time_format(value: str | None) -> None:
    """A bad ``--time-format`` is a usage error before any file is read."""
    if value is None or value in ORDERS:
        return
    if "%" not in value:
        raise UsageError(f"--time-format {value!r}: expected {MONTH_FIRST}, {DAY_FIRST} or a strftime pattern "
                         "such as '%d.%m.%Y %H:%M:%S'")
    unknown = re.sub(_DIRECTIVE, "", value)  # polars reads an unknown directive as nothing matching, silently
    if "%" in unknown:
        bad = re.search(r"%.?.?", unknown).group(0)
        raise UsageError(f"--time-format {value!r}: {bad!r} is no strftime directive (e.g. %Y %m %d %H %M %S %.f %z)")


# the strftime directives polars (chrono) reads
_DIRECTIVE = r"%(?:\.?[369]?f|[369]f|:{0,2}z|#z|[YCymbBhdeaAwuUWGgVjDxFvHkIlPpMSRTXrZstn%])"


def spelling_of(cell: str | None) -> Spelling | None:
    """The spelling of one timestamp cell, or None when no row of :data:`SPELLINGS` matches."""
    if cell is None:
        return None
    for sp in SPELLINGS:
        if re.fullmatch(sp.pattern, cell.strip()):
            return sp
    return None


class TimeReader:
    """Reads one file's timestamp cells, piece by piece, in the spelling of its first cell (or
    ``--time-format``): :meth:`parse` gives a piece's UTC times (null = a cell no reading can
    read). The ambiguous day-month-year spelling is read both ways; a reading that fails on
    some cell (a day above 12 read as a month) is out, and :meth:`order` decides once every
    piece is read."""

    def __init__(self, first_cell: str | None, *, tz: str | None, time_format: str | None):
        self.tz = tz
        self.pattern = time_format if time_format not in (None, *ORDERS) else None
        self.forced = time_format if time_format in ORDERS else None
        self.spelling = None if self.pattern else (spelling_of(first_cell) or SPELLINGS[0])
        self.first = (first_cell or "").strip()
        sep = re.search(r"[-/.]", self.first)
        self.sep = sep.group(0) if sep else "-"
        self.fails: dict[str, tuple] = {}  # order -> (line, cell) of the first cell it cannot read
        self.zoned = False  # the cells carried their own offset (--tz unused)

    @property
    def example(self) -> str:
        return self.pattern or self.spelling.example

    @property
    def ambiguous(self) -> bool:
        return self.pattern is None and self.spelling.name == "day-month-year"

    def parse(self, cells, lines=None):
        """One piece's timestamp cells (a String Series) -> ``(times, alt)``: UTC times, null
        where no reading reads the cell; ``alt`` the day-first reading of an ambiguous file not
        settled yet (``times`` then holds the month-first one where it reads), else None.
        ``lines``: the cells' line numbers."""
        import polars as pl

        def dt(t, fmt):
            return t.str.to_datetime(fmt, time_unit="us", strict=False)

        if self.pattern is not None:
            return self._utc(dt(cells.str.strip_chars(), self.pattern)), None
        name = self.spelling.name
        if name == "nvidia-smi":
            return self._utc(dt(cells, "%Y/%m/%d %H:%M:%S%.f")), None
        t = cells.str.replace(r"^(\d{4}-\d{2}-\d{2}) ", "${1}T")
        if name == "iso-local":
            return self._utc(dt(t, "%Y-%m-%dT%H:%M:%S%.f")), None
        if name == "iso-offset":  # Z, +0800, +08 and a space before the offset -> +08:00
            t = (t.str.replace(r" ?Z$", "+00:00").str.replace(r" ([+-]\d{2})", "${1}")
                 .str.replace(r"([+-]\d{2})(\d{2})$", "${1}:${2}").str.replace(r"([+-]\d{2})$", "${1}:00"))
            self.zoned = True
            times = t.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%:z", time_unit="us", time_zone="UTC", strict=False)
            return times.cast(pl.Datetime("us", "UTC")), None
        # day-month-year: both readings (a T between date and time read as a space)
        t = cells.str.replace("T", " ", literal=True)
        s = self.sep
        month = self._utc(dt(t, f"%m{s}%d{s}%Y %H:%M:%S%.f"))
        day = self._utc(dt(t, f"%d{s}%m{s}%Y %H:%M:%S%.f"))
        if self.forced == MONTH_FIRST:
            return month, None
        if self.forced == DAY_FIRST:
            return day, None
        for order, times in ((MONTH_FIRST, month), (DAY_FIRST, day)):
            only_other = times.is_null() & (month.is_not_null() | day.is_not_null())
            if order not in self.fails and only_other.any():
                at = only_other.arg_true()[0]
                self.fails[order] = (None if lines is None else lines[at], cells[at])
        return month.fill_null(day), day

    def _utc(self, times):
        import polars as pl

        if getattr(times.dtype, "time_zone", None):  # a pattern with %z: the cells carried their offset
            self.zoned = True
            return times.dt.convert_time_zone("UTC").cast(pl.Datetime("us", "UTC"))
        return times.dt.replace_time_zone(self.tz or "UTC", ambiguous="earliest", non_existent="null") \
            .dt.convert_time_zone("UTC").cast(pl.Datetime("us", "UTC"))

    def order(self, path) -> str | None:
        """Once every piece is read: ``day-first`` when the ambiguous spelling's month-first
        reading failed somewhere (use the ``alt`` times), ``month-first`` when the day-first one
        did, None when nothing was ambiguous. Refused (InputError) when both read every cell
        (naming ``--time-format``) or each fails somewhere (two orders in one file)."""
        from ridgeline.errors import InputError

        if not self.ambiguous or self.forced:
            return None
        if len(self.fails) == 1:
            return DAY_FIRST if MONTH_FIRST in self.fails else MONTH_FIRST
        if self.fails:
            (l1, c1), (l2, c2) = self.fails[MONTH_FIRST], self.fails[DAY_FIRST]
            raise InputError(path, f"expected one day/month order throughout, got {c1!r} (line {l1}) that reads "
                             f"only day first and {c2!r} (line {l2}) only month first")
        raise InputError(path, f"timestamps like {self.first!r} read as month-day or as day-month and no day above "
                         f"12 settles which; give --time-format {MONTH_FIRST} or --time-format {DAY_FIRST}")

    def note(self, path, opts) -> None:
        """Say how the file's times were read: the order the data settled, an offset that made
        ``--tz`` moot; zone-less times mark ``opts.naive_times`` (the reader's one note on UTC)."""
        if self.ambiguous and not self.forced and len(self.fails) == 1:
            (other, (line, cell)), = self.fails.items()
            order = DAY_FIRST if other == MONTH_FIRST else MONTH_FIRST
            opts.note(f"{path}: timestamps like {self.first!r} read {order.replace('-', ' ')} ({cell!r} on line "
                      f"{line} has a day above 12)")
        if self.zoned:
            if opts.tz is not None:
                opts.note(f"{path}: timestamps carry their UTC offset; --tz {opts.tz} not applied to them")
        else:
            opts.naive_times = True


def read_cells(cells, opts) -> tuple:
    """A whole timestamp column (String Series) read as the nvidia-smi reader reads it:
    ``(UTC times, null where unreadable; an example of the spelling expected)`` (the lenient
    pre-scan's view; the ambiguous order is settled by the reader)."""
    first = cells.drop_nulls().head(1).to_list()
    reader = TimeReader(first[0] if first else None, tz=getattr(opts, "tz", None),
                        time_format=getattr(opts, "time_format", None))
    return reader.parse(cells)[0], reader.example
