"""Tool parameters marked `x-mcp-header` (SEP-2243) travel as `Mcp-Param-*` headers in the 2026-07-28
era over streamable HTTP, in `call`, `watch --call`, `check --call` and `load --call` alike (one
mechanism: the session's envelope); tools whose annotations break the rules are left out of the list
and refused. Against tests/fixtures/param_header_server.py on 127.0.0.1, which records the headers
of every tools/call it receives and answers a wrong or missing one with 400 and -32020.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import PY, ROOT, http_server, run_cli

SERVER = ROOT / "tests" / "fixtures" / "param_header_server.py"
BAD_RULES = {
    "bad_empty": "not-empty",
    "bad_space": "token",
    "bad_not_string": "token",
    "bad_control": "no-control-characters",
    "bad_number": "primitive-type",
    "bad_nullable": "primitive-type",
    "bad_duplicate": "unique",
    "bad_in_items": "statically-reachable",
    "bad_in_defs": "statically-reachable",
}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    record = tmp_path / "calls.jsonl"
    with http_server([PY, str(SERVER)], env={"PARAM_RECORD": str(record)}) as url:
        yield url, record


def calls(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []


def call(url: str, *args: str, protocol: str = "modern") -> Any:
    return run_cli(["call", "--json", "--protocol", protocol, *args, url])


def test_plain_values_travel_as_their_headers_and_unannotated_ones_do_not(served) -> None:
    url, record = served
    result = call(url, "route", "region=us-west1", "priority:=42", "verbose:=false", "method=test-method",
                  "note=us west 1", 'options:={"zone": "b"}', "query=SELECT 1")
    assert result.exit_code == 1, result.stderr  # 1: the server's invalid tools (below), not this call
    assert result.json["result"]["content"][0]["text"] == "called route"  # the server found the headers right
    sent = {"Mcp-Param-Region": "us-west1", "Mcp-Param-Priority": "42", "Mcp-Param-Verbose": "false",
            "Mcp-Param-Method": "test-method", "Mcp-Param-Note": "us west 1", "Mcp-Param-Zone": "b"}
    assert calls(record) == [{"era": "modern", "tool": "route", "headers": sent}]
    assert result.json["paramHeaders"] == sent  # the document says what went on the wire


@pytest.mark.parametrize("value, header", [
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),  # the specification's examples, exactly
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ("\tindented", "=?base64?CWluZGVudGVk?="),
    ("", ""),
])
def test_unsafe_values_travel_in_base64(served, value: str, header: str) -> None:
    url, record = served
    result = call(url, "route", "--args", json.dumps({"region": "r", "note": value}))
    assert result.json["result"]["content"][0]["text"] == "called route"
    assert calls(record)[0]["headers"]["Mcp-Param-Note"] == header


def test_null_is_refused_by_the_schema_and_with_force_sent_without_its_header(served) -> None:
    url, record = served
    refused = call(url, "route", "region=r", "verbose:=null")
    assert refused.exit_code == 3 and refused.json["error"]["code"] == "invalid-arguments"
    assert calls(record) == []
    forced = call(url, "--force", "route", "region=r", "verbose:=null", "priority:=1")
    assert forced.json["result"]["content"][0]["text"] == "called route"
    assert calls(record) == [{"era": "modern", "tool": "route",
                              "headers": {"Mcp-Param-Region": "r", "Mcp-Param-Priority": "1"}}]
    assert "forced" in forced.codes()


def test_an_integer_beyond_the_safe_range_is_refused(served) -> None:
    url, record = served
    result = call(url, "route", "region=r", "priority:=9007199254740992")
    assert result.exit_code == 3 and result.json["error"]["code"] == "invalid-arguments"
    assert "safe range" in result.json["error"]["message"] and calls(record) == []


def test_list_tools_leaves_out_invalid_tools_and_shows_the_header_parameters(served) -> None:
    url, _ = served
    result = run_cli(["list", "tools", "--json", url])
    doc = result.json
    assert result.exit_code == 1
    assert [tool["name"] for tool in doc["items"]] == ["route", "plain", "data_only"]
    assert {entry["id"]: entry["rule"] for entry in doc["excludedItems"]} == BAD_RULES
    left_out = sorted(f["detail"]["id"] for f in doc["findings"] if f["code"] == "invalid-x-mcp-header")
    assert left_out == sorted(BAD_RULES)
    assert doc["headerParams"] == {"route": {
        "region": "Mcp-Param-Region", "priority": "Mcp-Param-Priority", "verbose": "Mcp-Param-Verbose",
        "note": "Mcp-Param-Note", "method": "Mcp-Param-Method", "options.zone": "Mcp-Param-Zone"}}
    human = run_cli(["list", "tools", url])
    assert "Parameters also sent as HTTP headers (x-mcp-header):" in human.stdout
    assert "route: region → Mcp-Param-Region, priority → Mcp-Param-Priority" in human.stdout
    assert "invalid-x-mcp-header" in human.stdout


def test_probe_reports_the_invalid_tools(served) -> None:
    url, _ = served
    doc = run_cli(["probe", "--json", url]).json
    assert {entry["id"] for entry in doc["kinds"]["tools"]["excludedItems"]} == set(BAD_RULES)
    assert doc["kinds"]["tools"]["count"] == 3
    assert doc["kinds"]["tools"]["headerParams"]["route"]["options.zone"] == "Mcp-Param-Zone"
    human = run_cli(["probe", url]).stdout
    assert "  route: region → Mcp-Param-Region" in human and "tool 'bad_in_defs' is left out" in human


@pytest.mark.parametrize("tool", sorted(BAD_RULES))
def test_call_refuses_a_tool_left_out_and_names_the_rule(served, tool: str) -> None:
    url, record = served
    result = call(url, tool, "value=x")
    assert result.exit_code == 3
    error = result.json["error"]
    assert error["code"] == "invalid-x-mcp-header" and error["detail"]["rule"] == BAD_RULES[tool]
    assert "MUST" in error["message"] and calls(record) == []


def test_force_calls_a_left_out_tool_without_headers(served) -> None:
    url, record = served
    result = call(url, "--force", "--yes", "bad_space", "value=x")
    assert result.json["result"]["content"][0]["text"] == "called bad_space"
    assert calls(record) == [{"era": "modern", "tool": "bad_space", "headers": {}}]


def test_the_legacy_era_sends_no_param_headers_and_leaves_nothing_out(served) -> None:
    url, record = served
    listed = run_cli(["list", "tools", "--json", "--protocol", "legacy", url]).json
    assert len(listed["items"]) == 3 + len(BAD_RULES) and "excludedItems" not in listed
    assert "headerParams" not in listed
    result = call(url, "bad_space", "value=x", protocol="legacy")
    assert result.exit_code == 0, result.stderr
    assert "paramHeaders" not in result.json
    call(url, "route", "region=r", protocol="legacy")
    assert calls(record) == [{"era": "legacy", "tool": "bad_space", "headers": {}},
                             {"era": "legacy", "tool": "route", "headers": {}}]


def test_check_call_sends_the_headers(served) -> None:
    url, record = served
    result = run_cli(["check", "--json", "--protocol", "modern", "--only", "tools.call-named", "--call",
                      "route region=eu priority:=7", url])
    assert result.stdout, result.stderr
    assert [c for c in calls(record) if c["tool"] == "route"][0]["headers"] == {
        "Mcp-Param-Region": "eu", "Mcp-Param-Priority": "7"}


def test_load_call_sends_the_headers_on_every_request(served) -> None:
    url, record = served
    result = run_cli(["load", "--json", "--protocol", "modern", "--call", "route region=eu verbose:=true",
                      "--requests", "5", url])
    assert result.exit_code == 0, result.stderr
    overall = result.json["overall"]
    assert overall["requests"] == overall["ok"] == 5
    assert [c["headers"] for c in calls(record)] == [{"Mcp-Param-Region": "eu", "Mcp-Param-Verbose": "true"}] * 5


def test_watch_call_sends_the_headers(served) -> None:
    url, record = served
    proc = subprocess.run([PY, "-m", "mcpprobe", "watch", "--json", "--duration", "2", "--protocol", "modern",
                           "--call", "route region=ap", url], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert calls(record)[0] == {"era": "modern", "tool": "route", "headers": {"Mcp-Param-Region": "ap"}}


# ----- -32020 HeaderMismatch: one re-list, one retry (the SHOULD of SEP-2243) -----

def _mode_server(tmp_path: Path, mode: str) -> Any:
    record = tmp_path / "requests.jsonl"
    return http_server([PY, str(SERVER)], env={"PARAM_RECORD": str(record), "PARAM_MODE": mode}), record


def requests_of(record: Path) -> list[dict[str, Any]]:
    """PARAM_MODE records every request (with its method); the tools/call lines without one are the
    per-call record every mode writes."""
    return [entry for entry in calls(record) if "method" in entry]


def test_header_mismatch_relists_once_and_retries_once(tmp_path: Path) -> None:
    """The first tools/list names the header Mcp-Param-OldRegion, the server expects Mcp-Param-Region:
    the first call gets -32020, mcpprobe lists the tools again and sends the call once more with the
    header the new list names, which the server accepts."""
    server, record = _mode_server(tmp_path, "renamed")
    with server as url:
        result = call(url, "moving", "region=eu", "--yes")
    sent = requests_of(record)
    assert [e["method"] for e in sent if e["method"] != "server/discover"] == [
        "tools/list", "tools/call", "tools/list", "tools/call"], sent
    tool_calls = [e["headers"] for e in sent if e["method"] == "tools/call"]
    assert [h.get("Mcp-Param-OldRegion") for h in tool_calls] == ["eu", None]
    assert [h.get("Mcp-Param-Region") for h in tool_calls] == [None, "eu"]
    assert result.json["result"]["content"][0]["text"] == "called moving", result.stdout
    assert result.json["paramHeaders"] == {"Mcp-Param-Region": "eu"}  # the headers of the call that was answered


def test_header_mismatch_twice_is_the_answer_not_a_loop(tmp_path: Path) -> None:
    """The server expects a header its list never names: one re-list, one retry, then the -32020 is
    the outcome (exit 5), and nothing more is sent."""
    server, record = _mode_server(tmp_path, "stubborn")
    with server as url:
        result = call(url, "moving", "region=eu", "--yes")
    sent = [e["method"] for e in requests_of(record) if e["method"] != "server/discover"]
    assert sent == ["tools/list", "tools/call", "tools/list", "tools/call"], sent
    assert result.exit_code == 5, result.stderr
    error = result.json["error"]
    assert error["detail"]["rpcCode"] == -32020 and error["detail"]["retried"] is True
    assert "retried once" in error["message"]


def test_header_mismatch_in_the_legacy_era_is_not_retried(tmp_path: Path) -> None:
    """Before 2026-07-28 no header is mirrored, so a -32020 could not be about them: no re-list."""
    server, record = _mode_server(tmp_path, "stubborn")
    with server as url:
        result = call(url, "moving", "region=eu", "--yes", protocol="legacy")
    assert result.exit_code == 0, result.stderr  # the legacy server does not check the headers
    assert [e["method"] for e in requests_of(record)].count("tools/list") == 1


def test_watch_call_retries_a_header_mismatch_once_too(tmp_path: Path) -> None:
    server, record = _mode_server(tmp_path, "renamed")
    with server as url:
        proc = subprocess.run([PY, "-m", "mcpprobe", "watch", "--json", "--duration", "2", "--protocol", "modern",
                               "--call", "moving region=eu", url], capture_output=True, text=True, timeout=60,
                              cwd=ROOT)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(e["tool"], e["text"]) for e in events if e["event"] == "call"] == [("moving", "called moving")], events
    assert [e["method"] for e in requests_of(record)].count("tools/call") == 2


# ----- the tasks extension over streamable HTTP: Mcp-Name carries the task id -----

def test_tasks_requests_carry_the_task_id_in_mcp_name_over_http(tmp_path: Path) -> None:
    """2026-07-28, streamable HTTP: `Mcp-Name` is `params.taskId` for tasks/get, tasks/update and
    tasks/cancel; the header as it arrived at a real server on 127.0.0.1."""
    server, record = _mode_server(tmp_path, "tasks")
    with server as url:
        result = call(url, "slow", "value=x", "--yes")
    assert result.exit_code == 1, result.stderr  # 1: the server's invalid tools, not this call
    assert result.json["result"]["content"][0]["text"] == "slow done"
    task_id = result.json["task"]["taskId"]
    sent = requests_of(record)
    gets = [e["headers"] for e in sent if e["method"] == "tasks/get"]
    assert gets and all(h.get("Mcp-Name") == task_id and h.get("Mcp-Method") == "tasks/get" for h in gets), sent
    tool_call = next(e["headers"] for e in sent if e["method"] == "tools/call")
    assert tool_call.get("Mcp-Name") == "slow"



def test_check_sends_the_task_id_in_mcp_name_for_tasks_get_and_cancel_over_http(tmp_path: Path) -> None:
    """`check`'s tasks.ext-* checks over streamable HTTP: tasks/get, tasks/update and tasks/cancel
    carry their taskId in Mcp-Name, the removed tasks/result gets the -32601 (in an HTTP 404) of any
    unknown method, and the fixture, right about the extension, passes them all."""
    from mcpprobe.check.catalogue import CHECKS

    server, record = _mode_server(tmp_path, "tasks")
    with server as url:
        result = run_cli(["check", "--json", "--protocol", "modern", "--only", "tasks", "--timeout", "5", url])
    doc = json.loads(result.stdout)
    ext = {e["id"]: e["status"] for e in doc["checks"] if e["id"].startswith("tasks.ext-")}
    assert set(ext) == {check.id for check in CHECKS if check.id.startswith("tasks.ext-")} and len(ext) == 8
    # every one passes but the check of tasks created by --call, which needs a --call, and the one of
    # subscriptions/listen, which this server does not have (-32601 in an HTTP 404)
    assert ext.pop("tasks.ext-created-task-resolves") == "skipped"
    assert ext.pop("tasks.ext-undeclared-listen") == "skipped"
    assert set(ext.values()) == {"pass"}, doc["checks"]
    sent = [e for e in requests_of(record) if str(e["method"]).startswith("tasks/")]
    assert {e["method"] for e in sent} == {"tasks/get", "tasks/update", "tasks/cancel", "tasks/result"}
    assert "subscriptions/listen" in [e["method"] for e in requests_of(record)]
    assert all(e["headers"].get("Mcp-Method") == e["method"] for e in sent), sent
    assert all(e["headers"].get("Mcp-Name") == "mcpprobe-no-such-task"
               for e in sent if e["method"] != "tasks/result"), sent


def test_check_judges_the_task_a_named_call_created_over_http(tmp_path: Path) -> None:
    """`check --call` over streamable HTTP: the named tool is called once, its task polled with its
    taskId in Mcp-Name, and tasks.ext-created-task-resolves judges that very call."""
    server, record = _mode_server(tmp_path, "tasks")
    with server as url:
        result = run_cli(["check", "--json", "--protocol", "modern", "--only", "tasks", "--only", "tools.call-named",
                          "--call", "slow value=x", "--yes", "--timeout", "5", url])
    doc = json.loads(result.stdout)
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-created-task-resolves")
    assert (entry["status"], entry["message"]) == (
        "pass", "the first tasks/get of each task the named calls created found it: slow (1 tasks/get)"), entry
    sent = requests_of(record)
    assert [e["method"] for e in sent].count("tools/call") == 1
    named = [e for e in sent if e["method"] == "tasks/get" and e["headers"].get("Mcp-Name") != "mcpprobe-no-such-task"]
    assert len(named) == 1 and named[0]["headers"]["Mcp-Name"].startswith("task-"), sent
