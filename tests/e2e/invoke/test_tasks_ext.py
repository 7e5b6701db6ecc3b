"""`call` and `list tasks` against the tasks extension of the 2026-07-28 era (SEP-2663), with
tests/fixtures/tasks_ext_server.py: a real server process over stdio, which records every message
it receives. The 2025-11-25 experimental tasks have their own tests (test_tasks.py)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, interrupted, run_cli
from jsonschema import Draft202012Validator

from mcpprobe.client.capabilities import TASKS_EXTENSION, missing_for
from mcpprobe.client.era import META_CLIENT_CAPS, MODERN
from mcpprobe.client.session import Snapshot

PY = sys.executable
FIXTURE = ROOT / "tests" / "fixtures" / "tasks_ext_server.py"
MODERN_ONLY = ["--protocol", "2026-07-28"]


def server(*options: str) -> list[str]:
    return ["--", PY, str(FIXTURE), *options]


def received(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def methods(path: Path) -> list[str]:
    return [entry["method"] for entry in received(path) if "method" in entry]


def declared_extension(entry: dict[str, Any]) -> bool:
    caps = entry["params"].get("_meta", {}).get(META_CLIENT_CAPS, {})
    return TASKS_EXTENSION in (caps.get("extensions") or {})


def call(tmp_path: Path, tool: str, *args: str, options: tuple[str, ...] = ()) -> tuple[Any, dict[str, Any], Path]:
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", tool, *args, "--yes", "--json", *MODERN_ONLY,
                      "--env", f"TASKS_EXT_RECORD={record}", *server(*options)])
    return result, result.json, record


def codes(doc: dict[str, Any]) -> list[str]:
    return [f["code"] for f in doc["findings"]]


def valid(doc: dict[str, Any]) -> None:
    schema = json.loads((ROOT / "docs" / "output.schema.json").read_text())
    assert list(Draft202012Validator(schema).iter_errors(doc)) == []


# ----- the envelope and the capability table -----


def test_the_extension_serves_its_methods_and_not_the_legacy_ones():
    caps = {"tools": {}, "extensions": {TASKS_EXTENSION: {}}}
    assert missing_for(caps, "tasks/get") is None and missing_for(caps, "tasks/cancel") is None
    assert missing_for(caps, "tasks/update") is None
    assert missing_for(caps, "tasks/list") == "tasks.list" and missing_for(caps, "tasks/result") == "tasks"
    assert missing_for({"tools": {}}, "tasks/update") == f"extensions.{TASKS_EXTENSION}"


def test_tasks_requests_carry_the_task_id_as_mcp_name_and_the_per_request_declaration():
    snapshot = Snapshot("http", "x", {"name": "mcpprobe"}, {"roots": {}}, protocol_version="2026-07-28")
    params = {"taskId": "t-1", "_meta": {META_CLIENT_CAPS: {"extensions": {TASKS_EXTENSION: {}}}}}
    sent, headers = MODERN.envelope(snapshot, "tasks/get", params)
    assert headers == {"Mcp-Method": "tasks/get", "Mcp-Name": "t-1"}  # SEP-2663, "Routing Headers"
    assert sent["_meta"][META_CLIENT_CAPS] == {"roots": {}, "extensions": {TASKS_EXTENSION: {}}}
    # A request that declares nothing of its own carries the session's capabilities unchanged.
    plain, _ = MODERN.envelope(snapshot, "tools/list", {})
    assert plain["_meta"][META_CLIENT_CAPS] == {"roots": {}}


# ----- a tool the server runs only as a task -----


def test_required_tool_runs_as_a_task_polled_at_the_poll_interval(tmp_path):
    result, doc, record = call(tmp_path, "render", "title=tides", "steps=3", options=("--poll-interval", "300"))
    assert result.exit_code == 0, result.stderr
    valid(doc)
    assert doc["era"] == "modern"
    assert "task" not in doc["request"]["params"]  # the extension has no task param: the server decides
    assert declared_extension(doc["request"])
    task = doc["task"]
    assert task["status"] == "completed" and task["polls"] == 3 and task["pollInterval"] == 300
    assert task["ttl"] == 60_000 and task["cancel"] is None
    assert [h["status"] for h in task["history"]] == ["working", "working", "working", "completed"]
    assert doc["result"]["content"] == [{"type": "text", "text": "rendered tides"}]
    sent = received(record)
    gets = [e for e in sent if e.get("method") == "tasks/get"]
    assert len(gets) == 3 and all(e["params"]["taskId"] == task["taskId"] and declared_extension(e) for e in gets)
    assert not {"tasks/result", "tasks/cancel", "tasks/list"} & set(methods(record))
    # Each poll waits the server's pollIntervalMs, counted from the answer before it (a slow
    # machine only makes the gaps longer).
    call_at = next(e["t"] for e in sent if e.get("method") == "tools/call")
    times = [call_at] + [e["t"] for e in gets]
    assert all(later - earlier >= 0.27 for earlier, later in zip(times, times[1:], strict=False)), times


def test_human_output_shows_the_statuses_and_the_result(tmp_path):
    result = run_cli(["call", "render", "title=tides", "--yes", *MODERN_ONLY, *server()])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "rendered tides\n"
    assert "task working: starting" in result.stderr and "task working: step 1 of 2" in result.stderr
    assert "working → completed (2 polls)" in result.stderr


def test_required_tool_without_the_extension_is_the_servers_minus_32021(tmp_path):
    result, doc, record = call(tmp_path, "render", "--no-task")
    assert result.exit_code == 5
    assert doc["error"]["detail"]["rpcCode"] == -32021 and doc["error"]["detail"]["declared"] is False
    assert "runs only as a task" in doc["error"]["message"] and TASKS_EXTENSION in doc["error"]["message"]
    assert not declared_extension(next(e for e in received(record) if e.get("method") == "tools/call"))
    assert "tasks/get" not in methods(record)


# ----- a tool the server runs as a task only for a client that can take one -----


def test_optional_tool_is_a_task_with_the_extension_and_plain_without(tmp_path):
    result, doc, _ = call(tmp_path, "convert", "value=42")
    assert result.exit_code == 0, result.stderr
    assert doc["task"]["status"] == "completed" and doc["task"]["polls"] == 1
    assert doc["result"]["content"][0]["text"] == "converted 42 as a task"
    (tmp_path / "plain").mkdir()
    result, doc, record = call(tmp_path / "plain", "convert", "value=42", "--no-task")
    assert result.exit_code == 0, result.stderr
    valid(doc)
    assert doc["task"] is None and doc["result"]["content"][0]["text"] == "converted 42 at once"
    assert not declared_extension(doc["request"])
    assert "tasks/get" not in methods(record)


def test_task_against_a_server_without_the_extension_is_refused_before_sending(tmp_path):
    result, doc, record = call(tmp_path, "convert", "--task", options=("--no-tasks",))
    assert result.exit_code == 3
    assert doc["error"]["detail"]["missing"] == f"extensions.{TASKS_EXTENSION}"
    assert "tasks.requests.tools.call" in doc["error"]["message"]  # says the 2025-11-25 capability does not apply
    assert "tools/call" not in methods(record)


def test_task_with_force_declares_it_anyway(tmp_path):
    result, doc, record = call(tmp_path, "convert", "value=1", "--task", "--force", options=("--no-tasks",))
    assert result.exit_code == 0, result.stderr
    assert "forced" in codes(doc)
    assert declared_extension(next(e for e in received(record) if e.get("method") == "tools/call"))
    assert doc["result"]["content"][0]["text"] == "converted 1 at once"  # the server did not take it: its choice


def test_a_task_to_a_call_that_did_not_declare_the_extension_is_a_protocol_failure(tmp_path):
    result, doc, record = call(tmp_path, "pushy", "--no-task")
    assert result.exit_code == 5
    assert doc["error"]["code"] == "protocol-error"
    assert "MUST NOT return CreateTaskResult" in doc["error"]["message"]
    assert "tasks/get" not in methods(record)


# ----- input, failure, cancellation -----


def test_input_required_is_answered_with_tasks_update_once(tmp_path):
    result, doc, record = call(tmp_path, "approve", "--elicit", "defaults")
    assert result.exit_code == 0, result.stderr
    assert doc["result"]["content"][0]["text"] == 'approved: {"action": "accept", "content": {"ok": true}}'
    assert [h["status"] for h in doc["task"]["history"]] == ["working", "input_required", "working", "completed"] \
        or [h["status"] for h in doc["task"]["history"]] == ["working", "input_required", "completed"]
    updates = [e for e in received(record) if e.get("method") == "tasks/update"]
    assert len(updates) == 1 and declared_extension(updates[0])
    assert updates[0]["params"]["inputResponses"] == {"approval-1": {"action": "accept", "content": {"ok": True}}}
    assert doc["inputRequests"][0]["key"] == "approval-1" and "input-required" in codes(doc)


def test_input_asked_before_the_task_then_the_task(tmp_path):
    """A multi round-trip exchange (SEP-2322) resolved before the CreateTaskResult, as SEP-2663 composes them."""
    result, doc, record = call(tmp_path, "staged", "--elicit", "defaults")
    assert result.exit_code == 0, result.stderr
    assert doc["result"]["content"][0]["text"] == 'staged: {"action": "accept", "content": {"start": true}}'
    calls = [e for e in received(record) if e.get("method") == "tools/call"]
    assert len(calls) == 2 and all(declared_extension(e) for e in calls)
    assert "go" in calls[1]["params"]["inputResponses"]
    assert doc["task"]["status"] == "completed" and "tasks/update" not in methods(record)


def test_input_refused_cancels_the_task(tmp_path):
    result, doc, record = call(tmp_path, "approve")
    assert result.exit_code == 1
    assert "input-required-refused" in codes(doc) and doc["result"] is None
    cancels = [e for e in received(record) if e.get("method") == "tasks/cancel"]
    assert len(cancels) == 1 and cancels[0]["params"]["taskId"] == doc["task"]["taskId"]
    assert doc["task"]["cancel"] == {"sent": True, "acknowledged": True}
    assert "tasks/update" not in methods(record)


def test_failed_task_is_its_json_rpc_error(tmp_path):
    result, doc, _ = call(tmp_path, "explode")
    assert result.exit_code == 5
    assert doc["error"]["detail"]["method"] == "tasks/get" and doc["error"]["detail"]["rpcCode"] == -32603
    assert doc["error"]["detail"]["taskId"] == doc["task"]["taskId"] and doc["task"]["status"] == "failed"


def test_failed_task_whose_error_is_no_json_rpc_error_is_a_protocol_violation(tmp_path):
    """"the `error` field **MUST** contain that JSON-RPC error" (SEP-2663): an error without an integer code
    is still shown (as -32603, mcpprobe's reading of it), with the violation beside it."""
    result, doc, _ = call(tmp_path, "explode", options=("--break", "failed-error"))
    assert result.exit_code == 5
    assert doc["error"]["detail"]["rpcCode"] == -32603 and doc["task"]["status"] == "failed"
    violation = next(f for f in doc["findings"] if f["code"] == "protocol-violation")
    assert violation["detail"]["errors"] == [
        "the failed task's error is not a JSON-RPC error (an integer code and a string message)"]
    valid(doc)


def test_task_whose_ttl_and_poll_interval_are_strings_is_followed_with_a_protocol_violation(tmp_path):
    result, doc, _ = call(tmp_path, "render", options=("--break", "ttl-string"))
    assert doc["result"]["content"][0]["text"] == "rendered untitled"
    violations = [f["detail"]["errors"] for f in doc["findings"] if f["code"] == "protocol-violation"]
    assert violations == [["ttlMs is not a number (or null for unlimited)", "pollIntervalMs is not a number"]] * 2
    valid(doc)


def test_task_cancelled_by_the_server_has_no_result(tmp_path):
    result, doc, record = call(tmp_path, "abandoned")
    assert result.exit_code == 1
    assert doc["result"] is None and doc["task"]["status"] == "cancelled"
    assert "the server gave up" in next(f for f in doc["findings"] if f["code"] == "task-cancelled")["message"]
    assert "tasks/cancel" not in methods(record)


def test_ttl_runs_out_then_the_task_is_cancelled(tmp_path):
    result, doc, record = call(tmp_path, "forever", options=("--ttl", "400"))
    assert result.exit_code == 6
    assert doc["error"]["code"] == "timeout" and "ttl of 0.4 s" in doc["error"]["message"]
    cancels = [e for e in received(record) if e.get("method") == "tasks/cancel"]
    assert len(cancels) == 1 and declared_extension(cancels[0])
    assert doc["task"]["cancel"] == {"sent": True, "acknowledged": True}


def test_ctrl_c_cancels_the_task_exits_130_and_leaves_no_process(tmp_path):
    record, pidfile = tmp_path / "record.jsonl", tmp_path / "server.pid"
    # The task moves on only when polled: once the server has answered a tasks/get, mcpprobe has
    # seen the task it created, whatever the machine's speed.
    proc = interrupted(["call", "forever", "--yes", "--json", *MODERN_ONLY, "--env", f"TASKS_EXT_RECORD={record}",
                        "--env", f"TASKS_EXT_PIDFILE={pidfile}", *server()],
                       lambda _: "tasks/get" in methods(record), what="the server answered a tasks/get")
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 130, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["interrupted"] is True and doc["sent"] is True and doc["result"] is None
    task = doc["task"]
    cancels = [e for e in received(record) if e.get("method") == "tasks/cancel"]
    assert len(cancels) == 1 and cancels[0]["params"]["taskId"] == task["taskId"] and declared_extension(cancels[0])
    assert task["cancel"] == {"sent": True, "acknowledged": True} and task["polls"] >= 1
    # No orphan: the server mcpprobe started has ended (mcpprobe waits for it, init reaps it).
    pid = int(pidfile.read_text())
    gone = time.monotonic() + 10
    while time.monotonic() < gone and Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "Z"


# ----- list tasks -----


@pytest.mark.parametrize("options", [(), ("--no-tasks",)])
def test_list_tasks_is_refused_in_the_modern_era(tmp_path, options):
    record = tmp_path / "record.jsonl"
    result = run_cli(["list", "tasks", "--json", *MODERN_ONLY, "--env", f"TASKS_EXT_RECORD={record}",
                      *server(*options)])
    assert result.exit_code == 3
    error = result.json["error"]
    assert error["detail"]["extensionDeclared"] is (options == ())
    assert "has no list method" in error["message"]
    assert "tasks/list" not in methods(record)


def test_probe_shows_the_tasks_extension(tmp_path):
    result = run_cli(["probe", "--json", *MODERN_ONLY, *server()])
    assert result.exit_code == 0, result.stderr
    assert result.json["capabilities"]["extensions"] == {TASKS_EXTENSION: {}}
    assert result.json["extensions"] == [{"name": TASKS_EXTENSION, "settings": {}}]
    human = run_cli(["probe", *MODERN_ONLY, *server()])
    assert f"Extensions   {TASKS_EXTENSION} (no settings)" in human.stdout

