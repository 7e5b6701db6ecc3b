"""Bad input from the user is a usage error: exit 2, one `Error:` line that names the input, no
traceback, and nothing started. Files that are not UTF-8 or are nested absurdly deep, numbers that
are not numbers, headers that would break HTTP framing or are not ASCII.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURE, PY, run_cli

FULL = ["--", PY, str(FIXTURE), "full"]
URL = "http://127.0.0.1:9/mcp"  # never contacted: every case here is refused before connecting


def _usage_error(args: list[str], *expected: str) -> str:
    result = run_cli(args)  # fails on any traceback
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.stderr
    for text in expected:
        assert text in errors[0], errors[0]
    assert result.stdout == ""
    return errors[0]


def _deep_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def _deep_yaml_flow(depth: int) -> str:
    return "servers: " + "[" * depth + "]" * depth + "\n"


def _deep_yaml_block(depth: int) -> str:
    return "".join(" " * i + "a:\n" for i in range(depth))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    made = {
        "latin1.json": b'{"note": "caf\xe9"}',
        "latin1.yaml": b"servers:\n  x: {command: caf\xe9}\n",
        "deep.json": _deep_json(100_000).encode(),
        "deep-object.json": ('{"a": ' + _deep_json(100_000) + "}").encode(),
        "deep-config.json": ('{"mcpServers": ' + _deep_json(50_000) + "}").encode(),
        "deep-flow.yaml": _deep_yaml_flow(50_000).encode(),
        "deep-block.yaml": _deep_yaml_block(3_000).encode(),
        "shallow-deep.json": ('{"a": ' + _deep_json(300) + "}").encode(),  # parses, but deeper than allowed
    }
    for name, data in made.items():
        (tmp_path / name).write_bytes(data)
    return {name: str(tmp_path / name) for name in made}


# ----- --args and KEY:=JSON -----


@pytest.mark.parametrize("name, expected", [
    ("latin1.json", "not UTF-8 text (byte 0xe9 at offset 13)"),
    ("deep.json", "nested more than 200 levels deep"),
    ("deep-object.json", "nested more than 200 levels deep"),
    ("shallow-deep.json", "nested more than 200 levels deep"),
])
def test_args_file(files: dict[str, str], name: str, expected: str) -> None:
    _usage_error(["call", "echo", "--args", f"@{files[name]}", "--yes", *FULL], f"--args @{files[name]}", expected)


def test_args_from_stdin_not_utf8() -> None:
    from click.testing import CliRunner

    from mcpprobe.cli.main import cli

    result = CliRunner().invoke(cli, ["call", "echo", "--args", "-", "--yes", *FULL], input=b'{"a": "\xff"}',
                                catch_exceptions=False)
    assert result.exit_code == 2
    assert "Error: --args - (stdin):1: not UTF-8 text" in result.stderr


@pytest.mark.parametrize("depth", [5_000, 300])
def test_deep_key_json(depth: int) -> None:
    _usage_error(["call", "echo", f"arr:={_deep_json(depth)}", "--yes", *FULL], "arr:=", "nested more than 200")


def test_reasonable_nesting_is_still_accepted(tmp_path: Path) -> None:
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"message": "hi", "extra": json.loads(_deep_json(50))}), encoding="utf-8")
    result = run_cli(["call", "echo", "--args", f"@{args}", "--yes", "--json", *FULL])
    assert result.exit_code == 0, result.stderr
    assert result.json["arguments"]["extra"] == json.loads(_deep_json(50))


# ----- configs, --expect, --baseline -----


@pytest.mark.parametrize("name, expected", [
    ("latin1.yaml", "not UTF-8 text (byte 0xe9 at offset 27)"),
    ("deep-config.json", "nested more than 200 levels deep"),
    ("deep-flow.yaml", "nested more than 200 levels deep"),
    ("deep-block.yaml", "nested more than 200 levels deep"),
])
def test_config_file(files: dict[str, str], name: str, expected: str) -> None:
    _usage_error(["probe", "--config", files[name], "--all"], files[name], expected)
    _usage_error(["servers", "--config", files[name]], files[name], expected)


@pytest.mark.parametrize("name, expected", [
    ("latin1.yaml", ":2: not UTF-8 text"),
    ("deep-flow.yaml", "nested more than 200 levels deep"),
    ("deep-block.yaml", "nested more than 200 levels deep"),
    ("deep.json", "nested more than 200 levels deep"),
])
def test_expect_file(files: dict[str, str], name: str, expected: str) -> None:
    _usage_error(["probe", "--expect", files[name], *FULL], f"--expect {files[name]}", expected)


@pytest.mark.parametrize("text", ["maxSeconds: nan\n", "maxSeconds: -inf\n", "maxSeconds: inf\n"])
def test_expect_max_seconds_must_be_finite(tmp_path: Path, text: str) -> None:
    path = tmp_path / "expect.yaml"
    path.write_text(text, encoding="utf-8")
    _usage_error(["probe", "--expect", str(path), *FULL], "maxSeconds must be a finite number")


@pytest.mark.parametrize("name, expected", [
    ("latin1.json", "not UTF-8 text"),
    ("deep.json", "nested more than 200 levels deep"),
    ("shallow-deep.json", "nested more than 200 levels deep"),
])
def test_baseline_file(files: dict[str, str], name: str, expected: str) -> None:
    _usage_error(["probe", "--baseline", files[name], *FULL], f"--baseline {files[name]}", expected)


SNAPSHOT_TOOLS = {"declared": True, "complete": True, "items": [{"name": "echo", "inputSchema": {}}]}


@pytest.mark.parametrize("change, expected", [
    ({"capabilities": 5}, "'capabilities' must be an object or null"),
    ({"capabilities": ["tools"]}, "'capabilities' must be an object or null"),
    ({"kinds": {"tools": []}}, "kinds.tools must be an object"),
    ({"kinds": {"tools": {**SNAPSHOT_TOOLS, "items": {}}}}, "kinds.tools.items must be a list"),
    ({"kinds": {"tools": {**SNAPSHOT_TOOLS, "complete": "yes"}}}, "kinds.tools.complete must be true or false"),
])
def test_baseline_with_wrong_types(tmp_path: Path, change: dict, expected: str) -> None:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"mcpprobeSnapshot": 1, "capabilities": {}, "kinds": {"tools": SNAPSHOT_TOOLS},
                                **change}), encoding="utf-8")
    _usage_error(["probe", "--baseline", str(path), *FULL], "not a snapshot written by mcpprobe", expected)


def test_baseline_with_odd_values_inside_items_is_compared(tmp_path: Path) -> None:
    """Values inside items are the server's data: odd ones are compared, never a crash (was exit 5)."""
    path = tmp_path / "baseline.json"
    tools = {**SNAPSHOT_TOOLS, "items": [{"name": "echo", "inputSchema": {"required": [{}], "properties": []}}]}
    path.write_text(json.dumps({"mcpprobeSnapshot": 1, "capabilities": {"tools": 3}, "kinds": {"tools": tools}}),
                    encoding="utf-8")
    result = run_cli(["probe", "--json", "--baseline", str(path), *FULL])
    assert result.exit_code == 1, result.stderr  # drift: echo changed, required "message" is breaking
    assert result.json["drift"]["changed"][0]["id"] == "echo"


# ----- numbers -----


@pytest.mark.parametrize("args", [
    ["watch", "--duration", "nan"],
    ["watch", "--settle", "nan"],
    ["watch", "--poll", "inf"],
    ["watch", "--keepalive", "-inf"],
    ["probe", "--connect-timeout", "nan"],
    ["probe", "--timeout", "nan"],
    ["probe", "--discover-timeout", "inf"],
    ["list", "tools", "--timeout", "NaN"],
])
def test_numbers_that_are_not_numbers(args: list[str]) -> None:
    _usage_error([*args, *FULL], f"'{args[-2]}'", "must be a finite number")


def test_timeout_from_the_environment_is_checked_too() -> None:
    result = run_cli(["probe", *FULL], env={"MCPPROBE_TIMEOUT": "nan"})
    assert result.exit_code == 2
    assert "must be a finite number" in result.stderr


# ----- headers, URLs, commands -----


@pytest.mark.parametrize("header, expected", [
    ("Content-Length: 5", "set by the HTTP client"),
    ("transfer-encoding: chunked", "set by the HTTP client"),
    ("Connection: close", "set by the HTTP client"),
    ("X-Uni: café", "non-ASCII character ('\\xe9')"),
    ("X-Ctl: a\x01b", "control character"),
    ("X-Bad(name): v", "a header name is"),
])
def test_headers_that_would_break_http(header: str, expected: str) -> None:
    _usage_error(["probe", "-H", header, URL], "--header", expected)


def test_non_ascii_header_from_a_config_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"web": {"url": URL, "headers": {"X-Uni": "café"}}}}),
                      encoding="utf-8")
    _usage_error(["probe", "--config", str(config), "-s", "web"], "non-ASCII")


@pytest.mark.parametrize("url, expected", [
    ("http://127.0.0.1:99999/mcp", "Port out of range"),
    ("http://[::1/mcp", "Invalid IPv6 URL"),
    ("http://127.0.0.1:9/m cp", "cannot contain spaces"),
])
def test_urls_that_cannot_be_used(url: str, expected: str) -> None:
    _usage_error(["probe", url], expected)


def test_nul_in_a_config_command_or_env(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {
        "args": {"command": PY, "args": ["a\u0000b"]},
        "env": {"command": PY, "env": {"A": "x\u0000y"}},
    }}), encoding="utf-8")
    _usage_error(["probe", "--config", str(config), "-s", "args"], "NUL")
    _usage_error(["probe", "--config", str(config), "-s", "env"], "NUL")


def test_a_stdio_target_is_shown_as_a_shell_would_take_it_back():
    """The command is shown quoted where it must be, so it can be pasted to run the server by hand."""
    script = f"exec {PY} {FIXTURE} full"
    result = run_cli(["probe", "--json", "--", "sh", "-c", script])
    assert result.exit_code == 0, result.stderr
    assert result.json["target"] == f"sh -c '{script}'"


# ----- found by the property test over every command line (test_command_lines.py): each was exit 70 -----


def test_a_root_under_a_home_that_does_not_exist():
    _usage_error(["call", "echo", "--root", "~no-such-user-here", URL], "--root '~no-such-user-here'")


@pytest.mark.parametrize("command", [["auth", "login"], ["auth", "logout"], ["auth", "status"]])
def test_an_auth_url_that_does_not_parse(command):
    _usage_error([*command, "https://[::1"], "'https://[::1' is not a URL")


def test_a_config_name_too_long_for_the_file_system(tmp_path: Path) -> None:
    _usage_error(["servers", "--config", "a" * 300], "--config " + "a" * 300)
