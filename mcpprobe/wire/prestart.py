"""Start a stdio server before mcpprobe's own imports, so that its boot hides them.

`mcpprobe probe -- CMD` (and `list`, `call`, `read`, `get-prompt`, `watch` and `load` with `-- CMD`) spend
60-90 ms importing click, the CLI, the session and anyio before the server could be spawned, and
the server then spends hundreds of milliseconds booting. So the console script reads argv first,
with no import beyond this module: when the command line is plainly one stdio server (only
options it knows, no config lookup, no --help), the server is started at once, exactly as
`StdioTransport` would start it (same argv, environment, working directory, own session, pipes,
orphan marker, subreaper). The transport then adopts it only if what the real parser built is
identical; otherwise, and on every exit where nothing adopted it (a usage error, a refusal before
connecting, Ctrl-C during the imports), it is killed and reaped before mcpprobe exits, never
having been sent a byte. Linux only: adopting needs `os.pidfd_open` to wait for the process.

Why a second reading of argv rather than click's: click's parser exists only after importing click and
the CLI, the very imports this start is meant to hide. So this module knows a small, closed subset
(the tables below); anything outside it leaves the decision to click, and a test holds the tables to
the real parser's options (tests/e2e/cli/test_prestart_commands.py), so the two cannot drift apart.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from mcpprobe.wire.childenv import child_environment
from mcpprobe.wire.protocols import ACCEPTED

if TYPE_CHECKING:
    from subprocess import Popen

KINDS = ("tools", "resources", "templates", "prompts", "tasks")
# The options every command that talks to a server may carry for a stdio server: flags, and
# options taking one value. Any other token before `--` (-s, --config, --header, auth options,
# --help, an option spelled differently or not the command's own) means no early start: the
# ordinary path decides.
FLAGS = frozenset(("--inherit-env", "--json", "--force", "-v", "--verbose"))
VALUED = frozenset((
    "-e", "--env", "--cwd", "--transport", "--protocol", "--timeout", "--connect-timeout",
    "--discover-timeout", "--max-pages", "--max-message-size", "--root", "--server-stderr", "--trace",
    "--format",
))
# command -> (its own flags, its own valued options, fewest and most positionals before `--`).
# What a command checks before it sends anything (arguments, --args, a tool's confirmation, a
# capability) it still checks: an early server is only adopted by the transport when the run
# gets that far, and is ended unused otherwise, never sent a byte.
COMMANDS: dict[str, tuple[frozenset[str], frozenset[str], int, int]] = {
    "probe": (frozenset(), frozenset(("--concurrency", "--expect", "--save-snapshot", "--baseline")), 0, 0),
    "list": (frozenset(), frozenset(), 1, 1),
    "call": (frozenset(("-y", "--yes", "--task")), frozenset(("--args", "--save", "--elicit")), 1, 10_000),
    "read": (frozenset(), frozenset(("--template", "--complete", "-o", "--output", "--elicit")), 0, 10_000),
    "get-prompt": (frozenset(), frozenset(("--complete", "--save", "--elicit")), 1, 10_000),
    "watch": (frozenset(("--no-reconnect", "--exit-on-change", "-y", "--yes")),
              frozenset(("--poll", "--subscribe", "--log-level", "--settle", "--keepalive", "--duration",
                         "--count", "--call")), 0, 0),
    # Not --ping (its value is optional) nor --connections (HTTP only): with either, the ordinary path.
    "load": (frozenset(("-y", "--yes")),
             frozenset(("--call", "--read", "--list", "--get-prompt", "--requests", "--duration", "--concurrency",
                        "--rate", "--warmup", "--interval", "--slo")), 0, 0),
}

# Values the parser would refuse (a usage error, exit 2), checked here as cheaply as it can be done:
# a command line that will be refused starts no server (with `npx -y` that could be a download).
# Anything not checked here is still checked by the parser, and an early server then ended unused.
POSITIVE_NUMBERS = frozenset(("--timeout", "--connect-timeout", "--discover-timeout", "--poll", "--keepalive",
                              "--duration", "--rate", "--interval"))
POSITIVE_INTEGERS = frozenset(("--max-pages", "--max-message-size", "--count", "--concurrency", "--requests"))
CHOICES = {"--server-stderr": ("tail", "live", "quiet"), "--transport": ("auto", "stdio"),
           "--elicit": ("decline", "defaults")}
FORMATS = {"probe": ("human", "json", "junit", "openmetrics", "html", "sarif"),
           "load": ("human", "json", "openmetrics", "html")}


def _acceptable(command: str, name: str, value: str) -> bool:
    """False when the parser would refuse `name value` for `command` (so no early start)."""
    if name in POSITIVE_NUMBERS or name in POSITIVE_INTEGERS or name == "--settle":
        try:
            number = int(value) if name in POSITIVE_INTEGERS else float(value)
        except ValueError:
            return False
        return number == number and number not in (float("inf"), float("-inf")) and (
            number >= 0 if name == "--settle" else number > 0)
    if name in CHOICES:
        return value in CHOICES[name]
    if name == "--format":
        return value in FORMATS.get(command, ("human", "json"))
    if name == "--protocol":
        return value in ACCEPTED
    if name == "--cwd":
        return os.path.isdir(value)
    if name in ("--expect", "--baseline"):
        return os.path.isfile(value)
    return True


# The one server started early and not yet adopted: (popen, argv, env without the marker, cwd, marker).
_pending: dict[str, Any] = {}
# Signals that came while the server ran and nobody had taken it yet (the CLI's own handlers are
# installed only when the operation runs): passed on when it is taken, or the run ends interrupted.
_deferred: list[int] = []
_saved: dict[int, Any] = {}
# What happened, for the tests: ("started" | "adopted" | "discarded", pid).
history: list[tuple[str, int]] = []


def plan(argv: list[str]) -> tuple[list[str], list[tuple[str, str]], str | None, bool] | None:
    """(server command, --env pairs, --cwd, --inherit-env) when argv is plainly one stdio server."""
    if not argv or argv[0] not in COMMANDS or "--" not in argv:
        return None
    own_flags, own_valued, fewest, most = COMMANDS[argv[0]]
    split = argv.index("--")
    command, args = argv[split + 1:], argv[1:split]
    if not command or any("\0" in part for part in command):
        return None
    positionals: list[str] = []
    env: list[tuple[str, str]] = []
    cwd: str | None = None
    inherit = False
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg in FLAGS or arg in own_flags:
            inherit = inherit or arg == "--inherit-env"
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in VALUED or name in own_valued:
            if not eq:
                if i >= len(args):
                    return None
                value = args[i]
                i += 1
            if not _acceptable(argv[0], name, value):
                return None
            if name in ("-e", "--env"):
                key, sep, val = value.partition("=")
                if not sep or not key or "\0" in value:
                    return None
                env.append((key, val))
            elif name == "--cwd":
                cwd = value
            continue
        if arg.startswith("-") or arg.lower().startswith(("http://", "https://")):
            return None  # an unknown option; a server URL as well as a command
        positionals.append(arg)
    if not fewest <= len(positionals) <= most or (argv[0] == "list" and positionals[0] not in KINDS):
        return None
    if argv[0] in ("call", "get-prompt") and any("=" not in pair for pair in positionals[1:]):
        return None  # not KEY=VALUE nor KEY:=JSON: a usage error
    return command, env, cwd, inherit


def start(argv: list[str]) -> None:
    """Start the server that argv names, when it plainly names one; never raises."""
    if not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")):
        return
    if any(name.startswith("_MCPPROBE_COMPLETE") for name in os.environ):
        return
    planned = plan(argv)
    if planned is None:
        return
    command, env_pairs, cwd, inherit = planned
    import signal

    # Held back from here on, so that no signal lands between the spawn and the record of it.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        _saved[sig] = signal.signal(sig, _defer)
    try:
        import shutil
        import subprocess

        from mcpprobe.wire import orphans

        env = child_environment(env_pairs, inherit)
        executable = shutil.which(command[0], path=env.get("PATH"))
        if executable is None:
            _restore_handlers()
            return  # the ordinary path words the error
        args = [executable, *command[1:]]
        marker = orphans.new_marker()
        orphans.become_subreaper()
        # As asyncio's subprocess_exec (under anyio.open_process) calls it.
        popen = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
            universal_newlines=False, cwd=cwd, env={**env, orphans.MARKER: marker}, start_new_session=True,
        )
    except Exception:  # noqa: BLE001 - an early start is only a head start; the ordinary path reports
        _restore_handlers()
        return
    _pending.update(popen=popen, args=args, env=env, cwd=cwd, marker=marker)
    history.append(("started", popen.pid))


def _defer(sig: int, frame: object) -> None:
    _deferred.append(sig)


def _interrupt(sig: int, frame: object) -> None:
    raise KeyboardInterrupt


def arm() -> None:
    """The imports are done: from here until the transport takes the server, a signal interrupts
    what runs (a read of `--args -`, a prompt, a config's input) as Ctrl-C does, and the early
    server is ended on the way out. One that came during the imports interrupts at once."""
    import signal

    for sig in _saved:
        if signal.getsignal(sig) is _defer:
            signal.signal(sig, _interrupt)
    if _deferred:
        raise KeyboardInterrupt


def _restore_handlers() -> None:
    import signal

    for sig, previous in _saved.items():
        if signal.getsignal(sig) in (_defer, _interrupt):
            signal.signal(sig, previous)
    _saved.clear()


def _release() -> None:
    """Our handlers go (where the operation's are not installed yet), and a deferred signal is
    raised again, now for those handlers."""
    import signal

    _restore_handlers()
    pending = list(dict.fromkeys(_deferred))
    _deferred.clear()
    for sig in pending:
        signal.raise_signal(sig)


def interrupted() -> bool:
    """A signal came before any operation could take it (the run must end as interrupted)."""
    return bool(_deferred)


def take(args: list[str], env: dict[str, str], cwd: str | None) -> tuple[Popen[bytes], str] | None:
    """The early server (and its marker) if it is exactly the one asked for; else None, and an
    early server that is not the one asked for is ended."""
    if not _pending:
        return None
    try:
        return _take(args, env, cwd)
    finally:
        _release()


def _take(args: list[str], env: dict[str, str], cwd: str | None) -> tuple[Popen[bytes], str] | None:
    if _pending["args"] != args or _pending["env"] != env or _pending["cwd"] != cwd:
        discard(sweep=False)  # other servers of this run may be alive: their strays are not ours
        return None
    popen, marker = _pending["popen"], _pending["marker"]
    _pending.clear()
    history.append(("adopted", popen.pid))
    return popen, marker


def discard(*, sweep: bool = True) -> None:
    """End an early server nobody adopted: its whole process group, then reap it, and with `sweep`
    (mcpprobe's last act) every descendant of it that left the group."""
    if not _pending:
        return
    import contextlib
    import signal

    popen = _pending["popen"]
    _pending.clear()
    with contextlib.suppress(OSError):
        os.killpg(popen.pid, signal.SIGKILL)
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        with contextlib.suppress(OSError):
            stream.close()
    popen.wait()
    history.append(("discarded", popen.pid))
    if sweep:
        from mcpprobe.wire import orphans

        orphans.sweep_now({})
        _restore_handlers()
