"""A bug in a task that runs beside the operation (the connection's readers, its answers to the
server, a call's progress, watch's keep-alive, subscriptions, re-lists and router) ends the run at
the edge as a bug: exit 70 and its one line, the stack under --traceback. Never "interrupted"
and 130, as when such a task's failure cancelled the operation and was lost on the way.

Each test is a real mcpprobe process against a real fixture server. The bug is injected into
mcpprobe itself: by tests/fixtures/inject/sitecustomize.py (json.loads or json.dumps fail on a
marker that only the server's answer or mcpprobe's own answer carries), or by the documented
test hook MCPPROBE_TEST_CRASH (mcpprobe/testhooks.py) at the named task.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, fixture_cmd, fixture_http, http_server

PY = sys.executable
INJECT = ROOT / "tests" / "fixtures" / "inject"
TASK_SERVER = ROOT / "tests" / "fixtures" / "task_server.py"
WATCH_SERVER = ROOT / "tests" / "fixtures" / "watch_server.py"
MARKER = "injected-fault-marker"


def run(args: list[str], env: dict[str, str], *, traceback: bool = False) -> subprocess.CompletedProcess[str]:
    """mcpprobe in a process of its own, with the fault injector on its path."""
    path = os.pathsep.join(filter(None, [str(INJECT), os.environ.get("PYTHONPATH")]))
    return subprocess.run([PY, "-m", "mcpprobe", *(["--traceback"] if traceback else []), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": path, **env})


def assert_a_bug(proc: subprocess.CompletedProcess[str], said: str) -> None:
    assert proc.returncode == 70, (proc.returncode, proc.stderr[-2000:])
    assert "interrupted" not in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    line = " ".join(proc.stderr.split())  # one line, wherever a terminal-width renderer wrapped it
    assert f"mcpprobe: internal error: RuntimeError: {said}" in line, proc.stderr
    assert "a bug in mcpprobe" in line


def assert_stack(proc: subprocess.CompletedProcess[str], *frames: str) -> None:
    assert proc.returncode == 70, proc.stderr[-2000:]  # --traceback shows the stack; still a bug's code
    assert "Traceback" in proc.stderr and "interrupted" not in proc.stderr
    for frame in frames:
        assert frame in proc.stderr, proc.stderr[-3000:]


# ----- the connection's own tasks: injected with the sitecustomize -----


def test_a_bug_decoding_a_stdio_server_message_is_70_not_interrupted() -> None:
    """The reported case: the stdio reader fails on the answer to tools/call."""
    args = ["call", "echo", f"message={MARKER}", "--yes", "--", *fixture_cmd("full")]
    env = {"MCPPROBE_INJECT_LOADS": MARKER}
    assert_a_bug(run(args, env), "fault injected into orjson.loads")
    assert_stack(run(args, env, traceback=True), "_read_stdout", "fault injected into orjson.loads")


def test_a_bug_decoding_an_http_answer_is_70_not_interrupted() -> None:
    """Over streamable HTTP the answer is read by the request's own task."""
    with fixture_http("full") as url:
        args = ["call", "echo", f"message={MARKER}", "--yes", url]
        env = {"MCPPROBE_INJECT_LOADS": MARKER}
        assert_a_bug(run(args, env), "fault injected into json.loads")
        assert_stack(run(args, env, traceback=True), "_post_request", "fault injected into json.loads")


def test_a_bug_writing_an_answer_to_the_server_is_70_not_interrupted(tmp_path: Path) -> None:
    """The server asks for the roots; writing mcpprobe's answer fails (the answer's own task)."""
    root = tmp_path / MARKER
    root.mkdir()
    args = ["list", "tools", "--root", str(root), "--", *fixture_cmd("roots")]
    env = {"MCPPROBE_INJECT_DUMPS": MARKER}
    assert_a_bug(run(args, env), "fault injected into json.dumps")
    assert_stack(run(args, env, traceback=True), "_answer", "fault injected into json.dumps")


# ----- the tasks beside an operation: the MCPPROBE_TEST_CRASH hook -----


def test_a_bug_handling_a_calls_progress_is_70_not_interrupted() -> None:
    args = ["call", "research", "steps=3", "delay_ms=50", "--protocol", "2025-11-25", "--", PY, str(TASK_SERVER)]
    env = {"MCPPROBE_TEST_CRASH": "progress"}
    assert_a_bug(run(args, env), "crash requested by MCPPROBE_TEST_CRASH=progress")
    assert_stack(run(args, env, traceback=True), "on_notification", "crash_point")


def watch_stdio(scenario: str) -> list[str]:
    return ["watch", "--json", "--protocol", "legacy", "--duration", "30", f"--env=WATCH_SCENARIO={scenario}",
            "--", PY, str(WATCH_SERVER)]


@pytest.mark.parametrize("phase, scenario, extra", [
    ("relist", "ticker", []),
    ("router", "ticker", []),
    ("subscriptions", "res-updates", ["--subscribe", "watch://status"]),
], ids=["relist", "router", "subscriptions"])
def test_a_bug_in_a_watch_task_is_70(phase: str, scenario: str, extra: list[str]) -> None:
    """The scenarios change on a timer, so each task runs soon; --duration only bounds a failure."""
    args = [*watch_stdio(scenario)[:-3], *extra, *watch_stdio(scenario)[-3:]]
    env = {"MCPPROBE_TEST_CRASH": phase}
    proc = run(args, env)
    assert_a_bug(proc, f"crash requested by MCPPROBE_TEST_CRASH={phase}")
    assert '"event":"end"' not in proc.stdout.replace(" ", "")  # a bug prints no closing document
    assert_stack(run(args, env, traceback=True), "crash_point")


def test_a_bug_in_watchs_keepalive_is_70() -> None:
    """An HTTP server without an event stream is kept an eye on with pings."""
    with http_server([PY, str(WATCH_SERVER), "--http"], env={"WATCH_SCENARIO": "ticker", "WATCH_NO_GET": "1"}) as url:
        args = ["watch", "--json", "--protocol", "legacy", "--keepalive", "0.2", "--duration", "30", url]
        env = {"MCPPROBE_TEST_CRASH": "keepalive"}
        assert_a_bug(run(args, env), "crash requested by MCPPROBE_TEST_CRASH=keepalive")
        assert_stack(run(args, env, traceback=True), "_keep_alive", "crash_point")


# ----- the last guard: no result without a signal is never an interruption -----


def test_an_operation_cancelled_without_a_signal_is_a_bug_not_an_interruption() -> None:
    """Whatever loses a task's failure on the way (here: a task group whose failed task cancels its
    host, its error swallowed on the way out, as the connection's shutdown once did), an operation
    that ends with no result and no signal is raised as a bug, not reported as "interrupted"."""
    import contextlib

    import anyio

    from mcpprobe.cli.common import CancelledWithoutSignal, run_operation

    async def failing() -> None:
        raise KeyError("lost on the way")

    async def operation() -> str:
        group = anyio.create_task_group()
        await group.__aenter__()
        group.start_soon(failing)
        try:
            await anyio.sleep(30)
        finally:
            with contextlib.suppress(Exception):
                await group.__aexit__(None, None, None)
        return "finished"

    with pytest.raises(CancelledWithoutSignal):
        run_operation(operation)
