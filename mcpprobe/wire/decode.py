"""Decoding one message off the wire: JSON text to a value, refused before parsing when it nests
deeper than any stack should go, with NaN and Infinity read (as the SDK reads them) and noted
in what it returns, not in any state kept between messages; and the one way a message is encoded
as a line.

Every transport decodes through `decode_message`, so stdio lines, HTTP bodies and SSE events are
read the same way; none of this knows where the text came from.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from mcpprobe.errors import ProtocolFailure

if TYPE_CHECKING:
    from mcpprobe.wire.transport import Sink


# Deepest nesting of arrays and objects accepted in one message. The stack is never at risk below
# it (not in the parser, the sanitizer, --trace or a renderer: tested at the limit), and a tool
# schema nested a few hundred levels still reaches the schema checks, which report it as one
# unusable tool instead of failing the whole list (serde_json's 128 would refuse the whole page).
MAX_NESTING = 512


class TooDeep(ValueError):
    """A message nested deeper than MAX_NESTING."""


# What decoding a message noted, as flags for Sink.message: NaN or Infinity (not JSON numbers), and
# a JSON number no IEEE 754 double holds (1e400), which Python reads as infinity.
NON_FINITE = 1
HUGE = 2


class Decoded(NamedTuple):
    """One decoded message, whether it held NaN, Infinity or -Infinity (not JSON numbers), and
    whether it held a number past a double's range (read as infinity, written as null)."""

    value: Any
    non_finite: bool
    huge: bool = False

    @property
    def flags(self) -> int:
        return (NON_FINITE if self.non_finite else 0) | (HUGE if self.huge else 0)


def decode_message(raw: bytes | str) -> Decoded:
    """Parse one JSON text; raises ValueError on anything that is not JSON, and TooDeep on a text
    nested more than MAX_NESTING levels, checked on the text before anything parses it.

    NaN, Infinity and -Infinity are read, as the SDK reads them, and noted in the result."""
    import json

    if _nested_too_deep(raw):
        raise TooDeep(f"a message nested more than {MAX_NESTING} levels deep")
    try:
        constants, huge = _may_be_non_finite(raw), _may_be_huge(raw)
        if not constants and not huge:  # the common case: nothing to note, parsed as it is
            return Decoded(json.loads(raw), False)
        noted: list[str] = []
        overflowed: list[str] = []

        def note(name: str) -> float:
            noted.append(name)
            return float(name)

        def number(text: str) -> float:
            value = float(text)
            if math.isinf(value):
                overflowed.append(text[:40])
            return value

        value = json.loads(raw, parse_constant=note if constants else None, parse_float=number if huge else None)
        return Decoded(value, bool(noted), bool(overflowed))
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def _may_be_non_finite(raw: bytes | str) -> bool:
    """Whether the text spells NaN or Infinity anywhere (in a string too): only then is it parsed
    with a hook that notes them."""
    if isinstance(raw, str):
        return "NaN" in raw or "Infinity" in raw
    return b"NaN" in raw or b"Infinity" in raw


_HUGE = re.compile(r"[eE]\+?0*[1-9][0-9]{2}|[0-9]{300}")
_HUGE_BYTES = re.compile(_HUGE.pattern.encode())


def _may_be_huge(raw: bytes | str) -> bool:
    """Whether the text may hold a number past a double's range: an exponent of three digits or
    more, or a run of 300 digits. Only then are floats parsed with a hook that notes infinity."""
    return (_HUGE if isinstance(raw, str) else _HUGE_BYTES).search(raw) is not None  # type: ignore[arg-type]


def encode_line(message: Any) -> bytes:
    """One message as a line of compact UTF-8 JSON; orjson's speed, json's reach (integers past 64
    bits, keys that are not strings)."""
    import orjson

    try:
        return orjson.dumps(message) + b"\n"
    except TypeError:
        import json

        return (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode()


NO_ID = object()


def leading_id(text: str) -> Any:
    """The id of a JSON-RPC message refused before parsing (nested too deep), when it comes first
    among its keys, as every SDK writes it (after "jsonrpc"): so the request it answers can fail at
    once instead of waiting out its timeout. NO_ID when it cannot be read without parsing."""
    import json
    import re

    found = re.match(r'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,200}")\s*,',
                     text[:512])
    if found is None:
        return NO_ID
    try:
        return json.loads(found.group(1))
    except ValueError:
        return NO_ID


def refuse_too_deep(sink: Sink, text: str, error: TooDeep) -> None:
    """A message refused for its nesting fails the request it answers, if its id can be read."""
    request_id = leading_id(text)
    if request_id is not NO_ID:
        sink.request_failed(request_id, ProtocolFailure(
            f"the answer was refused before parsing: {error}", detail={"maxNesting": MAX_NESTING}))


def _nested_too_deep(raw: bytes | str) -> bool:
    from itertools import accumulate, count
    from operator import sub

    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    if data.count(b"[") + data.count(b"{") <= MAX_NESTING:
        return False  # cannot nest deeper than it has brackets: the common case, at C speed
    # Brackets inside strings do not nest. Without escaped backslashes and quotes, a bracket is in a
    # string when an odd number of quotes comes before it. Keep only quotes and brackets; dropping
    # two adjacent quotes changes no bracket's side, and leaves only strings that hold brackets.
    kept = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in kept:
        kept = b"".join(kept.split(b'"')[::2])
    steps = kept.translate(_STEPS)  # an opening bracket is 2, a closing one 0
    # The depth after n brackets is the sum of the first n steps minus n.
    return max(map(sub, accumulate(steps), count(1)), default=0) > MAX_NESTING


_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
