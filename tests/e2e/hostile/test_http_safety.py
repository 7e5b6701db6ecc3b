"""HTTP in front of an MCP server goes wrong in ordinary ways; each is named for what it is.

Redirects are not followed (credentials must not reach another origin), TLS is verified unless
--insecure says otherwise (and is warned about), proxies come from the environment, and answers
that are not MCP are reported with their status and first bytes.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import PY, ROOT, fixture_http, http_server, refused_port, run_cli

ODDITIES = ROOT / "tests" / "fixtures" / "http_oddities.py"
SECRET = "Bearer planted-redirect-secret"


def test_redirect_is_not_followed_and_credentials_stay():
    with http_server([PY, str(ODDITIES), "redirect"]) as url:
        result = run_cli(["probe", "--json", "--protocol", "legacy", "--header", f"Authorization: {SECRET}", url])
    assert result.exit_code == 5
    error = result.json["error"]
    assert "redirect" in error["message"] and "does not follow" in error["message"]
    assert error["detail"]["status"] == 307
    assert "planted-redirect-secret" not in result.stdout + result.stderr


@pytest.mark.parametrize("mode, status, first_bytes", [
    ("bad-gateway", 502, "<html><body><h1>502 Bad Gateway"),
    ("plain-text", 200, "hello, this is not MCP"),
])
def test_non_mcp_answers_show_status_and_first_bytes(mode, status, first_bytes):
    with http_server([PY, str(ODDITIES), mode]) as url:
        result = run_cli(["probe", "--json", "--protocol", "legacy", url])
    assert result.exit_code == 5
    error = result.json["error"]
    assert error["code"] == "protocol-error"
    assert "not an MCP answer" in error["message"]
    assert error["detail"]["status"] == status
    assert error["detail"]["bodyStart"].startswith(first_bytes)


@pytest.fixture(scope="module")
def self_signed(tmp_path_factory) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a self-signed certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def test_tls_is_verified_by_default(self_signed):
    cert, key = self_signed
    with http_server([PY, str(ODDITIES), "plain-text", "--tls", str(cert), str(key)]) as url:
        assert url.startswith("https://")
        refused = run_cli(["probe", "--json", "--protocol", "legacy", url])
        insecure = run_cli(["probe", "--json", "--protocol", "legacy", "--insecure", url])
    assert refused.exit_code == 4
    assert "CERTIFICATE_VERIFY_FAILED" in refused.json["error"]["message"] or \
        "certificate" in refused.json["error"]["message"].lower()
    # With --insecure the TLS handshake passes and the answer itself is judged (not MCP here).
    assert insecure.exit_code == 5
    assert "not an MCP answer" in insecure.json["error"]["message"]
    assert "--insecure" in insecure.stderr and "not verified" in insecure.stderr


def test_proxy_from_the_environment_is_honoured():
    with fixture_http("full") as url, refused_port() as dead:
        direct = run_cli(["probe", "--json", url])
        proxied = run_cli(["probe", "--json", url],
                          env={"HTTP_PROXY": f"http://127.0.0.1:{dead}", "NO_PROXY": "", "no_proxy": ""})
    assert direct.exit_code == 0
    assert proxied.exit_code == 4  # the request went to the (dead) proxy, as the environment says


def test_legacy_sse_endpoint_on_another_origin_is_refused():
    """The endpoint event decides where every POST (with its headers) goes: only the same origin."""
    with http_server([PY, str(ODDITIES), "sse-foreign-endpoint"]) as url:
        result = run_cli(["probe", "--json", "--transport", "sse", "--header", f"Authorization: {SECRET}", url])
    assert result.exit_code == 5
    assert "endpoint on another origin" in result.json["error"]["message"]
    assert "planted-redirect-secret" not in result.stdout + result.stderr
