"""Options shared by every command that talks to a server, as stacked decorators.

Each decorator hands the command its options as one typed, frozen value, read and checked once:
`server_options` a NamedServers, `output_options` an Output, `connection_options` a Connection and
a Settings, `auth_options` an AuthSettings. Kept free of heavy imports: `mcpprobe --help` and
shell completion load this module (the values' modules are loaded when a command runs).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from mcpprobe.auth.settings import ENV_NAME_HELP
from mcpprobe.cli.edge import SECTION, EdgeCommand
from mcpprobe.render.interface import OFFERED, Format

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem

    from mcpprobe.auth.settings import AuthSettings

# A command's callback, whatever options the decorators below have turned into values: its exit code.
Callback = Callable[..., int]
Number = TypeVar("Number", int, float)  # what a numeric option's callback checks and gives back
Decorated = TypeVar("Decorated", bound=Callable[..., Any])  # a command callback, its options added

# mcpprobe.wire.target.TRANSPORTS (a test keeps them equal): importing that module (dataclasses, url
# parsing, regexes) is 4-8 ms that --help and completion do not need.
TRANSPORTS = ("auto", "stdio", "http", "sse")


class TargetCommand(EdgeCommand):
    """A command whose server command follows `--`: everything after it is the server's argv."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            split = args.index("--")
            ctx.meta["server_command"] = args[split + 1 :]
            args = args[:split]
        else:
            ctx.meta["server_command"] = []
            original = list(args)  # click's parser consumes the list it is given
            try:
                return super().parse_args(ctx, args)
            except click.NoSuchOption as exc:
                args = original
                start = self._command_start(args, args.index(exc.option_name) if exc.option_name in args else len(args))
                if start is None:
                    raise
                # `mcpprobe probe npx -y pkg`: the option belongs to the server's command.
                suggestion = " ".join(["mcpprobe", ctx.info_name or "", *args[:start], "--", *args[start:]])
                exc.possibilities = None  # type: ignore[misc]  # "Did you mean --force?" points away from the fix
                exc.message = (  # type: ignore[misc]  # click declares it final; the text is ours to improve
                    f"No such option: {exc.option_name}. If it is an option of the server's command, "
                    f"put the command after '--':\n  {suggestion}")
                raise
        return super().parse_args(ctx, args)

    def _command_start(self, args: list[str], before: int) -> int | None:
        """Where a server command given without `--` probably starts: the first free word (not a
        value of one of our options, not one of the command's own arguments, not KEY=VALUE or a URL)
        before the unknown option `args[before]`."""
        takes_value = {name for p in self.params if isinstance(p, click.Option) and not p.is_flag and not p.count
                       for name in p.opts}
        own = sum(1 for p in self.params if isinstance(p, click.Argument) and p.nargs == 1)
        skip_next = False
        for index, word in enumerate(args[:before]):
            if skip_next:
                skip_next = False
            elif word.startswith("-"):
                skip_next = word in takes_value
            elif own:
                own -= 1
            elif "=" not in word and "://" not in word:
                return index
        return None


def _finite(value: Number) -> Number:
    # click's FLOAT accepts "nan" and "inf", which compare false with everything: a timeout of nan
    # would pass `<= 0` and then break every deadline computed from it.
    if isinstance(value, float) and not math.isfinite(value):
        raise click.BadParameter(f"must be a finite number, not {value!r}")
    return value


def positive(ctx: click.Context, param: click.Parameter, value: Number | None) -> Number | None:
    if value is not None and _finite(value) <= 0:
        raise click.BadParameter("must be greater than 0")
    return value


def not_negative(ctx: click.Context, param: click.Parameter, value: Number | None) -> Number | None:
    if value is not None and _finite(value) < 0:
        raise click.BadParameter("must not be negative")
    return value


def _complete_protocols(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """--protocol's values: the eras, then each version with the handshake that sends it. No comma in
    a description: fish's script splits the answer at commas."""
    from click.shell_completion import CompletionItem

    from mcpprobe.wire import protocols
    said = {"auto": "server/discover or else initialize", "legacy": f"initialize ({protocols.LATEST_HANDSHAKE})",
            "modern": f"server/discover ({protocols.LATEST_MODERN})",
            **dict.fromkeys(protocols.HANDSHAKE_VERSIONS, "initialize"),
            **dict.fromkeys(protocols.MODERN_VERSIONS, "server/discover")}
    return [CompletionItem(value, help=said[value]) for value in protocols.ACCEPTED if value.startswith(incomplete)]


def sectioned(func: Decorated, decorators: Sequence[Callable[[Any], Any]], section: str,
              elsewhere: dict[str, str] | None = None) -> Decorated:
    """`decorators` (click options) applied to `func`, each option put in help `section` (or the one
    `elsewhere` names for it, by parameter name): `mcpprobe.cli.edge.EdgeCommand.format_options`."""
    before = {id(param) for param in getattr(func, "__click_params__", [])}
    wrapped: Any = func
    for decorator in reversed(decorators):
        wrapped = decorator(wrapped)
    for param in getattr(wrapped, "__click_params__", []):
        if id(param) not in before:
            setattr(param, SECTION, (elsewhere or {}).get(param.name or "", section))
    return cast("Decorated", wrapped)


def connection_options(func: Callback) -> Callback:
    """--transport, headers/env/cwd, protocol, timeouts, limits, stderr handling, --force, and the
    authentication options. The command receives them as `connection` (a Connection: how to reach
    and run the server) and `settings` (a Settings: the protocol, timeouts and limits), checked."""

    @functools.wraps(func)
    def typed(*args: Any, transport: str, headers: tuple[str, ...], env: tuple[str, ...], inherit_env: bool,
              cwd: str | None, protocol: str, timeout: float, connect_timeout: float, discover_timeout: float,
              max_pages: int, max_message_size: int, roots: tuple[str, ...], server_stderr: str, insecure: bool,
              force: bool, auth: AuthSettings, **rest: Any) -> int:
        from mcpprobe.cli.invocation import Connection
        from mcpprobe.client.settings import Settings
        from mcpprobe.wire.target import parse_protocol, root_uri

        connection = Connection(transport=transport, headers=headers, env=env, cwd=cwd, inherit_env=inherit_env,
                                insecure=insecure, auth=auth)
        settings = Settings(protocol=parse_protocol(protocol), timeout=timeout, connect_timeout=connect_timeout,
                            discover_timeout=discover_timeout, max_pages=max_pages,
                            max_message_bytes=max_message_size, force=force,
                            roots=tuple(root_uri(r) for r in roots), server_stderr=server_stderr)
        return func(*args, connection=connection, settings=settings, **rest)

    decorators = [
        click.option("--transport", type=click.Choice(TRANSPORTS), default="auto", show_default=True,
                     help="How to reach the server. auto: stdio for a command, streamable HTTP for a URL "
                          "(legacy SSE when the path ends in /sse)."),
        click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
                     help="HTTP header to send (repeatable). Values of credential headers are never printed."),
        click.option("-e", "--env", "env", multiple=True, metavar="KEY=VALUE",
                     help="Environment variable for a stdio server (repeatable). Values are never printed."),
        click.option("--inherit-env", is_flag=True,
                     help="Give a stdio server mcpprobe's whole environment, not just the safe minimum."),
        click.option("--cwd", type=click.Path(file_okay=False, exists=True), default=None,
                     help="Working directory for a stdio server."),
        click.option("--protocol", default="auto", show_default=True, metavar="auto|legacy|modern|VERSION",
                     shell_complete=_complete_protocols,
                     help="Protocol era or exact version. auto: try server/discover (2026-07-28), fall back to "
                          "initialize on any error or silence."),
        click.option("--timeout", type=float, default=30.0, show_default=True, metavar="SECONDS",
                     envvar="MCPPROBE_TIMEOUT", callback=positive, help="Per-request timeout."),
        click.option("--connect-timeout", type=float, default=10.0, show_default=True, metavar="SECONDS",
                     callback=positive, help="Limit for connecting plus the handshake (never more than --timeout)."),
        click.option("--discover-timeout", type=float, default=2.0, show_default=True, metavar="SECONDS",
                     callback=positive,
                     help="How long --protocol auto waits for server/discover before also sending "
                          "initialize; a later discover answer still counts."),
        click.option("--max-pages", type=int, default=1000, show_default=True, callback=positive,
                     help="Stop following nextCursor after this many pages (reported as list-incomplete)."),
        click.option("--max-message-size", type=int, default=64 * 1024 * 1024, show_default=True,
                     metavar="BYTES", callback=positive, help="Largest single message accepted from the server."),
        click.option("--root", "roots", multiple=True, metavar="PATH|URI",
                     help="Declare the roots capability and answer roots/list with these (repeatable)."),
        click.option("--server-stderr", type=click.Choice(["tail", "live", "quiet"]), default="tail",
                     show_default=True,
                     help="A stdio server's stderr: its last lines on failure, passed through live, or never."),
        click.option("--insecure", is_flag=True, help="Do not verify TLS certificates (warned about)."),
        click.option("--force", is_flag=True,
                     help="Send requests even for capabilities the server did not declare (labelled as forced)."),
    ]
    return auth_options(sectioned(typed, decorators, "Connection",
                                  {"headers": "TLS and network", "insecure": "TLS and network"}))


def auth_options(func: Callback) -> Callback:
    """--bearer-env, --client-id, --client-secret-env, --client-key-file, --client-key-env,
    --no-browser, --no-auth-cache, --scope and --allow-http-authorization; the command receives them
    as `auth`, an AuthSettings.

    Secrets are never taken on the command line (where `ps` and shell history would keep them):
    only the *name* of an environment variable that holds them, or of a file (a client's private key)."""

    @functools.wraps(func)
    def typed(*args: Any, bearer_env: str | None, client_id: str | None, client_secret_env: str | None,
              client_key_file: str | None, client_key_env: str | None, no_browser: bool, no_auth_cache: bool,
              auth_scope: str | None, allow_http_authorization: bool, **rest: Any) -> int:
        from mcpprobe.auth.settings import AuthSettings

        auth = AuthSettings(bearer_env=bearer_env, client_id=client_id, client_secret_env=client_secret_env,
                            no_browser=no_browser, no_auth_cache=no_auth_cache, scope=auth_scope,
                            client_key_file=client_key_file, client_key_env=client_key_env,
                            allow_http_authorization=allow_http_authorization)
        return func(*args, auth=auth, **rest)

    decorators = [
        click.option("--bearer-env", metavar="VAR", default=None,
                     help="Send 'Authorization: Bearer <token>' with the token read from environment variable VAR "
                          f"({ENV_NAME_HELP}), so it never shows in ps or shell history."),
        click.option("--client-id", metavar="ID", default=None,
                     help="A pre-registered OAuth client ID (otherwise: a client ID metadata document or dynamic "
                          "registration, where the authorization server offers them)."),
        click.option("--client-secret-env", metavar="VAR", default=None,
                     help="The client secret is in environment variable VAR; with --client-id this selects the "
                          "client credentials grant (for CI)."),
        click.option("--client-key-file", metavar="PATH", default=None,
                     help="A PEM private key (RSA, EC or Ed25519) to authenticate --client-id with a signed JWT "
                          "(private_key_jwt, RFC 7523) in the client credentials grant."),
        click.option("--client-key-env", metavar="VAR", default=None,
                     help=f"Like --client-key-file, the PEM key read from environment variable VAR ({ENV_NAME_HELP})."),
        click.option("--no-browser", is_flag=True,
                     help="Only print the authorization URL; do not try to open a browser."),
        click.option("--no-auth-cache", is_flag=True,
                     help="Neither read nor write stored tokens (for CI): tokens live for this run only."),
        click.option("--scope", "auth_scope", metavar="'SCOPE ...'", default=None,
                     help="OAuth scopes to request, space-separated (default: the server's challenge, else its "
                          "scopes_supported)."),
        click.option("--allow-http-authorization", is_flag=True,
                     help="Use an OAuth authorization server endpoint (login page, registration, token, "
                          "revocation) on plain http:// at a host that is not this machine, with a warning; "
                          "without it, a terminal asks and anything else is refused (exit 7)."),
    ]
    return sectioned(typed, decorators, "Authorization")


def _complete_servers(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Server names from the configs, read lazily: only when the shell asks."""
    from click.shell_completion import CompletionItem

    from mcpprobe.fleet.config import server_names

    names = server_names(tuple(ctx.params.get("config_files") or ()))
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


CONFIG_OPTION = click.option(
    "--config", "config_files", multiple=True, type=click.Path(dir_okay=False), metavar="FILE",
    envvar="MCPPROBE_CONFIG",
    help="Read named servers from this file only (repeatable): mcpprobe YAML, a Claude/Cursor/Windsurf "
         "mcpServers file or a VS Code mcp.json. Default: the search path in `mcpprobe docs config`.")


def server_options(*, many: bool) -> Callable[[Callback], Callback]:
    """-s/--server NAME (repeatable when `many`: a fleet) and --config FILE. The command receives them
    as `named`, a NamedServers."""

    def decorate(func: Callback) -> Callback:
        if many:
            @functools.wraps(func)
            def typed(*args: Any, servers: tuple[str, ...], config_files: tuple[str, ...], **rest: Any) -> int:
                from mcpprobe.cli.invocation import NamedServers

                named = NamedServers(tuple(dict.fromkeys(servers)), config_files, fleet=True)
                return func(*args, named=named, **rest)
        else:
            @functools.wraps(func)
            def typed(*args: Any, server: str | None, config_files: tuple[str, ...], **rest: Any) -> int:
                from mcpprobe.cli.invocation import NamedServers

                named = NamedServers((server,) if server else (), config_files)
                return func(*args, named=named, **rest)

        return sectioned(typed, [click.option(
            "-s", "--server", "servers" if many else "server", multiple=many, metavar="NAME",
            shell_complete=_complete_servers,
            help="A server named in a config file (see `mcpprobe servers`)"
                 + (" (repeatable: several make a fleet)." if many else ".")), CONFIG_OPTION], "Server")

    return decorate


FORMAT_HELP = {
    Format.HUMAN: "human (default)",
    Format.JSON: "json (same as --json)",
    Format.JUNIT: "junit (JUnit XML)",
    Format.OPENMETRICS: "openmetrics (Prometheus text)",
    Format.HTML: "html (one self-contained page)",
    Format.SARIF: "sarif (SARIF 2.1.0 for code scanning)",
}


class FormatChoice(click.Choice[str]):
    """--format's choices: the formats the command offers (mcpprobe.render.interface.OFFERED). A
    format of mcpprobe's that the command does not offer is refused with where it applies."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        if value not in {f.value for f in Format}:
            return super().get_invalid_choice_message(value, ctx)
        command = ctx.info_name if ctx is not None else "this command"
        offered_by = [f"`{name}`" for name, formats in OFFERED.items() if Format(value) in formats]
        return (f"{value!r} does not apply to `{command}`, which prints {' or '.join(map(str, self.choices))}; "
                f"{value} is a format of {', '.join(offered_by)} (a report on each server).")


def output_options(*formats: Format, json_help: str | None = None) -> Callable[[Callback], Callback]:
    """--json, --format, --trace and -v/--verbose: the same on every command that talks to a server.

    The command receives them as `output`, an Output whose format is settled from --json and --format.
    """
    offered = formats or (Format.HUMAN, Format.JSON)

    def decorate(func: Callback) -> Callback:
        @functools.wraps(func)
        def settled(*args: Any, as_json: bool, output_format: str | None, trace: str | None, verbose: bool,
                    **rest: Any) -> int:
            from mcpprobe.cli.invocation import Output

            if as_json and output_format not in (None, Format.JSON):
                raise click.UsageError(
                    f"--json is short for --format json; it cannot be combined with --format {output_format}")
            chosen = Format.JSON if as_json else Format(output_format or Format.HUMAN)
            return func(*args, output=Output(chosen, trace, verbose), **rest)

        decorators = [
            click.option("--json", "as_json", is_flag=True,
                         help=json_help or "Print one JSON document on stdout (`mcpprobe docs json-output`); "
                                           "diagnostics go to stderr."),
            click.option("--format", "output_format", type=FormatChoice([f.value for f in offered]), default=None,
                         help="Output format: " + ", ".join(FORMAT_HELP[f] for f in offered) + "."),
            click.option("--trace", "trace", metavar="FILE|-", default=None,
                         help="Write every JSON-RPC message both ways (and HTTP status lines and headers) with a "
                              "timestamp to FILE, or to stderr with '-'. Secrets are redacted."),
            click.option("-v", "--verbose", is_flag=True,
                         help="Tell on stderr what mcpprobe does: configs read, servers started, results."),
        ]
        return sectioned(settled, decorators, "Output")

    return decorate


# ----- --server-json (issue #28): a registry server.json names the server -----

def _server_json_inputs(ctx: click.Context, param: click.Parameter,
                        values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """--input NAME=VALUE, checked before anything is read or started. A NAME given twice is refused
    (not last-wins): which one was meant is not known, and the schema's `isRepeated` inputs may one
    day take several values this way. Whether the server.json knows NAME is checked once the
    package or remote is chosen (mcpprobe.fleet.serverjson_inputs)."""
    pairs: dict[str, str] = {}
    for value in values:
        name, sep, given = value.partition("=")
        if not sep:
            raise click.BadParameter(f"{value!r}: expected NAME=VALUE (no '=')", ctx, param)
        if not name:
            # Not the value: it may be a secret, and the message shows on a terminal and in CI logs.
            raise click.BadParameter("expected NAME=VALUE: the NAME before '=' is empty", ctx, param)
        if "\0" in value:
            raise click.BadParameter(f"{name!r}: a NUL character cannot be passed to a program", ctx, param)
        if name in pairs:
            raise click.BadParameter(f"{name!r} is given more than once: give each input once", ctx, param)
        pairs[name] = given
    return tuple(pairs.items())


def _index(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    if value is not None and value < 0:
        raise click.BadParameter("must be 0 or more (the index in the file's array, from 0)", ctx, param)
    return value


def server_json_options(*, yes_option: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--server-json FILE, --package N, --remote N, --input NAME=VALUE, and --yes where the command
    has none of its own (`probe`, `list`; `call` and `check` share theirs). The command receives them
    as `server_json`, a ServerJsonChoice, or None without --server-json (mcpprobe docs server-json)."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def typed(*args: Any, server_json_file: str | None, package_index: int | None, remote_index: int | None,
                  server_json_inputs: tuple[tuple[str, str], ...], allow_env: tuple[str, ...], **rest: Any) -> Any:
            yes = rest.pop("launch_yes") if yes_option else rest.get("yes", False)
            if server_json_file is None:
                given = [name for name, present in (("--package", package_index is not None),
                                                     ("--remote", remote_index is not None),
                                                     ("--input", bool(server_json_inputs)),
                                                     ("--allow-env", bool(allow_env))) if present]
                if given:
                    raise click.UsageError(f"{', '.join(given)} go{'es' if len(given) == 1 else ''} with "
                                           "--server-json FILE")
                return func(*args, server_json=None, **rest)
            from mcpprobe.cli.invocation import ServerJsonChoice

            if package_index is not None and remote_index is not None:
                raise click.UsageError("give either --package N or --remote N, not both")
            choice = ServerJsonChoice(server_json_file, package_index, remote_index, server_json_inputs, bool(yes),
                                      allow_env)
            return func(*args, server_json=choice, **rest)

        decorators = [
            click.option("--server-json", "server_json_file", metavar="FILE", default=None,
                         help="Run or reach the server an MCP Registry server.json describes (schema 2025-12-11): "
                              "its first package this machine can run, else its first remote. The command is "
                              "shown and asked about first (`mcpprobe docs server-json`)."),
            click.option("--package", "package_index", type=int, default=None, metavar="N", callback=_index,
                         help="With --server-json: use packages[N] (from 0)."),
            click.option("--remote", "remote_index", type=int, default=None, metavar="N", callback=_index,
                         help="With --server-json: use remotes[N] (from 0)."),
            click.option("--input", "server_json_inputs", multiple=True, metavar="NAME=VALUE",
                         callback=_server_json_inputs,
                         help="With --server-json: the value of an argument (its valueHint or flag name), header "
                              "or {variable} of the chosen package or remote (repeatable, each NAME once; a NAME "
                              "it does not know is an error). Secrets: an environment variable of that NAME "
                              "instead, so they stay out of ps."),
            click.option("--allow-env", "allow_env", multiple=True, metavar="NAME",
                         help="With --server-json: let the file set NAME, an environment variable that changes "
                              "what the runtime loads or where it fetches from (NODE_OPTIONS, npm_config_*, PIP_*, "
                              "LD_PRELOAD, ...; refused otherwise). Repeatable."),
        ]
        if yes_option:
            # No -y here: in `mcpprobe probe npx -y pkg` it belongs to the server's command (the
            # usage error then suggests the '--' that was forgotten).
            decorators.append(click.option("--yes", "launch_yes", is_flag=True,
                                           help="With --server-json: run the package's command without asking."))
        return sectioned(typed, decorators, "Server")

    return decorate
