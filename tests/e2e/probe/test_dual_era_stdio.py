"""A stdio server that answers both a late `server/discover` and the `initialize` mcpprobe sent while
it waited is never judged by a mix of eras (docs/negotiation.md#a-stdio-server-that-answered-both).

The fixture (tests/fixtures/dual_era_server.py) holds its first discover answer until the next request
has arrived, the wire order of a slow start on any machine, and says in every answer which era served
it. The same paths against the TypeScript SDK 2.x itself: tests/interop/test_dual_era.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import PY, ROOT, run_cli

SERVER = [PY, str(ROOT / "tests" / "fixtures" / "dual_era_server.py")]
FAST_WAIT = ["--discover-timeout", "0.1", "--connect-timeout", "20"]


def _run(tmp_path: Path, command: str, mode: str, *options: str) -> tuple[int, dict[str, Any]]:
    result = run_cli([command, "--json", *FAST_WAIT, *options, "--", *SERVER, mode,
                      "--state", str(tmp_path / "starts")])
    return result.exit_code, result.json


def _steps(doc: dict[str, Any]) -> list[tuple[str, int, str, bool]]:
    return [(e["method"], e["start"], " ".join(e["answer"].split(" ")[:2]), e["inForce"])
            for e in doc["negotiation"]]


def test_an_initialize_answered_makes_the_process_legacy_so_a_second_start_serves_modern(tmp_path: Path) -> None:
    code, doc = _run(tmp_path, "probe", "switch")
    assert code == 0
    assert doc["era"] == "modern" and doc["serverInfo"]["name"] == "dual-era start 2"
    # Listed on the second start, which never got an initialize: really served in the modern era.
    assert doc["kinds"]["tools"]["items"][0]["description"] == "served in the modern era"
    assert _steps(doc) == [("server/discover", 1, "result (supportedVersions:", False),
                           ("initialize", 1, "result (protocolVersion:", False),
                           ("server/discover", 2, "result (supportedVersions:", True)]
    assert "the initialize sent meanwhile was answered too (protocolVersion '2025-11-25'), which makes a stdio " \
           "process legacy; started the server again and sent server/discover alone" in doc["eraReason"]
    assert [t["phase"] for t in doc["timings"]][:5] == ["connect", "discover", "initialize", "restart", "discover"]
    assert (tmp_path / "starts").read_text() == "2"


def test_check_judges_the_process_by_the_era_in_force(tmp_path: Path) -> None:
    code, doc = _run(tmp_path, "check", "switch")
    statuses = {check["id"]: check["status"] for check in doc["checks"]}
    assert doc["era"] == "modern" and code == 0, [c for c in doc["checks"] if c["status"] == "fail"]
    assert statuses["lifecycle.result-type"] == "pass" and statuses["listing.cache-hints"] == "pass"


def test_an_initialize_refused_keeps_the_process_modern(tmp_path: Path) -> None:
    code, doc = _run(tmp_path, "probe", "reject")
    assert code == 0 and doc["era"] == "modern" and doc["serverInfo"]["name"] == "dual-era start 1"
    assert _steps(doc) == [("server/discover", 1, "result (supportedVersions:", True),
                           ("initialize", 1, "error -32022", False)]
    assert "so the process stayed in the modern era" in doc["eraReason"]
    assert (tmp_path / "starts").read_text() == "1"


def test_an_initialize_never_answered_leaves_the_era_unknown_so_a_second_start_decides(tmp_path: Path) -> None:
    code, doc = _run(tmp_path, "probe", "ignore-init", "--connect-timeout", "1")
    assert code == 0 and doc["era"] == "modern" and doc["serverInfo"]["name"] == "dual-era start 2"
    assert _steps(doc) == [("server/discover", 1, "result (supportedVersions:", False),
                           ("initialize", 1, "no answer", False),
                           ("server/discover", 2, "result (supportedVersions:", True)]
    assert "never answered, so which era that process is in is unknown" in doc["eraReason"]


def test_a_second_start_that_answers_discover_otherwise_ends_the_run(tmp_path: Path) -> None:
    code, doc = _run(tmp_path, "probe", "flip")
    assert code == 5 and doc["era"] is None
    assert _steps(doc)[-1] == ("server/discover", 2, "error -32601", False)
    message = doc["error"]["message"]
    assert "on its second start server/discover was answered with error -32601" in message
    assert "did not answer server/discover the same way twice" in message


def test_the_human_output_shows_each_answer_and_the_one_in_force(tmp_path: Path) -> None:
    result = run_cli(["probe", *FAST_WAIT, "--", *SERVER, "switch", "--state", str(tmp_path / "starts")])
    assert result.exit_code == 0, result.stderr
    text = " ".join(result.stdout.split())
    negotiation = text[text.index("Negotiation "):text.index("Client ")]
    assert negotiation.startswith("Negotiation server/discover 2026-07-28 -> result (supportedVersions: 2026-07-28)")
    assert "· initialize 2025-11-25 -> result (protocolVersion: '2025-11-25')" in negotiation
    assert "· start 2: server/discover 2026-07-28 -> result (supportedVersions: 2026-07-28)" in negotiation
    assert negotiation.rstrip().endswith("[in force]")
