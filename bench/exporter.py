"""The exporter under load: probes per second per core, memory per in-flight probe, and one
exporter carrying many HTTP targets at a fixed interval. See docs/performance.md#the-exporter.

    python bench/exporter.py [--targets 1000] [--interval 15] [--duration 45] [--fixtures 4] [--json FILE]

Every target is a name in a generated config, pointing at one of `--fixtures` HTTP fixture servers
(tests/fixtures/fixture_server.py --http, scenario `full`) with a distinct query string, so each
probe is a full streamable-HTTP probe (discover, initialize, four lists) of its own. The fixtures
run on the same machine and take CPU of their own: the figures are the exporter's process only
(user+system time from /proc, Linux), next to the machine's total.

1. throughput: `min_interval: 0`, scrapes of distinct targets from 32 client threads for 15 s:
   probes per second, and probes per CPU-second of the exporter process (per core).
2. memory: RSS of the exporter idle, then with N probes held in flight by a `slow` fixture.
3. fleet: `--targets` targets, each scraped once per `--interval` seconds, evenly spread, as
   Prometheus does, for `--duration` seconds: scrape latency p50/p95/max, answers that were not
   200, probes that failed, and the exporter's CPU.
Benchmarks are not tests: nothing here fails a build.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "fixture_server.py"
TICK = os.sysconf("SC_CLK_TCK")


@contextmanager
def started(argv: list[str], pattern: str, env: dict[str, str] | None = None) -> Any:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
                            env={**os.environ, **(env or {})})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if pattern not in line:
            raise RuntimeError(f"{argv[:3]} did not start: {line!r}")
        yield proc, line.split(pattern, 1)[1].strip()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def machine_busy() -> tuple[float, float]:
    parts = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = parts[3] + parts[4]
    return (sum(parts) - idle) / TICK, sum(parts) / TICK


def scrape(url: str, timeout: float = 15.0) -> tuple[int, float, str]:
    began = time.perf_counter()
    request = urllib.request.Request(url, headers={"X-Prometheus-Scrape-Timeout-Seconds": str(timeout)})
    try:
        with urllib.request.urlopen(request, timeout=timeout + 5) as response:
            body = response.read().decode()
            return response.status, time.perf_counter() - began, body
    except urllib.error.HTTPError as exc:
        return exc.code, time.perf_counter() - began, ""
    except OSError:
        return 0, time.perf_counter() - began, ""


def exit_code(body: str) -> int | None:
    for line in body.splitlines():
        if line.startswith("mcpprobe_exit_code{"):
            return int(float(line.rsplit(" ", 1)[1]))
    return None


def write_configs(folder: Path, urls: list[str], targets: int, exporter_yaml: str) -> tuple[Path, Path]:
    servers = {f"t{i:04d}": {"url": f"{urls[i % len(urls)]}?t={i}"} for i in range(targets)}
    config = folder / "servers.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    exporter = folder / "exporter.yaml"
    exporter.write_text(exporter_yaml)
    return config, exporter


def exporter_argv(config: Path, exporter: Path) -> list[str]:
    return [sys.executable, "-m", "mcpprobe", "exporter", "--config", str(config), "--exporter-config",
            str(exporter), "--listen-address", "127.0.0.1:0"]


def throughput(folder: Path, urls: list[str], seconds: float = 15.0, threads: int = 32) -> dict[str, Any]:
    config, exporter = write_configs(folder, urls, 2000, "min_interval: 0\nconcurrency: 64\nmodules: {probe: {}}\n")
    with started(exporter_argv(config, exporter), "listening on ") as (proc, base):
        scrape(f"{base}/probe?target=t0000")  # warm: imports done
        counter = iter(range(10**9))
        lock = threading.Lock()
        results: list[tuple[int, float, int | None]] = []
        stop = time.monotonic() + seconds
        cpu0, (busy0, total0) = cpu_seconds(proc.pid), machine_busy()

        def worker() -> None:
            while time.monotonic() < stop:
                with lock:
                    index = next(counter) % 2000
                status, took, body = scrape(f"{base}/probe?target=t{index:04d}")
                results.append((status, took, exit_code(body)))

        began = time.monotonic()
        with ThreadPoolExecutor(threads) as pool:
            for _ in range(threads):
                pool.submit(worker)
        wall = time.monotonic() - began
        cpu = cpu_seconds(proc.pid) - cpu0
        busy1, total1 = machine_busy()
    ok = [r for r in results if r[0] == 200 and r[2] == 0]
    return {"wall_s": round(wall, 1), "probes": len(results), "probes_ok": len(ok),
            "probes_per_s": round(len(ok) / wall, 1), "exporter_cpu_s": round(cpu, 1),
            "probes_per_exporter_cpu_s": round(len(ok) / cpu, 1) if cpu else None,
            "machine_busy_fraction": round((busy1 - busy0) / (total1 - total0), 2),
            "latency_p50_ms": round(statistics.median(r[1] for r in results) * 1000)}


def memory(folder: Path, slow_url: str, fast_url: str, in_flight: int = 100) -> dict[str, Any]:
    config, exporter = write_configs(folder, [slow_url] * in_flight + [fast_url], in_flight + 1,
                                     f"min_interval: 0\nconcurrency: {in_flight}\nmodules: {{probe: {{}}}}\n")
    with started(exporter_argv(config, exporter), "listening on ") as (proc, base):
        scrape(f"{base}/probe?target=t{in_flight:04d}")  # one probe first: the imports are not per probe
        idle = rss_mib(proc.pid)
        pool = ThreadPoolExecutor(in_flight)
        futures = [pool.submit(scrape, f"{base}/probe?target=t{i:04d}", 30.0) for i in range(in_flight)]
        peak = idle
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"{base}/metrics", timeout=10) as response:
                text = response.read().decode()
            flying = next(float(x.split()[1]) for x in text.splitlines()
                          if x.startswith("mcpprobe_exporter_probes_in_flight "))
            peak = max(peak, rss_mib(proc.pid))
            if flying >= in_flight:
                time.sleep(1)
                peak = max(peak, rss_mib(proc.pid))
                break
            time.sleep(0.2)
        proc.terminate()
        for future in futures:
            future.result()
        pool.shutdown()
    return {"in_flight": in_flight, "rss_idle_mib": round(idle, 1), "rss_loaded_mib": round(peak, 1),
            "kib_per_probe": round((peak - idle) * 1024 / in_flight)}


def fleet(folder: Path, urls: list[str], targets: int, interval: float, duration: float) -> dict[str, Any]:
    config, exporter = write_configs(folder, urls, targets,
                                     f"min_interval: {interval - 1}\nconcurrency: 64\nmodules: {{probe: {{}}}}\n")
    with started(exporter_argv(config, exporter), "listening on ") as (proc, base):
        scrape(f"{base}/probe?target=t0000")
        results: list[tuple[int, float, int | None]] = []
        pool = ThreadPoolExecutor(256)
        gap = interval / targets
        began = time.monotonic()
        cpu0, (busy0, total0) = cpu_seconds(proc.pid), machine_busy()
        n = 0
        late = 0.0
        while (now := time.monotonic()) - began < duration:
            due = began + n * gap
            if due > now:
                time.sleep(due - now)
            else:
                late = max(late, now - due)
            index = n % targets
            pool.submit(lambda i=index: results.append(
                (lambda r: (r[0], r[1], exit_code(r[2])))(scrape(f"{base}/probe?target=t{i:04d}", 10.0))))
            n += 1
        pool.shutdown(wait=True)
        wall = time.monotonic() - began
        cpu = cpu_seconds(proc.pid) - cpu0
        busy1, total1 = machine_busy()
        rss = rss_mib(proc.pid)
    latencies = sorted(r[1] for r in results)
    return {"targets": targets, "interval_s": interval, "scrapes": len(results),
            "scrapes_per_s": round(len(results) / wall, 1),
            "not_200": sum(1 for r in results if r[0] != 200),
            "probe_failed": sum(1 for r in results if r[0] == 200 and r[2] != 0),
            "latency_p50_ms": round(latencies[len(latencies) // 2] * 1000),
            "latency_p95_ms": round(latencies[int(len(latencies) * 0.95)] * 1000),
            "latency_max_ms": round(latencies[-1] * 1000),
            "exporter_cpu_fraction_of_one_core": round(cpu / wall, 2),
            "machine_busy_fraction": round((busy1 - busy0) / (total1 - total0), 2),
            "exporter_rss_mib": round(rss, 1), "scheduler_late_max_ms": round(late * 1000)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--targets", type=int, default=1000)
    parser.add_argument("--interval", type=float, default=15.0)
    parser.add_argument("--duration", type=float, default=45.0)
    parser.add_argument("--fixtures", type=int, default=4)
    parser.add_argument("--only", default="throughput,memory,fleet")
    parser.add_argument("--json", dest="json_file")
    args = parser.parse_args()
    only = set(args.only.split(","))
    out: dict[str, Any] = {"cpus": os.cpu_count(), "python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        folder = Path(tmp)
        urls = [stack.enter_context(started([sys.executable, str(FIXTURE), "full", "--http"], "LISTENING "))[1]
                for _ in range(args.fixtures)]
        if "throughput" in only:
            out["throughput"] = throughput(folder, urls)
            print("throughput", json.dumps(out["throughput"]), flush=True)
        if "memory" in only:
            _, slow = stack.enter_context(started([sys.executable, str(FIXTURE), "slow", "--http"], "LISTENING ",
                                                  env={"FIXTURE_DELAY": "8"}))
            out["memory"] = memory(folder, slow, urls[0])
            print("memory", json.dumps(out["memory"]), flush=True)
        if "fleet" in only:
            out["fleet"] = fleet(folder, urls, args.targets, args.interval, args.duration)
            print("fleet", json.dumps(out["fleet"]), flush=True)
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
