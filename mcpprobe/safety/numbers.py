"""Numbers a peer controls, read into a range before anything computes with them.

A JSON number has no size limit and Python's parser reads `1e400` as infinity and a 5,000-digit
integer as an int that no float can hold (and that `int()` refuses to read from text). A delay, a
lifetime, a poll interval or a progress value taken as given could crash a conversion
(OverflowError, ValueError), never end a wait (infinity), or never compare true (NaN). Every such
number goes through `in_range` (a JSON value) or `digits` (a header or an SSE field): what comes
back is a finite float within the bounds, or None, and the caller reports the None as a finding
and takes its default.
"""

from __future__ import annotations

import math
from typing import Any

# The longest run of digits read from a header or an SSE field: 15 digits are more milliseconds
# than 30,000 years, and far below the 4,300 digits at which int() refuses a text.
MAX_DIGITS = 15


def in_range(value: Any, low: float, high: float) -> float | None:
    """`value` as a float when it is a JSON number (not a bool), finite, and within [low, high];
    None otherwise. Huge integers are compared exactly, never converted first."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if not low <= value <= high:
        return None
    return float(value)


def digits(text: str, high: float) -> int | None:
    """A field of ASCII digits (delay-seconds, `retry:`) as an int no larger than `high`; None when it
    is not digits, has more than MAX_DIGITS of them, or is too large."""
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit() or len(text.lstrip("0")) > MAX_DIGITS:
        return None
    number = int(text)
    return number if number <= high else None


def finite_or_none(value: Any) -> float | None:
    """A stored number read back: a finite float, or None for anything else (NaN, Infinity, text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def shown(value: Any) -> str:
    """A peer's number for a message: as it came when short, else its size (str() of an integer
    past 4,300 digits raises, and a 400-digit one says nothing)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10 ** 30:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    if isinstance(value, float) and not math.isfinite(value):
        # What the JSON said (1e400, or the non-JSON Infinity and NaN), not Python's inf and nan.
        if math.isnan(value):
            return "NaN"
        return f"a {'negative ' if value < 0 else ''}number past the range of a double"
    return repr(value)[:40]
