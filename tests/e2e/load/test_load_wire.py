"""`mcpprobe load` on each wire path: errors by HTTP status and by a broken connection over streamable
HTTP (a real HTTP server on 127.0.0.1 that fails exact calls), the open loop over HTTP with several
sessions, over HTTP+SSE (whose POST must be awaited: workers, not the pipeline), and the open loop's
own timeout and Ctrl-C over stdio.

Counts are exact (the server decides which calls fail, the schedule how many are sent), latency bounds
one-sided, so no verdict depends on the machine's speed.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import BIND_LOOPBACK, PY, ROOT, checked, http_server, run_cli
from tests.e2e.load.test_load import load, server

TOOL = {"name": "work", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}


class JsonMcpHandler(BaseHTTPRequestHandler):
    """What the streamable HTTP servers of these tests share: JSON answers on kept connections, no
    standalone stream, and the session's own requests (initialize, tools/list of the one TOOL)."""

    protocol_version = "HTTP/1.1"
    server_name = "test"
    # Headers and body go out in two writes: with Nagle's algorithm the body waits for the client's
    # delayed ACK of the headers (about 40 ms on Linux), which every answer over httpx then measured.
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        pass

    def reply(self, status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def answer(self, message: dict[str, Any], result: dict[str, Any], extra: dict[str, str] | None = None) -> None:
        body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
        self.reply(200, body, "application/json", extra)

    def session_request(self, message: dict[str, Any]) -> bool:
        """Answer initialize and tools/list; False for anything else."""
        method = message.get("method")
        if method == "initialize":
            self.answer(message, {"protocolVersion": message["params"]["protocolVersion"],
                                  "capabilities": {"tools": {}},
                                  "serverInfo": {"name": self.server_name, "version": "1"}},
                        {"Mcp-Session-Id": "s-1"})
            return True
        if method == "tools/list":
            self.answer(message, {"tools": [TOOL]})
            return True
        return False

    def do_GET(self) -> None:  # noqa: N802 - no standalone stream (the spec allows 405)
        self.reply(405, b"", "text/plain")

    def do_DELETE(self) -> None:  # noqa: N802
        self.reply(200, b"", "text/plain")


@contextlib.contextmanager
def failing_http_server() -> Iterator[tuple[str, list[str]]]:
    """A streamable HTTP MCP server (JSON answers) whose tools/call number n (from 0) fails by its rest
    modulo 10: 9 is HTTP 429 with Retry-After, 4 is HTTP 500 with a text body, 6 closes the connection
    without an answer; the others answer. Yields its URL and the methods it received."""
    lock = threading.Lock()
    calls = [0]
    methods: list[str] = []

    class Handler(JsonMcpHandler):
        server_name = "failing"

        def do_POST(self) -> None:  # noqa: N802
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            method = message.get("method", "")
            with lock:
                methods.append(method)
            if "id" not in message:
                self.reply(202, b"", "text/plain")
                return
            if self.session_request(message):
                return
            if method == "tools/call":
                with lock:
                    n = calls[0]
                    calls[0] += 1
                if n % 10 == 9:
                    self.reply(429, b"slow down", "text/plain", {"Retry-After": "1"})
                    return
                if n % 10 == 4:
                    self.reply(500, b"internal trouble", "text/plain")
                    return
                if n % 10 == 6:
                    self.close_connection = True
                    return
                self.answer(message, {"content": [{"type": "text", "text": "ok"}]})
            else:
                body = {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}}
                self.reply(200, json.dumps(body).encode(), "application/json")

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp", methods
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("rate", [None, "200"])
def test_http_errors_are_counted_by_status_and_a_broken_connection_as_transport(rate: str | None) -> None:
    pace = ["--rate", rate, "--duration", "0.5"] if rate else ["--requests", "100"]
    with failing_http_server() as (url, methods):
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "4", "--protocol", "legacy",
                          *pace, url])
    assert result.exit_code == 0, result.stderr
    overall = result.json["overall"]
    assert overall["requests"] == 100 == methods.count("tools/call")
    assert overall["errorsByKind"] == {"http 429": 10, "http 500": 10, "transport": 10}
    assert overall["ok"] == 70 and overall["errorRate"] == pytest.approx(0.3)


def test_the_open_loop_over_several_http_sessions_keeps_its_count(tmp_path: Path) -> None:
    with failing_http_server() as (url, methods):
        result = run_cli(["load", "--json", "--list", "tools", "--rate", "40", "--duration", "1",
                          "--connections", "2", "--concurrency", "4", "--protocol", "legacy", url])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert doc["settings"]["loop"] == "open" and doc["overall"]["ok"] == 40
    assert methods.count("initialize") == 2
    assert methods.count("tools/list") == 40, "--list needs only the capability: no list before the load"


@pytest.mark.interop
@pytest.mark.parametrize("rate", [None, "100"])
def test_over_http_sse_workers_send_the_load(everything: Path, rate: str | None) -> None:
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    pace = ["--rate", rate, "--duration", "0.5"] if rate else ["--requests", "50"]
    with http_server(["node", str(everything), "sse"], env=env) as base:
        result = run_cli(["load", "--json", "--call", "get-sum a=1 b=2", "--concurrency", "3", *pace,
                          f"{base}/sse"])
    assert result.exit_code == 0, result.stderr
    assert result.json["transport"] == "sse" and result.json["overall"]["ok"] == 50


def test_an_open_loop_timeout_is_counted_not_hung() -> None:
    started = time.monotonic()
    code, doc, _ = load(["--call", "hang", "--call", "work", "--rate", "20", "--duration", "1", "--timeout", "0.5"])
    assert code == 0
    by_op = {op["operation"]: op for op in doc["operations"]}
    assert by_op["call hang"]["errorsByKind"] == {"timeout": 10} and by_op["call work"]["ok"] == 10
    assert by_op["call hang"]["latencyUs"]["min"] >= 500_000
    assert time.monotonic() - started < 30


def test_ctrl_c_in_an_open_loop_reports_what_was_measured(tmp_path: Path) -> None:
    mark, pid_file = tmp_path / "mark", tmp_path / "pid"
    proc = subprocess.Popen([PY, "-m", "mcpprobe", "load", "--json", "-e", f"LOAD_MARK={mark}", "-e",
                             f"LOAD_PID_FILE={pid_file}", "--call", "work", "--rate", "100", "--duration", "120",
                             *server("--delay-ms", "5")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not mark.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert mark.exists(), "the load never reached the server"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    doc = checked(json.loads(out))
    assert doc["interrupted"] is True and doc["exitCode"] == 130 and doc["settings"]["loop"] == "open"
    assert doc["overall"]["requests"] >= 40
    assert not Path(f"/proc/{int(pid_file.read_text())}").exists(), "the server outlived the interrupted load"


def test_the_stdio_server_starts_before_the_imports_and_is_adopted() -> None:
    """`load -- COMMAND` is in the early start's table: its server boots while mcpprobe imports, and its
    stdout is read as the pipe's protocol receives it (wire/stdio.py `_read_direct`, `_PipeReader`)."""
    from tests.unit.wire.test_prestart import LAUNCH, _history, _mcpprobe

    done = _mcpprobe(LAUNCH, ["load", "--json", "--call", "work", "--requests", "20", "--concurrency", "3",
                              *server()])
    assert done.returncode == 0, done.stderr
    assert [event for event, _ in _history(done)] == ["started", "adopted"]
    assert json.loads(done.stdout)["overall"]["ok"] == 20


def test_the_server_samples_cover_its_whole_process_tree() -> None:
    """A shell that runs the server as its child (`; true` keeps the shell from exec'ing it): two
    processes of the server's session, found by walking mcpprobe's descendants."""
    import shlex

    inner = f"{shlex.quote(PY)} {shlex.quote(str(ROOT / 'tests' / 'fixtures' / 'load_server.py'))}; true"
    result = run_cli(["load", "--json", "--call", "work", "--rate", "20", "--duration", "1", "--interval", "0.25",
                      "--", "sh", "-c", inner])
    assert result.exit_code == 0, result.stderr
    samples = result.json["serverSamples"]
    assert samples and all(s["processes"] == 2 for s in samples), samples
    assert all(s["threads"] >= 2 and s["fds"] >= 6 for s in samples), samples


def test_force_sends_what_the_server_did_not_declare_and_says_so() -> None:
    from tests.conftest import FIXTURE

    result = run_cli(["load", "--json", "--list", "prompts", "--force", "--requests", "3", "--",
                      PY, str(FIXTURE), "tools-only"])
    assert result.exit_code == 0, result.stderr
    assert result.json["overall"]["errorsByKind"] == {"rpc -32601": 3}
    forced = [f for f in result.json["findings"] if f["code"] == "forced"]
    assert len(forced) == 1 and forced[0]["detail"] == {"method": "prompts/list", "missing": "prompts"}


# ----- a server that goes away during the run: exit 4, with the figures until then -----


@contextlib.contextmanager
def vanishing_http_server(after: int, concurrency: int) -> Iterator[str]:
    """A streamable HTTP MCP server (JSON answers) that answers `after` tools/call and then goes away:
    the calls after those unanswered, every connection ended, the listening socket closed, so that a new
    connection is refused. Yields its URL.

    It goes away only once the client has seen every answer: a client that keeps at most `concurrency`
    requests in flight has received answers 1..`after` when call `after + concurrency` arrives, so the
    calls past `after` are held (unanswered) until then. Going away on call `after + 1` lost, now and
    then, an answer still on the wire of the other connection, and the test's count with it."""
    lock = threading.Condition()
    calls = [0]
    gone = threading.Event()
    connections: list[Any] = []

    class Handler(JsonMcpHandler):
        server_name = "vanishing"

        def setup(self) -> None:
            super().setup()
            with lock:
                connections.append(self.connection)

        def do_POST(self) -> None:  # noqa: N802
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if gone.is_set():
                self.close_connection = True
                return
            if "id" not in message:
                self.reply(202, b"", "text/plain")
                return
            if self.session_request(message):
                return
            with lock:
                calls[0] += 1
                held = calls[0] > after
                if calls[0] == after + concurrency:
                    gone.set()
                    lock.notify_all()
                    threading.Thread(target=vanish, daemon=True).start()
                elif held:
                    lock.wait_for(gone.is_set, timeout=30)
            if held:
                self.close_connection = True
                return
            self.answer(message, {"content": [{"type": "text", "text": "ok"}]})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True

    def vanish() -> None:
        httpd.shutdown()
        httpd.server_close()
        import socket

        with lock:
            for connection in connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
    finally:
        if not gone.is_set():
            vanish()


@pytest.mark.parametrize("path", ["lean", "httpx"])
@pytest.mark.parametrize("rate", [None, "200"])
def test_an_http_server_that_goes_away_ends_the_run_with_exit_4_and_its_figures(path: str, rate: str | None) -> None:
    """Before: over HTTP the run went on, counting thousands of refused connections as `transport` errors in
    a fraction of a millisecond each, and exited 0. A refused new connection is the server gone; a
    connection that breaks mid-answer stays one request's error (the test above)."""
    pace = ["--rate", rate] if rate else []
    # A user's Accept-Encoding keeps every POST on httpx (docs/commands/load.md): both paths are held to it.
    headers = ["-H", "Accept-Encoding: identity"] if path == "httpx" else []
    started = time.monotonic()
    with vanishing_http_server(after=30, concurrency=2) as url:
        result = run_cli(["load", "--json", "--call", "work", "--concurrency", "2", "--protocol", "legacy",
                          "--duration", "60", *pace, *headers, url])
    assert result.exit_code == 4, (result.exit_code, result.stderr)
    assert time.monotonic() - started < 45, "the run ended when the server went away, not at its duration"
    doc = result.json
    assert doc["overall"]["ok"] == 30, doc["overall"]
    assert doc["overall"]["requests"] < 200, doc["overall"]
    said = result.stderr + json.dumps(doc["findings"]) + json.dumps(doc.get("error"))
    assert "the server went away during the run: cannot connect" in said, said


def test_a_stdio_server_that_exits_during_the_run_ends_it_with_exit_4_and_its_figures() -> None:
    code, doc, err = load(["--call", "work", "--concurrency", "2", "--duration", "60"], "--exit-after", "40")
    assert code == 4, err
    assert doc is not None and doc["overall"]["ok"] == 39, doc and doc["overall"]
    assert doc["overall"]["requests"] <= 41
