"""What to connect to, and how: validated, immutable values built from the command line.

The CLI turns argv into a `Target` (and `Settings`, mcpprobe/client/settings.py); everything below works on these
values only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcpprobe.errors import UsageProblem
from mcpprobe.wire.childenv import child_environment
from mcpprobe.wire.protocols import ACCEPTED

TRANSPORTS = ("auto", "stdio", "http", "sse")


@dataclass(frozen=True)
class StdioTarget:
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    inherit_env: bool = False

    transport = "stdio"

    def describe(self) -> str:
        """The command as a shell would take it back: an argument with a space or a quote is
        quoted, so what mcpprobe shows can be pasted to run the server by hand."""
        import shlex

        return shlex.join(self.command)

    def environment(self) -> dict[str, str]:
        """The child's environment: the safe inherited subset (or all of it), then --env on top."""
        return child_environment(self.env, self.inherit_env)

    def secrets(self) -> list[str]:
        """Values of credential-like variables (`redact.secret_values`); `MODE=tools` is no secret."""
        from mcpprobe.safety.redact import secret_values

        return secret_values(self.env)


@dataclass(frozen=True)
class HttpTarget:
    url: str
    transport: str = "http"  # "http" (streamable HTTP) or "sse" (legacy HTTP+SSE)
    headers: tuple[tuple[str, str], ...] = ()
    insecure: bool = False
    # An httpx2.Auth that renews a stored token on 401 (mcpprobe.auth.apply.RenewingBearer), or None.
    auth: Any = field(default=None, compare=False, repr=False)
    # What a monitor should know of the access token sent (mcpprobe.auth.apply.TokenFacts: when it
    # expires, whether it can be renewed without a person), never the token; None without one.
    token: Any = field(default=None, compare=False, repr=False)

    def describe(self) -> str:
        return self.url

    def secrets(self) -> list[str]:
        """Values of credential-like headers, and the token of "Bearer <token>" alone too, in case
        a server echoes only the token (`redact.secret_values`)."""
        from mcpprobe.safety.redact import secret_values

        return secret_values(self.headers)


Target = StdioTarget | HttpTarget

# Headers that frame the message or manage the connection: the HTTP client sets them from what it
# actually sends, and a user's value would contradict it (a Content-Length that is not the body's
# length desynchronises the connection). Host is allowed: virtual hosts behind a proxy need it.
FRAMING_HEADERS = ("content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection",
                   "upgrade", "te", "trailer")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e]*")


def parse_header(text: str) -> tuple[str, str]:
    """'Name: value' as RFC 9110 allows it: a token name, a visible-ASCII value (no CR, LF or NUL),
    and not a framing header; anything else is a usage error, refused before anything is sent."""
    name, sep, value = text.partition(":")
    name, value = name.strip(), value.strip(" \t")
    if not sep or not name or any(c.isspace() for c in name):
        raise UsageProblem(f"--header expects 'Name: value', got {text!r}")
    if not _TOKEN.fullmatch(name):
        raise UsageProblem(f"--header {name!r}: a header name is letters, digits and !#$%&'*+.^_`|~- only")
    if name.lower() in FRAMING_HEADERS:
        raise UsageProblem(f"--header {name}: set by the HTTP client from what it sends; it cannot be given")
    if not _FIELD_VALUE.fullmatch(value):
        bad = next(c for c in value if not _FIELD_VALUE.fullmatch(c))
        what = "a control character" if ord(bad) < 0x20 or ord(bad) == 0x7F else "a non-ASCII character"
        raise UsageProblem(f"--header {name}: the value has {what} ({ascii(bad)}); header values must be "
                           "printable ASCII (RFC 9110): percent-encode or base64 it as the server expects")
    return name, value


def parse_env(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageProblem(f"--env expects KEY=VALUE, got {text.split('=')[0]!r}")
    if "\0" in text:
        raise UsageProblem(f"environment variable {name!r}: a NUL character cannot be passed to a program")
    return name, value


def parse_protocol(text: str) -> str:
    if text in ACCEPTED:
        return text
    raise UsageProblem(f"--protocol {text!r} is not one of: {', '.join(ACCEPTED)}")


def root_uri(text: str) -> str:
    """A --root as a URI: paths become file:// URIs (absolute), URIs pass as given."""
    if "://" in text:
        return text
    from pathlib import Path

    try:
        return Path(text).expanduser().resolve().as_uri()
    except (RuntimeError, OSError, ValueError) as exc:  # `~nobody-here`: no such user's home; a path too long
        raise UsageProblem(f"--root {text!r}: {exc}") from None


def check_http_url(url: str, *, proxies: bool = True) -> None:
    """A URL the user gave (on the command line or in a config) that the HTTP client can request,
    and proxy variables it can use: UsageProblem otherwise, before anything is sent, where the
    client itself would raise far from here (a host like `[::1]]`, a proxy port 99999, a SOCKS
    proxy without its support installed)."""
    from mcpprobe.safety.peer import url_problem

    problem = url_problem(url)
    if problem is not None:
        raise UsageProblem(f"{url!r} is not a usable URL: {problem}")
    proxy_problem = environment_proxy_problem() if proxies else None
    if proxy_problem is not None:
        raise UsageProblem(proxy_problem)


def environment_proxy_problem() -> str | None:
    """Why a proxy variable of the environment cannot be used (None when each can): the HTTP client
    reads HTTP_PROXY, HTTPS_PROXY and ALL_PROXY (either case) for every request mcpprobe makes."""
    import os

    from mcpprobe.safety.peer import url_problem

    if any(host.strip() == "*" for host in (os.environ.get("NO_PROXY") or os.environ.get("no_proxy") or "").split(",")):
        return None  # NO_PROXY=*: the client uses no proxy at all
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        value = os.environ.get(name, "").strip()
        if not value:
            continue
        proxy = value if "://" in value else f"http://{value}"
        problem = url_problem(proxy, schemes=("http", "https", "socks5", "socks5h"))
        if problem is None and urlsplit(proxy).scheme.startswith("socks"):
            import importlib.util

            if importlib.util.find_spec("socksio") is None:
                problem = "a SOCKS proxy, which needs the optional package socksio (pip install 'httpx2[socks]')"
        if problem is not None:
            return f"the proxy in the environment variable {name} cannot be used: {problem}; fix or unset it"
    return None


def build_target(
    url: str | None,
    command: list[str],
    *,
    transport: str = "auto",
    headers: list[str] = (),  # type: ignore[assignment]
    env: list[str] = (),  # type: ignore[assignment]
    cwd: str | None = None,
    inherit_env: bool = False,
    insecure: bool = False,
) -> Target:
    """One target from the positional URL or the command after `--`, checked for consistency."""
    if url and command:
        raise UsageProblem("give either a URL or a server command after '--', not both")
    if not url and not command:
        raise UsageProblem("no server given: pass a URL, or a server command after '--'")
    if command:
        if any("\0" in part for part in command):
            raise UsageProblem("the server command has a NUL character, which no program can receive")
        if transport not in ("auto", "stdio"):
            raise UsageProblem(f"--transport {transport} needs a URL, not a command")
        if headers:
            raise UsageProblem("--header applies to HTTP servers; for a command use --env")
        if insecure:
            raise UsageProblem("--insecure applies to HTTPS servers, not to a command")
        return StdioTarget(
            command=tuple(command),
            env=tuple(parse_env(e) for e in env),
            cwd=cwd,
            inherit_env=inherit_env,
        )
    assert url is not None
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise UsageProblem(f"{url!r}: a URL cannot contain spaces or control characters (percent-encode them)")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as exc:
        raise UsageProblem(f"{url!r} is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise UsageProblem(f"{url!r} is not an http(s) URL; to run a command, put it after '--'")
    check_http_url(url)
    if transport == "stdio":
        raise UsageProblem("--transport stdio needs a command after '--', not a URL")
    if env or cwd or inherit_env:
        raise UsageProblem("--env, --cwd and --inherit-env apply to a server command, not to a URL")
    kind = transport if transport in ("http", "sse") else ("sse" if parts.path.rstrip("/").endswith("/sse") else "http")
    return HttpTarget(
        url=url, transport=kind, headers=tuple(parse_header(h) for h in headers), insecure=insecure
    )
