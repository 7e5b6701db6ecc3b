"""The tap's judge on real exchanges: fixture clients that each break one rule of the client checklist are
flagged with exactly that rule, on the client side; fixture servers that break a passive rule are flagged on
the server side; conformant exchanges give no finding; a record replayed gives the findings the live run gave."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PY, ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "tap"
TAP = [PY, "-m", "mcpprobe", "tap"]


def _through_tap(tmp_path: Path, scenario: str, server_flags: list[str], *, record: Path | None = None,
                 env: dict[str, str] | None = None, tap_args: list[str] | None = None) -> dict[str, Any]:
    report = tmp_path / "report.json"
    record = record or tmp_path / "record.jsonl"
    proc = subprocess.run(
        [PY, str(FIXTURES / "raw_client.py"), scenario, "--", *TAP, "--quiet", "--record", str(record), "--report",
         str(report), "--format", "json", *(tap_args or []), "--", PY, str(FIXTURES / "mini_server.py"),
         *server_flags],
        capture_output=True, text=True, timeout=90, cwd=ROOT, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    document: dict[str, Any] = json.loads(report.read_text())
    return document


def _found(document: dict[str, Any]) -> list[tuple[str, str]]:
    return sorted({(f["code"], f["detail"]["side"]) for f in document["findings"]})


def _replayed(record: Path) -> dict[str, Any]:
    proc = subprocess.run([*TAP, "--replay", str(record), "--quiet", "--format", "json"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)
    assert "Traceback" not in proc.stderr
    document: dict[str, Any] = json.loads(proc.stdout)
    return document


CASES = [
    # (scenario of the client, flags of the server, the one finding expected)
    ("good", [], None),
    ("good", ["--paged"], None),
    ("coalesced", ["--storm", "5"], None),
    ("undeclared", [], ("client-undeclared-capability", "client")),
    ("subscribe", [], ("client-subscribe-undeclared", "client")),
    ("no-relist", [], ("client-stale-list", "client")),
    ("storm", ["--storm", "5"], ("client-relist-storm", "client")),
    ("first-page", ["--paged"], ("client-first-page-only", "client")),
    ("sampling-unhandled", [], ("client-declared-unhandled", "client")),
    ("before-initialized", [], ("client-request-before-initialized", "client")),
    ("cancel-unknown", [], ("client-cancel-unknown", "client")),
    ("good", ["--noise"], ("non-protocol-output", "server")),
    ("ping", ["--bad-id"], ("protocol-violation", "server")),
    ("good", ["--undeclared-change"], ("server-undeclared-capability", "server")),
    ("good", ["--paged", "--cursor-loop"], ("server-pagination-broken", "server")),
    ("good", ["--both"], ("protocol-violation", "server")),
]


@pytest.mark.parametrize(("scenario", "flags", "expected"), CASES,
                         ids=[f"{c[0]}{''.join(c[1])}" for c in CASES])
def test_each_broken_rule_is_flagged_alone_and_replays_the_same(tmp_path: Path, scenario: str, flags: list[str],
                                                                expected: tuple[str, str] | None) -> None:
    document = _through_tap(tmp_path, scenario, flags)
    assert _found(document) == ([expected] if expected else [])
    for finding in document["findings"]:
        assert finding["detail"]["messages"], finding  # the messages that show it
        assert finding["detail"]["spec"] and finding["detail"]["source"]
    replayed = _replayed(tmp_path / "record.jsonl")
    assert replayed["findings"] == document["findings"]
    assert replayed["replayed"] is True


def test_a_cached_list_reused_after_a_reconnect(tmp_path: Path) -> None:
    """Two runs of the tap on one record: the second connection calls a tool it listed only on the first."""
    record = tmp_path / "record.jsonl"
    first = _through_tap(tmp_path, "good", [], record=record)
    assert first["findings"] == []
    second = _through_tap(tmp_path, "reconnect-second", [], record=record)
    assert _found(second) == [("client-cache-after-reconnect", "client")]
    events = [json.loads(line).get("event") for line in record.read_text().splitlines()]
    assert events.count("start") == 1 and events.count("reconnect") == 1 and events.count("exit") == 2
    assert _replayed(record)["findings"] == second["findings"]


def test_the_record_is_private_and_holds_no_secret(tmp_path: Path) -> None:
    """A token in the environment (as a host's config gives it) and a key on the server's command line, sent
    in a tool call and echoed back by the server: neither is in the record, the report or the live view."""
    token, key = "ghp_tapSecretToken0123456789", "sk-tap-key-abcdef987654"
    log = tmp_path / "live.log"
    document = _through_tap(tmp_path, "good", ["--api-key", key], env={"GITHUB_TOKEN": token,
                                                                        "TAP_SECRETS": f"{token} {key}"},
                            tap_args=["--log", str(log)])
    record = tmp_path / "record.jsonl"
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    for path in (record, tmp_path / "report.json", log):
        text = path.read_text()
        assert token not in text and key not in text, path
    assert "[redacted]" in record.read_text()
    assert document["findings"] == []


def test_a_payload_past_the_cut_keeps_its_envelope_size_and_digest(tmp_path: Path) -> None:
    import hashlib

    _through_tap(tmp_path, "good", [], env={"TAP_SECRETS": "x" * 5000}, tap_args=["--cut", "2048"])
    entries = [json.loads(line) for line in (tmp_path / "record.jsonl").read_text().splitlines()]
    cut = [e for e in entries if "msg" in e and "cut" in e["msg"]]
    assert len(cut) == 2  # the call and its echo
    call = cut[0]["msg"]
    assert call["method"] == "tools/call" and call["params"] == {"name": "echo"} and "id" in call
    assert call["cut"]["size"] == cut[0]["size"] > 5000
    assert len(call["cut"]["sha256"]) == len(hashlib.sha256().hexdigest())
