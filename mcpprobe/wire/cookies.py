"""The cookies an HTTP server sets, kept and sent back, within the bounds a browser keeps.

A load balancer's sticky-session cookie must come back on every request, or the requests of one
MCP session land on servers that do not know it. But a server may set a cookie of any size, and a
new one on every answer: kept without bound, each request carried all of them (a `check` once sent
a 721 KB Cookie header on every request). RFC 6265 section 6.1 gives the figures a user agent
should support at least: "At least 4096 bytes per cookie (as measured by the sum of the length of
the cookie's name, value, and attributes)", "At least 50 cookies per domain", "At least 3000
cookies total". mcpprobe keeps exactly that much; a cookie past a bound is dropped (the cookies
already kept stay: a sticky cookie set first is never pushed out) and reported once per bound, a
`cookie-dropped` finding through `on_dropped`.

One jar per connection, shared by the httpx client (`cookies=`), the raw requests of `check`, and
load's lean POST path (`header_for` and `take`, which read and write the same jar without httpx).
"""

from __future__ import annotations

import urllib.request
from collections.abc import Callable
from http.cookiejar import Cookie, CookieJar
from typing import Any

MAX_COOKIE_BYTES = 4096  # name, value and attributes (RFC 6265 section 6.1)
MAX_PER_DOMAIN = 50
MAX_TOTAL = 3000


def cookie_bytes(cookie: Cookie) -> int:
    """A cookie's size as RFC 6265 measures it: name, value and attributes (domain, path, the
    others as the server wrote them)."""
    size = len(cookie.name) + len(cookie.value or "") + len(cookie.domain) + len(cookie.path)
    rest: dict[str, Any] = getattr(cookie, "_rest", {})
    return size + sum(len(str(key)) + len(str(value or "")) for key, value in rest.items())


class BoundedCookieJar(CookieJar):
    """A CookieJar that keeps at most MAX_COOKIE_BYTES a cookie, MAX_PER_DOMAIN a domain and
    MAX_TOTAL in all. `on_dropped(what, sample)` is told of the first cookie dropped for each
    bound; `dropped` counts them all. `version` changes whenever what the jar holds changes (the
    lean path's cached Cookie header)."""

    def __init__(self, on_dropped: Callable[[str, str], None] | None = None) -> None:
        super().__init__()
        self.on_dropped = on_dropped
        self.dropped = 0
        self.version = 0
        self._told: set[str] = set()

    def _count(self, domain: str | None = None) -> int:
        table = self._cookies  # type: ignore[attr-defined]  # domain -> path -> name -> Cookie
        domains = [table.get(domain, {})] if domain is not None else list(table.values())
        return sum(len(names) for paths in domains for names in paths.values())

    def _held(self, cookie: Cookie) -> Cookie | None:
        """The cookie of the same domain, path and name the jar holds, which `cookie` replaces."""
        table = self._cookies  # type: ignore[attr-defined]
        held: Cookie | None = table.get(cookie.domain, {}).get(cookie.path, {}).get(cookie.name)
        return held

    def set_cookie(self, cookie: Cookie) -> None:
        size = cookie_bytes(cookie)
        if size > MAX_COOKIE_BYTES:
            self._drop("size", f"a cookie of {size} bytes (name, value and attributes) was dropped: past the "
                       f"{MAX_COOKIE_BYTES} bytes RFC 6265 section 6.1 asks a client to keep of one cookie", cookie)
            return
        with self._cookies_lock:  # type: ignore[attr-defined]
            held = self._held(cookie)
            if held is None:  # a cookie replaced takes no new room
                if self._count(cookie.domain) >= MAX_PER_DOMAIN:
                    self._drop("domain", f"a cookie was dropped: {cookie.domain} already has {MAX_PER_DOMAIN} "
                               "cookies, as many as RFC 6265 section 6.1 asks a client to keep for one domain",
                               cookie)
                    return
                if self._count() >= MAX_TOTAL:
                    self._drop("total", f"a cookie was dropped: {MAX_TOTAL} cookies are kept already, as many as "
                               "RFC 6265 section 6.1 asks a client to keep in all", cookie)
                    return
            super().set_cookie(cookie)
            if held is None or (held.value, held.secure) != (cookie.value, cookie.secure):
                # A sticky cookie set again on every answer with a new expiry sends the same header:
                # the lean path keeps its cached one.
                self.version += 1

    def clear(self, domain: str | None = None, path: str | None = None, name: str | None = None) -> None:
        super().clear(domain, path, name)
        self.version += 1

    def _drop(self, bound: str, what: str, cookie: Cookie) -> None:
        self.dropped += 1
        if bound in self._told:
            return
        self._told.add(bound)
        if self.on_dropped is not None:
            # The cookie's name and size, never its value: a session cookie is a credential.
            self.on_dropped(what + " (later ones past this bound are dropped too, not reported)",
                            f"{cookie.name[:80]} ({cookie_bytes(cookie)} bytes)")

    # ----- the lean path (wire/lean_http.py): no httpx request or response to hand the jar -----

    def header_for(self, url: str) -> str | None:
        """The Cookie header a request to `url` carries, or None when no cookie applies."""
        request = urllib.request.Request(url)
        self.add_cookie_header(request)
        return request.unredirected_hdrs.get("Cookie")

    def take(self, url: str, set_cookies: list[str]) -> None:
        """The `Set-Cookie` values of an answer from `url`, as httpx's client would take them."""
        if set_cookies:
            self.extract_cookies(_Head(set_cookies), urllib.request.Request(url))  # type: ignore[arg-type]


class _Head:
    """What CookieJar.extract_cookies reads of a response: its Set-Cookie headers."""

    def __init__(self, set_cookies: list[str]) -> None:
        self._set_cookies = set_cookies

    def info(self) -> _Head:
        return self

    def get_all(self, name: str, default: list[str] | None = None) -> list[str]:
        return list(self._set_cookies) if name.lower() == "set-cookie" else (default or [])
