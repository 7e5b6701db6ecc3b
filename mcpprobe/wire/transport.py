"""What every transport offers the JSON-RPC connection, and what it reports back.

Bytes and messages only: reading a message's JSON is `mcpprobe.wire.decode`, and what a message
means is the connection's (`mcpprobe.wire.jsonrpc`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from mcpprobe.errors import ProbeError
from mcpprobe.wire.stderrlog import StderrEntry

# httpx event hooks an HTTP transport adds to its client: {"request": [...], "response": [...]}.
HttpHooks = dict[str, list[Callable[[Any], Awaitable[None]]]]


@dataclass
class Sink:
    """Callbacks from a transport into the connection above it."""

    # (message, flags): what decoding noted, wire/decode.py's NON_FINITE (NaN or Infinity) and HUGE (1e400)
    message: Callable[[Any, int], None]
    bad_output: Callable[[str, str], None]  # (what, sample): a line or body that is not JSON-RPC
    closed: Callable[[ProbeError], None]  # the transport is gone; pending requests fail with this
    request_failed: Callable[[Any, ProbeError], None]  # one request's delivery failed (HTTP)
    # When the connection stops waiting for this request's answer (time.monotonic()), or None if
    # it no longer waits: an HTTP transport resumes a broken event stream only within that time.
    deadline: Callable[[Any], float | None] | None = None
    # (what, sample): a number the transport read (an SSE retry:) out of the range it can use; a
    # number-out-of-range finding, and the transport went on with its default.
    out_of_range: Callable[[str, str], None] | None = None
    # (what, sample): a cookie the server set was dropped past the jar's bounds (wire/cookies.py);
    # a cookie-dropped finding.
    cookie_dropped: Callable[[str, str], None] | None = None


@dataclass
class TransportInfo:
    """What a transport learned about its peer, for the snapshot and for error messages."""

    kind: str
    detail: dict[str, Any] = field(default_factory=dict)


class Transport(Protocol):
    info: TransportInfo

    async def start(self, task_group: Any, sink: Sink) -> None: ...

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None: ...

    def set_protocol_version(self, version: str) -> None: ...

    def stderr_tail(self, lines: int = 20) -> list[StderrEntry]: ...

    def stderr_said(self) -> list[str]: ...

    async def begin_close(self) -> None:
        """Tell the peer we are done (stdio: EOF on its stdin) without waiting for it."""

    async def aclose(self) -> None: ...


@runtime_checkable
class ServerStream(Protocol):
    """An optional ability of a transport: a stream on which the server sends what belongs to no
    request (notifications, its own requests). Streamable HTTP has one (the standalone GET stream);
    stdio needs none (everything comes on one pipe) and HTTP+SSE has only its one event stream."""

    async def open_server_stream(self, *, on_open: Any = None, on_streaming: Any = None) -> str:
        """Open it once and run until it ends: "ended" (open it again if wanted) or "unsupported"
        (the server offers none); a ProbeError when it fails."""
        ...

    async def listen(self, wait: float) -> None:
        """Keep it open in the background for the rest of the connection; wait at most `wait`
        seconds for it to open."""
        ...


def server_stream(transport: Any) -> ServerStream | None:
    """The transport's server stream, if it has that ability."""
    return transport if isinstance(transport, ServerStream) else None


# ----- load's fast path: abilities a transport declares by having them (checked once per connection) -----


@runtime_checkable
class Queueing(Protocol):
    """Takes a message without waiting, to be written with the others of this turn of the event loop
    (stdio) or as a POST of its own (streamable HTTP); False when it cannot (the caller then waits on
    `send`). Load's pipelined path needs it; HTTP+SSE, whose POST waits, has it not."""

    def queue_nowait(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> bool: ...


@runtime_checkable
class LineQueueing(Queueing, Protocol):
    """Also takes a request already encoded as one line (stdio), and writes what is queued now on `flush`."""

    def queue_line(self, line: bytes) -> bool: ...

    def flush(self) -> None: ...


@runtime_checkable
class BodyQueueing(Queueing, Protocol):
    """Also takes a request already encoded as a POST body, answered on a kept connection of the lean
    HTTP/1.1 path (wire/lean_http.py); False when that path cannot take it now."""

    def queue_body(self, request_id: int, method: str, body: bytes, headers: dict[str, str] | None = None) -> bool: ...


@runtime_checkable
class Immediate(Protocol):
    """Writes a message at once when the pipe has room, with no task or turn of the loop (stdio)."""

    def send_nowait(self, message: dict[str, Any]) -> bool: ...


@dataclass(frozen=True)
class FastPath:
    """What of load's fast path a transport offers, worked out once when the connection is made: each
    field the transport itself, typed as the ability, or None. The signatures are held to the
    protocols by mypy (client/connect.py, where the transports are made)."""

    queueing: Queueing | None
    lines: LineQueueing | None
    bodies: BodyQueueing | None
    immediate: Immediate | None

    @classmethod
    def of(cls, transport: object) -> FastPath:
        return cls(transport if isinstance(transport, Queueing) else None,
                   transport if isinstance(transport, LineQueueing) else None,
                   transport if isinstance(transport, BodyQueueing) else None,
                   transport if isinstance(transport, Immediate) else None)
