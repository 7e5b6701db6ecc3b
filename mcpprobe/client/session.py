"""The session every subcommand stands on: a connection whose era and capabilities are settled.

`Session.request` refuses anything the server did not declare and sends the rest in the era's
envelope; what was negotiated is kept in a `Snapshot` for the output. Connecting is
`mcpprobe.client.connect.open_session`; settling the era, `mcpprobe.client.negotiate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcpprobe import __version__
from mcpprobe.client.capabilities import missing_for, refuse
from mcpprobe.client.era import Era, era_named
from mcpprobe.client.headers import HeaderParam, Invalid, mirrored
from mcpprobe.client.settings import Settings
from mcpprobe.client.versions import sdk_version
from mcpprobe.findings import Finding
from mcpprobe.wire.jsonrpc import MAX_SERVER_REQUESTS, Call, Connection
from mcpprobe.wire.stderrlog import StderrEntry
from mcpprobe.wire.target import Target
from mcpprobe.wire.transport import ServerStream, server_stream


@dataclass
class Timing:
    phase: str
    ms: float
    detail: dict[str, Any] = field(default_factory=dict)
    # When the phase began (time.perf_counter()), for a picture of the phases side by side (the HTML
    # report's waterfall); None where it was not kept. Not in the JSON: `ms` is the interface.
    at: float | None = field(default=None, compare=False)

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
    # Every request of `--protocol auto`'s negotiation, in the order sent: method, version, which
    # start of the server it went to (1, or 2 after a restart), what came back, and whether it is
    # the answer in force (docs/negotiation.md). Empty for a single request of a fixed --protocol.
    negotiation: list[dict[str, Any]] = field(default_factory=list)


def client_info() -> dict[str, Any]:
    return {
        "name": "mcpprobe",
        "title": "mcpprobe",
        "version": __version__,
        "description": f"MCP diagnostic probe (mcp SDK {sdk_version()})",
    }


def client_capabilities(settings: Settings) -> dict[str, Any]:
    """Only what mcpprobe really handles: nothing by default; roots when --root is given; elicitation
    with --elicit; sampling only for `check --suite-fixtures`, which answers it with a fixed text."""
    capabilities: dict[str, Any] = {}
    if settings.roots:
        # Our roots never change during a run, so no listChanged promise.
        capabilities["roots"] = {}
    if settings.elicit:
        # Form mode only: mcpprobe can decline or fill in the schema's defaults, not open URLs.
        capabilities["elicitation"] = {"form": {}}
    if settings.sample:
        # check --suite-fixtures only: a fixed answer, no model (mcpprobe.operations.input.FIXED_SAMPLING).
        capabilities["sampling"] = {}
    return capabilities


class Session:
    def __init__(self, conn: Connection, target: Target, settings: Settings, snapshot: Snapshot) -> None:
        self.conn = conn
        self.target = target
        self.settings = settings
        self.snapshot = snapshot
        self.timings: list[Timing] = []
        self.findings: list[Finding] = []
        # x-mcp-header (mcpprobe.client.headers), learned from tools/list where the session mirrors
        # parameters: each tool's header parameters, and the tools excluded for invalid annotations.
        self.tool_headers: dict[str, tuple[HeaderParam, ...]] = {}
        self.excluded_tools: dict[str, Invalid] = {}

    @property
    def era(self) -> Era:
        """What differs between the protocol eras, as operations ask it (mcpprobe.client.era)."""
        return era_named(self.snapshot.era)

    @property
    def modern(self) -> bool:
        """The 2026-07-28 era: for what is keyed by era rather than asked of it (the item schemas)."""
        return self.snapshot.era == "modern"

    @property
    def server_stream(self) -> ServerStream | None:
        """The transport's standalone stream for what the server sends outside any request, when the
        transport has one and the era uses it (streamable HTTP before 2026-07-28); else None."""
        return server_stream(self.conn.transport) if self.era.uses_server_stream else None

    @property
    def mirrors_params(self) -> bool:
        """Whether tools' `x-mcp-header` parameters travel as headers: the era has them, over
        streamable HTTP (other transports MAY ignore them, and mcpprobe does)."""
        return self.era.mirrors_params and self.snapshot.transport == "http"

    def learn_tool(self, name: str, params: tuple[HeaderParam, ...] | Invalid) -> None:
        """What a listed tool's inputSchema says about its header parameters (the last listing wins)."""
        self.tool_headers.pop(name, None)
        self.excluded_tools.pop(name, None)
        if isinstance(params, Invalid):
            self.excluded_tools[name] = params
        elif params:
            self.tool_headers[name] = params

    def envelope(self, method: str, params: dict[str, Any] | None) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """The params and HTTP headers of `method` as this session sends it: the era's envelope, and
        for tools/call the Mcp-Param-* headers of the tool's x-mcp-header parameters."""
        params, headers = self.era.envelope(self.snapshot, method, params)
        if method == "tools/call" and self.tool_headers and isinstance(params, dict):
            headers = {**headers, **self.param_headers(params.get("name"), params.get("arguments"))}
        return params, headers

    def param_headers(self, tool: Any, arguments: Any) -> dict[str, str]:
        """The Mcp-Param-* headers a tools/call of `tool` with `arguments` carries ({} for none)."""
        declared = self.tool_headers.get(tool) if isinstance(tool, str) else None
        return mirrored(declared, arguments) if declared else {}

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
        call = await self.send_request(method, params, timeout=timeout, reset_on_progress=reset_on_progress)
        return await call.result()

    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        reset_on_progress: bool = False,
        request_id: Any = None,
        removed: bool = False,
    ) -> Call:
        """`request` in two halves: this sends it; the call's `result()` waits for the answer.
        `request_id`: an id of the caller's choosing (`check` sends string and large ids).
        `removed`: a method this revision no longer has, sent to see it answered -32601 (`check`'s
        tasks.ext-no-tasks-result): no declared capability can serve it, so none is asked for."""
        missing = None if removed else self.check(method)
        if missing is not None:
            self.findings.append(Finding(
                "forced", f"{method} was sent with --force although '{missing}' is not declared",
                kind=_kind_of(method), detail={"method": method, "missing": missing}))
        params, headers = self.envelope(method, params)
        return await self.conn.send_request(
            method, params, timeout=timeout or self.settings.timeout, headers=headers,
            reset_on_progress=reset_on_progress, request_id=request_id,
        )

    def stderr_tail(self) -> list[StderrEntry]:
        """The server's stderr, shortened to its first and last lines, for a failure they may explain."""
        return self.conn.transport.stderr_tail(self.settings.stderr_tail_lines)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        params, headers = self.envelope(method, params)
        await self.conn.notify(method, params, headers)

    def wire_findings(self) -> list[Finding]:
        """Protocol violations and non-JSON output seen on the wire so far, as findings."""
        findings = []
        for anomaly in self.conn.anomalies:
            if anomaly.code == "non-protocol-output":  # one finding per kind of line, with its true count
                stray = self.conn.stray_output[anomaly.message]
                detail: dict[str, Any] = {"sample": stray.samples[0]} if stray.samples else {}
                if stray.count > 1:
                    detail["count"] = stray.count
                    detail["samples"] = stray.samples
                message = anomaly.message + (f" ({stray.count} times)" if stray.count > 1 else "")
                findings.append(Finding("non-protocol-output", message, detail=detail))
                continue
            detail = {"sample": anomaly.sample} if anomaly.sample else {}
            findings.append(Finding(anomaly.code, anomaly.message, detail=detail))
        if self.conn.unanswered_requests:
            findings.append(Finding(
                "request-flood", f"{self.conn.unanswered_requests} requests from the server went unanswered: they "
                f"came while {MAX_SERVER_REQUESTS} others were being answered",
                detail={"unanswered": self.conn.unanswered_requests}))
        return findings


def _kind_of(method: str) -> str:
    head = method.split("/")[0]
    if method.startswith("resources/templates"):
        return "templates"
    return head if head in ("tools", "resources", "prompts") else "server"
