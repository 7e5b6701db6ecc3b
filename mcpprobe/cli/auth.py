"""The command line for `mcpprobe auth status|login|logout`: click glue over `mcpprobe.auth`.

`mcpprobe.cli.main` adds the `auth` group to the main group. Click only at import time, like
`mcpprobe.cli.main`: the SDK, httpx2 and rich are loaded only when a command runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from mcpprobe.cli.edge import CONTEXT, EdgeGroup
from mcpprobe.cli.options import _positive, auth_options
from mcpprobe.exitcodes import ExitCode

if TYPE_CHECKING:
    from mcpprobe.auth.settings import AuthSettings


def _stream_pair(secrets: list[str]) -> tuple[Any, Any]:
    from mcpprobe.safety.redact import RedactingStream, Redactor

    # Plain text, much of it from authorization servers (errors, scopes, URLs): made inert too.
    redactor = Redactor(secrets)
    return RedactingStream(sys.stdout, redactor, inert=True), RedactingStream(sys.stderr, redactor, inert=True)


def _dumps(doc: dict[str, Any]) -> str:
    from mcpprobe.render.jsondoc import dumps

    return dumps(doc)


def _finding_lines(findings: list[Any]) -> list[str]:
    from mcpprobe.safety.sanitize import visible

    return [f"{f.severity.value:<7} {f.code}  {visible(f.message)}" for f in findings]


@click.group("auth", cls=EdgeGroup, context_settings=CONTEXT)
def auth_group() -> None:
    """Log in to HTTP servers (OAuth 2.1), and see or remove the stored tokens.

    \b
    Tokens are stored per server in the user's config directory (files of mode 0600):
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
@click.option("--login-timeout", type=float, default=300.0, show_default=True, metavar="SECONDS", callback=_positive,
              help="How long to wait for the browser's redirect.")
@click.option("--timeout", type=float, default=30.0, show_default=True, metavar="SECONDS", callback=_positive,
              help="Limit for each HTTP request.")
@click.option("-H", "--header", "headers", multiple=True, metavar="'NAME: VALUE'",
              help="Another header the MCP server needs (repeatable); never Authorization.")
@click.option("--grant", type=click.Choice(["authorization_code", "client_credentials", "cross_app_access"]),
              default=None,
              help="The OAuth grant (default: client_credentials for --client-id with --client-secret-env, "
                   "else authorization_code; a confidential client's code flow: --grant authorization_code; "
                   "cross_app_access: an enterprise IdP's ID-JAG, see --idp-token-endpoint).")
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
                  headers: tuple[str, ...], grant: str | None, issuer: str | None, idp_token_endpoint: str | None,
                  idp_client_id: str | None, idp_client_secret_env: str | None, id_token_env: str | None,
                  id_token_file: str | None, dpop: bool, force: bool, insecure: bool, as_json: bool,
                  auth: AuthSettings) -> int:
    """Log in to the MCP server at URL and store the token.

    \b
    Authorization code with PKCE, through a redirect to 127.0.0.1: the URL is printed (and
    opened in a browser where there is one; --no-browser only prints it). The client is
    --client-id when given, else a client ID metadata document (--client-metadata-url) or
    dynamic registration, as the authorization server offers. With --client-id and
    --client-secret-env: the client credentials grant, for CI (no browser), unless
    --grant authorization_code (a confidential client in the browser flow).

    \b
    Login opens a session as every command does (server/discover, else initialize) and
    lists what the server declares; it goes ahead when one of those is refused with 401
    or 403, when the server publishes protected resource metadata, or with --force. The
    same session with the new token must then succeed.

    \b
    Exit: 0 logged in (or no login needed); 2 usage; 4 server unreachable; 7 login failed.

    \b
    Examples:
      mcpprobe auth login https://example.com/mcp
      mcpprobe auth login https://example.com/mcp --no-browser --scope 'files:read'
      CLIENT_SECRET=... mcpprobe auth login https://example.com/mcp --client-id ci --client-secret-env CLIENT_SECRET
      mcpprobe auth login https://example.com/mcp --client-id ci --client-key-file ci-key.pem
    """
    from mcpprobe.auth.settings import AuthSettings
    from mcpprobe.errors import ProbeError, UsageProblem
    from mcpprobe.wire.target import parse_header

    settings = auth  # auth_options; named as the rest of login names it
    extra = [os.environ.get(name or "", "") for name in (idp_client_secret_env, id_token_env)]
    with contextlib.suppress(Exception):  # an unreadable file is reported below
        extra.append(_id_token(None, id_token_file) or "")
    out, err = _stream_pair([*settings.secrets(), *(s.strip() for s in extra if s and s.strip())])
    _check_url(url)
    header_pairs = tuple(parse_header(h) for h in headers)
    if any(name.lower() == "authorization" for name, _ in header_pairs):
        raise UsageProblem("login obtains the Authorization header itself; do not pass one with --header")
    if settings.bearer_env:
        raise UsageProblem("--bearer-env gives a token directly: there is nothing to log in for")
    secret = settings.client_secret()
    key = settings.client_key()
    idp_secret = AuthSettings(client_secret_env=idp_client_secret_env).client_secret()
    id_token = _id_token(id_token_env, id_token_file)
    if insecure:
        err.write("warning: --insecure: TLS certificates are not verified\n")
    import anyio

    from mcpprobe.auth.login import LoginOptions, login
    from mcpprobe.auth.store import TokenStore
    from mcpprobe.auth.tokens import LoginFailed

    def announce(text: str) -> None:
        err.write(text + "\n")
        err.flush()

    options = LoginOptions(
        client_id=settings.client_id, client_secret=secret, client_key=key, scope=settings.scope,
        client_metadata_url=client_metadata_url, no_browser=settings.no_browser,
        callback_port=callback_port, login_timeout=login_timeout, timeout=timeout,
        insecure=insecure, headers=header_pairs, announce=announce, grant=grant,
        force=force, dpop=dpop, issuer=issuer,
        idp_token_endpoint=idp_token_endpoint, idp_client_id=idp_client_id,
        idp_client_secret=idp_secret, id_token=id_token)
    try:
        result = anyio.run(login, url, options)
    except UsageProblem:
        raise
    except ProbeError as exc:
        findings = exc.diagnosis.findings if isinstance(exc, LoginFailed) and exc.diagnosis else []
        data = exc.diagnosis.data if isinstance(exc, LoginFailed) and exc.diagnosis else None
        if as_json:
            from mcpprobe.render.jsondoc import auth_login_document

            out.write(_dumps(auth_login_document(url, login=None, findings=findings, diagnosis=data, error=exc)) + "\n")
        else:
            for line in _finding_lines(findings):
                out.write(line + "\n")
        err.write(f"error: {exc.message}\n")
        if exc.detail.get("hint"):  # a Host check's 403, for one: the URL the server allows
            from mcpprobe.safety.sanitize import visible

            err.write(f"hint: {visible(str(exc.detail['hint']))}\n")
        return int(exc.exit_code)
    record = result.record
    stored, store_error = None, None
    if not result.not_needed and not settings.no_auth_cache:
        from mcpprobe.safety.outfiles import WriteFailed

        try:
            stored = TokenStore().save(record)
        except WriteFailed as exc:  # logged in, but nothing kept for the next run: said, exit 2
            store_error = exc.message
    out, err = _stream_pair([*settings.secrets(), *record.secrets()])
    if as_json:
        login_data = result.to_json()
        login_data["stored"] = str(stored) if stored else None
        from mcpprobe.render.jsondoc import auth_login_document

        out.write(_dumps(auth_login_document(url, login=login_data, store_error=store_error)) + "\n")
        return _store_failed(err, store_error)
    if result.not_needed:
        out.write(f"{url} answered without asking for credentials: no login needed\n")
        return 0
    public = record.public()
    flow = {"authorization_code": "authorization code + PKCE", "client_credentials": "client credentials",
            "cross_app_access": "cross-app access (ID-JAG, jwt-bearer)"}.get(result.flow, result.flow)
    lines = [f"Logged in to {url}",
             f"  flow          {flow} ({result.registration.replace('-', ' ')} client {public['clientId']})",
             f"  because       {result.why or 'the server asked'}",
             f"  checked       {', '.join(result.checked)} answered with the token",
             f"  scope         {record.scope or '(none given)'}",
             f"  expires in    {public['expiresIn']} s" if public["expiresIn"] is not None else "  expires       never",
             f"  refresh token {'yes' if record.refresh_token else 'no'}"]
    if result.step_up:
        lines.append("  step-up       re-authorized once for 403 insufficient_scope")
    if stored:
        lines.append(f"  stored in     {stored} (mode 0600)")
    else:
        lines.append("  stored        no (the token could not be stored)" if store_error else
                     "  stored        no (--no-auth-cache)")
    out.write("\n".join(lines) + "\n")
    return _store_failed(err, store_error)


def _store_failed(err: Any, store_error: str | None) -> int:
    """A login whose token could not be stored: the error on stderr, exit 2; else 0."""
    if store_error is None:
        return 0
    err.write(f"error: the token could not be stored: {store_error}; log in again once the token "
              "directory can be written, or give the token with --bearer-env\n")
    return int(ExitCode.USAGE)


@auth_group.command("status", context_settings=CONTEXT)
@click.argument("url", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def status_command(url: str | None, as_json: bool) -> int:
    """Show the stored tokens (never their values): per server, state, scope, expiry, file.

    With URL, only that server; exit 7 when it has no usable token (none, or expired
    without a way to refresh), 0 otherwise.
    """
    from mcpprobe.auth.store import TokenStore, token_dir

    store = TokenStore()
    if url:
        _check_url(url)
        record = store.load(url)
        records = [record] if record else []
    else:
        records = store.all()
    shown = [r.public() for r in records]
    code = 0
    if url and (not records or shown[0]["state"] not in ("valid", "refreshable")):
        code = int(ExitCode.AUTH)
    out, _ = _stream_pair([s for r in records for s in r.secrets()])
    if as_json:
        from mcpprobe.render.jsondoc import auth_status_document

        out.write(_dumps(auth_status_document(code, str(token_dir()), shown)) + "\n")
        return code
    if not shown:
        out.write(f"no stored tokens{' for ' + url if url else ''} (in {token_dir()})\n")
        return code
    for item in shown:
        expiry = "never expires" if item["expiresIn"] is None else (
            f"expires in {item['expiresIn']} s" if item["expiresIn"] > 0 else f"expired {-item['expiresIn']} s ago")
        out.write(f"{item['serverUrl']}\n  state   {item['state']} ({expiry}; refresh token "
                  f"{'yes' if item['hasRefreshToken'] else 'no'})\n  grant   {item['grant']}, client "
                  f"{item['clientId']}\n  scope   {item['scope'] or '(none)'}\n  issuer  {item['issuer']}\n"
                  f"  file    {item['file']} ({item['fileMode']})\n")
    return code


@auth_group.command("logout", context_settings=CONTEXT)
@click.argument("url", required=False)
@click.option("--all", "everything", is_flag=True, help="Remove the stored tokens of every server.")
@click.option("--no-revoke", is_flag=True, help="Only forget the tokens; do not revoke them (RFC 7009).")
@click.option("--client-secret-env", metavar="VAR", default=None,
              help="The secret of a pre-registered confidential client, for the revocation request "
                   "(the name of an environment variable, not the value).")
def logout_command(url: str | None, everything: bool, no_revoke: bool, client_secret_env: str | None) -> int:
    """Revoke and remove the stored token of the server at URL (or of every server with --all).

    \b
    Where the authorization server offers revocation (RFC 7009, its metadata's
    revocation_endpoint), the refresh and access tokens are revoked there first; a
    revocation that fails is reported (exit 7) and the token is forgotten anyway.
    Otherwise the token is only forgotten, and stays valid until it expires.
    """
    import anyio

    from mcpprobe.auth.settings import AuthSettings
    from mcpprobe.auth.store import TokenStore
    from mcpprobe.auth.tokens import LoginFailed, revoke

    if bool(url) == everything:
        raise click.UsageError("give a server URL, or --all")
    if url:
        _check_url(url)
    secret = AuthSettings(client_secret_env=client_secret_env).client_secret()
    store = TokenStore()
    records = store.all() if everything else [r for r in [store.load(url or "")] if r is not None]
    out, err = _stream_pair([*(s for r in records for s in r.secrets()), *([secret] if secret else [])])
    if not records:
        out.write(f"no stored token for {url}\n" if url else "removed 0 stored token(s)\n")
        return 0
    failed = False
    for record in records:
        note = "forgotten (the authorization server offers no revocation; it stays valid until it expires)"
        if no_revoke:
            note = "forgotten, not revoked (--no-revoke)"
        elif record.revocation_endpoint:
            try:
                revoked = anyio.run(functools.partial(revoke, record, client_secret=secret))
                note = f"revoked ({', '.join(revoked) or 'nothing to revoke'}) and forgotten"
            except LoginFailed as exc:
                failed = True
                note = "forgotten, but NOT revoked"
                err.write(f"error: {record.server_url}: {exc.message}\n")
        store.delete(record.server_url)
        out.write(f"{record.server_url}: {note}\n")
    if everything:
        out.write(f"removed {len(records)} stored token(s)\n")
    return int(ExitCode.AUTH) if failed else 0


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


def _check_url(url: str) -> None:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.UsageError(f"{url!r} is not an http(s) URL: authentication applies to HTTP servers")
