"""Named servers from real config files in temporary folders: every format, the search order, the
user config dir per system, variable expansion and its errors, VS Code inputs, secrets masked."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpprobe.fleet.config import (
    ConfigError,
    discover,
    input_env_name,
    load_file,
    resolve,
    search_path,
)
from mcpprobe.paths import user_config_dir
from tests.conftest import FIXTURE, PY, fixture_http, run_cli


def _stdio(scenario: str, **extra: object) -> dict[str, object]:
    return {"command": PY, "args": [str(FIXTURE), scenario], **extra}


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An empty HOME and XDG_CONFIG_HOME, and an empty project folder as the current directory."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "APPDATA": ""}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def test_every_format_is_found_in_the_documented_order(home: dict[str, str]) -> None:
    project, user, xdg = Path.cwd(), Path(home["HOME"]), Path(home["XDG_CONFIG_HOME"])
    _write(project / "mcpprobe.yaml", f"servers:\n  own:\n    command: {PY}\n    args: [x]\n")
    _write(xdg / "mcpprobe" / "config.yaml", "servers:\n  userdir:\n    url: http://127.0.0.1:1/mcp\n")
    _write(project / ".mcp.json", {"mcpServers": {"claude-code": _stdio("full"), "own": _stdio("none")}})
    _write(project / ".cursor" / "mcp.json", {"mcpServers": {"cursor-project": {"url": "http://h/sse"}}})
    _write(project / ".vscode" / "mcp.json",
           '{\n  // VS Code allows comments\n  "servers": {"vscode": {"type": "http", "url": "http://h/mcp"},},\n}\n')
    _write(user / ".claude.json", {"numStartups": 3, "mcpServers": {"claude-user": _stdio("full")}})
    _write(user / ".cursor" / "mcp.json", {"mcpServers": {"cursor-user": _stdio("full")}})
    _write(user / ".codeium" / "windsurf" / "mcp_config.json", {"mcpServers": {"windsurf": {"serverUrl": "http://w/mcp"}}})
    _write(xdg / "Claude" / "claude_desktop_config.json", {"mcpServers": {"desktop": _stdio("full")}})
    _write(xdg / "Code" / "User" / "mcp.json", {"servers": {"vscode-user": {"type": "sse", "url": "http://v/x"}}})

    result = run_cli(["servers", "--json"])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    names = [s["name"] for s in doc["servers"]]
    assert names == ["own", "userdir", "claude-code", "cursor-project", "vscode", "claude-user", "cursor-user",
                     "windsurf", "desktop", "vscode-user"]
    by_name = {s["name"]: s for s in doc["servers"]}
    assert by_name["own"]["source"] == str(project / "mcpprobe.yaml")
    assert by_name["cursor-project"]["transport"] == "sse"
    assert by_name["vscode"]["format"] == "vscode" and by_name["vscode"]["transport"] == "http"
    assert by_name["windsurf"]["url"] == "http://w/mcp"
    assert by_name["vscode-user"]["transport"] == "sse"
    assert [s["source"] for s in doc["shadowed"]] == [str(project / ".mcp.json")]
    human = run_cli(["servers"])
    assert "claude-code" in human.stdout and "shadowed: own" in human.stdout
    listed = run_cli(["probe", "--list-servers"])
    assert listed.exit_code == 0 and "windsurf" in listed.stdout


@pytest.mark.parametrize(("platform", "env", "expected"), [
    ("linux", {"HOME": "/h"}, "/h/.config/mcpprobe"),
    ("linux", {"HOME": "/h", "XDG_CONFIG_HOME": "/x"}, "/x/mcpprobe"),
    ("darwin", {"HOME": "/h"}, "/h/Library/Application Support/mcpprobe"),
    ("win32", {"USERPROFILE": "C:/u", "APPDATA": "C:/u/AppData/Roaming"}, "C:/u/AppData/Roaming/mcpprobe"),
])
def test_user_config_dir_per_system(platform: str, env: dict[str, str], expected: str) -> None:
    assert user_config_dir(env, platform) == Path(expected)


def test_claude_desktop_path_per_system() -> None:
    assert Path("/h/Library/Application Support/Claude/claude_desktop_config.json") in search_path(
        Path("/p"), {"HOME": "/h"}, "darwin")
    assert Path("C:/r/Claude/claude_desktop_config.json") in search_path(Path("/p"), {"APPDATA": "C:/r"}, "win32")


def test_probe_a_named_stdio_server_with_env_expansion(tmp_path: Path) -> None:
    config = _write(tmp_path / "servers.yaml", "servers:\n  full:\n"
                    f"    command: {json.dumps(PY)}\n    args: [{json.dumps(str(FIXTURE))}, full]\n"
                    "    env: {MODE: '${env:PROBE_MODE}', OTHER: '${UNSET_VAR:-fallback}'}\n")
    result = run_cli(["probe", "-s", "full", "--config", str(config), "--json", "--protocol", "legacy"],
                     env={"PROBE_MODE": "fast-mode"})
    assert result.exit_code == 0, result.stderr
    assert result.json["server"] == {"name": "full", "source": str(config)}
    assert result.json["serverInfo"]["name"] == "fixture-full"
    listed = run_cli(["list", "tools", "-s", "full", "--config", str(config), "--json"],
                     env={"PROBE_MODE": "x"})
    assert listed.exit_code == 0 and [t["name"] for t in listed.json["items"]] == ["echo", "add"]


def test_entry_env_reaches_the_server_and_is_masked(tmp_path: Path) -> None:
    """The server prints its environment variable and dies: the value was passed, and is redacted."""
    code = "import os, sys; sys.stderr.write('token is ' + os.environ['API_TOKEN'] + '\\n'); sys.exit(3)"
    config = _write(tmp_path / ".mcp.json", {"mcpServers": {"leaky": {
        "command": PY, "args": ["-c", code], "env": {"API_TOKEN": "${SECRET_SOURCE}"}}}})
    result = run_cli(["probe", "-s", "leaky", "--config", str(config), "--json"],
                     env={"SECRET_SOURCE": "s3cr3t-value-42"})
    assert result.exit_code == 4
    assert "token is [redacted]" in result.json["serverStderr"]
    assert "s3cr3t-value-42" not in result.stdout + result.stderr


def test_a_missing_variable_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    config = _write(tmp_path / "mcpprobe.yaml", "servers:\n  gh:\n    command: gh-server\n"
                    "    env: {GITHUB_TOKEN: '${NOPE_NOT_SET}'}\n")
    result = run_cli(["probe", "-s", "gh", "--config", str(config)], env={"NOPE_NOT_SET": None})  # type: ignore[dict-item]
    assert result.exit_code == 2
    assert "NOPE_NOT_SET is not set" in result.stderr and "'gh'" in result.stderr and str(config) in result.stderr


def test_http_entry_with_headers(tmp_path: Path) -> None:
    with fixture_http("full") as url:
        config = _write(tmp_path / "mcp.json", {"mcpServers": {"web": {
            "type": "http", "url": url, "headers": {"Authorization": "Bearer ${WEB_TOKEN}"}}}})
        trace = tmp_path / "trace.log"
        result = run_cli(["probe", "-s", "web", "--config", str(config), "--json", "--trace", str(trace)],
                         env={"WEB_TOKEN": "tok-123456"})
    assert result.exit_code == 0, result.stderr
    assert result.json["transport"] == "http"
    text = trace.read_text()
    assert '"authorization": "[redacted]"' in text and "tok-123456" not in text


def test_vscode_inputs_are_refused_clearly_without_a_terminal(tmp_path: Path) -> None:
    config = _write(tmp_path / ".vscode" / "mcp.json", {
        "inputs": [{"type": "promptString", "id": "api-key", "description": "The API key", "password": True}],
        "servers": {"full": {"type": "stdio", "command": PY, "args": [str(FIXTURE), "full"],
                             "env": {"KEY": "${input:api-key}"}}}})
    refused = run_cli(["probe", "-s", "full", "--config", str(config)])
    assert refused.exit_code == 2
    assert "'api-key'" in refused.stderr and "MCPPROBE_INPUT_API_KEY" in refused.stderr
    answered = run_cli(["probe", "-s", "full", "--config", str(config), "--json", "--protocol", "legacy"],
                       env={"MCPPROBE_INPUT_API_KEY": "k-998877"})
    assert answered.exit_code == 0, answered.stderr
    assert input_env_name("my.input-2") == "MCPPROBE_INPUT_MY_INPUT_2"


@pytest.mark.parametrize(("text", "message"), [
    ('{"mcpServers": {"a": {"command": "x",}', ":1: invalid JSON"),
    ("servers:\n  a: [unclosed\n", "invalid YAML"),
    ('{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}', "exactly one of 'command'"),
    ('{"mcpServers": {"a": {"command": "x", "args": "not a list"}}}', "'args' must be a list"),
    ('{"mcpServers": []}', "must be a mapping"),
    ('{"something": 1}', "no 'mcpServers' or 'servers' map"),
])
def test_malformed_configs_are_usage_errors(tmp_path: Path, text: str, message: str) -> None:
    config = _write(tmp_path / "bad.json", text)
    result = run_cli(["servers", "--config", str(config)])
    assert result.exit_code == 2
    assert message in result.stderr and str(config) in result.stderr


def test_unknown_names_and_conflicts(tmp_path: Path) -> None:
    config = _write(tmp_path / "c.yaml", {"servers": {"one": _stdio("full")}})
    unknown = run_cli(["probe", "-s", "two", "--config", str(config)])
    assert unknown.exit_code == 2 and "known servers: one" in unknown.stderr
    both = run_cli(["probe", "-s", "one", "--config", str(config), "--", PY, str(FIXTURE), "full"])
    assert both.exit_code == 2 and "not both" in both.stderr
    missing = run_cli(["servers", "--config", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "no such file" in missing.stderr


def test_command_line_options_apply_on_top_of_the_entry(tmp_path: Path) -> None:
    entry = load_file(_write(tmp_path / "c.json", {"mcpServers": {"s": {"command": "srv", "env": {"A": "1"}}}}))[0]
    resolved = resolve(entry, env={})
    assert resolved.command == ["srv"] and resolved.env == ["A=1"] and resolved.transport == "stdio"
    with pytest.raises(ConfigError, match="cwd"):
        resolve(load_file(_write(tmp_path / "d.json", {"mcpServers": {"s": {"command": "x", "cwd": "/nope/x"}}}))[0])


def test_discover_skips_missing_files(home: dict[str, str]) -> None:
    found = discover()
    assert found.servers == [] and all(state == "missing" for _, state in found.files)
    result = run_cli(["probe", "--all"])
    assert result.exit_code == 2 and "no servers found" in result.stderr


def test_workspace_folder_variable(tmp_path: Path) -> None:
    config = _write(tmp_path / ".vscode" / "mcp.json",
                    {"servers": {"fs": {"command": "fs", "args": ["${workspaceFolder}"]}}})
    assert resolve(load_file(config)[0], env={}).command == ["fs", str(tmp_path.resolve())]


if sys.platform == "win32":  # pragma: no cover
    pytest.skip("POSIX paths in these tests", allow_module_level=True)


@pytest.mark.parametrize("args", [["call", "echo", "message=hi", "--yes"], ["read", "fixture://readme"],
                                  ["get-prompt", "summary"], ["watch", "--duration", "1", "--json"]])
def test_every_server_command_takes_a_named_server(tmp_path, args):
    config = tmp_path / "mcpprobe.yaml"
    config.write_text(f"servers:\n  fx:\n    command: {PY}\n    args: [{str(FIXTURE)!r}, full]\n")
    result = run_cli([*args, "--config", str(config), "-s", "fx"])
    assert result.exit_code == 0, result.stderr


def test_claude_code_local_scope_is_read_and_wins_over_project_and_user(home: dict[str, str]) -> None:
    # `claude mcp add NAME -- CMD` (local scope, the default) writes ~/.claude.json projects[<cwd>].mcpServers.
    project, user = Path.cwd(), Path(home["HOME"])
    _write(project / ".mcp.json", {"mcpServers": {"shared": _stdio("none")}})
    _write(user / ".claude.json", {
        "mcpServers": {"user-wide": _stdio("full"), "local-only": _stdio("none")},
        "projects": {str(project): {"allowedTools": [], "mcpServers": {"local-only": _stdio("full"),
                                                                        "shared": _stdio("full")}},
                     "/some/other/project": {"mcpServers": {"elsewhere": _stdio("full")}}},
    })
    doc = run_cli(["servers", "--json"]).json
    names = [s["name"] for s in doc["servers"]]
    assert names == ["local-only", "shared", "user-wide"], names
    local = {s["name"]: s for s in doc["servers"]}["local-only"]
    assert "local scope" in local["source"] and local["command"][-1] == "full"
    assert sorted(s["source"].split(" ")[0] for s in doc["shadowed"]) == sorted(
        [str(project / ".mcp.json"), str(user / ".claude.json")])
    probed = run_cli(["probe", "-s", "local-only", "--json", "--protocol", "legacy"])
    assert probed.exit_code == 0 and probed.json["serverInfo"]["name"] == "fixture-full"


def test_one_config_directory_for_configs_and_tokens(tmp_path, monkeypatch):
    """config.yaml and stored tokens live in the same directory, whichever variable names it."""
    from mcpprobe.auth.store import token_dir
    from mcpprobe.fleet.config import search_path, user_config_dir

    monkeypatch.delenv("MCPPROBE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert token_dir() == user_config_dir() / "tokens" == tmp_path / "xdg" / "mcpprobe" / "tokens"
    monkeypatch.setenv("MCPPROBE_CONFIG_DIR", str(tmp_path / "own"))
    assert token_dir() == tmp_path / "own" / "tokens"
    assert tmp_path / "own" / "config.yaml" in search_path(cwd=tmp_path)
