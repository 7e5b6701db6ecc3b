"""Files and values the user gives mcpprobe (`--args @FILE`, `KEY:=JSON`, configs, `--expect`,
`--baseline`, numbers), read into usage errors (exit 2) with one line that names the input, never
a traceback: a file that is not UTF-8, JSON or YAML nested deeper than can be parsed or used, a
number that is not a number (`nan`).

Standard library only: option callbacks use it, so `--help` loads it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from mcpprobe.errors import UsageProblem

# Deeper JSON than this is refused: nothing a person writes by hand, or a server publishes in a
# catalog, comes near it, and everything below (schema validation, comparing snapshots,
# encoding the request) may recurse once per level.
MAX_DEPTH = 200


def read_text(path: str, what: str, *, error: type[UsageProblem] = UsageProblem, encoding: str = "utf-8") -> str:
    """The text of a file the user named; `what` prefixes the message (`--args @f.json`)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise error(f"{what}: cannot read: {exc.strerror or exc}") from None
    return decode(data, what, error=error, encoding=encoding)


def decode(data: bytes, what: str, *, error: type[UsageProblem] = UsageProblem, encoding: str = "utf-8") -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise error(f"{what}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def loads(text: str, what: str, *, error: type[UsageProblem] = UsageProblem,
          parse: Callable[[str], Any] = json.loads) -> Any:
    """JSON from the user (parsed by `parse`): nested deeper than MAX_DEPTH is a usage error.
    json.JSONDecodeError, and whatever else `parse` raises, is left to the caller to word."""
    try:
        value = parse(text)
    except RecursionError:
        raise too_deep(what, error) from None
    check_depth(value, what, error=error)
    return value


def too_deep(what: str, error: type[UsageProblem] = UsageProblem) -> UsageProblem:
    return error(f"{what}: nested more than {MAX_DEPTH} levels deep")


def check_depth(value: Any, what: str, *, error: type[UsageProblem] = UsageProblem) -> None:
    """Refuse a value nested deeper than MAX_DEPTH (measured without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > MAX_DEPTH:
            raise too_deep(what, error)
        stack.extend((child, depth + 1) for child in children)


def finite(value: float | None, what: str) -> float | None:
    """A number from the command line that must be a real number: not nan, not infinite."""
    if value is not None and not math.isfinite(value):
        raise UsageProblem(f"{what}: must be a finite number, not {value!r}")
    return value
