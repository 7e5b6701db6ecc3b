"""Type-checked with the package (pyproject.toml, [tool.mypy] files), never run: mypy holds each
transport's fast-path methods to the abilities `FastPath.of` finds by name (mcpprobe/wire/transport.py).
A transport whose `queue_line`, `flush`, `queue_body` or `send_nowait` drifted from its protocol fails
`python -m mypy` here."""

from __future__ import annotations

from mcpprobe.wire.stdio import StdioTransport
from mcpprobe.wire.streamable_http import StreamableHttpTransport
from mcpprobe.wire.transport import BodyQueueing, Immediate, LineQueueing


def declared(stdio: StdioTransport, http: StreamableHttpTransport) -> tuple[LineQueueing, Immediate, BodyQueueing]:
    return stdio, stdio, http
