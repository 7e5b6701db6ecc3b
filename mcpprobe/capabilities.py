"""Which capability each request needs: the one table behind "never send what was not declared"."""

from __future__ import annotations

from typing import Any

from mcpprobe.errors import Refused

# method -> (capability, sub-capability or None)
REQUIRES: dict[str, tuple[str, str | None]] = {
    "tools/list": ("tools", None),
    "tools/call": ("tools", None),
    "resources/list": ("resources", None),
    "resources/templates/list": ("resources", None),
    "resources/read": ("resources", None),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts", None),
    "prompts/get": ("prompts", None),
    "completion/complete": ("completions", None),
    "logging/setLevel": ("logging", None),
}


def declared(capabilities: dict[str, Any], name: str, sub: str | None = None) -> bool:
    """True when the server declared `name` (any object, even empty) and, if given, `sub` as true."""
    value = capabilities.get(name)
    if not isinstance(value, dict):
        return False
    return sub is None or value.get(sub) is True


def missing_for(capabilities: dict[str, Any], method: str) -> str | None:
    """The capability `method` needs that the server did not declare, spelled as in the spec."""
    need = REQUIRES.get(method)
    if need is None:
        return None
    name, sub = need
    if declared(capabilities, name, sub):
        return None
    return f"{name}.{sub}" if sub else name


def declared_summary(capabilities: dict[str, Any]) -> str:
    names = []
    for name, value in capabilities.items():
        if not isinstance(value, dict):
            continue
        subs = [k for k, v in value.items() if v is True]
        names.append(f"{name} ({', '.join(subs)})" if subs else name)
    return ", ".join(names) if names else "nothing"


def refuse(capabilities: dict[str, Any], method: str, missing: str) -> Refused:
    return Refused(
        f"{method} needs the '{missing}' capability, which the server did not declare; nothing was sent. "
        f"The server declared: {declared_summary(capabilities)}. Use --force to send it anyway.",
        detail={"method": method, "missing": missing, "declared": sorted(capabilities)},
    )
