"""The bounded cookie jar (mcpprobe/wire/cookies.py): RFC 6265 section 6.1's figures as caps, the
excess dropped and reported once per bound, what is kept sent back. The e2e tests
(tests/e2e/hostile/test_hostile_cookies.py) run it against a real server on every HTTP path."""

from __future__ import annotations

from http.cookiejar import Cookie

from mcpprobe.wire.cookies import MAX_COOKIE_BYTES, MAX_PER_DOMAIN, MAX_TOTAL, BoundedCookieJar, cookie_bytes


def _cookie(name: str, value: str = "v", domain: str = "example.com", path: str = "/") -> Cookie:
    return Cookie(0, name, value, None, False, domain, False, False, path, True, False, None, False, None, None, {})


def _jar() -> tuple[BoundedCookieJar, list[tuple[str, str]]]:
    told: list[tuple[str, str]] = []
    return BoundedCookieJar(lambda what, sample: told.append((what, sample))), told


def test_a_cookie_past_4096_bytes_with_its_attributes_is_dropped_and_told_once():
    jar, told = _jar()
    room = MAX_COOKIE_BYTES - len("big") - len("example.com") - len("/")
    jar.set_cookie(_cookie("big", "x" * room))
    assert cookie_bytes(_cookie("big", "x" * room)) == MAX_COOKIE_BYTES and len(jar) == 1  # exactly the bound
    jar.set_cookie(_cookie("bigger", "x" * MAX_COOKIE_BYTES))
    jar.set_cookie(_cookie("biggest", "x" * MAX_COOKIE_BYTES))
    assert len(jar) == 1 and jar.dropped == 2
    assert len(told) == 1 and "4096" in told[0][0]
    assert told[0][1].startswith("bigger (") and "xxxx" not in told[0][1]  # the name and size, not the value


def test_fifty_a_domain_the_first_kept_and_a_replacement_takes_no_room():
    jar, told = _jar()
    for number in range(MAX_PER_DOMAIN + 10):
        jar.set_cookie(_cookie(f"c{number}"))
    assert len(jar) == MAX_PER_DOMAIN and jar.dropped == 10 and len(told) == 1
    assert {cookie.name for cookie in jar} == {f"c{number}" for number in range(MAX_PER_DOMAIN)}
    jar.set_cookie(_cookie("c0", "renewed"))  # the sticky cookie set again: replaced, not dropped
    assert {cookie.value for cookie in jar if cookie.name == "c0"} == {"renewed"} and jar.dropped == 10
    jar.set_cookie(_cookie("other", domain="example.org"))  # another domain has room of its own
    assert len(jar) == MAX_PER_DOMAIN + 1


def test_three_thousand_in_all():
    jar, told = _jar()
    for domain in range(MAX_TOTAL // MAX_PER_DOMAIN + 1):
        for number in range(MAX_PER_DOMAIN):
            jar.set_cookie(_cookie(f"c{number}", domain=f"d{domain}.example"))
    assert len(jar) == MAX_TOTAL and jar.dropped == MAX_PER_DOMAIN
    assert len(told) == 1 and "3000" in told[0][0]


def test_the_lean_paths_header_and_set_cookie_use_the_same_jar():
    jar, _ = _jar()
    url = "http://127.0.0.1:8080/mcp"
    assert jar.header_for(url) is None
    before = jar.version
    jar.take(url, ["sticky=node-7; Path=/", "other=1; Path=/elsewhere"])
    assert jar.version > before
    assert jar.header_for(url) == "sticky=node-7"
    jar.take(url, ["sticky=gone; Path=/; Max-Age=0"])
    assert jar.header_for(url) is None


def test_every_client_of_a_connection_holds_its_one_bounded_jar():
    """The httpx client of both HTTP transports, and a raw client of `check`, take and send the
    cookies of the connection's jar: none keeps an unbounded jar of its own."""
    import anyio

    from mcpprobe.wire.legacy_sse import LegacySseTransport
    from mcpprobe.wire.streamable_http import StreamableHttpTransport
    from mcpprobe.wire.target import HttpTarget

    async def main() -> None:
        for kind in (StreamableHttpTransport, LegacySseTransport):
            transport = kind(HttpTarget("http://127.0.0.1:9/mcp"), max_message_bytes=1024, connect_timeout=1)
            assert isinstance(transport.cookies, BoundedCookieJar)
            async with transport._make_client() as client:
                assert client.cookies.jar is transport.cookies
        streamable = StreamableHttpTransport(HttpTarget("http://127.0.0.1:9/mcp"), max_message_bytes=1024,
                                             connect_timeout=1)
        async with streamable.raw_client() as raw:
            assert raw.cookies.jar is streamable.cookies

    anyio.run(main)


def test_the_same_cookie_set_again_keeps_the_version_a_new_value_changes_it():
    jar, _ = _jar()
    url = "http://127.0.0.1:8080/mcp"
    jar.take(url, ["AWSALB=abc; Path=/; Max-Age=600"])
    version = jar.version
    jar.take(url, ["AWSALB=abc; Path=/; Max-Age=900"])  # a load balancer renews it on every answer
    assert jar.version == version and jar.header_for(url) == "AWSALB=abc"
    jar.take(url, ["AWSALB=def; Path=/; Max-Age=900"])
    assert jar.version != version and jar.header_for(url) == "AWSALB=def"
