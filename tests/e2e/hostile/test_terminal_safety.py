"""A hostile server gets nothing: what it sends never drives the user's terminal, never breaks a
document mcpprobe writes, and never crashes mcpprobe, in every output format, fleets included.

The servers are real processes (tests/fixtures/hostile_server.py); the terminal is a real
pseudo-terminal, so mcpprobe sees a TTY exactly as it would in a user's shell.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import PY, ROOT, http_server, run_cli, run_subprocess
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from mcpprobe.safety.sanitize import visible

HOSTILE = ROOT / "tests" / "fixtures" / "hostile_server.py"
ATTACK = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b[2J\x1b[10;10H\x9b31m\u202eevil\rover"
FORMATS = ("human", "json", "junit", "openmetrics")
# What rich itself writes to a colour terminal: SGR (colours, bold), and the spinner's controls below.
SGR = re.compile(r"\x1b\[[0-9;]*m")
# What the phase spinner draws: hide and show the cursor, go back to the start of the line (or the
# one above) and erase it. Whole sequences only: a lone carriage return or escape is still caught.
LIVE = re.compile(r"\x1b\[\?25[lh]|\r(?:\x1b\[1A)?\x1b\[2K")
# C0 controls but newline and tab, DEL, C1 controls, bidi embeddings, overrides, isolates and marks.
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def hostile(mode: str) -> list[str]:
    return [PY, str(HOSTILE), mode]


def run_in_pty(args: list[str], *, env: dict[str, str] | None = None, timeout: float = 60,
               typed: str = "") -> tuple[int, str]:
    """Run mcpprobe with stdin, stdout and stderr on one pseudo-terminal, `typed` waiting to be
    read on it as if typed ahead; return what it showed."""
    controller, terminal = pty.openpty()
    full_env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", **(env or {})}
    full_env.pop("NO_COLOR", None)
    proc = subprocess.Popen([PY, "-m", "mcpprobe", *args], stdin=terminal, stdout=terminal, stderr=terminal,
                            env=full_env, cwd=ROOT, start_new_session=True)
    os.close(terminal)
    if typed:
        os.write(controller, typed.encode())
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(controller, 65536)
            except OSError:  # EIO: every end of the terminal is closed
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    os.close(controller)
    # Strict: a lone surrogate written raw would not be valid UTF-8.
    shown = b"".join(chunks).decode("utf-8")
    assert "Traceback" not in shown, shown
    return code, shown.replace("\r\n", "\n")


def assert_inert(shown: str) -> None:
    """Nothing in what reached the terminal but rich's own colours, newlines and tabs."""
    rest = SGR.sub("", LIVE.sub("", shown))
    found = ACTIVE.search(rest)
    context = rest[max(found.start() - 60, 0):found.end() + 20] if found else ""
    assert found is None, f"{found.group()!r} reached the terminal: {context!r}"


def fleet_config(tmp_path: Path) -> Path:
    """A fleet of hostile members, one of them with a name that is itself an attack."""
    servers = {
        "escapes": {"command": PY, "args": [str(HOSTILE), "escapes"]},
        "surrogate": {"command": PY, "args": [str(HOSTILE), "surrogate"]},
        "fails": {"command": PY, "args": [str(HOSTILE), "fail"]},
        f"named{ATTACK}": {"command": PY, "args": [str(HOSTILE), "escapes"]},
    }
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mode", ["escapes", "surrogate"])
def test_probe_on_a_terminal_shows_nothing_active(mode: str, fmt: str) -> None:
    code, shown = run_in_pty(["probe", "--protocol", "legacy", "--format", fmt, "--", *hostile(mode)])
    assert code == 0, shown
    assert_inert(shown)
    assert "hostile" in shown


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_protocol_version_no_client_supports_is_shown_inert(fmt: str) -> None:
    """The version a server chose is shown even when mcpprobe refuses it (exit 5): made inert."""
    code, shown = run_in_pty(["probe", "--protocol", "legacy", "--format", fmt, "--", *hostile("version")])
    assert code == 5, shown
    assert_inert(shown)
    assert "unsupported-version" in shown or fmt == "openmetrics"


def test_the_refused_version_reads_the_same_in_the_message_as_on_the_protocol_line() -> None:
    """One notation for a hostile version wherever it is shown: the error's message quotes it as the
    Protocol line shows it (\\u009b, <U+202E>), not in Python's repr escapes (\\x9b, \\u202e)."""
    result = run_cli(["probe", "--protocol", "legacy", "--", *hostile("version")])
    assert result.exit_code == 5, result.stderr
    shown = result.stdout + result.stderr
    protocol = next(line for line in shown.splitlines() if line.startswith("Protocol"))
    inert = protocol.split()[1]
    assert "<U+202E>" in inert and "\\u009b" in inert, protocol
    error = next(line for line in shown.splitlines() if line.startswith("error: "))
    assert f"the server chose protocol version '{inert}'" in error, error
    assert "\\x9b" not in shown and "\\u202e" not in shown


def test_a_task_status_that_is_escape_sequences_is_refused_and_nothing_reaches_the_terminal() -> None:
    """A task whose status is not one of the spec's is not a task (exit 5), and its status never
    reaches the terminal: not in the live status lines, the summary or the error."""
    tasks = ROOT / "tests" / "fixtures" / "task_server.py"
    code, shown = run_in_pty(["call", "hostile_status", "--protocol", "2025-11-25", "--", PY, str(tasks)])
    assert code == 5, shown
    assert_inert(shown)
    assert "tasks/get: the answer is not a task" in shown and "pwned" not in shown


@pytest.mark.parametrize("fmt", FORMATS)
def test_fleet_on_a_terminal_shows_nothing_active(tmp_path: Path, fmt: str) -> None:
    config = fleet_config(tmp_path)
    code, shown = run_in_pty(["probe", "--all", "--config", str(config), "--protocol", "legacy", "--format", fmt,
                              "-v"])
    assert code == 5, shown  # the failing member: its JSON-RPC error to initialize
    assert_inert(shown)
    assert "fails" in shown and "named" in shown


@pytest.mark.parametrize("command", [["call", "echo", "--yes"], ["read", "hostile://text"], ["get-prompt", "hostile"],
                                     ["list", "tools"], ["probe", "--trace", "-"],
                                     ["watch", "--duration", "1", "--call", "echo"]])
@pytest.mark.parametrize("mode", ["escapes", "surrogate"])
def test_call_read_get_prompt_on_a_terminal_show_nothing_active(mode: str, command: list[str]) -> None:
    code, shown = run_in_pty([*command, "--protocol", "legacy", "--", *hostile(mode)])
    assert code == 0, shown
    assert_inert(shown)


@pytest.mark.parametrize("mode", ["escapes", "surrogate"])
def test_a_progress_message_is_shown_inert_and_never_as_markup(mode: str) -> None:
    """A call's progress bar shows the server's message: escape sequences made inert, and rich
    markup in it printed as it is, never parsed (a [link] would be an OSC 8 hyperlink, a stray
    closing tag an error)."""
    code, shown = run_in_pty(["call", "busy", "--protocol", "legacy", "--", *hostile(mode)])
    assert code == 0, shown
    assert_inert(shown)
    assert "[link=https://x.invalid]step[/link] [bold]1[/bold] [/" in shown


@pytest.mark.parametrize("output", ["human", "json"])
@pytest.mark.parametrize("mode", ["escapes", "surrogate"])
def test_a_violation_message_quoting_the_server_s_values_is_inert(mode: str, output: str) -> None:
    """A violation message writes the values it quotes as JSON, which escapes C0 controls but leaves
    C1 controls, bidi overrides and lone surrogates as they are: what reaches the terminal is inert
    all the same, in the refusal that quotes the inputSchema's enum (exit 3) and, sent with --force,
    in the mismatch that quotes the server's structuredContent (exit 1)."""
    json_flag = ["--json"] if output == "json" else []
    hostile_value = "<U+202E>evil" if mode == "escapes" else "lone<U+D800>surrogate"
    code, shown = run_in_pty(["call", "picky", "mode=x", *json_flag, "--protocol", "legacy", "--", *hostile(mode)])
    assert code == 3, shown
    assert_inert(shown)
    flat = " ".join(shown.split())  # as one line, whatever the terminal's width wrapped
    if output == "human":
        assert '$.mode: "x" is not one of ["mode ' in flat and hostile_value in flat, flat
    code, shown = run_in_pty(["call", "picky", "mode=x", "--force", *json_flag, "--protocol", "legacy", "--",
                              *hostile(mode)])
    assert code == 1, shown
    assert_inert(shown)
    flat = " ".join(shown.split())
    if output == "human":
        assert '$.said: "said ' in flat and 'is not of type "integer"' in flat and hostile_value in flat, flat


def test_failing_members_error_on_stderr_is_inert(tmp_path: Path) -> None:
    config = fleet_config(tmp_path)
    for fmt in ("json", "junit", "openmetrics"):
        result = run_subprocess(["probe", "--all", "--config", str(config), "--protocol", "legacy", "--format", fmt])
        assert result.exit_code == 5
        assert "fails: error: " in result.stderr
        assert_inert(result.stderr)
        assert visible(ATTACK) in result.stderr


def test_a_snapshot_not_written_is_inert_in_the_fleet_table(tmp_path: Path) -> None:
    """--save-snapshot's path holds a member's name, text from a config file: when it cannot be
    written, the error under the fleet table (stdout) and on stderr shows that name inert."""
    servers = {name: {"command": PY, "args": [str(HOSTILE), "escapes"]} for name in ("plain", f"named{ATTACK}")}
    config = tmp_path / "fleet.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    (tmp_path / "blocker").write_text("a file where a directory should be")
    template = str(tmp_path / "blocker" / "{server}.json")
    code, shown = run_in_pty(["probe", "--all", "--config", str(config), "--protocol", "legacy",
                              "--save-snapshot", template])
    assert code == 2, shown
    assert_inert(shown)
    assert shown.count("snapshot cannot write") == 4, shown  # each member's, under the table and on stderr


def test_config_names_in_a_usage_error_are_inert(tmp_path: Path) -> None:
    result = run_subprocess(["probe", "-s", "nosuch", "--config", str(fleet_config(tmp_path))])
    assert result.exit_code == 2
    assert "known servers:" in result.stderr and visible(f"named{ATTACK}") in result.stderr
    assert_inert(result.stderr)


@pytest.mark.parametrize(("entry", "said"), [
    ({"command": PY, "env": {f"KEY{ATTACK}": True}}, "must be a string"),
    ({"command": PY, "args": [f"${{{ATTACK}}}"]}, "cannot expand"),
    ({"command": PY, "args": [f"${{input:{ATTACK}}}"]}, "has no definition"),
])
def test_config_text_quoted_in_a_usage_error_is_inert(tmp_path: Path, entry: dict[str, object], said: str) -> None:
    """A config's own text quoted by the error that refuses it (a key, a variable, an input's ID)."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"odd": entry}}))
    result = run_subprocess(["probe", "-s", "odd", "--config", str(config)])
    assert result.exit_code == 2, result.stderr
    assert said in result.stderr and "pwned" in result.stderr
    assert_inert(result.stderr)


def test_exporter_config_text_quoted_in_a_usage_error_is_inert(tmp_path: Path) -> None:
    config = tmp_path / "exporter.yaml"
    config.write_text(json.dumps({f"key{ATTACK}": 1}))
    result = run_subprocess(["exporter", "--exporter-config", str(config)])
    assert result.exit_code == 2, result.stderr
    assert "unknown keys" in result.stderr and "pwned" in result.stderr
    assert_inert(result.stderr)


def test_a_config_input_asked_on_the_terminal_is_inert(tmp_path: Path) -> None:
    """A VS Code `${input:ID}` is asked on the terminal: its description, ID and default are the
    config's text, shown inert; what is typed (or the default) is the value, as written."""
    config = tmp_path / ".vscode" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({
        "inputs": [{"type": "promptString", "id": f"mode{ATTACK}", "description": f"Which mode{ATTACK}",
                    "default": f"escapes{ATTACK}"}],
        "servers": {"odd": {"type": "stdio", "command": PY, "args": [str(HOSTILE), f"${{input:mode{ATTACK}}}"]}}}))
    code, shown = run_in_pty(["probe", "-s", "odd", "--config", str(config), "--protocol", "legacy"],
                             typed="escapes\n")
    assert code == 0, shown
    assert_inert(shown)
    assert f"Which mode{visible(ATTACK)} (input mode{visible(ATTACK)}) [escapes{visible(ATTACK)}]: " in shown
    assert "hostile" in shown  # the server ran in the mode typed


def test_a_scope_a_server_asks_for_during_a_login_inside_probe_is_inert(tmp_path: Path) -> None:
    """probe logs in by itself with client credentials; the server refuses the token with 403
    insufficient_scope, naming a scope with a C1 CSI (obs-text, which a header may carry): the
    login says it authorizes again for that scope, inert, and the run ends on the refusal (exit 7)."""
    auth = ROOT / "tests" / "fixtures" / "auth_server.py"
    env = {"CI_SECRET": "cs-secret-4711", "XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path)}
    with http_server([PY, str(auth), "--client", "ci:cs-secret-4711", "--required-scope", "mcp:\x9b31m",
                      "--no-challenge-scope"]) as url:
        code, shown = run_in_pty(["probe", "--protocol", "legacy", "--client-id", "ci", "--client-secret-env",
                                  "CI_SECRET", "--scope", "mcp:read", "--no-auth-cache", url], env=env)
    assert code == 7, shown
    assert_inert(shown)
    assert "needs more scope (mcp:read mcp:\\u009b31m): authorizing again" in shown


def test_server_stderr_passed_through_live_is_inert() -> None:
    code = f"import sys; sys.stderr.write({ATTACK!r} + '\\n'); sys.stderr.flush(); sys.exit(3)"
    status, shown = run_in_pty(["probe", "--server-stderr", "live", "--", PY, "-c", code])
    assert status == 4
    assert_inert(shown)
    assert visible(ATTACK) in shown


# ----- documents: OpenMetrics and JUnit stay parseable, whatever the server calls itself -----


def test_openmetrics_with_hostile_server_info_parses(tmp_path: Path) -> None:
    config = fleet_config(tmp_path)
    result = run_subprocess(["probe", "--all", "--config", str(config), "--protocol", "legacy",
                             "--format", "openmetrics"])
    assert result.exit_code == 5
    families = {f.name: f for f in text_string_to_metric_families(result.stdout)}
    info = {s.labels["server"]: s.labels for s in families["mcpprobe_server_info"].samples}
    assert info["escapes"]["server_name"] == visible("hostile" + ATTACK)
    assert info["surrogate"]["server_name"] == "hostilelone<U+D800>surrogate"
    assert visible(f"named{ATTACK}") in info
    ups = {s.labels["server"]: s.value for s in families["mcpprobe_up"].samples}
    assert ups["fails"] == 0 and ups["escapes"] == 1
    assert not ACTIVE.search(result.stdout.replace("\n", ""))


@pytest.mark.parametrize("mode", ["escapes", "surrogate", "fail"])
def test_junit_with_hostile_text_is_valid_xml(mode: str) -> None:
    result = run_subprocess(["probe", "--protocol", "legacy", "--format", "junit", "--", *hostile(mode)])
    assert result.exit_code == (5 if mode == "fail" else 0)
    root = ET.fromstring(result.stdout.encode("utf-8"))
    assert root.tag == "testsuites"
    assert not ACTIVE.search(result.stdout.replace("\n", "").replace("\t", ""))
    suite = root.find("testsuite")
    assert suite is not None and "hostile" in suite.get("name", "")
    if mode == "fail":
        error = suite.find("testcase/error")
        assert error is not None and error.get("message", "").endswith(visible(ATTACK) + "<U+D800>")


# ----- lone surrogates into a pipe -----


@pytest.mark.parametrize(("command", "expected"), [
    (["call", "echo", "--yes"], "result lone\\ud800surrogate"),
    (["read", "hostile://text"], "contents lone\\ud800surrogate"),
    (["get-prompt", "hostile"], "message lone\\ud800surrogate"),
])
def test_lone_surrogate_into_a_pipe_is_written_as_an_escape(command: list[str], expected: str) -> None:
    result = run_subprocess([*command, "--protocol", "legacy", "--", *hostile("surrogate")])
    assert result.exit_code == 0, result.stderr
    assert expected in result.stdout


def test_lone_surrogate_in_json_stays_a_json_escape() -> None:
    result = run_subprocess(["call", "echo", "--yes", "--json", "--protocol", "legacy", "--", *hostile("surrogate")])
    assert result.exit_code == 0
    assert result.json["result"]["content"][0]["text"] == "result lone\ud800surrogate"


# ----- NaN and Infinity are not JSON -----


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise AssertionError(f"{name} in output")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("argument", [["n=NaN"], ["n=Infinity"], ["n=-inf"], ["n:=NaN"], ["n:=[1, Infinity]"],
                                      ["--args", '{"n": NaN}'], ["--args", '{"n": -Infinity}']])
def test_nan_and_infinity_arguments_are_usage_errors(tmp_path: Path, argument: list[str]) -> None:
    record = tmp_path / "received.jsonl"
    result = run_subprocess(["call", "typed", *argument, "--yes", "--json", "--protocol", "legacy", "--",
                             *hostile("nan")], env={"HOSTILE_RECORD": str(record)})
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "not a JSON number" in result.stdout + result.stderr
    received = [json.loads(line)["method"] for line in record.read_text().splitlines()] if record.exists() else []
    assert "tools/call" not in received
    if result.stdout:
        _strict(result.stdout)


def test_nan_arguments_file_is_a_usage_error(tmp_path: Path) -> None:
    args = tmp_path / "args.json"
    args.write_text('{"n": NaN}')
    result = run_subprocess(["call", "typed", "--args", f"@{args}", "--yes", "--", *hostile("nan")])
    assert result.exit_code == 2
    assert "NaN is not a JSON number" in result.stderr


def test_a_string_nan_stays_a_string_where_the_schema_allows_strings() -> None:
    from mcpprobe.operations.arguments import ToolArguments

    schema = {"type": "object", "properties": {"n": {"type": ["number", "string"]}}}
    assert ToolArguments.parse(["n=NaN"]).build(schema) == {"n": "NaN"}


def test_nan_from_the_server_is_written_as_null() -> None:
    result = run_subprocess(["call", "typed", "n=1", "--yes", "--json", "--protocol", "legacy", "--",
                             *hostile("nan")])
    assert result.exit_code == 0, result.stderr
    doc = _strict(result.stdout)
    assert doc["structuredContent"] == {"x": None, "y": None, "z": None}  # type: ignore[index]
    violations = [f["message"] for f in doc["findings"] if f["code"] == "protocol-violation"]  # type: ignore[index]
    assert violations == ["a message with NaN or Infinity, which are not JSON numbers (RFC 8259); written as null"]
