"""What the two HTTP transports share: one httpx client per connection, event streams read into
the connection, and every answer that is not MCP reported as what it is.

An HTML login page, a proxy's 502, a redirect: each becomes an error with its status and first
bytes. Credentials are never sent to another origin: redirects are not followed. The transports
are `mcpprobe.wire.streamable_http` (MCP 2025-03-26 and later) and `mcpprobe.wire.legacy_sse`
(HTTP+SSE, 2024-11-05).
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

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
from mcpprobe.wire.cookies import BoundedCookieJar
from mcpprobe.wire.decode import TooDeep, decode_message, refuse_too_deep
from mcpprobe.wire.sse import MAX_RETRY_MS, EventParser
from mcpprobe.wire.stderrlog import StderrEntry
from mcpprobe.wire.target import HttpTarget
from mcpprobe.wire.transport import HttpHooks, Sink

SNIPPET = 300
MAX_RETRY_AFTER = 366 * 24 * 3600  # seconds: a Retry-After past a year is shown as it came, not as a delay
# How long the start of a body that is not an MCP answer (an error page) is read for its description.
PREFIX_SECONDS = 5.0
DRAIN_SECONDS = 0.05  # after an answer, how long its event stream is read on for its end (_pump)
_NO_ID = object()


class HttpBase:
    """One HTTP transport's client and what it reads: the base of both HTTP transports."""

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
        # The connection's cookies (a load balancer's sticky session), bounded as a browser's are
        # (wire/cookies.py); shared by every client of this connection and load's lean path.
        self.cookies = BoundedCookieJar(self._cookie_dropped)

    def _cookie_dropped(self, what: str, sample: str) -> None:
        if self._sink is not None and self._sink.cookie_dropped is not None:
            self._sink.cookie_dropped(what, sample)

    def _make_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            headers=dict(self.target.headers),
            cookies=self.cookies,
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

    def watch_responses(self, hook: Callable[[httpx.Response], Any]) -> Callable[[], None]:
        """Await `hook(response)` on each response to the connection's own requests (its status and
        headers; `response.request` is what it answers), until the function returned is called: for
        `check`, which judges the HTTP status of an answer the connection reads as JSON-RPC. Before the
        transport has started nothing is watched."""
        hooks = self._client.event_hooks["response"] if self._client is not None else []
        hooks.append(hook)
        return lambda: hooks.remove(hook) if hook in hooks else None

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
            if answer_to is not _NO_ID and self._given_up(answer_to):
                # Nobody waits for this answer any more (its deadline passed): a stream that
                # trickles on is not read for ever; True, so that it is not resumed either.
                return True
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

    def _given_up(self, request_id: Any) -> bool:
        """Whether the connection no longer waits for the answer to `request_id`."""
        deadline = self._sink.deadline if self._sink is not None else None
        return deadline is not None and deadline(request_id) is None

    def _feed(self, parser: EventParser, chunk: bytes, what: str, on_other: Callable[[str, str], None] | None,
              answer_to: Any) -> bool:
        """One chunk of an event stream delivered; True when it held the answer to `answer_to`."""
        assert self._sink is not None
        try:
            events = parser.feed(chunk)
        except ValueError as exc:
            raise ProtocolFailure(f"{what}: an SSE {exc} (--max-message-size)",
                                  detail={"limit": self._max}) from None
        if parser.refused_retry is not None:
            if self._sink.out_of_range is not None:
                self._sink.out_of_range(f"{what}: an SSE retry: field past {MAX_RETRY_MS} ms (a day); the default "
                                        "reconnection time is used", parser.refused_retry)
            parser.refused_retry = None
        answered = False
        for event in events:
            if event.event != "message":
                if on_other is not None:
                    on_other(event.event, event.data)
            elif event.data.strip():
                try:
                    decoded = decode_message(event.data)
                except TooDeep as exc:
                    self._sink.bad_output(f"an SSE event that is not JSON-RPC: {exc}", clip(event.data, 200))
                    refuse_too_deep(self._sink, event.data, exc)
                    continue
                except ValueError:
                    self._sink.bad_output("an SSE event that is not JSON-RPC", clip(event.data, 200))
                    continue
                self._sink.message(decoded.value, decoded.flags)
                answered = answered or _answers(decoded.value, answer_to)
        return answered

    def _transport_error(self, exc: Exception, url: str) -> ProbeError:
        if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
            return RequestTimeout(f"connecting to {url} timed out", detail={"url": url})
        if isinstance(exc, httpx.TimeoutException):
            return RequestTimeout(f"{url}: timed out", detail={"url": url})
        if isinstance(exc, httpx.ConnectError):
            # "connect": nothing listens there (any more): a load run takes it as the server gone.
            return ConnectionFailed(f"cannot connect to {url}: {_reason(exc)}", detail={"url": url, "stage": "connect"})
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


def _answers(message: Any, request_id: Any) -> bool:
    """Whether `message` (or, in a batch, one of its items) is the answer to `request_id`."""
    items = message if isinstance(message, list) else [message]
    return any(isinstance(m, dict) and "method" not in m and m.get("id") == request_id
               and ("result" in m or "error" in m) for m in items)


def _retry_after(response: httpx.Response, detail: dict[str, Any]) -> str:
    """Put a 429's or 503's Retry-After (delay-seconds or an HTTP date, RFC 9110 10.2.3) in `detail`
    as seconds from now; return the words that say it."""
    from mcpprobe.safety.numbers import digits

    raw = response.headers.get("retry-after", "").strip()
    wait: int | None = None
    if raw.isascii() and raw.isdigit():
        # At most a year, read from at most 15 digits: a 5,000-digit value is not a delay (and int()
        # refuses texts past 4,300 digits); it is shown as it came, cut.
        wait = digits(raw, MAX_RETRY_AFTER)
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


async def _read_prefix(response: httpx.Response, limit: int, wait: float = PREFIX_SECONDS) -> str:
    """The first `limit` characters of the body, secrets masked before the cut; what arrived within
    `wait` seconds (an error page that trickles does not hold the description up)."""
    wanted, limit = limit, limit + 4096
    data = b""
    try:
        with anyio.move_on_after(wait):
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


def _asks_bearer(www_authenticate: str) -> bool:
    """A Bearer challenge among those of the header: the server asks for an OAuth token."""
    from mcpprobe.wire.challenge import bearer, parse_www_authenticate

    return bearer(parse_www_authenticate(www_authenticate)) is not None


def _asks_basic(www_authenticate: str) -> bool:
    """A challenge for Basic and none for Bearer."""
    from mcpprobe.wire.challenge import bearer, parse_www_authenticate

    challenges = parse_www_authenticate(www_authenticate)
    return bearer(challenges) is None and any(c.scheme.lower() == "basic" for c in challenges)
