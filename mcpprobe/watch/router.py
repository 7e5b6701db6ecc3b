"""The notification router: runs on the connection's reader for every notification, in O(1),
never blocking and never sending. It decides whether a notification was promised and, if so,
only counts it and wakes the kind's worker (mcpprobe.watch.lists) or the update reporter
(mcpprobe.watch.subscriptions). A notification nobody promised is a finding, never a trigger."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from mcpprobe.findings import Finding
from mcpprobe.testhooks import crash_point
from mcpprobe.watch.events import Events
from mcpprobe.watch.logs import LogGate
from mcpprobe.watch.model import KindState, Link, WatchOptions

LIST_CHANGED = {
    "notifications/tools/list_changed": "tools",
    "notifications/prompts/list_changed": "prompts",
    "notifications/resources/list_changed": "resources",
}


class Router:
    def __init__(self, events: Events, options: WatchOptions, kinds: dict[str, KindState]) -> None:
        self.events = events
        self.options = options
        self.kinds = kinds
        self.link: Link | None = None  # the current connection: notifications of an older one are dropped
        self.logs = LogGate()

    def installer(self, link: Link) -> Callable[[Any], None]:
        """What `open_session` runs before the first message is sent, so nothing arrives unrouted."""
        self.link, self.logs = link, LogGate()

        def install(conn: Any) -> None:
            conn.notification_handlers.append(lambda method, params: self.on_notification(link, method, params))
        return install

    def on_notification(self, link: Link, method: str, params: dict[str, Any]) -> None:
        if link is not self.link or self.events.stopped:
            return
        # A bug here ends the reader, and the connection raises it when it closes: exit 70 at the edge.
        crash_point("router")
        self._dispatch(link, method, params)

    def _dispatch(self, link: Link, method: str, params: dict[str, Any]) -> None:
        kind = LIST_CHANGED.get(method)
        if kind is not None:
            self._on_list_changed(link, kind, method, params)
        elif method == "notifications/resources/updated":
            self._on_updated(link, params)
        elif method == "notifications/message":
            self._on_log(params)
        elif method == "notifications/subscriptions/acknowledged":
            self._on_ack(link, params)

    def _on_list_changed(self, link: Link, kind: str, method: str, params: dict[str, Any]) -> None:
        promised = link.caps_known and self.kinds[kind].promised
        if promised and not link.era.carried_by(params, link.listen_id):
            promised = False
        if not promised:
            link.unpromised[kind] = link.unpromised.get(kind, 0) + 1
            if link.unpromised[kind] == 1 and link.caps_known:
                self._unpromised_finding(link, kind, method)
            return
        link.pending[kind] += 1
        link.poke(kind, "notification")

    def _unpromised_finding(self, link: Link, kind: str, method: str) -> None:
        capability = self.kinds[kind]
        if link.era.listens:
            why = ("outside the subscriptions/listen stream, or of a type the listen acknowledgement did not honour")
        elif not capability.declared:
            why = f"although it did not declare '{kind}'"
        else:
            why = f"although it declared '{kind}' without listChanged: true"
        self.events.finding(Finding(
            "unpromised-notification",
            f"the server sent {method} {why}; it is not acted on (the list is not re-read because of it)"
            + ("; --poll re-lists on a timer" if self.options.poll is None else ""),
            kind=kind, detail={"method": method}))

    def _on_updated(self, link: Link, params: dict[str, Any]) -> None:
        uri = params.get("uri")
        if not isinstance(uri, str):
            self.events.finding(Finding("protocol-violation", "notifications/resources/updated without a string uri",
                                        kind="resources"))
            return
        if not link.era.carried_by(params, link.listen_id):
            self.events.finding(Finding("unpromised-notification", "the server sent notifications/resources/updated "
                                        "outside the subscriptions/listen stream; not acted on", kind="resources"))
            return
        if uri not in link.subscribed and not any(uri.startswith(s.rstrip("/") + "/") for s in link.subscribed):
            self.events.finding(Finding("unpromised-notification", "the server sent notifications/resources/updated "
                                        "for a URI mcpprobe did not subscribe to", kind="resources",
                                        detail={"method": "notifications/resources/updated"}))
            return
        link.updates[uri] = link.updates.get(uri, 0) + 1
        link.updates_wake.set()

    def _on_log(self, params: dict[str, Any]) -> None:
        if self.options.log_level is None:
            return
        held = self.logs.admit(time.monotonic())
        if held is None:
            return
        extra = {"suppressed": held} if held else {}
        level = params.get("level")
        self.events.emit("log", "server", level=level if isinstance(level, str) else None,
                         logger=params.get("logger") if isinstance(params.get("logger"), str) else None,
                         data=params.get("data"), **extra)

    def _on_ack(self, link: Link, params: dict[str, Any]) -> None:
        # Only the acknowledgement of our own subscriptions/listen request counts, and only the first.
        if link.listen_id is None or not link.era.carried_by(params, link.listen_id) or link.listen_acked.is_set():
            return
        honored = params.get("notifications")
        link.honored = honored if isinstance(honored, dict) else {}
        link.listen_acked.set()
