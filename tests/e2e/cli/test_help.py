"""Help a person can read: a command's own options first, then the shared ones in named sections, in
the same order in every command; the group's command summaries whole. One command's help is a golden
file (`MCPPROBE_UPDATE_GOLDEN=1 python -m pytest tests/e2e/cli/test_help.py` rewrites it; review the diff)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcpprobe.cli.edge import SECTIONS
from mcpprobe.cli.main import COMMANDS, cli

GOLDEN = Path(__file__).parents[2] / "golden"

# Where each shared option stands, in every command that has it.
EXPECTED = {"--server": "Server", "--config": "Server", "--server-json": "Server", "--transport": "Connection",
            "--timeout": "Connection", "--protocol": "Connection", "--env": "Connection", "--header": "TLS and network",
            "--insecure": "TLS and network", "--bearer-env": "Authorization", "--client-id": "Authorization",
            "--json": "Output", "--format": "Output", "--trace": "Output", "--verbose": "Output"}


# Commands whose options of these names are their own: auth's (a login's --timeout, --json), the exporter's
# and servers' --config (the configs are what they read, not how a server is named).
OWN_NAMES = ("auth", "exporter", "servers", "tap")  # tap: its --format and --report are its report's


def _leaves(group: click.Group, ctx: click.Context, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            found += _leaves(command, ctx, (*path, name))
        else:
            found.append((*path, name))
    return found


def _help(*words: str, width: int = 80) -> str:
    result = CliRunner().invoke(cli, [*words, "--help"], prog_name="mcpprobe", terminal_width=width)
    assert result.exit_code == 0, result.output
    return result.output


def _sections(text: str) -> dict[str, list[str]]:
    """Section title -> the long options listed under it."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if re.match(r"^[A-Z][A-Za-z ]*:$", line):
            current = line[:-1]
            found[current] = []
        elif current is not None and line.startswith("  -"):
            found[current] += re.findall(r"--[a-z][a-z0-9-]*", line.split("  ")[1] if line.startswith("  -") else "")
    return found


COMMAND_PATHS = _leaves(cli, click.Context(cli))


@pytest.mark.parametrize("path", COMMAND_PATHS, ids=" ".join)
def test_own_options_first_then_the_shared_sections_in_one_order(path: tuple[str, ...]) -> None:
    sections = _sections(_help(*path))
    titles = [title for title in sections if title in ("Options", *SECTIONS)]
    assert titles[0] == "Options", titles
    assert titles == sorted(titles, key=("Options", *SECTIONS).index), titles
    for title, options in sections.items():
        for option in options:
            if option in EXPECTED and path[0] not in OWN_NAMES:
                assert EXPECTED[option] == title, (path, option, title)
    assert "--help" in sections["Options"]


def test_the_summaries_of_the_commands_are_whole() -> None:
    text = _help()
    listed = text.split("Commands:\n", 1)[1]
    assert "..." not in listed
    for name, entry in COMMANDS.items():
        first = entry.help.split(". ")[0].rstrip(".")
        assert " ".join(first.split()) in " ".join(listed.split()), name


def test_probe_help_at_80_columns_is_the_golden_file() -> None:
    path = GOLDEN / "help-probe-80.txt"
    text = _help("probe")
    if os.environ.get("MCPPROBE_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with MCPPROBE_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8")
    assert all(len(line) <= 80 for line in text.splitlines() if not line.startswith("    mcpprobe "))
