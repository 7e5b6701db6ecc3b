"""Numbers and ids from peers are taken only in range: clamped or refused with a finding, never a crash
or a wait past --timeout; an id is the one sent, of the type sent. Real server processes; each fixture
records what it sent, so that a test also proves the attack landed."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

PY = sys.executable
BULKY = ROOT / "tests" / "fixtures" / "bulky_server.py"
TASKS_EXT = ROOT / "tests" / "fixtures" / "tasks_ext_server.py"
GRACE = 15  # process start and teardown on a loaded machine


def mcpprobe(args: list[str], timeout: float = 120) -> tuple[int, dict, str, float]:
    started = time.monotonic()
    proc = subprocess.run([PY, "-m", "mcpprobe", *args], capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    return proc.returncode, json.loads(proc.stdout), proc.stderr, time.monotonic() - started


def test_an_answer_whose_id_is_a_float_is_not_the_integer_sent(tmp_path: Path) -> None:
    """9007199254740991.0 is equal to the integer id sent, but not that id echoed: it passed
    lifecycle.request-id-echo ("each echoed exactly"); now it is a response to a request never sent."""
    record = tmp_path / "sent.txt"
    code, doc, stderr, _ = mcpprobe(["check", "--json", "--only", "lifecycle.request-id-echo", "--timeout", "3",
                                     "--env", f"BULKY_RECORD={record}", "--", PY, str(BULKY), "float-ids", "0", "0"])
    assert record.read_text().splitlines() == ["float-id"]  # the float id was sent
    [result] = doc["checks"]
    assert code == 1 and result["status"] == "fail", (result, stderr)
    assert "9007199254740991.0" in result["detail"]["answersWithOtherIds"][0]
    assert any("not the integer id mcpprobe sent" in f["message"] for f in doc["findings"])


@pytest.mark.parametrize("ttl", ["9" * 401, "1e400"])
def test_a_task_ttl_out_of_range_is_bounded_by_timeout(tmp_path: Path, ttl: str) -> None:
    """A task's ttl of 401 digits was "taken as none", and one of 1e400 (a float) ignored: either way
    `call` waited for a never-ending task for ever; now it is refused with a finding and --timeout
    bounds the wait."""
    record = tmp_path / "received.jsonl"
    code, doc, stderr, took = mcpprobe(["call", "forever", "--yes", "--json", "--timeout", "3",
                                        "--env", f"TASKS_EXT_RECORD={record}",
                                        "--", PY, str(TASKS_EXT), "--ttl", ttl], timeout=60)
    assert code == 6, stderr  # a timeout, said
    found = [f for f in doc["findings"] if f["code"] == "number-out-of-range"]
    assert found and found[0]["detail"]["field"] == "ttl" and "bounded by --timeout (3 s)" in found[0]["message"]
    assert doc["task"]["ttl"] is None  # the server's ttl was unusable: not shown as anything else
    assert "whose ttl mcpprobe could not read" in doc["error"]["message"]
    methods = [json.loads(line)["method"] for line in record.read_text().splitlines()]
    assert "tools/call" in methods and "tasks/cancel" in methods  # the task was made, and not left behind
    assert took < 3 + GRACE, took
