"""Every documented exit code, each produced by a real server doing the real thing.

One table: (name, how to run, expected exit code). A test per row, over stdio and, where the
scenario exists there, over streamable HTTP.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid

import pytest
from conftest import FIXTURE, PY, ROOT, fixture_cmd, fixture_http, refused_port, run_cli

STDIO_CASES = [
    # (id, args before the target, scenario, extra env, expected exit)
    ("ok-full", ["probe"], "full", None, 0),
    ("ok-empty-lists", ["probe"], "empty", None, 0),
    ("ok-nothing-declared", ["probe"], "none", None, 0),
    ("ok-modern", ["probe"], "modern", None, 0),
    ("findings-method-not-found", ["probe"], "method-not-found", None, 1),
    ("findings-repeated-cursor", ["probe"], "repeated-cursor", None, 1),
    ("findings-error-page2", ["probe"], "error-page2", None, 1),
    ("findings-malformed-item", ["probe"], "malformed-item", None, 1),
    ("refused-list-undeclared", ["list", "prompts"], "tools-only", None, 3),
    ("connection-crash-on-start", ["probe"], "crash-on-start", None, 4),
    ("connection-crash-on-initialize", ["probe"], "crash-on-initialize", None, 4),
    ("connection-exit-mid-list", ["probe"], "exit-mid-list", None, 4),
    ("protocol-unsupported-version", ["probe"], "unsupported-version", None, 5),
    ("protocol-modern-forced-on-legacy", ["probe", "--protocol", "modern"], "full", None, 5),
    ("timeout-initialize", ["probe", "--timeout", "1"], "hang-initialize", None, 6),
    ("timeout-list", ["probe", "--timeout", "1"], "slow", {"FIXTURE_DELAY": "5"}, 6),
]


@pytest.mark.parametrize("case", STDIO_CASES, ids=[c[0] for c in STDIO_CASES])
def test_exit_code_stdio(case):
    _, args, scenario, env, expected = case
    env_args = [arg for key, value in (env or {}).items() for arg in ("--env", f"{key}={value}")]
    result = run_cli([*args, *env_args, "--json", "--", *fixture_cmd(scenario)])
    assert result.exit_code == expected, (result.stdout, result.stderr)
    doc = result.json
    assert doc["exitCode"] == expected
    assert doc["ok"] is (expected == 0)


HTTP_CASES = [
    ("ok-full", ["probe"], "full", 0),
    ("ok-modern", ["probe"], "modern", 0),
    ("findings-method-not-found", ["probe"], "method-not-found", 1),
    ("findings-error-page2", ["probe"], "error-page2", 1),
    ("refused-list-undeclared", ["list", "resources"], "tools-only", 3),
    ("connection-exit-mid-list", ["probe"], "exit-mid-list", 4),
    ("protocol-unsupported-version", ["probe"], "unsupported-version", 5),
    ("connection-http-503", ["probe"], "unavailable", 4),
    ("protocol-html-page", ["probe"], "html-not-mcp", 5),
    ("timeout-initialize", ["probe", "--timeout", "1"], "hang-initialize", 6),
    ("auth-401", ["probe"], "auth-required", 7),
]


@pytest.mark.parametrize("case", HTTP_CASES, ids=[c[0] for c in HTTP_CASES])
def test_exit_code_http(case):
    _, args, scenario, expected = case
    with fixture_http(scenario) as url:
        result = run_cli([*args, "--json", url])
    assert result.exit_code == expected, (result.stdout, result.stderr)
    assert result.json["exitCode"] == expected


def test_connection_refused_is_4():
    with refused_port() as port:
        result = run_cli(["probe", "--json", f"http://127.0.0.1:{port}/mcp"])
    assert result.exit_code == 4
    assert result.json["error"]["code"] == "connection-failed"
    assert "cannot connect" in result.json["error"]["message"]


def test_command_not_found_is_4():
    result = run_cli(["probe", "--", "no-such-mcp-server-binary-xyz"])
    assert result.exit_code == 4
    assert "command not found: no-such-mcp-server-binary-xyz" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["probe"], "no server given"),
    (["probe", "python3", "server.py"], "put its command after '--'"),
    (["probe", "https://x.example/mcp", "--", "python3"], "not both"),
    (["probe", "--header", "NoColonHere", "https://x.example/mcp"], "--header expects"),
    (["probe", "--protocol", "2020-01-01", "https://x.example/mcp"], "--protocol '2020-01-01'"),
    (["probe", "--timeout", "0", "https://x.example/mcp"], "must be greater than 0"),
    (["probe", "--env", "NOEQUALS", "--", "python3"], "--env expects KEY=VALUE"),
    (["probe", "--header", "A: b", "--", "python3"], "--header applies to HTTP"),
    (["probe", "ftp://x.example/mcp"], "not an http(s) URL"),
    (["list", "widgets", "https://x.example/mcp"],
     "'widgets' is not a kind to list; the kinds are tools, resources, templates, prompts or tasks. "
     "For example:\n  mcpprobe list tools https://x.example/mcp\n"),
    (["list", "--json", "--", "python3", "my server.py"],
     "missing the kind to list: tools, resources, templates, prompts or tasks. For example:\n"
     "  mcpprobe list tools -- python3 'my server.py'\n"),
    (["list", "https://x.example/mcp"], "For example:\n  mcpprobe list tools https://x.example/mcp\n"),
    (["list", "Prompt", "-s", "mine"], "For example:\n  mcpprobe list prompts -s mine\n"),
    (["list"], "missing the kind to list: tools, resources, templates, prompts or tasks. For example:\n"
               "  mcpprobe list tools -- mcpprobe-demo\n"),
    (["probe", "--transport", "stdio", "https://x.example/mcp"], "needs a command"),
])
def test_usage_errors_are_2(args, message):
    result = run_cli(args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_never_answering_server_ends_within_timeout_plus_a_second():
    started = time.monotonic()
    result = run_cli(["probe", "--timeout", "1", "--", *fixture_cmd("hang-initialize")])
    elapsed = time.monotonic() - started
    assert result.exit_code == 6
    # The whole second went to the wait for server/discover (--discover-timeout is 2 s).
    assert "did not answer server/discover within 1 s" in result.stderr
    # The message above shows which clock ended the wait; the bound only tells "ended by the 1 s
    # timeout" from "waited on", with room for a loaded machine (bench/ measures how fast).
    assert elapsed < 1 + 10


# Paths where mcpprobe itself, not the server, decides the code: its own bug, a reader of stdout
# that went away, Ctrl-C. A bug is forced with the documented test hook (mcpprobe/testhooks.py).
EDGE_CASES = [
    # (id, args before the target, scenario, crash phase, expected exit)
    ("bug-reading-the-command-line", ["list", "tools"], "full", "parse", 70),
    ("bug-in-command", ["list", "tools"], "full", "command", 70),
    ("bug-in-operation", ["list", "tools"], "full", "operation", 70),
    ("bug-in-probe", ["probe"], "full", "operation", 70),
    ("bug-in-call", ["call", "echo", "message=hi", "--yes"], "full", "operation", 70),
]


@pytest.mark.parametrize("case", EDGE_CASES, ids=[c[0] for c in EDGE_CASES])
def test_exit_code_for_a_bug(case):
    _, args, scenario, phase, expected = case
    result = run_cli([*args, "--", *fixture_cmd(scenario)], env={"MCPPROBE_TEST_CRASH": phase})
    assert result.exit_code == expected, (result.stdout, result.stderr)
    line = " ".join(result.stderr.split())  # one line, wherever a terminal-width renderer wrapped it
    assert f"RuntimeError: crash requested by MCPPROBE_TEST_CRASH={phase}" in line
    assert "a bug in mcpprobe" in line and "--traceback" in line


def test_a_bug_in_one_member_of_a_fleet_is_70_and_the_others_are_probed(tmp_path):
    config = tmp_path / "mcpprobe.yaml"
    config.write_text(
        "servers:\n"
        f"  a: {{command: {PY}, args: [{str(FIXTURE)!r}, full]}}\n"
        f"  b: {{command: {PY}, args: [{str(FIXTURE)!r}, full]}}\n")
    result = run_cli(["probe", "--all", "--json", "--config", str(config)], env={"MCPPROBE_TEST_CRASH": "operation"})
    assert result.exit_code == 70, result.stderr
    docs = result.json
    assert [doc["exitCode"] for doc in docs] == [70, 70]
    assert {doc["error"]["code"] for doc in docs} == {"internal-error"}


@pytest.mark.parametrize("phase", ["operation", "command", "parse"])
@pytest.mark.parametrize("command", [["list", "tools"], ["probe"], ["call", "echo", "message=hi", "--yes"]])
def test_traceback_shows_the_stack_of_a_bug_and_still_exits_70(command, phase):
    # Inside the event loop the bug arrives in an exception group: the stack shows the group, the
    # exit code is a bug's all the same (not Python's 1, which CI would read as "a MUST failed").
    env = {**os.environ, "MCPPROBE_TEST_CRASH": phase}
    proc = subprocess.run([PY, "-m", "mcpprobe", "--traceback", *command, "--", *fixture_cmd("full")],
                          capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert "Traceback" in proc.stderr and "crash_point" in proc.stderr
    assert proc.returncode == 70, proc.stderr[-2000:]
    assert f"internal error: RuntimeError: crash requested by MCPPROBE_TEST_CRASH={phase}" in proc.stderr
    # MCPPROBE_TRACEBACK=1 is the same switch
    env["MCPPROBE_TRACEBACK"] = "1"
    proc = subprocess.run([PY, "-m", "mcpprobe", *command, "--", *fixture_cmd("full")],
                          capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)
    assert "Traceback" in proc.stderr and proc.returncode == 70, proc.stderr[-2000:]


@pytest.mark.parametrize("scenario, expected", [("full", 0), ("method-not-found", 1), ("crash-on-start", 4)],
                         ids=["closed-pipe-success", "closed-pipe-findings", "closed-pipe-connection"])
def test_a_closed_stdout_keeps_the_exit_code(scenario, expected):
    # The reader is gone before mcpprobe writes a byte: every write to stdout fails with EPIPE.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([PY, "-m", "mcpprobe", "probe", "--json", "--", *fixture_cmd(scenario)],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=60, cwd=ROOT)
    finally:
        os.close(write_end)
    assert proc.returncode == expected, proc.stderr
    assert "Traceback" not in proc.stderr


def _server_running(marker: str) -> bool:
    listing = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    return any(marker in line and line.startswith(f"{PY} -c") for line in listing.splitlines())


@pytest.mark.parametrize("phase", ["imports", "load"])
@pytest.mark.parametrize("as_json", [True, False], ids=["json", "human"])
def test_ctrl_c_before_the_command_runs_is_130(phase, as_json):
    """Ctrl-C while mcpprobe loads (a server started early is waiting) or reads its command line
    is an interruption like any other: "interrupted", exit 130, and with --json the interrupted
    document; not click's "Aborted!" with exit 1, and no server left behind. The test hook sends a
    real SIGINT at that phase (mcpprobe.testhooks)."""
    marker = f"marker-{uuid.uuid4().hex[:12]}"
    server = f"import time; time.sleep(60)  # {marker}"
    options = ["--json"] if as_json else []
    proc = subprocess.run([PY, "-m", "mcpprobe", "probe", *options, "--", PY, "-c", server],
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "MCPPROBE_TEST_INTERRUPT": phase})
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "interrupted" and "Aborted" not in proc.stderr
    if as_json:
        doc = json.loads(proc.stdout)
        assert doc["exitCode"] == 130 and doc["command"] == "probe" and doc["error"]["code"] == "interrupted"
    else:
        assert proc.stdout == ""
    assert not _server_running(marker)


def test_ctrl_c_is_130():
    marker = f"marker-{uuid.uuid4().hex[:12]}"
    server = (f"import runpy, sys; sys.argv = [{str(FIXTURE)!r}, 'hang-initialize']; "
              "runpy.run_path(sys.argv[0], run_name='__main__')")
    proc = subprocess.Popen([PY, "-m", "mcpprobe", "probe", "--json", "--timeout", "60", "--", PY, "-c", server,
                             marker], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _server_running(marker):
        time.sleep(0.1)
    # The server may be started before mcpprobe's imports are done (an early start): the signal
    # can come while it loads, reads its command line or waits for the server; 130 every time.
    assert _server_running(marker), "mcpprobe should have started the server"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert json.loads(out)["exitCode"] == 130
    assert "Traceback" not in err


@pytest.mark.parametrize("header, seconds", [("30", 30), ("", None)])
def test_http_503_is_an_unavailable_server_with_its_retry_after(header, seconds):
    """A 503 without a JSON-RPC body (a proxy with no backend, a server starting or in maintenance)
    is the connection stage: the server is not there to answer, so a script may wait and retry."""
    with fixture_http("unavailable", env={"FIXTURE_RETRY_AFTER": header}) as url:
        result = run_cli(["probe", "--json", url])
    assert result.exit_code == 4, (result.stdout, result.stderr)
    error = result.json["error"]
    assert error["code"] == "server-unavailable"
    assert "HTTP 503 Service Unavailable" in error["message"]
    assert error["detail"]["status"] == 503 and error["detail"]["retryAfter"] == seconds
    assert ("retry after 30 s" in error["message"]) is (seconds == 30)


@pytest.mark.parametrize("command", [["check", "--call"], ["watch", "--call"], ["load", "--call"]])
def test_a_bad_pair_in_a_call_option_is_a_usage_error_not_a_traceback(command):
    # Raised in the option's callback, while click reads the command line: it once escaped the edge as
    # a Python traceback with exit 1, which CI reads as "a MUST failed".
    proc = subprocess.run([PY, "-m", "mcpprobe", *command, "execute_sql sql=SELECT 1", "--", PY, "-c", "pass"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "Invalid value for '--call': 'execute_sql sql=SELECT 1': expected KEY=VALUE or KEY:=JSON, got '1'" \
        in proc.stderr
