"""The phase spinner: on a terminal's stderr while the server starts and the lists are read, never
in a pipe and never with --json."""

from __future__ import annotations

from tests.conftest import run_subprocess
from tests.test_terminal_safety import run_in_pty

HIDE_CURSOR = "\x1b[?25l"


def test_spinner_names_the_phases_on_a_terminal() -> None:
    code, shown = run_in_pty(["probe", "--", "mcpprobe-demo"])
    assert code == 0, shown
    assert "starting mcpprobe-demo" in shown
    assert "waiting for the answer to server/discover" in shown
    assert "listing tools page 3" in shown  # the demo serves its tools in three pages
    # gone before the result is shown: the result follows the spinner's last erase
    assert shown.rindex("listing tools page") < shown.index("Server")


def test_list_shows_its_pages_on_a_terminal() -> None:
    code, shown = run_in_pty(["list", "tools", "--", "mcpprobe-demo"])
    assert code == 0, shown
    assert "listing tools page 1" in shown and "listing tools page 3" in shown


def test_no_spinner_with_json_on_a_terminal() -> None:
    code, shown = run_in_pty(["probe", "--json", "--", "mcpprobe-demo"])
    assert code == 0, shown
    assert HIDE_CURSOR not in shown and "starting mcpprobe-demo" not in shown


def test_no_spinner_in_a_pipe() -> None:
    result = run_subprocess(["probe", "--", "mcpprobe-demo"])
    assert result.exit_code == 0, result.stderr
    assert "starting" not in result.stderr and "waiting for" not in result.stderr
    assert HIDE_CURSOR not in result.stderr + result.stdout
