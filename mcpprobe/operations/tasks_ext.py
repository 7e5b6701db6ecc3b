"""The tasks extension of the 2026-07-28 era (`io.modelcontextprotocol/tasks`, SEP-2663).

2026-07-28 took tasks out of the core protocol; the extension brings them back, reshaped:

- The server declares `capabilities.extensions["io.modelcontextprotocol/tasks"]` (no settings are
  defined: an empty object). The client declares it per request, in
  `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`. mcpprobe declares it on
  `tools/call` (and on the tasks/* requests that follow) when the server declared it, or with
  `--task`; `--no-task` leaves it out, to see what a client without tasks gets.
- The server alone decides whether a call becomes a task: there is no `task` param and no
  `execution.taskSupport`. A tool "requires" a task when the server answers -32021 (Missing
  Required Client Capability) to a call that did not declare the extension; it is "optional" when
  such a call gets its result at once.
- A task answer is `resultType: "task"` with the task's fields inline (`ttlMs`, `pollIntervalMs`).
  `tasks/get` is polled at `pollIntervalMs`; at `completed` its `result` is what `tools/call`
  would have returned, at `failed` its `error` is the JSON-RPC error, at `input_required` its
  `inputRequests` are answered (by the same broker as any request for input) with `tasks/update`.
  There is no `tasks/result` and no `tasks/list`.
- mcpprobe never leaves behind a task it started: when it stops waiting (Ctrl-C, the ttl, an
  error, a request for input it refuses) it sends `tasks/cancel`, whose answer is an empty ack.

Nothing here prints: statuses go to `Hooks.on_task_status` and onto the outcome's `TaskRun`.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from mcpprobe.client.capabilities import TASKS_EXTENSION, extension
from mcpprobe.client.era import META_CLIENT_CAPS
from mcpprobe.client.session import Session
from mcpprobe.errors import ProbeError, ProtocolFailure, Refused, RequestTimeout, RpcError, seconds
from mcpprobe.findings import Finding
from mcpprobe.operations.input import Hooks, InputBroker, Unattended, request_with_input
from mcpprobe.operations.outcome import InvokeOutcome
from mcpprobe.operations.tasks import CANCEL_WAIT, STATUSES, TERMINAL, TaskCall, TaskRun, judge_task_end

MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
SEP = "SEP-2663"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class UndeclaredTask(ProtocolFailure):
    """A `CreateTaskResult` answered to a `tools/call` that did not declare the extension: a MUST
    the server broke (SEP-2663), which `check` reports as a failure, not as a check that could not run."""


def offered(capabilities: dict[str, Any]) -> dict[str, Any] | None:
    """The extension's settings as the server declared them, or None when it did not."""
    return extension(capabilities, TASKS_EXTENSION)


def declares(session: Session, asked: bool | None) -> tuple[bool, list[Finding]]:
    """Whether `tools/call` declares the extension: yes when the server declared it, unless
    `--no-task`; `--task` without the server's declaration is refused (nothing sent) unless --force."""
    if asked is False:
        return False, []
    if offered(session.capabilities) is not None:
        return True, []
    if not asked:
        return False, []
    why = (f"the server did not declare the tasks extension '{TASKS_EXTENSION}' ({SEP}); in the 2026-07-28 era "
           "tasks are that extension, and the 2025-11-25 capability 'tasks.requests.tools.call' does not apply")
    detail = {"extension": TASKS_EXTENSION, "missing": f"extensions.{TASKS_EXTENSION}"}
    if not session.settings.force:
        raise Refused(f"--task: {why}. Nothing was sent; use --force to declare the extension anyway.", detail=detail)
    return True, [Finding("forced", f"{why}; tools/call declared it with --force", kind="tools", detail=detail)]


def declaring(params: dict[str, Any]) -> dict[str, Any]:
    """`params` with the extension declared in its per-request client capabilities."""
    meta = dict(params.get("_meta") or {})
    caps = dict(meta.get(META_CLIENT_CAPS) or {})
    caps["extensions"] = {**(caps.get("extensions") or {}), TASKS_EXTENSION: {}}
    meta[META_CLIENT_CAPS] = caps
    return {**params, "_meta": meta}


def refuse_list(session: Session) -> None:
    """`list tasks` in the 2026-07-28 era: the extension has no tasks/list ("Because there is no
    `tasks/list`, a server cannot inadvertently leak the existence of one caller's tasks", SEP-2663),
    so nothing is sent (exit 3), unless --force."""
    if session.settings.force:
        return
    ext = "declared" if offered(session.capabilities) is not None else "did not declare"
    raise Refused(
        f"tasks/list does not exist in the 2026-07-28 era: tasks are the extension '{TASKS_EXTENSION}' ({SEP}), "
        f"which has no list method (the server {ext} it). Nothing was sent; use --force to send tasks/list anyway.",
        detail={"method": "tasks/list", "missing": "tasks.list", "extension": TASKS_EXTENSION,
                "extensionDeclared": ext == "declared"})


async def call_tool(session: Session, outcome: InvokeOutcome, broker: InputBroker, params: dict[str, Any],
                    hooks: Hooks, declare: bool) -> dict[str, Any] | None:
    """`tools/call` in the 2026-07-28 era: the result at once, or followed through its task; None
    when the task ended with no result (cancelled, or input mcpprobe refused to give)."""
    try:
        result = await request_with_input(session, outcome, broker, "tools/call",
                                          declaring(params) if declare else params, hooks=hooks)
    except RpcError as exc:
        raise _explained(exc, declare) from None
    if result.get("resultType") != "task":
        return result
    if not declare:
        raise UndeclaredTask(
            "tools/call answered a task (resultType \"task\") to a request that did not declare the tasks extension: "
            "\"A server MUST NOT return CreateTaskResult to a client that did not include the extension capability "
            f"on its request\" ({SEP}); mcpprobe did not follow it",
            detail={"method": "tools/call", "taskId": result.get("taskId"), "extension": TASKS_EXTENSION})
    call = ExtensionTask(session, outcome, broker, hooks)
    outcome.task = call.start(result)
    final = await call.follow_to_end()
    judge_task_end(outcome.task, outcome.findings)
    return final


def _explained(exc: RpcError, declared: bool) -> RpcError:
    """-32021 naming the tasks extension: say what it means for this call."""
    data = exc.data if isinstance(exc.data, dict) else {}
    required = data.get("requiredCapabilities")
    extensions = required.get("extensions") if isinstance(required, dict) else None
    if exc.rpc_code != MISSING_REQUIRED_CLIENT_CAPABILITY or not isinstance(extensions, dict) \
            or TASKS_EXTENSION not in extensions:
        return exc
    if declared:
        why = "although mcpprobe declared it on this request"
    else:
        why = "which this call did not declare (--no-task, or the server did not declare the extension)"
    error = RpcError(exc.rpc_code, f"{exc.rpc_message} (the tool runs only as a task: the server requires the "
                                   f"tasks extension '{TASKS_EXTENSION}', {why})", exc.data, method=exc.method)
    error.detail = {**exc.detail, "extension": TASKS_EXTENSION, "declared": declared}
    return error


class ExtensionTask(TaskCall):
    """Drives one task of the extension from its CreateTaskResult to its result."""

    def __init__(self, session: Session, outcome: InvokeOutcome, broker: InputBroker, hooks: Hooks) -> None:
        super().__init__(session, outcome.findings, hooks.on_task_status)
        self.outcome = outcome
        self.broker = broker
        self.answered: set[str] = set()  # inputRequests keys answered: never twice (SEP-2663 asks to dedupe)
        self.latest: dict[str, Any] = {}

    def _check(self, method: str, task: Any) -> dict[str, Any]:
        """A task answer: usable when it names a task and a known status; each status's payload is a MUST."""
        if not isinstance(task, dict) or not isinstance(task.get("taskId"), str) or task.get("status") not in STATUSES:
            raise ProtocolFailure(f"{method}: the answer is not a task of the tasks extension (taskId and a status "
                                  f"of {', '.join(STATUSES)})", detail={"method": method})
        needs = {"completed": "result", "failed": "error", "input_required": "inputRequests"}.get(task["status"])
        problems = []
        if needs and not isinstance(task.get(needs), dict):
            problems.append(f"a {task['status']} task has no {needs} object")
        for key in ("createdAt", "lastUpdatedAt"):
            if not isinstance(task.get(key), str):
                problems.append(f"{key} is not a string")
        if "ttlMs" not in task:
            problems.append("ttlMs is missing (a number, or null for unlimited)")
        elif task["ttlMs"] is not None and not _number(task["ttlMs"]):
            problems.append("ttlMs is not a number (or null for unlimited)")
        if "pollIntervalMs" in task and not _number(task["pollIntervalMs"]):
            problems.append("pollIntervalMs is not a number")
        error = task.get("error")
        if task["status"] == "failed" and isinstance(error, dict) and not (
                _integer(error.get("code")) and isinstance(error.get("message"), str)):
            # "the `error` field **MUST** contain that JSON-RPC error" (SEP-2663); JSON-RPC 2.0 5.1:
            # its code "MUST be an integer", its message "A String"
            problems.append("the failed task's error is not a JSON-RPC error (an integer code and a string message)")
        expected = "task" if method == "tools/call" else "complete"
        if task.get("resultType", "complete") != expected:
            problems.append(f"resultType is {task.get('resultType')!r}, not {expected!r}")
        if problems:
            self._violation(method, problems)
        return task

    def _violation(self, method: str, problems: list[str]) -> None:
        if method in self.warned:
            return
        self.warned.add(method)
        self.findings.append(Finding(
            "protocol-violation", f"{method}: the task does not match the tasks extension ({SEP}): "
            + "; ".join(problems), kind="tools", detail={"method": method, "errors": problems}))

    def _seen(self, task: dict[str, Any], via: str, at: float | None = None) -> None:
        """What a task answer says, in the shape `TaskCall.see` keeps (ttl, pollInterval)."""
        self.latest = task
        self.see({**task, "ttl": task.get("ttlMs"), "pollInterval": task.get("pollIntervalMs")}, via, at)

    def start(self, created: dict[str, Any]) -> TaskRun:
        arrived = time.monotonic()
        task = self._check("tools/call", created)
        self.run = TaskRun(task["taskId"], task, sent=self.sent, created_at=arrived)
        self._seen(task, "tools/call", at=arrived)
        return self.run

    async def follow_to_end(self) -> dict[str, Any] | None:
        """Poll `tasks/get` to a terminal status, answering requests for input on the way."""
        run = self.run
        assert run is not None
        last = run.created_at
        try:
            while run.status not in TERMINAL:
                if run.status == "input_required" and not await self._give_input():
                    await self._stop()
                    return None
                expires = self._expires()
                wait = max(0.0, last + self._poll_wait() - time.monotonic())
                if expires is not None:
                    wait = min(wait, max(0.0, expires - time.monotonic()))
                await anyio.sleep(wait)
                if expires is not None and time.monotonic() >= expires:
                    raise self._expired()
                answer = await self.session.request("tasks/get", declaring({"taskId": run.task_id}))
                last = time.monotonic()
                run.polls += 1
                self._seen(self._check("tasks/get", answer), "tasks/get")
        except BaseException:
            if run.status not in TERMINAL:
                await self._stop()
            raise
        if run.status == "failed":
            error = got if isinstance(got := self.latest.get("error"), dict) else {}
            code: int = error["code"] if isinstance(error.get("code"), int) else -32603
            message: str = error["message"] if isinstance(error.get("message"), str) else "(no message)"
            failure = RpcError(code, message, error.get("data"), method="tasks/get")
            failure.detail["taskId"] = run.task_id
            raise failure
        if run.status == "cancelled":
            return None
        result = self.latest.get("result")
        return result if isinstance(result, dict) else None

    async def _give_input(self) -> bool:
        """Answer the task's new inputRequests with tasks/update; False when mcpprobe refused one."""
        run = self.run
        assert run is not None
        requests = self.latest.get("inputRequests")
        responses: dict[str, Any] = {}
        for key, request in (requests.items() if isinstance(requests, dict) else ()):
            if key in self.answered:
                continue
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                raise ProtocolFailure(f"tasks/get: inputRequests[{key!r}] is not a request object",
                                      detail={"method": "tasks/get", "taskId": run.task_id})
            answer = self.broker.answer(request["method"], request.get("params") or {}, via="task input_required",
                                        key=key)
            if answer is None:
                return False
            responses[key] = answer
            self.answered.add(key)
        if responses:
            await self.session.request("tasks/update", declaring({"taskId": run.task_id, "inputResponses": responses}))
        return True

    async def _stop(self) -> None:
        limit = min(CANCEL_WAIT, self.session.settings.timeout)
        with anyio.CancelScope(shield=True), anyio.move_on_after(limit):
            await self.cancel()

    async def cancel(self) -> None:
        """tasks/cancel: an empty ack (the cancellation is cooperative and eventually consistent);
        the extension always has it. No tasks/get follows (SEP-2663: "The client does not need to poll")."""
        run = self.run
        assert run is not None
        run.cancel = {"sent": True}
        try:
            await self.session.request("tasks/cancel", declaring({"taskId": run.task_id}),
                                       timeout=min(CANCEL_WAIT, self.session.settings.timeout))
        except ProbeError as exc:
            run.cancel["error"] = exc.message
            return
        run.cancel["acknowledged"] = True


async def follow_unattended(session: Session, created: dict[str, Any], timeout: float) -> dict[str, Any]:
    """A task `tools/call` created, followed to its end as `call` follows one (polls at its
    pollIntervalMs, cancelled when abandoned) with no one to answer it and at most `timeout`
    seconds in all: `load --call`, whose request is the whole round trip. The result; a task that
    ended without one (cancelled, input refused) as `{"isError": true}`, the tool having given none."""
    outcome = InvokeOutcome("load", item_kind="tools")
    call = ExtensionTask(session, outcome, InputBroker(outcome, session.settings), Unattended())
    outcome.task = call.start(created)
    try:
        with anyio.fail_after(timeout):
            result = await call.follow_to_end()
    except TimeoutError:
        raise RequestTimeout(f"task {outcome.task.task_id} did not end within {seconds(timeout)} s",
                             detail={"method": "tasks/get", "taskId": outcome.task.task_id}) from None
    return result if result is not None else {"isError": True, "content": []}
