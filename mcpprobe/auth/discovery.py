"""Where a protected MCP server says its authorization server is, and what that server supports.

The order is the MCP specification's (2025-11-25, "Authorization Server Discovery"):

- protected resource metadata (RFC 9728): the `resource_metadata` URL of the `WWW-Authenticate`
  challenge when there is one, then the path-aware well-known URI
  (`/.well-known/oauth-protected-resource/<path>`), then the root one;
- authorization server metadata, for an issuer with a path `/p`: RFC 8414 path insertion
  (`/.well-known/oauth-authorization-server/p`), OpenID Connect path insertion
  (`/.well-known/openid-configuration/p`), OpenID Connect path appending
  (`/p/.well-known/openid-configuration`); for an issuer without a path: RFC 8414, then OpenID
  Connect. Without protected resource metadata, the 2025-03-26 fallback: the same documents at
  the MCP server's origin.

Every fetch carries no credentials at all (not the user's headers, not a token), follows a
redirect only within its own origin, reads at most `MAX_BODY` bytes, and stays within the
caller's deadline. Each attempt is recorded with what it answered.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, TypeGuard
from urllib.parse import urljoin, urlsplit, urlunsplit

from mcpprobe.wire.challenge import Challenge, bearer, parse_www_authenticate

MAX_BODY = 256 * 1024
MAX_REDIRECTS = 3
METADATA_PROTOCOL_VERSION = "2025-11-25"


@dataclass
class Attempt:
    url: str
    source: str  # why this URL was tried, e.g. "path-aware well-known (RFC 9728)"
    status: int | None = None
    result: str = "unreachable"  # ok | not-found | http-error | redirect | malformed | unreachable | timeout
    note: str = ""
    content_type: str = ""
    ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "source": self.source, "status": self.status, "result": self.result,
                "note": self.note, "contentType": self.content_type or None, "ms": round(self.ms, 1)}

    def describe(self) -> str:
        answer = f"HTTP {self.status}" if self.status is not None else self.result
        return f"{self.url} ({self.source}): {answer}" + (f", {self.note}" if self.note else "")


@dataclass
class Discovery:
    server_url: str
    status: int | None = None
    www_authenticate: str = ""
    challenges: list[Challenge] = field(default_factory=list)
    prm: dict[str, Any] | None = None
    prm_url: str | None = None
    prm_attempts: list[Attempt] = field(default_factory=list)
    issuer: str | None = None  # the authorization server chosen (first of authorization_servers)
    legacy: bool = False  # no protected resource metadata: the 2025-03-26 origin fallback
    asm: dict[str, Any] | None = None
    asm_url: str | None = None
    asm_attempts: list[Attempt] = field(default_factory=list)
    timed_out: bool = False

    @property
    def bearer(self) -> Challenge | None:
        return bearer(self.challenges)

    def chosen_scope(self) -> str | None:
        """The MCP scope selection strategy: the challenge's scope, else PRM scopes_supported."""
        challenge = self.bearer
        if challenge is not None and challenge.get("scope"):
            return challenge.get("scope")
        supported = (self.prm or {}).get("scopes_supported")
        if isinstance(supported, list) and supported and all(isinstance(s, str) for s in supported):
            return " ".join(supported)
        return None


def canonical_resource(url: str) -> str:
    """The server URL as an RFC 8707 resource: lower-case scheme and host, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def resource_matches(server_url: str, resource: str) -> bool:
    """Whether the metadata's `resource` identifies this server: the same origin, and its path
    equal to or a parent of the server's path (how the SDK checks it before using the metadata)."""
    want, have = urlsplit(canonical_resource(server_url)), urlsplit(canonical_resource(resource))
    if (want.scheme, want.netloc) != (have.scheme, have.netloc):
        return False
    want_path, have_path = want.path.rstrip("/") + "/", have.path.rstrip("/") + "/"
    return want_path.startswith(have_path)


def issuers_match(a: str, b: str) -> bool:
    """RFC 8414 3.3: simple string comparison; a root issuer with and without its '/' are equal."""
    return a.rstrip("/") == b.rstrip("/") if urlsplit(a).path in ("", "/") else a == b


CHALLENGE_SOURCE = "resource_metadata in WWW-Authenticate"


def challenge_url_problem(resource_metadata: str | None) -> str | None:
    """Why the challenge's `resource_metadata` is not a URL that can be fetched (None when it is, or
    when there is none). RFC 9728 section 5.1 makes it "the URL of the protected resource metadata":
    an absolute URL. A relative reference ("/.well-known/...", "metadata") is not one, and clients
    do not resolve it (the SDKs take the value as the URL), so it is reported, never quietly joined
    to the server's URL."""
    if resource_metadata is None:
        return None
    if not resource_metadata.strip():
        return "it is empty"
    from mcpprobe.safety.peer import url_problem

    try:
        parts = urlsplit(resource_metadata)
    except ValueError:
        parts = None
    if parts is not None and not parts.scheme and not resource_metadata.startswith("//"):
        return "it is a relative reference, not an absolute URL"
    return url_problem(resource_metadata)


def prm_candidates(server_url: str, resource_metadata: str | None) -> list[tuple[str, str]]:
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    out: list[tuple[str, str]] = []
    if resource_metadata is not None and resource_metadata.strip():
        # As given: a value that is no usable URL is refused by discover with why (challenge_url_problem).
        out.append((resource_metadata, CHALLENGE_SOURCE))
    if parts.path and parts.path != "/":
        out.append((f"{origin}/.well-known/oauth-protected-resource{parts.path}", "path-aware well-known (RFC 9728)"))
    out.append((f"{origin}/.well-known/oauth-protected-resource", "root well-known (RFC 9728)"))
    seen: set[str] = set()
    return [(u, s) for u, s in out if not (u in seen or seen.add(u))]  # type: ignore[func-returns-value]


def asm_candidates(issuer: str) -> list[tuple[str, str]]:
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if path:
        return [
            (f"{origin}/.well-known/oauth-authorization-server{path}", "RFC 8414 path insertion"),
            (f"{origin}/.well-known/openid-configuration{path}", "OpenID Connect path insertion"),
            (f"{origin}{path}/.well-known/openid-configuration", "OpenID Connect path appending"),
        ]
    return [
        (f"{origin}/.well-known/oauth-authorization-server", "RFC 8414"),
        (f"{origin}/.well-known/openid-configuration", "OpenID Connect discovery"),
    ]


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc.lower()


def _http_url(value: Any) -> TypeGuard[str]:
    """An http(s) URL that can be requested: one that does not parse (`http://[::1]]:1/`) or holds a
    control character makes its document malformed, never an error of the HTTP client later."""
    from mcpprobe.safety.peer import url_problem

    return isinstance(value, str) and url_problem(value) is None


def _unusable(url: str, source: str) -> Attempt | None:
    """The attempt that a URL a peer named cannot be: refused before any request, with why."""
    from mcpprobe.safety.peer import url_problem

    problem = challenge_url_problem(url) if source == CHALLENGE_SOURCE else url_problem(url)
    if problem is None:
        return None
    attempt = Attempt(url, source)
    attempt.result, attempt.note = "malformed", f"not a usable URL: {problem}"
    return attempt


async def fetch_json(client: Any, url: str, source: str, deadline: float) -> tuple[Attempt, Any]:
    """GET one metadata document, without credentials; (attempt, parsed JSON or None)."""
    import httpx2 as httpx

    from mcpprobe.wire.exchange import BodyTooLarge, DeadlinePassed, exchange

    attempt = Attempt(url, source)
    started = time.perf_counter()
    current = url
    try:
        for _ in range(MAX_REDIRECTS + 1):
            if deadline - time.monotonic() <= 0:
                attempt.result, attempt.note = "timeout", "no time left for this request"
                return attempt, None
            # Each hop whole by the discovery's deadline, its body within MAX_BODY (wire/exchange.py).
            response = await exchange(client, client.build_request("GET", current, headers={
                "Accept": "application/json", "MCP-Protocol-Version": METADATA_PROTOCOL_VERSION}),
                deadline=deadline, limit=MAX_BODY)
            attempt.status = response.status_code
            attempt.content_type = response.headers.get("content-type", "")
            if 300 <= response.status_code < 400:
                location = urljoin(current, response.headers.get("location", ""))
                refused = _unusable(location, source) if response.headers.get("location") else None
                if refused is not None:
                    attempt.result, attempt.note = "redirect", f"redirect {refused.note}, not followed"
                    return attempt, None
                if response.headers.get("location") and _origin(location) == _origin(current):
                    current = location
                    attempt.note = f"redirected to {location}"
                    continue
                attempt.result = "redirect"
                attempt.note = f"redirect to {location or '(no Location)'} on another origin, not followed"
                return attempt, None
            body = response.content
            break
        else:
            attempt.result, attempt.note = "redirect", f"more than {MAX_REDIRECTS} redirects"
            return attempt, None
    except DeadlinePassed:
        attempt.result, attempt.note = "timeout", "no answer in time"
        return attempt, None
    except BodyTooLarge:
        attempt.result, attempt.note = "malformed", f"larger than {MAX_BODY} bytes"
        return attempt, None
    except httpx.HTTPError as exc:
        attempt.result, attempt.note = "unreachable", (str(exc) or type(exc).__name__).splitlines()[0][:200]
        return attempt, None
    finally:
        attempt.ms = (time.perf_counter() - started) * 1000
    status = attempt.status or 0
    if status == 404 or status == 410:
        attempt.result = "not-found"
        return attempt, None
    if status != 200:
        attempt.result = "http-error"
        snippet = bytes(body[:120]).decode("utf-8", "replace").strip()
        attempt.note = f"body starts {snippet!r}" if snippet else ""
        return attempt, None
    try:
        data = json.loads(bytes(body).decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        attempt.result = "malformed"
        snippet = bytes(body[:80]).decode("utf-8", "replace").strip()
        attempt.note = f"not JSON ({attempt.content_type or 'no content type'}): {snippet!r}"
        return attempt, None
    attempt.result = "ok"
    return attempt, data


def prm_problems(doc: Any) -> list[str]:
    if not isinstance(doc, dict):
        return ["the document is not a JSON object"]
    problems = []
    if not _http_url(doc.get("resource")):
        problems.append("'resource' (REQUIRED, RFC 9728 2) is missing or not an http(s) URL")
    servers = doc.get("authorization_servers")
    if not isinstance(servers, list) or not servers:
        problems.append("'authorization_servers' is missing or empty (MCP requires at least one)")
    elif not all(_http_url(s) for s in servers):
        problems.append("'authorization_servers' holds something that is not an http(s) URL")
    scopes = doc.get("scopes_supported")
    if scopes is not None and not (isinstance(scopes, list) and all(isinstance(s, str) for s in scopes)):
        problems.append("'scopes_supported' is not a list of strings")
    return problems


def asm_problems(doc: Any, expected_issuer: str | None) -> list[str]:
    if not isinstance(doc, dict):
        return ["the document is not a JSON object"]
    problems = []
    issuer = doc.get("issuer")
    if not _http_url(issuer):
        problems.append("'issuer' (REQUIRED, RFC 8414 2) is missing or not an http(s) URL")
    elif expected_issuer and not issuers_match(issuer, expected_issuer):
        problems.append(f"'issuer' is {issuer!r}, not the issuer it was discovered for ({expected_issuer!r}); "
                        "clients must reject it (RFC 8414 3.3)")
    if not _http_url(doc.get("token_endpoint")):
        problems.append("'token_endpoint' is missing or not an http(s) URL")
    grants = grant_types(doc)
    if "authorization_code" in grants and not _http_url(doc.get("authorization_endpoint")):
        problems.append("'authorization_endpoint' is missing or not an http(s) URL")
    for key in ("grant_types_supported", "code_challenge_methods_supported", "scopes_supported",
                "token_endpoint_auth_methods_supported", "response_types_supported"):
        value = doc.get(key)
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            problems.append(f"'{key}' is not a list of strings")
    if doc.get("registration_endpoint") is not None and not _http_url(doc.get("registration_endpoint")):
        problems.append("'registration_endpoint' is not an http(s) URL")
    return problems


def grant_types(doc: dict[str, Any]) -> list[str]:
    value = doc.get("grant_types_supported")
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return ["authorization_code", "implicit"]  # RFC 8414 2: the default when omitted


def supports(doc: dict[str, Any]) -> dict[str, Any]:
    """What an authorization server offers, with RFC 8414's defaults applied where a key is absent."""
    methods = doc.get("code_challenge_methods_supported")
    auth_methods = doc.get("token_endpoint_auth_methods_supported")
    return {
        "issuer": doc.get("issuer"),
        "authorizationEndpoint": doc.get("authorization_endpoint"),
        "tokenEndpoint": doc.get("token_endpoint"),
        "grantTypes": grant_types(doc),
        "grantTypesDeclared": isinstance(doc.get("grant_types_supported"), list),
        "pkceMethods": methods if isinstance(methods, list) else None,
        "pkceS256": isinstance(methods, list) and "S256" in methods,
        "registration": {
            "clientIdMetadataDocument": doc.get("client_id_metadata_document_supported") is True,
            "dynamic": _http_url(doc.get("registration_endpoint")),
            "registrationEndpoint": doc.get("registration_endpoint"),
            "preRegistration": True,
        },
        "tokenEndpointAuthMethods": auth_methods if isinstance(auth_methods, list) else ["client_secret_basic"],
        "tokenEndpointAuthMethodsDeclared": isinstance(auth_methods, list),
        "scopes": doc.get("scopes_supported") if isinstance(doc.get("scopes_supported"), list) else None,
    }


def default_metadata(origin: str) -> dict[str, Any]:
    """What the 2025-03-26 revision lets a client assume of a server without authorization server
    metadata: the default endpoints at its origin (the SDK uses the same ones)."""
    return {"issuer": origin, "authorization_endpoint": f"{origin}/authorize", "token_endpoint": f"{origin}/token",
            "registration_endpoint": f"{origin}/register", "code_challenge_methods_supported": ["S256"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"]}


async def discover(server_url: str, *, status: int | None = None, www_authenticate: str = "",
                   timeout: float = 10.0, insecure: bool = False) -> Discovery:
    """Protected resource metadata, then authorization server metadata, within `timeout` seconds."""
    import anyio
    import httpx2 as httpx

    found = Discovery(server_url, status=status, www_authenticate=www_authenticate or "",
                      challenges=parse_www_authenticate(www_authenticate or ""))
    deadline = time.monotonic() + timeout
    per_request = httpx.Timeout(min(timeout, 5.0))
    # A client of its own: no default headers, no cookies from the MCP connection, no auth.
    async with httpx.AsyncClient(timeout=per_request, follow_redirects=False, verify=not insecure,
                                 trust_env=True) as client:
        with anyio.move_on_after(timeout) as scope:
            challenge = found.bearer
            for url, source in prm_candidates(server_url, challenge.get("resource_metadata") if challenge else None):
                refused = _unusable(url, source)
                attempt, doc = (refused, None) if refused else await fetch_json(client, url, source, deadline)
                found.prm_attempts.append(attempt)
                if doc is None:
                    continue
                problems = prm_problems(doc)
                if problems:
                    attempt.result, attempt.note = "malformed", "; ".join(problems)
                    continue
                found.prm, found.prm_url = doc, url
                found.issuer = doc["authorization_servers"][0]
                break
            if found.issuer is None:
                parts = urlsplit(server_url)
                found.legacy = True
                found.issuer = f"{parts.scheme}://{parts.netloc}"
            for url, source in asm_candidates(found.issuer):
                if found.legacy:
                    source += ", 2025-03-26 fallback at the server's origin"
                refused = _unusable(url, source)
                attempt, doc = (refused, None) if refused else await fetch_json(client, url, source, deadline)
                found.asm_attempts.append(attempt)
                if doc is None:
                    if attempt.result in ("not-found", "redirect", "malformed") or (
                            attempt.status is not None and 400 <= attempt.status < 500):
                        continue
                    break  # a server error or no connection: the next URL is on the same server
                problems = asm_problems(doc, None if found.legacy else found.issuer)
                if problems:
                    attempt.result, attempt.note = "malformed", "; ".join(problems)
                    continue
                found.asm, found.asm_url = doc, url
                break
        found.timed_out = scope.cancelled_caught
    return found


async def authorization_servers(server_url: str, *, www_authenticate: str = "", timeout: float = 10.0,
                                insecure: bool = False) -> list[str] | None:
    """The `authorization_servers` the server's protected resource metadata names now (found as
    `discover` finds it: the challenge's `resource_metadata`, then the well-known URIs); None when
    there is no usable document. What a 401 to a stored token is checked against: a server that
    names another authorization server than the token's has moved (MCP 2026-07-28, "Authorization
    Server Binding")."""
    import anyio
    import httpx2 as httpx

    challenge = bearer(parse_www_authenticate(www_authenticate or ""))
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient(timeout=httpx.Timeout(min(timeout, 5.0)), follow_redirects=False,
                                 verify=not insecure, trust_env=True) as client:
        with anyio.move_on_after(timeout):
            for url, source in prm_candidates(server_url, challenge.get("resource_metadata") if challenge else None):
                if _unusable(url, source) is not None:
                    continue
                _, doc = await fetch_json(client, url, source, deadline)
                if doc is not None and not prm_problems(doc) and resource_matches(server_url, doc["resource"]):
                    return list(doc["authorization_servers"])
    return None


def moved_from(issuer: str | None, servers: list[str] | None) -> str | None:
    """The authorization server a server now names instead of `issuer` (the first it names), or None
    when it still names `issuer`, or either is unknown."""
    if not issuer or not servers or any(issuers_match(issuer, s) for s in servers):
        return None
    return servers[0]
