"""Nothing a server sends can act on the user's terminal: escapes, bidi overrides, hidden text
and rich markup from the server are shown, never interpreted, and flagged as suspicious."""

from __future__ import annotations

import json

from conftest import fixture_cmd, run_cli, run_subprocess

DANGEROUS = ["\x1b", "\x07", "\x9b", "\u202e"] + [chr(0xE0000 + c) for c in range(0x20, 0x7F)]


def test_human_output_carries_no_active_character():
    result = run_subprocess(["probe", "--", *fixture_cmd("hostile-text")])
    assert result.exit_code == 0
    for text in (result.stdout, result.stderr):
        for ch in DANGEROUS:
            assert ch not in text, repr(ch)
    assert r"Paints \x1b[31mred\x1b[0m" in result.stdout
    assert "clip<U+202E>board" in result.stdout
    assert "[bold red]not markup[/]" in result.stdout  # rich markup shown literally
    assert r"evil\x1b[2J\x1b[H" in result.stdout


def test_json_keeps_the_exact_strings_but_ascii_only():
    result = run_subprocess(["list", "tools", "--json", "--", *fixture_cmd("hostile-text")])
    assert result.stdout.isascii()
    doc = json.loads(result.stdout)
    names = [t["name"] for t in doc["items"]]
    assert "clip\u202eboard" in names
    assert doc["items"][0]["description"].startswith("Paints \x1b[31mred")


def test_suspicious_text_findings_name_where():
    result = run_cli(["probe", "--json", "--", *fixture_cmd("hostile-text")])
    messages = [f["message"] for f in result.json["findings"] if f["code"] == "suspicious-text"]
    assert any(m.startswith("tool paint: description contains escape sequence") for m in messages)
    assert any("OSC 52 clipboard write" in m for m in messages)
    assert any("bidirectional override U+202E" in m for m in messages)
    assert any("hidden text: 'ignore previous instructions'" in m for m in messages)
    assert any(m.startswith("serverInfo: name") for m in messages)
    assert any(m.startswith("server: instructions") and "OSC 8 hyperlink" in m for m in messages)
    assert all(f["severity"] == "warning" for f in result.json["findings"] if f["code"] == "suspicious-text")
    assert not any("markup" in m for m in messages)  # brackets are not suspicious, only shown literally
