"""The lean POST path's HTTP/1.1 response reader (mcpprobe/wire/lean_http.py) against one built on h11's
state machine, per answer, without a network: each answer's bytes are fed to the connection's Protocol
callbacks in the pieces a socket delivers them, as `mcpprobe load` meets them.

    python bench/lean_http_parse.py [--runs 7] [-n 20000]
    python bench/lean_http_parse.py --end-to-end [--runs 5] [-n 5000] [-c 10] [--everything PATH/dist/index.js]

Three answers to `tools/call` as MCP servers give them: a small JSON 200 with Content-Length (head and body
in two reads), the same chunked (three reads), and an event stream (server-everything's answer, byte for
byte but its date: chunked, the head and the event's chunk in one read, the last chunk in one of its own),
each answer exchanged -n times per
run; printed are the medians over the runs of the microseconds per exchange (the request written, and
the answer read to its end), for each reader and their ratio.

With --end-to-end, the reader inside a whole `mcpprobe load --call "get-sum a=1 b=2"` over streamable
HTTP against server-everything (started as bench/load.py --http starts it), each reader in turn in each
round: the medians of throughput, p50 and client CPU per request, and the medians of the per-round ratios.
The h11 reader is put in place of the hand-written one in that process only (`lean_http._Link`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import h11

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from mcpprobe.errors import ConnectionFailed, ProbeError  # noqa: E402
from mcpprobe.wire.lean_http import MAX_HEAD, Exchange, LeanPool, _Link  # noqa: E402

URL = "http://127.0.0.1:9/mcp"
HEADERS = [(b"Accept", b"application/json, text/event-stream"), (b"Content-Type", b"application/json"),
           (b"Mcp-Session-Id", b"411539aa-d81e-4ca3-a684-d3b30f133a5d"), (b"MCP-Protocol-Version", b"2025-06-18")]
BODY = b'{"jsonrpc":"2.0","id":4242,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}'
ANSWER = b'{"result":{"content":[{"type":"text","text":"The sum of 1 and 2 is 3."}]},"jsonrpc":"2.0","id":4242}'
COMMON = (b"HTTP/1.1 200 OK\r\nX-Powered-By: Express\r\nAccess-Control-Allow-Origin: *\r\n"
          b"Access-Control-Expose-Headers: mcp-session-id,last-event-id,mcp-protocol-version\r\n")
SIZED = [COMMON + b"content-type: application/json\r\nmcp-session-id: 411539aa-d81e-4ca3-a684-d3b30f133a5d\r\n"
         b"content-length: %d\r\nDate: Fri, 04 Dec 2026 13:17:19 GMT\r\nConnection: keep-alive\r\n"
         b"Keep-Alive: timeout=5\r\n\r\n" % len(ANSWER), ANSWER]
CHUNKED = [COMMON + b"content-type: application/json\r\nmcp-session-id: 411539aa-d81e-4ca3-a684-d3b30f133a5d\r\n"
           b"Date: Fri, 04 Dec 2026 13:17:19 GMT\r\nTransfer-Encoding: chunked\r\n\r\n",
           b"%x\r\n%s\r\n" % (len(ANSWER), ANSWER), b"0\r\n\r\n"]
EVENT = b"event: message\nid: 862679c2-805e-4d9c-93a5-c4d2d462f5b1\ndata: " + ANSWER + b"\n\n"
STREAM = [COMMON + b"cache-control: no-cache, no-transform\r\nconnection: keep-alive\r\n"
          b"content-type: text/event-stream\r\nmcp-session-id: 411539aa-d81e-4ca3-a684-d3b30f133a5d\r\n"
          b"x-accel-buffering: no\r\nDate: Fri, 04 Dec 2026 13:17:19 GMT\r\nTransfer-Encoding: chunked\r\n\r\n"
          b"%x\r\n%s\r\n" % (len(EVENT), EVENT), b"0\r\n\r\n"]
ANSWERS = {"JSON, Content-Length": SIZED, "JSON, chunked": CHUNKED, "event stream": STREAM}


class H11Link(_Link):
    """The same connection with h11 reading its answers (and writing its requests, which h11 must see
    to know the answer's framing): the candidate replacement of the hand-written reader. Put in its place
    (`use_h11`), it passes tests/unit/wire/test_lean_http.py as the hand-written reader does."""

    def __init__(self, pool: LeanPool) -> None:
        super().__init__(pool)
        self.conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)
        self.request: h11.Request | None = None
        self.length = -1
        self.pending: bytes | None = None  # a body chunk held until the next event says whether it is the last

    def send(self, exchange: Exchange, head: bytes, body: bytes) -> None:
        assert self.transport is not None
        if self.request is None or len(body) != self.length:
            self.request, self.length = _request(head), len(body)
        self.exchange = exchange
        exchange.link = self
        conn = self.conn
        if conn.our_state is h11.DONE and conn.their_state is h11.DONE:
            conn.start_next_cycle()
        data = conn.send(self.request)
        data = (data or b"") + body
        conn.send(h11.Data(data=body))
        conn.send(h11.EndOfMessage())
        self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        exchange = self.exchange
        if exchange is None or exchange.given_up():
            self.exchange = None
            self._close()
            return
        self.conn.receive_data(data)
        try:
            self._events()
        except h11.RemoteProtocolError as exc:
            self._fail(ConnectionFailed(f"connection to {self.pool.url} broke: {exc}", detail={"url": self.pool.url}))

    def eof_received(self) -> bool | None:
        if self.exchange is not None:
            self.conn.receive_data(b"")
            with contextlib.suppress(h11.RemoteProtocolError):  # cut: connection_lost fails the exchange
                self._events()
        return None

    def _events(self) -> None:
        conn = self.conn
        while (exchange := self.exchange) is not None:
            event = conn.next_event()
            if event is h11.NEED_DATA or event is h11.PAUSED:
                if self.pending is not None:
                    chunk, self.pending = self.pending, None
                    if not exchange.body(chunk):
                        self._drop()
                return
            if type(event) is h11.Data:
                if self.pending is not None and not exchange.body(self.pending):
                    self._drop()
                    return
                self.pending = bytes(event.data)
            elif type(event) is h11.EndOfMessage:
                chunk, self.pending = self.pending or b"", None
                self.keep = conn.our_state is h11.DONE and conn.their_state is h11.DONE \
                    and not conn.trailing_data[0]
                self.buffer = b""
                self._finish(exchange, chunk)
                return
            elif type(event) is h11.Response:
                if not exchange.head(event.status_code, list(event.headers)):
                    self._drop()
                    return
            elif type(event) is h11.ConnectionClosed:
                return


_REQUESTS: dict[bytes, h11.Request] = {}


def _request(head: bytes) -> h11.Request:
    """The h11 Request of a request head that lean_http built (once per head, as lean_http builds them)."""
    request = _REQUESTS.get(head)
    if request is None:
        line, *fields = head.rstrip(b"\r\n").split(b"\r\n")
        method, target, _ = line.split(b" ")
        request = _REQUESTS[head] = h11.Request(method=method, target=target, headers=[
            tuple(field.split(b": ", 1)) for field in fields])
    return request


class _Wire:
    """A transport that takes the writes and drops them."""

    def write(self, data: bytes) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False


class _Counted(Exchange):
    __slots__ = ("bytes", "ended")

    def __init__(self) -> None:
        super().__init__()
        self.bytes = 0
        self.ended = 0

    def head(self, status: int, headers: list[tuple[bytes, bytes]]) -> bool:
        return status == 200

    def body(self, chunk: bytes) -> bool:
        self.bytes += len(chunk)
        return True

    def end(self) -> None:
        self.ended += 1

    def failed(self, error: ProbeError) -> None:
        raise RuntimeError(error.message)

    def given_up(self) -> bool:
        return False


def one_run(link_type: type[_Link], feeds: list[bytes], n: int) -> float:
    """Microseconds per exchange over `n` exchanges on one kept connection."""
    pool = LeanPool(URL, 1.0)
    link = link_type(pool)
    link.connection_made(_Wire())  # type: ignore[arg-type]
    fields = [(b"Host", b"127.0.0.1:9"), *HEADERS, (b"Content-Length", b"%d" % len(BODY))]
    head = b"POST /mcp HTTP/1.1\r\n" + b"".join(b"%s: %s\r\n" % f for f in fields) + b"\r\n"
    exchange = _Counted()
    started = time.perf_counter_ns()
    for _ in range(n):
        link.send(exchange, head, BODY)
        for feed in feeds:
            link.data_received(feed)
        pool.idle.clear()
    took = time.perf_counter_ns() - started
    if exchange.ended != n or link.dead:
        raise SystemExit(f"{link_type.__name__}: {exchange.ended} of {n} answers read whole")
    return took / n / 1000


def load(url: str, n: int, c: int, h11_reader: bool) -> dict[str, float]:
    """One `mcpprobe load` over streamable HTTP, with the h11 reader in place when `h11_reader`."""
    swap = "import lean_http_parse; lean_http_parse.use_h11(); " if h11_reader else ""
    code = f"import sys; sys.path[:0] = [{str(ROOT)!r}, {str(HERE)!r}]; {swap}from mcpprobe.launch import main; main()"
    done = subprocess.run([sys.executable, "-c", code, "load", "--json", "--call", "get-sum a=1 b=2",
                           "--concurrency", str(c), "--requests", str(n), url],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    doc = json.loads(done.stdout)
    if doc["overall"] is None or doc["overall"]["errors"] or doc["overall"]["ok"] != n:
        raise SystemExit(f"mcpprobe load failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    return {"throughput": doc["overall"]["throughput"], "p50ms": doc["overall"]["latencyUs"]["p50"] / 1000,
            "cpuUs": doc["clientCost"]["cpuPerRequestUs"]}


def use_h11() -> None:
    """The h11 reader in place of the hand-written one, in this process (the --end-to-end child)."""
    from mcpprobe.wire import lean_http

    lean_http._Link = H11Link  # type: ignore[misc]


def end_to_end(opts: argparse.Namespace) -> int:
    sys.path.insert(0, str(HERE))
    from load import installed
    from run import http_everything

    everything = Path(opts.everything or installed()[0]).resolve()
    runs: dict[str, list[dict[str, float]]] = {"hand-written": [], "h11": []}
    loads = [os.getloadavg()[0]]
    with http_everything(everything.parents[2]) as url:
        for _ in range(opts.runs):
            for reader in runs:  # interleaved: the machine's noise falls on both
                runs[reader].append(load(url, opts.n, opts.c, reader == "h11"))
            loads.append(os.getloadavg()[0])
    print(f"mcpprobe load over streamable HTTP, get-sum, {opts.n} calls, concurrency {opts.c}, {opts.runs} rounds; "
          f"load average (1 min) {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    for reader, results in runs.items():
        medians = {key: statistics.median(r[key] for r in results) for key in results[0]}
        print(f"{reader:12} {medians['throughput']:7.0f}/s  p50 {medians['p50ms']:5.2f} ms  "
              f"CPU {medians['cpuUs']:6.1f} µs/req")
    for key in ("throughput", "p50ms", "cpuUs"):
        ratio = statistics.median(b[key] / a[key] for a, b in zip(runs["hand-written"], runs["h11"], strict=True))
        print(f"h11 / hand-written, {key:10} {ratio:.3f} (median of the rounds' ratios)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("-n", type=int, default=None, help="exchanges per run (20000), calls per load (5000)")
    parser.add_argument("-c", type=int, default=10, help="--end-to-end: the load's concurrency")
    parser.add_argument("--end-to-end", action="store_true", help="inside `mcpprobe load` against server-everything")
    parser.add_argument("--everything", help="server-everything's dist/index.js (default: as bench/load.py)")
    opts = parser.parse_args()
    if opts.end_to_end:
        opts.n = opts.n or 5000
        return end_to_end(opts)
    opts.n = opts.n or 20000
    readers: dict[str, type[_Link]] = {"hand-written": _Link, "h11": H11Link}
    print(f"µs per exchange, medians of {opts.runs} runs of {opts.n}; Python {sys.version.split()[0]}, "
          f"h11 {h11.__version__}")
    print(f"{'answer':22} {'hand-written':>12} {'h11':>8} {'ratio':>6}")
    for name, feeds in ANSWERS.items():
        times: dict[str, list[float]] = {reader: [] for reader in readers}
        for _ in range(opts.runs):
            for reader, link_type in readers.items():  # interleaved: the machine's noise falls on both
                times[reader].append(one_run(link_type, feeds, opts.n))
        hand, other = (statistics.median(times[reader]) for reader in readers)
        print(f"{name:22} {hand:12.2f} {other:8.2f} {other / hand:5.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

