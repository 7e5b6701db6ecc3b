"""Where in a server.json an entry begins: the line of the package or remote that runs, for SARIF
locations (mcpprobe.fleet.serverjson re-exports `line_of`)."""

from __future__ import annotations

import json
import re

MAX_BYTES = 4 * 1024 * 1024  # as mcpprobe.fleet.serverjson reads the file


def line_of(file: str, chosen: str) -> int | None:
    """The line where `chosen` (`$.packages[1]`, `$.remotes[0]`) begins in the file; None when the
    file or the entry cannot be found. A scanner of the JSON text that decodes only the keys it
    passes; the values it skips are decoded by the json module (so strings, escapes and nesting
    are read as the parser reads them)."""
    match = re.fullmatch(r"\$\.(packages|remotes)\[(\d+)\]", chosen)
    if match is None:
        return None
    try:
        with open(file, encoding="utf-8") as handle:
            text = handle.read(MAX_BYTES)
        position = _find(text, match.group(1), int(match.group(2)))
    except (OSError, ValueError, RecursionError):
        return None
    return None if position is None else text.count("\n", 0, position) + 1


def _find(text: str, key: str, index: int) -> int | None:
    decoder = json.JSONDecoder()
    ws = re.compile(r"[ \t\n\r]*")
    at = ws.match(text, 0).end()  # type: ignore[union-attr]
    if text[at:at + 1] != "{":
        return None
    at += 1
    while True:
        at = ws.match(text, at).end()  # type: ignore[union-attr]
        if text[at:at + 1] != '"':
            return None
        name, at = decoder.raw_decode(text, at)
        at = ws.match(text, at).end()  # type: ignore[union-attr]
        if text[at:at + 1] != ":":
            return None
        at = ws.match(text, at + 1).end()  # type: ignore[union-attr]
        if name == key and text[at:at + 1] == "[":
            at += 1
            for number in range(index + 1):
                at = ws.match(text, at).end()  # type: ignore[union-attr]
                if number == index:
                    return at
                _, at = decoder.raw_decode(text, at)
                at = ws.match(text, at).end()  # type: ignore[union-attr]
                if text[at:at + 1] != ",":
                    return None
                at += 1
            return None
        _, at = decoder.raw_decode(text, at)
        at = ws.match(text, at).end()  # type: ignore[union-attr]
        if text[at:at + 1] != ",":
            return None
        at += 1
