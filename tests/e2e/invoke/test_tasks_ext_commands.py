"""`watch --call`, `check --call` and `load --call` call a tool by `call`'s rule in the 2026-07-28
era: the tasks extension declared when the server declared it, and a task followed to its end.
Against tests/fixtures/tasks_ext_server.py, a real server process over stdio that records every
message it receives; `render` is a tool the server runs only as a task (-32021 to a call that does
not declare the extension)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import ROOT, checked, run_cli

from mcpprobe.client.capabilities import TASKS_EXTENSION
from mcpprobe.client.era import META_CLIENT_CAPS

PY = sys.executable
FIXTURE = ROOT / "tests" / "fixtures" / "tasks_ext_server.py"


def server(record: Path, *options: str) -> list[str]:
    return ["--env", f"TASKS_EXT_RECORD={record}", "--", PY, str(FIXTURE), *options]


def received(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def calls(path: Path) -> list[dict[str, Any]]:
    return [entry for entry in received(path) if entry.get("method") == "tools/call"]


def declared(entry: dict[str, Any]) -> bool:
    return TASKS_EXTENSION in ((entry["params"].get("_meta") or {}).get(META_CLIENT_CAPS, {}).get("extensions") or {})


def polls(path: Path) -> int:
    return sum(1 for entry in received(path) if entry.get("method") == "tasks/get")


# ----- watch --call -----

def test_watch_call_runs_a_required_task_tool_to_its_result(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    proc = subprocess.run([PY, "-m", "mcpprobe", "watch", "--json", "--duration", "3", "--protocol", "2026-07-28",
                           "--yes", "--call", "render title=Q3 steps=2", *server(record)],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    done = [e for e in events if e["event"] == "call"]
    assert [(e["tool"], e["isError"], e["text"]) for e in done] == [("render", False, "rendered Q3")], events
    assert done[0]["task"]["status"] == "completed" and done[0]["task"]["polls"] == 2
    assert not [e for e in events if e["event"] == "error"], events
    assert [declared(c) for c in calls(record)] == [True]
    assert polls(record) == 2
    assert proc.returncode == 0, proc.stderr


def test_watch_call_leaves_the_extension_out_where_the_server_did_not_declare_it(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    proc = subprocess.run([PY, "-m", "mcpprobe", "watch", "--json", "--duration", "2", "--protocol", "2026-07-28",
                           "--yes", "--call", "convert value=7", *server(record, "--no-tasks")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    done = [e for e in events if e["event"] == "call"]
    assert [(e["text"], "task" in e) for e in done] == [("converted 7 at once", False)], events
    assert [declared(c) for c in calls(record)] == [False]


# ----- check --call -----

def _check(record: Path, *call: str, options: tuple[str, ...] = ()) -> tuple[int, dict[str, Any]]:
    result = run_cli(["check", "--json", "--protocol", "2026-07-28", "--timeout", "5", "--yes", "--only", "tools",
                      *call, *server(record, *options)])
    assert result.stdout, result.stderr
    return result.exit_code, checked(json.loads(result.stdout))


def test_check_call_runs_a_required_task_tool_through_the_extension(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, doc = _check(record, "--call", "render title=Q3")
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "pass", entry
    assert "ran as a task (2 tasks/get)" in entry["message"] and "-32021" not in entry["message"]
    assert [declared(c) for c in calls(record)] == [True]
    assert code == 0


def test_check_call_fails_a_task_answer_without_its_required_fields(tmp_path: Path) -> None:
    """A task's answers are judged as `call` judges them: a tasks/get without lastUpdatedAt breaks
    the extension's Task shape, and the named call's check fails on it (a task it was allowed to
    start with --call and --yes; check starts none otherwise)."""
    record = tmp_path / "record.jsonl"
    code, doc = _check(record, "--call", "render title=Q3", options=("--break", "task-fields"))
    entry = next(e for e in doc["checks"] if e["id"] == "tools.call-named")
    assert entry["status"] == "fail" and "lastUpdatedAt is not a string" in entry["message"], entry
    assert code == 1


# ----- load --call -----

def _load(record: Path, *args: str, options: tuple[str, ...] = ()) -> tuple[int, Any, str]:
    result = run_cli(["load", "--json", "--protocol", "2026-07-28", "--yes", *args, *server(record, *options)])
    doc = checked(json.loads(result.stdout)) if result.stdout.strip() else None
    return result.exit_code, doc, result.stderr


def test_load_call_counts_the_whole_task_round_trip_as_one_request(tmp_path: Path) -> None:
    """Each request is tools/call, then tasks/get at the task's pollIntervalMs (200 ms here) until
    it completes (two polls): every latency holds both intervals, so it is at least 400 ms,
    however fast the machine; a latency of the first answer alone would be a few milliseconds."""
    record = tmp_path / "record.jsonl"
    code, doc, err = _load(record, "--call", "render title=x steps=2", "--requests", "4", "--concurrency", "2",
                           options=("--poll-interval", "200"))
    assert code == 0, err
    overall = doc["overall"]
    assert overall["requests"] == 4 and overall["errors"] == 0, overall
    assert overall["latencyUs"]["min"] >= 400_000, overall
    sent = calls(record)
    assert len(sent) == 4 and all(declared(c) for c in sent)
    assert polls(record) == 8  # two per task, none left behind
    assert not [e for e in received(record) if e.get("method") == "tasks/cancel"]


def test_load_call_of_a_task_that_fails_counts_its_json_rpc_error(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, doc, err = _load(record, "--call", "explode", "--requests", "3")
    assert code == 0, err
    assert doc["overall"]["errors"] == 3 and doc["overall"]["errorsByKind"] == {"rpc -32603": 3}, doc["overall"]


def test_load_call_without_the_servers_declaration_does_not_declare_it(tmp_path: Path) -> None:
    record = tmp_path / "record.jsonl"
    code, doc, err = _load(record, "--call", "convert value=1", "--requests", "3", options=("--no-tasks",))
    assert code == 0, err
    assert doc["overall"]["errors"] == 0
    assert [declared(c) for c in calls(record)] == [False, False, False]
    assert polls(record) == 0


def test_load_refuses_a_2025_11_25_task_required_tool_before_sending(tmp_path: Path) -> None:
    """Before 2026-07-28 a tool whose execution.taskSupport is "required" is called only as a task,
    which load does not run: exit 3, and no tools/call reaches the server."""
    record = tmp_path / "record.jsonl"
    result = run_cli(["load", "--json", "--protocol", "2025-11-25", "--yes", "--call", "research topic=x",
                      "--requests", "3", "--env", f"SDK_FIXTURE_RECORD={record}",
                      "--", PY, str(ROOT / "tests" / "fixtures" / "task_server.py")])
    assert result.exit_code == 3, result.stderr
    doc = json.loads(result.stdout)
    assert "load does not run 2025-11-25 tasks" in doc["error"]["message"]
    assert "tools/call" not in [entry.get("method") for entry in received(record)]


def test_watch_call_runs_a_2025_11_25_task_required_tool_as_a_task(tmp_path: Path) -> None:
    """Before 2026-07-28 the same rule is `call`'s too: a tool whose execution.taskSupport is
    "required" is sent as a task (`task: {}`) and followed to its result (tests/fixtures/task_server.py)."""
    record = tmp_path / "record.jsonl"
    proc = subprocess.run([PY, "-m", "mcpprobe", "watch", "--json", "--duration", "4", "--protocol", "2025-11-25",
                           "--yes", "--call", "research topic=moths steps=1 delay_ms=10",
                           "--env", f"SDK_FIXTURE_RECORD={record}",
                           "--", PY, str(ROOT / "tests" / "fixtures" / "task_server.py")],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert "Traceback" not in proc.stderr, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    done = [e for e in events if e["event"] == "call"]
    assert len(done) == 1 and done[0]["isError"] is False and done[0]["task"]["status"] == "completed", events
    sent = [e for e in received(record) if e.get("method") == "tools/call"]
    assert len(sent) == 1 and "task" in sent[0]["params"]
