"""`mcpprobe check` for people, on real fixture servers: what failed first, the passes compact, each
reason for `skipped` and `n/a` said once (every check on its own line with -v); and a cancelled
request answered after `lifecycle.cancel-in-flight` stopped looking for it is no false alarm."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from conftest import checked, run_cli

from tests.e2e.check.test_check import check_cmd

HEADS = ("pass ", "fail ", "warn ", "skipped ", "n/a ", "error ")


def _heads(text: str) -> list[str]:
    return [line.split()[0] for line in text.splitlines() if line.startswith(HEADS)]


def test_a_failure_late_in_the_run_is_shown_first_and_no_reason_is_repeated() -> None:
    # cancel-breaks: the request after a cancellation is never answered; the check runs late
    # (runner.LATE), and what it takes down after it is `skipped` for one reason.
    args = ["check", "--protocol", "legacy", "--timeout", "3", "--", *check_cmd("cancel-breaks")]
    human = run_cli(args, env={"COLUMNS": "60"})
    assert human.exit_code == 1, human.stdout
    heads = _heads(human.stdout)
    assert heads[0] == "fail"
    first = next(line for line in human.stdout.splitlines() if line.startswith("fail"))
    assert first.split()[1] == "lifecycle.cancel-in-flight"
    assert heads == sorted(heads, key=["fail", "error", "warn", "pass", "skipped", "n/a"].index)
    assert heads.count("pass") == 1  # the passes: one wrapped line of ids
    words = " ".join(human.stdout.split())
    assert words.count("not part of protocol") <= 1
    assert "https://modelcontextprotocol.io/specification/" in human.stdout
    tally = human.stdout.strip().splitlines()[-1]
    doc = checked(json.loads(run_cli([*args[:1], "--json", *args[1:]]).stdout))
    assert tally == f"{len(doc['checks'])} checks: " + ", ".join(
        f"{doc['summary'][s]} {s}" for s in ("pass", "fail", "warn", "skipped", "n/a", "error") if doc["summary"][s])
    verbose = run_cli(["check", "-v", *args[1:]], env={"COLUMNS": "100"})
    assert len(_heads(verbose.stdout)) == len(doc["checks"])  # -v: every check on a line of its own
    assert _heads(verbose.stdout)[0] == "fail"


LATE_SERVER = r'''
import json, sys

held = None  # the cancelled request, answered only when the request after the check comes

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    message = json.loads(line)
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        continue  # notifications, notifications/cancelled too: ignored, the answer stays due
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "late", "version": "1"}}})
    elif method == "tools/list" and rid == "mcpprobe-cancel-1":
        held = rid
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
    else:
        if held is not None:  # late: the check that cancelled it has ended before this request was sent
            send({"jsonrpc": "2.0", "id": held, "result": {"tools": []}})
            held = None
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
'''


def test_a_cancelled_request_answered_after_the_check_is_no_false_alarm(tmp_path: Path) -> None:
    """The server answers the cancelled tools/list only when the next check's request arrives, which
    mcpprobe sends after lifecycle.cancel-in-flight has decided: later than any window, whatever the
    machine's speed. The specification lets the sender ignore it ("The sender of the cancellation
    notification SHOULD ignore any response to the request that arrives afterward"): no finding,
    no failure, and the next check judged on its own answer."""
    server = tmp_path / "late_server.py"
    server.write_text(LATE_SERVER)
    result = run_cli(["check", "--json", "--protocol", "legacy", "--timeout", "5", "--only",
                      "lifecycle.cancel-in-flight", "--only", "lifecycle.unknown-method", "--", sys.executable,
                      str(server)])
    doc = checked(json.loads(result.stdout))
    by_id = {entry["id"]: entry for entry in doc["checks"]}
    assert by_id["lifecycle.cancel-in-flight"]["status"] == "pass"
    assert "(not answered)" in by_id["lifecycle.cancel-in-flight"]["message"]
    assert by_id["lifecycle.cancel-in-flight"]["detail"] == {"cancelledAnswered": False}
    assert by_id["lifecycle.unknown-method"]["status"] == "pass"
    assert doc["findings"] == [] and result.exit_code == 0
