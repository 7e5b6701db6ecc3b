"""Decoding one message: NaN and Infinity are noted in what each decode returns, never in state
that a later message could read; nesting past the limit is refused before parsing."""

from __future__ import annotations

import pytest

from mcpprobe.wire.decode import MAX_NESTING, Decoded, TooDeep, decode_message


@pytest.mark.parametrize("raw, value, non_finite", [
    ('{"id": 1, "result": {}}', {"id": 1, "result": {}}, False),
    (b'{"id": 1, "result": {"x": NaN}}', None, True),
    ('{"result": [Infinity, -Infinity]}', None, True),
    # The words inside a string are text, not numbers.
    ('{"result": {"text": "NaN and Infinity"}}', {"result": {"text": "NaN and Infinity"}}, False),
])
def test_non_finite_numbers_are_noted_in_the_decoded_message(raw: str | bytes, value: object,
                                                             non_finite: bool) -> None:
    decoded = decode_message(raw)
    assert isinstance(decoded, Decoded) and decoded.non_finite is non_finite
    if value is not None:
        assert decoded.value == value


def test_a_message_after_one_with_nan_is_not_noted() -> None:
    assert decode_message('{"x": NaN}').non_finite
    assert not decode_message('{"x": 1}').non_finite


def test_nesting_past_the_limit_is_refused_before_parsing() -> None:
    assert decode_message("[" * MAX_NESTING + "]" * MAX_NESTING).value is not None
    with pytest.raises(TooDeep):
        decode_message("[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1))
    with pytest.raises(ValueError):
        decode_message("not json")


@pytest.mark.parametrize("raw, huge", [
    ('{"x": 1e400}', True),
    ('{"x": -1E+400}', True),
    ('{"x": 1' + "0" * 400 + '.5}', True),  # no exponent: 401 digits are past a double too
    ('{"x": 1e308, "y": 1e-400}', False),  # the largest double is no overflow, and underflow is 0.0
    ('{"x": 1' + "0" * 400 + '}', False),  # an integer of 401 digits is exact in Python (and in --json)
    ('{"text": "1e400"}', False),  # in a string: text
])
def test_a_number_past_a_double_is_noted(raw: str, huge: bool) -> None:
    decoded = decode_message(raw)
    assert decoded.huge is huge and not decoded.non_finite
    assert decoded.flags == (2 if huge else 0)
