"""Documented, hidden ways to make mcpprobe fail or dawdle on purpose, so that tests reach the path
a real bug or a slow machine would take without replacing any of the code around it.

`MCPPROBE_TEST_CRASH=PHASE` raises `RuntimeError` at that phase:

- `parse`: while the command's line is read (where click runs the options' callbacks);
- `command`: in the command, before anything is started (outside the event loop);
- `operation`: inside the operation, once the server is connected (inside the event loop, so the
  exception arrives wrapped in an exception group, as a real bug there would);

and in the tasks that run beside the operation, where a bug once ended the run as if the user had
interrupted it (docs/exit-codes.md, code 70):

- `progress`: `call` handling a progress notification (on the connection's reader);
- `keepalive`: `watch` about to send its keep-alive ping (an HTTP server without an event stream);
- `subscriptions`: `watch` reporting resource updates (`--subscribe`);
- `relist`: `watch` re-listing a kind after a list_changed notification;
- `router`: `watch` routing a notification (on the connection's reader).

`MCPPROBE_TEST_INTERRUPT=PHASE` sends mcpprobe a real SIGINT (Ctrl-C) at that phase:

- `imports`: a stdio server started early, mcpprobe still loading (the signal is held until the
  imports are done);
- `load`: the command line being read, the command's module being loaded.

`MCPPROBE_TEST_PAGE_CHECK_SECONDS=SECONDS` makes the checks of every page of a listing take that
much longer, holding the event loop as long checks do (nothing else runs meanwhile, not even the
reader of the next page's answer): what a page of many items costs on a slow machine, at any speed.

Standard library only: checked on every run.
"""

from __future__ import annotations

import os
import time

PHASES = ("parse", "command", "operation", "progress", "keepalive", "subscriptions", "relist", "router")
VARIABLE = "MCPPROBE_TEST_CRASH"
INTERRUPT_PHASES = ("imports", "load")
INTERRUPT_VARIABLE = "MCPPROBE_TEST_INTERRUPT"
PAGE_CHECK_VARIABLE = "MCPPROBE_TEST_PAGE_CHECK_SECONDS"


def crash_point(phase: str) -> None:
    """Raise when the test hook names this phase; otherwise nothing."""
    if os.environ.get(VARIABLE) == phase:
        raise RuntimeError(f"crash requested by {VARIABLE}={phase}")


def interrupt_point(phase: str) -> None:
    """Send this process SIGINT when the test hook names this phase; otherwise nothing."""
    if os.environ.get(INTERRUPT_VARIABLE) == phase:
        import signal

        os.kill(os.getpid(), signal.SIGINT)


def page_checked() -> None:
    """Hold the event loop (a blocking sleep) for the seconds the test hook names; otherwise nothing."""
    seconds = os.environ.get(PAGE_CHECK_VARIABLE)
    if seconds:
        time.sleep(float(seconds))
