"""No orphaned server process on any exit path, and clean ends for signals and closed pipes.

These run mcpprobe as a real process: signals, pipes and process groups are what is tested.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
import uuid

import pytest
from conftest import FIXTURE, PY, ROOT, recorded, run_subprocess


def _alive(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line and "ps -eo" not in line]


def _spawning_server(scenario: str, marker: str) -> list[str]:
    """A server that starts a grandchild first, the way `npx` starts node: both must end.

    `marker` is digits: it tags the grandchild (`sleep 300.<marker>`) and the server's argv.
    """
    code = (f"import runpy, sys; sys.argv = [{str(FIXTURE)!r}, {scenario!r}]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    return ["sh", "-c", f"sleep 300.{marker} & exec {PY} -c {shlex.quote(code)} marker-{marker}"]


def _wait_gone(marker: str, seconds: float = 5) -> list[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        alive = _alive(marker)
        if not alive:
            return []
        time.sleep(0.1)
    return _alive(marker)


@pytest.mark.skipif(not os.path.exists("/bin/ps") and not os.path.exists("/usr/bin/ps"), reason="needs ps")
@pytest.mark.parametrize("scenario, args, expected", [
    ("full", [], 0),
    ("method-not-found", [], 1),
    ("hang-initialize", ["--timeout", "1"], 6),
    ("exit-mid-list", [], 4),
])
def test_no_orphans_on_any_exit(scenario, args, expected):
    marker = str(uuid.uuid4().int)[:12]
    result = run_subprocess(["probe", *args, "--", *_spawning_server(scenario, marker)])
    assert result.exit_code == expected, result.stderr
    assert _wait_gone(marker) == []


@pytest.mark.parametrize("sig, expected", [(signal.SIGINT, 130), (signal.SIGTERM, 130)])
def test_signals_end_cleanly_without_orphans(sig, expected):
    marker = str(uuid.uuid4().int)[:12]
    proc = subprocess.Popen(
        [PY, "-m", "mcpprobe", "probe", "--timeout", "60", "--", *_spawning_server("hang-initialize", marker)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(_alive(marker)) < 2:
        time.sleep(0.1)
    assert len(_alive(marker)) >= 2, "the server and its grandchild should be running"
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == expected, err
    assert "Traceback" not in err
    assert "interrupted" in err
    assert _wait_gone(marker) == []


def test_json_on_interrupt_is_still_one_document(tmp_path):
    record = tmp_path / "record.jsonl"
    proc = subprocess.Popen(
        [PY, "-m", "mcpprobe", "probe", "--json", "--timeout", "60", "-e", f"FIXTURE_RECORD={record}",
         "--", PY, str(FIXTURE), "hang-initialize"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    # Interrupted while it waits for the answer to initialize, which the server received.
    deadline = time.monotonic() + 30
    while "initialize" not in recorded(record) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert "initialize" in recorded(record), "mcpprobe should be waiting for the server's answer"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    import json

    assert json.loads(out)["exitCode"] == 130


def test_closed_pipe_is_quiet():
    """`mcpprobe ... | head -1` must not print a BrokenPipeError traceback."""
    pipeline = f"{sys.executable} -m mcpprobe list tools -- {PY} {FIXTURE} full | head -c 10 >/dev/null"
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", pipeline], capture_output=True, text=True, cwd=ROOT,
                          timeout=30)
    assert "Traceback" not in proc.stderr
    assert "BrokenPipe" not in proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [
    ["probe", "--", PY, str(FIXTURE), "full"],
    ["list", "tools", "--json", "--", PY, str(FIXTURE), "full"],
    ["--help"],
])
def test_stdout_on_a_full_disk_is_exit_2_not_a_bug(args):
    """A write to stdout that fails (not a reader that went away) is said once, exit 2, as for
    any output file that cannot be written; never "internal error", never a traceback."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "mcpprobe", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "error: cannot write to stdout: No space left on device" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr


def test_stderr_flood_is_drained_and_kept_as_a_tail():
    result = run_subprocess(["probe", "--json", "--", PY, str(FIXTURE), "stderr-flood"])
    assert result.exit_code == 0
    assert result.json["serverStderr"] == []  # shown only when something failed


def test_server_stderr_tail_on_failure():
    result = run_subprocess(["probe", "--", PY, str(FIXTURE), "crash-on-start"])
    assert result.exit_code == 4
    assert "fatal: cannot open config /etc/nope.yaml" in result.stderr
    assert "last " in result.stderr and "server's stderr" in result.stderr


def test_one_stderr_line_is_called_one_line():
    """A server that said one thing on stderr: "last line", not "last 1 lines"."""
    result = run_subprocess(["list", "tools", "--", PY, str(FIXTURE), "exit-mid-list"])
    assert result.exit_code == 4
    assert "last line of the server's stderr:\n  | fixture: crashing mid-list" in result.stderr
    assert "last 1 lines" not in result.stderr


def test_server_stderr_live():
    result = run_subprocess(["probe", "--server-stderr", "live", "--", PY, str(FIXTURE), "crash-on-initialize"])
    assert result.exit_code == 4
    assert result.stderr.count("fixture") >= 1


def test_minimal_environment_by_default():
    """A stdio server does not see the user's secrets unless they are passed with --env."""
    env = {"MY_SECRET_TOKEN": "s3cr3t-value"}
    script = "import os,sys; print(os.environ.get('MY_SECRET_TOKEN','absent'), file=sys.stderr); sys.exit(1)"
    result = run_subprocess(["probe", "--", PY, "-c", script], env=env)
    assert "absent" in result.stderr
    assert "s3cr3t-value" not in result.stderr
    passed = run_subprocess(["probe", "--env", "MY_SECRET_TOKEN=given-explicitly", "--", PY, "-c", script], env=env)
    # The server saw it (it printed something in its place), and mcpprobe masked it on the way out.
    assert "[redacted]" in passed.stderr
    assert "given-explicitly" not in passed.stderr + passed.stdout


def test_reported_once_even_when_interrupted_during_shutdown():
    """The result is printed while the server shuts down; Ctrl-C then must not print a second one.

    The server ignores SIGTERM and lingers after stdin closes, so mcpprobe is still ending it
    (TERM, a grace, then KILL) when the interrupt arrives.
    """
    import json

    script = f"trap '' TERM; {PY} {FIXTURE} full; sleep 5"
    proc = subprocess.Popen([PY, "-m", "mcpprobe", "probe", "--json", "--", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    printed = proc.stdout.readline()  # the result, printed as the server's shutdown begins
    proc.send_signal(signal.SIGINT)
    rest, err = proc.communicate(timeout=15)
    out = printed + rest
    decoder = json.JSONDecoder()
    doc, end = decoder.raw_decode(out)
    assert out[end:].strip() == "", "exactly one JSON document on stdout"
    assert proc.returncode == doc["exitCode"]
    assert "Traceback" not in err


@pytest.mark.parametrize("command", [["probe"], ["list", "tools"]])
@pytest.mark.parametrize("scenario, expected", [("full", "0"), ("method-not-found", "1")])
def test_a_closed_pipe_keeps_the_result_exit_code(command, scenario, expected):
    """`| head` stops reading: no traceback, and the exit code is still the server's verdict."""
    pipeline = (f"{sys.executable} -m mcpprobe {' '.join(command)} -- {PY} {FIXTURE} {scenario}"
                " | head -c 1 >/dev/null; echo ${PIPESTATUS[0]}")
    proc = subprocess.run(["bash", "-c", pipeline], capture_output=True, text=True, cwd=ROOT, timeout=30)
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip() == expected


def test_the_result_reaches_a_pipe_before_the_server_is_gone():
    """The result is flushed when it is ready, not when the process exits: here the server
    ignores SIGTERM and lingers, so mcpprobe is alive for two more seconds (TERM, a grace,
    then KILL) after it printed. Python buffers a pipe unless told otherwise."""
    script = f"trap '' TERM; {PY} {FIXTURE} full; sleep 30"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([PY, "-m", "mcpprobe", "probe", "--json", "--", "sh", "-c", script],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT, env=env,
                            start_new_session=True)
    try:
        line = proc.stdout.readline()
        still_running = proc.poll() is None
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert line.startswith('{"formatVersion":1,')
    assert still_running, "the document arrived only when mcpprobe exited"
