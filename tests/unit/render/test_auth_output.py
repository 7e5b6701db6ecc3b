"""The `auth` commands' renderer (mcpprobe.render.auth) on fixed in-memory results, with no server:
the exact text for people, the documents for scripts, and what an authorization server sent made inert."""

from __future__ import annotations

import json
import re
import time

import pytest

from mcpprobe.auth.diagnosis import Diagnosis
from mcpprobe.auth.login import LoginResult
from mcpprobe.auth.store import TokenRecord
from mcpprobe.auth.tokens import LoginFailed
from mcpprobe.findings import Finding
from mcpprobe.render.auth import LoggedOut, LoginEnded, StoredTokens, render
from mcpprobe.render.interface import Format, NotOffered, View

URL = "https://mcp.example/mcp"
ESC = "\x1b]0;pwned\x07"


def _result(**record: object) -> LoginResult:
    token = TokenRecord(server_url=URL, access_token="tok-123456", refresh_token="ref-123456", scope="files:read",
                        client={"client_id": "ci", "registration": "pre-registered"}, **record)  # type: ignore[arg-type]
    return LoginResult(token, flow="authorization_code", registration="pre-registered",
                       checked=["initialize", "tools/list"], why="initialize: HTTP 401")


def test_a_login_for_people() -> None:
    rendered = render(LoginEnded(URL, _result(), stored="/home/u/.config/mcpprobe/tokens/x.json"), Format.HUMAN,
                      View())
    assert rendered.text() == (
        f"Logged in to {URL}\n"
        "  flow          authorization code + PKCE (pre registered client ci)\n"
        "  because       initialize: HTTP 401\n"
        "  checked       initialize, tools/list answered with the token\n"
        "  scope         files:read\n"
        "  expires       never\n"
        "  refresh token yes\n"
        "  stored in     /home/u/.config/mcpprobe/tokens/x.json (mode 0600)\n")
    assert rendered.stderr == ""


def test_a_login_whose_token_could_not_be_stored_says_so_on_stderr_and_is_exit_2() -> None:
    ended = LoginEnded(URL, _result(expires_at=time.time() + 3600), store_error="disk full")
    human, doc = render(ended, Format.HUMAN, View()), render(ended, Format.JSON, View())
    assert re.search(r"\n  expires in    3[0-9]{3} s\n", human.text())
    assert "  stored        no (the token could not be stored)\n" in human.text()
    assert human.stderr == doc.stderr == (
        "error: the token could not be stored: disk full; log in again once the token directory can be written, "
        "or give the token with --bearer-env\n")
    document = json.loads(doc.text())
    assert (document["exitCode"], document["ok"], document["storeError"]) == (2, False, "disk full")
    assert document["login"]["stored"] is None and ended.exit_code == 2


def test_a_failed_login_shows_its_diagnosis_and_hint_inert() -> None:
    finding = Finding("auth-challenge", f"the server asks for Bearer{ESC}", kind="server")
    error = LoginFailed(f"refused{ESC}", diagnosis=Diagnosis([finding], {"status": 401}),
                        detail={"hint": f"use http://127.0.0.1:8000/mcp{ESC}"})
    ended = LoginEnded(URL, error=error)
    human = render(ended, Format.HUMAN, View())
    assert human.text() == "info    auth-challenge  the server asks for Bearer\\x1b]0;pwned\\x07\n"
    assert human.stderr == "error: refused\\x1b]0;pwned\\x07\nhint: use http://127.0.0.1:8000/mcp\\x1b]0;pwned\\x07\n"
    document = json.loads(render(ended, Format.JSON, View()).text())
    assert document["authDiagnosis"] == {"status": 401} and document["exitCode"] == ended.exit_code == 7
    assert document["findings"][0]["code"] == "auth-challenge"


def test_status_for_people_and_scripts() -> None:
    token = _result().record.public()
    subject = StoredTokens(None, "/home/u/.config/mcpprobe/tokens", [token], 0)
    assert render(subject, Format.HUMAN, View()).text() == (
        f"{URL}\n  state   valid (never expires; refresh token yes)\n  grant   authorization_code, client ci\n"
        "  scope   files:read\n  issuer  None\n  file    None (None)\n")
    document = json.loads(render(subject, Format.JSON, View()).text())
    assert document["tokens"] == [token] and document["command"] == "auth status"
    empty = StoredTokens(URL, "/d", [], 7)
    assert render(empty, Format.HUMAN, View()).text() == f"no stored tokens for {URL} (in /d)\n"


def test_logout_of_every_server_with_a_revocation_that_failed() -> None:
    subject = LoggedOut(None, True, [(URL, "forgotten, but NOT revoked"), ("https://b.example/mcp", "forgotten")],
                        [(URL, f"revocation endpoint answered HTTP 500{ESC}")])
    rendered = render(subject, Format.HUMAN, View())
    assert rendered.text() == (f"{URL}: forgotten, but NOT revoked\nhttps://b.example/mcp: forgotten\n"
                               "removed 2 stored token(s)\n")
    assert rendered.stderr == f"error: {URL}: revocation endpoint answered HTTP 500\\x1b]0;pwned\\x07\n"
    assert render(LoggedOut(None, True, [], []), Format.HUMAN, View()).text() == "removed 0 stored token(s)\n"
    assert render(LoggedOut(URL, False, [], []), Format.HUMAN, View()).text() == f"no stored token for {URL}\n"
    with pytest.raises(NotOffered):
        render(subject, Format.JSON, View())


def test_a_secret_is_masked_before_it_is_made_inert() -> None:
    """A secret holding a control character would be shown escaped, a form the writer cannot mask:
    the renderer masks the run's secrets first."""
    from mcpprobe.safety.redact import Redactor

    secret = "tok\x1bsecret-9876"
    subject = LoggedOut(None, False, [(URL, f"revocation refused {secret}")], [(URL, f"echoed {secret}")])
    rendered = render(subject, Format.HUMAN, View(redactor=Redactor([secret])))
    assert "secret-9876" not in rendered.text() + rendered.stderr
    assert "[redacted]" in rendered.text() and "[redacted]" in rendered.stderr
