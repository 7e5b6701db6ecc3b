"""--subscribe, and how the server is asked to tell, per era (`session.era.listens`):

- before 2026-07-28, `listChanged: true` in the capabilities is the promise, and resource updates
  are asked for with one `resources/subscribe` per URI;
- in the 2026-07-28 era, one `subscriptions/listen` request stays open for the connection; its
  acknowledgement says which change notifications the server honours, and every notification it
  carries is stamped with the request's id (the router drops the unstamped ones).

Resource updates are reported at most once per URI per settle interval.
"""

from __future__ import annotations

from typing import Any

import anyio

from mcpprobe.client.capabilities import declared
from mcpprobe.client.session import Session
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ProbeError, Refused
from mcpprobe.findings import Finding
from mcpprobe.operations.arguments import matches_template
from mcpprobe.testhooks import crash_point
from mcpprobe.watch.events import Events
from mcpprobe.watch.lists import LISTEN_KEYS
from mcpprobe.watch.model import Dropped, KindState, Link, WatchOptions

NEVER = 10.0 ** 9  # a request that stays open for the life of the connection (subscriptions/listen)


class Subscriptions:
    def __init__(self, events: Events, options: WatchOptions, settings: Settings, kinds: dict[str, KindState]) -> None:
        self.events = events
        self.options = options
        self.settings = settings
        self.kinds = kinds
        self._unavailable = False  # resources.subscribe went away on a reconnect

    def saw_sent(self, link: Link, message: Any) -> None:
        """Called with every message sent: the listen request's id is the stamp of what it carries."""
        if isinstance(message, dict) and message.get("method") == "subscriptions/listen":
            link.listen_id = message.get("id")

    # ----- the checks: refused (exit 3) on the first connection, an error event on a reconnect -----

    def check_capability(self, session: Session, reconnected: bool) -> None:
        """--subscribe needs resources.subscribe: refused (exit 3) before anything else is sent."""
        self._unavailable = False
        if not self.kinds["resources"].declared:
            if self.settings.force:
                return  # said after the listing, as an error event: there is nothing to subscribe to
            self._refuse(Refused(
                "--subscribe needs the 'resources' capability with 'subscribe', and the server did not declare "
                "'resources'; nothing was subscribed.", detail={"missing": "resources"}), reconnected)
            return
        if not declared(session.capabilities, "resources", "subscribe"):
            if self.settings.force:
                self.events.finding(Finding("forced", "--subscribe with --force although 'resources.subscribe' is "
                                            "not declared", kind="resources"))
                return
            self._refuse(Refused(
                "--subscribe needs the 'resources.subscribe' capability, which the server did not declare; "
                "nothing was subscribed. Use --force to subscribe anyway.",
                detail={"missing": "resources.subscribe"}), reconnected)

    def _refuse(self, error: Refused, reconnected: bool) -> None:
        if not reconnected:
            raise error
        self.events.emit("error", "resources", code=error.code, message=error.message)
        self._unavailable = True

    def in_catalog(self, reconnected: bool) -> list[str]:
        """The --subscribe URIs that are in the catalog (or match a template); refused otherwise."""
        if self._unavailable and reconnected:
            return []
        resources = self.kinds["resources"].items or {}
        templates = list((self.kinds["templates"].items or {}).keys())
        ok: list[str] = []
        for uri in self.options.subscribe:
            known = uri in resources or any(matches_template(uri, t) for t in templates)
            if known or self.settings.force:
                if not known:
                    self.events.finding(Finding("forced", f"--subscribe {uri}: not in resources/list nor matching "
                                                "a template; subscribed anyway (--force)", kind="resources"))
                ok.append(uri)
                continue
            message = (f"--subscribe {uri}: not in the server's resources/list and matching no resource template; "
                       "nothing was subscribed. Use --force to subscribe anyway.")
            if not reconnected and self.kinds["resources"].list_completed:
                raise Refused(message, code="not-in-catalog", detail={"uri": uri})
            self.events.emit("error", "resources", code="not-in-catalog", message=message)
        return ok

    # ----- before 2026-07-28: resources/subscribe -----

    async def subscribe_legacy(self, link: Link, session: Session, uris: list[str]) -> None:
        done: list[str] = []
        refused: list[dict[str, Any]] = []
        for uri in uris:
            try:
                await session.request("resources/subscribe", {"uri": uri})
            except Refused:
                raise
            except ProbeError as exc:
                link.dropped(exc)
                refused.append({"uri": uri, "error": exc.message})
                continue
            done.append(uri)
            link.subscribed.add(uri)
        if uris:
            self.events.emit("subscribed", "resources", via="resources/subscribe", uris=done, refused=refused)
            for item in refused:
                self.events.emit("error", "resources", code="rpc-error", message=f"resources/subscribe {item['uri']}: "
                                 f"{item['error']}")

    # ----- 2026-07-28: subscriptions/listen -----

    def _listen_filter(self, uris: list[str]) -> dict[str, Any]:
        wanted: dict[str, Any] = {}
        for kind, key in LISTEN_KEYS.items():
            if self.kinds[kind].declared and self.kinds[kind].offered:
                wanted[key] = True
        if uris:
            wanted["resourceSubscriptions"] = list(uris)
        return wanted

    async def listen(self, link: Link, session: Session, group: Any, guarded: Any, uris: list[str]) -> None:
        """Send subscriptions/listen in the background and wait for its acknowledgement, which decides
        what is promised on this connection."""
        wanted = self._listen_filter(uris)
        for kind in LISTEN_KEYS:
            self.kinds[kind].promised = False  # until the acknowledgement says so
        self.kinds["templates"].promised = False
        if not wanted:
            return
        ended: list[BaseException] = []

        async def listen() -> None:
            try:
                await session.request("subscriptions/listen", {"notifications": wanted}, timeout=NEVER)
            except ProbeError as exc:
                ended.append(exc)
                link.listen_acked.set()
                if link.is_drop(exc):
                    raise
                self.events.error("server", exc, "subscriptions/listen")
                return
            ended.append(EOFError())
            link.listen_acked.set()
            # A result is the server's graceful close: events may be missed from here on.
            self.events.emit("notice", "server", code="listen-ended", message=(
                "the server closed the subscriptions/listen stream; change notifications stop here"
                + ("; --poll goes on re-listing" if self.options.poll is not None else "")))
            for kind in LISTEN_KEYS:
                self.kinds[kind].promised = False

        group.start_soon(guarded, listen)
        with anyio.move_on_after(self.settings.timeout):
            await link.listen_acked.wait()
        if not link.listen_acked.is_set():
            self.events.emit("error", "server", code="timeout", message=(
                f"subscriptions/listen: no acknowledgement within {self.settings.timeout:g} s"))
            return
        if link.honored is None:
            if ended and isinstance(ended[0], ProbeError) and link.is_drop(ended[0]):
                raise Dropped(ended[0])
            return
        honored = link.honored
        refused = [key for key in wanted if key != "resourceSubscriptions" and honored.get(key) is not True]
        listed = honored.get("resourceSubscriptions")
        honored_uris: list[Any] = listed if isinstance(listed, list) else []
        refused_uris = [uri for uri in uris if uri not in honored_uris]
        extra = [key for key, value in honored.items() if value and key not in wanted]
        for kind, key in LISTEN_KEYS.items():
            self.kinds[kind].promised = honored.get(key) is True and key in wanted
        self.kinds["templates"].promised = self.kinds["resources"].promised
        link.subscribed = {uri for uri in uris if uri in honored_uris}
        self.events.emit("subscribed", "server", via="subscriptions/listen", requested=wanted, honored=honored,
                         refused=refused + refused_uris, uris=sorted(link.subscribed))
        if extra:
            self.events.finding(Finding("protocol-violation", f"the subscriptions/listen acknowledgement honours "
                                        f"types that were not requested: {', '.join(extra)}", detail={"extra": extra}))

    # ----- what the subscriptions bring -----

    async def report_updates(self, link: Link) -> None:
        """At most one resource_updated event per URI per settle interval."""
        while True:
            await link.updates_wake.wait()
            await anyio.sleep(self.options.settle)
            crash_point("subscriptions")
            link.updates_wake = anyio.Event()
            updates, link.updates = link.updates, {}
            for uri, count in updates.items():
                self.events.emit("resource_updated", "resources", uri=uri, notifications=count)
