"""Tasks (protocol 2025-11-25, experimental): task-augmented `call`, `--task`, `list tasks`.

Against real servers: tests/fixtures/task_server.py (an SDK low-level server that runs tools as
tasks, never sends task status notifications, and records what it received with timestamps) and
the npm reference server-everything (`simulate-research-query`, which sends them).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, interrupted, run_cli
from jsonschema import Draft202012Validator

from mcpprobe.client.capabilities import declared, missing_for, task_missing_for

PY = sys.executable
TASKS = ROOT / "tests" / "fixtures" / "task_server.py"
LEGACY = ["--protocol", "2025-11-25"]


def server(*options: str) -> list[str]:
    return ["--", PY, str(TASKS), *options]


def recording(path: Path) -> list[str]:
    return ["--env", f"SDK_FIXTURE_RECORD={path}"]


def received(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if "method" in json.loads(line)]


def methods(path: Path) -> list[str]:
    return [entry["method"] for entry in received(path)]


def call(tmp_path: Path, tool: str, *args: str, options: tuple[str, ...] = ()) -> tuple[Any, dict[str, Any], Path]:
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", tool, *args, "--json", *LEGACY, *recording(record), *server(*options)])
    return result, result.json, record


def codes(doc: dict[str, Any]) -> list[str]:
    return [f["code"] for f in doc["findings"]]


# ----- the capability table -----


def test_task_capabilities_are_objects_and_nested():
    caps = {"tools": {}, "resources": {"subscribe": {}},
            "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
    assert missing_for(caps, "tasks/list") is None and missing_for(caps, "tasks/cancel") is None
    assert missing_for(caps, "tasks/get") is None
    assert task_missing_for(caps, "tools/call") is None
    assert task_missing_for({"tasks": {"list": {}}}, "tools/call") == "tasks.requests.tools.call"
    assert task_missing_for({"tasks": {"requests": {"tools": {}}}}, "tools/call") == "tasks.requests.tools.call"
    assert missing_for({"tasks": {"cancel": {}}}, "tasks/list") == "tasks.list"
    assert missing_for({}, "tasks/get") == "tasks"
    # Boolean sub-capabilities stay booleans: `subscribe: {}` is not `subscribe: true`.
    assert not declared(caps, "resources", "subscribe")


# ----- a tool that requires a task -----


def test_required_tool_runs_as_a_task(tmp_path):
    result, doc, record = call(tmp_path, "research", "topic=tides", "steps=3", "delay_ms=200")
    assert result.exit_code == 0, result.stderr
    assert doc["request"]["params"]["task"] == {}
    assert doc["request"]["params"]["_meta"]["progressToken"]
    task = doc["task"]
    assert task["status"] == "completed" and task["taskId"] == task["created"]["taskId"]
    assert task["history"][0]["via"] == "tools/call" and task["history"][0]["status"] == "working"
    assert task["history"][-1]["status"] == "completed"
    assert task["polls"] >= 1 and task["cancel"] is None
    assert doc["result"]["content"] == [{"type": "text", "text": "researched tides in 3 steps"}]
    assert [p["progress"] for p in doc["progress"]] == [1, 2, 3]
    sent = received(record)
    assert [e["method"] for e in sent if e["method"].startswith(("tools/call", "tasks/"))][0] == "tools/call"
    assert {"tasks/get", "tasks/result"} <= set(methods(record))
    assert all(e["params"]["taskId"] == task["taskId"] for e in sent if e["method"].startswith("tasks/"))
    assert "tasks/cancel" not in methods(record)


def test_a_plain_call_of_a_required_tool_is_what_the_server_refuses(tmp_path):
    """What mcpprobe used to do: without the task param the server answers -32601, as the spec says."""
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", "research", "--force", "--json", *LEGACY, *recording(record),
                      *server("--no-call")])
    # --no-call: the server does not declare task support, so with --force the task param is sent but
    # ignored (tasks.mdx: processed normally), and the tool refuses a plain call.
    assert result.exit_code == 5
    assert "forced" in codes(result.json)
    assert result.json["error"]["detail"]["rpcCode"] == -32601


def test_human_output_shows_the_status_and_the_result(tmp_path):
    result = run_cli(["call", "research", "topic=tides", *LEGACY, *server()])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "researched tides in 3 steps\n"
    assert "task working: starting" in result.stderr  # the status of the CreateTaskResult
    assert "task completed: done" in result.stderr
    assert "working → completed" in result.stderr


def test_auto_protocol_finds_the_legacy_era_and_runs_the_task(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", "quick", "--task", "--json", *recording(record), *server()])
    assert result.exit_code == 0, result.stderr
    assert result.json["protocolVersion"] == "2025-11-25"
    assert result.json["task"]["status"] == "completed"


def test_modern_era_has_no_tasks(tmp_path):
    """2026-07-28 dropped tasks from the core protocol: the SDK serves neither `execution` nor the
    `tasks` capability there, so --task is refused and nothing is sent."""
    record = tmp_path / "record.jsonl"
    result = run_cli(["call", "quick", "--task", "--json", "--protocol", "modern", *recording(record),
                      *server("--modern")])
    assert result.exit_code == 3, result.stderr
    assert result.json["era"] == "modern"
    assert "tasks.requests.tools.call" in result.json["error"]["message"]
    assert "tools/call" not in methods(record)


# ----- polling -----


def test_polling_honours_a_long_poll_interval(tmp_path):
    """The task is done at once, but the server asked for 2 s between polls: mcpprobe waits."""
    _, doc, record = call(tmp_path, "research", "steps=1", "delay_ms=0", options=("--poll-interval", "2000"))
    assert doc["exitCode"] == 0
    sent = received(record)
    created = next(e["t"] for e in sent if e["method"] == "tools/call")
    first_poll = next(e["t"] for e in sent if e["method"] == "tasks/get")
    assert first_poll - created >= 1.8
    assert doc["task"]["pollInterval"] == 2000 and doc["task"]["polls"] == 1


# Runs mcpprobe in a process of its own, counting the pydantic TypeAdapters its code builds and noting
# whether it loaded the SDK's 2025-11-25 wire models: what a task's answers cost, whatever the
# machine's speed (the counts do not depend on how long anything took).
COUNTING_DRIVER = """
import atexit, json, sys
import pydantic
built = []
original = pydantic.TypeAdapter.__init__
def counting(self, *args, **kwargs):
    # Only those mcpprobe's code builds: the SDK's modules build their own as they are imported.
    frame = sys._getframe(1)
    while frame is not None and "/pydantic/" in frame.f_code.co_filename:
        frame = frame.f_back
    if frame is not None and "/mcpprobe/" in frame.f_code.co_filename:
        built.append(repr(args[0])[:80] if args else "?")
    original(self, *args, **kwargs)
pydantic.TypeAdapter.__init__ = counting
report = sys.argv.pop(1)
def write():
    with open(report, "w") as handle:
        json.dump({"adapters": built, "wireModels": "mcp_types._v2025_11_25" in sys.modules}, handle)
atexit.register(write)
sys.argv[0] = "mcpprobe"
from mcpprobe.cli.main import main
main()
"""


def counted_call(tmp_path: Path, tool: str, *args: str, options: tuple[str, ...] = ()) -> tuple[dict, dict, list]:
    """`mcpprobe call --json` in its own process: its document, what it built, and the fixture's
    first-poll times (TASK_FIXTURE_TIMES)."""
    report, times = tmp_path / "built.json", tmp_path / "times.jsonl"
    for path in (report, times):
        path.unlink(missing_ok=True)
    proc = subprocess.run([PY, "-c", COUNTING_DRIVER, str(report), "call", tool, *args, "--json", *LEGACY,
                           "--env", f"TASK_FIXTURE_TIMES={times}", *server(*options)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    first = [json.loads(line) for line in times.read_text().splitlines()] if times.exists() else []
    return json.loads(proc.stdout), json.loads(report.read_text()), first


def test_a_healthy_task_is_followed_without_building_any_schema_adapter(tmp_path):
    """Checking a task answer used to build pydantic adapters and load the SDK's wire models
    (0.2-0.4 s of CPU), so the first tasks/get went out that much after the pollInterval. A
    well-formed answer is checked by hand now: nothing is built, however many polls it takes."""
    doc, built, first = counted_call(tmp_path, "research", "steps=1", "delay_ms=0", "polls=4",
                                     options=("--poll-interval", "100"))
    assert doc["exitCode"] == 0, doc
    assert doc["task"]["polls"] >= 4
    assert built == {"adapters": [], "wireModels": False}
    # Not before the interval the server asked for, counted from the task's creation.
    assert len(first) == 1 and first[0]["firstPollMs"] >= 100


def test_answers_that_break_the_schema_build_one_adapter_per_model(tmp_path):
    """Where an answer does need the SDK's models to explain what is wrong, each model's adapter
    is built once, not once per answer."""
    doc, built, _ = counted_call(tmp_path, "research", "steps=1", "delay_ms=0", "polls=5",
                                 options=("--sloppy", "--poll-interval", "100"))
    assert doc["exitCode"] == 0, doc
    assert doc["task"]["polls"] >= 5
    assert len(built["adapters"]) == 1, built  # GetTaskResult: the CreateTaskResult was well formed
    assert "lastUpdatedAt" in next(f for f in doc["findings"] if f["code"] == "protocol-violation")["message"]


def test_polls_are_spaced_by_the_poll_interval(tmp_path):
    # The task stays working until it was polled three times: however slow the machine, there are gaps to measure.
    _, doc, record = call(tmp_path, "research", "steps=1", "delay_ms=0", "polls=3", options=("--poll-interval", "400"))
    assert doc["exitCode"] == 0
    polls = [e["t"] for e in received(record) if e["method"] == "tasks/get"]
    assert len(polls) >= 3
    assert min(b - a for a, b in zip(polls, polls[1:], strict=False)) >= 0.35


# ----- --task -----


def test_optional_tool_is_plain_without_task_and_a_task_with_it(tmp_path):
    result, doc, record = call(tmp_path, "quick")
    assert result.exit_code == 0
    assert "task" not in doc["request"]["params"] and doc["task"] is None
    assert doc["result"]["content"][0]["text"] == "quick, without a task"
    assert not [m for m in methods(record) if m.startswith("tasks/")]
    result, doc, _ = call(tmp_path, "quick", "--task")
    assert result.exit_code == 0
    assert doc["request"]["params"]["task"] == {}
    assert doc["result"]["content"][0]["text"] == "quick, as a task"
    assert doc["task"]["status"] == "completed"


@pytest.mark.parametrize("tool, said", [("plain", "absent, which means forbidden"), ("never_task", "'forbidden'")])
def test_task_is_refused_for_a_tool_that_does_not_run_as_one(tmp_path, tool, said):
    result, doc, record = call(tmp_path, tool, "--task")
    assert result.exit_code == 3
    assert doc["sent"] is False and doc["error"]["code"] == "not-declared"
    assert said in doc["error"]["message"]
    assert "tools/call" not in methods(record)


@pytest.mark.parametrize("options", [("--no-call",), ("--no-tasks",)])
def test_task_is_refused_when_the_server_did_not_declare_it(tmp_path, options):
    for tool, args in (("quick", ["--task"]), ("research", [])):
        result, doc, record = call(tmp_path, tool, *args, options=options)
        assert result.exit_code == 3, result.stderr
        assert "tasks.requests.tools.call" in doc["error"]["message"]
        assert "tools/call" not in methods(record)
        record.unlink(missing_ok=True)


# ----- answers that break the spec -----


def test_sloppy_task_answers_are_warnings_once_each(tmp_path):
    result, doc, record = call(tmp_path, "research", "steps=1", "delay_ms=0", "polls=2",
                               options=("--sloppy", "--poll-interval", "200"))
    assert result.exit_code == 0, result.stderr
    assert methods(record).count("tasks/get") >= 2
    violations = [f for f in doc["findings"] if f["code"] == "protocol-violation"]
    assert [f["detail"]["method"] for f in violations] == ["tasks/get", "tasks/result"]
    assert "lastUpdatedAt" in violations[0]["message"]
    assert "io.modelcontextprotocol/related-task" in violations[1]["message"]
    assert doc["task"]["status"] == "completed"


def test_a_create_task_result_without_task_id_is_exit_5(tmp_path):
    result, doc, record = call(tmp_path, "garbled")
    assert result.exit_code == 5
    assert doc["error"]["code"] == "protocol-error" and "taskId" in doc["error"]["message"]
    assert not [m for m in methods(record) if m.startswith("tasks/")]


def test_a_plain_result_to_a_task_call_is_used_with_a_warning(tmp_path):
    result, doc, _ = call(tmp_path, "ignores_task", "--task")
    assert result.exit_code == 0
    assert doc["result"]["content"][0]["text"] == "ignored the task" and doc["task"] is None
    assert "protocol-violation" in codes(doc)


# ----- how a task ends -----


def test_failed_task_with_is_error_is_a_tool_error(tmp_path):
    result, doc, _ = call(tmp_path, "doomed")
    assert result.exit_code == 1
    assert doc["task"]["status"] == "failed" and doc["task"]["statusMessage"] == "the research hit a wall"
    assert doc["isError"] is True and "tool-error" in codes(doc)


def test_failed_task_with_a_json_rpc_error_is_exit_5(tmp_path):
    result, doc, _ = call(tmp_path, "broken")
    assert result.exit_code == 5
    assert doc["error"]["detail"]["method"] == "tasks/result"
    assert doc["error"]["detail"]["rpcCode"] == -32603
    assert doc["task"]["status"] == "failed"


def test_task_cancelled_by_the_server_has_no_result(tmp_path):
    result, doc, record = call(tmp_path, "abandoned")
    assert result.exit_code == 1
    assert doc["result"] is None and doc["task"]["status"] == "cancelled"
    found = next(f for f in doc["findings"] if f["code"] == "task-cancelled")
    assert "the server gave up" in found["message"]
    assert "tasks/cancel" not in methods(record) and "tasks/result" not in methods(record)


def test_ttl_runs_out_then_the_task_is_cancelled(tmp_path):
    result, doc, record = call(tmp_path, "short_lived")
    assert result.exit_code == 6
    assert doc["error"]["code"] == "timeout" and "ttl of 0.8 s" in doc["error"]["message"]
    cancels = [e for e in received(record) if e["method"] == "tasks/cancel"]
    assert len(cancels) == 1 and cancels[0]["params"]["taskId"] == doc["task"]["taskId"]
    assert doc["task"]["cancel"] == {"sent": True, "status": "cancelled"}
    assert doc["task"]["status"] == "cancelled"


def test_unlimited_ttl_is_waited_for(tmp_path):
    result, doc, _ = call(tmp_path, "research", "steps=2", options=("--ttl", "null"))
    assert result.exit_code == 0, result.stderr
    assert doc["task"]["ttl"] is None and doc["task"]["status"] == "completed"


def test_ttl_runs_out_without_cancel_capability_sends_no_cancel(tmp_path):
    result, doc, record = call(tmp_path, "short_lived", options=("--no-cancel",))
    assert result.exit_code == 6
    assert "tasks/cancel" not in methods(record)
    assert doc["task"]["cancel"] == {"sent": False, "reason": "the server did not declare 'tasks.cancel'"}


# ----- Ctrl-C -----


def interrupt_task(tmp_path: Path, *options: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Start `forever` as a task, wait until it has been polled, then Ctrl-C mcpprobe."""
    record = tmp_path / "record.jsonl"
    proc = interrupted(["call", "forever", "--json", *LEGACY, *recording(record), *server(*options)],
                       lambda _: "tasks/get" in methods(record), what="the server answered a tasks/get")
    assert "Traceback" not in proc.stderr
    return proc, record


def test_ctrl_c_cancels_the_task_and_exits_130(tmp_path):
    proc, record = interrupt_task(tmp_path)
    assert proc.returncode == 130, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["interrupted"] is True and doc["sent"] is True
    task = doc["task"]
    cancels = [e for e in received(record) if e["method"] == "tasks/cancel"]
    assert len(cancels) == 1 and cancels[0]["params"]["taskId"] == task["taskId"]
    assert task["cancel"] == {"sent": True, "status": "cancelled"}
    assert task["history"][-1] == {**task["history"][-1], "status": "cancelled", "via": "tasks/cancel"}
    assert doc["result"] is None


def test_ctrl_c_without_cancel_capability_says_so(tmp_path):
    proc, record = interrupt_task(tmp_path, "--no-cancel")
    assert proc.returncode == 130, proc.stderr
    doc = json.loads(proc.stdout)
    assert "tasks/cancel" not in methods(record)
    assert doc["task"]["cancel"]["sent"] is False


# ----- list tasks -----


def test_list_tasks_where_declared(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["list", "tasks", "--json", *LEGACY, *recording(record), *server()])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert doc["kind"] == "tasks" and doc["declared"] is True and doc["state"] == "complete"
    assert doc["items"] == []
    assert "tasks/list" in methods(record)
    schema = json.loads((ROOT / "docs" / "output.schema.json").read_text())
    assert list(Draft202012Validator(schema).iter_errors(doc)) == []


@pytest.mark.parametrize("options", [("--no-list",), ("--no-tasks",)])
def test_list_tasks_refused_when_not_declared(tmp_path, options):
    record = tmp_path / "record.jsonl"
    result = run_cli(["list", "tasks", "--json", *LEGACY, *recording(record), *server(*options)])
    assert result.exit_code == 3
    assert result.json["error"]["detail"]["missing"] == "tasks.list"
    assert "tasks/list" not in methods(record)


def test_probe_does_not_list_tasks(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["probe", "--json", *LEGACY, *recording(record), *server()])
    assert result.exit_code == 0, result.stderr
    assert "tasks" not in result.json["kinds"]
    assert "tasks/list" not in methods(record)


def test_snapshot_shows_the_task_capabilities():
    result = run_cli(["list", "tasks", *LEGACY, *server("--no-list")])
    assert result.exit_code == 3
    assert "Capabilities tasks (cancel, requests.tools.call) · tools" in result.stdout
    assert "The server declared: tasks (cancel, requests.tools.call), tools." in " ".join(result.stderr.split())


def test_listed_tasks_are_validated():
    from mcpprobe.safety.schema import item_errors

    good = {"taskId": "t1", "status": "working", "createdAt": "2025-11-25T10:30:00Z",
            "lastUpdatedAt": "2025-11-25T10:40:00Z", "ttl": None, "pollInterval": 500}
    assert item_errors("tasks", good, modern=False) == []
    assert item_errors("tasks", {**good, "status": "sleeping"}, modern=False)
    assert item_errors("tasks", {k: v for k, v in good.items() if k != "ttl"}, modern=False)


# ----- server-everything -----


@pytest.mark.interop
def test_everything_research_query_runs_as_a_task(everything):
    result = run_cli(["call", "simulate-research-query", "topic=tides", "--yes", "--json", "--", "node",
                      str(everything)])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert "tool-error" not in codes(doc)
    assert doc["task"]["status"] == "completed" and doc["task"]["pollInterval"] == 1000
    statuses = [(h["status"], h["statusMessage"]) for h in doc["task"]["history"]]
    assert ("working", "Gathering sources...") in statuses and statuses[-1][0] == "completed"
    assert "# Research Report: tides" in doc["result"]["content"][0]["text"]


@pytest.mark.interop
def test_everything_input_required_is_answered_through_tasks_result(everything):
    result = run_cli(["call", "simulate-research-query", "topic=python", "ambiguous:=true", "--elicit", "decline",
                      "--yes", "--json", "--", "node", str(everything)])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert "input_required" in [h["status"] for h in doc["task"]["history"]]
    assert doc["inputRequests"][0]["method"] == "elicitation/create"
    assert doc["inputRequests"][0]["answer"] == {"action": "decline"}
    assert "User declined" in doc["result"]["content"][0]["text"]


@pytest.mark.interop
def test_everything_list_tasks(everything):
    result = run_cli(["list", "tasks", "--json", "--", "node", str(everything)])
    assert result.exit_code == 0, result.stderr
    assert result.json["declared"] is True and result.json["state"] == "complete"


def test_no_task_for_a_required_tool_is_refused_before_sending(tmp_path):
    """--no-task (added with the 2026-07-28 tasks extension) cannot make a 2025-11-25 'required' tool plain."""
    result, doc, record = call(tmp_path, "research", "--no-task")
    assert result.exit_code == 3
    assert doc["error"]["detail"] == {"tool": "research", "taskSupport": "required"}
    assert "tools/call" not in methods(record)


def test_no_task_for_an_optional_tool_calls_it_plainly(tmp_path):
    result, doc, _ = call(tmp_path, "quick", "--no-task")
    assert result.exit_code == 0, result.stderr
    assert doc["task"] is None and "task" not in doc["request"]["params"]
