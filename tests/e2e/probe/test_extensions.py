"""`probe` and `list tools` show the extensions a server declares (SEP-2133) with their settings,
the MCP Apps tools with their UI resource, and the skills (SEP-2640) with their digests, all made
inert: tests/fixtures/tasks_ext_server.py --extensions declares an extension whose name and
settings hold terminal escape sequences, and puts them in a UI resource URI and a skill too."""

from __future__ import annotations

import json
import sys

from conftest import ROOT, run_cli
from jsonschema import Draft202012Validator

PY = sys.executable
FIXTURE = ROOT / "tests" / "fixtures" / "tasks_ext_server.py"
MODERN = ["--protocol", "2026-07-28"]
RAW = ("\x1b", "\x07", "\x9b")  # what must never reach a terminal


def server(*options: str) -> list[str]:
    return ["--", PY, str(FIXTURE), "--extensions", *options]


def inert(text: str) -> None:
    assert not any(ch in text for ch in RAW), repr(text)


def valid(doc: dict) -> None:
    schema = json.loads((ROOT / "docs" / "output.schema.json").read_text())
    assert list(Draft202012Validator(schema).iter_errors(doc)) == []


def test_probe_shows_extensions_apps_and_skills_made_inert():
    result = run_cli(["probe", *MODERN, *server()])
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    inert(out)
    inert(result.stderr)
    assert "Extensions   io.modelcontextprotocol/tasks (no settings)" in out
    assert 'io.modelcontextprotocol/ui ({"mimeTypes": ["text/html;profile=mcp-app"]})' in out
    assert 'io.modelcontextprotocol/skills ({"directoryRead": false})' in out
    assert r"com.example/\x1b]0;pwned\x07\x1b[2J\u009b31mred" in out  # the hostile name, shown escaped
    assert "App tools    dashboard → ui://dash/" in out
    assert 'legacy_view → ui://dash/legacy.html (deprecated _meta["ui/resourceUri"])' in out
    assert "(visibility: model, app)" in out
    assert "Skills       git-workflow skill://git-workflow/SKILL.md: Follow the team's Git conventions" in out
    assert "sha256:" + "a1" * 32 + "  skill://git-workflow/SKILL.md" in out
    assert "live skill://live/SKILL.md: Generated." in out and "no digests" in out
    # The escapes are named, as for any listed item's text.
    assert out.count("suspicious-text") == 4


def test_probe_json_has_extensions_apps_and_skills():
    result = run_cli(["probe", "--json", *MODERN, *server()])
    assert result.exit_code == 0, result.stderr
    inert(result.stdout)  # JSON escapes them: \u001b
    doc = result.json
    valid(doc)
    names = [ext["name"] for ext in doc["extensions"]]
    assert names[:3] == ["io.modelcontextprotocol/tasks", "io.modelcontextprotocol/ui",
                         "io.modelcontextprotocol/skills"]
    assert doc["extensions"][3]["settings"] == {"note": "\x1b]0;pwned\x07\x1b[2J\x9b31mred", "level": 3}  # as sent
    assert doc["apps"] == [
        {"tool": "dashboard", "resourceUri": "ui://dash/\x1b]0;pwned\x07\x1b[2J\x9b31mred",
         "visibility": ["model", "app"], "key": "_meta.ui.resourceUri"},
        {"tool": "legacy_view", "resourceUri": "ui://dash/legacy.html", "visibility": None,
         "key": '_meta["ui/resourceUri"]'}]
    skills = doc["skills"]
    assert skills["state"] == "complete" and skills["count"] == 2 and skills["pages"] == 1
    assert skills["skills"][0]["resources"][0] == {"uri": "skill://git-workflow/SKILL.md",
                                                   "digest": "sha256:" + "a1" * 32}
    assert "resources" not in skills["skills"][1]


def test_list_tools_shows_extensions_and_apps_not_skills():
    result = run_cli(["list", "tools", *MODERN, *server()])
    assert result.exit_code == 0, result.stderr
    inert(result.stdout)
    assert "Extensions   io.modelcontextprotocol/tasks (no settings)" in result.stdout
    assert "App tools    dashboard → ui://dash/" in result.stdout
    assert "Skills" not in result.stdout  # skills/list is probe's
    doc = run_cli(["list", "tools", "--json", *MODERN, *server()]).json
    valid(doc)
    assert [a["tool"] for a in doc["apps"]] == ["dashboard", "legacy_view"]
    assert len(doc["extensions"]) == 4 and "skills" not in doc


def test_a_server_without_extensions_gets_no_new_keys():
    doc = run_cli(["probe", "--json", *MODERN, "--", PY, str(FIXTURE), "--no-tasks"]).json
    assert not {"extensions", "apps", "skills"} & set(doc)


def test_skills_list_missing_where_declared_is_a_protocol_violation():
    result = run_cli(["probe", "--json", *MODERN, *server("--skills-broken")])
    doc = result.json
    valid(doc)
    assert doc["skills"]["state"] == "failed" and "-32601" in doc["skills"]["error"]
    found = next(f for f in doc["findings"] if f["code"] == "protocol-violation")
    assert "MUST implement the `skills/list`" in found["message"]


def test_many_skills_are_read_to_the_end_and_shown_in_part():
    result = run_cli(["probe", *MODERN, *server("--many-skills")])
    assert result.exit_code == 0, result.stderr
    assert "…(+2 more files; --json shows all)" in result.stdout  # 12 files, 10 shown
    assert "…(+12 more skills; --json shows all)" in result.stdout  # 62 skills, 50 shown
    doc = run_cli(["probe", "--json", *MODERN, *server("--many-skills")]).json
    assert doc["skills"]["pages"] == 2 and doc["skills"]["count"] == 62
    assert len(doc["skills"]["skills"][-1]["resources"]) == 12
