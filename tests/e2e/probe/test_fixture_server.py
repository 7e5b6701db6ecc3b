"""Self-test for tests/fixtures/fixture_server.py: guards the fixture, not mcpprobe."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

FIXTURE = Path(__file__).parents[2] / "fixtures" / "fixture_server.py"
TIMEOUT = 2.0
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "selftest", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(FIXTURE), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait(timeout=5)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream:
            stream.close()


class StdioClient:
    """Minimal newline-delimited JSON-RPC client; a reader thread enforces timeouts."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **msg}).encode() + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> dict[str, Any]:
        return json.loads(self.lines.get(timeout=TIMEOUT))

    def request(self, method: str, params: dict[str, Any] | None = None, req_id: Any = None) -> dict[str, Any]:
        if req_id is None:
            self.next_id += 1
            req_id = self.next_id
        msg: dict[str, Any] = {"id": req_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        reply = self.recv()
        assert reply["id"] == req_id
        return reply

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities or {},
            "clientInfo": {"name": "selftest", "version": "0"},
        }
        reply = self.request("initialize", params)
        self.send({"method": "notifications/initialized"})
        return reply


@contextmanager
def stdio(scenario: str, env: dict[str, str] | None = None) -> Iterator[StdioClient]:
    proc = spawn(scenario, env=env)
    try:
        yield StdioClient(proc)
    finally:
        stop(proc)


def test_full_over_stdio() -> None:
    with stdio("full") as client:
        init = client.initialize()["result"]
        assert init["protocolVersion"] == "2025-06-18"
        assert init["serverInfo"]["name"] == "fixture-full"
        assert init["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}

        tools = client.request("tools/list", {}, req_id="str-id")["result"]
        assert [t["name"] for t in tools["tools"]] == ["echo", "add"]
        assert "nextCursor" not in tools

        added = client.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})["result"]
        assert added["structuredContent"] == {"sum": 5}
        unknown = client.request("tools/call", {"name": "nope", "arguments": {}})["result"]
        assert unknown["isError"] is True

        read = client.request("resources/read", {"uri": "fixture://readme"})["result"]
        assert read["contents"][0]["mimeType"] == "text/plain"
        assert client.request("resources/read", {"uri": "fixture://x"})["error"]["code"] == -32002
        greet = client.request("prompts/get", {"name": "greet", "arguments": {"name": "Ada"}})["result"]
        assert greet["messages"][0]["role"] == "user"
        assert client.request("server/discover", {})["error"]["code"] == -32601
        assert client.request("ping")["result"] == {}


def test_undeclared_capability_and_record(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    with stdio("tools-only", env={"FIXTURE_RECORD": str(record)}) as client:
        init = client.initialize()["result"]
        assert init["capabilities"] == {"tools": {}}
        assert client.request("prompts/list", {})["error"]["code"] == -32601
    entries = [json.loads(line) for line in record.read_text().splitlines()]
    assert [e["method"] for e in entries] == ["initialize", "notifications/initialized", "prompts/list"]


def test_paginated_over_stdio() -> None:
    env = {"FIXTURE_TOOLS": "250", "FIXTURE_PAGE_SIZE": "100"}
    with stdio("paginated", env=env) as client:
        client.initialize()
        names: list[str] = []
        cursor = None
        pages = 0
        while True:
            result = client.request("tools/list", {"cursor": cursor} if cursor else {})["result"]
            pages += 1
            names += [t["name"] for t in result["tools"]]
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        assert pages == 3
        assert len(names) == len(set(names)) == 250
        assert names[0] == "tool_00001" and names[-1] == "tool_00250"


def test_repeated_cursor() -> None:
    with stdio("repeated-cursor") as client:
        client.initialize()
        first = client.request("tools/list", {})["result"]
        assert len(first["tools"]) == 2 and first["nextCursor"] == "again"
        for _ in range(3):
            again = client.request("tools/list", {"cursor": "again"})["result"]
            assert len(again["tools"]) == 2 and again["nextCursor"] == "again"


def test_modern_over_stdio() -> None:
    with stdio("modern") as client:
        disc = client.request("server/discover", {"_meta": MODERN_META})["result"]
        assert disc["supportedVersions"] == ["2026-07-28"]
        assert disc["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "fixture-modern"
        assert client.request("initialize", {"protocolVersion": "2025-06-18"})["error"]["code"] == -32601
        assert client.request("tools/list", {})["error"]["code"] == -32602
        bad = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2025-01-01"}
        err = client.request("tools/list", {"_meta": bad})["error"]
        assert err["code"] == -32022 and err["data"]["requested"] == "2025-01-01"
        tools = client.request("tools/list", {"_meta": MODERN_META})["result"]
        assert [t["name"] for t in tools["tools"]] == ["echo", "add"]


def test_unknown_scenario_and_crash_on_start() -> None:
    for scenario, code in (("no-such-scenario", 2), ("crash-on-start", 1)):
        proc = spawn(scenario)
        try:
            _, err = proc.communicate(timeout=TIMEOUT)
            assert proc.returncode == code
            assert b"Traceback" not in err and err
        finally:
            stop(proc)


def post(url: str, msg: dict[str, Any], session: str | None = None) -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    req = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", **msg}).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            body = resp.read()
            return resp.status, dict(resp.headers), json.loads(body) if body else None
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), None


def test_full_over_http() -> None:
    proc = spawn("full", "--http")
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        assert line.startswith("LISTENING http://127.0.0.1:") and line.endswith("/mcp")
        url = line.split()[1]

        init = {"id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
        status, headers, body = post(url, init)
        assert status == 200 and body["result"]["serverInfo"]["name"] == "fixture-full"
        session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]

        status, _, _ = post(url, {"method": "notifications/initialized"}, session)
        assert status == 202
        status, _, body = post(url, {"id": "t", "method": "tools/list", "params": {}}, session)
        assert status == 200 and [t["name"] for t in body["result"]["tools"]] == ["echo", "add"]
        assert post(url, {"id": 3, "method": "tools/list"})[0] == 400
        assert post(url, {"id": 4, "method": "tools/list"}, "unknown-session")[0] == 404
    finally:
        stop(proc)


@pytest.mark.parametrize("scenario", ["full", "hang-initialize"])
def test_http_sigterm_is_quiet(scenario: str) -> None:
    proc = spawn(scenario, "--http")
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith(b"LISTENING ")
        proc.terminate()
        _, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0 and err == b""
    finally:
        stop(proc)
