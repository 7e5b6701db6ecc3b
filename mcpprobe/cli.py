"""The command line: click glue over `mcpprobe.operations`.

The one edge where exceptions become exit codes. Imports stay light at module level so that
`--help`, `--version` and completion never load the MCP SDK.
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

import click

from mcpprobe import __version__
from mcpprobe.cli_auth import auth_group
from mcpprobe.cli_common import (
    CONTEXT,
    ShowWhenReady,
    named_target,
    open_trace,
    phase_spinner,
    prepare,
    read_configs,
    run_and_emit,
    run_operation,
    server_stderr_writer,
    session_extras,
    settings_from,
    tell,
    trace_checked,
    verbose_say,
    view_for,
    warn_insecure,
    write_line,
    write_rendered,
)
from mcpprobe.cli_docs import completion_command, docs_command
from mcpprobe.cli_exporter import exporter_command
from mcpprobe.cli_invoke import call_command, get_prompt_command, read_command
from mcpprobe.cli_watch import watch_command
from mcpprobe.edge import TRACEBACK, EdgeGroup, traceback_option
from mcpprobe.options import (
    CONFIG_OPTION,
    Format,
    TargetCommand,
    _positive,
    connection_options,
    output_options,
    server_options,
)

if TYPE_CHECKING:  # names for the annotations only: importing them would load the SDK at --help
    from mcpprobe.expect import Expectations
    from mcpprobe.fleet import Member, Report

KIND_CHOICES = ("tools", "resources", "templates", "prompts", "tasks")


def _version_text() -> str:
    from mcpprobe.versions import sdk_version

    return f"mcpprobe {__version__} (mcp SDK {sdk_version()}, Python {sys.version.split()[0]})"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # A callback, so the SDK's version is looked up only when asked for, not at every start.
    if value and not ctx.resilient_parsing:
        click.echo(_version_text())
        ctx.exit()


@click.group(cls=EdgeGroup, context_settings=CONTEXT)
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
    from mcpprobe import redact

    redact.use(redact.Redactor(()))  # each command names its own secrets


def _per_server_path(template: str | None, option: str, name: str, many: bool) -> str | None:
    if not template:
        return None
    if many and "{server}" not in template:
        raise click.UsageError(f"{option} with several servers needs '{{server}}' in the path, "
                               f"for example {option} 'snapshots/{{server}}.json'")
    return template.replace("{server}", name or "server")


def _members(ctx: click.Context, positionals: tuple[str, ...], params: dict[str, Any]) -> tuple[list[Member], bool]:
    """The servers to probe: one from the command line, or named ones from the configs."""
    from mcpprobe import redact
    from mcpprobe.errors import UsageProblem
    from mcpprobe.fleet import Member
    from mcpprobe.redact import Redactor

    names: list[str] = list(dict.fromkeys(params["servers"]))
    if params["all_servers"] and names:
        raise click.UsageError("give either --all or -s/--server NAME, not both")
    if not params["all_servers"] and not names:
        target, settings = prepare(ctx, positionals, params)
        return [Member("", target, settings)], False
    if positionals or ctx.meta.get("server_command"):
        raise click.UsageError(
            "give either named servers (-s/--server, --all) or a URL or a command after '--', not both")
    discovery = read_configs(ctx, params)
    settings = settings_from(params)
    if params["all_servers"]:
        names = discovery.names()
        if not names:
            raise UsageProblem("--all: no servers found in the configs (see `mcpprobe servers -v` and "
                               "`mcpprobe docs config`)")
    entries = [discovery.get(name) for name in names]
    many = params["all_servers"] or len(names) > 1
    members, secrets = [], []
    for entry in entries:
        if entry.disabled and params["all_servers"]:
            # Named with -s it is probed anyway: the user asked for it.
            members.append(Member(entry.name, None, settings, source=entry.source,
                                  skipped='"disabled": true in its config entry'))
            continue
        try:
            target, extra = named_target(entry, params)
        except UsageProblem as exc:
            if not many:
                raise
            members.append(Member(entry.name, None, settings, source=entry.source, problem=exc))
            continue
        secrets.extend([*target.secrets(), *extra])
        members.append(Member(entry.name, target, settings, source=entry.source))
    ctx.meta["redactor"] = Redactor(secrets)
    redact.use(ctx.meta["redactor"])
    warn_insecure(params)
    return members, many


def _ci_inputs(params: dict[str, Any], members: list[Member], many: bool) -> Expectations | None:
    """--expect, --baseline and --save-snapshot, read and checked before anything is started."""
    from pathlib import Path

    from mcpprobe import drift, expect
    from mcpprobe.errors import UsageProblem

    expectations = expect.load(params["expect_file"]) if params["expect_file"] else None
    for member in members:
        member.snapshot_path = _per_server_path(params["save_snapshot"], "--save-snapshot", member.name, many)
        if member.snapshot_path and Path(member.snapshot_path).is_dir():
            raise UsageProblem(f"--save-snapshot {member.snapshot_path}: is a directory; name a file in it")
        path = _per_server_path(params["baseline"], "--baseline", member.name, many)
        if path is not None:
            member.baseline = (path, drift.load(path))
    return expectations


@cli.command(cls=TargetCommand, context_settings=CONTEXT)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@server_options(many=True)
@click.option("--all", "all_servers", is_flag=True, help="Probe every server found in the configs (a fleet).")
@click.option("--concurrency", type=int, default=8, show_default=True, metavar="N", callback=_positive,
              help="How many servers of a fleet are probed at once.")
@click.option("--list-servers", is_flag=True, help="Show the named servers and the files they come from, and exit.")
@click.option("--expect", "expect_file", type=click.Path(dir_okay=False), metavar="FILE.yaml",
              help="Check what the server must offer (`mcpprobe docs expectations`); each unmet expectation is an "
                   "expectation-failed finding (exit 1).")
@click.option("--save-snapshot", metavar="FILE",
              help="Write the catalog (capabilities, items) to FILE as JSON; with a fleet put {server} in FILE.")
@click.option("--baseline", metavar="FILE",
              help="Compare with a snapshot saved earlier: report added, removed and changed items; breaking "
                   "changes exit 1.")
@output_options(Format.HUMAN, Format.JSON, Format.JUNIT, Format.OPENMETRICS, Format.HTML)
@connection_options
@click.pass_context
def probe(ctx: click.Context, url: tuple[str, ...], **params: Any) -> int:
    """Connect, show what was negotiated, and list every declared kind to the end.

    Never calls a tool. Exit 0 when nothing is wrong, 1 when there are error findings. With several
    -s NAME or --all, probes a fleet concurrently: one row per server, the worst exit code overall.

    \b
    Examples:
      mcpprobe probe -- mcpprobe-demo
      mcpprobe probe --json https://example.com/mcp | jq '.kinds | map_values(.state)'
      mcpprobe probe -s github --expect expect.yaml --format junit > report.xml
      mcpprobe probe --all --format openmetrics > /var/lib/node_exporter/mcp.prom
    """
    fmt = params["output_format"]
    if params["list_servers"]:
        return _show_servers(ctx, params, fmt == "json")
    members, many = _members(ctx, url, params)
    expectations = _ci_inputs(params, members, many)
    from mcpprobe.fleet import Extras, run

    trace = open_trace(params, ctx.meta["redactor"])
    extras = Extras(expectations, trace=trace, stderr_writer=server_stderr_writer(params),
                    say=verbose_say(ctx, params), label_traces=many, traceback=bool(ctx.meta.get(TRACEBACK)))
    if extras.say is not None and many:
        extras.say(f"probing {len(members)} servers, at most {params['concurrency']} at once")
    show = None
    finished: list[Any] = [None] * len(members)
    spinner = None
    if not many:
        target = members[0].target
        spinner = phase_spinner(params, fmt == "human", target.describe() if target is not None else members[0].label)
        extras.watch = spinner.watch if spinner is not None else None

        def show_report(report: Report) -> int:
            # One server: shown as soon as its report is complete, while a stdio server shuts down.
            if spinner is not None:
                spinner.stop()
            return _emit_reports([report], fmt, many)

        show = extras.on_report = ShowWhenReady(show_report)
    else:
        # A fleet on a terminal: how many servers are done so far, until the table is shown.
        spinner = phase_spinner(params, fmt == "human", "", fleet=len(members))
        extras.on_done = spinner.done if spinner is not None else None
    if spinner is not None:
        spinner.start()
    try:
        reports = run_operation(run, members, concurrency=params["concurrency"], extras=extras, into=finished,
                                show=show)
    finally:
        if spinner is not None:
            spinner.stop()
        if trace is not None:
            trace.close()
    if reports is None and many:
        # Interrupted: the servers that had finished are shown, the others as interrupted.
        from mcpprobe.fleet import interrupted_report

        reports = [report or interrupted_report(member) for report, member in zip(finished, members, strict=True)]
    shown = show.code if show is not None else None
    return trace_checked(trace, params, shown if shown is not None else _emit_reports(reports, fmt, many))


def _emit_reports(reports: list[Report] | None, fmt: str, many: bool) -> int:
    """Print a probe's reports in the chosen format (mcpprobe.render.formats); their exit code."""
    from mcpprobe.exitcodes import ExitCode, worst
    from mcpprobe.fleet import fleet_exit_code
    from mcpprobe.render.formats import Format, Interrupted, ProbeRun, renderer

    if reports is None:
        write_rendered(renderer(Format(fmt))(Interrupted("probe"), view_for(Format(fmt))))
        return ExitCode.INTERRUPTED
    write_rendered(renderer(Format(fmt))(ProbeRun(reports, many), view_for(Format(fmt))))
    return int(fleet_exit_code(reports) if many else worst([report.exit_code for report in reports]))


def _show_servers(ctx: click.Context, params: dict[str, Any], as_json: bool) -> int:
    found = read_configs(ctx, params)
    if as_json:
        from mcpprobe.render.jsondoc import dumps, servers_document

        write_line(sys.stdout, dumps(servers_document(found)))
        return 0
    from mcpprobe.render.console import make_console
    from mcpprobe.render.fleet import render_servers

    render_servers(make_console(), found)
    return 0


@cli.command("servers", context_settings=CONTEXT)
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (`mcpprobe docs json-output`).")
@click.option("-v", "--verbose", is_flag=True, help="Also list every config file consulted, found or not.")
@click.pass_context
def servers_command(ctx: click.Context, **params: Any) -> int:
    """Show every named server found in the config files, and the file it came from.

    Reads mcpprobe.yaml, Claude Desktop, Claude Code, Cursor, Windsurf and VS Code configs (`mcpprobe docs config`).
    Environment values and header values are never shown, only their names.

    \b
    Examples:
      mcpprobe servers
      mcpprobe servers --json | jq -r '.servers[].name'
      mcpprobe probe -s NAME
    """
    return _show_servers(ctx, params, params["as_json"])


@cli.command("list", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("kind", type=click.Choice(KIND_CHOICES))
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@server_options(many=False)
@output_options()
@connection_options
@click.pass_context
def list_command(ctx: click.Context, kind: str, url: tuple[str, ...], **params: Any) -> int:
    """List one kind (tools, resources, templates, prompts or tasks) to the end, with its completeness.

    Refused with exit 3, sending nothing, when the server did not declare the capability
    (for tasks, the experimental 2025-11-25 'tasks.list').

    \b
    Examples:
      mcpprobe list tools -- mcpprobe-demo
      mcpprobe list tools --json -- mcpprobe-demo | jq -r '.items[].name'
      mcpprobe list resources --json https://example.com/mcp | jq '.state'
      mcpprobe list prompts -s my-server
    """
    target, settings = prepare(ctx, url, params)
    from mcpprobe.operations import list_one

    tell(ctx, params, f"listing {kind}", target)
    with session_extras(ctx, params) as session_args:
        spinner = phase_spinner(params, not params["as_json"], target.describe())
        if spinner is not None:
            session_args["tracer"] = spinner.watch(session_args.get("tracer"))
        code = run_and_emit(list_one, params, "list", target, settings, kind, spinner=spinner, **session_args)
    return trace_checked(ctx.meta["trace"], params, code)


# Commands in modules of their own, each light at import time (click only), so --help stays fast.
for _command in (call_command, read_command, get_prompt_command, watch_command, auth_group, exporter_command,
                 docs_command, completion_command):
    cli.add_command(_command)


def main() -> None:
    """Entry point. A reader of stdout or stderr that goes away (`| head`) is handled here, once:
    the rest of the output is dropped and the exit code stays the run's (mcpprobe.streams)."""
    from mcpprobe.streams import guard_standard_streams

    # A lone surrogate (from a server, or undecodable bytes in argv) cannot be written as UTF-8:
    # written as \udXXX rather than ending the run with a traceback. stderr does this already.
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]

    guard_standard_streams()
    cli.main(prog_name="mcpprobe", standalone_mode=True)


if __name__ == "__main__":
    main()
