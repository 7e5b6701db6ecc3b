"""--trace: every JSON-RPC message both ways, and on HTTP each request and status line with headers.

One line per event: an ISO 8601 UTC timestamp, the server's name (in a fleet), the direction and
the payload. Secrets never reach the file: credential headers are masked by name whatever their
value, and the user's secrets (`mcpprobe.safety.redact`: credential-like --env and header values, expanded
config variables, tokens) are masked wherever they appear, even when a server echoes them back.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TextIO

from mcpprobe.safety.redact import MASK, Redactor, secret_name
from mcpprobe.safety.sanitize import json_dumps, visible

if TYPE_CHECKING:
    import httpx2 as httpx

    from mcpprobe.wire.jsonrpc import Tracer
    from mcpprobe.wire.transport import HttpHooks


class TraceWriter:
    """Writes trace lines to one stream, shared by every server of a fleet."""

    def __init__(self, stream: TextIO, redactor: Redactor, *, close: bool = False) -> None:
        self.stream = stream
        self.redact = redactor
        self._close = close
        self.error: str | None = None  # why the trace stopped (a full disk): the run goes on

    def line(self, server: str, direction: str, text: str) -> None:
        if self.error is not None:
            return
        stamp = datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")
        prefix = f"{stamp} {server} " if server else f"{stamp} "
        try:
            # One line, inert on a terminal (`--trace -`): a status line's reason phrase is the server's.
            self.stream.write(visible(self.redact(f"{prefix}{direction} {text}")) + "\n")
            self.stream.flush()
        except OSError as exc:
            self.error = exc.strerror or str(exc)

    def tracer(self, server: str = "") -> Tracer:
        """A `Tracer` for one server: ("send"|"recv", message)."""

        def trace(direction: str, message: Any) -> None:
            self.line(server, direction, json_dumps(message, ensure_ascii=True, default=str))

        return trace

    def http_hooks(self, server: str = "") -> HttpHooks:
        """httpx event hooks: the request line and headers, the status line and headers."""

        async def on_request(request: httpx.Request) -> None:
            self.line(server, "http-send", f"{request.method} {request.url} HTTP/1.1 {_headers(request.headers)}")

        async def on_response(response: httpx.Response) -> None:
            self.line(server, "http-recv", f"{response.http_version} {response.status_code} {response.reason_phrase} "
                                           f"{_headers(response.headers)}")

        return {"request": [on_request], "response": [on_response]}

    def close(self) -> None:
        if self._close:
            try:
                self.stream.close()
            except OSError as exc:
                self.error = self.error or exc.strerror or str(exc)


def _headers(headers: Any) -> str:
    pairs = {}
    for name, value in headers.items():
        pairs[name] = MASK if secret_name(name) else value
    return json.dumps(pairs, ensure_ascii=True)
