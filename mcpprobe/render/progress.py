"""A spinner on a terminal's stderr naming what mcpprobe waits for: the server starting, its
answer to server/discover or initialize, the pages of each list. Never in a pipe, never with a
machine-readable format: the caller only makes one when stderr is a terminal and output is human.

It learns the phase from the messages sent, as --trace does, so the core knows nothing of it.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text

from mcpprobe.client.kinds import LIST_KINDS
from mcpprobe.render.cells import Safe

SPINNER = "dots"
LISTED_BY = {kind.list_method: kind.name for kind in LIST_KINDS.values()}


class PhaseSpinner:
    def __init__(self, console: Console, target: str, safe: Safe) -> None:
        self.console = console
        self.safe = safe
        self.phase = f"starting {safe(target, 60)}"
        self.pages: dict[str, int] = {}
        self.status: Any = None

    def start(self) -> None:
        self.status = self.console.status(Text(self.phase), spinner=SPINNER)
        self.status.start()
        self.status.update(spinner=SPINNER)  # drawn now, not at the first frame: the phase may be gone by then

    def stop(self) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None

    def watch(self, inner: Any = None) -> Any:
        """A session tracer that moves the spinner on each request sent, then hands on to `inner`."""

        def trace(direction: str, message: Any) -> None:
            if inner is not None:
                inner(direction, message)
            if direction == "send" and isinstance(message, dict) and "id" in message:
                self._sent(str(message.get("method")))

        return trace

    def _sent(self, method: str) -> None:
        kind = LISTED_BY.get(method)
        if kind is not None:
            self.pages[kind] = self.pages.get(kind, 0) + 1
            self.phase = "listing " + ", ".join(f"{name} page {n}" for name, n in self.pages.items())
        elif method in ("server/discover", "initialize"):
            self.phase = f"waiting for the answer to {method}"
        else:
            return
        if self.status is not None:
            # Naming the spinner again redraws at once; the text alone would wait for the next frame.
            self.status.update(Text(self.phase), spinner=SPINNER)


class FleetSpinner(PhaseSpinner):
    """A fleet's count on a terminal's stderr, as each server's probe ends: how many servers are
    done, how many of those failed, and the last one."""

    def __init__(self, console: Console, total: int, safe: Safe) -> None:
        super().__init__(console, "", safe)
        self.total, self.finished, self.failing = total, 0, 0
        self.phase = f"probing {total} servers"

    def done(self, report: Any) -> None:
        self.finished += 1
        if int(report.exit_code) != 0:
            self.failing += 1
        self.phase = (f"done {self.finished} of {self.total} servers, {self.failing} failing; "
                      f"last: {self.safe(report.member.label, 40)}")
        if self.status is not None:
            self.status.update(Text(self.phase), spinner=SPINNER)
