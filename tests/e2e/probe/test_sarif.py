"""--format sarif and --report sarif=FILE on real fixture servers, validated against the SARIF 2.1.0 schema."""

from __future__ import annotations

import json
from pathlib import Path

from mcpprobe.fleet.config import entry_line
from tests.conftest import FIXTURE, PY, run_cli
from tests.e2e.fleet.test_fleet import _config
from tests.unit.render.test_golden import sarif_errors


def _results(text: str) -> list[dict[str, object]]:
    assert sarif_errors(text) == []
    doc = json.loads(text)
    assert doc["version"] == "2.1.0"
    return doc["runs"][0]["results"]


def test_probe_of_one_command_has_logical_locations() -> None:
    result = run_cli(["probe", "--lint", "--format", "sarif", "--protocol", "legacy", "--",
                      PY, str(FIXTURE), "poisoned"])
    assert result.exit_code == 0, result.stderr
    results = _results(result.stdout)
    shout = next(r for r in results if r["ruleId"] == "lint-shouting-markup")
    assert shout["level"] == "warning"
    (location,) = shout["locations"]
    assert "physicalLocation" not in location  # not from a config: no file to point at
    assert location["logicalLocations"][0]["name"] == "add"
    assert location["logicalLocations"][0]["fullyQualifiedName"].endswith("/tools/add")
    assert {r["level"] for r in results if r["ruleId"] == "not-declared"} == {"note"}


def test_a_fleet_points_at_each_servers_line_of_its_config(tmp_path: Path) -> None:
    config = _config(tmp_path, {"calc": "full", "evil": "poisoned"})
    text = json.dumps({"mcpServers": json.loads(config.read_text())["mcpServers"]}, indent=2)
    config.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    report = tmp_path / "probe.sarif"
    result = run_cli(["probe", "--all", "--lint", "--config", str(config), "--format", "sarif",
                      "--report", f"sarif={report}", "--protocol", "legacy"])
    assert result.exit_code == 0, result.stderr
    assert report.read_text(encoding="utf-8") == result.stdout
    shadow = [r for r in _results(result.stdout) if r["ruleId"] == "fleet-shadowed-tool"]
    where = {}
    for r in shadow:
        physical = r["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == config.as_uri()
        where[r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]] = physical["region"]["startLine"]
    assert set(where) == {"calc/tools/add", "evil/tools/add"}
    assert lines[where["calc/tools/add"] - 1].strip().startswith('"calc":')
    assert lines[where["evil/tools/add"] - 1].strip().startswith('"evil":')


def test_check_in_sarif() -> None:
    result = run_cli(["check", "--format", "sarif", "--protocol", "legacy", "--",
                      PY, str(FIXTURE), "method-not-found"])
    assert result.exit_code == 1, result.stderr
    results = _results(result.stdout)
    assert ("listing.complete", "error") in [(r["ruleId"], r["level"]) for r in results]
    rules = json.loads(result.stdout)["runs"][0]["tool"]["driver"]["rules"]
    listing = next(rule for rule in rules if rule["id"] == "listing.complete")
    # A true address: the specification's section the check holds the server to (the negotiated
    # revision's), and the help quotes its words, for code scanning, which shows the help, not the link.
    # (listing.complete lists every kind: pagination's page names the four list methods.)
    assert listing["helpUri"] == ("https://modelcontextprotocol.io/specification/2025-11-25/server/utilities/"
                                  "pagination#operations-supporting-pagination")
    assert "> Servers that support tools **MUST** declare the `tools` capability" in listing["help"]["markdown"]
    assert "mcpprobe docs checks/listing" in listing["help"]["text"]


def test_a_findings_rule_carries_its_help_and_no_placeholder_address() -> None:
    """mcpprobe's docs have no public address: a finding's rule has no helpUri, and its help says
    the meaning and where the whole section is (the page installed with mcpprobe)."""
    result = run_cli(["probe", "--lint", "--format", "sarif", "--protocol", "legacy", "--",
                      PY, str(FIXTURE), "poisoned"])
    assert result.exit_code == 0, result.stderr
    assert "OWNER" not in result.stdout
    driver = json.loads(result.stdout)["runs"][0]["tool"]["driver"]
    assert "informationUri" not in driver
    shout = next(rule for rule in driver["rules"] if rule["id"] == "lint-shouting-markup")
    assert "helpUri" not in shout
    assert shout["help"]["markdown"].startswith("**`lint-shouting-markup`** (warning): markup aimed at a model")
    assert "`mcpprobe docs findings`" in shout["help"]["markdown"]
    assert shout["help"]["text"] and "`" not in shout["help"]["text"]


def test_entry_line_in_json_and_yaml(tmp_path: Path) -> None:
    yaml = tmp_path / "servers.yaml"
    yaml.write_text("servers:\n  other:\n    command: x\n  files:\n    command: y\n", encoding="utf-8")
    assert entry_line(str(yaml), "files") == 4
    compact = tmp_path / "c.json"
    compact.write_text('{"mcpServers": {"a": {"command": "x"}, "files": {"command": "y"}}}', encoding="utf-8")
    assert entry_line(str(compact), "files") == 1
    assert entry_line(str(compact), "missing") is None
    assert entry_line(str(tmp_path / "gone.json"), "files") is None
