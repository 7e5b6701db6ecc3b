"""What is a secret, and that a secret never gets through: whole, split across writes, embedded in
any text, or cut short. And that ordinary values are never masked.

Property-based: hypothesis looks for a text, a secret and split points that leak.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpprobe.safety.redact import (
    MASK,
    MIN_LENGTH,
    RedactingStream,
    Redactor,
    SplitWrites,
    clip,
    secret_name,
    secret_values,
    use,
)
from mcpprobe.safety.sanitize import visible
from mcpprobe.wire.target import HttpTarget, StdioTarget

# No deadline and no "too slow" health check: on a busy machine generating an example can take a second,
# which says nothing about what is tested.
BUSY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Secrets: no brackets (so that a MASK next to other text cannot spell one), at least MIN_LENGTH
# characters and not a bare number, so that they are worth masking.
SECRET_CHARS = st.characters(blacklist_characters="[]", blacklist_categories=("Cs",))
secrets = st.text(SECRET_CHARS, min_size=MIN_LENGTH, max_size=40).filter(
    lambda s: Redactor([s]).__bool__())
one_line_secrets = secrets.filter(lambda s: "\n" not in s and "\r" not in s)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({min(c, len(text)) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(text[start:point])
        start = point
    pieces.append(text[start:])
    return pieces


def _through(redactor: Redactor, pieces: list[str]) -> str:
    stream = SplitWrites(redactor)
    return "".join(stream.feed(piece) for piece in pieces) + stream.end()


@settings(BUSY, max_examples=400)
@given(secret=st.one_of(one_line_secrets, secrets), before=texts, after=texts,
       cuts=st.lists(st.integers(min_value=0, max_value=500), max_size=8))
def test_a_secret_split_anywhere_across_writes_never_gets_through(secret: str, before: str, after: str,
                                                                 cuts: list[int]) -> None:
    redactor = Redactor([secret])
    full = before + secret + after
    shown = _through(redactor, _split(full, cuts))
    assert secret not in shown
    assert shown == redactor(full)  # the same text as if it had come in one piece


@settings(BUSY, max_examples=200)
@given(found=st.lists(one_line_secrets, min_size=2, max_size=4), filler=st.lists(texts, min_size=5, max_size=5),
       cuts=st.lists(st.integers(min_value=0, max_value=1000), max_size=10))
def test_several_secrets_interleaved_never_get_through(found: list[str], filler: list[str], cuts: list[int]) -> None:
    full = filler[0] + "".join(s + f for s, f in zip(found, filler[1:], strict=False))
    shown = _through(Redactor(found), _split(full, cuts))
    for secret in found:
        assert secret not in shown


@settings(BUSY, max_examples=200)
@given(secret=one_line_secrets, before=texts, limit=st.integers(min_value=0, max_value=300))
def test_a_secret_is_masked_before_text_is_cut_short(secret: str, before: str, limit: int) -> None:
    use(Redactor([secret]))
    try:
        clipped = clip(before + secret + "tail", limit)
    finally:
        use(Redactor(()))
    # No prefix of the secret that is longer than what the text before it could explain.
    head = clipped[len(before):] if clipped.startswith(before) else ""
    assert not (head and secret.startswith(head) and len(head) >= MIN_LENGTH)
    assert secret not in clipped


def test_split_writes_hold_back_no_more_than_a_secrets_length() -> None:
    stream = SplitWrites(Redactor(["abcdefgh"]))
    assert stream.feed("status: 123456789") == "status: 12"  # 7 characters could start a secret
    assert stream.feed("\n") == "3456789\n"  # a line ended: nothing can span it
    assert stream.feed("key abcd") == "k"
    assert stream.feed("efgh!") + stream.end() == "ey [redacted]!"


def test_with_no_secrets_nothing_is_held_back() -> None:
    stream = SplitWrites(Redactor(()))
    assert stream.feed("partial li") == "partial li"


# ----- what is a secret -----

NAME_CHARS = st.text(st.sampled_from("ABCDEFGHIJLMNOQRUVWXYZ_0123456789-"), min_size=1, max_size=30)


@settings(BUSY, max_examples=300)
@given(names=st.lists(NAME_CHARS, min_size=1, max_size=5),
       values=st.lists(st.text(max_size=40).filter(lambda v: "://" not in v), min_size=5, max_size=5),
       text=texts)
def test_values_of_ordinary_variables_are_never_masked(names: list[str], values: list[str], text: str) -> None:
    """Names built without the letters of any credential word (no K, P, S, T) are never secret."""
    pairs = tuple(zip(names, values, strict=False))
    target = StdioTarget(command=("server",), env=pairs)
    assert target.secrets() == []
    assert Redactor(target.secrets())(text + "".join(values)) == text + "".join(values)


def test_the_mode_transport_and_protocol_are_not_secrets() -> None:
    env = (("MODE", "resources"), ("TRANSPORT", "stdio"), ("PROTOCOL", "2025-11-25"), ("LOG_LEVEL", "debug"))
    assert StdioTarget(command=("server",), env=env).secrets() == []


def test_credential_names_in_any_case_and_form() -> None:
    for name in ("Authorization", "Proxy-Authorization", "X-Auth", "X-Password", "X-Passphrase", "Cookie",
                 "X-API-Key", "x-apikey", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWD", "SESSION_ID",
                 "OAUTH_CLIENT_CREDENTIALS", "PRIVATE_KEY", "SENTRY_DSN", "X-Signature"):
        assert secret_name(name), name
    for name in ("MODE", "TRANSPORT", "PATH", "HOME", "PWD", "LOG_LEVEL", "Content-Type", "Accept", "User-Agent",
                 "Mcp-Session-Id", "MCP-Protocol-Version"):
        assert not secret_name(name), name


def test_bearer_token_and_url_passwords_are_secrets_too() -> None:
    headers = (("Authorization", "Bearer tok-1234567"), ("X-Plain", "visible-value"))
    assert HttpTarget(url="http://x/mcp", headers=headers).secrets() == ["Bearer tok-1234567", "tok-1234567"]
    assert secret_values([("DATABASE_URL", "postgres://app:hunter2pw@db:5432/main")]) == ["hunter2pw"]
    assert secret_values([("UPSTREAM", "https://example.com/path")]) == []


def test_short_values_numbers_and_setting_words_are_not_masked() -> None:
    redactor = Redactor(["abcde", "123456789", "production", "true"])
    assert not redactor
    assert redactor("abcde 123456789 production true") == "abcde 123456789 production true"
    assert Redactor(["abcdef"])("x abcdef y") == f"x {MASK} y"


def test_output_streams_mask_escape_lone_surrogates_and_optionally_make_text_inert() -> None:
    import io

    raw = io.StringIO()
    stream = RedactingStream(raw, Redactor(["hunter2pw"]))
    stream.write("pw hunter2pw, \ud800\n")
    assert raw.getvalue() == f"pw {MASK}, \\ud800\n"
    inert = io.StringIO()
    RedactingStream(inert, Redactor(()), inert=True).write("scope \x1b]0;pwned\x07 ok\n\tnext")
    assert inert.getvalue() == "scope \\x1b]0;pwned\\x07 ok\n\tnext"


def test_a_redactor_learns_secrets_in_place_for_everything_that_holds_it() -> None:
    """A token renewed during the run is taught to the run's redactor: every stream holding it masks it."""
    import io

    redactor = Redactor(["first-secret"])
    raw = io.StringIO()
    stream = RedactingStream(raw, redactor)
    redactor.learn("renewed-token-1", "renewed-token-2", "short")
    stream.write("first-secret renewed-token-1 renewed-token-2 short\n")
    assert raw.getvalue() == f"{MASK} {MASK} {MASK} short\n"


# Who still reads the run's redactor from the module's global (`use`, `active`, or `clip` and a bare
# `SplitWrites()`, which mask with it) instead of being handed it. This list may only shrink: a new reader
# fails, and so does a module struck off the global without being struck off this list.
GLOBAL_READERS = [
    "mcpprobe.auth.tokens",  # a token is learnt the moment the authorization server issues it, on every path
    "mcpprobe.cli.auth",  # sets it for a login, so that `auth.tokens` masks what the login obtains
    "mcpprobe.cli.edge",  # the last line of a bug, from anywhere
    "mcpprobe.cli.invocation",  # sets it, for the layers below
    "mcpprobe.cli.main",  # clears it per command
    "mcpprobe.cli.tap",  # sets it for the tap's record, log and report, as cli.invocation does for the others
    "mcpprobe.client.answers",  # the negotiation's answers, split out of client.negotiate (which read it already)
    "mcpprobe.client.catalog",
    "mcpprobe.client.connect",
    "mcpprobe.client.negotiate",
    "mcpprobe.exporter.core",  # sets it as the configs' secrets are learnt, for the layers below
    "mcpprobe.wire.http",
    "mcpprobe.wire.lean_http",
    "mcpprobe.wire.streamable_http",
]


def test_only_the_known_modules_read_the_global_redactor() -> None:
    import ast
    from pathlib import Path

    import mcpprobe

    package = Path(mcpprobe.__file__).parent
    global_names = {"use", "active", "clip", "_active"}
    readers = set()
    for path in package.rglob("*.py"):
        name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        if name == "mcpprobe.safety.redact":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module == "mcpprobe.safety" for a in node.names if a.name == "redact"}
        for node in ast.walk(tree):
            imported = (isinstance(node, ast.ImportFrom) and node.module == "mcpprobe.safety.redact"
                        and any(a.name in global_names for a in node.names))
            attribute = (isinstance(node, ast.Attribute) and node.attr in global_names
                         and isinstance(node.value, ast.Name) and node.value.id in aliases)
            bare_split = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                          and node.func.id == "SplitWrites" and not node.args and not node.keywords)
            if imported or attribute or bare_split:
                readers.add(name)
    assert sorted(readers) == GLOBAL_READERS


def test_a_token_with_a_line_break_is_masked_in_every_form_a_message_shows_it() -> None:
    """Issue #27: a token an authorization server issued with CR/LF in it was printed unmasked in
    the HTTP client's "Illegal header value b'Bearer ...'"."""
    token = "at-part-one\r\nX-Injected: at-part-two\x7f"
    redactor = Redactor([token])
    header = ("Bearer " + token).encode()
    assert redactor(f"Illegal header value {header!r}") == f"Illegal header value b'Bearer {MASK}'"
    assert redactor(f"got {token!r}") == f"got '{MASK}'"
    assert redactor(f"got {visible(token)}") == f"got {MASK}"
    assert redactor(f"got {visible(token, multiline=True)} then") == f"got {MASK} then"
    assert SplitWrites(redactor).end(f"a: {token}\n") == f"a: {MASK}\n"
