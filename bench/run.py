"""mcpprobe's benchmark: one command, one table. See docs/performance.md.

    python bench/run.py [--runs 7] [--warmup 1] [--only CASE[,CASE...]] [--json FILE] [--npm-prefix DIR]
                        [--no-bytecode-cache] [--against REV]

Every case runs its contenders interleaved (A B C A B C ...) after a warm-up, each run a fresh
process tree. For each contender the table shows the median wall time, the range, the peak
memory, the ratio to the floor (`bench/floor.py`, a bare standard-library JSON-RPC client doing
the same requests, or `python -c 'import click'` for the startup rows), the ratio to the
Inspector CLI where it is a contender, and the issue's target with a mark. The `fleet` case compares
one `probe --all --concurrency 8` of 32 configured servers with 32 separate `probe` runs (one timed
shell loop); the `storm` case counts the re-lists `watch` makes under 10,000 `list_changed`
notifications in 2 s and the CPU time of the mcpprobe process alone.

Wall time is measured around the whole process tree (start to the exit of its leader).
Peak memory is `ru_maxrss` from `os.wait4` on the contender's process: the peak resident set of
the largest single process in its tree (the client, or its server if that is bigger and was
reaped by the client), the figure `/usr/bin/time -v` reports as "Maximum resident set size".
Own CPU is the user+system time of the contender's own process (all its threads) without its
children: read from /proc/PID/stat after it exited and before it is reaped (Linux only).

Python's bytecode cache is on for every contender, as for any installed mcpprobe: the harness
drops PYTHONDONTWRITEBYTECODE from their environment and, unless PYTHONPYCACHEPREFIX is set, points
it at bench/.cache/pycache, so no .pyc lands beside the sources; the warm-up round fills it.
`--no-bytecode-cache` runs a fresh copy of the mcpprobe package (no .pyc anywhere in it), first on
PYTHONPATH, with PYTHONDONTWRITEBYTECODE=1: mcpprobe's own modules are then compiled from source at
every start, as in an editable install run with that variable set, whatever `__pycache__` folders
earlier runs left beside the sources; the standard library and the dependencies use the .pyc
their installers wrote.

The npm contenders (server-everything, the Inspector CLI) are installed into a cache folder on
first use (default `bench/.cache`); without node and npm their rows are skipped with a reason.
Benchmarks are not tests: nothing here fails a build; the exit status is 0 unless a contender
failed to run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
FIXTURE_SERVER = REPO / "tests" / "fixtures" / "fixture_server.py"
BIND_LOOPBACK = REPO / "tests" / "fixtures" / "bind_loopback.cjs"
EVERYTHING = "@modelcontextprotocol/server-everything@2026.8.31"
INSPECTOR = "@modelcontextprotocol/inspector-cli@1.0.3"
WATCH_SERVER = REPO / "tests" / "fixtures" / "watch_server.py"
TASK_SERVER = REPO / "tests" / "fixtures" / "task_server.py"
RUN_TIMEOUT = 120.0
LIST_SIZES = {"list-1k": 1_000, "list-10k": 10_000, "list-40k": 40_000, "list-100k": 100_000}
CASES = ("startup", "stdio", "http", "check", "demo", "legacy", "tools-10k", "tools-20k", *LIST_SIZES, "fleet", "storm",
         "deadline", "task-poll")
DEADLINE_TIMEOUT = 1.0  # --timeout of the deadline case: the server never answers initialize
POLL_INTERVAL_MS = 300  # the pollInterval the task-poll case's server asks for (the fixture's default)
POLL_SLACK_MS = 100  # the task-poll target: the first tasks/get at most this long after the pollInterval
# Targets that judge a row by its own measurements alone: an --against row is judged by them too.
SELF_CONTAINED_TARGETS = frozenset(("deadline", "task-poll"))
FLEET_SIZE = 32
FLEET_CONCURRENCY = 8
STORM_NOTIFICATIONS = 10_000
STORM_SECONDS = 2
STORM_DURATION = 4.0  # the storm starts 0.3 s after the handshake and lasts 2 s; then one settle interval
# The sequential fleet: run "$@" FLEET_SIZE times, stop at the first exit status above 1.
SEQUENTIAL_LOOP = 'n=0; while [ "$n" -lt "$0" ]; do "$@"; s=$?; [ "$s" -le 1 ] || exit "$s"; n=$((n + 1)); done'


@dataclass
class Sample:
    seconds: float
    peak_mb: float
    cpu_self: float | None = None  # user+sys of the contender's own process, children excluded
    cpu_tree: float = 0.0  # user+sys of the process and the children it reaped
    metrics: dict[str, Any] = field(default_factory=dict)


@dataclass
class Contender:
    name: str
    argv: list[str]
    role: str = ""  # "floor", "mcpprobe", "inspector" or "" (others)
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    ok_codes: tuple[int, ...] = (0,)
    target: str = ""  # the target for this row, checked by `check`
    parse: Callable[[bytes], dict[str, Any]] | None = None  # metrics from the contender's stdout
    own_cpu: bool = True  # False where the process is only a driver (a shell loop): its own CPU means nothing
    samples: list[Sample] = field(default_factory=list)
    failure: str = ""

    @property
    def median(self) -> float:
        return statistics.median(s.seconds for s in self.samples)

    @property
    def peak_mb(self) -> float:
        return max(s.peak_mb for s in self.samples)

    @property
    def cpu_self(self) -> float | None:
        values = [s.cpu_self for s in self.samples if s.cpu_self is not None]
        return statistics.median(values) if values else None

    def metric(self, name: str) -> list[Any]:
        return [s.metrics[name] for s in self.samples if name in s.metrics]


@dataclass
class Case:
    name: str
    title: str
    contenders: list[Contender] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str = ""

    def role(self, role: str) -> Contender | None:
        return next((c for c in self.contenders if c.role == role and c.samples and not c.failure), None)


# ---------------------------------------------------------------- measuring


def measure(contender: Contender, timeout: float = RUN_TIMEOUT) -> Sample:
    """Run once and measure it. Raises RuntimeError with the output tail on failure."""
    env = {**os.environ, **contender.env}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(contender.argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env,
                                cwd=contender.cwd, start_new_session=True)
        timer = threading.Timer(timeout, _kill_group, (proc.pid,))
        timer.start()
        cpu_self = None
        try:
            with contextlib.suppress(OSError, AttributeError):
                # Wait for the exit without reaping: the zombie's /proc stat still holds its own CPU time.
                os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
                cpu_self = _own_cpu(proc.pid)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - started
        finally:
            timer.cancel()
            _kill_group(proc.pid)  # anything the contender left behind
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        stdout = out.read()
        if code not in contender.ok_codes:
            err.seek(0)
            tail = (err.read()[-600:] or stdout[-600:]).decode("utf-8", "replace").strip()
            raise RuntimeError(f"exit status {code}: {tail}")
    metrics = contender.parse(stdout) if contender.parse else {}
    return Sample(wall, usage.ru_maxrss / 1024,  # Linux reports kilobytes
                  cpu_self, usage.ru_utime + usage.ru_stime, metrics)


def _own_cpu(pid: int) -> float | None:
    """utime + stime of an exited, not yet reaped process (all its threads, not its children)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run_case(case: Case, runs: int, warmup: int, log: Callable[[str], None]) -> None:
    """Warm-up, then `runs` rounds of every contender in turn (A B C A B C ...)."""
    live = [c for c in case.contenders if not c.failure]
    for round_number in range(warmup + runs):
        for contender in live:
            if contender.failure:
                continue
            try:
                sample = measure(contender)
            except RuntimeError as exc:
                contender.failure = str(exc)
                log(f"  {contender.name}: FAILED {exc}")
                continue
            if round_number >= warmup:
                contender.samples.append(sample)
        log(f"  {case.name}: round {round_number + 1}/{warmup + runs}"
            + (" (warm-up)" if round_number < warmup else ""))


# ---------------------------------------------------------------- environment


def _script(name: str) -> list[str] | None:
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return [str(beside)]
    found = shutil.which(name)
    return [found] if found else None


def mcpprobe_command() -> list[str]:
    return _script("mcpprobe") or [sys.executable, "-m", "mcpprobe"]


def ensure_npm(prefix: Path, log: Callable[[str], None]) -> tuple[Path | None, str]:
    """The npm packages' folder, installing them when missing; or (None, why not)."""
    modules = prefix / "node_modules" / "@modelcontextprotocol"
    wanted = [modules / "server-everything" / "dist" / "index.js", modules / "inspector-cli" / "build" / "index.js"]
    if shutil.which("node") is None:
        return None, "node is not installed"
    if all(p.exists() for p in wanted):
        return modules, ""
    if shutil.which("npm") is None:
        return None, "npm is not installed"
    log(f"installing {EVERYTHING} and {INSPECTOR} into {prefix} ...")
    prefix.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", EVERYTHING,
                           INSPECTOR], capture_output=True, text=True)
    if done.returncode != 0 or not all(p.exists() for p in wanted):
        return None, f"npm install failed: {(done.stderr or done.stdout).strip()[-300:]}"
    return modules, ""


@contextlib.contextmanager
def http_everything(modules: Path) -> Any:
    """server-everything over streamable HTTP on 127.0.0.1; yields its /mcp URL.

    PORT=0 and the loopback preload's announcement: a port picked free here and released could be
    taken by another process before node binds it."""
    proc = subprocess.Popen(
        ["node", "-r", str(BIND_LOOPBACK), str(modules / "server-everything" / "dist" / "index.js"), "streamableHttp"],
        env={**os.environ, "PORT": "0", "BIND_LOOPBACK_ANNOUNCE": "1"}, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    announced: queue.Queue[str] = queue.Queue()

    def read(stream: Any) -> None:  # also keeps the pipe drained while the bench runs
        for line in stream:
            if line.startswith("LISTENING "):
                announced.put(line.split()[1])
        announced.put("")

    threading.Thread(target=read, args=(proc.stdout,), daemon=True).start()
    try:
        try:
            base = announced.get(timeout=20)
        except queue.Empty:
            base = ""
        if not base:
            raise RuntimeError("server-everything did not start listening over HTTP")
        yield f"{base}/mcp"
    finally:
        _kill_group(proc.pid)
        proc.wait()


# ---------------------------------------------------------------- cases


def build_cases(selected: set[str], modules: Path | None, npm_reason: str, url: str | None,
                scratch: Path) -> list[Case]:
    py = sys.executable
    floor = [py, str(BENCH / "floor.py")]
    probe = [*mcpprobe_command(), "probe"]
    fastmcp = shutil.which("fastmcp")
    no_fastmcp = "fastmcp: not installed, its rows are skipped (pip install fastmcp to add them)"
    cases = []

    if "startup" in selected:
        case = Case("startup", "mcpprobe startup vs python -c 'import click'")
        case.contenders = [
            Contender("python -c 'import click'", [py, "-c", "import click"], role="floor"),
            Contender("mcpprobe --help", [*mcpprobe_command(), "--help"], role="mcpprobe", target="click2"),
            Contender("mcpprobe --version", [*mcpprobe_command(), "--version"], target="click2"),
            Contender("mcpprobe completion (bash)", mcpprobe_command(), target="click2",
                      env={"_MCPPROBE_COMPLETE": "bash_complete", "COMP_WORDS": "mcpprobe pr", "COMP_CWORD": "1"}),
        ]
        cases.append(case)

    everything = [str(modules / "server-everything" / "dist" / "index.js")] if modules else []
    inspector_dir = modules / "inspector-cli" / "build" if modules else None
    for name, title in (("stdio", "probe server-everything over stdio"),
                        ("http", "probe server-everything over streamable HTTP")):
        if name not in selected:
            continue
        case = Case(name, title)
        cases.append(case)
        if modules is None or inspector_dir is None:
            case.skipped = npm_reason
            continue
        target_args = ["--", "node", *everything] if name == "stdio" else [str(url)]
        # The Inspector CLI looks for its package.json relative to the working directory: run it from build/.
        inspector_args = ["node", *everything] if name == "stdio" else [str(url), "--transport", "http"]
        case.contenders = [
            Contender("floor", [*floor, *target_args], role="floor"),
            Contender("mcpprobe probe", [*probe, *target_args], role="mcpprobe", ok_codes=(0, 1),
                      target=f"{name}-targets"),
            Contender("mcpprobe probe --json", [*probe, "--json", *target_args], ok_codes=(0, 1),
                      target=f"{name}-targets"),
            Contender("mcpprobe probe --protocol legacy", [*probe, "--protocol", "legacy", *target_args],
                      ok_codes=(0, 1)),
            Contender("inspector-cli --method tools/list",
                      ["node", str(inspector_dir / "index.js"), *inspector_args, "--method", "tools/list"],
                      role="inspector", cwd=inspector_dir),
        ]
        if fastmcp:
            fast_target = ["--command", f"node {everything[0]}"] if name == "stdio" else [str(url)]
            case.contenders.append(Contender("fastmcp list", [fastmcp, "list", *fast_target, "--resources",
                                                              "--prompts"]))
        else:
            case.notes.append(no_fastmcp)

    if "check" in selected:
        # `check` runs its catalogue on the connect core of `probe`: one request at a time, each
        # listing shared by every check, no fixed wait (lifecycle.cancel-in-flight decides by
        # ordering); its cost beyond `probe` is those requests and the exit wait.
        case = Case("check", "check server-everything over stdio vs probe")
        cases.append(case)
        if modules is None:
            case.skipped = npm_reason
        else:
            target_args = ["--", "node", *everything]
            case.contenders = [
                Contender("mcpprobe probe", [*probe, *target_args], role="baseline", ok_codes=(0, 1)),
                Contender("mcpprobe check", [*mcpprobe_command(), "check", *target_args], role="mcpprobe",
                          ok_codes=(0, 1), target="check"),
                Contender("mcpprobe check --json --level may",
                          [*mcpprobe_command(), "check", "--json", "--level", "may", *target_args], ok_codes=(0, 1),
                          target="check"),
            ]

    if "demo" in selected:
        demo = _script("mcpprobe-demo") or [py, "-m", "mcpprobe.demo"]
        case = Case("demo", "probe the demo server (mcpprobe-demo) over stdio")
        case.contenders = [
            Contender("floor", [*floor, "--", *demo], role="floor"),
            Contender("mcpprobe probe", [*probe, "--", *demo], role="mcpprobe", ok_codes=(0, 1)),
        ]
        if fastmcp:
            case.contenders.append(Contender("fastmcp list", [fastmcp, "list", "--command", " ".join(demo),
                                                              "--resources", "--prompts"]))
        else:
            case.notes.append(no_fastmcp)
        cases.append(case)

    if "legacy" in selected:
        # A handshake-era server that answers server/discover with -32601 (as every SDK 1.x server
        # does): --protocol auto must cost it one round trip at most, never the discover wait.
        server = [py, str(FIXTURE_SERVER), "full"]
        case = Case("legacy", "probe a legacy server that answers server/discover with -32601 (stdio)")
        case.contenders = [
            Contender("floor", [*floor, "--", *server], role="floor"),
            Contender("mcpprobe probe --protocol legacy", [*probe, "--protocol", "legacy", "--", *server],
                      role="baseline", ok_codes=(0, 1)),
            Contender("mcpprobe probe (--protocol auto)", [*probe, "--", *server], role="mcpprobe",
                      ok_codes=(0, 1), target="legacy-auto"),
        ]
        cases.append(case)

    for name, tools in (("tools-10k", 10_000), ("tools-20k", 20_000)):
        if name not in selected:
            continue
        pages = tools // 100
        env = {"FIXTURE_TOOLS": str(tools), "FIXTURE_PAGE_SIZE": "100"}
        server = [py, str(FIXTURE_SERVER), "paginated"]
        passed = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        case = Case(name, f"probe the fixture server: {tools:,} tools over {pages} pages (stdio)")
        case.contenders = [
            Contender("floor", [*floor, "--", *server], role="floor", env=env),
            Contender("mcpprobe probe", [*probe, *passed, "--", *server], role="mcpprobe", ok_codes=(0, 1),
                      target=name),
            Contender("mcpprobe probe --json", [*probe, "--json", *passed, "--", *server], ok_codes=(0, 1)),
        ]
        cases.append(case)

    for name, tools in LIST_SIZES.items():
        if name not in selected:
            continue
        env = {"FIXTURE_TOOLS": str(tools), "FIXTURE_PAGE_SIZE": "100"}
        server = [py, str(FIXTURE_SERVER), "paginated"]
        passed = [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]
        listing = [*mcpprobe_command(), "list", "tools"]
        case = Case(name, f"list tools of the fixture server: {tools:,} tools, 100 per page (stdio)")
        case.contenders = [
            Contender("floor --kind tools", [*floor, "--kind", "tools", "--", *server], role="floor", env=env),
            Contender("mcpprobe list tools --json", [*listing, "--json", *passed, "--", *server], role="mcpprobe",
                      ok_codes=(0, 1), target="list-json"),
            Contender("mcpprobe list tools", [*listing, *passed, "--", *server], ok_codes=(0, 1),
                      target="list-human"),
        ]
        cases.append(case)

    if "fleet" in selected:
        server = [py, str(FIXTURE_SERVER), "full"]
        config = scratch / "mcpprobe.yaml"
        config.write_text("servers:\n" + "".join(
            f"  s{i:02d}:\n    command: {json.dumps(server[0])}\n    args: {json.dumps(server[1:])}\n"
            for i in range(FLEET_SIZE)))
        case = Case("fleet", f"{FLEET_SIZE} configured stdio servers (fixture_server.py full): one fleet probe "
                    f"vs {FLEET_SIZE} separate probes")
        case.contenders = [
            Contender(f"{FLEET_SIZE} x mcpprobe probe (one shell loop)",
                      ["sh", "-c", SEQUENTIAL_LOOP, str(FLEET_SIZE), *probe, "--", *server], role="baseline",
                      own_cpu=False),
            Contender(f"mcpprobe probe --all --concurrency {FLEET_CONCURRENCY}",
                      [*probe, "--all", "--concurrency", str(FLEET_CONCURRENCY), "--config", str(config)],
                      role="mcpprobe", ok_codes=(0, 1), target="fleet"),
        ]
        cases.append(case)

    if "storm" in selected:
        watch = [*mcpprobe_command(), "watch", "--json", "--duration", str(STORM_DURATION)]
        server = [py, str(WATCH_SERVER)]
        case = Case("storm", f"watch under {STORM_NOTIFICATIONS:,} tools/list_changed in {STORM_SECONDS} s "
                    f"(watch_server.py burst, stdio, --duration {STORM_DURATION:g})")
        quiet, storm = ({"WATCH_SCENARIO": "burst", "WATCH_STORM": str(n), "WATCH_STORM_SECONDS": str(STORM_SECONDS)}
                        for n in (0, STORM_NOTIFICATIONS))
        case.contenders = [
            Contender("mcpprobe watch, no storm", [*watch, *_env_args(quiet), "--", *server], parse=watch_metrics),
            Contender("mcpprobe watch, storm", [*watch, *_env_args(storm), "--", *server], role="mcpprobe",
                      target="storm", parse=watch_metrics),
        ]
        case.notes.append("re-lists are the `end` event's `relists` (the first listing not counted); own CPU is "
                          "the mcpprobe process's user+sys, start-up included, the server excluded")
        cases.append(case)

    if "deadline" in selected:
        # How soon --timeout ends a run against a server that never answers: the tests only check
        # that the timeout ends it (with a loaded machine's slack); the speed is measured here.
        server = [py, str(FIXTURE_SERVER), "hang-initialize"]
        case = Case("deadline", f"probe a stdio server that never answers initialize, --timeout "
                    f"{DEADLINE_TIMEOUT:g} (fixture_server.py hang-initialize)")
        case.contenders = [
            Contender(f"mcpprobe probe --timeout {DEADLINE_TIMEOUT:g}",
                      [*probe, "--timeout", f"{DEADLINE_TIMEOUT:g}", "--", *server], role="mcpprobe", ok_codes=(6,),
                      target="deadline"),
            Contender(f"mcpprobe probe --protocol legacy --timeout {DEADLINE_TIMEOUT:g}",
                      [*probe, "--protocol", "legacy", "--timeout", f"{DEADLINE_TIMEOUT:g}", "--", *server],
                      ok_codes=(6,), target="deadline"),
        ]
        cases.append(case)

    if "task-poll" in selected:
        # How soon after the task's creation the first tasks/get arrives, on the server's clock
        # (task_server.py's TASK_FIXTURE_TIMES): the tests check it is never before the
        # pollInterval and that a healthy answer loads no schema models; its lateness is measured here.
        times = scratch / "task-times.jsonl"
        server = [py, str(TASK_SERVER), "--poll-interval", str(POLL_INTERVAL_MS)]
        calling = [*mcpprobe_command(), "call", "research", "steps=1", "delay_ms=0", "--json",
                   "--protocol", "2025-11-25", "--env", f"TASK_FIXTURE_TIMES={times}"]
        case = Case("task-poll", f"call a tool that runs as a task (task_server.py research, pollInterval "
                    f"{POLL_INTERVAL_MS} ms): the first tasks/get after the task's creation")
        case.contenders = [
            Contender("mcpprobe call research (a task)", [*calling, "--", *server], role="mcpprobe",
                      target="task-poll", parse=first_poll_metrics(times)),
        ]
        case.notes.append("first poll: milliseconds from the CreateTaskResult made to the first tasks/get received, "
                          "both on the server's monotonic clock")
        cases.append(case)
    return cases


def first_poll_metrics(times: Path) -> Callable[[bytes], dict[str, Any]]:
    """The first-poll delay the task server wrote for this run (the file is emptied for the next)."""
    def parse(stdout: bytes) -> dict[str, Any]:
        try:
            lines = times.read_text().splitlines()
        except OSError:
            return {}
        times.unlink()
        return {"first_poll_ms": json.loads(lines[-1])["firstPollMs"]} if lines else {}
    return parse


def _env_args(env: dict[str, str]) -> list[str]:
    return [arg for key, value in env.items() for arg in ("-e", f"{key}={value}")]


def watch_metrics(stdout: bytes) -> dict[str, Any]:
    """Re-lists, `diff` events and whether the storm's one real change was reported, from watch's NDJSON."""
    relists, diffs, seen, ended = 0, 0, False, False
    for line in stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:  # a value passed with --env masked as [redacted] would make a line unparsable
            diffs += b'"event":"diff"' in line
            continue
        if not isinstance(event, dict):
            continue
        if event.get("event") == "diff":
            diffs += 1
            seen = seen or "added_mid_storm" in (event.get("added") or [])
        elif event.get("event") == "end":
            ended = True
            relists = sum(v for v in (event.get("relists") or {}).values() if isinstance(v, int))
    return {"relists": relists if ended else diffs, "diffs": diffs, "change_seen": seen}


# ---------------------------------------------------------------- targets and table


def check(case: Case, contender: Contender, cases: dict[str, Case]) -> tuple[str, bool | None]:
    """The issue's target for this row: (text, met?) or ("", None) when the row has none."""
    floor, inspector = case.role("floor"), case.role("inspector")
    if not contender.target or not contender.samples or contender.failure:
        return "", None
    if contender.target == "fleet":
        baseline = case.role("baseline")
        if baseline is None:
            return f"<= 0.40x {FLEET_SIZE} separate runs", None
        ratio = contender.median / baseline.median
        return f"<= 0.40x {FLEET_SIZE} separate runs (is {ratio:.2f}x)", ratio <= 0.40
    if contender.target == "storm":
        relists, seen, cpu = max(contender.metric("relists")), all(contender.metric("change_seen")), contender.cpu_self
        text = f"<= 10 re-lists (at most {relists}), <= 2 s own CPU (is " + (
            f"{cpu:.2f} s)" if cpu is not None else "unmeasured)") + ("" if seen else ", the mid-storm change MISSED")
        return text, relists <= 10 and seen and (cpu <= 2.0 if cpu is not None else None)
    med = contender.median
    if contender.target == "click2":
        if floor is None:
            return "<= 1.3x import click", None
        return "<= 1.3x import click", med <= 1.3 * floor.median
    if contender.target == "stdio-targets":
        parts, oks = [], []
        if inspector is not None:
            parts.append("<= 0.5x Inspector")
            oks.append(med <= 0.5 * inspector.median)
        if floor is not None:
            parts.append("<= 1.25x floor")
            oks.append(med <= 1.25 * floor.median)
        return ", ".join(parts), (all(oks) if oks else None)
    if contender.target == "list-json":
        return _list_targets(case, contender, cases)
    if contender.target == "list-human":
        as_json = next((c for c in case.contenders if c.target == "list-json" and c.samples), None)
        if as_json is None:
            return "no slower than --json", None
        return f"no slower than --json (is {med / as_json.median:.2f}x)", med <= as_json.median * 1.05
    if contender.target == "check":
        # Judged by the median of the per-round ratios (check and probe run back to back in each
        # round, under the same load), steadier than the ratio of medians on a shared machine.
        baseline = case.role("baseline")
        paired = _paired(contender, baseline, "ratio").get("ratio")
        if baseline is None or paired is None:
            return "<= 2x probe", None
        return f"<= 2x probe (paired {paired:.2f}x, medians {med / baseline.median:.2f}x)", paired <= 2.0
    if contender.target == "legacy-auto":
        baseline = case.role("baseline")
        if baseline is None:
            return "<= 1.10x --protocol legacy", None
        ratio = med / baseline.median
        return f"<= 1.10x --protocol legacy (is {ratio:.2f}x)", ratio <= 1.10
    if contender.target == "http-targets":
        if inspector is None:
            return "<= 1.2x Inspector", None
        return "<= 1.2x Inspector", med <= 1.2 * inspector.median
    if contender.target == "tools-10k":
        ok_memory = contender.peak_mb <= 200
        if floor is None:
            return f"<= 200 MB (is {contender.peak_mb:.0f})", ok_memory
        beyond = med - floor.median
        return (f"floor + <= 1 s (is +{beyond:.2f} s), <= 200 MB (is {contender.peak_mb:.0f})",
                beyond <= 1.0 and ok_memory)
    if contender.target == "task-poll":
        polls = contender.metric("first_poll_ms")
        limit = POLL_INTERVAL_MS + POLL_SLACK_MS
        if not polls:
            return f"first poll <= {limit} ms (unmeasured)", None
        first = statistics.median(polls)
        return (f"first poll >= {POLL_INTERVAL_MS} and <= {limit} ms (median {first:.0f} ms, at most "
                f"{max(polls):.0f})", min(polls) >= POLL_INTERVAL_MS and first <= limit)
    if contender.target == "deadline":
        limit = DEADLINE_TIMEOUT + 1.0  # the timeout, plus a second for start-up and the server's end
        return f"<= --timeout + 1 s ({limit:g} s)", med <= limit
    if contender.target == "tools-20k":
        small = cases.get("tools-10k")
        small_probe = small.role("mcpprobe") if small else None
        small_floor = small.role("floor") if small else None
        if floor is None or small_probe is None or small_floor is None:
            return "<= 2.1x the 10k cost beyond floor (needs tools-10k)", None
        growth = (med - floor.median) / max(small_probe.median - small_floor.median, 1e-3)
        return f"<= 2.1x the 10k cost beyond floor (is {growth:.2f}x)", growth <= 2.1
    return "", None


def _list_targets(case: Case, contender: Contender, cases: dict[str, Case]) -> tuple[str, bool | None]:
    """Peak memory <= 2x the floor's; per-item cost <= 2x the floor's, measured from the 1k case
    (so that start-up, a constant, cancels); for 40k, within 1.2 s of the floor."""
    floor = case.role("floor")
    if floor is None:
        return "", None
    parts, oks = [], []
    memory = contender.peak_mb / floor.peak_mb
    parts.append(f"<= 2x floor's peak MB (is {memory:.2f}x)")
    oks.append(memory <= 2)
    small = cases.get("list-1k")
    small_probe = small.role("mcpprobe") if small else None
    small_floor = small.role("floor") if small else None
    if small_probe is not None and small_floor is not None and case.name != "list-1k":
        items = LIST_SIZES[case.name] - LIST_SIZES["list-1k"]
        ours = (contender.median - small_probe.median) / items * 1e6
        theirs = (floor.median - small_floor.median) / items * 1e6
        parts.append(f"<= 2x floor's per-item cost (is {ours:.1f} vs {theirs:.1f} us)")
        oks.append(ours <= 2 * max(theirs, 1e-9))
    if case.name == "list-40k":
        beyond = contender.median - floor.median
        parts.append(f"floor + <= 1.2 s (is +{beyond:.2f} s)")
        oks.append(beyond <= 1.2)
    return ", ".join(parts), all(oks)


def results(cases: list[Case]) -> list[dict[str, Any]]:
    by_name = {case.name: case for case in cases}
    rows = []
    for case in cases:
        floor, inspector = case.role("floor"), case.role("inspector")
        for contender in case.contenders:
            row: dict[str, Any] = {"case": case.name, "contender": contender.name, "argv": contender.argv,
                                   "role": contender.role or None, "runs": len(contender.samples)}
            if contender.failure:
                row["failure"] = contender.failure
            if contender.samples:
                times = [s.seconds for s in contender.samples]
                row.update(median_s=round(contender.median, 4), min_s=round(min(times), 4),
                           max_s=round(max(times), 4), peak_mb=round(contender.peak_mb, 1),
                           samples_s=[round(t, 4) for t in times],
                           cpu_tree_median_s=round(statistics.median(s.cpu_tree for s in contender.samples), 3))
                if contender.cpu_self is not None and contender.own_cpu:
                    row["cpu_self_median_s"] = round(contender.cpu_self, 3)
                if contender.parse:
                    row["metrics"] = [s.metrics for s in contender.samples]
                if floor is not None and contender is not floor:
                    row["vs_floor"] = round(contender.median / floor.median, 3)
                    row["beyond_floor_s"] = round(contender.median - floor.median, 4)
                if inspector is not None and contender is not inspector:
                    row["vs_inspector"] = round(contender.median / inspector.median, 3)
                row.update(_paired(contender, floor, "vs_floor_paired"), **_paired(contender, inspector,
                                                                                    "vs_inspector_paired"))
            text, met = check(case, contender, by_name)
            if text:
                row["target"] = text
                row["met"] = met
            rows.append(row)
    return rows


def _paired(contender: Contender, other: Contender | None, key: str) -> dict[str, float]:
    """The median of the per-round ratios to `other` (run in the same rounds, under the same load):
    steadier than the ratio of medians on a loaded machine."""
    if other is None or other is contender or len(other.samples) != len(contender.samples):
        return {}
    ratios = [mine.seconds / theirs.seconds for mine, theirs in zip(contender.samples, other.samples, strict=True)]
    return {key: round(statistics.median(ratios), 3)} if ratios else {}


def paired_table(rows: list[dict[str, Any]]) -> str:
    """The rows that have paired ratios: the median of each round's ratio to the floor and the Inspector."""
    lines = [f"  {row['case']:8} {row['contender']:40} "
             + ("x floor " + f"{row['vs_floor_paired']:.2f}x" if "vs_floor_paired" in row else "")
             + ("   x Inspector " + f"{row['vs_inspector_paired']:.2f}x" if "vs_inspector_paired" in row else "")
             for row in rows if "vs_floor_paired" in row or "vs_inspector_paired" in row]
    return "\n".join(["Paired ratios (median of the per-round ratios):", *lines]) if lines else ""


def table(cases: list[Case], rows: list[dict[str, Any]]) -> str:
    head = ("case", "contender", "median", "min-max", "peak MB", "own CPU", "x floor", "x Inspector", "target")
    lines: list[tuple[str, ...]] = []
    for row in rows:
        if "median_s" not in row:
            lines.append((row["case"], row["contender"], "failed", "", "", "", "", "", row.get("failure", "")[:60]))
            continue
        mark = {True: " ✓", False: " ✗", None: ""}[row.get("met")]
        lines.append((
            row["case"], row["contender"], f"{row['median_s']:.3f} s", f"{row['min_s']:.3f}-{row['max_s']:.3f}",
            f"{row['peak_mb']:.0f}", f"{row['cpu_self_median_s']:.2f} s" if "cpu_self_median_s" in row else "-",
            f"{row['vs_floor']:.2f}x" if "vs_floor" in row else "-",
            f"{row['vs_inspector']:.2f}x" if "vs_inspector" in row else "-",
            (row.get("target", "") + mark).strip(),
        ))
    widths = [max(len(h), *(len(line[i]) for line in lines)) if lines else len(h) for i, h in enumerate(head)]
    out = [" | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip(),
           "-+-".join("-" * w for w in widths)]
    previous = None
    for line in lines:
        cells = (line[0] if line[0] != previous else "", *line[1:])
        previous = line[0]
        out.append(" | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip())
    notes = [f"{case.name}: skipped: {case.skipped}" for case in cases if case.skipped]
    notes += [f"{case.name}: {note}" for case in cases for note in case.notes]
    return "\n".join(out + ([""] + notes if notes else []))


def machine() -> dict[str, Any]:
    node = shutil.which("node")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip() if node else None
    return {"python": platform.python_version(), "node": node_version, "cpus": os.cpu_count(),
            "platform": platform.platform()}


def fresh_sources(scratch: Path) -> Path:
    """For --no-bytecode-cache: a copy of the mcpprobe package without any .pyc, first on the
    contenders' PYTHONPATH, so that every start compiles mcpprobe's own modules from source, whatever
    `__pycache__` folders earlier runs left beside the sources. The standard library and the
    dependencies keep the .pyc their installers wrote, as on any machine."""
    root = scratch / "sources"
    shutil.copytree(REPO / "mcpprobe", root / "mcpprobe", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, (str(root), os.environ.get("PYTHONPATH"))))
    found = subprocess.run([sys.executable, "-c", "import mcpprobe; print(mcpprobe.__file__)"],
                           capture_output=True, text=True, cwd=scratch).stdout.strip()  # not the checkout
    if not found.startswith(str(root)):
        raise SystemExit(f"mcpprobe is imported from {found or '?'}, not from the fresh copy in {root}")
    return root


def against(cases: list[Case], revision: str, scratch: Path) -> None:
    """--against REV: mcpprobe's package as it is at git revision REV (`git archive`, so without any
    .pyc) runs as a contender beside each mcpprobe row, interleaved with it, through the same
    console script: before and after measured in one run."""
    root = scratch / "against"
    root.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", revision, "mcpprobe"],
                             capture_output=True)
    if archive.returncode != 0:
        raise SystemExit(f"--against {revision}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    script = mcpprobe_command()
    for case in cases:
        extended = []
        for contender in case.contenders:
            extended.append(contender)
            if contender.argv[:len(script)] == script:
                extended.append(Contender(f"{contender.name} @{revision}", contender.argv,
                                          env={**contender.env, "PYTHONPATH": str(root)}, cwd=contender.cwd,
                                          ok_codes=contender.ok_codes, parse=contender.parse,
                                          target=contender.target if contender.target in SELF_CONTAINED_TARGETS
                                          else ""))
        case.contenders = extended


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Benchmark mcpprobe against a bare client and other MCP CLIs.")
    parser.add_argument("--runs", type=int, default=7, help="measured runs per contender (default 7)")
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured warm-up runs per contender (default 1)")
    parser.add_argument("--only", metavar="CASE[,CASE]", help=f"run only these cases: {', '.join(CASES)}")
    parser.add_argument("--npm-prefix", type=Path, default=BENCH / ".cache",
                        help="where the npm servers are installed (default bench/.cache)")
    parser.add_argument("--json", metavar="FILE", type=Path, help="also write the results as JSON to FILE")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="compile mcpprobe's modules from source at every start: a fresh copy of the package, "
                             "first on PYTHONPATH, with PYTHONDONTWRITEBYTECODE=1 (default: .pyc files are written "
                             "to bench/.cache/pycache and used, as an installed mcpprobe uses its own)")
    parser.add_argument("--against", metavar="REV",
                        help="also run the mcpprobe rows with the package as it is at git revision REV (for "
                             "example main), interleaved: before and after in one run")
    args = parser.parse_args(argv)
    selected = set(CASES)
    if args.only:
        selected = {name.strip() for name in args.only.split(",") if name.strip()}
        unknown = selected - set(CASES)
        if unknown:
            parser.error(f"unknown case {', '.join(sorted(unknown))}; choose from {', '.join(CASES)}")
    if args.runs < 1 or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    # Contenders inherit os.environ (see measure).
    if args.no_bytecode_cache:
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        os.environ.pop("PYTHONPYCACHEPREFIX", None)  # the stdlib and the dependencies: their installed .pyc
    else:
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ.setdefault("PYTHONPYCACHEPREFIX", str(BENCH / ".cache" / "pycache"))

    modules, npm_reason = (None, "")
    if selected & {"stdio", "http", "check"}:
        modules, npm_reason = ensure_npm(args.npm_prefix.resolve(), log)
        if modules is None:
            log(f"skipping the server-everything cases: {npm_reason}")
    started = time.monotonic()
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(http_everything(modules)) if modules and "http" in selected else None
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcpprobe-bench-")))
        fresh = fresh_sources(scratch) if args.no_bytecode_cache else None
        cases = build_cases(selected, modules, npm_reason, url, scratch)
        if args.against:
            against(cases, args.against, scratch)
        for case in cases:
            if case.skipped:
                continue
            log(f"{case.name}: {case.title}")
            run_case(case, args.runs, args.warmup, log)
        if fresh is not None and any(fresh.rglob("*.pyc")):
            raise SystemExit(f"bytecode was written into {fresh} although PYTHONDONTWRITEBYTECODE=1")
    rows = results(cases)
    print(f"mcpprobe benchmark: {args.runs} runs after {args.warmup} warm-up, interleaved; "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, bytecode cache "
          f"{'off' if args.no_bytecode_cache else 'on'}; {time.monotonic() - started:.0f} s in all")
    print(table(cases, rows))
    if paired := paired_table(rows):
        print(paired)
    if args.json:
        document = {"formatVersion": 1, "runs": args.runs, "warmup": args.warmup, "machine": machine(),
                    "bytecodeCache": not args.no_bytecode_cache,
                    "skipped": {c.name: c.skipped for c in cases if c.skipped},
                    "notes": {c.name: c.notes for c in cases if c.notes}, "rows": rows}
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 1 if any("failure" in row for row in rows) else 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
    sys.exit(130)
