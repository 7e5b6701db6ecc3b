"""Load's pipelined request path: requests sent with no task, lock, cancel scope, timer or turn of the
event loop of the caller's, on a transport that declares it can (wire/transport.py: `Queueing`,
`LineQueueing`, `BodyQueueing`, `Immediate`).

It lives apart from the connection's one request path (`Connection.send_request` and its `Call`) and
reaches the connection only through the hooks made for it (`expect`, `forget`, `abandon`, `given_up`,
`awaited`): its requests wait in the same pending table, so that their answers are read, and they fail
with the connection, as every request does; a request awaited here ends as a `Call` does
(`Connection.awaited`: the timeout, the cancel notice, the answer's result or error).

`Pipeline.of(conn)` is None when the transport cannot queue a send (HTTP+SSE, whose POST waits): the
caller then uses `send_request`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

from mcpprobe.wire.jsonrpc import Connection, Pending, cancel_notice, request_message
from mcpprobe.wire.transport import FastPath, Queueing

MAX_ENCODED = 64  # requests of `enqueue` kept encoded (a load's operations)
OnAnswer = Callable[[int, Pending], None]


class Pipeline:
    """Load's fast way to send requests on one connection (`post`, `enqueue`), made once per connection."""

    __slots__ = ("conn", "fast", "queueing", "_encoded")

    def __init__(self, conn: Connection, fast: FastPath, queueing: Queueing) -> None:
        self.conn, self.fast, self.queueing = conn, fast, queueing
        self._encoded: dict[tuple[str, int], tuple[Any, bytes]] = {}  # enqueue's requests, encoded once

    @classmethod
    def of(cls, conn: Connection) -> Pipeline | None:
        """The pipeline of `conn`, or None when its transport cannot queue a send."""
        fast = FastPath.of(conn.transport)
        return None if fast.queueing is None else cls(conn, fast, fast.queueing)

    def post(self, method: str, params: dict[str, Any] | None, *, timeout: float,
             headers: dict[str, str] | None = None) -> Posted | None:
        """Write the request now, when the transport can take it at once (a stdio pipe with room); None
        when it cannot (HTTP, a full pipe), and the caller uses `send_request`. The deadline is the same
        as `send_request`'s: `timeout` from now, answered or not."""
        immediate, conn = self.fast.immediate, self.conn
        if immediate is None or conn.closed_error is not None:
            return None
        pending = _Flag(method, time.monotonic() + timeout, asyncio.get_running_loop().create_future())
        request_id = conn.expect(pending)
        message = request_message(request_id, method, params)
        if conn.tracer is not None:
            conn.tracer("send", message)
        if not immediate.send_nowait(message):
            conn.forget(request_id)
            return None
        return Posted(conn, request_id, pending, timeout)

    def enqueue(self, method: str, params: dict[str, Any] | None, *, timeout: float, on_answer: OnAnswer,
                headers: dict[str, str] | None = None) -> int | None:
        """Queue the request on the transport (stdio: written with the others of this turn; streamable
        HTTP: its POST written on a kept connection of the lean path, wire/lean_http.py, or else started
        as a task of the HTTP client), and return its id. `on_answer(id, pending)` is called, in the
        reader's turn, when its answer (`pending.result`, or `pending.error`, also when the connection is
        lost) is read. The caller keeps the time: a request it stops waiting for is ended with `give_up`.
        None when the connection is closed, or the transport does not take it. `params` are encoded
        once per object (a load's operations are built once): they must not change after the first call."""
        conn, fast = self.conn, self.fast
        if conn.closed_error is not None:
            return None
        queued = _Queued(conn, method, time.monotonic() + timeout, on_answer)
        request_id = queued.request_id = conn.expect(queued)
        line = self._line_of(method, params, request_id) if conn.tracer is None else None
        if line is not None and fast.lines is not None:
            sent = fast.lines.queue_line(line)
        elif line is not None and fast.bodies is not None and fast.bodies.queue_body(request_id, method, line, headers):
            sent = True  # streamable HTTP's lean POSTs (wire/lean_http.py)
        else:
            message = request_message(request_id, method, params)
            if conn.tracer is not None:
                conn.tracer("send", message)
            sent = self.queueing.queue_nowait(message, headers)
        if not sent:
            conn.forget(request_id)
            return None
        return request_id

    def _line_of(self, method: str, params: dict[str, Any] | None, request_id: int) -> bytes | None:
        """The request as the line `encode_line` would write, from its method and params encoded once
        (per params object, which `enqueue`'s callers never change): only the id is new. None when the
        transport takes neither lines (stdio) nor bodies (streamable HTTP), or orjson cannot encode the params."""
        if self.fast.lines is None and self.fast.bodies is None:
            return None
        key = (method, id(params))
        cached = self._encoded.get(key)
        if cached is None or cached[0] is not params:
            import orjson

            try:
                tail = orjson.dumps({"method": method, **({"params": params} if params is not None else {})})
            except TypeError:
                return None
            if len(self._encoded) >= MAX_ENCODED:
                self._encoded.clear()
            cached = self._encoded[key] = (params, tail[1:] + b"\n")  # held: its id stays its own
        return b'{"jsonrpc":"2.0","id":%d,%s' % (request_id, cached[1])

    def give_up(self, request_id: int, reason: str) -> None:
        """An enqueued request no longer awaited (timed out, or the user stopped): forgotten, a late
        answer expected rather than a violation, and the server told (notifications/cancelled), queued."""
        conn = self.conn
        pending = conn.abandon(request_id)
        if isinstance(pending, _Queued):
            pending.fired = True  # its callback is not called any more
        if conn.closed_error is None:
            notice = cancel_notice(request_id, reason)
            if conn.tracer is not None:
                conn.tracer("send", notice)
            self.queueing.queue_nowait(notice)

    def flush(self) -> None:
        """Write what was queued now, not at the end of this turn (the run is ending)."""
        if self.fast.lines is not None:
            self.fast.lines.flush()


class _Flag(Pending):
    """A request of `Pipeline.post`: settled, it completes a bare asyncio future, which `Posted.result`
    awaits with no anyio Event (and its own future) in between."""

    __slots__ = ("future",)

    def __init__(self, method: str, deadline: float, future: asyncio.Future[None]) -> None:
        super().__init__(method, deadline)
        self.future = future

    def settled(self) -> bool:
        return self.future.done()

    def settle(self) -> None:
        if not self.future.done():
            self.future.set_result(None)


class Posted:
    """A request written by `Pipeline.post`; `result()` waits for its answer under one timer."""

    __slots__ = ("_conn", "_id", "_pending", "_timeout")

    def __init__(self, conn: Connection, request_id: int, pending: _Flag, timeout: float) -> None:
        self._conn, self._id, self._pending, self._timeout = conn, request_id, pending, timeout

    @property
    def answered(self) -> float:
        """When the answer was read off the wire (time.perf_counter()), not when the caller woke up to
        it: a load's latency is the server's and the wire's, not the client's task switch; 0 if none."""
        return self._pending.answered

    async def result(self) -> dict[str, Any]:
        """As `Call.result` (the same end, `Connection.awaited`): the answer's result; RequestTimeout
        after `timeout` (with a cancel notice); on cancellation (Ctrl-C) the server is told with
        notifications/cancelled."""
        return await self._conn.awaited(self._id, self._pending, self._timeout, self._wait())

    async def _wait(self) -> bool:
        """Whether the answer came within `timeout`: one timer (call_later) that cancels the future."""
        future = self._pending.future
        timer = future.get_loop().call_later(self._timeout, _expire, future)
        try:
            await future
        except asyncio.CancelledError:
            if future.cancelled() and not _cancelling():  # the timer's doing, not a cancelled task
                return False
            raise
        finally:
            timer.cancel()
        return True


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.cancel()


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class _Queued(Pending):
    """A request of `Pipeline.enqueue`: settled, it calls back at once, in the reader's turn, with the
    request out of the pending table: no future, no task woken, no timer per request, one object.

    It refers to its connection, never to itself: such a reference cycle keeps every answered
    request, and its result (megabytes, for a large answer), alive until the cycle collector happens
    to run, so that a load's memory grew with the number of answers."""

    __slots__ = ("fired", "conn", "request_id", "on_answer")

    def __init__(self, conn: Connection, method: str, deadline: float, on_answer: OnAnswer) -> None:
        # Pending's fields set here, not through its __init__: one call less per request of a load.
        self.method, self.deadline, self.progress_token = method, deadline, None
        self.answered, self.result, self.error = 0.0, None, None
        self.latest, self.extended = math.inf, False
        self.fired = False
        self.conn, self.request_id, self.on_answer = conn, 0, on_answer

    def settled(self) -> bool:
        return self.fired

    def settle(self) -> None:
        if self.fired:
            return
        self.fired = True
        self.conn.forget(self.request_id)
        self.on_answer(self.request_id, self)
