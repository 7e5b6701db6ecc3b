"""Two things a login meets beyond the SDK's flows: a workload's own JWT presented as the grant, and
a server that has moved to another authorization server.

Workload identity federation (SEP-1933; the ext-auth extension "Workload Identity Federation"): a
workload that already holds a JWT from its platform (a Kubernetes service account token, a SPIFFE
JWT-SVID, a cloud workload token) presents it at the authorization server's token endpoint in the
JWT bearer grant of RFC 7523 section 2.1 - `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`,
`assertion=<the JWT>`, `resource=<the MCP server>` - and gets an access token; no client
registration, no client secret. mcpprobe only carries the JWT: it is read from the environment
(`--assertion-env VAR`), sent to the token endpoint once (a refusal is reported, never retried with
it or with another grant), masked in every output, and never stored.

Authorization server migration (MCP 2026-07-28, "Authorization Server Binding"): when a token that
login has just obtained is refused with 401 and the server's protected resource metadata now names
another authorization server than the one that issued it, `moved_check` raises `ServerMoved`; login
then registers and logs in with the new one (mcpprobe.auth.login).
"""

from __future__ import annotations

import time
from typing import Any

from mcpprobe.auth.contact import Contact, contact
from mcpprobe.auth.diagnosis import Diagnosis
from mcpprobe.auth.discovery import authorization_servers, canonical_resource, moved_from, resource_matches, supports
from mcpprobe.auth.store import TokenRecord
from mcpprobe.auth.tokens import LoginFailed, expiry, token_request

JWT_BEARER_GRANT = "jwt-bearer"  # --grant's name for it: the last part of RFC 7523's grant type URN
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523 2.1


class ServerMoved(LoginFailed):
    """The token login obtained from `old` is refused, and the server now names `new` (exit 7 when
    nothing can be done about it)."""

    def __init__(self, old: str, new: str, check: Contact) -> None:
        super().__init__(f"the server's protected resource metadata now names the authorization server {new}, "
                         f"not {old}, which issued the token it refuses ({check.method}: HTTP {check.status})",
                         detail={"status": check.status, "wwwAuthenticate": check.challenge, "method": check.method,
                                 "issuer": old, "newIssuer": new})
        self.old, self.new, self.check = old, new, check


async def moved_check(url: str, issuer: str | None, check: Contact, timeout: float, insecure: bool) -> None:
    """Raise ServerMoved when `check` is a 401 to a token of `issuer` and the server's protected
    resource metadata names another authorization server now."""
    if check.status != 401 or not issuer:
        return
    servers = await authorization_servers(url, www_authenticate=check.challenge, timeout=min(timeout, 15),
                                          insecure=insecure)
    new = moved_from(issuer, servers)
    if new is not None:
        raise ServerMoved(issuer, new, check)


async def jwt_bearer(url: str, opts: Any, found: Diagnosis, first: Contact) -> tuple[TokenRecord, Contact]:
    """The JWT bearer grant with the workload's assertion (`opts.assertion`), then the same session
    with the token: (the record to store, the accepted contact). LoginFailed when the authorization
    server does not offer the grant, refuses the assertion, or the server refuses the token."""
    discovery = found.discovery
    asm = discovery.asm if discovery is not None else None
    if discovery is None or asm is None:
        raise LoginFailed("cannot log in: no usable authorization server metadata was found (see the findings)",
                          diagnosis=found)
    offer = supports(asm)
    if JWT_BEARER not in offer["grantTypes"]:
        raise LoginFailed(f"the authorization server {offer['issuer']} does not offer the JWT bearer grant "
                          f"({JWT_BEARER}; it offers {', '.join(offer['grantTypes'])})", diagnosis=found)
    prm = discovery.prm
    resource = prm["resource"] if prm and resource_matches(url, prm["resource"]) else canonical_resource(url)
    form = {"grant_type": JWT_BEARER, "assertion": opts.assertion or "", "resource": resource}
    scope = opts.scope or discovery.chosen_scope()
    if scope:
        form["scope"] = scope
    # The assertion is the credential; a client ID, where one is given, only names the client.
    client = {"client_id": opts.client_id, "token_endpoint_auth_method": "none"} if opts.client_id else {}
    endpoint = str(offer["tokenEndpoint"])
    try:
        data = await token_request(endpoint, form, client, timeout=opts.timeout, insecure=opts.insecure,
                                   consent=opts)
    except LoginFailed as exc:  # invalid_grant, invalid_scope, unauthorized_client: said, not retried
        raise LoginFailed(f"the authorization server refused the assertion: {exc.message}", diagnosis=found,
                          detail=exc.detail) from None
    token = str(data["access_token"])
    check = await contact(url, opts.headers, insecure=opts.insecure, timeout=opts.timeout, token=token)
    if check.status is not None:
        await moved_check(url, offer["issuer"], check, opts.timeout, opts.insecure)
        raise LoginFailed(f"after login the server still answers {check.method} with HTTP {check.status}"
                          + (f" (WWW-Authenticate: {check.challenge})" if check.challenge else ""),
                          detail={"status": check.status, "wwwAuthenticate": check.challenge, "method": check.method})
    now = time.time()
    # Through the one reader of expires_in (tokens.expiry): a 400-digit one ended the run (OverflowError).
    expires_at, problem = expiry(now, data.get("expires_in"))
    record = TokenRecord(
        server_url=url, access_token=token, refresh_token=data.get("refresh_token"),
        expires_at=expires_at, problem=problem,
        scope=data.get("scope") or scope, grant=JWT_BEARER_GRANT, token_endpoint=endpoint, issuer=offer["issuer"],
        resource=resource,
        client={"registration": "pre-registered" if opts.client_id else "none", "client_id": opts.client_id,
                "token_endpoint_auth_method": "none"},
        obtained_at=now,
        revocation_endpoint=asm.get("revocation_endpoint") if isinstance(asm.get("revocation_endpoint"), str)
        else None)
    return record, check
