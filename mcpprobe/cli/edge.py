"""The one edge where an exception becomes an exit code and one line on stderr.

Every mcpprobe command is an `EdgeCommand`: its callback returns the exit code, and anything it
raises is settled in `EdgeCommand.invoke`, once:

- `UsageProblem` (bad input found after parsing): click's usage error, exit 2;
- Ctrl-C (KeyboardInterrupt, or click's Abort at a prompt): "interrupted", exit 130;
- any other exception is a bug in mcpprobe: exit 70 (not 1, which means findings) with one line that
  says so and how to report it. `mcpprobe --traceback COMMAND ...` shows the stack instead, and
  exits 70 all the same.

The same holds while the command line is read (click's parsing, an option's callback) and while a
group finds and loads its command: nothing raised in mcpprobe reaches Python's own handler.

An exception from inside the event loop arrives wrapped in an exception group; it is judged by
what it wraps. Light at import time: click and the standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from mcpprobe.errors import REPORT_HINT, bug_message
from mcpprobe.testhooks import crash_point

TRACEBACK = "mcpprobe.traceback"
# The named sections of a command's help, in this order after its own options, the same in every
# command: the shared options (mcpprobe.cli.options) say which section they belong to.
SECTIONS = ("Server", "Connection", "Authorization", "TLS and network", "Output")
SECTION = "mcpprobe_section"  # the attribute of a click.Parameter naming its section
# The context settings of every command: -h as well as --help, and help text up to 100 columns wide.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _leaf(exc: BaseException) -> BaseException:
    """What an exception group is about: its first exception that is not a group, preferring one
    that is not a cancellation (the others are usually cancelled because of it)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if type(e).__name__ != "Cancelled"]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def settle(ctx: click.Context, exc: BaseException) -> None:
    """An exception that reached the edge, as an exit code: raises click's Exit or UsageError (or the
    exception itself, when it is click's own), never returns. Used while the command line is read
    (click's parsing, option callbacks), while the command runs, and while a group finds its command."""
    # Imported here, not at the top: `mcpprobe --help` loads this module and needs neither.
    from mcpprobe.errors import UsageProblem
    from mcpprobe.exitcodes import ExitCode

    leaf = _leaf(exc)
    if isinstance(leaf, UsageProblem):
        from mcpprobe.safety.sanitize import visible

        # It can quote a config file anyone may have written (a name, a variable): inert.
        raise click.UsageError(visible(leaf.message, multiline=True), ctx=ctx) from None
    if isinstance(leaf, KeyboardInterrupt | click.Abort):
        ctx.exit(_interrupted(ctx))
    if isinstance(leaf, click.exceptions.Exit | click.ClickException | SystemExit):
        raise leaf from None
    if not isinstance(leaf, Exception):  # GeneratorExit and the like: not ours to judge
        raise exc
    if ctx.meta.get(TRACEBACK):
        _say_stack(exc)
    else:
        _say_bug(leaf)
    ctx.exit(int(ExitCode.SOFTWARE))


_URL_LIKE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def optional_values(command: click.Command, args: list[str]) -> list[str]:
    """The command line with every option whose value may be left out (`--lint[=MODE]`,
    `--ping[=@WEIGHT]`: click's `is_flag=False, flag_value=...`) given its value when a URL follows
    it: `--lint URL` is `--lint=on URL`, the URL the server's, never the option's value. (click
    already leaves an option's value out before `--` or another option.) Stops at `--`; the value
    of an option that takes one is passed over, whatever it looks like."""
    optional: dict[str, str] = {}  # the option's name -> its value when left out
    taking: dict[str, int] = {}  # an option that takes values -> how many words
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        if getattr(param, "_flag_needs_value", False):
            optional.update(dict.fromkeys(param.opts, str(param.flag_value)))
        elif not param.is_flag and not param.count:
            taking.update(dict.fromkeys(param.opts, max(param.nargs, 1)))
    if not optional:
        return args
    words, index = list(args), 0
    while index < len(words):
        word = words[index]
        if word == "--":
            break
        if word in taking:
            index += 1 + taking[word]
            continue
        if word in optional and index + 1 < len(words) and _URL_LIKE.match(words[index + 1]):
            words[index] = f"{word}={optional[word]}" if word.startswith("--") else f"{word}{optional[word]}"
        index += 1
    return words


class EdgeCommand(click.Command):
    """A command whose callback returns its exit code; its exceptions are settled here, those of
    reading its command line (option callbacks) too."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if any("\x00" in word for word in args):  # never from a shell; click's file checks would fail on it
            raise click.UsageError("a word of the command line holds a NUL character", ctx=ctx)
        try:
            crash_point("parse")
            return super().parse_args(ctx, optional_values(self, args))
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise  # click's own; Ctrl-C while reading is the group's (interrupted_early: the --json document too)
        except BaseException as exc:  # noqa: BLE001 - the edge: every exception ends here
            settle(ctx, exc)
            raise  # pragma: no cover - settle never returns

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command's own options first, then the shared ones in SECTIONS, each named, in the same
        order in every command (a command's help was its own options lost among 25 shared ones)."""
        groups: dict[str, list[tuple[str, str]]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                groups.setdefault(getattr(param, SECTION, "Options"), []).append(record)
        for title in ("Options", *SECTIONS):
            if groups.get(title):
                with formatter.section(title):
                    formatter.write_dl(groups[title])

    def invoke(self, ctx: click.Context) -> None:
        try:
            crash_point("command")
            code = super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except click.Abort:  # Ctrl-C or end of input at a prompt
            ctx.exit(_interrupted(ctx))
        except BaseException as exc:  # noqa: BLE001 - the edge: every exception ends here
            settle(ctx, exc)
        if code is not None:
            ctx.exit(int(code))
        return None


class EdgeGroup(click.Group):
    """A group whose commands (and subgroups) share the edge; Ctrl-C while the command line is
    read or the command is loaded is an interruption too (click would say "Aborted!", exit 1)."""

    command_class = EdgeCommand
    group_class = type  # subgroups are EdgeGroups too

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        words = list(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except KeyboardInterrupt:
            raise click.exceptions.Exit(interrupted_early(words)) from None
        ctx.meta.setdefault(_WORDS, words)
        return ctx

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - the edge: every exception ends here
            settle(ctx, exc)
            raise  # pragma: no cover - settle never returns

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # a command's own invoke settles it; this is before that
            raise click.exceptions.Exit(interrupted_early(ctx.meta.get(_WORDS, []))) from None
        except (click.exceptions.Exit, click.ClickException, SystemExit, click.Abort):
            raise
        except BaseException as exc:  # noqa: BLE001 - finding or loading the command: a bug, settled
            settle(ctx, exc)


_WORDS = "mcpprobe.words"  # the command line's words after the program name


def interrupted_early(words: list[str]) -> int:
    """Ctrl-C before the command ran (while mcpprobe loads, or reads its command line): "interrupted"
    on stderr and, when `--json` (or `--format json`) is among the words before `--`, the
    interrupted document on stdout, as for an interruption later; exit 130. Never for a command whose
    stdout is a host's channel to a server (`Entry.stdout_is_the_hosts`: `tap`, whose `--format` is the
    report's), so nothing of mcpprobe's goes there, interrupted or not."""
    from mcpprobe.cli.registry import COMMANDS

    own = words[:words.index("--")] if "--" in words else words
    names = [word for word in own if not word.startswith("-")]
    command = " ".join(names[:2] if names[:1] == ["auth"] else names[:1])  # `auth login`, as its own document
    entry = COMMANDS.get(command)
    hosts = entry is not None and entry.stdout_is_the_hosts
    as_json = not hosts and ("--json" in own or "--format=json" in own or any(
        word == "--format" and following == "json" for word, following in zip(own, own[1:], strict=False)))
    return _say_interrupted(command, as_json)


def _interrupted(ctx: click.Context) -> int:
    """Ctrl-C outside an operation (which reports its own interruption): say so, exit 130."""
    return _say_interrupted(ctx.command_path.split(" ", 1)[-1], bool(ctx.params.get("as_json")))


def _say_interrupted(command: str, as_json: bool) -> int:
    """ "interrupted" on stderr, with --json the interrupted document of `command` on stdout; 130."""
    if as_json:
        from mcpprobe.render.jsondoc import dumps, interrupted_document

        click.echo(dumps(interrupted_document(command)))
    click.echo("interrupted", err=True)
    from mcpprobe.exitcodes import ExitCode

    return int(ExitCode.INTERRUPTED)


def _say_bug(exc: BaseException) -> None:
    from mcpprobe.safety import redact
    from mcpprobe.safety.sanitize import visible

    # The exception's text can quote a server or a secret: inert, and redacted. The one place the
    # CLI reads the run's secrets from the global (mcpprobe.safety.redact.active): an exception
    # that reached the edge came from anywhere, carrying no invocation, and this is the last line.
    click.echo(visible(redact.active()(f"mcpprobe: {bug_message(exc)} ({REPORT_HINT})")), err=True)


def _say_stack(exc: BaseException) -> None:
    """--traceback: the whole stack (an exception group with all it holds), inert and redacted as
    the one line is, then the one line; the exit code of a bug all the same."""
    import traceback

    from mcpprobe.safety import redact
    from mcpprobe.safety.sanitize import visible

    text = "".join(traceback.format_exception(exc))
    click.echo(visible(redact.active()(text), multiline=True), err=True, nl=False)
    _say_bug(_leaf(exc))


Decorated = TypeVar("Decorated", bound=Callable[..., Any])


def traceback_option(func: Decorated) -> Decorated:
    """--traceback: let a bug's exception through, with its stack, instead of the one line."""

    def remember(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            ctx.meta[TRACEBACK] = True

    return click.option("--traceback", is_flag=True, expose_value=False, is_eager=True, callback=remember,
                        envvar="MCPPROBE_TRACEBACK",
                        help="On a bug in mcpprobe (exit 70), show the stack instead of one line.")(func)
