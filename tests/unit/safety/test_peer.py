"""Strings from peers, checked before they become URLs or header values (mcpprobe.safety.peer)."""

from __future__ import annotations

import pytest

from mcpprobe.safety.peer import BadPeerValue, is_loopback_host, peer_url, token_problem, url_problem


@pytest.mark.parametrize(("url", "why"), [
    ("http://[::1]]:1/", "does not parse"),
    ("http://127.0.0.1:99999/mcp", "port 99999"),
    ("http://x/a\x7fb", "control character (U+007F) at position 11"),
    ("http://x/a\r\nb", "control character (CR) at position 11"),
    ("http://x/a\x85b", "control character (U+0085)"),
    ("http://x/a b", "a space at position 11"),
    ("javascript:alert(1)", "scheme is not http or https"),
    ("http://", "names no host"),
    ("", "empty"),
])
def test_a_url_that_cannot_be_requested_says_why(url: str, why: str) -> None:
    problem = url_problem(url)
    assert problem is not None and why in problem


@pytest.mark.parametrize("url", ["http://127.0.0.1:8080/mcp", "https://[::1]:1/x?y=1", "https://bücher.example/ä"])
def test_a_usable_url_passes(url: str) -> None:
    assert url_problem(url) is None


def test_a_peer_url_is_joined_then_checked_and_the_message_names_where_it_came_from() -> None:
    assert peer_url("/messages?s=1", base="http://127.0.0.1:9/sse", what="x") == "http://127.0.0.1:9/messages?s=1"
    with pytest.raises(BadPeerValue, match=r"^the server's 'endpoint' event is not a usable URL: it holds a control"):
        peer_url("/m\x01", base="http://127.0.0.1:9/sse", what="the server's 'endpoint' event")


def test_a_token_is_checked_as_a_header_value_and_never_quoted() -> None:
    assert token_problem("eyJhbGciOi.J9-_~+/abc==") is None
    for token, why in (("tök-0123", "non-ASCII"), ("a\r\nb-0123", "CR"), ("a b-0123", "space"), ("", "empty")):
        problem = token_problem(token)
        assert problem is not None and why in problem
        assert not token or token not in problem


def test_loopback_hosts() -> None:
    assert all(is_loopback_host(h) for h in ("localhost", "127.0.0.1", "127.0.0.2", "::1", "[::1]", "a.localhost"))
    assert not any(is_loopback_host(h) for h in ("auth.example.com", "10.0.0.1", "", None, "localhost.example"))
