"""How login meets the MCP server: a session opened the way every command opens one, and what the
server answered it (`Contact`): the first request it refused, with its status and challenge, or
none. Login asks this before it logs in (is a login needed?) and after (is the token accepted?).
What the server said is checked before the SDK's flow or a browser takes it: a `resource_metadata`
that is no usable URL is left out of the challenge the flow is handed (`usable_challenge`). (An
authorization server endpoint on plain http:// away from this machine: mcpprobe.auth.tokens.plain_http_checked.)
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from mcpprobe.errors import AuthFailed

LIST_METHODS = ("tools/list", "resources/list", "prompts/list")


@dataclass
class Contact:
    """What the server answered a session: the first request it refused (status None: none)."""

    status: int | None = None
    challenge: str = ""
    method: str = ""
    version: str = ""  # the protocol version negotiated, when it got that far
    answered: list[str] = field(default_factory=list)


async def contact(url: str, headers: tuple[tuple[str, str], ...], *, insecure: bool, timeout: float,
                  token: str | None = None, auth: Any = None) -> Contact:
    """Open a session the way every command does (`--protocol auto`: server/discover, else
    initialize) and list what the server declares; the first 401/403 stops it.

    `headers` are the other headers the server needs (never Authorization: `token` is sent as one).
    Login asks this without a token (is one needed?) and with the new token (is it accepted?), so
    a server that speaks only 2026-07-28, or that protects lists but not the handshake, is met
    exactly as the probing commands will meet it."""
    from mcpprobe.client.capabilities import missing_for
    from mcpprobe.client.connect import HandshakeFailed, open_session
    from mcpprobe.client.settings import Settings
    from mcpprobe.errors import RpcError
    from mcpprobe.wire.target import HttpTarget

    sent = tuple((k, v) for k, v in headers if k.lower() != "authorization")
    if token:
        sent += (("Authorization", f"Bearer {token}"),)
    target = HttpTarget(url, headers=sent, insecure=insecure, auth=auth)
    settings = Settings(protocol="auto", timeout=timeout, connect_timeout=timeout)
    found = Contact(method="server/discover or initialize")
    try:
        async with open_session(target, settings) as session:
            found.version = session.snapshot.protocol_version
            found.answered.append("server/discover" if session.modern else "initialize")
            for method in LIST_METHODS:
                if missing_for(session.capabilities, method) is not None:
                    continue
                found.method = method
                with contextlib.suppress(RpcError):  # answered, if not well: not an authorization question
                    await session.request(method, {})
                found.answered.append(method)
    except (HandshakeFailed, AuthFailed) as exc:
        error = exc.error if isinstance(exc, HandshakeFailed) else exc
        if not isinstance(error, AuthFailed):
            raise error from None
        found.status = error.detail.get("status") if isinstance(error.detail.get("status"), int) else 401
        found.challenge = str(error.detail.get("wwwAuthenticate") or "")
        return found
    found.method = ""
    return found


def usable_challenge(header: str, url: str) -> str:
    """The server's challenge as the SDK's flow is handed it: a `resource_metadata` that is no usable
    URL (a host that does not parse, a control character) left out, so that the flow looks at the
    well-known URLs instead, as mcpprobe's own diagnosis did, rather than fail on it."""
    from urllib.parse import urljoin

    from mcpprobe.safety.peer import url_problem
    from mcpprobe.wire.challenge import parse_www_authenticate

    challenges = parse_www_authenticate(header)
    named = [c.get("resource_metadata") for c in challenges if c.get("resource_metadata") is not None]
    try:
        if all(url_problem(urljoin(url, str(value))) is None for value in named):
            return header
    except ValueError:
        pass
    kept = []
    for one in challenges:
        if one.token68 is not None:
            kept.append(f"{one.scheme} {one.token68}")
            continue
        params = [f'{name}="{value.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"'
                  for name, value in one.params.items() if name != "resource_metadata"]
        kept.append(f"{one.scheme} {', '.join(params)}".strip())
    return ", ".join(kept)
