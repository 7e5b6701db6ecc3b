"""The work of a load run: the operations named on the command line, each with a weight, checked once
against the server before the first request, then sent as often as the schedule asks.

Each kind is checked exactly as its own command checks it (mcpprobe.operations.checks): `--call` through call's
catalog, argument and confirmation checks; `--read` through read's (listed, or matching a template);
`--get-prompt` through get-prompt's; `--list KIND` needs the kind's capability; `--ping` exists only
before 2026-07-28. A tool not marked read-only is confirmed by `call`'s rule too (a yes on a terminal,
or `--yes`; with neither, refused), the question saying that a load run calls it over and over.
Nothing is sent until every operation passed its checks. A tool is called by `call`'s rule
(mcpprobe.operations.invoke.task_rule): in the 2026-07-28 era the call declares the tasks extension
when the server declared it, and a task it answers is followed to its end, the whole round trip
counted as the request.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpprobe.client.session import Session
from mcpprobe.errors import Refused
from mcpprobe.findings import Finding

if TYPE_CHECKING:
    from mcpprobe.operations.arguments import ToolArguments
    from mcpprobe.operations.input import Confirmer

KINDS = ("call", "read", "list", "get-prompt", "ping")
LISTABLE = ("tools", "resources", "templates", "prompts")
_WEIGHT = re.compile(r"\s+@(\d+)\s*$")
MAX_WEIGHT = 1000


class SpecError(ValueError):
    pass


@dataclass(frozen=True)
class Spec:
    """One operation as given: `kind` (a KINDS value), its subject (tool, URI, list kind, prompt),
    its KEY=VALUE pairs as written and its weight; and those pairs parsed once, by `parse_spec`:
    a tool's arguments, or a prompt's."""

    kind: str
    subject: str
    pairs: tuple[str, ...] = ()
    weight: int = 1
    tool_arguments: ToolArguments | None = field(default=None, compare=False)
    prompt_arguments: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def label(self) -> str:
        return self.kind if self.kind == "ping" else f"{self.kind} {self.subject}"


def parse_spec(kind: str, text: str) -> Spec:
    """`'get-sum a=1 b=2 @3'` for --call (weight 3), `'demo://readme'` for --read, `'tools'` for --list."""
    weight = 1
    match = _WEIGHT.search(text)
    if match is not None:
        weight = int(match[1])
        text = text[:match.start()]
        if not 1 <= weight <= MAX_WEIGHT:
            raise SpecError(f"the weight @{weight} is not between 1 and {MAX_WEIGHT}")
    if kind == "ping":
        return Spec("ping", "", (), weight)
    if kind == "read":
        uri = text.strip()
        if not uri or " " in uri:
            raise SpecError("expects one URI (then, optionally, @WEIGHT)")
        return Spec("read", uri, (), weight)
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise SpecError(str(exc)) from None
    if not words:
        raise SpecError("expects a name, then its KEY=VALUE arguments (then, optionally, @WEIGHT)")
    if kind == "list":
        if len(words) != 1 or words[0] not in LISTABLE:
            raise SpecError(f"expects one of {', '.join(LISTABLE)} (then, optionally, @WEIGHT)")
        return Spec("list", words[0], (), weight)
    from mcpprobe.operations.arguments import ToolArguments, string_arguments

    pairs = tuple(words[1:])
    if kind == "call":  # KEY=VALUE and KEY:=JSON, before connecting
        return Spec(kind, words[0], pairs, weight, tool_arguments=ToolArguments.parse(pairs))
    return Spec(kind, words[0], pairs, weight, prompt_arguments=string_arguments(pairs))


@dataclass(frozen=True)
class Operation:
    """An operation ready to send: the method, its params and headers in the session's era, built once."""

    label: str
    method: str
    params: dict[str, Any] | None
    headers: dict[str, str]
    weight: int
    is_call: bool = False
    # A tools/call that declares the tasks extension (2026-07-28): how a task it answers is followed
    # to its end (session, CreateTaskResult, timeout) -> result; the whole round trip is the request.
    follow: Callable[[Session, dict[str, Any], float], Awaitable[dict[str, Any]]] | None = None


async def prepare(session: Session, specs: tuple[Spec, ...], *, yes: bool,
                  confirmer: Confirmer | None = None) -> tuple[list[Operation], list[Finding]]:
    """Check every operation against the server (Refused, exit 3, with nothing sent: as the operation's
    own command would refuse it) and build its request once."""
    from mcpprobe.client.catalog import LIST_KINDS, Listing, list_kind
    from mcpprobe.operations import tasks_ext
    from mcpprobe.operations.arguments import ToolArguments
    from mcpprobe.operations.checks import checked_arguments, checked_prompt, confirm_call
    from mcpprobe.operations.input import Unattended
    from mcpprobe.operations.invoke import resolve_uri, task_rule
    from mcpprobe.operations.outcome import InvokeOutcome

    outcome = InvokeOutcome("load")
    listings: dict[str, Listing] = {}

    async def listing(kind: str) -> Listing:
        if kind not in listings:
            listings[kind] = await list_kind(session, kind)
        return listings[kind]

    def capability(method: str) -> None:
        """Refused unless the server declared what `method` needs; with --force, said once (`forced`)."""
        missing = session.check(method)
        if missing is not None and not any(f.code == "forced" and f.detail.get("method") == method
                                           for f in outcome.findings):
            outcome.findings.append(Finding(
                "forced", f"{method} was sent with --force although '{missing}' is not declared",
                detail={"method": method, "missing": missing}))

    operations = []
    for spec in specs:
        params: dict[str, Any] | None
        follow = None
        if spec.kind == "call":
            method = "tools/call"
            capability(method)
            tool, arguments = await checked_arguments(session, outcome, await listing("tools"), spec.subject,
                                                      spec.tool_arguments or ToolArguments())
            await confirm_call(session, outcome, tool, arguments, confirmer or Unattended(yes=yes))
            params = {"name": spec.subject, "arguments": arguments}
            if task_rule(session, outcome, tool, None):  # as `call` decides, with neither --task nor --no-task
                if not session.era.tasks_extension:
                    raise Refused(f"tool {spec.subject!r} must be called as a task (execution.taskSupport is "
                                  "'required'), and load does not run 2025-11-25 tasks. Nothing was sent.",
                                  detail={"tool": spec.subject, "taskSupport": "required"})
                params, follow = tasks_ext.declaring(params), tasks_ext.follow_unattended
        elif spec.kind == "read":
            method = "resources/read"
            capability(method)
            await resolve_uri(session, outcome, spec.subject)
            params = {"uri": spec.subject}
        elif spec.kind == "get-prompt":
            method = "prompts/get"
            capability(method)
            values = spec.prompt_arguments
            checked_prompt(session, outcome, await listing("prompts"), spec.subject, values)
            params = {"name": spec.subject, **({"arguments": values} if values else {})}
        elif spec.kind == "list":
            method = LIST_KINDS[spec.subject].list_method
            capability(method)
            params = None
        else:
            method = "ping"
            if session.modern:
                # basic/utilities/ping.mdx is gone from 2026-07-28: the method no longer exists.
                raise Refused("--ping: protocol 2026-07-28 has no ping (the server speaks it); nothing was sent. "
                              "Use --protocol legacy, or another operation.", code="not-declared")
            params = None
        enveloped, headers = session.envelope(method, params)
        operations.append(Operation(spec.label, method, enveloped, headers, spec.weight, spec.kind == "call", follow))
    return operations, outcome.findings


def interleave(weights: list[int]) -> list[int]:
    """One cycle of operation indexes in which each index i appears weights[i] times, spread evenly
    (smooth weighted round robin), so that any stretch of the run has the mix asked for."""
    total = sum(weights)
    current = [0] * len(weights)
    cycle = []
    for _ in range(total):
        for i, w in enumerate(weights):
            current[i] += w
        best = max(range(len(weights)), key=lambda i: current[i])
        current[best] -= total
        cycle.append(best)
    return cycle
