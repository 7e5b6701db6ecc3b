"""JSON-RPC 2.0 over any transport: request/response correlation, notifications, server requests.

Lenient in what it accepts, exact in what it reports: a message that breaks the rules is kept as
an anomaly (a `protocol-violation` finding) and the connection goes on wherever it sensibly can.

One room: the one request path (`send_request` and its `Call`; `request` is both in one) and the
dispatch of what comes in share one pending table and one set of abandoned ids; apart, each would
reach into the other's private state. Load's pipelined path (wire/pipelined.py) lives apart and
comes in through the hooks of `Connection` made for it (`expect`, `forget`, `abandon`, `given_up`,
`awaited`): its requests share the same table, ids and end of an awaited request, so that every
answer is read, and every request fails with the connection, in the same way.
"""

from __future__ import annotations

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
from mcpprobe.wire.transport import Sink, Transport

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
NotificationHandler = Callable[[str, dict[str, Any]], None]
RequestHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Tracer = Callable[[str, Any], None]


class Pending:
    """A request sent and not yet answered, as the connection knows it (its pending table). The reader
    fills in `answered` and `result` or `error`, then calls `settle()`, once; what then wakes the
    waiting caller is the subclass's: an event (`Call`), a future or a callback (wire/pipelined.py)."""

    __slots__ = ("method", "deadline", "progress_token", "latest", "extended", "answered", "result", "error")

    def __init__(self, method: str, deadline: float) -> None:
        self.method = method
        self.deadline = deadline
        self.progress_token: Any = None
        # The latest deadline progress may push this request to (PROGRESS_LIMIT x its timeout after it
        # was sent), and whether progress pushed it at all.
        self.latest = math.inf
        self.extended = False
        self.answered = 0.0  # time.perf_counter() when the answer was read off the wire
        self.result: dict[str, Any] | None = None  # set, with error None, when the answer has come
        self.error: ProbeError | None = None

    def settled(self) -> bool:
        """Whether the answer (or the failure) is in."""
        raise NotImplementedError

    def settle(self) -> None:
        """The answer (or the failure) is in: wake whoever waits for it. Called once."""
        raise NotImplementedError

    def timed_out(self, timeout: float) -> RequestTimeout:
        """The error of this request, its deadline (`timeout` after it was sent, or as progress pushed it) passed."""
        if self.extended and self.deadline >= self.latest:
            limit = timeout * PROGRESS_LIMIT
            return RequestTimeout(
                f"{self.method}: no answer within {seconds(limit)} s ({PROGRESS_LIMIT} x --timeout), the longest "
                "that progress notifications may extend a request",
                detail={"method": self.method, "timeout": timeout, "progressLimit": limit})
        return RequestTimeout(f"{self.method}: no answer within {seconds(timeout)} s",
                              detail={"method": self.method, "timeout": timeout})

    def outcome(self) -> dict[str, Any]:
        """The answer's result object; its error raised (a ProbeError)."""
        if self.error is not None:
            raise self.error
        assert self.result is not None  # answered without an error: with its result
        return self.result


class _Awaited(Pending):
    """A request of `send_request`: its caller waits on an event."""

    __slots__ = ("event",)

    def __init__(self, method: str, deadline: float) -> None:
        super().__init__(method, deadline)
        self.event = anyio.Event()

    def settled(self) -> bool:
        return self.event.is_set()

    def settle(self) -> None:
        self.event.set()


def request_message(request_id: Any, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
    """A JSON-RPC request as every path of this package sends it (`params` left out when None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def cancel_notice(request_id: Any, reason: str) -> dict[str, Any]:
    """The `notifications/cancelled` that tells the server a request is no longer awaited."""
    return {"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": request_id, "reason": reason}}


class Call:
    """A request sent, its answer awaited with `result()` (see `Connection.send_request`)."""

    __slots__ = ("_conn", "_id", "_pending", "_timeout", "_cancellable", "_handed")

    def __init__(self, conn: Connection, request_id: Any, pending: _Awaited, timeout: float,
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
        pending = self._pending
        shift = time.monotonic() - self._handed
        pending.deadline += shift
        pending.latest += shift
        return await self._conn.awaited(self._id, pending, self._timeout, self._wait(), notify=self._cancellable)

    async def _wait(self) -> bool:
        """Whether the answer came before the deadline, which progress may push while it waits."""
        pending = self._pending
        while not pending.event.is_set():
            remaining = pending.deadline - time.monotonic()
            if remaining <= 0:
                return False
            with anyio.move_on_after(remaining):
                await pending.event.wait()
        return True

    def abandon(self) -> None:
        """Stop waiting without a word to the server (the caller is leaving on an error of its
        own); a late answer is then expected, not a violation."""
        self._conn.abandon(self._id)

    async def given_up(self, reason: str, *, shielded: bool = True) -> None:
        """Stop waiting, and tell the server (notifications/cancelled) unless the request never went out."""
        await self._conn.given_up(self._id, reason, notify=self._cancellable, shielded=shielded)


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
        self._pending: dict[Any, Pending] = {}
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
        message = request_message(request_id, method, params)
        pending = _Awaited(method, time.monotonic() + timeout)
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

    # ----- for a request path of its own (load's pipelined path, wire/pipelined.py) -----

    def expect(self, pending: Pending) -> int:
        """A new request id, under which `pending` now waits for its answer: the reader fills it in and
        settles it as any (also when the connection is lost). The caller sends the request itself;
        `forget` it when that fails."""
        request_id = next(self._ids)
        self._pending[request_id] = pending
        return request_id

    def forget(self, request_id: Any) -> None:
        """`request_id` waits no more: answered, or never sent."""
        self._pending.pop(request_id, None)

    def abandon(self, request_id: Any) -> Pending | None:
        """Stop waiting for `request_id` without a word to the server: a late answer is then expected,
        not a violation. The request's entry, if it was still waiting."""
        self._abandoned.add(request_id)
        return self._pending.pop(request_id, None)

    async def given_up(self, request_id: Any, reason: str, *, notify: bool = True, shielded: bool = True) -> None:
        """Stop waiting for `request_id` (`abandon`), and tell the server (notifications/cancelled, within
        CANCEL_NOTICE_SECONDS, shielded from the caller's cancellation unless `shielded` is False)
        unless `notify` is False (the request never went out) or the connection is closed."""
        self.abandon(request_id)
        if notify and self.closed_error is None:
            with anyio.CancelScope(shield=shielded):
                await self._cancel_quietly(request_id, reason)

    async def awaited(self, request_id: Any, pending: Pending, timeout: float, wait: Awaitable[bool], *,
                      notify: bool = True) -> dict[str, Any]:
        """The one end of a request whose caller waits for it, however it waits (`Call.result`;
        `Posted.result`, wire/pipelined.py): `wait` is True when the answer came before the deadline.
        Past the deadline the request is given up (`given_up`, "timed out") and RequestTimeout raised;
        cancelled (Ctrl-C), it is given up ("cancelled by the user") and the cancellation goes on;
        else the answer's result object, or its error raised."""
        try:
            if not await wait:
                await self.given_up(request_id, "timed out", notify=notify, shielded=False)
                raise pending.timed_out(timeout)
        except anyio.get_cancelled_exc_class():
            await self.given_up(request_id, "cancelled by the user", notify=notify)
            raise
        finally:
            self._pending.pop(request_id, None)
        return pending.outcome()

    async def _cancel_quietly(self, request_id: Any, reason: str) -> None:
        with contextlib.suppress(ProbeError):
            notice = cancel_notice(request_id, reason)
            await self.notify(notice["method"], notice["params"], timeout=CANCEL_NOTICE_SECONDS)

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
        for pending in list(self._pending.values()):  # a settled entry may leave the table (wire/pipelined.py)
            if not pending.settled():
                pending.error = error
                pending.settle()

    def _on_fault(self, exc: Exception) -> None:
        """A bug in one of the connection's tasks (it is raised when the connection closes): what
        waits for an answer, or sends from now on, fails at once instead of waiting out its timeout."""
        self._on_closed(InternalError(bug_message(exc)))

    def _on_request_failed(self, request_id: Any, error: ProbeError) -> None:
        pending = self._pending.get(request_id)
        if pending is not None and not pending.settled():
            pending.error = error
            pending.settle()

    def _deadline_of(self, request_id: Any) -> float | None:
        pending = self._pending.get(request_id) if _hashable(request_id) else None
        return pending.deadline if pending is not None and not pending.settled() else None

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
        if pending is None or pending.settled():
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
        pending.settle()

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


__all__ = ["Connection", "Call", "Pending", "Anomaly", "ConnectionFailed"]
