"""Strings from peers checked where they become URLs or header values, before the HTTP client sees them.

A server, an authorization server or a config file can hand mcpprobe any text: an `endpoint`
event with a control character, a `resource_metadata` URL whose host does not parse
(`http://[::1]]:1/`), an access token with a non-ASCII character or a CR/LF in it. Handed to the
HTTP client as they are, they raise an error nobody expects (`InvalidURL`, `UnicodeEncodeError`,
"Illegal header value") far from where they came in, and the run ended as a bug (exit 70) with its
diagnosis lost. Checked here, where they come in, each is a finding of the stage it came from.

`url_problem` and `token_problem` return why a value cannot be used (None when it can), in words
that never quote the value: a token is a secret, and a URL may hold one. `peer_url` joins and
checks a URL that a peer named. Only the parse is the HTTP client's own (httpx2.URL), imported
when a URL is checked.
"""

from __future__ import annotations

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")


class BadPeerValue(ValueError):
    """A string from a peer that cannot become a URL or a header value; the message says why."""


def _first_bad(text: str, *, non_ascii: bool = False) -> str | None:
    """What in `text` cannot go into a URL or a header: a control character (C0, DEL, C1), a space,
    and, unless `non_ascii` (an IRI's letters), anything beyond ASCII."""
    for position, char in enumerate(text):
        code = ord(char)
        if code < 0x20 or code == 0x7F:
            name = {"\r": "CR", "\n": "LF", "\t": "TAB", "\0": "NUL"}.get(char, f"U+{code:04X}")
            return f"a control character ({name}) at position {position + 1}"
        if 0x80 <= code <= 0x9F:
            return f"a control character (U+{code:04X}) at position {position + 1}"
        if char == " ":
            return f"a space at position {position + 1}"
        if code > 0x7E and not non_ascii:
            return f"a non-ASCII character at position {position + 1}"
    return None


def url_problem(url: str, *, schemes: tuple[str, ...] = ("http", "https")) -> str | None:
    """Why `url` cannot be requested (None when it can): a control character or a space, another
    scheme, no host, or what the HTTP client's own parser refuses (a bracketed host that is not an
    IPv6 address, a port out of range)."""
    if not isinstance(url, str) or not url:
        return "it is empty"
    bad = _first_bad(url, non_ascii=True)  # an IRI's letters: the client encodes them
    if bad is not None:
        return f"it holds {bad}"
    import httpx2

    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, ValueError, TypeError) as exc:
        return f"it does not parse ({str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__})"
    if parsed.scheme not in schemes:
        return f"its scheme is not {' or '.join(schemes)}"
    if not parsed.host:
        return "it names no host"
    if parsed.port is not None and not 0 < parsed.port <= 65535:
        return f"its port {parsed.port} is not between 1 and 65535"
    return None


def peer_url(value: object, *, base: str | None = None, what: str) -> str:
    """The URL a peer named (relative to `base` when given), checked; BadPeerValue says why not,
    naming `what` it was."""
    if not isinstance(value, str):
        raise BadPeerValue(f"{what} is not a string")
    url = value.strip()
    if base is not None:
        from urllib.parse import urljoin

        problem = _first_bad(url, non_ascii=True)
        if problem is not None:
            raise BadPeerValue(f"{what} is not a usable URL: it holds {problem}")
        try:
            url = urljoin(base, url)
        except ValueError as exc:
            raise BadPeerValue(f"{what} is not a usable URL: it does not parse ({exc})") from None
    problem = url_problem(url)
    if problem is not None:
        raise BadPeerValue(f"{what} is not a usable URL: {problem}")
    return url


def token_problem(token: object) -> str | None:
    """Why an access token cannot be sent as `Authorization: Bearer <token>` (None when it can).

    RFC 6750 2.1 makes the token a b64token; what is checked is the wider rule that the header
    itself sets (RFC 9110 5.5: visible ASCII), so that no token a server may issue is refused for
    less than a header that could not be sent."""
    if not isinstance(token, str) or not token:
        return "it is empty or not a string"
    bad = _first_bad(token)
    return None if bad is None else f"it holds {bad}, which no HTTP header can carry (RFC 9110 5.5)"


def is_loopback_host(host: str | None) -> bool:
    """Whether `host` is this machine: localhost, 127.0.0.0/8 or ::1."""
    if not host:
        return False
    host = host.lower().strip("[]")
    if host == "localhost" or host.endswith(".localhost"):
        return True
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def visible_ascii(value: str) -> bool:
    """Whether `value` is one or more visible ASCII characters (0x21 to 0x7E): what an MCP session id
    must be ("The session ID MUST only contain visible ASCII characters"), and so what may be sent back."""
    return bool(value) and all("\x21" <= c <= "\x7e" for c in value)
