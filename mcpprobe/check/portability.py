"""The portability family: JSON Schema constructs in tool schemas that some MCP hosts reject.

No rule of the specification forbids them, so each is a warning at level MAY, and only with
--level may. No host is named: their rules are not all public, and they change.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mcpprobe.check.context import CheckContext, Verdict, inert, passed, warned

SUBSCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames")
MAX_DEPTH = 50


def constructs(schema: Any) -> Iterator[str]:
    """What in an inputSchema some hosts reject, one phrase each."""
    if isinstance(schema, dict):
        for key in ("oneOf", "anyOf", "allOf"):
            if key in schema:
                yield f"{key} at the top level"
    yield from _walk(schema, "#", 0)


def _walk(node: Any, path: str, depth: int) -> Iterator[str]:
    if depth > MAX_DEPTH or not isinstance(node, dict):
        return
    kind = node.get("type")
    if isinstance(kind, list) and "null" in kind:
        yield f"a type array with null at {path}"
    ref = node.get("$ref")
    if isinstance(ref, str) and not ref.startswith("#/$defs/"):
        yield f"a $ref outside $defs ({inert(ref, 60)}) at {path}"
    for key in SUBSCHEMA_LISTS:
        for index, sub in enumerate(node.get(key) or [] if isinstance(node.get(key), list) else []):
            yield from _sub(sub, f"{path}/{key}/{index}", depth)
    for key in SUBSCHEMA_MAPS:
        value = node.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                yield from _sub(sub, f"{path}/{key}/{name}", depth)
    for key in SUBSCHEMA_ONE:
        if key in node:
            yield from _sub(node[key], f"{path}/{key}", depth)


def _sub(sub: Any, path: str, depth: int) -> Iterator[str]:
    if isinstance(sub, bool) and not path.endswith(("additionalProperties", "items")):
        yield f"a boolean subschema at {path}"
    yield from _walk(sub, path, depth + 1)


async def schema_constructs(ctx: CheckContext) -> Verdict:
    listing = await ctx.listing("tools")
    found: list[str] = []
    for tool in listing.items:
        seen = list(dict.fromkeys(constructs(tool.get("inputSchema"))))
        if seen:
            found.append(f"{inert(tool.get('name'), 60)}: {', '.join(seen[:3])}")
    if found:
        return warned(f"{len(found)} tool(s) use constructs some MCP hosts reject: " + "; ".join(found[:5]))
    return passed(f"no tool of {len(listing.items)} uses a construct known to be rejected by some hosts")


IMPLEMENTS = {"portability.schema-constructs": schema_constructs}
