"""The floor of `mcpprobe load`: a bare pipelined JSON-RPC client, standard library only.

One stdio server, `initialize` (2025-11-25), then N `tools/call` with C in flight on the one pipe: a
new request goes out as each answer comes in. No validation, no histogram, no rendering: what a
client cannot do without. Prints one JSON line: requests, seconds, throughput, p50/mean/p99 (ms), the CPU
seconds this process spent during the load, and per request (µs).

    python bench/load_floor.py --tool get-sum --args '{"a": 1, "b": 2}' -n 5000 -c 10 -- node dist/index.js
    python bench/load_floor.py --tool get-sum --args '{"a": 1, "b": 2}' -n 5000 -c 10 http://127.0.0.1:PORT/mcp

Over streamable HTTP: one session (initialize), then C threads, each with its own keep-alive
connection (http.client), POST a request and read its answer (JSON or the SSE event that carries it).
"""

from __future__ import annotations

import argparse
import http.client
import json
import resource
import subprocess
import sys
import threading
import time
from urllib.parse import urlsplit


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--args", default="{}")
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("-c", type=int, default=10)
    parser.add_argument("command", nargs="+")
    opts = parser.parse_args()
    if opts.command[0].startswith("http"):
        return http_main(opts)
    proc = subprocess.Popen(opts.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    out, inp = proc.stdin, proc.stdout

    def send(message: dict) -> None:
        out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        out.flush()

    def answer() -> dict:
        while True:
            line = inp.readline()
            if not line:
                raise SystemExit("the server closed its stdout")
            message = json.loads(line)
            if "id" in message and "method" not in message:
                return message
            if "id" in message:  # a request from the server (ping): answered empty
                send({"jsonrpc": "2.0", "id": message["id"], "result": {}})

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "floor", "version": "0"}}})
    answer()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    params = {"name": opts.tool, "arguments": json.loads(opts.args)}
    sent_at: dict[int, float] = {}
    latencies: list[float] = []
    next_id = 1

    def request() -> None:
        nonlocal next_id
        sent_at[next_id] = time.perf_counter()
        send({"jsonrpc": "2.0", "id": next_id, "method": "tools/call", "params": params})
        next_id += 1

    cpu_start, start = cpu(), time.perf_counter()
    for _ in range(min(opts.c, opts.n)):
        request()
    while len(latencies) < opts.n:
        message = answer()
        latencies.append(time.perf_counter() - sent_at.pop(message["id"]))
        if next_id <= opts.n:
            request()
    seconds, spent = time.perf_counter() - start, cpu() - cpu_start
    out.close()
    proc.wait(10)
    report(opts.n, seconds, spent, latencies)
    return 0


def report(n: int, seconds: float, spent: float, latencies: list[float]) -> None:
    latencies.sort()
    print(json.dumps({"requests": n, "seconds": round(seconds, 3), "throughput": round(n / seconds, 1),
                      "p50ms": round(latencies[len(latencies) // 2] * 1000, 3),
                      "meanms": round(sum(latencies) / len(latencies) * 1000, 3),
                      "p99ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 3),
                      "cpuSeconds": round(spent, 3), "cpuPerRequestUs": round(spent / n * 1e6, 1)}))


def http_main(opts: argparse.Namespace) -> int:
    url = urlsplit(opts.command[0])
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(conn: http.client.HTTPConnection, message: dict) -> tuple[dict | None, str | None]:
        conn.request("POST", url.path or "/", json.dumps(message, separators=(",", ":")).encode(), headers)
        response = conn.getresponse()
        body = response.read()
        session = response.getheader("Mcp-Session-Id")
        if not body:
            return None, session
        if (response.getheader("Content-Type") or "").startswith("text/event-stream"):
            for line in body.split(b"\n"):
                if line.startswith(b"data:") and line[5:].strip():  # an empty one primes a resumable stream
                    reply = json.loads(line[5:])
                    if "id" in reply and "method" not in reply:
                        return reply, session
            return None, session
        return json.loads(body), session

    def connect() -> http.client.HTTPConnection:
        return http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=60)

    first = connect()
    _, session = post(first, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "floor", "version": "0"}}})
    if session:
        headers["Mcp-Session-Id"] = session
    headers["MCP-Protocol-Version"] = "2025-11-25"
    post(first, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    params = {"name": opts.tool, "arguments": json.loads(opts.args)}
    latencies: list[float] = []
    lock = threading.Lock()
    ids = iter(range(1, opts.n + 1))

    def worker() -> None:
        conn = connect()
        while True:
            with lock:
                request_id = next(ids, None)
            if request_id is None:
                return
            sent = time.perf_counter()
            reply, _ = post(conn, {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})
            took = time.perf_counter() - sent
            if reply is None or reply.get("id") != request_id:
                raise SystemExit(f"no answer to request {request_id}")
            latencies.append(took)

    threads = [threading.Thread(target=worker) for _ in range(min(opts.c, opts.n))]
    cpu_start, start = cpu(), time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds, spent = time.perf_counter() - start, cpu() - cpu_start
    report(opts.n, seconds, spent, latencies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
