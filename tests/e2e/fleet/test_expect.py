"""Expectations for CI: met, unmet (each kind of expectation), malformed files with their line."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpprobe.fleet.expect import ExpectationError, load
from tests.conftest import fixture_cmd, run_cli

FULL = fixture_cmd("full")


def _expect(tmp_path: Path, text: str) -> str:
    path = tmp_path / "expect.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _probe(expect: str, *server: str, extra: tuple[str, ...] = ()) -> object:
    return run_cli(["probe", "--expect", expect, "--json", "--protocol", "legacy", *extra, "--", *(server or FULL)])


def test_the_plainest_form_as_written(tmp_path: Path) -> None:
    path = _expect(tmp_path, 'capabilities: [tools, resources]\ntools: [add, search]\nresources: ["file:///a"]\n'
                             "prompts: [review]\nprotocolVersions: [2025-11-25]\nmaxSeconds: 5\n")
    result = _probe(path)
    assert result.exit_code == 1
    checks = {c["name"]: c["ok"] for c in result.json["expectations"]}
    assert checks == {"protocolVersions: 2025-11-25": True, "capabilities: tools": True,
                      "capabilities: resources": True, "tools: add": True, "tools: search": False,
                      "resources: file:///a": False, "prompts: review": False, "maxSeconds: 5": True}
    failed = [f for f in result.json["findings"] if f["code"] == "expectation-failed"]
    assert [f["detail"]["expectation"] for f in failed] == ["tools: search", "resources: file:///a",
                                                            "prompts: review"]
    assert "tool 'search' is missing" in failed[0]["message"] and failed[0]["kind"] == "tools"


def test_everything_met(tmp_path: Path) -> None:
    path = _expect(tmp_path, """
protocolVersions: [2025-11-25, 2026-07-28]
capabilities:
  - tools
  - resources: [subscribe]
  - prompts: {listChanged: true}
tools:
  - name: echo
    required: [message]
  - add
resources: ["fixture://readme"]
templates: ["fixture://items/{id}"]
prompts:
  greet:
    required: [name]
maxSeconds: 30
""")
    result = _probe(path)
    assert result.exit_code == 0, result.json["findings"]
    assert all(c["ok"] for c in result.json["expectations"]) and len(result.json["expectations"]) == 10
    human = run_cli(["probe", "--expect", path, "--protocol", "legacy", "--", *FULL])
    assert "Expectations 10 met" in human.stdout


def test_unmet_details(tmp_path: Path) -> None:
    path = _expect(tmp_path, """
protocolVersions: [2025-06-18]
capabilities: {logging: {}, resources: [subscribe], completions: []}
tools: [{name: add, arguments: [a, c], required: [b]}, {name: echo, required: [other]}]
prompts: [{name: summary, required: [x]}]
""")
    result = _probe(path, *fixture_cmd("tools-only"))
    assert result.exit_code == 1
    messages = {c["name"]: c["message"] for c in result.json["expectations"] if not c["ok"]}
    assert messages["protocolVersions: 2025-06-18"].startswith("negotiated protocol version 2025-11-25")
    assert "did not declare the capability 'resources'" in messages["capabilities: resources (subscribe)"]
    assert "'completions'" in messages["capabilities: completions"]
    assert "capabilities: logging" in messages
    assert messages["tools: add (b*, a, c)"] == "tool 'add' does not accept argument 'c'"
    assert messages["tools: echo (other*)"] == "tool 'echo' does not accept argument 'other'"
    assert "did not declare prompts" in messages["prompts: summary (x*)"]


def test_max_seconds_and_a_probe_that_never_connects(tmp_path: Path) -> None:
    slow = _expect(tmp_path, "maxSeconds: 0.001\ntools: [echo]\n")
    result = _probe(slow)
    assert result.exit_code == 1
    assert [c["ok"] for c in result.json["expectations"]] == [True, False]
    crashed = _probe(slow, *fixture_cmd("crash-on-start"))
    assert crashed.exit_code == 4
    assert crashed.json["expectations"][0]["ok"] is None
    assert "expectation-failed" not in crashed.codes()


@pytest.mark.parametrize(("text", "line", "message"), [
    ("tools: [a\n  b: c\n", 2, "invalid YAML"),
    ("tools:\n  - echo\nbogus: 1\n", 3, "unknown key 'bogus'"),
    ("maxSeconds: soon\n", 1, "must be a number"),
    ("maxSeconds: -1\n", 1, "greater than 0"),
    ("tools: {echo: [1]}\n", 1, "must be a mapping"),
    ("resources:\n  - uri: x\n    required: [a]\n", 3, "take only 'uri'"),
    ("- a\n- b\n", 1, "expected a mapping"),
    ("capabilities: 5\n", 1, "capabilities must be"),
])
def test_malformed_files_are_usage_errors_with_the_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = _expect(tmp_path, text)
    with pytest.raises(ExpectationError, match=message) as caught:
        load(path)
    assert f"{path}:{line}:" in caught.value.message
    result = run_cli(["probe", "--expect", path, "--", *FULL])
    assert result.exit_code == 2 and f"{path}:{line}:" in result.stderr and result.stdout == ""


def test_a_missing_file_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli(["probe", "--expect", str(tmp_path / "nope.yaml"), "--", *FULL])
    assert result.exit_code == 2 and "cannot read" in result.stderr
