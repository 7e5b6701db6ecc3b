"""Golden tests of every renderer on fixed, in-memory reports: no server, no clock, no terminal.

Each format's output for the same two runs (one healthy server; a fleet with one server that
answered with problems and one that could not be reached) is compared with a file in
tests/golden/. After an intended change of output, rewrite the files with
`MCPPROBE_UPDATE_GOLDEN=1 python -m pytest tests/unit/render/test_golden.py` and review the diff.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
from pathlib import Path
from typing import get_args

import pytest

from mcpprobe.cli.watch import EventLines
from mcpprobe.client.catalog import Listing, Page
from mcpprobe.client.session import Snapshot, Timing
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ConnectionFailed, Refused
from mcpprobe.exitcodes import ExitCode
from mcpprobe.findings import Finding
from mcpprobe.fleet.expect import Check
from mcpprobe.fleet.probe import Member, Report
from mcpprobe.operations.outcome import InvokeOutcome, Outcome
from mcpprobe.render.formats import renderer
from mcpprobe.render.interface import (
    OFFERED,
    Checked,
    Format,
    Interrupted,
    Invoked,
    Listed,
    Loaded,
    NotOffered,
    ProbeRun,
    Rendered,
    Servers,
    Subject,
    View,
    WatchEnded,
    WatchEvent,
)
from mcpprobe.watch import WatchResult
from mcpprobe.wire.target import StdioTarget

GOLDEN = Path(__file__).parents[2] / "golden"
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
    return Member(name, StdioTarget((f"{name}-server", "--stdio")), Settings(), source="mcpprobe.yaml", source_line=2)


def _healthy() -> Report:
    tools = Listing("tools", True, "complete", items=list(TOOLS), pages=[Page(1, 3.0, 2, None)])
    prompts = Listing("prompts", True, "complete", items=[], pages=[Page(1, 1.0, 0, None)])
    outcome = Outcome("probe", snapshot=_snapshot("notes"),
                      listings={"tools": tools, "resources": Listing("resources", False),
                                "templates": Listing("templates", False), "prompts": prompts},
                      findings=[Finding("not-declared", "the server did not declare 'resources'; "
                                        "resources/list was not sent", kind="resources")],
                      timings=[Timing("connect", 12.0, at=100.0), Timing("initialize", 20.5, at=100.012),
                               Timing("list tools", 3.0, {"pages": 1}, at=100.0325),
                               Timing("list prompts", 1.0, {"pages": 1}, at=100.033)])
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


# A server as a browser-automation one writes itself (protocol 2025-03-26 tools carry only
# `annotations.title`): instructions that begin with a newline, whose first paragraph is longer than
# a line is shown, then more paragraphs.
TITLED_TOOLS = [
    {"name": "browser_navigate", "description": "Open a page.", "inputSchema": {"type": "object"},
     "annotations": {"title": "Navigate to a URL", "readOnlyHint": False}},
    {"name": "browser_snapshot", "title": "Page snapshot", "inputSchema": {"type": "object"},
     "annotations": {"title": "Capture accessibility snapshot", "readOnlyHint": True}},
    {"name": "browser_tabs", "inputSchema": {"type": "object"}, "annotations": {"title": "Manage tabs"}},
    {"name": "browser_close", "inputSchema": {"type": "object"}},
]
LONG_INSTRUCTIONS = ("\nThis server drives a real browser. "
                     + "Every page it opens is real, and so is every click. " * 10
                     + "\n\nThe second paragraph, which must not be shown after the cut.\nAnd a third line.\n")


def _titled() -> Report:
    snapshot = _snapshot("browser")
    snapshot.instructions = LONG_INSTRUCTIONS
    snapshot.capabilities = {"tools": {}}
    tools = Listing("tools", True, "complete", items=list(TITLED_TOOLS), pages=[Page(1, 3.0, 4, None)])
    outcome = Outcome("probe", snapshot=snapshot,
                      listings={"tools": tools, **{kind: Listing(kind, False) for kind in ("resources", "templates",
                                                                                            "prompts")}},
                      timings=[Timing("connect", 12.0), Timing("initialize", 20.5),
                               Timing("list tools", 3.0, {"pages": 1})])
    return Report(_member("browser"), outcome, elapsed=0.25)


def _checked(many: bool = False) -> Checked:
    """A check run as its renderers get it: a result per status."""
    from mcpprobe.check.catalogue import BY_ID, Level, Status
    from mcpprobe.check.context import Result
    from mcpprobe.check.runner import CheckOutcome

    def results() -> list[Result]:
        return [
            Result(BY_ID["lifecycle.ping"], Status.FAIL, Level.MUST, "ping was answered with error -32603",
                   BY_ID["lifecycle.ping"].spec_url("2025-11-25"),
                   [{"sent": '{"method": "ping"}', "received": '{"error": {"code": -32603}}', "ms": 1.0}]),
            Result(BY_ID["pagination.invalid-cursor"], Status.WARN, Level.SHOULD, "a result, not -32602",
                   BY_ID["pagination.invalid-cursor"].spec_url("2025-11-25")),
            Result(BY_ID["resources.read-listed"], Status.SKIPPED, Level.SHOULD, "not declared; nothing sent",
                   BY_ID["resources.read-listed"].spec_url("2025-11-25")),
            Result(BY_ID["tools.name-rules"], Status.PASS, Level.SHOULD, "all 2 tool names follow the rules",
                   BY_ID["tools.name-rules"].spec_url("2025-11-25")),
        ]

    reports = [Report(_member("notes"), CheckOutcome("check", snapshot=_snapshot("notes"), results=results()),
                      elapsed=0.3)]
    if many:
        reports.append(Report(_member("gone"), CheckOutcome("check", error=ConnectionFailed("command not found")),
                              elapsed=0.01))
    return Checked(reports, many)


RUNS = {"one": lambda: ([_healthy()], False), "fleet": lambda: ([_healthy(), _broken(), _unreachable()], True),
        "titled": lambda: ([_titled()], False)}
CASES = [
    *[(fmt, width) for fmt in (Format.JSON, Format.JUNIT, Format.OPENMETRICS, Format.HTML, Format.SARIF)
      for width in (160,)],
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


@pytest.mark.parametrize("width", [160, None])
def test_a_tool_title_falls_back_to_its_annotations_title(width):
    """The display-name order for a tool is `title`, then `annotations.title`, then `name`
    (schema.ts, BaseMetadata.title, 2025-06-18 on); the name has its own column."""
    text = renderer(Format.HUMAN)(ProbeRun(*RUNS["titled"]()), View(width=width, terminal=width is not None,
                                                                       now=NOW)).text()
    rows = {line.split()[0]: line for line in text.splitlines() if line.startswith("browser_")}
    assert "Navigate to a URL" in rows["browser_navigate"]
    assert "Page snapshot" in rows["browser_snapshot"] and "Capture accessibility" not in text
    assert rows["browser_close"].split() == ["browser_close"]


@pytest.mark.parametrize("width", [60, 100, 160, None])
def test_instructions_start_at_their_label_and_stop_at_the_cut(width):
    text = renderer(Format.HUMAN)(ProbeRun(*RUNS["titled"]()), View(width=width, terminal=width is not None,
                                                                       now=NOW)).text()
    label = next(line for line in text.splitlines() if line.startswith("Instructions"))
    assert label.split(None, 1)[1].startswith("This server drives a real browser.")
    assert "second paragraph" not in text and "third line" not in text
    assert "--json shows all" in text


def test_instructions_are_counted_where_they_are_cut_and_blank_ones_have_no_line():
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.styled import instructions, snapshot_rows
    from mcpprobe.safety.redact import Redactor

    safe = Safe(Redactor(()))
    many = "\n".join(f"line {n}" for n in range(1, 12))
    assert instructions(many, safe).splitlines()[-1] == "…(+3 lines; --json shows all)"
    assert instructions("\n\n  \nOne line.\n\n", safe) == "One line."
    assert instructions("a" * 250, safe) == "a" * 200 + "…(+50 characters; --json shows all)"
    assert instructions("short\n" + "b" * 201 + "\nlast", safe) == (
        "short\n" + "b" * 200 + "…(+1 character, 1 more line; --json shows all)")
    snapshot = _snapshot("blank")
    snapshot.instructions = "\n \n"
    assert "Instructions" not in [label for label, _ in snapshot_rows(snapshot, safe)]


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


# ----- list, call, read, get-prompt, watch: the same renderers, on fixed outcomes of their own -----

SWATCH = base64.b64encode(b"\x89PNG\r\n\x1a\n-four-pixels-").decode()


def _listed() -> Listed:
    tools = Listing("tools", True, "incomplete", items=list(TOOLS),
                    findings=[Finding("list-incomplete", "tools/list: page 2 failed (timeout); 2 items kept",
                                      kind="tools", detail={"page": 2, "cursor": "c2"})],
                    pages=[Page(1, 3.0, 2, "c2"), Page(2, 30_000.0, 0, None, failed=True)])
    return Listed(Outcome("list", snapshot=_snapshot("notes"), kind="tools", listings={"tools": tools},
                          timings=[Timing("connect", 12.0), Timing("initialize", 20.5),
                                   Timing("list tools", 30_003.0, {"pages": 2})]))


def _catalog(kind: str, items: list[dict]) -> dict[str, Listing]:
    return {kind: Listing(kind, True, "complete", items=items, pages=[Page(1, 2.0, len(items), None)])}


def _call() -> Invoked:
    tool = TOOLS[0]
    outcome = InvokeOutcome(
        "call", snapshot=_snapshot("notes"), listings=_catalog("tools", TOOLS), item=tool, item_kind="tools",
        request={"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2, "b": 3}}}, sent=True,
        arguments={"a": 2, "b": 3}, confirmation="read-only",
        result={"content": [{"type": "text", "text": "5"}, {"type": "text", "text": '{"sum": 5}'},
                            {"type": "image", "mimeType": "image/png", "data": SWATCH}],
                "structuredContent": {"sum": 5}},
        saved=[{"index": 2, "path": "out/add-2.png", "bytes": 21}],
        findings=[Finding("output-schema-mismatch", "structuredContent does not match the tool's outputSchema: "
                          '$.sum: 5 is not of type "string"', kind="tools")],
        timings=[Timing("connect", 12.0), Timing("initialize", 20.5), Timing("list tools", 2.0, {"pages": 1}),
                 Timing("tools/call", 4.2)])
    return Invoked(outcome)


def _read() -> Invoked:
    resources = [{"uri": "notes://readme", "name": "readme", "mimeType": "text/plain"},
                 {"uri": "notes://swatch.png", "name": "swatch", "mimeType": "image/png"}]
    outcome = InvokeOutcome(
        "read", snapshot=_snapshot("notes"), listings=_catalog("resources", resources), item=resources[0],
        item_kind="resources", uri="notes://readme", sent=True,
        request={"method": "resources/read", "params": {"uri": "notes://readme"}},
        result={"contents": [{"uri": "notes://readme", "mimeType": "text/plain", "text": "Notes, as tools.\n"},
                             {"uri": "notes://swatch.png", "mimeType": "image/png", "blob": SWATCH}]},
        timings=[Timing("connect", 12.0), Timing("initialize", 20.5), Timing("list resources", 2.0, {"pages": 1}),
                 Timing("resources/read", 1.5)])
    return Invoked(outcome)


def _get_prompt() -> Invoked:
    prompt = {"name": "summarize", "description": "Summarize one note.",
              "arguments": [{"name": "note_id", "required": True}]}
    outcome = InvokeOutcome(
        "get-prompt", snapshot=_snapshot("notes"), listings=_catalog("prompts", [prompt]), item=prompt,
        item_kind="prompts", arguments={"note_id": "2"}, sent=True,
        request={"method": "prompts/get", "params": {"name": "summarize", "arguments": {"note_id": "2"}}},
        result={"description": "Summarize note 2", "messages": [
            {"role": "user", "content": {"type": "text", "text": "Summarize this note:\nShopping: milk, eggs."}},
            {"role": "assistant", "content": {"type": "text", "text": "A shopping list."}}]},
        timings=[Timing("connect", 12.0), Timing("initialize", 20.5), Timing("prompts/get", 0.8)])
    return Invoked(outcome)


def _refused_call() -> Invoked:
    outcome = InvokeOutcome("call", snapshot=_snapshot("notes"), listings=_catalog("tools", TOOLS),
                            item_kind="tools", arguments={}, save_error="--save out: Permission denied",
                            error=Refused("tool 'nope' is not in tools/list (2 tools: add, delete_note)",
                                          code="not-in-catalog"),
                            timings=[Timing("connect", 12.0), Timing("initialize", 20.5)])
    return Invoked(outcome)


TS = "2026-09-21T14:13:20.000Z"  # NOW
WATCH_EVENTS = [
    {"ts": TS, "event": "snapshot", "kind": "server", "connection": 1, "trigger": "connect", "transport": "stdio",
     "target": "notes-server --stdio", "protocolVersion": "2025-11-25", "era": "legacy",
     "serverInfo": {"name": "notes", "version": "1.2.3"}, "capabilities": {"tools": {"listChanged": True}}},
    {"ts": TS, "event": "log", "kind": "server", "connection": 1, "level": "info", "logger": "notes",
     "data": "ready"},
    *({"ts": TS, "event": "snapshot", "kind": kind, "connection": 1, "trigger": "connect", "declared": declared,
       "listCompleted": declared, "state": "complete" if declared else "not-declared", "count": count,
       "notifications": "promised" if kind == "tools" else None}
      for kind, declared, count in (("tools", True, 2), ("resources", False, 0), ("templates", False, 0),
                                    ("prompts", True, 1))),
    {"ts": TS, "event": "list_changed", "kind": "tools", "connection": 1, "notifications": 3},
    {"ts": TS, "event": "diff", "kind": "tools", "connection": 1, "trigger": "list_changed", "changes": True,
     "added": ["subtract"], "removed": ["delete_note"],
     "changed": [{"id": "add", "fields": ["description", "inputSchema"]}], "count": 2, "pages": 1},
    {"ts": TS, "event": "reconnect", "kind": "server", "connection": 1, "state": "lost",
     "reason": "the server process ended (exit status 1)", "attempt": 1, "retryInSeconds": 0.5},
    {"ts": TS, "event": "end", "kind": None, "connection": 2, "reason": "count", "exitCode": 0, "events": 9,
     "relists": {"tools": 1}},
]


def _watch_ended() -> WatchEnded:
    return WatchEnded(WatchResult(exit_code=ExitCode.CONNECTION, reason="connection-lost", events=9,
                                  error=ConnectionFailed("the server process ended (exit status 1)"),
                                  stderr_tail=["notes: fatal: out of memory"]))


def _loaded() -> Loaded:
    """A load run of two operations, with intervals, server samples, an SLO met and one missed."""
    from mcpprobe.load.figures import Stats
    from mcpprobe.load.run import LoadOutcome, Plan
    from mcpprobe.load.sampler import Sample
    from mcpprobe.load.slo import parse
    from mcpprobe.load.work import Spec

    plan = Plan(specs=(Spec("call", "add", ("a=1", "b=2"), 3), Spec("ping", "")), requests=400, concurrency=4,
                slos=(parse("p99<50ms"), parse("errors<0.1%")))
    ops, overall = [Stats(), Stats()], Stats()
    for i in range(400):
        micros, kind = 300 + (i * 37) % 9000, ("rpc -32603" if i % 50 == 0 else None)
        ops[i % 4 == 3].add(micros, kind)
        overall.add(micros, kind)
    outcome = LoadOutcome("load", snapshot=_snapshot("notes"), plan=plan, overall=overall.figures(2.0),
                          operations=[{"operation": label, "method": method, "weight": weight, **st.figures(2.0)}
                                      for (label, method, weight), st in
                                      zip([("call add", "tools/call", 3), ("ping", "ping", 1)], ops, strict=True)],
                          histogram=overall.histogram,
                          intervals=[{"t": t, "seconds": 1.0, "requests": 200, "errors": 4, "throughput": 200.0,
                                      "p50Us": 4000, "p99Us": 8800 + t, "maxUs": 9200, "inFlight": 4,
                                      "warmup": False} for t in (1.0, 2.0)],
                          samples=[Sample(t, 2**24 + int(t * 2**20), 12, 3, 1, True) for t in (0.0, 1.0, 2.0)],
                          client={"cpuSeconds": 0.5, "wallSeconds": 2.0, "cpuShare": 0.25, "cpuPerRequestUs": 1250.0,
                                  "saturated": False},
                          clock={"connectMs": 40.0, "firstAnswerMs": 42.5, "loadSeconds": 2.0, "measuredSeconds": 2.0})
    for slo in plan.slos:
        outcome.slos.append(slo.judge(outcome.overall))
    outcome.findings.append(Finding("slo-missed", "SLO errors<0.1% missed: measured 2%", kind="server"))
    return Loaded(outcome)


def _load_failed() -> Loaded:
    from mcpprobe.load.run import LoadOutcome, Plan
    from mcpprobe.load.work import Spec

    return Loaded(LoadOutcome("load", plan=Plan(specs=(Spec("ping", ""),)),
                              error=ConnectionFailed("cannot start the server: command not found: notes")))


def _render_watch(fmt: Format, view: View) -> Rendered:
    """The events of a watch through the writer the command uses, as one rendering."""
    shown: list[Rendered] = []
    lines = EventLines(fmt, view, shown.append)
    for event in WATCH_EVENTS:
        lines(event)
    ended = renderer(fmt)(_watch_ended(), view)
    return Rendered([piece for rendered in shown for piece in rendered.stdout],
                    "".join(rendered.stderr for rendered in [*shown, ended]))


SUBJECTS = {"list": _listed, "call": _call, "read": _read, "get-prompt": _get_prompt, "call-refused": _refused_call}
VIEWS = [(Format.JSON, 160, False), *((Format.HUMAN, width, True) for width in (60, 100, 160)),
         (Format.HUMAN, 160, False)]  # (format, width, a terminal): human on a terminal, and into a pipe
COMMAND_CASES = [(name, fmt, width, terminal) for name in [*SUBJECTS, "watch"] for fmt, width, terminal in VIEWS]


@pytest.fixture
def utc(monkeypatch):
    """Watch lines are stamped in local time: the golden files' is UTC."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize("name, fmt, width, terminal", COMMAND_CASES,
                         ids=[f"{n}-{f.value}-{w}-{'terminal' if t else 'pipe'}" for n, f, w, t in COMMAND_CASES])
def test_command_renderer_matches_its_golden_output(name, fmt, width, terminal, utc):
    view = View(width=width, terminal=terminal, now=NOW)
    rendered = _render_watch(fmt, view) if name == "watch" else renderer(fmt)(SUBJECTS[name](), view)
    stem = f"{name}-{fmt.value}" + (f"-{width}" if fmt is Format.HUMAN and terminal else "")
    stem += "" if terminal or fmt is not Format.HUMAN else "-pipe"
    _check(f"{stem}.out", rendered.text())
    _check(f"{stem}.err", rendered.stderr)


PREVIEW_WIDTHS = [60, 100, 160, None]  # None: a pipe with no terminal behind it


@pytest.mark.parametrize("width", PREVIEW_WIDTHS, ids=[str(w or "pipe") for w in PREVIEW_WIDTHS])
def test_the_call_preview_fits_the_width(width):
    """The preview shown before a tool is called (stderr, live): each value wraps under itself, the
    annotations only between two hints; into a pipe, one line each."""
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.console import UNBOUNDED, buffered_console
    from mcpprobe.render.invoke import render_preview
    from mcpprobe.safety.redact import Redactor

    err, buffer = buffered_console(View(width=width or UNBOUNDED), messages=True)
    server = {"name": "notes", "version": "1.2.3"}
    render_preview(err, TOOLS[1], {"id": 3, "reason": "a note nobody reads any more, kept since last year"},
                   "prompt", server, Safe(Redactor(())))
    render_preview(err, TOOLS[0], {"a": 2, "b": 3}, "--yes", server, Safe(Redactor(())))
    text = buffer.getvalue()
    _check(f"call-preview-{width or 'pipe'}.err", text)
    if width:
        assert max(len(line) for line in text.splitlines()) <= width
        assert "readOnlyHint: false (default)" in text and "destructiveHint: n/a (read-only)" in text
    else:
        assert len(text.splitlines()) == 9


@pytest.mark.parametrize("width", [60, 100])
def test_the_call_preview_s_first_line_wraps_between_words_too(width):
    """`Calling tool NAME on SERVER VERSION` is laid out to the width as the lines under it are; on
    60 columns the terminal cut it inside the server's name."""
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.console import buffered_console
    from mcpprobe.render.invoke import render_preview
    from mcpprobe.safety.redact import Redactor

    err, buffer = buffered_console(View(width=width), messages=True)
    tool = {"name": "trigger-long-running-operation", "inputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True}}
    render_preview(err, tool, {}, "--yes", {"name": "mcp-servers/everything", "version": "2.0.0"},
                   Safe(Redactor(())))
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width, lines
    heading = "Calling tool trigger-long-running-operation on mcp-servers/everything 2.0.0"
    if width >= len(heading):
        assert lines[0] == heading
    else:
        assert lines[:2] == ["Calling tool trigger-long-running-operation on", "mcp-servers/everything 2.0.0"]


def test_a_blob_read_into_a_pipe_is_its_bytes_between_the_text():
    rendered = renderer(Format.HUMAN)(_read(), View(terminal=False, now=NOW))
    pieces = list(rendered.stdout)
    assert pieces[-1] == base64.b64decode(SWATCH)
    assert "".join(p for p in pieces if isinstance(p, str)).startswith("==> notes://readme (text/plain) <==\n")


def test_json_documents_on_a_terminal_are_indented_and_in_a_pipe_compact():
    for subject in (_listed(), _call(), Interrupted("read")):
        pretty = renderer(Format.JSON)(subject, View(terminal=True)).text()
        compact = renderer(Format.JSON)(subject, View(terminal=False)).text()
        assert json.loads(pretty) == json.loads(compact) and pretty.startswith('{\n  "formatVersion": 1')
        assert compact.count("\n") == 1 and compact.startswith('{"formatVersion":1')


def test_watch_lines_are_compact_even_on_a_terminal():
    text = _render_watch(Format.JSON, View(terminal=True, now=NOW)).text()
    assert [json.loads(line) for line in text.splitlines()] == WATCH_EVENTS


def test_a_watch_holds_what_comes_before_its_header_for_people_only():
    human = _render_watch(Format.HUMAN, View(now=NOW)).text().splitlines()
    assert human.index("Watching for changes (Ctrl-C to stop)") < next(
        i for i, line in enumerate(human) if "log" in line and "ready" in line)
    machine = _render_watch(Format.JSON, View(now=NOW)).text().splitlines()
    assert json.loads(machine[1])["event"] == "log"  # as it happened, before the other snapshots


# Every subject a command renders, keyed by the command (OFFERED's keys).
COMMAND_SUBJECTS = {
    "probe": [lambda: ProbeRun(*RUNS["one"]()), lambda: ProbeRun(*RUNS["fleet"]()), lambda: Interrupted("probe")],
    "check": [_checked, lambda: _checked(True), lambda: Interrupted("check")],
    "list": [_listed, lambda: Interrupted("list")],
    "call": [_call, _refused_call, lambda: Interrupted("call")],
    "read": [_read, lambda: Interrupted("read")],
    "get-prompt": [_get_prompt, lambda: Interrupted("get-prompt")],
    "watch": [lambda: WatchEvent(WATCH_EVENTS[0], header=True), lambda: WatchEvent(WATCH_EVENTS[-2]),
              _watch_ended, lambda: WatchEnded(None)],
    "load": [_loaded, _load_failed, lambda: Interrupted("load")],
}
PAIRS = [(command, fmt) for command in OFFERED for fmt in Format]


def test_every_command_is_covered():
    assert set(COMMAND_SUBJECTS) == set(OFFERED)
    # `servers` has --json but no --format: its subject is walked below.
    assert {type(make()) for makes in COMMAND_SUBJECTS.values() for make in makes} | {Servers} == \
        set(get_args(Subject))


def test_the_servers_of_the_configs_render_for_people_and_scripts_only(tmp_path):
    from mcpprobe.fleet.config import discover

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": {"command": "mcpprobe-demo"},
                                                 "web": {"url": "https://mcp.example.com/mcp"}}}))
    subject = Servers(discover((str(config),)))
    human = renderer(Format.HUMAN)(subject, View(width=100)).text()
    assert "demo" in human and "https://mcp.example.com/mcp" in human and "\x1b" not in human
    document = json.loads(renderer(Format.JSON)(subject, View()).text())
    assert document["command"] == "servers" and [e["name"] for e in document["servers"]] == ["demo", "web"]
    for fmt in (Format.JUNIT, Format.OPENMETRICS, Format.HTML):
        with pytest.raises(NotOffered):
            renderer(fmt)(subject, View())


@pytest.mark.parametrize("command, fmt", PAIRS, ids=[f"{c}-{f.value}" for c, f in PAIRS])
def test_every_format_a_command_offers_renders_all_it_shows_and_no_other_does(command, fmt):
    """Exhaustive over commands x formats: an offered format renders every subject of the command
    (text, not writes); a format not offered refuses, and the CLI never asks (its --format choices)."""
    for make in COMMAND_SUBJECTS[command]:
        subject = make()
        if fmt in OFFERED[command]:
            rendered = renderer(fmt)(subject, View(now=NOW))
            assert isinstance(rendered, Rendered)
            assert rendered.text() or rendered.stderr or isinstance(subject, WatchEnded)
        else:
            with pytest.raises(NotOffered):
                renderer(fmt)(subject, View(now=NOW))


def test_command_renderers_are_pure(utc):
    """Rendering twice gives the same text, and changes nothing in the outcome: no finding added,
    nothing saved (files are the operation's to write)."""
    for make in SUBJECTS.values():
        subject = make()
        outcome = subject.outcome
        before = (outcome.all_findings(), list(getattr(outcome, "saved", [])), getattr(outcome, "save_error", None))
        for fmt in OFFERED["call"]:
            first, second = (renderer(fmt)(subject, View(now=NOW)) for _ in range(2))
            assert (first.text(), first.stderr) == (second.text(), second.stderr)
        assert (outcome.all_findings(), getattr(outcome, "saved", []), getattr(outcome, "save_error", None)) == before


@pytest.mark.parametrize("width", [60, 100, 160])
def test_check_results_for_people_wrap_under_their_own_column(width):
    """Each check's message and evidence wrap under themselves, never back to the first column; on
    a narrow terminal the message goes under the check's id."""
    rendered = renderer(Format.HUMAN)(_checked(), View(width=width, now=NOW))
    _check(f"check-human-{width}.out", rendered.text())
    for line in rendered.text().splitlines():
        assert len(line) <= width
        if line and not line.startswith(("pass", "fail", "warn", "skipped", "n/a", "error")) and "checks:" not in line:
            assert line.startswith(" ") or line.startswith(("Server", "Transport", "Protocol", "Client",
                                                            "Capabilities", "Instructions")), line


def _checked_with_findings() -> Checked:
    """A check whose session found something besides its checks (a server.json that disagrees),
    and whose failing check took four exchanges, the last of them the one that decided."""
    from mcpprobe.check.catalogue import BY_ID, Level, Status
    from mcpprobe.check.context import Result
    from mcpprobe.check.runner import CheckOutcome

    check = BY_ID["http.session-delete"]
    exchanges = [{"sent": "POST /mcp initialize", "received": "HTTP 200"},
                 {"sent": "POST /mcp notifications/initialized", "received": "HTTP 202"},
                 {"sent": "DELETE /mcp", "received": "HTTP 200"},
                 {"sent": "POST /mcp ping", "received": "HTTP 400 (the deciding answer)"}]
    result = Result(check, Status.FAIL, Level.MUST, "after DELETE answered 200, ping with the ended session's id "
                    "got HTTP 400, not 404 Not Found", check.spec_url("2025-11-25"), exchanges)
    mismatch = Finding("server-json-mismatch", "the server reports version \"2.0.0\"; the server.json says \"2.1.0\"",
                       kind="server")
    outcome = CheckOutcome("check", snapshot=_snapshot("notes"), results=[result], findings=[mismatch])
    return Checked([Report(_member("notes"), outcome, elapsed=0.3)], False)


@pytest.mark.parametrize("width", [60, 100, 160])
def test_check_for_people_shows_the_session_s_findings_and_the_deciding_exchange(width):
    """`check` shows the findings besides its checks as `probe` does (they were in --json only),
    and of a check's exchanges the last ones, where its verdict was decided, saying how many
    earlier ones --json has."""
    rendered = renderer(Format.HUMAN)(_checked_with_findings(), View(width=width, now=NOW))
    text = rendered.text()
    _check(f"check-findings-human-{width}.out", text)
    assert "server-json-mismatch" in text and "Findings" in text
    assert "(the deciding answer)" in text and "POST /mcp initialize" not in text
    assert "1 check: 1 fail" in text
    assert "…(1 earlier exchange; --json shows it)" in text
    assert all(len(line) <= width for line in text.splitlines())


def _checked_everything() -> Checked:
    """A run shaped as server-everything's over stdio: mostly passes, in the catalogue's order, a
    warning and a failure among them (the failure late), and many checks `n/a` or `skipped` for a
    handful of reasons, one reason shared by eight checks."""
    from mcpprobe.check.catalogue import BY_ID, Status
    from mcpprobe.check.context import Result
    from mcpprobe.check.runner import CheckOutcome

    def result(check_id: str, status: Status, message: str, evidence: list | None = None) -> Result:
        check = BY_ID[check_id]
        return Result(check, status, check.level_for("2025-11-25"), message, check.spec_url("2025-11-25"),
                      evidence or [])

    old = "not part of protocol 2025-11-25"
    results = [
        result("lifecycle.ping", Status.PASS, "ping answered with an empty result in 2 ms"),
        result("lifecycle.request-id-echo", Status.PASS, "ping answered with both ids, each echoed exactly"),
        result("pagination.invalid-cursor", Status.WARN, "tools/list with a cursor it never issued was answered "
               "with a result, not error -32602",
               [{"sent": '{"method": "tools/list", "params": {"cursor": "x"}}', "received": '{"result": {}}'}]),
        result("listing.complete", Status.PASS, "every declared kind listed to the end"),
        result("tools.name-rules", Status.PASS, "all 13 tool names follow the naming rules"),
        result("tools.call-named", Status.SKIPPED, "no tool named with --call; nothing sent"),
        result("resources.template-expands", Status.SKIPPED, "the server did not declare 'resources'; nothing sent"),
        result("resources.subscribe", Status.SKIPPED, "the server did not declare 'resources'; nothing sent"),
        *(result(check_id, Status.NA, old) for check_id in (
            "tasks.ext-unknown-task", "tasks.ext-unknown-task-cancel", "tasks.ext-unknown-task-update",
            "tasks.ext-undeclared-client", "tasks.ext-no-legacy-capability", "tasks.ext-no-tasks-result",
            "tasks.ext-undeclared-listen", "tasks.ext-created-task-resolves")),
        *(result(check_id, Status.NA, "applies to http only, not stdio") for check_id in (
            "http.origin", "http.protocol-version", "http.session-delete")),
        result("lifecycle.cancel-in-flight", Status.FAIL, "after tools/list was cancelled, ping got no answer within "
               "10 s: the session did not survive the cancellation",
               [{"sent": '{"method": "tools/list", "id": "mcpprobe-cancel-1"}'},
                {"sent": '{"method": "ping"}', "received": "no answer within 10 s"}]),
        result("lifecycle.unknown-method", Status.PASS, "answered with error -32601 (Method not found)"),
        result("lifecycle.result-type", Status.NA, old),
        result("lifecycle.stdout-clean", Status.PASS, "every line on stdout was a JSON-RPC message"),
    ]
    outcome = CheckOutcome("check", snapshot=_snapshot("everything"), results=results)
    return Checked([Report(_member("everything"), outcome, elapsed=0.3)], False)


@pytest.mark.parametrize("width", [60, 100, 160])
def test_check_for_people_leads_with_failures_and_says_each_reason_once(width):
    """What failed and warned comes first, each with its evidence and link; the passes are one
    wrapped line of ids; `skipped` and `n/a` one line per reason (a reason shared by nine checks is
    said once); then one tally line."""
    text = renderer(Format.HUMAN)(_checked_everything(), View(width=width, now=NOW)).text()
    _check(f"check-human-layout-{width}.out", text)
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines)
    heads = [line.split()[0] for line in lines if line.startswith(("pass ", "fail ", "warn ", "skipped ", "n/a "))]
    assert heads == ["fail", "warn", "pass", "skipped", "skipped", "n/a", "n/a"]
    assert next(line for line in lines if line.startswith("fail")).split()[1] == "lifecycle.cancel-in-flight"
    words = " ".join(text.split())  # a reason may wrap
    assert words.count("not part of protocol 2025-11-25") == 1
    assert words.count("the server did not declare 'resources'") == 1
    unwrapped = "".join(line.strip() for line in lines)  # the link folds on a narrow terminal
    assert 'sent {"method": "ping"}' in text and BY_ID_URL("lifecycle.cancel-in-flight") in unwrapped
    assert lines[-1] == "23 checks: 6 pass, 1 fail, 1 warn, 3 skipped, 12 n/a"
    for check_id in ("lifecycle.ping", "lifecycle.stdout-clean"):  # every pass is named, once
        assert words.count(check_id) == 1


def BY_ID_URL(check_id: str) -> str:  # noqa: N802
    from mcpprobe.check.catalogue import BY_ID

    return BY_ID[check_id].spec_url("2025-11-25")


@pytest.mark.parametrize("width", [60, 100])
def test_check_for_people_with_v_lists_every_check_on_its_own_line(width):
    """-v: problems first still, then each pass, skip and n/a on a line of its own with its message."""
    from dataclasses import replace

    subject = replace(_checked_everything(), every=True)
    text = renderer(Format.HUMAN)(subject, View(width=width, now=NOW)).text()
    _check(f"check-human-layout-v-{width}.out", text)
    heads = [line.split()[0] for line in text.splitlines()
             if line.startswith(("pass ", "fail ", "warn ", "skipped ", "n/a "))]
    assert heads == ["fail", "warn", *["pass"] * 6, *["skipped"] * 3, *["n/a"] * 12]
    assert text.count("not part of protocol 2025-11-25") == 9


def test_check_junit_has_each_check_s_level_status_and_link_as_properties():
    """A warning's test case passes without --strict: its properties still say it warned, at which
    level, and where the rule is."""
    import xml.etree.ElementTree as ET

    from mcpprobe.check.catalogue import BY_ID

    subject = _checked_everything()
    root = ET.fromstring(renderer(Format.JUNIT)(subject, View(now=NOW)).text())
    cases = {case.get("name"): case for case in root.iter("testcase")}
    results = subject.reports[0].outcome.results
    assert set(cases) == {"connection", *(r.check.id for r in results)}
    for result in results:
        case = cases[result.check.id]
        assert list(case)[0].tag == "properties"  # first, as JUnit readers expect
        properties = {p.get("name"): p.get("value") for p in case.iter("property")}
        assert properties == {"level": result.level.value, "status": result.status.value,
                              "specUrl": BY_ID[result.check.id].spec_url("2025-11-25")}
    warned = cases["pagination.invalid-cursor"]
    assert warned.find("failure") is None and warned.find("properties/property[@name='status']").get("value") == "warn"


def test_check_html_headline_and_heading_count_what_failed_and_warned():
    """The headline says "1 failure, 1 warning" (or "2 warnings"), never "ok" above a warning; the
    Checks heading tallies pass, warn and fail; the rows put what failed and warned first; an id
    may break after its dots only (a <wbr>), and nothing tells the browser to break it anywhere."""
    from dataclasses import replace

    from mcpprobe.check.catalogue import Status

    subject = _checked_everything()
    page = renderer(Format.HTML)(subject, View(now=NOW)).text()
    assert "<title>MCP server everything: 1 failure, 1 warning</title>" in page
    assert '<span class="tally"><span class="ok">6 pass</span> · <span class="warn">1 warn</span> · ' \
           '<span class="bad">1 fail</span>' in page
    rows = re.findall(r'<tr data-check="([^"]+)">', page)
    assert rows[:2] == ["lifecycle.cancel-in-flight", "pagination.invalid-cursor"] and len(rows) == 23
    assert '<code class="id">lifecycle.<wbr>cancel-in-flight</code>' in page
    assert "break-all" not in page
    outcome = subject.reports[0].outcome
    warned = replace(outcome, results=[replace(r, status=Status.WARN) if r.status is Status.FAIL else r
                                       for r in outcome.results])
    page = renderer(Format.HTML)(Checked([Report(_member("everything"), warned, elapsed=0.3)]), View(now=NOW)).text()
    assert "<title>MCP server everything: 2 warnings</title>" in page and ": ok<" not in page


SARIF_SCHEMA = Path(__file__).parents[2] / "fixtures" / "sarif" / "sarif-schema-2.1.0.json"


def sarif_errors(text: str) -> list[str]:
    """What the SARIF 2.1.0 schema (OASIS, vendored under tests/fixtures/sarif/) finds wrong."""
    import jsonschema

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    return [f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(json.loads(text))]


@pytest.mark.parametrize("run", sorted(RUNS))
def test_sarif_of_a_probe_is_valid_sarif_2_1_0(run):
    reports, many = RUNS[run]()
    text = renderer(Format.SARIF)(ProbeRun(reports, many), View(now=NOW)).text()
    assert sarif_errors(text) == []
    doc = json.loads(text)
    rules = [rule["id"] for rule in doc["runs"][0]["tool"]["driver"]["rules"]]
    results = doc["runs"][0]["results"]
    codes = [f.code for report in reports for f in report.outcome.all_findings()]
    assert [r["ruleId"] for r in results] == codes and sorted(set(codes)) == sorted(rules)
    assert all(rules[r["ruleIndex"]] == r["ruleId"] for r in results)


@pytest.mark.parametrize("many", [False, True])
def test_sarif_of_a_check_is_valid_sarif_2_1_0(many):
    subject = _checked(many)
    text = renderer(Format.SARIF)(subject, View(now=NOW)).text()
    assert sarif_errors(text) == []
    _check(f"check-sarif{'-fleet' if many else ''}.out", text)
    results = json.loads(text)["runs"][0]["results"]
    failed = [r.check.id for report in subject.reports for r in getattr(report.outcome, "results", [])
              if r.status.value in ("fail", "warn", "error")]
    assert [r["ruleId"] for r in results if not r["ruleId"].startswith("finding/")] == failed
    assert any(r["ruleId"] == "finding/connection-failed" for r in results) is many


def test_the_sarif_validation_catches_a_broken_document():
    # The schema check is real: a result without its message is refused.
    reports, many = RUNS["fleet"]()
    doc = json.loads(renderer(Format.SARIF)(ProbeRun(reports, many), View(now=NOW)).text())
    del doc["runs"][0]["results"][0]["message"]
    assert sarif_errors(json.dumps(doc))


@pytest.mark.parametrize("width", [60, 100, 160])
def test_load_figures_for_people_fit_the_width(width):
    """On a terminal too narrow for the figures' table, each operation is a block of lines, and the
    histogram's bars shrink: no line is longer than the width, and no figure is cut to an ellipsis."""
    rendered = renderer(Format.HUMAN)(_loaded(), View(width=width, now=NOW))
    _check(f"load-human-{width}.out", rendered.text())
    lines = rendered.text().splitlines()
    assert all(len(line) <= width for line in lines)
    assert not any("…" in line for line in lines if "p50" in line or "µs" in line or " ms" in line)
    # A labelled line (Server, Clock, ...) wraps under its value, never back to the first column;
    # and one blank line, not two, comes before the findings.
    labels = ("Server ", "Load ", "Errors ", "Clock ", "Latency ", "SLO ", "Findings", "call ", "ping ", "all ",
              "operation ")
    assert all(not line or line.startswith(" ") or line.startswith(labels) for line in lines), rendered.text()
    assert "\n\n\nFindings" not in rendered.text()
    # Wrapped lines break between figures, never inside one: "95" and "µs", "3" and "→ 3" stay together.
    assert not re.search(r"(\d|→)\n +(µs\b|ms\b|s\b|MiB\b|→)", rendered.text()), rendered.text()


def test_a_long_operation_name_wraps_its_figures_under_itself():
    """`get-prompt summarize_note note_id=1` and its figures are wider than 60 columns: the figures
    once wrapped back to the first column ("210.3/s" alone there); they go on an indented line."""
    loaded = _loaded()
    loaded.outcome.operations[0]["operation"] = "get-prompt summarize_note note_id=1"
    text = renderer(Format.HUMAN)(loaded, View(width=60, now=NOW)).text()
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("get-prompt summarize_note note_id=1"))
    assert lines[at + 1].startswith("  ") and "/s" in lines[at] + lines[at + 1], text
    assert all(len(line) <= 60 for line in lines), text
    assert not any(re.match(r"[\d,.]+/s$", line) for line in lines), text


@pytest.mark.parametrize(("earlier", "kept", "said"), [
    (1, 1, "1 earlier exchange; --json shows it"),
    (3, 3, "3 earlier exchanges; --json shows them"),
    (12, 9, "12 earlier exchanges; --json shows 9 of them"),
    (2, 0, "2 earlier exchanges, not kept"),
])
def test_the_earlier_exchanges_line_counts_in_words(earlier, kept, said):
    """Before: "1 earlier exchange; --json shows them", and "--json shows 0 of them" when none was kept."""
    from mcpprobe.render.checks import _earlier

    assert _earlier(earlier, kept) == said
