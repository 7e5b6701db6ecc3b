"""The lean POST path of `mcpprobe load` over streamable HTTP: kept HTTP/1.1 connections, each an
asyncio Protocol with a small response reader of its own (`h11` checks each request head once), one
request in flight on each (no pipelining), as many connections as requests are in flight. No task,
stream or cancel scope per request: the bytes of a POST are written from the caller's turn, and its
answer is read in the Protocol's callbacks.

It only carries bytes: what an answer means is the transport's (wire/streamable_http.py
`queue_body`), whose lean reader reads a JSON answer and an event stream by the same rules as httpx's
answers (`_answer_kind`, `_take_json`), and hands every other answer (an error status, a redirect)
to the code that reads httpx's answers.
This module reports each exchange to its `Exchange`: `head` (status and headers, once), `body` (each
chunk), `end` (the answer complete) or `failed` (a ConnectionFailed or RequestTimeout: a transport
error). Plain http:// only; an https:// URL, a proxy, an auth flow or event hooks keep httpx.

Why a hand-written response reader (`_Link._read`) when h11, a well-kept parser already imported here,
could read the answers: measured, h11 costs `load` half again its client CPU. h11 must also be handed
each request to know the answer's framing. Per exchange (the request written, a get-sum answer read
whole, fed in the pieces a socket gives; Python 3.11, h11 0.16, a shared 2-CPU machine):

    python bench/lean_http_parse.py           # µs per exchange: hand-written, h11 (ratio)
        JSON, Content-Length     6.4   52.1 (8.1x)
        JSON, chunked            8.4   59.9 (7.1x)
        event stream            10.3   66.0 (6.4x)   (h11's reading alone, without its writing: 46 µs)

and inside a whole `mcpprobe load` over streamable HTTP against server-everything, 5 paired rounds of
5,000 calls at concurrency 10 (medians of the rounds' ratios h11 / hand-written):

    python bench/lean_http_parse.py --end-to-end
        throughput 1.01, p50 1.02 (the server bounds both), client CPU per request 1.61 (151 -> 229 µs)

So the reader stays, kept to RFC 9112's framing and tested byte by byte (tests/unit/wire/test_lean_http.py);
the bench keeps the h11 reader beside it (`H11Link`) to measure again.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import urlsplit

import h11

from mcpprobe.errors import ConnectionFailed, ProbeError, RequestTimeout
from mcpprobe.safety.redact import clip

MAX_CONNECTIONS = 256  # per transport: past that a POST goes the httpx way
MAX_HEADS = 64  # request heads kept built (per header list and body length)


class Exchange:
    """One request's answer as the connection reads it; the transport's subclass says what it means."""

    __slots__ = ("link",)

    def __init__(self) -> None:
        self.link: _Link | None = None

    def stop_reading(self) -> None:
        """Read no more of this answer: its connection is closed, not reused."""
        link = self.link
        if link is not None and link.exchange is self:
            link._drop()

    def head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bool:
        """The status line and headers; False: read no further (the connection is not reused)."""
        raise NotImplementedError

    def body(self, chunk: bytes) -> bool:
        """A chunk of the body; False: read no further."""
        raise NotImplementedError

    def end(self) -> None:
        """The answer is complete."""
        raise NotImplementedError

    def failed(self, error: ProbeError) -> None:
        """The exchange failed on the wire (ConnectionFailed, RequestTimeout)."""
        raise NotImplementedError

    def given_up(self) -> bool:
        """Whether nobody waits for this answer any more: it is not read on."""
        raise NotImplementedError


class _Broken(Exception):
    """An answer that does not follow HTTP/1.1's framing."""


MAX_HEAD = 64 * 1024  # bytes of a status line and headers, or of a chunk's size line
_HEAD, _SIZED, _CHUNK_SIZE, _CHUNK, _CHUNK_END, _TRAILER, _TO_CLOSE = range(7)


def _fields(lines: list[bytes]) -> tuple[list[tuple[bytes, bytes]], bytes | None, bool | None, bool]:
    """A response head's header fields (names lower-cased) and what frames its body: the Content-Length,
    whether Transfer-Encoding ends with chunked (None: no Transfer-Encoding), and whether the connection
    ends after the answer."""
    headers: list[tuple[bytes, bytes]] = []
    length: bytes | None = None
    chunked: bool | None = None
    close = False
    for line in lines:
        name, colon, value = line.partition(b":")
        if not colon or not name or name != name.strip() or line[:1] in (b" ", b"\t"):
            raise _Broken("a malformed header line")
        name, value = name.lower(), value.strip()
        headers.append((name, value))
        if name == b"content-length":
            if not value.isdigit() or (length is not None and length != value):
                raise _Broken("a malformed Content-Length")
            length = value
        elif name == b"transfer-encoding":
            chunked = value.lower().rsplit(b",", 1)[-1].strip() == b"chunked"
            close = close or not chunked
        elif name == b"connection":
            close = close or b"close" in value.lower()
    return headers, length, chunked, close


class _Link(asyncio.Protocol):
    """One kept connection. Its answers are read by a small HTTP/1.1 response reader (RFC 9112: a
    status line, headers, then a body framed by Transfer-Encoding: chunked, Content-Length, or the
    connection's end), which costs a fraction of a general state machine's time per answer."""

    def __init__(self, pool: LeanPool) -> None:
        self.pool = pool
        self.transport: asyncio.Transport | None = None
        self.exchange: Exchange | None = None
        self.dead = False
        self.buffer = b""
        self.state = _HEAD
        self.left = 0  # bytes of the body (Content-Length) or of the chunk still to read
        self.keep = True  # the connection may serve the next request

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, exchange: Exchange, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        self.exchange = exchange
        exchange.link = self
        self.buffer, self.state = b"", _HEAD
        self.transport.write(head + body)

    def data_received(self, data: bytes) -> None:
        exchange = self.exchange
        if exchange is None:  # bytes nobody asked for: this connection is not reused
            self._close()
            return
        if exchange.given_up():  # the request's deadline passed: its answer is not read on
            self.exchange = None
            self._close()
            return
        self.buffer = self.buffer + data if self.buffer else data
        try:
            self._read()
        except _Broken as exc:
            self._fail(ConnectionFailed(f"connection to {self.pool.url} broke: {exc}", detail={"url": self.pool.url}))
        except Exception as exc:  # noqa: BLE001 - a fault above fails this request, never the event loop's log
            self._fail(ConnectionFailed(f"reading the answer from {self.pool.url} failed: {type(exc).__name__}",
                                        detail={"url": self.pool.url}))

    def eof_received(self) -> bool | None:
        if self.exchange is not None and self.state == _TO_CLOSE:
            exchange, self.exchange = self.exchange, None
            self._close()
            if self.buffer:
                exchange.body(self.buffer)
            exchange.end()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.dead = True
        self.pool.forget(self)
        if self.exchange is not None:
            reason = clip(str(exc), 200) if exc is not None and str(exc) else "the server closed the connection"
            self._fail(ConnectionFailed(f"connection to {self.pool.url} broke: {reason} before the answer ended",
                                        detail={"url": self.pool.url}))

    def _read(self) -> None:
        """Read what the buffer holds of the answer; each complete part goes to the exchange. The body's
        end is looked for before a chunk is handed on, so that the connection is free again before the
        answer's callback (which may send the next request on it) runs. One step per state (`_STEPS`),
        each True when the next may follow at once."""
        while (exchange := self.exchange) is not None and _STEPS[self.state](self, exchange):
            pass

    def _step_head(self, exchange: Exchange) -> bool:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                raise _Broken(f"a response head over {MAX_HEAD} bytes")
            return False
        head, self.buffer = self.buffer[:end], self.buffer[end + 4:]
        return self._head(exchange, head)

    def _step_sized(self, exchange: Exchange) -> bool:
        if not self.buffer:
            return False
        chunk, self.buffer = self.buffer[:self.left], self.buffer[self.left:]
        self.left -= len(chunk)
        if self.left == 0:
            self._finish(exchange, chunk)
        elif not exchange.body(chunk):
            self._drop()
        return False

    def _step_to_close(self, exchange: Exchange) -> bool:
        if self.buffer:
            chunk, self.buffer = self.buffer, b""
            if not exchange.body(chunk):
                self._drop()
        return False

    def _step_chunk_size(self, exchange: Exchange) -> bool:
        end = self.buffer.find(b"\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEAD:
                raise _Broken("a chunk size line too long")
            return False
        size = self.buffer[:end].split(b";", 1)[0].strip()
        self.buffer = self.buffer[end + 2:]
        if not size or len(size) > 16 or size.strip(b"0123456789abcdefABCDEF"):
            raise _Broken("a chunk size that is not hexadecimal")
        self.left = int(size, 16)
        self.state = _CHUNK if self.left else _TRAILER
        return True

    def _step_chunk(self, exchange: Exchange) -> bool:
        if not self.buffer:
            return False
        chunk, self.buffer = self.buffer[:self.left], self.buffer[self.left:]
        self.left -= len(chunk)
        if self.left == 0:
            self.state = _CHUNK_END
            if self._last_chunk_here():
                self._finish(exchange, chunk)
                return False
        if not exchange.body(chunk):
            self._drop()
            return False
        return True

    def _last_chunk_here(self) -> bool:
        """Whether the chunk's end, the zero chunk and the end of the trailers are already in the buffer
        (then taken from it): the answer is complete with the chunk just read."""
        if not (self.buffer.startswith(b"\r\n0\r\n\r\n") or self.buffer.startswith(b"\r\n0;")):
            return False
        rest = self.buffer[2:]
        end = rest.find(b"\r\n")
        trailer = rest.find(b"\r\n\r\n", end) if end >= 0 else -1
        if trailer < 0:
            return False
        self.buffer = rest[trailer + 4:]
        return True

    def _step_chunk_end(self, exchange: Exchange) -> bool:
        if len(self.buffer) < 2:
            return False
        if not self.buffer.startswith(b"\r\n"):
            raise _Broken("a chunk not followed by CRLF")
        self.buffer = self.buffer[2:]
        self.state = _CHUNK_SIZE
        return True

    def _step_trailer(self, exchange: Exchange) -> bool:
        """Trailer fields (ignored) up to an empty line."""
        if self.buffer.startswith(b"\r\n"):
            self.buffer = self.buffer[2:]
        else:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self.buffer) > MAX_HEAD:
                    raise _Broken(f"trailers over {MAX_HEAD} bytes")
                return False
            self.buffer = self.buffer[end + 4:]
        self._finish(exchange, b"")
        return False

    def _head(self, exchange: Exchange, head: bytes) -> bool:
        """The status line and headers read: the body's framing set (RFC 9112 6.3). False when the
        exchange wants no more of it."""
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or parts[0] not in (b"HTTP/1.1", b"HTTP/1.0") or len(parts[1]) != 3 \
                or not parts[1].isdigit():
            raise _Broken("not an HTTP/1.1 status line")
        status = int(parts[1])
        headers, length, chunked, close = _fields(lines[1:])
        if 100 <= status < 200:
            return True  # 100 Continue and the like: the answer follows
        self.keep = not close and parts[0] == b"HTTP/1.1"
        if not exchange.head(status, headers):
            self._drop()
            return False
        if chunked is not None:  # Transfer-Encoding: chunked last, or the connection's end
            self.state = _CHUNK_SIZE if chunked else _TO_CLOSE
            return True
        if status in (204, 304) or (length is not None and int(length) == 0):
            self._finish(exchange, b"")
            return False
        if length is None:
            self.state = _TO_CLOSE
            self.keep = False
        else:
            self.left = int(length)
            self.state = _SIZED
        return True

    def _finish(self, exchange: Exchange, chunk: bytes) -> None:
        """The answer complete, ending with `chunk`: the connection free again (or closed) first, then
        the exchange told; the HTTP message was whole, so whatever it means, the connection serves on."""
        self.exchange = None
        self.state = _HEAD
        if self.keep and not self.buffer:
            self.pool.idle.append(self)
        else:
            self._close()
        if chunk:
            exchange.body(chunk)
        exchange.end()

    def _drop(self) -> None:
        """The answer was taken as far as it is wanted: the connection is not reused."""
        self.exchange = None
        self._close()

    def _fail(self, error: ProbeError) -> None:
        exchange, self.exchange = self.exchange, None
        self._close()
        if exchange is not None:
            exchange.failed(error)

    def _close(self) -> None:
        self.dead = True
        self.pool.forget(self)
        if self.transport is not None:
            self.transport.close()


# What `_Link._read` does in each state (the order of the states' numbers).
_STEPS = (_Link._step_head, _Link._step_sized, _Link._step_chunk_size, _Link._step_chunk, _Link._step_chunk_end,
          _Link._step_trailer, _Link._step_to_close)


class LeanPool:
    """The kept connections of one transport to one http:// URL."""

    def __init__(self, url: str, connect_timeout: float) -> None:
        parts = urlsplit(url)
        self.url = url
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        netloc = parts.netloc.rsplit("@", 1)[-1]
        self.host_header = (b"Host", netloc.encode("ascii", "replace"))
        self.connect_timeout = connect_timeout
        self.idle: list[_Link] = []
        self.links: set[_Link] = set()
        self.opening = 0
        self.closed = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._heads: dict[tuple[int, int], tuple[Any, bytes]] = {}  # post's request heads, built once

    def forget(self, link: _Link) -> None:
        self.links.discard(link)
        with contextlib.suppress(ValueError):
            self.idle.remove(link)

    def post(self, headers: list[tuple[bytes, bytes]], body: bytes, exchange: Exchange) -> bool:
        """Send a POST of `body` with `headers` (Host and Content-Length added) on an idle connection, or a new
        one; False when it cannot (closed, too many connections): the caller sends it another way."""
        if self.closed or len(self.links) + self.opening >= MAX_CONNECTIONS:
            return False
        key = (id(headers), len(body))
        cached = self._heads.get(key)
        if cached is None or cached[0] is not headers:
            # Built once per header list and body length (a load's requests differ only in their id,
            # so in a few lengths), its fields checked by h11 as it checks what it sends.
            fields = [self.host_header, *headers, (b"Content-Length", b"%d" % len(body))]
            try:
                h11.Request(method="POST", target=self.target, headers=fields)
            except h11.LocalProtocolError:
                return False
            if len(self._heads) >= MAX_HEADS:
                self._heads.clear()
            cached = self._heads[key] = (headers, b"POST %s HTTP/1.1\r\n%s\r\n" % (
                self.target.encode("ascii", "replace"), b"".join(b"%s: %s\r\n" % field for field in fields)))
        head = cached[1]
        while self.idle:
            link = self.idle.pop()
            if not link.dead and link.transport is not None and not link.transport.is_closing():
                link.send(exchange, head, body)
                return True
        loop = asyncio.get_running_loop()
        self.opening += 1
        task = loop.create_task(self._open(exchange, head, body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return True

    async def _open(self, exchange: Exchange, head: bytes, body: bytes) -> None:
        loop = asyncio.get_running_loop()
        try:
            try:
                _, link = await asyncio.wait_for(
                    loop.create_connection(lambda: _Link(self), self.host, self.port), self.connect_timeout)
            except TimeoutError:
                exchange.failed(RequestTimeout(f"connecting to {self.url} timed out", detail={"url": self.url}))
                return
            except OSError as exc:
                reason = clip((str(exc) or type(exc).__name__).splitlines()[0], 200)
                exchange.failed(ConnectionFailed(f"cannot connect to {self.url}: {reason}",
                                                 detail={"url": self.url, "stage": "connect"}))
                return
            except Exception as exc:  # noqa: BLE001 - never a task's unretrieved exception in the log
                exchange.failed(ConnectionFailed(f"cannot connect to {self.url}: {type(exc).__name__}",
                                                 detail={"url": self.url, "stage": "connect"}))
                return
        finally:
            self.opening -= 1
        if self.closed:
            link._close()
            exchange.failed(ConnectionFailed(f"connection to {self.url} closed", detail={"url": self.url}))
            return
        self.links.add(link)
        link.send(exchange, head, body)

    def close(self) -> None:
        self.closed = True
        for task in list(self._tasks):
            task.cancel()
        for link in list(self.links):
            link.exchange = None
            link._close()
        self.idle.clear()


def usable(url: str) -> bool:
    """Whether the lean path can carry POSTs to `url`: plain http:// with no proxy in the environment
    (https keeps httpx's TLS), on the asyncio event loop."""
    import os

    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.netloc.isascii():
        return False
    if any(os.environ.get(name) for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")):
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
