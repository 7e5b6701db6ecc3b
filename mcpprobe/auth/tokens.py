"""The token endpoint without the SDK: refresh, a new client-credentials grant for a stored record,
RFC 7523 client assertions, the client's authentication at the endpoint, and RFC 7009 revocation.

A stored record knows its token endpoint, so renewing its token needs no discovery and no SDK:
`refresh` (RFC 6749 6, with the record's resource, RFC 8707) and `client_credentials_again` (the
grant has no refresh token) POST to it with `token_request`, a DPoP proof of the record's key
where the token is bound (mcpprobe.auth.dpop). `LoginFailed` is what every login and renewal
raises when it gets no token the server accepts (exit 7).

Endpoints on plain http:// away from this machine (`plain_http_checked`, with `HttpConsent`):
The specification: "All authorization server endpoints **MUST** be served over HTTPS" (2025-11-25,
Authorization, Communication Security). Whatever mcpprobe would send to one - a person to its login
page, a client registration, a token request (login, refresh, renewal, a token exchange), a
revocation - carries a credential or earns one, and anyone on the way can read it. So every
request to such an endpoint goes through `plain_http_checked` first: with consent (`--allow-http-authorization`,
or consent a login stored with the token, `TokenRecord.plain_http_allowed`) it goes with a warning;
on a terminal (`consent.confirm`) the person is warned and asked, once per origin in a run; otherwise
(CI, no terminal) it is refused: LoginFailed, exit 7, before anything is sent. Loopback hosts
(localhost, 127.0.0.0/8, ::1) never leave the machine and need nothing. Metadata documents (GET,
nothing secret in them) are not asked about: the diagnosis reads them for every command.

The question is put before the deadline of the exchange it is about starts: every caller checks
first, then computes its deadline (`auth logout` asks for every record before its one budget
starts), so the time a person takes to answer is never counted as the authorization server's. A
renewal during a session happens inside a timed request: it is never asked about, and goes where
the login's stored consent or the option allows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from mcpprobe.auth.diagnosis import Diagnosis
from mcpprobe.auth.store import TokenRecord
from mcpprobe.errors import AuthFailed


class LoginFailed(AuthFailed):
    """Login did not produce a token the server accepts (exit 7), with the diagnosis when there is one."""

    code = "auth-required"

    def __init__(self, message: str, *, diagnosis: Diagnosis | None = None, detail: dict[str, Any] | None = None):
        super().__init__(message, detail=detail)
        self.diagnosis = diagnosis


class PlainHttpRefused(LoginFailed):
    """mcpprobe's own refusal to send to a plain-http authorization server endpoint (nothing sent):
    a renewal that meets it says so on stderr, since no answer of the server's can explain it."""


def key_algorithm(pem: str) -> str:
    """The JWS algorithm for a PEM private key: RS256 for RSA, ES256/ES384/ES512 for the EC curves,
    EdDSA for Ed25519."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    from mcpprobe.errors import UsageProblem

    try:
        key = load_pem_private_key(pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        raise UsageProblem(f"the client key is not a usable PEM private key ({exc})") from None
    if isinstance(key, rsa.RSAPrivateKey):
        return "RS256"
    if isinstance(key, ed25519.Ed25519PrivateKey):
        return "EdDSA"
    if isinstance(key, ec.EllipticCurvePrivateKey):
        curves = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
        if key.curve.name in curves:
            return curves[key.curve.name]
    raise UsageProblem("the client key must be RSA, EC (P-256, P-384, P-521) or Ed25519")


def client_assertion(pem: str, client_id: str, audience: str) -> str:
    """An RFC 7523 client assertion: iss and sub the client, aud the authorization server's issuer."""
    import uuid

    import jwt

    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": now, "exp": now + 300,
              "jti": str(uuid.uuid4())}
    return jwt.encode(claims, pem, algorithm=key_algorithm(pem))


def client_authentication(form: dict[str, str], client: dict[str, Any], client_secret: str | None = None,
                          *, assertion: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """The form and headers of a request to the token (or revocation) endpoint, with the client's
    authentication method: HTTP Basic, the secret in the form, a signed JWT, or the client ID alone."""
    import base64
    from urllib.parse import quote

    form = dict(form)
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    client_id = client.get("client_id") or ""
    if assertion is not None:
        form["client_assertion_type"] = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        form["client_assertion"] = assertion
        return form, headers
    secret = client_secret or client.get("client_secret")
    method = client.get("token_endpoint_auth_method") or ("client_secret_basic" if secret else "none")
    if secret and method == "client_secret_basic":
        pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
    else:
        if client_id:  # a grant whose assertion is the credential may name no client at all
            form["client_id"] = client_id
        if secret and method == "client_secret_post":
            form["client_secret"] = secret
    return form, headers


def secret_method(offer: dict[str, Any]) -> Literal["client_secret_basic", "client_secret_post"]:
    """How to send a client secret to the token endpoint: HTTP Basic where offered (RFC 6749's
    default), else in the form."""
    methods = offer["tokenEndpointAuthMethods"]
    return "client_secret_post" if "client_secret_basic" not in methods and "client_secret_post" in methods \
        else "client_secret_basic"


async def revoke(record: TokenRecord, *, client_secret: str | None = None, timeout: float = 30.0,
                 insecure: bool = False, consent: Any = None, deadline: float | None = None) -> list[str]:
    """Revoke the record's tokens where its authorization server offers RFC 7009 revocation: the
    refresh token first (which ends the grant at most servers), then the access token. Returns which
    were revoked; LoginFailed when the server refuses, or when the endpoint is on plain http:// away
    from this machine without `consent` (`plain_http_checked`; by default what the record's login
    allowed). Both exchanges whole by `deadline` (monotonic; default `timeout` from now, after the
    consent; a caller that gives `deadline` has settled the consent before starting it)."""
    import httpx2 as httpx

    from mcpprobe.wire.exchange import deadline_in, exchange

    endpoint = record.revocation_endpoint
    if not endpoint:
        return []
    plain_http_checked(endpoint, consent if consent is not None else HttpConsent.of_record(record),
                       "revocation endpoint")
    done = []
    if deadline is None:
        deadline = deadline_in(timeout)
    async with httpx.AsyncClient(timeout=timeout, verify=not insecure, follow_redirects=False) as http:
        for hint, value in (("refresh_token", record.refresh_token), ("access_token", record.access_token)):
            if not value:
                continue
            form, headers = client_authentication({"token": value, "token_type_hint": hint}, record.client,
                                                  client_secret)
            try:
                # Every exchange whole by the one deadline, its answer within the cap (wire/exchange.py).
                response = await exchange(http, http.build_request("POST", endpoint, data=form, headers=headers),
                                          deadline=deadline)
            except httpx.HTTPError as exc:
                raise LoginFailed(f"revocation endpoint {endpoint}: {str(exc) or type(exc).__name__}") from None
            if response.status_code != 200:  # RFC 7009 2.2: 200 even for a token it does not know
                raise LoginFailed(f"revocation endpoint {endpoint} answered HTTP {response.status_code}")
            done.append(hint)
    return done


async def token_request(token_endpoint: str, form: dict[str, str], client: dict[str, Any], *,
                        client_secret: str | None = None, timeout: float = 30.0,
                        insecure: bool = False, assertion: str | None = None,
                        dpop_key: str | None = None, consent: Any = None) -> dict[str, Any]:
    """POST to a token endpoint with the client's authentication method; the JSON answer or LoginFailed.
    Every token request mcpprobe sends itself leaves here: an endpoint on plain http:// away from this
    machine only with `consent` (`plain_http_checked`; None: none, refused)."""
    import httpx2 as httpx

    from mcpprobe.wire.exchange import deadline_in, exchange

    plain_http_checked(token_endpoint, consent if consent is not None else HttpConsent(), "token endpoint")
    form, headers = client_authentication(form, client, client_secret, assertion=assertion)
    # One deadline for the whole request, its DPoP nonce retry included; the answer within the cap
    # (wire/exchange.py): a token endpoint that trickles or never ends gets `timeout` and no more.
    deadline = deadline_in(timeout)
    async with httpx.AsyncClient(timeout=timeout, verify=not insecure, follow_redirects=False) as http:
        nonce = None
        for _ in range(2):  # DPoP: a nonce the server asks for gets one more try
            if dpop_key:
                from mcpprobe.auth.dpop import DPoPKey

                headers["DPoP"] = DPoPKey(dpop_key).proof("POST", token_endpoint, nonce=nonce)
            try:
                response = await exchange(http, http.build_request("POST", token_endpoint, data=form, headers=headers),
                                          deadline=deadline)
            except httpx.HTTPError as exc:
                raise LoginFailed(f"token endpoint {token_endpoint}: {str(exc) or type(exc).__name__}") from None
            from mcpprobe.auth.dpop import wants_nonce

            asked = wants_nonce(response) if dpop_key else None
            if not asked or nonce is not None:
                break
            nonce = asked
    try:
        data = response.json()
    except ValueError:
        data = None
    if response.status_code != 200 or not isinstance(data, dict) or not isinstance(data.get("access_token"), str):
        error = data.get("error") if isinstance(data, dict) else None
        said = data.get("error_description") if isinstance(data, dict) else None
        # RFC 6749 5.2: text for the developer. Whole or not at all: it may echo a secret, which the
        # output masks only whole.
        said = said if isinstance(said, str) and said.strip() and len(said) <= 4096 else None
        raise LoginFailed(f"token endpoint {token_endpoint} answered HTTP {response.status_code}"
                          + (f" {error}" if error else "") + (f" ({said})" if said else ""),
                          detail={"status": response.status_code, "error": error, "errorDescription": said})
    return accepted(token_endpoint, data)


def accepted(source: str, data: dict[str, Any]) -> dict[str, Any]:
    """A token answer whose access token can be sent in a header (LoginFailed otherwise, before it is
    stored or sent, in words that never quote it); every token in it is masked from now on."""
    from mcpprobe.safety import redact
    from mcpprobe.safety.peer import token_problem

    for name in ("access_token", "refresh_token", "id_token"):
        value = data.get(name)
        if isinstance(value, str) and value:
            redact.active().learn(value)
    problem = token_problem(data.get("access_token"))
    if problem is not None:
        raise LoginFailed(f"{source} issued an access token that cannot be used: {problem}; it was not stored",
                          detail={"error": "unusable-token"})
    return data


# The longest token lifetime taken as given: ten years. An `expires_in` past it, negative, not finite
# (`1e999` reads as infinity, `NaN` as NaN) or not a number says nothing usable: the token is kept
# with no known expiry (renewed when the server refuses it), and the problem is noted.
MAX_EXPIRES_IN = 10 * 365 * 24 * 3600.0


def expiry(now: float, expires_in: Any) -> tuple[float | None, str]:
    """The absolute expiry of a token from an answer's `expires_in` (RFC 6749 5.1: seconds), and a
    note when the value was there but unusable. Never NaN or infinity (nothing non-finite is stored)."""
    from mcpprobe.safety.numbers import in_range, shown

    if expires_in is None:
        return None, ""
    seconds_left = in_range(expires_in, 0, MAX_EXPIRES_IN)
    if seconds_left is None:
        return None, (f"the authorization server's expires_in ({shown(expires_in)}) is not a number of seconds "
                      f"between 0 and {MAX_EXPIRES_IN:.0f}; the token is kept with no known expiry")
    return now + seconds_left, ""


def _update(record: TokenRecord, data: dict[str, Any]) -> TokenRecord:
    now = time.time()
    record.access_token = data["access_token"]
    record.refresh_token = data.get("refresh_token") or record.refresh_token
    record.expires_at, record.problem = expiry(now, data.get("expires_in"))
    record.scope = data.get("scope") or record.scope
    record.obtained_at = now
    return record


async def refresh(record: TokenRecord, *, timeout: float = 30.0, insecure: bool = False,
                  client_secret: str | None = None, consent: HttpConsent | None = None) -> TokenRecord:
    """A new access token from the record's refresh token (RFC 6749 6), with its resource (RFC 8707).
    A token endpoint on plain http:// away from this machine only with `consent` (default: where the
    record's login allowed it)."""
    if not record.refreshable():
        raise LoginFailed(f"the stored token for {record.server_url} has expired and cannot be refreshed; "
                          f"log in again: mcpprobe auth login {record.server_url}")
    form = {"grant_type": "refresh_token", "refresh_token": record.refresh_token or ""}
    if record.resource:
        form["resource"] = record.resource
    data = await token_request(record.token_endpoint or "", form, record.client, client_secret=client_secret,
                               timeout=timeout, insecure=insecure, dpop_key=record.dpop_key,
                               consent=consent if consent is not None else HttpConsent.of_record(record))
    return _update(record, data)


async def client_credentials_again(record: TokenRecord, client_secret: str | None, *, timeout: float = 30.0,
                                   insecure: bool = False, client_key: str | None = None,
                                   consent: HttpConsent | None = None) -> TokenRecord:
    """A fresh client-credentials token for a stored record (no refresh tokens in that grant), with
    the client's secret or, for private_key_jwt, a new assertion signed with its key. A plain-http
    token endpoint as `refresh` has it."""
    form = {"grant_type": "client_credentials"}
    if record.resource:
        form["resource"] = record.resource
    if record.scope:
        form["scope"] = record.scope
    assertion = None
    if client_key:
        assertion = client_assertion(client_key, record.client.get("client_id") or "",
                                     record.issuer or record.token_endpoint or "")
    data = await token_request(record.token_endpoint or "", form, record.client, client_secret=client_secret,
                               timeout=timeout, insecure=insecure, assertion=assertion, dpop_key=record.dpop_key,
                               consent=consent if consent is not None else HttpConsent.of_record(record))
    return _update(record, data)


# ----- endpoints on plain http:// away from this machine -----


def _say(text: str) -> None:
    from mcpprobe.safety.notice import say

    say(text, multiline=True)


@dataclass
class HttpConsent:
    """Consent outside a login: a renewal (what its record allowed at login) or a logout."""

    allow_http_authorization: bool = False
    confirm: Callable[[str], bool] | None = None
    http_allowed: set[str] = field(default_factory=set)  # allowed in this run (asked, or by the option)
    remembered: set[str] = field(default_factory=set)  # allowed when the token was obtained (its record)
    announce: Callable[[str], None] = field(default=_say)
    # Why nobody was asked, for the refusal (`plain_http_checked`): no terminal, or a renewal inside a
    # timed request, which never asks even on one.
    unasked: str = "with no terminal to ask"

    @classmethod
    def of_record(cls, record: Any, **kwargs: Any) -> HttpConsent:
        """A stored token's renewal or revocation: the origins the person allowed when logging in,
        and no others unless `kwargs` (the option, a terminal to ask) allow them."""
        return cls(remembered=set(getattr(record, "plain_http_allowed", None) or ()), **kwargs)


def plain_origin(url: str) -> str | None:
    """`http://host[:port]` of a plain-http URL whose host is not this machine; None otherwise."""
    from urllib.parse import urlsplit

    from mcpprobe.safety.peer import is_loopback_host

    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None  # not a URL at all: the request itself fails, with its own message
    if parts.scheme.lower() != "http" or is_loopback_host(host):
        return None
    return f"http://{parts.netloc}"


def plain_http_checked(url: str, consent: Any, endpoint: str) -> None:
    """Let a request to `url`, the authorization server's `endpoint` ("authorization endpoint",
    "token endpoint", "registration endpoint", "revocation endpoint"), go ahead, or raise
    LoginFailed (exit 7). An origin allowed once in a run is not asked about again."""
    where = plain_origin(url)
    if where is None or where in consent.http_allowed:
        return
    if endpoint == "authorization endpoint":
        warning = (f"warning: the authorization server's login page is on plain HTTP ({where}), not HTTPS: "
                   "what is typed there can be read on the way (the MCP specification requires HTTPS)")
    else:
        warning = (f"warning: the authorization server's {endpoint} is on plain HTTP ({where}), not HTTPS: "
                   "what is sent there can be read on the way (the MCP specification requires HTTPS)")
    if where in getattr(consent, "remembered", ()):
        consent.announce(warning + " - allowed when this token was obtained")
        consent.http_allowed.add(where)
        return
    if consent.allow_http_authorization:
        consent.announce(warning + " - allowed by --allow-http-authorization")
        consent.http_allowed.add(where)
        return
    if consent.confirm is not None:
        consent.announce(warning)
        if consent.confirm("Open it all the same?" if endpoint == "authorization endpoint" else "Go on all the same?"):
            consent.http_allowed.add(where)
            return
        raise PlainHttpRefused(f"login refused: the {endpoint} {where} is not HTTPS")
    raise PlainHttpRefused(f"login refused: the {endpoint} {where} is plain HTTP, not HTTPS (the MCP specification "
                      f"requires HTTPS); {getattr(consent, 'unasked', 'with no terminal to ask')}, "
                      "--allow-http-authorization allows it")
