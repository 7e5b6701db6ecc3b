"""wire/loop_internals.py reaches under anyio and asyncio for load's hot path over stdio. These tests fail
when the installed versions stop keeping what it relies on (the fast path is then no longer taken against a
real server), and show the ordinary path is chosen, with nothing changed, when the internals are absent."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import anyio
from conftest import FIXTURE, PY

from mcpprobe.wire import loop_internals
from mcpprobe.wire.jsonrpc import Connection
from mcpprobe.wire.stdio import StdioTransport
from mcpprobe.wire.target import StdioTarget

HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


def test_a_real_server_s_stdout_is_read_directly_and_its_stdin_written_at_once() -> None:
    """anyio.open_process's streams, as installed, are the ones loop_internals knows: the server's answers
    come through the diverted `feed_data`, and a request goes out by `send_nowait` (no turn of the loop)."""

    async def run() -> None:
        transport = StdioTransport(StdioTarget((PY, str(FIXTURE), "tools-only")), max_message_bytes=1 << 20)
        async with Connection(transport, send_timeout=5) as conn:
            await conn.request("initialize", HELLO, timeout=30)
            assert transport.stdout_read_directly
            assert transport.send_nowait({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await conn.request("ping", {}, timeout=30)

    anyio.run(run)


def test_a_pipe_s_stream_reader_is_diverted_with_what_it_held_first() -> None:
    """An adopted server's stdout (wire/stdio.py `_PipeReader`): asyncio's own StreamReader on a real pipe.
    What arrived before the divert is handed on first, then each chunk, then the end (told at EOF and again
    when the pipe is lost, as asyncio's protocol tells it: the reader of wire/stdio.py takes the first)."""

    async def run() -> list[bytes | None]:
        loop = asyncio.get_running_loop()
        read_end, write_end = os.pipe()
        reader = asyncio.StreamReader(loop=loop)
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                    os.fdopen(read_end, "rb", buffering=0))
        seen: list[bytes | None] = []
        ended = loop.create_future()
        try:
            os.write(write_end, b"early\n")
            while not reader._buffer:  # the protocol has fed it
                await asyncio.sleep(0.01)

            def end() -> None:
                seen.append(None)
                if not ended.done():
                    ended.set_result(True)

            assert loop_internals.divert(reader, seen.append, end)
            assert not reader._buffer
            os.write(write_end, b"later\n")
            os.close(write_end)
            await asyncio.wait_for(ended, 30)
        finally:
            transport.close()
        return seen

    seen = asyncio.run(run())
    assert b"".join(chunk for chunk in seen if chunk is not None) == b"early\nlater\n"
    assert seen[0] == b"early\n" and seen[-1] is None
    assert None not in seen[:seen.index(None)] and all(chunk is None for chunk in seen[seen.index(None):])


def test_a_closed_reader_ends_the_diverted_reading() -> None:
    """anyio's aclose of a receive stream sets an exception on the reader: the end, as EOF is."""

    async def run() -> list[str]:
        reader = asyncio.StreamReader()
        reader.feed_data(b"x")
        reader.feed_eof()
        events: list[str] = []
        assert loop_internals.divert(reader, lambda data: events.append(data.decode()), lambda: events.append("end"))
        reader.set_exception(anyio.ClosedResourceError())
        return events

    assert asyncio.run(run()) == ["x", "end", "end"]


class _Changed(asyncio.StreamReader):
    """A StreamReader as a future Python might keep it: its buffer under another name."""

    def __init__(self) -> None:
        super().__init__()
        self._chunks = bytes(self._buffer)
        del self._buffer


def test_without_the_internals_nothing_is_taken_over_and_the_ordinary_path_is_chosen() -> None:
    async def run() -> None:
        changed = _Changed()
        assert not loop_internals.divertible(changed)
        assert not loop_internals.divert(changed, lambda data: None, lambda: None)
        assert "feed_data" not in vars(changed) and "feed_eof" not in vars(changed)
        changed.feed_eof()  # still its own, untouched
        assert changed._eof

    asyncio.run(run())
    for stream in (object(), None, b"bytes"):
        assert loop_internals.anyio_reader(stream) is None
        assert loop_internals.anyio_writer(stream) is None
    assert not loop_internals.divertible(object())


def test_a_real_server_is_served_the_ordinary_way_when_the_internals_are_gone(monkeypatch: Any) -> None:
    """What wire/stdio.py does when a version changes the internals: loop_internals answers as it then would
    (nothing to divert, no writer found), and the server's answers still come, read chunk by chunk."""
    monkeypatch.setattr(loop_internals, "anyio_reader", lambda stream: None)
    monkeypatch.setattr(loop_internals, "anyio_writer", lambda stream: None)

    async def run() -> None:
        transport = StdioTransport(StdioTarget((PY, str(FIXTURE), "tools-only")), max_message_bytes=1 << 20)
        async with Connection(transport, send_timeout=5) as conn:
            await conn.request("initialize", HELLO, timeout=30)
            assert not transport.stdout_read_directly
            assert not transport.send_nowait({"jsonrpc": "2.0", "method": "notifications/initialized"})
            assert not transport.queue_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            listed = await conn.request("tools/list", {}, timeout=30)
            assert listed["tools"]

    anyio.run(run)
