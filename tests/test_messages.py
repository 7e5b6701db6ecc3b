"""What a person sees when a command goes wrong: messages that name the fix."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize("args, suggestion", [
    (["probe", "npx", "-y", "pkg"], "mcpprobe probe -- npx -y pkg"),
    (["probe", "--timeout", "5", "--json", "npx", "-y", "pkg"], "mcpprobe probe --timeout 5 --json -- npx -y pkg"),
    (["list", "tools", "uvx", "--from", "x", "srv"], "mcpprobe list tools -- uvx --from x srv"),
])
def test_an_option_of_the_server_command_suggests_the_separator(args: list[str], suggestion: str) -> None:
    result = run_cli(args)
    assert result.exit_code == 2
    assert suggestion in result.stderr and "after '--'" in result.stderr


def test_an_unknown_option_of_mcpprobe_itself_is_reported_as_before() -> None:
    result = run_cli(["probe", "--bogus"])
    assert result.exit_code == 2 and "--bogus" in result.stderr and "after '--'" not in result.stderr


@pytest.mark.parametrize("word, url", [
    ("127.0.0.1:3101/mcp", "http://127.0.0.1:3101/mcp"),
    ("localhost:8000", "http://localhost:8000"),
    ("mcp.example.com/mcp", "https://mcp.example.com/mcp"),
])
def test_an_address_without_a_scheme_suggests_the_url(word: str, url: str) -> None:
    result = run_cli(["probe", word])
    assert result.exit_code == 2
    assert f"mcpprobe probe {url}" in result.stderr and "-- " + word not in result.stderr


def test_a_file_name_still_suggests_the_separator() -> None:
    result = run_cli(["probe", "server.py"])
    assert result.exit_code == 2 and "mcpprobe probe -- server.py" in result.stderr
