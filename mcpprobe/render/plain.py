"""The human output of `list` in a pipe with no width, written without rich.

In a pipe with no terminal behind it and no COLUMNS (a script, a CI job, `> file`), the human
output of a long list is plain text: no colours, nothing wrapped, the rows already laid out without
rich (mcpprobe.render.cells). What is left for rich is a few `label  value` lines; loading rich for
them costs more than a 10,000-tool listing's own work (about 30 ms). So when the output is that
simple, it is written here, character for character what rich writes (a test holds the two
together); anything else goes to rich: colours, a width to fit, findings, an error, the server's
stderr, a small table, text beyond ASCII in the rows, a line too long to stay whole.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from mcpprobe.client.catalog import LIST_KINDS
from mcpprobe.render.cells import COLUMNS, TABLE_ROWS, Cells, aligned, chunks, listing_cells, natural_widths
from mcpprobe.render.styled import between_parts, extension_rows, listing_header, plain, snapshot_rows, timing_parts
from mcpprobe.render.width import GAP, LABEL_WIDTH, UNBOUNDED, is_terminal, output_width

if TYPE_CHECKING:
    from mcpprobe.operations.outcome import Outcome
    from mcpprobe.render.cells import Safe

Piece = str | Callable[[], Iterator[str]]  # text, or text made as it is written (the rows)


def is_plain(color: bool, width: int) -> bool:
    """Whether output of this colour and width can be plain: none, and no width to fit."""
    return not color and width >= UNBOUNDED


def may_be_plain(stream: Any) -> bool:
    """Whether output to `stream` can be plain, asked before the run and without rich: never on a
    terminal (whose width and colours only rich tells), else when the pipe has no width."""
    return not is_terminal(stream) and (output_width(stream) or 0) >= UNBOUNDED


def plain_list(outcome: Outcome, color: bool, width: int, safe: Safe) -> list[Piece] | None:
    """`list`'s human stdout as pieces, or None when rich is needed to write it as it should be."""
    if (not is_plain(color, width) or outcome.command != "list" or outcome.snapshot is None
            or outcome.error is not None or outcome.stderr_tail or outcome.all_findings()
            or any(listing.header_params for listing in outcome.listings.values())):
        return None
    pieces: list[Piece] = []
    lines = [_keyed(label, plain(value))
             for label, value in [*snapshot_rows(outcome.snapshot, safe), *extension_rows(outcome, safe)]]
    for kind in LIST_KINDS:
        listing = outcome.listings.get(kind)
        if listing is None:
            continue
        count = len(listing.items)
        if 0 < count <= TABLE_ROWS:
            return None  # a small table: rich's
        lines += ["", plain(listing_header(listing))]
        if count:
            rows = _rows(kind, listing_cells(listing, safe, outcome.feed))
            if rows is None or not _fits(lines, width):
                return None
            pieces += ["\n".join(lines) + "\n", rows]
            lines = []
    if outcome.timings:
        lines += ["", _keyed("Timing", between_parts(timing_parts(outcome), width - LABEL_WIDTH))]
    if not _fits(lines, width):
        return None
    if lines:
        pieces.append("\n".join(lines) + "\n")
    return pieces


def _fits(lines: list[str], width: int) -> bool:
    """Whether no line is long enough for rich to wrap it (a character beyond ASCII counted as the
    two terminal cells it may take)."""
    return all(len(line) * (1 if line.isascii() else 2) < width - LABEL_WIDTH
               for text in lines for line in text.split("\n"))


def _keyed(label: str, value: str) -> str:
    """`label` then `value`, as mcpprobe.render.console.keyed lays it out with nothing to wrap: the
    value's further lines under its first."""
    indent = max(LABEL_WIDTH - 1, len(label)) + 1
    first, *more = value.split("\n")
    return "\n".join([f"{label.ljust(indent)}{first}".rstrip(), *((" " * indent + line).rstrip() for line in more)])


def _rows(kind: str, cells: Cells) -> Callable[[], Iterator[str]] | None:
    """The rows at their natural widths, as the rich renderer's plain rows are when they fit; None
    when a cell is beyond ASCII (measured in terminal cells there) or the rows are wider than no
    width at all."""
    if not all("".join(column).isascii() for column in cells.columns):
        return None
    headers = [field.header for field in COLUMNS[kind]]
    widths = natural_widths(headers, cells.columns)
    if sum(widths) > UNBOUNDED - GAP * (len(widths) - 1):
        return None
    return chunks(aligned(headers, cells.columns, widths))
