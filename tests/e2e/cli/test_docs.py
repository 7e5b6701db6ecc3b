"""The documentation stays true to the code: finding codes, exit codes, options and the JSON schema.

The JSON checks run the real command line as subprocesses against the fixture server and validate
what they print against docs/output.schema.json.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from mcpprobe.cli.main import cli
from mcpprobe.exitcodes import PRECEDENCE, ExitCode
from mcpprobe.findings import CODES

ROOT = Path(__file__).parents[3]
DOCS = ROOT / "docs"
FIXTURE = "tests/fixtures/fixture_server.py"
SCENARIOS = ("full", "method-not-found", "crash-on-start", "modern")
COMMANDS = {"probe": ["probe"], "list": ["list", "tools"]}
EXPECTED_EXIT = {"full": 0, "method-not-found": 1, "crash-on-start": 4, "modern": 0}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# ----- findings -----


def test_every_finding_code_has_a_section() -> None:
    sections = re.findall(r"^## `([^`]+)`\s*$", _read(DOCS / "findings.md"), flags=re.MULTILINE)
    assert len(sections) == len(set(sections)), f"duplicate sections: {sections}"
    missing = sorted(set(CODES) - set(sections))
    unknown = sorted(set(sections) - set(CODES))
    assert not missing, f"docs/findings.md has no '## `code`' section for {missing}"
    assert not unknown, f"docs/findings.md documents codes that mcpprobe.findings.CODES lacks: {unknown}"


def test_finding_sections_state_the_code_severity() -> None:
    text = _read(DOCS / "findings.md")
    for code, (severity, _meaning) in CODES.items():
        section = text.split(f"## `{code}`", 1)[1].split("\n## ", 1)[0]
        assert f"**Severity:** {severity.value}" in section, f"wrong or missing severity for {code}"


# ----- exit codes -----


def _exit_code_table_rows() -> dict[int, str]:
    rows = {}
    for line in _read(DOCS / "exit-codes.md").splitlines():
        match = re.match(r"^\|\s*(\d+)\s*\|\s*([A-Z]+)\s*\|", line)
        if match:
            rows[int(match.group(1))] = match.group(2)
    return rows


def test_every_exit_code_is_in_the_table() -> None:
    rows = _exit_code_table_rows()
    for code in ExitCode:
        assert int(code) in rows, f"exit code {int(code)} ({code.name}) is not in docs/exit-codes.md's table"
        assert rows[int(code)] == code.name, f"exit code {int(code)} is named {rows[int(code)]}, not {code.name}"
    assert set(rows) == {int(code) for code in ExitCode}, "the table lists exit codes that ExitCode lacks"


def test_precedence_is_documented_in_order() -> None:
    text = _read(DOCS / "exit-codes.md")
    listed = [int(n) for n in re.findall(r"^\d+\. (\d+) [A-Z]+$", text, flags=re.MULTILINE)]
    assert listed == [int(code) for code in PRECEDENCE]


# ----- command pages -----


def _long_options(command: click.Command) -> set[str]:
    ctx = click.Context(command, info_name=command.name)
    options = set()
    for param in command.get_params(ctx):
        if isinstance(param, click.Option):
            options.update(opt for opt in (*param.opts, *param.secondary_opts) if opt.startswith("--"))
    return options


DOCUMENTED = ["probe", "check", "list", "call", "read", "get-prompt", "watch", "servers"]


def _shared_options() -> set[str]:
    """The connection and output options, documented once on docs/connection-options.md."""
    from mcpprobe.cli.options import connection_options, output_options

    shared = connection_options(output_options()(lambda **_: None))
    return _long_options(click.Command("x", callback=shared, params=shared.__click_params__)) - {"--help"}


def _missing(options: set[str], page: str) -> list[str]:
    return sorted(opt for opt in options if not re.search(re.escape(opt) + r"(?![\w-])", page))


@pytest.mark.parametrize("name", DOCUMENTED)
def test_every_long_option_is_documented(name: str) -> None:
    """A command's own options on its page; the shared ones through a link to connection-options.md."""
    command = cli.get_command(click.Context(cli), name)
    page = _read(DOCS / "commands" / f"{name}.md")
    options = _long_options(command)
    assert "--json" in options
    shared = _shared_options()
    missing = _missing(options - shared - {"--help"}, page)
    assert not missing, f"docs/commands/{name}.md does not mention {missing}"
    if (options & shared) - {"--json", "--verbose"}:
        assert "connection-options.md" in page, f"docs/commands/{name}.md does not link the shared options"


def test_every_shared_option_is_on_the_connection_options_page() -> None:
    missing = _missing(_shared_options(), _read(DOCS / "connection-options.md"))
    assert not missing, f"docs/connection-options.md does not mention {missing}"


# ----- README -----


def test_readme_has_the_setup_commands() -> None:
    readme = _read(ROOT / "README.md")
    for command in ("pip install -e '.[test]'", "python -m pytest", "pip install .",
                    "mcpprobe probe -- mcpprobe-demo"):
        assert command in readme, f"README.md lacks {command!r}"


def _code_map() -> str:
    readme = _read(ROOT / "README.md")
    return readme.split("### Code map: from argv to exit code", 1)[1].split("\n## ", 1)[0]


def test_the_code_map_names_folders_modules_and_names_that_exist() -> None:
    """The README's code map names the package's folders (its table: a folder, then its modules), its
    modules by their path in the package (`cli/probe.py`) and functions by module
    (`cli/common.command_line`): each must exist, so the map cannot go on naming a module that moved
    or a function that was renamed."""
    package = ROOT / "mcpprobe"
    text = _code_map()
    missing, rows = [], 0
    for first, rest in re.findall(r"^\| ((?:`[a-z]+/`(?:, )?)+) \| (.*) \|$", text, re.MULTILINE):
        rows += 1
        folders = re.findall(r"`([a-z]+)/`", first)
        missing += [f"{name}/" for name in folders if not (package / name).is_dir()]
        missing += [f"{folders[0]}/{name}" for name in re.findall(r"`([a-z_]+\.py)`", rest)
                    if not (package / folders[0] / name).is_file()]
    assert rows >= 8, "the folders' table was not read"
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
    modules = re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", prose)
    assert "cli/main.py" in modules, "the modules were not read"
    missing += [path for path in modules if not (package / path).is_file()]
    for module, name in re.findall(r"`((?:[a-z_]+/)+[a-z_]+)\.([A-Za-z_]+)`", prose):
        source = package / f"{module}.py"
        if name != "py" and (not source.is_file() or not re.search(
                rf"^(?:async )?(?:def|class) {name}\b|^{name} =", source.read_text(encoding="utf-8"), re.MULTILINE)):
            missing.append(f"{module}.{name}")
    assert missing == [], f"README.md's code map names what does not exist: {missing}"


# ----- JSON output against the schema -----


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(_read(DOCS / "output.schema.json"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcpprobe", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)


@pytest.fixture(scope="module")
def json_runs() -> dict[tuple[str, str], subprocess.CompletedProcess[str]]:
    """Every (command, scenario) pair, run concurrently: each run costs about a second of start-up."""
    jobs = {
        (name, scenario): [*words, "--json", "--", sys.executable, FIXTURE, scenario]
        for name, words in COMMANDS.items()
        for scenario in SCENARIOS
    }
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {key: pool.submit(_run, args) for key, args in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


def _errors(validator: Draft202012Validator, doc: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


@pytest.mark.parametrize("scenario", SCENARIOS)
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_json_output_matches_the_schema(
    name: str, scenario: str, validator: Draft202012Validator,
    json_runs: dict[tuple[str, str], subprocess.CompletedProcess[str]],
) -> None:
    proc = json_runs[(name, scenario)]
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert _errors(validator, doc) == []
    assert doc["command"] == name
    assert doc["exitCode"] == proc.returncode == EXPECTED_EXIT[scenario]
    if name == "probe":
        assert (doc["kinds"] is None) == (doc["error"] is not None)
    else:
        assert doc["kind"] == "tools"


def test_schema_rejects_a_broken_document(
    validator: Draft202012Validator, json_runs: dict[tuple[str, str], subprocess.CompletedProcess[str]],
) -> None:
    doc = json.loads(json_runs[("probe", "full")].stdout)
    assert _errors(validator, {**doc, "futureKey": 1}) == [], "additional properties must be allowed"
    assert _errors(validator, {k: v for k, v in doc.items() if k != "findings"})
    assert _errors(validator, {**doc, "ok": not doc["ok"]})
    assert _errors(validator, {**doc, "kinds": {**doc["kinds"], "tools": {**doc["kinds"]["tools"], "state": "?"}}})


def test_interrupted_document_matches_the_schema(
    validator: Draft202012Validator, capsys: pytest.CaptureFixture[str],
) -> None:
    from mcpprobe.cli.output import emit_outcome
    from mcpprobe.safety.redact import Redactor

    assert emit_outcome(None, True, "list", Redactor(())) == ExitCode.INTERRUPTED
    doc = json.loads(capsys.readouterr().out)
    assert _errors(validator, doc) == []
    assert doc["exitCode"] == 130


def test_a_refused_list_tasks_matches_the_schema(validator: Draft202012Validator) -> None:
    # The fixture declares no tasks capability: the refusal's finding concerns kind "tasks".
    proc = _run(["list", "tasks", "--json", "--", sys.executable, FIXTURE, "full"])
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exitCode"] == 3
    assert [f["kind"] for f in doc["findings"]] == ["tasks"]
    assert _errors(validator, doc) == []


INVOCATIONS = {
    "call-ok": (["call", "echo", "message=hi", "--yes"], 0),  # echo: not marked read-only
    "call-refused": (["call", "no_such_tool"], 3),
    "read-ok": (["read", "fixture://readme"], 0),
    "get-prompt-ok": (["get-prompt", "greet", "name=Ada"], 0),
    "get-prompt-missing-argument": (["get-prompt", "greet"], 3),
}


@pytest.mark.parametrize("case", sorted(INVOCATIONS))
def test_call_read_and_get_prompt_documents_match_the_schema(case: str, validator: Draft202012Validator) -> None:
    words, expected = INVOCATIONS[case]
    proc = _run([*words, "--json", "--", sys.executable, FIXTURE, "full"])
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exitCode"] == expected
    assert doc["command"] == words[0]
    assert _errors(validator, doc) == []
    assert _errors(validator, {k: v for k, v in doc.items() if k != "sent"}), "sent is required"


@pytest.mark.parametrize("command", ["call", "read", "get-prompt"])
def test_an_interrupted_invocation_matches_the_schema(
    command: str, validator: Draft202012Validator, capsys: pytest.CaptureFixture[str],
) -> None:
    from mcpprobe.cli.output import emit_outcome
    from mcpprobe.safety.redact import Redactor

    assert emit_outcome(None, True, command, Redactor(())) == ExitCode.INTERRUPTED
    doc = json.loads(capsys.readouterr().out)
    assert doc["command"] == command
    assert _errors(validator, doc) == []


EARLY_INTERRUPTS = {
    "servers": ["servers", "--json"],
    "watch": ["watch", "--json", "--", sys.executable, FIXTURE, "full"],
    "auth login": ["auth", "login", "https://mcp.example.com/mcp", "--json"],
    "auth status": ["auth", "status", "--json"],
}


@pytest.mark.parametrize("command", sorted(EARLY_INTERRUPTS))
def test_a_command_interrupted_while_it_loads_prints_a_document_of_the_schema(
    command: str, validator: Draft202012Validator,
) -> None:
    """Ctrl-C while mcpprobe loads the command prints the interrupted document for every command
    with --json, named as that command's own document is (`auth login`, not `auth`). The test hook
    sends a real SIGINT while the command's module is loaded (mcpprobe.testhooks)."""
    proc = subprocess.run([sys.executable, "-m", "mcpprobe", *EARLY_INTERRUPTS[command]], capture_output=True,
                          text=True, cwd=ROOT, timeout=60, env={**os.environ, "MCPPROBE_TEST_INTERRUPT": "load"})
    assert proc.returncode == 130, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["command"] == command and doc["exitCode"] == 130
    assert _errors(validator, doc) == []


def test_discover_timeout_help_says_what_happens_after_it() -> None:
    # The discover request stays open: --discover-timeout does not end it (docs/negotiation.md).
    result = CliRunner().invoke(cli, ["probe", "--help"], terminal_width=200)
    line = next(line for line in result.output.splitlines() if "--discover-timeout" in line)
    assert "falling back" not in line
    assert "also sending initialize" in line and "still counts" in line


# ----- watch lines against the schema -----


def test_watch_lines_of_the_demo_server_match_the_schema(validator: Draft202012Validator) -> None:
    proc = _run(["watch", "--json", "--duration", "3", "--log-level", "debug", "--poll", "0.5",
                 "--call", "create_note title=x body=y", "--yes", "--", sys.executable, "-m", "mcpprobe.demo.server"])
    assert "Traceback" not in proc.stderr, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {e["event"] for e in events} >= {"snapshot", "notice", "call", "end"}, events
    for event in events:
        assert _errors(validator, event) == [], event
    assert events[-1]["exitCode"] == proc.returncode == 0


def test_schema_rejects_a_broken_watch_line(validator: Draft202012Validator) -> None:
    line = {"ts": "2026-07-28T12:00:00.123Z", "event": "reconnect", "kind": "server", "connection": 2,
            "state": "connected", "reason": "connected again", "attempt": 1, "retryInSeconds": None}
    assert _errors(validator, {**line, "futureKey": 1}) == []
    assert _errors(validator, {**line, "state": "?"})
    assert _errors(validator, {k: v for k, v in line.items() if k != "attempt"})
    assert _errors(validator, {k: v for k, v in line.items() if k != "ts"})
    assert _errors(validator, {**line, "event": "end", "kind": None, "reason": "count", "exitCode": 0, "events": 3})


def test_schema_knows_every_exit_code() -> None:
    schema = json.loads(_read(DOCS / "output.schema.json"))
    assert schema["$defs"]["exitCode"]["enum"] == sorted(int(code) for code in ExitCode)


DEMO_INVOCATIONS = {
    "call-structured": ["call", "add", "a=2", "b=3"],
    "call-progress": ["call", "count_slowly", "to=2"],
    "read-blob": ["read", "demo://swatch.png"],
    "read-completion": ["read", "--template", "demo://notes/{id}", "--complete", "id="],
    "get-prompt": ["get-prompt", "summarize_note", "note_id=2"],
}


@pytest.mark.parametrize("case", sorted(DEMO_INVOCATIONS))
def test_the_demo_servers_documents_match_the_schema(case: str, validator: Draft202012Validator) -> None:
    words = DEMO_INVOCATIONS[case]
    proc = _run([*words, "--json", "--", sys.executable, "-m", "mcpprobe.demo.server"])
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert proc.returncode == doc["exitCode"] == 0, proc.stderr
    assert _errors(validator, doc) == []


# ----- installing mcpprobe, as the CI and Kubernetes examples do -----


@pytest.mark.parametrize("page", ["ci.md", "exporter.md"])
def test_install_examples_name_no_placeholder_address_and_the_wheel_that_builds(page: str) -> None:
    """mcpprobe has no public address: the examples install the wheel `pip wheel --no-deps -w dist .`
    builds in its clone (named after pyproject.toml's version), and their YAML stays YAML."""
    import tomllib

    import yaml

    text = _read(DOCS / page)
    assert "OWNER/" not in text and "git+https://github.com" not in text
    version = tomllib.loads(_read(ROOT / "pyproject.toml"))["project"]["version"]
    wheels = set(re.findall(r"mcpprobe-[^\s'/]+?-py3-none-any\.whl", text))
    assert wheels == {f"mcpprobe-{version}-py3-none-any.whl"}, wheels
    assert "pip wheel --no-deps -w dist ." in text
    blocks = [block.split("```", 1)[0] for block in text.split("```yaml\n")[1:]]
    assert blocks
    for block in blocks:
        assert list(yaml.safe_load_all(block)), block


def test_the_crash_on_start_example_shows_the_hint_printed_today() -> None:
    """docs/commands/probe.md's crash-on-start example quotes the `hint:` line mcpprobe prints now."""
    from tests.conftest import fixture_cmd, run_cli

    result = run_cli(["probe", "--", *fixture_cmd("crash-on-start")])
    assert result.exit_code == 4
    hints = [line for line in result.stderr.splitlines() if line.startswith("hint: ")]
    assert hints, result.stderr
    assert hints[0] in _read(DOCS / "commands" / "probe.md")
