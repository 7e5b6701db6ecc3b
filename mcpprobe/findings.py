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
    "method-not-found": (Severity.ERROR, "declared, but the server answered -32601 Method not found"),
    "list-incomplete": (Severity.ERROR, "pagination did not reach the end of the list"),
    "list-failed": (Severity.ERROR, "declared, but the first page of the list failed"),
    "invalid-item": (Severity.ERROR, "an item does not validate against the spec's schema"),
    "duplicate-item": (Severity.WARNING, "two items of one kind share the same name or URI"),
    "unsupported-version": (Severity.ERROR, "the server chose a protocol version mcpprobe does not speak"),
    "non-protocol-output": (Severity.WARNING, "the server wrote something that is not JSON-RPC to stdout"),
    "protocol-violation": (Severity.WARNING, "the server sent a message that breaks JSON-RPC or MCP rules"),
    "suspicious-text": (Severity.WARNING, "server text hides characters or terminal escape sequences"),
    "era-fallback": (Severity.INFO, "how the protocol era was chosen when server/discover was not answered"),
    "forced": (Severity.WARNING, "sent with --force although the server did not declare the capability"),
    "connection-failed": (Severity.ERROR, "could not start or reach the server, or it went away"),
    "timeout": (Severity.ERROR, "the server did not answer in time"),
    "protocol-error": (Severity.ERROR, "the server's answer could not be used"),
    "rpc-error": (Severity.ERROR, "the server answered a request with an unexpected JSON-RPC error"),
    "auth-required": (Severity.ERROR, "the server refused the request for lack of valid credentials"),
    "not-in-catalog": (Severity.ERROR, "the named item is not in the server's complete list"),
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
