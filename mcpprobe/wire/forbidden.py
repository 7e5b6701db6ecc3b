"""An HTTP 403 or 421 that asks for no credentials: what the server said, and what to do about it.

A 403 (or a 421 Misdirected Request) without a Bearer challenge is not the server asking for
authorization: MCP authorization is optional, and a server that wants a token says so with a
401, or with a 403 whose `WWW-Authenticate: Bearer` names an `insufficient_scope`. What answers
403 without one is most often the DNS-rebinding protection the transports page asks for ("If the
`Origin` header is present and invalid, servers MUST respond with HTTP 403 Forbidden", 2025-11-25
and later), or its sibling, a check of the Host header: `@playwright/mcp` answers "Access is only
allowed at localhost:8931" to a request addressed to 127.0.0.1, the Python SDK answers 421
"Invalid Host header". Pure functions, no I/O.
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit, urlunsplit

from mcpprobe.safety.sanitize import visible

REASON_CHARS = 200

_HOST_WORDS = re.compile(r"\bhost\b|\bhosts\b|only allowed at|dns[- ]rebinding|rebinding", re.IGNORECASE)
_ORIGIN_WORDS = re.compile(r"\borigin\b", re.IGNORECASE)
# "Access is only allowed at localhost:8931, 127.0.0.1:8931", "allowed hosts: a, b"
_ALLOWED = re.compile(r"(?:only allowed at|allowed hosts?(?: are| is)?:?|only accepts?|expected host:?)\s+"
                      r"(\[[0-9a-f:]+\]|[a-z0-9][a-z0-9.-]*[a-z0-9]|[a-z0-9])(:\d{1,5})?", re.IGNORECASE)


def reason_of(body: str, content_type: str) -> str:
    """The server's reason in a few words: a JSON-RPC error's message, else the body's text,
    whitespace collapsed, made inert (`visible`) and cut to `REASON_CHARS`."""
    text = body
    if "json" in content_type.lower():
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            text = error["message"]
        elif isinstance(error, str):
            text = error
    if "<html" in text[:200].lower():
        text = re.sub(r"<[^>]*>", " ", text)
    text = " ".join(visible(text).split())
    return text if len(text) <= REASON_CHARS else text[:REASON_CHARS] + "…"


def host_hint(status: int, reason: str, url: str, origin_sent: bool) -> str | None:
    """A hint when the refusal looks like Host or Origin protection, naming the URL to use when
    the server said which host it allows."""
    if _ORIGIN_WORDS.search(reason) and not _HOST_WORDS.search(reason):
        sent = ("the Origin header given with -H is not one it allows: leave it out or give one it allows"
                if origin_sent else "mcpprobe sends no Origin header unless one is given with -H")
        return f"the server refuses the request's Origin (its protection against DNS rebinding): {sent}"
    if not (_HOST_WORDS.search(reason) or status == 421):
        return None
    parts = urlsplit(url)
    allowed = _ALLOWED.search(reason)
    if allowed:
        port = allowed.group(2) or (f":{parts.port}" if parts.port is not None else "")
        host = allowed.group(1) + port
        if host.lower() != parts.netloc.lower():
            better = urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
            return (f"the server accepts only requests addressed to {host} (it checks the Host header, a protection "
                    f"against DNS rebinding): use {better}")
    where = parts.hostname or ""
    if where in ("127.0.0.1", "::1"):
        port = f":{parts.port}" if parts.port is not None else ""
        better = urlunsplit((parts.scheme, f"localhost{port}", parts.path, parts.query, parts.fragment))
        return (f"the server checks the Host header (a protection against DNS rebinding) and refuses {where}: "
                f"try {better}, or allow this host in the server's settings (often an allowed-hosts option)")
    return ("the server checks the Host header (a protection against DNS rebinding): address it by a name it "
            "allows, or allow this one in the server's settings (often an allowed-hosts option)")
