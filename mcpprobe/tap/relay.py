"""The stdio relay: the server as a child process, its stdin and stdout copied byte for byte.

Two threads copy: the host's stdin to the server's stdin, the server's stdout to the host's stdout,
each a read of what is there (up to `CHUNK` bytes) and a write of exactly those bytes. Between the two,
the same bytes object is handed to `observe`, which never waits (`put_nowait` on the observer's bounded
queue: `observer.Observer`) and never changes what is written: handed before the write, so that the
copies are queued in causal order (a request always before the answer it caused, whichever thread runs
first), which the judge needs; handed after, a thread switch between the write and the hand-over could
queue an answer before its request. The
server's stderr is the host's stderr itself (inherited): untouched. SIGINT, SIGTERM and SIGHUP sent
to mcpprobe are sent on to the server's process group, and mcpprobe exits with the server's status
(128 + N for a server ended by signal N, as a shell says it).

The server runs in a process group of its own, so that whatever it spawned ends with it; on Linux it
is also sent SIGTERM if mcpprobe dies (PR_SET_PDEATHSIG), and descendants that left the group are
found by their marker and ended (`wire.orphans`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcpprobe.wire import orphans

CHUNK = 64 * 1024
DRAIN_SECONDS = 2.0  # after the server exits, how long its stdout may still be read (a child holding it)
TERM_SECONDS = 2.0  # after SIGTERM to what is left of the group, before SIGKILL
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PR_SET_PDEATHSIG = 1
SWITCH_SECONDS = 0.0002

Observe = Callable[[str, bytes], None]


class StartFailed(Exception):
    """The server could not be started: `message` says why; `status` is the exit code (127, 126)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Ended:
    status: int  # the exit code mcpprobe should exit with
    signal: int | None  # the signal that ended the server, if one did
    pid: int


def _pdeathsig() -> Callable[[], None] | None:
    """A preexec function that asks Linux to SIGTERM the server when mcpprobe dies (loaded before the fork)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    prctl = libc.prctl

    def set_deathsig() -> None:
        prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)

    return set_deathsig


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)  # a pipe takes it all at once, nearly always
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        written = os.write(fd, view)
        view = view[written:]


class StdioRelay:
    def __init__(self, command: list[str], observe: Observe | None = None, *, env: dict[str, str] | None = None,
                 stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self.command = command
        self.observe: Observe = observe if observe is not None else (lambda direction, data: None)
        self._env = dict(os.environ if env is None else env)
        self._in = stdin_fd
        self._out = stdout_fd
        self._process: subprocess.Popen[bytes] | None = None
        self._marker = orphans.new_marker()
        self.host_gone = False  # the host closed its end of our stdout

    def start(self) -> int:
        executable = shutil.which(self.command[0], path=self._env.get("PATH"))
        if executable is None:
            if os.path.sep in self.command[0] and os.path.exists(self.command[0]):
                raise StartFailed(f"cannot start the server: {self.command[0]} is not executable", 126)
            raise StartFailed(f"cannot start the server: command not found: {self.command[0]}", 127)
        orphans.become_subreaper()
        env = {**self._env, orphans.MARKER: self._marker}
        try:
            self._process = subprocess.Popen(  # noqa: S603 - the user's own server command
                [executable, *self.command[1:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
                bufsize=0, env=env, start_new_session=True, preexec_fn=_pdeathsig(), close_fds=True)
        except OSError as exc:
            raise StartFailed(f"cannot start the server {self.command[0]}: {exc.strerror or exc}", 126) from None
        return self._process.pid

    @property
    def pid(self) -> int:
        return self._process.pid if self._process is not None else 0

    def run(self) -> Ended:
        """Relay until the server has exited and its stdout is drained; forward signals meanwhile."""
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        previous = {sig: signal.getsignal(sig) for sig in FORWARDED}
        for sig in FORWARDED:
            signal.signal(sig, self._forward)
        # The observer's thread holds the interpreter's lock while it judges; a relay thread back from a read
        # waits for it at most this long (the default, 5 ms, would be the tap's latency under load).
        previous_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_SECONDS)
        up = threading.Thread(target=self._up, args=(process.stdin.fileno(),), name="tap-up", daemon=True)
        down = threading.Thread(target=self._down, args=(process.stdout.fileno(),), name="tap-down", daemon=True)
        up.start()
        down.start()
        try:
            status = process.wait()
            down.join(DRAIN_SECONDS)
        finally:
            sys.setswitchinterval(previous_interval)
            for sig, handler in previous.items():
                with contextlib.suppress(TypeError, ValueError):
                    signal.signal(sig, handler)
            self._end_group(process.pid)
        return Ended(128 - status if status < 0 else status, -status if status < 0 else None, process.pid)

    def _forward(self, signum: int, frame: Any) -> None:
        process = self._process
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signum)

    def _up(self, server_in: int) -> None:
        """The host's stdin to the server's, until the host closes it (then the server's is closed)."""
        try:
            while True:
                try:
                    data = os.read(self._in, CHUNK)
                except InterruptedError:
                    continue
                if not data:
                    break
                self.observe("c2s", data)
                try:
                    _write_all(server_in, data)
                except OSError:  # the server closed its stdin, or exited: nothing more to give it
                    break
        except OSError:
            pass
        finally:
            if self._process is not None and self._process.stdin is not None:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()

    def _down(self, server_out: int) -> None:
        """The server's stdout to the host's, until the server closes it."""
        while True:
            try:
                data = os.read(server_out, CHUNK)
            except InterruptedError:
                continue
            except OSError:
                break
            if not data:
                break
            self.observe("s2c", data)
            if not self.host_gone:
                try:
                    _write_all(self._out, data)
                except OSError:  # the host went away: keep reading, so that the server never blocks
                    self.host_gone = True
        self.observe("s2c", b"")  # the end of the server's stdout

    def _end_group(self, pgid: int) -> None:
        """End whatever the server left running in its group, then its escaped descendants."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
            deadline = time.monotonic() + TERM_SECONDS
            while time.monotonic() < deadline:
                os.killpg(pgid, 0)
                time.sleep(0.02)
            os.killpg(pgid, signal.SIGKILL)
        orphans.sweep_now({})
