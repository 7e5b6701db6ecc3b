"""End-to-end tests of the bundled demo server (``mcpprobe-demo``), run as a real subprocess.

The clients here are deliberately tiny and stdlib-only (JSON lines over pipes,
urllib over HTTP), so these tests check the wire, not the SDK's client.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
PROTOCOL_VERSION = "2025-11-25"
TIMEOUT = 20.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "test_demo_server", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _start(*args: str, stdin: int | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "mcpprobe.demo", *args],
        stdin=stdin if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        env=_env(),
        cwd=REPO_ROOT,
    )


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


class _LineReader:
    """Read a pipe's lines on a thread so every read can time out."""

    def __init__(self, stream: Any) -> None:
        self._lines: queue.Queue[str | None] = queue.Queue()
        thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        thread.start()

    def _pump(self, stream: Any) -> None:
        try:
            for line in stream:
                self._lines.put(line)
        except (OSError, ValueError):
            pass
        self._lines.put(None)

    def readline(self, timeout: float = TIMEOUT) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout}s") from None
        if line is None:
            raise AssertionError("stream closed")
        return line


class StdioClient:
    """A minimal JSON-RPC-over-stdio client."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc
        self.reader = _LineReader(proc.stdout)
        self.notifications: list[dict[str, Any]] = []
        self._next_id = 100

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return the whole response message (result or error)."""
        self._next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            line = self.reader.readline()
            reply = json.loads(line)  # every stdout line must be a JSON-RPC message
            assert reply.get("jsonrpc") == "2.0", line
            if "id" in reply and reply["id"] == self._next_id and "method" not in reply:
                return reply
            self.notifications.append(reply)

    def result(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        reply = self.request(method, params)
        assert "result" in reply, reply
        return reply["result"]

    def list_all(self, method: str, key: str) -> tuple[list[dict[str, Any]], int]:
        """Follow nextCursor to the end; return the items and the number of pages."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        pages = 0
        while True:
            result = self.result(method, {"cursor": cursor} if cursor is not None else None)
            pages += 1
            items.extend(result[key])
            cursor = result.get("nextCursor")
            if not cursor:
                return items, pages
            assert pages < 20, "pagination does not terminate"


@pytest.fixture
def stdio_client():
    proc = _start(stdin=subprocess.PIPE)
    try:
        client = StdioClient(proc)
        reply = client.request("initialize", INITIALIZE["params"])
        client.init_result = reply["result"]  # type: ignore[attr-defined]
        client.send(INITIALIZED)
        yield client
    finally:
        _stop(proc)


def test_stdio_initialize_declares_capabilities(stdio_client: StdioClient) -> None:
    init = stdio_client.init_result  # type: ignore[attr-defined]
    assert init["protocolVersion"] == PROTOCOL_VERSION
    assert init["serverInfo"]["name"] == "mcpprobe-demo"
    from mcpprobe import __version__

    assert init["serverInfo"]["version"] == __version__
    assert init["instructions"]
    caps = init["capabilities"]
    assert caps["tools"] == {"listChanged": True}
    assert caps["prompts"] == {"listChanged": True}
    assert caps["resources"]["subscribe"] is False
    assert "completions" in caps
    assert "logging" in caps


def test_stdio_lists_paginate(stdio_client: StdioClient) -> None:
    tools, pages = stdio_client.list_all("tools/list", "tools")
    assert (len(tools), pages) == (12, 3)
    names = [t["name"] for t in tools]
    assert len(set(names)) == 12
    assert {"echo", "add", "divide", "format_text", "delete_note", "count_slowly", "color_swatch"} <= set(
        names
    )
    for tool in tools:
        assert tool["title"] and tool["description"]
        assert tool["inputSchema"]["type"] == "object"
    by_name = {t["name"]: t for t in tools}
    assert by_name["add"]["outputSchema"]["properties"]["sum"]["type"] == "integer"
    assert by_name["echo"]["annotations"]["readOnlyHint"] is True
    assert by_name["delete_note"]["annotations"]["destructiveHint"] is True
    fmt = by_name["format_text"]["inputSchema"]["properties"]
    assert fmt["style"]["enum"] and fmt["reverse"]["type"] == "boolean"

    resources, pages = stdio_client.list_all("resources/list", "resources")
    assert (len(resources), pages) == (8, 2)
    mime = {r["uri"]: r.get("mimeType") for r in resources}
    assert mime["demo://swatch.png"] == "image/png"
    assert "demo://readme" in mime and "demo://notes/1" in mime

    templates, pages = stdio_client.list_all("resources/templates/list", "resourceTemplates")
    assert [t["uriTemplate"] for t in templates] == ["demo://notes/{id}"]

    prompts, pages = stdio_client.list_all("prompts/list", "prompts")
    assert len(prompts) == 3
    args = {p["name"]: p.get("arguments") or [] for p in prompts}
    assert any(a.get("required") for a in args["summarize_note"])
    assert all(not a.get("required") for a in args["draft_note"])


def test_stdio_bad_cursor_is_invalid_params(stdio_client: StdioClient) -> None:
    reply = stdio_client.request("tools/list", {"cursor": "not-a-cursor"})
    assert reply["error"]["code"] == -32602


def test_stdio_tool_calls(stdio_client: StdioClient) -> None:
    result = stdio_client.result("tools/call", {"name": "add", "arguments": {"a": 2, "b": 40}})
    assert result["structuredContent"] == {"sum": 42}
    assert result["content"][0] == {"type": "text", "text": "42"}
    assert not result.get("isError")

    result = stdio_client.result("tools/call", {"name": "echo", "arguments": {"message": "hello"}})
    assert result["content"][0]["text"] == "hello"

    result = stdio_client.result("tools/call", {"name": "divide", "arguments": {"a": 1, "b": 0}})
    assert result["isError"] is True

    result = stdio_client.result("tools/call", {"name": "add", "arguments": {"a": "x", "b": 1}})
    assert result["isError"] is True

    result = stdio_client.result("tools/call", {"name": "color_swatch", "arguments": {"color": "red"}})
    image = result["content"][0]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    import base64

    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")

    reply = stdio_client.request("tools/call", {"name": "no_such_tool", "arguments": {}})
    assert "error" in reply


def test_stdio_progress_notifications(stdio_client: StdioClient) -> None:
    result = stdio_client.result(
        "tools/call",
        {"name": "count_slowly", "arguments": {"to": 3, "delay_ms": 0}, "_meta": {"progressToken": "tok"}},
    )
    assert result["content"][0]["text"] == "1 2 3"
    progress = [n for n in stdio_client.notifications if n["method"] == "notifications/progress"]
    assert [n["params"]["progress"] for n in progress] == [1, 2, 3]
    assert all(n["params"]["progressToken"] == "tok" for n in progress)


def test_stdio_resources_prompts_completions(stdio_client: StdioClient) -> None:
    result = stdio_client.result("resources/read", {"uri": "demo://notes/2"})
    assert "release" in result["contents"][0]["text"].lower()
    result = stdio_client.result("resources/read", {"uri": "demo://swatch.png"})
    assert result["contents"][0]["mimeType"] == "image/png" and result["contents"][0]["blob"]
    reply = stdio_client.request("resources/read", {"uri": "demo://notes/999"})
    assert reply["error"]["code"] == -32602

    result = stdio_client.result("prompts/get", {"name": "summarize_note", "arguments": {"note_id": "1"}})
    assert result["messages"]
    reply = stdio_client.request("prompts/get", {"name": "summarize_note", "arguments": {}})
    assert reply["error"]["code"] == -32602
    result = stdio_client.result("prompts/get", {"name": "draft_note"})
    assert result["messages"][0]["role"] == "user"

    result = stdio_client.result(
        "completion/complete",
        {"ref": {"type": "ref/prompt", "name": "draft_note"}, "argument": {"name": "tone", "value": "f"}},
    )
    assert sorted(result["completion"]["values"]) == ["formal", "friendly"]
    result = stdio_client.result(
        "completion/complete",
        {
            "ref": {"type": "ref/resource", "uri": "demo://notes/{id}"},
            "argument": {"name": "id", "value": ""},
        },
    )
    assert result["completion"]["values"][:2] == ["1", "2"]

    assert stdio_client.result("logging/setLevel", {"level": "warning"}) == {}


def test_stdio_exits_on_eof_and_sigterm() -> None:
    proc = _start(stdin=subprocess.PIPE)
    try:
        assert proc.stdin is not None
        proc.stdin.close()
        assert proc.wait(timeout=TIMEOUT) == 0
    finally:
        _stop(proc)

    proc = _start(stdin=subprocess.PIPE)
    try:
        client = StdioClient(proc)
        assert "result" in client.request("ping")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=TIMEOUT) == 0
        assert proc.stderr is not None
        assert "Traceback" not in proc.stderr.read()
    finally:
        _stop(proc)


# -- HTTP ------------------------------------------------------------------------------


def _listening_url(proc: subprocess.Popen[str]) -> str:
    line = _LineReader(proc.stdout).readline()
    assert line.startswith("LISTENING http://127.0.0.1:"), line
    return line.split()[1]


def _parse_body(content_type: str, body: str) -> list[dict[str, Any]]:
    """A JSON body, or the JSON messages in an SSE body's data: lines."""
    if content_type.startswith("application/json"):
        return [json.loads(body)] if body.strip() else []
    assert content_type.startswith("text/event-stream"), content_type
    messages: list[dict[str, Any]] = []
    data: list[str] = []
    for line in body.splitlines() + [""]:
        if line.startswith("data:"):
            data.append(line[5:].lstrip(" "))
        elif not line and data:
            messages.append(json.loads("\n".join(data)))
            data = []
    return messages


def _post(
    url: str, message: dict[str, Any], headers: dict[str, str]
) -> tuple[int, Any, list[dict[str, Any]]]:
    request = urllib.request.Request(
        url,
        data=json.dumps(message).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **headers,
        },
    )
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        body = response.read().decode()
        content_type = response.headers.get("Content-Type", "")
        return response.status, response.headers, _parse_body(content_type, body) if body else []


def test_streamable_http() -> None:
    proc = _start("--http", "0")
    try:
        url = _listening_url(proc)
        assert url.endswith("/mcp")
        status, headers, messages = _post(url, INITIALIZE, {})
        assert status == 200
        session_id = headers.get("Mcp-Session-Id")
        assert session_id
        (init,) = [m for m in messages if m.get("id") == 1]
        assert init["result"]["protocolVersion"] == PROTOCOL_VERSION
        assert init["result"]["capabilities"]["tools"] == {"listChanged": True}

        session = {"Mcp-Session-Id": session_id, "MCP-Protocol-Version": PROTOCOL_VERSION}
        status, _, _ = _post(url, INITIALIZED, session)
        assert status == 202

        status, _, messages = _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
        (reply,) = [m for m in messages if m.get("id") == 2]
        assert len(reply["result"]["tools"]) == 5
        assert reply["result"]["nextCursor"]

        cursor = reply["result"]["nextCursor"]
        status, _, messages = _post(
            url, {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": cursor}}, session
        )
        (reply,) = [m for m in messages if m.get("id") == 3]
        assert len(reply["result"]["tools"]) == 5
    finally:
        _stop(proc)
    assert proc.returncode == 0


def test_legacy_sse() -> None:
    proc = _start("--sse", "0")
    try:
        url = _listening_url(proc)
        assert url.endswith("/sse")
        base = url[: -len("/sse")]
        stream = urllib.request.urlopen(
            urllib.request.Request(url, headers={"Accept": "text/event-stream"}), timeout=TIMEOUT
        )
        try:

            def next_event() -> tuple[str, str]:
                event, data = "message", []
                while True:
                    line = stream.readline().decode().rstrip("\r\n")
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip(" "))
                    elif not line and data:
                        return event, "\n".join(data)

            event, endpoint = next_event()
            assert event == "endpoint" and endpoint.startswith("/messages/")
            request = urllib.request.Request(
                base + endpoint,
                data=json.dumps(INITIALIZE).encode(),
                method="POST",
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                assert response.status == 202
            event, data = next_event()
            reply = json.loads(data)
            assert reply["id"] == 1
            assert reply["result"]["serverInfo"]["name"] == "mcpprobe-demo"
        finally:
            stream.close()
    finally:
        _stop(proc)


def test_help_and_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mcpprobe.demo", "--help"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=TIMEOUT,
    )
    assert out.returncode == 0
    assert "--http" in out.stdout and "--sse" in out.stdout
