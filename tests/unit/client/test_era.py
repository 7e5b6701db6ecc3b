"""The era as a strategy and the server stream as an ability: what operations ask instead of
testing which era or transport they are on. The behaviour itself is tested end to end (test_read's
not-found per era, test_watch's listen and GET stream, test_call's envelope); this holds the table."""

from __future__ import annotations

import pytest

from mcpprobe.client.connect import make_transport
from mcpprobe.client.era import LEGACY, MODERN, era_named
from mcpprobe.client.session import Snapshot
from mcpprobe.client.settings import Settings
from mcpprobe.errors import RpcError
from mcpprobe.wire.target import HttpTarget, StdioTarget
from mcpprobe.wire.transport import server_stream


@pytest.mark.parametrize("target, has_stream", [
    (StdioTarget(("python", "-c", "pass")), False),
    (HttpTarget("http://127.0.0.1:9/mcp"), True),
    (HttpTarget("http://127.0.0.1:9/sse", transport="sse"), False),
])
def test_only_streamable_http_has_a_server_stream(target, has_stream) -> None:
    assert (server_stream(make_transport(target, Settings())) is not None) is has_stream


def test_the_eras_differ_only_where_asked() -> None:
    assert era_named("modern") is MODERN and era_named("legacy") is LEGACY and era_named("") is LEGACY
    assert (MODERN.listens, MODERN.sets_log_level, MODERN.uses_server_stream) == (True, False, False)
    assert (LEGACY.listens, LEGACY.sets_log_level, LEGACY.uses_server_stream) == (False, True, True)
    bare = RpcError(-32602, "Invalid params")
    assert MODERN.is_not_found(bare) and not LEGACY.is_not_found(bare)
    assert LEGACY.is_not_found(RpcError(-32602, "Resource not found: x")) and LEGACY.is_not_found(RpcError(-32002, "x"))
    # Only the listen stream's stamp carries a modern notification; the legacy era takes them as they come.
    stamped = {"_meta": {"io.modelcontextprotocol/subscriptionId": 7}}
    assert MODERN.carried_by(stamped, 7) and not MODERN.carried_by({}, 7) and not MODERN.carried_by(stamped, None)
    assert LEGACY.carried_by({}, None)


def test_only_the_modern_era_wraps_requests() -> None:
    snap = Snapshot("stdio", "x", {"name": "c"}, {}, protocol_version="2026-07-28")
    assert LEGACY.envelope(snap, "tools/call", {"name": "t"}) == ({"name": "t"}, {})
    params, headers = MODERN.envelope(snap, "tools/call", {"name": "t"})
    assert params["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert headers == {"Mcp-Method": "tools/call", "Mcp-Name": "t"}


def test_watch_and_invoke_ask_the_era_and_the_transport_rather_than_test_them() -> None:
    from pathlib import Path

    import mcpprobe

    root = Path(mcpprobe.__file__).parent
    for path in [root / "operations" / "invoke.py", *sorted((root / "watch").glob("*.py"))]:
        text = path.read_text(encoding="utf-8")
        for asked in (".modern", "HttpTarget", "open_server_stream\")", "getattr(session.conn.transport"):
            assert asked not in text, f"{path.name} tests {asked} instead of asking session.era / session.server_stream"
