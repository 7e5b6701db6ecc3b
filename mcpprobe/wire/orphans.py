"""Descendants of a stdio server that escaped its process group, found and ended (Linux).

A stdio server runs in a process group of its own, and ending that group ends what it spawned,
unless a descendant left the group: `setsid()`, a daemon's double fork. Such an orphan is
reparented, normally to init, and would outlive mcpprobe. So on Linux each server gets a marker
in its environment (MCPPROBE_SERVER_ID), which its descendants inherit, and when a server has
been ended every process that still carries its marker is sent SIGTERM, then SIGKILL after a
grace. mcpprobe makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER) when it starts its
first stdio server, so such orphans are reparented to it and reaped by it, not left to init. The
CLI's last act sweeps whatever is left. A descendant that clears its environment (`env -i`)
carries no marker and is not found. Elsewhere (macOS, Windows) these are no-ops: the process
group is all there is.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Iterable

MARKER = "MCPPROBE_SERVER_ID"
PR_SET_CHILD_SUBREAPER = 36
ORPHAN_GRACE_SECONDS = 1.0
_PROC = "/proc"

_state = {"tried": False, "subreaper": False}


def supported() -> bool:
    return sys.platform.startswith("linux") and os.path.isdir(_PROC)


def become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (once; True when it is)."""
    if not _state["tried"]:
        _state["tried"] = True
        if supported():
            with contextlib.suppress(OSError, AttributeError):
                import ctypes

                libc = ctypes.CDLL(None, use_errno=True)
                _state["subreaper"] = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _state["subreaper"]


def new_marker() -> str:
    """A value for MARKER that names one server start, unique on this machine."""
    return f"{os.getpid()}-{os.urandom(6).hex()}"  # secrets.token_hex, without its import


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir(_PROC) if name.isdigit()]
    except OSError:
        return []


def _marker_of(pid: int) -> str | None:
    try:
        with open(f"{_PROC}/{pid}/environ", "rb") as handle:
            environ = handle.read()
    except OSError:
        return None
    prefix = MARKER.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix):].decode("ascii", "replace")
    return None


def strays(live: dict[str, int]) -> list[int]:
    """Processes that carry the marker of a server this process started and that is no longer
    running: `live` maps the markers of running servers to their process ids (0 while starting)."""
    me = os.getpid()
    mine = f"{me}-"
    protected = set(live.values()) | {me}
    out = []
    for pid in _pids():
        if pid in protected:
            continue
        found = _marker_of(pid)
        if found is not None and found.startswith(mine) and found not in live:
            out.append(pid)
    return out


def group_members(marker: str, pgid: int) -> list[int]:
    """The processes of a server's group that carry its marker, taken while the server runs: once
    the group is killed, those reparented to us (a grandchild whose parent died with it) are reaped
    by `sweep`, when a zombie's environment can no longer be read to recognise it."""
    if not _state["tried"] or not supported():
        return []
    out = []
    for pid in _pids():
        if pid != pgid and pid != os.getpid() and _pgid_of(pid) == pgid and _marker_of(pid) == marker:
            out.append(pid)
    return out


def _pgid_of(pid: int) -> int | None:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as handle:
            stat = handle.read()
        return int(stat[stat.rfind(b")") + 2:].split()[2])
    except (OSError, ValueError, IndexError):
        return None


def signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def reap(pids: Iterable[int]) -> list[int]:
    """Collect the exit status of those that are our children and have ended; the rest, still
    running (or not ours to wait for), are returned."""
    left = []
    for pid in pids:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid if not _alive(pid) else 0  # not our child: gone, or someone else's to reap
        if not done:
            left.append(pid)
    return left


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def sweep(live: dict[str, int], known: Iterable[int] = (), grace: float = ORPHAN_GRACE_SECONDS) -> None:
    """End every stray (SIGTERM, `grace`, SIGKILL) and reap those that are our children; `known`
    (from `group_members`, killed with their group) are reaped too."""
    import anyio

    if not _state["tried"] or not supported():
        return
    with anyio.move_on_after(1):
        while known := reap(known):
            await anyio.sleep(0.02)
    for _ in range(5):  # an orphan's own children may be reparented and found only next time
        pids = strays(live)
        if not pids:
            return
        signal_all(pids, signal.SIGTERM)
        with anyio.move_on_after(grace):
            while pids := reap(pids):
                await anyio.sleep(0.02)
        signal_all(pids, signal.SIGKILL)
        with anyio.move_on_after(1):
            while pids := reap(pids):
                await anyio.sleep(0.02)


def sweep_now(live: dict[str, int]) -> None:
    """End every stray at once (SIGKILL) and reap it, blocking briefly: the CLI's last act."""
    if not _state["tried"] or not supported():
        return
    for _ in range(5):
        pids = strays(live)
        if not pids:
            return
        signal_all(pids, signal.SIGKILL)
        deadline = time.monotonic() + 1.0
        while (pids := reap(pids)) and time.monotonic() < deadline:
            time.sleep(0.01)
