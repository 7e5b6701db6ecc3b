"""A documented, hidden way to make mcpprobe fail on purpose, so that tests reach the path a real
bug would take without replacing any of the code around it.

`MCPPROBE_TEST_CRASH=PHASE` raises `RuntimeError` at that phase:

- `command`: in the command, before anything is started (outside the event loop);
- `operation`: inside the operation, once the server is connected (inside the event loop, so the
  exception arrives wrapped in an exception group, as a real bug there would).

Standard library only: checked on every run.
"""

from __future__ import annotations

import os

PHASES = ("command", "operation")
VARIABLE = "MCPPROBE_TEST_CRASH"


def crash_point(phase: str) -> None:
    """Raise when the test hook names this phase; otherwise nothing."""
    if os.environ.get(VARIABLE) == phase:
        raise RuntimeError(f"crash requested by {VARIABLE}={phase}")
