"""Which legacy SSE `endpoint` events send a client past the HTTP tap: an absolute URL on another origin than
the tap's; not a path, not the tap's own origin (as the client named it, or any loopback name of its port)."""

from __future__ import annotations

import pytest

from mcpprobe.tap.http import bypassing, origin_of, own_origins

SCOPE = {"server": ("127.0.0.1", 8080)}
OWN = own_origins(SCOPE, [("host", "127.0.0.1:8080")])


@pytest.mark.parametrize(("endpoint", "said"), [
    ("/messages?sessionId=1", None),
    ("messages?sessionId=1", None),
    ("  /messages  ", None),
    ("http://127.0.0.1:8080/messages?sessionId=1", None),
    ("http://localhost:8080/messages", None),
    ("HTTP://127.0.0.1:8080/messages", None),
    ("http://127.0.0.1:9000/messages?sessionId=secret", "http://127.0.0.1:9000"),
    ("https://127.0.0.1:8080/messages", "https://127.0.0.1:8080"),
    ("http://example.com/messages", "http://example.com:80"),
    ("//example.com:81/messages", "http://example.com:81"),
    ("http://user:password@example.com/messages?token=t", "http://example.com:80"),
    ("http://[::1]:9000/m", "http://[::1]:9000"),
    ("http://127.0.0.1:99999/m", None),  # no port: nothing any client could post to
    ("mailto:someone@example.com", None),
])
def test_an_endpoint_bypasses_the_tap_only_on_another_origin(endpoint: str, said: str | None) -> None:
    assert bypassing(endpoint, OWN) == said


def test_the_tap_is_known_by_the_host_the_client_named() -> None:
    own = own_origins({"server": ("127.0.0.1", 8080)}, [("Host", "tap.test:8080")])
    assert bypassing("http://tap.test:8080/messages", own) is None
    assert origin_of("http://tap.test") == "http://tap.test:80"
    assert origin_of("/relative") is None
