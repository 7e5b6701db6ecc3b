"""--call TOOL [KEY=VALUE ...]: after each connection's first listing, call a tool through the same
catalog, argument and confirmation checks as `call` (mcpprobe.operations.checks), sent by the same
rule (mcpprobe.operations.invoke.send_tool_call: a task where the server makes one, followed to its
result; a HeaderMismatch answered by one re-list and one retry), then report its result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpprobe.client.catalog import Items, Listing
from mcpprobe.client.session import Session
from mcpprobe.errors import ProbeError, Refused, UsageProblem
from mcpprobe.watch.events import Events
from mcpprobe.watch.model import KindState, Link, WatchOptions

if TYPE_CHECKING:
    from mcpprobe.operations.arguments import ToolArguments
    from mcpprobe.operations.input import Confirmer


class CallConfirmer:
    """Who confirms one --call (mcpprobe.operations.input.Confirmer): the watch's own confirmer (the
    terminal's), if any, with `yes` also for a tool a person confirmed on an earlier connection, so
    that a reconnect does not ask again."""

    def __init__(self, confirmer: Confirmer | None, *, yes: bool) -> None:
        self.confirmer = confirmer
        self.yes = yes
        self.interactive = confirmer is not None and confirmer.interactive

    def on_preview(self, tool: dict[str, Any], arguments: dict[str, Any], how: str, server: dict[str, Any]) -> None:
        if self.confirmer is not None:
            self.confirmer.on_preview(tool, arguments, how, server)

    def ask(self, tool: dict[str, Any], arguments: dict[str, Any]) -> bool:
        return self.confirmer is not None and self.confirmer.ask(tool, arguments)


class Caller:
    def __init__(self, events: Events, options: WatchOptions, confirmer: Confirmer | None) -> None:
        self.events = events
        self.options = options
        self._confirmer = confirmer  # the preview and the question, on a terminal
        self._confirmed: set[str] = set()  # tools confirmed once: not asked again on a reconnect

    async def call(self, link: Link, session: Session, tools: KindState, tool: str, given: ToolArguments,
                   reconnected: bool) -> None:
        """Refused on the first connection ends the watch (exit 3); on a reconnect, an error event."""
        from mcpprobe.operations.checks import checked_arguments, confirm_call
        from mcpprobe.operations.input import InputBroker, Unattended
        from mcpprobe.operations.invoke import send_tool_call, task_rule
        from mcpprobe.operations.outcome import InvokeOutcome

        listing = Listing("tools", tools.declared, state="complete" if tools.list_completed else "incomplete",
                          items=Items((tools.items or {}).values()))
        outcome = InvokeOutcome("call", item_kind="tools")
        confirmer = CallConfirmer(self._confirmer, yes=self.options.yes or tool in self._confirmed)
        try:
            session.check("tools/call")
            item, arguments = await checked_arguments(session, outcome, listing, tool, given)
            as_task = task_rule(session, outcome, item, None)  # as `call` decides (a task where the server makes one)
            await confirm_call(session, outcome, outcome.item or {"name": tool}, arguments, confirmer)
        except ProbeError as exc:
            if not reconnected and isinstance(exc, Refused | UsageProblem):
                raise type(exc)(f"--call {tool}: {exc.message}", code=exc.code, detail=exc.detail,
                                severity=exc.severity) from None
            self.events.error("tools", exc, f"--call {tool}")
            return
        if outcome.confirmation == "confirmed":
            self._confirmed.add(tool)
        for finding in outcome.findings:
            self.events.finding(finding)
        reported = len(outcome.findings)
        try:
            result = await send_tool_call(session, outcome, InputBroker(outcome, session.settings),
                                          {"name": tool, "arguments": arguments}, Unattended(), as_task)
        except ProbeError as exc:
            link.dropped(exc)
            self.events.error("tools", exc, f"--call {tool}")
            return
        finally:
            for finding in outcome.findings[reported:]:  # what the task (if any) showed on the way
                self.events.finding(finding)
        run = outcome.task
        task = {"taskId": run.task_id, "status": run.status, "polls": run.polls} if run is not None else None
        if result is None:  # a task that ended without a result (cancelled, or input refused)
            self.events.emit("call", "tools", tool=tool, isError=True, text=None,
                             **({"task": task} if task else {}))
            return
        text = next((c.get("text") for c in result.get("content", []) if isinstance(c, dict)
                     and isinstance(c.get("text"), str)), None) if isinstance(result.get("content"), list) else None
        self.events.emit("call", "tools", tool=tool, isError=result.get("isError") is True,
                         text=self.options.redactor(text)[:500] if isinstance(text, str) else None,
                         **({"task": task} if task else {}))
