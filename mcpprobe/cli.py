"""The command line: click glue over `mcpprobe.operations`.

The one edge where exceptions become exit codes. Imports stay light at module level so that
`--help`, `--version` and completion never load the MCP SDK.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from mcpprobe import __version__
from mcpprobe.exitcodes import ExitCode
from mcpprobe.options import TargetCommand, connection_options

KIND_CHOICES = ("tools", "resources", "templates", "prompts")
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        sdk = version("mcp")
    except PackageNotFoundError:
        sdk = "not installed"
    return f"mcpprobe {__version__} (mcp SDK {sdk}, Python {sys.version.split()[0]})"


@click.group(context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", message=_version_text())
def cli() -> None:
    """Diagnose a Model Context Protocol server: what it declares, what it negotiates, and what is
    broken rather than merely absent.

    \b
    A server is a URL (streamable HTTP, or legacy SSE) or a command after '--' (stdio):
      mcpprobe probe -- mcpprobe-demo
      mcpprobe probe https://example.com/mcp
      mcpprobe list tools --json -- npx -y @modelcontextprotocol/server-everything | jq '.items[].name'

    Exit codes: 0 ok, 1 findings, 2 usage, 3 refused, 4 connection, 5 protocol, 6 timeout, 7 auth.
    See docs/exit-codes.md and docs/findings.md.
    """


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


def _prepare(ctx: click.Context, positionals: tuple[str, ...], params: dict[str, Any]) -> tuple[Any, Any]:
    from mcpprobe.errors import UsageProblem
    from mcpprobe.redact import Redactor

    try:
        target, settings = _target(ctx, positionals, params), _settings(params)
    except UsageProblem as exc:
        raise click.UsageError(exc.message) from None
    ctx.meta["redactor"] = Redactor(target.secrets())
    if params["insecure"]:
        click.echo("warning: --insecure: TLS certificates are not verified; anyone on the path can read and "
                   "change this traffic", err=True)
    return target, settings


def _run(operation: Any, *args: Any, **kwargs: Any) -> Any:
    """Run one async operation; SIGTERM/SIGHUP cancel it like Ctrl-C. None means interrupted."""
    import anyio

    from mcpprobe.wire.stdio import reap_all

    async def main() -> Any:
        result: list[Any] = []
        async with anyio.create_task_group() as group:
            async def on_signal() -> None:
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP) as signals:
                    async for _ in signals:
                        group.cancel_scope.cancel()
                        return

            group.start_soon(on_signal)
            result.append(await operation(*args, **kwargs))
            group.cancel_scope.cancel()
        return result[0] if result else None

    try:
        return anyio.run(main)
    except KeyboardInterrupt:
        return None
    finally:
        reap_all()


def _emit(outcome: Any, as_json: bool, command: str) -> int:
    from rich.console import Console

    from mcpprobe.redact import RedactingStream, Redactor

    redactor = click.get_current_context().meta.get("redactor") or Redactor(())
    stdout, stderr = RedactingStream(sys.stdout, redactor), RedactingStream(sys.stderr, redactor)
    err = Console(file=stderr, highlight=False, width=None if sys.stderr.isatty() else 160)
    if outcome is None:
        if as_json:
            from mcpprobe.render.jsondoc import dumps

            _write(stdout, dumps({"formatVersion": 1, "command": command, "ok": False,
                          "exitCode": int(ExitCode.INTERRUPTED),
                          "error": {"code": "interrupted", "message": "interrupted", "exitCode": 130}}))
        err.print("interrupted", style="yellow")
        return ExitCode.INTERRUPTED
    if as_json:
        from mcpprobe.render.jsondoc import document, dumps

        _write(stdout, dumps(document(outcome)))
        from mcpprobe.render.human import render_error

        render_error(err, outcome)
    else:
        from mcpprobe.render.human import render_outcome

        out = Console(file=stdout, highlight=False, width=None if sys.stdout.isatty() else 160)
        render_outcome(out, err, outcome)
    return int(outcome.exit_code)


def _run_and_emit(operation: Any, params: dict[str, Any], command: str, *args: Any, **kwargs: Any) -> int:
    """Run the operation and report its outcome as soon as it is complete: while a stdio server
    is still shutting down, not after. Reported once, whatever happens during the shutdown."""
    reported: list[int] = []

    def on_ready(outcome: Any) -> None:
        reported.append(_emit(outcome, params["as_json"], command))

    outcome = _run(operation, *args, on_ready=on_ready, **kwargs)
    return reported[0] if reported else _emit(outcome, params["as_json"], command)


def _write(stream: Any, text: str) -> None:
    stream.write(text + "\n")
    stream.flush()


def _server_stderr_writer(params: dict[str, Any]) -> Any:
    if params["server_stderr"] != "live":
        return None
    from mcpprobe.redact import RedactingStream
    from mcpprobe.wire.stdio import write_stderr_bytes

    stream = RedactingStream(sys.stderr, click.get_current_context().meta["redactor"])
    return lambda chunk: write_stderr_bytes(chunk, stream)


@cli.command(cls=TargetCommand, context_settings=CONTEXT)
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@connection_options
@click.pass_context
def probe(ctx: click.Context, url: tuple[str, ...], **params: Any) -> None:
    """Connect, show what was negotiated, and list every declared kind to the end.

    Never calls a tool. Exit 0 when nothing is wrong, 1 when there are error findings.

    \b
    Examples:
      mcpprobe probe -- mcpprobe-demo
      mcpprobe probe -- npx -y @modelcontextprotocol/server-everything
      mcpprobe probe --json https://example.com/mcp | jq '.kinds | map_values(.state)'
    """
    target, settings = _prepare(ctx, url, params)
    from mcpprobe.operations import probe as run_probe

    ctx.exit(_run_and_emit(run_probe, params, "probe", target, settings,
                           stderr_writer=_server_stderr_writer(params)))


@cli.command("list", cls=TargetCommand, context_settings=CONTEXT)
@click.argument("kind", type=click.Choice(KIND_CHOICES))
@click.argument("url", nargs=-1, metavar="[URL] [-- COMMAND [ARGS]...]")
@connection_options
@click.pass_context
def list_command(ctx: click.Context, kind: str, url: tuple[str, ...], **params: Any) -> None:
    """List one kind (tools, resources, templates or prompts) to the end, with its completeness.

    Refused with exit 3, sending nothing, when the server did not declare the capability.

    \b
    Examples:
      mcpprobe list tools -- mcpprobe-demo
      mcpprobe list tools --json -- mcpprobe-demo | jq -r '.items[].name'
      mcpprobe list resources --json https://example.com/mcp | jq '.state'
    """
    target, settings = _prepare(ctx, url, params)
    from mcpprobe.operations import list_one

    ctx.exit(_run_and_emit(list_one, params, "list", target, settings, kind,
                           stderr_writer=_server_stderr_writer(params)))


def main() -> None:
    """Entry point: the only place that turns stray exceptions into an exit code."""
    try:
        cli.main(prog_name="mcpprobe", standalone_mode=True)
    except BrokenPipeError:
        # Reading stopped early (`| head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    main()
