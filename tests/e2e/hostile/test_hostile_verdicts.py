"""A verdict claims only what the check saw: `pass` when it saw it, else `skipped` or `error` with
the reason; a server's own answer, even an HTTP error, is the evidence of the check that caught it
(docs/security.md, "Verdicts"). Each test's fixture is odd or hostile in exactly one way."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import PY, ROOT, checked, http_server, run_cli

CHECK_SERVER = ROOT / "tests" / "fixtures" / "check_server.py"
HTTP_SERVER = ROOT / "tests" / "fixtures" / "check_http_server.py"


def run_check(mode: str, *options: str, protocol: str = "legacy") -> tuple[int, dict]:
    result = run_cli(["check", "--json", "--timeout", "5", "--protocol", protocol, *options, "--",
                      sys.executable, str(CHECK_SERVER), mode])
    assert result.stdout, result.stderr
    return result.exit_code, checked(json.loads(result.stdout))


def entry(doc: dict, check_id: str) -> dict:
    return next(e for e in doc["checks"] if e["id"] == check_id)


def test_a_line_on_stdout_at_exit_fails_stdout_clean_at_the_default_level() -> None:
    """Before 2026-07-28 closing stdin is a MAY, so `lifecycle.stdin-close-exit` is not run at the
    default level; stdout is still judged after the server's exit, what it wrote then included."""
    code, doc = run_check("stdout-at-exit")
    assert doc["protocolVersion"] == "2025-11-25"
    assert "lifecycle.stdin-close-exit" not in {e["id"] for e in doc["checks"]}  # a MAY: not selected
    clean = entry(doc, "lifecycle.stdout-clean")
    assert clean["status"] == "fail", clean
    assert "shutting down: 3 requests served" in json.dumps(clean["detail"]["samples"])
    assert "exit included" in clean["message"]
    assert code == 1


def test_a_clean_server_passes_stdout_clean_after_its_exit() -> None:
    code, doc = run_check("ok")
    clean = entry(doc, "lifecycle.stdout-clean")
    assert clean["status"] == "pass" and "exit included" in clean["message"], clean
    assert code == 0


def test_a_server_that_had_crashed_is_not_said_to_exit_on_eof() -> None:
    """The server ends (exit status 3) on the unknown method: the exit after EOF was never seen,
    so `lifecycle.stdin-close-exit` is skipped with that reason, not "exited 0 ms after"."""
    code, doc = run_check("crash-late", "--level", "may")
    exit_check = entry(doc, "lifecycle.stdin-close-exit")
    assert exit_check["status"] == "skipped", exit_check
    assert "already ended" in exit_check["message"] and "3" in exit_check["message"]
    assert entry(doc, "lifecycle.unknown-method")["status"] == "fail"
    assert code == 1


VERDICT_SERVER = ROOT / "tests" / "fixtures" / "verdict_server.py"


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_a_made_up_uri_a_catch_all_template_reads_is_skipped_not_passed(protocol: str) -> None:
    """`fixture://{+path}` matches the URI mcpprobe makes up, and the server reads it: the URI may
    exist, so nothing is judged, and the verdict says so (skipped), never `pass`."""
    result = run_cli(["check", "--json", "--timeout", "5", "--protocol", protocol, "--only", "resources",
                      "--", sys.executable, str(VERDICT_SERVER), "catch-all-template"])
    doc = checked(json.loads(result.stdout))
    unknown = entry(doc, "resources.unknown-uri")
    assert unknown["status"] == "skipped", unknown
    assert "not judged" in unknown["message"] and "fixture://{+path}" in unknown["message"]
    assert unknown["evidence"] and "generated for" in unknown["evidence"][-1]["received"]  # the read did happen
    assert result.exit_code == 0


def test_a_202_whose_announced_body_comes_late_is_not_a_pass_for_no_body() -> None:
    """The 202 announces 13 bytes (Content-Length) and sends them 6 s later, after the check stopped
    waiting: no body was seen, and neither was its absence. An `error` naming the wait, exit 6."""
    with http_server([PY, str(HTTP_SERVER), "notification-late-body"]) as url:
        result = run_cli(["check", "--json", "--timeout", "2", "--protocol", "modern", "--only", "http.notification",
                          url])
    doc = checked(json.loads(result.stdout))
    note = entry(doc, "http.notification")
    assert note["status"] == "error", note
    assert "had not ended" in note["message"] and "Content-Length: 13" in note["message"]
    assert "HTTP 202" in note["evidence"][-1]["received"]
    assert result.exit_code == 6


def test_load_counts_a_404_session_not_found_as_http_404_not_transport() -> None:
    """Every fifth tools/call gets HTTP 404 with -32001 "Session not found" (as the SDKs answer a
    session they dropped): the server answered, so `http 404`, never a broken connection."""
    import threading
    from http.server import ThreadingHTTPServer

    from tests.e2e.load.test_load_wire import JsonMcpHandler

    calls = [0]
    lock = threading.Lock()

    class Handler(JsonMcpHandler):
        def do_POST(self) -> None:  # noqa: N802
            message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if "id" not in message:
                self.reply(202, b"", "text/plain")
                return
            if self.session_request(message):
                return
            with lock:
                n = calls[0]
                calls[0] += 1
            if n % 5 == 2:
                body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session not found"}}
                self.reply(404, json.dumps(body).encode(), "application/json")
                return
            self.answer(message, {"content": [{"type": "text", "text": "ok"}]})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        result = run_cli(["load", "--json", "--call", "work", "--requests", "50", "--concurrency", "2",
                          "--protocol", "legacy", f"http://127.0.0.1:{httpd.server_address[1]}/mcp"])
    finally:
        httpd.shutdown()
        httpd.server_close()
    overall = checked(json.loads(result.stdout))["overall"]
    assert calls[0] == 50
    assert overall["errorsByKind"] == {"http 404": 10}, overall
    assert overall["ok"] == 40


def test_a_resource_metadata_that_is_not_a_url_is_said_not_silently_replaced() -> None:
    """The challenge names a relative reference that happens to be the well-known path: before, it was
    joined to the server's URL, and the well-known document stood in for it with no word."""
    from tests.e2e.hostile.test_hostile_strings import auth_server

    with auth_server("--resource-metadata", "/.well-known/oauth-protected-resource/mcp", "--prm-at", "path") as url:
        result = run_cli(["probe", "--json", url])
    doc = checked(json.loads(result.stdout))
    found = [f for f in doc["findings"] if f["code"] == "auth-challenge-url-invalid"]
    assert len(found) == 1, [f["code"] for f in doc["findings"]]
    assert found[0]["severity"] == "warning" and "relative reference" in found[0]["message"]
    assert found[0]["detail"]["foundAt"].endswith("/.well-known/oauth-protected-resource/mcp")
    first = doc["error"]["detail"]["authDiagnosis"]["protectedResourceMetadata"]["attempts"][0]
    assert first["source"] == "resource_metadata in WWW-Authenticate" and first["result"] == "malformed"
    assert first["status"] is None  # nothing was fetched from it
    assert result.exit_code == 7


# RFC 3986: what a URI reference may hold (unreserved, reserved and percent escapes).
URI_REFERENCE = re.compile(r"(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*")


@pytest.mark.parametrize("absolute", [False, True])
def test_sarif_locations_are_uris_whatever_the_config_is_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                absolute: bool) -> None:
    """`we ird#dir/mcp 100%.json`, given relative as written and absolute: a space, a `#` (a fragment to
    a URI reader) and a `%` not followed by two hex digits. Before, the relative path went into
    artifactLocation.uri as it was, which no SARIF reader can resolve."""
    from tests.conftest import FIXTURE
    from tests.unit.render.test_golden import sarif_errors

    folder = tmp_path / "we ird#dir"
    folder.mkdir()
    config = folder / "mcp 100%.json"
    config.write_text(json.dumps({"mcpServers": {
        "calc": {"command": sys.executable, "args": [str(FIXTURE), "full"]},
        "evil": {"command": sys.executable, "args": [str(FIXTURE), "poisoned"]}}}, indent=2), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    named = str(config) if absolute else "we ird#dir/mcp 100%.json"
    result = run_cli(["probe", "--all", "--lint", "--config", named, "--format", "sarif", "--protocol", "legacy"])
    assert sarif_errors(result.stdout) == []
    located = [r["locations"][0]["physicalLocation"]["artifactLocation"]
               for r in json.loads(result.stdout)["runs"][0]["results"] if "physicalLocation" in r["locations"][0]]
    assert located, result.stdout
    for artifact in located:
        uri = artifact["uri"]
        assert URI_REFERENCE.fullmatch(uri), uri
        if absolute:
            assert uri == config.as_uri() and "uriBaseId" not in artifact
        else:
            assert artifact == {"uri": "we%20ird%23dir/mcp%20100%25.json", "uriBaseId": "%SRCROOT%"}
            assert unquote(uri) == named
