"""`mcpprobe load` against the floor (bench/load_floor.py) and, when given, the Inspector CLI's --load,
side by side in one run: server-everything over stdio, `get-sum a=1 b=2`, concurrency 10, 5,000 calls,
each tool RUNS times in turn; prints the medians and the ratios the targets are stated in.

    python bench/load.py --everything PATH/dist/index.js [--runs 5] [--inspector PATH/mcp-inspector] [--http]

With --http the same run is made over streamable HTTP: server-everything in `streamableHttp` mode,
bound to 127.0.0.1 on a free port (as bench/run.py starts it), the floor then POSTs from C threads.
Each round runs the tools one after the other, so a ratio is taken between runs made side by side;
the ratios printed are the medians of those per-round ratios (the machine's noise falls on both
members of a pair alike), with the medians of the raw figures above them.

Targets (docs/commands/load.md, issue 26): throughput >= 0.75x the floor's (>= 1.5x the Inspector's),
p50 within 1.3x the floor's, client CPU per request <= 2x the floor's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def floor(server: list[str], n: int, c: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, str(HERE / "load_floor.py"), "--tool", "get-sum", "--args",
                          '{"a": 1, "b": 2}', "-n", str(n), "-c", str(c), "--", *server],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    doc = json.loads(out)
    return {"throughput": doc["throughput"], "p50ms": doc["p50ms"], "cpuUs": doc["cpuPerRequestUs"]}


def mcpprobe(server: list[str], n: int, c: int) -> dict[str, float]:
    where = server if server[0].startswith("http") else ["--", *server]
    out = subprocess.run([sys.executable, "-m", "mcpprobe", "load", "--json", "--call", "get-sum a=1 b=2",
                          "--concurrency", str(c), "--requests", str(n), *where],
                         capture_output=True, text=True, timeout=300, cwd=HERE.parent).stdout
    doc = json.loads(out)
    return {"throughput": doc["overall"]["throughput"], "p50ms": doc["overall"]["latencyUs"]["p50"] / 1000,
            "cpuUs": doc["clientCost"]["cpuPerRequestUs"]}


def inspector(binary: str, server: list[str], n: int, c: int) -> dict[str, float]:
    out = subprocess.run([binary, "--cli", *server, "--method", "tools/call", "--tool-name", "get-sum",
                          "--tool-arg", "a=1", "--tool-arg", "b=2", "--load", "--load-concurrency", str(c),
                          "--load-requests", str(n), "--format", "json"],
                         capture_output=True, text=True, timeout=600).stdout
    doc = json.loads(out[out.index("{"):])
    found = doc.get("load", doc)
    return {"throughput": found.get("throughput", 0.0), "p50ms": found.get("p50", 0.0), "cpuUs": 0.0}


def ratios(runs: dict[str, list[dict[str, float]]], name: str, key: str) -> float:
    """The median over rounds of this round's figure over the floor's in the same round."""
    return statistics.median(a[key] / b[key] for a, b in zip(runs[name], runs["floor"], strict=True) if b[key])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--everything", required=True, help="server-everything's dist/index.js")
    parser.add_argument("--inspector", help="the Inspector 2.12 CLI binary (mcp-inspector)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("-c", type=int, default=10)
    parser.add_argument("--http", action="store_true", help="over streamable HTTP on 127.0.0.1")
    opts = parser.parse_args()
    if opts.http:
        sys.path.insert(0, str(HERE))
        from run import http_everything

        with http_everything(Path(opts.everything).resolve().parents[2]) as url:
            return compare(opts, [url])
    return compare(opts, ["node", opts.everything])


def compare(opts: argparse.Namespace, server: list[str]) -> int:
    tools = {"floor": lambda: floor(server, opts.n, opts.c), "mcpprobe": lambda: mcpprobe(server, opts.n, opts.c)}
    if opts.inspector:
        tools["inspector"] = lambda: inspector(opts.inspector, server, opts.n, opts.c)
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in tools}
    for _ in range(opts.runs):
        for name, run in tools.items():  # interleaved, so that the machine's load falls on all alike
            runs[name].append(run())
    medians = {name: {key: statistics.median(r[key] for r in results) for key in results[0]}
               for name, results in runs.items()}
    for name, figures in medians.items():
        print(f"{name:10} {figures['throughput']:9.0f}/s  p50 {figures['p50ms']:6.2f} ms  "
              f"CPU {figures['cpuUs']:6.1f} µs/req")
    print(f"medians of the ratios of {opts.runs} rounds:")
    print(f"throughput {ratios(runs, 'mcpprobe', 'throughput'):.2f}x the floor (target >= 0.75)")
    print(f"p50        {ratios(runs, 'mcpprobe', 'p50ms'):.2f}x the floor (target <= 1.3)")
    print(f"CPU/req    {ratios(runs, 'mcpprobe', 'cpuUs'):.2f}x the floor (target <= 2)")
    if "inspector" in medians and medians["inspector"]["throughput"]:
        pairs = zip(runs["mcpprobe"], runs["inspector"], strict=True)
        versus = statistics.median(a["throughput"] / b["throughput"] for a, b in pairs if b["throughput"])
        print(f"throughput {versus:.2f}x the Inspector (target >= 1.5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
