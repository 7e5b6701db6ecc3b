"""Golden tests of every renderer on fixed, in-memory reports: no server, no clock, no terminal.

Each format's output for the same two runs (one healthy server; a fleet with one server that
answered with problems and one that could not be reached) is compared with a file in
tests/golden/. After an intended change of output, rewrite the files with
`MCPPROBE_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcpprobe.catalog import Listing, Page
from mcpprobe.errors import ConnectionFailed
from mcpprobe.expect import Check
from mcpprobe.findings import Finding
from mcpprobe.fleet import Member, Report
from mcpprobe.operations import Outcome
from mcpprobe.render.formats import Format, ProbeRun, Rendered, View, renderer
from mcpprobe.session import Snapshot, Timing
from mcpprobe.target import Settings, StdioTarget

GOLDEN = Path(__file__).parent / "golden"
NOW = 1_790_000_000.0  # the run's clock, fixed
TOOLS = [
    {"name": "add", "description": "Add two integers.",
     "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                     "required": ["a", "b"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "delete_note", "description": "Delete a note; declared destructive.",
     "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}},
]


def _snapshot(name: str) -> Snapshot:
    return Snapshot(transport="stdio", target=f"{name}-server --stdio",
                    client_info={"name": "mcpprobe", "version": "0.0.0"}, client_capabilities={}, era="legacy",
                    era_reason="the server answered initialize",
                    protocol_version="2025-11-25", requested_version="2025-11-25",
                    server_info={"name": name, "version": "1.2.3"}, instructions="Notes, as tools.",
                    capabilities={"tools": {"listChanged": False}, "prompts": {}}, negotiated=True)


def _member(name: str) -> Member:
    return Member(name, StdioTarget((f"{name}-server", "--stdio")), Settings(), source="mcpprobe.yaml")


def _healthy() -> Report:
    tools = Listing("tools", True, "complete", items=list(TOOLS), pages=[Page(1, 3.0, 2, None)])
    prompts = Listing("prompts", True, "complete", items=[], pages=[Page(1, 1.0, 0, None)])
    outcome = Outcome("probe", snapshot=_snapshot("notes"),
                      listings={"tools": tools, "resources": Listing("resources", False),
                                "templates": Listing("templates", False), "prompts": prompts},
                      findings=[Finding("not-declared", "the server did not declare 'resources'; "
                                        "resources/list was not sent", kind="resources")],
                      timings=[Timing("connect", 12.0), Timing("initialize", 20.5),
                               Timing("list tools", 3.0, {"pages": 1}), Timing("list prompts", 1.0, {"pages": 1})])
    return Report(_member("notes"), outcome, elapsed=0.25,
                  checks=[Check("tools: add", True, "tool 'add' is listed", kind="tools")])


def _broken() -> Report:
    tools = Listing("tools", True, "method-not-found", findings=[Finding(
        "method-not-found", "tools/list: the server declared 'tools' but answered -32601 Method not found",
        kind="tools")], pages=[Page(1, 2.0, 0, None, failed=True)])
    outcome = Outcome("probe", snapshot=_snapshot("broken"),
                      listings={"tools": tools, "resources": Listing("resources", False),
                                "templates": Listing("templates", False),
                                "prompts": Listing("prompts", True, "complete", pages=[Page(1, 1.0, 0, None)])},
                      timings=[Timing("connect", 10.0), Timing("initialize", 15.0)])
    return Report(_member("broken"), outcome, elapsed=0.5)


def _unreachable() -> Report:
    error = ConnectionFailed("cannot start the server: command not found: gone-server")
    return Report(_member("gone"), Outcome("probe", error=error), elapsed=0.01)


RUNS = {"one": lambda: ([_healthy()], False), "fleet": lambda: ([_healthy(), _broken(), _unreachable()], True)}
CASES = [
    *[(fmt, width) for fmt in (Format.JSON, Format.JUNIT, Format.OPENMETRICS, Format.HTML) for width in (160,)],
    *[(Format.HUMAN, width) for width in (60, 100, 160)],
]


def _check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("MCPPROBE_UPDATE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: run with MCPPROBE_UPDATE_GOLDEN=1 and review it"
    assert text == path.read_text(encoding="utf-8"), f"{path.name} changed"


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize("fmt, width", CASES, ids=[f"{fmt.value}-{width}" for fmt, width in CASES])
def test_renderer_matches_its_golden_output(run, fmt, width):
    reports, many = RUNS[run]()
    rendered = renderer(fmt)(ProbeRun(reports, many), View(width=width, now=NOW))
    suffix = f"-{width}" if fmt is Format.HUMAN else ""
    _check(f"{run}-{fmt.value}{suffix}.out", rendered.text())
    _check(f"{run}-{fmt.value}{suffix}.err", rendered.stderr)


@pytest.mark.parametrize("fmt", list(Format))
def test_every_format_has_a_renderer(fmt):
    """Exhaustive: each choice of --format has its renderer, and it returns text, not writes it."""
    reports, many = RUNS["fleet"]()
    rendered = renderer(fmt)(ProbeRun(reports, many), View(now=NOW))
    assert isinstance(rendered, Rendered) and rendered.text()


def test_renderers_are_pure():
    """Rendering twice gives the same text and changes nothing in the reports."""
    reports, many = RUNS["fleet"]()
    before = [report.outcome.all_findings() for report in reports]
    first = [(r.text(), r.stderr) for r in (renderer(fmt)(ProbeRun(reports, many), View(now=NOW)) for fmt in Format)]
    second = [(r.text(), r.stderr) for r in (renderer(fmt)(ProbeRun(reports, many), View(now=NOW)) for fmt in Format)]
    assert first == second
    assert [report.outcome.all_findings() for report in reports] == before
