"""Every rule of the tap is in docs/commands/tap.md's tables, on the right side, with its severity."""

from __future__ import annotations

import re

from mcpprobe.findings import CODES
from mcpprobe.tap.rules import RULES
from tests.conftest import ROOT

TAP_SIDE = {"tap-skipped", "tap-endpoint-bypassed"}  # what the tap says of itself: in the findings, not the tables

PAGE = (ROOT / "docs" / "commands" / "tap.md").read_text(encoding="utf-8")


def _table(heading: str) -> dict[str, str]:
    section = PAGE.split(heading, 1)[1].split("\n### ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z-]+)` \| ([a-z]+)", section, re.MULTILINE)}


def test_each_rule_is_documented_on_its_side_with_its_severity() -> None:
    client, server = _table("### Client rules"), _table("### Server rules")
    for code, rule in RULES.items():
        if code in TAP_SIDE:
            continue
        table = client if rule.side == "client" else server
        assert code in table, f"{code} is not in the {rule.side} table of docs/commands/tap.md"
        assert table[code] == CODES[code][0].value, code
    assert set(client) | set(server) == set(RULES) - TAP_SIDE


def test_what_the_tap_says_of_itself_is_explained() -> None:
    findings = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    for code in TAP_SIDE:
        assert code in RULES and RULES[code].side in ("tap", "server"), code
        assert f"`{code}`" in PAGE, f"{code} is not explained in docs/commands/tap.md"
        assert f"## `{code}`" in findings, f"{code} has no section in docs/findings.md"
