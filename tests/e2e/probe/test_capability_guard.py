"""mcpprobe never sends a request for a capability the server did not declare.

A recording fixture server writes down every method it receives; these tests read that record.
"""

from __future__ import annotations

import pytest
from conftest import fixture_cmd, recorded, run_cli

HANDSHAKE = {"server/discover", "initialize", "notifications/initialized"}
LISTS = {
    "tools": {"tools/list"},
    "resources": {"resources/list", "resources/templates/list"},
    "prompts": {"prompts/list"},
}


@pytest.mark.parametrize("scenario, declared", [
    ("none", set()),
    ("tools-only", {"tools"}),
    ("resources-no-subscribe", {"resources"}),
    ("resources-subscribe", {"resources"}),
    ("prompts-listchanged", {"prompts"}),
    ("full", {"tools", "resources", "prompts"}),
])
def test_probe_sends_only_what_was_declared(tmp_path, scenario, declared):
    record = tmp_path / "record.jsonl"
    result = run_cli(["probe", "--json", "--env", f"FIXTURE_RECORD={record}", "--", *fixture_cmd(scenario)])
    assert result.exit_code == 0, result.stderr
    allowed = HANDSHAKE.union(*(LISTS[c] for c in declared)) if declared else HANDSHAKE
    sent = set(recorded(record))
    assert sent <= allowed
    for capability in declared:
        assert LISTS[capability] <= sent


@pytest.mark.parametrize("kind, capability", [
    ("tools", "tools"), ("resources", "resources"), ("templates", "resources"), ("prompts", "prompts")])
def test_list_of_undeclared_kind_is_refused_and_sends_nothing(tmp_path, kind, capability):
    record = tmp_path / "record.jsonl"
    result = run_cli(["list", kind, "--json", "--env", f"FIXTURE_RECORD={record}", "--", *fixture_cmd("none")])
    assert result.exit_code == 3
    assert set(recorded(record)) <= HANDSHAKE
    error = result.json["error"]
    assert error["code"] == "not-declared"
    assert f"'{capability}' capability" in error["message"]
    assert "declared: logging" in error["message"] or "declared: nothing" in error["message"]
    assert f"needs the '{capability}' capability" in result.stderr


def test_force_sends_it_and_says_so(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["list", "prompts", "--force", "--json", "--env", f"FIXTURE_RECORD={record}", "--",
                      *fixture_cmd("tools-only")])
    assert "prompts/list" in recorded(record)
    # -32601 for an undeclared capability is what the spec asks for: consistent, not an error.
    assert result.json["state"] == "not-declared"
    assert any(f["code"] == "forced" for f in result.json["findings"])
    assert any(f["code"] == "not-declared" and "consistent" in f["message"] for f in result.json["findings"])
    assert result.exit_code == 0


def test_roots_declared_only_with_root(tmp_path):
    record = tmp_path / "record.jsonl"
    plain = run_cli(["list", "tools", "--json", "--env", f"FIXTURE_RECORD={record}", "--", *fixture_cmd("roots")])
    assert plain.json["client"]["capabilities"] == {}
    assert [t["name"] for t in plain.json["items"]] == ["echo"]
    with_roots = run_cli(["list", "tools", "--json", "--root", str(tmp_path), "--", *fixture_cmd("roots")])
    assert with_roots.json["client"]["capabilities"] == {"roots": {}}
    roots = [t for t in with_roots.json["items"] if t["name"].startswith("root_")]
    assert [t["description"] for t in roots] == [tmp_path.resolve().as_uri()]
