"""A 403 or 421 without a Bearer challenge is not an authentication failure: `http-forbidden`,
exit 4, the server's reason (inert, trimmed), a hint for Host/Origin protection, and no
authorization discovery. The 401 and the 403 with a Bearer challenge keep their diagnosis.

The servers are real HTTP servers on 127.0.0.1 with an ephemeral port (tests/fixtures/http_oddities.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import PY, ROOT, http_server, run_cli

from mcpprobe.wire.forbidden import host_hint, reason_of

ODDITIES = ROOT / "tests" / "fixtures" / "http_oddities.py"


def _port(url: str) -> int:
    return int(url.split(":")[2].split("/")[0])


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
def test_a_host_check_403_is_http_forbidden_with_the_url_the_server_allows(tmp_path: Path, protocol: str) -> None:
    """@playwright/mcp reached at 127.0.0.1 while it allows only localhost: 403 text/plain, no challenge."""
    record = tmp_path / "requests"
    with http_server([PY, str(ODDITIES), "host-check"], env={"ODDITIES_RECORD": str(record)}) as url:
        doc = run_cli(["probe", "--json", "--protocol", protocol, url])
        human = run_cli(["probe", "--protocol", protocol, url])
    port = _port(url)
    assert doc.exit_code == 4 and human.exit_code == 4, human.stderr
    error = doc.json["error"]
    assert error["code"] == "http-forbidden" and error["exitCode"] == 4
    assert error["detail"]["status"] == 403
    assert error["detail"]["reason"] == f"Access is only allowed at localhost:{port}"
    assert f"use http://localhost:{port}/mcp" in error["detail"]["hint"]
    assert "HTTP 403 Forbidden without an authentication challenge" in error["message"]
    codes = doc.codes()
    assert codes == ["http-forbidden"], codes  # no auth-required, no auth-metadata-unreachable
    assert f"hint: the server accepts only requests addressed to localhost:{port}" in human.stderr
    assert "auth" not in human.stdout.lower().replace("authentication challenge", "")
    # Nothing was looked for that only a server asking for authorization would publish.
    assert "/.well-known/" not in record.read_text()


def test_a_421_from_the_sdk_host_check_is_http_forbidden() -> None:
    with http_server([PY, str(ODDITIES), "misdirected"]) as url:
        doc = run_cli(["probe", "--json", "--protocol", "legacy", url])
    assert doc.exit_code == 4
    error = doc.json["error"]
    assert error["code"] == "http-forbidden" and error["detail"]["status"] == 421
    assert "HTTP 421 Misdirected Request" in error["message"] and "'Invalid Host header'" in error["message"]
    assert f"try http://localhost:{_port(url)}/mcp" in error["detail"]["hint"]
    assert doc.codes() == ["http-forbidden"]


def test_a_403_with_a_jsonrpc_error_body_gives_its_message_as_the_reason() -> None:
    with http_server([PY, str(ODDITIES), "host-check-jsonrpc"]) as url:
        doc = run_cli(["probe", "--json", "--protocol", "legacy", url])
    assert doc.exit_code == 4 and doc.json["error"]["code"] == "http-forbidden"
    assert doc.json["error"]["detail"]["reason"] == f"Invalid Host header: 127.0.0.1:{_port(url)}"
    assert "Host header" in doc.json["error"]["detail"]["hint"]


def test_an_origin_check_403_names_the_origin_header() -> None:
    with http_server([PY, str(ODDITIES), "origin-check"]) as url:
        plain = run_cli(["probe", "--json", "--protocol", "legacy", url])
        given = run_cli(["probe", "--json", "--protocol", "legacy", "-H", "Origin: https://evil.example", url])
    assert plain.exit_code == 4 and given.exit_code == 4
    assert "sends no Origin header" in plain.json["error"]["detail"]["hint"]
    assert "given with -H" in given.json["error"]["detail"]["hint"]


def test_the_reason_is_made_inert_and_trimmed() -> None:
    with http_server([PY, str(ODDITIES), "forbidden-hostile"]) as url:
        doc = run_cli(["probe", "--json", "--protocol", "legacy", url])
        human = run_cli(["probe", "--protocol", "legacy", url])
    reason = doc.json["error"]["detail"]["reason"]
    assert "\x1b" not in reason and "\u202e" not in reason and "\x07" not in reason
    assert reason.startswith("\\x1b]8;;https://evil.example\\x07Access") and len(reason) <= 201
    assert "hint" not in doc.json["error"]["detail"]  # nothing that looks like Host/Origin protection
    assert "\x1b" not in human.stdout + human.stderr and "\u202e" not in human.stdout + human.stderr


def test_a_401_and_a_basic_challenge_are_still_authentication() -> None:
    """The paths that ask for credentials keep exit 7 and their diagnosis."""
    with http_server([PY, str(ODDITIES), "basic-auth"]) as url:
        doc = run_cli(["probe", "--json", "--protocol", "legacy", url])
    assert doc.exit_code == 7 and doc.json["error"]["code"] == "auth-required"
    assert "auth-no-challenge" in doc.codes()


def test_the_hint_reads_the_host_the_server_names() -> None:
    assert host_hint(403, "Access is only allowed at localhost:8931, 127.0.0.1:8931", "http://10.0.0.5:8931/mcp",
                     False) == ("the server accepts only requests addressed to localhost:8931 (it checks the Host "
                                "header, a protection against DNS rebinding): use http://localhost:8931/mcp")
    assert "use http://localhost:3000/mcp?x=1" in host_hint(403, "Access is only allowed at localhost",
                                                            "http://127.0.0.1:3000/mcp?x=1", False)
    assert host_hint(403, "Forbidden by policy", "http://127.0.0.1:3000/mcp", False) is None
    assert host_hint(421, "", "http://mcp.example.com/mcp", False) is not None  # 421 is about the Host
    assert reason_of("<html><body><h1>403 Forbidden</h1>nginx</body></html>", "text/html") == "403 Forbidden nginx"


def test_auth_login_against_a_host_check_is_exit_4_with_the_hint(tmp_path: Path) -> None:
    """No token would change a Host check: login stops at once, saying where the server answers."""
    with http_server([PY, str(ODDITIES), "host-check"]) as url:
        result = run_cli(["auth", "login", url], env={"XDG_CONFIG_HOME": str(tmp_path), "HOME": str(tmp_path)})
    assert result.exit_code == 4
    assert "HTTP 403 Forbidden without an authentication challenge" in result.stderr
    assert f"hint: the server accepts only requests addressed to localhost:{_port(url)}" in result.stderr
