"""`watch`: stay connected and report what changes, only where the server promised to tell.

The rules this module keeps (see docs/commands/watch.md):

- Notification handlers are installed before the first message is sent (`on_connection`), so
  nothing between the handshake and the end of the first listing is missed.
- A kind is followed through notifications only when its capability promised them
  (`listChanged: true`; in the 2026-07-28 era, when `subscriptions/listen` acknowledged it).
  A notification nobody promised is a finding, never a trigger. `--poll` re-lists the others.
- The list is the truth: a notification only says "re-list"; the difference is computed from the
  complete new list against the last good one.
- Coalescing: per kind at most one re-list in flight and one queued. A notification only bumps a
  counter and sets an event; the kind's worker waits until the burst settles (quiet for `settle`
  seconds, and never longer than `max(1 s, 5 x settle)` after the first one), then re-lists once.
- Atomic replace: the last good snapshot stays current while a re-list runs and is replaced only
  by a complete list. A failed or incomplete re-list leaves it, marked stale, and retries with backoff.
- Reconnect: a lost connection is reported, re-established with backoff, capabilities are read
  again and compared, everything is re-listed and re-subscribed. Nothing is trusted across
  connections without re-listing: the old snapshot only serves as the "before" of the diff.

Nothing here prints: every event is a JSON-ready dict handed to `emit`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio

from mcpprobe import kinds as catalog_kinds
from mcpprobe import redact
from mcpprobe.capabilities import declared
from mcpprobe.catalog import KINDS, Listing, list_kind
from mcpprobe.era import LEGACY, Era
from mcpprobe.errors import (
    AuthFailed,
    ConnectionFailed,
    ProbeError,
    ProtocolFailure,
    Refused,
    RequestTimeout,
    RpcError,
    UsageProblem,
)
from mcpprobe.exitcodes import ExitCode
from mcpprobe.findings import Finding
from mcpprobe.session import Session, open_session
from mcpprobe.target import Settings, Target
from mcpprobe.wire.base import ServerStream

Emit = Callable[[dict[str, Any]], None]

LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}
# The kinds one list_changed notification makes stale: resource templates live under `resources`.
RELISTED = {"tools": ("tools",), "prompts": ("prompts",), "resources": ("resources", "templates")}
LISTEN_KEYS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# Events that --count counts: what happened after the first snapshot, not bookkeeping.
COUNTED = frozenset({"list_changed", "diff", "stale", "resource_updated", "log", "reconnect",
                     "capabilities_changed", "error", "finding"})
LOG_EVENTS_PER_SECOND = 50
RETRY_FIRST, RETRY_MAX = 0.5, 30.0
RECONNECT_FIRST, RECONNECT_MAX = 0.5, 30.0
NEVER = 10.0 ** 9  # a request that stays open for the life of the connection (subscriptions/listen)


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
    calls: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (tool, KEY=VALUE pairs) for each --call
    yes: bool = False  # --yes: call a tool not marked read-only without asking
    keepalive: float = 15.0  # ping period for an HTTP server without a GET event stream

    @property
    def max_wait(self) -> float:
        return max(1.0, 5 * self.settle)


@dataclass
class WatchResult:
    exit_code: ExitCode = ExitCode.OK
    reason: str = ""
    events: int = 0
    relists: dict[str, int] = field(default_factory=dict)
    error: ProbeError | None = None
    stderr_tail: list[str] = field(default_factory=list)


@dataclass
class KindState:
    """What is known about one kind, across connections."""

    kind: str
    declared: bool = False
    promised: bool = False  # the server promised list_changed for it on this connection
    items: dict[str, dict[str, Any]] | None = None  # the last good, complete list, by identity
    list_completed: bool = False
    status: str = "not-declared"  # current | updating | stale | not-declared
    stale_reason: str | None = None
    last_changed_at: str | None = None
    last_listed_at: str | None = None
    relists: int = 0


class _Dropped(Exception):
    def __init__(self, error: ProbeError) -> None:
        super().__init__(error.message)
        self.error = error


class _Link:
    """Per-connection state: counters the notification handler bumps, and the kinds' wake-ups."""

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
        self.log_window = (0.0, 0)
        self.logs_suppressed = 0
        self.findings_seen: set[tuple[str, str, str]] = set()


class Watcher:
    def __init__(self, target: Target, settings: Settings, options: WatchOptions, emit: Emit,
                 *, stderr_writer: Any = None, tracer: Any = None, http_hooks: dict[str, list[Any]] | None = None,
                 ask: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None,
                 preview: Callable[..., None] | None = None) -> None:
        self.target = target
        self.settings = settings
        self.options = options
        self._emit = emit
        self.stderr_writer = stderr_writer
        self._outer_tracer = tracer  # --trace
        self._http_hooks = http_hooks
        self._ask = ask  # --call's confirmation question, on a terminal
        self._preview = preview
        self._confirmed: set[str] = set()  # tools confirmed once: not asked again on a reconnect
        self.kinds = {kind: KindState(kind) for kind in KINDS}
        self.result = WatchResult(relists=dict.fromkeys(KINDS, 0))
        self.capabilities: dict[str, Any] | None = None
        self.protocol_version: str | None = None
        self.connections = 0
        self.link: _Link | None = None
        self._scope: anyio.CancelScope | None = None
        self._stopped = False
        self._counted = 0
        self._attempt = 0
        self._output_closed = False
        self._reconnected = False  # this connection is not the first one that was established
        self._no_subscribe = False  # resources.subscribe went away on a reconnect

    # ----- events and stopping -----

    def emit(self, event: str, kind: str | None = "server", **fields: Any) -> None:
        data: dict[str, Any] = {"ts": now_iso(), "event": event, "kind": kind,
                                "connection": self.connections, **fields}
        if self._output_closed:
            return
        self.result.events += 1
        try:
            self._emit(data)
        except BrokenPipeError:
            # The reader went away (`| head -3`): nothing more can be said; stop quietly.
            self._output_closed = True
            self.stop("output-closed", ExitCode.OK)
            return
        if event in COUNTED and not self._stopped:
            self._counted += 1
            if self.options.count is not None and self._counted >= self.options.count:
                self.stop("count", ExitCode.OK)

    def stop(self, reason: str, code: ExitCode, error: ProbeError | None = None) -> None:
        """End the watch at the next await. The first reason wins."""
        if self._stopped:
            return
        self._stopped = True
        self.result.reason, self.result.exit_code = reason, int(code)
        self.result.error = error
        if self._scope is not None:
            self._scope.cancel()

    def _finding(self, finding: Finding) -> None:
        link = self.link
        key = (finding.code, finding.kind, finding.message)
        if link is not None:
            if key in link.findings_seen:
                return
            link.findings_seen.add(key)
        data: dict[str, Any] = {"code": finding.code, "severity": str(finding.severity or "info"),
                                "message": finding.message}
        if finding.detail:
            data["detail"] = _plain(finding.detail)
        self.emit("finding", finding.kind, **data)

    # ----- the run -----

    async def run(self) -> WatchResult:
        with anyio.CancelScope() as scope:
            self._scope = scope
            if self.options.duration is not None:
                scope.deadline = anyio.current_time() + self.options.duration
            await self._connect_loop()
        if not self._stopped:
            self.stop("duration" if scope.cancelled_caught else "ended", ExitCode.OK)
        self.emit("end", None, reason=self.result.reason, exitCode=self.result.exit_code,
                  events=self.result.events, relists=dict(self.result.relists),
                  **({"error": {"code": self.result.error.code, "message": self.result.error.message}}
                     if self.result.error is not None else {}))
        return self.result

    async def _connect_loop(self) -> None:
        attempt = 0
        while not self._stopped:
            self.connections += 1
            link = _Link(self.connections)
            self.link = link
            error: ProbeError | None = None
            established = False
            try:
                async with open_session(self.target, self.settings, tracer=self._tracer,
                                        stderr_writer=self.stderr_writer, http_hooks=self._http_hooks,
                                        on_connection=self._installer(link)) as session:
                    established = True
                    self._attempt, attempt = attempt, 0
                    await self._connected(link, session)
            except _Dropped as dropped:
                error = dropped.error
            except ProbeError as exc:
                error = exc
                tail = exc.detail.get("serverStderr")
                if tail:
                    self.result.stderr_tail = list(tail)
            if self._stopped:
                return
            if error is None:
                error = ConnectionFailed("the connection ended")
            first = self.capabilities is None
            if first or isinstance(error, Refused | AuthFailed | UsageProblem) or (
                    not established and isinstance(error, ProtocolFailure) and error.code == "unsupported-version"):
                # Nothing was ever watched, or retrying cannot help: end with the stage's own code.
                self.emit("error", "server", code=error.code, message=error.message,
                          exitCode=int(error.exit_code))
                self.stop("error", error.exit_code, error)
                return
            for state in self.kinds.values():
                if state.items is not None and state.status != "not-declared":
                    state.status, state.stale_reason = "stale", "connection lost"
            if not self.options.reconnect:
                self.emit("reconnect", "server", state="lost", reason=error.message, attempt=0,
                          retryInSeconds=None)
                self.stop("connection-lost", ExitCode.CONNECTION, error)
                return
            attempt += 1
            delay = min(RECONNECT_FIRST * 2 ** (attempt - 1), RECONNECT_MAX)
            self.emit("reconnect", "server", state="lost" if established else "failed", reason=error.message,
                      attempt=attempt, retryInSeconds=delay)
            await anyio.sleep(delay)

    def _tracer(self, direction: str, message: Any) -> None:
        if self._outer_tracer is not None:
            self._outer_tracer(direction, message)
        link = self.link
        if (direction == "send" and link is not None and isinstance(message, dict)
                and message.get("method") == "subscriptions/listen"):
            link.listen_id = message.get("id")

    # ----- the notification handler: O(1), never blocks -----

    def _installer(self, link: _Link) -> Callable[[Any], None]:
        def install(conn: Any) -> None:
            conn.notification_handlers.append(lambda method, params: self._on_notification(link, method, params))
        return install

    def _on_notification(self, link: _Link, method: str, params: dict[str, Any]) -> None:
        if link is not self.link or self._stopped:
            return
        try:
            self._dispatch(link, method, params)
        except Exception as exc:  # noqa: BLE001 - a bug here must end the run visibly, not kill the reader
            self.stop("error", ExitCode.PROTOCOL, ProtocolFailure(f"internal error handling {method}: {exc!r}"))

    def _dispatch(self, link: _Link, method: str, params: dict[str, Any]) -> None:
        kind = LIST_CHANGED.get(method)
        if kind is not None:
            self._on_list_changed(link, kind, method, params)
        elif method == "notifications/resources/updated":
            self._on_updated(link, params)
        elif method == "notifications/message":
            self._on_log(link, params)
        elif method == "notifications/subscriptions/acknowledged":
            self._on_ack(link, params)

    def _on_list_changed(self, link: _Link, kind: str, method: str, params: dict[str, Any]) -> None:
        promised = link.caps_known and self.kinds[kind].promised
        if promised and not link.era.carried_by(params, link.listen_id):
            promised = False
        if not promised:
            link.unpromised[kind] = link.unpromised.get(kind, 0) + 1
            if link.unpromised[kind] == 1 and link.caps_known:
                self._unpromised_finding(link, kind, method)
            return
        now = time.monotonic()
        link.pending[kind] += 1
        link.last_at[kind] = now
        if link.first_at[kind] is None:
            link.first_at[kind] = now
            link.reasons[kind] = "notification"
        link.wake[kind].set()

    def _unpromised_finding(self, link: _Link, kind: str, method: str) -> None:
        capability = self.kinds[kind]
        if link.era.listens:
            why = ("outside the subscriptions/listen stream, or of a type the listen acknowledgement did not honour")
        elif not capability.declared:
            why = f"although it did not declare '{kind}'"
        else:
            why = f"although it declared '{kind}' without listChanged: true"
        self._finding(Finding(
            "unpromised-notification",
            f"the server sent {method} {why}; it is not acted on (the list is not re-read because of it)"
            + ("; --poll re-lists on a timer" if self.options.poll is None else ""),
            kind=kind, detail={"method": method}))

    def _on_updated(self, link: _Link, params: dict[str, Any]) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            self._finding(Finding("protocol-violation", "notifications/resources/updated without a string uri",
                                  kind="resources"))
            return
        if not link.era.carried_by(params, link.listen_id):
            self._finding(Finding("unpromised-notification", "the server sent notifications/resources/updated "
                                  "outside the subscriptions/listen stream; not acted on", kind="resources"))
            return
        if uri not in link.subscribed and not any(uri.startswith(s.rstrip("/") + "/") for s in link.subscribed):
            self._finding(Finding("unpromised-notification", "the server sent notifications/resources/updated "
                                  "for a URI mcpprobe did not subscribe to", kind="resources",
                                  detail={"method": "notifications/resources/updated"}))
            return
        link.updates[uri] = link.updates.get(uri, 0) + 1
        link.updates_wake.set()

    def _on_log(self, link: _Link, params: dict[str, Any]) -> None:
        if self.options.log_level is None:
            return
        now = time.monotonic()
        start, count = link.log_window
        if now - start >= 1.0:
            start, count = now, 0
        if count >= LOG_EVENTS_PER_SECOND:
            link.logs_suppressed += 1
            link.log_window = (start, count)
            return
        link.log_window = (start, count + 1)
        extra = {"suppressed": link.logs_suppressed} if link.logs_suppressed else {}
        link.logs_suppressed = 0
        level = params.get("level")
        self.emit("log", "server", level=level if isinstance(level, str) else None,
                  logger=params.get("logger") if isinstance(params.get("logger"), str) else None,
                  data=params.get("data"), **extra)

    def _on_ack(self, link: _Link, params: dict[str, Any]) -> None:
        if link.listen_id is None or not link.era.carried_by(params, link.listen_id) or link.listen_acked.is_set():
            return
        honored = params.get("notifications")
        link.honored = honored if isinstance(honored, dict) else {}
        link.listen_acked.set()

    # ----- one connection -----

    async def _connected(self, link: _Link, session: Session) -> None:
        link.session = session
        link.era = session.era
        caps = session.capabilities
        reconnected = self.capabilities is not None
        self._reconnected = reconnected
        if reconnected:
            self.emit("reconnect", "server", state="connected", reason="connected again", attempt=self._attempt,
                      retryInSeconds=None)
        self._server_snapshot(session, "reconnect" if reconnected else "connect")
        if reconnected:
            self._compare_capabilities(session)
        self.capabilities, self.protocol_version = caps, session.snapshot.protocol_version
        for kind, state in self.kinds.items():
            state.declared = declared(caps, KINDS[kind].capability)
            state.promised = state.declared and declared(caps, KINDS[kind].notifier, "listChanged")
            if not state.declared:
                state.status, state.items, state.list_completed = "not-declared", None, False
        link.caps_known = True
        if self.options.subscribe:
            self._check_subscribe(session)
        failure: list[BaseException] = []
        async with anyio.create_task_group() as group:
            async def guarded(fn: Any, *args: Any) -> None:
                # Errors are kept and raised after the group, so they never arrive as exception groups.
                try:
                    await fn(*args)
                except _Dropped as exc:
                    failure.append(exc)
                    group.cancel_scope.cancel()
                except ProbeError as exc:
                    failure.append(_Dropped(exc) if self._is_drop(link, exc) else exc)
                    group.cancel_scope.cancel()

            group.start_soon(guarded, self._monitor, link)
            await guarded(self._setup, link, session, group, guarded, reconnected)
        if failure:
            raise failure[0]

    def _is_drop(self, link: _Link, exc: ProbeError) -> bool:
        conn = link.session.conn if link.session is not None else None
        return (conn is not None and conn.closed_error is not None) or isinstance(exc, ConnectionFailed)

    async def _monitor(self, link: _Link) -> None:
        """The transport reports a dead peer through `conn.closed`; turn that into a drop."""
        assert link.session is not None
        conn = link.session.conn
        await conn.closed.wait()
        raise _Dropped(conn.closed_error)

    async def _setup(self, link: _Link, session: Session, group: Any, guarded: Any, reconnected: bool) -> None:
        opts = self.options
        resources_first = bool(opts.subscribe) and self.kinds["resources"].declared
        listed: set[str] = set()
        if opts.log_level is not None:
            await self._set_log_level(link, session)
        if link.era.listens:
            if resources_first:
                # The catalog check needs the resource list before the listen request names URIs.
                await self._initial(link, session, ("resources", "templates"), reconnected)
                listed.update(("resources", "templates"))
                uris = self._catalog_checked(link)
            else:
                uris = []
            await self._start_listen(link, session, group, guarded, uris)
            if listed:
                # Changes between that first list and the acknowledgement are not lost: list again.
                for kind in ("resources", "templates"):
                    if self.kinds[kind].promised:
                        self._poke(link, kind, "listen")
        elif (stream := session.server_stream) is not None:
            await self._start_server_stream(link, session, stream, group, guarded)
        await self._initial(link, session, tuple(k for k in KINDS if k not in listed), reconnected)
        self._say_promises(link)
        if opts.subscribe and not link.era.listens and self.kinds["resources"].declared:
            await self._subscribe_legacy(link, session, self._catalog_checked(link))
        elif opts.subscribe and not self.kinds["resources"].declared:
            self.emit("error", "resources", code="not-declared", message=(
                "--subscribe: the server did not declare 'resources'; nothing was subscribed"))
        for tool, pairs in opts.calls:
            await self._call(link, session, tool, pairs)
        for notifier in RELISTED:
            group.start_soon(guarded, self._worker, link, notifier)
        group.start_soon(guarded, self._report_updates, link)
        if opts.poll is not None:
            group.start_soon(guarded, self._poller, link)

    # ----- snapshots -----

    def _server_snapshot(self, session: Session, reason: str) -> None:
        snap = session.snapshot
        self.emit("snapshot", "server", trigger=reason, transport=snap.transport, target=snap.target,
                  protocolVersion=snap.protocol_version or None, era=snap.era or None,
                  serverInfo=snap.server_info, instructions=snap.instructions, capabilities=snap.capabilities)

    def _compare_capabilities(self, session: Session) -> None:
        before, after = self.capabilities or {}, session.capabilities
        version_before, version_after = self.protocol_version, session.snapshot.protocol_version
        if before == after and version_before == version_after:
            return
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        changed = sorted(name for name in set(before) & set(after) if before[name] != after[name])
        fields: dict[str, Any] = {"before": before, "after": after, "added": added, "removed": removed,
                                  "changed": changed}
        if version_before != version_after:
            fields["protocolVersion"] = {"before": version_before, "after": version_after}
        self.emit("capabilities_changed", "server", **fields)
        if self.options.exit_on_change:
            self.stop("exit-on-change", ExitCode.FINDINGS)

    async def _initial(self, link: _Link, session: Session, kinds: tuple[str, ...], reconnected: bool) -> None:
        """List `kinds` concurrently, then report them in a fixed order (snapshot, and on a reconnect
        the difference from the last good snapshot of the previous connection)."""
        listings: dict[str, Listing] = {}
        dropped: list[_Dropped] = []

        async def one(kind: str) -> None:
            if self.kinds[kind].declared:
                listings[kind] = await list_kind(session, kind)

        async with anyio.create_task_group() as group:
            for kind in kinds:
                group.start_soon(one, kind)
        for listing in listings.values():
            if listing.state != "complete" and listing.error is not None and self._is_drop(link, listing.error):
                dropped.append(_Dropped(listing.error))
        if dropped:
            raise dropped[0]
        reason = "reconnect" if reconnected else "connect"
        for kind in KINDS:
            if kind not in kinds:
                continue
            state = self.kinds[kind]
            listing = listings.get(kind)
            if listing is None:
                self.emit("snapshot", kind, trigger=reason, declared=False, listCompleted=False,
                          status="not-declared", state="not-declared", count=0, items=[],
                          notifications="not-declared")
                continue
            self._listing_findings(link, listing)
            previous = state.items
            if listing.state == "complete":
                state.items, state.list_completed = catalog_kinds.by_identity(kind, listing.items), True
                state.status, state.stale_reason = "current", None
                state.last_listed_at = now_iso()
                if state.last_changed_at is None:
                    state.last_changed_at = state.last_listed_at
            else:
                state.list_completed = False
                state.status = "stale" if previous is not None else "failed"
                state.stale_reason = _why(listing)
            self.emit("snapshot", kind, trigger=reason, **self._kind_json(state), state=listing.state,
                      pages=len(listing.pages), items=list(state.items.values()) if state.items is not None else [],
                      **({"staleReason": state.stale_reason} if state.stale_reason else {}))
            if listing.state == "complete" and reconnected and previous is not None:
                diff = _diff(previous, state.items or {})
                if diff["changes"]:
                    state.last_changed_at = now_iso()
                    self.emit("diff", kind, trigger="reconnect", **diff, count=len(state.items or {}),
                              lastChangedAt=state.last_changed_at)
                    if self.options.exit_on_change:
                        self.stop("exit-on-change", ExitCode.FINDINGS)

    def _kind_json(self, state: KindState) -> dict[str, Any]:
        return {
            "declared": state.declared,
            "listCompleted": state.list_completed,
            "status": state.status,
            "count": len(state.items) if state.items is not None else 0,
            "lastChangedAt": state.last_changed_at,
            "notifications": self._notifications(state),
            "poll": self.options.poll if state.declared and not state.promised else None,
        }

    def _notifications(self, state: KindState) -> str:
        if not state.declared:
            return "not-declared"
        if state.promised:
            return "promised"
        if self.link is not None and self.link.era.listens and self.link.honored is not None and declared(
                self.capabilities or {}, KINDS[state.kind].notifier, "listChanged"):
            return "refused"
        return "not-promised"

    def _say_promises(self, link: _Link) -> None:
        said: set[str] = set()
        for kind in ("tools", "resources", "prompts"):
            state = self.kinds[kind]
            if not state.declared or state.promised or kind in said:
                continue
            said.add(kind)
            how = (f"re-listed every {self.options.poll:g} s (--poll)" if self.options.poll is not None
                   else "use --poll SECONDS to re-list")
            if self._notifications(state) == "refused":
                message = f"{kind}: subscriptions/listen did not honour {LISTEN_KEYS[kind]}; {how}"
            else:
                message = f"{kind}: no change notifications promised; {how}"
            self.emit("notice", kind, code="no-change-notifications", message=message)

    def _listing_findings(self, link: _Link, listing: Listing) -> None:
        for finding in listing.findings:
            if finding.code in ("list-failed", "list-incomplete"):
                continue  # told by the stale event
            self._finding(finding)

    def _check_drop(self, link: _Link, listing: Listing) -> None:
        if listing.error is not None and self._is_drop(link, listing.error):
            raise _Dropped(listing.error)

    # ----- re-listing -----

    def _poke(self, link: _Link, kind: str, reason: str) -> None:
        now = time.monotonic()
        link.last_at[kind] = now
        if link.first_at[kind] is None:
            link.first_at[kind] = now
            link.reasons[kind] = reason
        link.wake[kind].set()

    async def _worker(self, link: _Link, notifier: str) -> None:
        """One re-list in flight and at most one queued, whatever the rate of notifications.

        The handler only counts and sets `wake`; this loop waits for the burst to settle, takes the
        count, and re-lists the kind (resources: also templates) once. Notifications arriving during
        the re-list set `wake` again: that is the one queued re-list. A failed re-list is retried
        with backoff (sooner if a new notification comes).
        """
        kinds = [kind for kind in RELISTED[notifier] if self.kinds[kind].declared]
        delay = RETRY_FIRST
        failing = any(self.kinds[kind].status in ("stale", "failed") for kind in kinds)
        while True:
            if failing:
                with anyio.move_on_after(delay):
                    await link.wake[notifier].wait()
                if link.first_at[notifier] is None:
                    self._poke(link, notifier, "retry")
            else:
                await link.wake[notifier].wait()
            while (first := link.first_at[notifier]) is not None:
                until = min(link.last_at[notifier] + self.options.settle, first + self.options.max_wait)
                remaining = until - time.monotonic()
                if remaining <= 0:
                    break
                await anyio.sleep(remaining)
            reason, count = link.reasons[notifier] or "notification", link.pending[notifier]
            link.pending[notifier], link.first_at[notifier] = 0, None
            link.wake[notifier] = anyio.Event()
            retry_in = min(delay * 2, RETRY_MAX) if failing else RETRY_FIRST
            ok = True
            for kind in kinds:
                ok = await self._relist(link, kind, reason, count if kind == notifier else 0, retry_in) and ok
            failing, delay = (False, RETRY_FIRST) if ok else (True, retry_in)

    async def _relist(self, link: _Link, kind: str, reason: str, notifications: int, retry_in: float) -> bool:
        assert link.session is not None
        state = self.kinds[kind]
        was = state.status
        state.status = "updating"
        if reason == "notification" and notifications > 0:
            self.emit("list_changed", kind, notifications=notifications,
                      method=f"notifications/{kind}/list_changed")
        state.relists += 1
        self.result.relists[kind] = self.result.relists.get(kind, 0) + 1
        listing = await list_kind(link.session, kind)
        self._listing_findings(link, listing)
        if listing.state != "complete":
            self._check_drop(link, listing)
            state.status = "stale" if state.items is not None else "failed"
            state.stale_reason = _why(listing)
            self.emit("stale", kind, reason=state.stale_reason, state=listing.state, cause=_cause_of(listing),
                      trigger=reason, count=len(state.items or {}), lastChangedAt=state.last_changed_at,
                      retryInSeconds=retry_in)
            return False
        previous = state.items or {}
        new = catalog_kinds.by_identity(kind, listing.items)
        diff = _diff(previous, new)
        state.items, state.list_completed = new, True
        state.status, state.stale_reason = "current", None
        state.last_listed_at = now_iso()
        if diff["changes"]:
            state.last_changed_at = state.last_listed_at
        recovered = was in ("stale", "failed")
        if reason not in ("poll", "listen") or diff["changes"] or recovered:
            self.emit("diff", kind, trigger=reason, **diff, count=len(new), pages=len(listing.pages),
                      lastChangedAt=state.last_changed_at, **({"recovered": True} if recovered else {}))
        if diff["changes"] and self.options.exit_on_change:
            self.stop("exit-on-change", ExitCode.FINDINGS)
        return True

    async def _poller(self, link: _Link) -> None:
        assert self.options.poll is not None
        while True:
            await anyio.sleep(self.options.poll)
            for kind in ("tools", "resources", "prompts"):
                state = self.kinds[kind]
                if state.declared and not state.promised and link.first_at[kind] is None:
                    self._poke(link, kind, "poll")

    # ----- resource updates -----

    async def _report_updates(self, link: _Link) -> None:
        """At most one resource_updated event per URI per settle interval."""
        while True:
            await link.updates_wake.wait()
            await anyio.sleep(self.options.settle)
            link.updates_wake = anyio.Event()
            updates, link.updates = link.updates, {}
            for uri, count in updates.items():
                self.emit("resource_updated", "resources", uri=uri, notifications=count)

    def _check_subscribe(self, session: Session) -> None:
        """--subscribe needs resources.subscribe: refused (exit 3) before anything else is sent."""
        self._no_subscribe = False
        if not self.kinds["resources"].declared:
            if self.settings.force:
                return  # said after the listing, as an error event: there is nothing to subscribe to
            error = Refused(
                "--subscribe needs the 'resources' capability with 'subscribe', and the server did not declare "
                "'resources'; nothing was subscribed.", detail={"missing": "resources"})
            if self._reconnected:
                self.emit("error", "resources", code=error.code, message=error.message)
                self._no_subscribe = True
                return
            raise error
        if not declared(session.capabilities, "resources", "subscribe"):
            if self.settings.force:
                self._finding(Finding("forced", "--subscribe with --force although 'resources.subscribe' is not "
                                      "declared", kind="resources"))
                return
            error = Refused(
                "--subscribe needs the 'resources.subscribe' capability, which the server did not declare; "
                "nothing was subscribed. Use --force to subscribe anyway.",
                detail={"missing": "resources.subscribe"})
            if self._reconnected:
                self.emit("error", "resources", code=error.code, message=error.message)
                self._no_subscribe = True
                return
            raise error

    def _catalog_checked(self, link: _Link) -> list[str]:
        """The --subscribe URIs that are in the catalog (or match a template); refused otherwise."""
        from mcpprobe.arguments import matches_template

        if self._no_subscribe and self._reconnected:
            return []
        resources = self.kinds["resources"].items or {}
        templates = list((self.kinds["templates"].items or {}).keys())
        ok: list[str] = []
        for uri in self.options.subscribe:
            known = uri in resources or any(matches_template(uri, t) for t in templates)
            if known or self.settings.force:
                if not known:
                    self._finding(Finding("forced", f"--subscribe {uri}: not in resources/list nor matching a "
                                          "template; subscribed anyway (--force)", kind="resources"))
                ok.append(uri)
                continue
            message = (f"--subscribe {uri}: not in the server's resources/list and matching no resource template; "
                       "nothing was subscribed. Use --force to subscribe anyway.")
            if not self._reconnected and self.kinds["resources"].list_completed:
                raise Refused(message, code="not-in-catalog", detail={"uri": uri})
            self.emit("error", "resources", code="not-in-catalog", message=message)
        return ok

    async def _subscribe_legacy(self, link: _Link, session: Session, uris: list[str]) -> None:
        done: list[str] = []
        refused: list[dict[str, Any]] = []
        for uri in uris:
            try:
                await session.request("resources/subscribe", {"uri": uri})
            except Refused:
                raise
            except ProbeError as exc:
                if self._is_drop(link, exc):
                    raise _Dropped(exc) from None
                refused.append({"uri": uri, "error": exc.message})
                continue
            done.append(uri)
            link.subscribed.add(uri)
        if uris:
            self.emit("subscribed", "resources", via="resources/subscribe", uris=done, refused=refused)
            for item in refused:
                self.emit("error", "resources", code="rpc-error", message=f"resources/subscribe {item['uri']}: "
                          f"{item['error']}")

    async def _set_log_level(self, link: _Link, session: Session) -> None:
        if not link.era.sets_log_level:
            self.emit("notice", "server", code="log-level-unavailable", message=(
                "--log-level: logging/setLevel does not exist in the 2026-07-28 era; log messages the server "
                "sends anyway are shown"))
            return
        if not declared(session.capabilities, "logging"):
            self.emit("notice", "server", code="log-level-unavailable", message=(
                "--log-level: the server did not declare 'logging'; logging/setLevel was not sent"))
            return
        try:
            await session.request("logging/setLevel", {"level": self.options.log_level})
        except Refused:
            raise
        except ProbeError as exc:
            if self._is_drop(link, exc):
                raise _Dropped(exc) from None
            self.emit("error", "server", code=exc.code, message=f"logging/setLevel: {exc.message}")

    async def _call(self, link: _Link, session: Session, tool: str, pairs: tuple[str, ...]) -> None:
        """--call: the same catalog, argument and confirmation checks as `call`, then tools/call.
        Refused on the first connection ends the watch (exit 3); on a reconnect, an error event."""
        from mcpprobe.invoke import Hooks, InvokeOutcome, checked_arguments, confirm_call

        state = self.kinds["tools"]
        listing = Listing("tools", state.declared, state="complete" if state.list_completed else "incomplete",
                          items=list((state.items or {}).values()))
        outcome = InvokeOutcome("call", item_kind="tools")
        hooks = Hooks(yes=self.options.yes or tool in self._confirmed, ask=self._ask, preview=self._preview)
        try:
            session.check("tools/call")
            _, arguments = await checked_arguments(session, outcome, listing, tool, list(pairs), {})
            await confirm_call(session, outcome, outcome.item or {"name": tool}, arguments, hooks)
        except ProbeError as exc:
            if not self._reconnected and isinstance(exc, Refused | UsageProblem):
                raise type(exc)(f"--call {tool}: {exc.message}", code=exc.code, detail=exc.detail,
                                severity=exc.severity) from None
            self.emit("error", "tools", code=exc.code, message=f"--call {tool}: {exc.message}")
            return
        if outcome.confirmation == "confirmed":
            self._confirmed.add(tool)
        for finding in outcome.findings:
            self._finding(finding)
        try:
            result = await session.request("tools/call", {"name": tool, "arguments": arguments})
        except ProbeError as exc:
            if self._is_drop(link, exc):
                raise _Dropped(exc) from None
            self.emit("error", "tools", code=exc.code, message=f"--call {tool}: {exc.message}")
            return
        text = next((c.get("text") for c in result.get("content", []) if isinstance(c, dict)
                     and isinstance(c.get("text"), str)), None) if isinstance(result.get("content"), list) else None
        self.emit("call", "tools", tool=tool, isError=result.get("isError") is True,
                  text=redact.clip(text, 500) if isinstance(text, str) else None)

    # ----- the 2026-07-28 subscriptions/listen stream -----

    def _listen_filter(self, uris: list[str]) -> dict[str, Any]:
        wanted: dict[str, Any] = {}
        for kind, key in LISTEN_KEYS.items():
            if self.kinds[kind].declared and declared(self.capabilities or {}, kind, "listChanged"):
                wanted[key] = True
        if uris:
            wanted["resourceSubscriptions"] = list(uris)
        return wanted

    async def _start_listen(self, link: _Link, session: Session, group: Any, guarded: Any, uris: list[str]) -> None:
        wanted = self._listen_filter(uris)
        for kind in LISTEN_KEYS:
            self.kinds[kind].promised = False  # until the acknowledgement says so
        self.kinds["templates"].promised = False
        if not wanted:
            return
        ended: list[BaseException] = []

        async def listen() -> None:
            try:
                await session.request("subscriptions/listen", {"notifications": wanted}, timeout=NEVER)
            except ProbeError as exc:
                ended.append(exc)
                link.listen_acked.set()
                if self._is_drop(link, exc):
                    raise
                self.emit("error", "server", code=exc.code, message=f"subscriptions/listen: {exc.message}")
                return
            ended.append(EOFError())
            link.listen_acked.set()
            # A result is the server's graceful close: events may be missed from here on.
            self.emit("notice", "server", code="listen-ended", message=(
                "the server closed the subscriptions/listen stream; change notifications stop here"
                + ("; --poll goes on re-listing" if self.options.poll is not None else "")))
            for kind in LISTEN_KEYS:
                self.kinds[kind].promised = False

        group.start_soon(guarded, listen)
        with anyio.move_on_after(self.settings.timeout):
            await link.listen_acked.wait()
        if not link.listen_acked.is_set():
            self.emit("error", "server", code="timeout", message=(
                f"subscriptions/listen: no acknowledgement within {self.settings.timeout:g} s"))
            return
        if link.honored is None:
            if ended and isinstance(ended[0], ProbeError) and self._is_drop(link, ended[0]):
                raise _Dropped(ended[0])
            return
        honored = link.honored
        refused = [key for key in wanted if key != "resourceSubscriptions" and honored.get(key) is not True]
        honored_uris = honored.get("resourceSubscriptions") if isinstance(honored.get("resourceSubscriptions"),
                                                                          list) else []
        refused_uris = [uri for uri in uris if uri not in honored_uris]
        extra = [key for key, value in honored.items() if value and key not in wanted]
        for kind, key in LISTEN_KEYS.items():
            self.kinds[kind].promised = honored.get(key) is True and key in wanted
        self.kinds["templates"].promised = self.kinds["resources"].promised
        link.subscribed = {uri for uri in uris if uri in honored_uris}
        self.emit("subscribed", "server", via="subscriptions/listen", requested=wanted, honored=honored,
                  refused=refused + refused_uris, uris=sorted(link.subscribed))
        if extra:
            self._finding(Finding("protocol-violation", f"the subscriptions/listen acknowledgement honours types "
                                  f"that were not requested: {', '.join(extra)}", detail={"extra": extra}))

    # ----- the legacy streamable HTTP GET stream -----

    async def _start_server_stream(self, link: _Link, session: Session, server_stream: ServerStream, group: Any,
                                   guarded: Any) -> None:
        opened = anyio.Event()
        status: list[int] = []

        def on_open(code: int) -> None:
            status.append(code)
            opened.set()

        async def stream() -> None:
            failures = 0
            while True:
                try:
                    how = await server_stream.open_server_stream(on_open=on_open)
                except ProbeError as exc:
                    opened.set()
                    if isinstance(exc, ConnectionFailed | AuthFailed) or link.session is None:
                        raise _Dropped(exc) from None
                    failures += 1
                    if failures == 1:
                        self.emit("error", "server", code=exc.code, message=f"GET event stream: {exc.message}")
                    await anyio.sleep(min(RETRY_FIRST * 2 ** failures, RETRY_MAX))
                    continue
                if how == "unsupported":
                    self.emit("notice", "server", code="no-event-stream", message=(
                        "the server offers no GET event stream (HTTP 405): notifications can only arrive on "
                        "responses to requests, so changes may go unseen between them; --poll SECONDS re-lists"))
                    await self._keep_alive(session)
                    return
                # The server may close the stream at any time; open it again (nothing is replayed).
                await anyio.sleep(RETRY_FIRST)

        group.start_soon(guarded, stream)
        with anyio.move_on_after(min(self.settings.connect_timeout, self.settings.timeout)):
            await opened.wait()


    async def _keep_alive(self, session: Session) -> None:
        """With no stream open there is nothing to notice a dead server by: ping it now and then.
        A server that no longer answers is a dropped connection (and a reconnect)."""
        period = self.options.keepalive
        while True:
            await anyio.sleep(period)
            try:
                await session.request("ping", timeout=min(self.settings.timeout, period))
            except (ConnectionFailed, RequestTimeout, AuthFailed) as exc:
                raise _Dropped(exc) from None  # gone, silent, or no longer letting us in
            except ProbeError:
                return  # answered, if with an error: alive, and pings are not worth repeating


# ----- diffs -----


def _diff(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The diff event's fields: added, removed and changed items by identity; for a changed one,
    the top-level fields that differ."""
    diff = catalog_kinds.diff(before, after)
    changed = [{"id": ident, "fields": catalog_kinds.changed_fields(old, new)}
               for ident, (old, new) in diff.changed.items()]
    return {"added": diff.added, "removed": diff.removed, "changed": changed, "changes": diff.changes}


def _why(listing: Listing) -> str:
    for finding in listing.findings:
        if finding.code in ("list-failed", "list-incomplete", "method-not-found"):
            return finding.message
    if listing.error is not None:
        return listing.error.message
    return f"the list ended in state {listing.state}"


def _cause_of(listing: Listing) -> str:
    for finding in listing.findings:
        if finding.code in ("list-failed", "list-incomplete"):
            cause = finding.detail.get("cause")
            if isinstance(cause, str):
                return cause
        if finding.code == "method-not-found":
            return "method-not-found"
    error = listing.error
    if isinstance(error, RequestTimeout):
        return "timeout"
    if isinstance(error, RpcError):
        return "error"
    return "error"


def _plain(detail: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in detail.items() if k not in ("snapshot", "serverStderr", "findings", "timings")}


async def watch(target: Target, settings: Settings, options: WatchOptions, emit: Emit, *,
                stderr_writer: Any = None, on_start: Callable[[Watcher], None] | None = None,
                tracer: Any = None, http_hooks: dict[str, list[Any]] | None = None,
                ask: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None,
                preview: Callable[..., None] | None = None) -> WatchResult:
    """Run a watch until a limit, a stop request or a fatal error; every event goes to `emit`.
    `ask` and `preview` are --call's confirmation hooks, as for `call` (mcpprobe.invoke.Hooks)."""
    watcher = Watcher(target, settings, options, emit, stderr_writer=stderr_writer, tracer=tracer,
                      http_hooks=http_hooks, ask=ask, preview=preview)
    if on_start is not None:
        on_start(watcher)
    return await watcher.run()


__all__ = ["LOG_LEVELS", "WatchOptions", "WatchResult", "Watcher", "watch"]
