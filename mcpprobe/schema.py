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


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)


def _one_of(*choices: str) -> Check:
    return lambda value: value in choices


def _list_of(check: Check) -> Check:
    return lambda value: isinstance(value, list) and all(map(check, value))


def _obj(required: dict[str, Check], optional: dict[str, Check]) -> Check:
    """A JSON object with these fields. Optional fields may be null; unknown keys are ignored,
    as the wire models ignore them."""
    needed = tuple(required.items())

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return False
        for key, field_check in needed:
            if key not in value or not field_check(value[key]):
                return False
        # The item's own keys, not every optional one: an item has a few of the many allowed.
        for key, item in value.items():
            check_optional = optional.get(key)
            if check_optional is not None and item is not None and not check_optional(item):
                return False
        return True

    return check


def _priority(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


ICON = _obj({"src": _is_str}, {"mimeType": _is_str, "sizes": _list_of(_is_str), "theme": _one_of("light", "dark")})
ANNOTATIONS = _obj({}, {"audience": _list_of(_one_of("assistant", "user")), "lastModified": _is_str,
                        "priority": _priority})
TOOL_ANNOTATIONS = _obj({}, {"title": _is_str, "readOnlyHint": _is_bool, "destructiveHint": _is_bool,
                             "idempotentHint": _is_bool, "openWorldHint": _is_bool})
PROMPT_ARGUMENT = _obj({"name": _is_str}, {"title": _is_str, "description": _is_str, "required": _is_bool})
def _schema_value(value: Any) -> bool:
    return isinstance(value, dict | bool)


_PROPERTIES = lambda value: isinstance(value, dict) and all(map(_schema_value, value.values()))  # noqa: E731

_SCHEMA_2025 = _obj({"type": _one_of("object")}, {"$schema": _is_str, "properties": _PROPERTIES,
                                                  "required": _list_of(_is_str)})
_BASE = {"title": _is_str, "description": _is_str, "icons": _list_of(ICON), "_meta": _is_dict}

FAST: dict[tuple[str, bool], Check] = {
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
_NULLABLE_INT = lambda value: value is None or _is_int(value)  # noqa: E731
FAST[("tasks", False)] = lambda value: _obj(
    {"taskId": _is_str, "status": _one_of("working", "input_required", "completed", "failed", "cancelled"),
     "createdAt": _is_str, "lastUpdatedAt": _is_str},
    {"statusMessage": _is_str, "pollInterval": _is_int})(value) and "ttl" in value and _NULLABLE_INT(value["ttl"])
# Resources, templates and prompts have the same shape in both eras; tasks exist only in 2025-11-25.
for _kind in ("resources", "templates", "prompts", "tasks"):
    FAST[(_kind, True)] = FAST[(_kind, False)]


@cache
def _adapter(kind: str, modern: bool) -> Any:
    import importlib

    from pydantic import TypeAdapter

    wire = importlib.import_module("mcp_types._v2026_07_28" if modern and kind != "tasks" else "mcp_types._v2025_11_25")
    return TypeAdapter(getattr(wire, ITEM_MODELS[kind]))


def surely_valid(kind: str, item: Any, *, modern: bool) -> bool:
    """The strict check: True only for items the SDK's models accept too."""
    return FAST[(kind, modern)](item)


def item_errors(kind: str, item: Any, *, modern: bool) -> list[str]:
    """Human-readable schema violations of one item; empty when it is valid."""
    if surely_valid(kind, item, modern=modern):
        return []
    from pydantic import ValidationError

    if not isinstance(item, dict):
        return [f"not a JSON object but {type(item).__name__}"]
    try:
        _adapter(kind, modern).validate_python(item, by_name=False)
    except ValidationError as exc:
        errors = []
        for error in exc.errors(include_url=False)[:5]:
            where = ".".join(str(part) for part in error["loc"]) or "(item)"
            errors.append(f"{where}: {error['msg']}")
        return errors
    return []
