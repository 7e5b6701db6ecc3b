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


def events_of(chunks: list[bytes]) -> list[tuple[str | None, str | None, bool, dict | None]]:
    reader = Events()
    found = []
    for chunk in chunks:
        found += reader.feed(chunk)
    return [(e.id, None if e.data is None else e.text, e.retry, e.message) for e in found]


def test_the_events_of_a_stream_in_one_piece() -> None:
    assert events_of([STREAM]) == [
        ("p1", "", True, None),
        ("m1", '{"jsonrpc": "2.0", "id": 1,\n"result": {}}', False, {"jsonrpc": "2.0", "id": 1, "result": {}}),
        ("only-an-id", None, False, None),
        (None, "not json", False, None),
    ]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7])
def test_the_same_events_however_the_stream_is_cut(size: int) -> None:
    chunks = [STREAM[i:i + size] for i in range(0, len(STREAM), size)]
    assert events_of(chunks) == events_of([STREAM])


def test_a_multibyte_character_cut_between_chunks_is_kept() -> None:
    data = "data: {\"text\": \"é\"}\n\n".encode()
    cut = data.index("é".encode()) + 1
    assert events_of([data[:cut], data[cut:]])[0][3] == {"text": "é"}
