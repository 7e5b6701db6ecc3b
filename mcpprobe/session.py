"""Connect and negotiate: the one core every subcommand stands on.

`open_session` starts the transport, settles the protocol era (the 2026-07-28 `server/discover`
or the legacy `initialize` handshake), and yields a `Session` whose `request` refuses anything
the server did not declare. What was negotiated is kept in a `Snapshot` for the output.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from mcpprobe import __version__
from mcpprobe.capabilities import missing_for, refuse
from mcpprobe.errors import (
    UNSUPPORTED_PROTOCOL_VERSION,
    AuthFailed,
    ConnectionFailed,
    ProbeError,
    ProtocolFailure,
    RequestTimeout,
    RpcError,
    seconds,
)
from mcpprobe.findings import Finding
from mcpprobe.redact import clip
from mcpprobe.target import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE,
    LATEST_MODERN,
    MODERN_VERSIONS,
    HttpTarget,
    Settings,
    StdioTarget,
    Target,
)
from mcpprobe.versions import sdk_version
from mcpprobe.wire.jsonrpc import Connection, Tracer

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@dataclass
class Timing:
    phase: str
    ms: float
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"phase": self.phase, "ms": round(self.ms, 1), **self.detail}


@dataclass
class Snapshot:
    """What the server declared and what was negotiated, exactly as seen on the wire."""

    transport: str
    target: str
    client_info: dict[str, Any]
    client_capabilities: dict[str, Any]
    era: str = ""  # "legacy" (initialize handshake) or "modern" (2026-07-28, server/discover)
    era_reason: str = ""
    protocol_version: str = ""
    requested_version: str = ""
    server_info: dict[str, Any] | None = None
    instructions: str | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    supported_versions: list[str] | None = None
    negotiated: bool = False  # capabilities are known: the handshake or discover was accepted


def client_info() -> dict[str, Any]:
    return {
        "name": "mcpprobe",
        "title": "mcpprobe",
        "version": __version__,
        "description": f"MCP diagnostic probe (mcp SDK {sdk_version()})",
    }


def client_capabilities(settings: Settings) -> dict[str, Any]:
    """Only what mcpprobe really handles: nothing by default; roots when --root is given."""
    capabilities: dict[str, Any] = {}
    if settings.roots:
        # Our roots never change during a run, so no listChanged promise.
        capabilities["roots"] = {}
    if settings.elicit:
        # Form mode only: mcpprobe can decline or fill in the schema's defaults, not open URLs.
        capabilities["elicitation"] = {"form": {}}
    return capabilities


class Session:
    def __init__(self, conn: Connection, target: Target, settings: Settings, snapshot: Snapshot) -> None:
        self.conn = conn
        self.target = target
        self.settings = settings
        self.snapshot = snapshot
        self.timings: list[Timing] = []
        self.findings: list[Finding] = []

    @property
    def modern(self) -> bool:
        return self.snapshot.era == "modern"

    @property
    def capabilities(self) -> dict[str, Any]:
        return self.snapshot.capabilities

    def check(self, method: str) -> str | None:
        """The undeclared capability `method` needs, or None. Raises Refused unless --force."""
        missing = missing_for(self.capabilities, method)
        if missing is not None and not self.settings.force:
            raise refuse(self.capabilities, method, missing)
        return missing

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        reset_on_progress: bool = False,
    ) -> dict[str, Any]:
        """Send `method` if the server declared what it needs (or --force), with the era's envelope."""
        missing = self.check(method)
        if missing is not None:
            self.findings.append(Finding(
                "forced", f"{method} was sent with --force although '{missing}' is not declared",
                kind=_kind_of(method), detail={"method": method, "missing": missing}))
        params, headers = self._envelope(method, params)
        return await self.conn.request(
            method, params, timeout=timeout or self.settings.timeout, headers=headers,
            reset_on_progress=reset_on_progress,
        )

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        params, headers = self._envelope(method, params)
        await self.conn.notify(method, params, headers)

    def _envelope(self, method: str, params: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, str]]:
        if not self.modern:
            return params, {}
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta[META_VERSION] = self.snapshot.protocol_version
        meta[META_CLIENT_INFO] = self.snapshot.client_info
        meta[META_CLIENT_CAPS] = self.snapshot.client_capabilities
        params["_meta"] = meta
        headers = {"Mcp-Method": method}
        if (key := NAME_BEARING.get(method)) and isinstance(params.get(key), str):
            headers["Mcp-Name"] = _header_value(params[key])
        return params, headers

    def wire_findings(self) -> list[Finding]:
        """Protocol violations and non-JSON output seen on the wire so far, as findings."""
        out = []
        for anomaly in self.conn.anomalies:
            detail = {"sample": anomaly.sample} if anomaly.sample else {}
            out.append(Finding(anomaly.code, anomaly.message, detail=detail))
        extra = self.conn.bad_output_count - sum(1 for a in self.conn.anomalies if a.code == "non-protocol-output")
        if extra > 0:
            out.append(Finding("non-protocol-output", f"{extra} more lines that are not JSON-RPC were not kept"))
        return out


def _kind_of(method: str) -> str:
    head = method.split("/")[0]
    if method.startswith("resources/templates"):
        return "templates"
    return head if head in ("tools", "resources", "prompts") else "server"


def _header_value(value: str) -> str:
    import base64

    if value.isascii() and value.isprintable() and value == value.strip() and not value.startswith("=?base64?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def make_transport(target: Target, settings: Settings, stderr_writer: Any = None,
                   http_hooks: dict[str, list[Any]] | None = None) -> Any:
    if isinstance(target, StdioTarget):
        from mcpprobe.wire.stdio import StdioTransport

        return StdioTransport(
            target, max_message_bytes=settings.max_message_bytes, stderr_mode=settings.server_stderr,
            stderr_writer=stderr_writer,
        )
    assert isinstance(target, HttpTarget)
    from mcpprobe.wire.http import LegacySseTransport, StreamableHttpTransport

    cls = LegacySseTransport if target.transport == "sse" else StreamableHttpTransport
    return cls(target, max_message_bytes=settings.max_message_bytes, connect_timeout=settings.connect_timeout,
               http_hooks=http_hooks)


@asynccontextmanager
async def open_session(
    target: Target,
    settings: Settings,
    *,
    tracer: Tracer | None = None,
    stderr_writer: Any = None,
    on_connection: Any = None,
    http_hooks: dict[str, list[Any]] | None = None,
) -> AsyncIterator[Session]:
    """Connect, negotiate, and yield a ready Session. Every exit path closes the transport.

    `on_connection(conn)` runs before the first message is sent, so that notification handlers
    are in place before anything can arrive (no silent window). `http_hooks` are httpx event
    hooks ({"request": [...], "response": [...]}) for the HTTP transports, for tracing.
    """
    transport = make_transport(target, settings, stderr_writer, http_hooks)
    snapshot = Snapshot(
        transport=transport.info.kind,
        target=target.describe(),
        client_info={},
        client_capabilities=client_capabilities(settings),
    )
    started = time.perf_counter()
    session: Session | None = None
    try:
        async with Connection(transport, tracer=tracer) as conn:
            # Looking up the SDK's version costs tens of milliseconds: done once the server is
            # starting, not before.
            snapshot.client_info = client_info()
            session = Session(conn, target, settings, snapshot)
            session.timings.append(Timing("connect", (time.perf_counter() - started) * 1000))
            _install_client_handlers(conn, settings)
            if on_connection is not None:
                on_connection(conn)
            budget = min(settings.connect_timeout, settings.timeout)
            await _negotiate(session, deadline=time.monotonic() + budget)
            yield session
    except ProbeError as exc:
        snapshot.client_info = snapshot.client_info or client_info()
        tail = transport.stderr_tail(settings.stderr_tail_lines)
        if tail and "serverStderr" not in exc.detail:
            exc.detail["serverStderr"] = tail
        exc.detail.setdefault("snapshot", snapshot)
        if session is not None and "findings" not in exc.detail:
            # What the wire showed before the failure often explains it: keep it.
            exc.detail["findings"] = session.findings + session.wire_findings()
            exc.detail["timings"] = session.timings
        raise


def _install_client_handlers(conn: Connection, settings: Settings) -> None:
    async def ping(params: dict[str, Any]) -> dict[str, Any]:
        return {}

    conn.request_handlers["ping"] = ping
    if settings.roots:
        roots = [{"uri": uri, "name": uri.rstrip("/").rsplit("/", 1)[-1] or uri} for uri in settings.roots]

        async def list_roots(params: dict[str, Any]) -> dict[str, Any]:
            return {"roots": roots}

        conn.request_handlers["roots/list"] = list_roots


async def _negotiate(session: Session, *, deadline: float) -> None:
    choice = session.settings.protocol
    if choice == "legacy" or choice in HANDSHAKE_VERSIONS:
        version = LATEST_HANDSHAKE if choice == "legacy" else choice
        reason = "--protocol legacy" if choice == "legacy" else f"--protocol {choice}"
        await _initialize(session, version, reason, deadline)
    elif choice == "modern" or choice in MODERN_VERSIONS:
        version = LATEST_MODERN if choice == "modern" else choice
        await _discover(session, version, deadline, strict=True)
    else:
        await _discover(session, LATEST_MODERN, deadline, strict=False)


def _remaining(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise RequestTimeout("the connection and handshake took longer than --connect-timeout")
    return remaining


async def _send_discover(session: Session, version: str, wait: float) -> dict[str, Any]:
    params = {"_meta": {
        META_VERSION: version,
        META_CLIENT_INFO: session.snapshot.client_info,
        META_CLIENT_CAPS: session.snapshot.client_capabilities,
    }}
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": "server/discover"}
    started = time.perf_counter()
    try:
        return await session.conn.request(
            "server/discover", params, timeout=wait, headers=headers, cancellable=False
        )
    finally:
        session.timings.append(Timing("discover", (time.perf_counter() - started) * 1000, {"version": version}))


async def _discover(session: Session, version: str, deadline: float, *, strict: bool) -> None:
    """The dual-era rule: discover first; fall back to initialize on any other error or silence."""
    snapshot = session.snapshot
    snapshot.requested_version = version
    wait = _remaining(deadline) if strict else min(session.settings.discover_timeout, _remaining(deadline))
    try:
        result = await _send_discover(session, version, wait)
    except RpcError as exc:
        if exc.rpc_code == UNSUPPORTED_PROTOCOL_VERSION:
            result = await _discover_retry(session, exc, deadline)
        elif strict:
            raise ProtocolFailure(
                f"--protocol modern: the server answered server/discover with error {exc.rpc_code} "
                f"({exc.rpc_message}); it does not look like a 2026-07-28 server. Try --protocol legacy.",
                detail=exc.detail) from None
        else:
            why = f"server/discover was answered with error {exc.rpc_code} ({exc.rpc_message})"
            return await _fall_back(session, why, deadline, note=False)
    except RequestTimeout:
        if strict:
            raise
        return await _fall_back(session, f"no answer to server/discover within {seconds(wait)} s", deadline)
    except (AuthFailed, ConnectionFailed):
        raise
    except ProtocolFailure as exc:
        if strict:
            raise
        return await _fall_back(session, f"server/discover failed: {exc.message}", deadline, note=False)
    _adopt_discover(session, result)


async def _discover_retry(session: Session, error: RpcError, deadline: float) -> dict[str, Any]:
    data = error.data if isinstance(error.data, dict) else {}
    offered = [v for v in data.get("supported", []) if isinstance(v, str)] if isinstance(
        data.get("supported"), list) else []
    mutual = [v for v in MODERN_VERSIONS if v in offered]
    if not mutual:
        session.snapshot.supported_versions = offered
        raise ProtocolFailure(
            f"the server supports protocol versions {offered or '(none given)'}, none of which mcpprobe "
            f"speaks in the modern era ({', '.join(MODERN_VERSIONS)}); nothing more was sent",
            code="unsupported-version", detail={"supported": offered})
    session.snapshot.requested_version = mutual[-1]
    return await _send_discover(session, mutual[-1], _remaining(deadline))


def _adopt_discover(session: Session, result: dict[str, Any]) -> None:
    snapshot = session.snapshot
    offered = result.get("supportedVersions")
    if not isinstance(offered, list) or not all(isinstance(v, str) for v in offered):
        raise ProtocolFailure("server/discover: the result has no supportedVersions list",
                              detail={"result": _preview(result)})
    snapshot.supported_versions = offered
    mutual = [v for v in MODERN_VERSIONS if v in offered]
    if not mutual:
        raise ProtocolFailure(
            f"server/discover offers protocol versions {offered}, none of which mcpprobe speaks "
            f"({', '.join(MODERN_VERSIONS)}); nothing more was sent",
            code="unsupported-version", detail={"supported": offered})
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        raise ProtocolFailure("server/discover: the result has no capabilities object")
    meta = result.get("_meta") if isinstance(result.get("_meta"), dict) else {}
    info = meta.get(META_SERVER_INFO)
    snapshot.era = "modern"
    snapshot.era_reason = f"server/discover answered (supportedVersions: {', '.join(offered)})"
    snapshot.protocol_version = mutual[-1]
    snapshot.server_info = info if isinstance(info, dict) else None
    snapshot.instructions = result.get("instructions") if isinstance(result.get("instructions"), str) else None
    snapshot.capabilities = capabilities
    snapshot.negotiated = True
    session.conn.transport.set_protocol_version(snapshot.protocol_version)


async def _fall_back(session: Session, why: str, deadline: float, *, note: bool = True) -> None:
    """Legacy handshake after discover. Silence costs the whole wait, so it is worth a finding."""
    if note:
        session.findings.append(Finding(
            "era-fallback", f"{why}: fell back to the initialize handshake; --protocol legacy skips the wait"))
    await _initialize(session, LATEST_HANDSHAKE, f"{why}; fell back to initialize", deadline)


async def _initialize(session: Session, version: str, reason: str, deadline: float) -> None:
    snapshot = session.snapshot
    snapshot.requested_version = version
    params = {
        "protocolVersion": version,
        "capabilities": snapshot.client_capabilities,
        "clientInfo": snapshot.client_info,
    }
    started = time.perf_counter()
    try:
        result = await session.conn.request(
            "initialize", params, timeout=_remaining(deadline), cancellable=False
        )
    except RequestTimeout as exc:
        budget = min(session.settings.connect_timeout, session.settings.timeout)
        raise RequestTimeout(
            f"the server did not answer initialize within {seconds(budget)} s (--connect-timeout, --timeout)",
            detail=exc.detail) from None
    finally:
        session.timings.append(Timing("initialize", (time.perf_counter() - started) * 1000, {"version": version}))
    chosen = result.get("protocolVersion")
    snapshot.era = "legacy"
    snapshot.era_reason = reason
    if not isinstance(chosen, str) or chosen not in HANDSHAKE_VERSIONS:
        snapshot.protocol_version = chosen if isinstance(chosen, str) else ""
        raise ProtocolFailure(
            f"the server chose protocol version {chosen!r}, which mcpprobe does not support "
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
    session.conn.transport.set_protocol_version(chosen)
    await session.conn.notify("notifications/initialized")


def _preview(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=True, default=str)
    return clip(text, 300)
