"""What every transport offers the JSON-RPC connection, and what it reports back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcpprobe.errors import ProbeError


@dataclass
class Sink:
    """Callbacks from a transport into the connection above it."""

    message: Callable[[Any], None]
    bad_output: Callable[[str, str], None]  # (what, sample): a line or body that is not JSON-RPC
    closed: Callable[[ProbeError], None]  # the transport is gone; pending requests fail with this
    request_failed: Callable[[Any, ProbeError], None]  # one request's delivery failed (HTTP)
    # When the connection stops waiting for this request's answer (time.monotonic()), or None if
    # it no longer waits: an HTTP transport resumes a broken event stream only within that time.
    deadline: Callable[[Any], float | None] | None = None


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

    def stderr_tail(self) -> list[str]: ...

    async def begin_close(self) -> None:
        """Tell the peer we are done (stdio: EOF on its stdin) without waiting for it."""

    async def aclose(self) -> None: ...


_non_finite = [False]


def _note_non_finite(name: str) -> float:
    _non_finite[0] = True
    return float(name)


def decode_message(raw: bytes | str) -> Any:
    """Parse one JSON text; raises ValueError on anything that is not JSON (nesting included).

    NaN, Infinity and -Infinity are read, as the SDK reads them, and noted: `took_non_finite()`
    says whether the message just decoded held one (a transport hands each message on before it
    decodes the next, with no await in between)."""
    import json

    _non_finite[0] = False
    try:
        return json.loads(raw, parse_constant=_note_non_finite)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def took_non_finite() -> bool:
    """Whether the last decoded message held NaN or Infinity; asking clears it."""
    seen, _non_finite[0] = _non_finite[0], False
    return seen
