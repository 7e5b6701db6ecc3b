"""`mcpprobe check`'s streamable-HTTP and authorization families: each check fails (or warns) on an
HTTP fixture on 127.0.0.1 that breaks exactly its rule, and on nothing else; they are n/a where they
do not apply (stdio, a server that asks for no authorization)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import PY, ROOT, checked, http_server, run_cli

HTTP_SERVER = ROOT / "tests" / "fixtures" / "check_http_server.py"
AUTH_SERVER = ROOT / "tests" / "fixtures" / "auth_server.py"
BAD = ("fail", "warn", "error")

# mode -> (check id, expected status, protocols it is broken in)
HTTP_BROKEN = {
    "origin-ignored": ("http.origin", "fail", ("legacy", "modern")),
    "version-ignored": ("http.protocol-version", "fail", ("legacy", "modern")),
    "session-unchecked": ("http.unknown-session", "warn", ("legacy",)),
    "delete-ignored": ("http.session-delete", "fail", ("legacy",)),
    "get-wrong": ("http.get-stream", "fail", ("legacy",)),
    "batch-accepted": ("http.batch", "warn", ("legacy", "modern")),
    "notification-200": ("http.notification", "fail", ("legacy", "modern")),
    "method-header-ignored": ("http.method-header", "fail", ("modern",)),
    "name-header-ignored": ("http.name-header", "fail", ("modern",)),
    "session-space": ("http.session-delete", "fail", ("legacy",)),
    "method-header-optional": ("http.method-header-missing", "fail", ("modern",)),
    "header-name-case-sensitive": ("http.header-case", "fail", ("modern",)),
    "header-value-casefolded": ("http.header-case", "fail", ("modern",)),
    "meta-unchecked": ("http.meta-required", "fail", ("modern",)),
    "sse-no-priming": ("http.sse-priming", "warn", ("legacy",)),
    "sse-replay-all": ("http.sse-resume", "fail", ("legacy",)),
    "sse-one-stream": ("http.concurrent-requests", "fail", ("legacy", "modern")),
    "sse-polling-no-retry": ("http.sse-retry", "warn", ("legacy",)),
}
# Right modes of their own, and the x-mcp-header modes (judged with --call): tests/e2e/check/test_check_streams.py
OTHER_MODES = {"sse", "sse-polling", "param-header", "param-header-ignored"}
# auth_server.py flags -> (check id, the revision judged by)
AUTH_BROKEN = {
    ("--prm-at", "path"): ("auth.challenge", "2025-06-18"),
    ("--prm-malformed",): ("auth.resource-metadata", "legacy"),
    ("--as-malformed", "missing-token-endpoint"): ("auth.server-metadata", "legacy"),
}
# mode -> the check whose request gets a bare HTTP error (no JSON-RPC response): that check's evidence
HTTP_ERROR_ANSWERS = {"unknown-method-400": "lifecycle.unknown-method", "prompts-list-500": "listing.complete"}
# mode -> the check that cannot judge what it did not see (tests/e2e/hostile/test_hostile_verdicts.py)
HTTP_NOT_SEEN = {"notification-late-body": "http.notification"}
# mode -> the check that judges the HTTP status of a JSON-RPC answer (2026-07-28 only)
HTTP_STATUS_JUDGED = {"unknown-method-200": "lifecycle.unknown-method"}
BROKEN_IDS = {check_id for check_id, *_ in HTTP_BROKEN.values()} | {check_id for check_id, _ in AUTH_BROKEN.values()}


def run_check(url: str, protocol: str, *options: str) -> tuple[int, dict]:
    result = run_cli(["check", "--json", "--level", "may", "--unsafe", "--timeout", "10", "--protocol", protocol,
                      *options, url])
    assert result.stdout, result.stderr
    return result.exit_code, checked(json.loads(result.stdout))


def statuses(doc: dict) -> dict[str, str]:
    return {entry["id"]: entry["status"] for entry in doc["checks"]}


def test_every_http_mode_is_tested() -> None:
    from tests.fixtures.check_http_server import MODES

    assert set(HTTP_BROKEN) | set(HTTP_ERROR_ANSWERS) | set(HTTP_NOT_SEEN) | set(HTTP_STATUS_JUDGED) \
        == set(MODES) - {"ok", "static-token"} - OTHER_MODES


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
@pytest.mark.parametrize(("mode", "status", "said"), [("unknown-method-400", 400, "not found"),
                                                      ("prompts-list-500", 500, "prompt store offline")])
def test_a_bare_http_400_to_a_checks_request_fails_that_check_not_the_connection(
        protocol: str, mode: str, status: int, said: str) -> None:
    """The Go SDK answers an unknown method with a bare HTTP 400: the check that sent it fails with
    the status and the body as evidence (exit 1), instead of an error that ends as exit 5. The same
    for a request made for the check by a listing it asked for (prompts/list: a bare 500)."""
    with http_server([PY, str(HTTP_SERVER), mode]) as url:
        code, doc = run_check(url, protocol)
    check_id = HTTP_ERROR_ANSWERS[mode]
    found = statuses(doc)
    assert found[check_id] == "fail", doc["checks"]
    assert {cid: s for cid, s in found.items() if cid != check_id and s in BAD} == {}
    entry = next(e for e in doc["checks"] if e["id"] == check_id)
    assert f"HTTP {status}" in entry["message"] and said in entry["message"]
    assert entry["detail"]["httpStatus"] == status and "exitCode" not in entry["detail"]
    assert f"HTTP {status}" in entry["evidence"][-1]["received"]
    assert code == 1


@pytest.mark.parametrize("protocol", ["legacy", "modern", "2025-03-26"])
def test_a_right_http_server_passes_every_check(protocol: str) -> None:
    with http_server([PY, str(HTTP_SERVER), "ok"]) as url:
        code, doc = run_check(url, protocol)
    found = statuses(doc)
    assert code == 0 and not {cid: s for cid, s in found.items() if s in BAD}, doc["checks"]
    http = {cid: s for cid, s in found.items() if cid.startswith("http.")}
    # batch and version header: 2025-06-18 on. http.sse-priming and http.sse-resume are n/a: JSON answers
    applies = {"legacy": 8, "modern": 10, "2025-03-26": 6}[protocol]
    assert list(http.values()).count("pass") == applies, http
    # No 401: authorization is OPTIONAL, so these are n/a, never failures.
    assert {found["auth.challenge"], found["auth.resource-metadata"], found["auth.server-metadata"]} == {"n/a"}


@pytest.mark.parametrize("mode", sorted(HTTP_BROKEN))
def test_each_http_check_fails_on_its_fixture_and_nothing_else(mode: str) -> None:
    check_id, expected, protocols = HTTP_BROKEN[mode]
    with http_server([PY, str(HTTP_SERVER), mode]) as url:
        for protocol in protocols:
            code, doc = run_check(url, protocol)
            found = statuses(doc)
            assert found[check_id] == expected, [e for e in doc["checks"] if e["id"] == check_id]
            assert {cid: s for cid, s in found.items() if cid != check_id and s in BAD} == {}
            entry = next(e for e in doc["checks"] if e["id"] == check_id)
            assert entry["evidence"] and entry["evidence"][0]["sent"].startswith(("POST ", "GET ", "DELETE "))
            assert "HTTP " in entry["evidence"][-1]["received"]
            assert code == (1 if expected == "fail" else 0)


def test_http_evidence_begins_with_what_identifies_the_exchange() -> None:
    # The request line, the JSON-RPC method and id come before the headers: the people's output
    # cuts `sent` at 200 characters, and the headers alone are longer than that.
    with http_server([PY, str(HTTP_SERVER), "version-ignored"]) as url:
        code, doc = run_check(url, "legacy", "--only", "http.protocol-version")
        human = run_cli(["check", "--only", "http.protocol-version", "--protocol", "legacy", "--timeout", "10", url],
                        env={"COLUMNS": "300"})
    sent = doc["checks"][0]["evidence"][0]["sent"]
    assert sent.startswith(f'POST {url} ping id "mcpprobe-http-1" [')
    assert "MCP-Protocol-Version: 1999-01-01" in sent and '"method": "ping"' in sent
    line = next(line.strip() for line in human.stdout.splitlines() if line.strip().startswith("sent "))
    assert line.startswith(f'sent POST {url} ping id "mcpprobe-http-1" [')
    assert code == human.exit_code == 1


def test_the_unknown_session_id_is_quoted_as_json_not_python() -> None:
    with http_server([PY, str(HTTP_SERVER), "session-unchecked"]) as url:
        _, doc = run_check(url, "legacy", "--only", "http.unknown-session")
    assert 'with the session id "mcpprobe-unknown-session-0000", never issued' in doc["checks"][0]["message"]


def test_a_session_id_outside_visible_ascii_is_never_sent_back(tmp_path: Path) -> None:
    """The second session's id has a space in it ("The session ID MUST only contain visible ASCII
    characters"): http.session-delete fails saying so, and no request carries it back (it was sent
    back on the notification, the DELETE and the ping)."""
    record = tmp_path / "http.jsonl"
    with http_server([PY, str(HTTP_SERVER), "session-space"], env={"CHECK_HTTP_RECORD": str(record)}) as url:
        _, doc = run_check(url, "legacy", "--only", "http.session-delete")
    [result] = doc["checks"]
    assert result["status"] == "fail" and "not visible ASCII" in result["message"], result
    entries = [json.loads(line) for line in record.read_text().splitlines()]
    assert [e for e in entries if e["method"] == "initialize"][1:]  # the second session was issued
    assert not [e for e in entries if (e.get("session") or "").startswith("spaced ")], entries


def test_origin_is_unsafe_and_not_sent_without_unsafe(tmp_path: Path) -> None:
    record = tmp_path / "http.jsonl"
    with http_server([PY, str(HTTP_SERVER), "origin-ignored"], env={"CHECK_HTTP_RECORD": str(record)}) as url:
        result = run_cli(["check", "--json", "--protocol", "legacy", url])
    doc = checked(json.loads(result.stdout))
    assert statuses(doc)["http.origin"] == "skipped" and result.exit_code == 0
    assert not [line for line in record.read_text().splitlines() if json.loads(line)["origin"]]


def test_http_checks_are_na_over_stdio() -> None:
    result = run_cli(["check", "--json", "--protocol", "legacy", "--unsafe", "--", sys.executable,
                      str(ROOT / "tests" / "fixtures" / "check_server.py")])
    found = statuses(checked(json.loads(result.stdout)))
    assert {s for cid, s in found.items() if cid.startswith(("http.", "auth."))} == {"n/a"}


def test_a_protected_server_that_is_right_passes_the_auth_checks() -> None:
    with http_server([PY, str(AUTH_SERVER)]) as url:
        code, doc = run_check(url, "auto")
    found = statuses(doc)
    assert found == {"auth.challenge": "pass", "auth.resource-metadata": "pass", "auth.server-metadata": "pass"}
    assert code == 7  # the connection itself stopped at the 401: the auth code, as for every command
    assert doc["error"]["code"] and "judged by protocol 2025-11-25" in doc["checks"][0]["message"]


@pytest.mark.parametrize("flags", sorted(AUTH_BROKEN))
def test_each_auth_check_fails_on_its_fixture_and_nothing_else(flags: tuple[str, ...]) -> None:
    check_id, protocol = AUTH_BROKEN[flags]
    with http_server([PY, str(AUTH_SERVER), *flags]) as url:
        _, doc = run_check(url, protocol)
    found = statuses(doc)
    assert found[check_id] == "fail", doc["checks"]
    assert {cid: s for cid, s in found.items() if cid != check_id and s in BAD} == {}
    assert next(e for e in doc["checks"] if e["id"] == check_id)["evidence"]


def test_the_well_known_uri_alone_is_enough_from_2025_11_25() -> None:
    """2025-06-18: the 401 MUST name the metadata in WWW-Authenticate; 2025-11-25: "MCP servers MUST
    implement one of the following discovery mechanisms", the header or the well-known URI."""
    with http_server([PY, str(AUTH_SERVER), "--prm-at", "path"]) as url:
        _, old = run_check(url, "2025-06-18")
        _, new = run_check(url, "2025-11-25")
    assert statuses(old)["auth.challenge"] == "fail"
    assert statuses(new)["auth.challenge"] == "pass"


def test_a_server_protected_by_a_static_token_is_warned_not_failed() -> None:
    """A 401 with no sign of OAuth (no resource_metadata, no metadata at any well-known URI): the
    authorization page's MUSTs bind servers that do its OAuth; the page itself is "Implementations
    using an HTTP-based transport SHOULD conform to this specification" (authorization is OPTIONAL).
    So a warning that quotes it, never a MUST failure; with the token, the server is checked as any."""
    from tests.fixtures.check_http_server import STATIC_TOKEN

    for protocol in ("legacy", "2025-06-18", "modern"):
        with http_server([PY, str(HTTP_SERVER), "static-token"]) as url:
            code, doc = run_check(url, protocol)
        found = statuses(doc)
        assert found == {"auth.challenge": "warn", "auth.resource-metadata": "warn",
                         "auth.server-metadata": "skipped"}, doc["checks"]
        for entry in doc["checks"][:2]:
            assert "SHOULD conform to this specification" in entry["message"], entry
        assert code == 7  # the connection stopped at the 401: the auth code, and no MUST failed (not 1)
    with http_server([PY, str(HTTP_SERVER), "static-token"]) as url:
        code, doc = run_check(url, "legacy", "--header", f"Authorization: Bearer {STATIC_TOKEN}")
    found = statuses(doc)
    assert code == 0 and not {cid: s for cid, s in found.items() if s in BAD}, doc["checks"]
    assert {found["auth.challenge"], found["auth.resource-metadata"]} == {"skipped"}  # credentials accepted


def test_an_oauth_server_that_breaks_a_must_still_fails() -> None:
    """The static-token leniency needs no sign of OAuth: a server that serves its metadata but leaves
    resource_metadata out of its 401 fails at 2025-06-18 (the MUST of that revision), as before."""
    with http_server([PY, str(AUTH_SERVER), "--prm-at", "path"]) as url:
        _, doc = run_check(url, "2025-06-18")
    entry = next(e for e in doc["checks"] if e["id"] == "auth.challenge")
    assert entry["status"] == "fail" and "SHOULD conform" not in entry["message"]


@pytest.mark.parametrize(("protocol", "expected"), [("2025-06-18", "fail"), ("2025-11-25", "warn"), ("modern", "warn")])
def test_a_resource_metadata_that_is_not_a_url_never_passes(protocol: str, expected: str) -> None:
    """The challenge names `/.well-known/oauth-protected-resource/mcp`, a relative reference, not "The
    URL of the protected resource metadata" (RFC 9728 section 5.1); the document is served at that
    well-known URI. auth.challenge passed for any string before. 2025-06-18 makes the header the way
    (MUST): fail. 2025-11-25 on, the well-known URI meets "MUST implement one of the following discovery
    mechanisms", but clients "MUST ... use the resource metadata URL from the parsed WWW-Authenticate
    headers when present": a warning that says so. The metadata itself is fine (auth.resource-metadata
    passes)."""
    with http_server([PY, str(AUTH_SERVER), "--resource-metadata", "/.well-known/oauth-protected-resource/mcp",
                      "--prm-at", "path"]) as url:
        code, doc = run_check(url, protocol)
    found = statuses(doc)
    entry = next(e for e in doc["checks"] if e["id"] == "auth.challenge")
    assert found == {"auth.challenge": expected, "auth.resource-metadata": "pass", "auth.server-metadata": "pass"}
    assert "is not a URL (it is a relative reference" in entry["message"]
    assert "The URL of the protected resource metadata" in entry["message"]
    assert code == 7  # the connection stopped at the 401, as for every command


def test_a_resource_metadata_that_is_not_a_url_and_no_metadata_anywhere_fails() -> None:
    """Neither discovery mechanism: the header names no URL, and no well-known URI serves the metadata."""
    with http_server([PY, str(AUTH_SERVER), "--resource-metadata", "metadata", "--prm-at", "none"]) as url:
        _, doc = run_check(url, "2025-11-25")
    entry = next(e for e in doc["checks"] if e["id"] == "auth.challenge")
    assert entry["status"] == "fail" and "neither discovery mechanism" in entry["message"], entry
    assert "SHOULD conform" not in entry["message"]  # resource_metadata is a sign of OAuth: no leniency


def test_an_unknown_method_answered_with_200_fails_in_2026_07_28_only() -> None:
    """2026-07-28, basic/transports/streamable-http: "If the server does not implement the requested RPC
    method, it MUST respond with 404 Not Found and a JSON-RPC error with code -32601 (Method not
    found)." The fixture answers -32601 with HTTP 200: that fails lifecycle.unknown-method there, with
    the status as evidence, and nothing else; in 2025-11-25, which has no such rule, it passes (the ok
    mode, which answers 404 in 2026-07-28, passes in both: test_a_right_http_server_passes_every_check)."""
    with http_server([PY, str(HTTP_SERVER), "unknown-method-200"]) as url:
        code, doc = run_check(url, "modern")
        old_code, old = run_check(url, "legacy")
    found = statuses(doc)
    entry = next(e for e in doc["checks"] if e["id"] == "lifecycle.unknown-method")
    assert found["lifecycle.unknown-method"] == "fail", entry
    assert {cid: s for cid, s in found.items() if cid != "lifecycle.unknown-method" and s in BAD} == {}
    assert "HTTP 200, not 404" in entry["message"] and "MUST respond with 404 Not Found" in entry["message"]
    assert entry["detail"]["httpStatus"] == 200 and code == 1
    assert statuses(old)["lifecycle.unknown-method"] == "pass" and old_code == 0
    assert "httpStatus" not in next(e for e in old["checks"] if e["id"] == "lifecycle.unknown-method")["detail"]
    with http_server([PY, str(HTTP_SERVER), "ok"]) as url:
        _, right = run_check(url, "modern")
    entry = next(e for e in right["checks"] if e["id"] == "lifecycle.unknown-method")
    assert entry["status"] == "pass" and entry["detail"]["httpStatus"] == 404 and "HTTP 404" in entry["message"]


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_stdio_and_http_give_the_same_verdicts_where_the_transport_does_not_matter(protocol: str) -> None:
    """The same server (check_server.py's answers, served over stdio, and over streamable HTTP by
    check_http_server.py) gets the same verdict from every check that is not about one transport."""
    with http_server([PY, str(HTTP_SERVER), "ok"]) as url:
        _, over_http = run_check(url, protocol)
    result = run_cli(["check", "--json", "--level", "may", "--unsafe", "--timeout", "10", "--protocol", protocol,
                      "--", PY, str(ROOT / "tests" / "fixtures" / "check_server.py"), "ok"])
    over_stdio = checked(json.loads(result.stdout))
    from mcpprobe.check.catalogue import CHECKS

    anywhere = {check.id for check in CHECKS if {"stdio", "http"} <= set(check.transports)}
    http_verdicts = {cid: s for cid, s in statuses(over_http).items() if cid in anywhere}
    stdio_verdicts = {cid: s for cid, s in statuses(over_stdio).items() if cid in anywhere}
    assert over_http["protocolVersion"] == over_stdio["protocolVersion"]
    assert len(http_verdicts) > 20 and "pass" in http_verdicts.values()
    assert http_verdicts == stdio_verdicts


def test_a_failure_judged_from_the_diagnosis_is_graded_by_the_rules_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks judged from a 401's diagnosis go through the same grading as the live ones
    (runner.graded): a `fail` of a MUST stays `fail`; the same verdict at a SHOULD is a `warn`. Every
    check judged that way is a MUST in every revision today, so the SHOULD side is reached by lowering
    auth.challenge's level in this process; the diagnosis itself is the real one, of a real server."""
    import anyio

    from mcpprobe.check.catalogue import BY_ID, Check, Level
    from mcpprobe.check.context import CheckOptions
    from mcpprobe.check.runner import check
    from mcpprobe.client.settings import Settings
    from mcpprobe.wire.target import build_target

    def run() -> dict[str, str]:
        with http_server([PY, str(AUTH_SERVER), "--prm-at", "path"]) as url:
            outcome = anyio.run(lambda: check(build_target(url, []), Settings(protocol="2025-06-18", timeout=10),
                                              options=CheckOptions(level=Level.MAY)))
        return {r.check.id: r.status.value for r in outcome.results}

    assert run()["auth.challenge"] == "fail"  # the MUST of 2025-06-18, broken
    must = Check.level_for
    monkeypatch.setattr(Check, "level_for", lambda self, version: Level.SHOULD
                        if self is BY_ID["auth.challenge"] else must(self, version))
    assert run()["auth.challenge"] == "warn"
