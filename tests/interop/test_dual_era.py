"""A dual-era server on the TypeScript SDK 2.x (`@modelcontextprotocol/server`, npm) when it is slow to
answer `server/discover`: the verdicts must not depend on how fast it starts.

`serveStdio` answers server/discover with 2026-07-28, and an `initialize` that comes after it
switches the process to the older protocol ("An `initialize` request selects legacy semantics, scoped
to the stdio process"). mcpprobe sends that initialize when discover is silent for --discover-timeout:
the process it reached is then legacy, so mcpprobe starts the server again for server/discover alone
(docs/negotiation.md). The package is installed from npm into the test cache on first use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, run_cli

pytestmark = pytest.mark.interop

SERVER = ROOT / "tests" / "fixtures" / "ts_sdk2_server.cjs"
# The time allowed is not what is tested: a busy machine must not turn a slow start into a timeout.
ROOMY = ["--connect-timeout", "60", "--timeout", "60"]


def _server(prefix: Path, *, sleep: float = 0, reject_legacy: bool = False) -> list[str]:
    node = ["node", str(SERVER), str(prefix), *(["--reject-legacy"] if reject_legacy else [])]
    if not sleep:
        return node
    return ["sh", "-c", f"sleep {sleep}; exec " + " ".join(f"'{part}'" for part in node)]


def _run(command: str, prefix: Path, *options: str, sleep: float = 0, reject_legacy: bool = False) -> dict[str, Any]:
    result = run_cli([command, "--json", *ROOMY, *options, "--",
                      *_server(prefix, sleep=sleep, reject_legacy=reject_legacy)])
    doc = result.json
    assert result.exit_code == 0, (result.stderr, [c for c in doc.get("checks", []) if c["status"] == "fail"])
    return doc


def _verdicts(doc: dict[str, Any]) -> dict[str, str]:
    return {check["id"]: check["status"] for check in doc["checks"]}


def _restarted_for_modern(doc: dict[str, Any]) -> None:
    """The slow path: discover answered late, the initialize sent meanwhile answered too, a second start
    with discover alone, whose answer is the one in force."""
    assert doc["era"] == "modern" and doc["protocolVersion"] == "2026-07-28"
    steps = [(e["method"], e["start"], e["answer"].split(" ")[0], e["inForce"]) for e in doc["negotiation"]]
    assert steps == [("server/discover", 1, "result", False), ("initialize", 1, "result", False),
                     ("server/discover", 2, "result", True)], doc["negotiation"]
    reason = doc["eraReason"]
    assert "later than the" in reason and "the initialize sent meanwhile was answered too" in reason, reason
    assert "makes a stdio process legacy" in reason and "started the server again" in reason, reason
    assert [t["phase"] for t in doc["timings"]][:5] == ["connect", "discover", "initialize", "restart", "discover"]


@pytest.fixture(scope="module")
def fast_verdicts(ts_sdk2: Path) -> dict[str, str]:
    """`check` when discover has all the time it needs: one request, no fallback."""
    doc = _run("check", ts_sdk2, "--discover-timeout", "60")
    assert doc["era"] == "modern" and "negotiation" not in doc
    assert doc["eraReason"] == "server/discover answered (supportedVersions: 2026-07-28)"
    return _verdicts(doc)


def test_a_cold_start_behind_sleep_is_judged_in_the_era_in_force(ts_sdk2: Path, fast_verdicts: dict[str, str]) -> None:
    doc = _run("check", ts_sdk2, sleep=3)
    _restarted_for_modern(doc)
    assert _verdicts(doc) == fast_verdicts
    probe = _run("probe", ts_sdk2, sleep=3)
    _restarted_for_modern(probe)
    assert {kind: v["count"] for kind, v in probe["kinds"].items()} == {
        "tools": 1, "resources": 1, "templates": 0, "prompts": 1}


def test_a_small_discover_timeout_gives_the_same_verdicts(ts_sdk2: Path, fast_verdicts: dict[str, str]) -> None:
    doc = _run("check", ts_sdk2, "--discover-timeout", "0.05")
    assert doc["era"] == "modern" and _verdicts(doc) == fast_verdicts
    probe = _run("probe", ts_sdk2, "--discover-timeout", "0.05")
    assert probe["era"] == "modern" and probe["kinds"]["tools"]["count"] == 1


def test_the_slow_case_repeated_gives_the_same_verdicts_every_time(
        ts_sdk2: Path, fast_verdicts: dict[str, str]) -> None:
    # A sleep well past the discover wait makes every run take the fallback path (the issue asks ten
    # runs on a busy machine: see docs/negotiation.md; kept small here for the suite's time).
    for _ in range(3):
        doc = _run("check", ts_sdk2, "--discover-timeout", "0.2", sleep=0.5)
        _restarted_for_modern(doc)
        assert _verdicts(doc) == fast_verdicts


def test_the_human_output_names_both_answers_and_the_one_in_force(ts_sdk2: Path) -> None:
    result = run_cli(["probe", *ROOMY, "--discover-timeout", "0.2", "--", *_server(ts_sdk2, sleep=0.5)])
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())  # the rows wrap to the terminal's width
    protocol = text[text.index("Protocol "):text.index("Negotiation ")]
    assert "2026-07-28 (modern era" in protocol and "started the server again" in protocol, protocol
    negotiation = text[text.index("Negotiation "):text.index("Client ")]
    assert "server/discover 2026-07-28 -> result (supportedVersions: 2026-07-28)" in negotiation
    assert "initialize 2025-11-25 -> result (protocolVersion: '2025-11-25')" in negotiation
    assert negotiation.rstrip().endswith("[in force]") and "start 2: server/discover" in negotiation


def test_an_initialize_refused_keeps_the_process_modern_without_a_restart(ts_sdk2: Path) -> None:
    # legacy: 'reject' answers the late initialize with -32022: that process never left the modern era.
    # The SDK writes that refusal at once and the discover result when its handler is done, so either
    # may come first (then the -32022 names 2026-07-28 and discover is asked once more): both paths
    # stay on the first process, in the modern era.
    doc = _run("check", ts_sdk2, "--discover-timeout", "0.2", sleep=0.5, reject_legacy=True)
    assert doc["era"] == "modern"
    entries = doc["negotiation"]
    assert [e["start"] for e in entries] == [1] * len(entries)
    assert [e["answer"].split(" ")[:2] for e in entries if e["method"] == "initialize"] == [["error", "-32022"]]
    (in_force,) = [e for e in entries if e["inForce"]]
    assert in_force["method"] == "server/discover" and in_force["answer"].startswith("result")
    assert "restart" not in [t["phase"] for t in doc["timings"]]
    assert "-32022" in doc["eraReason"] and "started the server again" not in doc["eraReason"]
