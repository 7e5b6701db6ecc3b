"""The command line for `call`, `read` and `get-prompt`: click glue over `mcpprobe.operations.invoke`.

`mcpprobe.cli.main` adds the three commands to the group. Light at import time: the SDK, jsonschema
and rich are loaded only when a command runs.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

import click

from mcpprobe.cli.common import (
    CONTEXT,
    Confirmation,
    command_line,
    looks_like_address,
    run_operation,
    session_extras,
    trace_checked,
    with_scheme,
)
from mcpprobe.cli.options import (
    TargetCommand,
    connection_options,
    output_options,
    server_json_options,
    server_options,
)
from mcpprobe.cli.output import emit_outcome, show, stderr_console

if TYPE_CHECKING:  # names for the annotations only: importing them would load the SDK at --help
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from mcpprobe.cli.invocation import Connection, NamedServers, Output, ServerInvocation, ServerJsonChoice
    from mcpprobe.client.settings import Settings
    from mcpprobe.operations.input import Hooks
    from mcpprobe.operations.outcome import InvokeOutcome
    from mcpprobe.render.cells import Safe

_SERVER_URL = re.compile(r"^https?://", re.IGNORECASE)
POSITIONALS = "[KEY=VALUE | KEY:=JSON]... [URL] [-- COMMAND [ARGS]...]"


def _split(ctx: click.Context, rest: tuple[str, ...]) -> tuple[list[str], tuple[str, ...]]:
    """KEY=VALUE pairs and at most one server URL, in any order."""
    from mcpprobe.operations.arguments import is_pair

    pairs: list[str] = []
    urls: list[str] = []
    for index, item in enumerate(rest):
        if _SERVER_URL.match(item):
            urls.append(item)
        elif is_pair(item):
            pairs.append(item)
        elif looks_like_address(item):
            raise click.UsageError(f"{item!r} is not a URL: it has no scheme. For an HTTP server, write the "
                                   f"scheme:\n  mcpprobe {ctx.info_name} ... {with_scheme(item)}")
        else:
            raise click.UsageError(
                f"{item!r} is neither KEY=VALUE nor a server URL. To run a stdio server, put its command "
                f"after '--':\n  mcpprobe {ctx.info_name} ... -- {' '.join(rest[index:])}")
    return pairs, tuple(urls)


class _ProgressView:
    """A progress bar on a terminal's stderr, created on the first notification."""

    def __init__(self, err: Console, safe: Safe, enabled: bool) -> None:
        self.err = err
        self.safe = safe
        self.enabled = enabled
        self.bar: Progress | None = None
        self.task: TaskID | None = None

    def __call__(self, event: dict[str, Any]) -> None:
        if not self.enabled:
            return
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        bar, task = self.bar, self.task
        if bar is None or task is None:
            # markup=False: the description is the server's message, never rich markup ([link] would
            # be an OSC 8 hyperlink on the terminal, a stray closing tag an error).
            bar = self.bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                                      TextColumn("{task.fields[counts]}", markup=False), TimeElapsedColumn(),
                                      console=self.err, transient=True)
            bar.start()
            task = self.task = bar.add_task("progress", total=None, counts="")
        progress, total = event.get("progress"), event.get("total")
        counts = f"{progress:g}" if isinstance(progress, int | float) else "?"
        if isinstance(total, int | float):
            counts += f"/{total:g}"
        message = event.get("message")
        bar.update(task, completed=progress if isinstance(progress, int | float) else None,
                   total=total if isinstance(total, int | float) else None, counts=counts,
                   description=self.safe(message, 60) if isinstance(message, str) else "progress")

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class Kept:
    """The hooks of `read` and `get-prompt` (mcpprobe.operations.input.Hooks): the outcome kept in
    `started` as soon as it exists, so that an interrupted run still shows what was sent; they call
    no tool, so nothing is previewed or asked."""

    def __init__(self, started: list[InvokeOutcome], *, yes: bool = False, interactive: bool = False) -> None:
        self.yes = yes
        self.interactive = interactive
        self.started = started

    def on_start(self, outcome: InvokeOutcome) -> None:
        self.started.append(outcome)

    def on_preview(self, tool: dict[str, Any], arguments: dict[str, Any], how: str, server: dict[str, Any]) -> None:
        pass

    def ask(self, tool: dict[str, Any], arguments: dict[str, Any]) -> bool:
        return False

    def on_progress(self, event: dict[str, Any]) -> None:
        pass

    def on_task_status(self, entry: dict[str, Any]) -> None:
        pass


class CallHooks(Kept):
    """The hooks of `call`: the outcome kept, the call previewed and confirmed on the terminal
    (`Confirmation`), its progress as a bar and a task's status on stderr (not with --json)."""

    def __init__(self, started: list[InvokeOutcome], confirmation: Confirmation, progress: _ProgressView, err: Console,
                 safe: Safe, as_json: bool) -> None:
        super().__init__(started, yes=confirmation.yes, interactive=confirmation.interactive)
        self.confirmation = confirmation
        self.progress = progress
        self.err = err
        self.safe = safe
        self.as_json = as_json

    def on_preview(self, tool: dict[str, Any], arguments: dict[str, Any], how: str, server: dict[str, Any]) -> None:
        self.confirmation.on_preview(tool, arguments, how, server)

    def ask(self, tool: dict[str, Any], arguments: dict[str, Any]) -> bool:
        return self.confirmation.ask(tool, arguments)

    def on_progress(self, event: dict[str, Any]) -> None:
        self.progress(event)

    def on_task_status(self, entry: dict[str, Any]) -> None:
        if not self.as_json:
            from mcpprobe.render.invoke import render_task_status

            render_task_status(self.err, entry, self.safe)


def _finish(inv: ServerInvocation, outcome: InvokeOutcome | None, started: list[InvokeOutcome] | None = None, *,
            written: bool = False) -> int:
    """Print the outcome in the chosen format (mcpprobe.render.formats); its exit code."""
    from mcpprobe.render.interface import Invoked

    fmt = inv.output.format
    if outcome is None:
        if not started:
            return emit_outcome(None, inv.output.as_json, inv.command, inv.redactor)
        # Interrupted (exit 130): show what had been sent and received so far, not just "interrupted".
        outcome = started[0]
        outcome.interrupted = True
    show(Invoked(outcome, written=written), fmt, inv.redactor)
    return int(outcome.exit_code)


_save_option = click.option(
    "--save", "save_dir", type=click.Path(file_okay=False), metavar="DIR",
    help="Write image, audio and embedded binary content to files in DIR.")
_elicit_option = click.option(
    "--elicit", type=click.Choice(["decline", "defaults"]), default=None,
    help="Declare the elicitation capability and answer every form with a decline, or accept it with the "
         "schema's default values. Without it mcpprobe declares no elicitation and refuses such requests.")


@click.command("call", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("tool")
@click.argument("rest", nargs=-1, metavar=POSITIONALS)
@click.option("--args", "args_spec", metavar="JSON|@FILE|-",
              help="All arguments as one JSON object: inline, from a file (@args.json) or from stdin (-). "
                   "KEY=VALUE pairs are applied on top.")
@click.option("-y", "--yes", is_flag=True,
              help="Call a tool that is not marked read-only without asking (without a terminal, such a call needs "
                   "it); with --server-json, also run the package's command without asking.")
@click.option("--task/--no-task", "as_task", default=None,
              help="2025-11-25: run the tool as a task when its execution.taskSupport is 'optional' ('required' "
                   "always runs as one). 2026-07-28: the tasks extension is declared on the call whenever the "
                   "server declared it, and the server decides; --no-task leaves it undeclared.")
@_save_option
@_elicit_option
@server_options(many=False)
@server_json_options(yes_option=False)
@output_options()
@connection_options
@click.pass_context
def call_command(ctx: click.Context, tool: str, rest: tuple[str, ...], args_spec: str | None, yes: bool,
                 as_task: bool | None,
                 save_dir: str | None, elicit: str | None, named: NamedServers, output: Output,
                 connection: Connection, settings: Settings, server_json: ServerJsonChoice | None) -> int:
    """Call one tool (tools/call), after checking it against the tool list and its inputSchema.

    Arguments are KEY=VALUE, coerced by the tool's inputSchema (integer, number, boolean,
    null, arrays and objects as JSON), KEY:=JSON for a literal JSON value, or --args.
    They are validated before sending: an invalid argument is exit 3, and nothing is sent.
    A tool not marked readOnlyHint is called after a yes on a terminal, or with --yes; with
    neither (no terminal), it is refused (exit 3), as in watch, load and check --call.
    Annotations are the server's own, unverified claims.

    A tool with execution.taskSupport 'required' (or 'optional', with --task) runs as a task:
    tasks/get is polled at the server's pollInterval until the task ends, then tasks/result
    gives the result. --timeout is per request; the wait ends with the task's own ttl. On
    Ctrl-C (or at the ttl) mcpprobe sends tasks/cancel. --task for a tool or server without
    task support is refused (exit 3).

    2026-07-28: tasks are the extension io.modelcontextprotocol/tasks. When the server
    declares it, the call declares it too, and the server decides whether the call becomes
    a task: then tasks/get is polled at its pollIntervalMs, requests for input are answered
    with tasks/update, and on Ctrl-C tasks/cancel is sent. --no-task leaves it undeclared.

    Exit: 0 ok; 1 isError, output-schema-mismatch or task-cancelled; 2 usage (or --save not
    written); 3 refused (not declared, unknown tool, invalid arguments, not confirmed, no task
    support); 4 connection; 5 JSON-RPC error; 6 timeout (or the task's ttl ran out); 7 auth;
    130 Ctrl-C (mcpprobe docs exit-codes).

    \b
    Examples:
      mcpprobe call add a=2 b=3 -- mcpprobe-demo
      mcpprobe call create_note title=Hi body='A note' tags:='["x"]' --yes -- mcpprobe-demo
      mcpprobe call add --args '{"a": 2, "b": 3}' --json -- mcpprobe-demo | jq .structuredContent
      mcpprobe call simulate-research-query topic=tides --yes -- npx -y @modelcontextprotocol/server-everything
    """
    from mcpprobe.cli.invocation import resolve
    from mcpprobe.operations.arguments import ToolArguments, load_args

    pairs, urls = _split(ctx, rest)
    inv = resolve(command_line(ctx, urls, named, connection, settings, output, server_json=server_json))
    given = ToolArguments.parse(pairs, load_args(args_spec, stdin=sys.stdin))  # before connecting
    from mcpprobe.operations.invoke import call_tool
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.invoke import is_terminal

    as_json = inv.output.as_json
    err = stderr_console(inv.redactor)
    safe = Safe(inv.redactor)
    progress = _ProgressView(err, safe, enabled=not as_json and is_terminal(sys.stderr))
    confirmation = Confirmation(err, inv.redactor, as_json, yes=yes, stdin_taken=args_spec == "-")
    started: list[InvokeOutcome] = []
    hooks: Hooks = CallHooks(started, confirmation, progress, err, safe, as_json)
    inv.tell(f"calling tool {tool}")
    try:
        with session_extras(inv) as (session_hooks, trace):
            outcome = run_operation(call_tool, inv.target, inv.settings, tool, given, hooks=hooks,
                                    elicit=elicit, task=as_task, save_dir=save_dir, session_hooks=session_hooks)
    finally:
        progress.stop()
    return trace_checked(trace, inv.output, _finish(inv, outcome, started))


@click.command("read", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("rest", nargs=-1, metavar="(URI | --template TEMPLATE [VAR=VALUE]...) [URL] [-- COMMAND [ARGS]...]")
@click.option("--template", metavar="TEMPLATE",
              help="A URI template from the server's resources/templates/list, expanded (RFC 6570) with VAR=VALUE.")
@click.option("--complete", "complete", metavar="VAR=PREFIX",
              help="With --template: ask completion/complete for values of one template variable, and print them.")
@click.option("-o", "--output", "output_path", type=click.Path(dir_okay=True), metavar="PATH",
              help="Write the contents to PATH (a directory when there are several), decoded, byte for byte.")
@_elicit_option
@server_options(many=False)
@output_options()
@connection_options
@click.pass_context
def read_command(ctx: click.Context, rest: tuple[str, ...], template: str | None, complete: str | None,
                 output_path: str | None, elicit: str | None, named: NamedServers, output: Output,
                 connection: Connection, settings: Settings) -> int:
    """Read one resource (resources/read). The URI must be listed or match a listed template.

    Text goes to stdout exactly as sent (so '> file' works); binary contents are decoded into
    -o FILE or a non-terminal stdout, and summarised (MIME type, size) on a terminal. Several
    contents are each labelled with their URI. A URI that is neither in resources/list nor
    matches a template is refused (exit 3) unless --force. Resource not found is exit 5.

    \b
    Examples:
      mcpprobe read demo://readme -- mcpprobe-demo
      mcpprobe read demo://swatch.png -o swatch.png -- mcpprobe-demo
      mcpprobe read --template 'demo://notes/{id}' id=3 -- mcpprobe-demo
      mcpprobe read --template 'demo://notes/{id}' --complete id= -- mcpprobe-demo
      mcpprobe read demo://readme --json -- mcpprobe-demo | jq -r '.result.contents[0].text'
    """
    from mcpprobe.cli.invocation import resolve
    from mcpprobe.operations.arguments import string_arguments, template_variables

    uri = None
    if template is None:
        if not rest or _SERVER_URL.match(rest[0]) and len(rest) == 1:
            raise click.UsageError("missing the resource URI (or --template TEMPLATE VAR=VALUE...)")
        uri, rest = rest[0], rest[1:]
    pairs, urls = _split(ctx, rest)
    if template is None and (pairs or complete):
        raise click.UsageError("VAR=VALUE and --complete go with --template TEMPLATE")
    inv = resolve(command_line(ctx, urls, named, connection, settings, output))
    values = string_arguments(pairs)
    if template is not None:
        template_variables(template)
    from mcpprobe.operations.invoke import read_resource

    started: list[InvokeOutcome] = []
    hooks: Hooks = Kept(started)
    inv.tell(f"reading {uri or template}")
    with session_extras(inv) as (session_hooks, trace):
        outcome = run_operation(read_resource, inv.target, inv.settings, uri, template=template, values=values,
                                complete=complete, hooks=hooks, elicit=elicit, output=output_path,
                                session_hooks=session_hooks)
    # Written to -o PATH by the operation; when that failed, the contents go to stdout, not lost.
    written = bool(outcome is not None and output_path and outcome.result is not None
                   and outcome.completion is None and outcome.save_error is None)
    return trace_checked(trace, inv.output, _finish(inv, outcome, started, written=written))


@click.command("get-prompt", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("name")
@click.argument("rest", nargs=-1, metavar="[KEY=VALUE]... [URL] [-- COMMAND [ARGS]...]")
@click.option("--complete", "complete", metavar="ARG=PREFIX",
              help="Ask completion/complete for values of one prompt argument (other KEY=VALUE are context).")
@_save_option
@_elicit_option
@server_options(many=False)
@output_options()
@connection_options
@click.pass_context
def get_prompt_command(ctx: click.Context, name: str, rest: tuple[str, ...], complete: str | None, save_dir: str | None,
                       elicit: str | None, named: NamedServers, output: Output, connection: Connection,
                       settings: Settings) -> int:
    """Expand one prompt (prompts/get) with its arguments and show the messages.

    The prompt must be in prompts/list. Required arguments are checked against its declared
    arguments before sending (missing ones are listed, exit 3); unknown arguments are refused
    unless --force. --json gives the raw result.

    \b
    Examples:
      mcpprobe get-prompt summarize_note note_id=2 -- mcpprobe-demo
      mcpprobe get-prompt draft_note --complete tone=f -- mcpprobe-demo
      mcpprobe get-prompt daily_review --json -- mcpprobe-demo | jq -r '.result.messages[].role'
    """
    from mcpprobe.cli.invocation import resolve
    from mcpprobe.operations.arguments import string_arguments

    pairs, urls = _split(ctx, rest)
    inv = resolve(command_line(ctx, urls, named, connection, settings, output))
    values = string_arguments(pairs)
    from mcpprobe.operations.invoke import get_prompt

    started: list[InvokeOutcome] = []
    hooks: Hooks = Kept(started)
    inv.tell(f"getting prompt {name}")
    with session_extras(inv) as (session_hooks, trace):
        outcome = run_operation(get_prompt, inv.target, inv.settings, name, values, complete=complete,
                                hooks=hooks, elicit=elicit, save_dir=save_dir, session_hooks=session_hooks)
    return trace_checked(trace, inv.output, _finish(inv, outcome, started))
