"""Probe one server or a fleet of them, with what CI adds: expectations, baselines, snapshots, traces.

Every member runs in the same event loop, at most `concurrency` at a time (an anyio
CapacityLimiter), so a fleet costs one interpreter start, not one per server. A member that fails,
however it fails, becomes a report with an error: it never stops the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio

from mcpprobe.client.connect import SessionHooks
from mcpprobe.client.settings import Settings
from mcpprobe.errors import REPORT_HINT, InternalError, Interrupted, ProbeError, bug_message
from mcpprobe.exitcodes import ExitCode, worst
from mcpprobe.operations.outcome import Outcome
from mcpprobe.wire.target import Target

if TYPE_CHECKING:  # loaded when a run asks for expectations, a baseline or a snapshot
    from mcpprobe.fleet.drift import Drift
    from mcpprobe.fleet.expect import Check, Expectations
    from mcpprobe.fleet.serverjson import Published
    from mcpprobe.lint.engine import LintSettings
    from mcpprobe.wire.trace import TraceWriter

Say = Callable[[str], None]


@dataclass
class Member:
    """One server to probe. `name` is its config name, or "" for a server given on the command line."""

    name: str
    target: Target | None
    settings: Settings
    source: str | None = None
    source_line: int | None = None  # the line of its entry in `source` (SARIF locations), when found
    problem: ProbeError | None = None  # could not be prepared (for example a missing variable)
    baseline: tuple[str, dict[str, Any]] | None = None  # (path, snapshot)
    baseline_missing: str | None = None  # the --baseline file of a fleet member that does not exist
    baseline_setting: str = "--baseline"  # where that path came from, as the warning names it
    snapshot_path: str | None = None
    snapshot_path_made: bool = False  # built from a {server} template: never followed through a link
    skipped: str | None = None  # why it is not probed at all (an entry marked "disabled": true)
    published: Published | None = None  # --server-json: what the file says the server is

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return self.target.describe() if self.target is not None else "?"


@dataclass
class Report:
    member: Member
    outcome: Outcome
    elapsed: float = 0.0
    checks: list[Check] | None = None
    drift: Drift | None = None
    snapshot_error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def not_started(self) -> bool:
        """Skipped, or its config entry could not be used: nothing was started for it."""
        return self.member.skipped is not None or self.member.problem is not None

    @property
    def exit_code(self) -> ExitCode:
        codes = [self.outcome.exit_code]
        if self.snapshot_error:
            codes.append(ExitCode.USAGE)
        return worst(codes)


@dataclass
class Extras:
    """What every member's run adds to the plain probe."""

    expectations: Expectations | None = None
    trace: TraceWriter | None = None
    stderr_writer: Callable[[str], None] | None = None
    say: Say | None = None
    label_traces: bool = False  # prefix trace lines with the server's name (a fleet)
    on_report: Callable[[Report], None] | None = None  # each report as soon as it is complete
    on_done: Callable[[Report], None] | None = None  # each member's report once its probe has ended
    traceback: bool = False  # --traceback: a bug in one member ends the run with its stack
    watch: Callable[[Any], Any] | None = None  # wraps the session's tracer to follow its phases (a spinner)
    # What each member runs instead of `operations.probe` (`check` runs its catalogue), with the
    # same signature and an Outcome of its own; `command` names it in the reports of members not run.
    operation: Callable[..., Any] | None = None
    command: str = "probe"
    lint: LintSettings | None = None  # --lint: the catalogue's text vetted offline (mcpprobe.lint)


def fleet_exit_code(reports: list[Report]) -> ExitCode:
    """The worst of the members' codes, where a member whose config entry could not be used counts
    as a finding (1), not as a usage error: the others were started. 2 only when nothing was."""
    started = [report.exit_code for report in reports if not report.not_started]
    broken = any(report.member.problem is not None for report in reports)
    if not started:
        return ExitCode.USAGE if broken else ExitCode.OK
    return worst([*started, *([ExitCode.FINDINGS] if broken else [])])


def interrupted_report(member: Member) -> Report:
    """A member whose probe had not finished when the fleet was interrupted."""
    message = "interrupted before its probe finished" if member.target is not None else "interrupted"
    return Report(member, Outcome("probe", error=Interrupted(message), interrupted=True))


async def run(members: list[Member], *, concurrency: int, extras: Extras,
              into: list[Report | None] | None = None) -> list[Report]:
    """Every member, at most `concurrency` at once, reports in the members' order. `into`, when
    given, holds each report as soon as it is complete: what an interrupted run had finished."""
    limiter = anyio.CapacityLimiter(max(1, concurrency))
    reports: list[Report | None] = into if into is not None else [None] * len(members)

    async def one(index: int, member: Member) -> None:
        async with limiter:
            report = await probe_member(member, extras, keep=lambda report: reports.__setitem__(index, report))
            reports[index] = report
        if extras.on_done is not None:
            extras.on_done(report)

    async with anyio.create_task_group() as group:
        for index, member in enumerate(members):
            group.start_soon(one, index, member)
    done = [report for report in reports if report is not None]
    if extras.lint is not None and len(members) > 1:
        _fleet_lint(done, extras.lint)
    return done


def _fleet_lint(reports: list[Report], settings: LintSettings) -> None:
    """Findings between the members of a fleet (shadowed tools, one naming another's), added to
    the report of each member they concern. Members with the same label are counted once."""
    from mcpprobe.lint.engine import fleet_lint

    by_label = {report.member.label: report for report in reports if report.outcome.snapshot is not None}
    found = fleet_lint({label: report.outcome.listings for label, report in by_label.items()}, settings)
    for label, findings in found.items():
        by_label[label].outcome.findings.extend(findings)


async def probe_member(member: Member, extras: Extras, keep: Callable[[Report], None] | None = None) -> Report:
    from mcpprobe.operations.probe import probe

    say = extras.say or (lambda _: None)
    operation = extras.operation or probe
    if member.skipped is not None:
        say(f"{member.label}: skipped: {member.skipped}")
        return Report(member, Outcome(extras.command))
    if member.problem is not None or member.target is None:
        say(f"{member.label}: not probed: {member.problem.message if member.problem else 'no target'}")
        return Report(member, Outcome(extras.command, error=member.problem))
    say(f"{member.label}: probing {member.target.transport}: {member.target.describe()}")
    judge = None
    if member.published is not None:
        from mcpprobe.fleet.serverjson import identity_judge

        judge = identity_judge(member.published)
    hooks = SessionHooks.of_run(extras.trace, extras.stderr_writer,
                                server=member.label if extras.label_traces else "", judge_snapshot=judge)
    if extras.watch is not None:
        hooks = replace(hooks, tracer=extras.watch(hooks.tracer))
    started = time.perf_counter()
    finished: list[Report] = []

    def on_ready(outcome: Outcome) -> None:
        # The outcome is complete; a stdio server is still being shut down. Finish the report now,
        # and hand it on, so that a single probe is shown during the shutdown, not after it.
        finished.append(_finish(member, outcome, time.perf_counter() - started, extras))
        if keep is not None:
            keep(finished[0])
        if extras.on_report is not None:
            extras.on_report(finished[0])

    try:
        outcome = await operation(member.target, member.settings, session_hooks=hooks, on_ready=on_ready)
    except Exception as exc:  # noqa: BLE001 - a bug in one member must not end the fleet
        if extras.traceback:
            raise
        outcome = Outcome(extras.command, error=InternalError(f"{bug_message(exc)} ({REPORT_HINT})"))
    if finished:
        return finished[0]
    return _finish(member, outcome, time.perf_counter() - started, extras)


def _finish(member: Member, outcome: Outcome, elapsed: float, extras: Extras) -> Report:
    """The report of one member: expectations, drift and the snapshot, on top of the probe."""
    say = extras.say or (lambda _: None)
    report = Report(member, outcome, elapsed=elapsed)
    if extras.expectations is not None:
        from mcpprobe.fleet import expect
        report.checks = expect.evaluate(extras.expectations, outcome, report.elapsed)
        outcome.findings.extend(expect.findings(report.checks))
    if member.baseline is not None or member.baseline_missing or member.snapshot_path:
        _drift_and_snapshot(member, outcome, report, say)
    if extras.lint is not None and outcome.snapshot is not None:
        from mcpprobe.lint.engine import lint

        outcome.findings.extend(lint(outcome.snapshot.instructions, outcome.listings, extras.lint))
    say(f"{member.label}: exit {int(report.exit_code)} in {report.elapsed:.2f} s")
    return report


def _drift_and_snapshot(member: Member, outcome: Outcome, report: Report, say: Say) -> None:
    """--baseline and --save-snapshot: the catalog is taken as a snapshot only when one is asked for."""
    from mcpprobe.fleet import drift as drift_module
    current = drift_module.snapshot(outcome)
    if member.baseline is not None and outcome.error is None:
        path, baseline = member.baseline
        report.drift = drift_module.compare(baseline, current, path)
        outcome.findings.extend(report.drift.findings())
    if member.baseline_missing and outcome.error is None:
        from mcpprobe.findings import Finding

        saving = member.snapshot_path is not None and member.snapshot_path == member.baseline_missing
        hint = "this run saves its snapshot there" if saving else "save its snapshot with --save-snapshot"
        new = "a server new to the fleet" if member.baseline_setting == "--baseline" else "a target new to the config"
        outcome.findings.append(Finding(
            "baseline-missing", f"not compared: {member.baseline_setting} {member.baseline_missing} does not exist "
            f"({new}? {hint})", detail={"baseline": member.baseline_missing}))
    if member.snapshot_path:
        if outcome.error is not None:
            say(f"{member.label}: snapshot not written: the probe did not reach the server's catalog")
        else:
            from mcpprobe.safety.outfiles import WriteFailed

            try:
                drift_module.write(member.snapshot_path, current, follow_links=not member.snapshot_path_made)
            except WriteFailed as exc:
                report.snapshot_error = exc.message
