"""Against real servers on other SDKs, old and new, each installed from the package index at test time.

- mcp 1.2 (protocol 2024-11-05) over stdio: it dies on the unknown `server/discover` sent before
  `initialize`, so `--protocol auto` must start it again and use the handshake; its low-level
  `Server` without a template handler answers `resources/templates/list` with -32601, which is
  no error (templates are an optional part of `resources`);
- FastMCP 2.12 (mcp 1.16) over streamable HTTP and legacy SSE: it answers the discover POST with
  HTTP 400 (no session yet), which must mean "legacy, at once", not a wait;
- FastMCP 4.2 (mcp 2.3) over stdio, streamable HTTP and legacy SSE: a modern 2026-07-28 server; over stdio it is
  started behind a deliberate 3 s delay, longer than the discover wait, so the late-start path
  (the late discover answer held until the initialize sent meanwhile is refused with -32022, which
  keeps the process modern) is taken on purpose, not by luck; over legacy SSE it gets initialize
  alone (2026-07-28 does not define that transport).

Each runs from a virtual environment built once into the test cache (see `python_server_env`).
"""

from __future__ import annotations

import queue
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
from conftest import ROOT, end_group, python_server_env, run_cli

pytestmark = pytest.mark.interop

MCP1_SERVER = ROOT / "tests" / "fixtures" / "mcp1_server.py"
FASTMCP_SERVER = ROOT / "tests" / "fixtures" / "fastmcp_server.py"
CATALOG = {"tools": 2, "resources": 1, "templates": 0, "prompts": 1}


@pytest.fixture(scope="module")
def mcp1() -> Path:
    return python_server_env("mcp-1.2.1")


@pytest.fixture(scope="module")
def fastmcp2() -> Path:
    return python_server_env("fastmcp-2.12.5")


@pytest.fixture(scope="module")
def fastmcp4() -> Path:
    return python_server_env("fastmcp-4.2.3")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _pump(stream: IO[str], lines: queue.Queue[str]) -> None:
    """Pass the lines on, then "" at the end; it also keeps the pipe drained while the test runs."""
    for line in stream:
        lines.put(line)
    lines.put("")


@contextmanager
def fastmcp_http(python: Path, transport: str) -> Iterator[str]:
    """Run a FastMCP HTTP server; yield its URL once uvicorn says it listens; always end it.

    FastMCP 2.12 takes port 0 for "the default, 8000", so a free port is picked here. Another test
    worker may take it before the server binds it: that server then ends without listening, and it is
    started again on a fresh port. Only our own process's "Uvicorn running on" line counts as
    listening, never a connection that another process could have accepted."""
    for _ in range(3):
        argv = [str(python), str(FASTMCP_SERVER), transport, str(_free_port())]
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        lines: queue.Queue[str] = queue.Queue()
        assert proc.stderr is not None
        threading.Thread(target=_pump, args=(proc.stderr, lines), daemon=True).start()
        try:
            seen: list[str] = []
            deadline = time.monotonic() + 60  # FastMCP imports take seconds on a loaded machine
            while time.monotonic() < deadline:
                try:
                    line = lines.get(timeout=1)
                except queue.Empty:
                    continue
                seen.append(line)
                if not line or "Uvicorn running on " in line:
                    break
            else:
                raise RuntimeError(f"server did not listen within 60 s: {argv}: {''.join(seen)[-2000:]}")
            if line:
                base = line.split("Uvicorn running on ", 1)[1].split()[0]
                yield f"{base}/{'sse' if transport == 'sse' else 'mcp'}"
                return
            if "address already in use" not in "".join(seen).lower():
                raise RuntimeError(f"server ended before listening: {argv}: {''.join(seen)[-2000:]}")
        finally:
            end_group(proc, 10)
    raise RuntimeError(f"every port tried was taken before the server bound it: {argv}")


def _assert_catalog(doc: dict) -> None:
    kinds = doc["kinds"]
    assert {k: v["state"] for k, v in kinds.items()} == dict.fromkeys(CATALOG, "complete")
    assert {k: v["count"] for k, v in kinds.items()} == CATALOG
    assert {t["name"] for t in kinds["tools"]["items"]} == {"add", "echo"}
    assert [r["uri"] for r in kinds["resources"]["items"]] == ["note://greeting"]
    assert [p["name"] for p in kinds["prompts"]["items"]] == ["greet"]


def _assert_no_errors(doc: dict) -> None:
    assert [f for f in doc["findings"] if f["severity"] == "error"] == []


# ----- mcp 1.2: dies on server/discover -----

def test_old_sdk_server_over_stdio(mcp1):
    result = run_cli(["probe", "--json", "--", str(mcp1), str(MCP1_SERVER)])
    doc = result.json
    assert result.exit_code == 0, result.stderr
    assert doc["era"] == "legacy"
    assert doc["protocolVersion"] == "2024-11-05"
    assert doc["serverInfo"]["name"] == "old-sdk-fixture"
    _assert_catalog(doc)
    _assert_no_errors(doc)


def test_old_sdk_server_call(mcp1):
    result = run_cli(["call", "add", "a=2", "b=3", "--json", "--yes", "--", str(mcp1), str(MCP1_SERVER)])
    assert result.exit_code == 0, result.stderr
    assert result.json["result"]["content"] == [{"type": "text", "text": "5"}]
    assert result.json["era"] == "legacy"


def test_old_sdk_server_legacy_skips_discover(mcp1):
    """With --protocol legacy nothing is sent before initialize, so the old server lives on."""
    result = run_cli(["list", "tools", "--json", "--protocol", "legacy", "--", str(mcp1), str(MCP1_SERVER)])
    assert result.exit_code == 0, result.stderr
    assert [item["name"] for item in result.json["items"]] == ["add", "echo"]
    assert result.json["protocolVersion"] == "2024-11-05"


MCP1_LOWLEVEL_SERVER = ROOT / "tests" / "fixtures" / "mcp1_lowlevel_server.py"


def test_old_sdk_lowlevel_server_without_templates_is_healthy(mcp1):
    """mcp 1.x's low-level Server declares `resources` for a resources/list handler and answers
    resources/templates/list, for which it has none, with -32601: an optional part, so exit 0."""
    result = run_cli(["probe", "--json", "--", str(mcp1), str(MCP1_LOWLEVEL_SERVER)])
    doc = result.json
    assert result.exit_code == 0, doc["findings"]
    assert doc["protocolVersion"] == "2024-11-05"
    assert "resources" in doc["capabilities"]
    assert {k: v["state"] for k, v in doc["kinds"].items()} == {
        "tools": "complete", "resources": "complete", "templates": "not-implemented", "prompts": "not-declared"}
    found = [f for f in doc["findings"] if f["code"] == "not-implemented"]
    assert [(f["severity"], f["kind"], f["detail"]["rpcCode"]) for f in found] == [("info", "templates", -32601)]
    _assert_no_errors(doc)


# ----- FastMCP 2.12: HTTP 400 for discover -----

@pytest.mark.parametrize("transport", ["http", "sse"])
def test_fastmcp2_probe(fastmcp2, transport):
    with fastmcp_http(fastmcp2, transport) as url:
        result = run_cli(["probe", "--json", url])
    doc = result.json
    assert result.exit_code == 0, result.stderr
    assert doc["transport"] == transport
    assert doc["era"] == "legacy"
    assert doc["protocolVersion"] == "2025-06-18"
    assert doc["serverInfo"]["name"] == "fastmcp-fixture"
    _assert_catalog(doc)
    _assert_no_errors(doc)
    # The refusal of server/discover is an answer: no wait for silence, so no era-fallback warning.
    assert "era-fallback" not in result.codes(), doc["eraReason"]


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_fastmcp2_list_and_call(fastmcp2, transport):
    with fastmcp_http(fastmcp2, transport) as url:
        listed = run_cli(["list", "tools", "--json", url])
        called = run_cli(["call", "echo", "text=hé", "--json", "--yes", url])
    assert listed.exit_code == 0, listed.stderr
    assert [item["name"] for item in listed.json["items"]] == ["add", "echo"]
    assert called.exit_code == 0, called.stderr
    assert called.json["result"]["content"] == [{"type": "text", "text": "hé"}]


# ----- FastMCP 4.2: modern 2026-07-28 -----

def _slow_fastmcp4(python: Path) -> list[str]:
    # 3 s before the server even starts: longer than the 2 s discover wait, on every machine.
    return ["sh", "-c", 'sleep 3; exec "$0" "$1" stdio', str(python), str(FASTMCP_SERVER)]


def test_fastmcp4_slow_start_over_stdio(fastmcp4):
    result = run_cli(["probe", "--json", "--", *_slow_fastmcp4(fastmcp4)])
    doc = result.json
    assert result.exit_code == 0, result.stderr
    assert doc["era"] == "modern"
    assert doc["protocolVersion"] == "2026-07-28"
    assert doc["serverInfo"]["name"] == "fastmcp-fixture"
    _assert_catalog(doc)
    _assert_no_errors(doc)


def test_fastmcp4_slow_start_call(fastmcp4):
    result = run_cli(["call", "add", "a=2", "b=3", "--json", "--yes", "--", *_slow_fastmcp4(fastmcp4)])
    assert result.exit_code == 0, result.stderr
    assert result.json["era"] == "modern"
    assert result.json["structuredContent"] == {"result": 5}


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_fastmcp4_over_http(fastmcp4, transport):
    with fastmcp_http(fastmcp4, transport) as url:
        probed = run_cli(["probe", "--json", url])
        called = run_cli(["call", "add", "a=2", "b=3", "--json", "--yes", url])
        prompt = run_cli(["get-prompt", "greet", "name=Ada", "--json", url])
        read = run_cli(["read", "note://greeting", "--json", url])
    doc = probed.json
    assert probed.exit_code == 0, probed.stderr
    assert doc["transport"] == transport
    # 2026-07-28 defines stdio and streamable HTTP only: over HTTP+SSE, initialize alone, though
    # FastMCP 4 would answer server/discover there too (docs/negotiation.md#transports-and-revisions).
    expected = ("modern", "2026-07-28") if transport == "http" else ("legacy", "2025-11-25")
    assert (doc["era"], doc["protocolVersion"]) == expected
    assert "era-fallback" not in probed.codes()
    _assert_catalog(doc)
    _assert_no_errors(doc)
    assert called.exit_code == 0, called.stderr
    assert called.json["structuredContent"] == {"result": 5}
    assert prompt.exit_code == 0, prompt.stderr
    assert "Say hello to Ada." in str(prompt.json["result"]["messages"])
    assert read.exit_code == 0, read.stderr
    assert read.json["result"]["contents"][0]["text"] == "hello from FastMCP"
