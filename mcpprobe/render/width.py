"""How wide the output is, without rich: what `mcpprobe.render.console` gives its consoles, and
what the plain output of a long list (`mcpprobe.render.plain`) needs before deciding whether rich
is needed at all.

On a terminal the terminal's width (rich asks it, and honours COLUMNS). In a pipe `COLUMNS`, else
the width of a terminal behind the pipe (stdin, stderr, or the controlling terminal, as in
`mcpprobe probe ... | less`), else no width at all: lines as long as their content.
"""

from __future__ import annotations

import os
import sys
from typing import Any

UNBOUNDED = 10_000  # a pipe with no terminal behind it: never wrap, and never pad
LABEL_WIDTH = 13  # where values start after "Server", "Capabilities" and the like; a longer label pushes it
GAP = 2  # between two columns: rich's padding of 1 on either side, none at the table's edges


def is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def terminal_columns() -> int | None:
    """The width of a terminal behind a pipe: one of the standard streams', else the controlling one's."""
    for stream in (sys.stdout, sys.stderr, sys.stdin):
        try:
            fd = stream.fileno()
            if os.isatty(fd):
                return os.get_terminal_size(fd).columns or None
        except (AttributeError, ValueError, OSError):
            continue
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        return os.get_terminal_size(fd).columns or None
    except OSError:
        return None
    finally:
        os.close(fd)


def output_width(stream: Any) -> int | None:
    """None on a terminal (rich asks it, and honours COLUMNS); in a pipe, as the module says."""
    if is_terminal(stream):
        return None
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return terminal_columns() or UNBOUNDED
