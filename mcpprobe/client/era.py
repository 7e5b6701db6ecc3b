"""The protocol era as a strategy on the session: the few things that differ between the eras of
the `initialize` handshake (2024-11-05 to 2025-11-25) and the 2026-07-28 era of `server/discover`.

Operations ask the session's era (`session.era`) what to do, never which era it is:

- `envelope`: what goes with every request (the 2026-07-28 `_meta` and `Mcp-Method`/`Mcp-Name`).
- `mirrors_params`: a tool's `x-mcp-header` parameters travel as `Mcp-Param-*` headers over
  streamable HTTP, and a tool whose annotations are invalid is excluded (mcpprobe.client.headers).
- `listens`: change notifications are asked for with one long `subscriptions/listen` request and
  arrive stamped with its id; otherwise `listChanged` in the capabilities promises them and
  `resources/subscribe` asks for resource updates, one URI at a time.
- `carried_by`: whether a notification came the way the era promises them (stamped, when listening).
- `sets_log_level`: `logging/setLevel` exists.
- `uses_server_stream`: the server may send what belongs to no request on a standalone stream of the
  transport (the streamable HTTP GET stream); whether the transport has one is the transport's to say.
- `is_not_found`: how `resources/read` says that a URI does not exist.
- `tasks_extension`: tasks are the extension `io.modelcontextprotocol/tasks` (SEP-2663: the server
  decides, no tasks/result, no tasks/list) rather than the 2025-11-25 experimental core feature.
"""

from __future__ import annotations

from typing import Any

from mcpprobe.client.headers import encode
from mcpprobe.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, RpcError

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
# The param an `Mcp-Name` header carries (SEP-2243; the tasks extension, SEP-2663, for tasks/*).
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                "tasks/get": "taskId", "tasks/update": "taskId", "tasks/cancel": "taskId"}


class Era:
    """The eras of the `initialize` handshake."""

    name = "legacy"
    listens = False
    mirrors_params = False
    tasks_extension = False
    sets_log_level = True
    uses_server_stream = True

    def envelope(self, snapshot: Any, method: str,
                 params: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """The params and HTTP headers of `method` as this era sends them."""
        return params, {}

    def carried_by(self, params: dict[str, Any], listen_id: Any) -> bool:
        """Whether a notification came the way this era delivers the ones it promises."""
        return True

    def is_not_found(self, exc: RpcError) -> bool:
        """Whether `exc`, the answer to resources/read, says the resource does not exist: -32002, or
        Invalid params that says so (the text, or the URI in its data), as servers of these eras do."""
        if exc.rpc_code == RESOURCE_NOT_FOUND_LEGACY:
            return True
        return exc.rpc_code == INVALID_PARAMS and (
            "not found" in exc.rpc_message.lower() or (isinstance(exc.data, dict) and "uri" in exc.data))


class ModernEra(Era):
    """2026-07-28: stateless requests that carry the protocol version, and subscriptions/listen."""

    name = "modern"
    listens = True
    mirrors_params = True
    tasks_extension = True
    sets_log_level = False
    uses_server_stream = False

    def envelope(self, snapshot: Any, method: str,
                 params: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, str]]:
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta[META_VERSION] = snapshot.protocol_version
        meta[META_CLIENT_INFO] = snapshot.client_info
        meta[META_CLIENT_CAPS] = with_extensions(snapshot.client_capabilities, meta.get(META_CLIENT_CAPS))
        params["_meta"] = meta
        headers = {"Mcp-Method": method}
        if (key := NAME_BEARING.get(method)) and isinstance(params.get(key), str):
            headers["Mcp-Name"] = encode(params[key])
        return params, headers

    def carried_by(self, params: dict[str, Any], listen_id: Any) -> bool:
        meta = params.get("_meta")
        return isinstance(meta, dict) and listen_id is not None and meta.get(SUBSCRIPTION_ID) == listen_id

    def is_not_found(self, exc: RpcError) -> bool:
        # The 2026-07-28 schema names Invalid params the answer for an unknown resource.
        return exc.rpc_code in (RESOURCE_NOT_FOUND_LEGACY, INVALID_PARAMS)


LEGACY = Era()
MODERN = ModernEra()


def era_named(name: str) -> Era:
    """The era of a snapshot's `era` ("modern", or "legacy" and "" before anything was negotiated)."""
    return MODERN if name == "modern" else LEGACY



def with_extensions(capabilities: dict[str, Any], request: Any) -> dict[str, Any]:
    """The client capabilities one request carries: the session's, plus the extensions the caller
    declares for this request alone (per-request capabilities, as the tasks extension asks for)."""
    extra = request.get("extensions") if isinstance(request, dict) else None
    if not isinstance(extra, dict) or not extra:
        return capabilities
    return {**capabilities, "extensions": {**(capabilities.get("extensions") or {}), **extra}}
