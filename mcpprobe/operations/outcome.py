"""What every operation returns, and the one way an operation runs inside a session.

`Outcome` is what `probe` and `list` return, `InvokeOutcome` what `call`, `read` and `get-prompt`
return; `guarded` opens the session, runs the operation's body in it, and turns any `ProbeError`
into the outcome's error with what the wire showed. Operations never print and never decide how
the process ends: `Outcome.exit_code` turns what happened into the documented code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mcpprobe.client.catalog import Listing, PageFeed, suspicious_text
from mcpprobe.client.connect import NO_HOOKS, HandshakeFailed, SessionHooks, open_session
from mcpprobe.client.session import Session, Snapshot, Timing
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ProbeError, RpcError
from mcpprobe.exitcodes import ExitCode, worst
from mcpprobe.findings import CODES, Finding, Severity, has_errors
from mcpprobe.testhooks import crash_point
from mcpprobe.wire.stderrlog import StderrEntry
from mcpprobe.wire.target import HttpTarget, Target

if TYPE_CHECKING:
    from mcpprobe.client.extensions import Skills
    from mcpprobe.operations.tasks import TaskRun


@dataclass
class Outcome:
    command: str
    snapshot: Snapshot | None = None
    listings: dict[str, Listing] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    timings: list[Timing] = field(default_factory=list)
    error: ProbeError | None = None
    stderr_tail: list[StderrEntry] = field(default_factory=list)  # its lines, and counts of those left out
    kind: str | None = None  # for `list`
    interrupted: bool = False
    feed: PageFeed | None = None  # for `list`: what its listing fed as it kept each page
    skills: Skills | None = None  # for `probe`: skills/list, when the server declared the skills extension

    def __repr__(self) -> str:
        # Short: anyio formats the running task, and with it this result, whenever a cancel scope
        # is cancelled; the generated repr would spell out every item (0.1 s for 40,000 tools).
        return f"<Outcome {self.command} {', '.join(f'{k}:{len(v.items)}' for k, v in self.listings.items())}>"

    def all_findings(self) -> list[Finding]:
        found = list(self.findings)
        for listing in self.listings.values():
            found.extend(listing.findings)
        if self.error is not None:
            # What ended the command is an error, whatever the code's usual severity, unless it
            # was the user's own choice (a tool call not confirmed). It comes first among its
            # severity: what stopped the run explains the findings that follow it (an HTTP 401
            # before the metadata lookups it caused).
            found.insert(0, Finding(self.error.code if self.error.code in CODES else "protocol-error",
                                 self.error.message, kind=self.error_kind(), severity=Severity(self.error.severity),
                                 detail=dict(self.error.detail)))
        order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
        return sorted(found, key=lambda f: order[f.severity or Severity.INFO])

    def error_kind(self) -> str:
        """The kind the command's error concerns, for its finding."""
        return self.kind or "server"

    @property
    def exit_code(self) -> ExitCode:
        codes = [ExitCode.OK]
        if self.interrupted:
            codes.append(ExitCode.INTERRUPTED)
        if self.error is not None:
            codes.append(self.error.exit_code)
        for listing in self.listings.values():
            # A list cut short by the transport, auth, silence or an unusable answer says so in
            # the exit code; a JSON-RPC error answer is a finding (exit 1).
            if listing.error is not None and not isinstance(listing.error, RpcError):
                codes.append(listing.error.exit_code)
        if has_errors(self.all_findings()):
            codes.append(ExitCode.FINDINGS)
        return worst(codes)



@dataclass
class InvokeOutcome(Outcome):
    """An `Outcome` plus what was asked, what came back, and how it was confirmed."""

    item: dict[str, Any] | None = None  # the tool, prompt, resource or template from the list
    item_kind: str | None = None  # "tools", "resources", "templates", "prompts"
    request: dict[str, Any] | None = None  # {"method", "params"} as built by mcpprobe (the last one sent)
    sent: bool = False
    result: dict[str, Any] | None = None
    arguments: dict[str, Any] | None = None
    uri: str | None = None
    confirmation: str | None = None
    progress: list[dict[str, Any]] = field(default_factory=list)
    input_rounds: list[dict[str, Any]] = field(default_factory=list)
    completion: dict[str, Any] | None = None
    saved: list[dict[str, Any]] = field(default_factory=list)
    save_error: str | None = None  # an output file (-o, --save) that could not be written
    elicit: str | None = None
    task: TaskRun | None = None  # `call` that ran as a task (mcpprobe.operations.tasks)
    param_headers: dict[str, str] = field(default_factory=dict)  # x-mcp-header: the Mcp-Param-* headers sent

    def error_kind(self) -> str:
        return self.item_kind or "server"

    @property
    def exit_code(self) -> ExitCode:
        """A file the user asked for that could not be written is exit 2, the result shown anyway."""
        code = super().exit_code
        return worst([code, ExitCode.USAGE]) if self.save_error else code


# guarded returns the outcome it was given, of whichever kind (InvokeOutcome too).
AnyOutcome = TypeVar("AnyOutcome", bound=Outcome)


def snapshot_suspicious(snapshot: Snapshot) -> list[Finding]:
    """The same check for what the server says about itself: serverInfo and instructions."""
    out = []
    info = snapshot.server_info or {}
    for key in ("name", "title", "version"):
        found = suspicious_text("serverInfo", key, info.get(key), "server", {})
        if found:
            out.append(found)
    found = suspicious_text("server", "instructions", snapshot.instructions, "server", {})
    if found:
        out.append(found)
    return out


async def guarded(outcome: AnyOutcome, target: Target, settings: Settings, body: Any, *,
                  session_hooks: SessionHooks = NO_HOOKS,
                  on_ready: Callable[[AnyOutcome], None] | None = None) -> AnyOutcome:
    """Run `body(session)` inside a session; any ProbeError becomes the outcome's error.

    `on_ready(outcome)`, when given, is called once the outcome is complete but before the
    server has been waited for: the caller reports while a stdio server shuts down (it is sent
    EOF first), instead of after. On failure paths it is not called; the caller reports then.
    """
    transport_tail: list[StderrEntry] = []
    opened: Session | None = None
    try:
        async with open_session(target, settings, session_hooks) as session:
            opened = session
            _keep(outcome, session.snapshot, session_hooks)
            try:
                crash_point("operation")
                await body(session)
            finally:
                outcome.findings.extend(session.findings)
                outcome.findings.extend(session.wire_findings())
                outcome.timings[:0] = session.timings
                transport_tail = session.stderr_tail()
            if on_ready is not None:
                if _has_failures(outcome):
                    outcome.stderr_tail = transport_tail
                await session.conn.transport.begin_close()
                await _diagnose_auth(outcome, target, settings)
                on_ready(outcome)
    except HandshakeFailed as failed:
        outcome.error = failed.error
        transport_tail = list(failed.handshake.stderr_tail)
        if opened is None:  # this session's own handshake: keep what the wire showed before it failed
            _keep(outcome, failed.handshake.snapshot, session_hooks, suspicious=False)
            outcome.findings.extend(failed.handshake.findings)
            outcome.timings[:0] = failed.handshake.timings
        # else one the body opened failed (`load`'s further connections): its error and stderr
    except ProbeError as exc:
        outcome.error = exc
        if opened is not None:  # read once the server has ended: its last words included
            transport_tail = opened.stderr_tail() or transport_tail
    await _diagnose_auth(outcome, target, settings)
    if _has_failures(outcome):
        outcome.stderr_tail = transport_tail
    return outcome


def _keep(outcome: Outcome, snapshot: Snapshot, hooks: SessionHooks, *, suspicious: bool = True) -> None:
    """The session's snapshot kept on the outcome, with what is judged of it: the one place where a
    server's identity is compared with --server-json (`hooks.judge_snapshot`), whatever the command."""
    outcome.snapshot = snapshot
    if suspicious:
        outcome.findings.extend(snapshot_suspicious(snapshot))
    if hooks.judge_snapshot is not None:
        outcome.findings.extend(hooks.judge_snapshot(snapshot))


async def _diagnose_auth(outcome: Outcome, target: Target, settings: Settings) -> None:
    """Explain a 401/403 that stopped the command or one of its lists (a token can expire
    mid-run): what the server expects, as findings (docs/auth.md). Once per outcome."""
    errors = [outcome.error, *(listing.error for listing in outcome.listings.values())]
    error = next((e for e in errors if e is not None and e.exit_code == ExitCode.AUTH), None)
    if error is None or target.transport not in ("http", "sse") or "authDiagnosis" in error.detail:
        return
    from mcpprobe.auth.diagnosis import diagnose_target

    assert isinstance(target, HttpTarget)
    found = await diagnose_target(target, error.detail, timeout=min(settings.connect_budget, 10.0))
    outcome.findings.extend(found.findings)
    error.detail["authDiagnosis"] = found.data


def _has_failures(outcome: Outcome) -> bool:
    """Whether the server's stderr may explain what happened. Not when mcpprobe itself refused
    (exit 3) or the command line was at fault (exit 2): the server did nothing wrong then."""
    own = (ExitCode.REFUSED, ExitCode.USAGE)
    return (outcome.error is not None and outcome.error.exit_code not in own) or any(
        listing.error is not None for listing in outcome.listings.values())

