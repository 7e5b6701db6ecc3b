"""The benchmark's floor: a bare JSON-RPC client doing exactly what `mcpprobe probe` does on the wire.

Standard library only, no validation, no rendering: initialize (protocol 2025-11-25, no client
capabilities), notifications/initialized, then every kind the server declared listed to the end
(following nextCursor), then the server is ended. Whatever a full client costs beyond this is the
client's own overhead.

Usage::

    python bench/floor.py -- COMMAND [ARGS...]     # stdio: newline-delimited JSON-RPC
    python bench/floor.py http://127.0.0.1:3001/mcp  # streamable HTTP
    python bench/floor.py --kind tools -- COMMAND    # one kind only, as `mcpprobe list tools` does

Prints one line per kind (`tools 13 items, 1 page`) and exits 0; exits 1 on any failure.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import urllib.request
from typing import Any

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "mcpprobe-bench-floor", "version": "0"}
# kind -> (method, capability, result key)
KINDS = (
    ("tools", "tools/list", "tools", "tools"),
    ("resources", "resources/list", "resources", "resources"),
    ("templates", "resources/templates/list", "resources", "resourceTemplates"),
    ("prompts", "prompts/list", "prompts", "prompts"),
)
MAX_PAGES = 10_000


class FloorError(Exception):
    pass


class StdioPeer:
    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin = self.proc.stdin
        self.stdout = self.proc.stdout
        self.next_id = 0

    def _send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.stdin.flush()

    def notify(self, method: str) -> None:
        self._send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        wanted = self.next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": wanted, "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)
        while True:
            line = self.stdout.readline()
            if not line:
                raise FloorError(f"the server closed its stdout during {method}")
            try:
                reply = json.loads(line)
            except ValueError:
                continue  # not JSON-RPC: ignored, as a lenient client would
            if not isinstance(reply, dict):
                continue
            if "method" in reply:
                if "id" in reply:  # a server request: ping gets {}, anything else Method not found
                    if reply["method"] == "ping":
                        self._send({"jsonrpc": "2.0", "id": reply["id"], "result": {}})
                    else:
                        self._send({"jsonrpc": "2.0", "id": reply["id"],
                                    "error": {"code": -32601, "message": "Method not found"}})
                continue  # notifications are ignored
            if reply.get("id") == wanted:
                return _result(method, reply)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.stdin.close()
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stdout.close()


class HttpPeer:
    def __init__(self, url: str) -> None:
        self.url = url
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.next_id = 0

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if self.session_id:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version:
            headers["MCP-Protocol-Version"] = self.protocol_version
        return headers

    def _post(self, message: dict[str, Any]) -> Any:
        body = json.dumps(message, separators=(",", ":")).encode()
        request = urllib.request.Request(self.url, data=body, headers=self._headers(), method="POST")
        return urllib.request.urlopen(request, timeout=60)

    def notify(self, method: str) -> None:
        with self._post({"jsonrpc": "2.0", "method": method}) as response:
            response.read()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        wanted = self.next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": wanted, "method": method}
        if params is not None:
            message["params"] = params
        with self._post(message) as response:
            session = response.headers.get("Mcp-Session-Id")
            if session:
                self.session_id = session
            content_type = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if content_type == "text/event-stream":
                reply = _first_reply_in_sse(response, wanted)
            else:
                reply = json.loads(response.read())
        if isinstance(reply, list):  # a batch answer (2025-03-26 servers may send one)
            reply = next((r for r in reply if isinstance(r, dict) and r.get("id") == wanted), None)
        if not isinstance(reply, dict) or reply.get("id") != wanted:
            raise FloorError(f"no answer to {method}")
        return _result(method, reply)

    def close(self) -> None:
        if not self.session_id:
            return
        request = urllib.request.Request(self.url, headers=self._headers(), method="DELETE")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                response.read()
        except OSError:
            pass  # a server may refuse DELETE (405): the session simply expires


def _first_reply_in_sse(response: Any, wanted: int) -> Any:
    """Read SSE events until the one carrying the response to `wanted`; then stop reading."""
    data: list[str] = []
    for raw in response:
        line = raw.decode("utf-8").rstrip("\r\n")
        if line == "":
            if data:
                try:
                    message = json.loads("\n".join(data))
                except ValueError:
                    message = None
                data = []
                if isinstance(message, dict) and message.get("id") == wanted and "method" not in message:
                    return message
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if field == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    raise FloorError("the event stream ended without the response")


def _result(method: str, reply: dict[str, Any]) -> dict[str, Any]:
    if "error" in reply:
        error = reply["error"] if isinstance(reply["error"], dict) else {}
        raise FloorError(f"{method}: error {error.get('code')} {error.get('message')}")
    result = reply.get("result")
    if not isinstance(result, dict):
        raise FloorError(f"{method}: no result object")
    return result


def run(peer: StdioPeer | HttpPeer, only: str | None = None) -> list[str]:
    result = peer.request("initialize", {
        "protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO})
    if isinstance(peer, HttpPeer):
        peer.protocol_version = str(result.get("protocolVersion") or PROTOCOL_VERSION)
    capabilities = result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {}
    peer.notify("notifications/initialized")
    lines = []
    for kind, method, capability, key in KINDS:
        if capability not in capabilities or (only is not None and kind != only):
            continue
        count = pages = 0
        cursor = None
        while pages < MAX_PAGES:
            page = peer.request(method, {"cursor": cursor} if cursor is not None else None)
            pages += 1
            items = page.get(key)
            count += len(items) if isinstance(items, list) else 0
            cursor = page.get("nextCursor")
            if not cursor:
                break
        lines.append(f"{kind} {count} items, {pages} page{'s' if pages != 1 else ''}")
    return lines


def main(argv: list[str]) -> int:
    only = None
    if len(argv) >= 2 and argv[0] == "--kind":
        only, argv = argv[1], argv[2:]
    if argv and argv[0] == "--" and len(argv) > 1:
        peer: StdioPeer | HttpPeer = StdioPeer(argv[1:])
    elif len(argv) == 1 and "://" in argv[0]:
        peer = HttpPeer(argv[0])
    else:
        print("usage: python bench/floor.py [--kind KIND] -- COMMAND [ARGS...]\n"
              "       python bench/floor.py [--kind KIND] URL", file=sys.stderr)
        return 2
    try:
        lines = run(peer, only)
    except (FloorError, OSError, ValueError) as exc:
        print(f"floor: {exc}", file=sys.stderr)
        return 1
    finally:
        peer.close()
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
