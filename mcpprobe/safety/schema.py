"""Validate one catalog item against the spec's schema for the negotiated protocol version.

The SDK's generated wire models (`mcp_types`) are the schema, and they have the last word. But
importing them costs a few hundred milliseconds, more than a whole probe of a healthy server
over HTTP. So a strict check written from those same models runs first: an item it accepts is
valid for the SDK too (a property test proves that direction), and only an item it doubts goes
to the SDK's models, which then decide and explain. A healthy server never pays for the import.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

ITEM_MODELS = {
    "tools": "Tool",
    "resources": "Resource",
    "templates": "ResourceTemplate",
    "prompts": "Prompt",
    "tasks": "Task",  # 2025-11-25 only: tasks/list
}

Check = Callable[[Any], bool]


class Node:
    """One JSON value's check, as data: `compile()` writes the whole tree as one Python function
    (inline isinstance tests and loops, no call per field), about 3x faster than nested closures,
    which matters at tens of thousands of items. Called directly, a node compiles itself once."""

    __slots__ = ("op", "args", "_compiled")

    def __init__(self, op: str, *args: Any) -> None:
        self.op, self.args = op, args
        self._compiled: Check | None = None

    def compiled(self) -> Check:
        """The tree as one function, compiled at the first use and kept: the only cache of it."""
        if self._compiled is None:
            self._compiled = _compile(self)
        return self._compiled

    def __call__(self, value: Any) -> bool:
        return (self._compiled or self.compiled())(value)


_is_str = Node("str")
_is_bool = Node("bool")
_is_int = Node("int")  # not a bool
_is_dict = Node("dict")


def _one_of(*choices: str) -> Node:
    return Node("one_of", choices)


def _list_of(check: Node) -> Node:
    return Node("list_of", check)


def _obj(required: dict[str, Node], optional: dict[str, Node]) -> Node:
    """A JSON object with these fields. Optional fields may be null; unknown keys are ignored,
    as the wire models ignore them."""
    return Node("obj", tuple(required.items()), tuple(optional.items()))


def _priority(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def _compile(node: Node) -> Check:
    """`node` as the source of one function, `return False` at the first field that fails."""
    constants: dict[str, Any] = {"_priority": _priority}
    lines = ["def check(v0):"]

    def emit(node: Node, var: str, depth: int, indent: str) -> None:
        op, args = node.op, node.args
        if op == "str":
            lines.append(f"{indent}if not isinstance({var}, str): return False")
        elif op == "bool":
            lines.append(f"{indent}if not isinstance({var}, bool): return False")
        elif op == "int":
            lines.append(f"{indent}if not isinstance({var}, int) or isinstance({var}, bool): return False")
        elif op == "dict":
            lines.append(f"{indent}if not isinstance({var}, dict): return False")
        elif op == "priority":
            lines.append(f"{indent}if not _priority({var}): return False")
        elif op == "one_of":
            name = f"c{len(constants)}"
            constants[name] = args[0]
            lines.append(f"{indent}if {var} not in {name}: return False")
        elif op == "schema_map":  # an object whose every value is a JSON Schema (an object or a boolean)
            item = f"v{depth + 1}"
            lines.append(f"{indent}if not isinstance({var}, dict): return False")
            lines.append(f"{indent}for {item} in {var}.values():")
            lines.append(f"{indent}    if not isinstance({item}, dict | bool): return False")
        elif op == "list_of":
            item = f"v{depth + 1}"
            lines.append(f"{indent}if not isinstance({var}, list): return False")
            lines.append(f"{indent}for {item} in {var}:")
            emit(args[0], item, depth + 1, indent + "    ")
        elif op == "obj":
            required, optional = args
            field = f"v{depth + 1}"
            lines.append(f"{indent}if not isinstance({var}, dict): return False")
            for key, check in required:
                lines.append(f"{indent}if {key!r} not in {var}: return False")
                lines.append(f"{indent}{field} = {var}[{key!r}]")
                emit(check, field, depth + 1, indent)
            for key, check in optional:
                lines.append(f"{indent}{field} = {var}.get({key!r})")
                lines.append(f"{indent}if {field} is not None:")
                emit(check, field, depth + 1, indent + "    ")
        else:
            raise ValueError(f"unknown check {op!r}")

    emit(node, "v0", 0, "    ")
    lines.append("    return True")
    exec("\n".join(lines), constants)  # noqa: S102 - our own source, built from the tables below
    check: Check = constants["check"]  # the `def check(v0)` just executed
    return check


ICON = _obj({"src": _is_str}, {"mimeType": _is_str, "sizes": _list_of(_is_str), "theme": _one_of("light", "dark")})
ANNOTATIONS = _obj({}, {"audience": _list_of(_one_of("assistant", "user")), "lastModified": _is_str,
                        "priority": Node("priority")})
TOOL_ANNOTATIONS = _obj({}, {"title": _is_str, "readOnlyHint": _is_bool, "destructiveHint": _is_bool,
                             "idempotentHint": _is_bool, "openWorldHint": _is_bool})
PROMPT_ARGUMENT = _obj({"name": _is_str}, {"title": _is_str, "description": _is_str, "required": _is_bool})
_PROPERTIES = Node("schema_map")

_SCHEMA_2025 = _obj({"type": _one_of("object")}, {"$schema": _is_str, "properties": _PROPERTIES,
                                                  "required": _list_of(_is_str)})
_BASE = {"title": _is_str, "description": _is_str, "icons": _list_of(ICON), "_meta": _is_dict}

_TREES: dict[tuple[str, bool], Node] = {
    ("tools", False): _obj({"name": _is_str, "inputSchema": _SCHEMA_2025}, {
        **_BASE, "outputSchema": _SCHEMA_2025, "annotations": TOOL_ANNOTATIONS,
        "execution": _obj({}, {"taskSupport": _one_of("forbidden", "optional", "required")})}),
    ("tools", True): _obj({"name": _is_str, "inputSchema": _obj({"type": _one_of("object")}, {"$schema": _is_str})}, {
        **_BASE, "outputSchema": _obj({}, {"$schema": _is_str}), "annotations": TOOL_ANNOTATIONS}),
    ("resources", False): _obj({"name": _is_str, "uri": _is_str}, {
        **_BASE, "mimeType": _is_str, "size": _is_int, "annotations": ANNOTATIONS}),
    ("templates", False): _obj({"name": _is_str, "uriTemplate": _is_str}, {
        **_BASE, "mimeType": _is_str, "annotations": ANNOTATIONS}),
    ("prompts", False): _obj({"name": _is_str}, {**_BASE, "arguments": _list_of(PROMPT_ARGUMENT)}),
}
# Compiled when first used: a command that lists no tools never compiles the tools check.
FAST: dict[tuple[str, bool], Check] = dict(_TREES)
_TASK = _obj({"taskId": _is_str,
              "status": _one_of("working", "input_required", "completed", "failed", "cancelled"),
              "createdAt": _is_str, "lastUpdatedAt": _is_str},
             {"statusMessage": _is_str, "pollInterval": _is_int})


def _task(value: Any) -> bool:
    """A Task of 2025-11-25: `ttl` is required, and an int or null."""
    return _TASK(value) and "ttl" in value and (value["ttl"] is None or _is_int(value["ttl"]))


FAST[("tasks", False)] = _task
# Resources, templates and prompts have the same shape in both eras; tasks exist only in 2025-11-25.
for _kind in ("resources", "templates", "prompts", "tasks"):
    FAST[(_kind, True)] = FAST[(_kind, False)]


@cache
def _adapter(kind: str, modern: bool) -> Any:
    import importlib

    from pydantic import TypeAdapter

    wire = importlib.import_module("mcp_types._v2026_07_28" if modern and kind != "tasks" else "mcp_types._v2025_11_25")
    return TypeAdapter(getattr(wire, ITEM_MODELS[kind]))


def fast_check(kind: str, *, modern: bool) -> Check:
    """The strict check of one kind as one function (compiled at its first use): True only for
    items the SDK's models accept too."""
    check = FAST[(kind, modern)]
    return check.compiled() if isinstance(check, Node) else check


def surely_valid(kind: str, item: Any, *, modern: bool) -> bool:
    """The strict check: True only for items the SDK's models accept too."""
    return fast_check(kind, modern=modern)(item)


def item_errors(kind: str, item: Any, *, modern: bool) -> list[str]:
    """Human-readable schema violations of one item; empty when it is valid."""
    if fast_check(kind, modern=modern)(item):
        return []
    from pydantic import ValidationError

    if not isinstance(item, dict):
        from mcpprobe.safety.sanitize import json_kind

        return [f"not a JSON object but {json_kind(item)}"]
    try:
        _adapter(kind, modern).validate_python(item, by_name=False)
    except ValidationError as exc:
        errors = []
        for error in exc.errors(include_url=False)[:5]:
            where = ".".join(str(part) for part in error["loc"]) or "(item)"
            errors.append(f"{where}: {error['msg']}")
        return errors
    return []
