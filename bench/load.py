"""`mcpprobe load` against the floor (bench/load_floor.py) and the Inspector CLI's `--load`, side by side
in one run: server-everything, `get-sum a=1 b=2`, concurrency 10, 5,000 calls, each tool RUNS times in
turn; prints the medians and the ratios the targets are stated in, with the machine's load average.

    python bench/load.py [--runs 5] [--http] [-n 5000] [-c 10] [--no-inspector]
                         [--everything PATH/dist/index.js] [--inspector PATH/mcp-inspector]

Without --everything / --inspector, server-everything 2026.8.31 and the Inspector 2.12.0
(`@modelcontextprotocol/inspector`, whose `mcp-inspector --cli ... --load` is the one compared) are
installed with npm into bench/.cache/load on first use (node and npm needed).

With --http the same run is made over streamable HTTP: server-everything in `streamableHttp` mode,
bound to 127.0.0.1 on a free port (as bench/run.py starts it), the floor then POSTs from C threads.
Each round runs the tools one after the other, so a ratio is taken between runs made side by side;
the ratios printed are the medians of those per-round ratios (the machine's noise falls on both
members of a pair alike), with the medians of the raw figures above them. The mean latency is shown
beside the p50: at a fixed concurrency, mean latency is concurrency / throughput (Little's law), while
the p50 also depends on how each client's waits fall (a client that reads a burst of answers and
answers each at once sees most requests fast and a few very slow). The Inspector's CPU is not
measured (its process reaps the server, whose CPU would count as its own).

Targets (docs/commands/load.md, issue 26): throughput >= 0.75x the floor's (>= 1.5x the Inspector's),
p50 within 1.3x the floor's, client CPU per request <= 2x the floor's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache" / "load"
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


def installed(prefix: Path = CACHE) -> tuple[Path, Path]:
    """server-everything's dist/index.js and the Inspector's mcp-inspector, installed with npm into
    `prefix` when missing."""
    everything = prefix / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    inspector = prefix / "node_modules" / ".bin" / "mcp-inspector"
    if not (everything.exists() and inspector.exists()):
        if shutil.which("npm") is None or shutil.which("node") is None:
            raise SystemExit("node and npm are needed to install server-everything and the Inspector")
        print(f"installing {EVERYTHING} and {INSPECTOR} into {prefix} ...", file=sys.stderr)
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                        EVERYTHING, INSPECTOR], check=True)
    return everything, inspector


def floor(server: list[str], n: int, c: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, str(HERE / "load_floor.py"), "--tool", "get-sum", "--args",
                          '{"a": 1, "b": 2}', "-n", str(n), "-c", str(c), "--", *server],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    doc = json.loads(out)
    return {"throughput": doc["throughput"], "p50ms": doc["p50ms"], "meanms": doc["meanms"],
            "cpuUs": doc["cpuPerRequestUs"]}


def mcpprobe(server: list[str], n: int, c: int) -> dict[str, float]:
    where = server if server[0].startswith("http") else ["--", *server]
    done = subprocess.run([sys.executable, "-m", "mcpprobe", "load", "--json", "--call", "get-sum a=1 b=2",
                           "--concurrency", str(c), "--requests", str(n), *where],
                          capture_output=True, text=True, timeout=300, cwd=HERE.parent)
    doc = json.loads(done.stdout)
    if doc["overall"] is None or doc["overall"]["errors"]:
        raise SystemExit(f"mcpprobe load failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    latency = doc["overall"]["latencyUs"]
    return {"throughput": doc["overall"]["throughput"], "p50ms": latency["p50"] / 1000,
            "meanms": latency["mean"] / 1000, "cpuUs": doc["clientCost"]["cpuPerRequestUs"]}


def inspector(binary: str, server: list[str], n: int, c: int) -> dict[str, float]:
    """`mcp-inspector --cli TARGET --method tools/call --tool-name get-sum --tool-arg a=1 b=2 --load
    --load-concurrency C --load-requests N --format json`: {"result": {"throughput", "latencyMs": {...}}}."""
    done = subprocess.run([binary, "--cli", *server, "--method", "tools/call", "--tool-name", "get-sum",
                           "--tool-arg", "a=1", "b=2", "--load", "--load-concurrency", str(c),
                           "--load-requests", str(n), "--format", "json"],
                          capture_output=True, text=True, timeout=600)
    found = json.loads(done.stdout[done.stdout.index("{"):]).get("result", {})
    if found.get("ok") != n:
        raise SystemExit(f"the Inspector's load failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    return {"throughput": found["throughput"], "p50ms": found["latencyMs"]["p50"],
            "meanms": found["latencyMs"]["mean"], "cpuUs": 0.0}


def ratios(runs: dict[str, list[dict[str, float]]], name: str, key: str, base: str = "floor") -> float:
    """The median over rounds of this round's figure over `base`'s in the same round."""
    return statistics.median(a[key] / b[key] for a, b in zip(runs[name], runs[base], strict=True) if b[key])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--everything", help="server-everything's dist/index.js (default: installed in bench/.cache)")
    parser.add_argument("--inspector", help="the Inspector 2.12 `mcp-inspector` (default: installed in bench/.cache)")
    parser.add_argument("--no-inspector", action="store_true", help="leave the Inspector out")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("-c", type=int, default=10)
    parser.add_argument("--http", action="store_true", help="over streamable HTTP on 127.0.0.1")
    opts = parser.parse_args()
    if not opts.everything or not (opts.inspector or opts.no_inspector):
        everything, binary = installed()
        opts.everything = opts.everything or str(everything)
        opts.inspector = opts.inspector or str(binary)
    if opts.no_inspector:
        opts.inspector = None
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
    loads = [os.getloadavg()[0]]
    for _ in range(opts.runs):
        for name, run in tools.items():  # interleaved, so that the machine's load falls on all alike
            runs[name].append(run())
        loads.append(os.getloadavg()[0])
    medians = {name: {key: statistics.median(r[key] for r in results) for key in results[0]}
               for name, results in runs.items()}
    print(f"{'http' if opts.http else 'stdio'}, get-sum, {opts.n} calls, concurrency {opts.c}, {opts.runs} rounds; "
          f"load average (1 min) {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    for name, figures in medians.items():
        cpu = f"CPU {figures['cpuUs']:6.1f} µs/req" if figures["cpuUs"] else "CPU not measured"
        print(f"{name:10} {figures['throughput']:9.0f}/s  p50 {figures['p50ms']:6.2f} ms  "
              f"mean {figures['meanms']:6.2f} ms  {cpu}")
    print(f"medians of the ratios of {opts.runs} rounds:")
    print(f"throughput {ratios(runs, 'mcpprobe', 'throughput'):.2f}x the floor (target >= 0.75)")
    print(f"p50        {ratios(runs, 'mcpprobe', 'p50ms'):.2f}x the floor (target <= 1.3)")
    print(f"mean       {ratios(runs, 'mcpprobe', 'meanms'):.2f}x the floor")
    print(f"CPU/req    {ratios(runs, 'mcpprobe', 'cpuUs'):.2f}x the floor (target <= 2)")
    if "inspector" in runs:
        print(f"throughput {ratios(runs, 'mcpprobe', 'throughput', 'inspector'):.2f}x the Inspector (target >= 1.5)")
        print(f"p50        {ratios(runs, 'mcpprobe', 'p50ms', 'inspector'):.2f}x the Inspector")
    return 0


if __name__ == "__main__":
    sys.exit(main())
