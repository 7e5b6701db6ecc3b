"""Every documented exit code, each produced by a real server doing the real thing.

One table: (name, how to run, expected exit code). A test per row, over stdio and, where the
scenario exists there, over streamable HTTP.
"""

from __future__ import annotations

import socket
import time

import pytest
from conftest import fixture_cmd, fixture_http, run_cli

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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_connection_refused_is_4():
    result = run_cli(["probe", "--json", f"http://127.0.0.1:{_free_port()}/mcp"])
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
    (["list", "widgets", "https://x.example/mcp"], "Invalid value"),
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
    assert elapsed < 1 + 1.5  # the timeout, plus a second, plus process start on a slow machine
