"""`mcpprobe check`'s stream and custom-header checks (mcpprobe.check.streams) on
tests/fixtures/check_http_server.py: right event streams pass every check; x-mcp-header's server
side is judged only on a tool named with --call, and never runs the tool again on a server that
follows the rule. (The modes that break one check each are in test_check_http.py's HTTP_BROKEN.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import PY, ROOT, checked, http_server, run_cli

from tests.fixtures.check_http_server import MODES

HTTP_SERVER = ROOT / "tests" / "fixtures" / "check_http_server.py"
BAD = ("fail", "warn", "error")
STREAMS = ("http.concurrent-requests", "http.sse-priming", "http.sse-resume", "http.param-header")
# The checks failed here by a mode of their own (the others' modes are in test_check_http.py's HTTP_BROKEN)
STREAMS_BROKEN_IDS = {"http.param-header"}


def run_check(url: str, protocol: str, *options: str) -> tuple[int, dict]:
    result = run_cli(["check", "--json", "--level", "may", "--unsafe", "--timeout", "10", "--protocol", protocol,
                      *options, url])
    assert result.stdout, result.stderr
    return result.exit_code, checked(json.loads(result.stdout))


def statuses(doc: dict) -> dict[str, str]:
    return {entry["id"]: entry["status"] for entry in doc["checks"]}


def entry(doc: dict, check_id: str) -> dict:
    return next(e for e in doc["checks"] if e["id"] == check_id)


def ran(record: Path) -> list[str]:
    """The tools that ran, in order, as the fixture recorded them."""
    lines = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return [line["method"] for line in lines if line["verb"] == "RUN"]


def test_the_modes_of_these_checks_are_all_here() -> None:
    assert {"sse", "sse-polling", "param-header", "param-header-ignored"} <= set(MODES)


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
def test_right_event_streams_pass_every_check(protocol: str) -> None:
    """Every request answered with an event stream that opens with a priming event, and a GET with
    Last-Event-ID that replays the rest of that stream: nothing fails, and the stream checks pass
    where their revision has them."""
    with http_server([PY, str(HTTP_SERVER), "sse"]) as url:
        code, doc = run_check(url, protocol)
    found = statuses(doc)
    assert code == 0 and not {cid: s for cid, s in found.items() if s in BAD}, doc["checks"]
    if protocol == "legacy":
        assert [found[cid] for cid in STREAMS] == ["pass", "pass", "pass", "n/a"]
        # each stream brings its response before it ends: the server did not close one early
        assert found["http.sse-retry"] == "n/a" and "did not close it early" in entry(doc, "http.sse-retry")["message"]
        assert "an event stream" in entry(doc, "http.concurrent-requests")["message"]
        assert "priming event" in entry(doc, "http.sse-priming")["message"]
        resumed = entry(doc, "http.sse-resume")
        assert "its response replayed" in resumed["message"]
        assert any(e["sent"].startswith("GET ") and "Last-Event-ID: " in e["sent"] for e in resumed["evidence"])
    else:  # 2026-07-28 has no priming events nor resumption
        assert [found[cid] for cid in STREAMS] == ["pass", "n/a", "n/a", "skipped"]


def test_a_server_that_closes_each_ping_stream_early_passes(tmp_path: Path) -> None:
    """Polling (SEP-1699): each `ping` stream ends after its priming event (retry: 100), and its response
    comes on the GET that resumes it. It may ("the server MAY close the connection"): nothing fails,
    http.sse-retry passes, and the three requests sent at once are each answered once resumed."""
    with http_server([PY, str(HTTP_SERVER), "sse-polling"]) as url:
        code, doc = run_check(url, "legacy")
    found = statuses(doc)
    assert code == 0 and not {cid: s for cid, s in found.items() if s in BAD}, doc["checks"]
    assert [found[cid] for cid in (*STREAMS[:3], "http.sse-retry")] == ["pass"] * 4
    retried = entry(doc, "http.sse-retry")
    assert "with retry: 100" in retried["message"] and "it brought the response" in retried["message"]
    concurrent = entry(doc, "http.concurrent-requests")
    assert [e["sent"].split(" ", 1)[0] for e in concurrent["evidence"]] == ["POST"] * 3 + ["GET"] * 3


def test_json_answers_leave_nothing_to_prime_or_resume() -> None:
    with http_server([PY, str(HTTP_SERVER), "ok"]) as url:
        _, doc = run_check(url, "legacy", "--only", "http")
    for check_id in ("http.sse-priming", "http.sse-retry", "http.sse-resume"):
        found = entry(doc, check_id)
        assert found["status"] == "n/a" and "application/json, not an event stream" in found["message"], found
    assert entry(doc, "http.concurrent-requests")["status"] == "pass"
    assert len(entry(doc, "http.concurrent-requests")["evidence"]) == 3  # three POSTs, each its own answer


def test_a_server_that_checks_its_param_header_passes_and_the_tool_runs_once(tmp_path: Path) -> None:
    """The named call runs the tool; the two requests whose Mcp-Param-Region contradicts the body or
    is missing are refused (400, -32020) before the tool runs: the record has one run."""
    record = tmp_path / "http.jsonl"
    with http_server([PY, str(HTTP_SERVER), "param-header"], env={"CHECK_HTTP_RECORD": str(record)}) as url:
        code, doc = run_check(url, "modern", "--call", "route region=eu-west")
    found = statuses(doc)
    assert code == 0 and not {cid: s for cid, s in found.items() if s in BAD}, doc["checks"]
    checked_entry = entry(doc, "http.param-header")
    assert checked_entry["status"] == "pass" and "route (Mcp-Param-Region)" in checked_entry["message"]
    sent = [e["sent"] for e in checked_entry["evidence"]]
    assert "Mcp-Param-Region: mcpprobe-mismatch" in sent[0] and "Mcp-Param-Region" not in sent[1]
    assert ran(record) == ["route"]


def test_a_server_that_ignores_its_param_header_fails_that_check_alone(tmp_path: Path) -> None:
    """The mismatched request ran the tool (a second run, of the arguments named): fail, and nothing
    more is sent (not the request without the header)."""
    record = tmp_path / "http.jsonl"
    with http_server([PY, str(HTTP_SERVER), "param-header-ignored"],
                     env={"CHECK_HTTP_RECORD": str(record)}) as url:
        code, doc = run_check(url, "modern", "--call", "route region=eu-west")
    found = statuses(doc)
    assert found["http.param-header"] == "fail", doc["checks"]
    assert {cid: s for cid, s in found.items() if cid != "http.param-header" and s in BAD} == {}
    failed_entry = entry(doc, "http.param-header")
    assert "was answered with a result" in failed_entry["message"] and len(failed_entry["evidence"]) == 1
    assert "HTTP 200" in failed_entry["evidence"][0]["received"]
    assert ran(record) == ["route", "route"] and code == 1


def test_a_tool_not_marked_read_only_is_sent_again_only_with_yes(tmp_path: Path) -> None:
    """route_write is not read-only: without --yes the named call itself is refused (nothing sent);
    with --yes it is called, and its header judged."""
    record = tmp_path / "http.jsonl"
    with http_server([PY, str(HTTP_SERVER), "param-header-ignored"],
                     env={"CHECK_HTTP_RECORD": str(record)}) as url:
        _, refused = run_check(url, "modern", "--only", "http.param-header", "--call", "route_write region=eu")
        assert ran(record) == []
        _, confirmed = run_check(url, "modern", "--only", "http.param-header", "--call", "route_write region=eu",
                                 "--yes")
    assert entry(refused, "http.param-header")["status"] == "skipped"
    assert "pass --yes to call it" in entry(refused, "http.param-header")["message"]
    assert entry(confirmed, "http.param-header")["status"] == "fail"
    assert ran(record) == ["route_write", "route_write"]


def test_without_a_header_parameter_nothing_is_sent(tmp_path: Path) -> None:
    """A named tool with no x-mcp-header parameter: skipped, and the tool ran once (the named call)."""
    record = tmp_path / "http.jsonl"
    with http_server([PY, str(HTTP_SERVER), "param-header"], env={"CHECK_HTTP_RECORD": str(record)}) as url:
        _, doc = run_check(url, "modern", "--only", "http.param-header", "--call", "route")
    found = entry(doc, "http.param-header")
    assert found["status"] == "skipped" and "no named tool has an x-mcp-header parameter" in found["message"], found
    # its evidence is the named call alone: no request of its own was sent
    assert not [e for e in found.get("evidence", []) if e["sent"].startswith("POST ")], found["evidence"]
    assert ran(record) == ["route"]
