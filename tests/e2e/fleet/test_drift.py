"""Snapshots and drift: a real probe saved, then compared with baselines that differ from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcpprobe.fleet.drift import compare
from tests.conftest import fixture_cmd, run_cli

FULL = fixture_cmd("full")


def _save(tmp_path: Path, scenario: str = "full") -> tuple[Path, dict[str, Any]]:
    path = tmp_path / "snapshots" / f"{scenario}.json"
    result = run_cli(["probe", "--save-snapshot", str(path), "--protocol", "legacy", "--json", "--",
                      *fixture_cmd(scenario)])
    assert result.json["snapshotSaved"] == str(path)
    return path, json.loads(path.read_text())


def _baseline(tmp_path: Path, data: dict[str, Any]) -> str:
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def _probe(baseline: str, scenario: str = "full", *extra: str) -> Any:
    return run_cli(["probe", "--baseline", baseline, "--protocol", "legacy", *extra, "--", *fixture_cmd(scenario)])


def test_no_drift_against_itself(tmp_path: Path) -> None:
    path, snapshot = _save(tmp_path)
    assert snapshot["mcpprobeSnapshot"] == 1 and "savedAt" not in snapshot
    assert [t["name"] for t in snapshot["kinds"]["tools"]["items"]] == ["echo", "add"]
    result = _probe(str(path), "full", "--json")
    assert result.exit_code == 0
    assert result.json["drift"] == {"baseline": str(path), "breaking": False, "added": [], "removed": [],
                                    "changed": [], "notCompared": []}
    human = _probe(str(path))
    assert "Drift        no change since" in human.stdout


def test_templates_a_server_has_none_of_are_compared_as_an_empty_list(tmp_path: Path) -> None:
    """-32601 for resources/templates/list (an optional part): the snapshot knows the templates in
    full (none), so a template added later is drift, not "not compared"."""
    path, snapshot = _save(tmp_path, "no-templates")
    assert snapshot["kinds"]["templates"] == {"declared": True, "complete": True, "items": []}
    result = _probe(str(path), "no-templates", "--json")
    assert result.exit_code == 0 and result.json["drift"]["notCompared"] == []
    snapshot["kinds"]["templates"]["items"] = [{"uriTemplate": "fixture://old/{id}", "name": "old"}]
    result = _probe(_baseline(tmp_path, snapshot), "no-templates", "--json")
    assert result.exit_code == 1
    assert [f["message"] for f in result.json["findings"] if f["code"] == "breaking-change"] == [
        "template 'fixture://old/{id}' removed"]


def test_breaking_changes(tmp_path: Path) -> None:
    _, snapshot = _save(tmp_path)
    tools = snapshot["kinds"]["tools"]["items"]
    tools.append({"name": "gone", "inputSchema": {"type": "object"}})  # removed since
    tools[0]["inputSchema"]["required"] = []  # 'message' is newly required
    tools[1]["inputSchema"]["properties"]["a"]["type"] = "string"  # 'a' changed type
    snapshot["capabilities"]["completions"] = {}  # capability removed
    result = _probe(_baseline(tmp_path, snapshot), "full", "--json")
    assert result.exit_code == 1
    breaking = sorted(f["message"] for f in result.json["findings"] if f["code"] == "breaking-change")
    assert breaking == ["capability 'completions' removed",
                        "tool 'add' changed: argument 'a' changed type from string to integer",
                        "tool 'echo' changed: argument 'message' is now required",
                        "tool 'gone' removed"]
    drift = result.json["drift"]
    assert drift["breaking"] and [c["id"] for c in drift["removed"]] == ["completions", "gone"]


def test_additions_are_info(tmp_path: Path) -> None:
    _, snapshot = _save(tmp_path)
    snapshot["kinds"]["prompts"]["items"].pop()  # 'summary' is new now
    snapshot["kinds"]["tools"]["items"][0]["description"] = "old text"
    del snapshot["capabilities"]["logging"]
    result = _probe(_baseline(tmp_path, snapshot), "full", "--json")
    assert result.exit_code == 0
    drift = {f["message"] for f in result.json["findings"] if f["code"] == "drift"}
    assert drift == {"prompt 'summary' added", "tool 'echo' changed: description changed",
                     "capability 'logging' added"}
    assert all(f["severity"] == "info" for f in result.json["findings"] if f["code"] == "drift")


def test_incomplete_lists_are_not_compared(tmp_path: Path) -> None:
    _, snapshot = _save(tmp_path, "error-page2")
    assert snapshot["kinds"]["tools"]["complete"] is False
    result = _probe(_baseline(tmp_path, snapshot), "error-page2", "--json")
    assert result.json["drift"]["notCompared"] == ["tools"]
    assert "breaking-change" not in result.codes()


def test_fleet_snapshots_per_server(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"servers": {n: {"command": FULL[0], "args": FULL[1:]} for n in ("a", "b")}}))
    template = str(tmp_path / "snaps" / "{server}.json")
    saved = run_cli(["probe", "--all", "--config", str(config), "--save-snapshot", template, "--protocol", "legacy"])
    assert saved.exit_code == 0 and sorted(p.name for p in (tmp_path / "snaps").iterdir()) == ["a.json", "b.json"]
    again = run_cli(["probe", "--all", "--config", str(config), "--baseline", template, "--json", "--protocol",
                     "legacy"])
    assert again.exit_code == 0 and all(not d["drift"]["breaking"] for d in again.json)


@pytest.mark.parametrize("content", ["not json", '{"kinds": {}}', "[]"])
def test_bad_baselines_are_usage_errors(tmp_path: Path, content: str) -> None:
    path = tmp_path / "b.json"
    path.write_text(content)
    result = _probe(str(path))
    assert result.exit_code == 2 and str(path) in result.stderr
    missing = _probe(str(tmp_path / "missing.json"))
    assert missing.exit_code == 2 and "cannot read" in missing.stderr


def _snap(tools: list[dict[str, Any]], prompts: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    kinds = {"tools": {"declared": True, "complete": True, "items": tools},
             "prompts": {"declared": True, "complete": True, "items": prompts or []}}
    return {"capabilities": {"tools": {}, "prompts": {}}, "kinds": kinds}


def test_schema_and_prompt_rules() -> None:
    old = _snap([{"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"},
                                                                              "y": {"type": "integer"}},
                                              "required": ["x"], "additionalProperties": False}}],
                [{"name": "p", "arguments": [{"name": "a"}, {"name": "b", "required": True}]}])
    new = _snap([{"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"},
                                                                              "z": {"type": "boolean"}},
                                              "additionalProperties": False}}],
                [{"name": "p", "arguments": [{"name": "a", "required": True}, {"name": "c"}]}])
    drift = compare(old, new, "base.json")
    tool, prompt = drift.changes
    assert tool.breaking and tool.details == ["argument 'y' removed", "optional argument 'z' added",
                                              "argument 'x' is no longer required"]
    assert prompt.breaking and prompt.details == ["argument 'a' is now required", "argument 'b' removed",
                                                  "optional argument 'c' added"]


def test_a_change_the_argument_rules_do_not_name_is_still_a_change() -> None:
    """watch reports any difference in an item; drift used to drop one inside inputSchema or a
    prompt's arguments that no argument rule names. Now both name the field."""
    old = _snap([{"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}}],
                [{"name": "p", "arguments": [{"name": "a", "description": "old"}]}])
    new = _snap([{"name": "t", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}},
                                               "additionalProperties": False}}],
                [{"name": "p", "arguments": [{"name": "a", "description": "new"}]}])
    drift = compare(old, new, "base.json")
    assert [(c.kind, c.ident, c.breaking, c.details) for c in drift.changes] == [
        ("tools", "t", False, ["inputSchema changed"]), ("prompts", "p", False, ["arguments changed"])]


def test_duplicate_identities_keep_the_first_item() -> None:
    old = _snap([{"name": "t", "description": "first"}, {"name": "t", "description": "second"}])
    new = _snap([{"name": "t", "description": "first"}])
    assert compare(old, new, "base.json").changes == []


def test_a_renamed_tool_is_one_change_not_a_removal_and_an_addition(tmp_path: Path) -> None:
    _, snapshot = _save(tmp_path)
    echo = snapshot["kinds"]["tools"]["items"][0]
    assert echo["name"] == "echo"
    # In the baseline the tool was called `repeat` and said something else: the server renamed it
    # and changed its description, and its schema and annotations are what identify it.
    echo["name"], echo["description"] = "repeat", "Repeat the message."
    result = _probe(_baseline(tmp_path, snapshot), "full", "--json")
    assert result.exit_code == 1
    changes = result.json["drift"]
    assert changes["removed"] == [] and changes["added"] == []
    assert changes["changed"] == [{"kind": "tools", "id": "echo", "change": "changed", "breaking": True,
                                   "details": ["renamed from 'repeat'", "description changed"],
                                   "previousId": "repeat"}]
    assert [f["message"] for f in result.json["findings"] if f["code"] == "breaking-change"] == [
        "tool 'echo' changed: renamed from 'repeat'; description changed"]


def test_a_description_change_alone_is_reported(tmp_path: Path) -> None:
    _, snapshot = _save(tmp_path)
    snapshot["kinds"]["tools"]["items"][1]["description"] = "Add two integers, approved version."
    result = _probe(_baseline(tmp_path, snapshot), "full", "--json")
    assert result.exit_code == 0
    assert [(f["code"], f["message"]) for f in result.json["findings"] if f["code"] == "drift"] == [
        ("drift", "tool 'add' changed: description changed")]


def test_renames_need_an_unambiguous_match() -> None:
    from mcpprobe.fleet.drift import same_tool

    schema = {"type": "object", "properties": {"x": {"type": "integer", "description": "X."}}}
    prose = {"type": "object", "properties": {"x": {"type": "integer", "description": "Another X."}}}
    assert same_tool({"name": "a", "inputSchema": schema}, {"name": "b", "inputSchema": prose})
    # Without arguments the shape tells nothing: only an equal description makes two tools one.
    empty = {"type": "object"}
    assert not same_tool({"name": "a", "inputSchema": empty, "description": "One."},
                         {"name": "b", "inputSchema": empty, "description": "Two."})
    assert same_tool({"name": "a", "inputSchema": empty, "description": "One."},
                     {"name": "b", "inputSchema": {"type": "object", "properties": {"y": {}}}, "description": "One."})
    assert not same_tool({"name": "a", "inputSchema": schema, "annotations": {"readOnlyHint": True}},
                         {"name": "b", "inputSchema": schema})
    # Two added tools that both match one removed tool: no rename, a removal and two additions.
    def snap(*tools: dict[str, Any]) -> dict[str, Any]:
        return {"capabilities": {"tools": {}}, "kinds": {"tools": {"declared": True, "complete": True,
                                                                   "items": list(tools)}}}
    drift = compare(snap({"name": "a", "inputSchema": schema}),
                    snap({"name": "b", "inputSchema": schema}, {"name": "c", "inputSchema": schema}), "x")
    assert sorted((c.change, c.ident) for c in drift.changes) == [("added", "b"), ("added", "c"), ("removed", "a")]
