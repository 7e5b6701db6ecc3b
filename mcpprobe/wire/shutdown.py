"""What a stdio server's shutdown showed (`StdioTransport.shut_down`), and how mcpprobe tells a
server that has already ended from one that still runs, without reaping it.

The specification's stdio shutdown: "First, closing the input stream to the child process (the
server); Waiting for the server to exit, or sending `SIGTERM` if the server does not exit within a
reasonable time". `check` judges the exit and what the server wrote while exiting from this record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

# After the server exited, the time its stdout gets to end (what it wrote at exit to be read): a
# child of it may hold the pipe open for good, so the wait is bounded.
STDOUT_DRAIN_SECONDS = 1.0


@dataclass(frozen=True)
class Shutdown:
    """Whether the server had ended before its stdin was closed (its exit status), else how long
    after EOF it exited (None: still running at the limit), and whether its stdout had ended when
    the record was made."""

    ended_before: int | None
    exited_after: float | None
    stdout_ended: bool

    @property
    def exited(self) -> bool:
        return self.ended_before is not None or self.exited_after is not None


def exit_status_now(process: Any) -> int | None:
    """The exit status of a server process that has already ended (reaped or not yet), else None.
    A zombie is looked at with WNOWAIT: it is left to be reaped as ever."""
    if process is None:
        return None
    if process.returncode is not None:
        return int(process.returncode)
    try:
        found = os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped meanwhile: ended
        return int(process.returncode) if process.returncode is not None else -1
    except OSError:
        return None
    if found is None:
        return None
    return found.si_status if found.si_code == os.CLD_EXITED else -found.si_status
