"""Run the catalogue on one session: the gate, then each check's function, in the catalogue's order.

The gate, for each selected check (--only, --skip, --level), in this order:

1. the negotiated revision is not one of the check's `revisions`, or the transport not one of its
   `transports`: `n/a`, nothing sent;
2. an unsafe check without --unsafe: `skipped`, nothing sent;
3. none of the capabilities it needs was declared: `skipped`, nothing sent (and the session would
   refuse the request anyway: mcpprobe.client.capabilities);
4. otherwise its function runs. A `fail` of a check whose level (in this revision) is SHOULD or
   MAY is reported as `warn`: only a MUST fails.

Checks that close the session (`lifecycle.stdin-close-exit`) or judge all of it
(`lifecycle.result-type`, `lifecycle.server-info`, `lifecycle.stdout-clean`) run last, in `LAST` order, and
before them the
ones a fragile server may die on (`lifecycle.cancel-in-flight`, `lifecycle.unknown-method`, `lifecycle.invalid-params`:
servers on old SDKs end on a notification or a method they do not know), so that such a death costs
the other checks nothing; the checks after it are then `skipped`, naming the check that ended the
server (when that one failed), else `error`.

Over stdio, the two stream checks run after the specification's shutdown, done once, in every era
(mcpprobe.check.lifecycle.shut_down): stdin closed, a bounded wait for the exit and for the end of
stdout, so that `lifecycle.stdout-clean` judges what the server wrote while exiting too.

A connection refused with HTTP 401 runs no session at all: then only the `auth` checks are
reported, judged from the diagnosis of the 401 (`auth_results`, mcpprobe.check.auth).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio

from mcpprobe.check.catalogue import BY_ID, CHECKS, FAMILIES, Check, Level, Status, selected
from mcpprobe.check.context import CheckContext, CheckOptions, Result, Verdict, http_evidence
from mcpprobe.client.capabilities import declared, extension
from mcpprobe.client.connect import NO_HOOKS, SessionHooks
from mcpprobe.errors import ProbeError
from mcpprobe.exitcodes import ExitCode, worst
from mcpprobe.operations.outcome import Outcome, guarded
from mcpprobe.signals import arrived

if TYPE_CHECKING:
    from mcpprobe.client.session import Session
    from mcpprobe.client.settings import Settings
    from mcpprobe.wire.target import Target

CheckFunction = Callable[[CheckContext], Awaitable[Verdict]]
SIGNAL_GRACE = 5.0  # at most, for the event loop to act on a signal that came while a check held it
LATE = ("lifecycle.cancel-in-flight", "lifecycle.unknown-method", "lifecycle.invalid-params")
LAST = ("listing.cache-hints", "prompts.message-content", "lifecycle.result-type", "lifecycle.server-info",
        "lifecycle.stdin-close-exit", "lifecycle.stdout-clean")
ORDER = (*LATE, *LAST)


def implementations() -> dict[str, CheckFunction]:
    """Every family module's IMPLEMENTS, merged: check id -> function."""
    found: dict[str, CheckFunction] = {}
    for module in dict.fromkeys(module for family in FAMILIES for module in family.modules):
        found.update(importlib.import_module(module).IMPLEMENTS)
    return found


def chosen(options: CheckOptions, version: str) -> list[Check]:
    """The checks --only, --skip and --level select, in run order."""
    picked = [check for check in CHECKS
              if (not options.only or any(selected(p, check) for p in options.only))
              and not any(selected(p, check) for p in options.skip)
              and check.level_for(version).rank <= options.level.rank]
    return sorted(picked, key=lambda check: ORDER.index(check.id) + 1 if check.id in ORDER else 0)


def needs_declared(check: Check, capabilities: dict[str, Any]) -> bool:
    """Whether the capability the check needs was declared (any of its alternatives)."""
    if not check.capability:
        return True
    for need in check.capability:
        if need.startswith("extensions."):  # an extension, named whole (its name has dots of its own)
            if extension(capabilities, need.removeprefix("extensions.")) is not None:
                return True
            continue
        name, _, sub = need.partition(".")
        if declared(capabilities, name, sub or None):
            return True
    return False


def graded(status: Status, level: Level) -> Status:
    """A verdict as reported at the rule's level: only a MUST fails; a `fail` of a SHOULD or MAY rule
    (in the revision judged) is a `warn`. Every result judged from a check's verdict goes through here."""
    return Status.WARN if status is Status.FAIL and level is not Level.MUST else status


def _gate(check: Check, session: Session, options: CheckOptions) -> tuple[Status, str] | None:
    version = session.snapshot.protocol_version
    if version not in check.revisions:
        return Status.NA, f"not part of protocol {version}"
    transport = session.snapshot.transport
    if transport not in check.transports:
        return Status.NA, f"applies to {', '.join(check.transports)} only, not {transport}"
    if not check.safe and not options.unsafe:
        return Status.SKIPPED, "an unsafe check: run with --unsafe; nothing sent"
    if not needs_declared(check, session.capabilities):
        need = " or ".join(f"'{c}'" for c in check.capability)
        return Status.SKIPPED, f"the server did not declare {need}; nothing sent"
    return None


async def run_checks(session: Session, options: CheckOptions, results: list[Result]) -> CheckContext:
    """Each chosen check on `session`, its result appended to `results` as it ends."""
    functions = implementations()
    version = session.snapshot.protocol_version
    ctx = CheckContext(session, options)
    ended_by: Result | None = None  # the check during which the connection was lost
    for check in chosen(options, version):
        level = check.level_for(version)
        url = check.spec_url(version)
        gate = _gate(check, session, options)
        if gate is not None:
            results.append(Result(check, gate[0], level, gate[1], url))
            continue
        if session.conn.closed_error is not None and check.id not in LAST:
            if ended_by is not None and ended_by.status is Status.FAIL:
                results.append(Result(check, Status.SKIPPED, level, f"not run: the server ended during "
                                      f"{ended_by.check.id}, which failed; nothing sent", url))
            else:
                results.append(Result(check, Status.ERROR, level, "not run: the connection was lost before it",
                                      url, detail={"exitCode": int(ExitCode.CONNECTION)}))
            continue
        ctx.begin()
        started = time.perf_counter()
        raised: ProbeError | None = None
        try:
            verdict = await functions[check.id](ctx)
        except ProbeError as exc:
            if exc.exit_code == ExitCode.REFUSED:
                raise  # a check that asked for what was not declared: a bug, never hidden
            raised = exc
            verdict = Verdict(Status.ERROR, f"could not be completed: {exc.message}",
                              detail={"exitCode": int(exc.exit_code)})
        if arrived():
            # A signal came while the check held the event loop (its schema checks stopped at it): what
            # it says was cut short by the signal, no verdict, and is not kept; the loop acts on the
            # signal now, and cancels the run here, before anything else is judged or sent.
            await anyio.sleep(SIGNAL_GRACE)
        verdict = http_evidence(ctx, verdict, raised)  # an HTTP error answer is the server's, not a lost connection
        status = graded(verdict.status, level)
        evidence, omitted = (verdict.evidence, 0) if verdict.evidence else (ctx.evidence(), ctx.evidence_omitted())
        results.append(Result(check, status, level, verdict.message, url, evidence, verdict.detail,
                              (time.perf_counter() - started) * 1000, omitted))
        if ended_by is None and session.conn.closed_error is not None:
            ended_by = results[-1]
    return ctx


@dataclass
class CheckOutcome(Outcome):
    """An `Outcome` whose verdict is its checks': exit 1 when a MUST failed (a warning too, with
    --strict); what stopped the run (connection, timeout, auth) keeps its own code."""

    results: list[Result] = field(default_factory=list)
    strict: bool = False

    def counts(self) -> dict[str, int]:
        counts = {status.value: 0 for status in Status}
        for result in self.results:
            counts[result.status.value] += 1
        return counts

    @property
    def exit_code(self) -> ExitCode:
        codes = [ExitCode.OK]
        if self.interrupted:
            codes.append(ExitCode.INTERRUPTED)
        if self.error is not None:
            codes.append(self.error.exit_code)
        failing = {Status.FAIL, Status.WARN} if self.strict else {Status.FAIL}
        if any(result.status in failing for result in self.results):
            codes.append(ExitCode.FINDINGS)
        for result in self.results:
            if result.status is Status.ERROR:  # the check could not run: the cause's own code
                codes.append(ExitCode(result.detail.get("exitCode", ExitCode.PROTOCOL)))
        return worst(codes)


async def check(target: Target, settings: Settings, *, options: CheckOptions | None = None,
                session_hooks: SessionHooks = NO_HOOKS,
                on_ready: Callable[[Outcome], None] | None = None) -> CheckOutcome:
    """Connect as `probe` does and run the catalogue. Never --force: a check whose capability was
    not declared sends nothing, whatever the command line says."""
    options = options or CheckOptions()
    outcome = CheckOutcome("check", strict=options.strict)
    if options.started is not None:
        options.started.append(outcome)

    async def body(session: Session) -> None:
        ctx = await run_checks(session, options, outcome.results)
        outcome.listings.update(ctx.listings())
        outcome.findings.extend(ctx.kept_findings())

    settings = replace(settings, force=False)
    if options.suite_fixtures:
        # The client capabilities the suite's fixture tools ask for, declared only here, and answered
        # by `call`'s InputBroker: every elicitation declined, every sampling a fixed text (check.suite),
        # every roots/list the one root the suite's own client gives (unless --root named others).
        from mcpprobe.check.suite_gate import SUITE_ROOT

        settings = replace(settings, elicit="decline", sample="fixed", roots=settings.roots or (SUITE_ROOT,))
    await guarded(outcome, target, settings, body, session_hooks=session_hooks,
                   on_ready=on_ready)
    if not outcome.results:
        outcome.results.extend(auth_results(outcome, settings, options))
    return outcome


def auth_results(outcome: CheckOutcome, settings: Settings, options: CheckOptions) -> list[Result]:
    """The connection stopped at HTTP 401: the authorization checks, judged from the diagnosis the
    operation made of it (mcpprobe.check.auth); the other checks could not run, and are not listed."""
    from mcpprobe.check.auth import FROM_DIAGNOSIS, judged_version

    error = outcome.error
    data = error.detail.get("authDiagnosis") if error is not None else None
    if error is None or error.exit_code != ExitCode.AUTH or error.detail.get("status") != 401 \
            or not isinstance(data, dict):
        return []
    version = judged_version(settings.protocol)
    results = []
    for check in chosen(options, version):
        if check.id not in FROM_DIAGNOSIS:
            continue
        level, url = check.level_for(version), check.spec_url(version)
        if version not in check.revisions:
            results.append(Result(check, Status.NA, level, f"not part of protocol {version}", url))
            continue
        if "failed" in data:
            results.append(Result(check, Status.ERROR, level, f"the diagnosis failed: {data['failed']}", url))
            continue
        verdict = FROM_DIAGNOSIS[check.id](data, version)
        status = graded(verdict.status, level)
        judged = status in (Status.PASS, Status.FAIL, Status.WARN)
        message = verdict.message + (f" (judged by protocol {version}: none was negotiated)" if judged else "")
        results.append(Result(check, status, level, message, url, verdict.evidence, verdict.detail))
    return results


def check_ids() -> list[str]:
    return list(BY_ID)
