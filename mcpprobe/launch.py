"""The console script: start a plainly named stdio server first (`mcpprobe.wire.prestart`), then load
the CLI; whatever happens, an early server nobody adopted does not outlive the run. Once the
run is over (its servers ended, its output flushed), the process ends at once (`leave`)."""

from __future__ import annotations

import sys

# The commands whose stdio server may start before the imports (mcpprobe.wire.prestart.COMMANDS).
_EARLY = frozenset(("probe", "list", "call", "read", "get-prompt", "watch", "load"))


def main() -> None:
    from mcpprobe.signals import interrupt_on_signals

    interrupt_on_signals()  # before the early server: prestart keeps it, and gives it back
    try:
        run(sys.argv[1:])
    except SystemExit as done:
        leave(done.code)
        raise
    leave(0)


def run(args: list[str]) -> None:
    """The CLI, with the server of a plain stdio command started before its imports."""
    if not args or args[0] not in _EARLY or "--" not in args:  # --help, --version, completion...
        from mcpprobe.cli.main import main as cli_main

        cli_main()
        return
    from mcpprobe.wire import prestart
    stopped = False
    try:
        prestart.start(args)
        from mcpprobe.testhooks import interrupt_point

        interrupt_point("imports")
        from mcpprobe.cli.main import main as cli_main

        prestart.arm()  # signals held back during the imports interrupt from now on
        cli_main()
    except KeyboardInterrupt:  # one held back during the imports, raised by arm()
        stopped = True
    finally:
        prestart.discard()
        if stopped or prestart.interrupted():  # Ctrl-C (or SIGTERM) during the imports, nothing else to do
            from mcpprobe.cli.edge import interrupted_early

            raise SystemExit(interrupted_early(args))  # noqa: B012 - the signal decides the exit code


def leave(code: object) -> None:
    """End the process with `code` without the interpreter's teardown.

    Freeing every module and object of a run costs tens of milliseconds (more on a loaded machine),
    after the result is shown and every server has ended, for nothing: the process is ending. So
    threads that the interpreter would wait for are waited for, the atexit callbacks run, both
    standard streams are flushed, and the process exits. Returns (the ordinary exit follows) when
    that would lose something: a stream cannot be flushed, or the code is not a number.
    """
    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        return  # a message or an odd value: the interpreter prints and maps it as usual
    threading = sys.modules.get("threading")  # never imported: no thread to wait for
    while threading is not None and (running := [
            t for t in threading.enumerate() if not t.daemon and t.is_alive() and t is not threading.main_thread()]):
        for thread in running:  # as the interpreter would: it waits for every non-daemon thread
            thread.join()
    import atexit
    import os

    if not _flushed():
        return
    atexit._run_exitfuncs()
    atexit._clear()  # run once: if what they wrote cannot be flushed, the ordinary exit reports it
    if _flushed():
        os._exit(code)


def _flushed() -> bool:
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - the ordinary exit reports it, as it always did
        return False
    return True
