"""Streamable HTTP (MCP 2025-03-26 and later): each message a POST, answered with JSON or an event
stream; the session id the server assigns; the standalone GET stream; broken streams resumed.

One room: the transport and the reader of load's lean POSTs (`_LeanAnswer`, beside wire/lean_http.py),
because what an answer means is decided once, here (`_answer_kind`, `_take_json`, `_unanswered`), for
the answers httpx reads and for those the lean path reads; apart, the reader would reach into the
transport's private state (its session, limits, sink and task group) or repeat its rules.
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

import anyio
import httpx2 as httpx

from mcpprobe.errors import ConnectionFailed, ProbeError, ProtocolFailure, seconds
from mcpprobe.safety.redact import clip
from mcpprobe.wire.decode import decode_message
from mcpprobe.wire.http import DRAIN_SECONDS, SNIPPET, HttpBase
from mcpprobe.wire.lean_http import Exchange, LeanPool
from mcpprobe.wire.protocols import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from mcpprobe.wire.sse import EventParser
from mcpprobe.wire.target import HttpTarget
from mcpprobe.wire.transport import HttpHooks, Sink, TransportInfo

ACCEPT_BOTH = "application/json, text/event-stream"
# Resuming a broken event stream (GET with Last-Event-ID): the wait when the server named none
# with `retry:`, and how many resumptions in a row may bring nothing new before giving up.
DEFAULT_RETRY_MS = 1000
MAX_FRUITLESS_RESUMPTIONS = 2
QUEUED_NOTICE_SECONDS = 1.0  # how long a notification sent by queue_nowait may take to go out


class StreamableHttpTransport(HttpBase):
    def __init__(self, target: HttpTarget, *, max_message_bytes: int, connect_timeout: float,
                 http_hooks: HttpHooks | None = None) -> None:
        super().__init__(target, max_message_bytes=max_message_bytes, connect_timeout=connect_timeout,
                         http_hooks=http_hooks)
        self.info = TransportInfo("http", {"url": target.url})
        self._session_id: str | None = None
        # A session the handshake opened while server/discover was still out, when discover won:
        # never sent with a 2026-07-28 request, ended with DELETE at close.
        self._abandoned_session: str | None = None
        self._stateless = False  # the 2026-07-28 era: no sessions
        # The standalone GET stream, kept across its re-openings: a reopened stream resumes with
        # Last-Event-ID after the server's retry: time, as for a request's stream.
        self._standalone: EventParser | None = None
        self._standalone_ended = 0.0
        self._lean: LeanPool | None | bool = None  # load's POST path (queue_body): None untried, False unusable
        self._lean_heads: dict[Any, tuple[Any, list[tuple[bytes, bytes]]]] = {}

    async def start(self, task_group: Any, sink: Sink) -> None:
        self._sink, self._task_group = sink, task_group
        self._client = self._make_client()

    def set_protocol_version(self, version: str) -> None:
        super().set_protocol_version(version)
        if version in MODERN_VERSIONS and not self._stateless:
            # 2026-07-28 has no sessions: a session the parallel initialize opened is not this one.
            self._stateless = True
            self._abandoned_session, self._session_id = self._session_id, None
            self.info.detail.pop("sessionId", None)

    @property
    def session_id(self) -> str | None:
        """The session the server issued at initialize, if any (never one of 2026-07-28)."""
        return self._session_id

    def request_headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The headers a POST of this connection carries (session, version, then `extra`): for
        `mcpprobe check`, which sends requests of its own beside the connection's."""
        return self._headers(extra)

    def raw_client(self) -> httpx.AsyncClient:
        """A new client with the target's headers, auth, TLS and redirect rules, for requests that
        are not the connection's (the caller closes it)."""
        return self._make_client()

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
        if self._session_id:
            headers["Mcp-Session-Id"] = self._session_id
        if self._protocol_version:
            headers["MCP-Protocol-Version"] = self._protocol_version
        if extra:
            headers.update(extra)
        return headers

    def _get_headers(self, last_event_id: str | None = None) -> dict[str, str]:
        headers = {"Accept": "text/event-stream"}
        if self._session_id:
            headers["Mcp-Session-Id"] = self._session_id
        if self._protocol_version:
            headers["MCP-Protocol-Version"] = self._protocol_version
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        is_request = "method" in message and "id" in message
        if is_request:
            # Requests run concurrently; each POST delivers its own answer (JSON or an SSE stream).
            self._task_group.start_soon(self._post_request, message, self._headers(headers))
        else:
            await self._post_other(message, self._headers(headers))

    def queue_nowait(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> bool:
        """Start sending `message` now, without waiting (the hot path of `mcpprobe load`): a request's
        POST runs as `send` runs it, and its answer or failure reaches the connection as ever; a
        notification (a load's cancel notice) is posted aside, its failure ignored, within
        QUEUED_NOTICE_SECONDS. False before the transport has started."""
        if self._client is None or self._task_group is None:
            return False
        if "method" in message and "id" in message:
            self._task_group.start_soon(self._post_request, message, self._headers(headers))
        else:
            self._task_group.start_soon(self._post_quietly, message, self._headers(headers))
        return True

    def queue_body(self, request_id: int, method: str, body: bytes, headers: dict[str, str] | None = None) -> bool:
        """Send the request `body` (its JSON, encoded by the connection) on the lean path of `mcpprobe
        load` (wire/lean_http.py): a kept HTTP/1.1 connection, with the headers httpx would send but
        Accept-Encoding (answers come uncompressed). What the answer means is decided as for httpx's
        (`_answer_kind`): a JSON answer goes to the connection at once, as `_deliver` takes it
        (`_take_json`); an event stream is read as `_pump` reads it; any other answer is handed to
        `_deliver` as httpx would have read it, so it fails as ever (HTTP status, session expired).
        False when the lean path cannot be used here (https, a proxy, an auth flow, event
        hooks, not started): the caller sends it with `queue_nowait`."""
        pool = self._lean
        if pool is None:
            pool = self._lean = self._lean_pool() or False
        if pool is False:
            return False
        assert isinstance(pool, LeanPool)
        key = (self._session_id, self._protocol_version, id(headers), self.cookies.version)
        cached = self._lean_heads.get(key)
        if cached is None or cached[0] is not headers:
            if len(self._lean_heads) >= 64:
                self._lean_heads.clear()
            cached = self._lean_heads[key] = (headers, self._lean_headers(headers))
        version = self._protocol_version
        return pool.post(cached[1], body, _LeanAnswer(self, request_id, method,
                                                      version is None or version in HANDSHAKE_VERSIONS))

    def _lean_pool(self) -> LeanPool | None:
        from mcpprobe.wire.lean_http import usable

        if (self._client is None or self._task_group is None or self.target.auth is not None
                or any(self._hooks.values()) or not usable(self.target.url)
                or any(name.lower() == "accept-encoding" for name, _ in self.target.headers)):
            return None  # (a compressed answer is httpx's to decode)
        return LeanPool(self.target.url, self._connect_timeout)

    def _lean_headers(self, extra: dict[str, str] | None) -> list[tuple[bytes, bytes]]:
        """The client's headers (the target's, httpx's defaults) overridden by this POST's, as httpx
        merges them, but Accept-Encoding (httpx's default: answers come uncompressed)."""
        assert self._client is not None
        merged = self._client.headers.copy()
        merged.update(self._headers(extra))
        fields = [(name, value) for name, value in merged.raw  # as spelled: a server may match them exactly
                  if name.lower() not in (b"host", b"content-length", b"accept-encoding")]
        cookie = self.cookies.header_for(self.target.url)  # the same jar as httpx's: a sticky session holds
        if cookie is not None and not any(name.lower() == b"cookie" for name, _ in fields):
            fields.append((b"Cookie", cookie.encode("latin-1", "replace")))
        return fields

    async def _deliver_read(self, response: httpx.Response, request_id: Any, method: str, resumable: bool) -> None:
        """An answer the lean path read whole (or its start), handled as `_post_request` handles it."""
        assert self._sink is not None
        try:
            await self._deliver(response, request_id, method, resumable=resumable)
        except ProbeError as exc:
            self._sink.request_failed(request_id, exc)
        except httpx.HTTPError as exc:
            self._sink.request_failed(request_id, self._transport_error(exc, self.target.url))

    async def _unanswered_read(self, request_id: Any, method: str, parser: EventParser, resumable: bool) -> None:
        """An event stream the lean path read to its end without the answer, handled as `_deliver` handles it."""
        assert self._sink is not None
        try:
            await self._unanswered(request_id, method, parser, resumable)
        except ProbeError as exc:
            self._sink.request_failed(request_id, exc)

    async def _post_quietly(self, message: dict[str, Any], headers: dict[str, str]) -> None:
        with anyio.move_on_after(QUEUED_NOTICE_SECONDS), contextlib.suppress(ProbeError):
            await self._post_other(message, headers)

    async def _post_other(self, message: dict[str, Any], headers: dict[str, str]) -> None:
        assert self._client is not None
        import json

        # Streamed: the body of an answer to a notification is never needed whole (an endless one is
        # not buffered); an error's start is read for its description (_http_problem).
        try:
            async with self._client.stream("POST", self.target.url, content=json.dumps(message),
                                           headers=headers) as response:
                if response.status_code >= 400 and response.status_code not in (404, 405):
                    raise await self._http_problem(response, message.get("method", "response"))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, self.target.url) from None

    async def _post_request(self, message: dict[str, Any], headers: dict[str, str]) -> None:
        assert self._client is not None and self._sink is not None
        import json

        request_id, method = message["id"], message["method"]
        try:
            async with self._client.stream(
                "POST", self.target.url, content=json.dumps(message), headers=headers
            ) as response:
                if method == "initialize" and (session := response.headers.get("mcp-session-id")) is not None:
                    if self._stateless:  # a late answer to the handshake, after discover won
                        self._abandoned_session = _checked_session_id(session)
                    else:
                        self._session_id = _checked_session_id(session)
                        self.info.detail["sessionId"] = True
                # Resumption with Last-Event-ID is of the handshake era: 2026-07-28 dropped it.
                version = headers.get("MCP-Protocol-Version")
                await self._deliver(response, request_id, method,
                                    resumable=version is None or version in HANDSHAKE_VERSIONS)
        except ProbeError as exc:
            self._sink.request_failed(request_id, exc)
        except httpx.HTTPError as exc:
            self._sink.request_failed(request_id, self._transport_error(exc, self.target.url))

    def _answer_kind(self, status: int, content_type: str, method: str) -> str:
        """What the answer to a request's POST is, from its status and content type (lowercased, without
        parameters): "problem" (an HTTP error, described by `_http_problem`), "expired" (the session is
        gone), "json" (a JSON body, `_take_json`), "stream" (an event stream), "accepted" (202 and no
        answer). The one rule both readers of answers follow: `_deliver` (httpx's) and `_LeanAnswer`
        (load's lean path, which reads "json" and "stream" itself and hands every other answer here)."""
        if status in (401, 403, 421, 429):
            return "problem"
        if status == 404 and self._session_id and method != "initialize":
            return "expired"
        if content_type == "application/json":
            return "json"
        if content_type == "text/event-stream" and status < 300:
            return "stream"
        return "accepted" if status == 202 else "problem"

    async def _deliver(self, response: httpx.Response, request_id: Any, method: str, *,
                       resumable: bool = True) -> None:
        assert self._sink is not None
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        status = response.status_code
        kind = self._answer_kind(status, content_type, method)
        if kind == "expired":
            raise ConnectionFailed(f"{method}: HTTP 404: the server no longer knows this session (it expired)",
                                   detail={"status": 404, "sessionExpired": True})  # the server's answer
        if kind == "json":
            body = await _read_limited(response, self._max, lambda: self._given_up(request_id))
            if not self._take_json(status, body, request_id, method):
                raise await self._http_problem(response, method)
            return
        if kind == "stream":
            parser = EventParser(self._max)
            if not await self._pump(response, method, parser=parser, answer_to=request_id):
                await self._unanswered(request_id, method, parser, resumable)
            return
        if kind == "accepted":
            raise ProtocolFailure(f"{method}: HTTP 202 Accepted for a request: the server sent no answer")
        raise await self._http_problem(response, method)

    def _take_json(self, status: int, body: bytes, request_id: Any, method: str) -> bool:
        """A JSON answer's whole body to the connection, as both readers take it; False for an error
        status whose body does not parse (the caller describes it with `_http_problem`). ProtocolFailure
        for a body that does not parse, or an error status with a JSON body that is no JSON-RPC answer."""
        assert self._sink is not None
        try:
            decoded = decode_message(body)
        except ValueError:
            if status >= 400:
                return False
            self._sink.bad_output("an HTTP body that is not JSON", clip(body[:4096].decode("utf-8", "replace"), 200))
            raise ProtocolFailure(f"{method}: the server's JSON body does not parse") from None
        data = decoded.value
        if isinstance(data, dict) and _is_error_object(data.get("error")) and (data.get("id") is None or status >= 400):
            # An error in the HTTP answer to this very POST is about this request, whatever
            # id it names: null (not parsed yet), or a placeholder such as "server-error"
            # from servers that refuse a request before any session exists. So it answers
            # the request now, as in the SDK, instead of leaving it to time out. (A JSON body
            # whose "error" is no JSON-RPC error object is reported below with its status.)
            data = {**data, "id": request_id}
        if status >= 400 and not _is_jsonrpc_answer(data):
            raise ProtocolFailure(
                f"{method}: HTTP {status} with a JSON body that is not a JSON-RPC answer",
                detail={"status": status, "bodyStart": clip(body[:SNIPPET + 4096].decode("utf-8", "replace"), SNIPPET)},
            )
        self._sink.message(data, decoded.flags)
        return True

    async def _unanswered(self, request_id: Any, method: str, parser: EventParser, resumable: bool) -> None:
        """A request's event stream ended before its answer: resumed in the handshake era (`_resume`);
        else, and when resuming fails, ConnectionFailed."""
        if not resumable:
            raise ConnectionFailed(f"{method}: the server's event stream ended without an answer")
        await self._resume(request_id, method, parser)

    async def _resume(self, request_id: Any, method: str, parser: EventParser) -> None:
        """The request's event stream ended before its answer: resume it as the spec says (GET
        with Last-Event-ID, after the server's `retry` time), until the answer arrives, the server
        cannot resume it, MAX_FRUITLESS_RESUMPTIONS in a row bring nothing, or the connection
        stops waiting for the answer. Raises ConnectionFailed when it gives up."""
        assert self._client is not None and self._sink is not None
        if parser.last_event_id is None:
            raise ConnectionFailed(f"{method}: the server's event stream ended without an answer (and without an "
                                   "event id, so it cannot be resumed)")
        fruitless, why = 0, ""
        while fruitless < MAX_FRUITLESS_RESUMPTIONS:
            last = parser.last_event_id
            delay = (parser.retry_ms if parser.retry_ms is not None else DEFAULT_RETRY_MS) / 1000
            deadline = self._sink.deadline(request_id) if self._sink.deadline is not None else math.inf
            if deadline is None:
                return  # nobody waits for this answer any more
            if time.monotonic() + delay > deadline:
                raise ConnectionFailed(
                    f"{method}: the server's event stream ended before the answer, and the server asks to wait "
                    f"{seconds(delay)} s (retry: {parser.retry_ms}) before resuming it: past the request's deadline",
                    code="resume-failed", detail={"lastEventId": last, "retryMs": parser.retry_ms})
            await anyio.sleep(delay)
            parser.reconnected()
            try:
                async with self._client.stream("GET", self.target.url, headers=self._get_headers(last)) as response:
                    status = response.status_code
                    content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                    if status in (401, 403, 421, 429) or (status == 404 and self._session_id):
                        raise await self._http_problem(response, f"{method} (resuming with GET)")
                    if status != 200 or content_type != "text/event-stream":
                        problem = await self._http_problem(response, f"GET {self.target.url}")
                        if status == 405:
                            why = "the server does not offer resumption (HTTP 405 to the GET)"
                            break
                        fruitless, why = fruitless + 1, problem.message
                        continue
                    if await self._pump(response, method, parser=parser, answer_to=request_id):
                        return
            except httpx.HTTPError as exc:
                fruitless, why = fruitless + 1, self._transport_error(exc, self.target.url).message
                continue
            if parser.last_event_id != last:
                fruitless, why = 0, ""
            else:
                fruitless, why = fruitless + 1, "the resumed stream ended with nothing new"
        raise ConnectionFailed(
            f"{method}: the server's event stream ended before the answer, and resuming it with Last-Event-ID "
            f"{parser.last_event_id!r} failed: {why}",
            code="resume-failed", detail={"lastEventId": parser.last_event_id})

    async def open_server_stream(self, *, on_open: Any = None, on_streaming: Any = None) -> str:
        """The standalone GET event stream (2025-03-26 to 2025-11-25): server-to-client messages
        that belong to no request (list_changed, resources/updated, log messages, server requests).

        Call after the handshake: it carries the session id and the negotiated MCP-Protocol-Version.
        Each message goes to the connection like any other. `on_open(status)` is called once the
        response headers are in, `on_streaming()` once they show an event stream. Runs until the
        stream ends and returns "unsupported" when the server offers none (HTTP 405, which the spec
        allows) or "ended" when the server closed it (it may; open it again if wanted). Raises a
        ProbeError otherwise: ConnectionFailed for a network error or an expired session (404),
        AuthFailed for 401 (and 403 with a Bearer challenge), HttpForbidden for 403/421 without one,
        ProtocolFailure for a non-SSE answer.

        Opened again, the stream is resumed as the spec asks: not before the server's `retry:`
        time has passed since it ended, and with `Last-Event-ID` when the server gave event ids,
        so that a server with an event store replays what was sent in between.
        """
        assert self._client is not None and self._sink is not None
        url = self.target.url
        parser = self._standalone
        if parser is None:
            parser = self._standalone = EventParser(self._max)
        else:
            parser.reconnected()
            if parser.retry_ms is not None:
                await anyio.sleep(max(0.0, self._standalone_ended + parser.retry_ms / 1000 - time.monotonic()))
        try:
            async with self._client.stream("GET", url, headers=self._get_headers(parser.last_event_id)) as response:
                status = response.status_code
                if on_open is not None:
                    on_open(status)
                if status == 405:
                    return "unsupported"
                if status == 404 and self._session_id:
                    raise ConnectionFailed(f"GET {url}: HTTP 404: the server no longer knows this session",
                                           detail={"status": 404, "sessionExpired": True})
                content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if status != 200 or content_type != "text/event-stream":
                    raise await self._http_problem(response, f"GET {url}")
                if on_streaming is not None:
                    on_streaming()
                await self._pump(response, f"GET {url}", parser=parser)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, url) from None
        finally:
            self._standalone_ended = time.monotonic()
        return "ended"

    async def listen(self, wait: float) -> None:
        """Open the standalone GET stream in the background for the rest of the connection, so
        that server requests sent there (ping, roots/list, elicitation) are seen and answered.
        Waits at most `wait` seconds for the server to answer the GET, so that nothing it sends
        there before the next request is lost. A stream the server closes is opened again
        (resumed, see open_server_stream) until two openings in a row bring no new event id.
        The stream is optional: a server that offers none (405) or refuses it is left alone; a
        stream that breaks the protocol once open (an event over --max-message-size) ends the
        connection with that error."""
        assert self._task_group is not None and self._sink is not None
        opened = anyio.Event()
        streaming = False

        def on_streaming() -> None:
            nonlocal streaming
            streaming = True

        async def run() -> None:
            nonlocal streaming
            fruitless = 0
            while fruitless < MAX_FRUITLESS_RESUMPTIONS:
                streaming = False
                before = self._standalone.last_event_id if self._standalone is not None else None
                try:
                    how = await self.open_server_stream(on_open=lambda status: opened.set(),
                                                        on_streaming=on_streaming)
                except ProtocolFailure as exc:
                    if streaming and self._sink is not None:
                        self._sink.closed(exc)
                    return
                except ProbeError:
                    return  # the answers to requests say what went wrong with the server, if anything
                finally:
                    opened.set()
                if how == "unsupported" or self._standalone is None:
                    return
                fruitless = 0 if self._standalone.last_event_id != before else fruitless + 1
                if self._standalone.retry_ms is None:
                    await anyio.sleep(DEFAULT_RETRY_MS / 1000)

        self._task_group.start_soon(run)
        with anyio.move_on_after(wait):
            await opened.wait()

    async def aclose(self) -> None:
        if self._client is None:
            return
        with anyio.CancelScope(shield=True):
            if self._session_id:
                with anyio.move_on_after(2):
                    with contextlib.suppress(httpx.HTTPError):
                        await self._client.delete(self.target.url, headers=self._headers(None))
            if self._abandoned_session:
                with anyio.move_on_after(2):
                    with contextlib.suppress(httpx.HTTPError):
                        await self._client.delete(self.target.url, headers={"Mcp-Session-Id": self._abandoned_session})
            if isinstance(self._lean, LeanPool):
                self._lean.close()
            await self._client.aclose()


def _is_jsonrpc_answer(data: Any) -> bool:
    return isinstance(data, dict) and ("result" in data or _is_error_object(data.get("error"))) and "id" in data


def _is_error_object(error: Any) -> bool:
    code = error.get("code") if isinstance(error, dict) else None
    return isinstance(code, int) and not isinstance(code, bool)


def _checked_session_id(value: str) -> str:
    """The spec allows only visible ASCII (0x21 to 0x7E) in a session id; anything else could
    not be sent back in a header as it was received."""
    if value and all("\x21" <= c <= "\x7e" for c in value):
        return value
    raise ProtocolFailure(
        f"initialize: the server's Mcp-Session-Id {value!r} is not visible ASCII (0x21 to 0x7E), as the spec "
        "requires; it cannot be sent back, so the session cannot go on",
        detail={"sessionId": value.encode("unicode_escape").decode("ascii")[:200]})


async def _read_limited(response: httpx.Response, limit: int, given_up: Any = None) -> bytes:
    """The JSON body of an answer, refused past `limit` (--max-message-size); not read on once
    `given_up()` says nobody waits for it (a body that trickles past its request's deadline)."""
    declared = _declared_past(response.headers.get("content-length", ""), limit)
    if declared is not None:
        raise declared
    data = bytearray()
    async for chunk in response.aiter_bytes():
        if given_up is not None and given_up():
            raise ConnectionFailed("an HTTP body still arriving when its request had given up; not read further")
        data += chunk
        if len(data) > limit:
            raise _grown_past(limit)
    return bytes(data)


def _declared_past(length: str, limit: int) -> ProtocolFailure | None:
    """The error of a body whose Content-Length is past `limit` (--max-message-size), not read; None if it is not."""
    if length.isascii() and length.isdigit() and int(length) > limit:
        return ProtocolFailure(f"an HTTP body of {length} bytes, larger than the limit of {limit} bytes "
                               "(--max-message-size); not read")
    return None


def _grown_past(limit: int) -> ProtocolFailure:
    """The error of a body that grew past `limit` (--max-message-size) as it was read."""
    return ProtocolFailure(f"an HTTP body larger than the limit of {limit} bytes (--max-message-size)")


OTHER_PREFIX = SNIPPET + 8192  # what is kept of a non-JSON answer's body that is not an MCP answer


class _LeanAnswer(Exchange):
    """One lean POST's answer (StreamableHttpTransport.queue_body). It only reads: what the answer
    means is decided where httpx's answers are decided (`_answer_kind`), a JSON body is taken as
    `_deliver` takes it (`_take_json`), an event stream is fed as `_pump` feeds it (`_feed`) and, ended
    without the answer, handled as there (`_unanswered`); every other answer is handed to `_deliver`
    itself, as httpx would have read it."""

    __slots__ = ("http", "request_id", "method", "resumable", "status", "headers", "mode", "data", "parser",
                 "answered", "timer", "over", "cap")

    def __init__(self, http: StreamableHttpTransport, request_id: int, method: str, resumable: bool) -> None:
        super().__init__()
        self.http, self.request_id, self.method, self.resumable = http, request_id, method, resumable
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self.mode = ""  # "json" or "stream" (read here), or "other" (handed to `_deliver`)
        self.data = bytearray()
        self.parser: EventParser | None = None
        self.answered = False
        self.timer: Any = None
        self.over = False  # failed: nothing more is reported
        self.cap = OTHER_PREFIX  # bytes kept of an answer handed over

    def head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bool:
        self.status, self.headers = status, headers
        content_type = encoding = length = b""
        set_cookies = []
        for name, value in headers:  # names lowercased by the reader
            if name == b"set-cookie":
                set_cookies.append(value.decode("latin-1"))
            elif name == b"content-type":
                content_type = value.split(b";")[0].strip().lower()
            elif name == b"content-encoding":
                encoding = value.strip().lower()
            elif name == b"content-length":
                length = value.strip()
        http = self.http
        if set_cookies:  # kept as httpx's client keeps them (wire/cookies.py)
            http.cookies.take(http.target.url, set_cookies)
        plain = encoding in (b"", b"identity")  # else httpx decodes it
        kind = http._answer_kind(status, content_type.decode("latin-1"), self.method) if plain else "other"
        if kind == "json":
            declared = _declared_past(length.decode("latin-1"), http._max)
            if declared is not None:
                self.failed(declared)
                return False
            self.mode = "json"
        elif kind == "stream":
            self.mode = "stream"
            self.parser = EventParser(http._max)
        else:
            # Kept whole when it may be an answer (JSON, or compressed, for httpx to decode); else only
            # its start, which says what it is.
            self.mode = "other"
            self.cap = http._max if content_type == b"application/json" or not plain else OTHER_PREFIX
        return True

    def body(self, chunk: bytes) -> bool:
        mode = self.mode
        if self.over:
            return False
        if mode == "json":
            self.data += chunk
            if len(self.data) > self.http._max:
                self.failed(_grown_past(self.http._max))
                return False
            return True
        if mode == "stream":
            assert self.parser is not None
            try:
                answered = self.http._feed(self.parser, chunk, self.method, None, self.request_id)
            except ProbeError as exc:
                self.failed(exc)
                return False
            if answered and not self.answered:
                # As `_pump`: the stream is read on for its end a moment, then given up.
                self.answered = True
                import asyncio

                self.timer = asyncio.get_running_loop().call_later(DRAIN_SECONDS, self.stop_reading)
            return True
        self.data += chunk
        if len(self.data) > self.cap:
            self._hand_over()  # past the limit (refused there as ever), or its start is enough
            return False
        return True

    def end(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.over:
            return
        http = self.http
        if self.mode == "json":
            try:
                if http._take_json(self.status, bytes(self.data), self.request_id, self.method):
                    return
            except ProbeError as exc:
                self.failed(exc)
                return
            # an error status whose body does not parse: `_deliver` describes it
        elif self.mode == "stream":
            if not self.answered:
                assert self.parser is not None and http._task_group is not None
                http._task_group.start_soon(http._unanswered_read, self.request_id, self.method, self.parser,
                                            self.resumable)
            return
        self._hand_over()

    def _hand_over(self) -> None:
        """Any answer but those read here: to `_deliver`, as httpx would have read it."""
        assert self.http._task_group is not None
        http = self.http
        response = httpx.Response(self.status, headers=self.headers, content=bytes(self.data),
                                  request=httpx.Request("POST", http.target.url))
        http._task_group.start_soon(http._deliver_read, response, self.request_id, self.method, self.resumable)

    def failed(self, error: ProbeError) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.answered or self.over:
            return
        self.over = True
        assert self.http._sink is not None
        self.http._sink.request_failed(self.request_id, error)

    def given_up(self) -> bool:
        return not self.answered and self.http._given_up(self.request_id)
