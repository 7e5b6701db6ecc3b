"""The judge over HTTP: each session a connection of its own (keyed by the `session` the tap notes), an
initialize bound to the session its answer assigns, the legacy SSE session carried by its stream, at most
MAX_SESSIONS judged at once."""

from __future__ import annotations

from typing import Any

from mcpprobe.tap import judge as judge_module
from mcpprobe.tap.judge import Judge

START: dict[str, Any] = {"event": "start", "t": 0.0, "transport": "http"}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
RESULT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}


class Wire:
    def __init__(self) -> None:
        self.judge = Judge()
        self.judge.feed(START)
        self.i = 0

    def send(self, direction: str, message: dict[str, Any], exchange: int, session: str | None) -> None:
        http: dict[str, Any] = {"method": "POST", "path": "/mcp", "exchange": exchange,
                                "mcp-protocol-version": "2025-06-18"}
        if session is not None:
            http["session"] = session
        self.judge.feed({"i": self.i, "t": 0.01 * self.i, "dir": direction, "msg": {"jsonrpc": "2.0", **message},
                         "http": http})
        self.i += 1

    def handshake(self, exchange: int, session: str) -> None:
        self.send("c2s", {"id": 1, "method": "initialize", "params": INIT}, exchange, None)
        self.send("s2c", {"id": 1, "result": RESULT}, exchange, session)
        self.send("c2s", {"method": "notifications/initialized"}, exchange + 1, session)

    def codes(self) -> list[str]:
        self.judge.finish()
        return [f.code for f in self.judge.findings]


def test_two_sessions_interleaved_with_the_same_ids_are_judged_apart() -> None:
    wire = Wire()
    wire.handshake(1, "a")
    wire.handshake(10, "b")
    for session, exchange in (("a", 3), ("b", 12)):
        wire.send("c2s", {"id": 2, "method": "tools/list"}, exchange, session)
    for session, exchange in (("b", 12), ("a", 3)):
        wire.send("s2c", {"id": 2, "result": {"tools": []}}, exchange, session)
    assert wire.codes() == []
    assert wire.judge.opened == 2


def test_both_initialize_requests_before_either_answer_are_bound_by_their_exchange() -> None:
    wire = Wire()
    wire.send("c2s", {"id": 1, "method": "initialize", "params": {**INIT, "capabilities": {"sampling": {}}}}, 1, None)
    wire.send("c2s", {"id": 1, "method": "initialize", "params": INIT}, 2, None)
    wire.send("s2c", {"id": 1, "result": RESULT}, 2, "b")
    wire.send("s2c", {"id": 1, "result": RESULT}, 1, "a")
    wire.send("c2s", {"method": "notifications/initialized"}, 3, "b")
    wire.send("s2c", {"id": 9, "method": "sampling/createMessage", "params": {}}, 4, "b")  # b declared no sampling
    assert wire.codes() == ["server-undeclared-capability"]


def test_an_id_reused_within_one_session_is_still_flagged() -> None:
    wire = Wire()
    wire.handshake(1, "a")
    wire.handshake(10, "b")
    wire.send("c2s", {"id": 2, "method": "tools/list"}, 3, "a")
    wire.send("s2c", {"id": 2, "result": {"tools": []}}, 3, "a")
    wire.send("c2s", {"id": 2, "method": "tools/list"}, 12, "b")
    wire.send("c2s", {"id": 2, "method": "tools/list"}, 4, "a")
    assert wire.codes() == ["client-protocol-violation"]


def test_the_legacy_sse_session_is_that_of_its_endpoint() -> None:
    wire = Wire()
    for session in ("a", "b"):
        wire.judge.feed({"event": "endpoint", "t": 0.0, "http": {"method": "GET", "path": "/sse", "session": session}})
    for session in ("a", "b"):
        wire.send("c2s", {"id": 0, "method": "initialize", "params": INIT}, 0, session)
        wire.send("s2c", {"id": 0, "result": RESULT}, 0, session)
        wire.send("c2s", {"method": "notifications/initialized"}, 0, session)
        wire.send("c2s", {"id": 1, "method": "tools/list"}, 0, session)  # no version header needed over SSE
    assert wire.codes() == []
    assert wire.judge.opened == 2


def test_a_session_begun_before_the_tap_is_judged_with_a_gap() -> None:
    wire = Wire()
    wire.send("c2s", {"id": 5, "method": "tools/list"}, 1, "old")  # its initialize was not seen
    wire.send("s2c", {"id": 7, "result": {}}, 1, "old")  # an answer to nothing seen
    assert wire.codes() == []


def test_past_the_cap_the_longest_idle_session_is_dropped_and_counted(monkeypatch: Any) -> None:
    monkeypatch.setattr(judge_module, "MAX_SESSIONS", 2)
    wire = Wire()
    wire.handshake(1, "a")
    wire.handshake(10, "b")
    wire.send("c2s", {"id": 2, "method": "tools/list"}, 3, "a")  # a is active again: b is the longest idle
    wire.handshake(20, "c")
    assert wire.judge.dropped == 1
    wire.send("c2s", {"id": 2, "method": "tools/list"}, 4, "a")  # a still judged
    wire.send("c2s", {"id": 1, "method": "tools/list"}, 11, "b")  # b goes on: judged anew with a gap, no alarm
    assert wire.codes() == ["client-protocol-violation"]


def test_the_tap_notes_the_legacy_session_of_an_endpoint_as_a_digest() -> None:
    from mcpprobe.tap.http import endpoint_session, session_digest

    assert endpoint_session("/messages?sessionId=abc") == session_digest("abc") != "abc"
    assert endpoint_session("/messages/?session_id=abc") == session_digest("abc")  # the Python SDK's name
    assert endpoint_session("/messages") is None
    assert endpoint_session("http://[::1/messages?sessionId=x") is None  # not a URL: no session, no error


def test_sessionless_traffic_refused_by_the_server_is_no_connection() -> None:
    """A client that tries server/discover first (refused: an error with id null, HTTP 400), then initializes
    and gets a session: one connection, not two. Sessionless traffic the server answers is one."""
    wire = Wire()
    wire.send("c2s", {"id": 1, "method": "server/discover", "params": {}}, 1, None)
    wire.send("s2c", {"id": None, "error": {"code": -32600, "message": "bad"}}, 1, None)
    wire.handshake(2, "a")
    assert wire.codes() == [] and wire.judge.opened == 1
    wire = Wire()
    wire.send("c2s", {"id": 1, "method": "server/discover", "params": {}}, 1, None)
    wire.send("s2c", {"id": 1, "result": {"capabilities": {}}}, 1, None)
    assert wire.codes() == [] and wire.judge.opened == 1


def test_a_session_open_when_another_ends_is_not_its_reconnect_but_one_opened_after_is() -> None:
    """client-cache-after-reconnect: session b was open while a listed its tools and was deleted, so b calling
    a tool without listing is no reconnect's cached list; c, opened after a ended, doing the same is."""
    wire = Wire()
    wire.handshake(1, "a")
    wire.handshake(10, "b")
    wire.send("c2s", {"id": 2, "method": "tools/list"}, 3, "a")
    wire.send("s2c", {"id": 2, "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}, 3, "a")
    wire.judge.feed({"event": "delete", "t": 0.5, "http": {"method": "DELETE", "path": "/mcp", "session": "a"}})
    wire.send("c2s", {"id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {}}}, 12, "b")
    wire.send("s2c", {"id": 2, "result": {"content": []}}, 12, "b")
    wire.handshake(20, "c")
    wire.send("c2s", {"id": 2, "method": "tools/call", "params": {"name": "t", "arguments": {}}}, 22, "c")
    wire.send("s2c", {"id": 2, "result": {"content": []}}, 22, "c")
    wire.judge.finish()
    reused = [f for f in wire.judge.findings if f.code == "client-cache-after-reconnect"]
    assert len(reused) == 1, [f.message for f in wire.judge.findings]
    assert wire.judge.opened == 3
