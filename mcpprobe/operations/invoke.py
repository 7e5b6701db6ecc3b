"""`call`, `read` and `get-prompt`: three entry points, each checked before anything is sent.

A tool is called through `tools/call`, a resource read through `resources/read`, a prompt
expanded through `prompts/get`; nothing is ever routed through another kind's entry point. Each
operation first needs the capability (else `Refused`, exit 3), then finds the item in the
complete list (all pages), then checks the arguments against the item's declaration, and only
then sends the one request. Like `mcpprobe.operations.probe`, nothing here prints: the caller passes
its `Hooks` (mcpprobe.operations.input: on_start, on_preview, ask, on_progress, on_task_status) and
renders the outcome.
"""

from __future__ import annotations

import time
from typing import Any

from mcpprobe.client.catalog import Listing, list_kind, timing_for
from mcpprobe.client.connect import NO_HOOKS, SessionHooks
from mcpprobe.client.session import Session, Timing
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ProtocolFailure, RpcError
from mcpprobe.findings import Finding
from mcpprobe.operations import arguments as argmod
from mcpprobe.operations.arguments import ToolArguments
from mcpprobe.operations.checks import (
    check_schema,
    checked_arguments,
    checked_prompt,
    confirm_call,
    find,
    not_in_catalog,
    refuse_arguments,
    violations_text,
)
from mcpprobe.operations.input import (
    Hooks,
    InputBroker,
    Unattended,
    follow_progress,
    progress_token,
    request_with_input,
    with_elicit,
)
from mcpprobe.operations.outcome import InvokeOutcome, guarded
from mcpprobe.wire.target import Target

HEADER_MISMATCH = -32020  # HeaderMismatch: the HTTP headers do not match the body (2026-07-28)

# ----- call -----


async def _catalog(session: Session, outcome: InvokeOutcome, kind: str) -> Listing:
    """The complete list of one kind, kept in the outcome with its timing: the item is looked up
    in it before anything is sent."""
    listing = await list_kind(session, kind)
    outcome.listings[kind] = listing
    outcome.timings.append(timing_for(listing))
    return listing


def _begin(command: str, item_kind: str, settings: Settings, hooks: Hooks | None,
           elicit: str | None) -> tuple[Hooks, Settings, InvokeOutcome, InputBroker]:
    """What every entry point starts with: its outcome (handed to the CLI at once, so that an
    interrupt can still show it), the settings with --elicit applied, and the input broker."""
    hooks = hooks or Unattended()
    settings = with_elicit(settings, elicit)
    outcome = InvokeOutcome(command, item_kind=item_kind, elicit=elicit)
    hooks.on_start(outcome)
    return hooks, settings, outcome, InputBroker(outcome, settings)


async def call_tool(target: Target, settings: Settings, name: str, given: ToolArguments,
                    *, hooks: Hooks | None = None, elicit: str | None = None, task: bool | None = None,
                    save_dir: str | None = None, session_hooks: SessionHooks = NO_HOOKS) -> InvokeOutcome:
    """`given`: the arguments as the command parsed them, built by the tool's inputSchema here.
    `task`: ask for task execution (--task), for a tool whose taskSupport is "optional"; False
    (--no-task): not as a task (2026-07-28: the tasks extension left undeclared); None: as the tool and server say.
    `save_dir` (--save): the result's binary content is written there (mcpprobe.operations.saving)."""
    hooks, settings, outcome, broker = _begin("call", "tools", settings, hooks, elicit)

    async def body(session: Session) -> None:
        session.check("tools/call")
        listing = await _catalog(session, outcome, "tools")
        tool, arguments = await checked_arguments(session, outcome, listing, name, given)
        as_task = task_rule(session, outcome, tool, task)
        await confirm_call(session, outcome, tool, arguments, hooks)
        started = time.perf_counter()
        params = {"name": name, "arguments": arguments}
        try:
            result = await send_tool_call(session, outcome, broker, params, hooks, as_task)
        finally:
            outcome.timings.append(Timing("call", (time.perf_counter() - started) * 1000, at=started))
        outcome.result = result
        if result is not None:
            await judge_tool_result(session, outcome, tool, result)

    await _run(outcome, target, settings, body, broker, session_hooks)
    if save_dir and outcome.result is not None:
        from mcpprobe.operations.saving import save_blocks

        save_blocks(outcome, save_dir)
    return outcome


def task_rule(session: Session, outcome: InvokeOutcome, tool: dict[str, Any], asked: bool | None) -> bool:
    """Whether a tools/call of `tool` goes as a task: the one rule of `call`, `watch --call`,
    `check --call` and `load --call` (those three ask with `asked` None: as the tool and server say).
    2026-07-28: whether the call declares the tasks extension (`tasks_ext.declares`: yes when the
    server declared it); before: whether it asks for a task (`tasks.wants_task`: a tool whose
    taskSupport is "required"). Refused (nothing sent) where the rule forbids the call; the
    `forced` findings of --force go onto the outcome."""
    from mcpprobe.operations import tasks, tasks_ext

    if session.era.tasks_extension:
        as_task, forced = tasks_ext.declares(session, asked)
    else:
        as_task, forced = tasks.wants_task(session, tool, asked)
    outcome.findings.extend(forced)
    return as_task


async def send_tool_call(session: Session, outcome: InvokeOutcome, broker: InputBroker, params: dict[str, Any],
                         hooks: Hooks, as_task: bool) -> dict[str, Any] | None:
    """tools/call as `task_rule` decided, followed to its result (None: a task that ended without one).

    Over a session that sends x-mcp-header parameters as headers, a -32020 HeaderMismatch answer
    leads to one `tools/list` and one retry of the same call with the headers that list gives:
    "the client **SHOULD** call `tools/list` to check for changes to the tool's `inputSchema`, then
    retry the original request with the appropriate headers" (2026-07-28, streamable HTTP, "Custom
    Headers from Tool Parameters"). A second -32020 is the answer: never a loop."""
    name = params.get("name")
    outcome.param_headers = session.param_headers(name, params.get("arguments"))
    try:
        return await _send_tool_call(session, outcome, broker, params, hooks, as_task)
    except RpcError as exc:
        if exc.rpc_code != HEADER_MISMATCH or not session.mirrors_params:
            raise
        first = exc
    listing = await _catalog(session, outcome, "tools")
    if not isinstance(name, str) or find(listing, "name", name) is None or name in session.excluded_tools:
        first.detail = {**first.detail, "relisted": True, "retried": False}
        raise RpcError(first.rpc_code, f"{first.rpc_message} (tools/list was read again: the tool is no longer "
                       "listed, or its x-mcp-header annotations are now invalid; not retried)", first.data,
                       method=first.method) from None
    outcome.param_headers = session.param_headers(name, params.get("arguments"))
    try:
        return await _send_tool_call(session, outcome, broker, params, hooks, as_task)
    except RpcError as exc:
        if exc.rpc_code != HEADER_MISMATCH:
            raise
        again = RpcError(exc.rpc_code, f"{exc.rpc_message} (again, after tools/list was read once more and the "
                         "call retried once with its headers)", exc.data, method=exc.method)
        again.detail = {**exc.detail, "relisted": True, "retried": True}
        raise again from None


async def _send_tool_call(session: Session, outcome: InvokeOutcome, broker: InputBroker, params: dict[str, Any],
                          hooks: Hooks, as_task: bool) -> dict[str, Any] | None:
    from mcpprobe.operations import tasks_ext

    if session.era.tasks_extension:  # 2026-07-28: the tasks extension, where the server decides
        return await tasks_ext.call_tool(session, outcome, broker, params, hooks, as_task)
    if as_task:
        return await _call_as_task(session, outcome, params, hooks)
    return await request_with_input(session, outcome, broker, "tools/call", params, hooks=hooks)


async def _call_as_task(session: Session, outcome: InvokeOutcome, params: dict[str, Any],
                        hooks: Hooks) -> dict[str, Any] | None:
    """tools/call as a task (mcpprobe.operations.tasks): the final result, or None when the task was cancelled."""
    from mcpprobe.operations.tasks import TaskCall, judge_task_end

    token = progress_token()
    request = {**params, "task": {}, "_meta": {"progressToken": token}}
    outcome.request = {"method": "tools/call", "params": request}
    follow_progress(session, outcome, token, hooks)
    call = TaskCall(session, outcome.findings, hooks.on_task_status)
    session.conn.notification_handlers.append(call.on_notification)
    outcome.sent = True
    created = await session.request("tools/call", request, reset_on_progress=True)
    if "task" not in created and isinstance(created.get("content"), list):
        outcome.findings.append(Finding(
            "protocol-violation", "tools/call was sent as a task, and the server answered with a plain result "
            "instead of a CreateTaskResult", kind="tools"))
        return created
    outcome.task = call.start(created)
    result = await call.follow()
    judge_task_end(outcome.task, outcome.findings)
    return None if outcome.task.status == "cancelled" else result


async def judge_tool_result(session: Session, outcome: InvokeOutcome, tool: dict[str, Any],
                            result: dict[str, Any]) -> None:
    """What every tools/call result is judged by (`call`, `check --call`): a content list, isError,
    structuredContent against the tool's outputSchema."""
    if result.get("resultType") == "input_required":
        return
    name = tool.get("name")
    content = result.get("content")
    if not isinstance(content, list):
        outcome.findings.append(Finding("protocol-violation", f"tools/call {name!r}: the result has no content list",
                                        kind="tools"))
    if result.get("isError") is True:
        texts = [text for b in content or [] if isinstance(b, dict) and isinstance(text := b.get("text"), str)]
        outcome.findings.append(Finding(
            "tool-error", f"tool {name!r} reported an error: " + (" ".join(texts) or "(no text)"),
            kind="tools", detail={"tool": name}))
        return
    schema = tool.get("outputSchema")
    if not isinstance(schema, dict):
        return
    if "structuredContent" not in result:
        outcome.findings.append(Finding(
            "output-schema-mismatch", f"tool {name!r} declares an outputSchema but returned no structuredContent",
            kind="tools", detail={"tool": name, "violations": []}))
        return
    violations = await check_schema(session, outcome, result["structuredContent"], schema, "outputSchema")
    if violations:
        outcome.findings.append(Finding(
            "output-schema-mismatch",
            f"tool {name!r}: structuredContent does not match its outputSchema: {violations_text(violations)}",
            kind="tools", detail={"tool": name, "violations": [v.to_json() for v in violations]}))


async def _run(outcome: InvokeOutcome, target: Target, settings: Settings, body: Any, broker: InputBroker,
               outer: SessionHooks) -> InvokeOutcome:
    def tracer(direction: str, message: Any) -> None:
        # The request exactly as it went on the wire (the era's _meta envelope included).
        planned = outcome.request
        if direction == "send" and isinstance(message, dict) and planned and message.get("method") == planned.get(
                "method") and "id" in message:
            outcome.request = {key: message[key] for key in ("id", "method", "params") if key in message}

    async def listening(session: Session) -> None:
        await _listen_for_server(session)
        await body(session)

    hooks = outer.adding(tracer=tracer, on_connection=broker.install)
    return await guarded(outcome, target, settings, listening, session_hooks=hooks)


async def _listen_for_server(session: Session) -> None:
    """Where the session has a server stream (streamable HTTP before 2026-07-28), the server may send
    its requests (ping, roots/list, elicitation) there rather than on the stream of the request they
    concern; open it before the request, so that they are answered and the request goes on."""
    stream = session.server_stream
    if stream is not None:
        await stream.listen(session.settings.connect_budget)


# ----- read -----


async def read_resource(target: Target, settings: Settings, uri: str | None, *, template: str | None = None,
                        values: dict[str, str] | None = None, complete: str | None = None,
                        hooks: Hooks | None = None, elicit: str | None = None, output: str | None = None,
                        session_hooks: SessionHooks = NO_HOOKS) -> InvokeOutcome:
    """Read `uri`, or expand `template` with `values` (its variables') and read that; `complete` asks
    for a variable's values."""
    hooks, settings, outcome, broker = _begin("read", "templates" if template else "resources", settings, hooks, elicit)

    async def body(session: Session) -> None:
        session.check("resources/read")
        if complete is not None:
            session.check("completion/complete")
        if template is not None:
            target_uri = await _resolve_template(session, outcome, template, values or {}, complete)
            if target_uri is None:
                return
        else:
            assert uri is not None
            target_uri = uri
            await resolve_uri(session, outcome, uri)
        outcome.uri = target_uri
        started = time.perf_counter()
        try:
            result = await request_with_input(session, outcome, broker, "resources/read", {"uri": target_uri},
                                               hooks=hooks)
        except RpcError as exc:
            if session.era.is_not_found(exc):
                raise ProtocolFailure(
                    f"resource not found: {target_uri} (the server answered {exc.rpc_code}: {exc.rpc_message})",
                    code="resource-not-found", detail={**exc.detail, "uri": target_uri}) from None
            raise
        finally:
            outcome.timings.append(Timing("read", (time.perf_counter() - started) * 1000, at=started))
        outcome.result = result
        if result.get("resultType") != "input_required":
            _judge_contents(outcome, result)

    await _run(outcome, target, settings, body, broker, session_hooks)
    if output and outcome.result is not None and outcome.completion is None:
        from mcpprobe.operations.saving import save_contents

        save_contents(outcome, output)  # -o PATH
    return outcome


async def resolve_uri(session: Session, outcome: InvokeOutcome, uri: str) -> None:
    """The catalog check of every resources/read of a URI (`read`, `load --read`): the URI is listed, or
    matches a listed template; else Refused (unless --force), nothing sent."""
    resources = await _catalog(session, outcome, "resources")
    item = find(resources, "uri", uri)
    if item is not None:
        outcome.item = item
        return
    templates = await _catalog(session, outcome, "templates")
    for candidate in templates.items:
        pattern = candidate.get("uriTemplate")
        if isinstance(pattern, str) and argmod.matches_template(uri, pattern):
            outcome.item = candidate
            outcome.item_kind = "templates"
            return
    names = [r.get("uri", "") for r in resources.items] + [t.get("uriTemplate", "") for t in templates.items]
    state = "complete" if resources.whole and templates.whole else "incomplete"
    combined = Listing("resources", resources.declared, state=state, items=resources.items + templates.items)
    outcome.findings.append(not_in_catalog(
        session, combined, "resource", uri, names, "resources/read", where="resources and templates"))


async def _resolve_template(session: Session, outcome: InvokeOutcome, template: str, values: dict[str, str],
                            complete: str | None) -> str | None:
    templates = await _catalog(session, outcome, "templates")
    item = find(templates, "uriTemplate", template)
    if item is None:
        outcome.findings.append(not_in_catalog(
            session, templates, "resource template", template,
            [t.get("uriTemplate", "") for t in templates.items], "resources/read"))
        item = {"uriTemplate": template}
    outcome.item = item
    variables = argmod.template_variables(template)
    if complete is not None:
        await _complete(session, outcome, {"type": "ref/resource", "uri": template}, complete, variables, values,
                        "template variable")
        return None
    unknown = [k for k in values if k not in variables]
    missing = [v for v in argmod.template_variables(template, required_only=True) if v not in values]
    problems = []
    if missing:
        problems.append(f"no value for {', '.join(missing)}")
    if unknown:
        problems.append(f"no variable {', '.join(map(repr, unknown))}")
    if problems:
        refuse_arguments(session, outcome, f"template {template!r}: " + "; ".join(problems)
                          + f" (its variables: {', '.join(variables) or 'none'})",
                          {"missing": missing, "unknown": unknown, "variables": variables}, "resources/read")
    outcome.arguments = dict(values)
    return argmod.expand(template, values)


def _judge_contents(outcome: InvokeOutcome, result: dict[str, Any]) -> None:
    contents = result.get("contents")
    if not isinstance(contents, list):
        raise ProtocolFailure("resources/read: the result has no contents list", detail={"keys": sorted(result)})
    for index, item in enumerate(contents):
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str) or not (
                isinstance(item.get("text"), str) or isinstance(item.get("blob"), str)):
            outcome.findings.append(Finding(
                "protocol-violation", f"resources/read: contents[{index}] has no uri, or neither text nor blob",
                kind="resources", detail={"index": index}))


# ----- prompts and completion -----


async def get_prompt(target: Target, settings: Settings, name: str, values: dict[str, str], *,
                     complete: str | None = None, hooks: Hooks | None = None, elicit: str | None = None,
                     save_dir: str | None = None, session_hooks: SessionHooks = NO_HOOKS) -> InvokeOutcome:
    """Expand prompt `name` with its arguments' `values`; `complete` asks for an argument's values."""
    hooks, settings, outcome, broker = _begin("get-prompt", "prompts", settings, hooks, elicit)

    async def body(session: Session) -> None:
        session.check("prompts/get")
        if complete is not None:
            session.check("completion/complete")
        listing = await _catalog(session, outcome, "prompts")
        names = checked_prompt(session, outcome, listing, name, values, check=complete is None)
        if complete is not None:
            await _complete(session, outcome, {"type": "ref/prompt", "name": name}, complete, names, values,
                            "prompt argument")
            return
        params: dict[str, Any] = {"name": name}
        if values:
            params["arguments"] = values
        started = time.perf_counter()
        try:
            result = await request_with_input(session, outcome, broker, "prompts/get", params, hooks=hooks)
        finally:
            outcome.timings.append(Timing("get-prompt", (time.perf_counter() - started) * 1000, at=started))
        outcome.result = result
        if result.get("resultType") != "input_required" and not isinstance(result.get("messages"), list):
            raise ProtocolFailure("prompts/get: the result has no messages list", detail={"keys": sorted(result)})

    await _run(outcome, target, settings, body, broker, session_hooks)
    if save_dir and outcome.result is not None and outcome.completion is None:
        from mcpprobe.operations.saving import save_blocks

        save_blocks(outcome, save_dir)  # --save DIR
    return outcome


async def _complete(session: Session, outcome: InvokeOutcome, ref: dict[str, Any], spec: str, names: list[str],
                    values: dict[str, str], what: str) -> None:
    """completion/complete for one argument; `spec` is ARG=PREFIX (or just ARG)."""
    arg, _, prefix = spec.partition("=")
    if arg not in names:
        refuse_arguments(session, outcome,
                          f"--complete {arg!r}: not a {what} (declared: {', '.join(names) or 'none'})",
                          {"argument": arg, "declared": names}, "completion/complete")
    params: dict[str, Any] = {"ref": ref, "argument": {"name": arg, "value": prefix}}
    context = {k: v for k, v in values.items() if k != arg}
    if context:
        params["context"] = {"arguments": context}
    outcome.request = {"method": "completion/complete", "params": params}
    started = time.perf_counter()
    outcome.sent = True
    try:
        result = await session.request("completion/complete", params)
    finally:
        outcome.timings.append(Timing("complete", (time.perf_counter() - started) * 1000, at=started))
    outcome.result = result
    completion = result.get("completion")
    if not isinstance(completion, dict) or not isinstance(completion.get("values"), list):
        raise ProtocolFailure("completion/complete: the result has no completion.values list")
    outcome.completion = completion
