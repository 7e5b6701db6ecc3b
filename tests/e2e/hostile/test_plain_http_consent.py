"""The question about an authorization server endpoint on plain http:// (issue #27), asked the same
way by every command, and never timed as the server's time.

A person who reads the warning for longer than --timeout still gets the login, the probe or the
revocation; an endpoint that truly stalls still times out. `probe --client-id` (a login before the
session) asks on a terminal as `auth login` does, refuses without one (naming
--allow-http-authorization, which it takes too), and goes with a warning when given it.

The endpoint is http://auth.example.com: not loopback, so mcpprobe's rule applies. Nothing leaves
this machine: HTTP_PROXY sends every request for it to a proxy on 127.0.0.1 that records it and
passes it on to the test authorization server, also on 127.0.0.1 (tests/fixtures/http_oddities.py
`forward`, tests/fixtures/auth_server.py). The terminal is a real pseudo-terminal. The slow answer
is given only after --timeout has passed since the question appeared, so that the old behaviour
(the deadline started before the question) fails whatever the machine's speed; the stalling
endpoint never answers, so only the deadline can end that command.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcpprobe.auth.store import TokenRecord, TokenStore
from tests.conftest import PY, ROOT, Result, http_server, isolated_auth_home

AUTH_SERVER = ROOT / "tests" / "fixtures" / "auth_server.py"
ODDITIES = ROOT / "tests" / "fixtures" / "http_oddities.py"
SECRET = "cs-plain-http-secret-4711"
CLIENT = ["--client-id", "ci", "--client-secret-env", "CLIENT_SECRET"]
PLAIN_ORIGIN = "http://auth.example.com"
QUESTION = b"Go on all the same? [y/N]"
# Small enough to keep the tests short, large enough that a loaded machine answers a loopback
# exchange well within it: the slow answer's verdict rests on the answer coming after --timeout.
TIMEOUT = 3.0


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test its own token store, for the processes it runs and for TokenStore here."""
    monkeypatch.delenv("MCPPROBE_TIMEOUT", raising=False)
    return isolated_auth_home(tmp_path, monkeypatch, client_secret=SECRET, no_proxy_variables=True)


@dataclass
class PlainAS:
    url: str  # the MCP server, on 127.0.0.1
    env: dict[str, str]  # the proxy variables that reach http://auth.example.com
    record: Path  # what the proxy was sent: one "METHOD URL" line per request

    def sent(self) -> str:
        return self.record.read_text()


@contextmanager
def plain_authorization_server(tmp_path: Path, *flags: str) -> Iterator[PlainAS]:
    """The test authorization server, whose metadata names its token and revocation endpoints on
    http://auth.example.com, and the proxy that serves that origin."""
    record = tmp_path / "proxied.txt"
    record.touch()
    with http_server([PY, str(AUTH_SERVER), "--client", f"ci:{SECRET}", *flags,
                      "--as-endpoint", f"token_endpoint={PLAIN_ORIGIN}/token",
                      "--as-endpoint", f"revocation_endpoint={PLAIN_ORIGIN}/revoke"]) as url:
        upstream = url.rsplit("/", 1)[0]
        with http_server([PY, str(ODDITIES), "forward"],
                         env={"ODDITIES_UPSTREAM": upstream, "ODDITIES_RECORD": str(record)}) as proxy:
            origin = "/".join(proxy.split("/", 3)[:3])
            yield PlainAS(url, {"HTTP_PROXY": origin, "NO_PROXY": "127.0.0.1,localhost",
                                "no_proxy": "127.0.0.1,localhost"}, record)


def mcpprobe(*args: str, env: dict[str, str] | None = None) -> Result:
    """mcpprobe as a process, stdin not a terminal (as in CI)."""
    proc = subprocess.run([PY, "-m", "mcpprobe", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    return Result(proc.returncode, proc.stdout, proc.stderr)


@dataclass
class OnTerminal:
    exit_code: int
    terminal: str  # what the pseudo-terminal showed (stderr, the question, the echoed answer)
    stdout: str
    asked: bool
    after_answer: float  # seconds from the answer to the end of the process


def on_terminal(*args: str, env: dict[str, str], answer: bytes, after: float = 0.0) -> OnTerminal:
    """mcpprobe with stdin and stderr on a pseudo-terminal: the question is answered `after` seconds
    after it appeared (not at all when it never does)."""
    import pty

    controller, terminal = pty.openpty()
    proc = subprocess.Popen([PY, "-m", "mcpprobe", *args], stdin=terminal, stdout=subprocess.PIPE, stderr=terminal,
                            cwd=ROOT, env={**os.environ, **env}, start_new_session=True)
    os.close(terminal)
    seen = b""

    def read() -> bool:
        nonlocal seen
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the process has ended, and with it the terminal's other side
            return False
        seen += chunk
        return bool(chunk)

    answered = time.monotonic()
    try:
        limit = time.monotonic() + 90
        while QUESTION not in seen and read():
            assert time.monotonic() < limit, seen
        asked = QUESTION in seen
        if asked:
            time.sleep(after)  # the person reads the warning
            os.write(controller, answer + b"\n")
            answered = time.monotonic()
        proc.wait(120)
        ended = time.monotonic()
        while read():
            pass
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(controller)
        assert proc.stdout is not None
        stdout = proc.stdout.read().decode("utf-8", "replace")
        proc.stdout.close()
    text = seen.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    return OnTerminal(proc.returncode, text, stdout, asked, ended - answered)


def _stored_without_consent(url: str) -> None:
    """The token a login stored, as if its login had not allowed the plain-http origin."""
    store = TokenStore()
    record = store.load(url)
    assert record is not None and record.plain_http_allowed == [PLAIN_ORIGIN]
    record.plain_http_allowed = []
    store.save(record)


def _expired_record(url: str) -> TokenRecord:
    return TokenRecord(server_url=url, access_token="at-expired-0123456", refresh_token="rt-0123456789",
                       expires_at=time.time() - 3600, token_endpoint=PLAIN_ORIGIN + "/token",
                       client={"client_id": "ci", "registration": "pre-registered"})


TIMED_OUT = ("no time left", "no whole answer within")


# ----- the person's time is not the server's -----


@pytest.mark.parametrize("command", ["auth-login", "probe", "auth-logout"])
def test_a_slow_answer_is_not_counted_against_the_timeout(tmp_path: Path, command: str) -> None:
    """The question is answered only after --timeout has passed: the command still succeeds.
    Before: `auth logout` reported "no time left for this request" (its one budget had started before
    the question), and `probe --client-id` never asked (refused)."""
    with plain_authorization_server(tmp_path) as plain:
        if command == "auth-logout":
            login = mcpprobe("auth", "login", *CLIENT, "--allow-http-authorization", plain.url, env=plain.env)
            assert login.exit_code == 0, login.stderr
            _stored_without_consent(plain.url)
            args = ["auth", "logout", "--client-secret-env", "CLIENT_SECRET", "--timeout", f"{TIMEOUT:g}", plain.url]
            endpoint = "/revoke"
        elif command == "auth-login":
            args = ["auth", "login", *CLIENT, "--timeout", f"{TIMEOUT:g}", plain.url]
            endpoint = "/token"
        else:
            args = ["probe", *CLIENT, "--timeout", f"{TIMEOUT:g}", "--no-auth-cache", plain.url]
            endpoint = "/token"
        sent_before = plain.sent().count(f"POST {PLAIN_ORIGIN}{endpoint}")
        run = on_terminal(*args, env=plain.env, answer=b"y", after=TIMEOUT + 1.0)
        sent = plain.sent()
    assert run.asked, run.terminal
    assert f"on plain HTTP ({PLAIN_ORIGIN}), not HTTPS" in run.terminal
    assert not any(words in run.terminal + run.stdout for words in TIMED_OUT), run.terminal + run.stdout
    assert run.exit_code == 0, run.terminal + run.stdout
    assert sent.count(f"POST {PLAIN_ORIGIN}{endpoint}") > sent_before  # it went, after the answer
    if command == "auth-logout":
        assert "revoked (access_token) and forgotten" in run.terminal + run.stdout
    if command == "probe":
        assert "Tools" in run.stdout  # the session ran with the token


@pytest.mark.parametrize("command", ["auth-login", "probe", "auth-logout"])
def test_an_endpoint_that_stalls_after_the_answer_still_times_out(tmp_path: Path, command: str) -> None:
    """Every other wait stays timed: answered at once, an endpoint that never answers is given
    --timeout and no more (its own deadline starts after the answer)."""
    hold = "--hold-revocation" if command == "auth-logout" else "--hold-token"
    with plain_authorization_server(tmp_path, hold) as plain:
        if command == "auth-logout":
            TokenStore().save(TokenRecord(server_url=plain.url, access_token="at-0123456789",
                                          token_endpoint=PLAIN_ORIGIN + "/token",
                                          revocation_endpoint=PLAIN_ORIGIN + "/revoke",
                                          client={"client_id": "ci", "registration": "pre-registered"}))
            args = ["auth", "logout", "--client-secret-env", "CLIENT_SECRET", "--timeout", f"{TIMEOUT:g}", plain.url]
        elif command == "auth-login":
            args = ["auth", "login", *CLIENT, "--timeout", f"{TIMEOUT:g}", plain.url]
        else:
            args = ["probe", *CLIENT, "--timeout", f"{TIMEOUT:g}", "--no-auth-cache", plain.url]
        run = on_terminal(*args, env=plain.env, answer=b"y")
    assert run.asked, run.terminal
    assert run.exit_code == 7, run.terminal + run.stdout
    assert any(words in run.terminal + run.stdout for words in TIMED_OUT), run.terminal + run.stdout
    assert run.after_answer < 60  # ended by the deadline, not by the test


# ----- probe --client-id asks as auth login does -----


def test_probe_client_credentials_refuses_a_plain_http_token_endpoint_without_a_terminal(tmp_path: Path) -> None:
    """No terminal: refused before anything is sent, with a note naming the option; the run goes on
    without a token, and the server's refusal is diagnosed (exit 7)."""
    with plain_authorization_server(tmp_path) as plain:
        result = mcpprobe("probe", "--json", *CLIENT, "--no-auth-cache", plain.url, env=plain.env)
        sent = plain.sent()
    assert result.exit_code == 7, result.stderr
    assert "client credentials login failed: login refused: the token endpoint http://auth.example.com is " \
           "plain HTTP, not HTTPS" in result.stderr
    assert "--allow-http-authorization" in result.stderr
    assert sent == ""


def test_probe_client_credentials_on_a_terminal_asks(tmp_path: Path) -> None:
    """On a terminal the person is warned and asked; no sends nothing. Before: refused unasked."""
    with plain_authorization_server(tmp_path) as plain:
        run = on_terminal("probe", *CLIENT, "--no-auth-cache", plain.url, env=plain.env, answer=b"n")
        sent = plain.sent()
    assert run.asked, run.terminal
    assert "warning: the authorization server's token endpoint is on plain HTTP (http://auth.example.com)" \
        in run.terminal
    assert "login refused: the token endpoint http://auth.example.com is not HTTPS" in run.terminal
    assert run.exit_code == 7, run.terminal + run.stdout
    assert sent == ""


def test_probe_allow_http_authorization_goes_with_a_warning(tmp_path: Path) -> None:
    """--allow-http-authorization on a probing command: no question, the warning on stderr, the
    token obtained there and used; its login's consent is stored with the token."""
    with plain_authorization_server(tmp_path) as plain:
        result = mcpprobe("probe", "--json", *CLIENT, "--allow-http-authorization", plain.url, env=plain.env)
        sent = plain.sent()
        record = TokenStore().load(plain.url)
    assert result.exit_code == 0, result.stderr
    assert "warning: the authorization server's token endpoint is on plain HTTP (http://auth.example.com), not " \
           "HTTPS" in result.stderr
    assert "allowed by --allow-http-authorization" in result.stderr
    assert f"POST {PLAIN_ORIGIN}/token" in sent
    assert result.json["serverInfo"]["name"] == "auth-fixture"  # the session ran with the token
    assert record is not None and record.plain_http_allowed == [PLAIN_ORIGIN]


def test_a_stored_tokens_refresh_before_the_session_asks_on_a_terminal(tmp_path: Path) -> None:
    """A stored token whose login did not allow the plain-http token endpoint: on a terminal, its
    refresh before the session is asked about (no: nothing sent); without one it stays refused
    (tests/e2e/hostile/test_hostile_strings.py); --allow-http-authorization sends it with the warning."""
    with plain_authorization_server(tmp_path) as plain:
        TokenStore().save(_expired_record(plain.url))
        run = on_terminal("probe", plain.url, env=plain.env, answer=b"n")
        refused_sent = plain.sent()
        allowed = mcpprobe("probe", "--json", "--allow-http-authorization", plain.url, env=plain.env)
        sent = plain.sent()
    assert run.asked, run.terminal
    assert "refreshing the stored token failed: login refused: the token endpoint http://auth.example.com is " \
           "not HTTPS" in run.terminal
    assert refused_sent == ""
    assert "token endpoint is on plain HTTP (http://auth.example.com), not HTTPS" in allowed.stderr
    assert "allowed by --allow-http-authorization" in allowed.stderr
    assert f"POST {PLAIN_ORIGIN}/token" in sent  # sent (the fixture does not know that refresh token: exit 7)
    assert allowed.exit_code == 7


def test_allow_http_authorization_from_a_config_file_is_not_taken(tmp_path: Path) -> None:
    """Only the command line allows plain HTTP: a config entry (one a repository ships) cannot."""
    with plain_authorization_server(tmp_path) as plain:
        config = tmp_path / "servers.yaml"
        config.write_text(f"servers:\n  lab:\n    url: {plain.url}\n    clientId: ci\n"
                          "    clientSecretEnv: CLIENT_SECRET\n    allowHttpAuthorization: true\n"
                          "    allow_http_authorization: true\n")
        result = mcpprobe("probe", "--json", "--no-auth-cache", "--config", str(config), "-s", "lab", env=plain.env)
        sent = plain.sent()
    assert "login refused: the token endpoint http://auth.example.com is plain HTTP" in result.stderr
    assert sent == ""


def test_a_renewal_during_the_run_never_asks_and_goes_with_the_option(tmp_path: Path) -> None:
    """A token the server stops taking mid-run (after one tools/list) is renewed inside the refused
    request, whose time is running: no question, even on a terminal. Its login did not allow the
    plain-http token endpoint, so the renewal is refused (exit 7, nothing sent), unless the command
    was given --allow-http-authorization: then it is renewed there and the run succeeds."""
    with plain_authorization_server(tmp_path, "--token-lists", "1") as plain:
        login = mcpprobe("auth", "login", *CLIENT, "--allow-http-authorization", plain.url, env=plain.env)
        assert login.exit_code == 0, login.stderr
        _stored_without_consent(plain.url)  # and its token already spent by the login's own check
        before = plain.sent()
        refused = on_terminal("probe", *CLIENT, plain.url, env=plain.env, answer=b"y")
        after_refused = plain.sent()
        allowed = mcpprobe("probe", "--json", *CLIENT, "--allow-http-authorization", plain.url, env=plain.env)
        after_allowed = plain.sent()
    assert not refused.asked, refused.terminal
    assert refused.exit_code == 7, refused.terminal + refused.stdout
    assert after_refused == before  # nothing sent
    # Why the token was not renewed, which the server's 401 cannot tell; not "with no terminal to ask".
    assert "the token was not renewed: login refused: the token endpoint http://auth.example.com is plain " \
           "HTTP" in refused.terminal, refused.terminal
    assert "as a renewal during the run asks nobody, --allow-http-authorization allows it" in refused.terminal
    assert "with no terminal to ask" not in refused.terminal
    assert allowed.exit_code == 0, allowed.stderr
    assert "allowed by --allow-http-authorization" in allowed.stderr
    assert after_allowed.count(f"POST {PLAIN_ORIGIN}/token") == before.count(f"POST {PLAIN_ORIGIN}/token") + 1
