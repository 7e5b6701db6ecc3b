"""What `mcpprobe tap` costs a host: added latency per request, and throughput through the tap over direct.

    python bench/tap.py [--requests 4000] [--inflight 16] [--payload 0] [--rounds 3] [--json FILE] [-- SERVER...]
    python bench/tap.py --judge [--requests 4000] [--payload 0] [--rounds 3]

A closed-loop client (standard library, newline-delimited JSON-RPC) against a small stdio server
(tests/fixtures/tap/mini_server.py, or the command after `--`: any server with an `echo` tool taking
`message`, such as `node .../server-everything/dist/index.js stdio`), once direct and once through
`mcpprobe tap --quiet -- SERVER`, alternately `--rounds` times:

1. latency: one request at a time (`tools/call echo`, with `--payload` bytes of argument), `--requests`
   of them after 200 to warm up; p50 and p95 of each, and the difference of the p50s (the target: at
   most 0.5 ms added);
2. throughput: `--inflight` requests kept in flight, `--requests` of them: requests per second, and the
   ratio tap / direct (the target: at least 0.9); the latency of each request under that load (p50, p99,
   and the difference of the p50s); on Linux also the CPU time per request of the server
   and, through the tap, of the tap's own process (from /proc: where the time goes when the machine's
   cores are all busy, which is when the ratio falls).

`--judge` measures the judging alone, in this process, with no relay: the same exchange (a request and
its answer, `--requests` times) cut into lines, made record entries and judged, as the tap's observer
does; it prints the CPU time per message (the best of `--rounds` runs).

The tap judges and (with `--record`) records as it goes: `--record` measures that too. Each round runs
direct then tap, side by side; the figures shown are the medians over the rounds (the added latency and
the throughput ratio are taken per round, then their median). Benchmarks are not tests: nothing here
fails a build.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVER = [sys.executable, str(ROOT / "tests" / "fixtures" / "tap" / "mini_server.py")]


class Client:
    def __init__(self, command: list[str]) -> None:
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
        self.next_id = 0
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        self.call(hello, "initialize")
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def request(self, params: dict[str, object], method: str = "tools/call") -> int:
        self.next_id += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
                  + b"\n")
        return self.next_id

    def answer(self) -> int:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server went away")
            message = json.loads(line)
            if "id" in message and "method" not in message:  # an answer, not a notification
                return int(message["id"])

    def call(self, params: dict[str, object], method: str = "tools/call") -> None:
        rid = self.request(params, method)
        while self.answer() != rid:
            pass

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def latency(command: list[str], requests: int, payload: str) -> list[float]:
    client = Client(command)
    params = {"name": "echo", "arguments": {"message": payload}}
    for _ in range(200):
        client.call(params)
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        client.call(params)
        samples.append((time.perf_counter() - started) * 1000)
    client.close()
    return samples


def cpu_seconds(pid: int) -> float:
    """User and system time of a process so far (Linux: /proc), 0 where that cannot be read."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(name))
            except (OSError, ValueError, IndexError):
                pass
    return out


def throughput(command: list[str], requests: int, inflight: int, payload: str) -> dict[str, float]:
    """Requests per second; each request's latency under this load (ms); CPU microseconds per request of the
    process started (`own`), of its children, and of this client."""
    client = Client(command)
    params = {"name": "echo", "arguments": {"message": payload}}
    for _ in range(200):
        client.call(params)
    import threading

    slots = threading.Semaphore(inflight)
    sent: dict[int, float] = {}

    def send_all() -> None:  # its own thread: a full pipe each way must not stall both sides
        for _ in range(requests):
            slots.acquire()
            sent[client.next_id + 1] = time.perf_counter()
            client.request(params)

    pid = client.proc.pid
    below = children(pid)
    cpu = [cpu_seconds(pid), sum(cpu_seconds(child) for child in below), time.process_time()]
    samples = []
    started = time.perf_counter()
    sender = threading.Thread(target=send_all, daemon=True)
    sender.start()
    for _ in range(requests):
        rid = client.answer()
        samples.append((time.perf_counter() - sent.pop(rid)) * 1000)
        slots.release()
    sender.join()
    elapsed = time.perf_counter() - started
    figures = {"rps": requests / elapsed, "load_p50_ms": statistics.median(samples), "load_p99_ms": pct(samples, .99),
               "own_cpu_us": (cpu_seconds(pid) - cpu[0]) * 1e6 / requests,
               "child_cpu_us": (sum(cpu_seconds(child) for child in below) - cpu[1]) * 1e6 / requests,
               "client_cpu_us": (time.process_time() - cpu[2]) * 1e6 / requests}
    client.close()
    return figures


def judging(requests: int, payload: str, rounds: int) -> float:
    """CPU microseconds per message to frame, make the entry of, and judge the bench's exchange (best of rounds)."""
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.tap.frames import LineFramer
    from mcpprobe.tap.judge import Judge
    from mcpprobe.tap.observer import FRAME_LIMIT
    from mcpprobe.tap.record import DEFAULT_CUT, message_entry

    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    answer = {"protocolVersion": "2025-06-18", "serverInfo": {"name": "mini", "version": "1"},
              "capabilities": {"tools": {"listChanged": True}}}
    pieces = [("c2s", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}),
              ("s2c", {"jsonrpc": "2.0", "id": 0, "result": answer}),
              ("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"})]
    for rid in range(1, requests + 1):
        pieces.append(("c2s", {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {"message": payload}}}))
        text = json.dumps({"message": payload})
        pieces.append(("s2c", {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}))
    wire = [(direction, json.dumps(message).encode() + b"\n") for direction, message in pieces]
    best = float("inf")
    for _ in range(rounds):
        judge, redactor = Judge(), Redactor(())
        framers = {"c2s": LineFramer(FRAME_LIMIT), "s2c": LineFramer(FRAME_LIMIT)}
        index = 0
        started = time.process_time()
        judge.feed({"event": "start", "t": 0.0})
        for direction, data in wire:
            for line in framers[direction].feed(data):
                judge.feed(message_entry(index, 0.001 * index, direction, line, redactor, DEFAULT_CUT))
                index += 1
        judge.finish()
        best = min(best, time.process_time() - started)
        assert not judge.findings, judge.findings
    return best * 1e6 / len(wire)


def pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=4000)
    parser.add_argument("--inflight", type=int, default=16)
    parser.add_argument("--payload", type=int, default=0, help="bytes of argument per request")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="the tap writes a record too")
    parser.add_argument("--json", help="write the figures to this file as JSON")
    parser.add_argument("--judge", action="store_true", help="measure the judging alone (no relay, no server)")
    argv = sys.argv[1:]
    server = argv[argv.index("--") + 1:] if "--" in argv else SERVER
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    payload = "x" * args.payload
    if args.judge:
        print(f"judging          {judging(args.requests, payload, args.rounds):.2f} us of CPU per message")
        return
    folder = tempfile.mkdtemp(prefix="tap-bench-")
    tap = [sys.executable, "-m", "mcpprobe", "tap", "--quiet",
           *(["--record", os.path.join(folder, "r.jsonl")] if args.record else []), "--", *server]
    rounds: list[dict[str, float]] = []
    for _ in range(args.rounds):  # direct then tap in each round: a pair measured side by side
        row: dict[str, float] = {}
        for name, command in (("direct", server), ("tap", tap)):
            if args.record:
                Path(folder, "r.jsonl").unlink(missing_ok=True)
            samples = latency(command, args.requests, payload)
            row[f"{name}_p50_ms"] = statistics.median(samples)
            row[f"{name}_p95_ms"] = pct(samples, .95)
            loaded = throughput(command, args.requests, args.inflight, payload)
            for key in ("rps", "load_p50_ms", "load_p99_ms", "client_cpu_us"):
                row[f"{name}_{key}"] = loaded[key]
            if name == "direct":
                row["direct_server_cpu_us"] = loaded["own_cpu_us"]
            else:
                row["tap_cpu_us"], row["tap_server_cpu_us"] = loaded["own_cpu_us"], loaded["child_cpu_us"]
        row["added_p50_ms"] = row["tap_p50_ms"] - row["direct_p50_ms"]
        row["added_load_p50_ms"] = row["tap_load_p50_ms"] - row["direct_load_p50_ms"]
        row["throughput_ratio"] = row["tap_rps"] / row["direct_rps"]
        rounds.append(row)

    def median(key: str) -> float:
        return statistics.median(row[key] for row in rounds)

    figures: dict[str, object] = {
        "requests": args.requests, "inflight": args.inflight, "payload": args.payload, "record": args.record,
        "rounds": args.rounds,
        **{key: round(median(key), 4) for key in ("direct_p50_ms", "direct_p95_ms", "tap_p50_ms", "tap_p95_ms",
                                                  "added_p50_ms")},
        **{key: round(median(key), 4) for key in ("direct_load_p50_ms", "direct_load_p99_ms", "tap_load_p50_ms",
                                                  "tap_load_p99_ms", "added_load_p50_ms")},
        "direct_rps": round(median("direct_rps")), "tap_rps": round(median("tap_rps")),
        "throughput_ratio": round(median("throughput_ratio"), 3),
        **{key: round(median(key), 1) for key in ("direct_client_cpu_us", "direct_server_cpu_us", "tap_client_cpu_us",
                                                  "tap_server_cpu_us", "tap_cpu_us")},
    }
    for key, value in figures.items():
        print(f"{key:18} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
