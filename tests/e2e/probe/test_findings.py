"""Each finding code, produced by a server that really has the problem, and nothing else.

The distinctions that matter most: not declared, Method not found, failed, incomplete, and a
declared, complete, empty list (healthy) must never be confused with each other.
"""

from __future__ import annotations

import pytest
from conftest import fixture_cmd, fixture_http, recorded, run_cli


def probe_json(scenario: str, *extra: str, env_http: bool = False):
    result = run_cli(["probe", "--json", *extra, "--", *fixture_cmd(scenario)])
    return result, result.json


def finding(doc, code, kind=None):
    found = [f for f in doc["findings"] if f["code"] == code and (kind is None or f["kind"] == kind)]
    assert found, f"no {code} finding in {doc['findings']}"
    return found[0]


def test_declared_complete_and_empty_is_healthy():
    result, doc = probe_json("empty")
    assert result.exit_code == 0
    for kind in ("tools", "resources", "templates", "prompts"):
        assert doc["kinds"][kind] == {**doc["kinds"][kind], "declared": True, "listCompleted": True,
                                      "state": "complete", "count": 0, "items": [], "pages": 1}
    assert [f for f in doc["findings"] if f["severity"] != "info"] == []


def test_not_declared_is_info_and_nothing_sent():
    result, doc = probe_json("none")
    assert result.exit_code == 0
    for kind in ("tools", "resources", "templates", "prompts"):
        assert doc["kinds"][kind]["state"] == "not-declared"
        assert doc["kinds"][kind]["declared"] is False
        assert doc["kinds"][kind]["pages"] == 0
        f = finding(doc, "not-declared", kind)
        assert f["severity"] == "info"


def test_method_not_found_is_not_an_empty_list():
    result, doc = probe_json("method-not-found")
    assert result.exit_code == 1
    tools = doc["kinds"]["tools"]
    assert tools["declared"] is True
    assert tools["state"] == "method-not-found"
    assert tools["listCompleted"] is False
    f = finding(doc, "method-not-found", "tools")
    assert f["severity"] == "error"
    assert "-32601" in f["message"]
    assert not any(f["code"] == "list-incomplete" for f in doc["findings"])


@pytest.mark.parametrize("scenario, era", [("no-templates", "legacy"), ("modern-no-templates", "modern")])
def test_templates_answered_with_method_not_found_are_an_optional_part_not_an_error(scenario, era):
    """No revision obliges a server that declares `resources` to list templates (docs/findings.md,
    "Which methods a capability obliges"): -32601 there means "none", exit 0, and the message says so."""
    result, doc = probe_json(scenario)
    assert result.exit_code == 0, doc["findings"]
    assert doc["era"] == era
    templates = doc["kinds"]["templates"]
    assert templates == {**templates, "declared": True, "listCompleted": False, "state": "not-implemented",
                         "count": 0, "pages": 1}
    f = finding(doc, "not-implemented", "templates")
    assert f["severity"] == "info"
    assert "-32601" in f["message"] and "optional" in f["message"] and "exit code" in f["message"]
    assert [f for f in doc["findings"] if f["severity"] != "info"] == []
    assert {k: doc["kinds"][k]["state"] for k in ("tools", "resources")} == dict.fromkeys(("tools", "resources"),
                                                                                        "complete")


def test_listing_templates_alone_that_are_not_implemented_exits_0():
    result = run_cli(["list", "templates", "--json", "--", *fixture_cmd("no-templates")])
    assert result.exit_code == 0, result.stdout
    assert result.json["state"] == "not-implemented"
    assert [f["code"] for f in result.json["findings"]] == ["not-implemented"]
    human = run_cli(["list", "templates", "--", *fixture_cmd("no-templates")])
    assert human.exit_code == 0
    assert "Resource templates  not implemented" in human.stdout and "optional" in human.stdout


def test_the_obligatory_lists_answered_with_method_not_found_stay_errors():
    """tools/list, resources/list and prompts/list are what their capability is for: -32601 there
    contradicts the declaration. Only the templates of the same server are an optional part."""
    result, doc = probe_json("method-not-found")
    assert result.exit_code == 1
    assert {k: v["state"] for k, v in doc["kinds"].items()} == {
        "tools": "method-not-found", "resources": "method-not-found", "templates": "not-implemented",
        "prompts": "method-not-found"}
    assert sorted(f["kind"] for f in doc["findings"] if f["code"] == "method-not-found") == [
        "prompts", "resources", "tools"]


def test_repeated_cursor_is_incomplete_and_keeps_items():
    result, doc = probe_json("repeated-cursor")
    tools = doc["kinds"]["tools"]
    assert tools["state"] == "incomplete"
    assert tools["listCompleted"] is False
    assert tools["count"] >= 2
    f = finding(doc, "list-incomplete", "tools")
    assert f["detail"]["cause"] == "repeated-cursor"
    assert not any(f["code"] == "method-not-found" for f in doc["findings"])


def test_error_on_page_two_keeps_page_one():
    result, doc = probe_json("error-page2")
    tools = doc["kinds"]["tools"]
    assert tools["state"] == "incomplete"
    assert tools["count"] == 3
    f = finding(doc, "list-incomplete", "tools")
    assert f["detail"] == {**f["detail"], "page": 2, "cause": "error", "itemsKept": 3}
    assert "database unavailable" in f["message"]


def test_server_exiting_mid_list_keeps_page_one():
    result, doc = probe_json("exit-mid-list")
    assert result.exit_code == 4
    f = finding(doc, "list-incomplete", "tools")
    assert f["detail"]["cause"] == "connection-lost"
    assert doc["kinds"]["tools"]["count"] == 3
    assert any("crashing mid-list" in line for line in doc["serverStderr"])


def test_page_cap():
    result = run_cli(["probe", "--json", "--max-pages", "2", "--env", "FIXTURE_TOOLS=50",
                      "--env", "FIXTURE_PAGE_SIZE=10", "--", *fixture_cmd("paginated")])
    doc = result.json
    assert doc["kinds"]["tools"]["state"] == "incomplete"
    assert doc["kinds"]["tools"]["count"] == 20
    assert finding(doc, "list-incomplete", "tools")["detail"]["cause"] == "page-cap"


def test_pagination_to_the_end():
    result = run_cli(["list", "tools", "--json", "--env", "FIXTURE_TOOLS=250", "--env", "FIXTURE_PAGE_SIZE=100",
                      "--", *fixture_cmd("paginated")])
    doc = result.json
    assert result.exit_code == 0
    assert doc["state"] == "complete" and doc["pages"] == 3 and doc["count"] == 250
    assert doc["items"][-1]["name"] == "tool_00250"


def test_first_page_timeout_is_list_failed():
    result = run_cli(["probe", "--json", "--timeout", "1", "--env", "FIXTURE_DELAY=5", "--", *fixture_cmd("slow")])
    doc = result.json
    assert doc["kinds"]["tools"]["state"] == "failed"
    f = finding(doc, "list-failed", "tools")
    assert f["detail"]["cause"] == "timeout"


def test_invalid_items_are_reported_and_the_rest_listed():
    result, doc = probe_json("malformed-item")
    assert result.exit_code == 1
    tools = doc["kinds"]["tools"]
    assert [t["name"] for t in tools["items"]] == ["good_one", "good_two"]
    assert [bad["index"] for bad in tools["invalidItems"]] == [1, 2]
    invalid = [f for f in doc["findings"] if f["code"] == "invalid-item"]
    assert len(invalid) == 2
    assert "item 1" in invalid[0]["message"] and "name" in invalid[0]["message"]
    assert "inputSchema" in invalid[1]["message"]


def test_unsupported_version_sends_nothing_more(tmp_path):
    record = tmp_path / "rec.jsonl"
    result = run_cli(["probe", "--json", "--env", f"FIXTURE_RECORD={record}", "--",
                      *fixture_cmd("unsupported-version")])
    assert result.exit_code == 5
    assert result.json["error"]["code"] == "unsupported-version"
    assert "1999-01-01" in result.json["error"]["message"]
    methods = recorded(record)
    assert methods[-1] == "initialize"
    assert "notifications/initialized" not in methods


def test_non_protocol_output_is_a_finding_not_a_crash():
    result, doc = probe_json("non-json-stdout")
    assert result.exit_code == 0
    (stray,) = [f for f in doc["findings"] if f["code"] == "non-protocol-output"]  # one, with a count
    samples = stray["detail"]["samples"]
    assert "Starting fixture server v1.0..." in samples
    assert "oops not json" in samples
    assert doc["kinds"]["tools"]["state"] == "complete"


def test_era_fallback_after_silence():
    result, doc = probe_json("legacy-silent-discover", "--discover-timeout", "0.5")
    assert result.exit_code == 0
    assert doc["era"] == "legacy"
    assert "no answer to server/discover" in doc["eraReason"]
    assert finding(doc, "era-fallback")["severity"] == "info"


def test_modern_server_is_detected_by_discover():
    result, doc = probe_json("modern")
    assert doc["era"] == "modern"
    assert doc["protocolVersion"] == "2026-07-28"
    assert doc["serverInfo"]["name"] == "fixture-modern"
    assert "server/discover answered" in doc["eraReason"]
    assert doc["kinds"]["tools"]["count"] == 2


def test_modern_retry_after_unsupported_version():
    result, doc = probe_json("modern-retry")
    assert result.exit_code == 0
    assert doc["era"] == "modern"
    discovers = [t for t in doc["timings"] if t["phase"] == "discover"]
    assert len(discovers) == 2


def test_legacy_version_is_sent_as_asked(tmp_path):
    result, doc = probe_json("full", "--protocol", "2025-03-26")
    assert doc["protocolVersion"] == "2025-03-26"
    assert doc["era"] == "legacy"
    assert not any(t["phase"] == "discover" for t in doc["timings"])


def test_forced_request_is_labelled():
    result, doc = probe_json("tools-only", "--force")
    assert doc["kinds"]["prompts"]["state"] == "not-declared"
    assert result.exit_code == 0
    assert finding(doc, "forced", "prompts")["severity"] == "warning"


def test_http_findings_match_stdio():
    with fixture_http("error-page2") as url:
        result = run_cli(["probe", "--json", url])
    f = finding(result.json, "list-incomplete", "tools")
    assert f["detail"]["page"] == 2


@pytest.mark.parametrize("scenario", ["full", "modern"])
def test_snapshot_shows_what_mcpprobe_sent(scenario):
    result, doc = probe_json(scenario)
    client = doc["client"]
    assert client["clientInfo"]["name"] == "mcpprobe"
    assert "mcp SDK" in client["clientInfo"]["description"]
    assert client["capabilities"] == {}


def test_malformed_answer_during_a_list_is_exit_5_not_a_crash(tmp_path):
    """A list answered with neither result nor error: the list fails, probe says why, exit 5."""
    import base64
    import json as _json

    from conftest import PY, ROOT
    init = (b'{"jsonrpc":"2.0","id":{ID},"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},'
            b'"serverInfo":{"name":"x","version":"1"}}}\n')
    plan = tmp_path / "plan.json"
    plan.write_text(_json.dumps({"frames": [base64.b64encode(init).decode()], "then": "answer-empty"}))
    result = run_cli(["probe", "--json", "--protocol", "legacy", "--", PY,
                      str(ROOT / "tests" / "fixtures" / "garbage_server.py"), str(plan)])
    assert result.exit_code == 5
    assert result.json["kinds"]["tools"]["state"] == "failed"
    assert finding(result.json, "list-failed", "tools")["detail"]["cause"] == "malformed-answer"


def test_refused_list_still_reports_what_was_declared():
    result = run_cli(["list", "prompts", "--json", "--", *fixture_cmd("tools-only")])
    assert result.exit_code == 3
    assert result.json["declared"] is False and result.json["state"] == "not-declared"
    assert result.json["capabilities"] == {"tools": {}}


def test_unsupported_version_leaves_capabilities_unknown():
    result = run_cli(["probe", "--json", "--", *fixture_cmd("unsupported-version")])
    assert result.json["capabilities"] is None and result.json["kinds"] is None


def test_duplicate_names_are_a_warning_and_both_are_kept():
    result, doc = probe_json("duplicate-item")
    assert result.exit_code == 0
    assert [t["name"] for t in doc["kinds"]["tools"]["items"]] == ["echo", "add", "echo"]
    f = finding(doc, "duplicate-item", "tools")
    assert f["severity"] == "warning"
    assert f["detail"] == {"index": 2, "first": 0, "id": "echo"}
