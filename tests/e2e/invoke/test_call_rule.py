"""One rule for "may mcpprobe call this tool?", the same in the four commands that call one: `call`,
`watch --call`, `load --call` and `check --call` (docs/commands/call.md#may-mcpprobe-call-this-tool).
A tool not marked `readOnlyHint: true` is called after a yes on a terminal, or with --yes; with
neither, exit 3, the message names --yes, and the server receives no tools/call.

The fixture server records every message it received (FIXTURE_RECORD): "nothing sent" is read from
the server's side, not from mcpprobe's word.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import FIXTURE, PY, ROOT, recorded, run_cli

# `echo` of the fixture's "full" scenario has no annotations: not read-only by the spec's default.
CALL = "echo message=hi"
COMMANDS = {
    "call": ["call", "echo", "message=hi"],
    "watch": ["watch", "--call", CALL, "--duration", "120"],
    "load": ["load", "--call", CALL, "--requests", "2"],
    "check": ["check", "--only", "tools.call-named", "--call", CALL],
}


def stopped(command: str, record: Path) -> Callable[[], bool] | None:
    """When to stop a watch (which runs until stopped): once the server has received the call."""
    return (lambda: "tools/call" in recorded(record)) if command == "watch" else None


def server(record: Path, scenario: str = "full") -> list[str]:
    return ["--env", f"FIXTURE_RECORD={record}", "--", PY, str(FIXTURE), scenario]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_without_a_terminal_and_without_yes_nothing_is_sent(tmp_path, command):
    record = tmp_path / "record.jsonl"
    result = run_cli([*COMMANDS[command], *server(record)])  # CliRunner: stdin is no terminal
    assert result.exit_code == 3, (result.exit_code, result.stdout, result.stderr)
    assert "tools/list" in recorded(record)  # it did connect and look the tool up
    assert "tools/call" not in recorded(record)
    said = " ".join((result.stdout + result.stderr).split())  # as wrapped to the width, joined
    assert "'echo' is not marked read-only" in said and "pass --yes to call it" in said, said


@pytest.mark.parametrize("command", ["call", "load", "check"])
def test_with_yes_it_is_called(tmp_path, command):
    record = tmp_path / "record.jsonl"
    result = run_cli([*COMMANDS[command], "--yes", *server(record)])
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr)
    assert "tools/call" in recorded(record)


def test_watch_with_yes_calls(tmp_path):
    # A watch runs until stopped: it is stopped once the server has received the call.
    record = tmp_path / "record.jsonl"
    code, output = on_terminal([*COMMANDS["watch"], "--yes", *server(record)], None,
                               until=stopped("watch", record))
    assert "tools/call" in recorded(record), output
    assert "Call it?" not in output
    assert code == 0, output  # a watch stopped by Ctrl-C ends with 0


@pytest.mark.parametrize("command", ["call", "watch", "load", "check"])
def test_a_read_only_tool_is_called_without_asking(tmp_path, command):
    # The "poisoned" scenario's delete_file claims readOnlyHint: true (the fixture's POISONED_TOOLS).
    record = tmp_path / "record.jsonl"
    argv = [*COMMANDS[command], *server(record, "poisoned")]
    argv = [("delete_file path=x" if a == CALL else a) for a in argv]
    if command == "call":
        argv[1:3] = ["delete_file", "path=x"]
    code, output = on_terminal(argv, None, until=stopped(command, record))
    assert "Call it?" not in output
    assert code == 0, output  # a watch stopped by Ctrl-C ends with 0 (docs/commands/watch.md)
    assert "tools/call" in recorded(record), output


@pytest.mark.parametrize("answer", ["n", "y"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_on_a_terminal_it_asks(tmp_path, command, answer):
    record = tmp_path / "record.jsonl"
    code, output = on_terminal([*COMMANDS[command], *server(record)], answer, until=stopped(command, record))
    assert "Tool 'echo' is not marked read-only. It claims to be destructive." in output, output
    if command == "load":
        assert "A load run calls it over and over." in output
    if answer == "n":
        assert code == 3, output
        assert "not confirmed" in output
        assert "tools/call" not in recorded(record)
    else:
        assert "tools/call" in recorded(record), output
        assert code == 0, output  # a watch stopped by Ctrl-C ends with 0 (docs/commands/watch.md)


def on_terminal(args: list[str], answer: str | None, *, until: Callable[[], bool] | None = None,
                timeout: float = 90) -> tuple[int, str]:
    """Run `python -m mcpprobe ARGS` with stdin, stdout and stderr on a pseudo-terminal; type `answer`
    at the question. Once `until()` holds (a watch, which runs until stopped) it gets Ctrl-C (SIGINT)."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.chdir(ROOT)
        os.execvpe(PY, [PY, "-m", "mcpprobe", *args], {**os.environ, "COLUMNS": "200"})
    output = b""
    deadline = time.monotonic() + timeout
    interrupted = False
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                output += chunk
                if answer is not None and b"Call it?" in output:
                    os.write(fd, (answer + "\r").encode())
                    answer = None
            if until is not None and not interrupted and until():
                os.kill(pid, signal.SIGINT)
                interrupted = True
    finally:
        os.close(fd)
        ends = time.monotonic() + 30
        done, status = os.waitpid(pid, os.WNOHANG)
        while done == 0 and time.monotonic() < ends:
            time.sleep(0.05)
            done, status = os.waitpid(pid, os.WNOHANG)
        if done == 0:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), output.decode(errors="replace")
