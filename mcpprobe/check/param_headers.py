"""The server side of `x-mcp-header` (SEP-2243, 2026-07-28 over streamable HTTP): `http.param-header`.

A tool named with --call, whose inputSchema mirrors a parameter into an `Mcp-Param-*` header, is
sent again with that header contradicting the body, then without it: each must get 400 and -32020
(HeaderMismatch). A server that follows the rule refuses both before the tool runs; one that breaks
it runs the tool once more, so the requests are sent only where calling the tool again is allowed
without asking (a tool marked read-only, or --yes), and nothing more once one is answered with a
result. The requests go out as the other http checks send theirs (mcpprobe.check.http.Raw).
"""

from __future__ import annotations

import json
from typing import Any

from mcpprobe.check.catalogue import Status
from mcpprobe.check.context import CheckContext, Verdict, errored, failed, inert, passed, skipped
from mcpprobe.check.http import HEADER_MISMATCH, Raw


def _verdict(raw: Raw, verdict: Verdict) -> Verdict:
    verdict.evidence = raw.evidence()
    return verdict


def _mismatched(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value - 1 if value > 0 else value + 1
    return "mcpprobe-mismatch" if value != "mcpprobe-mismatch" else "mcpprobe-mismatch-2"


async def param_header(ctx: CheckContext) -> Verdict:
    from mcpprobe.check.calls import named_calls
    from mcpprobe.client.headers import encode, rendered, value_at
    from mcpprobe.operations.checks import confirmation_needed

    if not ctx.options.calls:
        return skipped("no tool named with --call; nothing sent (check never calls a tool on its own)")
    done = await named_calls(ctx)
    if done.verdict.status is Status.ERROR:
        return skipped(f"the named calls were not made ({done.verdict.message}); nothing sent")
    listing = await ctx.listing("tools")
    tools = {item.get("name"): item for item in listing.items if isinstance(item, dict)}
    yes = bool(ctx.options.confirmer is not None and ctx.options.confirmer.yes)
    raw = Raw(ctx)
    judged: list[str] = []
    notes: list[str] = []
    for run in done.runs:
        name = run.call.tool
        declared = ctx.session.tool_headers.get(name) or ()
        arguments = (run.exchange.params or {}).get("arguments")
        param = next((p for p in declared if rendered(value_at(arguments, p.path)) is not None), None)
        if param is None:
            continue
        if run.exchange.result is None:
            notes.append(f"{inert(name, 60)}: its named call got no result, so the arguments are not known good")
            continue
        if run.outcome.task is not None:
            notes.append(f"{inert(name, 60)} ran as a task: the call sent again would make another")
            continue
        tool = tools.get(name, {})
        if confirmation_needed(tool, yes=yes, interactive=False) == "non-interactive":
            notes.append(f"{inert(name, 60)} is not marked read-only and --yes was not given: a server that does "
                         "not check the header would run it again")
            continue
        value = value_at(arguments, param.path)
        wrong_value = rendered(_mismatched(value))
        assert wrong_value is not None
        right = ctx.session.param_headers(name, arguments)
        shown = f"tools/call of {inert(name, 60)}"
        for change, said in ((encode(wrong_value), f"{param.header}: {inert(encode(wrong_value), 40)} (the body's "
                                                   f"{inert(param.where, 40)} is {inert(json.dumps(value), 40)})"),
                             (None, f"no {param.header} (the body's {inert(param.where, 40)} has a value)")):
            headers: dict[str, str | None] = {**right, param.header: change}
            answer = await raw.post("tools/call", {"name": name, "arguments": arguments}, headers=headers)
            if answer.status is None:
                return _verdict(raw, errored(f"{answer.line}: {answer.problem}"))
            error = answer.json_error()
            if answer.status == 400 and error is not None and error.get("code") == HEADER_MISMATCH:
                continue
            if answer.has_result():
                return _verdict(raw, failed(f"{shown} with {said} was answered with a result: the tool ran on a "
                                            "request whose header does not match its body, which the server MUST "
                                            "reject with 400 and -32020 (HeaderMismatch)"))
            return _verdict(raw, failed(f"{shown} with {said} got {answer.described()}, not 400 with -32020 "
                                        "(HeaderMismatch)"))
        judged.append(f"{inert(name, 60)} ({param.header})")
    if not judged:
        reason = "; ".join(notes) if notes else ("no named tool has an x-mcp-header parameter given a value in its "
                                                 "arguments")
        return _verdict(raw, skipped(f"{reason}; nothing sent"))
    return _verdict(raw, passed(f"tools/call of {', '.join(judged)} with the header contradicting the body, and "
                                "without it, got 400 and -32020 (HeaderMismatch) each: the tool was not run"
                                + (f"; {'; '.join(notes)}" if notes else "")))


IMPLEMENTS = {
    "http.param-header": param_header,
}
