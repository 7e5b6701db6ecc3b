"""The HTTP tap: a reverse proxy for streamable HTTP and legacy SSE, judged as the stdio tap is.

Every request to the listening address goes to the same path under the upstream URL, with its method,
query, headers (but the hop-by-hop ones and `Host`; none added, not even an HTTP library's defaults) and
body; the answer comes back with its status, headers (none of uvicorn's added) and body, streamed piece by
piece as it arrives (event streams too). A copy of each message goes to the observer, whole: the JSON body
of a POST (a message or a batch), a JSON answer, each `data:` of an event stream (a POST's answer, the GET
stream, a legacy SSE stream). The entries carry `http`: the method, the path, the status, and the session
id, protocol version and Last-Event-ID headers; `Authorization` (and every credential-like header) is
learnt as a secret before anything of its request is recorded, so it is masked in the record, the live
view and the report. A body with a `Content-Encoding` is relayed but not judged.

Each entry's `http` also says its `exchange` (a number shared by a request and its answer) and its `session`: a
short digest of the Mcp-Session-Id the answer assigned or the request carried, or of the legacy SSE session (the
`sessionId` of the endpoint, which the stream's messages and the POSTs to it share), so that the judge judges each
session on its own. A copy of an answer goes to the observer before the client can have read it to its end, so
that the answer that assigns a session is judged before any request in that session.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcpprobe.safety.redact import Redactor, secret_name
from mcpprobe.wire.sse import EventParser

HOP = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
       "transfer-encoding", "upgrade", "host", "content-length"}
# The Mcp-Session-Id is not kept: it is a handle on a live session; the record keeps its digest (`session`).
KEPT = ("mcp-protocol-version", "last-event-id", "content-type")
MAX_EVENT = 8 * 1024 * 1024
GRACE_SECONDS = 2  # on Ctrl-C, how long open streams (a GET stream, an SSE stream) may take to end
LOOPBACK = {"127.0.0.1", "::1", "localhost"}
SESSION_PARAMETERS = ("sessionId", "session_id")  # the legacy SSE endpoint's session (TypeScript, Python SDKs)

Whole = Callable[[str, bytes, dict[str, Any]], None]


def _headers(raw: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in raw]


def _info(method: str, path: str, headers: list[tuple[str, str]], status: int | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {"method": method, "path": path[:300]}
    if status is not None:
        info["status"] = status
    for name, value in headers:
        lowered = name.lower()
        if lowered in KEPT:
            info[lowered] = value[:300]
        elif lowered == "authorization":
            info["authorization"] = "[redacted]"
    return info


def session_digest(value: str) -> str:
    """What the record keeps of a session id: enough to tell sessions apart, nothing to resume one with."""
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:16]


def query_session(query: str) -> str | None:
    """The legacy SSE session a query names (`sessionId=...`), as a digest; None if none."""
    if "session" not in query.lower():
        return None
    for name, value in parse_qsl(query):
        if name in SESSION_PARAMETERS and value:
            return session_digest(value)
    return None


def endpoint_session(endpoint: str) -> str | None:
    """The session a legacy SSE `endpoint` event names (its query's `sessionId`), as a digest; None if none."""
    try:
        return query_session(urlsplit(endpoint.strip()).query)
    except ValueError:
        return None


def origin_of(url: str) -> str | None:
    """`scheme://host:port` of an absolute URL (the port always said; no user, path or query), or None."""
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not host or not parts.scheme:
        return None
    scheme = parts.scheme.lower()
    if port is None:
        port = 443 if scheme == "https" else 80
    return f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"


def own_origins(scope: dict[str, Any], headers: list[tuple[str, str]]) -> set[str]:
    """The origins that reach this tap: the one the client named (its Host header) and the address it listens on
    (any loopback name, when it listens on loopback)."""
    origins = {origin_of(f"http://{value}") for name, value in headers if name.lower() == "host"}
    server = scope.get("server")
    if isinstance(server, (tuple, list)) and len(server) == 2 and isinstance(server[1], int):
        names = {str(server[0])} | (LOOPBACK if server[0] in LOOPBACK else set())
        origins |= {origin_of(f"http://{'[' + n + ']' if ':' in n else n}:{server[1]}") for n in names}
    return {origin for origin in origins if origin is not None}


def bypassing(endpoint: str, own: set[str]) -> str | None:
    """The origin a legacy SSE `endpoint` event names, when that is not this tap's: a client that follows it posts
    past the tap. None for a path (it resolves against the URL the client reached: the tap) or the tap's own."""
    text = endpoint.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return None
    if not parts.netloc:
        return None
    origin = origin_of(text if parts.scheme else f"http:{text}")  # `//host/...`: the scheme of the tap's URL
    return origin[:200] if origin is not None and origin not in own else None


class Proxy:
    """The ASGI application. `whole(direction, message_bytes, http_info)` never waits."""

    def __init__(self, upstream: str, whole: Whole, redactor: Redactor) -> None:
        import httpx2 as httpx

        self.upstream = upstream.rstrip("/")
        base = httpx.URL(upstream)
        self._origin = f"{base.scheme}://{base.netloc.decode('ascii')}"
        self._whole = whole
        self._redact = redactor
        self._exchanges = itertools.count(1)
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=30.0), follow_redirects=False)
        for name in list(self._client.headers):  # no Accept, Accept-Encoding, User-Agent... the client did not send
            del self._client.headers[name]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return
        if scope["type"] != "http":
            return
        import httpx2 as httpx

        method = scope["method"]
        path = scope.get("raw_path", scope["path"].encode()).decode("latin-1")
        query = scope.get("query_string", b"").decode("latin-1")
        headers = _headers(scope["headers"])
        secrets = [value for name, value in headers if secret_name(name)]
        secrets += [value.split(None, 1)[1] for name, value in headers
                    if name.lower() == "authorization" and len(value.split(None, 1)) == 2]
        if secrets:
            self._redact.learn(*secrets)
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        request_info = _info(method, path, headers)
        exchange = request_info["exchange"] = next(self._exchanges)
        session = next((session_digest(v) for n, v in headers if n.lower() == "mcp-session-id" and v), None) \
            or query_session(query)
        if session is not None:
            request_info["session"] = session
        if body and any(n.lower() == "content-type" and "json" in v for n, v in headers):
            self._whole("c2s", bytes(body), request_info)
        elif method == "DELETE":
            self._whole("event", b"", {**request_info, "event": "delete"})
        url = self._origin + path + (f"?{query}" if query else "")
        outgoing = [(n, v) for n, v in headers if n.lower() not in HOP]
        try:
            request = self._client.build_request(method, url, headers=outgoing, content=bytes(body))
            response = await self._client.send(request, stream=True)
        except httpx.HTTPError as exc:
            text = f"mcpprobe tap: the upstream server could not be reached: {type(exc).__name__}\n".encode()
            await send({"type": "http.response.start", "status": 502,
                        "headers": [(b"content-type", b"text/plain"), (b"content-length", str(len(text)).encode())]})
            await send({"type": "http.response.body", "body": text})
            return
        try:
            answer_headers = [(k, v) for k, v in response.headers.raw if k.decode("latin-1").lower() not in HOP]
            await send({"type": "http.response.start", "status": response.status_code, "headers": answer_headers})
            kind = response.headers.get("content-type", "")
            judged = "content-encoding" not in response.headers
            info = _info(method, path, [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw],
                         response.status_code)
            info["exchange"] = exchange
            assigned = response.headers.get("mcp-session-id")
            if assigned or session is not None:
                info["session"] = session_digest(assigned) if assigned else session
            parser = EventParser(MAX_EVENT) if judged and "text/event-stream" in kind else None
            whole = bytearray() if judged and "json" in kind else None
            import asyncio

            async def gone() -> None:  # the client went away: stop reading the server's stream too
                while (await receive())["type"] != "http.disconnect":
                    pass
                await response.aclose()

            watcher = asyncio.ensure_future(gone())
            try:
                await self._relay(response, send, parser, whole, info,
                                  own_origins(scope, headers) if parser is not None else set())
            except (httpx.HTTPError, httpx.StreamError):
                if whole:  # not offered yet: the answer was cut
                    self._whole("s2c", bytes(whole), info)
            finally:
                watcher.cancel()
        finally:
            with contextlib.suppress(Exception):
                await response.aclose()

    async def _relay(self, response: Any, send: Any, parser: EventParser | None, whole: bytearray | None,
                     info: dict[str, Any], own: set[str]) -> None:
        """The answer's body to the client as it comes, and a copy of each message to the observer. A legacy SSE
        `endpoint` naming another origin than the tap's is relayed as it is, and said (`bypass`, the origin)."""
        async for chunk in response.aiter_raw():
            if parser is not None:  # the events' copies first: the client may act on them as soon as it has them
                try:
                    for event in parser.feed(chunk):
                        if event.event == "message" and event.data.strip():
                            self._whole("s2c", event.data.encode("utf-8", "surrogateescape"),
                                        {**info, **({"event-id": event.id[:200]} if event.id else {})})
                        elif event.event == "endpoint":
                            session = endpoint_session(event.data)
                            if session is not None:  # the stream's messages are that session's from now on
                                info = {**info, "session": session}
                            origin = bypassing(event.data, own)
                            past = {"bypass": True, "origin": self._redact(origin)} if origin else {}
                            self._whole("event", b"", {**info, "event": "endpoint", **past})
                except ValueError:
                    parser = None  # an event past the limit: relayed, not judged
            elif whole is not None:
                if len(whole) + len(chunk) > MAX_EVENT:  # too large to judge: relayed only
                    whole.clear()
                    whole = None
                else:
                    whole += chunk
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        if whole:  # before the end reaches the client: judged before any request that follows it
            self._whole("s2c", bytes(whole), info)
            whole.clear()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def close(self) -> None:
        await self._client.aclose()


def serve(host: str, port: int, proxy: Proxy, ready: Callable[[str], None]) -> None:
    """Serve until SIGINT or SIGTERM (uvicorn's own handling), then return."""
    import uvicorn

    class _Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Any:  # ours below: uvicorn's would raise the signal again once stopped
            yield

    # No `Server` or `Date` of uvicorn's own: the client gets the server's headers, not a second Date beside them.
    config = uvicorn.Config(proxy, host=host, port=port, log_level="warning", lifespan="off", access_log=False,
                            timeout_graceful_shutdown=GRACE_SECONDS, server_header=False, date_header=False)
    server = _Server(config)

    def stop(signum: int, frame: Any) -> None:
        server.should_exit = True

    import signal

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}

    async def run() -> None:
        import asyncio

        task = asyncio.ensure_future(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            sockets = [s for srv in server.servers for s in srv.sockets]
            bound = sockets[0].getsockname() if sockets else (host, port)
            ready(f"http://{'[' + host + ']' if ':' in host else host}:{bound[1]}")
        await task
        await proxy.close()

    import asyncio

    try:
        asyncio.run(run())
    except SystemExit:  # uvicorn's answer to an address it cannot bind (said on stderr already)
        raise OSError(f"cannot listen on {host}:{port}") from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
