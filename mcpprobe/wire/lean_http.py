"""The lean POST path of `mcpprobe load` over streamable HTTP: kept HTTP/1.1 connections, each an
asyncio Protocol speaking through the `h11` state machine, one request in flight on each (no
pipelining), as many connections as requests are in flight. No task, stream or cancel scope per
request: the bytes of a POST are written from the caller's turn, and its answer is read in the
Protocol's callbacks.

It only carries bytes: what an answer means is the transport's (wire/streamable_http.py
`queue_body`), which takes the fast way for a 2xx JSON answer to the very request and hands every
other answer (an error status, an event stream, a redirect) to the code that reads httpx's answers.
This module reports each exchange to its `Exchange`: `head` (status and headers, once), `body` (each
chunk), `end` (the answer complete) or `failed` (a ConnectionFailed or RequestTimeout: a transport
error). Plain http:// only; an https:// URL, a proxy, an auth flow or event hooks keep httpx.
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


class _Link(asyncio.Protocol):
    """One kept connection."""

    def __init__(self, pool: LeanPool) -> None:
        self.pool = pool
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=64 * 1024)
        self.transport: asyncio.Transport | None = None
        self.exchange: Exchange | None = None
        self.dead = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def send(self, exchange: Exchange, head: h11.Request, body: bytes) -> None:
        assert self.transport is not None
        self.exchange = exchange
        exchange.link = self
        try:
            data = self.h11.send(head) or b""
            data += (self.h11.send(h11.Data(data=body)) or b"") + (self.h11.send(h11.EndOfMessage()) or b"")
        except h11.LocalProtocolError as exc:
            self._fail(ConnectionFailed(f"cannot send to {self.pool.url}: {clip(str(exc), 200)}",
                                        detail={"url": self.pool.url}))
            return
        self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        exchange = self.exchange
        if exchange is None:  # bytes nobody asked for: this connection is not reused
            self._close()
            return
        if exchange.given_up():  # the request's deadline passed: its answer is not read on
            self.exchange = None
            self._close()
            return
        self.h11.receive_data(data)
        self._events()

    def eof_received(self) -> bool | None:
        if self.exchange is not None:
            self.h11.receive_data(b"")
            self._events()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.dead = True
        self.pool.forget(self)
        if self.exchange is not None:
            reason = clip(str(exc), 200) if exc is not None and str(exc) else "the server closed the connection"
            self._fail(ConnectionFailed(f"connection to {self.pool.url} broke: {reason} before the answer ended",
                                        detail={"url": self.pool.url}))

    def _events(self) -> None:
        event: Any = None
        while self.exchange is not None:
            exchange = self.exchange
            if event is None:
                try:
                    event = self.h11.next_event()
                except h11.RemoteProtocolError as exc:
                    self._fail(ConnectionFailed(f"connection to {self.pool.url} broke: {clip(str(exc), 200)}",
                                                detail={"url": self.pool.url}))
                    return
            if event is h11.NEED_DATA or event is h11.PAUSED:
                return
            current, event = event, None
            if isinstance(current, h11.Response):
                if not exchange.head(current.status_code, list(current.headers)):
                    self._drop()
                    return
            elif isinstance(current, h11.Data):
                data = bytes(current.data)
                with contextlib.suppress(h11.RemoteProtocolError):  # raised again by the next turn
                    event = self.h11.next_event()
                if isinstance(event, h11.EndOfMessage):
                    # The answer's end is read too: the connection is free before the answer is handed
                    # on (its callback may send the next request on it); the HTTP message was whole,
                    # so whatever the body means, the connection can serve on.
                    self.exchange = None
                    self._reuse()
                    exchange.body(data)
                    exchange.end()
                    return
                if not exchange.body(data):
                    self._drop()
                    return
            elif isinstance(current, h11.EndOfMessage):
                self.exchange = None
                self._reuse()  # first: the answer's callback may send the next request on this connection
                exchange.end()
                return
            elif isinstance(current, h11.ConnectionClosed):
                self._fail(ConnectionFailed(f"connection to {self.pool.url} broke: the server closed it before "
                                            "the answer", detail={"url": self.pool.url}))
                return
            # h11.InformationalResponse (100 Continue and the like): read on

    def _reuse(self) -> None:
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            try:
                self.h11.start_next_cycle()
            except h11.LocalProtocolError:
                self._close()
                return
            self.pool.idle.append(self)
        else:
            self._close()

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
        self._heads: dict[tuple[int, int], tuple[Any, h11.Request]] = {}  # post's request heads, built once

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
            # Built (and validated by h11) once per header list and body length: a load's requests
            # differ only in their id, so in a few lengths.
            try:
                head = h11.Request(method="POST", target=self.target,
                                   headers=[self.host_header, *headers, (b"Content-Length", b"%d" % len(body))])
            except h11.LocalProtocolError:
                return False
            if len(self._heads) >= MAX_HEADS:
                self._heads.clear()
            cached = self._heads[key] = (headers, head)
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

    async def _open(self, exchange: Exchange, head: h11.Request, body: bytes) -> None:
        loop = asyncio.get_running_loop()
        try:
            try:
                _, link = await asyncio.wait_for(
                    loop.create_connection(lambda: _Link(self), self.host, self.port), self.connect_timeout)
            except (TimeoutError, asyncio.TimeoutError):
                exchange.failed(RequestTimeout(f"connecting to {self.url} timed out", detail={"url": self.url}))
                return
            except OSError as exc:
                reason = clip((str(exc) or type(exc).__name__).splitlines()[0], 200)
                exchange.failed(ConnectionFailed(f"cannot connect to {self.url}: {reason}",
                                                    detail={"url": self.url}))
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
