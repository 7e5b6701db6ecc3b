"""Which capability each request needs: the one table behind "never send what was not declared"."""

from __future__ import annotations

from typing import Any

from mcpprobe.client.obligations import PARTS
from mcpprobe.errors import Refused

# method -> (capability, sub-capability or None); a dotted sub-capability is a path of objects. Read
# from the one table of what each capability obliges (mcpprobe.client.obligations).
REQUIRES: dict[str, tuple[str, str | None]] = {
    part.method: (part.capability, part.sub) for part in PARTS.values() if part.capability is not None}

# The tasks extension of the 2026-07-28 era (SEP-2663): declared under `extensions`, it serves these
# methods instead of the 2025-11-25 `tasks` capability (which a server MUST NOT advertise with it).
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
EXTENSION_REQUIRES: dict[str, str] = {
    "tasks/get": TASKS_EXTENSION, "tasks/update": TASKS_EXTENSION, "tasks/cancel": TASKS_EXTENSION}

# method -> the sub-capability of `tasks` that allows augmenting it with a task (tasks.mdx, "Capabilities").
TASK_REQUESTS: dict[str, str] = {"tools/call": "requests.tools.call"}
# Capabilities whose sub-capabilities are objects (`"list": {}`), not booleans (`"subscribe": true`).
OBJECT_FLAGS = frozenset({"tasks"})


def declared(capabilities: dict[str, Any], name: str, sub: str | None = None) -> bool:
    """True when the server declared `name` (any object, even empty) and, if given, `sub` as true
    (or, under `tasks`, as an object: `tasks.requests.tools.call` is `{"requests": {"tools": {"call": {}}}}`)."""
    value: Any = capabilities.get(name)
    if not isinstance(value, dict):
        return False
    if sub is None:
        return True
    *path, last = sub.split(".")
    for part in path:
        value = value.get(part)
        if not isinstance(value, dict):
            return False
    flag = value.get(last)
    return flag is True or (name in OBJECT_FLAGS and isinstance(flag, dict))


def extension(capabilities: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The settings of extension `name` as the server declared it under `extensions` (an object,
    empty for none), or None when it did not."""
    extensions = capabilities.get("extensions")
    settings = extensions.get(name) if isinstance(extensions, dict) else None
    return settings if isinstance(settings, dict) else None


def missing_for(capabilities: dict[str, Any], method: str) -> str | None:
    """The capability `method` needs that the server did not declare, spelled as in the spec."""
    ext = EXTENSION_REQUIRES.get(method)
    if ext is not None and extension(capabilities, ext) is not None:
        return None
    need = REQUIRES.get(method)
    if need is None and ext is not None:
        return f"extensions.{ext}"
    if need is None:
        return None
    name, sub = need
    if declared(capabilities, name, sub):
        return None
    return f"{name}.{sub}" if sub else name


def task_missing_for(capabilities: dict[str, Any], method: str) -> str | None:
    """The capability a task-augmented `method` needs that the server did not declare."""
    sub = TASK_REQUESTS.get(method)
    if sub is None:
        return "tasks"  # nothing else can be augmented with a task by a client
    return None if declared(capabilities, "tasks", sub) else f"tasks.{sub}"


def declared_summary(capabilities: dict[str, Any]) -> str:
    names = []
    for name, value in capabilities.items():
        if not isinstance(value, dict):
            continue
        subs = sub_capabilities(name, value)
        names.append(f"{name} ({', '.join(subs)})" if subs else name)
    return ", ".join(names) if names else "nothing"


def sub_capabilities(name: str, value: dict[str, Any]) -> list[str]:
    """What a capability object declares: its true flags, or under `tasks` its object leaves."""
    return _object_flags(value) if name in OBJECT_FLAGS else [k for k, v in value.items() if v is True]


def _object_flags(value: dict[str, Any], prefix: str = "") -> list[str]:
    """The leaves of an object-valued capability: {"list": {}, "requests": {"tools": {"call": {}}}}
    -> ["list", "requests.tools.call"]."""
    out = []
    for key, sub in value.items():
        if isinstance(sub, dict) and sub and all(isinstance(v, dict) for v in sub.values()):
            out.extend(_object_flags(sub, f"{prefix}{key}."))
        elif isinstance(sub, dict) or sub is True:
            out.append(prefix + key)
    return out


def refuse(capabilities: dict[str, Any], method: str, missing: str) -> Refused:
    return Refused(
        f"{method} needs the '{missing}' capability, which the server did not declare; nothing was sent. "
        f"The server declared: {declared_summary(capabilities)}. Use --force to send it anyway.",
        detail={"method": method, "missing": missing, "declared": sorted(capabilities)},
    )
