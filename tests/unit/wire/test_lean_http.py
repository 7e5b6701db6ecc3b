"""The lean POST path's HTTP/1.1 response reader (mcpprobe/wire/lean_http.py), against a real TCP
server on 127.0.0.1 that writes exact bytes: every framing (Content-Length, chunked with and without
trailers, the connection's end, 100 Continue, 204), each also sent one byte per segment; the request
exactly as written; a connection reused for the next request only when the answer allows it; and a
malformed or cut answer failing its request as a transport error (ConnectionFailed), never a hang."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from mcpprobe.errors import ConnectionFailed, ProbeError
from mcpprobe.wire.lean_http import Exchange, LeanPool


class Recorded(Exchange):
    """What the reader reported, in order; `done` is set at the end or on a failure."""

    def __init__(self) -> None:
        super().__init__()
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.data = b""
        self.ended = False
        self.error: ProbeError | None = None
        self.done = asyncio.Event()

    def head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bool:
        self.status, self.headers = status, headers
        return True

    def body(self, chunk: bytes) -> bool:
        self.data += chunk
        return True

    def end(self) -> None:
        self.ended = True
        self.done.set()

    def failed(self, error: ProbeError) -> None:
        self.error = error
        self.done.set()

    def given_up(self) -> bool:
        return False


async def exchange(answers: list[bytes], *, bytewise: bool = False,
                   headers: list[tuple[bytes, bytes]] | None = None) -> tuple[list[Recorded], list[bytes], int]:
    """POST once per answer on one pool against a server that answers each request it reads with the
    next of `answers` (then, when that answer ends with the connection's end, closes). Returns what each
    exchange recorded, the requests as the server read them, and the connections it accepted."""
    requests: list[bytes] = []
    accepted = [0]
    queue = list(answers)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted[0] += 1
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while queue:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length:")][0])
            requests.append(head + await reader.readexactly(length))
            answer = queue.pop(0)
            close = answer.endswith(b"<close>")
            answer = answer.removesuffix(b"<close>")
            if bytewise:
                for i in range(len(answer)):
                    writer.write(answer[i:i + 1])
                    await writer.drain()
                    await asyncio.sleep(0)
            else:
                writer.write(answer)
                await writer.drain()
            if close:
                writer.close()
                return

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    pool = LeanPool(f"http://127.0.0.1:{port}/mcp?x=1", 5.0)
    fields = headers or [(b"Accept", b"application/json"), (b"Mcp-Session-Id", b"s-1")]
    recorded = []
    try:
        for _ in answers:
            one = Recorded()
            assert pool.post(fields, b'{"id":1}', one)
            await asyncio.wait_for(one.done.wait(), 10)
            recorded.append(one)
            await asyncio.sleep(0)
    finally:
        pool.close()
        server.close()
        await server.wait_closed()
    return recorded, requests, accepted[0]


JSON = b'{"jsonrpc":"2.0","id":1,"result":{}}'
SIZED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(JSON), JSON)
CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5\r\nevent\r\n1e;ext=1\r\n: message\ndata: {}\n\n0123456789\r\n0\r\n\r\n")
TRAILERS = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Check: 1\r\n\r\n")
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n" + SIZED
NO_CONTENT = b"HTTP/1.1 204 No Content\r\n\r\n"
TO_CLOSE = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end<close>"


@pytest.mark.parametrize("bytewise", [False, True])
@pytest.mark.parametrize("answer, status, body", [
    (SIZED, 200, JSON),
    (CHUNKED, 200, b"event: message\ndata: {}\n\n0123456789"),
    (TRAILERS, 200, b"abc"),
    (CONTINUE, 200, JSON),
    (NO_CONTENT, 204, b""),
    (TO_CLOSE, 200, b"until the end"),
])
def test_each_framing_is_read_whole_also_one_byte_at_a_time(answer: bytes, status: int, body: bytes,
                                                           bytewise: bool) -> None:
    recorded, _, _ = asyncio.run(exchange([answer], bytewise=bytewise))
    one = recorded[0]
    assert one.error is None and one.ended
    assert (one.status, one.data) == (status, body)


def test_the_request_is_written_exactly_and_the_connection_kept() -> None:
    headers = [(b"Accept", b"application/json, text/event-stream"), (b"MCP-Protocol-Version", b"2025-11-25"),
               (b"X-Mixed-Case", b"Va lue")]
    recorded, requests, accepted = asyncio.run(exchange([SIZED, CHUNKED, SIZED], headers=headers))
    assert all(one.ended and one.error is None for one in recorded)
    assert accepted == 1, "a kept connection serves request after request"
    host = requests[0].split(b"\r\n")[1]
    assert requests[0] == (b"POST /mcp?x=1 HTTP/1.1\r\n" + host + b"\r\nAccept: application/json, text/event-stream"
                           b"\r\nMCP-Protocol-Version: 2025-11-25\r\nX-Mixed-Case: Va lue\r\nContent-Length: 8"
                           b'\r\n\r\n{"id":1}')
    assert host.startswith(b"Host: 127.0.0.1:")


def test_an_answer_that_ends_the_connection_is_not_reused() -> None:
    closing = SIZED.replace(b"Content-Length", b"Connection: close\r\nContent-Length") + b"<close>"
    recorded, _, accepted = asyncio.run(exchange([closing, SIZED, TO_CLOSE, SIZED]))
    assert all(one.ended and one.error is None for one in recorded)
    assert accepted == 3


@pytest.mark.parametrize("answer", [
    SIZED[:-5] + b"<close>",  # cut mid-body
    CHUNKED[:-7] + b"<close>",  # cut before the last chunk
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json<close>",  # cut mid-head
    b"<close>",  # nothing at all
    b"SMTP ready\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nab",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nabc",
    b"HTTP/1.1 200 OK\r\n folded: header\r\n\r\n",
])
def test_a_malformed_or_cut_answer_is_a_transport_error(answer: bytes) -> None:
    recorded, _, _ = asyncio.run(exchange([answer]))
    one = recorded[0]
    assert isinstance(one.error, ConnectionFailed) and not one.ended
    assert one.error.detail.get("status") is None  # counted by `load` as `transport`


def test_a_refused_connection_is_a_transport_error() -> None:
    async def run() -> Any:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        pool = LeanPool(f"http://127.0.0.1:{port}/mcp", 5.0)
        one = Recorded()
        assert pool.post([], b"{}", one)
        await asyncio.wait_for(one.done.wait(), 10)
        pool.close()
        return one.error

    error = asyncio.run(run())
    assert isinstance(error, ConnectionFailed) and "cannot connect" in error.message
