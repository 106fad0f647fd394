"""Numbers and units as Nsight Compute prints them, converted to base units.

Conventions (tested in ``tests/parsers/ncu/test_ncu_units.py``):

* **Prefixes are SI decimal**, as ncu uses them: ``Kbyte`` = 1,000 bytes, ``Mbyte`` = 1e6,
  ``Gbyte/second`` = 1e9 byte/s, ``usecond`` = 1e-6 s, ``Mhz`` = 1e6 Hz. ncu never prints
  binary prefixes, so ``KiB``/``Kibyte`` are *unknown* units, not 1,024.
* Base units: ``byte``, ``second``, ``hz`` (``cycle/second`` is reported as ``hz``),
  ``cycle``, ``inst`` and the other counting units ncu prints (``warp``, ``thread``, ``sector``,
  ...), ``%`` (percent stays percent) and ``""`` (dimensionless).
  Time: ``nsecond``/``ns`` -> second x 1e-9, ``usecond``/``us`` x 1e-6, ``msecond``/``ms`` x 1e-3.
  Frequency: ``hz``/``Khz``/``Mhz``/``Ghz`` (any capitalisation of ``hz``; a lowercase ``m``
  before ``hz`` means mega, nobody reports millihertz), ``cycle/nsecond`` -> hz x 1e9.
* An unknown unit keeps the value unscaled; :func:`parse_unit` says so (``known=False``) and
  the parser lists it in its notes.
* Numbers: ``n/a``, ``nan``, ``inf`` and empty cells are *not measured* (null, never 0).
  Thousands separators are removed only when the value matches the grouping pattern
  ``^-?\\d{1,3}(,\\d{3})+(\\.\\d+)?$`` (``"1,234,567.00"``). A value such as ``"15,72"`` or
  ``"1.234,56"`` comes from a decimal-comma locale: :func:`is_decimal_comma` spots it so the
  parser can refuse the file ("re-export with LC_ALL=C") instead of guessing.

:func:`parse_number` (one value) and :func:`number_expr` (a polars expression over a string
column) implement the same rules; a property test checks that they agree.
"""

from __future__ import annotations

import dataclasses
import functools
import re

# --- numbers ----------------------------------------------------------------------------

#: cells that mean "not measured" (compared after stripping blanks, case-insensitive)
NULL_TOKENS = ("", "n/a", "na", "nan", "-nan", "+nan", "inf", "-inf", "+inf", "infinity", "-infinity", "+infinity")
#: thousands grouping with commas, C/en_US style
GROUPED_RE = r"^[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]+)?$"
#: a plain decimal number (what remains after removing grouping commas)
NUMBER_RE = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: values only a decimal-comma locale prints
DECIMAL_COMMA_RE = (
    r"^[+-]?[0-9]+,[0-9]{1,2}$"  # 15,72   9,00   0,5
    r"|^[+-]?[0-9]+,[0-9]{4,}$"  # 3,14159
    r"|^[+-]?[0-9]{1,3}(\.[0-9]{3})+,[0-9]+$"  # 1.234,56
    r"|^[+-]?[0-9]{1,3}(\.[0-9]{3}){2,}$"  # 1.234.567
)

_GROUPED = re.compile(GROUPED_RE)
_NUMBER = re.compile(NUMBER_RE)
_DECIMAL_COMMA = re.compile(DECIMAL_COMMA_RE)


def parse_number(text: str | None) -> float | None:
    """Parse one cell as ncu prints it. ``None`` for not-measured cells.

    Raises ``ValueError`` for anything else that is not a number.
    """
    if text is None:
        return None
    s = text.strip()
    if s.lower() in NULL_TOKENS:
        return None
    if _GROUPED.match(s):
        s = s.replace(",", "")
    if not _NUMBER.match(s):
        raise ValueError(f"not a number: {text!r}")
    return float(s)


def is_decimal_comma(text: str | None) -> bool:
    """True when ``text`` can only be a number written with a decimal comma."""
    return bool(text) and bool(_DECIMAL_COMMA.match(text.strip()))


def _clean_expr(col):
    import polars as pl

    s = col.str.strip_chars()
    return pl.when(s.str.contains(GROUPED_RE)).then(s.str.replace_all(",", "", literal=True)).otherwise(s)


def number_expr(col):
    """Polars expression: string column -> Float64 (null where not measured or not a number)."""
    import polars as pl

    s = _clean_expr(col)
    return pl.when(s.str.contains(NUMBER_RE)).then(s.cast(pl.Float64, strict=False)).otherwise(None)


def fast_number_expr(col):
    """Polars expression: the native float cast, non-finite -> null.

    Accepts exactly the cells :data:`NUMBER_RE` accepts (plus the inf/nan spellings, which
    become null as in :func:`parse_number`); cells it rejects (blanks, grouping commas, ``n/a``,
    garbage) come out null, so a column where :func:`needs_slow_expr` is false is fully parsed.
    """
    import polars as pl

    v = col.cast(pl.Float64, strict=False)
    return pl.when(v.is_finite()).then(v)


def needs_slow_expr(col):
    """Polars expression (aggregate): True when some present cell is not a plain number."""
    import polars as pl

    return (col.is_not_null() & col.cast(pl.Float64, strict=False).is_null()).any()


def bad_number_expr(col):
    """Polars expression: True where a cell is present but is not a number."""
    s = col.str.strip_chars()
    is_null = s.is_null() | s.str.to_lowercase().is_in(list(NULL_TOKENS))
    return (~is_null) & ~_clean_expr(col).str.contains(NUMBER_RE).fill_null(False)


def decimal_comma_expr(col):
    """Polars expression: True where a cell can only come from a decimal-comma locale."""
    return col.str.strip_chars().str.contains(DECIMAL_COMMA_RE).fill_null(False)


# --- units ------------------------------------------------------------------------------

#: SI prefix -> power of ten
PREFIXES: dict[str, int] = {
    "p": -12,
    "n": -9,
    "u": -6,
    "\u00b5": -6,  # micro sign
    "m": -3,
    "K": 3,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
}

#: spelling -> canonical base unit
BASES: dict[str, str] = {
    "byte": "byte",
    "bit": "bit",
    "second": "second",
    "s": "second",
    "hz": "hz",
    "cycle": "cycle",
    "inst": "inst",
    "warp": "warp",
    "thread": "thread",
    "block": "block",
    "sector": "sector",
    "register": "register",
    "pass": "pass",
    "cluster": "cluster",
    "SM": "SM",
    "request": "request",
    "wavefront": "wavefront",
    "transaction": "transaction",
    "flop": "flop",
    "op": "op",
    "ops": "op",
    "instance": "instance",
    "context": "context",
    "lane": "lane",
    "%": "%",
}
#: bases that never take a prefix
_UNPREFIXED = {"%", "SM"}


@dataclasses.dataclass(frozen=True)
class UnitInfo:
    """``value_in_base = value * 10**exponent``; ``base`` e.g. ``"byte"``, ``"hz"``, ``"byte/second"``."""

    exponent: int
    base: str
    known: bool = True

    @property
    def factor(self) -> float:
        return 10.0**self.exponent

    def apply(self, value: float) -> float:
        """Scale one value (divides for negative exponents, so 12288 ns -> 1.2288e-05 exactly)."""
        if self.exponent >= 0:
            return value * 10.0**self.exponent
        return value / 10.0 ** (-self.exponent)


def scale_expr(expr, info: UnitInfo):
    """Polars expression scaled to base units like :meth:`UnitInfo.apply` (polars may turn the
    division by a literal into a multiplication by its reciprocal: results can differ from the
    scalar by one ulp)."""
    if info.exponent > 0:
        return expr * 10.0**info.exponent
    if info.exponent < 0:
        return expr / 10.0 ** (-info.exponent)
    return expr


def _part(text: str) -> tuple[int, str] | None:
    if text in BASES:
        return 0, BASES[text]
    if text.lower() == "hz":
        return 0, "hz"
    if len(text) > 1 and text[0] in PREFIXES:
        rest = text[1:]
        if rest.lower() == "hz":  # Khz, Mhz, Ghz, mhz (mega: nobody reports millihertz)
            return (6 if text[0] == "m" else PREFIXES[text[0]]), "hz"
        if rest in BASES and BASES[rest] not in _UNPREFIXED:
            return PREFIXES[text[0]], BASES[rest]
    return None


@functools.lru_cache(maxsize=4096)
def parse_unit(unit: str | None) -> UnitInfo:
    """Split a unit into prefix + base [+ ``/`` denominator] and return the scale to base units.

    >>> parse_unit("Gbyte/second")
    UnitInfo(exponent=9, base='byte/second', known=True)
    >>> parse_unit("cycle/nsecond").base
    'hz'
    """
    u = (unit or "").strip()
    if u == "":
        return UnitInfo(0, "")
    pieces = u.split("/")
    if len(pieces) > 2 or any(p == "" for p in pieces):
        return UnitInfo(0, u, known=False)
    num = _part(pieces[0])
    if num is None:
        return UnitInfo(0, u, known=False)
    if len(pieces) == 1:
        return UnitInfo(num[0], num[1])
    den = _part(pieces[1])
    if den is None:
        return UnitInfo(0, u, known=False)
    base = f"{num[1]}/{den[1]}"
    if base == "cycle/second":
        base = "hz"
    return UnitInfo(num[0] - den[0], base)
