"""The command line never swallows the target: an option whose value may be left out (`--lint`,
`--ping`: click's `is_flag=False, flag_value=...`) does not take the URL after it, nor `--`
(mcpprobe.cli.edge.optional_values). Checked for every such option of every command, found by
introspection, so that an option added later is covered too."""

from __future__ import annotations

import importlib

import click
import pytest
from conftest import FIXTURE, PY, refused_port, run_cli

from mcpprobe.cli.main import COMMANDS

URL = "http://127.0.0.1:9/mcp"


def _commands() -> list[tuple[str, click.Command]]:
    found = []
    for name, entry in sorted(COMMANDS.items()):
        command = getattr(importlib.import_module(entry.module), entry.attribute)
        if isinstance(command, click.Group):
            found += [(f"{name} {sub}", cmd) for sub, cmd in sorted(command.commands.items())]
        else:
            found.append((name, command))
    return found


OPTIONAL = [(name, command, option) for name, command in _commands() for option in command.params
            if isinstance(option, click.Option) and getattr(option, "_flag_needs_value", False)]


def test_the_options_with_an_optional_value_are_found():
    assert {(name, option.opts[0]) for name, _, option in OPTIONAL} >= {("probe", "--lint"), ("load", "--ping")}


@pytest.mark.parametrize("name, command, option", OPTIONAL, ids=[f"{n} {o.opts[0]}" for n, _, o in OPTIONAL])
@pytest.mark.parametrize("after", [URL, "HTTPS://example.invalid/mcp", "--"])
def test_an_option_with_an_optional_value_leaves_the_target(name, command, option, after):
    args = [option.opts[0], after, *(["--", PY, "server.py"] if after == "--" else [])]
    ctx = command.make_context(name, list(args), resilient_parsing=True)
    assert ctx.params[option.name] == option.flag_value  # the value left out: the flag's own
    url = ctx.params.get("url")
    if after == "--":
        assert "--" not in (url or ()) or list(url).index("--") == 0
    else:
        assert url is not None and after in url, ctx.params


def test_probe_lint_then_a_url_probes_the_url():
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        result = run_cli(["probe", "--lint", url, "--timeout", "2"])
    assert result.exit_code == 4, (result.exit_code, result.stderr)  # connection refused, not a usage error
    assert url in result.stderr


def test_probe_lint_strict_still_takes_its_value():
    result = run_cli(["probe", "--lint", "strict", "--json", "--", PY, str(FIXTURE), "full"])
    assert result.exit_code in (0, 1), result.stderr
    assert "Invalid value" not in result.stderr


def test_load_ping_then_a_url_loads_the_url():
    with refused_port() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        result = run_cli(["load", "--ping", url, "--requests", "1", "--timeout", "2"])
    assert result.exit_code == 4, (result.exit_code, result.stderr)
    assert url in result.stderr


def test_a_value_that_is_neither_is_still_a_usage_error():
    result = run_cli(["probe", "--lint", "loud", URL])
    assert result.exit_code == 2 and "'--lint'" in result.stderr
