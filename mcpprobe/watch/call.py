"""--call TOOL [KEY=VALUE ...]: after each connection's first listing, call a tool through the same
catalog, argument and confirmation checks as `call` (mcpprobe.operations.invoke), then report its result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcpprobe.client.catalog import Items, Listing
from mcpprobe.client.session import Session
from mcpprobe.errors import ProbeError, Refused, UsageProblem
from mcpprobe.watch.events import Events
from mcpprobe.watch.model import KindState, Link, WatchOptions


class Caller:
    def __init__(self, events: Events, options: WatchOptions,
                 ask: Callable[[dict[str, Any], dict[str, Any]], bool] | None,
                 preview: Callable[..., None] | None) -> None:
        self.events = events
        self.options = options
        self._ask = ask  # the confirmation question, on a terminal
        self._preview = preview
        self._confirmed: set[str] = set()  # tools confirmed once: not asked again on a reconnect

    async def call(self, link: Link, session: Session, tools: KindState, tool: str, pairs: tuple[str, ...],
                   reconnected: bool) -> None:
        """Refused on the first connection ends the watch (exit 3); on a reconnect, an error event."""
        from mcpprobe.operations.checks import checked_arguments, confirm_call
        from mcpprobe.operations.input import Hooks
        from mcpprobe.operations.outcome import InvokeOutcome

        listing = Listing("tools", tools.declared, state="complete" if tools.list_completed else "incomplete",
                          items=Items((tools.items or {}).values()))
        outcome = InvokeOutcome("call", item_kind="tools")
        hooks = Hooks(yes=self.options.yes or tool in self._confirmed, ask=self._ask, preview=self._preview)
        try:
            session.check("tools/call")
            _, arguments = await checked_arguments(session, outcome, listing, tool, list(pairs), {})
            await confirm_call(session, outcome, outcome.item or {"name": tool}, arguments, hooks)
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
        try:
            result = await session.request("tools/call", {"name": tool, "arguments": arguments})
        except ProbeError as exc:
            link.dropped(exc)
            self.events.error("tools", exc, f"--call {tool}")
            return
        text = next((c.get("text") for c in result.get("content", []) if isinstance(c, dict)
                     and isinstance(c.get("text"), str)), None) if isinstance(result.get("content"), list) else None
        self.events.emit("call", "tools", tool=tool, isError=result.get("isError") is True,
                         text=self.options.redactor(text)[:500] if isinstance(text, str) else None)
