"""Arguments for `call`, `read --template` and `get-prompt`, checked before anything is sent.

KEY=VALUE pairs are parsed once, by the command (`ToolArguments.parse`, `string_arguments`), and a
tool's are coerced by its `inputSchema` (a value stays a string unless the schema says otherwise;
`KEY:=JSON` always takes JSON); `--args` gives a whole JSON object;
`mcpprobe.safety.validation` then checks the result against the schema. Also: closest-name suggestions
and RFC 6570 URI templates (levels 1 to 3, plus prefixes and explode).

Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote

from mcpprobe.errors import UsageProblem

_PAIR = re.compile(r"^(?P<key>[^=:\s][^=]*?)(?P<op>:?=)(?P<value>.*)$", re.DOTALL)


# ----- KEY=VALUE and --args -----


@dataclass(frozen=True)
class Pair:
    key: str
    value: str  # as written
    raw_json: bool  # KEY:=JSON
    decoded: Any = None  # KEY:=JSON: the JSON value (ToolArguments.parse decodes it)


def is_pair(text: str) -> bool:
    return bool(_PAIR.match(text)) and not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", text)


def parse_pair(text: str) -> Pair:
    match = _PAIR.match(text)
    if not match:
        raise UsageProblem(f"expected KEY=VALUE or KEY:=JSON, got {text!r}")
    return Pair(match["key"], match["value"], match["op"] == ":=")


class NotJson(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, JSON (RFC 8259) has no such numbers."""


def _refuse_constant(name: str) -> Any:
    raise NotJson(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def strict_loads(text: str) -> Any:
    """json.loads that refuses NaN and Infinity: a server must never be sent what is not JSON."""
    return json.loads(text, parse_constant=_refuse_constant)


def load_args(spec: str | None, *, stdin: Any = None) -> dict[str, Any]:
    """`--args`: inline JSON, `@file.json`, or `-` for stdin. Must be a JSON object."""
    if spec is None:
        return {}
    from mcpprobe.safety import userinput
    source = "--args"
    if spec == "-":
        source = "--args - (stdin)"
        stream = stdin or sys.stdin
        raw = getattr(stream, "buffer", None)
        text = userinput.decode(raw.read(), source) if raw is not None else stream.read()
    elif spec.startswith("@"):
        source = f"--args {spec}"
        text = userinput.read_text(spec[1:], source)
    else:
        text = spec
    try:
        value = userinput.loads(text, source, parse=strict_loads)
    except json.JSONDecodeError as exc:
        raise UsageProblem(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except NotJson as exc:
        raise UsageProblem(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        from mcpprobe.safety.sanitize import json_kind

        raise UsageProblem(f"{source}: expected a JSON object, got {json_kind(value)}")
    return value


def _types_of(schema: Any, root: Any, depth: int = 0, expanded: set[int] | None = None) -> set[str]:
    """The JSON types a (sub)schema admits, following local $ref and anyOf/oneOf; empty = unknown.

    Each subschema is looked at once (`expanded`): a server's schema may refer to itself many
    times over, and this runs before anything bounds the time it takes."""
    expanded = set() if expanded is None else expanded
    if not isinstance(schema, dict) or depth > 8 or id(schema) in expanded:
        return set()
    expanded.add(id(schema))
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
        return _types_of(target, root, depth + 1, expanded)
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    out: set[str] = set()
    for key in ("anyOf", "oneOf"):
        subs = schema.get(key)
        for sub in subs if isinstance(subs, list) else []:
            out |= _types_of(sub, root, depth + 1, expanded)
    if not out:
        for key in ("enum", "const"):
            values = schema.get(key) if key == "enum" else [schema[key]] if key in schema else None
            if isinstance(values, list):
                out |= {_json_type(v) for v in values}
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


_BOOLEANS = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False, "on": True, "off": False}


def coerce(value: str, types: set[str]) -> Any:
    """One VALUE as the schema's type(s). Left a string when nothing fits: validation explains."""
    if not types or types == {"string"}:
        return value
    if "integer" in types and re.fullmatch(r"[+-]?\d+", value.strip()):
        return int(value)
    if "number" in types:
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            if number == number and number not in (float("inf"), float("-inf")):
                return int(number) if re.fullmatch(r"[+-]?\d+", value.strip()) else number
            if "string" not in types:
                raise NotJson(f"{value.strip()} is not a JSON number (JSON has no NaN or Infinity)")
    if "boolean" in types and value.strip().lower() in _BOOLEANS:
        return _BOOLEANS[value.strip().lower()]
    if "null" in types and value.strip() in ("null", ""):
        return None
    if types & {"array", "object"} or "string" not in types:
        from mcpprobe.safety.userinput import loads

        try:
            parsed = loads(value, "a KEY=VALUE value", parse=strict_loads)
        except json.JSONDecodeError:
            return value
        if _json_type(parsed) in types or (_json_type(parsed) == "integer" and "number" in types):
            return parsed
    return value


def _json_value(pair: Pair) -> Any:
    from mcpprobe.safety.userinput import loads

    try:
        return loads(pair.value, f"{pair.key}:=", parse=strict_loads)
    except json.JSONDecodeError as exc:
        raise UsageProblem(f"{pair.key}:= expects JSON: {exc.msg}") from None
    except NotJson as exc:
        raise UsageProblem(f"{pair.key}:= expects JSON: {exc}") from None


@dataclass(frozen=True)
class ToolArguments:
    """A tool call's arguments as the command line gave them, parsed once there: `--args` (a JSON
    object) and each KEY=VALUE or KEY:=JSON on top, in order. A KEY:=JSON value is decoded when
    parsed (bad JSON is a usage error before anything starts); a KEY=VALUE value stays the text
    it is until `build` coerces it by the tool's inputSchema, which only the server's list gives."""

    base: dict[str, Any] = field(default_factory=dict)
    pairs: tuple[Pair, ...] = ()

    @classmethod
    def parse(cls, texts: Iterable[str], base: dict[str, Any] | None = None) -> ToolArguments:
        pairs = []
        for text in texts:
            pair = parse_pair(text)
            pairs.append(replace(pair, decoded=_json_value(pair)) if pair.raw_json else pair)
        return cls(dict(base or {}), tuple(pairs))

    def build(self, schema: Any) -> dict[str, Any]:
        """--args first, then each pair on top, a KEY=VALUE coerced by its property's schema."""
        args = dict(self.base)
        properties = schema.get("properties") if isinstance(schema, dict) else None
        properties = properties if isinstance(properties, dict) else {}
        for pair in self.pairs:
            if pair.raw_json:
                args[pair.key] = pair.decoded
                continue
            try:
                args[pair.key] = coerce(pair.value, _types_of(properties.get(pair.key), schema))
            except NotJson as exc:
                raise UsageProblem(f"{pair.key}={pair.value}: {exc}") from None
        return args


def string_arguments(texts: Iterable[str]) -> dict[str, str]:
    """Prompt arguments and template variables, parsed once by the command: always strings."""
    out: dict[str, str] = {}
    for text in texts:
        pair = parse_pair(text)
        if pair.raw_json:
            raise UsageProblem(f"{pair.key}:= is for tool arguments; prompt arguments are strings (use {pair.key}=)")
        out[pair.key] = pair.value
    return out


# ----- names -----


def suggestions(name: str, names: list[str], limit: int = 3) -> list[str]:
    """The closest names: case-insensitive equal first, then difflib, then substrings."""
    import difflib

    lowered = {n.lower(): n for n in names}
    out: list[str] = []
    if name.lower() in lowered and lowered[name.lower()] != name:
        out.append(lowered[name.lower()])
    for match in difflib.get_close_matches(name.lower(), list(lowered), n=limit, cutoff=0.6):
        if lowered[match] not in out:
            out.append(lowered[match])
    for candidate in names:
        if len(out) >= limit:
            break
        if len(name) >= 3 and (name.lower() in candidate.lower() or candidate.lower() in name.lower()) \
                and candidate not in out:
            out.append(candidate)
    return out[:limit]


# ----- RFC 6570 URI templates -----

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_OPERATORS = {
    # operator: (first, separator, named, if-empty, allow reserved)
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}
_RESERVED = ":/?#[]@!$&'()*+,;="


@dataclass(frozen=True)
class VarSpec:
    name: str
    prefix: int | None = None
    explode: bool = False


def _parse_expression(body: str, template: str) -> tuple[str, list[VarSpec]]:
    op = body[:1] if body[:1] in "+#./;?&" and body else ""
    specs = []
    for raw in body[len(op):].split(","):
        explode = raw.endswith("*")
        name = raw[:-1] if explode else raw
        prefix = None
        if ":" in name:
            name, _, digits = name.partition(":")
            if not digits.isdigit():
                raise UsageProblem(f"URI template {template!r}: bad prefix in {{{body}}}")
            prefix = int(digits)
        if not re.fullmatch(r"[A-Za-z0-9_.%]+", name):
            raise UsageProblem(f"URI template {template!r}: bad variable name in {{{body}}}")
        specs.append(VarSpec(name, prefix, explode))
    return op, specs


def template_variables(template: str, *, required_only: bool = False) -> list[str]:
    """The variables of `template`; with `required_only`, those of {var} and {+var} expressions,
    whose absence leaves a hole in the URI (query, fragment and path-segment ones may be left out)."""
    names: list[str] = []
    for match in _EXPRESSION.finditer(template):
        op, specs = _parse_expression(match.group(1), template)
        if required_only and op not in ("", "+"):
            continue
        for spec in specs:
            if spec.name not in names:
                names.append(spec.name)
    return names


def _encode(value: str, reserved: bool) -> str:
    return quote(value, safe=_RESERVED if reserved else "")


def expand(template: str, values: dict[str, Any]) -> str:
    """RFC 6570 expansion: strings, lists and dicts; undefined variables expand to nothing."""

    def one(match: re.Match[str]) -> str:
        op, specs = _parse_expression(match.group(1), template)
        first, sep, named, empty, reserved = _OPERATORS[op]
        parts: list[str] = []
        for spec in specs:
            value = values.get(spec.name)
            if value is None or value == [] or value == {}:
                continue
            if isinstance(value, bool):
                value = "true" if value else "false"
            if isinstance(value, int | float):
                value = str(value)
            if isinstance(value, str):
                text = value[: spec.prefix] if spec.prefix is not None else value
                encoded = _encode(text, reserved)
                if named:
                    parts.append(f"{spec.name}={encoded}" if encoded or empty else spec.name)
                else:
                    parts.append(encoded)
                continue
            items = list(value.items()) if isinstance(value, dict) else [(None, v) for v in value]
            if spec.explode:
                for key, item in items:
                    encoded = _encode(str(item), reserved)
                    if key is not None:
                        parts.append(f"{_encode(str(key), reserved)}={encoded}")
                    else:
                        parts.append(f"{spec.name}={encoded}" if named else encoded)
            else:
                flat = []
                for key, item in items:
                    if key is not None:
                        flat.append(_encode(str(key), reserved))
                    flat.append(_encode(str(item), reserved))
                joined = ",".join(flat)
                parts.append(f"{spec.name}={joined}" if named else joined)
        return first + sep.join(parts) if parts else ""

    return _EXPRESSION.sub(one, template)


def template_regex(template: str) -> re.Pattern[str]:
    """A regex that matches URIs this template can produce (lenient: any value per variable)."""
    out = []
    pos = 0
    for match in _EXPRESSION.finditer(template):
        out.append(re.escape(template[pos:match.start()]))
        op, _ = _parse_expression(match.group(1), template)
        out.append({
            "": r"[^/?#]+", "+": r".+?", "#": r"(?:#.*)?", ".": r"(?:\.[^/?#]*)?", "/": r"(?:/[^?#]*)?",
            ";": r"(?:;[^/?#]*)?", "?": r"(?:\?[^#]*)?", "&": r"(?:&[^#]*)?",
        }[op])
        pos = match.end()
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def matches_template(uri: str, template: str) -> bool:
    try:
        return bool(template_regex(template).match(uri))
    except UsageProblem:
        return False
