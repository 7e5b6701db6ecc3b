"""`mcpprobe exporter`: registered on the group by `mcpprobe.cli.main`. Imports only click at load time."""

from __future__ import annotations

import sys

import click

from mcpprobe.cli.edge import CONTEXT, EdgeCommand
from mcpprobe.cli.options import CONFIG_OPTION

DEFAULT_LISTEN = "127.0.0.1:9745"


@click.command("exporter", cls=EdgeCommand, context_settings=CONTEXT)
@CONFIG_OPTION
@click.option("--exporter-config", type=click.Path(dir_okay=False), metavar="FILE.yaml",
              help="Modules and limits (docs/exporter.md); without it: modules probe, tools, resources, "
                   "templates, prompts.")
@click.option("--web-config", type=click.Path(dir_okay=False), metavar="web.yml",
              help="TLS and basic auth, in the Prometheus exporter-toolkit's format.")
@click.option("--listen-address", default=DEFAULT_LISTEN, show_default=True, metavar="HOST:PORT",
              help="Where to listen. An address other than loopback needs --web-config with TLS or basic auth, "
                   "or --insecure-listen.")
@click.option("--insecure-listen", is_flag=True,
              help="Allow a non-loopback address without TLS or basic auth (anyone who can reach it can "
                   "trigger probes).")
@click.option("-v", "--verbose", is_flag=True, help="Say on stderr what the exporter does (reloads, stops).")
@click.pass_context
def exporter_command(ctx: click.Context, config_files: tuple[str, ...], exporter_config: str | None,
                     web_config: str | None, listen_address: str, insecure_listen: bool, verbose: bool) -> None:
    """Serve Prometheus: /probe?target=NAME probes a named server when Prometheus scrapes it.

    Targets are names from the configs (docs/config.md), never URLs or commands. The answer has the
    metrics of --format openmetrics. /metrics has the exporter's own; / lists the targets and their
    last results; POST /-/reload or SIGHUP reads the configs again. See docs/exporter.md.

    \b
    Examples:
      mcpprobe exporter --config mcpprobe.yaml
      curl 'http://127.0.0.1:9745/probe?target=github&module=tools'
      mcpprobe exporter --listen-address 0.0.0.0:9745 --web-config web.yml
    """
    from mcpprobe.errors import UsageProblem
    from mcpprobe.exporter.settings import INSTALL_EXTRA, is_loopback, load_web_config, parse_listen

    def say(message: str) -> None:
        if verbose:
            from mcpprobe.safety.sanitize import visible

            click.echo(visible(f"mcpprobe exporter: {message}"), err=True)

    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise click.UsageError(f"the exporter needs the prometheus_client package: {INSTALL_EXTRA}") from None
    try:
        host, port = parse_listen(listen_address)
        web = load_web_config(web_config)
        if not is_loopback(host) and not web.protected and not insecure_listen:
            raise UsageProblem(f"--listen-address {listen_address} is not loopback: give --web-config with "
                               "tls_server_config or basic_auth_users, or --insecure-listen")
        from mcpprobe.exporter.core import Exporter

        exporter = Exporter(tuple(config_files), exporter_config, say=say)
    except UsageProblem as exc:
        from mcpprobe.safety.sanitize import visible

        raise click.UsageError(visible(exc.message, multiline=True)) from None
    if not exporter.targets():
        click.echo("mcpprobe exporter: warning: no servers found in the configs (see `mcpprobe servers -v`)",
                   err=True)

    def announce(text: str) -> None:
        click.echo(f"mcpprobe exporter: {text}")
        sys.stdout.flush()

    from mcpprobe.exporter.web import serve

    try:
        code = serve(exporter, web, host, port, say=say, announce=announce, web_path=web_config,
                     must_protect=not is_loopback(host) and not insecure_listen)
    except OSError as exc:
        click.echo(f"mcpprobe exporter: {exc}", err=True)
        ctx.exit(4)
    ctx.exit(code)
