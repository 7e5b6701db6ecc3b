"""The run's configuration (`Settings`): how long to wait, which protocol to ask for, what the client
declares and how much it keeps, built once by the CLI from the command line.

It lives with the client because the client is its lowest user: the wire below takes plain values
(a timeout, a byte limit) from its callers, never the run's configuration.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Settings:
    protocol: str = "auto"  # auto | legacy | modern | a protocol version
    timeout: float = 30.0  # per request
    connect_timeout: float = 10.0  # spawn/connect plus the handshake
    discover_timeout: float = 2.0  # how long `auto` waits for server/discover before falling back
    max_pages: int = 1000
    max_message_bytes: int = 64 * 1024 * 1024
    force: bool = False
    roots: tuple[str, ...] = ()
    server_stderr: str = "tail"  # tail | live | quiet
    elicit: str | None = None  # declare elicitation and answer it: "decline" or "defaults"
    sample: str | None = None  # declare sampling and answer it: "fixed" (check --suite-fixtures), else never
    stderr_tail_lines: int = 20

    @property
    def connect_budget(self) -> float:
        """Seconds to start or reach the server and finish the handshake: --connect-timeout, and
        never more than --timeout (connecting is part of the first request's time). The one place
        this rule is worked out; every connect, handshake, stream opening and token exchange of a
        run takes it from here."""
        return min(self.connect_timeout, self.timeout)
