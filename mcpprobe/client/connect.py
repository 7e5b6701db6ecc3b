"""Connect: the transport for a target, the era negotiated on it, and a ready `Session`.

`open_session` is the one way every subcommand reaches a server: it starts the transport,
installs the client's own request handlers, has `mcpprobe.client.negotiate` settle the era, and
yields the session; every exit path closes the transport. What a command hangs on it (tracing,
live stderr, handlers installed before the first message) is one `SessionHooks`; a handshake that
fails is a `HandshakeFailed`, with what the wire showed until then.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from mcpprobe.client.negotiate import check_transport, initialize, negotiate, rediscover
from mcpprobe.client.restart import DiedOnDiscover, RestartForModern
from mcpprobe.client.session import Session, Snapshot, Timing, client_capabilities, client_info
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ConnectionFailed, ProbeError, RequestTimeout, seconds
from mcpprobe.findings import Finding
from mcpprobe.safety.redact import Redactor, active, clip
from mcpprobe.wire.jsonrpc import Connection, Tracer
from mcpprobe.wire.protocols import LATEST_HANDSHAKE
from mcpprobe.wire.stderrlog import Said, StderrEntry, read_said
from mcpprobe.wire.target import HttpTarget, StdioTarget, Target
from mcpprobe.wire.transport import HttpHooks, Transport

if TYPE_CHECKING:
    from mcpprobe.wire.stdio import StdioTransport
    from mcpprobe.wire.streamable_http import StreamableHttpTransport
    from mcpprobe.wire.trace import TraceWriter
    from mcpprobe.wire.transport import BodyQueueing, Immediate, LineQueueing

    def _declared(stdio: StdioTransport, http: StreamableHttpTransport) -> tuple[LineQueueing, Immediate, BodyQueueing]:
        """Never run: mypy holds the fast-path methods of the transports made here to the abilities
        `FastPath.of` finds by name (wire/transport.py); a changed signature fails `python -m mypy`."""
        return stdio, stdio, http


@dataclass(frozen=True)
class SessionHooks:
    """What a command hangs on the sessions it opens; each is optional.

    `tracer` sees every message sent and received (--trace; a spinner that follows the phases).
    `http_hooks` are httpx event hooks for the HTTP transports (--trace's request and status lines).
    `stderr_writer` gets a stdio server's stderr as it comes (--server-stderr live).
    `on_connection(conn)` runs before the first message is sent, so that handlers are in place
    before anything can arrive (no silent window); again on the connection of a restart.
    An operation adds its own to its caller's (`adding`), never in their place.
    `redactor` masks the run's secrets in what the connection keeps of the server's text; without
    one, the command's (`redact.active()`) when the session opens.
    `judge_snapshot(snapshot)` gives the findings where the server is not what the run was told it
    is (--server-json); the operation that keeps the session's snapshot adds them, once
    (mcpprobe.operations.outcome.guarded).
    """

    tracer: Tracer | None = None
    http_hooks: HttpHooks | None = None
    stderr_writer: Callable[[str], None] | None = None
    on_connection: Callable[[Connection], None] | None = None
    redactor: Redactor | None = None
    judge_snapshot: Callable[[Snapshot], list[Finding]] | None = None

    @classmethod
    def of_run(cls, trace: TraceWriter | None, stderr_writer: Callable[[str], None] | None = None,
               *, server: str = "", judge_snapshot: Callable[[Snapshot], list[Finding]] | None = None) -> SessionHooks:
        """The hooks of a command line: its --trace writer (lines prefixed with `server`, in a
        fleet), its --server-stderr live writer and its --server-json's judge of the snapshot."""
        if trace is None:
            return cls(stderr_writer=stderr_writer, judge_snapshot=judge_snapshot)
        return cls(tracer=trace.tracer(server), http_hooks=trace.http_hooks(server), stderr_writer=stderr_writer,
                   judge_snapshot=judge_snapshot)

    def adding(self, *, tracer: Tracer | None = None,
               on_connection: Callable[[Connection], None] | None = None) -> SessionHooks:
        """These hooks with an operation's own: each of its own runs first, then the caller's."""
        return replace(self, tracer=_both(tracer, self.tracer), on_connection=_both(on_connection, self.on_connection))


NO_HOOKS = SessionHooks()


@dataclass(frozen=True)
class Handshake:
    """What the wire showed until a handshake failed: the snapshot as far as it got (the server's
    chosen version, say), the findings and timings so far, the server's stderr (shortened)."""

    snapshot: Snapshot
    findings: tuple[Finding, ...] = ()
    timings: tuple[Timing, ...] = ()
    stderr_tail: tuple[StderrEntry, ...] = ()


class HandshakeFailed(Exception):
    """open_session never yielded a session. `error` says why, and its class carries the exit
    code; `handshake` is what the wire showed before, which often explains it."""

    def __init__(self, error: ProbeError, handshake: Handshake) -> None:
        super().__init__(error.message)
        self.error = error
        self.handshake = handshake


def _both(first: Callable[..., None] | None, then: Callable[..., None] | None) -> Callable[..., None] | None:
    if first is None or then is None:
        return first or then

    def both(*args: Any) -> None:
        first(*args)
        then(*args)

    return both


def make_transport(target: Target, settings: Settings, hooks: SessionHooks = NO_HOOKS,
                   redactor: Redactor | None = None) -> Transport:
    """The transport of `target`; it masks with `redactor` (by default the hooks', else the command's)."""
    if redactor is None:
        redactor = hooks.redactor if hooks.redactor is not None else active()
    if isinstance(target, StdioTarget):
        from mcpprobe.wire.stdio import StdioTransport

        return StdioTransport(
            target, max_message_bytes=settings.max_message_bytes, stderr_mode=settings.server_stderr,
            stderr_writer=hooks.stderr_writer, redactor=redactor,
        )
    assert isinstance(target, HttpTarget)
    from mcpprobe.wire.legacy_sse import LegacySseTransport
    from mcpprobe.wire.streamable_http import StreamableHttpTransport

    cls = LegacySseTransport if target.transport == "sse" else StreamableHttpTransport
    return cls(target, max_message_bytes=settings.max_message_bytes, connect_timeout=settings.connect_budget,
               http_hooks=hooks.http_hooks)


def _connection(transport: Transport, hooks: SessionHooks, settings: Settings, redactor: Redactor) -> Connection:
    return Connection(transport, tracer=hooks.tracer, send_timeout=settings.timeout, redactor=redactor)


@asynccontextmanager
async def open_session(
    target: Target,
    settings: Settings,
    hooks: SessionHooks = NO_HOOKS,
) -> AsyncIterator[Session]:
    """Connect, negotiate, and yield a ready Session. Every exit path closes the transport.

    A ProbeError before the session is yielded is raised as a HandshakeFailed that carries it;
    one raised inside the `async with` comes out as it was.

    A stdio server that exits on the `server/discover` of `--protocol auto` is started once more
    and handshaken with `initialize` (a `discover-crash` finding): the first process is ended
    before the second starts, and the session yielded stands on the second. So is one that answered
    both a late `server/discover` (modern) and the `initialize` sent meanwhile (which made that
    process legacy): its second start gets `server/discover` alone, and a budget of its own.
    """
    redactor = hooks.redactor if hooks.redactor is not None else active()
    transport = make_transport(target, settings, hooks, redactor)
    snapshot = Snapshot(
        transport=transport.info.kind,
        target=target.describe(),
        client_info={},
        client_capabilities=client_capabilities(settings),
    )
    started = time.perf_counter()
    session: Session | None = None
    conn: Connection | None = None
    yielded = False

    def ready(new: Connection) -> None:
        _install_client_handlers(new, settings)
        if hooks.on_connection is not None:
            hooks.on_connection(new)

    try:
        check_transport(target, settings)
        conn = await _connection(transport, hooks, settings, redactor).__aenter__()
        try:
            # Looking up the SDK's version costs tens of milliseconds: done once the server is
            # starting, not before.
            snapshot.client_info = client_info()
            session = Session(conn, target, settings, snapshot)
            session.timings.append(Timing("connect", (time.perf_counter() - started) * 1000, at=started))
            ready(conn)
            deadline = time.monotonic() + settings.connect_budget
            try:
                await negotiate(session, deadline=deadline)
            except (DiedOnDiscover, RestartForModern) as again:
                # The first process is ended (and its group reaped) before the second starts.
                first, conn = conn, None
                await first.__aexit__(None, None, None)
                restarted = time.perf_counter()
                transport = make_transport(target, settings, hooks, redactor)
                conn = await _connection(transport, hooks, settings, redactor).__aenter__()
                session.conn = conn
                session.timings.append(Timing("restart", (time.perf_counter() - restarted) * 1000, at=restarted))
                ready(conn)
                if isinstance(again, DiedOnDiscover):
                    await initialize(session, LATEST_HANDSHAKE, again.reason, deadline)
                    session.findings.append(again.finding())
                else:
                    # mcpprobe's own fallback spent the first start: the second has the whole budget.
                    await rediscover(session, again, time.monotonic() + settings.connect_budget)
            yielded = True
            yield session
        finally:
            if conn is not None:
                await conn.__aexit__(None, None, None)
    except ProbeError as exc:
        if yielded:
            raise
        snapshot.client_info = snapshot.client_info or client_info()
        if not snapshot.negotiated:
            hint = _early_failure_hint(exc, target, settings, transport.stderr_said())
            if hint:
                exc.detail.setdefault("hint", hint)
        seen = Handshake(snapshot, stderr_tail=tuple(transport.stderr_tail(settings.stderr_tail_lines)))
        if session is not None:
            seen = replace(seen, findings=(*session.findings, *session.wire_findings()), timings=tuple(session.timings))
        raise HandshakeFailed(exc, seen) from exc


COLD_STARTERS = ("npx", "uvx", "docker", "podman", "bunx", "pnpm", "pipx", "uv", "deno")


def _early_failure_hint(exc: ProbeError, target: Target, settings: Settings, said: list[str]) -> str | None:
    """What to try when the server never finished the handshake: more time for a launcher that
    downloads the server first; for a server that ended, what its stderr asked for (a variable,
    a file, the arguments its usage text describes), and only when it said nothing that tells,
    more environment."""
    if not isinstance(target, StdioTarget):
        return None
    launcher = os.path.basename(target.command[0]) if target.command else ""
    if isinstance(exc, RequestTimeout) and launcher in COLD_STARTERS:
        wait = max(120, int(settings.connect_budget * 4))
        return (f"a first `{launcher}` start downloads the server before it runs, which can take longer than "
                f"the {seconds(settings.connect_budget)} s allowed: run again, or allow "
                f"more time with --connect-timeout {wait} (and --timeout {max(wait, int(settings.timeout))})")
    if not isinstance(exc, ConnectionFailed):
        return None
    heard = read_said(said)
    told = _said_hint(heard, target)
    if heard.variables:
        return told
    unpassed = _mentioned_not_passed(said, target)
    if unpassed:
        also = (f"{unpassed[0]} is set in mcpprobe's environment and the server mentions it, but a stdio server "
                f"gets only a minimal environment: -e {unpassed[0]}=\"${unpassed[0]}\" passes it")
        return f"{told}; {also}" if told else also
    if told:
        return told
    if exc.detail.get("exitStatus") is not None and not target.inherit_env and heard.first_error is None:
        return ("the server ended before the handshake; it gets only a minimal environment (PATH, HOME, locale, "
                "...): pass what it needs with -e KEY=VALUE, or all of mcpprobe's with --inherit-env")
    return None


def _mentioned_not_passed(said: list[str], target: StdioTarget) -> list[str]:
    """Variables of mcpprobe's environment that the server did not get and whose name its stderr
    mentions (KUBECONFIG, when a Kubernetes server says "kubeconfig"): the likeliest cause of all."""
    if target.inherit_env or not said:
        return []
    given = target.environment()
    text = "\n".join(said).lower().replace("-", "_")
    return [name for name in sorted(os.environ) if len(name) >= 6 and name not in given
            and re.search(rf"(?<![a-z0-9_]){re.escape(name.lower())}(?![a-z0-9_])", text)]


def _said_hint(heard: Said, target: StdioTarget) -> str | None:
    """The hint for what the server's stderr says it lacks, most specific first."""
    if heard.variables:
        return _variables_hint(heard.variables, target)
    if heard.missing_file:
        where = ""
        if heard.path and not heard.path.startswith(("/", "~")):
            where = f" (a relative path, from its working directory {target.cwd or os.getcwd()}: --cwd sets it)"
        what = f"the file {clip(heard.path, 200)}{where}" if heard.path else "a file it needs"
        return (f"the server says it cannot find {what}: create it, or give the server the path it needs "
                "(see its stderr)")
    if heard.usage:
        first = f" after its error {clip(heard.first_error, 200)!r}" if heard.first_error else ""
        return (f"the server printed its usage text{first}: fix what that error names (a usage text follows a "
                "missing or wrong argument, option or configuration)")
    return None


def _variables_hint(names: tuple[str, ...], target: StdioTarget) -> str:
    given = target.environment()
    lacking = [name for name in names if not given.get(name)]
    if not lacking:
        return (f"the server asks for {', '.join(names)}, which it was given: check the value "
                f"({'-e ' + names[0] + '=VALUE'})")
    listed = ", ".join(lacking[:6]) + (f" and {len(lacking) - 6} more" if len(lacking) > 6 else "")
    word = "variable" if len(lacking) == 1 else "variables"
    hint = (f"the server asks for the environment {word} {listed} (see its stderr for which it needs): "
            f"pass {'it' if len(lacking) == 1 else 'them'} with -e NAME=VALUE")
    here = [name for name in lacking if os.environ.get(name)]
    if here and not target.inherit_env:
        hint += (f"; {here[0]} is set in mcpprobe's environment, but a stdio server gets only a minimal one: "
                 f"-e {here[0]}=\"${here[0]}\" passes it, --inherit-env passes everything")
    return hint


def _install_client_handlers(conn: Connection, settings: Settings) -> None:
    async def ping(params: dict[str, Any]) -> dict[str, Any]:
        return {}

    conn.request_handlers["ping"] = ping
    if settings.roots:
        roots = [{"uri": uri, "name": uri.rstrip("/").rsplit("/", 1)[-1] or uri} for uri in settings.roots]

        async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
            return {"roots": roots}

        conn.request_handlers["roots/list"] = list_roots
