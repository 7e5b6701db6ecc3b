"""The live view (stderr, or --log's file) and --replay's exits."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from tests.conftest import PY, ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "tap"
TAP = [PY, "-m", "mcpprobe", "tap"]


def _run(tmp_path: Path, scenario: str, tap_args: list[str], server: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, str(FIXTURES / "raw_client.py"), scenario, "--", *TAP, *tap_args, "--", PY,
                           str(FIXTURES / "mini_server.py"), *server],
                          capture_output=True, text=True, timeout=90, cwd=ROOT)


def test_the_live_view_is_one_line_per_message_on_stderr_then_the_report(tmp_path: Path) -> None:
    proc = _run(tmp_path, "undeclared", ["--record", str(tmp_path / "r.jsonl")], [])
    assert proc.returncode == 0
    lines = proc.stderr.splitlines()
    messages = [line for line in lines if " client> #" in line or " server> #" in line]
    entries = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert len(messages) == sum(1 for entry in entries if "dir" in entry)
    assert any("client> #" in line and "prompts/list" in line for line in messages)
    flagged = [line for line in lines if line.startswith("tap ! error client-undeclared-capability")]
    assert len(flagged) == 1 and "(#" in flagged[0]
    assert "mcpprobe tap: " in proc.stderr and "client-undeclared-capability" in proc.stderr.split("mcpprobe tap: ")[1]


def test_log_takes_the_live_view_off_stderr_into_a_private_file(tmp_path: Path) -> None:
    log = tmp_path / "tap.log"
    proc = _run(tmp_path, "good", ["--log", str(log), "--events-only"], ["--noise"])
    assert proc.returncode == 0
    assert "tap " not in proc.stderr and "mcpprobe tap:" not in proc.stderr
    text = log.read_text()
    assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
    assert "client> #" not in text  # --events-only
    assert " start " in text and " exit " in text and "tap ! warning non-protocol-output" in text
    assert "mcpprobe tap: " in text  # the report, at the end


def test_replay_exits_1_on_error_findings_and_2_on_a_file_that_is_no_record(tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    _run(tmp_path, "undeclared", ["--quiet", "--record", str(record)], [])
    proc = subprocess.run([*TAP, "--replay", str(record), "--format", "sarif"], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["runs"][0]["results"][0]["ruleId"] == "client-undeclared-capability"
    assert "client> #" in proc.stderr  # shown again, as it went
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a record\n")
    proc = subprocess.run([*TAP, "--replay", str(bad)], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2
    assert "line 1: not JSON" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run([*TAP, "--replay", str(tmp_path / "missing.jsonl")], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "cannot read the record" in proc.stderr


def test_usage_errors(tmp_path: Path) -> None:
    proc = subprocess.run([*TAP], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "give the server's command after '--'" in proc.stderr
    proc = subprocess.run([*TAP, "--replay", "x", "--", "cat"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 2 and "not both" in proc.stderr


def test_the_html_report_live_and_replayed_shows_the_same_sequence(tmp_path: Path) -> None:
    record, page = tmp_path / "r.jsonl", tmp_path / "tap.html"
    _run(tmp_path, "undeclared", ["--quiet", "--record", str(record), "--format", "html", "--report", str(page)], [])
    live = page.read_text()
    replayed = subprocess.run([*TAP, "--replay", str(record), "--quiet", "--format", "html"], capture_output=True,
                              text=True, timeout=60, cwd=ROOT).stdout
    sequence = live.split("<h2>Sequence</h2>", 1)[1]
    assert sequence == replayed.split("<h2>Sequence</h2>", 1)[1]
    assert "prompts/list" in sequence and "client-undeclared-capability" in sequence
