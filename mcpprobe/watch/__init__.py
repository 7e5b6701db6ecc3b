"""`watch`: stay connected and report what changes, only where the server promised to tell.

The rules this package keeps (see docs/commands/watch.md):

- Notification handlers are installed before the first message is sent (`on_connection`), so
  nothing between the handshake and the end of the first listing is missed.
- A kind is followed through notifications only when its capability promised them
  (`listChanged: true`; in the 2026-07-28 era, when `subscriptions/listen` acknowledged it).
  A notification nobody promised is a finding, never a trigger. `--poll` re-lists the others.
- The list is the truth: a notification only says "re-list"; the difference is computed from the
  complete new list against the last good one.
- Coalescing: per kind at most one re-list in flight and one queued. A notification only bumps a
  counter and sets an event; the kind's worker waits until the burst settles (quiet for `settle`
  seconds, and never longer than `max(1 s, 5 x settle)` after the first one), then re-lists once.
- Atomic replace: the last good snapshot stays current while a re-list runs and is replaced only
  by a complete list. A failed or incomplete re-list leaves it, marked stale, and retries with backoff.
- Reconnect: a lost connection is reported, re-established with backoff, capabilities are read
  again and compared, everything is re-listed and re-subscribed. Nothing is trusted across
  connections without re-listing: the old snapshot only serves as the "before" of the diff.

Nothing here prints: every event is a JSON-ready dict handed to `emit`.

Read the modules in this order; each uses only the ones before it:

- `model`: the options, the result, each kind's state, one connection's state (`Link`);
- `events`: the one way out (emit, --count, stop, findings once per connection);
- `logs`: --log-level and the rate limit on log events;
- `router`: the notification handler, which only counts and wakes;
- `lists`: the first listing, the coalescing re-list workers, --poll, diffs;
- `subscriptions`: --subscribe, and how each era is asked to tell (resources/subscribe, subscriptions/listen);
- `call`: --call;
- `supervisor`: `Watcher`, which connects, sets each connection up in that order, notices drops, and
  connects again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcpprobe.client.connect import NO_HOOKS, SessionHooks
from mcpprobe.client.settings import Settings
from mcpprobe.watch.logs import LOG_LEVELS
from mcpprobe.watch.model import Emit, WatchOptions, WatchResult
from mcpprobe.watch.supervisor import Watcher
from mcpprobe.wire.target import Target

if TYPE_CHECKING:
    from mcpprobe.operations.input import Confirmer


async def watch(target: Target, settings: Settings, options: WatchOptions, emit: Emit, *,
                session_hooks: SessionHooks = NO_HOOKS, on_start: Callable[[Watcher], None] | None = None,
                confirmer: Confirmer | None = None) -> WatchResult:
    """Run a watch until a limit, a stop request or a fatal error; every event goes to `emit`.
    `confirmer` previews and confirms --call's tools/call, as for `call` (mcpprobe.operations.input)."""
    watcher = Watcher(target, settings, options, emit, session_hooks=session_hooks, confirmer=confirmer)
    if on_start is not None:
        on_start(watcher)
    return await watcher.run()


__all__ = ["LOG_LEVELS", "WatchOptions", "WatchResult", "Watcher", "watch"]
