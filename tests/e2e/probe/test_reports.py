"""--format junit and openmetrics, parsed by real parsers; fleet and CI JSON against the schema."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from tests.conftest import FIXTURE, PY, fixture_cmd, run_cli

ROOT = Path(__file__).parents[3]


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    return Draft202012Validator(json.loads((ROOT / "docs" / "output.schema.json").read_text()))


def _fleet(tmp_path: Path) -> Path:
    servers = {"full": "full", "tools": "tools-only", "broken": "crash-on-start", 'odd "name"\\x': "empty"}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"mcpServers": {n: {"command": PY, "args": [str(FIXTURE), s]}
                                               for n, s in servers.items()}}))
    return path


def _expect(tmp_path: Path) -> str:
    path = tmp_path / "expect.yaml"
    path.write_text("tools: [echo, missing_tool]\ncapabilities: [tools]\n")
    return str(path)


def _cases(suite: ET.Element) -> dict[str, ET.Element]:
    return {case.get("name", ""): case for case in suite.iter("testcase")}


def test_junit_for_one_server(tmp_path: Path) -> None:
    result = run_cli(["probe", "--format", "junit", "--expect", _expect(tmp_path), "--protocol", "legacy", "--",
                      *fixture_cmd("tools-only")])
    assert result.exit_code == 1
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = _cases(suite)
    assert list(cases) == ["connection", "list tools", "list resources", "list templates", "list prompts",
                           "capabilities: tools", "tools: echo", "tools: missing_tool"]
    assert cases["connection"].find("failure") is None and cases["list tools"].find("failure") is None
    assert cases["list prompts"].find("skipped") is not None
    failure = cases["tools: missing_tool"].find("failure")
    assert failure is not None and "tool 'missing_tool' is missing" in (failure.text or "")
    assert suite.get("tests") == "8" and suite.get("failures") == "1" and suite.get("skipped") == "3"
    assert root.get("failures") == "1"


def test_junit_for_a_fleet_with_a_broken_server(tmp_path: Path) -> None:
    result = run_cli(["probe", "--all", "--config", str(_fleet(tmp_path)), "--format", "junit", "--protocol",
                      "legacy"])
    assert result.exit_code == 4
    suites = {s.get("name"): s for s in ET.fromstring(result.stdout).findall("testsuite")}
    assert set(suites) == {"full", "tools", "broken", 'odd "name"\\x'}
    error = _cases(suites["broken"])["connection"].find("error")
    assert error is not None and "the server process ended (exit status 1)" in error.get("message", "")
    assert "cannot open config" in (error.text or "")  # the server's last stderr lines
    assert all(c.find("skipped") is not None for n, c in _cases(suites["broken"]).items() if n != "connection")


def test_junit_class_names_have_no_dots_from_urls_or_names(tmp_path: Path) -> None:
    # CI viewers split class names on dots into packages: one server must stay one package.
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps({"mcpServers": {
        "api.example.com": {"command": PY, "args": [str(FIXTURE), "tools-only"]},
        "off": {"command": PY, "args": [str(FIXTURE), "crash-on-start"], "disabled": True}}}))
    result = run_cli(["probe", "--all", "--config", str(path), "--format", "junit", "--expect", _expect(tmp_path),
                      "--protocol", "legacy"])
    suites = {s.get("name"): s for s in ET.fromstring(result.stdout).findall("testsuite")}
    names = {case.get("classname") for case in suites["api.example.com"].iter("testcase")}
    assert names == {"mcpprobe.api_example_com", "mcpprobe.api_example_com.expectations"}
    single = run_cli(["probe", "--format", "junit", "--protocol", "legacy", "--", *fixture_cmd("tools-only")])
    (classname,) = {case.get("classname") for case in ET.fromstring(single.stdout).iter("testcase")}
    assert classname.count(".") == 1 and "fixture_server_py" in classname
    skipped = suites["off"]
    assert skipped.get("skipped") == "1" and skipped.get("tests") == "1"


def test_junit_failure_for_a_broken_kind() -> None:
    result = run_cli(["probe", "--format", "junit", "--protocol", "legacy", "--", *fixture_cmd("method-not-found")])
    cases = _cases(ET.fromstring(result.stdout).find("testsuite"))  # type: ignore[arg-type]
    failure = cases["list tools"].find("failure")
    assert failure is not None and "method-not-found" in (failure.text or "")


def _families(text: str) -> dict[str, Any]:
    return {family.name: family for family in text_string_to_metric_families(text)}


def test_openmetrics_for_a_fleet(tmp_path: Path) -> None:
    result = run_cli(["probe", "--all", "--config", str(_fleet(tmp_path)), "--format", "openmetrics",
                      "--expect", _expect(tmp_path), "--protocol", "legacy"])
    assert result.exit_code == 4
    assert result.stdout.rstrip().endswith("# EOF")
    families = _families(result.stdout)
    up = {s.labels["server"]: s.value for s in families["mcpprobe_up"].samples}
    assert up == {"full": 1, "tools": 1, "broken": 0, 'odd "name"\\x': 1}
    exits = {s.labels["server"]: s.value for s in families["mcpprobe_exit_code"].samples}
    assert exits["broken"] == 4 and exits["full"] == 1  # full misses 'missing_tool'
    items = {(s.labels["server"], s.labels["kind"]): s.value for s in families["mcpprobe_items"].samples}
    assert items[("full", "tools")] == 2 and items[("full", "prompts")] == 2 and ("tools", "prompts") not in items
    phases = {s.labels["phase"] for s in families["mcpprobe_phase_duration_seconds"].samples
              if s.labels["server"] == "full"}
    assert {"connect", "initialize", "list tools"} <= phases
    findings = {(s.labels["server"], s.labels["severity"]): s.value for s in families["mcpprobe_findings"].samples}
    assert findings[("broken", "error")] == 1 and findings[("tools", "info")] == 3
    assert {s.labels["server"]: s.value for s in families["mcpprobe_expectations_failed"].samples}["full"] == 1
    info = next(s for s in families["mcpprobe_server_info"].samples if s.labels["server"] == "full")
    assert info.labels["server_name"] == "fixture-full" and info.labels["protocol_version"] == "2025-11-25"
    assert all(s.value > 0 for s in families["mcpprobe_probe_duration_seconds"].samples)


def test_openmetrics_for_one_unnamed_server() -> None:
    result = run_cli(["probe", "--format", "openmetrics", "--protocol", "legacy", "--", *fixture_cmd("full")])
    assert result.exit_code == 0
    (sample,) = _families(result.stdout)["mcpprobe_up"].samples
    assert sample.value == 1 and sample.labels["server"].endswith("fixture_server.py full")


def test_templates_a_server_has_none_of_are_no_failing_list_in_metrics_or_junit() -> None:
    """-32601 for resources/templates/list, an optional part: the documented alert on a declared kind
    whose list is not complete must not fire, and the JUnit case is skipped, not failed."""
    metrics = run_cli(["probe", "--format", "openmetrics", "--protocol", "legacy", "--", *fixture_cmd("no-templates")])
    assert metrics.exit_code == 0
    complete = {s.labels["kind"]: s.value for s in _families(metrics.stdout)["mcpprobe_list_complete"].samples}
    assert complete == {"tools": 1, "resources": 1, "templates": 1}
    junit = run_cli(["probe", "--format", "junit", "--protocol", "legacy", "--", *fixture_cmd("no-templates")])
    assert junit.exit_code == 0
    case = next(c for c in ET.fromstring(junit.stdout).iter("testcase") if c.get("name") == "list templates")
    assert [child.tag for child in case] == ["skipped"] and "optional" in case[0].get("message")


def test_json_and_format_conflict() -> None:
    result = run_cli(["probe", "--json", "--format", "junit", "--", *fixture_cmd("full")])
    assert result.exit_code == 2 and "--json" in result.stderr


def test_fleet_and_ci_json_match_the_schema(tmp_path: Path, validator: Draft202012Validator) -> None:
    config = _fleet(tmp_path)
    snapshot = tmp_path / "{server}.json"
    saved = run_cli(["probe", "--all", "--config", str(config), "--save-snapshot", str(snapshot), "--json",
                     "--expect", _expect(tmp_path), "--protocol", "legacy"])
    errors = [e.message for e in validator.iter_errors(saved.json)]
    assert errors == []
    assert [d["exitCode"] for d in saved.json] == [1, 1, 4, 1]
    compared = run_cli(["probe", "-s", "full", "--config", str(config), "--baseline", str(tmp_path / "full.json"),
                        "--json", "--protocol", "legacy"])
    assert [e.message for e in validator.iter_errors(compared.json)] == [] and "drift" in compared.json
    servers = run_cli(["servers", "--config", str(config), "--json"])
    assert [e.message for e in validator.iter_errors(servers.json)] == []
    assert validator.iter_errors([{"not": "a probe"}])
