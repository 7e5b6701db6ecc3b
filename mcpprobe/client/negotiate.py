"""Settling the protocol era on a new connection: `server/discover` (2026-07-28) or `initialize`.

Apart from the session as in the SDK (`mcp/client/_probe.py` beside `session.py`): `negotiate`
reads `--protocol` and runs one of three ways, and leaves the session's snapshot filled in with
what was agreed. `--protocol auto` is the SDK's `negotiate_auto` with no answer ever discarded:
discover and initialize may run side by side (`_Race`), and whichever answers usefully decides.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from mcpprobe.client.answers import (
    answer_of,
    discover_result_problem,
    preview,
    record,
    said,
    supported_of,
    versions_offered,
)
from mcpprobe.client.era import META_CLIENT_CAPS, META_CLIENT_INFO, META_VERSION
from mcpprobe.client.restart import DiedOnDiscover, RestartForModern
from mcpprobe.client.session import Session, Timing
from mcpprobe.client.settings import Settings
from mcpprobe.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionFailed,
    ProbeError,
    ProtocolFailure,
    RequestTimeout,
    RpcError,
    ServerUnavailable,
    UsageProblem,
    seconds,
)
from mcpprobe.findings import Finding
from mcpprobe.safety.redact import clip
from mcpprobe.wire.protocols import HANDSHAKE_VERSIONS, LATEST_HANDSHAKE, LATEST_MODERN, MODERN_VERSIONS
from mcpprobe.wire.target import HttpTarget, StdioTarget, Target

META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def over_legacy_sse(target: Target) -> bool:
    """The legacy HTTP+SSE transport: defined by the revisions of the `initialize` handshake only
    (2024-11-05 onwards, deprecated since 2025-03-26); 2026-07-28 defines stdio and streamable HTTP."""
    return isinstance(target, HttpTarget) and target.transport == "sse"


def check_transport(target: Target, settings: Settings) -> None:
    """A transport is used only with the revisions that define it: `--protocol modern` (or
    2026-07-28) over HTTP+SSE is refused before anything is sent."""
    choice = settings.protocol
    if over_legacy_sse(target) and (choice == "modern" or choice in MODERN_VERSIONS):
        raise UsageProblem(
            f"--protocol {choice} over the legacy HTTP+SSE transport: the 2026-07-28 revision defines only "
            "the stdio and streamable HTTP transports. Use --protocol auto (or a version up to "
            f"{LATEST_HANDSHAKE}) here, or the server's streamable HTTP endpoint with --transport http")


SSE_REASON = ("the legacy HTTP+SSE transport, which only the revisions of the initialize handshake define: "
              "server/discover is not sent over it")


async def negotiate(session: Session, *, deadline: float) -> None:
    choice = session.settings.protocol
    check_transport(session.target, session.settings)
    if choice == "auto" and over_legacy_sse(session.target):
        await initialize(session, LATEST_HANDSHAKE, SSE_REASON, deadline)
    elif choice == "legacy" or choice in HANDSHAKE_VERSIONS:
        version = LATEST_HANDSHAKE if choice == "legacy" else choice
        reason = "--protocol legacy" if choice == "legacy" else f"--protocol {choice}"
        await initialize(session, version, reason, deadline)
    elif choice == "modern" or choice in MODERN_VERSIONS:
        version = LATEST_MODERN if choice == "modern" else choice
        await _discover(session, version, deadline)
    else:
        await _auto(session, deadline)


def _remaining(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise RequestTimeout("the connection and handshake took longer than --connect-timeout")
    return remaining


def _discover_params(session: Session, version: str) -> tuple[dict[str, Any], dict[str, str]]:
    params = {"_meta": {
        META_VERSION: version,
        META_CLIENT_INFO: session.snapshot.client_info,
        META_CLIENT_CAPS: session.snapshot.client_capabilities,
    }}
    return params, {"MCP-Protocol-Version": version, "Mcp-Method": "server/discover"}


async def _send_discover(session: Session, version: str, wait: float) -> dict[str, Any]:
    params, headers = _discover_params(session, version)
    started = time.perf_counter()
    try:
        return await session.conn.request(
            "server/discover", params, timeout=wait, headers=headers, cancellable=False
        )
    finally:
        session.timings.append(Timing("discover", (time.perf_counter() - started) * 1000, {"version": version},
                                      at=started))


async def _discover(session: Session, version: str, deadline: float) -> None:
    """--protocol modern (or a modern version): server/discover only; any refusal ends the run."""
    session.snapshot.requested_version = version
    try:
        result = await _send_discover(session, version, _remaining(deadline))
    except RpcError as exc:
        if exc.rpc_code != UNSUPPORTED_PROTOCOL_VERSION:
            raise ProtocolFailure(
                f"--protocol modern: the server answered server/discover with error {exc.rpc_code} "
                f"({exc.rpc_message}); it does not look like a 2026-07-28 server. Try --protocol legacy.",
                detail=exc.detail) from None
        data = exc.data if isinstance(exc.data, dict) else {}
        listed = data.get("supported")
        offered = [v for v in listed if isinstance(v, str)] if isinstance(listed, list) else []
        mutual = [v for v in MODERN_VERSIONS if v in offered]
        if not mutual:
            raise _unsupported(session, offered, "server/discover was answered with -32022") from None
        session.snapshot.requested_version = mutual[-1]
        result = await _send_discover(session, mutual[-1], _remaining(deadline))
    problem = discover_result_problem(result)
    if problem is not None:
        raise ProtocolFailure(f"server/discover: {problem}", detail={"result": preview(result)})
    offered = result["supportedVersions"]
    if not any(v in offered for v in MODERN_VERSIONS):
        raise _unsupported(session, offered, "server/discover offers")
    _adopt_discover(session, result, session.snapshot.requested_version,
                    f"--protocol {session.settings.protocol}: server/discover answered "
                    f"(supportedVersions: {', '.join(offered)})")


# ----- --protocol auto: the SDK's negotiate_auto, with no answer ever discarded


class _Call:
    """One negotiation request in flight. Its answer is kept whenever it comes."""

    def __init__(self, session: Session, method: str, version: str) -> None:
        self.method, self.version = method, version
        self.sent = time.perf_counter()
        self.answered: float | None = None
        self.result: dict[str, Any] | None = None
        self.error: ProbeError | None = None
        self.judged = False
        self.timing: Timing | None = None
        self.entry = record(session, method, version)

    def settle(self) -> None:
        """The answer (result or error) has come: note it in the negotiation's record."""
        self.answered = time.perf_counter()
        self.entry["answer"] = answer_of(self.method, self.result, self.error)
        self.entry["ms"] = round((self.answered - self.sent) * 1000, 1)

    @property
    def done(self) -> bool:
        return self.answered is not None

    def after(self) -> str:
        return seconds((self.answered or time.perf_counter()) - self.sent)


class _Race:
    """Requests that run side by side during `--protocol auto`, so no answer is ever discarded."""

    def __init__(self, session: Session, deadline: float, task_group: Any) -> None:
        self.session, self.deadline, self._tg = session, deadline, task_group
        self.calls: list[_Call] = []
        self._changed = anyio.Event()

    def send(self, method: str, version: str) -> _Call:
        call = _Call(self.session, method, version)
        self.calls.append(call)
        self.session.snapshot.requested_version = version
        self._tg.start_soon(self._run, call)
        return call

    async def _run(self, call: _Call) -> None:
        session = self.session
        # Its own timeout lies past the deadline: the race decides when time is up.
        timeout = max(self.deadline - time.monotonic(), 0) + 1
        if call.method == "server/discover":
            params, headers = _discover_params(session, call.version)
        else:
            params, headers = _initialize_params(session, call.version), {}
        try:
            call.result = await session.conn.request(
                call.method, params, timeout=timeout, headers=headers, cancellable=False)
        except ProbeError as exc:
            call.error = exc
        except anyio.get_cancelled_exc_class():
            call.timing = self._timing(call, unanswered=True)
            raise
        call.settle()
        call.timing = self._timing(call)
        self._changed.set()

    @staticmethod
    def _timing(call: _Call, *, unanswered: bool = False) -> Timing:
        phase = "discover" if call.method == "server/discover" else "initialize"
        detail: dict[str, Any] = {"version": call.version}
        if unanswered:
            detail["unanswered"] = True
        return Timing(phase, ((call.answered or time.perf_counter()) - call.sent) * 1000, detail, at=call.sent)

    def pending(self, method: str) -> bool:
        return any(c.method == method and not c.done for c in self.calls)

    async def wait(self, until: float) -> bool:
        """Wait until some call is answered (True) or `until` (a monotonic time) passes (False)."""
        if any(c.done and not c.judged for c in self.calls):
            return True
        with anyio.move_on_after(max(until - time.monotonic(), 0)):
            await self._changed.wait()
        self._changed = anyio.Event()
        return any(c.done and not c.judged for c in self.calls)


async def _auto(session: Session, deadline: float) -> None:
    """The dual-era rule as the SDK's negotiate_auto reads it, with the late answers kept.

    server/discover goes first. An answer in time decides as in the SDK. Silence for
    --discover-timeout sends initialize while discover stays open: whichever answers usefully
    first decides, so a slow-starting modern server is adopted from its late discover answer.
    """
    outcome: ProbeError | None = None
    async with anyio.create_task_group() as task_group:
        race = _Race(session, deadline, task_group)
        try:
            await _auto_race(session, race, deadline)
        except ProbeError as exc:
            outcome = exc
        finally:
            # What is still unanswered is abandoned: its late answer is dropped quietly.
            task_group.cancel_scope.cancel()
    session.timings.extend(c.timing for c in race.calls if c.timing is not None)
    if outcome is not None:
        raise outcome


async def _auto_race(session: Session, race: _Race, deadline: float) -> None:
    settings = session.settings
    wait = min(settings.discover_timeout, max(deadline - time.monotonic(), 0))
    silence_until = time.monotonic() + wait
    race.send("server/discover", LATEST_MODERN)
    init: _Call | None = None
    init_refused: ProbeError | None = None  # initialize answered -32022: the re-probe decides
    silent = False  # initialize went out because discover was silent, not because it failed
    why = ""  # why initialize was sent (or how discover failed while it was pending)
    retried = False
    # A modern discover answer that came while initialize was pending on a stdio process: held until
    # initialize's own answer says whether the process is still modern (see `_settle_held`).
    held: tuple[_Call, dict[str, Any]] | None = None
    while True:
        for call in [c for c in race.calls if c.done and not c.judged]:
            call.judged = True
            if call is init:
                if held is not None:
                    _settle_held(session, held, call, wait)
                    return
                refused = _judge_initialize(session, race, call, retried)
                if refused is None:
                    reason = why if not silent else (
                        f"no answer to server/discover within {seconds(wait)} s; fell back to initialize{why}")
                    if race.pending("server/discover"):
                        reason += ("; a later server/discover answer does not count: initialize made this "
                                   "connection legacy")
                    await _adopt_initialize(session, call.version, call.result or {}, reason, deadline)
                    _in_force(call)
                    if silent and race.pending("server/discover"):
                        session.findings.append(Finding(
                            "era-fallback",
                            f"no answer to server/discover within {seconds(wait)} s (--discover-timeout): "
                            f"fell back to the initialize handshake; --protocol legacy would save up to "
                            f"{seconds(wait)} s on every connection",
                            detail={"waitedSeconds": round(wait, 3)}))
                    return
                # -32022: the server is modern after all; re-probe once at the version it names.
                init_refused, retried = refused, True
                race.send("server/discover", refused.detail["mutual"])
                continue
            verdict = _judge_discover(session, call, retried)
            if isinstance(verdict, dict):
                if init is not None and init_refused is None and isinstance(session.target, StdioTarget):
                    # The initialize sent meanwhile may have made this process legacy: its answer decides.
                    held = (call, verdict)
                    continue
                _in_force(call)
                _adopt_discover(session, verdict, call.version,
                                _modern_reason(call, race.calls[0], init, wait, init_refused))
                return
            if isinstance(verdict, tuple):  # (-32022 named a mutual version): re-probe
                retried = True
                race.send("server/discover", verdict[0])
                continue
            if isinstance(verdict, ProbeError):  # a death on discover, or a fatal refusal
                if isinstance(verdict, ConnectionFailed) and isinstance(session.target, StdioTarget):
                    raise DiedOnDiscover(verdict)
                raise verdict
            # A plain verdict string: not modern evidence, fall back.
            if init_refused is not None:
                raise init_refused
            if init is None:
                why = f"{verdict}; fell back to initialize"
                init = race.send("initialize", LATEST_HANDSHAKE)
            else:
                why = f" ({verdict} after {call.after()} s, while initialize was pending)"
        if not any(not c.done for c in race.calls):
            raise ProtocolFailure("the protocol negotiation ended without an answer to use")
        until = silence_until if init is None else deadline
        if not await race.wait(until):
            if init is None and time.monotonic() < deadline:
                silent = True
                init = race.send("initialize", LATEST_HANDSHAKE)
                continue
            if held is not None:
                # Whether the initialize made the process legacy is unknown: a new process decides.
                raise RestartForModern(held[0].version, _late_discover(held[0], wait) + (
                    ", and the initialize sent meanwhile was never answered, so which era that process is "
                    "in is unknown"))
            if init is not None:
                raise RequestTimeout(
                    f"the server did not answer initialize within {seconds(settings.connect_budget)} s "
                    "(--connect-timeout, --timeout)")
            raise RequestTimeout(
                f"the server did not answer server/discover within {seconds(settings.connect_budget)} s "
                "(--connect-timeout, --timeout), the whole budget: initialize was never sent")


def _late_discover(call: _Call, wait: float) -> str:
    return (f"server/discover answered ({versions_offered(call.result)}) after {call.after()} s, later than the "
            f"{seconds(wait)} s --discover-timeout")


def _settle_held(session: Session, held: tuple[_Call, dict[str, Any]], init: _Call, wait: float) -> None:
    """A stdio server answered server/discover with a modern version after initialize was sent:
    the answer to that initialize says which era the process is in now.

    Answered with a result: "An `initialize` request selects legacy semantics, scoped to the stdio
    process" (2026-07-28), so the process is legacy and discover's answer no longer holds; neither is
    used, and the server is started again for discover alone (RestartForModern), which gives the
    same session as a start fast enough to answer discover in time. Answered with an error: the
    server refused the handshake and the process stayed modern; discover's answer is in force.
    """
    call, result = held
    error = init.error
    late = _late_discover(call, wait)
    if error is None:
        raise RestartForModern(call.version, (
            f"{late}, and the initialize sent meanwhile was answered too (protocolVersion "
            f"{said((init.result or {}).get('protocolVersion'))}), which makes a stdio process legacy"))
    if isinstance(error, ConnectionFailed):
        raise error
    if not isinstance(error, RpcError):
        raise RestartForModern(call.version, f"{late}, and the initialize sent meanwhile failed ({error.message})")
    _in_force(call)
    _adopt_discover(session, result, call.version, (
        f"{late}; the initialize sent meanwhile was answered with error {error.rpc_code} "
        f"({clip(error.rpc_message, 120)}), so the process stayed in the modern era"))


async def rediscover(session: Session, restart: RestartForModern, deadline: float) -> None:
    """The server's second start, after RestartForModern: `server/discover` alone, with no
    fallback (the first start answered it), and the version it named."""
    version, retried = restart.version, False
    while True:
        call = _Call(session, "server/discover", version)
        try:
            call.result = await _send_discover(session, version, _remaining(deadline))
        except ProbeError as exc:
            call.error = exc
        call.settle()
        verdict = _judge_discover(session, call, retried)
        if isinstance(verdict, dict):
            _in_force(call)
            _adopt_discover(session, verdict, version, (
                f"{restart.reason}; started the server again and sent server/discover alone, answered "
                f"({versions_offered(verdict)}) after {call.after()} s"))
            return
        if isinstance(verdict, tuple) and not retried:
            version, retried = verdict[0], True
            continue
        if isinstance(verdict, ProbeError):
            raise verdict
        raise ProtocolFailure(
            f"{restart.reason}; started the server again, and on its second start "
            f"{verdict if isinstance(verdict, str) else 'server/discover was answered with -32022 twice'}: "
            "the server did not answer server/discover the same way twice, so no era could be settled",
            detail={"firstStart": restart.reason})


def _judge_discover(session: Session, call: _Call, retried: bool) -> dict[str, Any] | tuple[str] | ProbeError | str:
    """The SDK's reading of one discover answer: a result to adopt, a version to re-probe at,
    an error that ends the run, or (a string) why it is no modern evidence."""
    error = call.error
    if error is None:
        result = call.result or {}
        problem = discover_result_problem(result)
        if problem is not None:
            finding = Finding(
                "protocol-violation",
                f"server/discover: {problem}; clients on the MCP SDKs fall back to initialize on such a result",
                detail={"result": preview(result)})
            if finding not in session.findings:  # a re-probe may get the same result again
                session.findings.append(finding)
            return f"the server/discover result is not usable ({problem})"
        offered = result["supportedVersions"]
        session.snapshot.supported_versions = offered
        if not any(v in offered for v in MODERN_VERSIONS):
            return f"server/discover lists only versions mcpprobe speaks by initialize ({', '.join(offered) or 'none'})"
        return result
    if isinstance(error, RpcError):
        if error.rpc_code == UNSUPPORTED_PROTOCOL_VERSION:
            supported = supported_of(error.data)
            mutual = [v for v in MODERN_VERSIONS if v in (supported or ())]
            if mutual and not retried:
                return (mutual[-1],)
            if supported is not None and not any(v in HANDSHAKE_VERSIONS for v in supported):
                return _unsupported(session, supported, "server/discover was answered with -32022")
            if supported is not None:
                return (f"server/discover was answered with error -32022 ({error.rpc_message}) naming "
                        f"{', '.join(supported) or 'no version'}")
        return f"server/discover was answered with error {error.rpc_code} ({error.rpc_message})"
    if isinstance(error, ProtocolFailure | ServerUnavailable):
        # As the SDK's negotiate_auto, which sees a 5xx without a JSON-RPC body as an error to
        # discover and falls back: a gateway may answer 503 to a method its server does not know.
        return f"server/discover failed: {error.message}"
    return error  # ConnectionFailed, AuthFailed, RequestTimeout: never an era verdict


def _judge_initialize(session: Session, race: _Race, call: _Call, retried: bool) -> ProbeError | None:
    """None: initialize succeeded. A ProbeError with detail["mutual"]: a -32022 naming a modern
    version to re-probe at. Anything else is raised."""
    error = call.error
    if error is None:
        return None
    if isinstance(error, RpcError) and error.rpc_code == UNSUPPORTED_PROTOCOL_VERSION:
        supported = supported_of(error.data) or []
        mutual = [v for v in MODERN_VERSIONS if v in supported]
        if mutual and not retried:
            return ProtocolFailure(error.message, detail={**error.detail, "mutual": mutual[-1]})
        if not mutual:
            raise _unsupported(session, supported, "initialize was answered with -32022")
    if isinstance(error, ConnectionFailed) and race.pending("server/discover") \
            and isinstance(session.target, StdioTarget):
        raise DiedOnDiscover(error)
    if isinstance(error, RequestTimeout):
        raise RequestTimeout(
            f"the server did not answer initialize within {seconds(session.settings.connect_budget)} s "
            "(--connect-timeout, --timeout)", detail=error.detail)
    raise error


def _modern_reason(call: _Call, first: _Call, init: _Call | None, wait: float, refused: ProbeError | None) -> str:
    offered = ", ".join((call.result or {}).get("supportedVersions", []))
    how = f"server/discover answered (supportedVersions: {offered})"
    if refused is not None:
        return (f"initialize was answered with -32022 naming {call.version}, so the server speaks the modern "
                f"era; {how} at {call.version}")
    if init is not None and call.sent < init.sent:
        # Over HTTP (a stdio process is settled by _settle_held): every 2026-07-28 request stands
        # alone, without the session the initialize may have opened, which is ended at the close.
        return (f"{how} after {call.after()} s, later than the {seconds(wait)} s --discover-timeout; "
                "the initialize sent meanwhile was not used (over HTTP each 2026-07-28 request stands alone, "
                "outside the session it may have opened)")
    if call is not first:
        return f"{how} at {call.version}, after a first server/discover was answered with -32022 naming it"
    return how


def _unsupported(session: Session, offered: list[str], what: str) -> ProtocolFailure:
    session.snapshot.supported_versions = offered
    return ProtocolFailure(
        f"{what}: the server supports protocol versions {offered or '(none given)'}, none of which mcpprobe "
        f"speaks ({', '.join(HANDSHAKE_VERSIONS + MODERN_VERSIONS)}); nothing more was sent",
        code="unsupported-version", detail={"supported": offered})


def _adopt_discover(session: Session, result: dict[str, Any], version: str, reason: str) -> None:
    snapshot = session.snapshot
    snapshot.requested_version = version
    offered = result["supportedVersions"]
    mutual = [v for v in MODERN_VERSIONS if v in offered]
    meta = got if isinstance(got := result.get("_meta"), dict) else {}
    info = meta.get(META_SERVER_INFO)
    snapshot.supported_versions = offered
    snapshot.era = "modern"
    snapshot.era_reason = reason
    snapshot.protocol_version = mutual[-1]
    snapshot.server_info = info if isinstance(info, dict) else None
    snapshot.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
    snapshot.capabilities = result["capabilities"]
    snapshot.negotiated = True
    session.conn.set_protocol_version(snapshot.protocol_version)


def _initialize_params(session: Session, version: str) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": session.snapshot.client_capabilities,
        "clientInfo": session.snapshot.client_info,
    }


async def initialize(session: Session, version: str, reason: str, deadline: float) -> None:
    session.snapshot.requested_version = version
    started = time.perf_counter()
    # Recorded when it continues a negotiation (after a restart), not as the one request of --protocol.
    call = _Call(session, "initialize", version) if session.snapshot.negotiation else None
    try:
        result = await session.conn.request(
            "initialize", _initialize_params(session, version), timeout=_remaining(deadline), cancellable=False
        )
    except RequestTimeout as exc:
        raise RequestTimeout(
            f"the server did not answer initialize within {seconds(session.settings.connect_budget)} s "
            "(--connect-timeout, --timeout)", detail=exc.detail) from None
    except ProbeError as exc:
        if call is not None:
            call.error = exc
            call.settle()
        raise
    finally:
        session.timings.append(Timing("initialize", (time.perf_counter() - started) * 1000, {"version": version},
                                      at=started))
    if call is not None:
        call.result = result
        call.settle()
    await _adopt_initialize(session, version, result, reason, deadline)
    if call is not None:
        _in_force(call)


async def _adopt_initialize(session: Session, version: str, result: dict[str, Any], reason: str,
                            deadline: float) -> None:
    snapshot = session.snapshot
    snapshot.requested_version = version
    chosen = result.get("protocolVersion")
    snapshot.era = "legacy"
    snapshot.era_reason = reason
    if not isinstance(chosen, str) or chosen not in HANDSHAKE_VERSIONS:
        snapshot.protocol_version = chosen if isinstance(chosen, str) else ""
        raise ProtocolFailure(
            f"the server chose protocol version {said(chosen)}, which mcpprobe does not support "
            f"(it speaks {', '.join(HANDSHAKE_VERSIONS)} by initialize); nothing more was sent",
            code="unsupported-version", detail={"serverVersion": chosen, "requested": version})
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        session.findings.append(Finding(
            "protocol-violation", "initialize: the result has no capabilities object; read as none declared"))
        capabilities = {}
    info = result.get("serverInfo")
    snapshot.protocol_version = chosen
    snapshot.server_info = info if isinstance(info, dict) else None
    snapshot.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
    snapshot.capabilities = capabilities
    snapshot.negotiated = True
    session.conn.set_protocol_version(chosen)
    # Part of the handshake, so under its deadline: an HTTP server may hold this POST forever.
    await session.conn.notify("notifications/initialized", timeout=_remaining(deadline))


def _in_force(call: _Call) -> None:
    call.entry["inForce"] = True
