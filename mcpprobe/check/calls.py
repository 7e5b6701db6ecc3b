"""`check --call 'TOOL K=V ...'`: the tools the user named, called through `call`'s own checks.

Each goes through mcpprobe.operations.checks' catalogue check (the tool must be listed), argument check
(KEY=VALUE coerced and validated by its inputSchema) and confirmation (a tool not marked
read-only needs --yes, or a yes on a terminal); only then is `tools/call` sent. A tool that
answers `isError: true` passes: its own failure is a result, not a protocol failure.
"""

from __future__ import annotations

import shlex

from mcpprobe.check.context import CheckContext, NamedCall, Verdict, errored, failed, inert, passed
from mcpprobe.errors import ProbeError, Refused
from mcpprobe.operations.arguments import ToolArguments


def parse_call(spec: str) -> NamedCall:
    """'TOOL K=V K2:=JSON' -> the tool and its arguments, parsed (a usage problem for bad JSON);
    ValueError when it names no tool."""
    words = shlex.split(spec)
    if not words:
        raise ValueError("--call needs a tool name: --call 'TOOL K=V ...'")
    return NamedCall(spec, words[0], ToolArguments.parse(words[1:]))


async def call_each(ctx: CheckContext) -> Verdict:
    from mcpprobe.operations.checks import checked_arguments, confirm_call
    from mcpprobe.operations.input import Unattended
    from mcpprobe.operations.invoke import judge_tool_result
    from mcpprobe.operations.outcome import InvokeOutcome

    listing = await ctx.listing("tools")
    confirmer = ctx.options.confirmer or Unattended()
    notes: list[str] = []
    problems: list[str] = []
    for call in ctx.options.calls:
        spec, name = call.spec, call.tool
        outcome = InvokeOutcome("call", item_kind="tools")
        try:
            tool, arguments = await checked_arguments(ctx.session, outcome, listing, name, call.arguments)
            await confirm_call(ctx.session, outcome, tool, arguments, confirmer)
        except Refused as exc:
            verdict = errored(f"--call {inert(spec, 80)}: {inert(exc.message, 300)}")
            verdict.detail["exitCode"] = int(exc.exit_code)
            return verdict
        exchange = await ctx.request("tools/call", {"name": name, "arguments": arguments})
        if exchange.result is None:
            if isinstance(exchange.error, ProbeError) and exchange.rpc_code is None:
                verdict = errored(f"tools/call {inert(name, 60)}: {inert(exchange.error.message, 200)}")
                verdict.detail["exitCode"] = int(exchange.error.exit_code)
                return verdict
            notes.append(f"{inert(name, 60)} answered {exchange.rpc_code} (a JSON-RPC error)")
            continue
        await judge_tool_result(ctx.session, outcome, tool, exchange.result)
        codes = {finding.code: finding for finding in outcome.findings}
        for code in ("protocol-violation", "output-schema-mismatch"):
            if code in codes:
                problems.append(inert(codes[code].message, 300))
        if "tool-error" in codes:
            notes.append(f"{inert(name, 60)} reported its own error (isError): a result, not a protocol failure")
    if problems:
        return failed("; ".join(problems))
    return passed(f"called {len(ctx.options.calls)} named tool(s)" + (f"; {'; '.join(notes)}" if notes else ""))
