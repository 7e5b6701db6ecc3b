"""`mcpprobe check` against real servers: the npm reference servers and servers on other SDKs.

Each passes (exit 0, no failed check) unless it really breaks a MUST of the revision it
negotiated; the one that does is named below with the specification's words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import BIND_LOOPBACK, ROOT, checked, http_server, python_server_env, run_cli

pytestmark = pytest.mark.interop

MCP1_SERVER = ROOT / "tests" / "fixtures" / "mcp1_server.py"
MCP1_LOWLEVEL_SERVER = ROOT / "tests" / "fixtures" / "mcp1_lowlevel_server.py"
FASTMCP_SERVER = ROOT / "tests" / "fixtures" / "fastmcp_server.py"


def _check(*command: str, protocol: str = "auto") -> tuple[int, dict]:
    result = run_cli(["check", "--json", "--level", "may", "--connect-timeout", "60", "--timeout", "60",
                      "--protocol", protocol, "--", *command])
    return result.exit_code, checked(json.loads(result.stdout))


def _bad(doc: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in doc["checks"] if c["status"] in ("fail", "error")}


def test_server_everything_over_stdio_passes(everything: Path) -> None:
    code, doc = _check("node", str(everything))
    assert (code, _bad(doc)) == (0, {})
    assert doc["summary"]["pass"] >= 15


@pytest.mark.parametrize(("mode", "path"), [("streamableHttp", "/mcp"), ("sse", "/sse")])
def test_server_everything_over_http_passes(everything: Path, mode: str, path: str) -> None:
    """Over streamable HTTP it breaks one MUST of 2025-11-25's basic/transports, Session Management:
    "The server **MAY** terminate the session at any time, after which it **MUST** respond to
    requests containing that session ID with HTTP 404 Not Found." It answers DELETE with 200, and a
    request with the ended session's id then with 400 ("No valid session ID provided"): its example
    server looks sessions up in its own map and answers 400 for every id it does not hold (so an id
    it never issued gets 400 too, which http.unknown-session reports as a warning, that rule being
    worded for ended sessions).

    And one of Resumability and Redelivery: "The server **MUST NOT** replay messages that would have
    been delivered on a different stream." Its example server's event store replays every event
    stored after the Last-Event-ID, whatever stream it was sent on (its replayEventsAfter never reads
    the stream id it stored): a GET resuming the first of two `ping` streams gets the second's response
    too (http.sse-resume). The conformance suite resumes only from a stream's last event, so it never
    sees this."""
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), mode], env=env) as url:
        result = run_cli(["check", "--json", "--level", "may", f"{url}{path}"])
    doc = checked(json.loads(result.stdout))
    assert doc["transport"] == ("sse" if mode == "sse" else "http")
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    if mode == "sse":
        assert (result.exit_code, _bad(doc)) == (0, {})
        assert {s for cid, s in statuses.items() if cid.startswith("http.")} == {"n/a"}
    else:
        assert (result.exit_code, _bad(doc)) == (1, {"http.session-delete": "fail", "http.sse-resume": "fail"})
        resumed = next(c for c in doc["checks"] if c["id"] == "http.sse-resume")
        assert 'replayed the response to "mcpprobe-http-2"' in resumed["message"], resumed
        assert statuses["http.concurrent-requests"] == statuses["http.sse-priming"] == "pass"
        assert statuses["http.unknown-session"] == "warn"
        assert statuses["http.origin"] == "skipped"  # unsafe: only with --unsafe
        assert statuses["http.get-stream"] == statuses["http.notification"] == "pass"
        assert statuses["http.protocol-version"] == "pass"
    assert statuses["lifecycle.stdout-clean"] == statuses["lifecycle.stdin-close-exit"] == "n/a"
    assert {statuses["auth.challenge"], statuses["auth.server-metadata"]} == {"n/a"}  # it asks for no authorization


def test_server_filesystem_passes(filesystem: Path, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello")
    code, doc = _check("node", str(filesystem), str(tmp_path))
    assert (code, _bad(doc)) == (0, {})
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    # It declares tools only: nothing is sent for resources or prompts.
    assert statuses["resources.read-listed"] == statuses["prompts.get-listed"] == "skipped"


def test_fastmcp2_over_stdio_passes() -> None:
    python = python_server_env("fastmcp-2.12.5")
    code, doc = _check(str(python), str(FASTMCP_SERVER), "stdio")
    assert (code, _bad(doc)) == (0, {})


def test_fastmcp4_over_stdio_passes_in_the_modern_era() -> None:
    python = python_server_env("fastmcp-4.2.3")
    code, doc = _check(str(python), str(FASTMCP_SERVER), "stdio")
    assert doc["protocolVersion"] == "2026-07-28"
    assert (code, _bad(doc)) == (0, {})


def test_fastmcp4_over_http_passes_in_the_modern_era() -> None:
    """In 2026-07-28 over streamable HTTP lifecycle.unknown-method judges the HTTP status too: "If the
    server does not implement the requested RPC method, it **MUST** respond with `404 Not Found` and a
    JSON-RPC error with code `-32601`". FastMCP 4.2.3 does (404, -32601), so no new failure."""
    from tests.interop.test_real_servers import fastmcp_http

    python = python_server_env("fastmcp-4.2.3")
    with fastmcp_http(python, "http") as url:
        result = run_cli(["check", "--json", "--level", "may", "--connect-timeout", "60", "--timeout", "60", url])
    doc = checked(json.loads(result.stdout))
    assert doc["protocolVersion"] == "2026-07-28" and doc["transport"] == "http"
    assert (result.exit_code, _bad(doc)) == (0, {})
    entry = next(c for c in doc["checks"] if c["id"] == "lifecycle.unknown-method")
    assert entry["status"] == "pass" and entry["detail"]["httpStatus"] == 404, entry


def test_python_sdk_1_2_breaks_the_cancellation_rule() -> None:
    """mcp 1.2.1 (protocol 2024-11-05) ends its process on a `notifications/cancelled` that arrives
    after it answered the request, the race the 2024-11-05 text names: "cancellation notifications
    may arrive after request processing has completed, and potentially after a response has already
    been sent. Both parties **MUST** handle these race conditions gracefully" (basic/utilities/
    cancellation, Timing Considerations). That is the one MUST it breaks: the checks run before it
    pass, the ones after it are skipped (the server is gone), and the exit code is 1."""
    python = python_server_env("mcp-1.2.1")
    code, doc = _check(str(python), str(MCP1_SERVER))
    assert doc["protocolVersion"] == "2024-11-05"
    assert code == 1
    assert _bad(doc) == {"lifecycle.cancel-in-flight": "fail"}
    skipped = [c for c in doc["checks"] if "ended during lifecycle.cancel-in-flight" in c["message"]]
    assert {c["id"] for c in skipped} == {"lifecycle.unknown-method", "lifecycle.invalid-params"}


def test_an_old_sdk_lowlevel_server_without_templates_passes_the_listing() -> None:
    """mcp 1.2.1's low-level Server declares `resources` and answers resources/templates/list, for
    which it has no handler, with -32601: an optional part of `resources` in every revision. check
    used to fail listing.complete (MUST) for it; now it passes, with the not-implemented note `probe`
    gives. Its one failure is still the cancellation race of that SDK (see above)."""
    python = python_server_env("mcp-1.2.1")
    _, doc = _check(str(python), str(MCP1_LOWLEVEL_SERVER))
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert statuses["listing.complete"] == "pass" and statuses["resources.template-expands"] == "skipped"
    assert _bad(doc) == {"lifecycle.cancel-in-flight": "fail"}
    found = [f for f in doc["findings"] if f["code"] == "not-implemented"]
    assert [(f["severity"], f["kind"], f["detail"]["rpcCode"]) for f in found] == [("info", "templates", -32601)]
