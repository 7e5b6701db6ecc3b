"""The --json document's layout: compact when stdout is a pipe or a file (what scripts read,
written by the json module's fast encoder), indented on a terminal (what a person reads). The
same document either way: ASCII only, strict JSON."""

from __future__ import annotations

import json

from conftest import fixture_cmd, run_subprocess
from test_terminal_safety import run_in_pty

PAGED = ["-e", "FIXTURE_TOOLS=250", "-e", "FIXTURE_PAGE_SIZE=100"]


def test_piped_json_is_one_compact_line():
    result = run_subprocess(["list", "tools", "--json", *PAGED, "--", *fixture_cmd("paginated")])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith("}\n") and result.stdout.count("\n") == 1, result.stdout[:200]
    assert result.stdout.startswith('{"formatVersion":1,"command":"list",')
    assert result.stdout.isascii()
    doc = json.loads(result.stdout)
    assert doc["count"] == 250 and doc["pages"] == 3
    assert [item["name"] for item in doc["items"]][:2] == ["tool_00001", "tool_00002"]


def test_json_on_a_terminal_is_indented_and_the_same_document():
    args = ["list", "tools", "--json", *PAGED, "--", *fixture_cmd("paginated")]
    piped = run_subprocess(args)
    code, shown = run_in_pty(args)
    assert code == 0, shown
    assert shown.startswith('{\n  "formatVersion": 1,\n  "command": "list",'), shown[:200]
    doc = json.loads(shown)
    expected = json.loads(piped.stdout)
    for volatile in ("timings",):
        doc.pop(volatile)
        expected.pop(volatile)
    doc["ms"] = expected["ms"] = 0
    assert doc == expected


def test_results_have_short_reprs():
    """anyio formats the running task, and with it the operation's result, whenever a cancel
    scope is cancelled: a generated repr of a large listing would cost time linear in its items."""
    from mcpprobe.catalog import Listing, Page
    from mcpprobe.operations import Outcome

    listing = Listing("tools", True, state="complete", items=[{"name": f"t{i}"} for i in range(10_000)],
                      pages=[Page(n, 1.0, 100, None) for n in range(100)])
    outcome = Outcome("list", listings={"tools": listing}, kind="tools")
    assert repr(listing) == "<Listing tools complete: 10000 items, 100 pages>"
    assert repr(outcome) == "<Outcome list tools:10000>"
