"""The one way out of a watch: every event is a JSON-ready dict handed to `emit`, counted for
--count, and the first reason to stop wins. Nothing in the watch prints."""

from __future__ import annotations

from typing import Any

import anyio

from mcpprobe.client.catalog import KINDS
from mcpprobe.errors import ProbeError
from mcpprobe.exitcodes import ExitCode
from mcpprobe.findings import Finding
from mcpprobe.watch.model import Emit, WatchOptions, WatchResult, now_iso

# Events that --count counts: what happened after the first snapshot, not bookkeeping.
COUNTED = frozenset({"list_changed", "diff", "stale", "resource_updated", "log", "reconnect",
                     "capabilities_changed", "error", "finding"})


class Events:
    def __init__(self, emit: Emit, options: WatchOptions) -> None:
        self._emit = emit
        self.options = options
        self.result = WatchResult(relists=dict.fromkeys(KINDS, 0))
        self.connection = 0  # the number of the current connection, in every event
        self.stopped = False
        self.scope: anyio.CancelScope | None = None  # the run's, cancelled by stop()
        self._counted = 0
        self._output_closed = False
        self._findings_seen: set[tuple[str, str, str]] = set()  # on this connection

    def next_connection(self) -> int:
        self.connection += 1
        self._findings_seen = set()
        return self.connection

    def emit(self, event: str, kind: str | None = "server", **fields: Any) -> None:
        data: dict[str, Any] = {"ts": now_iso(), "event": event, "kind": kind,
                                "connection": self.connection, **fields}
        if self._output_closed:
            return
        self.result.events += 1
        try:
            self._emit(data)
        except BrokenPipeError:
            # The reader went away (`| head -3`): nothing more can be said; stop quietly.
            self._output_closed = True
            self.stop("output-closed", ExitCode.OK)
            return
        if event in COUNTED and not self.stopped:
            self._counted += 1
            if self.options.count is not None and self._counted >= self.options.count:
                self.stop("count", ExitCode.OK)

    def stop(self, reason: str, code: ExitCode, error: ProbeError | None = None) -> None:
        """End the watch at the next await. The first reason wins."""
        if self.stopped:
            return
        self.stopped = True
        self.result.reason, self.result.exit_code = reason, int(code)
        self.result.error = error
        if self.scope is not None:
            self.scope.cancel()

    def finding(self, finding: Finding) -> None:
        """A finding event, once per connection for the same code, kind and message."""
        key = (finding.code, finding.kind, finding.message)
        if key in self._findings_seen:
            return
        self._findings_seen.add(key)
        data: dict[str, Any] = {"code": finding.code, "severity": str(finding.severity or "info"),
                                "message": finding.message}
        if finding.detail:
            data["detail"] = dict(finding.detail)
        self.emit("finding", finding.kind, **data)

    def error(self, kind: str, exc: ProbeError, what: str) -> None:
        """An error event for one request that failed while the connection goes on."""
        self.emit("error", kind, code=exc.code, message=f"{what}: {exc.message}")

