"""The user's secrets never appear in anything mcpprobe prints, even when a server echoes them.

A planted secret goes in through --env and --header; the servers here print it back on stderr,
on stdout as a non-JSON line, and in error bodies. Every output mode is searched for it.
"""

from __future__ import annotations

import pytest
from conftest import PY, ROOT, fixture_cmd, fixture_http, http_server, run_cli, run_subprocess

SECRET = "planted-Secret-9f2c7e"
ECHO = ("import os,sys; s=os.environ['API_TOKEN']; print('token=' + s); print('stderr sees ' + s, file=sys.stderr); "
        "sys.stdout.flush(); sys.exit(2)")


@pytest.mark.parametrize("args", [[], ["--json"], ["--server-stderr", "live"], ["--json", "--server-stderr", "live"]])
def test_env_secret_echoed_by_the_server_is_redacted(args):
    result = run_subprocess(["probe", *args, "--env", f"API_TOKEN={SECRET}", "--", PY, "-c", ECHO])
    assert result.exit_code == 4
    assert SECRET not in result.stdout + result.stderr
    assert "[redacted]" in result.stdout + result.stderr


def test_header_secret_is_never_printed():
    with fixture_http("auth-required") as url:
        for extra in ([], ["--json"]):
            result = run_cli(["probe", *extra, "--header", f"Authorization: Bearer {SECRET}", url])
            assert result.exit_code == 7
            assert SECRET not in result.stdout + result.stderr


@pytest.mark.parametrize("args", [["--format", "junit"], ["--format", "openmetrics"], ["--trace", "-"],
                                  ["--trace", "-", "--json"], ["-v"]])
def test_every_other_output_mode_masks_it_too(args):
    result = run_subprocess(["probe", *args, "--env", f"API_TOKEN={SECRET}", "--", PY, "-c", ECHO])
    assert result.exit_code == 4
    assert SECRET not in result.stdout + result.stderr


# ----- split writes, truncation, what counts as secret -----

HOSTILE = [PY, str(ROOT / "tests" / "fixtures" / "hostile_server.py"), "echo-env"]
LONG_SECRET = "planted-Secret-9f2c7e-0123456789"


def _no_piece_of(secret: str, text: str, size: int = 8) -> None:
    for start in range(len(secret) - size + 1):
        assert secret[start:start + size] not in text, f"{secret[start:start + size]!r} leaked"


def test_a_secret_the_server_writes_in_two_pieces_is_masked_live():
    """The server writes half the secret, waits, then the other half: two reads of its stderr."""
    result = run_subprocess(["list", "tools", "--protocol", "legacy", "--server-stderr", "live",
                             "-e", f"ECHO_SECRET={LONG_SECRET}", "--", *HOSTILE])
    assert result.exit_code == 0, result.stderr
    assert "server sees [redacted] and goes on" in result.stderr
    _no_piece_of(LONG_SECRET, result.stdout + result.stderr)


@pytest.mark.parametrize("args", [[], ["--json"]])
def test_text_is_masked_before_it_is_cut_short(args):
    """The secret starts at character 190 of a stray stdout line (kept as a 200-character sample)
    and near the end of an 80-column description: no prefix of it may show."""
    result = run_subprocess(["list", "tools", "--protocol", "legacy", *args, "-e", f"ECHO_SECRET={LONG_SECRET}",
                             "--", *HOSTILE])
    assert result.exit_code == 0, result.stderr
    _no_piece_of(LONG_SECRET, result.stdout + result.stderr)
    if args:
        samples = [f["detail"].get("sample", "") for f in result.json["findings"] if f["code"] == "non-protocol-output"]
        assert samples and samples[0].endswith("x[redacted]")


def test_ordinary_env_values_are_not_masked_in_mcpprobes_own_output():
    result = run_cli(["probe", "--json", "--protocol", "legacy", "-e", "TRANSPORT=stdio", "-e", "MODE=resources",
                      "-e", "PROTOCOL=2025-11-25", "-e", "KINDS=tools", "--", *fixture_cmd("full")])
    assert result.exit_code == 0, result.stderr
    assert "[redacted]" not in result.stdout
    assert result.json["transport"] == "stdio" and result.json["protocolVersion"] == "2025-11-25"
    assert set(result.json["kinds"]) == {"tools", "resources", "templates", "prompts"}


def test_a_password_in_a_database_url_is_masked():
    script = "import os,sys; print('connecting to ' + os.environ['DATABASE_URL'], file=sys.stderr); sys.exit(2)"
    result = run_subprocess(["probe", "-e", "DATABASE_URL=postgres://app:hunter2pw@db/main", "--", PY, "-c", script])
    assert result.exit_code == 4
    assert "connecting to postgres://app:[redacted]@db/main" in result.stderr


@pytest.mark.parametrize("header", ["X-Password", "X-Auth", "X-Passphrase", "Proxy-Authorization", "X-Session-Token"])
def test_credential_like_headers_never_reach_output_or_trace(tmp_path, header):
    trace = tmp_path / "trace.log"
    with fixture_http("full") as url:
        result = run_cli(["probe", url, "--json", "--trace", str(trace), "-v", "-H", f"{header}: {SECRET}"])
        to_stderr = run_cli(["probe", url, "--trace", "-", "-H", f"{header}: {SECRET}"])
    assert result.exit_code == 0, result.stderr
    text = trace.read_text()
    assert f'"{header.lower()}": "[redacted]"' in text
    for output in (text, result.stdout, result.stderr, to_stderr.stdout, to_stderr.stderr):
        assert SECRET not in output


@pytest.mark.parametrize("args", [[], ["--json"]])
def test_an_http_body_quoted_up_to_a_cut_shows_no_piece_of_the_token(args):
    """The server echoes the Authorization header across character 300 of an error body, where
    mcpprobe stops quoting it."""
    oddities = [PY, str(ROOT / "tests" / "fixtures" / "http_oddities.py"), "echo-auth-at-cut"]
    with http_server(oddities) as url:
        result = run_cli(["probe", *args, "--protocol", "legacy", "-H", f"Authorization: Bearer {LONG_SECRET}", url])
    assert result.exit_code == 5
    assert "x[redacted]" in result.stdout + result.stderr
    _no_piece_of(LONG_SECRET, result.stdout + result.stderr)
