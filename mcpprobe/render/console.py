"""The rich consoles mcpprobe writes through, and tables that fit the width they are given.

A console on a terminal takes the terminal's width. In a pipe it takes `COLUMNS`, else the width
of a terminal behind the pipe (stdin, stderr, or the controlling terminal, as in
`mcpprobe probe ... | less`), else no width at all: lines as long as their content. No line ever
ends in padding. Messages on stderr are not wrapped by mcpprobe: one message, one line, which the
terminal wraps where it likes.

A table too wide for the line leaves out the columns empty in every row. One that still does not
fit with every identifier whole and every word of prose whole is shown as one block of
`key  value` lines per row instead.
"""

from __future__ import annotations

import io
import re
import sys
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from mcpprobe.render.width import GAP, LABEL_WIDTH, UNBOUNDED, output_width

if TYPE_CHECKING:
    from mcpprobe.render.interface import View

__all__ = ["GAP", "LABEL_WIDTH", "UNBOUNDED", "Column", "buffered_console", "console_into", "fit_widths",
           "fitted_table", "keyed", "make_console", "output_width", "vertical"]

_STYLE = re.compile(r"\x1b\[[0-9;]*m")
_TRAILING_BLANKS = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)+(?=\n)")


def _keep_styles(match: re.Match[str]) -> str:
    return "".join(_STYLE.findall(match.group()))


class _Console(Console):
    """A rich Console whose lines never end in blanks (table cells are padded to their column);
    the style codes among the blanks are kept, so colours still end where they did."""

    def _render_buffer(self, buffer: Any) -> str:
        return _TRAILING_BLANKS.sub(_keep_styles, super()._render_buffer(buffer))


def make_console(file: IO[str] | None = None, *, messages: bool = False) -> Console:
    """A console over `file` (stdout when None). `messages`: a stream of diagnostics, whose lines
    rich must not break (soft wrap); tables and progress on it still take the width."""
    stream = file if file is not None else sys.stdout
    return _Console(file=stream, highlight=False, width=output_width(stream), soft_wrap=messages)


def buffered_console(view: View, *, messages: bool = False) -> tuple[Console, io.StringIO]:
    """A renderer's console into a buffer: stdout's, or with `messages` stderr's (one message, one line)."""
    buffer = io.StringIO()
    return console_into(buffer, view, messages=messages), buffer


def console_into(file: Any, view: View, *, messages: bool = False) -> Console:
    """A renderer's console into `file`, as wide and as coloured as the view's stdout (or stderr)."""
    from mcpprobe.render.interface import Screen

    screen = view.err if messages else Screen(view.width, view.color)
    return _Console(file=file, width=screen.width, highlight=False, force_terminal=screen.color,
                    color_system="standard" if screen.color else None, legacy_windows=False,
                    soft_wrap=messages)


@dataclass(frozen=True)
class Column:
    """A table column. An identifier (name, URI, version, count) is never broken across lines;
    prose may wrap between words, never inside one."""

    header: str
    identifier: bool = False
    style: str = ""




def _natural(text: Text) -> int:
    return max((cell_len(line) for line in text.plain.splitlines()), default=0)


def _longest_word(text: Text) -> int:
    return max((cell_len(word) for word in text.plain.split()), default=0)


def column_widths(columns: list[Column], rows: list[list[Text]], width: int) -> list[int] | None:
    """Widths that fit `width` with no identifier, header or word cut, or None when there are none:
    every column starts at its narrowest whole width, and the room left goes to the columns
    whose content is wider, the one missing the largest share of its width first."""
    naturals, minimums = _measures(columns, rows)
    return fit_widths(naturals, minimums, width - GAP * (len(columns) - 1))


def _measures(columns: list[Column], rows: list[list[Text]]) -> tuple[list[int], list[int]]:
    """Each column's natural width (its widest line) and its narrowest whole width."""
    naturals, minimums = [], []
    for i, column in enumerate(columns):
        cells = [Text(column.header), *(row[i] for row in rows)]
        natural = max(_natural(cell) for cell in cells)
        naturals.append(natural)
        words = max(_longest_word(cell) for cell in cells[1:]) if rows else 0
        minimums.append(natural if column.identifier else max(cell_len(column.header), words))
    return naturals, minimums


def fit_widths(naturals: list[int], minimums: list[int], room: int) -> list[int] | None:
    """Column widths that fit `room` (the line less the gaps), or None: every column at least its
    minimum, the room left going to the one missing the largest share of its natural width."""
    if sum(naturals) <= room:
        return naturals
    if sum(minimums) > room:
        return None
    widths = list(minimums)
    for _ in range(room - sum(widths)):
        wanting = max(range(len(widths)), key=lambda i: (naturals[i] - widths[i]) / naturals[i])
        if naturals[wanting] <= widths[wanting]:
            break
        widths[wanting] += 1
    return widths


def without_empty_columns(columns: list[Column], rows: list[list[Text]],
                          width: int) -> tuple[list[Column], list[list[Text]]]:
    """The columns (and cells) to show in `width`: all of them when they fit whole, else without
    those empty in every row (the first, each row's identity, always stays), which would take
    room from the others for their header alone."""
    empty = {i for i in range(1, len(columns)) if rows and not any(row[i].plain.strip() for row in rows)}
    if not empty or sum(_measures(columns, rows)[0]) + GAP * (len(columns) - 1) <= width:
        return columns, rows
    keep = [i for i in range(len(columns)) if i not in empty]
    return [columns[i] for i in keep], [[row[i] for i in keep] for row in rows]


def fitted_table(console: Console, columns: list[Column], rows: list[list[Text]]) -> RenderableType:
    """A table of `rows` as wide as the console allows, or one block per row when it cannot fit.
    A column empty in every row is left out when the table must be narrowed to fit."""
    columns, rows = without_empty_columns(columns, rows, console.width)
    widths = column_widths(columns, rows, console.width)
    if widths is None:
        return vertical(columns, rows)
    table = Table(show_edge=False, box=None, pad_edge=False, header_style="dim")
    for column, width in zip(columns, widths, strict=True):
        table.add_column(column.header, width=width, no_wrap=column.identifier, overflow="fold", style=column.style)
    for row in rows:
        table.add_row(*row)
    return table


def vertical(columns: list[Column], rows: list[list[Text]]) -> RenderableType:
    """Each row as its first cell on a line of its own, then `key  value` lines for the other
    non-empty cells. A value wraps between words, and folds only a word wider than the line."""
    label_width = max(cell_len(column.header) for column in columns[1:]) if len(columns) > 1 else 0
    blocks: list[RenderableType] = []
    for row in rows:
        head = row[0].copy()
        if columns[0].style:
            head.stylize(columns[0].style)
        blocks.append(head)
        grid = Table.grid(padding=(0, GAP, 0, 0))
        grid.add_column(no_wrap=True, style="dim", min_width=label_width)
        grid.add_column(overflow="fold")
        for column, cell in zip(columns[1:], row[1:], strict=True):
            if cell.plain.strip():
                value = cell.copy()
                if column.style:
                    value.stylize(column.style)
                grid.add_row(Text(column.header), value)
        if grid.row_count:
            blocks.append(Padding(grid, (0, 0, 0, 2)))
    return Group(*blocks)




def keyed(label: str, value: Text, style: str = "bold") -> RenderableType:
    """`label` then `value`; a value too long for the line wraps between words, under itself."""
    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(min_width=LABEL_WIDTH - 1, no_wrap=True, style=style)
    grid.add_column(overflow="fold")
    grid.add_row(Text(label), value)
    return grid
