"""Human output with rich: tables on stdout, problems on stderr.

Every string that came from the server goes through `sanitize.visible` and into a `Text` object,
never through rich's markup parser, so neither escape sequences nor "[bold]" from a server are
interpreted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from mcpprobe.client.catalog import LIST_KINDS, Listing
from mcpprobe.findings import Finding, Severity
from mcpprobe.operations.outcome import Outcome
from mcpprobe.render.cells import COLUMNS, TABLE_ROWS, Cells, Safe, aligned, chunks, listing_cells, natural_widths
from mcpprobe.render.console import GAP, LABEL_WIDTH, Column, fit_widths, fitted_table, keyed
from mcpprobe.render.styled import (
    Styled,
    between_parts,
    capabilities,
    extension_rows,
    snapshot_rows,
    timing_parts,
)
from mcpprobe.render.styled import listing_header as styled_header
from mcpprobe.safety.sanitize import json_dumps, visible
from mcpprobe.wire.stderrlog import StderrEntry, entry_text, stderr_heading

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
def to_text(styled: Styled) -> Text:
    """What mcpprobe.render.styled says, as a rich Text."""
    base, parts = styled
    text = Text(style=base)
    for part, style in parts:
        text.append(part, style or None)
    return text


def render_snapshot(console: Console, outcome: Outcome, safe: Safe) -> None:
    if outcome.snapshot is None:
        return
    for label, value in [*snapshot_rows(outcome.snapshot, safe), *extension_rows(outcome, safe)]:
        console.print(keyed(label, to_text(value)))


def capabilities_text(declared: dict[str, Any], safe: Safe) -> Text:
    return to_text(capabilities(declared, safe))


def listing_header(listing: Listing) -> Text:
    return to_text(styled_header(listing))


PROBE_ROWS = 50  # per kind in `probe`; `list KIND` shows them all


def render_listing(console: Console, listing: Listing, safe: Safe, limit: int | None = None,
                   cells: Cells | None = None) -> None:
    """A listing's header and its items as a table. `cells`: the table's cells, built as the pages
    arrived (`list` for a person); used when they are every item's, else built here."""
    console.print()
    console.print(listing_header(listing))
    if not listing.items:
        return
    shown = len(listing.items) if limit is None else min(limit, len(listing.items))
    fields = COLUMNS[listing.kind]
    columns = [Column(field.header, identifier=field.identifier) for field in fields]
    cells = listing_cells(listing, safe, cells, shown)
    if shown > TABLE_ROWS:
        _plain_rows(console, columns, cells.columns)
    else:
        rows = [[Text(cell) for cell in row] for row in zip(*cells.columns, strict=True)]
        console.print(fitted_table(console, columns, rows))
    _render_header_params(console, listing, safe, limit)
    if shown < len(listing.items):
        more = len(listing.items) - shown
        console.print(Text(f"… {more} more; `mcpprobe list {listing.kind}` shows them all", style="dim"))


def _render_header_params(console: Console, listing: Listing, safe: Safe, limit: int | None) -> None:
    """The tools' parameters that travel as Mcp-Param-* headers too (x-mcp-header, 2026-07-28 over
    streamable HTTP), one line per tool (at most `limit` lines)."""
    if not listing.header_params:
        return
    console.print(Text("Parameters also sent as HTTP headers (x-mcp-header):", style="dim"))
    tools = list(listing.header_params.items())
    for tool, params in tools[:limit]:
        shown = ", ".join(f"{safe(path, 60)} → {safe(header, 80)}" for path, header in params.items())
        console.print(Text(f"  {safe(tool, 60)}: {shown}"))
    if limit is not None and len(tools) > limit:
        console.print(Text(f"  … {len(tools) - limit} more; `mcpprobe list tools` shows them all", style="dim"))


def _plain_rows(console: Console, columns: list[Column], cells: list[list[str]]) -> None:
    """Aligned columns written straight to the console's file: linear and fast for huge lists.
    Laid out as the small table is: as wide as the console allows, an identifier never cut, other
    cells wrapped between words under their column; when even that cannot fit, one block per row.
    Widths are terminal cells, as rich counts them: a column with text beyond ASCII (a CJK name
    takes two cells a character) is measured and padded cell by cell, an ASCII one at C speed.
    The cells are already made inert by `safe()`, so writing them raw is as safe as a Table."""
    headers = [column.header for column in columns]
    sizes: list[Callable[[str], int]] = [len if "".join(column).isascii() else cell_len for column in cells]
    naturals = natural_widths(headers, cells, sizes)
    room = console.width - GAP * (len(columns) - 1)
    if sum(naturals) > room:  # narrowed: the columns empty in every row are left out, as by fitted_table
        keep = [0, *(i for i in range(1, len(cells)) if "".join(cells[i]).strip())]
        columns, headers, cells = [columns[i] for i in keep], [headers[i] for i in keep], [cells[i] for i in keep]
        sizes, naturals = [sizes[i] for i in keep], [naturals[i] for i in keep]
        room = console.width - GAP * (len(columns) - 1)
    widths: list[int] | None = naturals
    if sum(naturals) > room:
        minimums = [natural if column.identifier else max(len(column.header), _longest_word(cell_list, size))
                    for natural, column, cell_list, size in zip(naturals, columns, cells, sizes, strict=True)]
        widths = fit_widths(naturals, minimums, room)
    if widths is None:
        _plain_blocks(console, headers, cells)
        return
    slow: set[int] = set()  # rows laid out one cell at a time: wrapped, or padded by cells
    for width, natural, column, size in zip(widths, naturals, cells, sizes, strict=True):
        if size is not len:
            slow.update(row for row, cell in enumerate(column) if not cell.isascii())
        if width < natural:
            slow.update(row for row, cell in enumerate(column) if size(cell) > width)

    if not slow:  # the common case: one C-level pass
        _write_lines(console, aligned(headers, cells, widths))
        return
    layout = "  ".join(f"%-{width}s" for width in widths)

    def lines() -> Iterator[str]:
        yield (layout % tuple(headers)).rstrip()
        for number, row in enumerate(zip(*cells, strict=True)):
            if number in slow:
                yield from _laid_out_row(console, row, widths)
            else:
                yield (layout % row).rstrip()

    _write_lines(console, lines)


def _longest_word(cells: list[str], size: Callable[[str], int] = len) -> int:
    return max(map(size, " ".join(cells).split()), default=0)


def _wrap(console: Console, cell: str, width: int) -> list[str]:
    """`cell` in lines of at most `width` terminal cells, broken between words where it can: as
    rich wraps a table's cell, and at C speed where the text is ASCII."""
    if cell_len(cell) <= width:
        return [cell]
    if cell.isascii():
        import textwrap

        return textwrap.wrap(cell, width, break_on_hyphens=False) or [""]
    return [line.plain.rstrip() for line in Text(cell).wrap(console, width, overflow="fold")]


def _laid_out_row(console: Console, row: tuple[str, ...], widths: list[int]) -> Iterator[str]:
    parts = [_wrap(console, cell, width) for cell, width in zip(row, widths, strict=True)]
    for line in range(max(map(len, parts))):
        shown = [part[line] if line < len(part) else "" for part in parts]
        padded = (text + " " * (width - cell_len(text)) for text, width in zip(shown, widths, strict=True))
        yield "  ".join(padded).rstrip()


def _plain_blocks(console: Console, headers: list[str], cells: list[list[str]]) -> None:
    """Each row as its first cell on a line of its own, then `key  value` lines for the other
    non-empty cells, as `vertical()` lays out a table too narrow for its columns."""
    label = max(map(len, headers[1:]), default=0)
    room = max(console.width - 2 - label - GAP, 1)
    indent = " " * (2 + label + GAP)

    def lines() -> Iterator[str]:
        for row in zip(*cells, strict=True):
            yield row[0]
            for header, cell in zip(headers[1:], row[1:], strict=True):
                if cell.strip():
                    parts = _wrap(console, cell, room)
                    yield f"  {header.ljust(label)}  {parts[0]}".rstrip()
                    yield from (indent + part for part in parts[1:])

    _write_lines(console, lines)


def _write_lines(console: Console, lines: Callable[[], Iterator[str]], chunk: int = 2000) -> None:
    """Write `lines()` in pieces of `chunk` lines: never one string of the whole table. A console
    whose file can `defer` (a renderer's: mcpprobe.render.formats) is given the pieces to make as
    they are written, so that neither the lines nor the whole output are ever held at once."""

    pieces = chunks(lines, chunk)
    defer = getattr(console.file, "defer", None)
    if defer is not None:
        defer(pieces)
        return
    for piece in pieces():
        console.file.write(piece)
    console.file.flush()


def render_findings(console: Console, findings: list[Finding], safe: Safe) -> None:
    if not findings:
        return
    console.print()
    console.print(Text("Findings", style="bold"))
    for finding, count in collapsed(findings):
        # Laid out to the width even on a console of one-line messages (stderr, for call, read
        # and get-prompt), where rich would otherwise cut the message at the edge.
        console.print(finding_block(finding, safe, count), soft_wrap=False)


def collapsed(findings: list[Finding]) -> list[tuple[Finding, int]]:
    """Identical findings (same severity, code, kind and message) once each, with how many there were."""
    seen: dict[tuple[Any, ...], int] = {}
    out: list[tuple[Finding, int]] = []
    for finding in findings:
        key = (finding.severity, finding.code, finding.kind, finding.message)
        if key in seen:
            first, count = out[seen[key]]
            out[seen[key]] = (first, count + 1)
        else:
            seen[key] = len(out)
            out.append((finding, 1))
    return out


EVIDENCE = ("id", "cursor", "sample")  # what a finding's detail holds that a reader needs to see


def finding_line(finding: Finding, safe: Safe, count: int = 1) -> Text:
    """One finding: severity, code, kind, the message made inert, and its evidence (the offending
    line, the item's id, the cursor) on the next line, as the JSON's `detail` has them."""
    line = _finding_head(finding)
    line.append("  ")
    body = _finding_body(finding, count, safe, evidence_indent="          ")
    return line.append_text(body)


MESSAGE_COLUMNS = 40  # the fewest columns a finding's message gets beside its code


def finding_block(finding: Finding, safe: Safe, count: int = 1) -> FindingBlock:
    """finding_line laid out for a console: the message and its evidence wrap under themselves,
    never back to the left margin."""
    return FindingBlock(finding, count, safe)


class FindingBlock:
    def __init__(self, finding: Finding, count: int, safe: Safe) -> None:
        self.finding, self.count, self.safe = finding, count, safe

    def __rich_console__(self, console: Console, options: Any) -> Any:
        from rich.padding import Padding
        from rich.table import Table

        head = _finding_head(self.finding)
        body = _finding_body(self.finding, self.count, self.safe)
        # Beside its code when it fits there or keeps 40 columns (as `check` lays out its results),
        # else under it: a message squeezed into a third of a narrow terminal breaks every URL.
        room = options.max_width - head.cell_len - 2
        if room >= MESSAGE_COLUMNS or ("\n" not in body.plain and body.cell_len <= room):
            grid = Table.grid(padding=(0, 2, 0, 0))
            grid.add_column(no_wrap=True)
            grid.add_column(overflow="fold")
            grid.add_row(head, body)
            yield grid
        else:  # a narrow terminal: the message under its code, indented
            yield head
            yield Padding(body, (0, 0, 0, 10))


def _finding_head(finding: Finding) -> Text:
    line = Text("  ")
    severity = finding.severity or Severity.INFO
    line.append(f"{severity.value:<7}", style=SEVERITY_STYLE[severity])
    line.append(f" {finding.code}", style="bold")
    if finding.kind != "server":
        line.append(f" [{finding.kind}]")
    return line


def _finding_body(finding: Finding, count: int, safe: Safe, evidence_indent: str = "") -> Text:
    body = Text(visible(finding.message))
    if count > 1:
        body.append(f" (×{count})", style="bold")
    evidence = [f"{key} {safe(json_dumps(finding.detail[key], ensure_ascii=False), 200)}"
                for key in EVIDENCE if finding.detail.get(key) not in (None, "")]
    if evidence:
        body.append("\n" + evidence_indent + "; ".join(evidence), style="dim")
    return body


def render_timings(console: Console, outcome: Outcome) -> None:
    if not outcome.timings:
        return
    parts = between_parts(timing_parts(outcome), console.width - LABEL_WIDTH)
    console.print()
    console.print(keyed("Timing", Text(parts, style="dim"), style="dim"))


def render_error(err: Console, outcome: Outcome) -> None:
    if outcome.error is None:
        return
    err.print(Text("error: ", style="bold red") + Text(visible(outcome.error.message)))
    if outcome.error.detail.get("hint"):
        err.print(Text("hint: ", style="bold") + Text(visible(str(outcome.error.detail["hint"]))))
    render_stderr_tail(err, outcome.stderr_tail)


def render_stderr_tail(err: Console, tail: list[StderrEntry]) -> None:
    """A stdio server's stderr as kept: its lines, and where some were left out, how many."""
    if not tail:
        return
    err.print(Text(stderr_heading(tail) + ":", style="dim"))
    for entry in tail:
        if isinstance(entry, str):
            err.print(Text("  | " + visible(entry)))
        else:
            err.print(Text("  | " + entry_text(entry), style="dim"))


def render_outcome(out: Console, err: Console, outcome: Outcome, safe: Safe) -> None:
    render_snapshot(out, outcome, safe)
    for kind in LIST_KINDS:
        listing = outcome.listings.get(kind)
        if listing is not None:
            render_listing(out, listing, safe, limit=PROBE_ROWS if outcome.command == "probe" else None,
                           cells=outcome.feed if isinstance(outcome.feed, Cells) else None)
    render_findings(out, outcome.all_findings(), safe)
    render_timings(out, outcome)
    render_error(err, outcome)
    if outcome.error is None:
        render_stderr_tail(err, outcome.stderr_tail)
