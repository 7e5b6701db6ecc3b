"""A reader that goes away (`| head`) never changes mcpprobe's exit code, nor prints a traceback.

Real processes and real pipes: the pipe's read end is closed before mcpprobe writes anything
(every write then fails with EPIPE), or after one byte (`| head -c1`). The exit code must be the
one the same run has with its output read to the end.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURE, PY, ROOT

FULL = ["--", PY, str(FIXTURE), "full"]


def _fleet_config(tmp_path: Path) -> str:
    config = tmp_path / "mcpprobe.yaml"
    config.write_text(f"servers:\n  good: {{command: {PY}, args: [{str(FIXTURE)!r}, full]}}\n"
                      "  broken: {command: /nonexistent/server}\n", encoding="utf-8")
    return str(config)


CASES = {
    "fleet-with-a-failed-member": (["probe", "--all"], 4),
    "fleet-json": (["probe", "--all", "--json"], 4),
    "command-not-found": (["probe", "--", "/nonexistent/server"], 4),
    "successful-call": (["call", "echo", "message=hi", "--yes", *FULL], 0),
    "successful-read": (["read", "fixture://readme", *FULL], 0),
    "list-with-findings": (["list", "tools", "--", PY, str(FIXTURE), "method-not-found"], 1),
    "probe-json": (["probe", "--json", *FULL], 0),
}


def _args(name: str, tmp_path: Path) -> list[str]:
    args, _ = CASES[name]
    return [*args[:2], "--config", _fleet_config(tmp_path), *args[2:]] if "--all" in args else list(args)


def _run(args: list[str], *, close: str, merge_stderr: bool = False) -> tuple[int, str]:
    """Run mcpprobe with stdout on a pipe whose reader leaves at once ("now"), after one byte
    ("one-byte"), or reads to the end ("never"). Returns the exit code and the separate stderr."""
    proc = subprocess.Popen([PY, "-m", "mcpprobe", *args], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE)
    assert proc.stdout is not None
    if close == "now":
        proc.stdout.close()
    elif close == "one-byte":
        proc.stdout.read(1)
        proc.stdout.close()
    else:
        proc.stdout.read()
    stderr = proc.stderr.read().decode("utf-8", "replace") if proc.stderr is not None else ""
    return proc.wait(timeout=60), stderr


@pytest.mark.parametrize("name", list(CASES))
def test_a_reader_that_leaves_at_once_keeps_the_exit_code(name: str, tmp_path: Path) -> None:
    args, expected = _args(name, tmp_path), CASES[name][1]
    read_code, _ = _run(args, close="never")
    closed_code, stderr = _run(args, close="now")
    assert read_code == expected
    assert closed_code == read_code, stderr
    assert "Traceback" not in stderr and "BrokenPipe" not in stderr, stderr


@pytest.mark.parametrize("name", ["fleet-with-a-failed-member", "successful-call", "successful-read",
                                  "command-not-found"])
def test_stdout_and_stderr_on_one_closed_pipe_keep_the_exit_code(name: str, tmp_path: Path) -> None:
    """`mcpprobe ... 2>&1 | head -5`: stderr goes to the closed pipe too."""
    args, expected = _args(name, tmp_path), CASES[name][1]
    assert _run(args, close="now", merge_stderr=True)[0] == expected
    assert _run(args, close="one-byte", merge_stderr=True)[0] == expected


@pytest.mark.parametrize("name", ["fleet-with-a-failed-member", "successful-call", "list-with-findings"])
def test_head_c1_keeps_the_exit_code(name: str, tmp_path: Path) -> None:
    args, expected = _args(name, tmp_path), CASES[name][1]
    code, stderr = _run(args, close="one-byte")
    assert code == expected, stderr
    assert "Traceback" not in stderr


def test_a_closed_pipe_does_not_stop_the_work(tmp_path: Path) -> None:
    """The call is still made, and its --save files written, when nobody reads stdout."""
    record = tmp_path / "record.jsonl"
    proc = subprocess.Popen([PY, "-m", "mcpprobe", "call", "echo", "message=hi", "--yes",
                             "-e", f"FIXTURE_RECORD={record}", *FULL], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert '"tools/call"' in record.read_text(encoding="utf-8")


@pytest.mark.parametrize("output", [["--json"], []])
def test_a_quiet_watch_stops_when_its_reader_leaves(output: list[str]) -> None:
    """Nothing changes on this server, so the watch writes nothing after its snapshot: it must
    still notice that nobody reads (`| head -1`) and stop, exit 0, instead of running forever."""
    proc = subprocess.Popen([PY, "-m", "mcpprobe", "watch", *output, *FULL], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    # The reader leaves once the first listing is all written: after its last line (the prompts'
    # snapshot event, or the human view's "Watching" line), or at the end of the output.
    last = b'"kind":"prompts"' if output else b"Watching for changes"
    while (line := proc.stdout.readline()) and last not in line:
        pass
    proc.stdout.close()
    try:
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 0
    assert "Traceback" not in proc.stderr.read().decode("utf-8", "replace")
