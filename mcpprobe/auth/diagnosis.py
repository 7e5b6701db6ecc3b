"""What a 401 or 403 means: the server's challenge, its metadata, and what would let a client in.

Only for a server that asked for authorization: a 401, or a 403 with a Bearer challenge. A 403 or
421 without one is no `AuthFailed` (wire/forbidden.py) and never comes here.

`diagnose` runs after an `AuthFailed` (the exit code stays 7) and returns findings plus one JSON-able
dict (`Diagnosis.data`, carried in `--json` as `error.detail.authDiagnosis`). It sends nothing the
user configured: no Authorization header, no cookie, no custom header reaches the metadata or
authorization servers (see `mcpprobe.auth.discovery`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpprobe.auth.discovery import (
    CHALLENGE_SOURCE,
    Attempt,
    Discovery,
    challenge_url_problem,
    discover,
    moved_from,
    resource_matches,
    supports,
)
from mcpprobe.findings import Finding, Severity
from mcpprobe.wire.target import HttpTarget

LOGIN_HINT = "mcpprobe auth login {url}"
TOKEN_HINT = "--bearer-env VAR, or --header 'Authorization: Bearer ...'"
# The level of the whole authorization page, in every revision that has it: "Authorization is
# **OPTIONAL** for MCP implementations. When supported: Implementations using an HTTP-based transport
# **SHOULD** conform to this specification." Its MUSTs bind a server that does the specification's
# OAuth; one protected another way (a static bearer token) meets only that SHOULD.
SHOULD_CONFORM = ("authorization is OPTIONAL in MCP, and \"Implementations using an HTTP-based transport SHOULD "
                  "conform to this specification\"")


@dataclass
class Diagnosis:
    findings: list[Finding] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    discovery: Discovery | None = None


def _header_names(headers: Mapping[str, str] | Iterable[tuple[str, str]] | None) -> set[str]:
    if headers is None:
        return set()
    items = headers.items() if isinstance(headers, Mapping) else headers
    return {name.lower() for name, _ in items}


def _tried(attempts: list[Attempt]) -> str:
    return "; ".join(a.describe() for a in attempts) or "nothing"


async def diagnose(url: str, detail: Mapping[str, Any], *,
                   headers: Mapping[str, str] | Iterable[tuple[str, str]] | None = None, timeout: float = 10.0,
                   insecure: bool = False, token_sent: bool | None = None,
                   token_issuer: str | None = None) -> Diagnosis:
    """Findings and data for an `AuthFailed` whose detail has `status` and `wwwAuthenticate`;
    `token_issuer`: the authorization server that issued the token sent, where mcpprobe knows it (a
    stored token)."""
    status = detail.get("status")
    raw = detail.get("wwwAuthenticate") or ""
    sent = token_sent if token_sent is not None else "authorization" in _header_names(headers)
    found = await discover(url, status=status if isinstance(status, int) else None, www_authenticate=raw,
                           timeout=timeout, insecure=insecure)
    return Diagnosis(findings_for(found, token_sent=sent, token_issuer=token_issuer),
                     data_for(found, token_sent=sent), found)


def data_for(found: Discovery, *, token_sent: bool) -> dict[str, Any]:
    challenge = found.bearer
    data: dict[str, Any] = {
        "status": found.status,
        "tokenSent": token_sent,
        "wwwAuthenticate": {
            "raw": found.www_authenticate or None,
            "challenges": [c.to_json() for c in found.challenges],
            "bearer": dict(challenge.params) if challenge else None,
        },
        "protectedResourceMetadata": {
            "url": found.prm_url,
            "attempts": [a.to_json() for a in found.prm_attempts],
            "document": found.prm,
            "resourceMatches": resource_matches(found.server_url, found.prm["resource"]) if found.prm else None,
        },
        "authorizationServer": {
            "issuer": found.issuer,
            "legacyFallback": found.legacy,
            "url": found.asm_url,
            "attempts": [a.to_json() for a in found.asm_attempts],
            "supports": supports(found.asm) if found.asm else None,
        },
        "scope": found.chosen_scope(),
        "timedOut": found.timed_out,
        "login": LOGIN_HINT.format(url=found.server_url),
    }
    return data


def without_oauth(found: Discovery) -> bool:
    """Whether the server shows no sign of the specification's authorization: no `resource_metadata`
    in its challenge, and neither protected resource metadata nor authorization server metadata (not
    even a malformed document) at any URI tried. Such a server is protected another way (a static
    bearer token, a key), which MCP allows: its metadata missing is no error (`SHOULD_CONFORM`)."""
    challenge = found.bearer
    if challenge is not None and challenge.get("resource_metadata") is not None:
        return False
    if found.prm is not None or found.asm is not None or found.timed_out:
        return False  # (a diagnosis that ran out of time cannot say nothing is published)
    return not any(a.result in ("ok", "malformed", "timeout") for a in (*found.prm_attempts, *found.asm_attempts))


def findings_for(found: Discovery, *, token_sent: bool, token_issuer: str | None = None) -> list[Finding]:
    out: list[Finding] = []
    url = found.server_url
    no_oauth = without_oauth(found)
    challenge = found.bearer
    params = dict(challenge.params) if challenge else {}
    error = params.get("error")
    description = params.get("error_description")
    why = f" ({description})" if description else ""

    # --- the challenge itself ---
    if challenge is None:
        other = ", ".join(c.scheme for c in found.challenges)
        if found.status == 401:
            out.append(Finding(
                "auth-no-challenge",
                "HTTP 401 without a Bearer WWW-Authenticate challenge"
                + (f" (it offers only: {other})" if other else " (no WWW-Authenticate header at all)")
                + ("; for Basic, send an Authorization header" if other.lower() == "basic" else "")
                + "; RFC 9110 requires one, and MCP clients read resource_metadata and scope from it",
                detail={"wwwAuthenticate": found.www_authenticate or None}))
    else:
        # As the header writes them (RFC 9110 auth-param, a quoted-string), not as Python would.
        shown = ", ".join(f"{k}={_quoted(v)}" for k, v in params.items()) or "no parameters"
        sent = "a bearer token was sent" if token_sent else (
            f"no credentials were sent: the server publishes no OAuth metadata, so give the token it expects "
            f"({TOKEN_HINT})" if no_oauth else
            f"no credentials were sent: log in with {LOGIN_HINT.format(url=url)}, or give a token (--bearer-env)")
        out.append(Finding(
            "auth-challenge", f"HTTP {found.status}: the server asks for {challenge.scheme} ({shown}); {sent}",
            severity=Severity.INFO, detail={"status": found.status, "scheme": challenge.scheme, "params": params,
                                            "tokenSent": token_sent}))
    # Only a token that was sent can be the wrong one: a server that says error="invalid_token" to a
    # request without credentials (RFC 6750 3.1 says it should not) is asking for one, not refusing it.
    if found.status == 401 and token_sent:
        out.append(Finding(
            "auth-invalid-token",
            f"the server rejected the bearer token{why}"
            + (f": error={error}" if error and not why else "")
            + (f"; check the token given ({TOKEN_HINT}): the server publishes no OAuth metadata, so no login "
               "can get another" if no_oauth else
               f"; it may be expired, revoked, or issued for another resource. Log in again: "
               f"{LOGIN_HINT.format(url=url)}"),
            detail={"error": error, "errorDescription": description}))
    moved = moved_from(token_issuer, found.prm["authorization_servers"]) if found.prm else None
    if found.status == 401 and token_sent and moved:
        # MCP 2026-07-28, "Authorization Server Binding": credentials are bound to the server that issued them.
        out.append(Finding(
            "auth-server-changed",
            f"the server's protected resource metadata names the authorization server {moved}, not {token_issuer}, "
            "which issued the token sent: credentials are bound to the authorization server that issued them, "
            f"so register and log in with the new one: {LOGIN_HINT.format(url=url)}",
            detail={"issuer": token_issuer, "newIssuer": moved,
                    "authorizationServers": found.prm["authorization_servers"] if found.prm else None}))
    if found.status == 403 and error == "insufficient_scope":
        needed = params.get("scope")
        out.append(Finding(
            "auth-insufficient-scope",
            f"HTTP 403 insufficient_scope{why}: the token lacks a scope the server needs"
            + (f"; it names {needed!r}. Step up with: {LOGIN_HINT.format(url=url)} --scope {needed!r}" if needed
               else "; it names no scope"),
            detail={"scope": needed, "errorDescription": description}))

    # --- protected resource metadata ---
    advertised = challenge.get("resource_metadata") if challenge else None
    not_a_url = challenge_url_problem(advertised)
    if not_a_url is not None:
        where = f"it was found at {found.prm_url} instead" if found.prm is not None else "it was not found there either"
        out.append(Finding(
            "auth-challenge-url-invalid",
            f"the challenge's resource_metadata {_quoted(advertised or '')} is not a URL ({not_a_url}); RFC 9728 "
            f"(section 5.1) makes it the URL of the protected resource metadata, and MCP clients take it as given. "
            f"Discovery went on at the well-known URIs: {where}",
            severity=Severity.WARNING,
            detail={"resourceMetadata": advertised, "problem": not_a_url, "foundAt": found.prm_url}))
    if found.prm is not None:
        prm = found.prm
        matches = resource_matches(url, prm["resource"])
        out.append(Finding(
            "auth-resource-metadata",
            f"protected resource metadata at {found.prm_url}: resource {prm['resource']}, authorization "
            f"server(s) {', '.join(prm['authorization_servers'])}"
            + (f", scopes {' '.join(prm['scopes_supported'])}" if prm.get("scopes_supported") else "")
            + f" (tried: {_tried(found.prm_attempts)})",
            detail={"url": found.prm_url, "resource": prm["resource"],
                    "authorizationServers": prm["authorization_servers"],
                    "scopesSupported": prm.get("scopes_supported"),
                    "attempts": [a.to_json() for a in found.prm_attempts]}))
        if not matches:
            out.append(Finding(
                "auth-resource-mismatch",
                f"the protected resource metadata names resource {prm['resource']}, which does not identify "
                f"{url} (not the same origin, or not a parent path); MCP clients must not use it, and a token "
                "requested for it (RFC 8707) would be for another server",
                detail={"resource": prm["resource"], "serverUrl": url, "metadataUrl": found.prm_url}))
        first = found.prm_attempts[0] if found.prm_attempts else None
        if advertised and not_a_url is None and first is not None and first.result != "ok" \
                and first.url != found.prm_url:
            out.append(Finding(
                "auth-metadata-unreachable",
                f"the resource_metadata URL the challenge names failed ({first.describe()}); the metadata was "
                f"found at {found.prm_url} instead",
                severity=Severity.WARNING, detail={"which": "protected-resource", "attempts": [first.to_json()]}))
    for attempt in found.prm_attempts:
        if attempt.result == "malformed" and not (attempt.source == CHALLENGE_SOURCE and not_a_url is not None):
            out.append(Finding(
                "auth-metadata-malformed", f"protected resource metadata at {attempt.url} is unusable: {attempt.note}",
                detail={"which": "protected-resource", "url": attempt.url, "problem": attempt.note}))
    if found.prm is None and no_oauth:
        out.append(Finding(
            "auth-metadata-unreachable",
            f"the server asks for credentials but publishes no OAuth metadata: no resource_metadata in its "
            f"challenge, no protected resource metadata (RFC 9728) at the well-known URIs (tried "
            f"{_tried(found.prm_attempts)}), and no authorization server metadata at its origin. It is likely "
            + (f"protected another way, such as a static bearer token: give it with {TOKEN_HINT}. " if challenge
               else "protected another way: give the credentials it asks for with --header 'Authorization: ...'. ")
            + f"Not an error: {SHOULD_CONFORM}",
            severity=Severity.WARNING,
            detail={"which": "protected-resource", "oauth": False,
                    "attempts": [a.to_json() for a in found.prm_attempts]}))
    elif found.prm is None:
        out.append(Finding(
            "auth-metadata-unreachable",
            f"no protected resource metadata (RFC 9728) for {url}: tried {_tried(found.prm_attempts)}. An MCP server "
            "that asks for authorization must publish it (2025-06-18 and later); falling back to the 2025-03-26 "
            "rule (metadata at the server's origin)",
            severity=Severity.ERROR if found.asm is None else Severity.WARNING,
            detail={"which": "protected-resource", "attempts": [a.to_json() for a in found.prm_attempts]}))

    # --- authorization server metadata ---
    for attempt in found.asm_attempts:
        if attempt.result == "malformed":
            out.append(Finding(
                "auth-metadata-malformed",
                f"authorization server metadata at {attempt.url} is unusable: {attempt.note}",
                detail={"which": "authorization-server", "url": attempt.url, "problem": attempt.note}))
    if found.asm is None:
        out.append(Finding(
            "auth-metadata-unreachable",
            f"no usable authorization server metadata for issuer {found.issuer} (RFC 8414 or OpenID Connect "
            f"discovery): tried {_tried(found.asm_attempts)}"
            + (" (the time limit ran out)" if found.timed_out else "")
            + ("; no sign of OAuth anywhere, so a note, not an error" if no_oauth else ""),
            severity=Severity.INFO if no_oauth else Severity.ERROR,
            detail={"which": "authorization-server", "issuer": found.issuer,
                    "attempts": [a.to_json() for a in found.asm_attempts]}))
        return out
    offer = supports(found.asm)
    registration = offer["registration"]
    ways = [name for name, on in (("client ID metadata documents", registration["clientIdMetadataDocument"]),
                                  ("dynamic registration", registration["dynamic"]),
                                  ("pre-registration", True)) if on]
    out.append(Finding(
        "auth-server-metadata",
        f"authorization server {offer['issuer']} (metadata at {found.asm_url}): grant types "
        f"{', '.join(offer['grantTypes'])}{'' if offer['grantTypesDeclared'] else ' (default, not declared)'}; "
        f"PKCE {', '.join(offer['pkceMethods']) if offer['pkceMethods'] else 'not declared'}; "
        f"client registration: {', '.join(ways)}; token endpoint auth: {', '.join(offer['tokenEndpointAuthMethods'])}"
        + (f"; scopes {' '.join(offer['scopes'])}" if offer["scopes"] else "")
        + f" (tried: {_tried(found.asm_attempts)})",
        detail={**offer, "url": found.asm_url, "attempts": [a.to_json() for a in found.asm_attempts]}))
    if "authorization_code" in offer["grantTypes"] and not offer["pkceS256"]:
        out.append(Finding(
            "auth-no-pkce",
            "the authorization server does not advertise PKCE S256 (code_challenge_methods_supported is "
            + ("absent" if offer["pkceMethods"] is None else repr(offer["pkceMethods"]))
            + "); MCP clients must refuse the authorization code flow with it",
            detail={"pkceMethods": offer["pkceMethods"]}))
    if not registration["clientIdMetadataDocument"] and not registration["dynamic"]:
        out.append(Finding(
            "auth-no-registration",
            "the authorization server offers neither client ID metadata documents nor dynamic registration: "
            "only a pre-registered client works (--client-id, and --client-secret-env for a confidential client)",
            detail={"registration": registration}))
    return out


async def diagnose_target(target: HttpTarget, detail: Mapping[str, Any], *, timeout: float) -> Diagnosis:
    """The diagnosis of an `AuthFailed` with `detail` (its error's detail) met on `target`: findings
    and data, which the caller adds to what it reports. Never raises: a diagnosis that fails is one
    with no findings whose data says why (`{"failed": ...}`), so that it never hides the original error.
    """
    # The issuer of the token sent: the renewing auth's current record, else the stored token's facts.
    record = getattr(target.auth, "record", None)
    issuer = getattr(record, "issuer", None) or getattr(target.token, "issuer", None)
    try:
        return await diagnose(target.url, detail, headers=target.headers, timeout=timeout,
                              insecure=target.insecure, token_issuer=issuer)
    except Exception as exc:  # noqa: BLE001 - a diagnosis must never hide the original error
        return Diagnosis(data={"failed": f"{type(exc).__name__}: {exc}"})


def _quoted(value: object) -> str:
    """A challenge parameter as an RFC 9110 quoted-string: in double quotes, \\ and \" escaped."""
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
