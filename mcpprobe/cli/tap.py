"""The command line for `tap`: click glue over `mcpprobe.tap`.

`mcpprobe tap [OPTIONS] -- COMMAND [ARGS]` goes in a host's config in place of the server's command: the
host talks to mcpprobe as it would to the server, mcpprobe relays every byte, and judges both sides.
Nothing of mcpprobe's goes to stdout: the live view and the report go to stderr (or --log, --report).
Light at import time, like `mcpprobe.cli.main`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from mcpprobe.cli.edge import CONTEXT, EdgeCommand

if TYPE_CHECKING:
    from mcpprobe.safety.redact import Redactor

FORMATS = ("human", "json", "sarif", "junit", "html")


def _writer(path: str | None) -> tuple[Callable[[str], None], Callable[[], None]]:
    """Where the live view goes: a line per call, one write each (so it never splits inside a line of the
    server's own stderr); the file of --log is created 0600 and appended to."""
    if path is None or path == "-":
        fd = 2
        close: Callable[[], None] = lambda: None  # noqa: E731
    else:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        except OSError as exc:
            raise click.BadParameter(f"cannot open {path}: {exc.strerror or exc}", param_hint="'--log'") from None

        def close() -> None:
            with contextlib.suppress(OSError):
                os.close(fd)

    def say(line: str) -> None:
        with contextlib.suppress(OSError):
            os.write(fd, (line + "\n").encode("utf-8", "backslashreplace"))

    return say, close


def _positive_size(ctx: click.Context, param: click.Parameter, value: int) -> int:
    if value < 1024:
        raise click.BadParameter("must be at least 1024 (bytes)")
    return value


@click.command("tap", cls=EdgeCommand, context_settings={**CONTEXT, "allow_interspersed_args": False})
@click.option("--record", "record", metavar="FILE",
              help="Write every message (secrets masked) and connection event to FILE, JSON Lines, created 0600. "
                   "An existing record is appended to: the new connection is judged as a reconnect.")
@click.option("--replay", "replay_path", metavar="FILE",
              help="Judge a record offline and show it again, instead of running a server.")
@click.option("--report", "report", metavar="FILE",
              help="Write the report at the end to FILE (default: to stderr, or to --log's file; with --replay, "
                   "to stdout).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="human", show_default=True,
              help="The report's format.")
@click.option("--log", "log", metavar="FILE",
              help="Write the live view (a line per message, event and finding) to FILE instead of stderr.")
@click.option("--quiet", "-q", is_flag=True, help="No live view; the report only (to --report's file, or stderr).")
@click.option("--events-only", is_flag=True, help="The live view shows events and findings, not every message.")
@click.option("--cut", "cut", type=int, default=256 * 1024, show_default=True, callback=_positive_size,
              metavar="BYTES", help="A message longer than this is recorded as its envelope, size and SHA-256.")
@click.option("--listen", "listen", metavar="HOST:PORT",
              help="Tap an HTTP server instead: listen here (loopback only) and proxy to the URL given.")
@click.option("--allow-remote", is_flag=True,
              help="Let --listen bind an address other than loopback (anyone who reaches it reaches the server).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def tap_command(record: str | None, replay_path: str | None, report: str | None, fmt: str, log: str | None,
                quiet: bool, events_only: bool, cut: int, listen: str | None, allow_remote: bool,
                command: tuple[str, ...]) -> int:
    """Sit between a host and its server (stdio or HTTP): relay every byte, record, and judge both sides.

    Put it in the host's config in place of the server's command:

    \b
      mcpprobe tap --record /tmp/everything.jsonl -- npx -y @modelcontextprotocol/server-everything
      mcpprobe tap --replay /tmp/everything.jsonl --format json

    Over HTTP, a reverse proxy on loopback; point the host at it:

    \b
      mcpprobe tap --listen 127.0.0.1:8080 https://example.com/mcp

    The host sees the server as before, byte for byte; stdout carries only the server's messages.
    The exit code is the server's (128+N if signal N ended it; 127 command not found, 126 cannot
    run). With --replay: 0 no error finding, 1 error findings, 2 a file that is not a record.
    """
    from mcpprobe.safety import redact
    from mcpprobe.tap.report import TapFormat

    if listen is not None:
        if replay_path is not None or len(command) != 1 or not command[0].startswith(("http://", "https://")):
            raise click.UsageError("--listen HOST:PORT takes one server URL: mcpprobe tap --listen 127.0.0.1:8080 "
                                   "https://example.com/mcp")
        say, close = _writer(log)
        try:
            return _http(listen, allow_remote, command[0], record, cut, None if quiet else say, not events_only,
                         TapFormat(fmt), report, say)
        finally:
            close()
    if replay_path is not None and command:
        raise click.UsageError("give either --replay FILE or a server command after '--', not both")
    if replay_path is None and not command:
        raise click.UsageError("give the server's command after '--' (mcpprobe tap -- COMMAND [ARGS]), "
                               "or --replay FILE")
    say, close = _writer(log)
    live = None if quiet else say
    try:
        if replay_path is not None:
            return _replay(replay_path, live, not events_only, TapFormat(fmt), report or "-", say)
        from mcpprobe.tap.session import redactor_for

        redactor = redactor_for(list(command))
        redact.use(redactor)
        return _live(list(command), redactor, record, cut, live, not events_only, TapFormat(fmt), report, say)
    finally:
        close()


def _emit_report(text: str, report: str | None, say: Callable[[str], None]) -> bool:
    from mcpprobe.safety.outfiles import WriteFailed, write_file

    if report is None:
        say(text.rstrip("\n"))
        return True
    if report == "-":  # --replay's default: no host there, stdout is the user's
        click.echo(text, nl=False)
        return True
    try:
        write_file(report, text.encode("utf-8", "backslashreplace"), private=True)
    except WriteFailed as exc:
        say(f"error: {exc.message}")
        return False
    return True


def _replay(path: str, live: Callable[[str], None] | None, messages: bool, fmt: object, report: str | None,
            say: Callable[[str], None]) -> int:
    from mcpprobe.findings import has_errors
    from mcpprobe.tap.record import RecordError
    from mcpprobe.tap.report import TapFormat, render
    from mcpprobe.tap.session import replay

    assert isinstance(fmt, TapFormat)
    try:
        findings, summary = replay(path, live, messages, fmt is TapFormat.HTML)
    except RecordError as exc:
        from mcpprobe.safety.sanitize import visible

        raise click.UsageError(visible(exc.message)) from None
    if not _emit_report(render(fmt, findings, summary), report, say):
        return 2
    return 1 if has_errors(findings) else 0


def _live(command: list[str], redactor: Redactor, record: str | None, cut: int,
          live: Callable[[str], None] | None, messages: bool, fmt: object, report: str | None,
          say: Callable[[str], None]) -> int:
    from mcpprobe.tap.record import RecordError
    from mcpprobe.tap.relay import StartFailed, StdioRelay
    from mcpprobe.tap.report import TapFormat, render
    from mcpprobe.tap.session import TapOptions, run_live

    assert isinstance(fmt, TapFormat)
    if record is not None and os.path.isdir(record):
        raise click.BadParameter(f"{record} is a directory", param_hint="'--record'")
    options = TapOptions(command, record, cut, live, messages, fmt is TapFormat.HTML)
    relay = StdioRelay(command)
    try:
        findings, summary = run_live(options, relay, redactor)
    except StartFailed as exc:
        say(f"error: {exc.message}")
        return exc.status
    except RecordError as exc:
        say(f"error: {exc.message}")
        return 2
    except OSError as exc:
        say(f"error: cannot write the record {record}: {exc.strerror or exc}")
        return 2
    _emit_report(render(fmt, findings, summary), report, say)
    sys.stderr.flush()
    return summary.exit_status if summary.exit_status is not None else 0


def _http(listen: str, allow_remote: bool, url: str, record: str | None, cut: int,
          live: Callable[[str], None] | None, messages: bool, fmt: object, report: str | None,
          say: Callable[[str], None]) -> int:
    from mcpprobe.safety import redact
    from mcpprobe.tap.http import LOOPBACK
    from mcpprobe.tap.report import TapFormat, render
    from mcpprobe.tap.session import TapOptions, redactor_for, run_http

    assert isinstance(fmt, TapFormat)
    host, _, port_text = listen.rpartition(":")
    host = host.strip("[]")
    if not host or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise click.BadParameter(f"{listen!r}: expected HOST:PORT, such as 127.0.0.1:8080", param_hint="'--listen'")
    if host not in LOOPBACK:
        if not allow_remote:
            raise click.BadParameter(f"{host} is not a loopback address: the tap relays to your server whatever "
                                     "reaches it; add --allow-remote to listen there anyway", param_hint="'--listen'")
        say(f"warning: listening on {host}: anyone who can reach it reaches {url} through mcpprobe")
    redactor = redactor_for([url])
    redact.use(redactor)
    if record is not None and os.path.isdir(record):
        raise click.BadParameter(f"{record} is a directory", param_hint="'--record'")
    options = TapOptions([url], record, cut, live, messages, fmt is TapFormat.HTML)
    from mcpprobe.tap.record import RecordError

    try:
        findings, summary = run_http(options, url, host, int(port_text), redactor,
                                     lambda where: say(f"tap: listening on {where}, relaying to {redactor(url)}"))
    except RecordError as exc:
        say(f"error: {exc.message}")
        return 2
    except OSError as exc:
        say(f"error: {exc.strerror or exc}")
        return 2
    _emit_report(render(fmt, findings, summary), report, say)
    return 0
