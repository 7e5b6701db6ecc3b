"""The tap's rules: for each finding code, the side at fault and the words that make it a fault.

A client rule quotes a MUST or SHOULD of the specification, or the checklist this project grew from
(the seeds: "what a client must do"); a rule that is only advice is `info`. docs/commands/tap.md
lists the same rules with their sources; a test keeps the two in step.
"""

from __future__ import annotations

from typing import NamedTuple

SPEC = "https://modelcontextprotocol.io/specification/2025-11-25"


class Rule(NamedTuple):
    side: str  # "client" or "server"; "tap" for what the tap says of itself
    source: str
    words: str


_LIFECYCLE = f"{SPEC}/basic/lifecycle"
_NEGOTIATED = "Both parties MUST: ... Only use capabilities that were successfully negotiated"
_SEEDS = "checklist: what a client must do (docs/commands/tap.md, 'Client rules')"

RULES: dict[str, Rule] = {
    # The client's side.
    "client-undeclared-capability": Rule("client", f"{_LIFECYCLE}#operation", _NEGOTIATED),
    "client-subscribe-undeclared": Rule(
        "client", f"{_LIFECYCLE}#capability-negotiation",
        "`subscribe`: Support for subscribing to individual items' changes (resources only); " + _NEGOTIATED),
    "client-before-handshake": Rule(
        "client", f"{_LIFECYCLE}#initialization",
        "The initialization phase MUST be the first interaction between client and server. The client SHOULD "
        "NOT send requests other than pings before the server has responded to the initialize request."),
    "client-request-before-initialized": Rule(
        "client", f"{_LIFECYCLE}#initialization",
        "After successful initialization, the client MUST send an initialized notification to indicate it is "
        "ready to begin normal operations"),
    "client-cancel-unknown": Rule(
        "client", f"{SPEC}/basic/utilities/cancellation",
        "Cancellation notifications MUST only reference requests that: were previously issued in the same "
        "direction; are believed to still be in-progress. The initialize request MUST NOT be cancelled by "
        "clients"),
    "client-declared-unhandled": Rule(
        "client", _SEEDS,
        "Declare in the capabilities only what the client really handles (roots, sampling, elicitation); do not "
        "declare a capability without a handler 'for compatibility': the server may then lawfully send requests "
        "the client cannot complete."),
    "client-stale-list": Rule(
        "client", _SEEDS,
        "Only where listChanged is true may the client rely on the list_changed notification; on receiving it, "
        "it should list again and replace its cache with the new snapshot, not infer the difference."),
    "client-relist-storm": Rule(
        "client", _SEEDS,
        "Implementations should coalesce several notifications in a short time, so that not every change "
        "triggers a list of its own."),
    "client-first-page-only": Rule(
        "client", _SEEDS,
        "Lists are paginated: the client must not read only the first page; while a response carries "
        "nextCursor it should request the next page."),
    "client-cache-after-reconnect": Rule(
        "client", _SEEDS,
        "Notifications may be lost while disconnected, so after reconnecting the client should list again "
        "instead of assuming the old cache is still valid."),
    "client-acts-on-undeclared-change": Rule(
        "client", _SEEDS,
        "Only where listChanged is true should the client register for and rely on list_changed (advice: the "
        "re-list itself does no harm)."),
    "client-protocol-violation": Rule(
        "client", f"{SPEC}/basic",
        "Requests MUST include a string or integer ID; the request ID MUST NOT have been previously used by the "
        "requestor within the same session (2026-07-28, which has no session: the request ID MUST NOT match "
        "the ID of any other request the sender has issued and not yet received a response for). Responses "
        "MUST include the same ID as the request they correspond to. (stdio) The client MUST NOT write "
        "anything to the server's stdin that is not a valid MCP message."),
    "client-protocol-version-header": Rule(
        "client", f"{_LIFECYCLE}#version-negotiation",
        "If using HTTP, the client MUST include the MCP-Protocol-Version: <protocol-version> HTTP header on all "
        "subsequent requests to the MCP server."),
    # The server's side.
    "non-protocol-output": Rule(
        "server", f"{SPEC}/basic/transports#stdio",
        "The server MUST NOT write anything to its stdout that is not a valid MCP message."),
    "protocol-violation": Rule(
        "server", f"{SPEC}/basic",
        "Responses MUST include the same ID as the request they correspond to. Either a result or an error "
        "MUST be set. A response MUST NOT set both. Error codes MUST be integers."),
    "server-undeclared-capability": Rule("server", f"{_LIFECYCLE}#operation", _NEGOTIATED),
    "server-pagination-broken": Rule(
        "server", f"{SPEC}/server/utilities/pagination",
        "The nextCursor field indicates more results are available; the client continues by sending that "
        "cursor. A server that refuses its own cursor, or answers it with the same cursor again, does not "
        "honour it."),
    "method-not-found": Rule(
        "server", f"{_LIFECYCLE}#capability-negotiation",
        "A declared capability obliges the server to answer its list (tools/list, resources/list, prompts/list)"),
    "batch-not-allowed": Rule(
        "server", f"{SPEC}/basic",
        "JSON-RPC batches were removed in 2025-06-18: each message is one JSON-RPC object."),
    "tap-endpoint-bypassed": Rule(
        "tap", "https://modelcontextprotocol.io/specification/2024-11-05/basic/transports#http-with-sse",
        "When a client connects, the server MUST send an endpoint event containing a URI for the client to use "
        "for sending messages. All subsequent client messages MUST be sent as HTTP POST requests to this "
        "endpoint. (An absolute URI is allowed: neither side is at fault; the tap cannot see what goes past it.)"),
    "tap-skipped": Rule("server", "mcpprobe tap", "Judging fell behind the relay: these messages were relayed "
                                                  "untouched, but not judged."),
}
