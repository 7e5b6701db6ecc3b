"""The HTTP tap is transparent on the wire: a raw TCP recorder on each side of `mcpprobe tap --listen`
(client -> recorder -> tap -> recorder -> server-everything over streamable HTTP), each official SDK's client as
the host, and the two transcripts parsed as HTTP/1.1 hold the same exchanges: the same requests (method, target,
headers, body bytes) and the same answers (status, headers, body bytes once de-chunked: a JSON body, an event
stream), but for the headers a proxy sets anew for each side. No finding."""

from __future__ import annotations

import json
import math
import socket
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import h11
import pytest

from tests.conftest import BIND_LOOPBACK, PY, ROOT, http_server
from tests.e2e.tap.test_http import FIXTURES, tapped
from tests.fixtures.tap.tcp_recorder import Link, Recorder

# What a proxy sets for each side of it (docs/commands/tap.md: "the hop-by-hop headers, Host and Content-Length
# are set anew for each side"): written here, not taken from the tap, so that the tap cannot widen it unseen.
ANEW = {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
        "transfer-encoding", "upgrade", "host", "content-length"}


@dataclass
class Exchange:
    """One request on a TCP connection, and the answer to it (None: the connection ended before one came)."""

    t: float  # when its head was read whole
    method: str
    target: str
    headers: list[tuple[str, str]]
    body: bytes = b""
    complete: bool = False
    status: int | None = None
    answer_headers: list[tuple[str, str]] = field(default_factory=list)
    answer: bytes = b""
    answered: bool = False  # the answer's body ended as its framing says (not cut by a close)

    @property
    def key(self) -> tuple[str, str, str, bytes]:
        session = next((v for n, v in self.headers if n == "mcp-session-id"), "")
        return self.method, self.target, session, self.body


def _kept(headers: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(n, v) for n, v in headers if n not in ANEW]


def _headers(raw: Iterable[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(n.decode("latin-1"), v.decode("latin-1")) for n, v in raw]


def _requests(link: Link) -> list[Exchange]:
    """The requests the connecting side wrote on one connection, parsed as an HTTP/1.1 server reads them."""
    reader = h11.Connection(h11.SERVER)
    found: list[Exchange] = []
    for at, data in [*link.up, (math.inf, b"")]:  # the end: the connection was closed (the recorder waited)
        reader.receive_data(data)
        while True:
            try:
                event = reader.next_event()
            except h11.RemoteProtocolError:  # a request cut by the close: kept as not complete
                return found
            if event in (h11.NEED_DATA, h11.PAUSED) or isinstance(event, h11.ConnectionClosed):
                break
            if isinstance(event, h11.Request):
                found.append(Exchange(at, event.method.decode(), event.target.decode("latin-1"),
                                      _headers(event.headers)))
            elif isinstance(event, h11.Data):
                found[-1].body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                found[-1].complete = True
                reader.send(h11.Response(status_code=204, headers=[]))  # so that h11 reads the next request
                reader.send(h11.EndOfMessage())
                if reader.our_state is not h11.DONE or reader.their_state is not h11.DONE:
                    return found
                reader.start_next_cycle()
    return found


def _answers(link: Link, requests: list[Exchange]) -> None:
    """The answers the other side wrote on the same connection, parsed as an HTTP/1.1 client reads them."""
    reader = h11.Connection(h11.CLIENT)
    reader.receive_data(b"".join(data for _, data in link.down))
    reader.receive_data(b"")
    for exchange in requests:
        if not exchange.complete:
            return
        reader.send(h11.Request(method=exchange.method, target=exchange.target, headers=exchange.headers))
        if exchange.body:
            reader.send(h11.Data(data=exchange.body))
        reader.send(h11.EndOfMessage())
        while True:
            try:
                event = reader.next_event()
            except h11.RemoteProtocolError:  # an answer cut by the close (a stream the client left)
                return
            if event in (h11.NEED_DATA, h11.PAUSED) or isinstance(event, h11.ConnectionClosed):
                return
            if isinstance(event, h11.Response):
                exchange.status = event.status_code
                exchange.answer_headers = _headers(event.headers)
            elif isinstance(event, h11.Data):
                exchange.answer += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                exchange.answered = True
                break
        if reader.our_state is not h11.DONE or reader.their_state is not h11.DONE:
            return
        reader.start_next_cycle()


def transcript(recorder: Recorder) -> list[Exchange]:
    """Every exchange on every connection through one recorder, in the order their requests came."""
    exchanges: list[Exchange] = []
    for link in recorder.links:
        requests = _requests(link)
        _answers(link, requests)
        exchanges += requests
    return sorted(exchanges, key=lambda e: e.t)


def assert_same_exchanges(client_side: list[Exchange], server_side: list[Exchange]) -> None:
    """The two sides of the tap hold the same exchanges. Connections may be reused differently on each side,
    and requests sent at once may pass each other, so exchanges are paired by method, target, session id and
    body bytes (in the order they came, among equals), not by connection."""
    assert client_side, "no exchange recorded"
    assert Counter(e.key for e in client_side) == Counter(e.key for e in server_side)
    pending: dict[tuple[str, str, str, bytes], list[Exchange]] = {}
    for exchange in server_side:
        pending.setdefault(exchange.key, []).append(exchange)
    for near in client_side:
        far = pending[near.key].pop(0)
        what = f"{near.method} {near.target} {near.body[:120]!r}"
        assert near.complete and far.complete, what
        assert _kept(near.headers) == _kept(far.headers), f"{what}: {near.headers} != {far.headers}"
        assert near.status is not None, f"{what}: no answer reached the client"
        assert near.status == far.status, what
        assert _kept(near.answer_headers) == _kept(far.answer_headers), \
            f"{what}: {near.answer_headers} != {far.answer_headers}"
        if near.answered and far.answered:
            assert near.answer == far.answer, what
        else:
            # Only the GET stream is left open, by the client, when it is done, and a client need not wait for the
            # end of a 202 (it carries no message: a notification's, and over legacy SSE every POST's, whose answer
            # comes on the GET stream; mcpprobe's legacy SSE client may have its answer and leave first on a busy
            # machine): what reached it is what the server sent, up to where the client left (the tap may have read
            # more by then).
            accepted = near.method == "POST" and near.status == 202
            assert near.method == "GET" or accepted, f"{what}: an answer cut short"
            assert far.answer.startswith(near.answer), what


HOSTS = {  # the client, and server-everything's transport and path
    "python-sdk": ("streamableHttp", "/mcp"),
    "typescript-sdk": ("streamableHttp", "/mcp"),
    "mcpprobe-legacy-sse": ("sse", "/sse"),  # every answer on the one GET stream, which the client leaves open
}


def _host(host: str, url: str, everything: Path) -> list[str]:
    if host == "python-sdk":
        return [PY, str(FIXTURES / "sdk_http_host.py"), url]
    if host == "typescript-sdk":
        return ["node", str(FIXTURES / "ts_host.cjs"), str(everything.parents[3]), url]
    return [PY, "-m", "mcpprobe", "probe", url]


@pytest.mark.parametrize("host", list(HOSTS))
def test_both_sides_of_the_http_tap_see_the_same_bytes(tmp_path: Path, everything: Path, host: str) -> None:
    transport, path = HOSTS[host]
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), transport], env=env) as base:
        server_side = Recorder(urlsplit(base).port or 0)
        try:
            with tapped(tmp_path, f"http://127.0.0.1:{server_side.port}{path}") as (where, proc):
                client_side = Recorder(urlsplit(where).port or 0)
                try:
                    command = _host(host, f"http://127.0.0.1:{client_side.port}{path}", everything)
                    client = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
                    assert client.returncode == 0, client.stdout + client.stderr
                finally:
                    client_side.close()
            # The tap has stopped: every connection through either recorder ends (the tap's end closes them).
            assert client_side.wait_ended(30) and server_side.wait_ended(30)
        finally:
            server_side.close()
    assert proc.returncode == 0
    near = transcript(client_side)
    assert_same_exchanges(near, transcript(server_side))
    assert sum(e.answer.count(b'"jsonrpc"') for e in near) >= 5  # the answers the client read: compared above
    assert json.loads((tmp_path / "report.json").read_text())["findings"] == []


def test_the_tap_adds_no_header_of_its_own(tmp_path: Path) -> None:
    """A client that sends no User-Agent, Accept or Accept-Encoding: the server gets none either (an HTTP
    library's defaults are not the client's), and the client gets the server's Server and Date, not a second of
    each from the tap."""
    folder = tmp_path / "server"
    folder.mkdir()
    body = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
    with http_server([PY, str(FIXTURES / "bytes_http.py"), str(folder)]) as base:
        server_side = Recorder(urlsplit(base).port or 0)
        try:
            with tapped(tmp_path, f"http://127.0.0.1:{server_side.port}/mcp") as (where, _proc):
                client_side = Recorder(urlsplit(where).port or 0)
                try:
                    with socket.create_connection(("127.0.0.1", client_side.port), timeout=30) as raw:
                        raw.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
                        answer = b""
                        while piece := raw.recv(65536):
                            answer += piece
                    assert answer.startswith(b"HTTP/1.1 200 ")
                finally:
                    client_side.close()
            assert client_side.wait_ended(30) and server_side.wait_ended(30)
        finally:
            server_side.close()
    near, far = transcript(client_side), transcript(server_side)
    assert_same_exchanges(near, far)
    assert [name for name, _ in far[0].headers] == ["host", "content-type", "content-length"]
