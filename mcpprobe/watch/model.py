"""What a watch knows: its options and result, each kind's state across connections, and one
connection's state (`Link`), which the notification router fills and the workers drain."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio

from mcpprobe.client.catalog import KINDS
from mcpprobe.client.era import LEGACY, Era
from mcpprobe.errors import ConnectionFailed, ProbeError
from mcpprobe.exitcodes import ExitCode
from mcpprobe.safety.redact import Redactor
from mcpprobe.wire.stderrlog import StderrEntry

if TYPE_CHECKING:
    from mcpprobe.client.session import Session
    from mcpprobe.operations.arguments import ToolArguments

Emit = Callable[[dict[str, Any]], None]


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class WatchOptions:
    poll: float | None = None
    subscribe: tuple[str, ...] = ()
    log_level: str | None = None
    settle: float = 0.2
    reconnect: bool = True
    duration: float | None = None
    count: int | None = None
    exit_on_change: bool = False
    calls: tuple[tuple[str, ToolArguments], ...] = ()  # (tool, its arguments) for each --call
    yes: bool = False  # --yes: call a tool not marked read-only without asking
    keepalive: float = 15.0  # ping period for an HTTP server without a GET event stream
    # The run's secrets: masked in a --call's result text before it is cut short for its event.
    redactor: Redactor = field(default_factory=lambda: Redactor(()))

    @property
    def max_wait(self) -> float:
        return max(1.0, 5 * self.settle)


@dataclass
class WatchResult:
    exit_code: int = ExitCode.OK
    reason: str = ""
    events: int = 0
    relists: dict[str, int] = field(default_factory=dict)
    error: ProbeError | None = None
    stderr_tail: list[StderrEntry] = field(default_factory=list)


@dataclass
class KindState:
    """What is known about one kind, across connections."""

    kind: str
    declared: bool = False
    offered: bool = False  # its capability says listChanged: true on this connection
    promised: bool = False  # the server promised list_changed for it on this connection
    items: dict[str, dict[str, Any]] | None = None  # the last good, complete list, by identity
    list_completed: bool = False
    status: str = "not-declared"  # current | updating | stale | failed | not-declared | not-implemented
    stale_reason: str | None = None
    last_changed_at: str | None = None
    last_listed_at: str | None = None
    relists: int = 0


class Dropped(Exception):
    """The connection is gone: the supervisor reports it and connects again."""

    def __init__(self, error: ProbeError) -> None:
        super().__init__(error.message)
        self.error = error


class Link:
    """One connection's state. The notification router only counts and wakes (`poke`); each
    notifying kind's worker waits on `wake`, takes the counts, and re-lists."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.session: Session | None = None
        self.caps_known = False
        self.era: Era = LEGACY
        self.pending: dict[str, int] = dict.fromkeys(KINDS, 0)  # list_changed seen since the last re-list
        self.reasons: dict[str, str] = dict.fromkeys(KINDS, "")
        self.first_at: dict[str, float | None] = dict.fromkeys(KINDS, None)
        self.last_at: dict[str, float] = dict.fromkeys(KINDS, 0.0)
        self.wake: dict[str, anyio.Event] = {kind: anyio.Event() for kind in KINDS}
        self.unpromised: dict[str, int] = {}
        self.updates: dict[str, int] = {}  # resource URI -> updates not yet reported
        self.updates_wake = anyio.Event()
        self.listen_id: Any = None
        self.listen_acked = anyio.Event()
        self.honored: dict[str, Any] | None = None
        self.subscribed: set[str] = set()

    def poke(self, kind: str, reason: str) -> None:
        """Ask for a re-list of `kind`; the first reason since the last re-list is the one told."""
        now = time.monotonic()
        self.last_at[kind] = now
        if self.first_at[kind] is None:
            self.first_at[kind] = now
            self.reasons[kind] = reason
        self.wake[kind].set()

    def is_drop(self, exc: ProbeError) -> bool:
        """Whether `exc` means this connection is gone, rather than one request failed."""
        conn = self.session.conn if self.session is not None else None
        return (conn is not None and conn.closed_error is not None) or isinstance(exc, ConnectionFailed)

    def dropped(self, exc: ProbeError) -> None:
        """Raise Dropped if `exc` means the connection is gone."""
        if self.is_drop(exc):
            raise Dropped(exc) from None
