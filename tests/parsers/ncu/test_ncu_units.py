"""Numbers and units as ncu prints them (ridgeline.units): SI prefixes, grouping, locales."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ridgeline.units import (
    bad_number_expr,
    fast_number_expr,
    decimal_comma_expr,
    is_decimal_comma,
    number_expr,
    parse_number,
    parse_unit,
)


@pytest.mark.parametrize(
    "unit, factor, base",
    [
        ("byte", 1, "byte"),
        ("Kbyte", 1e3, "byte"),  # SI: 1,000 bytes, not 1,024
        ("Mbyte", 1e6, "byte"),
        ("Gbyte", 1e9, "byte"),
        ("Tbyte", 1e12, "byte"),
        ("nsecond", 1e-9, "second"),
        ("usecond", 1e-6, "second"),
        ("msecond", 1e-3, "second"),
        ("second", 1, "second"),
        ("ns", 1e-9, "second"),
        ("us", 1e-6, "second"),
        ("ms", 1e-3, "second"),
        ("hz", 1, "hz"),
        ("Khz", 1e3, "hz"),
        ("Mhz", 1e6, "hz"),
        ("Ghz", 1e9, "hz"),
        ("mhz", 1e6, "hz"),  # nobody reports millihertz
        ("cycle/second", 1, "hz"),
        ("cycle/nsecond", 1e9, "hz"),
        ("cycle/usecond", 1e6, "hz"),
        ("byte/second", 1, "byte/second"),
        ("Gbyte/second", 1e9, "byte/second"),
        ("Kbyte/cycle", 1e3, "byte/cycle"),
        ("inst/cycle", 1, "inst/cycle"),
        ("register/thread", 1, "register/thread"),
        ("%", 1, "%"),
        ("cycle", 1, "cycle"),
        ("inst", 1, "inst"),
        ("", 1, ""),
        ("SM", 1, "SM"),
    ],
)
def test_known_units(unit, factor, base):
    info = parse_unit(unit)
    assert info.known
    assert info.base == base
    assert info.factor == pytest.approx(factor)


@pytest.mark.parametrize("unit", ["KiB", "Kibyte", "bytes", "furlong", "byte/", "/second", "Xbyte", "K%", "a/b/c", "kSM"])
def test_unknown_units_are_flagged_and_unscaled(unit):
    info = parse_unit(unit)
    assert not info.known
    assert info.factor == 1.0


def test_apply_divides_for_small_prefixes():
    # 12,288 ns must give exactly 1.2288e-05 s (division, not multiplication by 1e-9)
    assert parse_unit("ns").apply(12288.0) == 12288 / 1e9
    assert parse_unit("Kbyte").apply(167.936) == pytest.approx(167936.0)


@pytest.mark.parametrize(
    "text, value",
    [
        ("1,234,567.00", 1234567.0),
        ("5,318,969,728.00", 5318969728.0),
        ("795,373,665.48", 795373665.48),
        ("-1,000", -1000.0),
        ("12", 12.0),
        ("0.021311475409836064", 0.021311475409836064),
        ("1e3", 1000.0),
        ("  42.5 ", 42.5),
        ("100.39", 100.39),
        (".5", 0.5),
    ],
)
def test_numbers(text, value):
    assert parse_number(text) == value


@pytest.mark.parametrize("text", ["n/a", "N/A", "", "   ", None, "nan", "inf", "-inf"])
def test_not_measured_is_null(text):
    assert parse_number(text) is None


@pytest.mark.parametrize("text", ["abc", "1,23", "12,34,567", "1.2.3", "1,234.5,6", "0x10", "1_000", "١٢", "--1", "5 %"])
def test_not_numbers_raise(text):
    with pytest.raises(ValueError):
        parse_number(text)


@pytest.mark.parametrize("text", ["15,72", "9,00", "0,5", "1.234,56", "1.234.567", "3,14159"])
def test_decimal_comma_detected(text):
    assert is_decimal_comma(text)


@pytest.mark.parametrize("text", ["1,234", "1,234,567.00", "15.72", "1.234", "abc", "", "12"])
def test_decimal_comma_not_detected(text):
    assert not is_decimal_comma(text)


def _vector(values):
    s = pl.DataFrame({"v": values}, schema={"v": pl.String})
    return s.select(
        number_expr(pl.col("v")).alias("n"), bad_number_expr(pl.col("v")).alias("bad"), decimal_comma_expr(pl.col("v")).alias("dc")
    )


def test_vector_matches_examples():
    out = _vector(["1,234,567.00", "n/a", None, "abc", "15,72", "7"])
    assert out["n"].to_list() == [1234567.0, None, None, None, None, 7.0]
    assert out["bad"].to_list() == [False, False, False, True, True, False]
    assert out["dc"].to_list() == [False, False, False, False, True, False]


def _grouped(n: int) -> str:
    return f"{n:,}"


cell = st.one_of(
    st.integers(-(10**15), 10**15).map(str),
    st.integers(0, 10**15).map(_grouped),
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.floats(min_value=0, max_value=1e12, allow_nan=False).map(lambda f: f"{f:,.2f}"),
    st.sampled_from(["n/a", "", "nan", "1,23", "9,00", "1.234,56", "abc", " 12 ", "1e-3", "-.5", "Infinity", "+inf", "NaN", "5.", "+.5"]),
    st.text(alphabet="0123456789,.-+e ", max_size=12),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(cell, min_size=1, max_size=20))
def test_scalar_and_vector_parsers_agree(values):
    out = _vector(values)
    fast = pl.DataFrame({"v": values}, schema={"v": pl.String}).select(fast_number_expr(pl.col("v"))).to_series().to_list()
    for text, n, bad, f in zip(values, out["n"].to_list(), out["bad"].to_list(), fast):
        # the native cast is the fast path: where it reads a cell it must agree with the full parser
        if f is not None:
            assert n is not None and f == pytest.approx(n, rel=1e-15, abs=0), text
        try:
            expected = parse_number(text)
            expected_bad = False
        except ValueError:
            expected, expected_bad = None, True
        assert bad == expected_bad, text
        if expected is None:
            assert n is None, text
        else:
            assert n == pytest.approx(expected, rel=1e-15, abs=0), text


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10**15), st.integers(0, 99))
def test_grouped_round_trip(whole, cents):
    text = f"{whole:,}.{cents:02d}"
    assert parse_number(text) == pytest.approx(whole + cents / 100)
    assert not is_decimal_comma(text)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["", "K", "M", "G", "T", "n", "u", "m"]), st.sampled_from(["byte", "second", "hz", "cycle", "inst"]))
def test_prefix_scales_are_powers_of_ten(prefix, base):
    info = parse_unit(prefix + base)
    exp = {"": 0, "K": 3, "M": 6, "G": 9, "T": 12, "n": -9, "u": -6, "m": -3}[prefix]
    if base == "hz" and prefix == "m":
        exp = 6
    assert info.known
    assert math.isclose(info.factor, 10.0**exp)
