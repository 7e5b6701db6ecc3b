"""One run of a command, typed and frozen: what the command line asked for, then the server it means.

Two steps, each done once per run:

1. `CommandLine`: the options every server command shares, as the option decorators give them
   (mcpprobe.cli.options: `NamedServers`, `Output`, `Connection`, a Settings), put together with
   the server's URL or command by `mcpprobe.cli.common.command_line` and checked; no I/O.
2. `resolve(line)` (one server) or `resolve_fleet(line)` (`probe -s A -s B`, `--all`): the configs
   read, the target built and authorized, the secrets gathered into the redactor. The result, an
   `Invocation`, is all that the rest of the command reads: target, settings, output options,
   redactor.

Light at import time (click, dataclasses): the modules of targets, configs and auth are imported
when a command resolves its server, and named here for the type checker only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from mcpprobe.auth.settings import AuthSettings
from mcpprobe.render.interface import Format

if TYPE_CHECKING:
    from mcpprobe.client.settings import Settings
    from mcpprobe.errors import ProbeError
    from mcpprobe.fleet.config import Discovery, ServerEntry
    from mcpprobe.fleet.probe import Member
    from mcpprobe.fleet.serverjson import Launch, Published
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.wire.target import Target


@dataclass(frozen=True)
class NamedServers:
    """-s/--server and --config, as `server_options` gives them: servers named in the configs."""

    names: tuple[str, ...] = ()
    config_files: tuple[str, ...] = ()  # --config; empty: the search path
    fleet: bool = False  # -s is repeatable, with --all beside it: `probe` and `check`


@dataclass(frozen=True)
class ServerJsonChoice:
    """--server-json FILE and what goes with it: which package or remote, the values of its inputs,
    and whether to run the publisher's command without asking (--yes)."""

    file: str
    package: int | None = None
    remote: int | None = None
    inputs: tuple[tuple[str, str], ...] = ()  # --input NAME=VALUE
    yes: bool = False
    allow_env: tuple[str, ...] = ()  # --allow-env NAME


@dataclass(frozen=True)
class ServerChoice:
    """Which server: a URL, a command (after `--`), names from the configs (`-s`, `--all`), or a
    registry server.json (`--server-json`)."""

    url: str | None = None
    command: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    all_servers: bool = False
    config_files: tuple[str, ...] = ()  # --config; empty: the search path
    server_json: ServerJsonChoice | None = None

    @property
    def named(self) -> bool:
        return bool(self.names) or self.all_servers


@dataclass(frozen=True)
class Connection:
    """How to reach and run the server, as given on the command line (over a config entry's values)."""

    transport: str = "auto"
    headers: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    cwd: str | None = None
    inherit_env: bool = False
    insecure: bool = False
    auth: AuthSettings = field(default_factory=AuthSettings)


@dataclass(frozen=True)
class Output:
    """--json/--format, --trace and -v: how the command reports."""

    format: Format = Format.HUMAN
    trace: str | None = None  # a file, or "-" for stderr
    verbose: bool = False

    @property
    def as_json(self) -> bool:
        return self.format is Format.JSON

    @property
    def human(self) -> bool:
        return self.format is Format.HUMAN


@dataclass(frozen=True)
class CommandLine:
    """What the command line asked for, before anything is read or started."""

    command: str  # "probe", "list", "call"...
    server: ServerChoice
    connection: Connection
    settings: Settings
    output: Output
    traceback: bool = False  # --traceback

    def say(self, message: str, redactor: Redactor | None = None) -> None:
        """-v: mcpprobe's own steps on stderr, through the secrets redactor."""
        if self.output.verbose:
            from mcpprobe.safety.redact import Redactor
            from mcpprobe.safety.sanitize import visible

            # Config names, paths and commands are text from files anyone may have written.
            click.echo(visible((redactor or Redactor(()))(f"mcpprobe: {message}")), err=True)


@dataclass(frozen=True)
class Invocation:
    """What every command that talks to servers reads, once resolved."""

    line: CommandLine
    redactor: Redactor

    @property
    def command(self) -> str:
        return self.line.command

    @property
    def settings(self) -> Settings:
        return self.line.settings

    @property
    def output(self) -> Output:
        return self.line.output

    def say(self, message: str) -> None:
        self.line.say(message, self.redactor)


@dataclass(frozen=True)
class ServerInvocation(Invocation):
    """One server: `list`, `call`, `read`, `get-prompt`, `watch`, and `probe` of one server."""

    target: Target
    published: Published | None = None  # --server-json: what the file says the server is
    named: tuple[str, str] | None = None  # -s NAME: the config name and the file it came from

    def tell(self, what: str) -> None:
        """-v: what is about to happen, and to which server."""
        self.say(f"{what} of {self.target.transport}: {self.target.describe()}")


@dataclass(frozen=True)
class FleetInvocation(Invocation):
    """`probe` of named servers (several `-s NAME`, or `--all`). Members are filled in further by
    `probe` (baselines, snapshot paths) before they are started."""

    members: tuple[Member, ...]
    many: bool  # several servers: one row each, the worst exit code overall


def resolve(line: CommandLine, discovery: Discovery | None = None) -> ServerInvocation:
    """The one server of `line`: from the configs (`-s NAME`) or the command line, authorized."""
    from mcpprobe.errors import UsageProblem
    from mcpprobe.safety import redact
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.wire.target import build_target

    redactor = Redactor(())  # the run's, handed to a renewing token before the secrets are all known
    named: tuple[str, str] | None = None
    if line.server.names:
        if len(line.server.names) > 1 or line.server.all_servers:
            raise UsageProblem("several servers make a fleet: only `probe` takes them")
        found = discovery or read_configs(line)
        entry = found.get(line.server.names[0])
        target, secrets = named_target(entry, line, redactor)
        named = (entry.name, entry.source)
    elif line.server.server_json is not None:
        return _server_json_invocation(line)
    else:
        c = line.connection
        target = build_target(line.server.url, list(line.server.command), transport=c.transport,
                              headers=list(c.headers), env=list(c.env), cwd=c.cwd, inherit_env=c.inherit_env,
                              insecure=c.insecure)
        target, secrets = authorized(target, line, redactor=redactor)
    redactor.learn(*target.secrets(), *secrets)
    redact.use(redactor)  # for what is not handed it: the edge's last line, and the layers below (redact.active)
    warn_insecure(line)
    return ServerInvocation(line, redactor, target, named=named)


def _entry_member(entry: ServerEntry, target: Target | None, line: CommandLine, *, skipped: str | None = None,
                  problem: ProbeError | None = None) -> Member:
    """A fleet member from a config entry, with the line of its entry for reports that point at it."""
    from mcpprobe.fleet.config import entry_line
    from mcpprobe.fleet.probe import Member

    return Member(entry.name, target, line.settings, source=entry.source,
                  source_line=entry_line(entry.source, entry.name), skipped=skipped, problem=problem)


def resolve_fleet(line: CommandLine) -> FleetInvocation:
    """The servers of a `probe`: one from the command line, or named ones from the configs."""
    from mcpprobe.errors import UsageProblem
    from mcpprobe.fleet.probe import Member
    from mcpprobe.safety import redact
    from mcpprobe.safety.redact import Redactor

    choice = line.server
    if not choice.named:
        one = resolve(line)
        member = Member("", one.target, line.settings, published=one.published)
        if one.published is not None:  # SARIF locates its findings at the package or remote that ran
            from mcpprobe.fleet.serverjson import line_of

            member.source = one.published.file
            member.source_line = line_of(one.published.file, one.published.chosen)
        return FleetInvocation(line, one.redactor, (member,), many=False)
    discovery = read_configs(line)
    names = list(choice.names)
    if choice.all_servers:
        names = discovery.names()
        if not names:
            raise UsageProblem("--all: no servers found in the configs (see `mcpprobe servers -v` and "
                               "`mcpprobe docs config`)")
    many = choice.all_servers or len(names) > 1
    if not many:
        one = resolve(line, discovery)
        entry = discovery.get(names[0])
        member = _entry_member(entry, one.target, line)
        return FleetInvocation(line, one.redactor, (member,), many=False)
    members, secrets, redactor = [], [], Redactor(())
    for entry in (discovery.get(name) for name in names):
        if entry.disabled and choice.all_servers:
            # Named with -s it is probed anyway: the user asked for it.
            members.append(_entry_member(entry, None, line,
                                        skipped='"disabled": true in its config entry'))
            continue
        try:
            target, extra = named_target(entry, line, redactor)
        except UsageProblem as exc:
            members.append(_entry_member(entry, None, line, problem=exc))
            continue
        secrets.extend([*target.secrets(), *extra])
        members.append(_entry_member(entry, target, line))
    redactor.learn(*secrets)
    redact.use(redactor)  # as in resolve
    warn_insecure(line)
    return FleetInvocation(line, redactor, tuple(members), many=True)


def read_configs(line: CommandLine) -> Discovery:
    """Every named server in the configs (--config, else the search path); -v tells which were read."""
    from mcpprobe.fleet.config import discover

    found = discover(line.server.config_files)
    for path, state in found.files:
        line.say(f"config {path}: {state}")
    return found


def ask_input(input_id: str, spec: Mapping[str, Any]) -> str:
    """A config's input variable (a VS Code `${input:ID}`), asked on the terminal."""
    from mcpprobe.safety.sanitize import visible

    # The description, the ID and the default are text from a config file anyone may have written:
    # shown inert (the default is shown as click would, and still given back as written).
    password = bool(spec.get("password"))
    prompt = f"{visible(str(spec.get('description') or input_id))} (input {visible(input_id)})"
    default = spec.get("default")
    if default is not None and not password:
        prompt += f" [{visible(str(default))}]"
    return str(click.prompt(prompt, hide_input=password, err=True, default=default, show_default=False))


def terminal_confirm() -> Callable[[str], bool] | None:
    """A yes/no question on the terminal (no by default), or None where there is no person to ask:
    stdin or stderr not a terminal (CI, a pipe). What asks about an authorization server endpoint on
    plain http:// (mcpprobe.auth.tokens.plain_http_checked), before any timed exchange starts."""
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        return None

    def confirm(question: str) -> bool:
        return click.confirm(question, default=False, err=True)

    return confirm


def named_target(entry: ServerEntry, line: CommandLine, redactor: Redactor) -> tuple[Target, list[str]]:
    """A Target from a config entry; command-line --env, --header, --cwd and --transport apply on
    top. Returns the secrets too (`redactor`, the run's, goes to a renewing token)."""
    from mcpprobe.fleet.config import resolve as resolve_entry
    from mcpprobe.wire.target import build_target

    c = line.connection
    interactive = sys.stdin.isatty() and sys.stderr.isatty()
    resolved = resolve_entry(entry, prompt=ask_input if interactive else None)
    transport = c.transport if c.transport != "auto" else resolved.transport
    target = build_target(
        resolved.url, resolved.command, transport=transport, headers=[*resolved.headers, *c.headers],
        env=[*resolved.env, *c.env], cwd=c.cwd or resolved.cwd, inherit_env=c.inherit_env, insecure=c.insecure,
    )
    target, auth_secrets = authorized(target, line, entry, redactor=redactor)
    return target, [*resolved.secrets, *auth_secrets]


def authorized(target: Target, line: CommandLine, entry: ServerEntry | None = None, *,
               redactor: Redactor) -> tuple[Target, list[str]]:
    """The target with its credentials: --bearer-env, a stored or refreshed token, or client
    credentials (a config entry's auth keys under the command line's). Returns the secrets too;
    a token that can be renewed is handed `redactor`, the run's, to teach it the renewed one."""
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.wire.target import StdioTarget

    auth = line.connection.auth
    if isinstance(target, StdioTarget) and auth == AuthSettings(
            no_browser=auth.no_browser, allow_http_authorization=auth.allow_http_authorization) and not (
            entry is not None and entry.auth):
        return target, []  # nothing to authorize; spares a stdio probe the token store's imports
    from mcpprobe.auth.apply import authorize_target

    if entry is not None and entry.auth:
        auth = auth.merged(AuthSettings.from_config(dict(entry.auth)))
    # Each exchange with the authorization server is bounded by the run's --timeout (and no longer than
    # --connect-timeout): the token a run starts with, and every renewal during it. Before the first
    # one, a terminal may be asked about a plain-http endpoint: each exchange's time starts after it.
    target, resolved = authorize_target(target, auth, timeout=line.settings.connect_budget,
                                        redactor=redactor, confirm=terminal_confirm())
    if resolved.note:
        from mcpprobe.safety.sanitize import visible

        # The note can quote an authorization server's error: inert, and without the new secrets.
        click.echo(visible(Redactor(auth.secrets())(f"mcpprobe: {resolved.note}")), err=True)
    return target, auth.secrets()


# ----- --server-json: a registry server.json names the server (mcpprobe.fleet.serverjson) -----

def _server_json_invocation(line: CommandLine) -> ServerInvocation:
    """The server of a server.json: its command or URL built by `fleet.serverjson`, then the same
    target building as `-- COMMAND` and URLs (--env, --header, --cwd on top), shown and confirmed
    before a package's command is run."""
    from mcpprobe.fleet import serverjson
    from mcpprobe.safety import redact
    from mcpprobe.safety.redact import Redactor
    from mcpprobe.wire.target import build_target, parse_env

    choice = line.server.server_json
    assert choice is not None
    c = line.connection
    doc = serverjson.load(choice.file)
    launch = serverjson.build(doc, choice.file, package=choice.package, remote=choice.remote,
                              inputs=dict(choice.inputs), cli_env=dict(parse_env(e) for e in c.env),
                              allow_env=choice.allow_env)
    if launch.url is not None:
        transport = c.transport if c.transport != "auto" else launch.transport
        target = build_target(launch.url, [], transport=transport,
                              headers=[*(f"{k}: {v}" for k, v in launch.headers), *c.headers],
                              env=list(c.env), cwd=c.cwd, inherit_env=c.inherit_env, insecure=c.insecure)
    else:
        target = build_target(None, list(launch.command), transport=c.transport, headers=list(c.headers),
                              env=[*(f"{k}={v}" for k, v in launch.env), *c.env], cwd=c.cwd,
                              inherit_env=c.inherit_env, insecure=c.insecure)
    redactor = Redactor([*target.secrets(), *launch.secrets])
    _confirm_launch(line, choice, launch, target, redactor)
    target, secrets = authorized(target, line, redactor=redactor)
    redactor.learn(*target.secrets(), *secrets)
    redact.use(redactor)  # as in resolve
    warn_insecure(line)
    return ServerInvocation(line, redactor, target, published=launch.published)


def _confirm_launch(line: CommandLine, choice: ServerJsonChoice, launch: Launch, target: Target,
                    redactor: Redactor) -> None:
    """A package's command comes from the file's publisher: shown, and run only when the user says
    so on a terminal, or with --yes; with neither, a usage error (nothing is started). A remote
    runs nothing here: -v tells where it goes."""
    from mcpprobe.errors import UsageProblem
    from mcpprobe.exitcodes import ExitCode
    from mcpprobe.safety.sanitize import visible

    chosen = launch.published.chosen
    for skipped in launch.skipped:
        line.say(f"--server-json: passed over {skipped}", redactor)
    if launch.url is not None:
        line.say(f"--server-json {choice.file}: {chosen}: {target.describe()}", redactor)
        return
    from mcpprobe.fleet.serverjson_env import shown_environment

    shown = visible(redactor(target.describe()))
    # Every variable with its value (a secret masked): a value can change what runs as much as an argument.
    env_lines = [visible(redactor(line)) for line in shown_environment(launch.env, launch.secret_env)]
    env_note = "".join(f"\n    {line}" for line in env_lines)
    env_note = f"\n  with environment variables:{env_note}" if env_lines else ""
    if choice.yes:
        line.say(f"--server-json {choice.file}: {chosen} ({launch.runtime}), --yes: running {shown}", redactor)
        for env_line in env_lines:
            line.say(f"--server-json: with {env_line}", redactor)
        return
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise UsageProblem(f"--server-json {choice.file}: {chosen} would run, as its publisher wrote it:\n  {shown}"
                           f"{env_note}\nmcpprobe asks before running it, and there is no terminal to ask on: "
                           "add --yes to run it")
    # The command on a line of its own: `shown` and `env_note` are inert already, and visible() of
    # the whole would write their line breaks as \n.
    click.echo(visible(f"--server-json {choice.file}: {chosen} ({launch.runtime}) runs, as its publisher wrote "
                       "it:") + f"\n  {shown}{env_note}", err=True)
    if not click.confirm("Run it?", default=False, err=True):
        click.echo("mcpprobe: not run: not confirmed", err=True)
        raise click.exceptions.Exit(int(ExitCode.REFUSED))


def warn_insecure(line: CommandLine) -> None:
    if line.connection.insecure:
        click.echo("warning: --insecure: TLS certificates are not verified; anyone on the path can read and "
                   "change this traffic", err=True)
