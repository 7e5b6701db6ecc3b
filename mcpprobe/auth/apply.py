"""The bearer token a session sends, and how it reaches the HTTP transport.

`authorize_target(target, auth)` returns the `HttpTarget` with `Authorization: Bearer <token>` added to
its headers (the transport sends `target.headers` on every request, and `target.secrets()` makes the
redactor mask the value). The token comes from, in order:

1. `--bearer-env VAR`: the environment variable's value, as is;
2. an explicit `--header 'Authorization: ...'`: left alone, nothing added;
3. the token store (unless `--no-auth-cache`): the stored token, refreshed first when it has expired
   (refresh token, or a new client-credentials grant when `--client-secret-env` is given);
4. `--client-id` with `--client-secret-env`: a client-credentials login now (stored unless
   `--no-auth-cache`).

Nothing found means no header: the server's 401 then gets the diagnosis.

A stored token that can be renewed (a refresh token, or client credentials with
`--client-secret-env`) also travels as `target.auth`, a `RenewingBearer`: when the server answers a
request with 401 during the run (the token expired or was revoked mid-session, in a long `watch`
say), it renews the token once, stores it, teaches the redactor the new one, and resends the request.
A token refused with 401 by a server whose protected resource metadata now names another
authorization server than the token's (MCP 2026-07-28, "Authorization Server Binding") is not
renewed there: a token of the new server already stored is used, else the command registers and
logs in with the new server as `auth login` does, where a browser can be opened (a code-flow token
of a client that is not pre-registered), and resends the request; without one the refusal gets the
diagnosis (`auth-server-changed`, naming the new server and the login command) and exit 7.
A token refused with 403 `insufficient_scope` is obtained again for the joined scopes and the request
resent, once a run: a client-credentials token by a new grant; an authorization-code token by the
same browser login as `auth login` (where a browser can be opened: $BROWSER, or a desktop; without
one the refusal gets the diagnosis and exit 7, as before).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx2

from mcpprobe.auth.dpop import BoundToken
from mcpprobe.auth.settings import AuthSettings
from mcpprobe.auth.store import TokenRecord, TokenStore
from mcpprobe.errors import ProbeError, UsageProblem
from mcpprobe.safety.redact import Redactor

if TYPE_CHECKING:
    from mcpprobe.auth.tokens import HttpConsent


@dataclasses.dataclass
class Resolved:
    token: str | None
    source: str  # bearer-env | header | stored | refreshed | client-credentials | none
    note: str = ""
    record: TokenRecord | None = None


async def resolve_token(url: str, auth: AuthSettings, *, timeout: float = 30.0, insecure: bool = False,
                        store: TokenStore | None = None, has_authorization_header: bool = False,
                        confirm: Callable[[str], bool] | None = None) -> Resolved:
    """The token a target starts with (the module's order). An authorization server endpoint on plain
    http:// away from this machine (mcpprobe.auth.tokens.plain_http_checked) is used where
    `auth.allow_http_authorization`, the stored token's login, or `confirm` (a question on a terminal;
    None: none to ask, refused) allows it; each exchange's time starts after the question."""
    bearer = auth.bearer()
    if bearer is not None:
        if has_authorization_header:
            raise UsageProblem("--bearer-env and an Authorization --header both set the Authorization header; "
                               "give one")
        return Resolved(bearer, "bearer-env")
    if has_authorization_header:
        return Resolved(None, "header")
    from mcpprobe.auth.login import LoginOptions, login
    from mcpprobe.auth.tokens import HttpConsent, LoginFailed, client_credentials_again, refresh

    store = store or TokenStore()
    secret = auth.client_secret()
    key = auth.client_key()
    if not auth.no_auth_cache:
        record = store.load(url)
        if record is not None and record.access_token:
            if record.usable():
                return Resolved(record.access_token, "stored", record=record)
            consent = HttpConsent.of_record(record, allow_http_authorization=auth.allow_http_authorization,
                                            confirm=confirm)
            try:
                if record.refreshable():
                    # A confidential client's secret stays in the environment: --client-secret-env.
                    record = await refresh(record, timeout=timeout, insecure=insecure, client_secret=secret,
                                           consent=consent)
                elif record.grant == "client_credentials" and (secret or key):
                    record = await client_credentials_again(record, secret, timeout=timeout, insecure=insecure,
                                                            client_key=key, consent=consent)
                else:
                    again = f"mcpprobe auth login {url}" + (
                        " --grant jwt-bearer --assertion-env VAR" if record.grant == "jwt-bearer" else "")
                    return Resolved(None, "none", note=f"the stored token for {url} has expired and cannot be "
                                                       f"refreshed; log in again: {again}")
            except LoginFailed as exc:
                return Resolved(None, "none", note=f"refreshing the stored token failed: {exc.message}")
            return Resolved(record.access_token, "refreshed", note=_notes(_kept(store, record), record.problem),
                            record=record)
    if auth.client_id and (secret or key):
        try:
            result = await login(url, LoginOptions(client_id=auth.client_id, client_secret=secret, client_key=key,
                                                   scope=auth.scope,
                                                   timeout=timeout, insecure=insecure, no_browser=True,
                                                   allow_http_authorization=auth.allow_http_authorization,
                                                   confirm=confirm))
        except ProbeError as exc:
            return Resolved(None, "none", note=f"client credentials login failed: {exc.message}")
        if result.not_needed:
            return Resolved(None, "none", note="the server did not ask for credentials")
        note = "" if auth.no_auth_cache else _kept(store, result.record)
        return Resolved(result.record.access_token, "client-credentials", note=note, record=result.record)
    return Resolved(None, "none")


class RenewingBearer(httpx2.Auth):
    """An httpx2 auth flow: the stored token on every request; on a 401, one renewal and one resend.

    Requests that meet a 401 together renew once (a lock, and a check that the token they sent is
    still the current one): a rotating refresh token can be used only once. A renewal that fails
    leaves the 401 as it was, for the diagnosis.

    A DPoP-bound token (RFC 9449) goes as `Authorization: DPoP <token>` with a fresh proof of its key
    on every request; a 401 `use_dpop_nonce` is answered by proving again with the server's nonce.

    A renewal happens inside a timed request: it never asks a question (a person's time would be
    counted as the server's). A plain-http authorization server endpoint is used where the token's
    login allowed it, or with `allow_http_authorization` (--allow-http-authorization)."""

    def __init__(self, record: TokenRecord, *, store: TokenStore | None, client_secret: str | None,
                 timeout: float, insecure: bool, client_key: str | None = None,
                 headers: tuple[tuple[str, str], ...] = (), redactor: Redactor | None = None,
                 allow_http_authorization: bool = False) -> None:
        self.record = record
        self.allow_http_authorization = allow_http_authorization
        # The run's redactor, handed in: it learns a renewed token, and masks the note about storing it.
        self.redactor = redactor if redactor is not None else Redactor(())
        self.headers = headers  # the target's other headers: a browser step-up meets the server with them
        self.store = store
        self.client_secret = client_secret
        self.client_key = client_key
        self.timeout = timeout
        self.insecure = insecure
        self.renewals = 0
        self.step_ups = 0
        self.moves = 0
        self.moved_to: str | None = None  # the authorization server the server named instead, when not followed
        self._lock: Any = None
        self.proofs = BoundToken()  # a DPoP-bound token's proofs, and the server's nonce

    def _prove(self, request: Any) -> str:
        """Put the current token on `request` (and its DPoP proof); returns the token sent."""
        token = self.record.access_token or ""
        self.proofs.attach(request, token, self.record.dpop_key)
        return token

    async def async_auth_flow(self, request: Any) -> Any:
        import anyio

        sent = self._prove(request)
        response = yield request
        if self.proofs.take_nonce(response):
            self._prove(request)
            response = yield request
        wanted = self._more_scope(response)
        if response.status_code != 401 and wanted is None:
            return
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self.record.access_token == sent:
                if wanted is not None:
                    self.step_ups += 1
                    self.record.scope = wanted
                    if not await self._renew(force_grant=True):
                        return
                elif not await self._after_401(response):
                    return
        self._prove(request)
        yield request

    def _more_scope(self, response: Any) -> str | None:
        """The scope to ask for when `response` is a 403 insufficient_scope that the token's grant can
        meet again (client credentials with their secret or key; the authorization code flow where a
        browser can be opened): the granted scope joined with the challenged one. At most
        MAX_STEP_UPS times a run, so a server that keeps refusing is not asked forever."""
        from mcpprobe.auth.login import MAX_STEP_UPS
        from mcpprobe.wire.challenge import bearer, parse_www_authenticate

        if response.status_code != 403 or self.step_ups >= MAX_STEP_UPS or not self._can_step_up():
            return None
        challenge = bearer(parse_www_authenticate(response.headers.get("www-authenticate", "")))
        if challenge is None or challenge.get("error") != "insufficient_scope" or not challenge.get("scope"):
            return None
        granted = (self.record.scope or "").split()
        return " ".join(dict.fromkeys([*granted, *str(challenge.get("scope")).split()]))

    def _can_step_up(self) -> bool:
        from mcpprobe.auth.callback import browser_available

        if self.record.grant == "client_credentials":
            return bool(self.client_secret or self.client_key)
        return self.record.grant == "authorization_code" and browser_available()

    async def _after_401(self, response: Any) -> bool:
        """A 401 to the current token: follow the server to its new authorization server when it has
        moved (once a run), else renew the token where it can be."""
        from mcpprobe.auth.login import MAX_MIGRATIONS

        if self.moves < MAX_MIGRATIONS and self.record.issuer:
            from mcpprobe.auth.discovery import authorization_servers, moved_from

            servers = await authorization_servers(self.record.server_url,
                                                  www_authenticate=response.headers.get("www-authenticate", ""),
                                                  timeout=min(self.timeout, 10.0), insecure=self.insecure)
            new = moved_from(self.record.issuer, servers)
            if new is not None:
                self.moves += 1
                return await self._move(new)
        return await self._renew()

    async def _move(self, issuer: str) -> bool:
        """Use a token of `issuer`: one already stored (refreshed if need be), else a login with it
        where a person can answer (a code-flow token of a client that is not pre-registered, and a
        browser). Otherwise `moved_to` says where the server went, for the diagnosis."""
        from mcpprobe.auth.again import moved_login
        from mcpprobe.auth.callback import browser_available
        from mcpprobe.auth.tokens import refresh

        record = self.store.load(self.record.server_url, issuer) if self.store is not None else None
        try:
            if record is not None and record.access_token and (record.usable() or record.refreshable()):
                if not record.usable():  # never with --client-secret-env: that secret is the old server's client's
                    await refresh(record, timeout=self.timeout, insecure=self.insecure, consent=self._consent(record))
            elif self.record.grant == "authorization_code" and browser_available() and \
                    self.record.client.get("registration") != "pre-registered":
                record = await moved_login(self.record, issuer, timeout=self.timeout, insecure=self.insecure,
                                           headers=self.headers, allow_http_authorization=self.allow_http_authorization)
            else:
                self.moved_to = issuer
                return False
        except ProbeError as exc:  # a failed login: the refusal keeps its diagnosis
            self._not_renewed(exc)
            self.moved_to = issuer
            return False
        self.record = record
        self.proofs = BoundToken()
        self._renewed()
        return True

    async def _renew(self, *, force_grant: bool = False) -> bool:
        from mcpprobe.auth.again import step_up_login
        from mcpprobe.auth.tokens import client_credentials_again, refresh

        try:
            if force_grant and self.record.grant == "authorization_code":
                await step_up_login(self.record, client_secret=self.client_secret, timeout=self.timeout,
                                    insecure=self.insecure, headers=self.headers,
                                    allow_http_authorization=self.allow_http_authorization)
            elif self.record.refreshable() and not force_grant:
                await refresh(self.record, timeout=self.timeout, insecure=self.insecure,
                              client_secret=self.client_secret, consent=self._consent(self.record))
            elif self.record.grant == "client_credentials" and (self.client_secret or self.client_key):
                await client_credentials_again(self.record, self.client_secret, client_key=self.client_key,
                                               timeout=self.timeout, insecure=self.insecure,
                                               consent=self._consent(self.record))
            else:
                return False
        except ProbeError as exc:  # a failed login, or its usage problem: the refusal keeps its diagnosis
            self._not_renewed(exc)
            return False
        self._renewed()
        return True

    def _not_renewed(self, exc: ProbeError) -> None:
        """A renewal mcpprobe itself refused (a plain-http endpoint, nothing sent) is said on stderr:
        the server's 401 that follows cannot tell why the token was not renewed."""
        from mcpprobe.auth.tokens import PlainHttpRefused

        if isinstance(exc, PlainHttpRefused):
            from mcpprobe.safety.notice import say

            say(self.redactor(f"mcpprobe: the token was not renewed: {exc.message}"))

    def _consent(self, record: TokenRecord) -> HttpConsent:
        """A renewal's consent to a plain-http endpoint: the record's login's, or the option; no question."""
        from mcpprobe.auth.tokens import HttpConsent

        return HttpConsent.of_record(record, allow_http_authorization=self.allow_http_authorization,
                                     unasked="as a renewal during the run asks nobody")

    def _renewed(self) -> None:
        """A new token in `record`: masked from now on, and stored (or a note on stderr why not)."""
        self.renewals += 1
        self.redactor.learn(*self.record.secrets())
        note = _notes(_kept(self.store, self.record) if self.store is not None else "", self.record.problem)
        if note:
            from mcpprobe.safety.notice import say

            say(self.redactor(f"mcpprobe: {note}"))


def _notes(*notes: str) -> str:
    return "; ".join(note for note in notes if note)


def _kept(store: TokenStore, record: TokenRecord) -> str:
    """Store a new or renewed token; "" when stored, else a note that says it is this run's only."""
    from mcpprobe.safety.outfiles import WriteFailed

    try:
        store.save(record)
    except WriteFailed as exc:
        return f"the new token could not be stored ({exc.message}); it is used for this run only"
    return ""


def renewable(record: TokenRecord, credential: str | None) -> bool:
    """Whether the token can be renewed without a person: a refresh token, or client credentials
    with their secret or key (`credential`)."""
    return record.refreshable() or (record.grant == "client_credentials" and bool(credential))


@dataclass(frozen=True)
class TokenFacts:
    """What a monitor should know of the access token a probe sent; never the token itself.

    `expires_at` (seconds since the epoch) comes from the stored token's record, or, for a token
    given as it is (--bearer-env, an Authorization header), from its `exp` claim when it is a JWT
    (read, not verified: only the server can verify it); None when it cannot be known."""

    expires_at: float | None
    renewable: bool  # a new one without a person: a refresh token, or client credentials
    source: str  # where it came from: stored, refreshed, client-credentials, bearer-env, header
    issuer: str | None = None  # the authorization server that issued a stored token


def jwt_expiry(token: str) -> float | None:
    """The `exp` claim of a JWT (RFC 7519 4.1.4), unverified; None for any other token."""
    import base64
    import binascii
    import json
    import math

    parts = token.split(".")
    if len(parts) != 3 or len(parts[1]) > 8192:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, binascii.Error, RecursionError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    if isinstance(exp, bool) or not isinstance(exp, int | float) or not math.isfinite(exp):
        return None
    return float(exp)


def token_facts(resolved: Resolved, auth: AuthSettings, headers: tuple[tuple[str, str], ...] = ()) -> TokenFacts | None:
    """The facts of the token a target will send, from how it was found (and its headers, for a
    token given as an Authorization header); None when it sends none."""
    if resolved.record is not None and resolved.token is not None:
        return TokenFacts(resolved.record.expires_at,
                          renewable(resolved.record, auth.client_secret() or auth.client_key()), resolved.source,
                          resolved.record.issuer)
    token = resolved.token
    if token is None and resolved.source == "header":
        value = next((v for k, v in headers if k.lower() == "authorization"), "")
        scheme, _, rest = value.partition(" ")
        token = rest.strip() if scheme.lower() in ("bearer", "dpop") else None
    if not token:
        return None
    return TokenFacts(jwt_expiry(token), False, resolved.source)


def with_bearer(target: Any, token: str) -> Any:
    return dataclasses.replace(target, headers=(*target.headers, ("Authorization", f"Bearer {token}")))


def authorize_target(target: Any, auth: AuthSettings, *, timeout: float = 30.0,
                     redactor: Redactor | None = None,
                     confirm: Callable[[str], bool] | None = None) -> tuple[Any, Resolved]:
    """Synchronous, for the CLI before its event loop starts: (target with the token, how it was found).
    A renewable token's `RenewingBearer` is handed `redactor`, the run's, to teach it a renewed token.
    `confirm` asks about a plain-http authorization server endpoint before the session (resolve_token).

    Raises `UsageProblem` for --bearer-env on a stdio server or a variable that is not set.
    """
    from mcpprobe.wire.target import HttpTarget

    if not isinstance(target, HttpTarget):
        if auth.bearer_env or auth.client_id or auth.client_secret_env or auth.client_key_file or auth.client_key_env:
            raise UsageProblem("--bearer-env, --client-id and --client-secret-env apply to HTTP servers; for a "
                               "command use --env")
        return target, Resolved(None, "none")
    import anyio

    has_header = any(name.lower() == "authorization" for name, _ in target.headers)
    resolved = anyio.run(lambda: resolve_token(target.url, auth, timeout=timeout, insecure=target.insecure,
                                               has_authorization_header=has_header, confirm=confirm))
    target = dataclasses.replace(target, token=token_facts(resolved, auth, target.headers))
    if resolved.token is None:
        return target, resolved
    target = with_bearer(target, resolved.token)
    record, secret, key = resolved.record, auth.client_secret(), auth.client_key()
    # A code-flow token travels this way too: a 403 insufficient_scope can send it back to the browser.
    if record is not None and (renewable(record, secret or key) or record.dpop_key
                               or record.grant == "authorization_code"):
        target = dataclasses.replace(target, auth=RenewingBearer(
            record, store=None if auth.no_auth_cache else TokenStore(), client_secret=secret, client_key=key,
            timeout=timeout, insecure=target.insecure, redactor=redactor,
            allow_http_authorization=auth.allow_http_authorization,
            headers=tuple((name, value) for name, value in target.headers if name.lower() != "authorization")))
    return target, resolved
