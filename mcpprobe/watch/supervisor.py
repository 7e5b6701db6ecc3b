"""The supervisor: connect, set each connection up in order, notice when it drops (the transport
closing, a failed request, the server stream failing, a keep-alive ping unanswered), and connect
again with backoff. Nothing is trusted across connections without re-listing: the old snapshot
only serves as the "before" of the diff that follows a reconnect."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from mcpprobe.client.connect import NO_HOOKS, HandshakeFailed, SessionHooks, open_session
from mcpprobe.client.session import Session
from mcpprobe.client.settings import Settings
from mcpprobe.errors import (
    AuthFailed,
    ConnectionFailed,
    HttpForbidden,
    ProbeError,
    ProtocolFailure,
    Refused,
    RequestTimeout,
    UsageProblem,
)
from mcpprobe.exitcodes import ExitCode
from mcpprobe.testhooks import crash_point
from mcpprobe.watch.call import Caller
from mcpprobe.watch.events import Events
from mcpprobe.watch.lists import RELISTED, RETRY_FIRST, RETRY_MAX, Lists
from mcpprobe.watch.logs import set_log_level
from mcpprobe.watch.model import Dropped, Emit, Link, WatchOptions, WatchResult
from mcpprobe.watch.router import Router
from mcpprobe.watch.subscriptions import Subscriptions
from mcpprobe.wire.target import Target
from mcpprobe.wire.transport import ServerStream

if TYPE_CHECKING:
    from mcpprobe.operations.input import Confirmer

RECONNECT_FIRST, RECONNECT_MAX = 0.5, 30.0


class Watcher:
    """One watch: the parts (events, lists, router, subscriptions, --call) are made once and live
    across connections; a `Link` is made per connection and dropped with it."""

    def __init__(self, target: Target, settings: Settings, options: WatchOptions, emit: Emit,
                 *, session_hooks: SessionHooks = NO_HOOKS, confirmer: Confirmer | None = None) -> None:
        self.target = target
        self.settings = settings
        self.options = options
        self._outer = session_hooks  # --trace, --server-stderr live
        self.events = Events(emit, options)
        self.lists = Lists(self.events, options)
        self.router = Router(self.events, options, self.lists.kinds)
        self.subscriptions = Subscriptions(self.events, options, settings, self.lists.kinds)
        self.caller = Caller(self.events, options, confirmer)
        self.capabilities: dict[str, Any] | None = None  # the last connection's
        self.protocol_version: str | None = None
        self.link: Link | None = None
        self._attempt = 0

    @property
    def result(self) -> WatchResult:
        return self.events.result

    def stop(self, reason: str, code: ExitCode, error: ProbeError | None = None) -> None:
        """End the watch at the next await (Ctrl-C, a closed pipe). The first reason wins."""
        self.events.stop(reason, code, error)

    # ----- the run: connect, and connect again -----

    async def run(self) -> WatchResult:
        events = self.events
        with anyio.CancelScope() as scope:
            events.scope = scope
            await self._connect_loop()  # --duration runs from the end of the first listing
        if not events.stopped:
            events.stop("duration" if scope.cancelled_caught else "ended", ExitCode.OK)
        result = events.result
        events.emit("end", None, reason=result.reason, exitCode=result.exit_code, events=result.events,
                    relists=dict(result.relists),
                    **({"error": {"code": result.error.code, "message": result.error.message}}
                       if result.error is not None else {}))
        return result

    async def _connect_loop(self) -> None:
        events = self.events
        attempt = 0
        while not events.stopped:
            link = Link(events.next_connection())
            self.link = link
            error: ProbeError | None = None
            opened: Session | None = None
            try:
                hooks = self._outer.adding(tracer=self._saw, on_connection=self.router.installer(link))
                async with open_session(self.target, self.settings, hooks) as session:
                    opened = session
                    self._attempt, attempt = attempt, 0
                    await self._connected(link, session)
            except Dropped as dropped:
                error = dropped.error
            except HandshakeFailed as failed:
                error = failed.error
                if failed.handshake.stderr_tail:
                    events.result.stderr_tail = list(failed.handshake.stderr_tail)
            except ProbeError as exc:
                error = exc
                tail = opened.stderr_tail() if opened is not None else []
                if tail:
                    events.result.stderr_tail = tail
            established = opened is not None
            if events.stopped:
                return
            if error is None:
                error = ConnectionFailed("the connection ended")
            if self.capabilities is None or isinstance(error, Refused | AuthFailed | HttpForbidden | UsageProblem) or (
                    not established and isinstance(error, ProtocolFailure) and error.code == "unsupported-version"):
                # Nothing was ever watched, or retrying cannot help: end with the stage's own code
                # (stopped first, so that --count cannot count this event and end with 0 instead).
                events.stop("error", error.exit_code, error)
                events.emit("error", "server", code=error.code, message=error.message,
                            exitCode=int(error.exit_code))
                return
            self.lists.connection_lost()
            if not self.options.reconnect:
                events.emit("reconnect", "server", state="lost", reason=error.message, attempt=0,
                            retryInSeconds=None)
                events.stop("connection-lost", ExitCode.CONNECTION, error)
                return
            attempt += 1
            delay = min(RECONNECT_FIRST * 2 ** (attempt - 1), RECONNECT_MAX)
            events.emit("reconnect", "server", state="lost" if established else "failed", reason=error.message,
                        attempt=attempt, retryInSeconds=delay)
            await anyio.sleep(delay)

    def _saw(self, direction: str, message: Any) -> None:
        if direction == "send" and self.link is not None:
            self.subscriptions.saw_sent(self.link, message)

    # ----- one connection -----

    async def _connected(self, link: Link, session: Session) -> None:
        link.session = session
        link.era = session.era
        reconnected = self.capabilities is not None
        if reconnected:
            self.events.emit("reconnect", "server", state="connected", reason="connected again",
                             attempt=self._attempt, retryInSeconds=None)
        self._server_snapshot(session, "reconnect" if reconnected else "connect")
        if reconnected:
            self._compare_capabilities(session)
        self.capabilities, self.protocol_version = session.capabilities, session.snapshot.protocol_version
        self.lists.declare(session.capabilities)
        link.caps_known = True
        if self.options.subscribe:
            self.subscriptions.check_capability(session, reconnected)
        failure: list[BaseException] = []
        async with anyio.create_task_group() as group:
            async def guarded(fn: Any, *args: Any) -> None:
                # Errors are kept and raised after the group, so they never arrive as exception groups.
                try:
                    await fn(*args)
                except Dropped as exc:
                    failure.append(exc)
                    group.cancel_scope.cancel()
                except ProbeError as exc:
                    failure.append(Dropped(exc) if link.is_drop(exc) else exc)
                    group.cancel_scope.cancel()

            group.start_soon(guarded, self._monitor, link)
            await guarded(self._setup, link, session, group, guarded, reconnected)
        if failure:
            raise failure[0]

    async def _monitor(self, link: Link) -> None:
        """The transport reports a dead peer through `conn.closed`; turn that into a drop."""
        assert link.session is not None
        conn = link.session.conn
        await conn.closed.wait()
        raise Dropped(conn.closed_error or ConnectionFailed("the connection ended"))

    async def _setup(self, link: Link, session: Session, group: Any, guarded: Any, reconnected: bool) -> None:
        """In order: the log level, how the server tells (listen, or the server stream), the first
        listing, the subscriptions, the --calls; then the workers that run until the connection ends."""
        opts = self.options
        kinds = self.lists.kinds
        subscriptions = self.subscriptions
        resources_first = bool(opts.subscribe) and kinds["resources"].declared
        listed: set[str] = set()
        if opts.log_level is not None:
            await set_log_level(self.events, link, session, opts.log_level)
        if link.era.listens:
            if resources_first:
                # The catalog check needs the resource list before the listen request names URIs.
                await self.lists.initial(link, session, ("resources", "templates"), reconnected)
                listed.update(("resources", "templates"))
                uris = subscriptions.in_catalog(reconnected)
            else:
                uris = []
            await subscriptions.listen(link, session, group, guarded, uris)
            if listed:
                # Changes between that first list and the acknowledgement are not lost: list again.
                for kind in ("resources", "templates"):
                    if kinds[kind].promised:
                        link.poke(kind, "listen")
        elif (stream := session.server_stream) is not None:
            await self._open_server_stream(link, session, stream, group, guarded)
        await self.lists.initial(link, session, tuple(k for k in kinds if k not in listed), reconnected)
        if not reconnected and opts.duration is not None and self.events.scope is not None:
            # Watching starts now: a server slow to start (npx fetching a package) is still watched
            # for the whole --duration; connecting and listing have their own timeouts.
            self.events.scope.deadline = anyio.current_time() + opts.duration
        self.lists.say_promises(link)
        if opts.subscribe and not link.era.listens and kinds["resources"].declared:
            await subscriptions.subscribe_legacy(link, session, subscriptions.in_catalog(reconnected))
        elif opts.subscribe and not kinds["resources"].declared:
            self.events.emit("error", "resources", code="not-declared", message=(
                "--subscribe: the server did not declare 'resources'; nothing was subscribed"))
        for tool, given in opts.calls:
            await self.caller.call(link, session, kinds["tools"], tool, given, reconnected)
        for notifier in RELISTED:
            group.start_soon(guarded, self.lists.worker, link, notifier)
        group.start_soon(guarded, subscriptions.report_updates, link)
        if opts.poll is not None:
            group.start_soon(guarded, self.lists.poller, link)

    def _server_snapshot(self, session: Session, trigger: str) -> None:
        snap = session.snapshot
        self.events.emit("snapshot", "server", trigger=trigger, transport=snap.transport, target=snap.target,
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
        self.events.emit("capabilities_changed", "server", **fields)
        if self.options.exit_on_change:
            self.events.stop("exit-on-change", ExitCode.FINDINGS)

    # ----- staying sure the server is there -----

    async def _open_server_stream(self, link: Link, session: Session, server_stream: ServerStream, group: Any,
                                  guarded: Any) -> None:
        """Keep the transport's server stream open (notifications that belong to no request come
        there), opening it again whenever the server closes it. A server that offers none leaves
        nothing to notice a dead server by: then keep-alive pings."""
        opened = anyio.Event()

        def on_open(code: int) -> None:
            opened.set()

        async def stream() -> None:
            failures = 0
            while True:
                try:
                    how = await server_stream.open_server_stream(on_open=on_open)
                except ProbeError as exc:
                    opened.set()
                    if isinstance(exc, ConnectionFailed | AuthFailed) or link.session is None:
                        raise Dropped(exc) from None
                    failures += 1
                    if failures == 1:
                        self.events.error("server", exc, "GET event stream")
                    await anyio.sleep(min(RETRY_FIRST * 2 ** failures, RETRY_MAX))
                    continue
                if how == "unsupported":
                    self.events.emit("notice", "server", code="no-event-stream", message=(
                        "the server offers no GET event stream (HTTP 405): notifications can only arrive on "
                        "responses to requests, so changes may go unseen between them; --poll SECONDS re-lists"))
                    await self._keep_alive(session)
                    return
                # The server may close the stream at any time; open it again (nothing is replayed).
                await anyio.sleep(RETRY_FIRST)

        group.start_soon(guarded, stream)
        with anyio.move_on_after(self.settings.connect_budget):
            await opened.wait()

    async def _keep_alive(self, session: Session) -> None:
        """With no stream open there is nothing to notice a dead server by: ping it now and then.
        A server that no longer answers is a dropped connection (and a reconnect)."""
        period = self.options.keepalive
        while True:
            await anyio.sleep(period)
            crash_point("keepalive")
            try:
                await session.request("ping", timeout=min(self.settings.timeout, period))
            except (ConnectionFailed, RequestTimeout, AuthFailed) as exc:
                raise Dropped(exc) from None  # gone, silent, or no longer letting us in
            except ProbeError:
                return  # answered, if with an error: alive, and pings are not worth repeating
