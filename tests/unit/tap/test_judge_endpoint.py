"""The judge on a legacy SSE `endpoint` that sends the client past the tap: said once per origin on the tap's
side, the connection then judged as one with a gap (the answers on the stream are not called unasked), and a
record's history judged quietly does not hide it from the run that appends to it."""

from __future__ import annotations

from typing import Any

from mcpprobe.tap.judge import Judge

START: dict[str, Any] = {"event": "start", "t": 0.0, "transport": "http"}


def _endpoint(origin: str | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"event": "endpoint", "t": 0.1, "http": {"method": "GET", "path": "/sse", "status": 200}}
    if origin is not None:
        entry.update({"bypass": True, "origin": origin})
    return entry


ANSWER = {"i": 0, "t": 0.2, "dir": "s2c", "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}}


def test_said_once_per_origin_on_the_tap_side_and_the_answers_not_called_unasked() -> None:
    judge = Judge()
    for entry in (START, _endpoint("http://127.0.0.1:3001"), ANSWER, _endpoint("http://127.0.0.1:3001"),
                  _endpoint("https://example.com:443")):
        judge.feed(entry)
    judge.finish()
    assert [(f.code, f.detail["side"], f.detail["origin"], f.detail["messages"]) for f in judge.findings] == [
        ("tap-endpoint-bypassed", "tap", "http://127.0.0.1:3001", []),
        ("tap-endpoint-bypassed", "tap", "https://example.com:443", [])]
    assert judge.findings[0].severity is not None and judge.findings[0].severity.value == "warning"


def test_a_relative_endpoint_is_nothing_to_say_and_an_unasked_answer_still_is() -> None:
    judge = Judge()
    for entry in (START, _endpoint(None), ANSWER):
        judge.feed(entry)
    judge.finish()
    assert [f.code for f in judge.findings] == ["protocol-violation"]


def test_a_history_judged_quietly_does_not_hide_it_from_the_new_run() -> None:
    judge = Judge()
    judge.quiet = True
    judge.feed(START)
    judge.feed(_endpoint("http://127.0.0.1:3001"))
    judge.finish()
    judge.quiet = False
    judge.feed({**START, "event": "reconnect"})
    judge.feed(_endpoint("http://127.0.0.1:3001"))
    assert [f.code for f in judge.findings] == ["tap-endpoint-bypassed"]
