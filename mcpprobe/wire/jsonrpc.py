"""JSON-RPC 2.0 over any transport: request/response correlation, notifications, server requests.

Lenient in what it accepts, exact in what it reports: a message that breaks the rules is kept as
an anomaly (a `protocol-violation` finding) and the connection goes on wherever it sensibly can.

One room: the request paths (send_request/Call, post/Posted, enqueue/_Callback for load) and the
dispatch of what comes in share one pending table and one set of abandoned ids; apart, each would
reach into the other's private state.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpprobe.errors import (
    ConnectionFailed,
    InternalError,
    ProbeError,
    ProtocolFailure,
    RequestTimeout,
    RpcError,
    bug_message,
    seconds,
)
from mcpprobe.safety.redact import Redactor
from mcpprobe.wire.transport import FastPath, Sink, Transport

MAX_ANOMALIES = 50
# Ids of requests given up on (timed out, cancelled) whose late answers are still expected: an id is
# forgotten when its answer arrives, and past this many the oldest is forgotten, so that a long
# `watch` or `load` run against a server that never answers does not grow without end. A request
# still unanswered after MAX_ABANDONED later give-ups is not waited for by anyone; were its answer
# to come after all, it would be reported as a response to a request never sent.
MAX_ABANDONED = 10_000
BATCH_VERSION = "2025-03-26"  # the one protocol version whose messages may be JSON-RPC batches
MAX_BAD_LINES = 20  # samples kept of each kind of output that is not JSON-RPC (all are counted)
# Server-to-client requests answered at once; more arriving meanwhile are dropped (and counted),
# so that a flood can neither grow memory nor crowd our own requests out of the transport.
MAX_SERVER_REQUESTS = 32
# How long a `notifications/cancelled` may take to go out after a request gave up.
CANCEL_NOTICE_SECONDS = 1.0
# Progress notifications reset a request's timeout (a long call that says it is alive is not cut
# off), but never past this many times its timeout after it was sent: a server that reports
# progress for ever does not hold a call for ever (docs/connection-options.md).
PROGRESS_LIMIT = 10
MAX_ENCODED = 64  # requests of `enqueue` kept encoded (a load's operations)
NotificationHandler = Callable[[str, dict[str, Any]], None]
RequestHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Tracer = Callable[[str, Any], None]


class _Pending:
    """A request sent and not yet answered: what the connection knows of it."""

    __slots__ = ("method", "deadline", "progress_token", "latest", "extended", "done", "answered", "result",
                 "error")

    def __init__(self, method: str, deadline: float, done: Any = None) -> None:
        self.method = method
        self.deadline = deadline
        self.progress_token: Any = None
        # The latest deadline progress may push this request to (PROGRESS_LIMIT x its timeout after it
        # was sent), and whether progress pushed it at all.
        self.latest = math.inf
        self.extended = False
        # anyio.Event; a _Flag (Connection.post); the _Queued itself (Connection.enqueue)
        self.done: Any = anyio.Event() if done is None else done
        self.answered = 0.0  # time.perf_counter() when the answer was read off the wire
        self.result: dict[str, Any] | None = None  # set, with error None, when the answer has come
        self.error: ProbeError | None = None


class Call:
    """A request sent, its answer awaited with `result()` (see `Connection.send_request`)."""

    __slots__ = ("_conn", "_id", "_pending", "_timeout", "_cancellable", "_handed")

    def __init__(self, conn: Connection, request_id: Any, pending: _Pending, timeout: float,
                 cancellable: bool) -> None:
        self._conn, self._id, self._pending = conn, request_id, pending
        self._timeout, self._cancellable = timeout, cancellable
        self._handed = time.monotonic()

    def handed(self) -> None:
        """The request is sent: the caller's work from now until `result()` is not counted."""
        self._handed = time.monotonic()

    def undelivered(self) -> None:
        """The request could not be sent in time: `result()` times out without a cancel notice."""
        self._cancellable = False

    async def result(self) -> dict[str, Any]:
        """The answer's result object; a ProbeError for anything else, RequestTimeout once the
        request's deadline (which progress may extend) has passed.

        The caller's own work between sending and asking (checking the previous page) does not
        count: no other task ran meanwhile, not even the one that reads the answer, so that time
        says nothing of the server, and a page that came in time must not time out."""
        conn, pending, request_id = self._conn, self._pending, self._id
        shift = time.monotonic() - self._handed
        pending.deadline += shift
        pending.latest += shift
        try:
            while not pending.done.is_set():
                remaining = pending.deadline - time.monotonic()
                if remaining <= 0:
                    break
                with anyio.move_on_after(remaining):
                    await pending.done.wait()
            if not pending.done.is_set():
                await self.given_up("timed out", shielded=False)
                if pending.extended and pending.deadline >= pending.latest:
                    limit = self._timeout * PROGRESS_LIMIT
                    raise RequestTimeout(
                        f"{pending.method}: no answer within {seconds(limit)} s ({PROGRESS_LIMIT} x --timeout), the "
                        "longest that progress notifications may extend a request",
                        detail={"method": pending.method, "timeout": self._timeout, "progressLimit": limit})
                raise RequestTimeout(f"{pending.method}: no answer within {seconds(self._timeout)} s",
                                     detail={"method": pending.method, "timeout": self._timeout})
        except anyio.get_cancelled_exc_class():
            await self.given_up("cancelled by the user")
            raise
        finally:
            conn._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None  # answered without an error: with its result
        return pending.result

    def abandon(self) -> None:
        """Stop waiting without a word to the server (the caller is leaving on an error of its
        own); a late answer is then expected, not a violation."""
        self._conn._abandoned.add(self._id)
        self._conn._pending.pop(self._id, None)

    async def given_up(self, reason: str, *, shielded: bool = True) -> None:
        conn = self._conn
        conn._abandoned.add(self._id)
        conn._pending.pop(self._id, None)
        if self._cancellable and conn.closed_error is None:
            with anyio.CancelScope(shield=shielded):
                await conn._cancel_quietly(self._id, reason)


class AbandonedIds:
    """The ids of requests given up on, oldest first, at most `limit` of them."""

    def __init__(self, limit: int = MAX_ABANDONED) -> None:
        self._limit = limit
        self._ids: dict[Any, None] = {}  # a dict keeps the order of insertion

    def add(self, request_id: Any) -> None:
        self._ids.pop(request_id, None)
        self._ids[request_id] = None
        while len(self._ids) > self._limit:
            del self._ids[next(iter(self._ids))]

    def answered(self, request_id: Any) -> bool:
        """Whether `request_id` was given up on; its one late answer has come, so it is forgotten."""
        return self._ids.pop(request_id, False) is None

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._ids

    def __len__(self) -> int:
        return len(self._ids)


class _Flag:
    """`_Pending.done` as a bare asyncio future: what `Connection.post` waits on, with no anyio Event
    (and its own future) in between. The same is_set/set as anyio's Event, which the rest expects."""

    __slots__ = ("future",)

    def __init__(self, future: Any) -> None:
        self.future = future

    def is_set(self) -> bool:
        return bool(self.future.done())

    def set(self) -> None:
        if not self.future.done():
            self.future.set_result(None)


class _Queued(_Pending):
    """A request of `Connection.enqueue`, its own `done`: setting it calls back at once, in the reader's
    turn, with the request out of the pending table: no future, no task woken, no timer per request,
    one object.

    `done` is a property, never an attribute that refers to the object itself: such a reference cycle
    keeps every answered request, and its result (megabytes, for a large answer), alive until the
    cycle collector happens to run, so that a load's memory grew with the number of answers."""

    __slots__ = ("_fired", "_conn", "_id", "_on_answer")

    @property
    def done(self) -> _Queued:
        return self

    def __init__(self, conn: Connection, request_id: int, method: str, deadline: float,
                 on_answer: Callable[[int, _Pending], None]) -> None:
        # _Pending's fields set here, not through its __init__: one call less per request of a load.
        self.method, self.deadline, self.progress_token = method, deadline, None
        self.answered, self.result, self.error = 0.0, None, None
        self.latest, self.extended = math.inf, False
        self._fired = False
        self._conn, self._id, self._on_answer = conn, request_id, on_answer

    def is_set(self) -> bool:
        return self._fired

    def set(self) -> None:
        if self._fired:
            return
        self._fired = True
        self._conn._pending.pop(self._id, None)
        self._on_answer(self._id, self)


class Posted:
    """A request written by `Connection.post`; `result()` waits for its answer under one timer."""

    __slots__ = ("_conn", "_id", "_pending", "_timeout")

    @property
    def answered(self) -> float:
        """When the answer was read off the wire (time.perf_counter()), not when the caller woke up to
        it: a load's latency is the server's and the wire's, not the client's task switch; 0 if none."""
        return self._pending.answered

    def __init__(self, conn: Connection, request_id: int, pending: _Pending, timeout: float) -> None:
        self._conn, self._id, self._pending, self._timeout = conn, request_id, pending, timeout

    async def result(self) -> dict[str, Any]:
        """As `Call.result`: the answer's result; RequestTimeout after `timeout` (with a cancel notice);
        on cancellation (Ctrl-C) the server is told with notifications/cancelled."""
        conn, pending = self._conn, self._pending
        future = pending.done.future
        timer = future.get_loop().call_later(self._timeout, _expire, future)
        try:
            await future
        except asyncio.CancelledError:
            if future.cancelled() and not _cancelling():  # the timer's doing, not a cancelled task
                await Call(conn, self._id, pending, self._timeout, True).given_up("timed out", shielded=False)
                raise RequestTimeout(f"{pending.method}: no answer within {seconds(self._timeout)} s",
                                     detail={"method": pending.method, "timeout": self._timeout}) from None
            await Call(conn, self._id, pending, self._timeout, True).given_up("cancelled by the user")
            raise
        finally:
            timer.cancel()
            conn._pending.pop(self._id, None)
        if pending.error is not None:
            raise pending.error
        assert pending.result is not None  # answered without an error: with its result
        return pending.result


def _expire(future: Any) -> None:
    if not future.done():
        future.cancel()


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


class _OwnTasks:
    """The connection's task group (transport readers, HTTP requests, answers to the server),
    whose tasks only the connection's shutdown ends. A caller being cancelled (Ctrl-C, SIGTERM)
    may still send a last request while it winds down (tasks/cancel) and needs its answer read.

    A task that raises (a bug in mcpprobe: the tasks report what the server did through the sink)
    cancels the caller, as any task group does, and its exception is kept as `fault`: the
    connection's shutdown raises it, so that the run ends on the bug, never as if the user had
    cancelled it (the caller only ever sees the cancellation). `on_fault(exc)` is told at once: the
    connection is closed then, so that nothing waits on a reader that is gone."""

    def __init__(self, on_fault: Callable[[Exception], None]) -> None:
        self._on_fault = on_fault
        self._group = anyio.create_task_group()
        self._scopes: set[anyio.CancelScope] = set()
        self._ended = False
        self.fault: Exception | None = None  # the first exception of a task, before the shutdown began

    async def __aenter__(self) -> _OwnTasks:
        await self._group.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._group.__aexit__(*exc_info)

    def start_soon(self, func: Callable[..., Awaitable[Any]], *args: Any, name: Any = None) -> None:
        scope = anyio.CancelScope(shield=True)
        if self._ended:
            scope.cancel()
        self._scopes.add(scope)

        async def run() -> None:
            try:
                with scope:
                    await func(*args)
            except Exception as exc:
                if self.fault is None and not self._ended:  # once torn down, a task's error is moot
                    self.fault = exc
                    self._on_fault(exc)
                raise
            finally:
                self._scopes.discard(scope)

        self._group.start_soon(run, name=name)

    def cancel(self) -> None:
        self._ended = True
        for scope in list(self._scopes):
            scope.cancel()
        self._group.cancel_scope.cancel()


@dataclass
class Anomaly:
    code: str  # a finding code: protocol-violation, batch-not-allowed or non-protocol-output
    message: str
    sample: str = ""


@dataclass
class StrayOutput:
    """Output of one kind that is not JSON-RPC: how much there was, and the first of it."""

    count: int = 0
    samples: list[str] = field(default_factory=list)


class Connection:
    """One JSON-RPC peer. Use as `async with Connection(transport) as conn:`."""

    def __init__(self, transport: Transport, *, tracer: Tracer | None = None, send_timeout: float = 30.0,
                 redactor: Redactor | None = None) -> None:
        self.transport = transport
        # What of load's fast path (post, enqueue) the transport offers: declared abilities, worked out once.
        self.fast = FastPath.of(transport)
        self.tracer = tracer
        # The run's secrets, masked in every text of the server's kept here (before it is cut short).
        self.redact = redactor if redactor is not None else Redactor(())
        # Bounds a notification, or an answer to a server request, that the server does not take.
        self.send_timeout = send_timeout
        self.anomalies: list[Anomaly] = []
        # Per kind of line (the transports name a handful), every line counted, MAX_BAD_LINES kept;
        # the kind's first line is an anomaly too, so that it is reported in the order it came.
        self.stray_output: dict[str, StrayOutput] = {}
        self.closed_error: ProbeError | None = None
        self.closed = anyio.Event()  # set when the transport reports the peer gone
        self.notification_handlers: list[NotificationHandler] = []
        self.request_handlers: dict[str, RequestHandler] = {}
        self._answering = 0
        self.unanswered_requests = 0  # server requests dropped because too many were in flight
        self._ids = itertools.count(1)
        self._pending: dict[Any, _Pending] = {}
        self._encoded: dict[tuple[str, int], tuple[Any, bytes]] = {}  # enqueue's requests, encoded once
        self._abandoned = AbandonedIds()
        self._task_group: Any = None
        self.protocol_version: str | None = None  # once negotiated; it decides whether batches are allowed

    async def __aenter__(self) -> Connection:
        self._task_group = _OwnTasks(self._on_fault)
        await self._task_group.__aenter__()
        try:
            sink = Sink(self._on_message, self._on_bad_output, self._on_closed, self._on_request_failed,
                        self._deadline_of, self.out_of_range, self.cookie_dropped)
            await self.transport.start(self._task_group, sink)
        except BaseException:
            await self._shutdown()
            raise
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self._shutdown()

    async def _shutdown(self) -> None:
        # The transport closes shielded (a cancelled run must still end the server); the task
        # group is exited outside that shield, in the order it was entered.
        with anyio.CancelScope(shield=True):
            await self.transport.aclose()
        self._task_group.cancel()
        # The group's exception group is the fault's (kept on its own, raised below) or moot
        # errors of tasks being torn down.
        with contextlib.suppress(Exception):
            await self._task_group.__aexit__(None, None, None)
        if self._task_group.fault is not None:
            raise self._task_group.fault

    def set_protocol_version(self, version: str) -> None:
        """The negotiated version: the transport sends it (MCP-Protocol-Version over HTTP), and
        it decides what the server may send (batches only in 2025-03-26)."""
        self.protocol_version = version
        self.transport.set_protocol_version(version)

    # ----- outgoing -----

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float,
        headers: dict[str, str] | None = None,
        reset_on_progress: bool = False,
        cancellable: bool = True,
    ) -> dict[str, Any]:
        """Send a request and wait for its result object; raise a ProbeError for anything else.

        One deadline covers the whole request, sending included: a server that stops reading its
        stdin, or an HTTP endpoint that never answers the POST, costs `timeout` and no more. After a
        timeout the `notifications/cancelled` gets CANCEL_NOTICE_SECONDS at most.
        """
        call = await self.send_request(method, params, timeout=timeout, headers=headers,
                                       reset_on_progress=reset_on_progress, cancellable=cancellable)
        return await call.result()

    async def send_request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float,
        headers: dict[str, str] | None = None,
        reset_on_progress: bool = False,
        cancellable: bool = True,
        request_id: Any = None,
    ) -> Call:
        """The first half of `request`: send it, and return the call whose `result()` waits for the
        answer, under the same deadline. The caller may work meanwhile (a page reader checks this
        page's items while the server prepares the next one), in the same task, with no task
        spawned and no extra turn of the event loop; it must then await `result()` (or `abandon()`)."""
        if self.closed_error is not None:
            raise self.closed_error
        if request_id is None or request_id in self._pending:
            request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        pending = _Pending(method, time.monotonic() + timeout)
        if reset_on_progress:
            meta = (params or {}).get("_meta") or {}
            pending.progress_token = meta.get("progressToken")
            pending.latest = time.monotonic() + timeout * PROGRESS_LIMIT
        self._pending[request_id] = pending
        call = Call(self, request_id, pending, timeout, cancellable)
        sent = False
        try:
            self._trace("send", message)
            with anyio.move_on_after(timeout):
                await self.transport.send(message, headers)
                sent = True
        except anyio.get_cancelled_exc_class():
            await call.given_up("cancelled by the user")
            raise
        except BaseException:
            self._pending.pop(request_id, None)
            raise
        # The time the send took is the server's (a server that does not read holds it up): only
        # the caller's work from here on is not counted (Call.result).
        call.handed()
        if not sent:
            # Not delivered within the timeout: the deadline has passed, and a notice that cancels
            # it would wait on the same server that does not read.
            call.undelivered()
        return call

    def post(self, method: str, params: dict[str, Any] | None, *, timeout: float,
             headers: dict[str, str] | None = None) -> Posted | None:
        """The hot path of `mcpprobe load`: write the request now, with no task, lock, cancel scope or
        turn of the event loop, when the transport can take it at once (a stdio pipe with room); None
        when it cannot (HTTP, a full pipe), and the caller uses `send_request`. The deadline is the
        same: `timeout` from now, answered or not."""
        immediate = self.fast.immediate
        if immediate is None or self.closed_error is not None:
            return None
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        pending = _Pending(method, time.monotonic() + timeout, done=_Flag(asyncio.get_running_loop().create_future()))
        self._pending[request_id] = pending
        if self.tracer is not None:
            self.tracer("send", message)
        if not immediate.send_nowait(message):
            self._pending.pop(request_id, None)
            return None
        return Posted(self, request_id, pending, timeout)

    def enqueue(self, method: str, params: dict[str, Any] | None, *, timeout: float,
                on_answer: Callable[[int, _Pending], None], headers: dict[str, str] | None = None) -> int | None:
        """The hot path of `mcpprobe load` on a transport that queues sends (stdio: written with the
        others of this turn; streamable HTTP: its POST written on a kept connection of the lean path,
        wire/lean_http.py, or else started as a task of the HTTP client): no task, future or timer of the
        caller's. `on_answer(id, pending)` is called when its answer (`pending.result`, or
        `pending.error`, also when the connection is lost) is read. The caller keeps the time: a
        request it stops waiting for is ended with `give_up`. None when the transport cannot queue
        (the caller uses `post` or `send_request`). `params` are encoded once per object (a load's
        operations are built once): they must not change after the first call."""
        fast = self.fast
        if fast.queueing is None or self.closed_error is not None:
            return None
        request_id = next(self._ids)
        self._pending[request_id] = _Queued(self, request_id, method, time.monotonic() + timeout, on_answer)
        line = self._line_of(method, params, request_id) if self.tracer is None else None
        if line is not None and fast.lines is not None:
            sent = fast.lines.queue_line(line)
        elif line is not None and fast.bodies is not None and fast.bodies.queue_body(request_id, method, line, headers):
            sent = True  # streamable HTTP's lean POSTs (wire/lean_http.py)
        else:
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
            if params is not None:
                message["params"] = params
            self._trace("send", message)
            sent = fast.queueing.queue_nowait(message, headers)
        if not sent:
            self._pending.pop(request_id, None)
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
        pending = self._pending.pop(request_id, None)
        self._abandoned.add(request_id)
        if isinstance(pending, _Queued):
            pending._fired = True
        queueing = self.fast.queueing
        if queueing is not None and self.closed_error is None:
            notice = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                      "params": {"requestId": request_id, "reason": reason}}
            self._trace("send", notice)
            queueing.queue_nowait(notice)

    def flush(self) -> None:
        """Write what was queued now, not at the end of this turn (the run is ending)."""
        if self.fast.lines is not None:
            self.fast.lines.flush()

    async def _cancel_quietly(self, request_id: Any, reason: str) -> None:
        with contextlib.suppress(ProbeError):
            await self.notify("notifications/cancelled", {"requestId": request_id, "reason": reason},
                              timeout=CANCEL_NOTICE_SECONDS)

    async def notify(self, method: str, params: dict[str, Any] | None = None,
                     headers: dict[str, str] | None = None, *, timeout: float | None = None) -> None:
        """Send a notification; raise RequestTimeout when the server does not take it in time
        (`timeout`, else the connection's send_timeout)."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        limit = self.send_timeout if timeout is None else timeout
        self._trace("send", message)
        with anyio.move_on_after(limit) as scope:
            await self.transport.send(message, headers)
        if scope.cancelled_caught:
            raise RequestTimeout(f"{method}: the server did not take the notification within {seconds(limit)} s",
                                 detail={"method": method, "timeout": limit})

    def extend_deadline_for_progress(self, token: Any, seconds: float) -> None:
        for pending in self._pending.values():
            if pending.progress_token is not None and pending.progress_token == token:
                pending.deadline = min(pending.latest, max(pending.deadline, time.monotonic() + seconds))
                pending.extended = True

    # ----- incoming -----

    def _trace(self, direction: str, message: Any) -> None:
        if self.tracer is not None:
            self.tracer(direction, message)

    def _anomaly(self, message: str, sample: Any = "", code: str = "protocol-violation") -> None:
        if len(self.anomalies) < MAX_ANOMALIES:
            text = sample if isinstance(sample, str) else _short_json(sample, self.redact)
            self.anomalies.append(Anomaly(code, message, self.redact(text)[:200]))

    def out_of_range(self, what: str, sample: str) -> None:
        """A number from the server past what mcpprobe can use (a number-out-of-range finding)."""
        self._anomaly(what, sample, "number-out-of-range")

    def cookie_dropped(self, what: str, sample: str) -> None:
        """A cookie the server set, dropped past the jar's bounds (a cookie-dropped finding)."""
        self._anomaly(what, sample, "cookie-dropped")

    def _on_bad_output(self, what: str, sample: str) -> None:
        stray = self.stray_output.get(what)
        if stray is None:
            stray = self.stray_output[what] = StrayOutput()
            self.anomalies.append(Anomaly("non-protocol-output", what))
        stray.count += 1
        if len(stray.samples) < MAX_BAD_LINES and sample:
            stray.samples.append(self.redact(sample)[:200])

    def _on_closed(self, error: ProbeError) -> None:
        if self.closed_error is None:
            self.closed_error = error
        self.closed.set()
        for pending in list(self._pending.values()):  # an enqueued request's callback leaves the table
            if not pending.done.is_set():
                pending.error = error
                pending.done.set()

    def _on_fault(self, exc: Exception) -> None:
        """A bug in one of the connection's tasks (it is raised when the connection closes): what
        waits for an answer, or sends from now on, fails at once instead of waiting out its timeout."""
        self._on_closed(InternalError(bug_message(exc)))

    def _on_request_failed(self, request_id: Any, error: ProbeError) -> None:
        pending = self._pending.get(request_id)
        if pending is not None and not pending.done.is_set():
            pending.error = error
            pending.done.set()

    def _deadline_of(self, request_id: Any) -> float | None:
        pending = self._pending.get(request_id) if _hashable(request_id) else None
        return pending.deadline if pending is not None and not pending.done.is_set() else None

    def _on_message(self, message: Any, flags: int) -> None:
        from mcpprobe.wire.decode import HUGE, NON_FINITE

        self._trace("recv", message)
        if flags & NON_FINITE:
            self._anomaly("a message with NaN or Infinity, which are not JSON numbers (RFC 8259); written as null",
                          message)
        if flags & HUGE:
            self._anomaly("a message with a number past the range of a double (such as 1e400), beyond what RFC 8259 "
                          "section 6 says interoperates; written as null", message, "number-out-of-range")
        if isinstance(message, list):
            self._batch(message)
            for item in message:
                self._dispatch(item)
            return
        self._dispatch(message)

    def _batch(self, message: list[Any]) -> None:
        """JSON-RPC batches are MCP only in 2025-03-26: 2024-11-05 did not define them, and
        2025-06-18 removed them (SDK clients of those versions reject a batch outright)."""
        version = self.protocol_version
        if version == BATCH_VERSION:
            return
        if version is not None and version > BATCH_VERSION:
            self._anomaly(f"the server sent a JSON-RPC batch, which protocol version {version} forbids (batches "
                          f"were allowed only in {BATCH_VERSION}); MCP clients reject it", message, "batch-not-allowed")
            return
        self._anomaly("the server sent a JSON-RPC batch; MCP defines batches only in protocol version "
                      f"{BATCH_VERSION}", message)

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            self._anomaly("a message that is not a JSON object", message)
            return
        if message.get("jsonrpc") != "2.0":
            self._anomaly('a message without "jsonrpc": "2.0"', message)
        method = message.get("method")
        if method is not None:
            if not isinstance(method, str):
                self._anomaly("a message whose method is not a string", message)
                return
            params = message.get("params")
            if params is not None and not isinstance(params, dict):
                self._anomaly(f"{method}: params is not an object", message)
                params = None
            if "id" in message:
                if self._answering >= MAX_SERVER_REQUESTS:
                    self.unanswered_requests += 1
                    return
                self._answering += 1
                self._task_group.start_soon(self._answer, message["id"], method, params or {})
            else:
                for handler in list(self.notification_handlers):
                    handler(method, params or {})
            return
        if "id" not in message:
            self._anomaly("a message with neither method nor id", message)
            return
        self._resolve(message)

    def _resolve(self, message: dict[str, Any]) -> None:
        request_id = message["id"]
        # mcpprobe sends string and integer ids only: a float (9007199254740991.0) is equal to the integer
        # sent, but it is not that id echoed (JSON-RPC: "the same value"; MCP: a string or an integer).
        pending = self._pending.get(request_id) if _hashable(request_id) else None
        if pending is None or pending.done.is_set():
            if pending is None and isinstance(request_id, float) and request_id in self._pending:
                unsent = _short_json(request_id, self.redact)
                self._anomaly(f"a response to a request that was never sent (id {unsent}: a number with a fraction "
                              "or an exponent, not the integer id mcpprobe sent)", message)
                return
            if _hashable(request_id) and self._abandoned.answered(request_id):
                return  # a late answer to a request we gave up on: expected, not a violation
            unsent = _short_json(request_id, self.redact)
            self._anomaly(f"a response to a request that was never sent (id {unsent})", message)
            return
        pending.answered = time.perf_counter()
        has_result, has_error = "result" in message, "error" in message
        if has_result and has_error:
            self._anomaly(f"{pending.method}: a response with both result and error", message)
        if has_error:
            pending.error = _rpc_error(pending.method, message["error"], self.redact)
        elif not has_result:
            pending.error = ProtocolFailure(f"{pending.method}: a response with neither result nor error")
        elif not isinstance(message["result"], dict):
            pending.error = ProtocolFailure(
                f"{pending.method}: the result is not a JSON object",
                detail={"result": _short_json(message["result"], self.redact)}
            )
        else:
            pending.result = message["result"]
        pending.done.set()

    async def _answer(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        try:
            handler = self.request_handlers.get(method)
            response: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
            if handler is None:
                response["error"] = {"code": -32601, "message": f"Method not found: mcpprobe does not handle {method}"}
            else:
                try:
                    response["result"] = await handler(params)
                except RpcError as exc:
                    response["error"] = {"code": exc.rpc_code, "message": exc.rpc_message}
            self._trace("send", response)
            # A server that does not take our answer has it dropped after send_timeout.
            with anyio.move_on_after(self.send_timeout), contextlib.suppress(ProbeError):
                await self.transport.send(response)
        finally:
            self._answering -= 1


def _hashable(value: Any) -> bool:
    """An id that may be one mcpprobe sent: a string or an integer (never a float, nor a bool)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _short_json(value: Any, redact: Redactor, limit: int = 200) -> str:
    import json

    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    text = redact(text)  # masked before it is cut: a cut could leave a secret's prefix
    return text if len(text) <= limit else text[:limit] + "..."


def _rpc_error(method: str, error: Any, redact: Redactor) -> ProbeError:
    if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
        return ProtocolFailure(f"{method}: a malformed JSON-RPC error object",
                               detail={"error": _short_json(error, redact)})
    message = error.get("message")
    if not isinstance(message, str):
        message = _short_json(message, redact)
    return RpcError(error["code"], message, error.get("data"), method=method)


__all__ = ["Connection", "Call", "Anomaly", "ConnectionFailed"]
