"""The command line for `check`: click glue over `mcpprobe.check.runner` and `mcpprobe.fleet.probe`.

Light at import time (click only): the SDK, jsonschema and rich are loaded only when it runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from mcpprobe.check.catalogue import CHECKS
from mcpprobe.cli.common import (
    CONTEXT,
    Confirmation,
    ShowWhenReady,
    command_line,
    open_trace,
    run_fleet,
    server_stderr_writer,
    trace_checked,
)
from mcpprobe.cli.options import (
    TargetCommand,
    connection_options,
    output_options,
    positive,
    server_json_options,
    server_options,
)
from mcpprobe.cli.output import phase_spinner, show, stderr_console
from mcpprobe.render.interface import Format

if TYPE_CHECKING:
    from mcpprobe.check.context import CheckOptions, NamedCall
    from mcpprobe.check.runner import CheckOutcome
    from mcpprobe.cli.invocation import CommandLine, Connection, FleetInvocation, NamedServers, Output, ServerJsonChoice
    from mcpprobe.client.settings import Settings
    from mcpprobe.fleet.probe import Member, Report
    from mcpprobe.safety.redact import Redactor

LEVELS = ("must", "should", "may")
# The catalogue is data (standard library only): --help names the unsafe checks from it.
UNSAFE = [check.id for check in CHECKS if not check.safe]


def _patterns(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """--only/--skip: check ids or families, comma-separated or repeated; unknown ones are a usage error."""
    from mcpprobe.check.catalogue import FAMILIES, unknown_patterns

    patterns = tuple(p.strip() for value in values for p in value.split(",") if p.strip())
    unknown = unknown_patterns(patterns)
    if unknown:
        raise click.BadParameter(f"{', '.join(map(repr, unknown))}: no such check or family; families: "
                                 f"{', '.join(f.name for f in FAMILIES)} (`mcpprobe docs check`)", ctx, param)
    return patterns


def _calls(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[NamedCall, ...]:
    """Each --call parsed once, here, before connecting."""
    from mcpprobe.check.calls import parse_call
    from mcpprobe.errors import UsageProblem

    calls = []
    for value in values:
        try:
            calls.append(parse_call(value))
        except (ValueError, UsageProblem) as exc:  # a bad quote, no tool, a bad KEY=VALUE: name the option
            message = exc.message if isinstance(exc, UsageProblem) else str(exc)
            raise click.BadParameter(f"{value!r}: {message}", ctx, param) from None
    return tuple(calls)


@click.command("check", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@server_options(many=True)
@click.option("--all", "all_servers", is_flag=True, help="Check every server found in the configs (a fleet).")
@click.option("--concurrency", type=int, default=4, show_default=True, metavar="N", callback=positive,
              help="How many servers of a fleet are checked at once.")
@click.option("--only", multiple=True, metavar="ID|FAMILY", callback=_patterns,
              help="Run only these checks: ids (lifecycle.ping) or families (lifecycle); repeatable or "
                   "comma-separated.")
@click.option("--skip", multiple=True, metavar="ID|FAMILY", callback=_patterns,
              help="Leave these checks out (ids or families).")
@click.option("--level", type=click.Choice(LEVELS), default="should", show_default=True,
              help="The lowest requirement level run: must, should (MUST and SHOULD) or may (everything).")
@click.option("--strict", is_flag=True, help="A warning (a SHOULD not met) makes the exit code 1 too.")
@click.option("--unsafe", is_flag=True,
              help="Also run the checks that are not safe on a production server: "
                   + (", ".join(UNSAFE) if UNSAFE else "none in this release") + " (each named so on its page).")
@click.option("--call", "calls", multiple=True, metavar="'TOOL K=V ...'", callback=_calls,
              help="Call this tool (repeatable) through call's catalogue, argument and confirmation checks; check "
                   "calls no other tool (--suite-fixtures aside).")
@click.option("--suite-fixtures", is_flag=True,
              help="Also judge the official conformance suite's fixture tools, resources, templates and prompts "
                   "(test_simple_text, test://static-text, ...) where the server lists them, as the suite does; "
                   "declares sampling, elicitation and roots (a fixed answer, a decline, file:///test/root). The "
                   "tools go through --call's rule: one not marked read-only needs --yes.")
@click.option("-y", "--yes", is_flag=True,
              help="With --call or --suite-fixtures: call a tool not marked read-only without asking (without a "
                   "terminal, it needs this). With --server-json: run the package's command without asking.")
@click.option("--sample-arguments", is_flag=True,
              help="Also expand prompts with required arguments, with values from completion/complete or the "
                   "arguments' names.")
@click.option("--rate", type=float, default=None, metavar="N", callback=positive,
              help="Send at most N requests a second (default: one at a time, as fast as answered).")
@server_json_options(yes_option=False)
@output_options(Format.HUMAN, Format.JSON, Format.JUNIT, Format.HTML, Format.SARIF)
@connection_options
@click.pass_context
def check_command(ctx: click.Context, url: tuple[str, ...], concurrency: int, only: tuple[str, ...],
                  skip: tuple[str, ...], level: str, strict: bool, unsafe: bool, calls: tuple[NamedCall, ...],
                  suite_fixtures: bool, yes: bool, sample_arguments: bool, rate: float | None, all_servers: bool,
                  named: NamedServers, output: Output, connection: Connection, settings: Settings,
                  server_json: ServerJsonChoice | None) -> int:
    """Check the server's behaviour against the specification, rule by rule, gated on what it declared.

    Each check (`mcpprobe docs check`) is tied to the words of the negotiated revision and says
    pass, fail (a MUST not met), warn (a SHOULD not met), skipped (its capability was not
    declared: nothing sent), n/a (not in this revision or transport) or error (it could not run).
    Safe on a production server: never calls a tool unless named with --call (or one of the
    conformance suite's fixture tools, with --suite-fixtures), never writes,
    one request at a time (--rate to go slower). --force is ignored: nothing is sent for a
    capability the server did not declare.

    Exit: 0 no check failed (warnings allowed); 1 a MUST failed (or a SHOULD, with --strict);
    2 usage; 4 connection; 5 protocol; 6 timeout; 7 auth; 130 Ctrl-C (mcpprobe docs exit-codes).

    \b
    Examples:
      mcpprobe check -- mcpprobe-demo
      mcpprobe check --json -- npx -y @modelcontextprotocol/server-everything | jq '.checks[] | select(.status=="fail")'
      mcpprobe check --only lifecycle,listing --level must https://example.com/mcp
      mcpprobe check -s github --format junit > check.xml
      mcpprobe check --call 'echo message=hi' --yes -- mcpprobe-demo
      mcpprobe check --suite-fixtures --yes http://127.0.0.1:3000/mcp
    """
    from mcpprobe.check.catalogue import Level
    from mcpprobe.check.context import CheckOptions
    from mcpprobe.cli.invocation import resolve_fleet

    line = command_line(ctx, url, named, connection, settings, output, all_servers=all_servers,
                        server_json=server_json)
    fleet = resolve_fleet(line)
    confirmer = None
    if calls or suite_fixtures:
        confirmer = Confirmation(stderr_console(fleet.redactor), fleet.redactor, line.output.as_json, yes=yes)
    options = CheckOptions(only=only, skip=skip, level=Level(level.upper()), strict=strict, unsafe=unsafe,
                           sample_arguments=sample_arguments, calls=calls, rate=rate, confirmer=confirmer,
                           suite_fixtures=suite_fixtures)
    return _run(fleet, options, concurrency, line)


def _run(fleet: FleetInvocation, options: CheckOptions, concurrency: int, line: CommandLine) -> int:
    import functools
    from dataclasses import replace

    from mcpprobe.check.runner import check
    from mcpprobe.fleet.probe import Extras, run

    fmt, many, members = line.output.format, fleet.many, list(fleet.members)
    trace = open_trace(fleet)
    started: list[CheckOutcome] = []  # each server's outcome as its checks end (an interruption shows it)
    extras = Extras(trace=trace, stderr_writer=server_stderr_writer(fleet),
                    say=fleet.say if line.output.verbose else None, label_traces=many, traceback=line.traceback,
                    operation=functools.partial(check, options=replace(options, started=started)), command="check")
    show = None
    spinner = None
    if not many:
        target = members[0].target
        spinner = phase_spinner(fleet, target.describe() if target is not None else members[0].label)
        extras.watch = spinner.watch if spinner is not None else None

        def show_report(report: Report) -> int:
            if spinner is not None:
                spinner.stop()
            return _emit([report], fmt, many, fleet.redactor, line.output.verbose)

        show = extras.on_report = ShowWhenReady(show_report)
    else:
        fleet.say(f"checking {len(members)} servers, at most {concurrency} at once")
    if spinner is not None:
        spinner.start()
    reports = run_fleet(run, members, many=many, spinner=spinner, trace=trace, show=show, command="check",
                        concurrency=concurrency, extras=extras)
    if reports is None and started:  # one server, interrupted: the checks it had finished, and exit 130
        reports = [_interrupted(members[0], started[0])]
    shown = show.code if show is not None else None
    code = shown if shown is not None else _emit(reports, fmt, many, fleet.redactor, line.output.verbose)
    return trace_checked(trace, line.output, code)


def _interrupted(member: Member, outcome: CheckOutcome) -> Report:
    """The report of a server whose checks were interrupted: the results it had, and the interruption."""
    from mcpprobe.errors import Interrupted
    from mcpprobe.fleet.probe import Report

    outcome.interrupted = True
    if outcome.error is None:
        done = len(outcome.results)
        outcome.error = Interrupted(f"interrupted after {done} check{'' if done == 1 else 's'}; the others did not run")
    return Report(member, outcome)


def _emit(reports: list[Report] | None, fmt: Format, many: bool, redactor: Redactor, every: bool = False) -> int:
    from mcpprobe.exitcodes import ExitCode, worst
    from mcpprobe.fleet.probe import fleet_exit_code
    from mcpprobe.render.interface import Checked, Interrupted

    if reports is None:
        show(Interrupted("check"), fmt, redactor)
        return ExitCode.INTERRUPTED
    show(Checked(reports, many, every), fmt, redactor)
    return int(fleet_exit_code(reports) if many else worst([report.exit_code for report in reports]))
