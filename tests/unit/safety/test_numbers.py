"""Numbers from peers read into ranges: whatever JSON value or header text comes, a finite number
within the bounds or None, never an exception."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from mcpprobe.safety.numbers import MAX_DIGITS, digits, finite_or_none, in_range, shown

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 4000), max_value=10 ** 4000)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=5)


@given(JSON_VALUES, st.floats(-1e300, 1e300), st.floats(0, 1e300))
def test_in_range_is_finite_within_the_bounds_or_none(value: object, low: float, width: float) -> None:
    got = in_range(value, low, low + width)
    assert got is None or (math.isfinite(got) and low <= got <= low + width)


def test_in_range_refuses_what_a_peer_sends_past_any_use() -> None:
    assert in_range(10 ** 400, 0, 1e300) is None  # 401 digits: compared exactly, never converted
    assert in_range(json.loads("1e999"), 0, 1e300) is None
    assert in_range(float("nan"), 0, 1e300) is None
    assert in_range(True, 0, 2) is None
    assert in_range("5", 0, 10) is None
    assert in_range(5, 0, 10) == 5.0


@given(st.text(max_size=6000))
def test_digits_never_raises(text: str) -> None:
    got = digits(text, 10 ** 15)
    assert got is None or 0 <= got <= 10 ** 15


def test_digits_reads_at_most_fifteen_of_them() -> None:
    assert digits("9" * 5000, 10 ** 20) is None  # int() would refuse past 4,300 digits
    assert digits("1" * (MAX_DIGITS + 1), 10 ** 20) is None
    assert digits("000120", 1000) == 120
    assert digits("120", 100) is None
    assert digits("١٢", 100) is None  # Arabic-Indic digits are digits to str.isdigit, not to HTTP


@given(JSON_VALUES)
def test_stored_numbers_read_back_finite_or_none(value: object) -> None:
    got = finite_or_none(value)
    assert got is None or math.isfinite(got)
    assert isinstance(shown(value), str)


def test_shown_says_the_size_of_a_huge_integer() -> None:
    assert shown(10 ** 4000) == "an integer of about 4001 digits"
    assert shown(float("inf")) == "a number past the range of a double"  # 1e400 as JSON reads it, not "inf"
    assert shown(float("-inf")) == "a negative number past the range of a double"
    assert shown(float("nan")) == "NaN"
    assert shown(1.5) == "1.5"
