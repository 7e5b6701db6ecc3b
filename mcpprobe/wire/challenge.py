"""The `WWW-Authenticate` header, parsed into challenges (RFC 9110 section 11.6.1).

    WWW-Authenticate: Bearer realm="mcp", resource_metadata="https://x/.well-known/...", scope="a b"

A header may carry several challenges (`Basic realm="x", Bearer scope="y"`); each is a scheme and
either a token68 or comma-separated `name=value` parameters whose values are tokens or quoted
strings. Parameter names are case-insensitive. Pure standard library: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@dataclass
class Challenge:
    scheme: str
    params: dict[str, str] = field(default_factory=dict)
    token68: str | None = None

    def get(self, name: str) -> str | None:
        return self.params.get(name.lower())

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"scheme": self.scheme, "params": dict(self.params)}
        if self.token68 is not None:
            data["token68"] = self.token68
        return data


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def skip(self, chars: str = " \t") -> None:
        while self.pos < len(self.text) and self.text[self.pos] in chars:
            self.pos += 1

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def match(self, pattern: re.Pattern[str]) -> str | None:
        found = pattern.match(self.text, self.pos)
        if not found:
            return None
        self.pos = found.end()
        return found.group(0)

    def quoted(self) -> str:
        assert self.peek() == '"'
        self.pos += 1
        out = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char == "\\" and self.pos + 1 < len(self.text):
                out.append(self.text[self.pos + 1])
                self.pos += 2
                continue
            self.pos += 1
            if char == '"':
                return "".join(out)
            out.append(char)
        return "".join(out)  # unterminated: take the rest, leniently


def parse_www_authenticate(header: str) -> list[Challenge]:
    """Every challenge in the header, in order; lenient with malformed input (never raises)."""
    reader = _Reader(header or "")
    challenges: list[Challenge] = []
    current: Challenge | None = None
    while True:
        reader.skip(" \t,")
        if not reader.peek():
            break
        start = reader.pos
        token = reader.match(_TOKEN)
        if token is None:
            reader.pos += 1  # garbage: skip a character
            continue
        reader.skip()
        if reader.peek() == "=" and current is not None and not reader.text.startswith("==", reader.pos):
            # name=value for the current challenge
            reader.pos += 1
            reader.skip()
            value = reader.quoted() if reader.peek() == '"' else reader.match(_TOKEN) or ""
            current.params[token.lower()] = value
            continue
        # a new challenge: scheme [token68 | params]
        current = Challenge(scheme=token)
        challenges.append(current)
        after_scheme = reader.pos
        if _starts_param(reader.text, after_scheme):
            continue
        token68 = reader.match(_TOKEN68)
        if token68 is not None:
            reader.skip()
            if reader.peek() in ("", ","):
                current.token68 = token68
                continue
            reader.pos = after_scheme
        if reader.pos == start:
            reader.pos += 1
    return challenges


def _starts_param(text: str, pos: int) -> bool:
    """Whether `name = value` starts at pos (as opposed to a token68, which may end in '=')."""
    found = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+[ \t]*=[ \t]*([^=, \t]|$)").match(text, pos)
    return found is not None and text[found.end(0) - 1:found.end(0)] != ","


def bearer(challenges: list[Challenge]) -> Challenge | None:
    """The Bearer challenge, if any (scheme names are case-insensitive)."""
    return next((c for c in challenges if c.scheme.lower() == "bearer"), None)
