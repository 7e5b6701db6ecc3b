"""Load's fast path is declared, not probed: each transport offers the abilities of wire/transport.py
(`Queueing`, `LineQueueing`, `BodyQueueing`, `Immediate`) by having them, checked once per connection
(`FastPath.of`), and mypy holds their signatures to the protocols (client/connect.py, under TYPE_CHECKING,
where the transports are made)."""

from __future__ import annotations

from mcpprobe.wire.legacy_sse import LegacySseTransport
from mcpprobe.wire.stdio import StdioTransport
from mcpprobe.wire.streamable_http import StreamableHttpTransport
from mcpprobe.wire.target import HttpTarget, StdioTarget
from mcpprobe.wire.transport import FastPath


def test_stdio_queues_lines_and_writes_at_once() -> None:
    transport = StdioTransport(StdioTarget(("server",)), max_message_bytes=1024)
    fast = FastPath.of(transport)
    assert fast.queueing is fast.lines is fast.immediate is transport and fast.bodies is None


def test_streamable_http_queues_bodies_and_never_writes_at_once() -> None:
    transport = StreamableHttpTransport(HttpTarget("http://127.0.0.1:9/mcp"), max_message_bytes=1024,
                                        connect_timeout=1.0)
    fast = FastPath.of(transport)
    assert fast.queueing is fast.bodies is transport and fast.lines is None and fast.immediate is None


def test_legacy_sse_has_no_fast_path() -> None:
    transport = LegacySseTransport(HttpTarget("http://127.0.0.1:9/sse", transport="sse"), max_message_bytes=1024,
                                   connect_timeout=1.0)
    assert FastPath.of(transport) == FastPath(None, None, None, None)
