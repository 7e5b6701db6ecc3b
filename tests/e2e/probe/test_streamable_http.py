"""Streamable HTTP as the specification asks of clients, against real servers on 127.0.0.1.

The server (tests/fixtures/stream_server.py) breaks its event streams and resumes them, sends
its own requests on the standalone GET stream, rate-limits, hands out a session id that cannot
be sent back, and answers with events larger than any sane limit.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import PY, ROOT, http_server, run_cli

STREAM = ROOT / "tests" / "fixtures" / "stream_server.py"


def _call(mode: str, *extra: str, env: dict[str, str] | None = None):
    with http_server([PY, str(STREAM), mode], env=env) as url:
        return run_cli(["call", "--yes", "work", "--json", *extra, url])


def _text(result) -> str:
    return result.json["result"]["content"][0]["text"]


@pytest.mark.parametrize("mode, expected", [
    ("resume", "resumed after e2 in 1 attempt(s)"),
    ("resume-twice", "resumed after e3 in 2 attempt(s)"),
])
def test_a_broken_event_stream_is_resumed_with_last_event_id(mode, expected):
    # The server closes the call's stream after an event id and `retry: 300`; it answers only a
    # GET that names that id and comes at least 300 ms later (else HTTP 400).
    result = _call(mode)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert _text(result) == expected


def test_a_reopened_get_stream_resumes_with_last_event_id():
    # watch reopens the standalone stream when the server closes it: after the server's retry:
    # time and with Last-Event-ID, so that what was sent in between can be replayed.
    with http_server([PY, str(STREAM), "get-resume"]) as url:
        proc = subprocess.run([sys.executable, "-m", "mcpprobe", "watch", "--json", "--exit-on-change",
                               "--duration", "30", "--protocol", "legacy", url],
                              capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "Traceback" not in proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    diffs = [e for e in events if e["event"] == "diff" and e["kind"] == "tools"]
    assert diffs and diffs[0]["added"] == ["after_resume"], proc.stdout[-2000:]
    assert proc.returncode == 1  # --exit-on-change: the change was seen


@pytest.mark.parametrize("mode, why", [
    ("resume-fails", "the resumed stream ended with nothing new"),
    ("resume-405", "HTTP 405"),
])
def test_a_resumption_that_fails_is_a_finding_not_a_hang(mode, why):
    result = _call(mode, "--timeout", "60")
    assert result.exit_code == 4, result.stdout + result.stderr
    error = result.json["error"]
    assert error["code"] == "resume-failed"
    assert "Last-Event-ID 'e2'" in error["message"] and why in error["message"]


def test_no_resumption_in_the_2026_era():
    # 2026-07-28 streamable HTTP has no Last-Event-ID resumption: a broken stream is just broken.
    with http_server([PY, str(STREAM), "resume-modern"]) as url:
        result = run_cli(["call", "--yes", "work", "--json", url])
    assert result.exit_code == 4, result.stdout + result.stderr
    assert result.json["era"] == "modern"
    assert result.json["error"]["code"] == "connection-failed"
    assert "ended without an answer" in result.json["error"]["message"]


def test_a_retry_past_the_deadline_gives_up_at_once():
    # retry: 10 minutes, --timeout 30: waiting would only end in a timeout; say why instead.
    result = _call("resume", "--timeout", "30", env={"FIXTURE_RETRY_MS": "600000"})
    assert result.exit_code == 4, result.stdout + result.stderr
    assert result.json["error"]["code"] == "resume-failed"
    assert "past the request's deadline" in result.json["error"]["message"]


@pytest.mark.parametrize("mode, command", [
    ("get-requests", ["call", "--yes", "work"]),
    ("get-requests", ["read", "data://answers"]),
    ("get-requests", ["get-prompt", "answers"]),
    ("get-requests-reopen", ["call", "--yes", "work"]),
])
def test_server_requests_on_the_get_stream_are_answered(mode, command):
    # ping, roots/list and elicitation/create arrive on the standalone GET stream, not on the
    # request's own stream; the server answers the request with the answers it got. With
    # get-requests-reopen they come on the stream opened again after the server closed the first.
    with http_server([PY, str(STREAM), mode]) as url:
        result = run_cli([*command, "--json", "--elicit", "defaults", "--root", "file:///srv/data", url])
    assert result.exit_code == 0, result.stdout + result.stderr
    answer = result.json["result"]
    text = (answer.get("content") or answer.get("contents") or [{}])[0].get("text") or \
        answer["messages"][0]["content"]["text"]
    answers = json.loads(text)
    assert answers["srv-ping"]["result"] == {}
    assert answers["srv-roots"]["result"]["roots"][0]["uri"] == "file:///srv/data"
    assert answers["srv-elicit"]["result"] == {"action": "accept", "content": {"count": 3}}


@pytest.mark.parametrize("header, seconds", [("7", 7), ("Wed, 21 Oct 2015 07:28:00 GMT", 0)])
def test_http_429_is_reported_as_rate_limiting_with_retry_after(header, seconds):
    result = _call("rate-limited", env={"FIXTURE_RETRY_AFTER": header})
    assert result.exit_code == 4, result.stdout + result.stderr
    error = result.json["error"]
    assert error["code"] == "rate-limited"
    assert "HTTP 429" in error["message"] and f"retry after {seconds} s" in error["message"]
    assert error["detail"]["retryAfter"] == seconds and error["detail"]["status"] == 429
    assert "malformed" not in result.stdout


def test_a_non_ascii_session_id_is_a_protocol_error():
    result = _call("bad-session-id")  # run_cli fails on any traceback
    assert result.exit_code == 5, result.stdout + result.stderr
    assert "Mcp-Session-Id" in result.json["error"]["message"]
    assert "not visible ASCII" in result.json["error"]["message"]


@pytest.mark.parametrize("mode", ["huge-event", "huge-json"])
def test_an_answer_over_the_default_limit_is_refused(mode):
    # 65 MiB on one line against the default 64 MiB limit, the connection then held open: read
    # once and refused at the limit, it is a protocol error within the --timeout, not a timeout.
    result = _call(mode, "--timeout", "20")
    assert result.exit_code == 5, result.stdout + result.stderr
    assert "larger than" in result.json["error"]["message"]
    assert "--max-message-size" in result.json["error"]["message"]


def test_an_endless_event_is_refused_as_soon_as_it_passes_the_limit():
    result = _call("huge-event", "--max-message-size", "1000000", "--timeout", "20",
                   env={"FIXTURE_EVENT_BYTES": str(1 << 40)})
    assert result.exit_code == 5, result.stdout + result.stderr
    assert "larger than 1000000 bytes" in result.json["error"]["message"]


def test_an_oversized_event_on_the_get_stream_ends_the_call_as_a_protocol_error():
    # The call's answer would take 30 s; the GET stream's event breaks the limit long before.
    result = _call("huge-get-event", "--max-message-size", "1000000", "--timeout", "60",
                   env={"FIXTURE_EVENT_BYTES": str(1 << 40)})
    assert result.exit_code == 5, result.stdout + result.stderr
    assert "GET" in result.json["error"]["message"]
    assert "larger than 1000000 bytes" in result.json["error"]["message"]


@pytest.mark.parametrize("version, code, exit_code", [
    ("2024-11-05", "protocol-violation", 0),
    ("2025-03-26", None, 0),
    ("2025-06-18", "batch-not-allowed", 1),
    ("2025-11-25", "batch-not-allowed", 1),
])
def test_a_batch_reply_is_judged_by_the_negotiated_version(version, code, exit_code):
    result = run_cli(["list", "tools", "--json", "--", PY, str(STREAM), "batch", version])
    assert result.exit_code == exit_code, result.stdout + result.stderr
    doc = result.json
    assert doc["protocolVersion"] == version
    assert [t["name"] for t in doc["items"]] == ["work"]  # the batch's answer is used either way
    batch = [f for f in doc["findings"] if "batch" in f["message"]]
    assert [f["code"] for f in batch] == ([code] if code else [])


def test_a_get_stream_that_is_not_one_leaves_the_call_alone():
    # The GET stream is optional: a server that answers it with 200 and a JSON body (not an event
    # stream) still serves the call.
    result = _call("get-json")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert _text(result) == "done"


def test_an_sdk_servers_elicitation_on_the_get_stream_is_answered():
    # The SDK's server sends a request tied to no client request (no related_request_id) on the
    # standalone GET stream; with none open, the call would wait for its --timeout.
    sdk = ROOT / "tests" / "fixtures" / "sdk_server.py"
    with http_server([PY, str(sdk), "--http", "0"]) as url:
        result = run_cli(["call", "--yes", "confirm_action", "channel=standalone", "--json", "--protocol", "legacy",
                          "--elicit", "defaults", "--timeout", "20", url])
    assert result.exit_code == 0, result.stdout + result.stderr
    answer = {"action": "accept", "content": {"confirm": False, "reason": "none given"}}
    assert result.json["result"]["content"][0]["text"] == f"elicitation answer: {json.dumps(answer, sort_keys=True)}"
