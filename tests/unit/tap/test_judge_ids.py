"""The judge on request ids used again: in the handshake era, never twice in one session; in 2026-07-28,
which has no session, only not while the request that had the id is unanswered (basic, Requests: "The
request ID MUST NOT match the ID of any other request the sender has issued and not yet received a
response for")."""

from __future__ import annotations

from typing import Any

from mcpprobe.tap.judge import Judge

START: dict[str, Any] = {"event": "start", "t": 0.0, "transport": "stdio"}
META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}


def _judged(*messages: tuple[str, dict[str, Any]]) -> list[str]:
    judge = Judge()
    judge.feed(START)
    for i, (direction, message) in enumerate(messages):
        judge.feed({"i": i, "t": 0.1 * i, "dir": direction, "msg": {"jsonrpc": "2.0", **message}})
    judge.finish()
    return [f.message for f in judge.findings if f.code == "client-protocol-violation"]


def _discover(rid: int) -> tuple[str, dict[str, Any]]:
    return "c2s", {"id": rid, "method": "server/discover", "params": META}


def _ping(rid: int) -> tuple[str, dict[str, Any]]:
    return "c2s", {"id": rid, "method": "ping", "params": META}


def _answer(rid: int, result: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    return "s2c", {"id": rid, "result": result if result is not None else {"resultType": "complete"}}


DISCOVERED = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {},
              "serverInfo": {"name": "s", "version": "1"}}


def test_2026_07_28_an_id_answered_may_come_again() -> None:
    assert _judged(_discover(1), _answer(1, DISCOVERED), _ping(1), _answer(1)) == []


def test_2026_07_28_an_id_still_unanswered_may_not() -> None:
    assert _judged(_discover(1), _answer(1, DISCOVERED), _ping(2), _ping(2), _answer(2)) == [
        "client: request id 2 used again while the request that had it is still unanswered"]


def test_the_handshake_era_keeps_its_rule_for_the_whole_session() -> None:
    initialize = ("c2s", {"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}})
    initialized = ("s2c", {"id": 1, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "serverInfo": {"name": "s", "version": "1"}}})
    assert _judged(initialize, initialized, ("c2s", {"method": "notifications/initialized"}),
                   ("c2s", {"id": 2, "method": "ping"}), ("s2c", {"id": 2, "result": {}}),
                   ("c2s", {"id": 2, "method": "ping"}), ("s2c", {"id": 2, "result": {}})) == [
        "client: request id 2 used again in the same session"]
