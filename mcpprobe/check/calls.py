"""`check --call 'TOOL K=V ...'`: the tools the user named, called through `call`'s own checks.

Each goes through mcpprobe.operations.checks' catalogue check (the tool must be listed), argument check
(KEY=VALUE coerced and validated by its inputSchema) and confirmation (a tool not marked
read-only needs --yes, or a yes on a terminal); only then is `tools/call` sent, by `call`'s own rule
(mcpprobe.operations.invoke: in the 2026-07-28 era declaring the tasks extension when the server
declared it, and following a task to its result). A tool that answers `isError: true` passes: its
own failure is a result, not a protocol failure. The calls are made once per run (`named_calls`),
and every check that judges them (tools.call-named, tasks.ext-created-task-resolves) reads the same.

Every --call is sent, each of them; the suite's fixture checks (--suite-fixtures) never call a tool
that --call already called in the run: they judge that call (`called`, mcpprobe.check.suite).
"""

from __future__ import annotations

import shlex
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcpprobe.check.context import (
    CheckContext,
    Exchange,
    NamedCall,
    Verdict,
    errored,
    failed,
    inert,
    passed,
    refusal,
    skipped,
)
from mcpprobe.errors import ProbeError, Refused
from mcpprobe.operations.arguments import ToolArguments

if TYPE_CHECKING:
    from mcpprobe.client.catalog import Listing
    from mcpprobe.operations.outcome import InvokeOutcome


def parse_call(spec: str) -> NamedCall:
    """'TOOL K=V K2:=JSON' -> the tool and its arguments, parsed (a usage problem for bad JSON);
    ValueError when it names no tool."""
    words = shlex.split(spec)
    if not words:
        raise ValueError("--call needs a tool name: --call 'TOOL K=V ...'")
    return NamedCall(spec, words[0], ToolArguments.parse(words[1:]))


@dataclass
class NamedRun:
    """One tool named with --call, as it was called: what the call saw (its task, if it became one)."""

    call: NamedCall
    outcome: InvokeOutcome
    exchange: Exchange
    ended: float  # time.monotonic() when the call (and its task) ended
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # the server's requests for input during it


@dataclass
class NamedCalls:
    verdict: Verdict  # tools.call-named's
    runs: list[NamedRun]


@dataclass
class _Calls:
    """The tool calls of one check run: --call's, made once (`named`), and every tool called, by name."""

    named: NamedCalls | None = None
    by_tool: dict[str, NamedRun] = field(default_factory=dict)


_RUNS: weakref.WeakKeyDictionary[CheckContext, _Calls] = weakref.WeakKeyDictionary()


def _calls(ctx: CheckContext) -> _Calls:
    return _RUNS.setdefault(ctx, _Calls())


def called(ctx: CheckContext, tool: str) -> NamedRun | None:
    """The call of `tool` already made in this run, if one was sent."""
    return _calls(ctx).by_tool.get(tool)


async def named_calls(ctx: CheckContext) -> NamedCalls:
    """The tools named with --call, each called once per run however many checks judge the calls
    (tools.call-named, tasks.ext-created-task-resolves): never twice on one command line."""
    calls = _calls(ctx)
    if calls.named is None:
        runs: list[NamedRun] = []
        verdict = await _call_each(ctx, runs)
        calls.named = NamedCalls(verdict, runs)
    for run in calls.named.runs:
        ctx.note(run.exchange)
    return calls.named


async def call_each(ctx: CheckContext) -> Verdict:
    return (await named_calls(ctx)).verdict


async def call_once(ctx: CheckContext, call: NamedCall, listing: Listing,
                    observed: list[tuple[str, dict[str, Any]]] | None = None,
                    prepare: Callable[[], Awaitable[object]] | None = None) -> tuple[dict[str, Any], NamedRun]:
    """One tools/call, by the one rule of every call mcpprobe makes: the catalogue check (the tool
    must be listed), the argument check, `call`'s rule for tasks and the confirmation (a tool not
    marked read-only needs --yes or a yes on a terminal), each raising Refused with nothing sent;
    then sent as `call` sends it (mcpprobe.operations.invoke.send_tool_call), the server's requests
    for input answered by `call`'s InputBroker as the settings declared (--suite-fixtures: elicitation
    declined, sampling answered with a fixed text; each such request kept in `observed`, when given)
    and its progress kept on the run's outcome. `prepare`: sent once the call is allowed, before it.

    Every call asked for is sent: --call's are the user's own, each of them (the same tool with other
    arguments, or twice). The first run of each tool is kept (`called`): a check that only needs the
    tool called (the suite's fixture checks) asks `called` first and judges that run instead of calling
    the tool again."""
    from mcpprobe.operations.checks import checked_arguments, confirm_call
    from mcpprobe.operations.input import InputBroker, Unattended
    from mcpprobe.operations.invoke import send_tool_call, task_rule
    from mcpprobe.operations.outcome import InvokeOutcome

    confirmer = ctx.options.confirmer or Unattended()
    name = call.tool
    observed = observed if observed is not None else []
    outcome = InvokeOutcome("call", item_kind="tools")
    tool, arguments = await checked_arguments(ctx.session, outcome, listing, name, call.arguments)
    as_task = task_rule(ctx.session, outcome, tool, None)  # as `call` decides: a task where the server makes one
    await confirm_call(ctx.session, outcome, tool, arguments, confirmer)
    if prepare is not None:
        await prepare()
    params = {"name": name, "arguments": arguments}
    await ctx.pace()
    exchange = Exchange("tools/call", params)
    broker = InputBroker(outcome, ctx.session.settings, observed)
    broker.install(ctx.session.conn)  # before 2026-07-28: the server's own requests during the call
    started = time.perf_counter()
    try:  # sent as `call` sends it (mcpprobe.operations.invoke.send_tool_call): a task followed to its end
        result = await send_tool_call(ctx.session, outcome, broker, params, Unattended(), as_task)
    except ProbeError as exc:
        if exc.exit_code == 3:  # refused by mcpprobe: never sent
            raise
        exchange.error = exc
        result = None
    exchange.result = result
    exchange.ms = (time.perf_counter() - started) * 1000
    if result is not None:
        ctx.results_seen.append(("tools/call", result))
    run = NamedRun(call, outcome, exchange, time.monotonic(), observed)
    _calls(ctx).by_tool.setdefault(name, run)
    return tool, run


async def _call_each(ctx: CheckContext, runs: list[NamedRun]) -> Verdict:
    from mcpprobe.operations.invoke import judge_tool_result
    from mcpprobe.operations.tasks_ext import UndeclaredTask

    listing = await ctx.listing("tools")
    notes: list[str] = []
    problems: list[str] = []
    for call in ctx.options.calls:
        spec, name = call.spec, call.tool
        try:
            tool, run = await call_once(ctx, call, listing)
        except Refused as exc:
            verdict = errored(f"--call {inert(spec, 80)}: {refusal(exc)}")
            verdict.detail["exitCode"] = int(exc.exit_code)
            return verdict
        outcome, exchange, result = run.outcome, run.exchange, run.exchange.result
        runs.append(run)
        if isinstance(exchange.error, UndeclaredTask):  # a MUST the server broke, not a check that could not run
            problems.append(inert(exchange.error.message, 300))
            continue
        if result is None:
            if isinstance(exchange.error, ProbeError) and exchange.rpc_code is None:
                verdict = errored(f"tools/call {inert(name, 60)}: {inert(exchange.error.message, 200)}")
                verdict.detail["exitCode"] = int(exchange.error.exit_code)
                return verdict
            if exchange.error is None:  # a task that ended without a result
                status = outcome.task.status if outcome.task else ""
                notes.append(f"{inert(name, 60)} ran as a task that ended {status} without a result")
            else:
                notes.append(f"{inert(name, 60)} answered {exchange.rpc_code} (a JSON-RPC error)")
            # what the task's answers broke on the way (a failed task's error that is no JSON-RPC error)
            problems += [inert(finding.message, 300) for finding in outcome.findings
                         if finding.code == "protocol-violation"][:1]
            continue
        await judge_tool_result(ctx.session, outcome, tool, result)
        codes = {finding.code: finding for finding in outcome.findings}
        for code in ("protocol-violation", "output-schema-mismatch"):
            if code in codes:
                problems.append(inert(codes[code].message, 300))
        if outcome.task is not None:
            notes.append(f"{inert(name, 60)} ran as a task ({outcome.task.polls} tasks/get)")
        if "tool-error" in codes:
            notes.append(f"{inert(name, 60)} reported its own error (isError): a result, not a protocol failure")
    if problems:
        return failed("; ".join(problems))
    return passed(f"called {len(ctx.options.calls)} named tool(s)" + (f"; {'; '.join(notes)}" if notes else ""))


CONTENT_TYPES = ("text", "image", "audio", "resource_link", "resource")


def content_problem(block: object) -> str | None:
    """What a content block lacks for its type (schema.ts ContentBlock), or None."""
    from mcpprobe.operations.saving import decode_b64

    if not isinstance(block, dict):
        return "is not an object"
    kind = block.get("type")
    if kind not in CONTENT_TYPES:
        return f"has the type {inert(kind, 40)}, none of {', '.join(CONTENT_TYPES)}"
    if kind == "text":
        return None if isinstance(block.get("text"), str) else "(text) has no text string"
    if kind in ("image", "audio"):
        if decode_b64(block.get("data")) is None:
            return f"({kind}) has no data of valid base64"
        return None if isinstance(block.get("mimeType"), str) else f"({kind}) has no mimeType"
    if kind == "resource_link":
        missing = [key for key in ("uri", "name") if not isinstance(block.get(key), str)]
        return f"(resource_link) has no {' or '.join(missing)}" if missing else None
    resource = block.get("resource")
    if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
        return "(resource) has no resource with a uri"
    if isinstance(resource.get("text"), str) or decode_b64(resource.get("blob")) is not None:
        return None
    return "(resource) has neither a text string nor a blob of valid base64"


async def call_content(ctx: CheckContext) -> Verdict:
    if not ctx.options.calls:
        return skipped("no tool named with --call; nothing sent (check never calls a tool on its own)")
    runs = (await named_calls(ctx)).runs
    judged = 0
    problems: list[str] = []
    for run in runs:
        result = run.exchange.result
        content = result.get("content") if isinstance(result, dict) else None
        if not isinstance(content, list):
            continue
        judged += 1
        for index, block in enumerate(content):
            problem = content_problem(block)
            if problem is not None:
                problems.append(f"{inert(run.call.tool, 60)}: content[{index}] {problem}")
                break
    if problems:
        return failed("; ".join(problems))
    if not judged:
        return skipped("no named call answered a result with a content list; nothing to judge")
    blocks = sum(len(run.exchange.result["content"]) for run in runs if isinstance(run.exchange.result, dict)
                 and isinstance(run.exchange.result.get("content"), list))
    return passed(f"every content block ({blocks}) of {judged} named call result(s) has what its type requires")
