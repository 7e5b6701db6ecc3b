"""The completion, logging and tasks families: optional capabilities (and the tasks extension of
2026-07-28), checked only where declared."""

from __future__ import annotations

from typing import Any

from mcpprobe.check.context import CheckContext, Verdict, answer_text, failed, inert, passed, skipped, warned
from mcpprobe.check.reading import broken_answer
from mcpprobe.client.obligations import not_implemented
from mcpprobe.errors import INVALID_PARAMS, METHOD_NOT_FOUND, RequestTimeout, RpcError, seconds

MAX_VALUES = 100  # "values: ... Must not exceed 100 items."
UNKNOWN_TASK = "mcpprobe-no-such-task"


async def _completion_ref(ctx: CheckContext) -> tuple[dict[str, Any], str] | None:
    """Something to complete: the first argument of the first prompt that has one, else the first
    variable of the first template."""
    if isinstance(ctx.capabilities.get("prompts"), dict):
        for prompt in (await ctx.listing("prompts")).items:
            for argument in prompt.get("arguments") or []:
                if isinstance(argument, dict) and isinstance(argument.get("name"), str):
                    return {"type": "ref/prompt", "name": prompt.get("name")}, argument["name"]
    if isinstance(ctx.capabilities.get("resources"), dict):
        from mcpprobe.operations.arguments import template_variables

        for template in (await ctx.listing("templates")).items:
            uri = template.get("uriTemplate")
            try:
                variables = template_variables(uri) if isinstance(uri, str) else []
            except ValueError:
                continue
            if variables:
                return {"type": "ref/resource", "uri": uri}, variables[0]
    return None


async def complete(ctx: CheckContext) -> Verdict:
    found = await _completion_ref(ctx)
    if found is None:
        return skipped("no prompt argument or template variable to complete; nothing sent")
    ref, name = found
    exchange = await ctx.request("completion/complete", {"ref": ref, "argument": {"name": name, "value": ""}})
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    what = f"{inert(ref.get('name') or ref.get('uri'), 80)} {inert(name, 40)}"
    if exchange.rpc_code == METHOD_NOT_FOUND:
        return failed(f"completion/complete for {what} was answered with -32601, although completions is declared")
    if exchange.result is None:
        return warned(f"completion/complete for {what} was answered with {answer_text(exchange)}")
    values = (exchange.result.get("completion") or {}).get("values") if isinstance(
        exchange.result.get("completion"), dict) else None
    if not isinstance(values, list):
        return failed(f"completion/complete for {what}: the result has no completion.values list")
    if len(values) > MAX_VALUES:
        return failed(f"completion/complete for {what} gave {len(values)} values; at most {MAX_VALUES} are allowed")
    return passed(f"completion/complete for {what} gave {len(values)} value(s)")


async def set_level(ctx: CheckContext) -> Verdict:
    exchange = await ctx.request("logging/setLevel", {"level": "info"})
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    if exchange.result is not None:
        return passed("logging/setLevel info was answered with a result")
    if isinstance(exchange.error, RpcError) and exchange.rpc_code == METHOD_NOT_FOUND:
        # An optional part of `logging` left out (mcpprobe.client.obligations): the one note every
        # command gives, recorded in the run's findings; nothing to judge, neither a pass nor a failure.
        ctx.session.findings.append(not_implemented("logging/setLevel", exchange.error.rpc_message,
                                                   detail=exchange.error.detail))
        return skipped("logging/setLevel answered -32601: setting the log level is an optional part of 'logging', "
                       "not implemented by this server (noted as not-implemented); nothing to judge")
    return failed(f"logging/setLevel info was answered with {answer_text(exchange)}, although logging is declared")


async def tasks_list(ctx: CheckContext) -> Verdict:
    exchange = await ctx.request("tasks/list", {})
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    if exchange.result is not None and isinstance(exchange.result.get("tasks"), list):
        return passed(f"tasks/list gave {len(exchange.result['tasks'])} task(s)")
    if exchange.result is not None:
        return failed("tasks/list: the result has no tasks list")
    return failed(f"tasks/list was answered with {answer_text(exchange)}, although tasks.list is declared")


async def unknown_task(ctx: CheckContext) -> Verdict:
    return await _get_unknown_task(ctx, {"taskId": UNKNOWN_TASK})


async def _get_unknown_task(ctx: CheckContext, params: dict[str, Any]) -> Verdict:
    """tasks/get of a task id no server issued: -32602, in the experimental tasks and the extension alike."""
    exchange = await ctx.request("tasks/get", params)
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    if exchange.rpc_code == INVALID_PARAMS:
        return passed("tasks/get of an unknown task id was answered with error -32602")
    return failed(f"tasks/get of an unknown task id was answered with {answer_text(exchange)}, not -32602")


# ----- the tasks extension (2026-07-28, SEP-2663): an unknown task id only, no tool called -----

MISSING_CAPABILITY = -32021  # Missing Required Client Capability


def _declaring(params: dict[str, Any]) -> dict[str, Any]:
    from mcpprobe.operations.tasks_ext import declaring

    return declaring(params)


async def ext_unknown_task(ctx: CheckContext) -> Verdict:
    return await _get_unknown_task(ctx, _declaring({"taskId": UNKNOWN_TASK}))


async def ext_unknown_cancel(ctx: CheckContext) -> Verdict:
    return await _acknowledged_unknown(ctx, "tasks/cancel", {"taskId": UNKNOWN_TASK})


async def ext_unknown_update(ctx: CheckContext) -> Verdict:
    return await _acknowledged_unknown(ctx, "tasks/update", {"taskId": UNKNOWN_TASK, "inputResponses": {}})


async def _acknowledged_unknown(ctx: CheckContext, method: str, params: dict[str, Any]) -> Verdict:
    """tasks/cancel or tasks/update of the unknown task id, the extension declared: -32602 passes
    (SHOULD); an acknowledgement, or another answer, warns."""
    exchange = await ctx.request(method, _declaring(params))
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    if exchange.rpc_code == INVALID_PARAMS:
        return passed(f"{method} of an unknown task id was answered with error -32602")
    if exchange.result is not None:
        return warned(f"{method} of an unknown task id was acknowledged as if the task existed, not answered -32602")
    return warned(f"{method} of an unknown task id was answered with {answer_text(exchange)}, not -32602")


async def ext_undeclared(ctx: CheckContext) -> Verdict:
    """The three tasks/* methods, each without the extension on the request (the session's own
    capabilities never carry it: it is declared per request), for the unknown task id."""
    sent: list[tuple[str, dict[str, Any]]] = [
        ("tasks/get", {"taskId": UNKNOWN_TASK}),
        ("tasks/update", {"taskId": UNKNOWN_TASK, "inputResponses": {}}),
        ("tasks/cancel", {"taskId": UNKNOWN_TASK}),
    ]
    wrong = []
    for method, params in sent:
        exchange = await ctx.request(method, params)
        broken = broken_answer(exchange)
        if broken is not None:
            return broken
        if exchange.rpc_code != MISSING_CAPABILITY:
            wrong.append(f"{method} with {answer_text(exchange)}")
    if wrong:
        return failed(f"requests that did not declare the extension were answered: {'; '.join(wrong)}, not -32021")
    return passed("tasks/get, tasks/update and tasks/cancel that did not declare the extension were each answered "
                  "with error -32021")


async def ext_no_tasks_result(ctx: CheckContext) -> Verdict:
    # mcpprobe's gate knows tasks/result only as the 2025-11-25 method of the `tasks` capability,
    # which a server of the extension must not declare: sent as a removed method.
    exchange = await ctx.request("tasks/result", _declaring({"taskId": UNKNOWN_TASK}), removed=True)
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    if exchange.rpc_code == METHOD_NOT_FOUND:
        return passed("tasks/result (removed by the extension) was answered with error -32601")
    return failed(f"tasks/result, which the extension removed, was answered with {answer_text(exchange)}, "
                  "not -32601")


async def ext_no_legacy(ctx: CheckContext) -> Verdict:
    legacy = ctx.capabilities.get("tasks")
    if legacy is None:
        return passed("no 2025-11-25 tasks capability beside the extension")
    # its keys as the header shows capabilities (cancel, list, requests), else the value as JSON
    shown = inert(", ".join(sorted(str(key) for key in legacy)) if isinstance(legacy, dict) else legacy, 120)
    return failed(f"the server declares the 2025-11-25 tasks capability ({shown}) beside the tasks extension")


LISTEN_ID = "mcpprobe-listen-tasks"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"


async def ext_undeclared_listen(ctx: CheckContext) -> Verdict:
    """subscriptions/listen asking task notifications for the unknown task id, without the extension
    on the request: -32021, never a stream. A stream the server opens anyway (its acknowledgement) is
    closed at once, as the specification says a client ends one (notifications/cancelled)."""
    import anyio

    from mcpprobe.client.era import SUBSCRIPTION_ID

    acknowledged: list[dict[str, Any]] = []
    seen = anyio.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        meta = params.get("_meta")
        if method == ACKNOWLEDGED and isinstance(meta, dict) and meta.get(SUBSCRIPTION_ID) == LISTEN_ID:
            acknowledged.append(params)
            seen.set()

    handlers = ctx.session.conn.notification_handlers
    handlers.append(on_notification)
    try:
        waiting = await ctx.send("subscriptions/listen", {"notifications": {"taskIds": [UNKNOWN_TASK]}},
                                 request_id=LISTEN_ID)
        answered: list[Any] = []
        async with anyio.create_task_group() as group:
            async def answer() -> None:
                answered.append(await waiting())
                group.cancel_scope.cancel()

            async def acknowledgement() -> None:
                await seen.wait()
                group.cancel_scope.cancel()  # the answer's wait, cancelled: notifications/cancelled ends the stream

            group.start_soon(answer)
            group.start_soon(acknowledgement)
    finally:
        handlers.remove(on_notification)
    if not answered:
        notifications = acknowledged[0].get("notifications")
        if isinstance(notifications, dict) and "taskIds" in notifications:
            return failed("subscriptions/listen for task notifications that did not declare the extension was "
                          "acknowledged with the taskIds instead of answered with error -32021; mcpprobe cancelled "
                          "it (notifications/cancelled)")
        # declined, but in an acknowledgement (a server that serves no task notifications at all may
        # never read taskIds): no notification leaks, the error the SEP asks for is missing
        return warned("subscriptions/listen for task notifications that did not declare the extension was "
                      "acknowledged without the taskIds (declined) instead of answered with error -32021; mcpprobe "
                      "cancelled it (notifications/cancelled)")
    exchange = answered[0]
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    if exchange.rpc_code == MISSING_CAPABILITY:
        return passed("subscriptions/listen for task notifications that did not declare the extension was answered "
                      "with error -32021")
    if exchange.rpc_code == METHOD_NOT_FOUND:
        return skipped("subscriptions/listen answered -32601: the server has no subscription streams, so no task "
                       "notifications to refuse")
    if isinstance(exchange.error, RequestTimeout):
        return failed(f"subscriptions/listen for task notifications that did not declare the extension got neither "
                      f"an answer nor an acknowledgement within {seconds(ctx.session.settings.timeout)} s, not "
                      "error -32021")
    return failed(f"subscriptions/listen for task notifications that did not declare the extension was answered "
                  f"with {answer_text(exchange)}, not -32021")


# ----- the tasks extension with --call: what the named calls' own tasks showed -----


async def ext_created_task_resolves(ctx: CheckContext) -> Verdict:
    """The first tasks/get of each task a named call created found it: "A server **MUST NOT** return
    `CreateTaskResult` until the task is durably created — that is, until a `tasks/get` for the
    returned `taskId` would resolve" (SEP-2663). Judged from the calls tools.call-named makes (each
    tool called once per run); no request of its own."""
    if not ctx.options.calls:
        return skipped("no tool named with --call; nothing sent (check never calls a tool on its own)")
    if not isinstance(ctx.capabilities.get("tools"), dict):
        return skipped("the server did not declare 'tools'; nothing sent")
    from mcpprobe.check.calls import named_calls
    from mcpprobe.errors import RpcError
    from mcpprobe.operations.tasks import TERMINAL

    done = await named_calls(ctx)
    found, lost, unjudged = [], [], []
    for run in done.runs:
        task, error, name = run.outcome.task, run.exchange.error, inert(run.call.tool, 60)
        if task is None:
            continue
        if task.polls:
            found.append(f"{name} ({task.polls} tasks/get)")
            continue
        ttl = task.created.get("ttlMs")
        elapsed = (run.ended - task.created_at) * 1000  # at most: the answer came before the call ended
        in_time = (ttl is None and "ttlMs" in task.created) or (
            isinstance(ttl, int | float) and not isinstance(ttl, bool) and elapsed < ttl / 2)
        not_found = (isinstance(error, RpcError) and error.method == "tasks/get" and error.rpc_code == INVALID_PARAMS
                     and "taskId" not in error.detail)  # (a failed task's own error carries its taskId)
        if task.status in TERMINAL:
            unjudged.append(f"{name} ran as a task that had ended at creation ({task.status})")
        elif not_found and in_time and isinstance(error, RpcError):
            lost.append(f"{name}: its first tasks/get, within {elapsed:.0f} ms of the CreateTaskResult (ttlMs "
                        f"{inert(ttl, 20)}), was answered with error -32602 ({inert(error.rpc_message, 80)})")
        elif not_found:
            unjudged.append(f"{name} ran as a task not found at its first tasks/get, sent when half its ttlMs "
                            f"({inert(ttl, 20)}) could have run: a task past its ttl may be purged")
        else:
            unjudged.append(f"{name} ran as a task that was never polled")
    if lost:
        return failed("a task was not found right after tools/call created it: " + "; ".join(lost))
    if found:
        return passed("the first tasks/get of each task the named calls created found it: " + ", ".join(found))
    if unjudged:
        return skipped("no task to judge: " + "; ".join(unjudged))
    return skipped("no tool named with --call ran as a task: nothing to judge")


IMPLEMENTS = {
    "completion.complete": complete,
    "logging.set-level": set_level,
    "tasks.list": tasks_list,
    "tasks.unknown-task": unknown_task,
    "tasks.ext-unknown-task": ext_unknown_task,
    "tasks.ext-unknown-task-cancel": ext_unknown_cancel,
    "tasks.ext-unknown-task-update": ext_unknown_update,
    "tasks.ext-undeclared-client": ext_undeclared,
    "tasks.ext-no-legacy-capability": ext_no_legacy,
    "tasks.ext-no-tasks-result": ext_no_tasks_result,
    "tasks.ext-undeclared-listen": ext_undeclared_listen,
    "tasks.ext-created-task-resolves": ext_created_task_resolves,
}
