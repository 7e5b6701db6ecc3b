"""The phase spinner: on a terminal's stderr while the server starts and the lists are read, never
in a pipe and never with --json."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURE, PY, run_subprocess
from tests.e2e.hostile.test_terminal_safety import run_in_pty

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


def _fleet_config(tmp_path: Path) -> Path:
    servers = {"full": "full", "tools": "tools-only", "broken": "crash-on-start"}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"mcpServers": {name: {"command": PY, "args": [str(FIXTURE), scenario]}
                                               for name, scenario in servers.items()}}), encoding="utf-8")
    return path


def test_a_fleet_counts_its_servers_on_a_terminal(tmp_path: Path) -> None:
    config = _fleet_config(tmp_path)
    code, shown = run_in_pty(["probe", "--all", "--config", str(config), "--protocol", "legacy",
                              "--concurrency", "1"])
    assert code == 4, shown  # the broken member's exit code, the worst of the fleet
    assert "probing 3 servers" in shown
    assert "done 1 of 3 servers" in shown and "done 3 of 3 servers, 1 failing" in shown
    # gone before the fleet's table is shown
    assert shown.rindex("done 3 of 3") < shown.index("server ")


def test_no_fleet_count_in_a_pipe_or_with_json(tmp_path: Path) -> None:
    config = _fleet_config(tmp_path)
    for extra in ([], ["--json"]):
        result = run_subprocess(["probe", "--all", "--config", str(config), "--protocol", "legacy", *extra])
        assert result.exit_code == 4, result.stderr
        assert "done 1 of" not in result.stderr and HIDE_CURSOR not in result.stderr + result.stdout
    code, shown = run_in_pty(["probe", "--all", "--config", str(config), "--protocol", "legacy", "--json"])
    assert code == 4 and "done 1 of" not in shown and "probing 3 servers" not in shown
