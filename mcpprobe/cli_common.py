"""What every command that talks to a server shares: the target and settings from the command
line or a config, the run of one operation with its signals, --trace and -v, and printing an outcome.

Imported by `mcpprobe.cli` and the command modules alike; light at import time (click only), so
`--help` and completion never load the MCP SDK.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TextIO, cast

import click

from mcpprobe.exitcodes import ExitCode

if TYPE_CHECKING:  # names for the annotations only: importing them would load the SDK at --help
    from mcpprobe.config import Discovery, ServerEntry
    from mcpprobe.redact import Redactor
    from mcpprobe.render.formats import Format, Rendered, Screen, View
    from mcpprobe.target import Settings, Target
    from mcpprobe.trace import TraceWriter

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def settings_from(params: dict[str, Any]) -> Settings:
    from mcpprobe.target import Settings, parse_protocol, root_uri

    return Settings(
        protocol=parse_protocol(params["protocol"]),
        timeout=params["timeout"],
        connect_timeout=params["connect_timeout"],
        discover_timeout=params["discover_timeout"],
        max_pages=params["max_pages"],
        max_message_bytes=params["max_message_size"],
        force=params["force"],
        roots=tuple(root_uri(r) for r in params["roots"]),
        server_stderr=params["server_stderr"],
    )


def target_from(ctx: click.Context, positionals: tuple[str, ...], params: dict[str, Any]) -> Target:
    from mcpprobe.target import build_target

    command = ctx.meta.get("server_command", [])
    if len(positionals) == 1 and "://" not in positionals[0] and looks_like_address(positionals[0]):
        raise click.UsageError(
            f"{positionals[0]!r} is not a URL: it has no scheme. For an HTTP server, write the scheme:\n"
            f"  mcpprobe {ctx.info_name} {with_scheme(positionals[0])}")
    if len(positionals) > 1 or (positionals and "://" not in positionals[0]):
        raise click.UsageError(
            f"{' '.join(positionals)!r} is not a URL. To run a stdio server, put its command after '--':\n"
            f"  mcpprobe {ctx.info_name} -- {' '.join(positionals)}"
        )
    url = positionals[0] if positionals else None
    return build_target(
        url, list(command), transport=params["transport"], headers=list(params["headers"]),
        env=list(params["env"]), cwd=params["cwd"], inherit_env=params["inherit_env"],
        insecure=params["insecure"],
    )


_ADDRESS = (r"(?P<host>localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"
            r"(?P<port>:\d{1,5})?(?P<path>/\S*)?")


def looks_like_address(word: str) -> bool:
    """`127.0.0.1:3101/mcp`, `localhost:8000`, `example.com/mcp`: a URL without its scheme. A file
    name such as `server.py` is not one (no port, no path, not a loopback name or an IP address)."""
    import re

    match = re.fullmatch(_ADDRESS, word)
    if match is None:
        return False
    host = match["host"]
    local = host == "localhost" or host[0].isdigit() or host.startswith("[")
    return bool(match["port"] or match["path"] or local)


def with_scheme(word: str) -> str:
    """http:// for a loopback or private address or an explicit port, https:// for a name on the internet."""
    import re

    host = re.match(_ADDRESS, word)["host"]  # type: ignore[index]
    local = host == "localhost" or host[0].isdigit() or host.startswith("[") or host.endswith(".local")
    return ("http://" if local or re.match(_ADDRESS, word)["port"] else "https://") + word  # type: ignore[index]


def prepare(ctx: click.Context, positionals: tuple[str, ...], params: dict[str, Any]) -> tuple[Target, Settings]:
    from mcpprobe import redact
    from mcpprobe.errors import UsageProblem
    from mcpprobe.redact import Redactor

    extra_secrets: list[str] = []
    if params.get("server"):
        if positionals or ctx.meta.get("server_command"):
            raise UsageProblem("give either -s/--server NAME or a URL or a command after '--', not both")
        target, extra_secrets = named_target(read_configs(ctx, params).get(params["server"]), params)
    else:
        target, extra_secrets = authorized(target_from(ctx, positionals, params), params)
    settings = settings_from(params)
    ctx.meta["redactor"] = Redactor([*target.secrets(), *extra_secrets])
    redact.use(ctx.meta["redactor"])
    warn_insecure(params)
    return target, settings


def authorized(target: Target, params: dict[str, Any], entry: ServerEntry | None = None,
               ) -> tuple[Target, list[str]]:
    """The target with its credentials: --bearer-env, a stored or refreshed token, or client
    credentials (a config entry's auth keys under the command line's). Returns the secrets too."""
    from mcpprobe.auth.options import AuthSettings
    from mcpprobe.redact import Redactor
    from mcpprobe.target import StdioTarget

    auth = AuthSettings.from_params(params)
    if isinstance(target, StdioTarget) and auth == AuthSettings(no_browser=auth.no_browser) and not (
            entry is not None and entry.auth):
        return target, []  # nothing to authorize; spares a stdio probe the token store's imports
    from mcpprobe.auth.apply import authorize_target

    if entry is not None and entry.auth:
        auth = auth.merged(AuthSettings.from_config(dict(entry.auth)))
    target, resolved = authorize_target(target, auth, timeout=params["connect_timeout"])
    if resolved.note:
        from mcpprobe.sanitize import visible

        # The note can quote an authorization server's error: inert, and without the new secrets.
        click.echo(visible(Redactor(auth.secrets())(f"mcpprobe: {resolved.note}")), err=True)
    return target, auth.secrets()


def warn_insecure(params: dict[str, Any]) -> None:
    if params["insecure"]:
        click.echo("warning: --insecure: TLS certificates are not verified; anyone on the path can read and "
                   "change this traffic", err=True)


def verbose_say(ctx: click.Context, params: dict[str, Any]) -> Callable[[str], None] | None:
    """-v/--verbose: mcpprobe's own steps on stderr, through the secrets redactor."""
    if not params.get("verbose"):
        return None

    def say(message: str) -> None:
        from mcpprobe.redact import Redactor
        from mcpprobe.sanitize import visible

        # Config names, paths and commands are text from files anyone may have written.
        redactor = ctx.meta.get("redactor") or Redactor(())
        click.echo(visible(redactor(f"mcpprobe: {message}")), err=True)

    return say


def read_configs(ctx: click.Context, params: dict[str, Any]) -> Discovery:
    """Every named server in the configs (--config, else the search path), read once per run."""
    if "discovery" not in ctx.meta:
        from mcpprobe.config import discover

        found = discover(tuple(params.get("config_files") or ()))
        say = verbose_say(ctx, params)
        if say is not None:
            for path, state in found.files:
                say(f"config {path}: {state}")
        ctx.meta["discovery"] = found
    return ctx.meta["discovery"]


def ask_input(input_id: str, spec: dict[str, Any]) -> str:
    prompt = spec.get("description") or input_id
    return click.prompt(f"{prompt} (input {input_id})", hide_input=bool(spec.get("password")), err=True,
                        default=spec.get("default"), show_default=not spec.get("password"))


def named_target(entry: ServerEntry, params: dict[str, Any]) -> tuple[Target, list[str]]:
    """A Target from a config entry; command-line --env, --header, --cwd and --transport apply on top."""
    from mcpprobe.config import resolve
    from mcpprobe.target import build_target

    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    resolved = resolve(entry, prompt=ask_input if interactive else None)
    transport = params["transport"] if params["transport"] != "auto" else resolved.transport
    target = build_target(
        resolved.url, resolved.command, transport=transport, headers=[*resolved.headers, *params["headers"]],
        env=[*resolved.env, *params["env"]], cwd=params["cwd"] or resolved.cwd, inherit_env=params["inherit_env"],
        insecure=params["insecure"],
    )
    target, auth_secrets = authorized(target, params, entry)
    return target, [*resolved.secrets, *auth_secrets]


CANCELLING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run_operation(operation: Any, *args: Any, signals: tuple[signal.Signals, ...] = CANCELLING,
                  stop: Any = None, show: ShowWhenReady | None = None, **kwargs: Any) -> Any:
    """Run one async operation; `signals` cancel it. None means interrupted.

    Ctrl-C is one of them rather than asyncio's KeyboardInterrupt: that one cancels the task
    natively, which the shields around a server's shutdown do not stop, and the run ended in a
    traceback when it came while a slow server was being ended.

    `stop()`, when given, is asked first on a signal: it returns True when it ended the operation
    gracefully itself (watch stops and reports), False to let the signal cancel it. A second
    signal does not wait for a server's shutdown grace: every server still running is killed.

    `show`, when given, is the operation's hook for "the result is complete" (see ShowWhenReady):
    the result is shown from a worker thread while the operation goes on to end its server.
    """
    import anyio

    from mcpprobe.wire.stdio import reap_all

    async def main() -> Any:
        result: list[Any] = []
        # The receiver outlives the cancellation it causes, so that a second signal is ours too,
        # and not a KeyboardInterrupt in the middle of a shutdown.
        listening = anyio.CancelScope(shield=True)
        async with anyio.create_task_group() as group:
            async def on_signal() -> None:
                with listening, anyio.open_signal_receiver(*signals) as received:
                    first = True
                    async for _ in received:
                        if not first:
                            reap_all()
                        if not first or stop is None or not stop():
                            group.cancel_scope.cancel()
                        first = False

            group.start_soon(on_signal)
            if show is not None:
                group.start_soon(show.serve)
            try:
                result.append(await operation(*args, **kwargs))
            finally:
                listening.cancel()
            group.cancel_scope.cancel()
        return result[0] if result else None

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        return None
    finally:
        reap_all()


def emit_outcome(outcome: Any, as_json: bool, command: str) -> int:
    """Print a `list` (or `probe`) outcome, or an interruption (None), in human or JSON form; its exit code."""
    from mcpprobe.render.formats import Format, Interrupted, Listed, renderer

    fmt = Format.JSON if as_json else Format.HUMAN
    subject = Interrupted(command) if outcome is None else Listed(outcome)
    write_rendered(renderer(fmt)(subject, view_for(fmt)))
    return ExitCode.INTERRUPTED if outcome is None else int(outcome.exit_code)


def write_rendered(rendered: Rendered) -> None:
    """Print what a renderer returned: stdout (text through the secrets redactor, even a secret
    split across two pieces; decoded blobs as the bytes they are), flushed now, then stderr.

    Now, not at exit: a stdio server may still be shutting down, and the reader of a pipe
    (`| jq`) should not wait for that."""
    from mcpprobe.redact import RedactingStream, SplitWrites

    redactor = current_redactor()
    stdout = RedactingStream(sys.stdout, redactor)
    masked = SplitWrites(redactor)
    for piece in rendered.stdout:
        if isinstance(piece, str):
            stdout.write(masked.feed(piece))
            continue
        stdout.write(masked.end())
        stdout.flush()
        binary = getattr(sys.stdout, "buffer", None)
        if binary is None:  # a text-only stream: say so rather than corrupt it
            stdout.write(f"[blob: {len(piece)} bytes]\n")
        else:
            binary.write(piece)
            binary.flush()
    stdout.write(masked.end())
    stdout.flush()
    if rendered.stderr:
        stderr = RedactingStream(sys.stderr, redactor)
        stderr.write(rendered.stderr)
        stderr.flush()


def view_for(fmt: Format) -> View:
    """How stdout and stderr show text: a terminal's width and colours; in a pipe, plain, as wide
    as COLUMNS or a terminal behind the pipe allows, else unbounded (mcpprobe.render.console).
    stderr's is looked at only when something is shown on it: a document alone loads no rich."""
    from mcpprobe.render.formats import Format, View

    err = functools.partial(_screen, sys.stderr)
    if not sys.stdout.isatty() and fmt is not Format.HUMAN:
        return View(stderr=err)  # the width is for people
    out = _screen(sys.stdout)
    return View(width=out.width, color=out.color, terminal=sys.stdout.isatty(), stderr=err)


def _screen(stream: TextIO) -> Screen:
    from mcpprobe.render.formats import Screen

    if not stream.isatty():
        from mcpprobe.render.console import output_width

        return Screen(width=output_width(stream) or 160)
    from rich.console import Console

    console = Console(file=stream)
    return Screen(width=console.width, color=console.color_system is not None and not console.no_color)


class ShowWhenReady:
    """Shows a result as soon as the operation says it is complete, while a stdio server is
    still shutting down, not after; and once, whatever happens during the shutdown.

    The instance is the operation's hook: called inside the event loop, it only keeps the result.
    `serve` (started by run_operation) then shows it with `show(result) -> exit code` in a worker
    thread, outside the event loop, in the command's click context; the loop meanwhile ends the
    server. `code` is the shown result's exit code, or None when nothing was shown.
    """

    def __init__(self, show: Callable[[Any], int]) -> None:
        self._show = show
        self._context = click.get_current_context(silent=True)
        self._results: list[Any] = []
        self._ready: Any = None
        self.code: int | None = None

    def __call__(self, result: Any) -> None:
        if not self._results:
            self._results.append(result)
            if self._ready is not None:
                self._ready.set()

    async def serve(self) -> None:
        import anyio

        self._ready = anyio.Event()
        if self._results:
            self._ready.set()
        await self._ready.wait()
        self.code = await anyio.to_thread.run_sync(self._show_in_context)

    def _show_in_context(self) -> int:
        if self._context is None:
            return self._show(self._results[0])
        with self._context.scope(cleanup=False):  # click's context is per thread
            return self._show(self._results[0])


def run_and_emit(operation: Any, params: dict[str, Any], command: str, *args: Any, spinner: Any = None,
                 **kwargs: Any) -> int:
    """Run the operation and report its outcome as soon as it is complete (ShowWhenReady); a
    spinner, when given, runs until then."""

    def show_outcome(outcome: Any) -> int:
        if spinner is not None:
            spinner.stop()
        return emit_outcome(outcome, params["as_json"], command)

    show = ShowWhenReady(show_outcome)
    if spinner is not None:
        spinner.start()
    try:
        outcome = run_operation(operation, *args, on_ready=show, show=show, **kwargs)
    finally:
        if spinner is not None:
            spinner.stop()
    if show.code is not None:
        return show.code
    return emit_outcome(outcome, params["as_json"], command)


def phase_spinner(params: dict[str, Any], human: bool, target: str, *, fleet: int = 0) -> Any:
    """A spinner naming the phase on stderr (with `fleet`, the count of servers probed so far),
    when stderr is a terminal and the output is for a person; None otherwise, and when something
    else writes to stderr as it goes (--trace -, --server-stderr live, -v)."""
    if (not human or not sys.stderr.isatty() or params.get("trace") == "-" or params.get("server_stderr") == "live"
            or (fleet and params.get("verbose"))):
        return None
    from mcpprobe.redact import RedactingStream
    from mcpprobe.render.console import make_console
    from mcpprobe.render.progress import FleetSpinner, PhaseSpinner

    stderr = make_console(cast("TextIO", RedactingStream(sys.stderr, current_redactor())), messages=True)
    return FleetSpinner(stderr, fleet) if fleet else PhaseSpinner(stderr, target)


def current_redactor() -> Redactor:
    """The secrets to mask, as gathered from the target by `_prepare` (none outside a command)."""
    from mcpprobe.redact import Redactor

    ctx = click.get_current_context(silent=True)
    return (ctx.meta.get("redactor") if ctx is not None else None) or Redactor(())


def write_line(stream: Any, text: str) -> None:
    stream.write(text + "\n")
    stream.flush()


def server_stderr_writer(params: dict[str, Any]) -> Any:
    if params["server_stderr"] != "live":
        return None
    from mcpprobe.redact import RedactingStream
    from mcpprobe.wire.stdio import write_stderr_text

    stream = RedactingStream(sys.stderr, current_redactor())
    return lambda text: write_stderr_text(text, stream)


def open_trace(params: dict[str, Any], redactor: Redactor) -> TraceWriter | None:
    if not params.get("trace"):
        return None
    from mcpprobe.trace import TraceWriter

    if params["trace"] == "-":
        return TraceWriter(sys.stderr, redactor)
    try:
        stream = open(params["trace"], "w", encoding="utf-8",  # noqa: SIM115 - closed after the run
                      errors="backslashreplace")
    except OSError as exc:
        raise click.BadParameter(f"cannot write {params['trace']}: {exc.strerror or exc}",
                                 param_hint="'--trace'") from None
    return TraceWriter(stream, redactor, close=True)


@contextlib.contextmanager
def session_extras(ctx: click.Context, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """What one server's session takes from the command line: --server-stderr, and --trace (its
    writer feeds the session and is closed after the run)."""
    writer = ctx.meta["trace"] = open_trace(params, ctx.meta["redactor"])  # see _trace_checked
    args: dict[str, Any] = {"stderr_writer": server_stderr_writer(params)}
    if writer is not None:
        args.update(tracer=writer.tracer(), http_hooks=writer.http_hooks())
    try:
        yield args
    finally:
        if writer is not None:
            writer.close()


def tell(ctx: click.Context, params: dict[str, Any], what: str, target: Target) -> None:
    """-v: what is about to happen, and to which server."""
    say = verbose_say(ctx, params)
    if say is not None:
        say(f"{what} of {target.transport}: {target.describe()}")


def trace_checked(trace: TraceWriter | None, params: dict[str, Any], code: int) -> int:
    """A --trace file that could not be written is an error (exit 2), after the result was shown."""
    if trace is None or trace.error is None:
        return code
    from mcpprobe.exitcodes import worst

    click.echo(f"error: --trace {params['trace']}: cannot write: {trace.error}; the trace is incomplete", err=True)
    return int(worst([ExitCode(code), ExitCode.USAGE]))
