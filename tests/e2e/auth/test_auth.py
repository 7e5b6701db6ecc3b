"""Authentication: the 401/403 diagnosis, OAuth 2.1 login flows, the token store, redaction.

Every test talks to a real authorization server and protected MCP server
(tests/fixtures/auth_server.py) on 127.0.0.1 with an ephemeral port. The browser step of the
authorization code flow is performed by the test: it reads the authorization URL mcpprobe prints,
fetches it, and follows the redirect to mcpprobe's loopback listener.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from conftest import PY, ROOT, Result, fixture_http, http_server, isolated_auth_home, run_cli, run_subprocess

from mcpprobe.auth.apply import authorize_target
from mcpprobe.auth.diagnosis import diagnose
from mcpprobe.auth.settings import AuthSettings
from mcpprobe.auth.store import TokenRecord, TokenStore
from mcpprobe.errors import UsageProblem
from mcpprobe.wire.challenge import parse_www_authenticate
from mcpprobe.wire.target import build_target

AUTH_SERVER = ROOT / "tests" / "fixtures" / "auth_server.py"
CLIENT_SECRET = "cs-very-secret-value-4711"


@pytest.fixture(autouse=True)
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_auth_home(tmp_path, monkeypatch)


@contextmanager
def auth_server(*flags: str) -> Iterator[str]:
    with http_server([PY, str(AUTH_SERVER), *flags]) as url:
        yield url


def probe_json(url: str, *extra: str) -> tuple[Result, dict[str, Any]]:
    result = run_cli(["probe", "--json", "--protocol", "legacy", *extra, url])
    return result, result.json


def diagnosis_of(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["error"]["detail"]["authDiagnosis"]


def finding(doc: dict[str, Any], code: str) -> dict[str, Any]:
    matches = [f for f in doc["findings"] if f["code"] == code]
    assert matches, f"no {code} in {[f['code'] for f in doc['findings']]}"
    return matches[0]


def login(url: str, *args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Result:
    """`mcpprobe auth login URL --no-browser ARGS`, as a process; the test is the browser."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.Popen([PY, "-m", "mcpprobe", "auth", "login", url, "--no-browser", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env, cwd=ROOT)
    assert proc.stderr is not None and proc.stdout is not None
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("http") and "/authorize?" in line:
            page = httpx2.get(line.strip(), follow_redirects=True, timeout=10)
            assert page.status_code == 200, page.text
            assert "logged in" in page.text
    stdout = proc.stdout.read()
    proc.wait(timeout)
    stderr = "".join(lines)
    assert "Traceback" not in stderr, stderr
    return Result(proc.returncode, stdout, stderr)


def stored(url: str) -> Any:
    return TokenStore().load(url)


# ----- WWW-Authenticate -----


def test_www_authenticate_parser() -> None:
    [one] = parse_www_authenticate('Bearer realm="mcp", resource_metadata="https://x/.well-known/a", scope="a b"')
    assert one.scheme == "Bearer" and one.get("scope") == "a b" and one.get("RESOURCE_METADATA") == "https://x/.well-known/a"
    basic, bearer = parse_www_authenticate('Basic realm="x", Bearer error=invalid_token, error_description="a \\"b\\""')
    assert basic.get("realm") == "x" and bearer.get("error") == "invalid_token"
    assert bearer.get("error_description") == 'a "b"'
    [negotiate] = parse_www_authenticate("Negotiate abc==")
    assert negotiate.token68 == "abc=="
    assert parse_www_authenticate("") == []


# ----- the diagnosis -----


def test_missing_token_is_diagnosed_with_exit_7() -> None:
    with auth_server() as url:
        result, doc = probe_json(url)
        human = run_cli(["probe", "--protocol", "legacy", url])
    assert result.exit_code == 7 and doc["error"]["code"] == "auth-required"
    challenge = finding(doc, "auth-challenge")
    assert challenge["severity"] == "info" and challenge["detail"]["tokenSent"] is False
    assert challenge["detail"]["params"]["scope"] == "mcp:read"
    # The parameters as the header writes them (quoted-strings), not as Python reprs.
    assert 'scope="mcp:read"' in challenge["message"] and "'" not in challenge["message"]
    assert 'scope="mcp:read"' in human.stdout
    data = diagnosis_of(doc)
    assert data["wwwAuthenticate"]["bearer"]["resource_metadata"].endswith("/meta/prm.json")
    assert data["protectedResourceMetadata"]["attempts"][0]["source"] == "resource_metadata in WWW-Authenticate"
    assert data["protectedResourceMetadata"]["resourceMatches"] is True
    offer = data["authorizationServer"]["supports"]
    assert offer["pkceS256"] and offer["registration"]["dynamic"] and "client_credentials" in offer["grantTypes"]
    assert data["scope"] == "mcp:read"
    assert finding(doc, "auth-server-metadata")["detail"]["tokenEndpoint"].endswith("/token")
    assert "auth-invalid-token" not in result.codes()
    assert human.exit_code == 7 and "auth-server-metadata" in human.stdout and "PKCE S256" in human.stdout


def test_wrong_token_is_invalid_and_never_printed_nor_sent_to_metadata(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    secret = "wrong-token-value-0042"
    with auth_server("--log", str(log)) as url:
        for extra in ([], ["--json"]):
            result = run_cli(["probe", "--protocol", "legacy", *extra, "--header", f"Authorization: Bearer {secret}",
                              url])
            assert result.exit_code == 7
            assert secret not in result.stdout + result.stderr
        _, doc = probe_json(url, "--header", f"Authorization: Bearer {secret}")
    invalid = finding(doc, "auth-invalid-token")
    assert invalid["severity"] == "error" and invalid["detail"]["error"] == "invalid_token"
    assert finding(doc, "auth-challenge")["detail"]["tokenSent"] is True
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(r["path"] == "/mcp" and r["authorization"] for r in requests)
    metadata = [r for r in requests if r["path"] != "/mcp"]
    assert metadata and all(r["authorization"] is None for r in metadata)


@pytest.mark.parametrize("flags, prm_tried, prm_found, as_tried", [
    ((), ["resource_metadata in WWW-Authenticate"], "/meta/prm.json", ["RFC 8414"]),
    (("--prm-at", "path"), ["path-aware well-known (RFC 9728)"], "/.well-known/oauth-protected-resource/mcp",
     ["RFC 8414"]),
    (("--prm-at", "root"), ["path-aware well-known (RFC 9728)", "root well-known (RFC 9728)"],
     "/.well-known/oauth-protected-resource", ["RFC 8414"]),
    (("--as-doc", "oidc-insert"), ["resource_metadata in WWW-Authenticate"], "/meta/prm.json",
     ["RFC 8414", "OpenID Connect discovery"]),
    (("--as-path", "/tenant1"), ["resource_metadata in WWW-Authenticate"], "/meta/prm.json",
     ["RFC 8414 path insertion"]),
    (("--as-path", "/tenant1", "--as-doc", "oidc-insert"), ["resource_metadata in WWW-Authenticate"],
     "/meta/prm.json", ["RFC 8414 path insertion", "OpenID Connect path insertion"]),
    (("--as-path", "/tenant1", "--as-doc", "oidc-append", "--prm-at", "root"),
     ["path-aware well-known (RFC 9728)", "root well-known (RFC 9728)"], "/.well-known/oauth-protected-resource",
     ["RFC 8414 path insertion", "OpenID Connect path insertion", "OpenID Connect path appending"]),
], ids=["header", "path-aware", "root", "oidc-root", "rfc8414-path", "oidc-path-insert", "oidc-path-append"])
def test_every_discovery_path(flags: tuple[str, ...], prm_tried: list[str], prm_found: str,
                              as_tried: list[str]) -> None:
    with auth_server(*flags) as url:
        result, doc = probe_json(url)
    assert result.exit_code == 7
    data = diagnosis_of(doc)
    prm = data["protectedResourceMetadata"]
    assert [a["source"] for a in prm["attempts"]] == prm_tried
    assert prm["url"].endswith(prm_found) and prm["attempts"][-1]["result"] == "ok"
    assert all(a["status"] == 404 for a in prm["attempts"][:-1])
    server = data["authorizationServer"]
    assert [a["source"] for a in server["attempts"]] == as_tried
    assert server["attempts"][-1]["result"] == "ok" and server["legacyFallback"] is False
    assert server["supports"]["issuer"] == data["protectedResourceMetadata"]["document"]["authorization_servers"][0]
    prm_finding = finding(doc, "auth-resource-metadata")
    assert prm_finding["severity"] == "info" and [a["source"] for a in prm_finding["detail"]["attempts"]] == prm_tried
    assert "unusable" not in json.dumps(doc["findings"])


def test_no_protected_resource_metadata_falls_back_to_the_origin() -> None:
    with auth_server("--prm-at", "none") as url:
        _, doc = probe_json(url)
    unreachable = finding(doc, "auth-metadata-unreachable")
    assert unreachable["severity"] == "warning" and unreachable["detail"]["which"] == "protected-resource"
    assert diagnosis_of(doc)["authorizationServer"]["legacyFallback"] is True
    assert finding(doc, "auth-server-metadata")


def test_no_metadata_anywhere() -> None:
    """No resource_metadata in the challenge and no metadata at any well-known URI: from outside, a
    server protected without the specification's OAuth (a static token), which MCP allows:
    "Authorization is OPTIONAL ... Implementations using an HTTP-based transport SHOULD conform to
    this specification". So a warning that quotes it and says how to give a token, never an error
    that the server "must publish" its metadata (it was two errors before)."""
    with auth_server("--prm-at", "none", "--as-doc", "none") as url:
        result, doc = probe_json(url)
    which = {f["detail"]["which"]: f for f in doc["findings"] if f["code"] == "auth-metadata-unreachable"}
    assert {k: f["severity"] for k, f in which.items()} == {"protected-resource": "warning",
                                                             "authorization-server": "info"}
    words = which["protected-resource"]["message"]
    assert "SHOULD conform to this specification" in words and "--bearer-env" in words and "must" not in words
    assert which["protected-resource"]["detail"]["oauth"] is False
    assert "--bearer-env" in finding(doc, "auth-challenge")["message"]
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["auth-required"]
    assert result.exit_code == 7


def test_a_basic_challenge_without_oauth_is_told_to_send_its_header() -> None:
    """The same leniency for a 401 that asks for Basic (often a proxy): a warning, and the advice is
    the header it asks for, not a bearer token."""
    from mcpprobe.auth.diagnosis import findings_for
    from mcpprobe.auth.discovery import Attempt, Discovery

    base = "https://mcp.example.com"
    found = Discovery(server_url=f"{base}/mcp", status=401, www_authenticate='Basic realm="proxy"',
                      challenges=parse_www_authenticate('Basic realm="proxy"'), issuer=base, legacy=True,
                      prm_attempts=[Attempt(f"{base}/.well-known/oauth-protected-resource",
                                            "root well-known (RFC 9728)", 404, "not-found")],
                      asm_attempts=[Attempt(f"{base}/.well-known/oauth-authorization-server", "RFC 8414", 404,
                                            "not-found")])
    out = {(f.code, f.severity.value if f.severity else None): f.message for f in findings_for(found, token_sent=False)}
    assert set(out) == {("auth-no-challenge", "warning"), ("auth-metadata-unreachable", "warning"),
                        ("auth-metadata-unreachable", "info")}
    words = out[("auth-metadata-unreachable", "warning")]
    assert "--header 'Authorization: ...'" in words and "--bearer-env" not in words and "SHOULD conform" in words


def test_metadata_named_but_missing_is_still_an_error() -> None:
    """The leniency needs no sign of OAuth at all: a challenge that names resource_metadata where
    nothing is served breaks the MUST of the server that does OAuth ("MCP servers MUST implement
    OAuth 2.0 Protected Resource Metadata")."""
    with auth_server("--prm-at", "none", "--as-doc", "none", "--resource-metadata",
                     "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp") as url:
        _, doc = probe_json(url)
    which = {f["detail"]["which"]: f["severity"] for f in doc["findings"] if f["code"] == "auth-metadata-unreachable"}
    assert which == {"protected-resource": "error", "authorization-server": "error"}


@pytest.mark.parametrize("command", [["probe"], ["list", "tools"]])
def test_a_static_token_server_exit_codes(command: list[str]) -> None:
    """A server protected by a static bearer token, no OAuth (tests/fixtures/check_http_server.py,
    static-token): without the token, exit 7 with findings that say how to give one and no error but
    the 401 itself; with it, exit 0. (Before: exit 7 as now, but with two error findings saying the
    server must publish metadata, and advice to `auth login`, which cannot work there.)"""
    from tests.fixtures.check_http_server import STATIC_TOKEN

    server = ROOT / "tests" / "fixtures" / "check_http_server.py"
    with http_server([PY, str(server), "static-token"]) as url:
        refused = run_cli([*command, "--json", url])
        human = run_cli([*command, url])
        let_in = run_cli([*command, "--json", "--header", f"Authorization: Bearer {STATIC_TOKEN}", url])
    assert refused.exit_code == human.exit_code == 7, refused.stderr
    doc = refused.json
    assert doc["error"]["code"] == "auth-required"
    assert [f["code"] for f in doc["findings"] if f["severity"] == "error"] == ["auth-required"]
    assert "auth login" not in " ".join(f["message"] for f in doc["findings"])
    assert "--bearer-env" in human.stdout and "SHOULD conform" in human.stdout and "Traceback" not in human.stderr
    assert let_in.exit_code == 0, let_in.stderr


def test_advertised_resource_metadata_url_that_fails_is_a_warning() -> None:
    # The challenge names /meta/prm.json, but the document is only at the path-aware well-known URI.
    with auth_server("--prm-at", "path") as url:
        async def run() -> Any:
            return await diagnose(url, {"status": 401, "wwwAuthenticate":
                                        f'Bearer resource_metadata="{url.rsplit("/", 1)[0]}/meta/prm.json"'})
        result = anyio.run(run)
    codes = {f.code: f for f in result.findings}
    assert codes["auth-metadata-unreachable"].severity.value == "warning"
    assert result.data["protectedResourceMetadata"]["attempts"][0]["status"] == 404
    assert result.data["protectedResourceMetadata"]["url"].endswith("/.well-known/oauth-protected-resource/mcp")


@pytest.mark.parametrize("flags, which, words", [
    (("--prm-malformed",), "protected-resource", "not JSON"),
    (("--as-malformed", "not-json"), "authorization-server", "not JSON"),
    (("--as-malformed", "missing-token-endpoint"), "authorization-server", "'token_endpoint' is missing"),
    (("--as-malformed", "issuer-mismatch"), "authorization-server", "not the issuer it was discovered for"),
], ids=["prm-not-json", "as-not-json", "as-no-token-endpoint", "as-issuer-mismatch"])
def test_malformed_metadata(flags: tuple[str, ...], which: str, words: str) -> None:
    with auth_server(*flags) as url:
        result, doc = probe_json(url)
    assert result.exit_code == 7
    malformed = [f for f in doc["findings"] if f["code"] == "auth-metadata-malformed"]
    assert malformed and malformed[0]["severity"] == "error"
    assert malformed[0]["detail"]["which"] == which and words in malformed[0]["message"]


def test_resource_mismatch() -> None:
    with auth_server("--resource-mismatch") as url:
        _, doc = probe_json(url)
    mismatch = finding(doc, "auth-resource-mismatch")
    assert mismatch["severity"] == "error" and mismatch["detail"]["resource"].endswith("/other")
    assert diagnosis_of(doc)["protectedResourceMetadata"]["resourceMatches"] is False


def test_no_pkce_is_diagnosed_and_login_refuses() -> None:
    with auth_server("--no-pkce") as url:
        _, doc = probe_json(url)
        refused = login(url, "--json")
    assert finding(doc, "auth-no-pkce")["detail"]["pkceMethods"] is None
    assert refused.exit_code == 7
    out = json.loads(refused.stdout)
    assert out["ok"] is False and "auth-no-pkce" in [f["code"] for f in out["findings"]]
    assert "PKCE S256" in refused.stderr


def test_no_registration_needs_a_pre_registered_client() -> None:
    with auth_server("--no-dcr", "--client", "pre-public") as url:
        _, doc = probe_json(url)
        refused = login(url)
        done = login(url, "--client-id", "pre-public", "--json")
    assert finding(doc, "auth-no-registration")["severity"] == "warning"
    assert refused.exit_code == 7 and "--client-id" in refused.stderr
    assert done.exit_code == 0, done.stderr
    data = json.loads(done.stdout)["login"]
    assert data["registration"] == "pre-registered" and data["token"]["clientId"] == "pre-public"


def test_no_challenge() -> None:
    with auth_server("--no-challenge") as url:
        _, doc = probe_json(url)
    assert finding(doc, "auth-no-challenge")["severity"] == "warning"
    # Discovery still works through the well-known URIs.
    assert diagnosis_of(doc)["protectedResourceMetadata"]["attempts"][0]["source"] == \
        "path-aware well-known (RFC 9728)"


# ----- login flows -----


def test_authorization_code_flow_status_probe_logout(config_home: Path) -> None:
    with auth_server() as url:
        result = login(url)
        assert result.exit_code == 0, result.stderr
        assert "Logged in to" in result.stdout and "(dynamic client" in result.stdout
        assert "code_challenge_method=S256" in result.stderr and "resource=" in result.stderr
        record = stored(url)
        assert record is not None and record.scope == "mcp:read" and record.refresh_token
        assert record.resource == url and record.client["registration"] == "dynamic"
        assert stat.S_IMODE(record.path.stat().st_mode) == 0o600
        assert stat.S_IMODE(record.path.parent.stat().st_mode) == 0o700
        assert record.path.parent == config_home / "mcpprobe" / "tokens"
        assert record.access_token not in result.stdout + result.stderr

        target, resolved = authorize_target(build_target(url, []), AuthSettings())
        assert resolved.source == "stored"
        header = dict(target.headers)["Authorization"]
        ok = run_cli(["probe", "--json", "--protocol", "legacy", "--header", f"Authorization: {header}", url])
        assert ok.exit_code == 0, ok.stdout
        assert ok.json["serverInfo"]["name"] == "auth-fixture"
        assert record.access_token not in ok.stdout + ok.stderr

        status = run_cli_auth(["auth", "status", "--json", url])
        assert status.exit_code == 0
        shown = json.loads(status.stdout)["tokens"][0]
        assert shown["state"] == "valid" and shown["fileMode"] == "0o600" and shown["hasRefreshToken"]
        assert record.access_token not in status.stdout and record.refresh_token not in status.stdout

        assert run_cli_auth(["auth", "logout", url]).exit_code == 0
        assert stored(url) is None
        assert run_cli_auth(["auth", "status", url]).exit_code == 7


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="names open files through /proc")
def test_a_token_file_is_private_from_creation_and_synced_before_and_after_its_rename(
        config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A crash or power cut leaves the previous token whole, and no moment shows the new one to others:
    the file is 0600 while written (whatever the umask, and although the file it replaces was 0644),
    synced before it is renamed into place, and the directory is synced after."""
    store = TokenStore()
    url = "https://mcp.example.test/mcp"
    path = store.path_for(url)
    path.parent.mkdir(parents=True)
    path.write_text('{"old": true}')
    path.chmod(0o644)  # e.g. copied in from another machine
    events: list[tuple[str, ...]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:  # records, then syncs for real
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}"), oct(mode)))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append(("replace", os.fspath(src), os.fspath(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    old_umask = os.umask(0)
    try:
        store.save(TokenRecord(server_url=url, access_token="new-token"))
    finally:
        os.umask(old_umask)
    renames = [e for e in events if e[0] == "replace"]
    assert len(renames) == 1 and renames[0][2] == str(path), events
    temp = renames[0][1]
    assert events.index(("fsync", temp, "0o600")) < events.index(renames[0]), events
    assert events.index(("fsync", str(path.parent), "0o700")) > events.index(renames[0]), events
    assert all(e[2] == "0o600" for e in events if e[0] == "fsync" and e[1] != str(path.parent)), events
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["accessToken"] == "new-token"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]


def run_cli_auth(args: list[str]) -> Result:
    return run_cli(args)


def test_refresh_when_expired() -> None:
    # Tokens of 20 s are within the 30 s expiry margin: the stored token counts as expired at once.
    with auth_server("--token-ttl", "20") as url:
        assert login(url).exit_code == 0
        before = stored(url)
        target, resolved = authorize_target(build_target(url, []), AuthSettings())
        after = stored(url)
        assert resolved.source == "refreshed"
        assert after.access_token != before.access_token and after.refresh_token != before.refresh_token
        assert dict(target.headers)["Authorization"] == f"Bearer {after.access_token}"
        ok = run_cli(["probe", "--protocol", "legacy", "--header", f"Authorization: Bearer {after.access_token}", url])
        assert ok.exit_code == 0


def _block_token_directory() -> None:
    """Make the token directory impossible to create (a file where its parent should be), so that
    storing a token fails whoever runs the test, root included."""
    parent = TokenStore().directory.parent
    shutil.rmtree(parent, ignore_errors=True)
    parent.parent.mkdir(parents=True, exist_ok=True)
    parent.write_text("not a directory")


def test_a_login_whose_token_cannot_be_stored_says_so_and_exits_2() -> None:
    """The login worked, but nothing is kept for the next run: the result is shown, with the reason
    the token could not be stored, exit 2 (as an output file that cannot be written), never a crash."""
    env = {"CI_SECRET": CLIENT_SECRET}
    with auth_server("--client", f"ci-client:{CLIENT_SECRET}") as url:
        _block_token_directory()
        result = login(url, "--client-id", "ci-client", "--client-secret-env", "CI_SECRET", "--json", env=env)
        assert result.exit_code == 2, result.stderr
        doc = json.loads(result.stdout)
        assert doc["exitCode"] == 2 and doc["ok"] is False and doc["login"]["stored"] is None
        assert "cannot create the token directory" in doc["storeError"]
        assert "error: the token could not be stored" in result.stderr
        human = login(url, "--client-id", "ci-client", "--client-secret-env", "CI_SECRET", env=env)
        assert human.exit_code == 2 and "stored        no (the token could not be stored)" in human.stdout
        assert CLIENT_SECRET not in human.stdout + human.stderr + result.stdout + result.stderr


def _deep_config(tmp_path: Path) -> Path:
    """A config directory whose token files' paths are a few characters under PATH_MAX (4096): a
    token file there reads, but the temporary file a write makes next to it cannot be named
    (ENAMETOOLONG: a real failure of the system, for any user, root too)."""
    path = tmp_path
    while len(str(path)) < 4030 - 250:
        path = path / ("d" * 200)
    path = path / ("e" * (4030 - len(str(path)) - 1))  # tokens/ is 4046 long, a token file 4084, its temp 4106
    path.mkdir(parents=True)
    return path


def test_a_refreshed_token_that_cannot_be_stored_is_used_for_this_run(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored token refreshed before a probe, whose renewal cannot be written back: the probe runs
    with the new token, and a note says it is this run's only. The token directory is moved where
    its files' paths are a few characters under PATH_MAX: they read, but the write's temporary file
    next to them cannot be named. (A link to such a file is no longer read at all: a token file is
    never read through a link.)"""
    with auth_server("--token-ttl", "20") as url:
        assert login(url).exit_code == 0
        tokens = stored(url).path.parent
        deep = _deep_config(tmp_path)
        (deep / "mcpprobe").mkdir()
        tokens.rename(deep / "mcpprobe" / "tokens")
        monkeypatch.setenv("XDG_CONFIG_HOME", str(deep))
        before = stored(url).access_token
        result = run_cli(["probe", "--json", "--protocol", "legacy", url])
        assert result.exit_code == 0, result.stderr
        assert "the new token could not be stored" in result.stderr and "used for this run only" in result.stderr
        assert stored(url).access_token == before  # the file is as it was: nothing half-written


def test_client_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"CI_SECRET": CLIENT_SECRET}
    with auth_server("--client", f"ci-client:{CLIENT_SECRET}") as url:
        result = login(url, "--client-id", "ci-client", "--client-secret-env", "CI_SECRET", "--json", env=env)
        assert result.exit_code == 0, result.stderr
        assert CLIENT_SECRET not in result.stdout + result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["flow"] == "client_credentials" and data["token"]["hasRefreshToken"] is False
        record = stored(url)
        assert "client_secret" not in record.client and CLIENT_SECRET not in record.path.read_text()

        # In CI, without the cache: a fresh grant, nothing written.
        TokenStore().delete(url)
        monkeypatch.setenv("CI_SECRET", CLIENT_SECRET)
        settings = AuthSettings(client_id="ci-client", client_secret_env="CI_SECRET", no_auth_cache=True)
        target, resolved = authorize_target(build_target(url, []), settings)
        assert resolved.source == "client-credentials" and stored(url) is None
        ok = run_cli(["probe", "--protocol", "legacy", "--header",
                      f"Authorization: {dict(target.headers)['Authorization']}", url])
        assert ok.exit_code == 0

        bad = login(url, "--client-id", "ci-client", "--client-secret-env", "CI_SECRET", env={"CI_SECRET": "nope1234"})
        assert bad.exit_code == 7 and "nope1234" not in bad.stdout + bad.stderr


def test_step_up_on_insufficient_scope_once() -> None:
    with auth_server("--required-scope", "mcp:read", "--required-scope", "mcp:admin") as url:
        result = login(url, "--scope", "mcp:read", "--json")
        assert result.exit_code == 0, result.stderr
        assert result.stderr.count("/authorize?") == 2  # the first login, then one step-up
        data = json.loads(result.stdout)["login"]
        assert data["stepUp"] is True
        assert set(stored(url).scope.split()) >= {"mcp:read", "mcp:admin"}


def test_insufficient_scope_is_diagnosed() -> None:
    with auth_server("--client", f"ci:{CLIENT_SECRET}", "--required-scope", "mcp:admin",
                     "--no-challenge-scope") as url:
        async def token() -> str:
            from mcpprobe.auth.tokens import token_request

            data = await token_request(url.rsplit("/", 1)[0] + "/token",
                                       {"grant_type": "client_credentials", "scope": "mcp:read", "resource": url},
                                       {"client_id": "ci", "token_endpoint_auth_method": "client_secret_basic"},
                                       client_secret=CLIENT_SECRET)
            return data["access_token"]
        access = anyio.run(token)
        _, doc = probe_json(url, "--header", f"Authorization: Bearer {access}")
    scope = finding(doc, "auth-insufficient-scope")
    assert scope["severity"] == "error" and scope["detail"]["scope"] == "mcp:read mcp:admin"
    assert "--scope 'mcp:read mcp:admin'" in scope["message"]
    assert doc["exitCode"] == 7


def test_client_id_metadata_document() -> None:
    cimd = "https://client.example/mcpprobe/client.json"
    with auth_server("--cimd", cimd, "--no-dcr") as url:
        _, doc = probe_json(url)
        result = login(url, "--client-metadata-url", cimd, "--json")
    assert finding(doc, "auth-server-metadata")["detail"]["registration"]["clientIdMetadataDocument"] is True
    assert "auth-no-registration" not in [f["code"] for f in doc["findings"]]
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)["login"]
    assert data["registration"] == "client-id-metadata-document" and data["token"]["clientId"] == cimd


def test_login_on_a_server_without_auth() -> None:
    with http_server([PY, str(ROOT / "tests" / "fixtures" / "fixture_server.py"), "full", "--http"]) as url:
        result = login(url)
    assert result.exit_code == 0 and "no login needed" in result.stdout


# ----- static credentials and options -----


def test_bearer_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "tok-from-env-123")
    target, resolved = authorize_target(build_target("https://x.example/mcp", []), AuthSettings(bearer_env="MY_TOKEN"))
    assert resolved.source == "bearer-env" and ("Authorization", "Bearer tok-from-env-123") in target.headers
    assert "tok-from-env-123" in target.secrets()
    with pytest.raises(UsageProblem, match="not set"):
        authorize_target(build_target("https://x.example/mcp", []), AuthSettings(bearer_env="NOPE_UNSET"))
    with pytest.raises(UsageProblem, match="HTTP servers"):
        authorize_target(build_target(None, ["python3"]), AuthSettings(bearer_env="MY_TOKEN"))
    with pytest.raises(UsageProblem, match="give one"):
        authorize_target(build_target("https://x.example/mcp", [], headers=["Authorization: Bearer x"]),
                         AuthSettings(bearer_env="MY_TOKEN"))
    assert AuthSettings.from_config({"bearerEnv": "MY_TOKEN"}).bearer() == "tok-from-env-123"


def test_auth_commands_import_only_click() -> None:
    code = "import mcpprobe.cli.auth, mcpprobe.auth.settings"
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == 0, done.stderr
    names = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    heavy = sorted(n for n in names if n.split(".")[0] in ("mcp", "mcp_types", "httpx2", "pydantic", "rich"))
    assert heavy == []


def test_auth_package_imports_no_click() -> None:
    """Click is the command line's (mcpprobe.cli): every module of mcpprobe.auth loads without it."""
    modules = sorted(p.stem for p in (ROOT / "mcpprobe" / "auth").glob("*.py") if p.stem != "__init__")
    code = f"import sys; import {', '.join('mcpprobe.auth.' + m for m in modules)}; print('click' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_probe_uses_the_stored_token_and_bearer_env_and_config(config_home: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Wired end to end: after `auth login`, a plain `probe URL` is authorized; --bearer-env and a
    config entry's bearerEnv work the same way; the token never shows."""
    with auth_server() as url:
        denied = run_cli(["probe", "--json", "--protocol", "legacy", "--no-auth-cache", url])
        assert denied.exit_code == 7
        assert login(url).exit_code == 0
        token = stored(url).access_token
        plain = run_cli(["probe", "--json", "--protocol", "legacy", url])
        assert plain.exit_code == 0, plain.stderr
        assert token not in plain.stdout + plain.stderr
        ignored = run_cli(["probe", "--json", "--protocol", "legacy", "--no-auth-cache", url])
        assert ignored.exit_code == 7  # --no-auth-cache: the stored token is neither read nor written

        monkeypatch.setenv("PROBE_TOKEN", token)
        by_env = run_cli(["probe", "--json", "--protocol", "legacy", "--no-auth-cache", "--bearer-env", "PROBE_TOKEN",
                          url])
        assert by_env.exit_code == 0, by_env.stderr
        assert token not in by_env.stdout + by_env.stderr

        config = tmp_path / "mcpprobe.yaml"
        config.write_text(f"servers:\n  guarded:\n    url: {url}\n    bearerEnv: PROBE_TOKEN\n")
        by_config = run_cli(["probe", "--json", "--protocol", "legacy", "--no-auth-cache", "--config", str(config),
                             "-s", "guarded"])
        assert by_config.exit_code == 0, by_config.stderr
        assert token not in by_config.stdout + by_config.stderr


def test_a_token_that_expires_mid_list_is_diagnosed_and_the_items_kept() -> None:
    from conftest import fixture_http

    with fixture_http("auth-expires") as url:  # counts requests: discover, initialize, initialized, page 1
        result = run_cli(["probe", "--json", url])
        doc = result.json
    assert result.exit_code == 7
    tools = doc["kinds"]["tools"]
    assert tools["state"] == "incomplete" and [t["name"] for t in tools["items"]] == ["first"]
    assert finding(doc, "list-incomplete")["detail"]["cause"] == "auth"
    assert finding(doc, "auth-challenge")["severity"] == "info"


# ----- issue #12: the edges of login and of a session's token -----


def test_no_token_sent_is_not_called_an_invalid_token() -> None:
    """A server that says error="invalid_token" to a request without any token: the diagnosis must
    not say a token was rejected, and must say how to get one."""
    with auth_server("--error-without-token") as url:
        result, doc = probe_json(url, "--no-auth-cache")
    assert result.exit_code == 7
    assert "auth-invalid-token" not in result.codes()
    challenge = finding(doc, "auth-challenge")
    assert challenge["detail"]["params"]["error"] == "invalid_token" and challenge["detail"]["tokenSent"] is False
    assert "no credentials were sent" in challenge["message"] and f"mcpprobe auth login {url}" in challenge["message"]


def test_login_when_only_a_list_is_protected(config_home: Path) -> None:
    """initialize passes without a token, tools/list does not: login must not say "no login needed"."""
    with auth_server("--open-method", "initialize", "--open-method", "server/discover", "--prm-at", "path") as url:
        denied = run_cli(["probe", "--json", "--no-auth-cache", url])
        assert denied.exit_code == 7
        result = login(url, "--json")
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["notNeeded"] is False and data["why"] == "tools/list: HTTP 401"
        assert data["checked"] == ["initialize", "tools/list"]
        assert run_cli(["probe", "--json", url]).exit_code == 0


def test_login_when_only_calls_are_protected_uses_the_resource_metadata(config_home: Path) -> None:
    """Every list passes without a token; the protected resource metadata says the server is protected."""
    opened = [a for m in ("initialize", "server/discover", "tools/list") for a in ("--open-method", m)]
    with auth_server(*opened, "--prm-at", "path") as url:
        result = login(url, "--json")
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["why"].startswith("protected resource metadata at ") and data["notNeeded"] is False
        assert stored(url).access_token
        call = run_cli(["call", "--yes", "--json", "whoami", url])
        assert call.exit_code == 0, call.stdout + call.stderr


def test_login_force_and_no_login_needed() -> None:
    with http_server([PY, str(ROOT / "tests" / "fixtures" / "fixture_server.py"), "full", "--http"]) as url:
        needed = login(url, "--json")
        forced = login(url, "--force")
    assert needed.exit_code == 0 and json.loads(needed.stdout)["login"]["notNeeded"] is True
    # --force goes ahead, and says why it cannot: this server has no authorization server at all.
    assert forced.exit_code == 7 and "--force" in forced.stderr


def test_login_against_a_server_that_speaks_only_2026_07_28(config_home: Path) -> None:
    with auth_server("--modern-only") as url:
        result = login(url, "--json")
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["checked"] == ["server/discover", "tools/list"]
        assert stored(url).access_token
        probe = run_cli(["probe", "--json", url])
        assert probe.exit_code == 0, probe.stdout


def test_confidential_client_in_the_code_flow(config_home: Path) -> None:
    """A pre-registered confidential client: --grant authorization_code sends its secret, the way the
    authorization server supports (here only client_secret_post); the secret is never stored."""
    env = {"APP_SECRET": CLIENT_SECRET}
    with auth_server("--client", f"conf-app:{CLIENT_SECRET}", "--no-dcr",
                     "--token-auth-methods", "client_secret_post") as url:
        public_only = login(url, "--client-id", "conf-app")
        assert public_only.exit_code == 7 and "invalid_client" in public_only.stderr
        result = login(url, "--client-id", "conf-app", "--client-secret-env", "APP_SECRET",
                       "--grant", "authorization_code", "--json", env=env)
        assert result.exit_code == 0, result.stderr
        assert "/authorize?" in result.stderr and CLIENT_SECRET not in result.stdout + result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["flow"] == "authorization_code" and data["registration"] == "pre-registered"
        record = stored(url)
        assert record.refresh_token and CLIENT_SECRET not in record.path.read_text()
        assert record.client["token_endpoint_auth_method"] == "client_secret_post"
        usage = login(url, "--grant", "client_credentials")
        assert usage.exit_code == 2 and "--client-secret-env" in usage.stderr


def test_login_without_authorization_server_metadata_uses_the_default_endpoints(config_home: Path) -> None:
    with auth_server("--prm-at", "none", "--as-doc", "none") as url:
        result = login(url, "--json")
        assert result.exit_code == 0, result.stderr
        assert "2025-03-26 default endpoints" in result.stderr
        record = stored(url)
        assert record.token_endpoint == url.rsplit("/", 1)[0] + "/token" and record.client["registration"] == "dynamic"
        assert run_cli(["probe", "--json", url]).exit_code == 0


def test_step_up_is_bounded_when_the_server_keeps_refusing() -> None:
    # mcp:never is a scope the authorization server never grants: every token lacks it.
    with auth_server("--required-scope", "mcp:read", "--required-scope", "mcp:never") as url:
        result = login(url, "--json", timeout=120)
    assert result.exit_code == 7
    assert result.stderr.count("/authorize?") == 2  # the login, then exactly one step-up
    assert "even after 1 step-up" in result.stderr and stored(url) is None


def test_a_token_that_expires_mid_session_is_refreshed_once_and_masked(config_home: Path) -> None:
    """The stored token works for 6 requests (4 of them login's check), then the server answers 401: the
    run refreshes it with
    the refresh token, resends, stores the new token, and masks it where the server echoes it."""
    with auth_server("--token-uses", "6") as url:
        assert login(url).exit_code == 0
        before = stored(url)
        result = run_cli(["call", "--yes", "--json", "--protocol", "legacy", "whoami", url])
        after = stored(url)
        assert result.exit_code == 0, result.stdout + result.stderr
        assert after.access_token != before.access_token and after.refresh_token != before.refresh_token
        text = json.dumps(result.json)
        assert "called with Bearer [redacted]" in text or "called with [redacted]" in text
        for secret in (before.access_token, after.access_token, after.refresh_token):
            assert secret not in result.stdout + result.stderr


def test_a_token_that_cannot_be_refreshed_mid_session_ends_with_exit_7(config_home: Path) -> None:
    with auth_server("--token-uses", "6") as url:
        assert login(url).exit_code == 0
        record = stored(url)
        record.refresh_token = "rt-not-a-real-one-1234"
        TokenStore().save(record)
        result = run_cli(["probe", "--json", "--protocol", "legacy", url])
    assert result.exit_code == 7
    assert finding(result.json, "auth-invalid-token")["severity"] == "error"


def test_a_token_that_expires_during_a_watch_is_renewed(config_home: Path) -> None:
    """Keep-alive pings wear the token out during the watch; it is renewed and the watch goes on."""
    with auth_server("--token-uses", "6") as url:
        assert login(url).exit_code == 0
        before = stored(url)
        proc = subprocess.run([PY, "-m", "mcpprobe", "watch", "--json", "--keepalive", "0.3", "--duration", "4",
                               "--protocol", "legacy", url], capture_output=True, text=True, timeout=60, cwd=ROOT)
        after = stored(url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert after.access_token != before.access_token
    end = [json.loads(line) for line in proc.stdout.splitlines() if '"end"' in line]
    assert end and end[-1]["exitCode"] == 0
    assert before.access_token not in proc.stdout + proc.stderr and after.access_token not in proc.stdout + proc.stderr


def test_logout_revokes_where_the_authorization_server_offers_it(config_home: Path) -> None:
    with auth_server() as url:
        assert login(url).exit_code == 0
        record = stored(url)
        assert record.revocation_endpoint == url.rsplit("/", 1)[0] + "/revoke"
        header = f"Authorization: Bearer {record.access_token}"
        assert run_cli(["probe", "--protocol", "legacy", "--no-auth-cache", "--header", header, url]).exit_code == 0
        out = run_cli_auth(["auth", "logout", url])
        assert out.exit_code == 0 and "revoked (refresh_token, access_token) and forgotten" in out.stdout
        assert record.access_token not in out.stdout + out.stderr and stored(url) is None
        # The authorization server no longer knows the token: the server refuses it.
        after = run_cli(["probe", "--protocol", "legacy", "--no-auth-cache", "--header", header, url])
        assert after.exit_code == 7
    with auth_server("--no-revocation") as url:
        assert login(url).exit_code == 0
        out = run_cli_auth(["auth", "logout", url])
        assert out.exit_code == 0 and "offers no revocation" in out.stdout and stored(url) is None


def test_client_credentials_step_up_on_a_call_once(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tools/call needs mcp:write as well: the client-credentials token is granted again for the joined
    scopes and the call resent; without the secret there is no way to, and the 403 is diagnosed."""
    env = {"CI_SECRET": CLIENT_SECRET}
    with auth_server("--client", f"ci:{CLIENT_SECRET}", "--call-scope", "mcp:write") as url:
        done = login(url, "--client-id", "ci", "--client-secret-env", "CI_SECRET", env=env)
        assert done.exit_code == 0, done.stderr
        assert stored(url).scope == "mcp:read"
        refused = run_cli(["call", "--yes", "--json", "--protocol", "legacy", "whoami", url])
        assert refused.exit_code == 7
        assert finding(refused.json, "auth-insufficient-scope")["detail"]["scope"] == "mcp:read mcp:write"
        monkeypatch.setenv("CI_SECRET", CLIENT_SECRET)
        called = run_cli(["call", "--yes", "--json", "--protocol", "legacy", "--client-id", "ci", "--client-secret-env",
                          "CI_SECRET", "whoami", url])
        assert called.exit_code == 0, called.stdout
        assert set(stored(url).scope.split()) == {"mcp:read", "mcp:write"}
        assert CLIENT_SECRET not in called.stdout + called.stderr
    with auth_server("--client", f"ci:{CLIENT_SECRET}", "--call-scope", "mcp:never") as url:
        assert login(url, "--client-id", "ci", "--client-secret-env", "CI_SECRET", env=env).exit_code == 0
        bounded = run_cli(["call", "--yes", "--json", "--protocol", "legacy", "--client-id", "ci",
                           "--client-secret-env",
                           "CI_SECRET", "whoami", url])
        assert bounded.exit_code == 7  # one step-up, still refused: no loop


HEADLESS_BROWSER = f"{PY} {ROOT / 'tests' / 'fixtures' / 'headless_browser.py'} %s"


def test_code_flow_step_up_on_a_call_in_the_browser_once(config_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tools/call needs mcp:write as well, which login (the handshake and the lists) never met: the call
    logs in again in the browser ($BROWSER, a stand-in here) for the joined scopes and is resent once;
    with no browser to open, the 403 keeps its diagnosis and exit 7; a server that still refuses after
    the one step-up ends the run (exit 7), no loop."""
    with auth_server("--call-scope", "mcp:write") as url:
        assert login(url).exit_code == 0
        first = stored(url)
        assert first.scope == "mcp:read"
        monkeypatch.delenv("BROWSER", raising=False)
        refused = run_subprocess(["call", "--yes", "--json", "--protocol", "legacy", "whoami", url])
        assert refused.exit_code == 7, refused.stdout
        assert finding(refused.json, "auth-insufficient-scope")["detail"]["scope"] == "mcp:read mcp:write"
        assert "/authorize?" not in refused.stderr
        monkeypatch.setenv("BROWSER", HEADLESS_BROWSER)
        for mode in (["--json"], []):
            called = run_subprocess(["call", "--yes", "--protocol", "legacy", *mode, "whoami", url])
            assert called.exit_code == 0, called.stdout + called.stderr
            assert called.stderr.count("/authorize?") == 1 - (mode != ["--json"])  # stepped up once, then stored
            after = stored(url)
            assert set(after.scope.split()) == {"mcp:read", "mcp:write"}
            for secret in (*first.secrets(), *after.secrets()):
                assert secret not in called.stdout + called.stderr
    with auth_server("--call-scope", "mcp:never") as url:
        assert login(url).exit_code == 0
        bounded = run_subprocess(["call", "--yes", "--json", "--protocol", "legacy", "whoami", url])
        assert bounded.exit_code == 7, bounded.stdout
        assert bounded.stderr.count("/authorize?") == 1  # one step-up, still refused: no loop
        assert finding(bounded.json, "auth-insufficient-scope")


def test_code_flow_step_up_sends_the_targets_other_headers(config_home: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A gateway in front of the server wants an API key on every request: the login a 403
    insufficient_scope starts in the middle of a call meets the server with it too, as `auth login -H`
    did, instead of failing on the gateway's own 403."""
    gateway = ("-H", "X-Api-Key: k1")
    with auth_server("--call-scope", "mcp:write", "--gateway-header", "X-Api-Key:k1") as url:
        assert login(url, *gateway).exit_code == 0
        monkeypatch.setenv("BROWSER", HEADLESS_BROWSER)
        called = run_subprocess(["call", "--yes", "--json", "--protocol", "legacy", *gateway, "whoami", url])
        assert called.exit_code == 0, called.stdout + called.stderr
        assert called.stderr.count("/authorize?") == 1
        assert set(stored(url).scope.split()) == {"mcp:read", "mcp:write"}


def _key_pair(tmp_path: Path, kind: str) -> tuple[Path, Path, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if kind == "rsa" else \
        ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    (tmp_path / f"{kind}.pem").write_text(private)
    (tmp_path / f"{kind}.pub").write_text(public)
    return tmp_path / f"{kind}.pem", tmp_path / f"{kind}.pub", private


@pytest.mark.parametrize("kind", ["rsa", "ec"])
def test_private_key_jwt_client_credentials(config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            kind: str) -> None:
    """RFC 7523 client authentication: the key from a file (login) or the environment (a probe that
    gets its token on the spot); never stored, never printed."""
    key_file, public, private = _key_pair(tmp_path, kind)
    body = private.splitlines()[1]
    with auth_server("--jwt-client", f"ci-jwt:{public}") as url:
        result = login(url, "--client-id", "ci-jwt", "--client-key-file", str(key_file), "--json")
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["flow"] == "client_credentials"
        record = stored(url)
        assert record.client["token_endpoint_auth_method"] == "private_key_jwt"
        assert body not in record.path.read_text() and body not in result.stdout + result.stderr

        TokenStore().delete(url)
        monkeypatch.setenv("CI_KEY", private)
        probe = run_cli(["probe", "--json", "--no-auth-cache", "--client-id", "ci-jwt", "--client-key-env", "CI_KEY",
                         url])
        assert probe.exit_code == 0, probe.stdout + probe.stderr
        assert body not in probe.stdout + probe.stderr

        (tmp_path / "other").mkdir()
        other_file, _, _ = _key_pair(tmp_path / "other", kind)  # a key the server does not know
        refused = login(url, "--client-id", "ci-jwt", "--client-key-file", str(other_file))
        assert refused.exit_code == 7 and "invalid_client" in refused.stderr
    with auth_server() as url:  # no private_key_jwt offered
        refused = login(url, "--client-id", "ci-jwt", "--client-key-file", str(key_file))
        assert refused.exit_code == 7 and "private_key_jwt" in refused.stderr


def test_a_renewed_token_stays_out_of_every_output_mode(config_home: Path, tmp_path: Path) -> None:
    """Each run renews the token once (it works for one tools/list): neither the old nor the new token
    shows in any output mode, the trace included."""
    with auth_server("--token-lists", "1") as url:
        assert login(url).exit_code == 0
        for mode in ([], ["--json"], ["--trace", "-"], ["--trace", "-", "--json"], ["--format", "junit"],
                     ["--format", "openmetrics"], ["-v"]):
            before = stored(url)
            result = run_cli(["probe", "--protocol", "legacy", *mode, url])
            after = stored(url)
            assert result.exit_code == 0, (mode, result.stdout + result.stderr)
            assert after.access_token != before.access_token, mode
            for secret in (*before.secrets(), *after.secrets()):
                assert secret not in result.stdout + result.stderr, mode


def test_dpop_bound_tokens_with_nonces(config_home: Path) -> None:
    """RFC 9449: the token endpoint and the MCP endpoint each demand a nonce first; login proves its
    key through both, the token is stored bound to that key, later runs prove it on every request, a
    refresh proves it too, and the key never shows."""
    with auth_server("--dpop", "--token-lists", "1") as url:
        plain = login(url)
        assert plain.exit_code == 7  # without --dpop the token endpoint refuses: no proof
        result = login(url, "--dpop", "--json")
        assert result.exit_code == 0, result.stderr
        record = stored(url)
        assert record.token_type == "DPoP" and record.dpop_key and "PRIVATE KEY" in record.dpop_key
        assert json.loads(result.stdout)["login"]["token"]["tokenType"] == "DPoP"
        key_line = record.dpop_key.splitlines()[1]
        # The bearer form of the same token is refused: it is bound to the key.
        as_bearer = run_cli(["probe", "--protocol", "legacy", "--no-auth-cache", "--header",
                             f"Authorization: Bearer {record.access_token}", url])
        assert as_bearer.exit_code == 7
        # A run: one tools/list per token, so the token is refreshed (with a proof) mid-run.
        probe = run_cli(["probe", "--json", "--protocol", "legacy", "--trace", "-", url])
        assert probe.exit_code == 0, probe.stdout + probe.stderr
        after = stored(url)
        assert after.access_token != record.access_token and after.dpop_key == record.dpop_key
        for secret in (*record.secrets(), *after.secrets(), key_line):
            assert secret not in probe.stdout + probe.stderr


def test_cross_app_access_with_an_id_jag(config_home: Path, tmp_path: Path) -> None:
    """Enterprise-managed authorization: the ID token is exchanged at the IdP for an ID-JAG, which the
    MCP authorization server takes in the jwt-bearer grant. No secret, ID token or ID-JAG shows."""
    id_token = "idt-alice-" + "x" * 24
    idp_secret = "idp-secret-value-0815"
    env = {"APP_SECRET": CLIENT_SECRET, "IDP_SECRET": idp_secret, "ID_TOKEN": id_token}
    with auth_server("--client", f"mcp-app:{CLIENT_SECRET}", "--idp-id-token", id_token,
                     "--idp-client", f"idp-app:{idp_secret}") as url:
        base = url.rsplit("/", 1)[0]
        common = ["--grant", "cross_app_access", "--client-id", "mcp-app", "--client-secret-env", "APP_SECRET",
                  "--issuer", base, "--idp-token-endpoint", base + "/idp/token", "--idp-client-id", "idp-app",
                  "--idp-client-secret-env", "IDP_SECRET"]
        result = login(url, *common, "--id-token-env", "ID_TOKEN", "--json", env=env)
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["flow"] == "cross_app_access" and data["checked"] == ["initialize", "tools/list"]
        record = stored(url)
        assert record.grant == "cross_app_access" and record.token_endpoint == base + "/token"
        text = record.path.read_text()
        for secret in (CLIENT_SECRET, idp_secret, id_token):
            assert secret not in result.stdout + result.stderr and secret not in text
        assert run_cli(["probe", "--json", url]).exit_code == 0

        token_file = tmp_path / "id-token"
        token_file.write_text("idt-someone-else-0000000000\n")
        refused = login(url, *common, "--id-token-file", str(token_file), env=env)
        assert refused.exit_code == 7 and "identity provider refused" in refused.stderr
        assert "invalid_grant" in refused.stderr
        usage = login(url, "--grant", "cross_app_access", "--client-id", "mcp-app")
        assert usage.exit_code == 2 and "--idp-token-endpoint" in usage.stderr
        # Without --issuer: the authorization server the protected resource metadata names.
        found = login(url, *[a for a in common if a not in ("--issuer", base)], "--id-token-env", "ID_TOKEN",
                      env=env)
        assert found.exit_code == 0, found.stderr


def test_the_flow_table_names_tests_that_exist() -> None:
    """docs/auth.md's table says which test proves each flow: every name there is a test here."""
    import re

    page = (ROOT / "docs" / "auth.md").read_text()
    table = page.split("## Flows at a glance", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`(test_[a-z0-9_]+)`", table))
    here = {name for name in globals() if name.startswith("test_")}
    assert named and named <= here, sorted(named - here)


# ----- what a monitor sees of the token -----


def _metric(text: str, name: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def test_openmetrics_say_when_the_stored_token_expires_and_whether_it_renews(config_home: Path) -> None:
    """A stored token from `auth login`: its expiry and its refresh token are known, so a monitor can
    alert ahead of the 401 instead of after it."""
    with auth_server("--token-ttl", "3600") as url:
        assert login(url).exit_code == 0
        record = stored(url)
        result = run_cli(["probe", "--format", "openmetrics", "--protocol", "legacy", url])
    assert result.exit_code == 0, result.stderr
    assert _metric(result.stdout, "mcpprobe_auth_token_expiry_timestamp_seconds") == round(record.expires_at, 3)
    assert _metric(result.stdout, "mcpprobe_auth_token_renewable") == 1
    assert record.access_token not in result.stdout


def _jwt(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.c2lnbmF0dXJl"


@pytest.mark.parametrize("token, expiry", [(_jwt({"sub": "ci", "exp": 1893456000}), 1893456000),
                                           (_jwt({"sub": "ci"}), None), ("opaque-token-value", None)])
def test_a_given_tokens_expiry_is_read_from_its_jwt_claims(token: str, expiry: float | None) -> None:
    """--bearer-env: mcpprobe cannot renew such a token; its expiry is known when it is a JWT."""
    with fixture_http("full") as url:
        result = run_cli(["probe", "--format", "openmetrics", "--bearer-env", "CI_TOKEN", url],
                         env={"CI_TOKEN": token})
    assert result.exit_code == 0, result.stderr
    assert _metric(result.stdout, "mcpprobe_auth_token_expiry_timestamp_seconds") == expiry
    assert _metric(result.stdout, "mcpprobe_auth_token_renewable") == 0


# ----- authorization servers: credentials bound to their issuer, a server that moves -----


def _logged(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_tokens_are_keyed_by_issuer_and_an_old_store_file_is_still_read(config_home: Path) -> None:
    """Two authorization servers of one server URL keep a file each (MCP 2026-07-28: credentials "keyed
    by the authorization server's issuer identifier"); the newest is the one in use. A file of the
    earlier layout (named by the URL alone) still serves a probe, and is re-keyed when its record is
    stored again; a stray file in the directory breaks nothing."""
    with auth_server() as url:
        assert login(url).exit_code == 0
        store = TokenStore()
        record = stored(url)
        issuer = url.rsplit("/", 1)[0]
        assert record.issuer == issuer and record.path == store.path_for(url, issuer)
        assert record.path != store.path_for(url)
        # As an earlier mcpprobe stored it: one file per URL.
        legacy = store.path_for(url)
        record.path.rename(legacy)
        (legacy.parent / "0000stray.json").write_text('{"old": true}')
        (legacy.parent / "0001broken.json").write_text("{not json")
        assert stored(url).path == legacy
        probe = run_cli(["probe", "--json", "--protocol", "legacy", url])
        assert probe.exit_code == 0, probe.stdout + probe.stderr
        status = run_cli_auth(["auth", "status", "--json", url])
        assert status.exit_code == 0 and json.loads(status.stdout)["tokens"][0]["issuer"] == issuer

        other = TokenRecord(server_url=url, access_token="at-of-another-issuer-0001", issuer="https://as2.example",
                            obtained_at=record.obtained_at + 10)
        store.save(other)
        again = stored(url)
        assert again.access_token == other.access_token  # the newest is in use
        assert store.load(url, issuer).access_token == record.access_token  # not overwritten
        assert store.load(url, "https://as2.example/").access_token == other.access_token  # RFC 8414 3.3
        assert legacy.exists()  # another issuer's record: left as it was
        store.save(store.load(url, issuer))  # stored again: re-keyed
        assert not legacy.exists() and store.path_for(url, issuer).exists()
        assert {r.issuer for r in store.records(url)} == {issuer, "https://as2.example"}
        shown = json.loads(run_cli_auth(["auth", "status", "--json", url]).stdout)["tokens"]
        assert [t["issuer"] for t in shown] == ["https://as2.example", issuer]
        out = run_cli_auth(["auth", "logout", "--no-revoke", url])
        assert out.exit_code == 0 and store.records(url) == []
        assert (legacy.parent / "0000stray.json").exists()


def test_login_registers_with_the_new_authorization_server_when_the_server_moves(
        config_home: Path, tmp_path: Path) -> None:
    """The server moves to another authorization server after the first request login's check makes
    with the new token: login sees the 401, reads the metadata naming the new issuer, registers there
    (never presenting the old server's client) and logs in again, once; the token stored is the new
    server's. A pre-registered client cannot move: login says where the server went, exit 7."""
    new_log, old_log = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    with auth_server("--log", str(new_log)) as new_url, \
            auth_server("--migrate-to", new_url, "--migrate-after", "1", "--log", str(old_log)) as url:
        new_issuer, old_issuer = new_url.rsplit("/", 1)[0], url.rsplit("/", 1)[0]
        result = login(url, "--json")
        assert result.exit_code == 0, result.stderr
        assert f"now names the authorization server {new_issuer}" in result.stderr
        assert result.stderr.count("/authorize?") == 2
        data = json.loads(result.stdout)["login"]
        assert data["migratedFrom"] == old_issuer and data["token"]["issuer"] == new_issuer
        record = stored(url)
        assert record.issuer == new_issuer and record.token_endpoint == new_issuer + "/token"
        assert TokenStore().load(url, old_issuer) is None  # the refused token is not kept
        registered_old = [e for e in _logged(old_log) if e["path"] == "/register"]
        registered_new = [e for e in _logged(new_log) if e["path"] == "/register"]
        assert len(registered_old) == 1 and len(registered_new) == 1
        seen_new = json.dumps(_logged(new_log))
        assert record.client["client_id"] in seen_new
        old_clients = {e["form"].get("client_id") for e in _logged(old_log) if e.get("form")} - {None}
        assert old_clients and not any(c in seen_new for c in old_clients)
        assert run_cli(["probe", "--json", "--protocol", "legacy", url]).exit_code == 0
    with auth_server("--client", "pre-app") as new_url, \
            auth_server("--client", "pre-app", "--migrate-to", new_url, "--migrate-after", "1") as url:
        refused = login(url, "--client-id", "pre-app")
        assert refused.exit_code == 7, refused.stderr
        assert f"now names the authorization server {new_url.rsplit('/', 1)[0]}" in refused.stderr
        assert "register a client with" in refused.stderr and refused.stderr.count("/authorize?") == 1


def test_a_command_follows_the_server_to_its_new_authorization_server(
        config_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored token refused because the server moved: without a browser, exit 7 and the
    auth-server-changed finding naming the new issuer and the login command; with one ($BROWSER, a
    stand-in here), the command registers and logs in with the new server, resends, and keeps the
    new token beside the old one (two issuers, two files); the next run uses it without a login, and
    so does a run that loads the old server's token first."""
    new_log = tmp_path / "new.jsonl"
    with auth_server("--log", str(new_log)) as new_url, auth_server("--migrate-to", new_url) as url:
        new_issuer, old_issuer = new_url.rsplit("/", 1)[0], url.rsplit("/", 1)[0]
        assert login(url).exit_code == 0
        first = stored(url)
        assert first.issuer == old_issuer
        assert httpx2.post(old_issuer + "/fixture/migrate", timeout=10).json()["moved"] is True
        monkeypatch.delenv("BROWSER", raising=False)
        for mode in (["--json"], []):
            refused = run_subprocess(["probe", "--protocol", "legacy", *mode, url])
            assert refused.exit_code == 7, refused.stdout + refused.stderr
            assert "/authorize?" not in refused.stderr
            assert f"mcpprobe auth login {url}" in refused.stdout and new_issuer in refused.stdout
        changed = finding(run_subprocess(["probe", "--json", "--protocol", "legacy", url]).json, "auth-server-changed")
        assert changed["severity"] == "error"
        assert changed["detail"]["newIssuer"] == new_issuer and changed["detail"]["issuer"] == old_issuer
        assert not [e for e in _logged(new_log) if e["path"] == "/register"]

        monkeypatch.setenv("BROWSER", HEADLESS_BROWSER)
        called = run_subprocess(["call", "--yes", "--json", "--protocol", "legacy", "whoami", url])
        assert called.exit_code == 0, called.stdout + called.stderr
        assert called.stderr.count("/authorize?") == 1
        assert f"now names the authorization server {new_issuer}" in called.stderr
        after = stored(url)
        assert after.issuer == new_issuer and after.client["registration"] == "dynamic"
        assert after.client["client_id"] != first.client["client_id"]
        kept = TokenStore().load(url, old_issuer)
        assert kept is not None and kept.access_token == first.access_token  # not overwritten
        assert len([e for e in _logged(new_log) if e["path"] == "/register"]) == 1
        for secret in (*first.secrets(), *after.secrets()):
            assert secret not in called.stdout + called.stderr

        monkeypatch.delenv("BROWSER")
        again = run_subprocess(["probe", "--json", "--protocol", "legacy", url])
        assert again.exit_code == 0 and "/authorize?" not in again.stderr
        # The old server's token the newest (a login there since, say): refused, and the stored token of
        # the server the metadata names is used instead, without a browser or a new registration.
        kept.obtained_at = after.obtained_at + 60
        TokenStore().save(kept)
        assert stored(url).issuer == old_issuer
        switched = run_subprocess(["probe", "--json", "--protocol", "legacy", url])
        assert switched.exit_code == 0, switched.stdout + switched.stderr
        assert "/authorize?" not in switched.stderr
        assert len([e for e in _logged(new_log) if e["path"] == "/register"]) == 1


def _workload_jwt(private: str, audience: str, **claims: Any) -> str:
    import time

    import jwt

    now = int(time.time())
    body = {"iss": "https://platform.example", "sub": "system:serviceaccount:ci:probe", "aud": audience,
            "iat": now, "exp": now + 300, "jti": f"jti-{now}", **claims}
    return jwt.encode(body, private, algorithm="ES256")


def test_a_jwt_bearer_grant_with_a_400_digit_expires_in_is_kept_without_an_expiry(config_home: Path,
                                                                                   tmp_path: Path) -> None:
    """The token endpoint's expires_in of 400 digits ended `auth login --grant jwt-bearer` with exit 70
    (OverflowError in float()); it goes through the one reader of expires_in: no known expiry, said."""
    _, public, private = _key_pair(tmp_path, "ec")
    log = tmp_path / "requests.jsonl"
    with auth_server("--workload-key", str(public), "--log", str(log), "--token-ttl", "9" * 400) as url:
        assertion = _workload_jwt(private, url.rsplit("/", 1)[0])
        result = login(url, "--grant", "jwt-bearer", "--assertion-env", "WORKLOAD_JWT", "--json",
                       env={"WORKLOAD_JWT": assertion})
        assert [e["path"] for e in _logged(log)].count("/token") == 1  # the answer was given
        assert result.exit_code == 0, result.stderr
        assert "Traceback" not in result.stderr
        record = stored(url)
        assert record.expires_at is None  # no known expiry: renewed when the server refuses it


def test_jwt_bearer_grant_with_the_workloads_own_jwt(config_home: Path, tmp_path: Path) -> None:
    """Workload identity federation (SEP-1933): the JWT from --assertion-env goes to the token endpoint
    as exactly grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer with assertion=<the JWT> and the
    resource, no client registration, no secret; never printed (not even where the server echoes it),
    never stored. A refused assertion is said, not retried; a missing or empty variable is a usage
    error naming it."""
    _, public, private = _key_pair(tmp_path, "ec")
    log = tmp_path / "requests.jsonl"
    with auth_server("--workload-key", str(public), "--log", str(log)) as url:
        issuer = url.rsplit("/", 1)[0]
        assertion = _workload_jwt(private, issuer)
        result = login(url, "--grant", "jwt-bearer", "--assertion-env", "WORKLOAD_JWT", "--json",
                       env={"WORKLOAD_JWT": assertion})
        assert result.exit_code == 0, result.stderr
        data = json.loads(result.stdout)["login"]
        assert data["flow"] == "jwt-bearer" and data["registration"] == "none"
        [sent] = [e["form"] for e in _logged(log) if e["path"] == "/token"]
        assert sent == {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion,
                        "resource": url, "scope": "mcp:read"}
        assert not [e for e in _logged(log) if e["path"] in ("/register", "/authorize")]
        record = stored(url)
        assert record.grant == "jwt-bearer" and record.issuer == issuer
        assert assertion not in result.stdout + result.stderr and assertion not in record.path.read_text()
        assert run_cli(["probe", "--json", "--protocol", "legacy", url]).exit_code == 0
        human = login(url, "--assertion-env", "WORKLOAD_JWT", env={"WORKLOAD_JWT": assertion})  # the grant implied
        assert human.exit_code == 0 and "JWT bearer grant" in human.stdout and "no client registration" in human.stdout

        log.unlink()
        wrong = _workload_jwt(private, "https://wrong.example")
        refused = login(url, "--grant", "jwt-bearer", "--assertion-env", "WORKLOAD_JWT", "--json",
                        env={"WORKLOAD_JWT": wrong})
        assert refused.exit_code == 7 and "refused the assertion" in refused.stderr
        assert "invalid_grant" in refused.stderr
        assert "bad assertion [redacted]" in refused.stdout + refused.stderr  # the server echoed it: masked
        assert wrong not in refused.stdout + refused.stderr
        assert len([e for e in _logged(log) if e["path"] == "/token"]) == 1  # no retry, no other grant

        for env, words in (({}, "WORKLOAD_JWT is not set"), ({"WORKLOAD_JWT": "  "}, "WORKLOAD_JWT is empty")):
            usage = login(url, "--grant", "jwt-bearer", "--assertion-env", "WORKLOAD_JWT", env=env)
            assert usage.exit_code == 2 and words in usage.stderr and "--assertion-env" in usage.stderr
        usage = login(url, "--grant", "jwt-bearer")
        assert usage.exit_code == 2 and "--assertion-env" in usage.stderr
        usage = login(url, "--grant", "client_credentials", "--assertion-env", "WORKLOAD_JWT",
                      env={"WORKLOAD_JWT": assertion})
        assert usage.exit_code == 2 and assertion not in usage.stderr
    with auth_server() as url:  # an authorization server that does not offer the grant
        refused = login(url, "--grant", "jwt-bearer", "--assertion-env", "WORKLOAD_JWT",
                        env={"WORKLOAD_JWT": assertion})
        assert refused.exit_code == 7 and "does not offer the JWT bearer grant" in refused.stderr
