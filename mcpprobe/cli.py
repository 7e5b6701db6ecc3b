"""The command line: click glue over `mcpprobe.operations`.

The one edge where exceptions become exit codes. Imports stay light at module level so that
`--help`, `--version` and completion never load the MCP SDK.
"""

from __future__ import annotations

import contextlib
import signal
import sys
from typing import Any

import click

from mcpprobe import __version__
from mcpprobe.exitcodes import ExitCode
from mcpprobe.options import CONFIG_OPTION, TargetCommand, _positive, connection_options, debug_options, server_options

KIND_CHOICES = ("tools", "resources", "templates", "prompts", "tasks")
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _version_text() -> str:
    from mcpprobe.versions import sdk_version

    return f"mcpprobe {__version__} (mcp SDK {sdk_version()}, Python {sys.version.split()[0]})"


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    # A callback, so the SDK's version is looked up only when asked for, not at every start.
    if value and not ctx.resilient_parsing:
        click.echo(_version_text())
        ctx.exit()


@click.group(context_settings=CONTEXT)
@click.option("-V", "--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Show the version and exit.")
def cli() -> None:
    """Diagnose a Model Context Protocol server: what it declares, what it negotiates, and what is
    broken rather than merely absent.

    \b
    A server is a URL (streamable HTTP, or legacy SSE) or a command after '--' (stdio):
      mcpprobe probe -- mcpprobe-demo
      mcpprobe probe https://example.com/mcp
      mcpprobe list tools --json -- npx -y @modelcontextprotocol/server-everything | jq '.items[].name'

    Exit codes: 0 ok, 1 findings, 2 usage, 3 refused, 4 connection, 5 protocol, 6 timeout, 7 auth,
    130 interrupted.
    See `mcpprobe docs exit-codes` and `mcpprobe docs findings`; `mcpprobe docs` lists every page.
    """
    from mcpprobe import redact

    redact.use(redact.Redactor(()))  # each command names its own secrets


def _settings(params: dict[str, Any]) -> Any:
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


def _target(ctx: click.Context, positionals: tuple[str, ...], params: dict[str, Any]) -> Any:
    from mcpprobe.target import build_target

    command = ctx.meta.get("server_command", [])
    if len(positionals) == 1 and "://" not in positionals[0] and _looks_like_address(positionals[0]):
        raise click.UsageError(
            f"{positionals[0]!r} is not a URL: it has no scheme. For an HTTP server, write the scheme:\n"
            f"  mcpprobe {ctx.info_name} {_with_scheme(positionals[0])}")
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


def _looks_like_address(word: str) -> bool:
    """`127.0.0.1:3101/mcp`, `localhost:8000`, `example.com/mcp`: a URL without its scheme. A file
    name such as `server.py` is not one (no port, no path, not a loopback name or an IP address)."""
    import re

    match = re.fullmatch(_ADDRESS, word)
    if match is None:
        return False
    host = match["host"]
    local = host == "localhost" or host[0].isdigit() or host.startswith("[")
    return bool(match["port"] or match["path"] or local)


def _with_scheme(word: str) -> str:
    """http:// for a loopback or private address or an explicit port, https:// for a name on the internet."""
    import re

    host = re.match(_ADDRESS, word)["host"]  # type: ignore[index]
    local = host == "localhost" or host[0].isdigit() or host.startswith("[") or host.endswith(".local")
    return ("http://" if local or re.match(_ADDRESS, word)["port"] else "https://") + word  # type: ignore[index]


def _prepare(ctx: click.Context, positionals: tuple[str, ...], params: dict[str, Any]) -> tuple[Any, Any]:
    from mcpprobe import redact
    from mcpprobe.errors import UsageProblem
    from mcpprobe.redact import Redactor

    extra_secrets: list[str] = []
    try:
        if params.get("server"):
            if positionals or ctx.meta.get("server_command"):
                raise UsageProblem("give either -s/--server NAME or a URL or a command after '--', not both")
            target, extra_secrets = _named_target(_discovery(ctx, params).get(params["server"]), params)
        else:
            target, extra_secrets = _authorized(_target(ctx, positionals, params), params)
        settings = _settings(params)
    except UsageProblem as exc:
        raise click.UsageError(exc.message) from None
    ctx.meta["redactor"] = Redactor([*target.secrets(), *extra_secrets])
    redact.use(ctx.meta["redactor"])
    _warn_insecure(params)
    return target, settings


def _authorized(target: Any, params: dict[str, Any], entry: Any = None) -> tuple[Any, list[str]]:
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


def _warn_insecure(params: dict[str, Any]) -> None:
    if params["insecure"]:
        click.echo("warning: --insecure: TLS certificates are not verified; anyone on the path can read and "
                   "change this traffic", err=True)


def _say(ctx: click.Context, params: dict[str, Any]) -> Any:
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


def _discovery(ctx: click.Context, params: dict[str, Any]) -> Any:
    """Every named server in the configs (--config, else the search path), read once per run."""
    if "discovery" not in ctx.meta:
        from mcpprobe.config import discover

        found = discover(tuple(params.get("config_files") or ()))
        say = _say(ctx, params)
        if say is not None:
            for path, state in found.files:
                say(f"config {path}: {state}")
        ctx.meta["discovery"] = found
    return ctx.meta["discovery"]


def _ask_input(input_id: str, spec: dict[str, Any]) -> str:
    prompt = spec.get("description") or input_id
    return click.prompt(f"{prompt} (input {input_id})", hide_input=bool(spec.get("password")), err=True,
                        default=spec.get("default"), show_default=not spec.get("password"))


def _named_target(entry: Any, params: dict[str, Any]) -> tuple[Any, list[str]]:
    """A Target from a config entry; command-line --env, --header, --cwd and --transport apply on top."""
    from mcpprobe.config import resolve
    from mcpprobe.target import build_target

    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    resolved = resolve(entry, prompt=_ask_input if interactive else None)
    transport = params["transport"] if params["transport"] != "auto" else resolved.transport
    target = build_target(
        resolved.url, resolved.command, transport=transport, headers=[*resolved.headers, *params["headers"]],
        env=[*resolved.env, *params["env"]], cwd=params["cwd"] or resolved.cwd, inherit_env=params["inherit_env"],
        insecure=params["insecure"],
    )
    target, auth_secrets = _authorized(target, params, entry)
    return target, [*resolved.secrets, *auth_secrets]


def _run(operation: Any, *args: Any, signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP),
         stop: Any = None, **kwargs: Any) -> Any:
    """Run one async operation; `signals` cancel it. None means interrupted.

    Ctrl-C is one of them rather than asyncio's KeyboardInterrupt: that one cancels the task
    natively, which the shields around a server's shutdown do not stop, and the run ended in a
    traceback when it came while a slow server was being ended.

    `stop()`, when given, is asked first on a signal: it returns True when it ended the operation
    gracefully itself (watch stops and reports), False to let the signal cancel it. A second
    signal does not wait for a server's shutdown grace: every server still running is killed.
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


def _emit(outcome: Any, as_json: bool, command: str) -> int:
    from mcpprobe.redact import RedactingStream

    redactor = _redactor()
    stdout, stderr = RedactingStream(sys.stdout, redactor), RedactingStream(sys.stderr, redactor)
    if as_json and outcome is not None and outcome.error is None:
        return _emit_json(stdout, redactor, outcome)

    from mcpprobe.render.console import make_console

    err = make_console(stderr, messages=True)
    if outcome is None:
        if as_json:
            from mcpprobe.render.jsondoc import dumps

            _write(stdout, dumps({"formatVersion": 1, "command": command, "ok": False,
                          "exitCode": int(ExitCode.INTERRUPTED),
                          "error": {"code": "interrupted", "message": "interrupted", "exitCode": 130}}))
        err.print("interrupted", style="yellow")
        return ExitCode.INTERRUPTED
    if as_json:
        from mcpprobe.render.jsondoc import document, write

        write(stdout, document(outcome), redactor=redactor)
        from mcpprobe.render.human import render_error

        render_error(err, outcome)
    else:
        from mcpprobe.render.human import render_outcome

        out = make_console(stdout)
        render_outcome(out, err, outcome)
    # Now, not at exit: a stdio server may still be shutting down, and the reader of a pipe
    # (`| jq`) should not wait for that.
    stdout.flush()
    return int(outcome.exit_code)


def _run_and_emit(operation: Any, params: dict[str, Any], command: str, *args: Any, spinner: Any = None,
                  **kwargs: Any) -> int:
    """Run the operation and report its outcome as soon as it is complete: while a stdio server
    is still shutting down, not after. Reported once, whatever happens during the shutdown."""
    reported: list[int] = []

    def on_ready(outcome: Any) -> None:
        if spinner is not None:
            spinner.stop()
        reported.append(_emit(outcome, params["as_json"], command))

    if spinner is not None:
        spinner.start()
    try:
        outcome = _run(operation, *args, on_ready=on_ready, **kwargs)
    finally:
        if spinner is not None:
            spinner.stop()
    if reported:
        return reported[0]
    return _emit(outcome, params["as_json"], command)


def _spinner(params: dict[str, Any], human: bool, target: str) -> Any:
    """A spinner naming the phase on stderr, when stderr is a terminal and the output is for a
    person; None otherwise, and when something else writes to stderr as it goes (--trace -,
    --server-stderr live)."""
    if not human or not sys.stderr.isatty() or params.get("trace") == "-" or params.get("server_stderr") == "live":
        return None
    from mcpprobe.redact import RedactingStream
    from mcpprobe.render.console import make_console
    from mcpprobe.render.progress import PhaseSpinner

    return PhaseSpinner(make_console(RedactingStream(sys.stderr, _redactor()), messages=True), target)


def _redactor() -> Any:
    """The secrets to mask, as gathered from the target by `_prepare` (none outside a command)."""
    from mcpprobe.redact import Redactor

    ctx = click.get_current_context(silent=True)
    return (ctx.meta.get("redactor") if ctx is not None else None) or Redactor(())


def _write(stream: Any, text: str) -> None:
    stream.write(text + "\n")
    stream.flush()


def _server_stderr_writer(params: dict[str, Any]) -> Any:
    if params["server_stderr"] != "live":
        return None
    from mcpprobe.redact import RedactingStream
    from mcpprobe.wire.stdio import write_stderr_text

    stream = RedactingStream(sys.stderr, _redactor())
    return lambda text: write_stderr_text(text, stream)


FORMATS = ("human", "json", "junit", "openmetrics", "html")


def _output_format(params: dict[str, Any]) -> str:
    chosen = params.get("output_format")
    if params["as_json"] and chosen not in (None, "json"):
        raise click.UsageError(f"--json is short for --format json; it cannot be combined with --format {chosen}")
    return "json" if params["as_json"] else (chosen or "human")


def _open_trace(params: dict[str, Any], redactor: Any) -> Any:
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


def _session_extras(ctx: click.Context, params: dict[str, Any], label: str = "") -> tuple[Any, dict[str, Any]]:
    """--trace for one server: the writer (to close) and the session arguments that feed it."""
    writer = _open_trace(params, ctx.meta["redactor"])
    if writer is None:
        return None, {}

    hooks = writer.http_hooks(label)
    return writer, {"tracer": writer.tracer(label), "http_hooks": hooks}


def _per_server_path(template: str | None, option: str, name: str, many: bool) -> str | None:
    if not template:
        return None
    if many and "{server}" not in template:
        raise click.UsageError(f"{option} with several servers needs '{{server}}' in the path, "
                               f"for example {option} 'snapshots/{{server}}.json'")
    return template.replace("{server}", name or "server")


def _members(ctx: click.Context, positionals: tuple[str, ...], params: dict[str, Any]) -> tuple[list[Any], bool]:
    """The servers to probe: one from the command line, or named ones from the configs."""
    from mcpprobe import redact
    from mcpprobe.errors import UsageProblem
    from mcpprobe.fleet import Member
    from mcpprobe.redact import Redactor

    names: list[str] = list(dict.fromkeys(params["servers"]))
    if params["all_servers"] and names:
        raise click.UsageError("give either --all or -s/--server NAME, not both")
    if not params["all_servers"] and not names:
        target, settings = _prepare(ctx, positionals, params)
        return [Member("", target, settings)], False
    if positionals or ctx.meta.get("server_command"):
        raise click.UsageError(
            "give either named servers (-s/--server, --all) or a URL or a command after '--', not both")
    try:
        discovery = _discovery(ctx, params)
        settings = _settings(params)
        if params["all_servers"]:
            names = discovery.names()
            if not names:
                raise UsageProblem("--all: no servers found in the configs (see `mcpprobe servers -v` and "
                                   "`mcpprobe docs config`)")
        entries = [discovery.get(name) for name in names]
    except UsageProblem as exc:
        raise click.UsageError(exc.message) from None
    many = params["all_servers"] or len(names) > 1
    members, secrets = [], []
    for entry in entries:
        if entry.disabled and params["all_servers"]:
            # Named with -s it is probed anyway: the user asked for it.
            members.append(Member(entry.name, None, settings, source=entry.source,
                                  skipped='"disabled": true in its config entry'))
            continue
        try:
            target, extra = _named_target(entry, params)
        except UsageProblem as exc:
            if not many:
                raise click.UsageError(exc.message) from None
            members.append(Member(entry.name, None, settings, source=entry.source, problem=exc))
            continue
        secrets.extend([*target.secrets(), *extra])
        members.append(Member(entry.name, target, settings, source=entry.source))
    ctx.meta["redactor"] = Redactor(secrets)
    redact.use(ctx.meta["redactor"])
    _warn_insecure(params)
    return members, many


def _ci_inputs(params: dict[str, Any], members: list[Any], many: bool) -> Any:
    """--expect, --baseline and --save-snapshot, read and checked before anything is started."""
    from pathlib import Path

    from mcpprobe import drift, expect
    from mcpprobe.errors import UsageProblem

    try:
        expectations = expect.load(params["expect_file"]) if params["expect_file"] else None
        for member in members:
            member.snapshot_path = _per_server_path(params["save_snapshot"], "--save-snapshot", member.name, many)
            if member.snapshot_path and Path(member.snapshot_path).is_dir():
                raise UsageProblem(f"--save-snapshot {member.snapshot_path}: is a directory; name a file in it")
            path = _per_server_path(params["baseline"], "--baseline", member.name, many)
            if path is not None:
                member.baseline = (path, drift.load(path))
    except UsageProblem as exc:
        raise click.UsageError(exc.message) from None
    return expectations


@cli.command(cls=TargetCommand, context_settings=CONTEXT)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@server_options(many=True)
@click.option("--all", "all_servers", is_flag=True, help="Probe every server found in the configs (a fleet).")
@click.option("--concurrency", type=int, default=8, show_default=True, metavar="N", callback=_positive,
              help="How many servers of a fleet are probed at once.")
@click.option("--list-servers", is_flag=True, help="Show the named servers and the files they come from, and exit.")
@click.option("--expect", "expect_file", type=click.Path(dir_okay=False), metavar="FILE.yaml",
              help="Check what the server must offer (`mcpprobe docs expectations`); each unmet expectation is an "
                   "expectation-failed finding (exit 1).")
@click.option("--save-snapshot", metavar="FILE",
              help="Write the catalog (capabilities, items) to FILE as JSON; with a fleet put {server} in FILE.")
@click.option("--baseline", metavar="FILE",
              help="Compare with a snapshot saved earlier: report added, removed and changed items; breaking "
                   "changes exit 1.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
              help="Output format: human (default), json (same as --json), junit (JUnit XML), openmetrics "
                   "(Prometheus text), html (one self-contained page).")
@debug_options
@connection_options
@click.pass_context
def probe(ctx: click.Context, url: tuple[str, ...], **params: Any) -> None:
    """Connect, show what was negotiated, and list every declared kind to the end.

    Never calls a tool. Exit 0 when nothing is wrong, 1 when there are error findings. With several
    -s NAME or --all, probes a fleet concurrently: one row per server, the worst exit code overall.

    \b
    Examples:
      mcpprobe probe -- mcpprobe-demo
      mcpprobe probe --json https://example.com/mcp | jq '.kinds | map_values(.state)'
      mcpprobe probe -s github --expect expect.yaml --format junit > report.xml
      mcpprobe probe --all --format openmetrics > /var/lib/node_exporter/mcp.prom
    """
    fmt = _output_format(params)
    if params["list_servers"]:
        ctx.exit(_show_servers(ctx, params, fmt == "json"))
    members, many = _members(ctx, url, params)
    expectations = _ci_inputs(params, members, many)
    from mcpprobe.fleet import Extras, run

    trace = _open_trace(params, ctx.meta["redactor"])
    extras = Extras(expectations, trace=trace, stderr_writer=_server_stderr_writer(params),
                    say=_say(ctx, params), label_traces=many)
    if extras.say is not None and many:
        extras.say(f"probing {len(members)} servers, at most {params['concurrency']} at once")
    shown: list[int] = []
    finished: list[Any] = [None] * len(members)
    spinner = None
    if not many:
        target = members[0].target
        spinner = _spinner(params, fmt == "human", target.describe() if target is not None else members[0].label)
        extras.watch = spinner.watch if spinner is not None else None

        def on_report(report: Any) -> None:
            # One server: shown as soon as its report is complete, while a stdio server shuts down.
            if spinner is not None:
                spinner.stop()
            shown.append(_emit_reports([report], fmt, many))

        extras.on_report = on_report
    if spinner is not None:
        spinner.start()
    try:
        reports = _run(run, members, concurrency=params["concurrency"], extras=extras, into=finished)
    finally:
        if spinner is not None:
            spinner.stop()
        if trace is not None:
            trace.close()
    if reports is None and many:
        # Interrupted: the servers that had finished are shown, the others as interrupted.
        from mcpprobe.fleet import interrupted_report

        reports = [report or interrupted_report(member) for report, member in zip(finished, members, strict=True)]
    ctx.exit(_trace_checked(trace, params, shown[0] if shown else _emit_reports(reports, fmt, many)))


def _trace_checked(trace: Any, params: dict[str, Any], code: int) -> int:
    """A --trace file that could not be written is an error (exit 2), after the result was shown."""
    if trace is None or trace.error is None:
        return code
    from mcpprobe.exitcodes import worst

    click.echo(f"error: --trace {params['trace']}: cannot write: {trace.error}; the trace is incomplete", err=True)
    return int(worst([code, ExitCode.USAGE]))


def _emit_json(stdout: Any, redactor: Any, outcome: Any) -> int:
    """The JSON document when nothing is to be said on stderr: without rich and the human
    renderer (40-60 ms of imports, most of a probe's rendering time)."""
    from mcpprobe.render.jsondoc import document, write

    write(stdout, document(outcome), redactor=redactor)
    stdout.flush()
    return int(outcome.exit_code)


def _emit_reports(reports: list[Any] | None, fmt: str, many: bool) -> int:
    if reports is not None and fmt == "json" and not any(
            report.outcome.error is not None or report.snapshot_error for report in reports):
        from mcpprobe.exitcodes import worst
        from mcpprobe.redact import RedactingStream
        from mcpprobe.render.jsondoc import write

        redactor = _redactor()
        docs = [report.document() for report in reports]
        stdout = RedactingStream(sys.stdout, redactor)
        write(stdout, docs if many else docs[0], redactor=redactor)
        stdout.flush()
        return int(worst([report.exit_code for report in reports]))

    from rich.text import Text

    from mcpprobe.exitcodes import worst
    from mcpprobe.fleet import fleet_exit_code
    from mcpprobe.redact import RedactingStream
    from mcpprobe.render.console import make_console
    from mcpprobe.render.human import render_error, safe

    if reports is None:
        return _emit(None, fmt == "json", "probe")
    redactor = _redactor()
    stdout, stderr = RedactingStream(sys.stdout, redactor), RedactingStream(sys.stderr, redactor)
    err = make_console(stderr, messages=True)
    out = make_console(stdout)
    if fmt == "human" and not many:
        from mcpprobe.render.fleet import render_extras
        from mcpprobe.render.human import render_outcome

        render_outcome(out, err, reports[0].outcome)
        render_extras(out, reports[0])
    elif fmt == "human":
        from mcpprobe.render.fleet import render_fleet

        render_fleet(out, reports)
    else:
        if fmt == "json":
            from mcpprobe.render.jsondoc import dumps

            docs = [report.document() for report in reports]
            _write(stdout, dumps(docs if many else docs[0]))
        elif fmt == "junit":
            from mcpprobe.render.junit import render

            _write(stdout, render(reports))
        elif fmt == "html":
            from mcpprobe.render.html import render_html

            _write(stdout, render_html(reports))
        else:
            from mcpprobe.render.openmetrics import render as render_metrics

            _write(stdout, render_metrics(reports))
        for report in reports:
            if many and report.outcome.error is not None:
                err.print(Text(f"{safe(report.member.label)}: error: ", style="bold red")
                          + Text(safe(report.outcome.error.message)))
            elif not many:
                render_error(err, report.outcome)
    for report in reports:
        # On stderr for every format: the report on stdout may be going to a file.
        if report.snapshot_error:
            err.print(Text(f"{safe(report.member.label)}: snapshot {safe(report.snapshot_error)}",
                           style="bold red"))
    return int(fleet_exit_code(reports) if many else worst([report.exit_code for report in reports]))


def _show_servers(ctx: click.Context, params: dict[str, Any], as_json: bool) -> int:
    from mcpprobe.errors import UsageProblem

    try:
        found = _discovery(ctx, params)
    except UsageProblem as exc:
        raise click.UsageError(exc.message) from None
    if as_json:
        from mcpprobe.render.jsondoc import dumps

        _write(sys.stdout, dumps({
            "formatVersion": 1, "command": "servers",
            "servers": [entry.to_json() for entry in found.servers],
            "shadowed": [entry.to_json() for entry in found.shadowed],
            "files": [{"path": path, "state": state} for path, state in found.files],
        }))
        return 0
    from mcpprobe.render.console import make_console
    from mcpprobe.render.fleet import render_servers

    render_servers(make_console(), found)
    return 0


@cli.command("servers", context_settings=CONTEXT)
@CONFIG_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document (`mcpprobe docs json-output`).")
@click.option("-v", "--verbose", is_flag=True, help="Also list every config file consulted, found or not.")
@click.pass_context
def servers_command(ctx: click.Context, **params: Any) -> None:
    """Show every named server found in the config files, and the file it came from.

    Reads mcpprobe.yaml, Claude Desktop, Claude Code, Cursor, Windsurf and VS Code configs (`mcpprobe docs config`).
    Environment values and header values are never shown, only their names.

    \b
    Examples:
      mcpprobe servers
      mcpprobe servers --json | jq -r '.servers[].name'
      mcpprobe probe -s NAME
    """
    ctx.exit(_show_servers(ctx, params, params["as_json"]))


@cli.command("list", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("kind", type=click.Choice(KIND_CHOICES))
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@server_options(many=False)
@debug_options
@connection_options
@click.pass_context
def list_command(ctx: click.Context, kind: str, url: tuple[str, ...], **params: Any) -> None:
    """List one kind (tools, resources, templates, prompts or tasks) to the end, with its completeness.

    Refused with exit 3, sending nothing, when the server did not declare the capability
    (for tasks, the experimental 2025-11-25 'tasks.list').

    \b
    Examples:
      mcpprobe list tools -- mcpprobe-demo
      mcpprobe list tools --json -- mcpprobe-demo | jq -r '.items[].name'
      mcpprobe list resources --json https://example.com/mcp | jq '.state'
      mcpprobe list prompts -s my-server
    """
    target, settings = _prepare(ctx, url, params)
    from mcpprobe.operations import list_one

    say = _say(ctx, params)
    if say is not None:
        say(f"listing {kind} of {target.transport}: {target.describe()}")
    trace, session_args = _session_extras(ctx, params)
    spinner = _spinner(params, not params["as_json"], target.describe())
    if spinner is not None:
        session_args["tracer"] = spinner.watch(session_args.get("tracer"))
    try:
        code = _run_and_emit(list_one, params, "list", target, settings, kind, spinner=spinner,
                             stderr_writer=_server_stderr_writer(params), **session_args)
    finally:
        if trace is not None:
            trace.close()
    ctx.exit(_trace_checked(trace, params, code))


def _register_command_modules() -> None:
    """Commands that live in modules of their own add themselves to the group here. Each such
    module imports only click at load time, so --help and completion stay light."""
    from importlib import import_module

    for name in COMMAND_MODULES:
        import_module(name).register(cli)


COMMAND_MODULES = ("mcpprobe.cli_invoke", "mcpprobe.cli_watch", "mcpprobe.cli_auth", "mcpprobe.cli_exporter",
                   "mcpprobe.cli_docs")
_register_command_modules()


def main() -> None:
    """Entry point. A reader of stdout or stderr that goes away (`| head`) is handled here, once:
    the rest of the output is dropped and the exit code stays the run's (mcpprobe.streams)."""
    from mcpprobe.streams import guard_standard_streams

    # A lone surrogate (from a server, or undecodable bytes in argv) cannot be written as UTF-8:
    # written as \udXXX rather than ending the run with a traceback. stderr does this already.
    with contextlib.suppress(AttributeError, ValueError):
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]

    guard_standard_streams()
    cli.main(prog_name="mcpprobe", standalone_mode=True)


if __name__ == "__main__":
    main()
