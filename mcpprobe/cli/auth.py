"""The command line for `mcpprobe auth status|login|logout`: click glue over `mcpprobe.auth`.

`mcpprobe.cli.main` adds the `auth` group to the main group. Click only at import time, like
`mcpprobe.cli.main`: the SDK, httpx2 and rich are loaded only when a command runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

import click

from mcpprobe.cli.edge import CONTEXT, EdgeGroup
from mcpprobe.cli.options import auth_options, positive
from mcpprobe.exitcodes import ExitCode

if TYPE_CHECKING:
    from mcpprobe.auth.settings import AuthSettings
    from mcpprobe.render.auth import AuthSubject
    from mcpprobe.safety.redact import RedactingStream, Redactor


def _redactor(secrets: Iterable[str]) -> Redactor:
    from mcpprobe.safety.redact import Redactor

    return Redactor(secrets)


def _live_stderr(redactor: Redactor) -> RedactingStream:
    """stderr for what login says as it goes (a URL to open, a warning): masked, and inert, for much of
    it comes from authorization servers."""
    from mcpprobe.safety.redact import RedactingStream

    return RedactingStream(sys.stderr, redactor, inert=True)


def _show(subject: AuthSubject, as_json: bool, redactor: Redactor) -> None:
    """The outcome rendered (mcpprobe.render.auth) and written by the one writer."""
    from mcpprobe.cli.output import view_for, write_rendered
    from mcpprobe.render.auth import render
    from mcpprobe.render.interface import Format

    fmt = Format.JSON if as_json else Format.HUMAN
    write_rendered(render(subject, fmt, view_for(fmt, redactor)), redactor)


@click.group("auth", cls=EdgeGroup, context_settings=CONTEXT)
def auth_group() -> None:
    """Log in to HTTP servers (OAuth 2.1), and see or remove the stored tokens.

    Tokens are stored per server and authorization server in the user's config directory
    (files of mode 0600):
    $XDG_CONFIG_HOME/mcpprobe/tokens (~/.config/mcpprobe/tokens) on Linux,
    ~/Library/Application Support/mcpprobe/tokens on macOS, %APPDATA%\\mcpprobe\\tokens on Windows.
    See `mcpprobe docs auth`.
    """


@auth_group.command("login", context_settings=CONTEXT)
@click.argument("url")
@auth_options
@click.option("--client-metadata-url", metavar="HTTPS-URL", default=None,
              help="Use this client ID metadata document URL as the client ID where the authorization server "
                   "supports them.")
@click.option("--callback-port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port of the loopback redirect listener on 127.0.0.1 (0: any free port).")
@click.option("--login-timeout", type=float, default=300.0, show_default=True, metavar="SECONDS", callback=positive,
              help="How long to wait for the browser's redirect.")
@click.option("--timeout", type=float, default=30.0, show_default=True, metavar="SECONDS", callback=positive,
              help="Limit for each HTTP request.")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
              help="Another header the MCP server needs (repeatable); never Authorization.")
@click.option("--grant", type=click.Choice(["authorization_code", "client_credentials", "cross_app_access",
                                           "jwt-bearer"]),
              default=None,
              help="The OAuth grant (default: client_credentials for --client-id with --client-secret-env, "
                   "jwt-bearer for --assertion-env, else authorization_code; a confidential client's code flow: "
                   "--grant authorization_code; cross_app_access: an enterprise IdP's ID-JAG, see "
                   "--idp-token-endpoint; jwt-bearer: a workload's own JWT as the grant, RFC 7523 "
                   "urn:ietf:params:oauth:grant-type:jwt-bearer, see --assertion-env).")
@click.option("--assertion-env", metavar="VAR", default=None,
              help="jwt-bearer: the workload's JWT (workload identity federation) is in environment variable VAR "
                   "(the name, not the value; never stored).")
@click.option("--issuer", metavar="URL", default=None,
              help="cross_app_access: the MCP authorization server's issuer (default: the first one the "
                   "server's protected resource metadata names).")
@click.option("--idp-token-endpoint", metavar="URL", default=None,
              help="cross_app_access: the enterprise identity provider's token endpoint (RFC 8693 token exchange).")
@click.option("--idp-client-id", metavar="ID", default=None, help="cross_app_access: mcpprobe's client at the IdP.")
@click.option("--idp-client-secret-env", metavar="VAR", default=None,
              help="cross_app_access: that client's secret is in environment variable VAR.")
@click.option("--id-token-env", metavar="VAR", default=None,
              help="cross_app_access: the user's ID token from the IdP is in environment variable VAR.")
@click.option("--id-token-file", metavar="PATH", default=None,
              help="cross_app_access: the user's ID token from the IdP is in file PATH.")
@click.option("--dpop", is_flag=True,
              help="Ask for DPoP-bound tokens (RFC 9449): every request then proves a key stored with the token.")
@click.option("--force", is_flag=True,
              help="Log in even when the server answers without credentials and publishes no resource metadata.")
@click.option("--insecure", is_flag=True, help="Do not verify TLS certificates (warned about).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def login_command(url: str, client_metadata_url: str | None, callback_port: int, login_timeout: float, timeout: float,
                  headers: tuple[str, ...], grant: str | None, assertion_env: str | None, issuer: str | None,
                  idp_token_endpoint: str | None,
                  idp_client_id: str | None, idp_client_secret_env: str | None, id_token_env: str | None,
                  id_token_file: str | None, dpop: bool, force: bool, insecure: bool,
                  as_json: bool, auth: AuthSettings) -> int:
    """Log in to the MCP server at URL and store the token.

    Authorization code with PKCE, through a redirect to 127.0.0.1: the URL is printed (and
    opened in a browser where there is one; --no-browser only prints it). The client is
    --client-id when given, else a client ID metadata document (--client-metadata-url) or
    dynamic registration, as the authorization server offers. With --client-id and
    --client-secret-env: the client credentials grant, for CI (no browser), unless
    --grant authorization_code (a confidential client in the browser flow). A workload
    with a JWT from its platform (workload identity federation): --grant jwt-bearer
    --assertion-env VAR sends it to the token endpoint as the grant (RFC 7523), no
    browser, no client registration.

    Login opens a session as every command does (server/discover, else initialize) and
    lists what the server declares; it goes ahead when one of those is refused with 401
    or 403, when the server publishes protected resource metadata, or with --force. The
    same session with the new token must then succeed. When it is refused because the
    server's protected resource metadata now names another authorization server, login
    registers and logs in with that one (once).

    Exit: 0 logged in (or no login needed); 2 usage; 4 server unreachable; 7 login failed.

    \b
    Examples:
      mcpprobe auth login https://example.com/mcp
      mcpprobe auth login https://example.com/mcp --no-browser --scope 'files:read'
      CLIENT_SECRET=... mcpprobe auth login https://example.com/mcp --client-id ci --client-secret-env CLIENT_SECRET
      mcpprobe auth login https://example.com/mcp --client-id ci --client-key-file ci-key.pem
      mcpprobe auth login https://example.com/mcp --grant jwt-bearer --assertion-env WORKLOAD_JWT
    """
    from mcpprobe.auth.settings import AuthSettings
    from mcpprobe.errors import ProbeError, UsageProblem
    from mcpprobe.wire.target import parse_header

    settings = auth  # auth_options; named as the rest of login names it
    extra = [os.environ.get(name or "", "") for name in (idp_client_secret_env, id_token_env,
                                                         (assertion_env or "").removeprefix("$"))]
    with contextlib.suppress(Exception):  # an unreadable file is reported below
        extra.append(_id_token(None, id_token_file) or "")
    given = [s.strip() for s in extra if s and s.strip()]  # the IdP's secret, an ID token, an assertion
    redactor = _redactor([*settings.secrets(), *given])
    from mcpprobe.safety import redact

    redact.use(redactor)  # a token the login obtains is learnt by it at once (mcpprobe.auth.tokens.accepted)
    err = _live_stderr(redactor)
    _check_url(url, proxies=True)
    header_pairs = tuple(parse_header(h) for h in headers)
    if any(name.lower() == "authorization" for name, _ in header_pairs):
        raise UsageProblem("login obtains the Authorization header itself; do not pass one with --header")
    if settings.bearer_env:
        raise UsageProblem("--bearer-env gives a token directly: there is nothing to log in for")
    secret = settings.client_secret()
    key = settings.client_key()
    idp_secret = AuthSettings(client_secret_env=idp_client_secret_env).client_secret()
    id_token = _id_token(id_token_env, id_token_file)
    from mcpprobe.auth.settings import from_env

    assertion = from_env(assertion_env, "--assertion-env")
    if insecure:
        err.write("warning: --insecure: TLS certificates are not verified\n")
    import anyio

    from mcpprobe.auth.login import LoginOptions, login
    from mcpprobe.auth.store import TokenStore
    from mcpprobe.cli.invocation import terminal_confirm
    from mcpprobe.render.auth import LoginEnded

    def announce(text: str) -> None:
        err.write(text + "\n")
        err.flush()

    options = LoginOptions(
        client_id=settings.client_id, client_secret=secret, client_key=key, scope=settings.scope,
        client_metadata_url=client_metadata_url, no_browser=settings.no_browser,
        callback_port=callback_port, login_timeout=login_timeout, timeout=timeout,
        insecure=insecure, headers=header_pairs, announce=announce, grant=grant,
        force=force, dpop=dpop, issuer=issuer, assertion=assertion,
        idp_token_endpoint=idp_token_endpoint, idp_client_id=idp_client_id,
        idp_client_secret=idp_secret, id_token=id_token,
        allow_http_authorization=settings.allow_http_authorization, confirm=terminal_confirm())
    try:
        result = anyio.run(login, url, options)
    except UsageProblem:
        raise
    except ProbeError as exc:
        failed = LoginEnded(url, error=exc)
        _show(failed, as_json, redactor)
        return failed.exit_code
    stored, store_error = None, None
    if not result.not_needed and not settings.no_auth_cache:
        from mcpprobe.safety.outfiles import WriteFailed

        try:
            stored = str(TokenStore().save(result.record))
        except WriteFailed as exc:  # logged in, but nothing kept for the next run: said, exit 2
            store_error = exc.message
    ended = LoginEnded(url, result, stored=stored, store_error=store_error)
    _show(ended, as_json, _redactor([*settings.secrets(), *given, *result.record.secrets()]))
    return ended.exit_code


@auth_group.command("status", context_settings=CONTEXT)
@click.argument("url", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def status_command(url: str | None, as_json: bool) -> int:
    """Show the stored tokens (never their values): per server, state, scope, expiry, file.

    With URL, only that server: a token per authorization server (issuer) it has used, the
    one in use first; exit 7 when that one is not usable (none, or expired without a way to
    refresh), 0 otherwise.
    """
    from mcpprobe.auth.store import TokenStore, token_dir

    store = TokenStore()
    if url:
        _check_url(url)
        records = store.records(url)  # one per authorization server, the one in use first
    else:
        records = store.all()
    shown = [r.public() for r in records]
    code = 0
    if url and (not records or shown[0]["state"] not in ("valid", "refreshable")):
        code = int(ExitCode.AUTH)
    from mcpprobe.render.auth import StoredTokens

    _show(StoredTokens(url, str(token_dir()), shown, code), as_json, _redactor(s for r in records for s in r.secrets()))
    return code


@auth_group.command("logout", context_settings=CONTEXT)
@click.argument("url", required=False)
@click.option("--all", "everything", is_flag=True, help="Remove the stored tokens of every server.")
@click.option("--no-revoke", is_flag=True, help="Only forget the tokens; do not revoke them (RFC 7009).")
@click.option("--client-secret-env", metavar="VAR", default=None,
              help="The secret of a pre-registered confidential client, for the revocation request "
                   "(the name of an environment variable, not the value).")
@click.option("--timeout", type=float, default=30.0, show_default=True, metavar="SECONDS", callback=positive,
              help="Limit for all the revocation requests together.")
@click.option("--allow-http-authorization", is_flag=True,
              help="Send the revocation to an endpoint on plain http:// at a host that is not this machine (warned "
                   "about); without it, only where the login allowed it, else a terminal asks and anything else "
                   "is refused (exit 7).")
def logout_command(url: str | None, everything: bool, no_revoke: bool, client_secret_env: str | None,
                   timeout: float, allow_http_authorization: bool) -> int:
    """Revoke and remove the stored tokens of the server at URL, from every authorization server
    it has used (or of every server with --all).

    Where the authorization server offers revocation (RFC 7009, its metadata's
    revocation_endpoint), the refresh and access tokens are revoked there first; a
    revocation that fails is reported (exit 7) and the token is forgotten anyway.
    Otherwise the token is only forgotten, and stays valid until it expires. The revocations
    together get --timeout seconds; a token whose revocation finds none left is forgotten anyway.
    """
    import anyio

    from mcpprobe.auth.settings import AuthSettings
    from mcpprobe.auth.store import TokenStore
    from mcpprobe.auth.tokens import HttpConsent, LoginFailed, plain_http_checked, revoke
    from mcpprobe.render.auth import LoggedOut

    if bool(url) == everything:
        raise click.UsageError("give a server URL, or --all")
    if url:
        _check_url(url)
    secret = AuthSettings(client_secret_env=client_secret_env).client_secret()
    store = TokenStore()
    records = store.all() if everything else store.records(url or "")
    redactor = _redactor([*(s for r in records for s in r.secrets()), *([secret] if secret else [])])
    notes: list[tuple[str, str]] = []
    errors: list[tuple[str, str]] = []
    from mcpprobe.cli.invocation import terminal_confirm
    from mcpprobe.wire.exchange import deadline_in

    # A revocation endpoint on plain http:// away from this machine is asked about (or refused) for
    # every record before the budget starts: the time a person takes to answer is not the
    # authorization server's. Each consent keeps its answer, so revoke() asks nothing again.
    confirm = terminal_confirm()
    consents: list[HttpConsent] = []
    refused: list[str | None] = []
    for record in records:
        consent = HttpConsent.of_record(record, allow_http_authorization=allow_http_authorization, confirm=confirm)
        consents.append(consent)
        refused.append(None)
        if not no_revoke and record.revocation_endpoint:
            try:
                plain_http_checked(record.revocation_endpoint, consent, "revocation endpoint")
            except LoginFailed as exc:
                refused[-1] = exc.message
    deadline = deadline_in(timeout)  # one budget for every exchange of the logout
    for record, consent, refusal in zip(records, consents, refused, strict=True):
        note = "forgotten (the authorization server offers no revocation; it stays valid until it expires)"
        if no_revoke:
            note = "forgotten, not revoked (--no-revoke)"
        elif refusal is not None:
            note = "forgotten, but NOT revoked"
            errors.append((record.server_url, refusal))
        elif record.revocation_endpoint:
            try:
                revoked = anyio.run(functools.partial(revoke, record, client_secret=secret, consent=consent,
                                                      timeout=timeout, deadline=deadline))
                note = f"revoked ({', '.join(revoked) or 'nothing to revoke'}) and forgotten"
            except LoginFailed as exc:
                note = "forgotten, but NOT revoked"
                errors.append((record.server_url, exc.message))
        store.forget(record)
        notes.append((record.server_url, note))
    _show(LoggedOut(url, everything, notes, errors), False, redactor)
    return int(ExitCode.AUTH) if errors else 0


def _id_token(env: str | None, path: str | None) -> str | None:
    """The user's ID token for cross-app access, from an environment variable or a file."""
    from mcpprobe.errors import UsageProblem

    if env and path:
        raise UsageProblem("--id-token-env and --id-token-file both give the ID token: give one")
    if env:
        from mcpprobe.auth.settings import from_env

        return from_env(env, "--id-token-env")
    if not path:
        return None
    try:
        with open(os.path.expanduser(path), encoding="utf-8") as handle:
            value = handle.read(64 * 1024).strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageProblem(f"--id-token-file {path}: cannot read it ({exc})") from None
    if not value:
        raise UsageProblem(f"--id-token-file {path}: the file is empty")
    return value


def _check_url(url: str, *, proxies: bool = False) -> None:
    """An http(s) URL the HTTP client can request; with `proxies` (a command that connects), the
    environment's proxy variables usable too."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError as exc:  # an unclosed [ (an IPv6 host), ...
        raise click.UsageError(f"{url!r} is not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.UsageError(f"{url!r} is not an http(s) URL: authentication applies to HTTP servers")
    from mcpprobe.wire.target import check_http_url

    check_http_url(url, proxies=proxies)
