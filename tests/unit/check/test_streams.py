"""The event-stream reader of mcpprobe.check.streams: the same events however the server cuts its
stream into chunks (a line end split between two, CRLF, CR, comments), and each event's JSON-RPC
message parsed once."""

from __future__ import annotations

import pytest

from mcpprobe.check.streams import Events

STREAM = (b": a comment\r\n"
          b"id: p1\r\nretry: 500\r\ndata:\r\n\r\n"
          b"event: message\nid: m1\ndata: {\"jsonrpc\": \"2.0\", \"id\": 1,\n"
          b"data: \"result\": {}}\n\n"
          b"id: only-an-id\r\r"
          b"data: not json\n\n"
          b"id: unfinished\ndata: {}")


def events_of(chunks: list[bytes]) -> list[tuple[str | None, str | None, int | None, dict | None]]:
    reader = Events()
    found = []
    for chunk in chunks:
        found += reader.feed(chunk)
    return [(e.id, None if e.data is None else e.text, e.retry, e.message) for e in found]


def test_the_events_of_a_stream_in_one_piece() -> None:
    assert events_of([STREAM]) == [
        ("p1", "", 500, None),
        ("m1", '{"jsonrpc": "2.0", "id": 1,\n"result": {}}', None, {"jsonrpc": "2.0", "id": 1, "result": {}}),
        ("only-an-id", None, None, None),
        (None, "not json", None, None),
    ]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_the_same_events_however_the_stream_is_cut(size: int) -> None:
    chunks = [STREAM[i:i + size] for i in range(0, len(STREAM), size)]
    assert events_of(chunks) == events_of([STREAM])


def test_a_multibyte_character_cut_between_chunks_is_kept() -> None:
    data = "data: {\"text\": \"é\"}\n\n".encode()
    cut = data.index("é".encode()) + 1
    assert events_of([data[:cut], data[cut:]])[0][3] == {"text": "é"}


# ----- http.concurrent-requests: the verdict on three answers (judge_concurrent)

from mcpprobe.check.catalogue import Status  # noqa: E402
from mcpprobe.check.http import RawAnswer  # noqa: E402
from mcpprobe.check.streams import StreamRead, judge_concurrent  # noqa: E402

IDS = ["a", "b", "c"]


def sse(request_id: str, *answer_ids: str, ended: bool = True) -> StreamRead:
    text = "id: 0\ndata:\n\n" + "".join(f'data: {{"jsonrpc": "2.0", "id": "{i}", "result": {{}}}}\n\n'
                                        for i in answer_ids)
    read = StreamRead(RawAnswer("POST /mcp", {}, None, status=200, headers={"content-type": "text/event-stream"}),
                      request_id, events=Events().feed(text.encode()), ended=ended)
    read.answered = read.answers(read.events)
    return read


def as_json(request_id: str, body: object, status: int = 200) -> StreamRead:
    read = StreamRead(RawAnswer("POST /mcp", {}, None, status=status, headers={"content-type": "application/json"}),
                      request_id, ended=True, json_message=body)
    read.answered = isinstance(body, dict) and body.get("id") == request_id
    return read


def verdict(reads: list[StreamRead], *, modern: bool = False) -> tuple[Status, str]:
    found = judge_concurrent("ping", IDS, reads, modern=modern, timeout=10)
    return found.status, found.message


def test_each_answered_on_its_own_passes() -> None:
    status, message = verdict([sse("a", "a"), as_json("b", {"jsonrpc": "2.0", "id": "b", "result": {}}),
                               sse("c", "c")])
    assert status is Status.PASS and "JSON and an event stream" in message


def test_a_response_on_two_streams_is_broadcast_before_2026() -> None:
    reads = [sse("a", "a", "b"), sse("b", "b"), sse("c", "c")]
    assert verdict(reads)[0] is Status.FAIL and "MUST NOT broadcast" in verdict(reads)[1]
    # 2026-07-28 has no such words: another request's response on a stream is a warning (SHOULD)
    assert verdict(reads, modern=True)[0] is Status.WARN


def test_a_response_on_the_wrong_stream_alone_is_a_warning() -> None:
    status, message = verdict([sse("a", "b"), sse("b"), sse("c", "c")])
    assert status is Status.WARN and 'carried the response to "b"' in message


def test_a_json_answer_with_another_id_fails() -> None:
    reads = [as_json("a", {"jsonrpc": "2.0", "id": "z", "result": {}}), sse("b", "b"), sse("c", "c")]
    status, message = verdict(reads)
    assert status is Status.FAIL and "MUST include the same id" in message


def test_a_stream_without_its_response_is_a_warning() -> None:
    status, message = verdict([sse("a", "a"), sse("b", "b"), sse("c", ended=False)])
    assert status is Status.WARN and "stayed open past --timeout (10 s) without its response" in message


def test_refused_for_load_warns_and_another_status_fails() -> None:
    busy = as_json("c", {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": "busy"}}, status=429)
    assert verdict([sse("a", "a"), sse("b", "b"), busy])[0] is Status.WARN
    conflict = as_json("c", {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "x"}}, status=409)
    assert verdict([sse("a", "a"), sse("b", "b"), conflict])[0] is Status.FAIL


def test_no_http_answer_is_an_error_not_a_verdict() -> None:
    lost = StreamRead(RawAnswer("POST /mcp", {}, None, problem="no HTTP answer within --timeout (10 s)"), "c")
    status, message = verdict([sse("a", "a"), sse("b", "b"), lost])
    assert status is Status.ERROR and "no HTTP answer" in message


def test_an_event_nested_too_deep_is_no_message_and_no_crash() -> None:
    deep = b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n"
    [event] = Events().feed(deep)
    assert event.message is None and event.data is not None
