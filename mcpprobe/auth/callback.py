"""The browser's side of the authorization code flow: whether a browser can be opened, opening it,
and the loopback redirect receiver (RFC 8252 7.3), a one-shot HTTP listener on 127.0.0.1 that takes
the authorization server's redirect, answers the browser with a short page, and hands the query
(code, state, iss, or error) to the login waiting for it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcpprobe.auth.tokens import LoginFailed

CALLBACK_PATH = "/callback"


def browser_available() -> bool:
    import os

    if sys.platform in ("darwin", "win32"):
        return True
    # $BROWSER is how a Unix user names their browser, a text or headless one included.
    return bool(os.environ.get("BROWSER") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_in_browser(url: str) -> None:
    """Open `url` in a thread of its own: a browser command may run until the redirect is served
    (webbrowser waits for a $BROWSER command), and the redirect listener runs in the caller's loop."""
    import webbrowser

    threading.Thread(target=_open_quietly, args=(webbrowser, url), daemon=True).start()


def _open_quietly(webbrowser: Any, url: str) -> None:
    with contextlib.suppress(Exception):  # printing the URL is enough
        webbrowser.open(url)


class LoopbackCallback:
    """One-shot HTTP listener on 127.0.0.1 for the authorization redirect (RFC 8252 7.3)."""

    def __init__(self, port: int = 0) -> None:
        self.port = port
        self.redirect_uri = ""
        self._listener: Any = None
        self._send: Any = None
        self._receive: Any = None

    async def start(self, task_group: Any) -> None:
        import anyio
        from anyio.abc import SocketAttribute

        self._send, self._receive = anyio.create_memory_object_stream[dict[str, str]](1)
        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self.port = self._listener.extra(SocketAttribute.local_port)
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"
        task_group.start_soon(self._listener.serve, self._handle)

    async def aclose(self) -> None:
        if self._listener is not None:
            await self._listener.aclose()

    async def _handle(self, stream: Any) -> None:
        import anyio

        async with stream:
            data = b""
            with anyio.move_on_after(10):
                while b"\r\n\r\n" not in data and len(data) < 16384:
                    try:
                        chunk = await stream.receive(4096)
                    except (anyio.EndOfStream, anyio.BrokenResourceError):
                        break
                    data += chunk
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            parts = line.split(" ")
            target = parts[1] if len(parts) >= 2 else "/"
            split = urlsplit(target)
            if parts[0] != "GET" or split.path != CALLBACK_PATH:
                await _answer(stream, 404, "Not found")
                return
            query = {k: v[0] for k, v in parse_qs(split.query).items()}
            if query.get("error"):
                await _answer(stream, 400, "mcpprobe: the authorization server refused: "
                                           f"{query.get('error')}. You may close this window.")
            else:
                await _answer(stream, 200, "mcpprobe: logged in. You may close this window.")
            with contextlib.suppress(anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._send.send_nowait(query)

    async def wait(self, timeout: float) -> dict[str, str]:
        import anyio

        with anyio.move_on_after(timeout):
            query: dict[str, str] = await self._receive.receive()  # the stream opened as dict[str, str]
            return query
        raise LoginFailed(f"no redirect reached {self.redirect_uri} within {timeout:g} s (--login-timeout)")


async def _answer(stream: Any, status: int, text: str) -> None:
    import html

    body = f"<!doctype html><title>mcpprobe</title><p>{html.escape(text)}</p>".encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n").encode()
    with contextlib.suppress(Exception):  # the browser went away; the code is what matters
        await stream.send(head + body)
