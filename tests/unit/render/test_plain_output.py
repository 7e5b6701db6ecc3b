"""`list` in a pipe with no width is written without rich (mcpprobe.render.plain) when rich would
add nothing: the text must be exactly what rich writes, and everything else must go to rich.

Each case renders one outcome both ways, the plain writer and rich's renderer given a console of
no width and no colours, and compares them character for character.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from typing import Any

import pytest
from conftest import PY, fixture_cmd, run_subprocess

from mcpprobe.client.catalog import Listing, Page
from mcpprobe.client.session import Snapshot, Timing
from mcpprobe.findings import Finding
from mcpprobe.operations.outcome import Outcome
from mcpprobe.render import human, styled
from mcpprobe.render.cells import Safe
from mcpprobe.render.formats import Pieces, renderer
from mcpprobe.render.interface import Format, Listed, Rendered, View
from mcpprobe.render.plain import plain_list
from mcpprobe.render.width import UNBOUNDED
from mcpprobe.safety.redact import Redactor

NO_SECRETS = Safe(Redactor(()))


def _tools(count: int, **extra: Any) -> list[dict[str, Any]]:
    return [{"name": f"tool_{n:05d}", "description": f"Tool number {n} does one thing.",
             "inputSchema": {"type": "object", "required": ["q"] if n % 2 else []}, **extra} for n in range(count)]


def _outcome(items: list[dict[str, Any]], **snapshot: Any) -> Outcome:
    base: dict[str, Any] = {
        "transport": "stdio", "target": "python server.py --flag",
        "client_info": {"name": "mcpprobe", "version": "0.1.0"},
        "client_capabilities": {}, "era": "legacy", "era_reason": "server/discover was answered with -32601",
        "protocol_version": "2025-11-25", "server_info": {"name": "srv", "version": "1.2", "title": "A server"},
        "instructions": "Use the tools.", "capabilities": {"tools": {"listChanged": True}, "logging": {}},
        "negotiated": True}
    base.update(snapshot)
    listing = Listing("tools", declared=True, state="complete", items=items,
                      pages=[Page(n, 5.0, 100, None) for n in range(1, max(len(items) // 100, 1) + 1)])
    outcome = Outcome("list", snapshot=Snapshot(**base), listings={"tools": listing}, kind="tools")
    outcome.timings = [Timing("connect", 3.0), Timing("initialize", 1.0), Timing("list tools", 40.0, {"pages": 3})]
    return outcome


def _rich(outcome: Outcome) -> str:
    """What rich's renderer writes for `outcome` with no width and no colours."""
    from mcpprobe.render.console import buffered_console, console_into

    view = View(width=UNBOUNDED)
    pieces = Pieces()
    err, err_text = buffered_console(view, messages=True)
    human.render_outcome(console_into(pieces, view), err, outcome, NO_SECRETS)
    assert err_text.getvalue() == ""
    return "".join(pieces)


CASES = {
    "plain": _outcome(_tools(250)),
    "many pages, some titles": _outcome(_tools(1000, title="Titled")),
    "no items": _outcome([]),
    "multi-line instructions": _outcome(_tools(201), instructions="\n".join(f"line {n}\tend " for n in range(12))),
    "no version, no title": _outcome(_tools(300), server_info={"name": "bare"}),
    "no serverInfo": _outcome(_tools(300), server_info=None),
    "nothing declared": _outcome(_tools(300), capabilities={}),
    "a malformed capability": _outcome(_tools(300), capabilities={"tools": True, "prompts": {"listChanged": True}}),
    "modern era": _outcome(_tools(300), era="modern", protocol_version="2026-07-28", era_reason="discover answered"),
    "no era": _outcome(_tools(300), era="", protocol_version=""),
    "wide and hidden server text": _outcome(_tools(300), server_info={
        "name": "検索サーバー\u202e", "version": "1\x1b[31m", "title": 'say "hi"  '}),
    "no instructions": _outcome(_tools(300), instructions=None),
    "annotations and required": _outcome(_tools(300, annotations={"readOnlyHint": True, "openWorldHint": True})),
}


@pytest.mark.parametrize("case", CASES)
def test_the_plain_writer_writes_what_rich_writes(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(styled, "sdk_version", lambda: "2.3.0")
    outcome = CASES[case]
    written = plain_list(outcome, False, UNBOUNDED, NO_SECRETS)
    assert written is not None, "this outcome is simple enough to be written without rich"
    rendered = renderer(Format.HUMAN)(Listed(outcome), View(width=UNBOUNDED))
    assert isinstance(rendered, Rendered) and rendered.stderr == ""
    assert rendered.text() == _rich(outcome)


@pytest.mark.parametrize("case", ["colours", "a width", "a finding", "an error", "stderr", "a small table",
                                  "a cell beyond ASCII", "a line rich would wrap", "a wide line rich would wrap"])
def test_what_needs_rich_goes_to_rich(case: str) -> None:
    from mcpprobe.errors import ConnectionFailed

    outcome, color, width = _outcome(_tools(300)), False, UNBOUNDED
    match case:
        case "colours":
            color = True
        case "a width":
            width = 160
        case "a finding":
            outcome.findings.append(Finding("duplicate-item", "twice", kind="tools"))
        case "an error":
            outcome.error = ConnectionFailed("gone")
        case "stderr":
            outcome.stderr_tail = ["a line"]
        case "a small table":
            outcome = _outcome(_tools(200))
        case "a cell beyond ASCII":
            outcome = _outcome([*_tools(299), {"name": "検索", "inputSchema": {"type": "object"}}])
        case "a line rich would wrap":
            outcome = _outcome(_tools(300), era_reason="x" * UNBOUNDED)
        case "a wide line rich would wrap":  # 5,000 characters, 10,000 terminal cells
            outcome = _outcome(_tools(300), server_info={"name": "検" * (UNBOUNDED // 2)})
    assert plain_list(outcome, color, width, NO_SECRETS) is None


def test_a_long_list_in_a_pipe_loads_no_rich_and_reads_as_before() -> None:
    """Over a real server, in a pipe with no width: the same text as rich's, and rich not loaded
    (python -X importtime lists every module); with COLUMNS set (a width to fit), rich writes it."""
    args = ["list", "tools", "-e", "FIXTURE_TOOLS=300", "-e", "FIXTURE_PAGE_SIZE=100", "--", *fixture_cmd("paginated")]
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    runs = {}
    for columns in (None, "2000"):
        proc = subprocess.run([PY, "-X", "importtime", "-m", "mcpprobe", *args], capture_output=True, text=True,
                              env=env if columns is None else {**env, "COLUMNS": columns}, stdin=subprocess.DEVNULL,
                              timeout=60, start_new_session=True)
        assert proc.returncode == 0, proc.stderr
        loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
        runs[columns] = proc.stdout, any(name == "rich" or name.startswith("rich.") for name in loaded)
    (plain, plain_rich), (fitted, fitted_rich) = runs[None], runs["2000"]
    assert not plain_rich and fitted_rich
    times = re.compile(r"\d+ ms")
    assert times.sub("N ms", plain) == times.sub("N ms", fitted)  # nothing here is 2000 columns wide
    assert "tool_00300" in plain and plain.count("\n") > 300
    assert json.loads(run_subprocess([*args[:2], "--json", *args[2:]]).stdout)["count"] == 300
