"""The command line for `watch`: click glue over `mcpprobe.watch`, and the writer of its events
as they happen (`EventLines`).

`mcpprobe.cli.main` adds the command to the group. Light at import time, like `mcpprobe.cli.main`.
Ctrl-C (and SIGTERM/SIGHUP) stop the watch cleanly with exit 0; a second Ctrl-C interrupts hard.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from mcpprobe.cli.common import CONTEXT, Confirmation, command_line, session_extras, trace_checked
from mcpprobe.cli.options import (
    TargetCommand,
    connection_options,
    not_negative,
    output_options,
    positive,
    server_options,
)
from mcpprobe.exitcodes import ExitCode
from mcpprobe.render.interface import Format, WatchEvent

UNREAD_CHECK_SECONDS = 0.5
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def _calls(values: tuple[str, ...]) -> tuple[tuple[str, ToolArguments], ...]:
    """Each --call 'TOOL KEY=VALUE ...' as (TOOL, its arguments), parsed before connecting."""
    import shlex

    from mcpprobe.errors import UsageProblem
    from mcpprobe.operations.arguments import ToolArguments

    calls = []
    for value in values:
        try:
            words = shlex.split(value)
        except ValueError as exc:
            raise click.BadParameter(f"{value!r}: {exc}", param_hint="'--call'") from None
        if not words:
            raise click.BadParameter("expects a tool name, then its KEY=VALUE arguments", param_hint="'--call'")
        try:
            calls.append((words[0], ToolArguments.parse(words[1:])))
        except UsageProblem as exc:  # a bad KEY=VALUE: name the option, as check and load do
            raise click.BadParameter(f"{value!r}: {exc.message}", param_hint="'--call'") from None
    return tuple(calls)


if TYPE_CHECKING:  # names for the annotations only: importing them would load the SDK at --help
    from mcpprobe.cli.invocation import Connection, NamedServers, Output, ServerInvocation
    from mcpprobe.client.connect import SessionHooks
    from mcpprobe.client.settings import Settings
    from mcpprobe.operations.arguments import ToolArguments
    from mcpprobe.operations.input import Confirmer
    from mcpprobe.render.interface import Rendered, View
    from mcpprobe.watch import WatchOptions
    from mcpprobe.watch.model import Emit, WatchResult
    from mcpprobe.watch.supervisor import Watcher


HEADER_KINDS = 4  # tools, resources, templates, prompts: their first snapshots end the header


class EventLines:
    """The watch's `emit`: each event rendered by the chosen format and written as it happens.

    For people the first snapshots make a status header, and the events that come before the
    header is complete are held and shown under it, in order; a script (JSON) gets every event
    at once. `write` writes what the renderer returns, and raises BrokenPipeError when nobody
    reads any more (the watch then stops)."""

    def __init__(self, fmt: Format, view: View, write: Callable[[Rendered], None]) -> None:
        from mcpprobe.render.formats import renderer

        self.render = renderer(fmt)
        self.view = view
        self.write = write
        self.header_done = fmt is not Format.HUMAN
        self.kinds_seen: set[str] = set()
        self.held: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        if self.header_done:
            self._show(WatchEvent(event))
            return
        name = event.get("event")
        if name == "snapshot":
            kind = str(event.get("kind"))
            if kind != "server":
                self.kinds_seen.add(kind)
            ends = kind != "server" and len(self.kinds_seen) == HEADER_KINDS
            self._show(WatchEvent(event, header=True, header_ends=ends))
            if ends:
                self.header_done = True
                self._release()
            return
        if name not in ("end", "error", "reconnect"):
            self.held.append(event)  # shown under the header, in order
            return
        self._release()
        self._show(WatchEvent(event))

    def _release(self) -> None:
        held, self.held = self.held, []
        for event in held:
            self._show(WatchEvent(event))

    def _show(self, subject: WatchEvent) -> None:
        self.write(self.render(subject, self.view))



def _run_watch(inv: ServerInvocation, options: WatchOptions, emit: Emit, session_hooks: SessionHooks,
               confirmer: Confirmer) -> WatchResult | None:
    from mcpprobe.cli.common import run_operation
    from mcpprobe.watch import watch

    holder: dict[str, Watcher] = {}

    def stop() -> bool:
        # The first signal stops the watch cleanly, with its last events; before the watch has
        # started, it cancels like any other command.
        watcher = holder.get("watcher")
        if watcher is None:
            return False
        watcher.stop("interrupted", ExitCode.OK)
        return True

    async def watch_while_read() -> WatchResult:
        # A watch that has nothing to report writes nothing, so a reader that left (`| head -3`)
        # would go unnoticed until the next event: ask the pipe itself, now and then.
        import anyio

        from mcpprobe.cli.streams import pipe_closed

        async with anyio.create_task_group() as group:
            async def check() -> None:
                while True:
                    await anyio.sleep(UNREAD_CHECK_SECONDS)
                    if holder.get("watcher") is not None and pipe_closed():
                        holder["watcher"].stop("output-closed", ExitCode.OK)
                        return

            group.start_soon(check)
            result = await watch(inv.target, inv.settings, options, emit, session_hooks=session_hooks,
                                 confirmer=confirmer, on_start=lambda w: holder.__setitem__("watcher", w))
            group.cancel_scope.cancel()
        return result

    return run_operation(watch_while_read, stop=stop, signals=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP))


@click.command("watch", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@click.option("--poll", type=float, default=None, metavar="SECONDS", callback=positive,
              help="Re-list, every SECONDS, the kinds whose capability promises no change notifications.")
@click.option("--subscribe", "subscribe", multiple=True, metavar="URI",
              help="Subscribe to updates of this resource (repeatable). Needs resources.subscribe (else exit 3); "
                   "the URI must be listed or match a template unless --force.")
@click.option("--log-level", type=click.Choice(LEVELS), default=None,
              help="Set the server's logging level (where 'logging' is declared) and show its log messages.")
@click.option("--settle", type=float, default=0.2, show_default=True, metavar="SECONDS", callback=not_negative,
              help="How long a burst of change notifications must be quiet before the one re-list it causes "
                   "(never more than max(1, 5 x SECONDS) after the burst began).")
@click.option("--keepalive", type=float, default=15.0, show_default=True, metavar="SECONDS", callback=positive,
              help="How often to ping an HTTP server that offers no GET event stream, to notice that it went away.")
@click.option("--no-reconnect", is_flag=True,
              help="Exit (code 4) when the connection drops, instead of reconnecting with backoff.")
@click.option("--duration", type=float, default=None, metavar="SECONDS", callback=positive,
              help="Stop after watching for SECONDS (exit 0), counted from the end of the first listing.")
@click.option("--count", type=int, default=None, metavar="N", callback=positive,
              help="Stop after N events (not counting snapshot, notice, subscribed, call and end events).")
@click.option("--exit-on-change", is_flag=True,
              help="Exit 1 at the first change to a list or to the capabilities (a CI drift guard).")
@click.option("--call", "calls", multiple=True, metavar="'TOOL [KEY=VALUE]...'",
              help="Call TOOL after each connection's first listing (repeatable), for servers that start sending "
                   "updates when asked to (e.g. server-everything's toggle-subscriber-updates). Arguments follow "
                   "in the same value, as for `call`; the same checks apply: the tool must be listed, the "
                   "arguments must match its inputSchema, and a tool not marked read-only needs --yes (or a yes "
                   "on a terminal). Refused on the first connection: exit 3, nothing sent.")
@click.option("-y", "--yes", is_flag=True,
              help="With --call: call a tool not marked read-only without asking (without a terminal, it needs this).")
@server_options(many=False)
@output_options(json_help="Print one JSON object per event (NDJSON), flushed as it happens (docs/json-output.md).")
@connection_options
@click.pass_context
def watch_command(ctx: click.Context, url: tuple[str, ...], poll: float | None, subscribe: tuple[str, ...],
                  log_level: str | None, settle: float, keepalive: float, no_reconnect: bool, duration: float | None,
                  count: int | None, exit_on_change: bool, calls: tuple[str, ...], yes: bool, named: NamedServers,
                  output: Output, connection: Connection, settings: Settings) -> int:
    """Stay connected and report what changes, live, until stopped.

    Lists every declared kind, then follows list_changed notifications only where the server
    promised them (listChanged: true); --poll re-lists the others. Each change is re-listed to
    the end and reported as a difference (added, removed, changed with the fields named). A failed
    re-list keeps the last good snapshot, marked stale, and retries. A dropped connection is
    reconnected with backoff, then everything is re-listed and re-subscribed.

    Output: a status header, then one timestamped line per event; --json gives one JSON object
    per line (NDJSON), flushed as it happens (`mcpprobe docs json-output`).
    Exit: 0 stopped (Ctrl-C, --duration, --count); 1 a change with --exit-on-change;
    3 refused (--subscribe without resources.subscribe, a --call that fails the checks of call);
    4 connection lost with --no-reconnect,
    or the first connection failed; 5, 6, 7 as for every command.

    \b
    Examples:
      mcpprobe watch -- mcpprobe-demo
      mcpprobe watch --json --duration 60 https://example.com/mcp | jq -c 'select(.event=="diff")'
      mcpprobe watch --poll 30 --exit-on-change -- python server.py
      mcpprobe watch --subscribe demo://readme --log-level info -- mcpprobe-demo
    """
    from mcpprobe.cli.invocation import resolve
    from mcpprobe.cli.output import show, stderr_console, view_for, write_rendered
    from mcpprobe.cli.streams import reader_gone
    from mcpprobe.render.interface import WatchEnded
    from mcpprobe.watch import WatchOptions

    inv = resolve(command_line(ctx, url, named, connection, settings, output))
    options = WatchOptions(
        poll=poll, subscribe=tuple(subscribe), log_level=log_level, settle=settle, reconnect=not no_reconnect,
        duration=duration, count=count, exit_on_change=exit_on_change, calls=_calls(calls), yes=yes,
        keepalive=keepalive, redactor=inv.redactor,
    )
    fmt = inv.output.format
    view = view_for(fmt, inv.redactor)

    def write(rendered: Rendered) -> None:
        write_rendered(rendered, inv.redactor)
        if reader_gone(sys.stdout):  # `| head -3`: the watch stops
            raise BrokenPipeError

    emit = EventLines(fmt, view, write)
    inv.tell("watching")
    with session_extras(inv) as (session_hooks, trace):
        confirmer = Confirmation(stderr_console(inv.redactor), inv.redactor, inv.output.as_json)
        result = _run_watch(inv, options, emit, session_hooks, confirmer)
    show(WatchEnded(result), fmt, inv.redactor)
    if result is None:
        return 0
    return trace_checked(trace, inv.output, int(result.exit_code))
