"""The early start of a stdio server (mcpprobe.wire.prestart): the same spawn as the transport's, and
never a server left behind.

mcpprobe runs as a real process through the console script's entry (`mcpprobe.launch`), which
reports at exit what became of the early server; the server records how it was started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import FIXTURE, PY, ROOT

from mcpprobe.wire import prestart

pytestmark = pytest.mark.skipif(not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")),
                                reason="the early start is Linux only")

# Run mcpprobe as the console script does, then print what the early start did: at exit, for the
# console script ends the process itself once the run is over (atexit callbacks still run).
LAUNCH = ("import atexit, sys\nfrom mcpprobe import launch\nfrom mcpprobe.wire import prestart\n"
          "atexit.register(lambda: sys.stderr.write(f'\\nPRESTART {prestart.history!r}\\n'))\nlaunch.main()\n")
# The ordinary path: the CLI alone, no early start.
ORDINARY = "from mcpprobe.cli.main import main\nmain()\n"
# A server that writes how it was started to argv[1], then becomes the fixture server.
RECORDER = (
    "import json, os, sys\n"
    "fds = {fd: os.readlink(f'/proc/self/fd/{fd}').split(':')[0] for fd in (0, 1, 2)}\n"
    "state = {'env': dict(os.environ), 'cwd': os.getcwd(), 'pid': os.getpid(), 'pgid': os.getpgid(0),\n"
    "         'sid': os.getsid(0), 'fds': fds, 'open': sorted(os.listdir('/proc/self/fd')), 'argv': sys.argv}\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    json.dump(state, f)\n"
    "print('recorder: started', file=sys.stderr, flush=True)\n"
    f"os.execv(sys.executable, [sys.executable, {str(FIXTURE)!r}, sys.argv[2]])\n"
)


def _mcpprobe(code: str, args: list[str], extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra_env or {})}
    env.pop("_MCPPROBE_COMPLETE", None)
    return subprocess.run([PY, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)


def _history(done: subprocess.CompletedProcess[str]) -> list[tuple[str, int]]:
    line = [x for x in done.stderr.splitlines() if x.startswith("PRESTART ")][-1]
    return eval(line.removeprefix("PRESTART "))  # noqa: S307 - our own repr of a list of tuples


def _gone(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return False  # a zombie nobody reaped is left behind too
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("args", [
    # Valid JSON, so the early start cannot tell; `call` finds it is not an object after the imports.
    ["call", "echo", "--args", "[1]"],
    # Values the early start can tell wrong start nothing: tests/e2e/cli/test_prestart_commands.py.
])
def test_usage_error_ends_the_early_server(tmp_path, args):
    record = tmp_path / "state.json"
    done = _mcpprobe(LAUNCH, [*args, "--", PY, "-c", RECORDER, str(record), "full"])
    assert done.returncode == 2, done.stderr
    history = _history(done)
    assert [event for event, _ in history] == ["started", "discarded"], history
    assert _gone(history[0][1])


def test_the_early_server_is_spawned_as_the_transport_spawns_it(tmp_path):
    """Same argv, environment (but the marker's value), cwd, own session and process group, pipes,
    open descriptors: once through the early start, once through the CLI alone."""
    work = tmp_path / "work"
    work.mkdir()
    states = {}
    for path, code in (("early", LAUNCH), ("ordinary", ORDINARY)):
        record = tmp_path / f"{path}.json"
        args = ["probe", "--json", "-e", "FIXTURE_X=1", "--env=FIXTURE_Y=two words", "--cwd", str(work), "--",
                PY, "-c", RECORDER, str(record), "full"]
        done = _mcpprobe(code, args)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["ok"] is True
        if path == "early":
            assert [event for event, _ in _history(done)] == ["started", "adopted"]
        states[path] = json.loads(record.read_text())
    early, ordinary = states["early"], states["ordinary"]
    for state in (early, ordinary):
        assert state["pgid"] == state["pid"] == state["sid"]  # a session and group of its own
        assert state["fds"] == {"0": "pipe", "1": "pipe", "2": "pipe"}
        assert state["env"].pop("MCPPROBE_SERVER_ID")  # the orphan marker, unique per start
        assert state["env"]["FIXTURE_Y"] == "two words"
        del state["pid"], state["pgid"], state["sid"]
    assert early.pop("argv") == ["-c", str(tmp_path / "early.json"), "full"]
    assert ordinary.pop("argv") == ["-c", str(tmp_path / "ordinary.json"), "full"]
    assert early == ordinary


def test_inherit_env_is_the_same_too(tmp_path):
    states = {}
    for path, code in (("early", LAUNCH), ("ordinary", ORDINARY)):
        record = tmp_path / f"{path}.json"
        done = _mcpprobe(code, ["list", "tools", "--inherit-env", "--", PY, "-c", RECORDER, str(record), "full"],
                         extra_env={"FIXTURE_SECRET_TOKEN": "s3"})
        assert done.returncode == 0, done.stderr
        states[path] = json.loads(record.read_text())
        states[path]["env"].pop("MCPPROBE_SERVER_ID")
    assert states["early"]["env"] == states["ordinary"]["env"]
    assert states["early"]["env"]["FIXTURE_SECRET_TOKEN"] == "s3"


def test_server_stderr_still_reaches_the_user():
    """The adopted server's stderr is drained and shown, as with the ordinary spawn."""
    done = _mcpprobe(LAUNCH, ["probe", "--server-stderr", "live", "--", PY, "-c", RECORDER, os.devnull, "full"])
    assert done.returncode == 0, done.stderr
    assert "recorder: started" in done.stderr
    assert [event for event, _ in _history(done)] == ["started", "adopted"]


@pytest.mark.parametrize("version", ["2099-01-01", "1999-01-01", "2025-11-25x"])
def test_a_protocol_version_mcpprobe_does_not_know_starts_no_server(tmp_path, version):
    """A date-shaped --protocol is refused by the CLI unless it is a version mcpprobe speaks: the
    early start knows the same list (mcpprobe.wire.protocols), so the server never runs for nothing."""
    record = tmp_path / "state.json"
    done = _mcpprobe(LAUNCH, ["probe", "--protocol", version, "--", PY, "-c", RECORDER, str(record), "full"])
    assert done.returncode == 2, done.stderr
    assert f"--protocol {version!r} is not one of: auto, legacy, modern, 2024-11-05" in done.stderr
    assert _history(done) == [], done.stderr
    assert not record.exists()


def test_every_protocol_the_cli_accepts_starts_early():
    from mcpprobe.wire.protocols import ACCEPTED
    from mcpprobe.wire.target import parse_protocol

    for value in ACCEPTED:
        assert parse_protocol(value) == value
        assert prestart.plan(["probe", "--protocol", value, "--", "server"]) == (["server"], [], None, False)


@pytest.mark.parametrize("argv", [
    ["probe", "--help", "--", "x"],
    ["probe", "-s", "name", "--", "x"],
    ["probe", "--all", "--", "x"],
    ["probe", "--config", "f.yaml", "--", "x"],
    ["probe", "-H", "A: b", "--", "x"],
    ["probe", "https://example.com/mcp", "--", "x"],
    ["probe", "--transport", "http", "--", "x"],
    ["probe", "--bearer-env", "T", "--", "x"],
    ["list", "--", "x"],
    ["list", "nothing", "--", "x"],
    ["list", "tools", "--env", "NOEQUALS", "--", "x"],
    ["probe", "--timeout"],
    ["probe", "--"],
    ["call", "--", "x"],  # no tool named
    ["call", "tool", "https://example.com/mcp", "--", "x"],
    ["call", "tool", "-s", "name", "--", "x"],
    ["read", "--template", "--", "x"],
    ["watch", "extra", "--", "x"],
    ["watch", "--concurrency", "2", "--", "x"],  # not an option of watch
    ["load", "--call", "work", "--ping", "--", "x"],  # --ping's value is optional
    ["load", "--call", "work", "--connections", "2", "--", "x"],  # HTTP only: refused by the parser
    ["load", "--call", "work", "--requests", "0", "--", "x"],
    ["load", "--call", "work", "--format", "junit", "--", "x"],
    ["servers", "--", "x"],
    ["--version"],
    [],
])
def test_only_a_plain_stdio_command_is_started_early(argv):
    assert prestart.plan(argv) is None


def test_plan_reads_what_the_spawn_needs():
    argv = ["list", "--json", "tools", "-e", "A=1", "--env=B=2=3", "--cwd", "/tmp", "--inherit-env",
            "--timeout=5", "--", "server", "--", "-x"]
    assert prestart.plan(argv) == (["server", "--", "-x"], [("A", "1"), ("B", "2=3")], "/tmp", True)


@pytest.mark.parametrize("argv", [
    ["call", "add", "a=2", "b:=3", "--yes", "--args", "{}", "--task", "--save", "out", "--elicit", "decline"],
    ["read", "demo://readme", "-o", "file", "--elicit=defaults"],
    ["read", "--template", "demo://notes/{id}", "id=3", "--complete", "id="],
    ["get-prompt", "summarize_note", "note_id=2", "--complete", "tone=f", "--save", "dir"],
    ["watch", "--duration", "2", "--count", "1", "--poll", "1", "--subscribe", "demo://readme", "--log-level",
     "info", "--settle", "0", "--keepalive", "5", "--no-reconnect", "--exit-on-change", "--call", "add a=1", "-y"],
    ["load", "--call", "add a=1 b=2 @3", "--read", "demo://readme", "--list", "tools", "--get-prompt", "p x=1",
     "--requests", "10", "--duration", "1", "--concurrency", "2", "--rate", "5", "--warmup", "0", "--interval",
     "0.5", "--slo", "p99<1s", "--yes", "--format", "openmetrics"],
])
def test_every_command_that_talks_to_one_server_starts_it_early(argv):
    assert prestart.plan([*argv, "--json", "-e", "A=1", "--", "server"]) == (["server"], [("A", "1")], None, False)


def test_a_server_that_is_not_the_one_asked_for_is_ended():
    """The transport adopts only an identical spawn; another one is killed and reaped at once."""
    code = (
        "import sys\nfrom mcpprobe.wire import prestart\n"
        f"prestart.start(['probe', '--', {PY!r}, {str(FIXTURE)!r}, 'full'])\n"
        "pid = prestart.history[0][1]\n"
        f"print(pid, prestart.take([{PY!r}, {str(FIXTURE)!r}, 'other'], {{}}, None), prestart.history, flush=True)\n"
    )
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    pid, taken, *_ = done.stdout.split(maxsplit=2)
    assert taken == "None"
    assert "('discarded'" in done.stdout
    assert _gone(int(pid))
