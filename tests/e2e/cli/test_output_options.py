"""The output options are the same on every command that talks to a server: each command x each
option is accepted, and does what it says, against a real server."""

from __future__ import annotations

import json

import click
import pytest
from conftest import fixture_cmd, run_cli

from mcpprobe.cli.main import cli
from mcpprobe.render.interface import OFFERED, Format

# Each command that talks to a server, with what it needs before the target, and the formats it offers.
COMMANDS = {
    "probe": ([], set(Format)),
    "check": ([], {Format.HUMAN, Format.JSON, Format.JUNIT, Format.HTML, Format.SARIF}),
    "load": (["--ping", "--requests", "5"], {Format.HUMAN, Format.JSON, Format.OPENMETRICS, Format.HTML}),
    "list": (["tools"], {Format.HUMAN, Format.JSON}),
    "call": (["echo", "message=hi", "--yes"], {Format.HUMAN, Format.JSON}),
    "read": (["fixture://readme"], {Format.HUMAN, Format.JSON}),
    "get-prompt": (["greet", "name=x"], {Format.HUMAN, Format.JSON}),
    "watch": (["--duration", "0.5"], {Format.HUMAN, Format.JSON}),
}
NOT_OFFERED = [(name, fmt) for name in sorted(COMMANDS) for fmt in Format if fmt not in COMMANDS[name][1]]
OUTPUT_OPTIONS = ["--json", "--format", "--trace", "--verbose"]


def test_every_command_that_talks_to_a_server_is_in_the_table():
    ctx = click.Context(cli)
    talking = {name for name in cli.list_commands(ctx)
               if any("--transport" in param.opts for param in cli.get_command(ctx, name).params)}
    assert talking == set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
@pytest.mark.parametrize("option", OUTPUT_OPTIONS)
def test_every_command_has_every_output_option(name, option):
    command = cli.get_command(click.Context(cli), name)
    options = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    assert option in options
    if option == "--format":
        param = next(p for p in command.params if "--format" in p.opts)
        assert set(param.type.choices) == {f.value for f in COMMANDS[name][1]}


def test_the_table_is_the_one_the_renderers_know():
    assert {name: set(formats) for name, formats in OFFERED.items()} == {name: f for name, (_, f) in COMMANDS.items()}


@pytest.mark.parametrize("name, fmt", NOT_OFFERED, ids=[f"{name}-{fmt.value}" for name, fmt in NOT_OFFERED])
def test_a_format_the_command_does_not_offer_is_a_usage_error_that_says_where_it_applies(name, fmt):
    before, _ = COMMANDS[name]
    result = run_cli([name, *before, "--format", fmt.value, "--", *fixture_cmd("full")])
    assert result.exit_code == 2
    assert f"'{fmt.value}' does not apply to `{name}`, which prints human or json" in result.stderr
    assert "`probe`" in result.stderr
    assert not result.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_trace_and_verbose_work_on_every_command(name, tmp_path):
    before, _ = COMMANDS[name]
    trace = tmp_path / "trace.log"
    result = run_cli([name, *before, "--trace", str(trace), "-v", "--", *fixture_cmd("full")])
    assert result.exit_code == 0, result.stderr
    assert "mcpprobe: " in result.stderr  # -v told what it did
    sent = [line for line in trace.read_text().splitlines() if " send " in line]
    assert sent, "every message sent is in the trace"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_format_json_is_json_on_every_command(name):
    before, _ = COMMANDS[name]
    result = run_cli([name, *before, "--format", "json", "--", *fixture_cmd("full")])
    assert result.exit_code == 0, result.stderr
    first = result.stdout.splitlines()[0] if name == "watch" else result.stdout
    assert json.loads(first)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_json_with_another_format_is_a_usage_error(name):
    before, _ = COMMANDS[name]
    result = run_cli([name, *before, "--json", "--format", "human", "--", *fixture_cmd("full")])
    assert result.exit_code == 2
    assert "cannot be combined" in result.stderr
