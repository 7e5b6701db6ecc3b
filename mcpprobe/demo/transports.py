"""The demo server's three transports: stdio, streamable HTTP and legacy HTTP+SSE, bound to 127.0.0.1 only."""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from mcp.server.lowlevel import Server

if TYPE_CHECKING:
    import socket

    from starlette.applications import Starlette

HOST = "127.0.0.1"
HTTP_PATH = "/mcp"
SSE_PATH = "/sse"
SSE_MESSAGE_PATH = "/messages/"


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def _bind(port: int) -> socket.socket:
    import socket

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _sse_app(server: Server[Any]) -> Starlette:
    from mcp.server.sse import SseServerTransport
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.routing import Mount, Route
    from starlette.types import Message, Receive, Scope, Send

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*"],
    )
    sse = SseServerTransport(SSE_MESSAGE_PATH, security_settings=security)

    class HandleSSE:
        # A plain ASGI app, not a Starlette endpoint: the transport starts the SSE
        # response itself, so there is no second response to return (the SDK's
        # `return Response()` recipe errors when the server shuts down mid-stream).
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            state = {"started": False, "done": False}

            async def tracking_send(message: Message) -> None:
                if message["type"] == "http.response.start":
                    state["started"] = True
                elif message["type"] == "http.response.body" and not message.get("more_body", False):
                    state["done"] = True
                await send(message)

            async with sse.connect_sse(scope, receive, tracking_send) as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
            if state["started"] and not state["done"]:
                # Stream cut short (e.g. server shutdown): end the response cleanly.
                with contextlib.suppress(Exception):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})

    return Starlette(
        routes=[
            Route(SSE_PATH, endpoint=HandleSSE(), methods=["GET"]),
            Mount(SSE_MESSAGE_PATH, app=sse.handle_post_message),
        ]
    )


def serve_http(server: Server[Any], port: int, *, sse: bool) -> None:
    import asyncio

    import uvicorn

    if sse:
        app, path = _sse_app(server), SSE_PATH
    else:
        app, path = server.streamable_http_app(streamable_http_path=HTTP_PATH, host=HOST), HTTP_PATH

    sock = _bind(port)
    real_port = sock.getsockname()[1]

    class _Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                print(f"LISTENING http://{HOST}:{real_port}{path}", flush=True)

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            # Streams still open at shutdown get cut; uvicorn and the SDK would log
            # that as errors. It is expected here, so keep Ctrl-C / SIGTERM quiet.
            logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
            logging.getLogger("mcp").setLevel(logging.CRITICAL)
            await super().shutdown(sockets=sockets)

    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    try:
        asyncio.run(_Server(config).serve(sockets=[sock]))
    finally:
        sock.close()
