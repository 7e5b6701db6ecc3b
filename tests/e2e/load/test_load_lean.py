"""`mcpprobe load` over streamable HTTP sends its POSTs on the lean path (mcpprobe/wire/lean_http.py):
kept HTTP/1.1 connections spoken through h11, one request in flight on each. Against real HTTP servers
on 127.0.0.1 that record what they receive: the requests went that way (httpx always sends
Accept-Encoding; the lean path sends none the user did not ask for) with every header of the session
as it was spelled, over no more connections than requests in flight; answers as JSON and as event
streams are both read; and what breaks mid-answer is counted by kind as on the httpx path (a connection
closed mid-body is `transport`, a body past --max-message-size `protocol`, a late answer `timeout`).

Counts are exact (the server decides which calls fail), so no verdict depends on the machine's speed.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.conftest import run_cli

TOOL = {"name": "work", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}
SESSION = "s-Lean_1"
# (status, content type, body; empty: the answer itself) and how `load` counts each.
ODD_ANSWERS = [
    (200, "application/json", b""),  # ok
    (500, "application/json", b'{"jsonrpc": "2.0", "id": null, "error": {"code": -32001, "message": "boom"}}'),
    (200, "application/json", b"{not json"),  # protocol
    (400, "application/json", b'{"detail": "no JSON-RPC here"}'),  # http 400
    (202, "text/plain", b" "),  # protocol: accepted, no answer
    (503, "text/html", b"<html>busy</html>"),  # http 503
    (500, "application/json", b"oops, not json"),  # http 500
    (404, "text/plain", b"gone"),  # http 404: the session expired
]


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy in the environment keeps httpx (the lean path speaks to the server itself)."""
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)


@contextlib.contextmanager
def recording_server(mode: str) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A streamable HTTP MCP server on 127.0.0.1; every tools/call is recorded with its headers (as
    spelled on the wire, in order) and the client's port. `mode`: `json` answers JSON; `sse` answers
    event streams (a log notification, then the answer), by turns with Content-Length and chunked;
    `broken` answers call n (from 0) by n modulo 5: 1 after two seconds, 2 with half of its declared
    body and a closed connection, 3 with an event stream cut before the answer, 4 with a body of 4 KiB
    of padding; the others answer JSON; `odd` answers call n by n modulo 8 with an answer that is not a
    plain result (ODD_ANSWERS)."""
    lock = threading.Lock()
    calls: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def head(self, status: int, content_type: str, extra: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            for key, value in extra.items():
                self.send_header(key, value)
            self.end_headers()

        def reply(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
            self.head(status, content_type, {"Content-Length": str(len(body)), **(extra or {})})
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - no standalone stream (the spec allows 405)
            self.reply(405, b"", "text/plain")

        def do_DELETE(self) -> None:  # noqa: N802
            self.reply(200, b"", "text/plain")

        def do_POST(self) -> None:  # noqa: N802
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            method = message.get("method", "")
            if "id" not in message:
                self.reply(202, b"", "text/plain")
                return
            if method == "initialize":
                result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                          "serverInfo": {"name": "recording", "version": "1"}}
                body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
                self.reply(200, body, "application/json", {"Mcp-Session-Id": SESSION})
                return
            if method != "tools/call":
                result = {"tools": [TOOL]} if method == "tools/list" else {}
                self.reply(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode(),
                           "application/json")
                return
            with lock:
                n = len(calls)
                calls.append({"headers": list(self.headers.items()), "port": self.client_address[1]})
            answer = json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                 "result": {"content": [{"type": "text", "text": "ok"}]}}).encode()
            if mode == "sse":
                note = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                   "params": {"level": "info", "data": "working"}}).encode()
                stream = b"event: message\ndata: " + note + b"\n\nevent: message\ndata: " + answer + b"\n\n"
                if n % 2:
                    self.reply(200, stream, "text/event-stream")
                else:
                    self.head(200, "text/event-stream", {"Transfer-Encoding": "chunked"})
                    # One write: the answer and the body's end arrive together, as most servers send them.
                    self.wfile.write(b"".join(b"%x\r\n%s\r\n" % (len(part), part)
                                              for part in (stream[:40], stream[40:])) + b"0\r\n\r\n")
                return
            if mode == "odd":
                status, content_type, body = ODD_ANSWERS[n % len(ODD_ANSWERS)]
                self.reply(status, body or answer, content_type)
                return
            if mode == "broken":
                kind = n % 5
                if kind == 1:
                    time.sleep(2)
                elif kind == 2:
                    self.head(200, "application/json", {"Content-Length": str(len(answer))})
                    self.wfile.write(answer[: len(answer) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                elif kind == 3:
                    self.head(200, "text/event-stream", {"Transfer-Encoding": "chunked"})
                    part = b": still working\n\n"
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    self.wfile.flush()
                    self.close_connection = True
                    return
                elif kind == 4:
                    answer = json.dumps({"jsonrpc": "2.0", "id": message["id"],
                                         "result": {"content": [{"type": "text", "text": "x" * 4096}]}}).encode()
            self.reply(200, answer, "application/json")

    class Server(ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # a late answer written to a connection the client closed (its deadline passed)

    httpd = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp", calls
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("rate", [None, "200"])
def test_the_posts_go_the_lean_way_with_the_sessions_headers_exactly(rate: str | None) -> None:
    pace = ["--rate", rate, "--duration", "0.3"] if rate else ["--requests", "60"]
    with recording_server("json") as (url, calls):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "4", "--protocol", "legacy",
                          "-H", "Authorization: Bearer t0ken-Lean", "-H", "X-Trace-Tag: Mixed-Case", *pace, url])
    assert result.exit_code == 0, result.stderr
    overall = result.json["overall"]
    assert overall["requests"] == overall["ok"] == len(calls) == 60
    version = result.json["protocolVersion"]
    assert version
    for call in calls:
        headers = dict(call["headers"])
        assert "Accept-Encoding" not in headers, "an httpx request: the lean path was not taken"
        assert headers["Mcp-Session-Id"] == SESSION
        assert headers["Authorization"] == "Bearer t0ken-Lean"
        assert headers["X-Trace-Tag"] == "Mixed-Case"
        assert headers["Accept"] == "application/json, text/event-stream"
        assert headers["Content-Type"] == "application/json"
        assert headers["MCP-Protocol-Version"] == version
        assert headers["Host"] == url.split("/")[2]
        assert len(call["headers"]) == len(headers), "a header sent twice"
    # Kept connections, one request in flight on each: never more than the concurrency.
    assert len({call["port"] for call in calls}) <= 4


def test_answers_as_event_streams_are_read_with_content_length_and_chunked() -> None:
    with recording_server("sse") as (url, calls):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "3", "--protocol", "legacy",
                          "--requests", "40", url])
    assert result.exit_code == 0, result.stderr
    overall = result.json["overall"]
    assert overall["requests"] == overall["ok"] == len(calls) == 40
    assert all("Accept-Encoding" not in dict(call["headers"]) for call in calls)
    assert len({call["port"] for call in calls}) <= 3, "an event stream read to its end leaves its connection"


def test_what_breaks_mid_answer_is_counted_by_kind() -> None:
    with recording_server("broken") as (url, calls):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "5", "--protocol", "legacy",
                          "--requests", "20", "--timeout", "0.5", "--max-message-size", "2048", url])
    assert result.exit_code == 0, result.stderr
    overall = result.json["overall"]
    assert overall["requests"] == len(calls) == 20
    assert overall["errorsByKind"] == {"timeout": 4, "transport": 8, "protocol": 4}
    assert overall["ok"] == 4
    assert all("Accept-Encoding" not in dict(call["headers"]) for call in calls), "the lean path was not taken"


def test_an_accept_encoding_of_the_user_keeps_httpx() -> None:
    """A compressed answer is httpx's to decode: with -H Accept-Encoding every POST is httpx's (the
    header arrives as given), and the load runs as ever."""
    with recording_server("json") as (url, calls):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "2", "--protocol", "legacy",
                          "-H", "Accept-Encoding: identity", "--requests", "10", url])
    assert result.exit_code == 0, result.stderr
    assert result.json["overall"]["ok"] == len(calls) == 10
    assert all(dict(call["headers"]).get("Accept-Encoding") == "identity" for call in calls)


@pytest.mark.parametrize("path", ["lean", "httpx"])
def test_odd_answers_mean_on_the_lean_path_what_they_mean_on_httpx(path: str) -> None:
    """One rule decides what an answer means (streamable_http.py `_answer_kind`, `_take_json`): an error
    status, a JSON body that does not parse or is no JSON-RPC answer, a 202 with no answer, an expired
    session are counted alike whether the lean path read the answer or httpx did."""
    httpx_only = ["-H", "Accept-Encoding: identity"] if path == "httpx" else []
    with recording_server("odd") as (url, calls):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "1", "--protocol", "legacy",
                          "--requests", "40", *httpx_only, url])
    assert result.exit_code == 0, result.stderr
    overall = result.json["overall"]
    assert overall["requests"] == len(calls) == 40
    assert overall["errorsByKind"] == {"http 400": 5, "http 404": 5, "http 500": 5, "http 503": 5, "protocol": 10,
                                       "rpc -32001": 5}
    assert overall["ok"] == 5
    lean = ["Accept-Encoding" not in dict(call["headers"]) for call in calls]
    assert all(lean) if path == "lean" else not any(lean)
