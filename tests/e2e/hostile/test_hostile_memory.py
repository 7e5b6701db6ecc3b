"""One memory budget: what mcpprobe keeps of a peer during a run does not grow with what the peer sends.

Each test runs mcpprobe as a real process against tests/fixtures/bulky_server.py, which records every
bulky message it sent (so the test also proves the attack landed), and compares mcpprobe's peak
resident memory with a `probe` of the same server (which keeps nothing of the flood either).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from conftest import ROOT

PY = sys.executable
SERVER = ROOT / "tests" / "fixtures" / "bulky_server.py"
# mcpprobe with the cycle collector off: memory freed only by reference counting, as on a hot path
# where the collector has not run yet. A reference cycle then keeps what it holds for the whole run.
NO_GC = ("import gc, sys; gc.disable(); sys.argv = ['mcpprobe', *sys.argv[1:]]; "
         "from mcpprobe.launch import main; main()")


def peak(args: list[str], record: Path | None = None, size: list[int] | None = None) -> tuple[int, dict[str, Any]]:
    """mcpprobe's peak resident memory (MiB) and its JSON document (its size in bytes appended to `size`)."""
    recording = ["--env", f"BULKY_RECORD={record}"] if record is not None else []
    argv = [PY, "-c", NO_GC, *args[:1], "--json", *recording, *args[1:]]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read() if proc.stdout else b""))
    reader.start()
    _, status, usage = os.wait4(proc.pid, 0)
    reader.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if size is not None:
        size.append(len(out[0]))
    return usage.ru_maxrss // 1024, json.loads(out[0])


def server(mode: str, megabytes: float, count: int) -> list[str]:
    return ["--", PY, str(SERVER), mode, str(megabytes), str(count)]


def sent(record: Path) -> int:
    return len(record.read_text().splitlines()) if record.exists() else 0


def test_check_keeps_no_notification_flood(tmp_path: Path) -> None:
    """100 notifications with 1 MB method names: check's memory stays that of a probe (it kept every
    method name for the whole run, 100 MB more), and what it did not keep is counted in a finding."""
    record = tmp_path / "sent.txt"
    baseline, _ = peak(["probe", *server("notify", 1, 100)])
    used, doc = peak(["check", *server("notify", 1, 100)], record)
    assert sent(record) == 100  # the flood was sent
    assert doc["exitCode"] == 0
    dropped = [f for f in doc["findings"] if f["code"] == "peer-data-dropped"]
    assert dropped and dropped[0]["detail"]["dropped"] == {"notifications": 100}
    assert used - baseline < 30, (baseline, used)


def test_check_keeps_no_answer_to_a_request_never_sent(tmp_path: Path) -> None:
    """100 answers of 1 MB to ids never sent: not kept (check kept up to 10,000 of them), counted."""
    record = tmp_path / "sent.txt"
    baseline, _ = peak(["probe", *server("stray", 1, 100)])
    used, doc = peak(["check", *server("stray", 1, 100)], record)
    assert sent(record) == 100
    assert any(f["code"] == "protocol-violation" for f in doc["findings"])
    dropped = [f for f in doc["findings"] if f["code"] == "peer-data-dropped"]
    assert dropped and dropped[0]["detail"]["dropped"]["answers to requests never sent"] == 100
    assert used - baseline < 30, (baseline, used)


def test_load_against_large_answers_keeps_a_flat_profile_without_the_cycle_collector(tmp_path: Path) -> None:
    """60 answers of 3 MB, one request in flight, the cycle collector off: memory does not grow with
    the number of answers (each queued request referred to itself, its result alive until a collection)."""
    record = tmp_path / "sent.txt"
    baseline, _ = peak(["probe", *server("answers", 3, 0)])
    few, _ = peak(["load", "--requests", "10", "--call", "big", *server("answers", 3, 0)])
    used, doc = peak(["load", "--requests", "60", "--call", "big", *server("answers", 3, 0)], record)
    assert sent(record) == 60
    assert doc["exitCode"] == 0 and doc["overall"]["requests"] == 60 and doc["overall"]["errors"] == 0
    assert used - few < 20, (few, used)  # flat: 50 more answers of 3 MB cost nothing kept
    assert used - baseline < 40, (baseline, used)


def test_lint_findings_scale_with_the_catalogue_not_its_square(tmp_path: Path) -> None:
    """600 tools whose descriptions each name all the others (a catalogue of about 5 MB): one
    lint-names-tool finding per tool, counting the names (it was one per name, 359,400 of them, a
    document many times the catalogue), and memory close to a probe without --lint."""
    record = tmp_path / "sent.txt"
    plain, sizes = [], []
    baseline, _ = peak(["probe", *server("mentions", 0, 600)], size=plain)
    used, doc = peak(["probe", "--lint", *server("mentions", 0, 600)], record, size=sizes)
    assert sent(record) == 1
    named = [f for f in doc["findings"] if f["code"] == "lint-names-tool"]
    assert len(named) == 600 and {f["detail"]["count"] for f in named} == {599}
    assert sizes[0] < plain[0] + 1_000_000, (plain, sizes)  # the findings: about 200 bytes a tool
    assert used - baseline < 40, (baseline, used)
