"""The command line for `probe`, `list` and `servers`: click glue over `mcpprobe.operations.probe` and
`mcpprobe.fleet.probe`.

`mcpprobe.cli.main` loads this module when one of the three commands runs (or its help is asked for).
Light at import time (click only): the SDK, jsonschema and rich are loaded only when a command runs.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from mcpprobe.cli.common import (
    CONTEXT,
    ShowWhenReady,
    command_line,
    open_trace,
    preload,
    run_and_emit,
    run_fleet,
    server_stderr_writer,
    session_extras,
    trace_checked,
)
from mcpprobe.cli.edge import EdgeCommand
from mcpprobe.cli.options import (
    CONFIG_OPTION,
    TargetCommand,
    connection_options,
    output_options,
    positive,
    server_json_options,
    server_options,
)
from mcpprobe.cli.output import fleet_spinner, phase_spinner, show
from mcpprobe.render.interface import Format

if TYPE_CHECKING:  # names for the annotations only: importing them would load the SDK at --help
    from mcpprobe.cli.invocation import Connection, FleetInvocation, NamedServers, Output, ServerJsonChoice
    from mcpprobe.client.settings import Settings
    from mcpprobe.fleet.config import Discovery
    from mcpprobe.fleet.expect import Expectations
    from mcpprobe.fleet.probe import Member, Report
    from mcpprobe.lint.engine import LintSettings
    from mcpprobe.safety.redact import Redactor

KIND_CHOICES = ("tools", "resources", "templates", "prompts", "tasks")


class KindArgument(click.Argument):
    """`list`'s KIND. Missing or unknown, it is a usage error that names the kinds in a sentence
    and shows the command line that would work (click's own lists the choices one per tab-indented
    line, under the choice list as the argument's name)."""

    def handle_parse_result(self, ctx: click.Context, opts: Mapping[str, Any],
                            args: list[str]) -> tuple[Any, list[str]]:  # click's own types
        try:
            return super().handle_parse_result(ctx, opts, args)
        except click.BadParameter as exc:  # MissingParameter too
            raise click.UsageError(_kind_problem(ctx, opts), ctx) from exc


def _kind_problem(ctx: click.Context, opts: Mapping[str, object]) -> str:
    """What is wrong with the kind, and the command line the user meant, on their own server."""
    import difflib
    import shlex

    given = opts.get("kind")
    kinds = f"{', '.join(KIND_CHOICES[:-1])} or {KIND_CHOICES[-1]}"
    urls, server = opts.get("url"), opts.get("server")  # click's UNSET when not given
    target = [word for word in urls if isinstance(word, str)] if isinstance(urls, list | tuple) else []
    if isinstance(server, str):
        target += ["-s", server]
    if ctx.meta.get("server_command"):
        target += ["--", *ctx.meta["server_command"]]
    if not isinstance(given, str) or "://" in given:
        if isinstance(given, str):
            target.insert(0, given)  # `mcpprobe list URL`: the URL took the kind's place
        problem = f"missing the kind to list: {kinds}"
        kind = "tools"
    else:
        problem = f"{given!r} is not a kind to list; the kinds are {kinds}"
        kind = (difflib.get_close_matches(given.lower(), KIND_CHOICES, n=1) or ["tools"])[0]
    target = target or ["--", "mcpprobe-demo"]
    return f"{problem}. For example:\n  {shlex.join(['mcpprobe', ctx.info_name or 'list', kind, *target])}"


def _parse_reports(ctx: click.Context, param: click.Parameter,
                   values: tuple[str, ...]) -> tuple[tuple[Format, str], ...]:
    """`--report FORMAT=FILE`, repeatable: checked before anything starts (exit 2)."""
    reports = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not path:
            raise click.BadParameter(f"{value!r}: expected FORMAT=FILE, for example junit=report.xml", ctx, param)
        if name not in {fmt.value for fmt in Format}:
            raise click.BadParameter(f"{value!r}: {name!r} is not a format; formats: "
                                     f"{', '.join(fmt.value for fmt in Format)}", ctx, param)
        reports.append((Format(name), path))
    return tuple(reports)


def _write_reports(reports: list[Report], files: tuple[tuple[Format, str], ...], many: bool,
                   redactor: Redactor) -> bool:
    """The run's reports written once more, in other formats, to the files --report names (whole
    or not at all, secrets masked); False, with one `error:` line each, when one cannot be."""
    if not files:
        return True
    from mcpprobe.render.formats import renderer
    from mcpprobe.render.interface import ProbeRun, View
    from mcpprobe.safety.outfiles import WriteFailed, write_file
    from mcpprobe.safety.sanitize import visible

    written = True
    for fmt, path in files:
        rendered = renderer(fmt)(ProbeRun(reports, many), View(width=100, redactor=redactor))
        text = "".join(piece for piece in rendered.stdout if isinstance(piece, str))
        try:
            write_file(path, redactor(text).encode("utf-8", "surrogateescape"))
        except WriteFailed as exc:
            click.echo(visible(f"error: --report {fmt.value}={path}: {exc.message}"), err=True)
            written = False
    return written


def _per_server_path(template: str | None, option: str, name: str, many: bool) -> str | None:
    from mcpprobe.safety.outfiles import server_path

    if not template:
        return None
    if many and "{server}" not in template:
        raise click.UsageError(f"{option} with several servers needs '{{server}}' in the path, "
                               f"for example {option} 'snapshots/{{server}}.json'")
    return server_path(template, name)


def _ci_inputs(fleet: FleetInvocation, expect_file: str | None, save_snapshot: str | None,
               baseline: str | None) -> Expectations | None:
    """--expect, --baseline and --save-snapshot, read and checked before anything is started."""
    from pathlib import Path

    from mcpprobe.errors import UsageProblem

    expectations = None
    if expect_file:
        from mcpprobe.fleet import expect
        expectations = expect.load(expect_file)
    for member in fleet.members:
        member.snapshot_path = _per_server_path(save_snapshot, "--save-snapshot", member.name, fleet.many)
        member.snapshot_path_made = save_snapshot is not None and "{server}" in save_snapshot
        if member.snapshot_path and Path(member.snapshot_path).is_dir():
            raise UsageProblem(f"--save-snapshot {member.snapshot_path}: is a directory; name a file in it")
        path = _per_server_path(baseline, "--baseline", member.name, fleet.many)
        if path is not None and member.target is not None:  # a member never probed is never compared
            _read_baseline(member, path, fleet.many)
    if baseline is not None and fleet.many:
        _check_fleet_baselines(fleet, baseline)
    return expectations


def _read_baseline(member: Member, path: str, many: bool) -> None:
    """One server's --baseline. In a fleet, a file that does not exist is that member's warning
    (a server new to the fleet) and one that is not a snapshot is that member's error; alone, either
    is a usage error of the run."""
    from mcpprobe.fleet import drift
    try:
        member.baseline = (path, drift.load(path))
    except drift.BaselineMissing:
        if not many:
            raise
        member.baseline_missing = path
    except drift.BaselineError as exc:
        if not many:
            raise
        member.problem = exc


def _check_fleet_baselines(fleet: FleetInvocation, template: str) -> None:
    """A --baseline template that names no existing file for any server of the fleet is a usage
    error, as a missing baseline of one server is: most likely a wrong path, not a new fleet."""
    from mcpprobe.fleet.drift import BaselineMissing

    compared = [member for member in fleet.members if member.target is not None]
    missing = [member.baseline_missing for member in compared if member.baseline_missing is not None]
    if missing and len(missing) == len(compared):
        others = f", nor the {len(missing) - 1} other{'s' if len(missing) > 2 else ''}" if len(missing) > 1 else ""
        raise BaselineMissing(f"--baseline {template}: no server of the fleet has a snapshot there ({missing[0]} "
                              f"does not exist{others}); save them first with --save-snapshot")


@click.command("probe", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@server_options(many=True)
@click.option("--all", "all_servers", is_flag=True, help="Probe every server found in the configs (a fleet).")
@click.option("--concurrency", type=int, default=8, show_default=True, metavar="N", callback=positive,
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
@click.option("--report", "report_files", multiple=True, metavar="FORMAT=FILE", callback=_parse_reports,
              help="Also write the result in FORMAT (json, junit, openmetrics, html, sarif, human) to FILE, whole or "
                   "not at all; repeatable. stdout keeps --format.")
@click.option("--lint", "lint_mode", type=click.Choice(["on", "strict"]), is_flag=False, flag_value="on",
              default=None, help="Also vet the text the server gives the model, offline (lint-* findings, "
                                 "`mcpprobe docs findings`); warnings never change the exit code, with "
                                 "--lint=strict they are errors (exit 1). With a fleet, also fleet-* findings.")
@click.option("--token-budget", type=int, default=None, metavar="N", callback=positive,
              help="With --lint: a lint-token-budget warning when the catalogue is estimated at more than N "
                   "tokens (characters of its JSON / 4).")
@server_json_options(yes_option=True)
@output_options(Format.HUMAN, Format.JSON, Format.JUNIT, Format.OPENMETRICS, Format.HTML, Format.SARIF)
@connection_options
@click.pass_context
def probe(ctx: click.Context, url: tuple[str, ...], concurrency: int, list_servers: bool, expect_file: str | None,
          save_snapshot: str | None, baseline: str | None, report_files: tuple[tuple[Format, str], ...],
          lint_mode: str | None, token_budget: int | None, all_servers: bool, named: NamedServers, output: Output,
          connection: Connection, settings: Settings, server_json: ServerJsonChoice | None) -> int:
    """Connect, show what was negotiated, and list every declared kind to the end.

    Never calls a tool. Exit 0 when nothing is wrong, 1 when there are error findings. With several
    -s NAME or --all, probes a fleet concurrently: one row per server, the worst exit code overall.

    \b
    Examples:
      mcpprobe probe -- mcpprobe-demo
      mcpprobe probe --json https://example.com/mcp | jq '.kinds | map_values(.state)'
      mcpprobe probe -s github --expect expect.yaml --format junit > report.xml
      mcpprobe probe --all --format openmetrics > /var/lib/node_exporter/mcp.prom
      mcpprobe probe --all --json --report junit=report.xml --report html=report.html > probe.json
      mcpprobe probe --server-json server.json --yes
    """
    from mcpprobe.cli.invocation import resolve_fleet

    if token_budget is not None and lint_mode is None:
        raise click.UsageError("--token-budget needs --lint")
    line = command_line(ctx, url, named, connection, settings, output, all_servers=all_servers,
                        server_json=server_json)
    if list_servers:
        return _show_servers(line.server.config_files, line.output.verbose, line.output.as_json)
    fleet = resolve_fleet(line)
    expectations = _ci_inputs(fleet, expect_file, save_snapshot, baseline)
    from mcpprobe.fleet.probe import Extras, run

    fmt, many, members = line.output.format, fleet.many, list(fleet.members)
    trace = open_trace(fleet)
    extras = Extras(expectations, trace=trace, stderr_writer=server_stderr_writer(fleet),
                    say=fleet.say if line.output.verbose else None, label_traces=many, traceback=line.traceback,
                    lint=_lint_settings(lint_mode, token_budget))
    if many:
        fleet.say(f"probing {len(members)} servers, at most {concurrency} at once")
    show = None
    spinner = None
    if not many:
        target = members[0].target
        spinner = phase_spinner(fleet, target.describe() if target is not None else members[0].label)
        extras.watch = spinner.watch if spinner is not None else None

        def show_report(report: Report) -> int:
            # One server: shown as soon as its report is complete, while a stdio server shuts down.
            if spinner is not None:
                spinner.stop()
            return _emit_reports([report], fmt, many, fleet.redactor, report_files)

        show = extras.on_report = ShowWhenReady(show_report)
    else:
        # A fleet on a terminal: how many servers are done so far, until the table is shown.
        counter = fleet_spinner(fleet, len(members))
        extras.on_done = counter.done if counter is not None else None
        spinner = counter
    if spinner is not None:
        spinner.start()
    if fmt == "human":
        preload("mcpprobe.render.human", "mcpprobe.render.fleet")
    reports = run_fleet(run, members, many=many, spinner=spinner, trace=trace, show=show, concurrency=concurrency,
                        extras=extras)
    shown = show.code if show is not None else None
    code = shown if shown is not None else _emit_reports(reports, fmt, many, fleet.redactor, report_files)
    return trace_checked(trace, line.output, code)


def _lint_settings(mode: str | None, token_budget: int | None) -> LintSettings | None:
    if mode is None:
        return None
    from mcpprobe.lint.engine import LintSettings

    return LintSettings(strict=mode == "strict", token_budget=token_budget)


def _emit_reports(reports: list[Report] | None, fmt: Format, many: bool, redactor: Redactor,
                  files: tuple[tuple[Format, str], ...] = ()) -> int:
    """Print a probe's reports in the chosen format (mcpprobe.render.formats), then write the
    --report files; their exit code (2 when a --report file cannot be written)."""
    from mcpprobe.exitcodes import ExitCode, worst
    from mcpprobe.fleet.probe import fleet_exit_code
    from mcpprobe.render.interface import Interrupted, ProbeRun

    if reports is None:
        show(Interrupted("probe"), fmt, redactor)
        return ExitCode.INTERRUPTED
    show(ProbeRun(reports, many), fmt, redactor)
    if not _write_reports(reports, files, many, redactor):
        return ExitCode.USAGE
    return int(fleet_exit_code(reports) if many else worst([report.exit_code for report in reports]))


def _show_servers(config_files: tuple[str, ...], verbose: bool, as_json: bool) -> int:
    from mcpprobe.render.interface import Format, Servers
    from mcpprobe.safety.redact import Redactor

    found = _discover(config_files, verbose)
    fmt = Format.JSON if as_json else Format.HUMAN
    show(Servers(found), fmt, Redactor(()))  # no secrets: no server of the configs was resolved
    return 0


def _discover(config_files: tuple[str, ...], verbose: bool) -> Discovery:
    """The named servers of the configs; with -v, every config file consulted on stderr."""
    from mcpprobe.fleet.config import discover
    from mcpprobe.safety.sanitize import visible

    found = discover(config_files)
    if verbose:
        for path, state in found.files:
            click.echo(visible(f"mcpprobe: config {path}: {state}"), err=True)
    return found


@click.command("servers", cls=EdgeCommand, context_settings=CONTEXT)
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (`mcpprobe docs json-output`).")
@click.option("-v", "--verbose", is_flag=True, help="Also list every config file consulted, found or not.")
def servers_command(config_files: tuple[str, ...], as_json: bool, verbose: bool) -> int:
    """Show every named server found in the config files, and the file it came from.

    Reads mcpprobe.yaml, Claude Desktop, Claude Code, Cursor, Windsurf and VS Code configs (`mcpprobe docs config`).
    Environment values and header values are never shown, only their names.

    \b
    Examples:
      mcpprobe servers
      mcpprobe servers --json | jq -r '.servers[].name'
      mcpprobe probe -s NAME
    """
    return _show_servers(config_files, verbose, as_json)


@click.command("list", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("kind", type=click.Choice(KIND_CHOICES), cls=KindArgument)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@server_options(many=False)
@server_json_options(yes_option=True)
@output_options()
@connection_options
@click.pass_context
def list_command(ctx: click.Context, kind: str, url: tuple[str, ...], named: NamedServers, output: Output,
                 connection: Connection, settings: Settings, server_json: ServerJsonChoice | None) -> int:
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
    from mcpprobe.cli.invocation import resolve

    inv = resolve(command_line(ctx, url, named, connection, settings, output, server_json=server_json))
    from mcpprobe.operations.probe import list_one

    inv.tell(f"listing {kind}")
    with session_extras(inv) as (session_hooks, trace):
        spinner = phase_spinner(inv, inv.target.describe())
        if spinner is not None:
            session_hooks = replace(session_hooks, tracer=spinner.watch(session_hooks.tracer))
        feed = None
        if not inv.output.as_json:
            from mcpprobe.render.cells import Cells, Safe
            from mcpprobe.render.plain import may_be_plain

            if not may_be_plain(sys.stdout):  # else most likely written without rich
                preload("mcpprobe.render.human")
            feed = Cells(kind, Safe(inv.redactor))  # the table's cells, built as the pages arrive
        code = run_and_emit(list_one, inv, kind, spinner=spinner, feed=feed, session_hooks=session_hooks)
    return trace_checked(trace, inv.output, code)
