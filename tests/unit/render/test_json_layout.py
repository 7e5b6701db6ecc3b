"""The --json document's layout: compact when stdout is a pipe or a file (what scripts read,
written by the json module's fast encoder), indented on a terminal (what a person reads). The
same document either way: ASCII only, strict JSON."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import PY, ROOT, fixture_cmd, run_subprocess

from tests.e2e.hostile.test_terminal_safety import run_in_pty

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
    for step in [*doc.get("negotiation", []), *expected.get("negotiation", [])]:
        step["ms"] = 0  # how long each negotiating request took: a timing too
    assert doc == expected


def test_results_have_short_reprs():
    """anyio formats the running task, and with it the operation's result, whenever a cancel
    scope is cancelled: a generated repr of a large listing would cost time linear in its items."""
    from mcpprobe.client.catalog import Listing, Page
    from mcpprobe.operations.outcome import Outcome

    listing = Listing("tools", True, state="complete", items=[{"name": f"t{i}"} for i in range(10_000)],
                      pages=[Page(n, 1.0, 100, None) for n in range(100)])
    outcome = Outcome("list", listings={"tools": listing}, kind="tools")
    assert repr(listing) == "<Listing tools complete: 10000 items, 100 pages>"
    assert repr(outcome) == "<Outcome list tools:10000>"


def test_a_document_written_in_pieces_is_the_same_text_and_masked_across_pieces():
    import io

    from mcpprobe.render import jsondoc
    from mcpprobe.safety.redact import Redactor

    secret = 'tok-1234567890"},{"name":"other'  # spans two items, so two batches and two writes
    items = [{"name": f"t{i}", "description": "x" * 300, "n": i, "f": 0.5, "u": "\u202e\ud800"}
             for i in range(3 * jsondoc.BATCH + 7)]
    items[jsondoc.BATCH - 1] = {"secret": "ends with tok-1234567890"}
    items[jsondoc.BATCH] = {"name": "other"}
    doc = {"formatVersion": 1, "kinds": {"tools": {"items": items, "empty": [], "nan": float("nan")}},
           "timings": [{"phase": "connect"}]}
    whole = jsondoc.dumps(doc, pretty=False)
    assert json.loads(whole)["kinds"]["tools"]["nan"] is None
    out = io.StringIO()
    jsondoc.write(out, doc, redactor=Redactor(()), pretty=False)
    assert out.getvalue() == whole + "\n"
    assert len(whole) > 2 * jsondoc.FLUSH_CHARS  # written in several pieces
    masked = io.StringIO()
    redactor = Redactor([secret])
    jsondoc.write(masked, doc, redactor=redactor, pretty=False)
    assert masked.getvalue() == redactor(whole) + "\n"
    assert "tok-1234567890" not in masked.getvalue()


@pytest.mark.parametrize("command", [["probe"], ["list", "tools"]])
def test_json_without_an_error_does_not_load_the_human_renderer(command):
    """--json with nothing to say on stderr writes the document without importing rich."""
    result = subprocess.run([PY, "-X", "importtime", "-m", "mcpprobe", *command, "--json", "--",
                             *fixture_cmd("full")], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if "import time:" in line]
    assert "mcpprobe.render.jsondoc" in imported
    assert not [name for name in imported if name.startswith("rich") or name == "mcpprobe.render.human"]
    assert json.loads(result.stdout)["ok"] is True
