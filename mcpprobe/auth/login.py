"""OAuth 2.1 login for the command line, on the mcp SDK's client auth (`mcp.client.auth`).

Login first opens a session without credentials through the connection core (mcpprobe.auth.contact),
as every command does, and lists what the server declares; the first 401/403 is the refusal to answer. The
SDK's `OAuthClientProvider` is an `httpx2.Auth`: handed that request and the server's answer to it,
it discovers the metadata, registers (client ID metadata document or dynamic registration) when no
client is known, runs the authorization, and exchanges the code (`_authorize`). The check is the
same session again, with the token. It wants a
`redirect_handler` (show the URL) and a `callback_handler` (wait for the redirect): this module
supplies both for a CLI - the URL printed and, where there is a display, opened in a browser; a
loopback HTTP listener on 127.0.0.1 (RFC 8252, mcpprobe.auth.callback) that receives the redirect,
with a timeout.

Before the SDK runs, mcpprobe checks what the SDK does not (the MCP specification's client
duties): the authorization server advertises PKCE S256, and there is a way to identify the client
(pre-registered `--client-id`, a client ID metadata document, or dynamic registration). Otherwise
login stops with the diagnosis findings.

Flows: authorization code + PKCE (`--client-id` optional, with a secret for a confidential client;
the loopback redirect in mcpprobe.auth.callback), client credentials (`--client-id` with
`--client-secret-env` or a key; `--grant` chooses), cross-app access (an enterprise IdP's ID-JAG).
A 403 `insufficient_scope` after login triggers at most `MAX_STEP_UPS` step-ups: the SDK
re-authorizes for the union of the granted and the challenged scopes. Renewing a stored token
needs no SDK and no login: mcpprobe.auth.tokens.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpprobe import __version__
from mcpprobe.auth.callback import LoopbackCallback, browser_available, open_in_browser
from mcpprobe.auth.contact import Contact, contact, usable_challenge
from mcpprobe.auth.diagnosis import Diagnosis, diagnose
from mcpprobe.auth.discovery import canonical_resource, default_metadata, supports
from mcpprobe.auth.dpop import BoundAuth, DPoPKey, LoginProofs, send_proved
from mcpprobe.auth.store import TokenRecord
from mcpprobe.auth.tokens import LoginFailed, expiry, key_algorithm, plain_http_checked, secret_method, token_request
from mcpprobe.auth.workload import JWT_BEARER_GRANT, ServerMoved, jwt_bearer, moved_check

LOGIN_PROTOCOL_VERSION = "2025-11-25"
MAX_STEP_UPS = 1  # re-authorizations for 403 insufficient_scope in one login: a server that keeps refusing ends it
MAX_MIGRATIONS = 1  # logins again with another authorization server in one login: a server that keeps moving ends it
GRANTS = ("authorization_code", "client_credentials", "cross_app_access", JWT_BEARER_GRANT)
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"


@dataclass
class LoginOptions:
    client_id: str | None = None
    client_secret: str | None = None
    scope: str | None = None
    client_metadata_url: str | None = None
    no_browser: bool = False
    callback_port: int = 0
    login_timeout: float = 300.0
    timeout: float = 30.0
    insecure: bool = False
    headers: tuple[tuple[str, str], ...] = ()  # other headers the MCP server needs (never Authorization)
    grant: str | None = None  # authorization_code | client_credentials; None: by the options given
    client_key: str | None = None  # PEM private key: private_key_jwt client authentication (RFC 7523)
    dpop: bool = False  # ask for DPoP-bound tokens (RFC 9449)
    # cross-app access (enterprise-managed authorization): the user's ID token from the enterprise
    # IdP, the IdP's token endpoint and mcpprobe's client there, and the MCP authorization server
    issuer: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = None
    id_token: str | None = None
    assertion: str | None = None  # jwt-bearer (RFC 7523 2.1): the workload's JWT, from --assertion-env
    force: bool = False  # log in even when the server answers without credentials
    # What login tells the person as it goes (a scope a server asks for, a URL to open): inert.
    announce: Callable[[str], None] = field(default=lambda text: _say_inert(text))
    # Plain-http endpoints away from this machine (tokens.plain_http_checked): --allow-http-authorization, a
    # question (None: no terminal), the origins allowed in this run and by a stored token's login.
    allow_http_authorization: bool = False
    confirm: Callable[[str], bool] | None = None
    http_allowed: set[str] = field(default_factory=set)
    remembered: set[str] = field(default_factory=set)


def _say_inert(text: str) -> None:
    """The announcer of a login started inside another command (a step-up, client credentials):
    on stderr, through the sanitizer, as `auth login`'s own announcer is."""
    from mcpprobe.safety.notice import say

    say(text, multiline=True)


@dataclass
class LoginResult:
    record: TokenRecord
    flow: str  # authorization_code | client_credentials
    registration: str  # pre-registered | client-id-metadata-document | dynamic | none-needed
    step_up: bool = False
    status: int = 200
    diagnosis: Diagnosis | None = None
    not_needed: bool = False
    checked: list[str] = field(default_factory=list)  # the requests the server answered with the token
    why: str = ""  # what made login go ahead (the request refused, or why without one)
    migrated_from: str | None = None  # the authorization server the server named before it moved, during login


# ----- SDK adapters -----


class _Storage:
    """The SDK's `TokenStorage`, in memory: login decides what is persisted, and where."""

    def __init__(self, client_info: Any = None, proofs: LoginProofs | None = None) -> None:
        self.tokens: Any = None
        self.client_info = client_info
        self.proofs = proofs

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        from mcpprobe.auth.tokens import accepted

        # The SDK's token answer, checked as mcpprobe's own are: never sent or stored when unusable.
        accepted("the authorization server", {"access_token": tokens.access_token,
                                             "refresh_token": tokens.refresh_token})
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client_info

    async def set_client_info(self, client_info: Any) -> None:
        self.client_info = client_info


def _scoped(base: type) -> type:
    """A provider class that honours `--scope`: the user's scopes replace the automatic choice (the
    challenge's scope, else scopes_supported); on a step-up they are joined with the challenged ones."""
    from mcp.client.auth.utils import union_scopes

    class Scoped(base):  # type: ignore[misc]  # a base chosen at run time: mypy types it Any
        forced_scope: str | None = None
        stepping_up: bool = False

        async def _perform_authorization(self) -> Any:
            if self.forced_scope:
                chosen = self.context.client_metadata.scope if self.stepping_up else None
                self.context.client_metadata.scope = union_scopes(self.forced_scope, chosen)
            return await super()._perform_authorization()

    return Scoped


def _check_prerequisites(found: Diagnosis, opts: LoginOptions, flow: str) -> dict[str, Any]:
    discovery = found.discovery
    assert discovery is not None
    if discovery.asm is None:
        if not (discovery.legacy and discovery.asm_attempts
                and all(a.result == "not-found" for a in discovery.asm_attempts)):
            raise LoginFailed("cannot log in: no usable authorization server metadata was found (see the findings)",
                              diagnosis=found)
        origin = discovery.issuer or ""
        opts.announce(f"warning: {origin} publishes no authorization server metadata: using the 2025-03-26 "
                      f"default endpoints {origin}/authorize, {origin}/token and {origin}/register")
        offer = supports(default_metadata(origin))
    else:
        offer = supports(discovery.asm)
    if flow == "client_credentials":
        if "client_credentials" not in offer["grantTypes"]:
            raise LoginFailed(f"the authorization server does not offer client_credentials (it offers "
                              f"{', '.join(offer['grantTypes'])})", diagnosis=found)
        return offer
    if "authorization_code" not in offer["grantTypes"]:
        raise LoginFailed(f"the authorization server does not offer authorization_code (it offers "
                          f"{', '.join(offer['grantTypes'])}); for CI use --client-id with --client-secret-env",
                          diagnosis=found)
    if not offer["pkceS256"]:
        raise LoginFailed("the authorization server does not advertise PKCE S256; MCP clients must not use it "
                          "for the authorization code flow", diagnosis=found)
    if not opts.client_id:
        cimd = bool(opts.client_metadata_url) and offer["registration"]["clientIdMetadataDocument"]
        if not cimd and not offer["registration"]["dynamic"]:
            raise LoginFailed("the authorization server offers no way for mcpprobe to register "
                              "(no dynamic registration" + ("" if opts.client_metadata_url else
                                                            ", and no --client-metadata-url given")
                              + "): pass a pre-registered --client-id", diagnosis=found)
    return offer


def choose_grant(opts: LoginOptions) -> str:
    """`--grant` when given; else client credentials for --client-id with --client-secret-env (CI, no
    browser), the authorization code flow otherwise."""
    from mcpprobe.errors import UsageProblem

    if opts.client_secret and not opts.client_id:
        raise UsageProblem("--client-secret-env needs --client-id")
    if opts.client_key:
        if not opts.client_id or opts.client_secret:
            raise UsageProblem("--client-key-file/--client-key-env need --client-id, and no --client-secret-env")
        if opts.grant not in (None, "client_credentials"):
            raise UsageProblem("a client key (private_key_jwt) is used with the client credentials grant")
        return "client_credentials"
    if opts.assertion and opts.grant not in (None, JWT_BEARER_GRANT):
        raise UsageProblem(f"--assertion-env gives the assertion of --grant {JWT_BEARER_GRANT}, not of "
                           f"--grant {opts.grant}")
    if opts.grant is None:
        if opts.assertion:
            return JWT_BEARER_GRANT
        return "client_credentials" if opts.client_secret and opts.client_id else "authorization_code"
    if opts.grant not in GRANTS:
        raise UsageProblem(f"--grant {opts.grant}: choose one of {', '.join(GRANTS)}")
    if opts.grant == "client_credentials" and not (opts.client_id and opts.client_secret):
        raise UsageProblem("--grant client_credentials needs --client-id and --client-secret-env")
    if opts.grant == "cross_app_access":
        needed = [name for name, value in (
            ("--client-id", opts.client_id), ("--client-secret-env", opts.client_secret),
            ("--idp-token-endpoint", opts.idp_token_endpoint), ("--idp-client-id", opts.idp_client_id),
            ("--id-token-env or --id-token-file", opts.id_token)) if not value]
        if needed:
            raise UsageProblem(f"--grant cross_app_access needs {', '.join(needed)}")
    if opts.grant == JWT_BEARER_GRANT:
        if not opts.assertion:
            raise UsageProblem(f"--grant {JWT_BEARER_GRANT} needs --assertion-env VAR: the name of the environment "
                               "variable that holds the workload's JWT")
        if opts.client_secret or opts.dpop:
            raise UsageProblem(f"--grant {JWT_BEARER_GRANT} takes no --client-secret-env and no --dpop: the "
                               "assertion is the credential")
    return opts.grant


async def login(url: str, opts: LoginOptions) -> LoginResult:
    """Log in to the MCP server at `url`; the result's record is ready to store."""
    flow = choose_grant(opts)
    first = await contact(url, opts.headers, insecure=opts.insecure, timeout=opts.timeout)
    why = f"{first.method}: HTTP {first.status}" if first.status else ""
    if first.status is None:
        if opts.force:
            why = "--force"
        else:
            from mcpprobe.auth.discovery import discover

            found = await discover(url, timeout=min(opts.timeout, 15), insecure=opts.insecure)
            if found.prm is None:
                record = TokenRecord(server_url=url, grant="none")
                return LoginResult(record, flow="none", registration="none-needed", status=200, not_needed=True,
                                   checked=first.answered)
            why = f"protected resource metadata at {found.prm_url}"
        opts.announce(f"{url} answered {', '.join(first.answered)} without credentials; logging in anyway ({why})")
        first.status = 401  # what a protected request would get: the flow starts from discovery
    diagnosis = await diagnose(url, {"status": first.status, "wwwAuthenticate": first.challenge},
                           timeout=min(opts.timeout, 15), insecure=opts.insecure, token_sent=False)
    import logging

    # The SDK logs a traceback for every failed flow; mcpprobe reports the failure itself.
    logging.getLogger("mcp.client.auth").setLevel(logging.CRITICAL + 1)
    migrated_from = None
    for migrations in range(MAX_MIGRATIONS + 1):
        try:
            result = await _by_grant(url, opts, flow, diagnosis, first)
            break
        except ServerMoved as moved:
            if migrations == MAX_MIGRATIONS:
                raise
            _may_move(opts, flow, moved)
            opts.announce(f"{url} now names the authorization server {moved.new} (its token from {moved.old} "
                          f"is refused): registering and logging in with {moved.new}")
            migrated_from, first = moved.old, moved.check
            diagnosis = await diagnose(url, {"status": first.status, "wwwAuthenticate": first.challenge},
                                       timeout=min(opts.timeout, 15), insecure=opts.insecure, token_sent=False)
    result.why = why
    result.migrated_from = migrated_from
    result.record.plain_http_allowed = sorted(opts.http_allowed | opts.remembered)
    return result


async def _by_grant(url: str, opts: LoginOptions, flow: str, diagnosis: Diagnosis, first: Contact) -> LoginResult:
    if flow == "cross_app_access":
        return await _cross_app_access(url, opts, diagnosis, first)
    if flow == JWT_BEARER_GRANT:
        record, check = await jwt_bearer(url, opts, diagnosis, first)
        return LoginResult(record, flow=JWT_BEARER_GRANT, registration=record.client["registration"],
                           diagnosis=diagnosis, checked=check.answered)
    offer = _check_prerequisites(diagnosis, opts, flow)
    if flow == "client_credentials":
        return await _client_credentials(url, opts, diagnosis, offer, first)
    return await _authorization_code(url, opts, diagnosis, offer, first)


def _may_move(opts: LoginOptions, flow: str, moved: ServerMoved) -> None:
    """Whether login may register with the authorization server the server names now (MCP 2026-07-28,
    "Authorization Server Binding": clients "MUST NOT reuse client credentials from a different
    authorization server and MUST re-register with the new authorization server"): a dynamically
    registered client registers again, a client ID metadata document is portable; a pre-registered
    client belongs to the old server ("clients SHOULD surface an error"), and so does an assertion."""
    where = f"{moved.message}; "
    if flow == JWT_BEARER_GRANT:
        raise LoginFailed(where + f"the assertion was for {moved.old}: log in again with an assertion whose "
                          f"audience is {moved.new}", detail=moved.detail)
    if flow == "cross_app_access" or opts.client_id:
        raise LoginFailed(where + f"the pre-registered client {opts.client_id} belongs to {moved.old}: register a "
                          f"client with {moved.new} and log in with its --client-id"
                          + (" and --issuer" if flow == "cross_app_access" else ""), detail=moved.detail)


async def _send(client: Any, request: Any, proofs: LoginProofs | None, opts: LoginOptions) -> Any:
    """Send one request of the SDK's flow, whole within `opts.timeout` and its answer within the cap
    (wire/exchange.py); a token request proved with DPoP when asked. Every request of the flow leaves
    here, to the endpoints it chose from the metadata: a registration or token request (not a GET of
    metadata) to plain http:// away from this machine is asked about first, or refused."""
    from mcpprobe.wire.exchange import deadline_in, exchange

    token_request = request.method == "POST" and b"grant_type=" in request.read()
    if request.method != "GET":
        plain_http_checked(str(request.url), opts, "token endpoint" if token_request else "registration endpoint")
    if proofs is None or not token_request:
        return await exchange(client, request, deadline=deadline_in(opts.timeout))
    return await send_proved(client, request, proofs, deadline=deadline_in(opts.timeout))


async def _authorize(provider: Any, url: str, refused: Contact, opts: LoginOptions,
                     proofs: LoginProofs | None = None) -> None:
    """Run the SDK's OAuth flow for the server's refusal `refused`.

    The provider is an httpx auth flow: it is handed the request that was refused and the server's
    answer to it (its status and WWW-Authenticate), sends its own requests (metadata, registration,
    token) through a client without credentials, and ends when it would resend the request with its
    new token. That resend is left to `contact`, through the session core."""
    import httpx2 as httpx
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    # As bytes: a challenge may hold what is not ASCII (obs-text), which a str header value may not.
    challenge = usable_challenge(refused.challenge, url) if refused.challenge else ""
    answer: dict[bytes, bytes] = {b"WWW-Authenticate": challenge.encode("utf-8")} if challenge else {}
    async with httpx.AsyncClient(timeout=opts.timeout, verify=not opts.insecure, follow_redirects=False) as client:
        request = client.build_request("POST", url, headers={
            "MCP-Protocol-Version": refused.version or LOGIN_PROTOCOL_VERSION})
        flow = provider.async_auth_flow(request)
        replayed = False
        try:
            outgoing = await flow.__anext__()
            while True:
                if outgoing is request:
                    if replayed:
                        return
                    replayed = True
                    response = httpx.Response(refused.status or 401, headers=answer, request=request)
                else:
                    response = await _send(client, outgoing, proofs, opts)
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except (OAuthFlowError, OAuthTokenError, OAuthRegistrationError) as exc:
            raise LoginFailed(f"login failed: {exc}") from None
        except httpx.HTTPError as exc:
            raise LoginFailed(f"login failed: {str(exc) or type(exc).__name__}") from None
        except httpx.InvalidURL as exc:  # a URL the authorization server named, which the flow would request
            raise LoginFailed(f"login failed: the authorization server named a URL that cannot be used ({exc})") \
                from None
        finally:
            await flow.aclose()


async def _obtain_and_check(provider: Any, storage: _Storage, url: str, opts: LoginOptions,
                            first: Contact) -> tuple[Contact, bool]:
    """The token, then a session with it; a 403 insufficient_scope re-authorizes (at most
    MAX_STEP_UPS times). Returns the accepted contact and whether a step-up happened."""
    from mcpprobe.wire.challenge import bearer, parse_www_authenticate

    proofs = storage.proofs
    await _authorize(provider, url, first, opts, proofs)
    step_ups = 0
    while True:
        if storage.tokens is None:
            raise LoginFailed("login ended without a token")
        # A bound token goes with its proofs; a check renews nothing: the token has just been obtained.
        auth = BoundAuth(storage.tokens.access_token, proofs.key.pem) if proofs is not None and proofs.bound else None
        check = await contact(url, opts.headers, insecure=opts.insecure, timeout=opts.timeout,
                              token=storage.tokens.access_token, auth=auth)
        if check.status is None:
            return check, step_ups > 0
        await moved_check(url, _issuer_used(provider), check, opts.timeout, opts.insecure)
        challenge = bearer(parse_www_authenticate(check.challenge))
        scope_wanted = check.status == 403 and challenge is not None and challenge.get("error") == "insufficient_scope"
        if challenge is not None and scope_wanted and step_ups < MAX_STEP_UPS:
            step_ups += 1
            provider.stepping_up = True
            opts.announce(f"{check.method} needs more scope ({challenge.get('scope') or 'not named'}): "
                          "authorizing again")
            await _authorize(provider, url, check, opts, proofs)
            continue
        raise LoginFailed(
            f"after login the server still answers {check.method} with HTTP {check.status}"
            + (f" (WWW-Authenticate: {check.challenge})" if check.challenge else "")
            + (f" even after {step_ups} step-up" if step_ups else ""),
            detail={"status": check.status, "wwwAuthenticate": check.challenge, "method": check.method})


def _issuer_used(provider: Any) -> str | None:
    """The issuer of the authorization server the SDK's provider logged in with (its validated
    metadata's), or None when it does not say."""
    context = getattr(provider, "context", None)
    metadata = getattr(context, "oauth_metadata", None)
    issuer = getattr(metadata, "issuer", None) or getattr(context, "auth_server_url", None)
    return str(issuer) if issuer else None


def _proofs(opts: LoginOptions) -> LoginProofs | None:
    return LoginProofs(DPoPKey()) if opts.dpop else None


def _record(url: str, provider: Any, storage: _Storage, grant: str, registration: str,
            found: Diagnosis) -> TokenRecord:
    context = provider.context
    tokens = storage.tokens
    if tokens is None:
        raise LoginFailed("login ended without a token")
    metadata = context.oauth_metadata
    info = storage.client_info or context.client_info
    client: dict[str, Any] = {"registration": registration}
    if info is not None:
        client.update({"client_id": info.client_id, "token_endpoint_auth_method": info.token_endpoint_auth_method})
        if registration == "dynamic" and info.client_secret:
            client["client_secret"] = info.client_secret  # minted for mcpprobe; needed to refresh
    now = time.time()
    return TokenRecord(
        server_url=url, access_token=tokens.access_token, refresh_token=tokens.refresh_token,
        expires_at=expiry(now, tokens.expires_in)[0], scope=tokens.scope, grant=grant,
        token_endpoint=str(metadata.token_endpoint) if metadata else
        f"{context.get_authorization_base_url(url)}/token",
        issuer=str(metadata.issuer) if metadata else (found.discovery.issuer if found.discovery else None),
        resource=context.get_resource_url() if context.should_include_resource_param(LOGIN_PROTOCOL_VERSION)
        else canonical_resource(url),
        client=client, obtained_at=now,
        token_type="DPoP" if storage.proofs and storage.proofs.bound else "Bearer",
        dpop_key=storage.proofs.key.pem if storage.proofs and storage.proofs.bound else None,
        revocation_endpoint=str(metadata.revocation_endpoint) if metadata and metadata.revocation_endpoint else None)


async def _authorization_code(url: str, opts: LoginOptions, found: Diagnosis, offer: dict[str, Any],
                              first: Contact) -> LoginResult:
    import anyio
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata
    from pydantic import AnyUrl

    callback = LoopbackCallback(opts.callback_port)
    failure: BaseException | None = None
    async with anyio.create_task_group() as group:
        await callback.start(group)
        try:
            metadata = OAuthClientMetadata(
                client_name="mcpprobe", redirect_uris=[AnyUrl(callback.redirect_uri)],
                grant_types=["authorization_code", "refresh_token"], response_types=["code"],
                token_endpoint_auth_method="none", scope=opts.scope, software_id="mcpprobe",
                software_version=__version__)
            pre = None
            registration = "dynamic"
            if opts.client_id:
                registration = "pre-registered"
                method = secret_method(offer) if opts.client_secret else "none"
                pre = OAuthClientInformationFull(client_id=opts.client_id, client_secret=opts.client_secret,
                                                 token_endpoint_auth_method=method,
                                                 redirect_uris=[AnyUrl(callback.redirect_uri)])
            storage = _Storage(pre, _proofs(opts))

            async def redirect_handler(authorization_url: str) -> None:
                plain_http_checked(authorization_url, opts, "authorization endpoint")
                opts.announce(f"Open this URL in a browser to log in (waiting up to {opts.login_timeout:g} s for "
                              f"the redirect to {callback.redirect_uri}):\n{authorization_url}")
                if not opts.no_browser and browser_available():
                    open_in_browser(authorization_url)

            async def callback_handler() -> Any:
                query = await callback.wait(opts.login_timeout)
                if query.get("error"):
                    detail = query.get("error_description")
                    raise LoginFailed(f"the authorization server refused: {query['error']}"
                                      + (f" ({detail})" if detail else ""))
                if not query.get("code"):
                    raise LoginFailed("the redirect carried no authorization code")
                return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

            provider = _scoped(OAuthClientProvider)(
                url, metadata, storage, redirect_handler=redirect_handler, callback_handler=callback_handler,
                client_metadata_url=opts.client_metadata_url)
            provider.forced_scope = opts.scope
            check, step_up = await _obtain_and_check(provider, storage, url, opts, first)
            info = storage.client_info
            if registration == "dynamic" and info is not None and opts.client_metadata_url and \
                    info.client_id == opts.client_metadata_url:
                registration = "client-id-metadata-document"
        except Exception as exc:  # noqa: BLE001 - re-raised below, outside the task group
            failure = exc
        finally:
            group.cancel_scope.cancel()
    await callback.aclose()
    if failure is not None:
        raise failure
    return _finish(url, provider, storage, "authorization_code", registration, found, check, step_up)


def _finish(url: str, provider: Any, storage: _Storage, grant: str, registration: str, found: Diagnosis,
            check: Contact, step_up: bool) -> LoginResult:
    record = _record(url, provider, storage, grant, registration, found)
    return LoginResult(record, flow=grant, registration=registration, step_up=step_up, status=200,
                       diagnosis=found, checked=check.answered)


async def _client_credentials(url: str, opts: LoginOptions, found: Diagnosis, offer: dict[str, Any],
                              first: Contact) -> LoginResult:
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    assert opts.client_id and (opts.client_secret or opts.client_key)
    issuer = offer["issuer"] if found.discovery and found.discovery.asm else None
    storage = _Storage(proofs=_proofs(opts))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if opts.client_key:
            if "private_key_jwt" not in offer["tokenEndpointAuthMethods"]:
                raise LoginFailed("the authorization server does not accept private_key_jwt client authentication "
                                  f"(it offers {', '.join(offer['tokenEndpointAuthMethods'])})", diagnosis=found)
            signer = SignedJWTParameters(issuer=opts.client_id, subject=opts.client_id, signing_key=opts.client_key,
                                         signing_algorithm=key_algorithm(opts.client_key))
            provider = _scoped(PrivateKeyJWTOAuthProvider)(
                url, storage, opts.client_id, signer.create_assertion_provider(), scope=opts.scope, issuer=issuer)
        else:
            provider = _scoped(ClientCredentialsOAuthProvider)(
                url, storage, opts.client_id, opts.client_secret, token_endpoint_auth_method=secret_method(offer),
                scope=opts.scope, issuer=issuer)
    provider.forced_scope = opts.scope
    check, step_up = await _obtain_and_check(provider, storage, url, opts, first)
    storage.client_info = provider.context.client_info
    result = _finish(url, provider, storage, "client_credentials", "pre-registered", found, check, step_up)
    result.record.client.pop("client_secret", None)  # the user's secret stays in their environment
    return result


async def _cross_app_access(url: str, opts: LoginOptions, found: Diagnosis, first: Contact) -> LoginResult:
    """Enterprise-managed authorization: the user's ID token is exchanged at the enterprise IdP for
    an ID-JAG (RFC 8693 token exchange, audience the MCP authorization server, resource the MCP
    server); the SDK's IdentityAssertionOAuthProvider presents it there in the jwt-bearer grant
    (RFC 7523). The SDK takes the authorization server as configuration: --issuer, else the first
    one the server's protected resource metadata names (the IdP issues an ID-JAG only for an audience
    it trusts, so a server naming another one gets nothing)."""
    from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider

    assert opts.client_id and opts.client_secret and opts.idp_token_endpoint and opts.id_token
    discovery = found.discovery
    issuer = opts.issuer or (discovery.issuer if discovery is not None and discovery.prm is not None else None)
    if not issuer:
        raise LoginFailed("cross-app access needs the authorization server: the server publishes no protected "
                          "resource metadata naming one; give --issuer", diagnosis=found)

    async def exchange(audience: str, resource: str) -> str:
        form = {"grant_type": TOKEN_EXCHANGE, "requested_token_type": ID_JAG, "subject_token": opts.id_token or "",
                "subject_token_type": ID_TOKEN, "audience": audience, "resource": resource}
        if opts.scope:
            form["scope"] = opts.scope
        client = {"client_id": opts.idp_client_id,
                  "token_endpoint_auth_method": "client_secret_basic" if opts.idp_client_secret else "none"}
        try:
            data = await token_request(opts.idp_token_endpoint or "", form, client,
                                       client_secret=opts.idp_client_secret, timeout=opts.timeout,
                                       insecure=opts.insecure, consent=opts)
        except LoginFailed as exc:
            raise LoginFailed(f"the identity provider refused the token exchange: {exc.message}",
                              diagnosis=found) from None
        if data.get("issued_token_type") != ID_JAG:
            raise LoginFailed(f"the identity provider issued {data.get('issued_token_type')!r}, not an ID-JAG",
                              diagnosis=found)
        return str(data["access_token"])

    method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_post"
    if discovery is not None and discovery.asm and discovery.issuer == issuer:
        method = secret_method(supports(discovery.asm))
    storage = _Storage()
    provider = IdentityAssertionOAuthProvider(url, storage, opts.client_id, opts.client_secret, issuer,
                                              exchange, scope=opts.scope, token_endpoint_auth_method=method)
    check, step_up = await _obtain_and_check(provider, storage, url, opts, first)
    tokens = storage.tokens
    now = time.time()
    record = TokenRecord(
        server_url=url, access_token=tokens.access_token, refresh_token=tokens.refresh_token,
        expires_at=expiry(now, tokens.expires_in)[0], scope=tokens.scope,
        grant="cross_app_access",
        # The provider keeps the token endpoint it found at the configured issuer, and nowhere public.
        token_endpoint=getattr(provider, "_token_endpoint", None), issuer=issuer,
        resource=canonical_resource(url),
        client={"registration": "pre-registered", "client_id": opts.client_id, "token_endpoint_auth_method": method},
        obtained_at=now)
    return LoginResult(record, flow="cross_app_access", registration="pre-registered", step_up=step_up,
                       diagnosis=found, checked=check.answered)
