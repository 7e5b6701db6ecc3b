"""The legacy HTTP+SSE transport (2024-11-05): GET one event stream, whose `endpoint` event names
where to POST every message; the answers come on the stream. An endpoint on another origin is
refused, so that headers and credentials stay with the server named; one that is no usable URL (a
control character, a host that does not parse) is a protocol failure of the stream, not a crash.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2 as httpx

from mcpprobe.errors import ConnectionFailed, ProbeError, ProtocolFailure, RequestTimeout
from mcpprobe.wire.http import HttpBase
from mcpprobe.wire.target import HttpTarget
from mcpprobe.wire.transport import HttpHooks, Sink, TransportInfo


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


class LegacySseTransport(HttpBase):
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
            from mcpprobe.safety.peer import BadPeerValue, peer_url

            try:
                endpoint = peer_url(data, base=self.target.url, what="the server's 'endpoint' event")
            except BadPeerValue as exc:  # no message could be posted to it: the stream's finding
                self._fail(ProtocolFailure(f"{exc}; no message can be sent to it"))
                return
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
        # Streamed: the answers come on the event stream, so this body is never needed whole (an
        # endless one is not buffered); an error's start is read for its description.
        try:
            async with self._client.stream("POST", self._endpoint, content=json.dumps(message),
                                           headers={"Content-Type": "application/json"}) as response:
                if response.status_code >= 300:
                    raise await self._http_problem(response, message.get("method", "response"))
        except httpx.HTTPError as exc:
            raise self._transport_error(exc, self._endpoint) from None

    async def aclose(self) -> None:
        self._closing = True
        if self._client is not None:
            with anyio.CancelScope(shield=True):
                await self._client.aclose()
