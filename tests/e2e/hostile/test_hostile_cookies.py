"""Cookies an HTTP server sets: kept and sent back (a load balancer's sticky session), within the
bounds of RFC 6265 section 6.1 (4096 bytes a cookie, 50 a domain, 3000 in all), the excess dropped
with a `cookie-dropped` finding, on every HTTP path: the httpx client of `probe` and `check`, `load`'s
lean POST path, and `load` through httpx.

The server (real, on 127.0.0.1) records the Cookie header of every request it receives, so each
test also shows the attack landing on a client without the bounds: the header grew with every
answer (`flood`), a cookie of 5000 bytes came back (`big`), or the sticky cookie never came back on
load's lean path.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import run_cli

TOOL = {"name": "work", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
STICKY = "sticky=node-7"
PER_ANSWER = 8  # flood: new cookies set on each answer, each under 4096 bytes (31 KB an answer)
VALUE = "x" * 3900
BOUND = 50 * 4096  # the most a Cookie header can carry within the bounds (one domain)


@pytest.fixture(autouse=True)
def _no_proxy_and_long_header_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy (the lean path speaks to the server itself); and the recording server reads a
    Cookie header of any length (Python's own cap is 64 KiB a line), to measure what is sent."""
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(http.client, "_MAXLINE", 64 * 1024 * 1024)


@contextlib.contextmanager
def cookie_server(mode: str) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A streamable HTTP MCP server (tools: `work`). The answer to initialize sets the sticky cookie
    `sticky=node-7`; `flood`: every later answer sets PER_ANSWER new cookies of about 3.9 KB;
    `big`: initialize also sets a cookie of 5000 bytes. Each request is recorded: its method, its
    Cookie header's length, its cookies' names."""
    lock = threading.Lock()
    seen: list[dict[str, Any]] = []
    counter = iter(range(10**9))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, body: bytes, content_type: str, cookies: list[str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Mcp-Session-Id", "s-cookies")
            for cookie in cookies:
                self.send_header("Set-Cookie", cookie)
            self.end_headers()
            self.wfile.write(body)

        def record(self, method: str) -> None:
            header = self.headers.get("Cookie") or ""
            names = [part.split("=", 1)[0].strip() for part in header.split(";") if part.strip()]
            with lock:
                seen.append({"method": method, "bytes": len(header), "names": names,
                             "sticky": STICKY in [part.strip() for part in header.split(";")],
                             "encoding": self.headers.get("Accept-Encoding")})

        def cookies(self, method: str) -> list[str]:
            if method == "initialize":
                return [f"{STICKY}; Path=/", *([f"big={'b' * 5000}; Path=/"] if mode == "big" else [])]
            if mode == "flood":
                return [f"f{next(counter)}={VALUE}; Path=/" for _ in range(PER_ANSWER)]
            return []

        def do_GET(self) -> None:  # noqa: N802 - no standalone stream (the spec allows 405)
            self.record("GET")
            self.reply(405, b"", "text/plain", self.cookies("GET"))

        def do_DELETE(self) -> None:  # noqa: N802
            self.record("DELETE")
            self.reply(200, b"", "text/plain", [])

        def do_POST(self) -> None:  # noqa: N802
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            method = message.get("method", "") if isinstance(message, dict) else "batch"
            self.record(method)
            cookies = self.cookies(method)
            if not isinstance(message, dict) or "id" not in message:
                self.reply(202, b"", "text/plain", cookies)
                return
            if method == "initialize":
                result: Any = {"protocolVersion": message["params"]["protocolVersion"],
                               "capabilities": {"tools": {}}, "serverInfo": {"name": "cookies", "version": "1"}}
            elif method == "tools/list":
                result = {"tools": [TOOL]}
            elif method == "tools/call":
                result = {"content": [{"type": "text", "text": "ok"}]}
            elif method == "ping":
                result = {}
            else:
                body = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "not found"}}
                self.reply(200, json.dumps(body).encode(), "application/json", cookies)
                return
            body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
            self.reply(200, json.dumps(body).encode(), "application/json", cookies)

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass

    httpd = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp", seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def _after_initialize(seen: list[dict[str, Any]]) -> list[dict[str, Any]]:
    first = next(i for i, request in enumerate(seen) if request["method"] == "initialize")
    return seen[first + 1:]


def _codes(doc: dict[str, Any]) -> list[str]:
    return [finding["code"] for finding in doc.get("findings", [])]


def test_check_keeps_the_cookie_header_within_bounds_and_the_sticky_cookie(tmp_path) -> None:
    with cookie_server("flood") as (url, seen):
        result = run_cli(["check", "--json", "--protocol", "legacy", url])
    assert result.exit_code in (0, 1), result.stderr
    later = _after_initialize(seen)
    assert len(later) * PER_ANSWER > 100, "the attack needs more answers than the bound"  # the flood is real
    assert max(request["bytes"] for request in seen) <= BOUND  # on main: 700 KB and more
    assert max(len(request["names"]) for request in seen) <= 50
    # Every request after the first answer carries the sticky cookie (an initialize opens a connection
    # of its own, whose answer sets it again).
    assert all(request["sticky"] for request in later if request["method"] != "initialize"), \
        "the sticky cookie, set first, must always come back"
    assert "cookie-dropped" in json.dumps(result.json)


def test_probe_drops_a_cookie_past_4096_bytes_with_a_finding() -> None:
    with cookie_server("big") as (url, seen):
        result = run_cli(["probe", "--json", "--protocol", "legacy", url])
    assert result.exit_code == 0, result.stderr
    later = _after_initialize(seen)
    assert later and all(request["sticky"] for request in later)
    assert not any("big" in request["names"] for request in seen)  # on main: 5000 bytes sent back each time
    (finding,) = [f for f in result.json["findings"] if f["code"] == "cookie-dropped"]
    assert finding["severity"] == "warning"
    assert "4096" in finding["message"] and "b" * 100 not in json.dumps(finding)  # never the value


@pytest.mark.parametrize("path", ["lean", "httpx"])
def test_load_sends_the_sticky_cookie_back_on_every_request(path: str) -> None:
    httpx_only = ["-H", "Accept-Encoding: identity"] if path == "httpx" else []
    with cookie_server("sticky") as (url, seen):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "2", "--protocol", "legacy",
                          "--requests", "20", *httpx_only, url])
    assert result.exit_code == 0, result.stderr
    calls = [request for request in seen if request["method"] == "tools/call"]
    assert len(calls) == 20
    if path == "lean":
        assert all(request["encoding"] is None for request in calls), "the lean path was not taken"
    assert all(request["sticky"] for request in calls)  # on main, the lean path sent no cookie at all


@pytest.mark.parametrize("path", ["lean", "httpx"])
def test_load_keeps_the_cookie_header_within_bounds(path: str) -> None:
    httpx_only = ["-H", "Accept-Encoding: identity"] if path == "httpx" else []
    with cookie_server("flood") as (url, seen):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "1", "--protocol", "legacy",
                          "--requests", "60", *httpx_only, url])
    assert result.exit_code == 0, result.stderr
    calls = [request for request in seen if request["method"] == "tools/call"]
    assert len(calls) == 60
    if path == "lean":
        assert all(request["encoding"] is None for request in calls), "the lean path was not taken"
    assert max(request["bytes"] for request in seen) <= BOUND  # on main (httpx): 700 KB by the end
    assert max(len(request["names"]) for request in calls) == 50  # kept up to the bound, and sent
    assert all(request["sticky"] for request in calls)
    assert "cookie-dropped" in _codes(result.json)
