"""The kinds' lists: the first listing on each connection, and after it one coalescing re-list
worker per notifying kind, plus the --poll timer. The list is the truth: a notification only
says "re-list", and the difference is computed from the complete new list against the last good
one (mcpprobe.client.kinds.diff, as drift does). A failed or incomplete re-list leaves the last good
list current, marked stale, and is retried with backoff."""

from __future__ import annotations

import time
from typing import Any

import anyio

from mcpprobe.client import kinds
from mcpprobe.client.capabilities import declared
from mcpprobe.client.catalog import KINDS, Listing, list_kind
from mcpprobe.client.session import Session
from mcpprobe.errors import RequestTimeout
from mcpprobe.exitcodes import ExitCode
from mcpprobe.testhooks import crash_point
from mcpprobe.watch.events import Events
from mcpprobe.watch.model import Dropped, KindState, Link, WatchOptions, now_iso

# The kinds one list_changed notification makes stale: resource templates live under `resources`.
RELISTED = {"tools": ("tools",), "prompts": ("prompts",), "resources": ("resources", "templates")}
LISTEN_KEYS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}
RETRY_FIRST, RETRY_MAX = 0.5, 30.0


class Lists:
    def __init__(self, events: Events, options: WatchOptions) -> None:
        self.events = events
        self.options = options
        self.kinds = {kind: KindState(kind) for kind in KINDS}

    # ----- what each connection declares and promises -----

    def declare(self, capabilities: dict[str, Any]) -> None:
        """Read a new connection's capabilities: what is declared and what promises list_changed
        (in the 2026-07-28 era, until the listen acknowledgement says otherwise)."""
        for kind, state in self.kinds.items():
            state.declared = declared(capabilities, KINDS[kind].capability)
            state.offered = declared(capabilities, KINDS[kind].notifier, "listChanged")
            state.promised = state.declared and state.offered
            if not state.declared:
                state.status, state.items, state.list_completed = "not-declared", None, False

    def connection_lost(self) -> None:
        for state in self.kinds.values():
            if state.items is not None and state.status != "not-declared":
                state.status, state.stale_reason = "stale", "connection lost"

    def notifications(self, state: KindState, link: Link | None) -> str:
        if not state.declared:
            return "not-declared"
        if state.promised:
            return "promised"
        if link is not None and link.era.listens and link.honored is not None and state.offered:
            return "refused"  # offered by the capabilities, not honoured by the listen acknowledgement
        return "not-promised"

    def say_promises(self, link: Link) -> None:
        """A notice for each declared kind whose changes nobody will tell, and what to do about it."""
        for kind in ("tools", "resources", "prompts"):
            state = self.kinds[kind]
            if not state.declared or state.promised:
                continue
            how = (f"re-listed every {self.options.poll:g} s (--poll)" if self.options.poll is not None
                   else "use --poll SECONDS to re-list")
            if self.notifications(state, link) == "refused":
                message = f"{kind}: subscriptions/listen did not honour {LISTEN_KEYS[kind]}; {how}"
            else:
                message = f"{kind}: no change notifications promised; {how}"
            self.events.emit("notice", kind, code="no-change-notifications", message=message)

    def kind_json(self, state: KindState, link: Link | None) -> dict[str, Any]:
        return {
            "declared": state.declared,
            "listCompleted": state.list_completed,
            "status": state.status,
            "count": len(state.items) if state.items is not None else 0,
            "lastChangedAt": state.last_changed_at,
            "notifications": self.notifications(state, link),
            "poll": self.options.poll if state.declared and not state.promised else None,
        }

    # ----- the first listing of a connection -----

    async def initial(self, link: Link, session: Session, listed: tuple[str, ...], reconnected: bool) -> None:
        """List `listed` concurrently, then report them in a fixed order (snapshot, and on a reconnect
        the difference from the last good snapshot of the previous connection)."""
        listings: dict[str, Listing] = {}

        async def one(kind: str) -> None:
            if self.kinds[kind].declared:
                listings[kind] = await list_kind(session, kind)

        async with anyio.create_task_group() as group:
            for kind in listed:
                group.start_soon(one, kind)
        for done in listings.values():
            if done.state != "complete" and done.error is not None and link.is_drop(done.error):
                raise Dropped(done.error)
        trigger = "reconnect" if reconnected else "connect"
        for kind in KINDS:
            if kind not in listed:
                continue
            state = self.kinds[kind]
            listing = listings.get(kind)
            if listing is None:
                self.events.emit("snapshot", kind, trigger=trigger, declared=False, listCompleted=False,
                                 status="not-declared", state="not-declared", count=0, items=[],
                                 notifications="not-declared")
                continue
            self._listing_findings(listing)
            previous = state.items
            if listing.state == "not-implemented":
                # -32601 for an optional part (templates): nothing to watch on this connection, and
                # nothing to retry; a reconnect lists it again.
                state.items, state.list_completed = None, False
                state.status, state.stale_reason = "not-implemented", None
            elif listing.state == "complete":
                state.items, state.list_completed = kinds.by_identity(kind, listing.items), True
                state.status, state.stale_reason = "current", None
                state.last_listed_at = now_iso()
                if state.last_changed_at is None:
                    state.last_changed_at = state.last_listed_at
            else:
                state.list_completed = False
                state.status = "stale" if previous is not None else "failed"
                state.stale_reason = _why(listing)
            self.events.emit("snapshot", kind, trigger=trigger, **self.kind_json(state, link), state=listing.state,
                             pages=len(listing.pages),
                             items=list(state.items.values()) if state.items is not None else [],
                             **({"staleReason": state.stale_reason} if state.stale_reason else {}))
            if listing.state == "complete" and reconnected and previous is not None:
                diff = diff_event(previous, state.items or {})
                if diff["changes"]:
                    state.last_changed_at = now_iso()
                    self.events.emit("diff", kind, trigger="reconnect", **diff, count=len(state.items or {}),
                                     lastChangedAt=state.last_changed_at)
                    if self.options.exit_on_change:
                        self.events.stop("exit-on-change", ExitCode.FINDINGS)

    def _listing_findings(self, listing: Listing) -> None:
        for finding in listing.findings:
            if finding.code in ("list-failed", "list-incomplete"):
                continue  # told by the stale event
            self.events.finding(finding)

    # ----- re-listing -----

    async def worker(self, link: Link, notifier: str) -> None:
        """One re-list in flight and at most one queued, whatever the rate of notifications.

        The router only counts and sets `wake`; this loop waits for the burst to settle (quiet
        for `settle` seconds, and never longer than `max_wait` after the first one), takes the
        count, and re-lists the kind (resources: also templates) once. Notifications arriving during
        the re-list set `wake` again: that is the one queued re-list. A failed re-list is retried
        with backoff (sooner if a new notification comes).
        """
        relisted = [kind for kind in RELISTED[notifier] if self.kinds[kind].declared]
        delay = RETRY_FIRST
        failing = any(self.kinds[kind].status in ("stale", "failed") for kind in relisted)
        while True:
            if failing:
                with anyio.move_on_after(delay):
                    await link.wake[notifier].wait()
                if link.first_at[notifier] is None:
                    link.poke(notifier, "retry")
            else:
                await link.wake[notifier].wait()
            while (first := link.first_at[notifier]) is not None:
                until = min(link.last_at[notifier] + self.options.settle, first + self.options.max_wait)
                remaining = until - time.monotonic()
                if remaining <= 0:
                    break
                await anyio.sleep(remaining)
            reason, count = link.reasons[notifier] or "notification", link.pending[notifier]
            link.pending[notifier], link.first_at[notifier] = 0, None
            link.wake[notifier] = anyio.Event()
            retry_in = min(delay * 2, RETRY_MAX) if failing else RETRY_FIRST
            crash_point("relist")
            ok = True
            for kind in relisted:
                if self.kinds[kind].status == "not-implemented":
                    continue  # the server said it has none of this optional kind
                ok = await self._relist(link, kind, reason, count if kind == notifier else 0, retry_in) and ok
            failing, delay = (False, RETRY_FIRST) if ok else (True, retry_in)

    async def _relist(self, link: Link, kind: str, reason: str, notifications: int, retry_in: float) -> bool:
        assert link.session is not None
        state = self.kinds[kind]
        was = state.status
        state.status = "updating"
        if reason == "notification" and notifications > 0:
            self.events.emit("list_changed", kind, notifications=notifications,
                             method=f"notifications/{kind}/list_changed")
        state.relists += 1
        self.events.result.relists[kind] = self.events.result.relists.get(kind, 0) + 1
        listing = await list_kind(link.session, kind)
        self._listing_findings(listing)
        if listing.state != "complete":
            if listing.error is not None:
                link.dropped(listing.error)
            state.status = "stale" if state.items is not None else "failed"
            state.stale_reason = _why(listing)
            self.events.emit("stale", kind, reason=state.stale_reason, state=listing.state, cause=_cause_of(listing),
                             trigger=reason, count=len(state.items or {}), lastChangedAt=state.last_changed_at,
                             retryInSeconds=retry_in)
            return False
        previous = state.items or {}
        new = kinds.by_identity(kind, listing.items)
        diff = diff_event(previous, new)
        state.items, state.list_completed = new, True
        state.status, state.stale_reason = "current", None
        state.last_listed_at = now_iso()
        if diff["changes"]:
            state.last_changed_at = state.last_listed_at
        recovered = was in ("stale", "failed")
        if reason not in ("poll", "listen") or diff["changes"] or recovered:
            self.events.emit("diff", kind, trigger=reason, **diff, count=len(new), pages=len(listing.pages),
                             lastChangedAt=state.last_changed_at, **({"recovered": True} if recovered else {}))
        if diff["changes"] and self.options.exit_on_change:
            self.events.stop("exit-on-change", ExitCode.FINDINGS)
        return True

    async def poller(self, link: Link) -> None:
        """--poll: re-list, on a timer, the kinds nobody promised to tell about."""
        assert self.options.poll is not None
        while True:
            await anyio.sleep(self.options.poll)
            for kind in ("tools", "resources", "prompts"):
                state = self.kinds[kind]
                if state.declared and not state.promised and link.first_at[kind] is None:
                    link.poke(kind, "poll")


def diff_event(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The diff event's fields: added, removed and changed items by identity; for a changed one,
    the top-level fields that differ."""
    diff = kinds.diff(before, after)
    changed = [{"id": ident, "fields": kinds.changed_fields(old, new)} for ident, (old, new) in diff.changed.items()]
    return {"added": diff.added, "removed": diff.removed, "changed": changed, "changes": diff.changes}


def _why(listing: Listing) -> str:
    for finding in listing.findings:
        if finding.code in ("list-failed", "list-incomplete", "method-not-found", "not-implemented"):
            return finding.message
    if listing.error is not None:
        return listing.error.message
    return f"the list ended in state {listing.state}"


def _cause_of(listing: Listing) -> str:
    for finding in listing.findings:
        if finding.code in ("list-failed", "list-incomplete"):
            cause = finding.detail.get("cause")
            if isinstance(cause, str):
                return cause
        if finding.code in ("method-not-found", "not-implemented"):
            return "method-not-found"
    return "timeout" if isinstance(listing.error, RequestTimeout) else "error"
