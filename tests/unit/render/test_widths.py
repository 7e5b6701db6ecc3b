"""Human output fits the width it is given: 60, 100 and 160 columns, a pipe with and without a
terminal behind it. Identifiers and words are never cut, no line ends in padding, and a message on
stderr is one line whatever the width.

The golden files in tests/golden/ are rendered from fixed results built here; to rewrite them after
an intended change: MCPPROBE_UPDATE_GOLDEN=1 python -m pytest tests/unit/render/test_widths.py
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from mcpprobe.client.catalog import Listing, Page
from mcpprobe.client.session import Snapshot, Timing
from mcpprobe.client.settings import Settings
from mcpprobe.errors import ConnectionFailed
from mcpprobe.findings import Finding
from mcpprobe.fleet.probe import Member, Report
from mcpprobe.operations.outcome import Outcome
from mcpprobe.render import human, styled
from mcpprobe.render.cells import COLUMNS, Safe, column_cells
from mcpprobe.render.console import make_console
from mcpprobe.render.fleet import render_fleet
from mcpprobe.safety.redact import Redactor
from mcpprobe.wire.target import build_target
from tests.conftest import run_cli

NO_SECRETS = Safe(Redactor(()))

GOLDEN = Path(__file__).parents[2] / "golden"
WIDTHS = (60, 100, 160)

TOOLS = [
    {"name": "echo", "title": "Echo", "description": "Return the given message unchanged.",
     "inputSchema": {"type": "object", "required": ["message"]},
     "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    {"name": "add", "title": "Add two integers",
     "description": "Add two integers; the sum is returned as text and as structured content.",
     "inputSchema": {"type": "object", "required": ["a", "b"]},
     "annotations": {"readOnlyHint": True, "idempotentHint": True}},
    {"name": "search_notes", "title": "Search notes",
     "description": "Case-insensitive search in note titles and bodies.",
     "inputSchema": {"type": "object", "required": ["query"]}, "annotations": {"readOnlyHint": True}},
    {"name": "delete_note", "title": "Delete a note (dry run)",
     "description": "Pretend to delete a note. Declared destructive; nothing is actually removed.",
     "inputSchema": {"type": "object", "required": ["id"]},
     "annotations": {"destructiveHint": True, "idempotentHint": True}},
    {"name": "count_slowly", "title": "Count slowly",
     "description": "Count from 1 to `to`, pausing between steps. Sends notifications/progress when asked.",
     "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True, "idempotentHint": True}},
]
RESOURCES = [{"uri": "demo://readme", "name": "readme", "mimeType": "text/plain"},
             {"uri": "demo://notes/1", "name": "note-1", "mimeType": "text/markdown"},
             {"uri": "demo://swatch.png", "name": "swatch", "mimeType": "image/png"}]
TEMPLATES = [{"uriTemplate": "demo://notes/{id}", "name": "note", "mimeType": "text/markdown"}]
PROMPTS = [{"name": "summarize_note", "description": "Ask the model to summarize one note.",
            "arguments": [{"name": "note_id", "required": True}]},
           {"name": "draft_note", "description": "Ask the model to draft a new note, in an optional tone.",
            "arguments": [{"name": "tone"}]}]
# Never split across two lines, at any width shown here.
IDENTIFIERS = ["server", "protocol", "2025-11-25", "2026-07-28", "mcpprobe-demo", "demo://notes/{id}",
               "demo://swatch.png", "text/markdown", "notifications/progress", "inventory-service-eu-west",
               *(tool["name"] for tool in TOOLS), *(prompt["name"] for prompt in PROMPTS)]


def _listing(kind: str, items: list[dict[str, Any]], pages: int = 1) -> Listing:
    return Listing(kind, declared=True, state="complete", items=items,
                   pages=[Page(n, 10.0, len(items), None) for n in range(1, pages + 1)])


def probe_outcome() -> Outcome:
    snapshot = Snapshot(
        transport="stdio", target="mcpprobe-demo",
        client_info={"name": "mcpprobe", "version": "0.1.0"}, client_capabilities={},
        era="modern", era_reason="server/discover answered (supportedVersions: 2026-07-28, 2025-11-25)",
        protocol_version="2026-07-28", server_info={"name": "mcpprobe-demo", "version": "0.1.0",
                                                     "title": "mcpprobe demo notes server"},
        instructions="mcpprobe-demo is a tiny offline notes server for trying out mcpprobe.\nRead notes as resources.",
        capabilities={"logging": {}, "prompts": {"listChanged": True}, "resources": {"subscribe": True},
                      "tools": {"listChanged": True}},
        negotiated=True)
    outcome = Outcome("probe", snapshot=snapshot, listings={
        "tools": _listing("tools", TOOLS, pages=2), "resources": _listing("resources", RESOURCES),
        "templates": _listing("templates", TEMPLATES), "prompts": _listing("prompts", PROMPTS)})
    outcome.findings.append(Finding("duplicate-item", "two tools are named count_slowly; the second is shadowed",
                                    kind="tools"))
    outcome.timings = [Timing("connect", 10.0), Timing("discover", 20.0),
                       *(Timing(f"list {kind}", 10.0, {"pages": 1}) for kind in ("tools", "resources", "templates",
                                                                                    "prompts"))]
    return outcome


def fleet_reports() -> list[Report]:
    reports = []
    for name, version, elapsed in (("mcpprobe-demo", "2026-07-28", 2.5), ("inventory-service-eu-west", "2025-11-25",
                                                                          0.75)):
        outcome = probe_outcome()
        outcome.snapshot.protocol_version = version
        member = Member(name, build_target(None, ["mcpprobe-demo"]), Settings())
        reports.append(Report(member, outcome, elapsed=elapsed))
    return reports


def _render(width: int, monkeypatch: pytest.MonkeyPatch, what: str) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setattr(styled, "sdk_version", lambda: "2.3.0")  # the Client line names the installed SDK
    out, err = io.StringIO(), io.StringIO()
    console = make_console(out)
    if what == "probe":
        human.render_outcome(console, make_console(err, messages=True), probe_outcome(), NO_SECRETS)
    else:
        render_fleet(console, fleet_reports(), NO_SECRETS)
    return out.getvalue()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_fleet_hint_wraps_under_itself(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hint of a server that ended before the handshake continues under its first word."""
    monkeypatch.setenv("COLUMNS", str(width))
    snapshot = Snapshot(transport="stdio", target="broken", client_info={}, client_capabilities={})
    hint = ("the server ended before the handshake; it gets only a minimal environment (PATH, HOME, "
            "locale, ...): pass what it needs with -e KEY=VALUE, or all of mcpprobe's with --inherit-env")
    outcome = Outcome("probe", snapshot=snapshot,
                      error=ConnectionFailed("the server process ended (exit status 1)", detail={"hint": hint}))
    member = Member("broken", build_target(None, ["broken"]), Settings())
    out = io.StringIO()
    render_fleet(make_console(out), [Report(member, outcome, elapsed=0.1)], NO_SECRETS)
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("  hint: "))
    rest = lines[start + 1:lines.index("", start)]
    assert rest, "the hint fits on one line: make it longer"
    assert all(line.startswith(" " * len("  hint: ")) for line in rest), lines[start:]
    assert " ".join(line.strip() for line in lines[start:start + 1 + len(rest)]) == f"hint: {hint}"
    assert max(cell_len(line) for line in lines) <= width


@pytest.mark.parametrize("width", WIDTHS)
def test_a_finding_s_message_keeps_40_columns_or_goes_under_its_code(width: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Beside its code when it fits there or has 40 columns; on a narrow terminal a long message
    goes under its code instead of into a third of the width (where every URL broke)."""
    monkeypatch.setenv("COLUMNS", str(width))
    long = Finding("auth-no-registration", "the authorization server offers neither client ID metadata documents "
                   "nor dynamic registration: only a pre-registered client works")
    short = Finding("auth-no-registration", "pre-registered clients only")
    out = io.StringIO()
    human.render_findings(make_console(out), [long, short], NO_SECRETS)
    lines = out.getvalue().splitlines()
    head = "  warning auth-no-registration"
    assert max(cell_len(line) for line in lines) <= width
    beside = [line for line in lines if line.startswith(head + "  ")]
    if width - len(head) - 2 >= human.MESSAGE_COLUMNS:
        assert len(beside) == 2, lines
    else:
        assert lines[2] == head and lines[3].startswith(" " * 10 + "the authorization server"), lines
        assert beside == [f"{head}  pre-registered clients only"], lines


@pytest.mark.parametrize("what", ["probe", "fleet"])
@pytest.mark.parametrize("width", WIDTHS)
def test_golden(width: int, what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _render(width, monkeypatch, what)
    path = GOLDEN / f"{what}-{width}.txt"
    if os.environ.get("MCPPROBE_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
    assert text == path.read_text()


@pytest.mark.parametrize("what", ["probe", "fleet"])
@pytest.mark.parametrize("width", WIDTHS)
def test_fits_without_cutting(width: int, what: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _render(width, monkeypatch, what)
    lines = text.splitlines()
    assert all(line == line.rstrip() for line in lines), [line for line in lines if line != line.rstrip()]
    assert max(cell_len(line) for line in lines) <= width
    flat = " ".join(lines)
    for word in IDENTIFIERS:
        if word in flat.replace(" ", ""):
            assert word in text, f"{word!r} split across lines at {width} columns"
    for tool in TOOLS if what == "probe" else []:  # past 80 characters a description is cut on purpose
        for word in tool["description"][:78].split()[:-1]:
            assert word in text, f"{word!r} cut at {width} columns"


def test_narrow_table_folds_into_key_value_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = _render(60, monkeypatch, "fleet").splitlines()
    assert "inventory-service-eu-west" in lines
    assert any(line.split() == ["protocol", "2025-11-25"] for line in lines)


UNTITLED = [{"name": "add", "description": "Add two integers; the sum is returned as text.",
             "inputSchema": {"type": "object", "required": ["a", "b"]}, "annotations": {"readOnlyHint": True}},
            {"name": "delete_note", "description": "Delete a note; declared destructive.",
             "inputSchema": {"type": "object", "required": ["id"]}}]


def _tools_table(width: int, monkeypatch: pytest.MonkeyPatch, tools: list[dict[str, Any]]) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(width))
    out = io.StringIO()
    listing = Listing("tools", True, "complete", items=tools, pages=[Page(1, 1.0, len(tools), None)])
    human.render_listing(make_console(out), listing, NO_SECRETS)
    lines = out.getvalue().splitlines()
    return lines[lines.index("") + 2:] if lines[0] == "" else lines[2:]


@pytest.mark.parametrize("width", [60, 75])
def test_a_narrow_table_leaves_out_a_column_empty_in_every_row(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """No tool has a title: at 60 columns the empty `title` column would take 7 columns from the
    descriptions, for its header alone."""
    lines = _tools_table(width, monkeypatch, UNTITLED)
    assert "title" not in lines[0] and "required args" in lines[0] and "annotations" in lines[0]
    assert max(cell_len(line) for line in lines) <= width
    assert lines[1].startswith("add          a, b           read-only    Add two integers;")


def test_a_table_that_fits_whole_keeps_its_empty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where every column fits at its full width the layout does not change with the content."""
    lines = _tools_table(160, monkeypatch, UNTITLED)
    assert lines[0].split() == ["name", "title", "required", "args", "annotations", "description"]


def test_a_narrow_table_keeps_a_column_with_one_value(monkeypatch: pytest.MonkeyPatch) -> None:
    tools = [dict(UNTITLED[0]), dict(UNTITLED[1], title="Delete")]
    assert "title" in _tools_table(80, monkeypatch, tools)[0]


def _demo(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """mcpprobe in a pipe, as `mcpprobe probe -- mcpprobe-demo | less` runs it, but with no terminal
    anywhere: stdin from /dev/null, its own session so there is no controlling terminal either."""
    base = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run([sys.executable, "-m", "mcpprobe", *args], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120, env={**base, **env},
                          start_new_session=True)


def test_pipe_without_terminal_pads_and_wraps_nothing() -> None:
    proc = _demo({}, "probe", "--", "mcpprobe-demo")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert all(line == line.rstrip() for line in lines)
    # long lines stay whole instead of wrapping at a fixed width
    assert any(line.startswith("Instructions ") and line.endswith("characters; --json shows all)") for line in lines)
    assert any(line.startswith("add ") and line.endswith("as text and as structured content.") for line in lines)
    assert "demo://readme      readme  text/plain" in lines


def test_pipe_takes_columns() -> None:
    proc = _demo({"COLUMNS": "60"}, "probe", "--", "mcpprobe-demo")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 60
    assert all(line == line.rstrip() for line in lines)
    for word in ("search_notes", "delete_note", "demo://swatch.png", "2026-07-28", "notifications/progress…(+85)"):
        assert word in proc.stdout


def test_stderr_message_is_one_line() -> None:
    args = ["probe", "--connect-timeout", "5", "http://127.0.0.1:9/mcp"]
    message = run_cli([*args, "--json"]).json["error"]["message"]
    assert len(message) > 60
    result = run_cli(args, env={"COLUMNS": "60"})
    assert f"error: {message}" in result.stderr.splitlines()


@pytest.mark.parametrize("width", WIDTHS)
def test_findings_wrap_under_their_message(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finding's message never wraps back to the left margin: every line of the Findings section
    is indented, at every width."""
    text = _render(width, monkeypatch, "probe")
    section = text.split("Findings\n", 1)[1].split("\n\n", 1)[0]
    assert section and all(line.startswith("  ") for line in section.splitlines()), section


def _long_list(count: int = 300) -> Listing:
    """More rows than a rich table is used for: the plain rows path."""
    tools = [{"name": f"tool_{n:04d}", "title": f"A title of thirty-eight characters {n:04d}",
              "description": f"Tool {n:04d} does one thing at length, in a description of about 80 characters.",
              "inputSchema": {"type": "object", "required": ["query", "limit"]},
              "annotations": {"readOnlyHint": True}} for n in range(count)]
    return _listing("tools", tools, pages=3)


def _render_list(listing: Listing, width: int, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    out = io.StringIO()
    human.render_listing(make_console(out), listing, NO_SECRETS)
    return out.getvalue()


def test_a_long_list_shows_whole_cells_where_they_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain rows of a long list cut no cell at a fixed 40 characters: with the room, a row is
    one line with every cell whole, as in the small table."""
    listing = _long_list()
    text = _render_list(listing, 10_000, monkeypatch)
    lines = text.splitlines()
    assert lines[2].split("  ")[0] == "name" and lines[2] == lines[2].rstrip()
    for item, line in zip(listing.items, lines[3:], strict=True):
        assert line.startswith(item["name"] + "  ") and line == line.rstrip()
        assert item["title"] in line and line.endswith(item["description"])
        assert "  query, limit  " in line and "  read-only  " in line


@pytest.mark.parametrize("width", [*WIDTHS, 120])
def test_a_long_list_fits_the_width_without_cutting(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Narrower than its rows, the plain rows wrap titles and descriptions between words under
    their column; a name is never broken; no line is longer than the width or ends in blanks."""
    listing = _long_list()
    text = _render_list(listing, width, monkeypatch)
    lines = text.splitlines()
    assert all(line == line.rstrip() for line in lines)
    assert max(len(line) for line in lines) <= width
    starts = [line.split(" ")[0] for line in lines]
    for item in listing.items:
        assert item["name"] in starts  # whole, at the start of its row or block
    words = " ".join(lines).split()
    for item in listing.items[:20]:
        for word in [*item["title"].split(), *item["description"].split()]:
            assert word in words, f"{word!r} cut at {width} columns"


@pytest.mark.parametrize("width", [60, 75])
def test_a_long_narrow_list_leaves_out_a_column_empty_in_every_row(width: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the small table's 200 rows, the plain rows leave out the empty `title` column as the
    small table does: the same tools give the same header and first rows either way."""
    tools = [dict(UNTITLED[n % 2], name=f"{UNTITLED[n % 2]['name']}_{n:03d}") for n in range(300)]
    small = _render_list(_listing("tools", tools[:200]), width, monkeypatch).splitlines()[2:6]
    long = _render_list(_listing("tools", tools, pages=3), width, monkeypatch).splitlines()[2:6]
    assert "title" not in small[0] and "annotations" in small[0]
    assert long == small


def test_a_long_list_too_narrow_for_columns_is_shown_as_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _render_list(_long_list(), 30, monkeypatch)
    lines = text.splitlines()
    assert "tool_0000" in lines and "tool_0299" in lines
    assert all(len(line) <= 30 and line == line.rstrip() for line in lines)
    assert any(line.startswith("  description    Tool 0000") for line in lines)


WIDE_PROSE = " ".join(["東京の天気を調べます。", "結果を短く返します。"] * 3)


def _wide_list() -> Listing:
    """300 tools (plain rows), one in three with a name, title and description in CJK, which take
    two terminal cells a character."""
    tools = [{"name": f"検索_{n:04d}" if n % 3 == 0 else f"tool_{n:04d}",
              "title": "日本語のタイトル" if n % 3 == 0 else f"Title {n}",
              "description": WIDE_PROSE if n % 3 == 0 else f"Tool {n}",
              "inputSchema": {"type": "object"}} for n in range(300)]
    return _listing("tools", tools, pages=3)


@pytest.mark.parametrize("width", [10_000, 160, 100, 60])
def test_a_long_list_measures_wide_characters_in_terminal_cells(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long list's plain rows count the cells a character takes on the terminal, as the small
    table does: with CJK text no line is wider than the width, and each column starts at the same
    cell on every row's first line, however many characters come before it."""
    listing = _wide_list()
    lines = _render_list(listing, width, monkeypatch).splitlines()[2:]
    assert max(cell_len(line) for line in lines) <= width
    assert all(line == line.rstrip() for line in lines)
    firsts = [line for line in lines if line.split(" ")[0] in {item["name"] for item in listing.items}]
    assert len(firsts) == 300
    if lines[0].startswith("name "):  # columns: a row's first line, then a wrapped description's
        starts = {cell_len(line[:line.index(item["title"])]) for line, item in zip(firsts, listing.items, strict=True)}
        assert len(starts) == 1, starts
        ends = {cell_len(line[:line.index("東京")]) for line in firsts if "東京" in line}
        ends |= {len(line) - len(line.lstrip(" ")) for line in lines if line.startswith(" " * 8)}
        assert len(ends) == 1 and all(line.startswith(" ") for line in lines if line.startswith(" " * 8)), ends
    words = " ".join(lines)
    for item in listing.items[:6]:
        assert item["name"] in words  # an identifier is never broken


@pytest.mark.parametrize("secret", [None, "hunter2-secret"])
def test_a_long_list_cells_are_the_small_tables_cells(secret: str | None) -> None:
    """The plain rows build a page's cells column by column, with a shortcut when a column is all
    printable ASCII within its limit; each cell must still be what the small table shows for it:
    inert, masked, cut at the same limit, empty for a missing or null field."""
    from mcpprobe.safety.redact import Redactor

    safe = Safe(Redactor([secret] if secret is not None else []))
    odd = [{"name": "esc\x1b[31mred", "title": None, "description": "tab\there"},
           {"name": 42, "title": "x" * 41, "description": "d" * 81},
           {"name": "bidi\u202eevil", "title": ["not", "text"], "description": "has hunter2-secret in it"},
           {"name": "line\nbreak", "description": "", "inputSchema": {"required": ["a\x07", 3]},
            "annotations": {"destructiveHint": True}},
           {"name": "prompt", "arguments": [{"name": "a", "required": True}, {"name": "b\x1b"}, "junk", {"name": 5}],
            "annotations": "not an object", "inputSchema": {"required": "not a list"}}]
    plain = [{"name": f"tool_{n}", "title": f"title {n}", "description": f"described {n}",
              "inputSchema": {"required": ["q", "limit"]}} for n in range(5)]
    long_title = {"name": "long", "title": "x" * 41, "description": "d" * 81}  # printable, over the limit
    masked = {"name": "masked", "description": "has hunter2-secret in it"}  # printable, a secret
    pages = [plain, [*plain, long_title], [masked, *plain], odd + plain, [{"name": "only"}]]
    items = [item for page in pages for item in page]
    for kind, reference in _CELLS.items():
        cells = column_cells(kind, pages, safe)
        assert cells == [[fn(item, safe) for item in items] for fn in reference], kind
        assert [field.header for field in COLUMNS[kind]] == _HEADERS[kind]
        if secret is not None:
            assert not any(secret in cell for column in cells for cell in column)


def _names(value: object, safe: Safe) -> str:
    return ", ".join(map(safe, value)) if isinstance(value, list) else ""


def _required(item: dict, safe: Safe) -> str:
    schema = item.get("inputSchema")
    return _names(schema.get("required"), safe) if isinstance(schema, dict) else ""


def _annotations(item: dict, safe: Safe) -> str:
    hints = item.get("annotations")
    labels = {"readOnlyHint": "read-only", "destructiveHint": "destructive", "idempotentHint": "idempotent",
              "openWorldHint": "open-world"}
    if not isinstance(hints, dict):
        return ""
    return ", ".join(label for key, label in labels.items() if hints.get(key) is True)


def _arguments(item: dict, safe: Safe) -> str:
    arguments = item.get("arguments")
    if not isinstance(arguments, list):
        return ""
    return ", ".join(safe(arg["name"]) + ("*" if arg.get("required") else "") for arg in arguments
                     if isinstance(arg, dict) and isinstance(arg.get("name"), str))


def _text(key: str, limit: int, blank: bool = True):  # noqa: ANN202
    return lambda item, safe: safe((item.get(key) or "") if blank else item.get(key), limit)


# Each cell as the small table made it, one item at a time: what the page-wise columns must agree with.
_CELLS = {
    "tools": [_text("name", 60, False), _text("title", 40), _required, _annotations, _text("description", 80)],
    "resources": [_text("uri", 80, False), _text("name", 40), _text("mimeType", 30)],
    "templates": [_text("uriTemplate", 80, False), _text("name", 40), _text("mimeType", 30)],
    "prompts": [_text("name", 60, False), _arguments, _text("description", 80)],
    "tasks": [_text("taskId", 40, False), _text("status", 20, False), _text("lastUpdatedAt", 30),
              _text("statusMessage", 80)],
}
_HEADERS = {"tools": ["name", "title", "required args", "annotations", "description"],
            "resources": ["uri", "name", "mimeType"], "templates": ["uriTemplate", "name", "mimeType"],
            "prompts": ["name", "arguments (* required)", "description"],
            "tasks": ["taskId", "status", "lastUpdatedAt", "statusMessage"]}


def test_the_timing_line_breaks_between_phases_within_the_width():
    """Each line, with the separator that ends it, fits; a phase is never split."""
    from mcpprobe.render.styled import between_parts

    parts = ["a" * 20, "b" * 20, "c" * 5, "connect 10 ms", "list tools 10 ms (1 request)"]
    for width in range(28, 80):
        lines = between_parts(parts, width).split("\n")
        assert all(len(line) <= width for line in lines), (width, lines)
        assert [p for line in lines for p in line.removesuffix(" ·").split(" · ")] == parts
    # The last phase needs no room for a separator after it: a line that fits exactly is one line.
    exact = "connect 12 ms · call 4 ms"
    assert between_parts(["connect 12 ms", "call 4 ms"], len(exact)) == exact
