"""`call`, `read` and `get-prompt`: three entry points, each checked before anything is sent.

A tool is called through `tools/call`, a resource read through `resources/read`, a prompt
expanded through `prompts/get`; nothing is ever routed through another kind's entry point. Each
operation first needs the capability (else `Refused`, exit 3), then finds the item in the
complete list (all pages), then checks the arguments against the item's declaration, and only
then sends the one request. Like `mcpprobe.operations.probe`, nothing here prints: the CLI passes
`Hooks` for the preview, the confirmation question and progress, and renders the outcome.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import anyio

from mcpprobe.client.catalog import Listing, list_kind, timing_for
from mcpprobe.client.connect import NO_HOOKS, SessionHooks
from mcpprobe.client.session import Session, Timing
from mcpprobe.errors import (
    ProbeError,
    ProtocolFailure,
    Refused,
    RpcError,
)
from mcpprobe.exitcodes import ExitCode, worst
from mcpprobe.findings import Finding
from mcpprobe.operations import arguments as argmod
from mcpprobe.operations.probe import Outcome, _guarded
from mcpprobe.operations.tasks import TaskRun
from mcpprobe.safety import validation
from mcpprobe.testhooks import crash_point
from mcpprobe.wire.target import Settings, Target

ELICIT_MODES = ("decline", "defaults")
MAX_INPUT_ROUNDS = 10
ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# Spec defaults when a hint is absent (tools.mdx, ToolAnnotations).
HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
_tokens = itertools.count(1)


@dataclass
class Hooks:
    """How the CLI takes part while the session is open. Every hook is optional."""

    # (tool, arguments, how it is confirmed, the server's serverInfo or {})
    preview: Callable[[dict[str, Any], dict[str, Any], str, dict[str, Any]], None] | None = None
    ask: Callable[[dict[str, Any], dict[str, Any]], bool] | None = None  # set only on an interactive terminal
    progress: Callable[[dict[str, Any]], None] | None = None
    yes: bool = False
    # The outcome as soon as it exists: if the run is interrupted, what was sent is still shown.
    started: Callable[[InvokeOutcome], None] | None = None
    # A task's status changed ({"ms", "status", "statusMessage", "via"}): `call` of a task.
    task_status: Callable[[dict[str, Any]], None] | None = None


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

    def error_kind(self) -> str:
        return self.item_kind or "server"

    @property
    def exit_code(self) -> ExitCode:
        """A file the user asked for that could not be written is exit 2, the result shown anyway."""
        code = super().exit_code
        return worst([code, ExitCode.USAGE]) if self.save_error else code


# ----- client capabilities: declare elicitation only when asked -----


def with_elicit(settings: Settings, elicit: str | None) -> Settings:
    if elicit is None:
        return settings
    if elicit not in ELICIT_MODES:
        raise ValueError(f"elicit must be one of {ELICIT_MODES}")
    return replace(settings, elicit=elicit)


# ----- answering the server's requests for input (both eras) -----


def elicit_defaults(params: dict[str, Any]) -> dict[str, Any]:
    """The answer `--elicit defaults` gives: accept, with each property's schema default."""
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    content = {}
    for name, prop in (properties or {}).items():
        if isinstance(prop, dict) and "default" in prop:
            content[name] = prop["default"]
    return {"action": "accept", "content": content}


class InputBroker:
    """Answers elicitation, sampling and roots requests, or refuses them, and keeps a record."""

    def __init__(self, outcome: InvokeOutcome, settings: Settings) -> None:
        self.outcome = outcome
        self.settings = settings
        self.elicit = settings.elicit

    def answer(self, method: str, params: dict[str, Any], *, via: str, key: str | None = None) -> dict[str, Any] | None:
        """The response for one request, or None when mcpprobe refuses it (recorded as a finding)."""
        entry: dict[str, Any] = {"via": via, "method": method}
        if key is not None:
            entry["key"] = key
        response: dict[str, Any] | None = None
        reason = ""
        if method == "elicitation/create":
            mode = params.get("mode", "form")
            entry["message"] = params.get("message")
            if self.elicit is None:
                reason = "mcpprobe did not declare the 'elicitation' capability (use --elicit decline|defaults)"
            elif mode != "form":
                reason = f"mcpprobe answers only form-mode elicitation, not {mode!r}"
            elif self.elicit == "decline":
                response = {"action": "decline"}
            else:
                response = elicit_defaults(params)
                required = (params.get("requestedSchema") or {}).get("required") or []
                missing = [r for r in required if r not in response["content"]]
                if missing:
                    entry["missingRequired"] = missing
        elif method == "roots/list" and self.settings.roots:
            response = {"roots": [{"uri": uri} for uri in self.settings.roots]}
        elif method == "roots/list":
            reason = "mcpprobe did not declare the 'roots' capability (use --root)"
        elif method == "sampling/createMessage":
            reason = "mcpprobe never declares 'sampling': it has no model to ask"
        else:
            reason = f"mcpprobe does not handle {method}"
        if response is not None:
            entry["answer"] = response
            self.outcome.input_rounds.append(entry)
            self.outcome.findings.append(Finding(
                "input-required", f"the server asked for {method} ({via}); mcpprobe answered "
                + (response.get("action", "with its roots") if method != "roots/list" else "with its roots"),
                kind=self.outcome.item_kind or "server", detail=entry))
            return response
        entry["refused"] = reason
        self.outcome.input_rounds.append(entry)
        self.outcome.findings.append(Finding(
            "input-required-refused", f"the server asked for {method} ({via}); refused: {reason}",
            kind=self.outcome.item_kind or "server", detail=entry))
        return None

    def install(self, conn: Any) -> None:
        """Legacy era: server-initiated requests. Refusals are JSON-RPC errors, as the spec asks."""

        def handler(method: str) -> Any:
            async def handle(params: dict[str, Any]) -> dict[str, Any]:
                response = self.answer(method, params, via="server request")
                if response is None:
                    raise RpcError(-32601, f"{method} refused: {self.outcome.input_rounds[-1]['refused']}")
                return response

            return handle

        for method in ("elicitation/create", "sampling/createMessage", "roots/list"):
            if method == "roots/list" and self.settings.roots and method in conn.request_handlers:
                continue
            conn.request_handlers[method] = handler(method)


async def _request_with_input(session: Session, outcome: InvokeOutcome, broker: InputBroker, method: str,
                              params: dict[str, Any], *, hooks: Hooks) -> dict[str, Any]:
    """Send `method`; follow 2026-07-28 input_required results (answer, then retry) to the end."""
    rounds = 0
    delay = 0.05
    current = dict(params)
    while True:
        token = f"mcpprobe-{next(_tokens)}"
        current = {**current, "_meta": {**(current.get("_meta") or {}), "progressToken": token}}
        outcome.request = {"method": method, "params": current}
        _follow_progress(session, outcome, token, hooks)
        outcome.sent = True
        result = await session.request(method, current, reset_on_progress=True)
        if result.get("resultType") != "input_required":
            return result
        rounds += 1
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if rounds > MAX_INPUT_ROUNDS:
            raise ProtocolFailure(f"{method}: the server still asked for input after {MAX_INPUT_ROUNDS} rounds")
        if not isinstance(requests, dict) and not isinstance(state, str):
            raise ProtocolFailure(f"{method}: an input_required result with neither inputRequests nor requestState",
                                  detail={"result": result})
        responses: dict[str, Any] = {}
        refused = False
        for key, request in (requests or {}).items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ProtocolFailure(f"{method}: inputRequests[{key!r}] is not a request object")
            answer = broker.answer(request["method"], request.get("params") or {}, via="input_required", key=key)
            if answer is None:
                refused = True
            else:
                responses[key] = answer
        if refused:
            # Nothing to retry with: the request ends here, and the findings say why.
            return result
        if not requests:
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.25)
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        if responses:
            retry["inputResponses"] = responses
        if isinstance(state, str):
            retry["requestState"] = state
        current = retry


def _follow_progress(session: Session, outcome: InvokeOutcome, token: str, hooks: Hooks) -> None:
    started = time.perf_counter()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method != "notifications/progress" or params.get("progressToken") != token:
            return
        crash_point("progress")
        session.conn.extend_deadline_for_progress(token, session.settings.timeout)
        event = {"ms": round((time.perf_counter() - started) * 1000, 1), "progress": params.get("progress"),
                 "total": params.get("total"), "message": params.get("message")}
        outcome.progress.append(event)
        if hooks.progress is not None:
            hooks.progress(event)

    session.conn.notification_handlers.append(on_notification)


# ----- finding the item -----


def _find(listing: Listing, key: str, value: str) -> dict[str, Any] | None:
    return next((item for item in listing.items if item.get(key) == value), None)


def _not_in_catalog(session: Session, listing: Listing, what: str, value: str, names: list[str],
                    method: str, where: str = "") -> Finding:
    """Refuse (unless --force): `value` is not in the list. Says how complete the list was."""
    close = argmod.suggestions(value, names)
    state = "" if listing.whole else f" (the list is {listing.state}, so it may be elsewhere)"
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    where = where or listing.kind
    message = f"{what} {value!r} is not among the server's {len(listing.items)} {where}{state}{hint}"
    detail = {"name": value, "suggestions": close, "listState": listing.state, "count": len(listing.items)}
    if not session.settings.force:
        raise Refused(f"{message}{'' if message.endswith('?') else '.'} Nothing was sent; use --force to send "
                      f"{method} anyway.", code="not-in-catalog", detail=detail)
    return Finding("forced", f"{message}; {method} was sent with --force", kind=listing.kind, detail=detail)


def _refuse_arguments(session: Session, outcome: InvokeOutcome, message: str, detail: dict[str, Any],
                      method: str) -> None:
    if not session.settings.force:
        raise Refused(f"{message}. Nothing was sent; use --force to send {method} anyway.",
                      code="invalid-arguments", detail=detail)
    outcome.findings.append(Finding("forced", f"{message}; {method} was sent with --force",
                                    kind=outcome.item_kind or "server", detail=detail))


def _violations_text(violations: list[validation.Violation], limit: int = 5) -> str:
    shown = "; ".join(f"{v.path}: {v.message}" for v in violations[:limit])
    more = f" (and {len(violations) - limit} more)" if len(violations) > limit else ""
    return shown + more


async def _check_schema(session: Session, outcome: InvokeOutcome, instance: Any, schema: Any,
                        which: str) -> list[validation.Violation] | None:
    """Violations, or None when the schema cannot be used (a warning finding that says why).

    The schema is the server's: validating it never fetches, never recurses without end, and
    stops within min(--timeout, validation.BUDGET_SECONDS); Ctrl-C is not held up by it."""
    seconds = min(session.settings.timeout, validation.BUDGET_SECONDS)
    try:
        return await validation.validate_async(instance, schema, seconds=seconds)
    except validation.UnusableSchema as exc:
        outcome.findings.append(Finding(
            "unusable-schema", f"the tool's {which} is not a usable JSON Schema ({exc}); not validated",
            kind="tools", detail={"schema": which, **exc.detail}))
        return None


def confirmation_needed(tool: dict[str, Any], *, yes: bool, interactive: bool) -> str:
    """How a call is confirmed: 'read-only', '--yes', 'prompt' (ask first) or 'non-interactive'."""
    annotations = got if isinstance(got := tool.get("annotations"), dict) else {}
    if annotations.get("readOnlyHint") is True:
        return "read-only"
    if yes:
        return "--yes"
    return "prompt" if interactive else "non-interactive"


async def _ask(ask: Callable[[dict[str, Any], dict[str, Any]], bool], tool: dict[str, Any],
               arguments: dict[str, Any]) -> bool:
    """Ask on a daemon thread, so that Ctrl-C (which cancels this task) is never stuck in input()."""
    box: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["answer"] = bool(ask(tool, arguments))
        except BaseException:  # click.Abort on EOF or Ctrl-C at the prompt: no
            box["answer"] = False
        finally:
            done.set()

    threading.Thread(target=run, name="mcpprobe-confirm", daemon=True).start()
    while not done.is_set():
        await anyio.sleep(0.05)
    return box["answer"]


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
    hooks = hooks or Hooks()
    settings = with_elicit(settings, elicit)
    outcome = InvokeOutcome(command, item_kind=item_kind, elicit=elicit)
    if hooks.started is not None:
        hooks.started(outcome)
    return hooks, settings, outcome, InputBroker(outcome, settings)


async def call_tool(target: Target, settings: Settings, name: str, pairs: list[str], base_args: dict[str, Any],
                    *, hooks: Hooks | None = None, elicit: str | None = None, task: bool = False,
                    save_dir: str | None = None, session_hooks: SessionHooks = NO_HOOKS) -> InvokeOutcome:
    """`task`: ask for task execution (--task), for a tool whose taskSupport is "optional".
    `save_dir` (--save): the result's binary content is written there (mcpprobe.operations.saving)."""
    hooks, settings, outcome, broker = _begin("call", "tools", settings, hooks, elicit)

    async def body(session: Session) -> None:
        session.check("tools/call")
        listing = await _catalog(session, outcome, "tools")
        tool, arguments = await checked_arguments(session, outcome, listing, name, pairs, base_args)
        from mcpprobe.operations.tasks import wants_task

        as_task, forced = wants_task(session, tool, task)
        outcome.findings.extend(forced)
        await confirm_call(session, outcome, tool, arguments, hooks)
        started = time.perf_counter()
        params = {"name": name, "arguments": arguments}
        try:
            if as_task:
                result = await _call_as_task(session, outcome, params, hooks)
            else:
                result = await _request_with_input(session, outcome, broker, "tools/call", params, hooks=hooks)
        finally:
            outcome.timings.append(Timing("call", (time.perf_counter() - started) * 1000))
        outcome.result = result
        if result is not None:
            await _judge_tool_result(session, outcome, tool, result)

    await _run(outcome, target, settings, body, broker, session_hooks)
    if save_dir and outcome.result is not None:
        from mcpprobe.operations.saving import save_blocks

        save_blocks(outcome, save_dir)
    return outcome


async def checked_arguments(session: Session, outcome: InvokeOutcome, listing: Listing, name: str,
                            pairs: list[str], base_args: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The catalog and argument checks of every tools/call (`call`, `watch --call`): the tool
    from the complete list and the arguments built by its inputSchema. Raises Refused, with
    nothing sent, when the tool is not listed or the arguments do not match (unless --force)."""
    tool = _find(listing, "name", name)
    if tool is None:
        outcome.findings.append(_not_in_catalog(
            session, listing, "tool", name, [t.get("name", "") for t in listing.items], "tools/call"))
        tool = {"name": name}
    outcome.item = tool
    schema = tool.get("inputSchema")
    arguments = argmod.build_arguments(pairs, base_args, schema)
    outcome.arguments = arguments
    if isinstance(schema, dict | bool) and "inputSchema" in tool:
        violations = await _check_schema(session, outcome, arguments, schema, "inputSchema")
        if violations:
            _refuse_arguments(
                session, outcome,
                f"the arguments do not match the inputSchema of tool {name!r}: {_violations_text(violations)}",
                {"violations": [v.to_json() for v in violations], "dialect": validation.dialect_of(schema)},
                "tools/call")
    return tool, arguments


async def confirm_call(session: Session, outcome: InvokeOutcome, tool: dict[str, Any], arguments: dict[str, Any],
                       hooks: Hooks) -> None:
    """The confirmation of every tools/call: a tool not marked read-only needs --yes, or a yes on a
    terminal. Raises Refused (not-confirmed) otherwise; nothing is sent."""
    how = confirmation_needed(tool, yes=hooks.yes, interactive=hooks.ask is not None)
    outcome.confirmation = how
    if hooks.preview is not None:
        hooks.preview(tool, arguments, how, session.snapshot.server_info or {})
    if how == "prompt":
        assert hooks.ask is not None
        if not await _ask(hooks.ask, tool, arguments):
            outcome.confirmation = "declined"
            raise Refused(f"tool {tool.get('name')!r} was not called: not confirmed", code="not-confirmed",
                          severity="info")
        outcome.confirmation = "confirmed"


async def _call_as_task(session: Session, outcome: InvokeOutcome, params: dict[str, Any],
                        hooks: Hooks) -> dict[str, Any] | None:
    """tools/call as a task (mcpprobe.operations.tasks): the final result, or None when the task was cancelled."""
    from mcpprobe.operations.tasks import TaskCall, judge_task_end

    token = f"mcpprobe-{next(_tokens)}"
    request = {**params, "task": {}, "_meta": {"progressToken": token}}
    outcome.request = {"method": "tools/call", "params": request}
    _follow_progress(session, outcome, token, hooks)
    call = TaskCall(session, outcome.findings, hooks.task_status)
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


async def _judge_tool_result(session: Session, outcome: InvokeOutcome, tool: dict[str, Any],
                             result: dict[str, Any]) -> None:
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
    violations = await _check_schema(session, outcome, result["structuredContent"], schema, "outputSchema")
    if violations:
        outcome.findings.append(Finding(
            "output-schema-mismatch",
            f"tool {name!r}: structuredContent does not match its outputSchema: {_violations_text(violations)}",
            kind="tools", detail={"tool": name, "violations": [v.to_json() for v in violations]}))


judge_tool_result = _judge_tool_result  # for `check --call`, which calls named tools the same way


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
    return await _guarded(outcome, target, settings, listening, session_hooks=hooks)


async def _listen_for_server(session: Session) -> None:
    """Where the session has a server stream (streamable HTTP before 2026-07-28), the server may send
    its requests (ping, roots/list, elicitation) there rather than on the stream of the request they
    concern; open it before the request, so that they are answered and the request goes on."""
    stream = session.server_stream
    if stream is not None:
        await stream.listen(min(session.settings.connect_timeout, session.settings.timeout))


# ----- read -----


async def read_resource(target: Target, settings: Settings, uri: str | None, *, template: str | None = None,
                        pairs: list[str] = (), complete: str | None = None,  # type: ignore[assignment]
                        hooks: Hooks | None = None, elicit: str | None = None, output: str | None = None,
                        session_hooks: SessionHooks = NO_HOOKS) -> InvokeOutcome:
    """Read `uri`, or expand `template` with `pairs` and read that; `complete` asks for a variable's values."""
    hooks, settings, outcome, broker = _begin("read", "templates" if template else "resources", settings, hooks, elicit)

    async def body(session: Session) -> None:
        session.check("resources/read")
        if complete is not None:
            session.check("completion/complete")
        if template is not None:
            target_uri = await _resolve_template(session, outcome, template, pairs, complete)
            if target_uri is None:
                return
        else:
            assert uri is not None
            target_uri = uri
            await resolve_uri(session, outcome, uri)
        outcome.uri = target_uri
        started = time.perf_counter()
        try:
            result = await _request_with_input(session, outcome, broker, "resources/read", {"uri": target_uri},
                                               hooks=hooks)
        except RpcError as exc:
            if session.era.is_not_found(exc):
                raise ProtocolFailure(
                    f"resource not found: {target_uri} (the server answered {exc.rpc_code}: {exc.rpc_message})",
                    code="resource-not-found", detail={**exc.detail, "uri": target_uri}) from None
            raise
        finally:
            outcome.timings.append(Timing("read", (time.perf_counter() - started) * 1000))
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
    item = _find(resources, "uri", uri)
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
    outcome.findings.append(_not_in_catalog(
        session, combined, "resource", uri, names, "resources/read", where="resources and templates"))


async def _resolve_template(session: Session, outcome: InvokeOutcome, template: str, pairs: list[str],
                            complete: str | None) -> str | None:
    templates = await _catalog(session, outcome, "templates")
    item = _find(templates, "uriTemplate", template)
    if item is None:
        outcome.findings.append(_not_in_catalog(
            session, templates, "resource template", template,
            [t.get("uriTemplate", "") for t in templates.items], "resources/read"))
        item = {"uriTemplate": template}
    outcome.item = item
    values = argmod.string_arguments(pairs)
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
        _refuse_arguments(session, outcome, f"template {template!r}: " + "; ".join(problems)
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


async def get_prompt(target: Target, settings: Settings, name: str, pairs: list[str], *, complete: str | None = None,
                     hooks: Hooks | None = None, elicit: str | None = None, save_dir: str | None = None,
                     session_hooks: SessionHooks = NO_HOOKS) -> InvokeOutcome:
    hooks, settings, outcome, broker = _begin("get-prompt", "prompts", settings, hooks, elicit)

    async def body(session: Session) -> None:
        session.check("prompts/get")
        if complete is not None:
            session.check("completion/complete")
        listing = await _catalog(session, outcome, "prompts")
        names, values = checked_prompt(session, outcome, listing, name, pairs, check=complete is None)
        if complete is not None:
            await _complete(session, outcome, {"type": "ref/prompt", "name": name}, complete, names, values,
                            "prompt argument")
            return
        params: dict[str, Any] = {"name": name}
        if values:
            params["arguments"] = values
        started = time.perf_counter()
        try:
            result = await _request_with_input(session, outcome, broker, "prompts/get", params, hooks=hooks)
        finally:
            outcome.timings.append(Timing("get-prompt", (time.perf_counter() - started) * 1000))
        outcome.result = result
        if result.get("resultType") != "input_required" and not isinstance(result.get("messages"), list):
            raise ProtocolFailure("prompts/get: the result has no messages list", detail={"keys": sorted(result)})

    await _run(outcome, target, settings, body, broker, session_hooks)
    if save_dir and outcome.result is not None and outcome.completion is None:
        from mcpprobe.operations.saving import save_blocks

        save_blocks(outcome, save_dir)  # --save DIR
    return outcome


def checked_prompt(session: Session, outcome: InvokeOutcome, listing: Listing, name: str, pairs: list[str], *,
                   check: bool = True) -> tuple[list[str], dict[str, str]]:
    """The catalog and argument checks of every prompts/get (`get-prompt`, `load --get-prompt`): the
    prompt from the complete list, its declared argument names and the values given. With `check`,
    missing required and unknown arguments are refused (unless --force), nothing sent."""
    prompt = _find(listing, "name", name)
    found = prompt is not None
    if prompt is None:
        outcome.findings.append(_not_in_catalog(
            session, listing, "prompt", name, [p.get("name", "") for p in listing.items], "prompts/get"))
        prompt = {"name": name}
    outcome.item = prompt
    declared = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
    names = [a["name"] for a in declared]
    values = argmod.string_arguments(pairs)
    outcome.arguments = values
    if not check:
        return names, values
    missing = [a["name"] for a in declared if a.get("required") is True and a["name"] not in values]
    unknown = [k for k in values if k not in names] if found else []
    problems = []
    if missing:
        problems.append(f"missing required argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
                        f" (declared: {', '.join(names) or 'none'})")
    if problems:
        _refuse_arguments(session, outcome, f"prompt {name!r}: " + "; ".join(problems),
                          {"missing": missing, "unknown": unknown, "declared": names}, "prompts/get")
    return names, values


async def _complete(session: Session, outcome: InvokeOutcome, ref: dict[str, Any], spec: str, names: list[str],
                    values: dict[str, str], what: str) -> None:
    """completion/complete for one argument; `spec` is ARG=PREFIX (or just ARG)."""
    arg, _, prefix = spec.partition("=")
    if arg not in names:
        _refuse_arguments(session, outcome,
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
        outcome.timings.append(Timing("complete", (time.perf_counter() - started) * 1000))
    outcome.result = result
    completion = result.get("completion")
    if not isinstance(completion, dict) or not isinstance(completion.get("values"), list):
        raise ProtocolFailure("completion/complete: the result has no completion.values list")
    outcome.completion = completion


__all__ = ["Hooks", "InvokeOutcome", "call_tool", "read_resource", "get_prompt", "confirmation_needed",
           "checked_arguments", "checked_prompt", "confirm_call", "resolve_uri",
           "ProbeError"]
