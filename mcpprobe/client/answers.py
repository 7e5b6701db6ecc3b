"""How mcpprobe reads the answers that settle the protocol era: whether a `server/discover` result is
one the SDK would accept, what a -32022 error names, and each answer in a few words for the record of
the negotiation (`Snapshot.negotiation`). Plain functions of what came back, used by
`mcpprobe.client.negotiate`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpprobe.errors import ProbeError, RpcError
from mcpprobe.safety.redact import clip

if TYPE_CHECKING:
    from mcpprobe.client.session import Session


def supported_of(data: Any) -> list[str] | None:
    """`data.supported` of a -32022 error, or None when the data does not parse.

    As the SDK's UnsupportedProtocolVersionErrorData: `supported` (strings) and `requested`
    (a string) are both required, or the error is no evidence of anything.
    """
    if not isinstance(data, dict) or not isinstance(data.get("requested"), str):
        return None
    supported = data.get("supported")
    if not isinstance(supported, list) or not all(isinstance(v, str) for v in supported):
        return None
    return list(supported)


_CAPABILITY_FLAGS = {
    "tools": ("listChanged",), "prompts": ("listChanged",), "resources": ("subscribe", "listChanged"),
    "logging": (), "completions": (), "tasks": (),
}


def discover_result_problem(result: dict[str, Any]) -> str | None:
    """Why a `server/discover` result is not a DiscoverResult the SDK would accept, or None.

    The same required fields and types as mcp_types.DiscoverResult, checked in plain Python
    (importing the SDK's models costs a third of a second): a client on the SDK falls back to
    `initialize` exactly when this finds a problem.
    """
    offered = result.get("supportedVersions")
    if not isinstance(offered, list) or not all(isinstance(v, str) for v in offered):
        return "the result has no supportedVersions list of strings"
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        return "the result has no capabilities object"
    for key, flags in _CAPABILITY_FLAGS.items():
        value = capabilities.get(key)
        if value is None:
            continue
        if not isinstance(value, dict):
            return f"capabilities.{key} is not an object"
        for flag in flags:
            if value.get(flag) is not None and not isinstance(value.get(flag), bool):
                return f"capabilities.{key}.{flag} is not a boolean"
    for key in ("experimental", "extensions"):
        value = capabilities.get(key)
        if value is not None and (not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values())):
            return f"capabilities.{key} is not an object of objects"
    if result.get("instructions") is not None and not isinstance(result.get("instructions"), str):
        return "instructions is not a string"
    ttl = result.get("ttlMs")
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl != int(ttl)):
        return "ttlMs is not an integer"
    if result.get("cacheScope", "private") not in ("public", "private"):
        return "cacheScope is neither public nor private"
    if not isinstance(result.get("resultType", "complete"), str):
        return "resultType is not a string"
    if result.get("_meta") is not None and not isinstance(result.get("_meta"), dict):
        return "_meta is not an object"
    return None


def said(version: Any) -> str:
    """The version a server chose, as the Protocol line shows it (made inert the same way, not as
    Python's repr escapes it), or what JSON value it is when it is not a string."""
    from mcpprobe.safety.sanitize import json_kind, visible

    return f"'{visible(clip(version, 100))}'" if isinstance(version, str) else json_kind(version)


def answer_of(method: str, result: dict[str, Any] | None, error: ProbeError | None) -> str:
    """What came back to a negotiation request, in a few words (the server's text clipped)."""
    if error is None and result is not None:
        if method == "server/discover":
            return f"result ({versions_offered(result)})"
        return f"result (protocolVersion: {said(result.get('protocolVersion'))})"
    if isinstance(error, RpcError):
        return f"error {error.rpc_code} ({clip(error.rpc_message, 120)})"
    if error is not None:
        return f"failed: {clip(error.message, 160)}"
    return "no answer"


def versions_offered(result: dict[str, Any] | None) -> str:
    listed = (result or {}).get("supportedVersions")
    shown = ", ".join(said(v).strip("'") for v in listed[:8]) if isinstance(listed, list) else ""
    return f"supportedVersions: {shown or 'none'}"


def record(session: Session, method: str, version: str) -> dict[str, Any]:
    """A new row of the negotiation's record (`Snapshot.negotiation`), unanswered until settled."""
    start = 1 + sum(1 for timing in session.timings if timing.phase == "restart")
    entry: dict[str, Any] = {"method": method, "version": version, "start": start, "answer": "no answer",
                             "ms": None, "inForce": False}
    session.snapshot.negotiation.append(entry)
    return entry


def preview(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=True, default=str)
    return clip(text, 300)
