"""What every command that talks to a server shares: its options read once into a `CommandLine`
(`command_line`; `mcpprobe.cli.invocation` resolves that into the server to talk to), the run of one
operation with its signals, and --trace and --server-stderr for the session. What it prints goes
out through `mcpprobe.cli.output`.

Imported by the command modules (`mcpprobe.cli.probe`, `.invoke`, `.watch`), never by
`mcpprobe.cli.main` and never back from them; light at import time (click only), so a command's
`--help` never loads the MCP SDK.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click

from mcpprobe.cli.edge import CONTEXT as CONTEXT  # the commands' modules take it from here
from mcpprobe.cli.edge import TRACEBACK
from mcpprobe.cli.output import emit_outcome
from mcpprobe.exitcodes import ExitCode

if TYPE_CHECKING:  # names for the annotations only: importing them would load the SDK at --help
    import anyio
    from rich.console import Console

    from mcpprobe.cli.invocation import (
        CommandLine,
        Connection,
        Invocation,
        NamedServers,
        Output,
        ServerInvocation,
        ServerJsonChoice,
    )
    from mcpprobe.client.connect import SessionHooks
    from mcpprobe.client.settings import Settings
    from mcpprobe.fleet.probe import Member, Report
    from mcpprobe.operations.outcome import Outcome
    from mcpprobe.render.progress import PhaseSpinner
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.wire.trace import TraceWriter



def command_line(ctx: click.Context, positionals: tuple[str, ...], named: NamedServers, connection: Connection,
                 settings: Settings, output: Output, *, all_servers: bool = False,
                 server_json: ServerJsonChoice | None = None) -> CommandLine:
    """The options every server command shares (`mcpprobe.cli.options`, each already a typed value) and
    the server they name: a URL among `positionals`, the command after `--`, names from the configs
    (`-s`, `--all`), or a registry server.json (`--server-json`); checked, and frozen. Nothing is read
    or started yet (`mcpprobe.cli.invocation.resolve`)."""
    from mcpprobe.cli.invocation import CommandLine, ServerChoice

    command: list[str] = ctx.meta.get("server_command", [])
    url = None
    _server_json_alone(server_json, positionals, command, named, all_servers)
    if all_servers and named.names:
        raise click.UsageError("give either --all or -s/--server NAME, not both")
    if server_json is not None:
        pass  # the one server: checked alone above
    elif named.names or all_servers:
        if positionals or command:
            raise click.UsageError(
                "give either named servers (-s/--server, --all) or a URL or a command after '--', not both"
                if named.fleet else "give either -s/--server NAME or a URL or a command after '--', not both")
    else:
        url = _url(ctx, positionals)
    return CommandLine(
        command=ctx.info_name or "",
        server=ServerChoice(url=url, command=tuple(command), names=named.names, all_servers=all_servers,
                            config_files=named.config_files, server_json=server_json),
        connection=connection,
        settings=settings,
        output=output,
        traceback=bool(ctx.meta.get(TRACEBACK)),
    )


# ----- --server-json: one server, named by the file alone -----

def _server_json_alone(server_json: ServerJsonChoice | None, positionals: tuple[str, ...], command: list[str],
                       named: NamedServers, all_servers: bool) -> None:
    """--server-json names the server: with a URL, a command, -s or --all beside it, a usage error."""
    if server_json is None:
        return
    if positionals or command:
        raise click.UsageError("give either --server-json FILE or a URL or a command after '--', not both")
    if named.names or all_servers:
        raise click.UsageError("give either --server-json FILE or named servers (-s/--server, --all), not both")


def _url(ctx: click.Context, positionals: tuple[str, ...]) -> str | None:
    """The server's URL among the positionals; anything else there is a usage error that says what to write."""
    if len(positionals) == 1 and "://" not in positionals[0] and looks_like_address(positionals[0]):
        raise click.UsageError(
            f"{positionals[0]!r} is not a URL: it has no scheme. For an HTTP server, write the scheme:\n"
            f"  mcpprobe {ctx.info_name} {with_scheme(positionals[0])}")
    if len(positionals) > 1 or (positionals and "://" not in positionals[0]):
        raise click.UsageError(
            f"{' '.join(positionals)!r} is not a URL. To run a stdio server, put its command after '--':\n"
            f"  mcpprobe {ctx.info_name} -- {' '.join(positionals)}"
        )
    return positionals[0] if positionals else None


_ADDRESS = (r"(?P<host>localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"
            r"(?P<port>:\d{1,5})?(?P<path>/\S*)?")


def looks_like_address(word: str) -> bool:
    """`127.0.0.1:3101/mcp`, `localhost:8000`, `example.com/mcp`: a URL without its scheme. A file
    name such as `server.py` is not one (no port, no path, not a loopback name or an IP address)."""
    import re

    match = re.fullmatch(_ADDRESS, word)
    if match is None:
        return False
    host = match["host"]
    local = host == "localhost" or host[0].isdigit() or host.startswith("[")
    return bool(match["port"] or match["path"] or local)


def with_scheme(word: str) -> str:
    """http:// for a loopback or private address or an explicit port, https:// for a name on the internet."""
    import re

    match = re.match(_ADDRESS, word)
    if match is None:  # not an address (looks_like_address said no): a name on the internet, then
        return "https://" + word
    host = match["host"]
    local = host == "localhost" or host[0].isdigit() or host.startswith("[") or host.endswith(".local")
    return ("http://" if local or match["port"] else "https://") + word


class Confirmation:
    """How a tools/call is shown and confirmed on the terminal (`call`, `watch --call`, `check --call`,
    `load --call`):
    the confirming part of an invocation's hooks (mcpprobe.operations.input.Confirmer). The preview
    goes to stderr (with --json only when a question follows); the question is asked only on a
    terminal, and not when stdin is taken by `--args -`; the server's text in them with `redactor`'s
    secrets masked."""

    def __init__(self, err: Console, redactor: Redactor, as_json: bool, *, yes: bool = False,
                 stdin_taken: bool = False, repeated: bool = False) -> None:
        from mcpprobe.render.cells import Safe
        from mcpprobe.render.invoke import is_terminal

        self.err = err
        self.safe = Safe(redactor)
        self.as_json = as_json
        self.yes = yes
        self.interactive = is_terminal(sys.stdin) and is_terminal(sys.stderr) and not stdin_taken
        self.repeated = repeated  # `load`: the question says the tool is called over and over

    def on_preview(self, tool: dict[str, Any], arguments: dict[str, Any], how: str, server: dict[str, Any]) -> None:
        if not self.as_json or how == "prompt":
            from mcpprobe.render.invoke import render_preview

            render_preview(self.err, tool, arguments, how, server, self.safe)

    def ask(self, tool: dict[str, Any], arguments: dict[str, Any]) -> bool:
        from mcpprobe.render.invoke import confirm_question

        # One question at a time on the terminal: `check --call` over several servers asks from each.
        with _ASKING:
            try:
                return click.confirm(confirm_question(tool, self.safe, repeated=self.repeated), default=False,
                                     err=True)
            except click.Abort:  # end of input (Ctrl-D): what follows starts on a line of its own
                click.echo(err=True)
                raise


_ASKING = threading.Lock()


CANCELLING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
Result = TypeVar("Result")
Shown = TypeVar("Shown")


class CancelledWithoutSignal(RuntimeError):
    """The operation ended cancelled, and not by a signal: a bug, not an interruption."""


def run_fleet(run: Callable[..., Awaitable[list[Report]]], members: list[Member], *, many: bool,
              spinner: PhaseSpinner | None, trace: TraceWriter | None, show: ShowWhenReady[Report] | None,
              command: str | None = None, **kwargs: Any) -> list[Report] | None:
    """`run` over `members` (probe's and check's), the spinner and the trace ended whatever happens.
    Interrupted, a fleet keeps the servers that had finished and reports the others as interrupted
    (of `command`, where not probe); one server gives None."""
    finished: list[Report | None] = [None] * len(members)
    try:
        reports = run_operation(run, members, into=finished, show=show, **kwargs)
    finally:
        if spinner is not None:
            spinner.stop()
        if trace is not None:
            trace.close()
    if reports is None and many:
        from mcpprobe.fleet.probe import interrupted_report

        reports = [report or interrupted_report(member) for report, member in zip(finished, members, strict=True)]
        if command is not None:
            for report in reports:
                report.outcome.command = command
    return reports


def run_operation(operation: Callable[..., Awaitable[Result]], *args: Any,
                  signals: tuple[signal.Signals, ...] = CANCELLING, stop: Callable[[], bool] | None = None,
                  show: ShowWhenReady[Shown] | None = None, **kwargs: Any) -> Result | None:
    """Run one async operation; `signals` cancel it. None means interrupted.

    Ctrl-C is one of them rather than asyncio's KeyboardInterrupt: that one cancels the task
    natively, which the shields around a server's shutdown do not stop, and the run ended in a
    traceback when it came while a slow server was being ended.

    `stop()`, when given, is asked first on a signal: it returns True when it ended the operation
    gracefully itself (watch stops and reports), False to let the signal cancel it. A second
    signal does not wait for a server's shutdown grace: every server still running is killed.

    `show`, when given, is the operation's hook for "the result is complete" (see ShowWhenReady):
    the result is shown from a worker thread while the operation goes on to end its server.

    Only a signal makes an interruption: an operation that ends without a result although no
    signal cancelled it was cancelled by a bug (a task group whose failed task cancelled it, the
    failure lost on the way), and that is raised as one (exit 70), never shown as "interrupted".
    """
    import anyio

    from mcpprobe.signals import begin, noted_on
    from mcpprobe.wire.stdio import reap_all

    begin()

    async def main() -> Result | None:
        result: list[Result] = []
        signalled: list[bool] = []
        # The receiver outlives the cancellation it causes, so that a second signal is ours too,
        # and not a KeyboardInterrupt in the middle of a shutdown.
        listening = anyio.CancelScope(shield=True)
        async with anyio.create_task_group() as group:
            async def on_signal() -> None:
                with listening, anyio.open_signal_receiver(*signals) as received:
                    noted_on(signals)  # also seen by work that holds the loop (mcpprobe.signals)
                    first = True
                    async for _ in received:
                        if not first:
                            reap_all()
                        if not first or stop is None or not stop():
                            signalled.append(True)
                            group.cancel_scope.cancel()
                        first = False

            group.start_soon(on_signal)
            if show is not None:
                group.start_soon(show.serve)
            try:
                result.append(await operation(*args, **kwargs))
            finally:
                listening.cancel()
            group.cancel_scope.cancel()
        if not result and not signalled:
            raise CancelledWithoutSignal("the operation was cancelled, but no signal asked for it: a task that "
                                         "failed cancelled it, and its failure was lost")
        return result[0] if result else None

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        return None
    finally:
        reap_all()
        from mcpprobe.signals import again

        again()  # the loop's receiver left the default behind: what follows is ours again


class ShowWhenReady(Generic[Shown]):
    """Shows a result as soon as the operation says it is complete, while a stdio server is
    still shutting down, not after; and once, whatever happens during the shutdown.

    The instance is the operation's hook: called inside the event loop, it only keeps the result.
    `serve` (started by run_operation) then shows it with `show(result) -> exit code` in a worker
    thread, outside the event loop, in the command's click context; the loop meanwhile ends the
    server. `code` is the shown result's exit code, or None when nothing was shown.
    """

    def __init__(self, show: Callable[[Shown], int]) -> None:
        self._show = show
        self._context = click.get_current_context(silent=True)
        self._results: list[Shown] = []
        self._ready: anyio.Event | None = None
        self.code: int | None = None

    def __call__(self, result: Shown) -> None:
        if not self._results:
            self._results.append(result)
            if self._ready is not None:
                self._ready.set()

    async def serve(self) -> None:
        import anyio

        self._ready = anyio.Event()
        if self._results:
            self._ready.set()
        await self._ready.wait()
        self.code = await anyio.to_thread.run_sync(self._show_in_context)

    def _show_in_context(self) -> int:
        if self._context is None:
            return self._show(self._results[0])
        with self._context.scope(cleanup=False):  # click's context is per thread
            return self._show(self._results[0])


def run_and_emit(operation: Callable[..., Awaitable[Outcome]], inv: ServerInvocation, *args: Any,
                 spinner: PhaseSpinner | None = None, **kwargs: Any) -> int:
    """Run the operation on the invocation's target and settings, and report its outcome as soon as
    it is complete (ShowWhenReady); a spinner, when given, runs until then."""
    as_json = inv.output.as_json

    def show_outcome(outcome: Outcome) -> int:
        if spinner is not None:
            spinner.stop()
        return emit_outcome(outcome, as_json, inv.command, inv.redactor)

    show = ShowWhenReady(show_outcome)

    if spinner is not None:
        spinner.start()
    try:
        outcome = run_operation(operation, inv.target, inv.settings, *args, on_ready=show, show=show, **kwargs)
    finally:
        if spinner is not None:
            spinner.stop()
    if show.code is not None:
        return show.code
    return emit_outcome(outcome, as_json, inv.command, inv.redactor)


def preload(*modules: str) -> None:
    """Import what showing the result will need on a thread of its own, while the server boots.

    The event loop mostly waits for the server then; the human renderer's imports (rich: 50 ms,
    several times that on a loaded machine) are done by the time the result is ready rather than
    after it, when they would outlast a stdio server's exit grace. A failed import is left for the
    renderer to meet (and report) again."""
    import importlib
    import threading

    def load() -> None:
        for name in modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)

    threading.Thread(target=load, name="mcpprobe-preload").start()


def server_stderr_writer(inv: Invocation) -> Callable[[str], None] | None:
    """--server-stderr live: a stdio server's stderr passed through, redacted; None otherwise."""
    if inv.settings.server_stderr != "live":
        return None
    from mcpprobe.safety.redact import RedactingStream
    from mcpprobe.wire.stdio import write_stderr_text

    stream = RedactingStream(sys.stderr, inv.redactor)
    return lambda text: write_stderr_text(text, stream)


def open_trace(inv: Invocation) -> TraceWriter | None:
    """--trace FILE|-: the writer every message goes through, redacted; None without --trace."""
    path = inv.output.trace
    if not path:
        return None
    from mcpprobe.wire.trace import TraceWriter

    if path == "-":
        return TraceWriter(sys.stderr, inv.redactor)
    try:
        stream = open(path, "w", encoding="utf-8",  # noqa: SIM115 - closed after the run
                      errors="backslashreplace")
    except OSError as exc:
        raise click.BadParameter(f"cannot write {path}: {exc.strerror or exc}", param_hint="'--trace'") from None
    return TraceWriter(stream, inv.redactor, close=True)


@contextlib.contextmanager
def session_extras(inv: ServerInvocation) -> Iterator[tuple[SessionHooks, TraceWriter | None]]:
    """What one server's session takes from the command line: --server-stderr, --trace (its
    writer feeds the session and is closed after the run; `trace_checked` then asks it), and
    --server-json's comparison of the server with the file (added once, where the snapshot is kept)."""
    from mcpprobe.client.connect import SessionHooks

    judge = None
    if inv.published is not None:
        from mcpprobe.fleet.serverjson import identity_judge

        judge = identity_judge(inv.published)
    writer = open_trace(inv)
    try:
        yield SessionHooks.of_run(writer, server_stderr_writer(inv), judge_snapshot=judge), writer
    finally:
        if writer is not None:
            writer.close()


def trace_checked(trace: TraceWriter | None, output: Output, code: int) -> int:
    """A --trace file that could not be written is an error (exit 2), after the result was shown."""
    if trace is None or trace.error is None:
        return code
    from mcpprobe.exitcodes import worst

    click.echo(f"error: --trace {output.trace}: cannot write: {trace.error}; the trace is incomplete", err=True)
    return int(worst([ExitCode(code), ExitCode.USAGE]))
