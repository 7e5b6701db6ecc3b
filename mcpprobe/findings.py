"""The one vocabulary of findings shared by every subcommand.

A finding is something mcpprobe observed about the server, with a stable `code` that scripts
can match on, a severity, the kind of object it concerns (tools, resources, templates, prompts,
or the connection itself), and a message for people. docs/findings.md explains every code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


# code -> (default severity, one-line meaning). The docs page and a test keep this table honest.
CODES: dict[str, tuple[Severity, str]] = {
    "not-declared": (Severity.INFO, "the server did not declare this capability; nothing was sent"),
    "not-implemented": (Severity.INFO, "-32601 for an optional part of a declared capability: a note, not an error"),
    "method-not-found": (Severity.ERROR, "declared, but the server answered -32601 Method not found"),
    "list-incomplete": (Severity.ERROR, "pagination did not reach the end of the list"),
    "list-failed": (Severity.ERROR, "declared, but the first page of the list failed"),
    "invalid-item": (Severity.ERROR, "an item does not validate against the spec's schema"),
    "duplicate-item": (Severity.WARNING, "two items of one kind share the same name or URI"),
    "unsupported-version": (Severity.ERROR, "the server chose a protocol version mcpprobe does not speak"),
    "non-protocol-output": (Severity.WARNING, "the server wrote something that is not JSON-RPC to stdout"),
    "protocol-violation": (Severity.WARNING, "the server sent a message that breaks JSON-RPC or MCP rules"),
    "number-out-of-range": (Severity.WARNING, "a number from the server past the range mcpprobe can use; "
                                              "written as null or replaced by a default"),
    "peer-data-dropped": (Severity.INFO, "more than mcpprobe keeps in a run came from the server; the rest was "
                                         "counted, not kept"),
    "cookie-dropped": (Severity.WARNING, "an HTTP server set more or larger cookies than a browser keeps "
                                         "(RFC 6265 6.1); the excess was dropped, not sent back"),
    "batch-not-allowed": (Severity.ERROR, "a JSON-RPC batch where the negotiated protocol version forbids them"),
    "rate-limited": (Severity.ERROR, "the server answered HTTP 429 Too Many Requests"),
    "server-unavailable": (Severity.ERROR, "the server answered HTTP 503 Service Unavailable"),
    "resume-failed": (Severity.ERROR, "an event stream broke before the answer and could not be resumed"),
    "request-flood": (Severity.WARNING, "more server requests at once than mcpprobe answers; the excess unanswered"),
    "suspicious-text": (Severity.WARNING, "server text hides characters or terminal escape sequences"),
    "era-fallback": (Severity.INFO, "how the protocol era was chosen when server/discover was not answered"),
    "discover-crash": (Severity.WARNING, "the server ended on server/discover; clients that probe the modern era "
                                         "first cannot connect to it"),
    "forced": (Severity.WARNING, "sent with --force although the server did not declare the capability"),
    "connection-failed": (Severity.ERROR, "could not start or reach the server, or it went away"),
    "timeout": (Severity.ERROR, "the server did not answer in time"),
    "protocol-error": (Severity.ERROR, "the server's answer could not be used"),
    "rpc-error": (Severity.ERROR, "the server answered a request with an unexpected JSON-RPC error"),
    "auth-required": (Severity.ERROR, "the server refused the request for lack of valid credentials"),
    "http-forbidden": (Severity.ERROR, "HTTP 403 or 421 without a Bearer challenge: refused, but not for credentials"),
    "internal-error": (Severity.ERROR, "a bug in mcpprobe stopped the run (exit 70): not the server's fault"),
    "usage": (Severity.ERROR, "the command asks for something that cannot be done as written"),
    "not-in-catalog": (Severity.ERROR, "the named item is not in the server's complete list"),
    "invalid-arguments": (Severity.ERROR, "the arguments do not match the item's declaration; nothing was sent"),
    "not-confirmed": (Severity.INFO, "the user did not confirm the tool call; nothing was sent"),
    "tool-error": (Severity.ERROR, "the tool answered with isError: true"),
    "output-schema-mismatch": (Severity.ERROR, "structuredContent is missing or does not match the outputSchema"),
    "unusable-schema": (Severity.WARNING, "a tool's inputSchema or outputSchema is not a usable JSON Schema"),
    "resource-not-found": (Severity.ERROR, "the server answered resources/read with 'resource not found'"),
    "input-required": (Severity.INFO, "the server asked for more input and mcpprobe answered it (--elicit, --root)"),
    "input-required-refused": (Severity.ERROR, "the server asked for input mcpprobe did not declare; it was refused"),
    "task-cancelled": (Severity.ERROR, "a tool call that ran as a task was cancelled by the server; no result"),
    # x-mcp-header (SEP-2243, 2026-07-28 over streamable HTTP): tool parameters sent as Mcp-Param-* headers.
    "invalid-x-mcp-header": (Severity.ERROR, "a tool's x-mcp-header annotations break the specification's rules: "
                                             "the tool is left out of the list, and not called"),
    # Authentication (mcpprobe.auth.diagnosis): what a 401/403 means.
    "auth-challenge": (Severity.INFO, "what the server's WWW-Authenticate challenge asks for"),
    "auth-challenge-url-invalid": (Severity.WARNING, "the challenge's resource_metadata is not a URL; discovery "
                                                     "went on at the well-known URIs"),
    "auth-no-challenge": (Severity.WARNING, "HTTP 401 without a Bearer WWW-Authenticate challenge"),
    "auth-invalid-token": (Severity.ERROR, "the server rejected the bearer token that was sent"),
    "auth-server-changed": (Severity.ERROR, "the server names another authorization server than the token's issuer"),
    "auth-insufficient-scope": (Severity.ERROR, "HTTP 403 insufficient_scope: the token lacks a scope it names"),
    "auth-resource-metadata": (Severity.INFO, "where the protected resource metadata was found, and what it says"),
    "auth-server-metadata": (Severity.INFO, "the authorization server's metadata and what it supports"),
    "auth-metadata-unreachable": (Severity.ERROR, "protected resource or authorization server metadata was not found"),
    "auth-metadata-malformed": (Severity.ERROR, "a metadata document is not JSON or breaks RFC 9728 / RFC 8414"),
    "auth-resource-mismatch": (Severity.ERROR, "the metadata's resource does not identify this server"),
    "auth-no-pkce": (Severity.ERROR, "the authorization server does not advertise PKCE S256"),
    "auth-no-registration": (Severity.WARNING, "no client ID metadata documents and no dynamic registration"),
    "expectation-failed": (Severity.ERROR, "an expectation of --expect is not met by the server"),
    "breaking-change": (Severity.ERROR,
                        "since the --baseline snapshot, something clients rely on was removed or changed"),
    "drift": (Severity.INFO, "since the --baseline snapshot, something was added or changed without breaking clients"),
    "baseline-missing": (Severity.WARNING, "a fleet member has no --baseline snapshot yet: it was not compared"),
    "baseline-invalid": (Severity.ERROR, "a fleet member's --baseline file is not a snapshot: it was not probed"),
    "interrupted": (Severity.ERROR, "the run was interrupted (Ctrl-C, SIGTERM) before this server's probe finished"),
    "config-error": (Severity.ERROR, "a named server's config entry cannot be used (a missing variable, a bad entry)"),
    # load (mcpprobe.load): what a measurement found.
    "slo-missed": (Severity.ERROR, "a --slo objective of mcpprobe load was not met"),
    "server-leak": (Severity.WARNING, "a stdio server's memory or open files grew steadily under constant load"),
    "client-saturated": (Severity.WARNING, "mcpprobe's own CPU was saturated: the client may have been the limit"),
    "schedule-not-kept": (Severity.WARNING, "open loop: requests started late (their latency counts from when due)"),
    # lint (mcpprobe.lint, probe --lint): heuristics on the text a server gives the model; never errors
    # unless --lint=strict (docs/findings.md, "Lint").
    "lint-override-instructions": (Severity.WARNING, "text tells the model to set aside its instructions"),
    "lint-conceal-from-user": (Severity.WARNING, "text tells the model to keep something from the user"),
    "lint-read-sensitive-file": (Severity.WARNING, "text asks for keys, credentials or client configs"),
    "lint-send-data": (Severity.WARNING, "text tells the model to send data to a fixed address"),
    "lint-shouting-markup": (Severity.WARNING, "markup aimed at a model, such as <IMPORTANT> or [SYSTEM]"),
    "lint-long-description": (Severity.INFO, "a description far longer than a tool needs"),
    "lint-names-tool": (Severity.INFO, "a tool's text names another tool of the same server"),
    "lint-annotations-conflict": (Severity.WARNING, "a tool's annotations contradict each other"),
    "lint-annotation-vs-name": (Severity.WARNING, "a tool's readOnlyHint contradicts its name"),
    "lint-tokens": (Severity.INFO, "the catalogue's estimated size in tokens"),
    "lint-token-budget": (Severity.WARNING, "the catalogue's estimated size is over --token-budget"),
    "fleet-shadowed-tool": (Severity.WARNING, "a tool name offered by more than one server of the fleet"),
    "fleet-names-foreign-tool": (Severity.WARNING, "a tool's text names a tool of another server of the fleet"),
    # --server-json (mcpprobe.fleet.serverjson): what runs, against what the registry file says.
    "server-json-mismatch": (Severity.WARNING, "serverInfo's version (or name, as info) disagrees with --server-json"),
    # watch (mcpprobe.watch): notifications nobody promised.
    "unpromised-notification": (Severity.WARNING, "a change notification the server never promised; not acted on"),
    # tap (mcpprobe.tap): a host and its server judged from their exchange; detail.side names the side at fault.
    "client-undeclared-capability": (Severity.ERROR, "the client used a capability the other side did not declare"),
    "client-subscribe-undeclared": (Severity.ERROR, "resources/subscribe without the server's resources.subscribe"),
    "client-before-handshake": (Severity.WARNING, "a client request before the server answered initialize"),
    "client-request-before-initialized": (Severity.WARNING, "a client request before notifications/initialized"),
    "client-cancel-unknown": (Severity.ERROR, "the client cancelled a request it never sent, or initialize"),
    "client-declared-unhandled": (Severity.WARNING, "the client declared a capability, then answered -32601 to it"),
    "client-stale-list": (Severity.WARNING, "after list_changed the client went on without listing again"),
    "client-relist-storm": (Severity.WARNING, "one re-list per list_changed in a burst: not coalesced"),
    "client-first-page-only": (Severity.WARNING, "the client read a list's first page and ignored nextCursor"),
    "client-cache-after-reconnect": (Severity.WARNING, "after a reconnect the client used a list it did not re-read"),
    "client-acts-on-undeclared-change": (Severity.INFO, "the client re-listed after a list_changed never declared"),
    "client-protocol-version-header": (Severity.ERROR, "over HTTP, a request without the negotiated "
                                                       "MCP-Protocol-Version header"),
    "client-protocol-violation": (Severity.WARNING, "the client sent a message that breaks JSON-RPC or MCP rules"),
    "server-undeclared-capability": (Severity.ERROR, "the server sent a request or notification for a capability "
                                                     "that was not negotiated"),
    "server-pagination-broken": (Severity.ERROR, "the server refused its own cursor, or gave the same one again"),
    "tap-endpoint-bypassed": (Severity.WARNING, "a legacy SSE endpoint on another origin: the client's messages "
                                                "go past the tap"),
    "tap-skipped": (Severity.INFO, "judging fell behind the relay: messages relayed untouched but not judged"),
}


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    kind: str = "server"
    severity: Severity | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown finding code {self.code!r}")
        if self.severity is None:
            object.__setattr__(self, "severity", CODES[self.code][0])

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity.value if self.severity else "info",
            "kind": self.kind,
            "message": self.message,
        }
        if self.detail:
            data["detail"] = self.detail
        return data


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity is Severity.ERROR for f in findings)
