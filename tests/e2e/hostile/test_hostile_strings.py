"""Strings from peers, signals during a token fetch, secrets and token files (issue #27).

A server, an authorization server, a config file or the environment hands mcpprobe a string that
cannot become a URL or a header value: each is a finding of the stage it came from, with its
diagnosis kept, or a usage error, never exit 70. SIGTERM and SIGHUP end a run as Ctrl-C does while
a token is being fetched. A token is masked however it came, an authorization endpoint on plain
http:// is not handed to a browser unasked, and a token file is never read through a link.

Real processes against real servers on 127.0.0.1 (tests/fixtures/auth_server.py,
tests/fixtures/http_oddities.py). The signal tests wait until the token endpoint has the request
(its log) before they signal: no sleep decides anything.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mcpprobe.auth.store import TokenRecord, TokenStore
from tests.conftest import FIXTURE, PY, ROOT, Result, http_server, isolated_auth_home

AUTH_SERVER = ROOT / "tests" / "fixtures" / "auth_server.py"
ODDITIES = ROOT / "tests" / "fixtures" / "http_oddities.py"
SECRET = "cs-very-secret-value-4711"
CLIENT = ["--client-id", "ci", "--client-secret-env", "CLIENT_SECRET"]


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test its own token store, for the processes it runs and for TokenStore here."""
    return isolated_auth_home(tmp_path, monkeypatch, client_secret=SECRET, no_proxy_variables=True)


@contextmanager
def auth_server(*flags: str) -> Iterator[str]:
    with http_server([PY, str(AUTH_SERVER), "--client", f"ci:{SECRET}", *flags]) as url:
        yield url


def mcpprobe(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Result:
    """mcpprobe as a process, stdin not a terminal (as in CI)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([PY, "-m", "mcpprobe", *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _no_piece_of(secret: str, text: str, size: int = 8) -> None:
    for start in range(len(secret) - size + 1):
        piece = secret[start:start + size]
        if "\r" in piece or "\n" in piece:
            continue
        assert piece not in text, f"{piece!r} leaked"


# ----- strings from peers -----


def test_an_sse_endpoint_event_with_a_control_character_is_a_protocol_error() -> None:
    """Before: InvalidURL from the HTTP client at the first POST, exit 70."""
    with http_server([PY, str(ODDITIES), "sse-control-endpoint"]) as url:
        result = mcpprobe("probe", "--json", "--transport", "sse", url)
    assert result.exit_code == 5, result.stderr
    doc = result.json
    assert doc["exitCode"] == 5 and doc["error"]["code"] == "protocol-error"
    assert "'endpoint' event is not a usable URL: it holds a control character" in doc["error"]["message"]
    assert "\x7f" not in result.stdout + result.stderr


BAD_URL = "http://[::1]]:1/"


def test_a_resource_metadata_url_that_does_not_parse_keeps_the_diagnosis() -> None:
    """Before: exit 7, but the diagnosis was one line "InvalidURL: ..." and nothing else."""
    with auth_server("--resource-metadata", BAD_URL, "--prm-at", "path") as url:
        result = mcpprobe("probe", "--json", url)
    assert result.exit_code == 7, result.stderr
    doc = result.json
    diagnosis = doc["error"]["detail"]["authDiagnosis"]
    first, *rest = diagnosis["protectedResourceMetadata"]["attempts"]
    assert first["source"] == "resource_metadata in WWW-Authenticate"
    assert first["result"] == "malformed" and "not a usable URL: it does not parse" in first["note"]
    assert any(attempt["result"] == "ok" for attempt in rest)  # the well-known URL, as the spec's fallback
    assert {"auth-challenge", "auth-resource-metadata", "auth-server-metadata"} <= set(result.codes())


def test_a_resource_metadata_url_that_does_not_parse_does_not_stop_a_login() -> None:
    """Before: `auth login` and `probe --client-id` ended with exit 70 (InvalidURL in the SDK's flow)."""
    with auth_server("--resource-metadata", BAD_URL, "--prm-at", "path") as url:
        login = mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url)
        probe = mcpprobe("probe", "--json", "--no-auth-cache", *CLIENT, url)
    assert login.exit_code == 0, login.stderr
    assert probe.exit_code == 0, probe.stderr
    assert SECRET not in login.stdout + login.stderr + probe.stdout + probe.stderr


@pytest.mark.parametrize("token", ["tök€n-not-ascii-0123", "at-part-one\r\nX-Injected: at-part-two"])
def test_a_token_no_header_can_carry_is_refused_and_never_stored(token: str) -> None:
    """Before: a non-ASCII token was stored and every later command for the server exited 70; a
    CR/LF token was printed on stderr unmasked in "Illegal header value b'Bearer ...'"."""
    with auth_server("--issue-token", token) as url:
        login = mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url)
        status = mcpprobe("auth", "status", "--json", url)
        probe = mcpprobe("probe", "-v", "--no-auth-cache", *CLIENT, url)
        as_json = mcpprobe("probe", "--json", "--no-auth-cache", *CLIENT, url)
    assert login.exit_code == 7, login.stderr
    assert "issued an access token that cannot be used" in login.stderr
    assert "it was not stored" in login.stderr
    assert status.exit_code == 7 and status.json["tokens"] == []
    assert probe.exit_code == 7 and as_json.exit_code == 7
    assert "cannot be used" in probe.stderr
    for result in (login, status, probe, as_json):
        _no_piece_of(token, result.stdout + result.stderr)
        assert SECRET not in result.stdout + result.stderr


def test_a_stored_token_no_header_can_carry_is_never_sent(config_home: Path) -> None:
    """A record an older mcpprobe stored from a hostile server: not sent (it would be exit 70), and
    the server's 401 gets its diagnosis."""
    with auth_server() as url:
        TokenStore().save(TokenRecord(server_url=url, access_token="tök€n-stored-0123", grant="client_credentials"))
        result = mcpprobe("probe", "--json", url)
    assert result.exit_code == 7, result.stderr
    assert result.json["error"]["code"] == "auth-required"
    assert result.json["error"]["detail"]["authDiagnosis"]["tokenSent"] is False


# ----- signals while a token is fetched -----


def _log_has(log: Path, path: str) -> bool:
    if not log.exists():
        return False
    return any(json.loads(line).get("path") == path for line in log.read_text().splitlines() if line.strip())


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("command", [["probe", "--json", "--no-auth-cache", *CLIENT],
                                     ["auth", "login", "--json", "--grant", "client_credentials", *CLIENT]])
def test_a_signal_while_a_token_is_fetched_ends_as_ctrl_c(tmp_path: Path, sig: signal.Signals,
                                                          command: list[str]) -> None:
    """Before: killed by the signal (returncode -15 or -1), no document, no "interrupted"."""
    log = tmp_path / "requests.jsonl"
    with auth_server("--hold-token", "--log", str(log)) as url:
        proc = subprocess.Popen([PY, "-m", "mcpprobe", *command, url], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not _log_has(log, "/token"):  # the token endpoint holds the request: mcpprobe waits on it
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the token endpoint never got the request"
                time.sleep(0.05)
            proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 130, (proc.returncode, stderr)
    assert stderr.strip().endswith("interrupted"), stderr
    assert "Traceback" not in stderr
    doc = json.loads(stdout)
    assert doc["exitCode"] == 130 and doc["error"]["code"] == "interrupted"
    assert doc["command"] == " ".join(command[:2] if command[0] == "auth" else command[:1])


def test_a_signal_while_a_stored_token_is_renewed_ends_as_ctrl_c(tmp_path: Path) -> None:
    """The renewal of an expired stored token before the session starts, held by the token endpoint."""
    log = tmp_path / "requests.jsonl"
    with auth_server("--hold-token", "--log", str(log)) as url:
        base = url.rsplit("/", 1)[0]
        TokenStore().save(TokenRecord(server_url=url, access_token="at-expired-0123456", refresh_token="rt-0123456789",
                                      expires_at=time.time() - 600, token_endpoint=base + "/token",
                                      client={"client_id": "ci"}))
        proc = subprocess.Popen([PY, "-m", "mcpprobe", "probe", "--json", url], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 60
            while not _log_has(log, "/token"):
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the token endpoint never got the refresh"
                time.sleep(0.05)
            proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 130, (proc.returncode, stderr)
    assert json.loads(stdout)["error"]["code"] == "interrupted"
    assert "rt-0123456789" not in stdout + stderr


def test_read_output_to_a_fifo_nobody_reads_is_a_usage_error_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    result = mcpprobe("read", "fixture://readme", "-o", str(fifo), "--", PY, str(FIXTURE), "full", timeout=60)
    assert result.exit_code == 2, result.stderr
    assert "FIFO that nobody is reading" in result.stderr
    assert time.monotonic() - started < 30


# ----- what the user gives: a usage error, not exit 70 -----


def test_a_config_url_that_does_not_parse_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"bad": {"url": "http://[::1]]:1/mcp"}}}))
    from_config = mcpprobe("probe", "--json", "--config", str(config), "-s", "bad")
    given = mcpprobe("probe", "--json", "http://[::1]]:1/mcp")
    for result in (from_config, given):
        assert result.exit_code == 2, result.stderr
        assert "is not a usable URL: it does not parse" in result.stderr


@pytest.mark.parametrize(("name", "value", "why"), [
    ("HTTP_PROXY", "http://127.0.0.1:99999", "port 99999 is not between 1 and 65535"),
    ("http_proxy", "http://[::1]]:3128", "does not parse"),
    ("ALL_PROXY", "socks5://127.0.0.1:1080", "SOCKS proxy"),
])
def test_a_proxy_variable_that_cannot_be_used_is_a_usage_error(name: str, value: str, why: str) -> None:
    if why == "SOCKS proxy":
        import importlib.util

        if importlib.util.find_spec("socksio") is not None:
            pytest.skip("socksio is installed: a SOCKS proxy can be used")
    with auth_server() as url:
        result = mcpprobe("probe", "--json", url, env={name: value})
        login = mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url, env={name: value})
    for one in (result, login):
        assert one.exit_code == 2, one.stderr
        assert f"the proxy in the environment variable {name} cannot be used" in one.stderr
        assert why in one.stderr


def test_args_from_a_file_that_never_ends_is_a_usage_error() -> None:
    """Before: /dev/zero was read until memory ran out."""
    result = mcpprobe("call", "--yes", "echo", "--args", "@/dev/zero", "--json", "--", PY, str(FIXTURE), "full",
                      timeout=120)
    assert result.exit_code == 2, result.stderr
    assert "--args @/dev/zero: larger than 64 MiB" in result.stderr


def test_a_bearer_env_value_no_header_can_carry_is_a_usage_error() -> None:
    with auth_server() as url:
        result = mcpprobe("probe", "--json", "--bearer-env", "MY_TOKEN", url, env={"MY_TOKEN": "tökenvalue-0123"})
    assert result.exit_code == 2, result.stderr
    assert "--bearer-env MY_TOKEN: the token cannot be sent: it holds a non-ASCII character" in result.stderr
    assert "tökenvalue" not in result.stderr


# ----- an authorization endpoint on plain http:// -----

PLAIN = "http://auth.example.com/authorize"


def test_a_plain_http_authorization_endpoint_is_refused_without_a_terminal() -> None:
    """Before: the URL was printed (and opened in a browser) without a word."""
    with auth_server("--authorization-endpoint", PLAIN) as url:
        result = mcpprobe("auth", "login", "--no-browser", "--login-timeout", "5", url)
    assert result.exit_code == 7, result.stderr
    assert "login refused: the authorization endpoint http://auth.example.com is plain HTTP" in result.stderr
    assert "--allow-http-authorization" in result.stderr
    assert "/authorize?" not in result.stderr  # never shown, never opened


def test_allow_http_authorization_lets_it_through_with_a_warning() -> None:
    with auth_server("--authorization-endpoint", PLAIN) as url:
        result = mcpprobe("auth", "login", "--no-browser", "--login-timeout", "1", "--allow-http-authorization", url)
    assert "warning: the authorization server's login page is on plain HTTP (http://auth.example.com)" in result.stderr
    assert PLAIN + "?" in result.stderr
    assert result.exit_code == 7  # nobody followed it: the login timed out


def test_a_loopback_http_authorization_endpoint_needs_no_question() -> None:
    with auth_server() as url:
        result = mcpprobe("auth", "login", "--no-browser", "--login-timeout", "1", url)
    assert "plain HTTP" not in result.stderr
    assert "/authorize?" in result.stderr


def test_on_a_terminal_a_plain_http_authorization_endpoint_is_asked_about() -> None:
    import pty

    with auth_server("--authorization-endpoint", PLAIN) as url:
        controller, terminal = pty.openpty()
        proc = subprocess.Popen([PY, "-m", "mcpprobe", "auth", "login", "--no-browser", "--login-timeout", "5", url],
                                stdin=terminal, stdout=subprocess.PIPE, stderr=terminal, cwd=ROOT,
                                start_new_session=True)
        os.close(terminal)
        seen = b""
        try:
            deadline = time.monotonic() + 60
            while b"Open it all the same?" not in seen:
                assert time.monotonic() < deadline, seen
                try:
                    chunk = os.read(controller, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            os.write(controller, b"n\n")
            proc.wait(60)
            while True:
                try:
                    chunk = os.read(controller, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            os.close(controller)
            assert proc.stdout is not None
            proc.stdout.close()
    text = seen.decode("utf-8", "replace")
    assert "plain HTTP (http://auth.example.com)" in text
    assert "Open it all the same?" in text
    assert proc.returncode == 7, text
    assert "login refused" in text
    assert "/authorize?" not in text


# Every other endpoint of the authorization server too: a registration, a token request (a login, a
# renewal), a revocation. The requests go through a proxy on 127.0.0.1 that records them and answers
# 502, so that nothing leaves this machine whatever mcpprobe does, and "nothing was sent" can be seen.

PLAIN_ORIGIN = "http://auth.example.com"


@contextmanager
def recording_proxy(tmp_path: Path) -> Iterator[tuple[dict[str, str], Path]]:
    """The environment that sends every request not for 127.0.0.1 through the proxy, and its record."""
    record = tmp_path / "proxied.txt"
    record.touch()
    with http_server([PY, str(ODDITIES), "bad-gateway"], env={"ODDITIES_RECORD": str(record)}) as proxy:
        origin = proxy.split("/", 3)[:3]
        yield {"HTTP_PROXY": "/".join(origin), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}, \
            record


def _plain_record(url: str, **fields: object) -> TokenRecord:
    return TokenRecord(server_url=url, access_token="at-expired-0123456", refresh_token="rt-0123456789",
                       expires_at=time.time() - 3600, token_endpoint=PLAIN_ORIGIN + "/token",
                       client={"client_id": "ci", "registration": "dynamic"}, **fields)  # type: ignore[arg-type]


def test_a_plain_http_token_endpoint_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    """Before: the client secret went to http://auth.example.com/token without a word."""
    with recording_proxy(tmp_path) as (env, proxied), \
            auth_server("--as-endpoint", f"token_endpoint={PLAIN_ORIGIN}/token") as url:
        refused = mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url, env=env)
        assert proxied.read_text() == ""
        allowed = mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, "--allow-http-authorization",
                           url, env=env)
        sent = proxied.read_text()
    assert refused.exit_code == 7, refused.stderr
    assert "login refused: the token endpoint http://auth.example.com is plain HTTP" in refused.stderr
    assert "--allow-http-authorization" in refused.stderr
    assert "warning: the authorization server's token endpoint is on plain HTTP (http://auth.example.com)" \
        in allowed.stderr
    assert f"POST {PLAIN_ORIGIN}/token" in sent  # allowed: it went (to the proxy, which answered 502)
    assert allowed.exit_code == 7


def test_a_plain_http_registration_endpoint_is_refused_before_anything_is_sent(tmp_path: Path) -> None:
    """Before: dynamic client registration went to http://auth.example.com/register without a word."""
    with recording_proxy(tmp_path) as (env, proxied), \
            auth_server("--as-endpoint", f"registration_endpoint={PLAIN_ORIGIN}/register") as url:
        refused = mcpprobe("auth", "login", "--no-browser", "--login-timeout", "5", url, env=env)
        sent = proxied.read_text()
    assert refused.exit_code == 7, refused.stderr
    assert "login refused: the registration endpoint http://auth.example.com is plain HTTP" in refused.stderr
    assert sent == ""
    assert "/authorize?" not in refused.stderr


def test_a_renewal_goes_to_a_plain_http_token_endpoint_only_where_its_login_allowed_it(tmp_path: Path) -> None:
    """A stored token's refresh, inside a command that cannot ask: refused, unless the login that
    obtained the token allowed that origin (then with a warning). Before: it was sent without a word."""
    with recording_proxy(tmp_path) as (env, proxied), auth_server() as url:
        TokenStore().save(_plain_record(url))
        refused = mcpprobe("probe", "--json", url, env=env)
        assert proxied.read_text() == ""
        TokenStore().save(_plain_record(url, plain_http_allowed=[PLAIN_ORIGIN]))
        allowed = mcpprobe("probe", "--json", url, env=env)
        sent = proxied.read_text()
    assert refused.exit_code == 7, refused.stderr
    assert "refreshing the stored token failed: login refused: the token endpoint http://auth.example.com is " \
           "plain HTTP" in refused.stdout + refused.stderr
    assert "token endpoint is on plain HTTP (http://auth.example.com), not HTTPS" in allowed.stderr
    assert "allowed when this token was obtained" in allowed.stderr
    assert f"POST {PLAIN_ORIGIN}/token" in sent


def test_a_revocation_goes_to_a_plain_http_endpoint_only_when_allowed(tmp_path: Path) -> None:
    """`auth logout`: the token is forgotten either way; it is sent for revocation to plain HTTP only
    with --allow-http-authorization (or where its login allowed it). Before: sent without a word."""
    with recording_proxy(tmp_path) as (env, proxied), auth_server() as url:
        TokenStore().save(_plain_record(url, revocation_endpoint=PLAIN_ORIGIN + "/revoke"))
        refused = mcpprobe("auth", "logout", url, env=env)
        assert proxied.read_text() == ""
        assert TokenStore().load(url) is None
        TokenStore().save(_plain_record(url, revocation_endpoint=PLAIN_ORIGIN + "/revoke"))
        allowed = mcpprobe("auth", "logout", "--allow-http-authorization", url, env=env)
        sent = proxied.read_text()
    assert refused.exit_code == 7, refused.stderr
    assert "login refused: the revocation endpoint http://auth.example.com is plain HTTP" in \
        refused.stdout + refused.stderr
    assert "revocation endpoint is on plain HTTP (http://auth.example.com)" in allowed.stderr
    assert f"POST {PLAIN_ORIGIN}/revoke" in sent
    assert allowed.exit_code == 7  # the proxy answered 502: not revoked, forgotten all the same


# ----- token files -----


def test_a_link_planted_as_the_token_file_is_never_followed(tmp_path: Path) -> None:
    """Before: `auth status` showed the planted record as a valid token, and a probe sent it."""
    log = tmp_path / "requests.jsonl"
    with auth_server("--log", str(log)) as url:
        store = TokenStore()
        path = store.path_for(url)
        path.parent.mkdir(mode=0o700, parents=True)
        planted = tmp_path / "planted.json"
        planted.write_text(json.dumps(TokenRecord(server_url=url, access_token="planted-token-0123456").to_json()))
        path.symlink_to(planted)
        status = mcpprobe("auth", "status", "--json", url)
        probe = mcpprobe("probe", "--json", url)
    assert status.exit_code == 7 and status.json["tokens"] == [], status.stdout
    assert probe.exit_code == 7
    sent = [json.loads(line)["authorization"] for line in log.read_text().splitlines()]
    assert not any("planted" in (value or "") for value in sent)
    assert path.is_symlink()  # left as it was


@pytest.mark.parametrize("linked", ["tokens", "config"])
def test_a_token_directory_reached_through_a_link_is_neither_read_nor_written(tmp_path: Path, linked: str) -> None:
    """A link planted as `tokens/` (or as mcpprobe's config directory above it) is followed by neither a
    read nor a write. Before: the planted record was a valid stored token and a probe sent it, and a
    login wrote its token where the link pointed."""
    log = tmp_path / "requests.jsonl"
    elsewhere = tmp_path / "elsewhere"
    with auth_server("--log", str(log)) as url:
        store = TokenStore()
        tokens = store.directory
        planted_dir = elsewhere / "tokens" if linked == "config" else elsewhere
        planted_dir.mkdir(mode=0o700, parents=True)
        (planted_dir / store.path_for(url).name).write_text(
            json.dumps(TokenRecord(server_url=url, access_token="planted-token-0123456").to_json()))
        if linked == "config":
            tokens.parent.parent.mkdir(parents=True)
            tokens.parent.symlink_to(elsewhere)
        else:
            tokens.parent.mkdir(parents=True)
            tokens.symlink_to(elsewhere)
        status = mcpprobe("auth", "status", "--json", url)
        probe = mcpprobe("probe", "--json", url)
        login = mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url)
    assert status.exit_code == 7 and status.json["tokens"] == [], status.stdout
    assert "stored tokens not read" in status.stderr and "is a symbolic link" in status.stderr
    assert probe.exit_code == 7
    sent = [json.loads(line).get("authorization") for line in log.read_text().splitlines()]
    assert not any("planted" in (value or "") for value in sent)
    assert login.exit_code == 2, login.stderr  # logged in, not stored
    assert "is a symbolic link: tokens are never read or written through one" in login.stderr
    assert sorted(p.name for p in planted_dir.iterdir()) == [store.path_for(url).name]  # nothing written there


def test_a_token_directory_open_to_others_is_not_read(tmp_path: Path) -> None:
    """A token directory others can enter (0755) is not read until it is the user's alone again; a
    login sets it back to 0700 as it stores."""
    with auth_server() as url:
        assert mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url).exit_code == 0
        tokens = TokenStore().directory
        tokens.chmod(0o755)
        status = mcpprobe("auth", "status", "--json", url)
        assert mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url).exit_code == 0
        again = mcpprobe("auth", "status", "--json", url)
    assert status.exit_code == 7 and status.json["tokens"] == [], status.stdout
    assert "is open to others (mode 0o755, not 0700): chmod 700" in status.stderr
    assert _mode(tokens) == 0o700
    assert again.exit_code == 0 and len(again.json["tokens"]) == 1, again.stderr


def test_a_fifo_planted_as_the_token_file_does_not_hold_the_run(tmp_path: Path) -> None:
    with auth_server() as url:
        path = TokenStore().path_for(url)
        path.parent.mkdir(mode=0o700, parents=True)
        os.mkfifo(path)
        result = mcpprobe("auth", "status", "--json", url, timeout=60)
    assert result.exit_code == 7 and result.json["tokens"] == []


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_a_stored_token_is_still_0600_in_a_0700_directory(tmp_path: Path) -> None:
    with auth_server() as url:
        login = mcpprobe("auth", "login", "--grant", "client_credentials", *CLIENT, url)
        record = TokenStore().load(url)  # keyed by the server and its authorization server's issuer
        assert record is not None and record.path is not None, login.stderr
        path = record.path
        probe = mcpprobe("probe", "--json", url)
    assert login.exit_code == 0, login.stderr
    assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
    assert probe.exit_code == 0, probe.stderr
