"""--log-level: asking for the server's log messages, and a rate limit on showing them, so that a
server that floods its log cannot flood the output."""

from __future__ import annotations

from mcpprobe.client.capabilities import declared
from mcpprobe.client.obligations import not_implemented
from mcpprobe.client.session import Session
from mcpprobe.errors import METHOD_NOT_FOUND, ProbeError, Refused, RpcError
from mcpprobe.watch.events import Events
from mcpprobe.watch.model import Link

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LOG_EVENTS_PER_SECOND = 50


class LogGate:
    """At most LOG_EVENTS_PER_SECOND log events in any one-second window; the ones held back are
    counted, and the count goes with the next one shown."""

    def __init__(self) -> None:
        self.window = (0.0, 0)  # (start, events shown in it)
        self.suppressed = 0

    def admit(self, now: float) -> int | None:
        """None to hold this message back; else how many were held back before it."""
        start, count = self.window
        if now - start >= 1.0:
            start, count = now, 0
        if count >= LOG_EVENTS_PER_SECOND:
            self.suppressed += 1
            self.window = (start, count)
            return None
        self.window = (start, count + 1)
        held, self.suppressed = self.suppressed, 0
        return held


async def set_log_level(events: Events, link: Link, session: Session, level: str) -> None:
    """logging/setLevel, where the era has it and the server declared `logging`; else a notice."""
    if not link.era.sets_log_level:
        events.emit("notice", "server", code="log-level-unavailable", message=(
            "--log-level: logging/setLevel does not exist in the 2026-07-28 era; log messages the server "
            "sends anyway are shown"))
        return
    if not declared(session.capabilities, "logging"):
        events.emit("notice", "server", code="log-level-unavailable", message=(
            "--log-level: the server did not declare 'logging'; logging/setLevel was not sent"))
        return
    try:
        await session.request("logging/setLevel", {"level": level})
    except Refused:
        raise
    except ProbeError as exc:
        if isinstance(exc, RpcError) and exc.rpc_code == METHOD_NOT_FOUND:
            # `logging` is declared by servers that send log messages; clients MAY send setLevel, and
            # no revision obliges a server to answer it (utilities/logging.mdx): the one note every
            # command gives for an optional part left out (mcpprobe.client.obligations), no error.
            events.finding(not_implemented("logging/setLevel", exc.rpc_message, detail=exc.detail))
            return
        link.dropped(exc)
        events.error("server", exc, "logging/setLevel")
