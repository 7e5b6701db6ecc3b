"""The command line's entry: the `mcpprobe` group.

`main()` (called by `mcpprobe.launch`, the console script) guards the standard streams and hands
argv to click. The group knows every command's name and short help from the table of
cli/registry.py without importing its module, so `mcpprobe --help`, `--version` and shell
completion load only click, this module and the table; a command's module is imported when that
command runs (or its help is asked for).
From there the path of a command is in that module (the README's "Code map" follows it).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from typing import TYPE_CHECKING

import click

from mcpprobe import __version__
from mcpprobe.cli.edge import CONTEXT, EdgeGroup, traceback_option
from mcpprobe.cli.registry import COMMANDS
from mcpprobe.testhooks import interrupt_point

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


def _columns() -> int:
    """`shutil.get_terminal_size().columns`, the same way, without importing shutil (and bz2, lzma
    and zlib with it): 2 ms of `mcpprobe --help`."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            stdout = sys.__stdout__  # None where Python started without one
            columns = os.get_terminal_size(stdout.fileno()).columns if stdout is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _HelpFormatter(click.HelpFormatter):
    """click's, as wide as click would make it (`_columns`)."""

    def __init__(self, indent_increment: int = 2, width: int | None = None, max_width: int | None = None) -> None:
        if width is None and click.formatting.FORCED_WIDTH is None:
            width = max(min(_columns(), max_width or 80) - 2, 50)
        super().__init__(indent_increment, width, max_width)


class _Context(click.Context):
    formatter_class = _HelpFormatter


class LazyGroup(EdgeGroup):
    """A group whose commands are imported when used: listed (help, completion) from `COMMANDS`."""

    context_class = _Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if cmd_name not in self.commands and entry is not None:
            interrupt_point("load")
            command = getattr(importlib.import_module(entry.module), entry.attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command's summary whole (its first sentence), wrapped under itself: cut to one line,
        11 of 13 ended in "..." on an 80-column terminal."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, _short_help(name, SUMMARY_LIMIT)) for name in self.list_commands(ctx)])

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        from click.shell_completion import CompletionItem

        items = [CompletionItem(name, help=_short_help(name)) for name in self.list_commands(ctx)
                 if name.startswith(incomplete)]
        # The group's own options, as click.Command completes them (not its commands: done above).
        return [*items, *click.Command.shell_complete(self, ctx, incomplete)]


SUMMARY_LIMIT = 400  # characters: more than any command's first sentence, so none is cut


def _short_help(name: str, limit: int = 45) -> str:
    """The command's short help as click would shorten it, from the table (or the loaded command)."""
    entry = COMMANDS.get(name)
    if entry is None:
        command = cli.commands[name]
        return command.get_short_help_str(limit)
    return click.Command(name, help=entry.help).get_short_help_str(limit)


def _version_text() -> str:
    from mcpprobe.client.versions import sdk_version

    return f"mcpprobe {__version__} (mcp SDK {sdk_version()}, Python {sys.version.split()[0]})"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # A callback, so the SDK's version is looked up only when asked for, not at every start.
    if value and not ctx.resilient_parsing:
        click.echo(_version_text())
        ctx.exit()


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@traceback_option
@click.option("-V", "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def cli() -> None:
    """Diagnose a Model Context Protocol server: what it declares, what it negotiates, and what is
    broken rather than merely absent.

    \b
    A server is a URL (streamable HTTP, or legacy SSE) or a command after '--' (stdio):
      mcpprobe probe -- mcpprobe-demo
      mcpprobe probe https://example.com/mcp
      mcpprobe list tools --json -- npx -y @modelcontextprotocol/server-everything | jq '.items[].name'

    Exit codes: 0 ok, 1 findings, 2 usage, 3 refused, 4 connection, 5 protocol, 6 timeout, 7 auth,
    70 a bug in mcpprobe (--traceback shows its stack), 130 interrupted.
    See `mcpprobe docs exit-codes` and `mcpprobe docs findings`; `mcpprobe docs` lists every page.
    """
    from mcpprobe.safety import redact
    redact.use(redact.Redactor(()))  # each command names its own secrets


def main() -> None:
    """Entry point. A reader of stdout or stderr that goes away (`| head`) is handled here, once:
    the rest of the output is dropped and the exit code stays the run's (mcpprobe.cli.streams)."""
    from mcpprobe.cli.streams import guard_standard_streams
    from mcpprobe.signals import interrupt_on_signals

    interrupt_on_signals()  # SIGTERM and SIGHUP as Ctrl-C, before any operation takes them
    # A lone surrogate (from a server, or undecodable bytes in argv) cannot be written as UTF-8:
    # written as \udXXX rather than ending the run with a traceback. stderr does this already.
    reconfigure = getattr(sys.stdout, "reconfigure", None)  # a TextIOWrapper's; a replaced stdout may lack it
    with contextlib.suppress(AttributeError, ValueError):
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")

    guard_standard_streams()
    try:
        cli.main(prog_name="mcpprobe", standalone_mode=True)
    except SystemExit as done:
        raise SystemExit(_output_checked(done.code)) from None


def _output_checked(code: str | int | None) -> str | int | None:
    """stdout that could not be written (a full disk) is an error, exit 2, once the work is done,
    as for an output file named on the command line; not a bug in mcpprobe (mcpprobe.cli.streams)."""
    from mcpprobe.cli.streams import write_error

    with contextlib.suppress(Exception):
        sys.stdout.flush()  # what is still buffered fails now, not in the interpreter's exit
    error = write_error()
    if error is None or not (code is None or isinstance(code, int)):
        return code
    from mcpprobe.exitcodes import ExitCode, worst

    sys.stderr.write(f"error: cannot write to stdout: {error.strerror or error}; the output is incomplete\n")
    try:
        return int(worst([ExitCode(code or 0), ExitCode.USAGE]))
    except ValueError:  # not one of mcpprobe's codes
        return code


if __name__ == "__main__":
    main()
