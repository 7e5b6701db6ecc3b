"""Streamable HTTP (MCP 2025-03-26 and later) and the legacy HTTP+SSE transport (2024-11-05).

Every answer that is not MCP is reported as what it is, with the status and the first bytes: an
HTML login page, a proxy's 502, a redirect. Credentials are never sent to another origin: redirects
are not followed, and a legacy SSE endpoint on another origin is refused.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import httpx2 as httpx

from mcpprobe.errors import (
    AuthFailed,
    ConnectionFailed,
    HttpForbidden,
    ProbeError,
    ProtocolFailure,
    RateLimited,
    RequestTimeout,
    ServerUnavailable,
    seconds,
)
from mcpprobe.safety.redact import clip
from mcpprobe.wire.decode import TooDeep, decode_message, refuse_too_deep
from mcpprobe.wire.protocols import HANDSHAKE_VERSIONS, MODERN_VERSIONS
from mcpprobe.wire.sse import EventParser
from mcpprobe.wire.stderrlog import StderrEntry
from mcpprobe.wire.target import HttpTarget
from mcpprobe.wire.transport import HttpHooks, Sink, TransportInfo

ACCEPT_BOTH = "application/json, text/event-stream"
SNIPPET = 300
DRAIN_SECONDS = 0.05  # after an answer, how long its event stream is read on for its end (_pump)
# Resuming a broken event stream (GET with Last-Event-ID): the wait when the server named none
# with `retry:`, and how many resumptions in a row may bring nothing new before giving up.
DEFAULT_RETRY_MS = 1000
MAX_FRUITLESS_RESUMPTIONS = 2
_NO_ID = object()


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


class _HttpBase:
    def __init__(self, target: HttpTarget, *, max_message_bytes: int, connect_timeout: float,
                 http_hooks: HttpHooks | None = None) -> None:
        self.target = target
        self._max = max_message_bytes
        self._connect_timeout = connect_timeout
        self._hooks = http_hooks or {}
        self._client: httpx.AsyncClient | None = None
        self._sink: Sink | None = None
        self._task_group: Any = None
        self._protocol_version: str | None = None

    def _make_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            headers=dict(self.target.headers),
            timeout=httpx.Timeout(connect=self._connect_timeout, read=None, write=30.0, pool=self._connect_timeout),
            verify=self._verify(),
            follow_redirects=False,
            trust_env=True,
            event_hooks=self._hooks,
            auth=self.target.auth,  # renews a stored token that expires mid-run (docs/auth.md)
        )

    def _verify(self) -> bool:
        """Verify certificates, unless --insecure, or unless no TLS can happen at all: a plain
        http:// URL (redirects are never followed) with no proxy in the environment. Building the
        default TLS context costs 20-60 ms, a sixth of a whole HTTP probe, for nothing there."""
        if self.target.insecure:
            return False
        plain = urlsplit(self.target.url).scheme == "http"
        proxied = any(os.environ.get(name) for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"))
        return not plain or proxied

    def set_protocol_version(self, version: str) -> None:
        self._protocol_version = version

    def stderr_tail(self, lines: int = 20) -> list[StderrEntry]:
        return []

    def stderr_said(self) -> list[str]:
        return []

    async def begin_close(self) -> None:
        """Nothing to signal ahead of aclose over HTTP."""

    async def _pump(self, response: httpx.Response, what: str,
                    on_other: Callable[[str, str], None] | None = None, *,
                    parser: EventParser | None = None, answer_to: Any = _NO_ID) -> bool:
        """Deliver an event stream's `message` events to the connection until it ends; other
        named events (the legacy `endpoint`) go to `on_other`. Returns True once the answer to the
        request `answer_to` has been delivered, having read on for DRAIN_SECONDS at most."""
        assert self._sink is not None
        parser = parser or EventParser(self._max)
        chunks = response.aiter_bytes()
        async for chunk in chunks:
            if self._feed(parser, chunk, what, on_other, answer_to):
                # A stream read to its end leaves its connection for the next request; one given up
                # mid-way is closed, and the next request pays a new TCP connection. Most servers
                # end the stream right after the answer: a moment to see that end (what else comes
                # meanwhile is delivered as ever).
                with anyio.move_on_after(DRAIN_SECONDS):
                    async for more in chunks:
                        self._feed(parser, more, what, on_other, answer_to)
                return True
        return False

    def _feed(self, parser: EventParser, chunk: bytes, what: str, on_other: Callable[[str, str], None] | None,
              answer_to: Any) -> bool:
        """One chunk of an event stream delivered; True when it held the answer to `answer_to`."""
        assert self._sink is not None
        try:
            events = parser.feed(chunk)
        except ValueError as exc:
            raise ProtocolFailure(f"{what}: an SSE {exc} (--max-message-size)",
                                  detail={"limit": self._max}) from None
        answered = False
        for event in events:
            if event.event != "message":
                if on_other is not None:
                    on_other(event.event, event.data)
            elif event.data.strip():
                try:
                    message, non_finite = decode_message(event.data)
                except TooDeep as exc:
                    self._sink.bad_output(f"an SSE event that is not JSON-RPC: {exc}", clip(event.data, 200))
                    refuse_too_deep(self._sink, event.data, exc)
                    continue
                except ValueError:
                    self._sink.bad_output("an SSE event that is not JSON-RPC", clip(event.data, 200))
                    continue
                self._sink.message(message, non_finite)
                answered = answered or _answers(message, answer_to)
        return answered

    def _transport_error(self, exc: Exception, url: str) -> ProbeError:
        if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
            return RequestTimeout(f"connecting to {url} timed out", detail={"url": url})
        if isinstance(exc, httpx.TimeoutException):
            return RequestTimeout(f"{url}: timed out", detail={"url": url})
        if isinstance(exc, httpx.ConnectError):
            return ConnectionFailed(f"cannot connect to {url}: {_reason(exc)}", detail={"url": url})
        return ConnectionFailed(f"connection to {url} broke: {_reason(exc)}", detail={"url": url})

    def _forbidden(self, status: int, what: str, body: str, detail: dict[str, Any]) -> HttpForbidden:
        """A 403 or 421 that asks for no credentials (wire/forbidden.py): the server's reason, and a
        hint when it is a Host or Origin check."""
        from mcpprobe.wire.forbidden import host_hint, reason_of

        reason = reason_of(body, detail["contentType"])
        detail["reason"] = reason
        origin_sent = any(name.lower() == "origin" for name, _ in self.target.headers)
        hint = host_hint(status, reason, self.target.url, origin_sent)
        if hint:
            detail["hint"] = hint
        label = "403 Forbidden" if status == 403 else "421 Misdirected Request"
        said = f": {reason!r}" if reason else " (no reason given)"
        return HttpForbidden(f"{what}: HTTP {label} without an authentication challenge: the server refuses this "
                             f"request{said}", detail=detail)

    async def _http_problem(self, response: httpx.Response, what: str) -> ProbeError:
        """A non-MCP answer, described by its status, type and first bytes."""
        status = response.status_code
        content_type = response.headers.get("content-type", "")
        body = await _read_prefix(response, SNIPPET)
        detail: dict[str, Any] = {"status": status, "contentType": content_type, "bodyStart": body}
        if status in (403, 421) and not _asks_bearer(response.headers.get("www-authenticate", "")):
            return self._forbidden(status, what, body, detail)
        if status in (401, 403):
            detail["wwwAuthenticate"] = response.headers.get("www-authenticate", "")
            label = "401 Unauthorized" if status == 401 else "403 Forbidden"
            challenge = detail["wwwAuthenticate"]
            hint = f"; the server asks: WWW-Authenticate: {challenge}" if challenge else ""
            if _asks_basic(challenge):
                # Often a proxy in front of the MCP server: OAuth discovery cannot help, a header can.
                hint += ("; that is HTTP Basic authentication (often a proxy in front of the server): send an "
                         "Authorization header, -H 'Authorization: Basic BASE64(user:password)'")
            return AuthFailed(f"{what}: HTTP {label}{hint}", detail=detail)
        if status == 429:
            return RateLimited(f"{what}: HTTP 429 Too Many Requests: the server is rate-limiting this client"
                               f"{_retry_after(response, detail)}", detail=detail)
        if status == 503:
            return ServerUnavailable(f"{what}: HTTP 503 Service Unavailable: the server, or a proxy in front of it, "
                                     f"cannot serve now{_retry_after(response, detail)}", detail=detail)
        if 300 <= status < 400:
            location = response.headers.get("location", "")
            detail["location"] = location
            return ProtocolFailure(
                f"{what}: HTTP {status} redirect to {location or '(no Location)'}; mcpprobe does not follow "
                "redirects (credentials must not leak to another origin): use the final URL",
                detail=detail,
            )
        kind = f"HTTP {status} {response.reason_phrase}".strip()
        shown = f" {content_type}" if content_type else ""
        first = f": {body!r}" if body else ""
        return ProtocolFailure(f"{what}: not an MCP answer: {kind}{shown}{first}", detail=detail)


class StreamableHttpTransport(_HttpBase):
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

    async def _post_other(self, message: dict[str, Any], headers: dict[str, str]) -> None:
        assert self._client is not None
        import json

        try:
            response = await self._client.post(self.target.url, content=json.dumps(message), headers=headers)
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, self.target.url) from None
        if response.status_code >= 400 and response.status_code not in (404, 405):
            raise await self._http_problem(response, message.get("method", "response"))

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

    async def _deliver(self, response: httpx.Response, request_id: Any, method: str, *,
                       resumable: bool = True) -> None:
        assert self._sink is not None
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        status = response.status_code
        if status in (401, 403, 421, 429):
            raise await self._http_problem(response, method)
        if status == 404 and self._session_id and method != "initialize":
            raise ConnectionFailed(f"{method}: HTTP 404: the server no longer knows this session (it expired)")
        if content_type == "application/json":
            body = await _read_limited(response, self._max)
            try:
                data, non_finite = decode_message(body)
            except ValueError:
                if status >= 400:
                    raise await self._http_problem(response, method) from None
                self._sink.bad_output("an HTTP body that is not JSON",
                                      clip(body[:4096].decode("utf-8", "replace"), 200))
                raise ProtocolFailure(f"{method}: the server's JSON body does not parse") from None
            if isinstance(data, dict) and _is_error_object(data.get("error")) and (
                    data.get("id") is None or status >= 400):
                # An error in the HTTP answer to this very POST is about this request, whatever
                # id it names: null (not parsed yet), or a placeholder such as "server-error"
                # from servers that refuse a request before any session exists. So it answers
                # the request now, as in the SDK, instead of leaving it to time out. (A JSON body
                # whose "error" is no JSON-RPC error object is reported below with its status.)
                data = {**data, "id": request_id}
            if status >= 400 and not _is_jsonrpc_answer(data):
                raise ProtocolFailure(
                    f"{method}: HTTP {status} with a JSON body that is not a JSON-RPC answer",
                    detail={"status": status,
                            "bodyStart": clip(body[:SNIPPET + 4096].decode("utf-8", "replace"), SNIPPET)},
                )
            self._sink.message(data, non_finite)
            return
        if content_type == "text/event-stream" and status < 300:
            parser = EventParser(self._max)
            if await self._pump(response, method, parser=parser, answer_to=request_id):
                return
            if not resumable:
                raise ConnectionFailed(f"{method}: the server's event stream ended without an answer")
            await self._resume(request_id, method, parser)
            return
        if status == 202:
            raise ProtocolFailure(f"{method}: HTTP 202 Accepted for a request: the server sent no answer")
        raise await self._http_problem(response, method)

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
                    raise ConnectionFailed(f"GET {url}: HTTP 404: the server no longer knows this session")
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
            await self._client.aclose()


class LegacySseTransport(_HttpBase):
    """HTTP+SSE (2024-11-05): GET an event stream, POST messages to the endpoint it names."""

    def __init__(self, target: HttpTarget, *, max_message_bytes: int, connect_timeout: float,
                 http_hooks: HttpHooks | None = None) -> None:
        super().__init__(target, max_message_bytes=max_message_bytes, connect_timeout=connect_timeout,
                         http_hooks=http_hooks)
        self.info = TransportInfo("sse", {"url": target.url})
        self._endpoint: str | None = None
        self._endpoint_ready = anyio.Event()
        self._startup_error: ProbeError | None = None
        self._closing = False

    async def start(self, task_group: Any, sink: Sink) -> None:
        self._sink, self._task_group = sink, task_group
        self._client = self._make_client()
        task_group.start_soon(self._listen)
        with anyio.move_on_after(self._connect_timeout):
            await self._endpoint_ready.wait()
        if self._startup_error is not None:
            raise self._startup_error
        if self._endpoint is None:
            raise RequestTimeout(
                f"{self.target.url}: no 'endpoint' event within {self._connect_timeout:g} s "
                "(is this a legacy HTTP+SSE MCP endpoint?)"
            )

    async def _listen(self) -> None:
        assert self._client is not None and self._sink is not None
        url = self.target.url
        try:
            async with self._client.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
                content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if response.status_code != 200 or content_type != "text/event-stream":
                    raise await self._http_problem(response, f"GET {url}")
                await self._pump(response, url, on_other=self._event)
        except ProbeError as exc:
            self._fail(exc)
            return
        except httpx.HTTPError as exc:
            self._fail(self._transport_error(exc, url))
            return
        if not self._closing:
            self._fail(ConnectionFailed(f"{url}: the server closed the event stream"))

    def _fail(self, error: ProbeError) -> None:
        if not self._endpoint_ready.is_set():
            self._startup_error = error
            self._endpoint_ready.set()
        elif not self._closing and self._sink is not None:
            self._sink.closed(error)

    def _event(self, name: str, data: str) -> None:
        """The events of the legacy stream other than messages: `endpoint` names where to POST."""
        if name == "endpoint":
            endpoint = urljoin(self.target.url, data.strip())
            if _origin(endpoint) != _origin(self.target.url):
                self._fail(ProtocolFailure(
                    f"the server named an endpoint on another origin ({endpoint}); refused, so that "
                    f"headers and credentials stay with {self.target.url}"))
                return
            self._endpoint = endpoint
            self.info.detail["endpoint"] = endpoint
            self._endpoint_ready.set()

    async def send(self, message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        assert self._client is not None and self._endpoint is not None
        import json

        try:
            response = await self._client.post(
                self._endpoint, content=json.dumps(message), headers={"Content-Type": "application/json"}
            )
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, self._endpoint) from None
        if response.status_code >= 300:
            raise await self._http_problem(response, message.get("method", "response"))

    async def aclose(self) -> None:
        self._closing = True
        if self._client is not None:
            with anyio.CancelScope(shield=True):
                await self._client.aclose()


def _is_jsonrpc_answer(data: Any) -> bool:
    return isinstance(data, dict) and ("result" in data or _is_error_object(data.get("error"))) and "id" in data


def _is_error_object(error: Any) -> bool:
    code = error.get("code") if isinstance(error, dict) else None
    return isinstance(code, int) and not isinstance(code, bool)


def _answers(message: Any, request_id: Any) -> bool:
    """Whether `message` (or, in a batch, one of its items) is the answer to `request_id`."""
    items = message if isinstance(message, list) else [message]
    return any(isinstance(m, dict) and "method" not in m and m.get("id") == request_id
               and ("result" in m or "error" in m) for m in items)


def _checked_session_id(value: str) -> str:
    """The spec allows only visible ASCII (0x21 to 0x7E) in a session id; anything else could
    not be sent back in a header as it was received."""
    if value and all("\x21" <= c <= "\x7e" for c in value):
        return value
    raise ProtocolFailure(
        f"initialize: the server's Mcp-Session-Id {value!r} is not visible ASCII (0x21 to 0x7E), as the spec "
        "requires; it cannot be sent back, so the session cannot go on",
        detail={"sessionId": value.encode("unicode_escape").decode("ascii")[:200]})


def _retry_after(response: httpx.Response, detail: dict[str, Any]) -> str:
    """Put a 429's or 503's Retry-After (delay-seconds or an HTTP date, RFC 9110 10.2.3) in `detail`
    as seconds from now; return the words that say it."""
    raw = response.headers.get("retry-after", "").strip()
    wait: int | None = None
    if raw.isascii() and raw.isdigit():
        wait = int(raw)
    elif raw:
        from email.utils import parsedate_to_datetime

        with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
            wait = max(0, math.ceil(parsedate_to_datetime(raw).timestamp() - time.time()))
    detail["retryAfter"] = wait
    if raw and wait is None:
        detail["retryAfterHeader"] = raw[:100]
    return f"; it asks to retry after {seconds(wait)} s (Retry-After)" if wait is not None else (
        f"; Retry-After: {raw[:100]!r}" if raw else "")


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return clip(text.splitlines()[0], 200)


async def _read_prefix(response: httpx.Response, limit: int) -> str:
    """The first `limit` characters of the body, secrets masked before the cut."""
    wanted, limit = limit, limit + 4096
    data = b""
    try:
        async for chunk in response.aiter_bytes():
            data += chunk
            if len(data) >= limit:
                break
    except (httpx.HTTPError, RuntimeError):
        pass
    if not data:
        try:
            data = response.content
        except (httpx.HTTPError, RuntimeError):
            data = b""
    return clip(data[:limit].decode("utf-8", errors="replace"), wanted)


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise ProtocolFailure(f"an HTTP body of {declared} bytes, larger than the limit of {limit} bytes "
                              "(--max-message-size); not read")
    data = bytearray()
    async for chunk in response.aiter_bytes():
        data += chunk
        if len(data) > limit:
            raise ProtocolFailure(f"an HTTP body larger than the limit of {limit} bytes (--max-message-size)")
    return bytes(data)


def _asks_bearer(www_authenticate: str) -> bool:
    """A Bearer challenge among those of the header: the server asks for an OAuth token."""
    from mcpprobe.wire.challenge import bearer, parse_www_authenticate

    return bearer(parse_www_authenticate(www_authenticate)) is not None


def _asks_basic(www_authenticate: str) -> bool:
    """A challenge for Basic and none for Bearer."""
    from mcpprobe.wire.challenge import bearer, parse_www_authenticate

    challenges = parse_www_authenticate(www_authenticate)
    return bearer(challenges) is None and any(c.scheme.lower() == "basic" for c in challenges)
