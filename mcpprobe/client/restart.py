"""Why `mcpprobe.client.negotiate` asks `open_session` (mcpprobe.client.connect) to start a stdio
server again: the server ended on `server/discover` (DiedOnDiscover: the second start gets
`initialize`), or it answered both a late `server/discover` and the fallback `initialize`
(RestartForModern: the second start gets `server/discover` alone). docs/negotiation.md has both.
"""

from __future__ import annotations

from mcpprobe.errors import ConnectionFailed, ProbeError, ProtocolFailure
from mcpprobe.findings import Finding


class DiedOnDiscover(ConnectionFailed):
    """The stdio server ended while `server/discover` was unanswered: start it again, legacy."""

    def __init__(self, error: ProbeError) -> None:
        super().__init__(error.message, detail=dict(error.detail))
        from mcpprobe.wire.stdio import describe_status

        status = error.detail.get("exitStatus")
        self.status = describe_status(status) if isinstance(status, int) else "it closed its output"
        self.reason = f"the server ended on server/discover ({self.status}); started it again and used initialize"

    def finding(self) -> Finding:
        return Finding(
            "discover-crash",
            f"the server ended ({self.status}) on the server/discover request sent before initialize, "
            "instead of answering it with an error; mcpprobe started it again and used initialize. "
            "Clients that probe the 2026-07-28 era first (such as the MCP SDKs' auto mode) cannot connect to it",
            detail={"exitStatus": self.detail.get("exitStatus")})


class RestartForModern(ProtocolFailure):
    """A stdio server answered `server/discover` with a modern version *and* the `initialize` sent
    while that answer was late: "An `initialize` request selects legacy semantics, scoped to the
    stdio process" (2026-07-28), so that process now speaks the older protocol and its discover
    answer is no longer in force. mcpprobe never judges a mixed connection: the process is ended and
    the server started again, with `server/discover` alone (`rediscover`), so that the era in force
    is the one a faster start would have given."""

    def __init__(self, version: str, reason: str) -> None:
        super().__init__(reason)
        self.version, self.reason = version, reason
