"""A login inside another command, as `auth login` logs in (the browser, the loopback redirect):
for more scope when a request is refused with 403 insufficient_scope (`step_up_login`), and with
the authorization server a server names once it has moved to another one (`moved_login`).

Both run only where a person can answer: a browser can be opened (mcpprobe.auth.callback). A run
without one keeps the refusal, with its diagnosis and exit 7.
"""

from __future__ import annotations

from mcpprobe.auth.login import LoginOptions, login
from mcpprobe.auth.store import TokenRecord
from mcpprobe.auth.tokens import LoginFailed


async def step_up_login(record: TokenRecord, *, client_secret: str | None = None, timeout: float = 30.0,
                        insecure: bool = False, headers: tuple[tuple[str, str], ...] = (),
                        allow_http_authorization: bool = False) -> TokenRecord:
    """Log in again by the authorization code flow, as `auth login` does (the browser, the loopback
    redirect), for `record.scope` - the granted scope joined with the one a 403 insufficient_scope
    asked for - and update `record` with the new token. The same client: a pre-registered one with
    its ID (and the secret from --client-secret-env), a client ID metadata document with its URL; a
    dynamically registered one registers again (its redirect URI named the earlier loopback port).
    `headers` are the target's other headers (an API key for a gateway), sent to the server again."""
    client = record.client
    registration = client.get("registration")
    # The refused request waits for this login: the person has the request's time limit (--timeout).
    opts = LoginOptions(scope=record.scope, timeout=timeout, insecure=insecure, dpop=bool(record.dpop_key),
                        grant="authorization_code", headers=headers,
                        remembered=set(record.plain_http_allowed), allow_http_authorization=allow_http_authorization)
    if registration == "pre-registered":
        opts.client_id = client.get("client_id")
        opts.client_secret = client_secret
    elif registration == "client-id-metadata-document":
        opts.client_metadata_url = client.get("client_id")
    from mcpprobe.safety.sanitize import visible

    # The scope comes from the server's challenge: shown through the sanitizer, like every server text.
    opts.announce(visible(f"{record.server_url} asks for more scope ({record.scope}): logging in again"))
    result = await login(record.server_url, opts)
    if result.not_needed:
        raise LoginFailed("the server answered without credentials when logging in again for more scope")
    fresh = result.record
    for name in ("access_token", "refresh_token", "expires_at", "scope", "token_endpoint", "issuer", "resource",
                 "client", "obtained_at", "token_type", "dpop_key", "revocation_endpoint"):
        setattr(record, name, getattr(fresh, name))
    return record


async def moved_login(record: TokenRecord, issuer: str, *, timeout: float = 30.0, insecure: bool = False,
                      headers: tuple[tuple[str, str], ...] = (), allow_http_authorization: bool = False) -> TokenRecord:
    """Register and log in with `issuer`, the authorization server the server names now instead of
    `record`'s (MCP 2026-07-28, "Authorization Server Binding": clients "MUST NOT reuse client
    credentials from a different authorization server and MUST re-register with the new
    authorization server"): a new record, stored apart from `record` (keyed by its own issuer). A
    client ID metadata document is portable across authorization servers and is kept; a dynamically
    registered client registers anew. (A pre-registered client belongs to the old server: the
    caller never moves one.) The scope is the new server's to name: its challenge, else its
    scopes_supported."""
    from mcpprobe.safety.sanitize import visible

    opts = LoginOptions(timeout=timeout, insecure=insecure, dpop=bool(record.dpop_key), grant="authorization_code",
                        headers=headers, remembered=set(record.plain_http_allowed),
                        allow_http_authorization=allow_http_authorization)
    if record.client.get("registration") == "client-id-metadata-document":
        opts.client_metadata_url = record.client.get("client_id")
    opts.announce(visible(f"{record.server_url} now names the authorization server {issuer} (the stored token is "
                          f"from {record.issuer}): registering and logging in there"))
    result = await login(record.server_url, opts)
    if result.not_needed:
        raise LoginFailed("the server answered without credentials when logging in with its new authorization server")
    return result.record
