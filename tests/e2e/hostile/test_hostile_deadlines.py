"""A server that holds mcpprobe up gets `--timeout` and no more; a hostile depth never crashes it.

Every case is a real server misbehaving (tests/fixtures/deadline_server.py), over stdio or on
127.0.0.1, and mcpprobe run as a real process: it must end within the timeout plus a grace that a
loaded machine needs, with the documented exit code, one JSON document, no traceback and no
server process left behind.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid

import pytest
from conftest import PY, ROOT, http_server, run_subprocess

SERVER = ROOT / "tests" / "fixtures" / "deadline_server.py"
TIMEOUT = 2
# Beyond --timeout: interpreter start, the handshake, a cancellation notice (1 s), the server's
# shutdown (SIGTERM, then SIGKILL after 2 s), on a loaded 2-core machine.
GRACE = 10


def _server(mode: str, arg: str = "-") -> tuple[list[str], str]:
    marker = f"marker-{uuid.uuid4().hex[:12]}"
    return [PY, str(SERVER), mode, arg, marker], marker


def _alive(marker: str) -> list[str]:
    out = subprocess.run(["ps", "-ww", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if marker in line]


def _gone(marker: str, seconds: float = 5) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _alive(marker)


def _timed(args: list[str]):
    started = time.monotonic()
    result = run_subprocess(args, timeout=TIMEOUT + GRACE + 30)  # no Traceback: checked there
    return result, time.monotonic() - started


# ----- requests that never end -----

def test_a_stdio_server_that_stops_reading_during_a_big_argument(tmp_path):
    # 2 MB do not fit in a pipe: the write itself blocks, not the wait for the answer.
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps({"text": "x" * 2_000_000}))
    command, marker = _server("deaf")
    result, elapsed = _timed(["call", "--yes", "echo", "--args", f"@{args_file}", "--json", "--protocol", "legacy",
                              "--timeout", str(TIMEOUT), "--", *command])
    assert result.exit_code == 6, result.stderr
    assert result.json["exitCode"] == 6
    assert "tools/call: no answer within 2 s" in result.json["error"]["message"]
    # The blocked write is the server's time: the call ends at --timeout, not after a second
    # --timeout of waiting for an answer to a request never delivered, nor after a cancel notice
    # the same server would not read (mcpprobe's own clock, so a loaded machine does not matter).
    call = next(timing for timing in result.json["timings"] if timing["phase"] == "call")
    assert TIMEOUT * 1000 <= call["ms"] < TIMEOUT * 1000 + 900, call
    assert elapsed < TIMEOUT + GRACE
    assert _gone(marker)


def test_a_flood_of_server_requests_from_a_server_that_stops_reading():
    # Our answers to 20000 pings fill the pipe; our own request must still end at --timeout.
    command, marker = _server("flood-deaf", "20000")
    result, elapsed = _timed(["list", "tools", "--json", "--protocol", "legacy", "--timeout", str(TIMEOUT),
                              "--", *command])
    assert result.exit_code == 6, result.stderr
    assert result.json["exitCode"] == 6
    assert elapsed < TIMEOUT + GRACE
    assert _gone(marker)


def test_a_flood_of_server_requests_is_capped_and_reported():
    command, marker = _server("flood", "20000")
    result, _ = _timed(["probe", "--json", "--protocol", "legacy", "--timeout", "30", "--", *command])
    assert result.exit_code == 0, result.stderr
    floods = [f for f in result.json["findings"] if f["code"] == "request-flood"]
    assert len(floods) == 1, result.json["findings"]
    # Never more answered than asked, and the excess counted rather than queued.
    assert 0 < floods[0]["detail"]["unanswered"] <= 20000
    assert _gone(marker)


def _http(mode: str):
    return http_server([PY, str(SERVER), mode])


def test_an_http_server_that_never_answers_the_initialized_notification():
    with _http("hang-initialized") as url:
        result, elapsed = _timed(["probe", "--json", "--timeout", str(TIMEOUT), url])
    assert result.exit_code == 6, result.stderr
    assert result.json["exitCode"] == 6
    assert "notifications/initialized" in result.json["error"]["message"]
    assert elapsed < TIMEOUT + GRACE


def test_an_http_server_that_never_answers_the_cancellation_notice():
    # tools/call times out; the POST of notifications/cancelled then hangs too.
    with _http("hang-cancelled") as url:
        result, elapsed = _timed(["call", "--yes", "echo", "--json", "--protocol", "legacy", "--timeout", str(TIMEOUT),
                                  url])
    assert result.exit_code == 6, result.stderr
    assert result.json["exitCode"] == 6
    assert elapsed < TIMEOUT + GRACE


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_a_legacy_sse_server_whose_post_endpoint_never_answers(protocol):
    with _http("sse-hang-post") as url:
        result, elapsed = _timed(["probe", "--json", "--transport", "sse", "--protocol", protocol,
                                  "--timeout", str(TIMEOUT), url])
    assert result.exit_code == 6, result.stderr
    assert result.json["exitCode"] == 6
    assert elapsed < TIMEOUT + GRACE


def test_a_legacy_sse_stream_that_never_names_its_endpoint():
    # Connecting is part of the handshake: --timeout caps it even below --connect-timeout.
    with _http("sse-silent") as url:
        result, elapsed = _timed(["probe", "--json", "--transport", "sse", "--connect-timeout", "60",
                                  "--timeout", str(TIMEOUT), url])
    assert result.exit_code == 6, result.stderr
    assert "no 'endpoint' event within 2 s" in result.json["error"]["message"]
    assert elapsed < TIMEOUT + GRACE


# ----- replies nested too deep -----

COMMANDS = {
    "probe": ["probe", "--json"],
    "list": ["list", "tools", "--json"],
    "call": ["call", "--yes", "echo", "--json"],
    "watch": ["watch", "--json", "--duration", "2"],
}


@pytest.mark.parametrize("depth", [990, 1000, 100_000])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_reply_nested_too_deep_is_output_not_a_crash(command, depth):
    # 990 parses in Python's own parser; 1000 and 100000 do not: all three are refused the same way.
    server, marker = _server("deep", str(depth))
    # Exit 0, not 6: the 10 s timeout never struck, so no elapsed-time bound is needed here.
    result, _ = _timed([*COMMANDS[command], "--protocol", "legacy", "--timeout", "10", "--", *server])
    assert result.exit_code == 0, result.stderr
    if command == "watch":
        lines = [json.loads(line) for line in result.stdout.splitlines()]  # NDJSON: every line parses
        assert lines and lines[-1]["event"] == "end" and lines[-1]["reason"] == "duration", lines[-1:]
        assert "interrupted" not in result.stdout
    else:
        doc = result.json
        assert doc["exitCode"] == 0
    if command == "probe":
        deep = [f for f in doc["findings"] if f["code"] == "non-protocol-output"]
        assert deep and "nested more than 512 levels deep" in deep[0]["message"], doc["findings"]
    assert _gone(marker)


# ----- Ctrl-C while a slow server shuts down -----

@pytest.mark.parametrize("presses", [1, 2])
@pytest.mark.parametrize("command, code", [(["list", "tools"], 0), (["probe"], 0), (["call", "--yes", "echo"], 130)])
def test_ctrl_c_while_a_slow_server_shuts_down(tmp_path, command, code, presses):
    """The result is complete; the server ignores EOF and SIGTERM for 6 s; Ctrl-C then ends
    mcpprobe cleanly (docs/exit-codes.md): a result printed before the shutdown (probe, list) keeps
    its exit code; call prints after it, so its result is marked interrupted, with exit 130. No
    traceback, and the server killed with SIGKILL rather than left behind (after the grace; at
    once on a second Ctrl-C)."""
    eof = tmp_path / "eof-seen"
    server, marker = _server("slow-exit", str(eof))
    proc = subprocess.Popen([PY, "-m", "mcpprobe", *command, "--json", "--protocol", "legacy", "--timeout", "10",
                             "--", *server], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ})
    try:
        deadline = time.monotonic() + 30
        while not eof.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert eof.exists(), "mcpprobe should have closed the server's stdin"
        for _ in range(presses):
            proc.send_signal(signal.SIGINT)
            time.sleep(0.3)
        out, err = proc.communicate(timeout=GRACE + 5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err, err
    assert proc.returncode == code, err
    doc = json.loads(out)
    assert doc["exitCode"] == code
    if command[0] == "call":
        assert doc["interrupted"] is True and doc["result"]["content"][0]["text"].startswith("ok")
    assert _gone(marker)


def test_the_fixture_ignores_sigterm(tmp_path):
    """The slow shutdown above is real: SIGTERM alone does not end this server."""
    server, marker = _server("slow-exit", str(tmp_path / "eof"))
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        # An answered ping: the server reads its input, so its signal dispositions are set.
        proc.stdin.write(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
        proc.stdin.flush()
        assert b'"id": 1' in proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(1)
    finally:
        proc.kill()
        proc.wait()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
    assert _gone(marker)


@pytest.mark.parametrize("command", ["list", "call", "probe"])
def test_an_answer_nested_too_deep_fails_its_request_at_once(command):
    """The answer itself is refused for its nesting: its id comes first, so the request fails then,
    a protocol error, instead of waiting out a --timeout of 60 s for an answer already refused."""
    server, marker = _server("deep-answer", "tools/call" if command == "call" else "tools/list")
    result, elapsed = _timed([*COMMANDS[command], "--protocol", "legacy", "--timeout", "60", "--", *server])
    assert result.exit_code == 5, result.stderr
    doc = result.json
    refused = "the answer was refused before parsing: a message nested more than 512 levels deep"
    if command == "call":
        assert refused in doc["error"]["message"]
    else:
        failed = [f for f in doc["findings"] if f["code"] == "list-failed"]
        assert failed and refused in failed[0]["message"], doc["findings"]
    assert elapsed < 30
    assert _gone(marker)
