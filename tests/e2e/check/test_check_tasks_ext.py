"""`mcpprobe check`, family tasks, its `tasks.ext-*` checks: the tasks extension of 2026-07-28
(SEP-2663), checked with an unknown task id only (no tool is called). Each check fails (or warns) on a mode of
tests/fixtures/tasks_ext_server.py (a real server process over stdio) that breaks exactly its rule,
and on nothing else; the right fixture passes them all; a server that does not declare the extension
is sent nothing for them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import ROOT, checked, run_cli

FIXTURE = ROOT / "tests" / "fixtures" / "tasks_ext_server.py"
FAMILY = "tasks"  # with the 2025-11-25 checks, which are n/a in 2026-07-28
# --break RULE of the fixture -> the check it breaks, and the verdict
TASKS_EXT_BROKEN = {
    "unknown-task": ("tasks.ext-unknown-task", "fail"),
    "unknown-cancel": ("tasks.ext-unknown-task-cancel", "warn"),
    "unknown-update": ("tasks.ext-unknown-task-update", "warn"),
    "undeclared": ("tasks.ext-undeclared-client", "fail"),
    "undeclared-cancel": ("tasks.ext-undeclared-client", "fail"),
    "legacy-capability": ("tasks.ext-no-legacy-capability", "fail"),
    "tasks-result": ("tasks.ext-no-tasks-result", "fail"),
    "listen": ("tasks.ext-undeclared-listen", "fail"),
}
# the same, for the checks judged only from the tools named with --call (ALWAYS_CALL)
TASKS_EXT_CALL_BROKEN = {
    "undurable": ("tasks.ext-created-task-resolves", "fail"),
}
CALL_IDS = {check_id for check_id, _ in TASKS_EXT_CALL_BROKEN.values()}
TASKS_EXT_BROKEN_IDS = {check_id for check_id, _ in TASKS_EXT_BROKEN.values()} | CALL_IDS
ALWAYS_CALL = ("--call", "render", "--yes")  # a required task tool, of two polls


def run_check(record: Path, *server_options: str, protocol: str = "2026-07-28",
              options: tuple[str, ...] = ()) -> tuple[int, dict]:
    result = run_cli(["check", "--json", "--level", "may", "--timeout", "5", "--protocol", protocol,
                      "--only", FAMILY, "--env", f"TASKS_EXT_RECORD={record}", *options,
                      "--", sys.executable, str(FIXTURE), *server_options])
    assert result.stdout, result.stderr
    return result.exit_code, checked(json.loads(result.stdout))


def statuses(doc: dict) -> dict[str, str]:
    """The extension's checks (the family's 2025-11-25 ones are n/a in this era)."""
    others = {entry["status"] for entry in doc["checks"]
              if entry["id"] not in TASKS_EXT_BROKEN_IDS and entry["id"] != "tools.call-named"}  # with --call
    assert others <= {"n/a"}, doc["checks"]
    return {entry["id"]: entry["status"] for entry in doc["checks"] if entry["id"] in TASKS_EXT_BROKEN_IDS}


def sent(record: Path) -> list[str]:
    return [json.loads(line)["method"] for line in record.read_text().splitlines()] if record.exists() else []


def test_the_family_is_every_check_of_the_family() -> None:
    from mcpprobe.check.catalogue import CHECKS

    assert {check.id for check in CHECKS if check.id.startswith("tasks.ext-")} == TASKS_EXT_BROKEN_IDS


def test_a_right_server_passes_every_check(tmp_path: Path) -> None:
    code, doc = run_check(tmp_path / "record.jsonl")
    expected = {**dict.fromkeys(TASKS_EXT_BROKEN_IDS, "pass"), **dict.fromkeys(CALL_IDS, "skipped")}
    assert statuses(doc) == expected, doc["checks"]
    assert code == 0
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-unknown-task")
    assert entry["specUrl"] == "https://modelcontextprotocol.io/seps/2663-tasks-extension#protocol-errors"
    assert "tools/call" not in sent(tmp_path / "record.jsonl")  # no tool is called


def test_a_right_server_passes_every_check_with_a_named_task_tool(tmp_path: Path) -> None:
    """With --call, the named tool is called once, however many checks judge the call."""
    record = tmp_path / "record.jsonl"
    code, doc = run_check(record, options=(*ALWAYS_CALL, "--only", "tools.call-named"))
    assert statuses(doc) == dict.fromkeys(TASKS_EXT_BROKEN_IDS, "pass"), doc["checks"]
    named = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert named["status"] == "pass", named
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-created-task-resolves")
    assert entry["message"] == "the first tasks/get of each task the named calls created found it: render (2 tasks/get)"
    assert [json.loads(exchange["sent"])["method"] for exchange in entry["evidence"]] == ["tools/call"]
    assert sent(record).count("tools/call") == 1
    assert "tasks/cancel" not in [json.loads(line)["method"] for line in record.read_text().splitlines()
                                  if "mcpprobe-no-such-task" not in line]  # the named task is never cancelled
    assert code == 0


@pytest.mark.parametrize("rule", sorted(TASKS_EXT_BROKEN))
def test_each_check_fails_on_its_fixture_and_nothing_else(tmp_path: Path, rule: str) -> None:
    check_id, expected = TASKS_EXT_BROKEN[rule]
    code, doc = run_check(tmp_path / "record.jsonl", "--break", rule)
    found = statuses(doc)
    assert found[check_id] == expected, [e for e in doc["checks"] if e["id"] == check_id]
    assert {cid: status for cid, status in found.items()
            if cid != check_id and status != "pass" and cid not in CALL_IDS} == {}
    assert code == (1 if expected == "fail" else 0)


@pytest.mark.parametrize("rule", sorted(TASKS_EXT_CALL_BROKEN))
def test_each_call_check_fails_on_its_fixture_and_nothing_else(tmp_path: Path, rule: str) -> None:
    check_id, expected = TASKS_EXT_CALL_BROKEN[rule]
    code, doc = run_check(tmp_path / "record.jsonl", "--break", rule, options=ALWAYS_CALL)
    found = statuses(doc)
    assert found[check_id] == expected, [e for e in doc["checks"] if e["id"] == check_id]
    assert {cid: status for cid, status in found.items() if cid != check_id and status != "pass"} == {}
    assert code == (1 if expected == "fail" else 0)


def test_a_task_not_found_at_its_first_poll_is_named_with_the_call(tmp_path: Path) -> None:
    """tools.call-named takes the -32602 as the call's own JSON-RPC error; the durable-creation rule is
    what the SEP broke, and its check says so."""
    code, doc = run_check(tmp_path / "record.jsonl", "--break", "undurable",
                          options=(*ALWAYS_CALL, "--only", "tools.call-named"))
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-created-task-resolves")
    assert entry["status"] == "fail"
    assert entry["message"].startswith("a task was not found right after tools/call created it: render: its first "
                                       "tasks/get, within ")
    assert entry["message"].endswith(" ms of the CreateTaskResult (ttlMs 60000), was answered with error -32602 "
                                     "(Failed to retrieve task: Task not found)")
    assert entry["specUrl"] == "https://modelcontextprotocol.io/seps/2663-tasks-extension#task-creation"
    assert code == 1


@pytest.mark.parametrize(("tool", "server_options", "why"), [
    # the extension declared, a tool that answers a plain result: no task
    ("dashboard", ("--extensions",), "no tool named with --call ran as a task: nothing to judge"),
    # the extension not declared: not this check's business
    ("convert value=x", ("--no-tasks",),
     "the server did not declare 'extensions.io.modelcontextprotocol/tasks'; nothing sent"),
])
def test_a_call_that_made_no_task_is_not_judged(tmp_path: Path, tool: str, server_options: tuple[str, ...],
                                                why: str) -> None:
    code, doc = run_check(tmp_path / "record.jsonl", *server_options, "--break", "undurable",
                          options=("--call", tool, "--yes", "--only", "tools.call-named"))
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-created-task-resolves")
    assert (entry["status"], entry["message"]) == ("skipped", why)
    assert code == 0


def test_a_task_past_half_its_ttl_is_not_judged(tmp_path: Path) -> None:
    """A task may be purged once its ttl ran out: a -32602 then is no proof that it was never stored."""
    # the first tasks/get at 1100 ms at the earliest, past half the ttl of 2000 ms (and 900 ms before it ends)
    code, doc = run_check(tmp_path / "record.jsonl", "--break", "undurable", "--ttl", "2000", "--poll-interval",
                          "1100", options=(*ALWAYS_CALL, "--only", "tools.call-named"))
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-created-task-resolves")
    assert (entry["status"], entry["message"]) == (
        "skipped", "no task to judge: render ran as a task not found at its first tasks/get, sent when half its ttlMs "
                   "(2000) could have run: a task past its ttl may be purged")
    assert code == 0


def test_the_legacy_capability_is_named_in_words_not_a_python_list(tmp_path: Path) -> None:
    code, doc = run_check(tmp_path / "record.jsonl", "--break", "legacy-capability")
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-no-legacy-capability")
    assert entry["message"] == ("the server declares the 2025-11-25 tasks capability (cancel, list, requests) "
                                "beside the tasks extension")
    assert code == 1


def test_each_tasks_method_is_asked_without_the_extension(tmp_path: Path) -> None:
    """A server that serves only tasks/cancel to a non-declaring client fails, and the verdict names it."""
    code, doc = run_check(tmp_path / "record.jsonl", "--break", "undeclared-cancel")
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-undeclared-client")
    assert entry["status"] == "fail"
    assert entry["message"] == ("requests that did not declare the extension were answered: tasks/cancel with error "
                                "-32602 (Failed to retrieve task: Task not found), not -32021")
    assert code == 1


def test_tasks_result_is_sent_declaring_the_extension_and_only_for_the_unknown_id(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, doc = run_check(record, "--break", "tasks-result")
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-no-tasks-result")
    assert entry["message"] == ("tasks/result, which the extension removed, was answered with error -32602 (Failed "
                                "to retrieve task: Task not found), not -32601")
    assert entry["specUrl"] == "https://modelcontextprotocol.io/seps/2663-tasks-extension#backward-compatibility"
    asked = [json.loads(line) for line in record.read_text().splitlines()]
    results = [message["params"] for message in asked if message["method"] == "tasks/result"]
    assert [params["taskId"] for params in results] == ["mcpprobe-no-such-task"]
    assert "io.modelcontextprotocol/tasks" in results[0]["_meta"]["io.modelcontextprotocol/clientCapabilities"][
        "extensions"]
    updates = [message["params"] for message in asked if message["method"] == "tasks/update"]
    assert {params["taskId"] for params in updates} == {"mcpprobe-no-such-task"}
    assert all(params["inputResponses"] == {} for params in updates)
    assert code == 1


def test_a_task_notification_stream_opened_for_a_non_declaring_client_is_closed_at_once(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, doc = run_check(record, "--break", "listen")
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-undeclared-listen")
    assert entry["message"] == ("subscriptions/listen for task notifications that did not declare the extension was "
                                "acknowledged with the taskIds instead of answered with error -32021; mcpprobe "
                                "cancelled it (notifications/cancelled)")
    asked = [json.loads(line) for line in record.read_text().splitlines()]
    listen = next(message for message in asked if message["method"] == "subscriptions/listen")
    assert listen["params"]["notifications"] == {"taskIds": ["mcpprobe-no-such-task"]}
    assert "io.modelcontextprotocol/tasks" not in (
        listen["params"]["_meta"].get("io.modelcontextprotocol/clientCapabilities", {}).get("extensions") or {})
    cancelled = [message["params"]["requestId"] for message in asked if message["method"] == "notifications/cancelled"]
    assert cancelled == [listen["id"]]
    assert code == 1


def test_task_notifications_declined_in_an_acknowledgement_warn(tmp_path: Path) -> None:
    """Declined (no taskIds honoured), so nothing leaks, but not with the -32021 the SEP asks for."""
    record = tmp_path / "record.jsonl"
    code, doc = run_check(record, "--break", "listen-declined")
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-undeclared-listen")
    assert (entry["status"], entry["message"]) == (
        "warn", "subscriptions/listen for task notifications that did not declare the extension was acknowledged "
                "without the taskIds (declined) instead of answered with error -32021; mcpprobe cancelled it "
                "(notifications/cancelled)")
    assert "notifications/cancelled" in sent(record)
    assert code == 0


def test_a_listen_request_neither_answered_nor_acknowledged_fails_within_the_timeout(tmp_path: Path) -> None:
    code, doc = run_check(tmp_path / "record.jsonl", "--break", "listen-silent",
                          options=("--timeout", "1", "--only", "tasks.ext-undeclared-listen"))
    entry = next(e for e in doc["checks"] if e["id"] == "tasks.ext-undeclared-listen")
    assert (entry["status"], entry["message"]) == (
        "fail", "subscriptions/listen for task notifications that did not declare the extension got neither an answer "
                "nor an acknowledgement within 1 s, not error -32021")
    assert code == 1


def test_nothing_is_sent_where_the_extension_is_not_declared(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, doc = run_check(record, "--no-tasks")
    assert statuses(doc) == dict.fromkeys(TASKS_EXT_BROKEN_IDS, "skipped"), doc["checks"]
    assert not [method for method in sent(record) if method.startswith("tasks/")]
    assert code == 0


def test_the_checks_are_not_part_of_the_legacy_era(tmp_path: Path) -> None:
    """The fixture speaks only 2026-07-28; the legacy era's handshake fails, so the family is asked of a
    revision without the extension through the catalogue itself."""
    from mcpprobe.check.catalogue import CHECKS

    for check in CHECKS:
        if check.id in TASKS_EXT_BROKEN_IDS:
            assert check.revisions == ("2026-07-28",) and check.safe


def test_a_task_answered_to_a_call_that_did_not_declare_the_extension_fails_the_named_call(tmp_path: Path) -> None:
    """A server that did not declare the extension (so the named call does not declare it) and answers a
    CreateTaskResult breaks a MUST of SEP-2663: tools.call-named fails (exit 1), not `error` (the check
    ran, and found it); with the extension declared, the same tool is a task like any other."""
    record = tmp_path / "record.jsonl"
    code, doc = run_check(record, "--no-tasks", options=("--call", "pushy", "--yes", "--only", "tools.call-named"))
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "fail", entry
    assert entry["message"].startswith('tools/call answered a task (resultType "task") to a request that did not '
                                       "declare the tasks extension: \"A server MUST NOT return CreateTaskResult")
    assert [json.loads(line)["method"] for line in record.read_text().splitlines()
            if json.loads(line)["method"].startswith("tasks/")] == []  # the task is not followed
    assert code == 1
    code, doc = run_check(tmp_path / "again.jsonl", options=("--call", "pushy", "--yes", "--only", "tools.call-named"))
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "pass", entry
    assert code == 0


def test_a_failed_task_whose_error_is_no_json_rpc_error_fails_the_named_call(tmp_path: Path) -> None:
    """"the `error` field **MUST** contain that JSON-RPC error" (SEP-2663): a failed task whose error has no
    integer code fails tools.call-named; the right failed task is the tool's own JSON-RPC error, which passes."""
    options = ("--call", "explode", "--yes", "--only", "tools.call-named")
    code, doc = run_check(tmp_path / "record.jsonl", "--break", "failed-error", options=options)
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "fail", entry
    assert entry["message"] == ("tasks/get: the task does not match the tasks extension (SEP-2663): the failed "
                                "task's error is not a JSON-RPC error (an integer code and a string message)")
    assert code == 1
    code, doc = run_check(tmp_path / "again.jsonl", options=options)
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert (entry["status"], entry["message"]) == (
        "pass", "called 1 named tool(s); explode answered -32603 (a JSON-RPC error)"), entry
    assert code == 0


def test_a_task_whose_ttl_and_poll_interval_are_no_numbers_fails_the_named_call(tmp_path: Path) -> None:
    """`ttlMs: number | null`, `pollIntervalMs?: number` (SEP-2663's Task): strings fail tools.call-named,
    and mcpprobe still follows the task to its result."""
    code, doc = run_check(tmp_path / "record.jsonl", "--break", "ttl-string",
                          options=(*ALWAYS_CALL, "--only", "tools.call-named"))
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "fail", entry
    assert entry["message"].endswith(": the task does not match the tasks extension (SEP-2663): ttlMs is not a "
                                     "number (or null for unlimited); pollIntervalMs is not a number")
    assert statuses(doc)["tasks.ext-created-task-resolves"] == "pass"
    assert code == 1
