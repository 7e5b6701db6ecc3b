"""Task-augmented `tools/call` (protocol 2025-11-25, experimental; basic/utilities/tasks.mdx).

A tool runs as a task when its `execution.taskSupport` is "required", or "optional" and the user
asked with `--task`, and the server declared `tasks.requests.tools.call`. Anything else that
asks for a task is refused before sending (exit 3), unless --force.

The flow: `tools/call` with a `task` param answers a `CreateTaskResult`; `tasks/get` is polled
at the task's own `pollInterval`, the first one counted from the `CreateTaskResult`, each next one
from the previous answer (a `notifications/tasks/status` naming a terminal or
input_required status wakes the poller early; it is never relied on); at a terminal status, or
at input_required (the server then delivers its requests through `tasks/result`), `tasks/result`
fetches what the `tools/call` would have returned. Each request has its own `--timeout`; the
wait for the whole task ends when its ttl (as granted by the server, counted from the
`CreateTaskResult`) runs out. mcpprobe never leaves behind a task it started: when it stops
waiting (Ctrl-C, ttl, an error) it sends `tasks/cancel` if the server declared `tasks.cancel`.

Each answer is checked against the 2025-11-25 schema by hand first; the SDK's models, slow to load,
are asked only about an answer that check doubts, to explain it.

Like `mcpprobe.operations.invoke`, nothing here prints: the status history is kept on the outcome, and
`Hooks.task_status` shows it as it happens.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import anyio

from mcpprobe.client.capabilities import missing_for, task_missing_for
from mcpprobe.client.session import Session
from mcpprobe.errors import ProbeError, ProtocolFailure, Refused, RequestTimeout, seconds
from mcpprobe.findings import Finding

TERMINAL = ("completed", "failed", "cancelled")
STATUSES = ("working", "input_required", *TERMINAL)
RELATED_TASK = "io.modelcontextprotocol/related-task"
DEFAULT_POLL_MS = 1000  # when the server suggests no pollInterval
MIN_POLL_MS = 100  # a pollInterval of 0 must not become a busy loop
MAX_POLL_MS = 30_000  # nor a huge one a silent wait
MAX_MS = 2 ** 53  # the longest ttl or pollInterval taken (JSON's interoperable integers); past it: a finding
CANCEL_WAIT = 5.0  # seconds for tasks/cancel once mcpprobe stops waiting


@dataclass
class TaskRun:
    """One task as mcpprobe saw it: its id, every status it was seen in, and how it ended."""

    task_id: str
    created: dict[str, Any]  # the Task of the CreateTaskResult, as sent
    status: str = "working"
    status_message: str | None = None
    ttl: int | None = None
    # A ttl the server sent that mcpprobe could not read (401 digits) is not "no ttl", a wait for ever:
    # the run's --timeout (ms) bounds the wait instead; `ttl` stays None, as the server's was unusable.
    stand_in: int | None = None
    poll_interval: int | None = None
    history: list[dict[str, Any]] = field(default_factory=list)
    polls: int = 0
    cancel: dict[str, Any] | None = None  # the tasks/cancel mcpprobe sent, and its answer
    sent: float = field(default_factory=time.monotonic)  # when tools/call was sent: history's "ms" count from it
    created_at: float = field(default_factory=time.monotonic)  # when the CreateTaskResult came: the ttl counts

    def to_json(self) -> dict[str, Any]:
        return {"taskId": self.task_id, "status": self.status, "statusMessage": self.status_message,
                "ttl": self.ttl, "pollInterval": self.poll_interval, "polls": self.polls,
                "history": self.history, "cancel": self.cancel, "created": self.created}


def task_support(tool: dict[str, Any]) -> str | None:
    """The tool's `execution.taskSupport` as declared; None when absent (which means "forbidden")."""
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if isinstance(value, str) else None


def wants_task(session: Session, tool: dict[str, Any], asked: bool | None) -> tuple[bool, list[Finding]]:
    """Whether to call `tool` as a task, and the `forced` findings when --force overrides a refusal.

    Raises Refused (nothing sent) when a task is asked for (`--task`, or taskSupport "required")
    but the tool or the server does not allow it. `asked`: --task (True), --no-task (False), neither.
    (The 2026-07-28 era asks `mcpprobe.operations.tasks_ext.declares` instead.)
    """
    support = task_support(tool)
    name = tool.get("name")
    if asked is False and support == "required":
        raise Refused(f"--no-task: tool {name!r} must be called as a task (execution.taskSupport is 'required'). "
                      "Nothing was sent.", detail={"tool": name, "taskSupport": support})
    if support != "required" and not asked:
        return False, []
    problems = []
    if asked and support not in ("optional", "required"):
        problems.append(f"tool {name!r} does not run as a task (execution.taskSupport is "
                        f"{repr(support) if support else 'absent, which means forbidden'})")
    missing = task_missing_for(session.capabilities, "tools/call")
    if missing is not None:
        problems.append(f"the server did not declare '{missing}'")
    if not problems:
        return True, []
    why = "; ".join(problems)
    if support == "required" and not asked:
        why = f"tool {name!r} must be called as a task (execution.taskSupport is 'required'), but {why}"
    detail = {"tool": name, "taskSupport": support, "missing": missing}
    if not session.settings.force:
        raise Refused(f"{why}. Nothing was sent; use --force to send tools/call as a task anyway.",
                      detail=detail)
    return True, [Finding("forced", f"{why}; tools/call was sent as a task with --force", kind="tools",
                          detail=detail)]


@cache
def _adapter(name: str) -> Any:
    """The SDK's model of a task answer, built once: only an answer the quick check doubts needs it."""
    import mcp_types._v2025_11_25 as wire
    from pydantic import TypeAdapter

    return TypeAdapter(getattr(wire, name))


def _surely_valid(model: str, value: Any) -> bool:
    """The quick check of a CreateTaskResult or GetTaskResult: True only for answers the SDK's
    models accept too (its Task check is `mcpprobe.safety.schema`'s, proven against them). Loading those
    models costs 0.2-0.4 s of CPU, which would delay the first tasks/get past the pollInterval."""
    from mcpprobe.safety.schema import surely_valid

    if not isinstance(value, dict):
        return False
    meta = value.get("_meta")
    if meta is not None and not isinstance(meta, dict):
        return False
    return surely_valid("tasks", value.get("task") if model == "CreateTaskResult" else value, modern=False)


def _violations(model: str, value: Any) -> list[str]:
    """What is wrong with `value` as the 2025-11-25 schema's `model`; empty when nothing is."""
    if _surely_valid(model, value):
        return []
    from pydantic import ValidationError

    try:
        _adapter(model).validate_python(value, by_name=False)
    except ValidationError as exc:
        return [f"{'.'.join(str(p) for p in e['loc']) or '(result)'}: {e['msg']}"
                for e in exc.errors(include_url=False)[:5]]
    return []


class TaskCall:
    """Drives one task from its CreateTaskResult to the tools/call result."""

    def __init__(self, session: Session, findings: list[Finding],
                 on_status: Callable[[dict[str, Any]], None] | None) -> None:
        self.session = session
        self.findings = findings
        self.on_status = on_status
        self.run: TaskRun | None = None
        self.sent = time.monotonic()  # the TaskCall is made just before tools/call is sent
        self.wake = anyio.Event()
        self.warned: set[str] = set()

    # ----- what the server says about the task -----

    def _violation(self, method: str, problems: list[str]) -> None:
        if method in self.warned:
            return
        self.warned.add(method)
        self.findings.append(Finding(
            "protocol-violation", f"{method}: the result does not match the 2025-11-25 schema: " + "; ".join(problems),
            kind="tools", detail={"method": method, "errors": problems}))

    def _task_from(self, method: str, value: Any, model: str) -> dict[str, Any]:
        """The task in a result: checked against the schema; usable if it names a known status."""
        problems = _violations(model, value)
        task = value.get("task") if model == "CreateTaskResult" and isinstance(value, dict) else value
        if not isinstance(task, dict) or task.get("status") not in STATUSES or not isinstance(task.get("taskId"), str):
            raise ProtocolFailure(f"{method}: the answer is not a task: " + "; ".join(problems or ["no task"]),
                                  detail={"method": method, "errors": problems})
        if problems:
            self._violation(method, problems)
        return task

    def see(self, task: dict[str, Any], via: str, at: float | None = None) -> None:
        """Record what a task answer says; a history entry when the status or its message changed."""
        run = self.run
        assert run is not None
        if task.get("taskId") != run.task_id:
            return
        status, message = task.get("status"), task.get("statusMessage")
        if run.status in TERMINAL and status != run.status:
            self.findings.append(Finding(
                "protocol-violation", f"task {run.task_id} went from {run.status} to {status}: terminal "
                "statuses must not change", kind="tools", detail={"from": run.status, "to": status, "via": via}))
            return
        ttl = task.get("ttl")
        # Any number, not only an int: a ttl of 1e400 (read as infinity) ignored left no ttl, a wait for ever.
        if "ttl" in task and (ttl is None or isinstance(ttl, int | float) and not isinstance(ttl, bool)):
            run.ttl = self._milliseconds(task["ttl"], "ttl", via, None) if task["ttl"] is not None else None
            run.stand_in = int(self.session.settings.timeout * 1000) \
                if task["ttl"] is not None and run.ttl is None else None
        if isinstance(task.get("pollInterval"), int | float):
            run.poll_interval = self._milliseconds(task["pollInterval"], "pollInterval", via, run.poll_interval)
        changed = not run.history or (status, message) != (run.status, run.status_message)
        run.status = status if isinstance(status, str) else run.status
        run.status_message = message if isinstance(message, str) else None
        if changed:
            entry = {"ms": round(((at or time.monotonic()) - run.sent) * 1000, 1), "status": run.status,
                     "statusMessage": run.status_message, "via": via}
            run.history.append(entry)
            if self.on_status is not None:
                self.on_status(entry)

    def _milliseconds(self, value: Any, name: str, via: str, default: int | None) -> int | None:
        """A task's ttl or pollInterval as whole milliseconds, when it is a finite number from 0 to
        MAX_MS; otherwise a number-out-of-range finding and `default` (no ttl; the default poll)."""
        from mcpprobe.safety.numbers import in_range, shown

        number = in_range(value, 0, MAX_MS)
        if number is not None:
            return int(number)
        if any(f.code == "number-out-of-range" and f.detail.get("field") == name for f in self.findings):
            return default  # said once: every later answer repeats it
        said = shown(value)
        timeout = seconds(self.session.settings.timeout)
        taken = f"none, and the wait bounded by --timeout ({timeout} s)" if name == "ttl" else "not given"
        self.findings.append(Finding(
            "number-out-of-range", f"{via}: the task's {name} ({said}) is not a number of milliseconds from 0 to "
            f"{MAX_MS}; taken as {taken}", kind="tools",
            detail={"field": name, "via": via, "sample": said}))
        return default

    def on_notification(self, method: str, params: dict[str, Any]) -> None:
        if method != "notifications/tasks/status" or self.run is None or params.get("taskId") != self.run.task_id:
            return
        if params.get("status") not in STATUSES:
            return
        self.see(params, "notification")
        if params.get("status") in (*TERMINAL, "input_required"):
            self.wake.set()

    # ----- the flow -----

    def start(self, created: dict[str, Any]) -> TaskRun:
        arrived = time.monotonic()
        task = self._task_from("tools/call", created, "CreateTaskResult")
        self.run = TaskRun(task["taskId"], task, sent=self.sent, created_at=arrived)
        self.see(task, "tools/call", at=arrived)
        return self.run

    def _poll_wait(self) -> float:
        run = self.run
        assert run is not None
        interval = run.poll_interval if run.poll_interval is not None else DEFAULT_POLL_MS
        return min(max(interval, MIN_POLL_MS), MAX_POLL_MS) / 1000

    def _expires(self) -> float | None:
        run = self.run
        assert run is not None
        limit = run.ttl if run.ttl is not None else run.stand_in
        return None if limit is None else run.created_at + limit / 1000

    def _expired(self) -> RequestTimeout:
        """The wait for the task is over: its ttl, or --timeout standing in for one mcpprobe could not read."""
        run = self.run
        assert run is not None
        if run.ttl is None and run.stand_in is not None:
            return RequestTimeout(
                f"task {run.task_id} was still {run.status} after --timeout ({seconds(run.stand_in / 1000)} s), "
                "which bounds the wait for a task whose ttl mcpprobe could not read; mcpprobe stopped waiting",
                detail={"method": "tasks/get", "taskId": run.task_id, "ttl": None, "timeout": run.stand_in / 1000})
        return RequestTimeout(
            f"task {run.task_id} was still {run.status} when its ttl of {seconds((run.ttl or 0) / 1000)} s "
            f"ran out; mcpprobe stopped waiting", detail={"method": "tasks/get", "taskId": run.task_id, "ttl": run.ttl})

    async def follow(self) -> dict[str, Any]:
        """Poll to a terminal (or input_required) status, then fetch the result. Cancels the task
        on the way out unless it reached a terminal status."""
        run = self.run
        assert run is not None
        last = run.created_at  # the first pollInterval counts from the task's creation, later ones from the answer
        try:
            while run.status not in TERMINAL and run.status != "input_required":
                expires = self._expires()
                wait = max(0.0, last + self._poll_wait() - time.monotonic())
                if expires is not None:
                    wait = min(wait, max(0.0, expires - time.monotonic()))
                with anyio.move_on_after(wait):
                    await self.wake.wait()
                self.wake = anyio.Event()
                if expires is not None and time.monotonic() >= expires:
                    raise self._expired()
                answer = await self.session.request("tasks/get", {"taskId": run.task_id})
                last = time.monotonic()
                run.polls += 1
                self.see(self._task_from("tasks/get", answer, "GetTaskResult"), "tasks/get")
            if run.status == "cancelled":
                return {}
            result = await self.session.request("tasks/result", {"taskId": run.task_id})
            self._check_related(result)
            if run.status not in TERMINAL:
                await self._settle()
            return result
        except BaseException:
            if run.status not in TERMINAL:
                limit = min(CANCEL_WAIT, self.session.settings.timeout)
                with anyio.CancelScope(shield=True), anyio.move_on_after(limit):
                    await self.cancel()
            raise

    def _check_related(self, result: dict[str, Any]) -> None:
        """tasks/result MUST carry the related-task _meta (tasks.mdx, "Related Task Metadata")."""
        run = self.run
        assert run is not None
        meta = got if isinstance(got := result.get("_meta"), dict) else {}
        related = meta.get(RELATED_TASK)
        if not isinstance(related, dict) or related.get("taskId") != run.task_id:
            self.findings.append(Finding(
                "protocol-violation", f"tasks/result: _meta lacks '{RELATED_TASK}' with taskId {run.task_id!r}",
                kind="tools", detail={"method": "tasks/result", "found": related}))

    async def _settle(self) -> None:
        """After tasks/result answered an input_required task: one tasks/get for the final status."""
        run = self.run
        assert run is not None
        try:
            answer = await self.session.request("tasks/get", {"taskId": run.task_id})
        except ProbeError:
            return
        run.polls += 1
        if isinstance(answer, dict) and answer.get("status") in STATUSES:
            self.see(answer, "tasks/get")

    async def cancel(self) -> None:
        """tasks/cancel, when the server declared it; what happened is kept on the run."""
        run = self.run
        assert run is not None
        missing = missing_for(self.session.capabilities, "tasks/cancel")
        if missing is not None and not self.session.settings.force:
            run.cancel = {"sent": False, "reason": f"the server did not declare '{missing}'"}
            return
        run.cancel = {"sent": True}
        try:
            answer = await self.session.request("tasks/cancel", {"taskId": run.task_id},
                                                timeout=min(CANCEL_WAIT, self.session.settings.timeout))
        except ProbeError as exc:
            run.cancel["error"] = exc.message
            return
        run.cancel["status"] = answer.get("status") if isinstance(answer, dict) else None
        if isinstance(answer, dict) and answer.get("status") in STATUSES:
            self.see(answer, "tasks/cancel")


def judge_task_end(run: TaskRun, findings: list[Finding]) -> None:
    """A task that someone else cancelled has no result: say so (exit 1)."""
    if run.status == "cancelled" and (run.cancel is None or not run.cancel.get("sent")):
        why = f": {run.status_message}" if run.status_message else ""
        findings.append(Finding("task-cancelled", f"task {run.task_id} was cancelled by the server{why}",
                                kind="tools", detail={"taskId": run.task_id, "statusMessage": run.status_message}))
