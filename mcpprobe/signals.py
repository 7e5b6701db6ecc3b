"""SIGTERM and SIGHUP end a run as Ctrl-C does, at every stage: exit 130, "interrupted", and with
`--json` the interrupted document.

An operation takes the signals itself while it runs (`mcpprobe.cli.common.run_operation`: the
first one cancels it, and it reports what it has). Outside of one - reading the configs, fetching or
renewing a token before the session starts, `auth login` and `auth logout` - a signal left to
its default would kill the process where it stood: no exit 130, no document, an early server left
to the sweep. `interrupt_on_signals` makes both raise KeyboardInterrupt there instead, which the
one edge (`mcpprobe.cli.edge`) turns into the interruption. A signal the user ignored (`nohup`
ignores SIGHUP) stays ignored, and a handler someone else installed stays theirs.

While an operation runs, work that holds the event loop (checking a tool's schema against its
meta-schema, in the loop's own thread) would keep the loop from ever seeing a signal. So the
operation's handlers are wrapped (`noted_on`): a signal also sets a flag that such work looks at
between its steps (`arrived()`, mcpprobe.safety.validation), stops at, and so hands the loop back.

Standard library only: the console script installs it before anything is imported.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

ENDING = (signal.SIGTERM, signal.SIGHUP)


def _as_ctrl_c(sig: int, frame: object) -> None:
    raise KeyboardInterrupt


_armed: list[bool] = []


def interrupt_on_signals() -> None:
    """SIGTERM and SIGHUP raise KeyboardInterrupt, where they would otherwise kill the process
    (their handler is the default). For the process mcpprobe runs in (the console script, `python
    -m mcpprobe`); `again` after an event loop that took them. Only the main thread can set
    handlers; elsewhere nothing changes."""
    _armed[:] = [True]
    _install()


def again() -> None:
    """After an event loop that took the signals (its receiver leaves the default behind): ours
    again, where `interrupt_on_signals` installed them in this process. A program that runs
    mcpprobe's commands in its own process (a test's CliRunner) keeps its handlers."""
    if _armed:
        _install()


def _install() -> None:
    for sig in ENDING:
        try:
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, _as_ctrl_c)
        except ValueError:  # not the main thread
            return


_arrived = threading.Event()


def arrived() -> bool:
    """Whether a signal that ends the run has come since the operation began (`noted_on`): work that
    holds the event loop stops at it, so that the loop can act on the signal."""
    return _arrived.is_set()


def begin() -> None:
    """An operation begins: no signal has come for it yet."""
    _arrived.clear()


def noted_on(signals: Any) -> None:
    """Wrap the current handlers of `signals` (the event loop's, which only wake the loop) so that a
    signal is also noted for `arrived()`. Python runs a handler in the main thread between two steps
    of whatever runs there, the loop busy or not. Only the main thread can set handlers."""
    for sig in signals:
        try:
            previous = signal.getsignal(sig)
            signal.signal(sig, _noting(previous))
        except (ValueError, TypeError):  # not the main thread, or a handler Python did not install
            return


def _noting(previous: Any) -> Any:
    def noted(sig: int, frame: Any) -> None:
        _arrived.set()
        if callable(previous):
            previous(sig, frame)

    return noted
