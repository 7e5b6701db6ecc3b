"""Validate one catalog item against the spec's schema for the negotiated protocol version.

The SDK's generated wire models (`mcp_types`) are the schema. They are imported on first use
only: `--help` and completion must stay free of them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

ITEM_MODELS = {
    "tools": "Tool",
    "resources": "Resource",
    "templates": "ResourceTemplate",
    "prompts": "Prompt",
}


@cache
def _adapter(kind: str, modern: bool) -> Any:
    from pydantic import TypeAdapter

    if modern:
        import mcp_types._v2026_07_28 as wire
    else:
        import mcp_types._v2025_11_25 as wire
    return TypeAdapter(getattr(wire, ITEM_MODELS[kind]))


def preload() -> None:
    """Import the models ahead of need (run in a thread while the server boots)."""
    for kind in ITEM_MODELS:
        _adapter(kind, False)


def item_errors(kind: str, item: Any, *, modern: bool) -> list[str]:
    """Human-readable schema violations of one item; empty when it is valid."""
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
