"""Structure, not speed: the light commands never import the MCP SDK or its heavy dependencies.

`--help`, `--version`, subcommand help and shell completion run in a fresh interpreter under
`python -X importtime`; every module it imported is read from stderr. No timing is asserted:
CI machines are shared and slow, and the benchmark (bench/run.py) is where time is measured.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
FORBIDDEN = ("mcp", "mcp_types", "httpx2", "pydantic", "pydantic_core")
COMPLETION = {"_MCPPROBE_COMPLETE": "bash_complete", "COMP_WORDS": "mcpprobe pr", "COMP_CWORD": "1"}

INVOCATIONS = {
    "help": (["--help"], {}),
    "version": (["--version"], {}),
    "probe-help": (["probe", "--help"], {}),
    "list-help": (["list", "--help"], {}),
    "check-help": (["check", "--help"], {}),
    "exporter-help": (["exporter", "--help"], {}),
    "bash-completion": ([], COMPLETION),
}


def imported_modules(args: list[str], extra_env: dict[str, str]) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("_MCPPROBE_COMPLETE")}
    env.update(extra_env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    # `-m mcpprobe` runs the same main() as the console script, which fixes prog_name to "mcpprobe",
    # so the _MCPPROBE_COMPLETE variable triggers completion here too.
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mcpprobe", *args],
        capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=60,
    )
    modules = set()
    for line in done.stderr.splitlines():
        # "import time:   self [us] | cumulative | imported package"
        if not line.startswith("import time:"):
            continue
        parts = line.split("|")
        if len(parts) < 3:
            continue
        name = parts[-1].strip()
        if name and name != "imported package":
            modules.add(name)
    return modules, done


def _forbidden(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == root or m.startswith(root + ".") for root in FORBIDDEN))


@pytest.mark.parametrize("name", sorted(INVOCATIONS))
def test_light_commands_do_not_import_the_sdk(name: str) -> None:
    args, env = INVOCATIONS[name]
    modules, done = imported_modules(args, env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "click" in modules, "the importtime report was not read (no click import seen)"
    assert "mcpprobe.cli.main" in modules
    assert _forbidden(modules) == [], f"{name} imported {_forbidden(modules)}"


@pytest.mark.parametrize("name", sorted(INVOCATIONS))
def test_light_commands_load_no_renderer(name: str) -> None:
    """At most the list of formats (mcpprobe.render.interface, standard library only) is loaded, for a
    command's --format choices: no renderer, not the dispatch to them, and not rich. The group's --help, --version and
    completion load no command module (mcpprobe.cli.main's table), so not even that."""
    args, env = INVOCATIONS[name]
    modules, _ = imported_modules(args, env)
    loaded = sorted(m for m in modules if m == "rich" or m.startswith(("rich.", "mcpprobe.render.")))
    expected = ["mcpprobe.render.interface"] if name.endswith("-help") else []
    assert loaded == expected, f"{name} imported {loaded}"


def test_completion_answers() -> None:
    """The completion invocation really completes (so the test above measured the real path)."""
    _, done = imported_modules([], COMPLETION)
    assert "probe" in done.stdout


def test_probe_does_import_the_sdk_models() -> None:
    """The detector works: validating a broken item does load the SDK's models."""
    code = "import mcpprobe.safety.schema as s; s.item_errors('tools', {'name': 42}, modern=False)"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                          env=env, cwd=REPO_ROOT, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    names = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert _forbidden(names), "the importtime parser found no SDK module where one must be"


def test_the_options_transports_are_the_targets() -> None:
    """options.py spells the transports out rather than importing mcpprobe.wire.target (kept light)."""
    from mcpprobe.cli import options
    from mcpprobe.wire import target
    assert options.TRANSPORTS == target.TRANSPORTS


def test_the_command_table_is_the_commands() -> None:
    """`mcpprobe --help` and completion show each command's short help from mcpprobe.cli.main.COMMANDS,
    without importing the command's module: the table must say what the command itself would."""
    import click

    from mcpprobe.cli.main import COMMANDS, cli

    ctx = click.Context(cli)
    for name, entry in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name, name
        assert not command.hidden
        assert entry.help == " ".join((command.help or "").split("\n\n")[0].split()), name
        for limit in (30, 45, 60, 94):
            lazy = click.Command(name, help=entry.help).get_short_help_str(limit)
            assert lazy == command.get_short_help_str(limit), (name, limit)


def test_help_lists_the_commands_without_loading_them() -> None:
    modules, done = imported_modules(["--help"], {})
    assert "mcpprobe.cli.probe" not in modules and "mcpprobe.cli.options" not in modules
    from mcpprobe.cli.main import COMMANDS

    listed = done.stdout.split("Commands:", 1)[1]
    # A summary wraps under itself: a command's name is a line's first word at two spaces' indent.
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line[2] != " "]
    assert names == sorted(COMMANDS)


@pytest.mark.parametrize("columns", ["60", "120", ""])
def test_help_is_as_wide_as_click_makes_it(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The group's help is sized without shutil; the same width as click's own formatter gives."""
    import click

    from mcpprobe.cli.main import cli

    monkeypatch.setenv("COLUMNS", columns)
    ours = cli.get_help(cli.context_class(cli, info_name="mcpprobe", max_content_width=100))
    clicks = cli.get_help(click.Context(cli, info_name="mcpprobe", max_content_width=100))
    assert cli.context_class is not click.Context
    assert ours == clicks


def test_every_command_has_the_edge() -> None:
    """Each command settles its exceptions at the one edge (mcpprobe.cli.edge), wherever it is defined."""
    import click

    from mcpprobe.cli.edge import EdgeCommand, EdgeGroup
    from mcpprobe.cli.main import COMMANDS, cli

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert isinstance(command, EdgeCommand | EdgeGroup), name
        for sub in getattr(command, "commands", {}).values():
            assert isinstance(sub, EdgeCommand), f"{name} {sub.name}"


def test_every_help_fits_a_60_column_terminal_but_its_example_commands() -> None:
    """Prose paragraphs are left to click to wrap; only example command lines (and a choice list that
    click will not break) may be wider than the terminal: copied, a command must stay whole. Before,
    paragraphs marked not to rewrap ran to 95 columns and the terminal broke them mid-word."""
    import click

    from mcpprobe.cli.edge import CONTEXT
    from mcpprobe.cli.main import COMMANDS, cli

    ctx = click.Context(cli, info_name="mcpprobe", terminal_width=60)
    commands: list[tuple[str, click.Command]] = [("mcpprobe", cli)]
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        commands.append((name, command))
        commands += [(f"{name} {sub}", each) for sub, each in getattr(command, "commands", {}).items()]
    wide: list[str] = []
    for name, command in commands:
        # A context as the group makes them (CONTEXT's help names): click caches a command's help option
        # on first use, and one made without "-h" would leave every later help of that command without it.
        text = command.get_help(click.Context(command, info_name=name, terminal_width=60,
                                              help_option_names=CONTEXT["help_option_names"]))
        example = ("    mcpprobe ", "    curl ", "    CLIENT_SECRET=", "    bash ", "    zsh:", "    fish:",
                   "  A server is a URL")
        wide += [f"{name}: {line}" for line in text.splitlines()
                 if len(line) > 60 and not line.startswith(example) and not line.lstrip().startswith("--")]
    assert wide == []
