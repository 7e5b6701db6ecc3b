"""Tool parameters that travel as HTTP headers too: `x-mcp-header` (SEP-2243, 2026-07-28).

A server marks a property of a tool's inputSchema with `"x-mcp-header": "Region"`; over streamable
HTTP a client then sends the argument's value in an `Mcp-Param-Region` header as well as in the
body, so that gateways can route on it (`basic/transports/streamable-http.mdx`, "Custom Headers
from Tool Parameters"). A tool whose annotations break the rules there is one a client MUST
exclude from the result of tools/list. Pure functions: `declared` reads a schema, `mirrored`
builds the headers of one call, `encode` writes a value the way both Mcp-Name and Mcp-Param-* need.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mcpprobe.safety.sanitize import json_kind

KEY = "x-mcp-header"
PREFIX = "Mcp-Param-"
PRIMITIVE = ("string", "integer", "boolean")
SAFE_INTEGER = 2**53 - 1  # "within the safe range for JavaScript (-2^53+1 to 2^53-1)"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 section 5.6.2: 1*tchar
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

# The rules of "Constraints on x-mcp-header values", in the specification's words.
RULES: dict[str, str] = {
    "not-empty": "MUST NOT be empty",
    "token": "MUST match HTTP field-name token syntax (1*tchar, RFC 9110 Section 5.1)",
    "no-control-characters": "MUST NOT contain control characters, including carriage return (CR, \\r) or "
                             "line feed (LF, \\n)",
    "unique": "MUST be case-insensitively unique among all x-mcp-header values in the inputSchema",
    "primitive-type": "MUST only be applied to parameters with primitive types (integer, string, boolean). "
                      "Parameters with type number are not permitted",
    "statically-reachable": "MUST only be applied to properties that are statically reachable from the schema "
                            "root: reachable via a chain consisting solely of properties keys",
}

# JSON Schema keywords whose values are schemas (or lists or maps of them): every one but
# `properties` leaves the chain of `properties` keys. Instance data (`default`, `const`, `enum`,
# `examples`) is never entered, so a value that looks like an annotation is not one; `$ref` is
# not followed (an annotation reached only through it is not statically reachable either way).
_ONE = frozenset({"items", "contains", "additionalItems", "unevaluatedItems", "additionalProperties",
                  "propertyNames", "unevaluatedProperties", "not", "if", "then", "else", "contentSchema"})
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems", "items"})
_MAP = frozenset({"patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"})


@dataclass(frozen=True)
class HeaderParam:
    """One parameter that travels as a header: where it is in the arguments, and its header's name."""

    path: tuple[str, ...]
    name: str  # the x-mcp-header value
    type: str

    @property
    def header(self) -> str:
        return PREFIX + self.name

    @property
    def where(self) -> str:
        return ".".join(self.path)


@dataclass(frozen=True)
class Invalid:
    """Why a tool's annotations are invalid: the rule broken (a RULES key) and where."""

    rule: str
    message: str

    @property
    def words(self) -> str:
        return RULES[self.rule]


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Each schema position with its chain of `properties` keys from the root (None once another
    keyword was crossed). An explicit stack: a hostile schema's depth costs memory, not the stack."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                stack.extend(((*path, name) if path is not None else None, sub)
                             for name, sub in reversed(list(value.items())))
            elif key in _LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif key in _ONE:
                stack.append((None, value))
            elif key in _MAP and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def declared(schema: Any) -> tuple[HeaderParam, ...] | Invalid:
    """The parameters of an inputSchema that travel as headers, in schema order; or the first rule
    its annotations break (the tool is then to be excluded)."""
    found: list[HeaderParam] = []
    seen: dict[str, str] = {}
    for path, node in _positions(schema):
        if KEY not in node:
            continue
        value = node[KEY]
        if not path:
            where = "the schema root" if path == () else "a position reached through another keyword than properties"
            return Invalid("statically-reachable", f"{KEY} at {where}")
        where = ".".join(path)
        if not isinstance(value, str):
            return Invalid("token", f"property {where!r}: {KEY} is {json_kind(value)}, not a string")
        if value == "":
            return Invalid("not-empty", f"property {where!r}: {KEY} is empty")
        if _CONTROL.search(value):
            return Invalid("no-control-characters", f"property {where!r}: {KEY} {value!r} contains a control character")
        if not _TOKEN.fullmatch(value):
            return Invalid("token", f"property {where!r}: {KEY} {value!r} is not an HTTP field-name token")
        kind = node.get("type")
        if kind not in PRIMITIVE:
            shown = ("no type" if "type" not in node else f"type {kind!r}" if isinstance(kind, str)
                     else f"type {json.dumps(kind, ensure_ascii=False, default=str)}")
            return Invalid("primitive-type", f"property {where!r}: {KEY} {value!r} is on a parameter of {shown}")
        if (lower := value.lower()) in seen:
            return Invalid("unique", f"property {where!r}: {KEY} {value!r} repeats the one of property {seen[lower]!r}")
        seen[lower] = where
        found.append(HeaderParam(path, value, kind))
    return tuple(found)


def value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The argument at `path`, or None when there is none (a step missing, or not an object)."""
    node = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def rendered(value: Any) -> str | None:
    """A value as its header carries it (before encoding): a string as-is, an integer in decimal,
    a boolean as true or false; None for null, and for what has no such form (an object, a list)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return value
    return None


def encode(value: str) -> str:
    """A header value as the specification writes one ("Value Encoding"): visible ASCII and inner
    spaces as they are; anything else (beyond ASCII, a control character, a tab, leading or trailing
    whitespace), and a value that itself looks like the sentinel, as `=?base64?...?=` of its UTF-8."""
    if (value.isascii() and value.isprintable() and value == value.strip()
            and not (value.startswith("=?base64?") and value.endswith("?="))):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8', 'surrogatepass')).decode('ascii')}?="


def mirrored(params: tuple[HeaderParam, ...], arguments: Any) -> dict[str, str]:
    """The Mcp-Param-* headers of one tools/call: one per parameter that has a value; none for a
    parameter that is absent or null ("Client MUST omit the header")."""
    headers: dict[str, str] = {}
    for param in params:
        text = rendered(value_at(arguments, param.path))
        if text is not None:
            headers[param.header] = encode(text)
    return headers


def unsafe_integers(params: tuple[HeaderParam, ...], arguments: Any) -> list[str]:
    """The header parameters whose integer value is outside the range the rule allows."""
    return [param.where for param in params if param.type == "integer"
            and isinstance(value := value_at(arguments, param.path), int) and not isinstance(value, bool)
            and abs(value) > SAFE_INTEGER]
