"""What a command prints and how: a subject rendered and written through the run's secrets
redactor (`show`, `write_rendered`), the `View` of stdout and stderr (`view_for`), and what is
shown live on a terminal's stderr while the operation runs (spinners, `stderr_console`).

The renderers (mcpprobe.render) return text and never write; this is the one place their text
goes out. Standard library only at import time: rich and the renderers are loaded when something
is printed, so a command's `--help` loads none of them.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, TextIO, cast

from mcpprobe.exitcodes import ExitCode

if TYPE_CHECKING:  # names for the annotations only: importing them would load the SDK at --help
    from rich.console import Console

    from mcpprobe.cli.invocation import Invocation
    from mcpprobe.operations.outcome import Outcome
    from mcpprobe.render.interface import Format, Rendered, Screen, Subject, View
    from mcpprobe.render.progress import FleetSpinner, PhaseSpinner
    from mcpprobe.safety.redact import Redactor


def emit_outcome(outcome: Outcome | None, as_json: bool, command: str, redactor: Redactor) -> int:
    """Print a `list` (or `probe`) outcome, or an interruption (None), in human or JSON form; its exit code."""
    from mcpprobe.render.interface import Format, Interrupted, Listed

    show(Interrupted(command) if outcome is None else Listed(outcome), Format.JSON if as_json else Format.HUMAN,
         redactor)
    return ExitCode.INTERRUPTED if outcome is None else int(outcome.exit_code)


def show(subject: Subject, fmt: Format, redactor: Redactor) -> None:
    """Render `subject` in `fmt` for this process's stdout and stderr, and write it, masking `redactor`'s secrets."""
    from mcpprobe.render.formats import renderer

    write_rendered(renderer(fmt)(subject, view_for(fmt, redactor)), redactor)


def write_rendered(rendered: Rendered, redactor: Redactor) -> None:
    """Print what a renderer returned: stdout (text through the secrets redactor, even a secret
    split across two pieces; decoded blobs as the bytes they are), flushed now, then stderr.

    Now, not at exit: a stdio server may still be shutting down, and the reader of a pipe
    (`| jq`) should not wait for that."""
    from mcpprobe.safety.redact import RedactingStream, SplitWrites

    stdout = RedactingStream(sys.stdout, redactor)
    masked = SplitWrites(redactor)
    for piece in rendered.stdout:
        if isinstance(piece, str):
            stdout.write(masked.feed(piece))
            continue
        stdout.write(masked.end())
        stdout.flush()
        binary = getattr(sys.stdout, "buffer", None)
        if binary is None:  # a text-only stream: say so rather than corrupt it
            stdout.write(f"[blob: {len(piece)} bytes]\n")
        else:
            binary.write(piece)
            binary.flush()
    stdout.write(masked.end())
    stdout.flush()
    if rendered.stderr:
        stderr = RedactingStream(sys.stderr, redactor)
        stderr.write(rendered.stderr)
        stderr.flush()


def view_for(fmt: Format, redactor: Redactor) -> View:
    """How stdout and stderr show text: a terminal's width and colours; in a pipe, plain, as wide
    as COLUMNS or a terminal behind the pipe allows, else unbounded (mcpprobe.render.console).
    stderr's is looked at only when something is shown on it: a document alone loads no rich.
    The renderer masks `redactor`'s secrets before it cuts or lays out what the server sent."""
    from mcpprobe.render.interface import Format, View

    err = functools.partial(_screen, sys.stderr)
    if not sys.stdout.isatty() and fmt is not Format.HUMAN:
        return View(stderr=err, redactor=redactor)  # the width is for people
    out = _screen(sys.stdout)
    return View(width=out.width, color=out.color, terminal=sys.stdout.isatty(), stderr=err, redactor=redactor)


def _screen(stream: TextIO) -> Screen:
    from mcpprobe.render.interface import Screen

    if not stream.isatty():
        from mcpprobe.render.width import output_width

        return Screen(width=output_width(stream) or 160)
    from rich.console import Console

    console = Console(file=stream)
    return Screen(width=console.width, color=console.color_system is not None and not console.no_color)


def phase_spinner(inv: Invocation, label: str) -> PhaseSpinner | None:
    """A spinner naming the phase on stderr, when stderr is a terminal and the output is for a
    person; None otherwise, and when something else writes to stderr as it goes (--trace -,
    --server-stderr live)."""
    if not _spinning(inv):
        return None
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.progress import PhaseSpinner

    return PhaseSpinner(_spinner_console(inv), label, Safe(inv.redactor))


def fleet_spinner(inv: Invocation, count: int) -> FleetSpinner | None:
    """A fleet's spinner: how many of its `count` servers were probed so far; as `phase_spinner`,
    and not with -v either (which says the same on stderr)."""
    if not _spinning(inv) or inv.output.verbose:
        return None
    from mcpprobe.render.cells import Safe
    from mcpprobe.render.progress import FleetSpinner

    return FleetSpinner(_spinner_console(inv), count, Safe(inv.redactor))


def _spinning(inv: Invocation) -> bool:
    output = inv.output
    return (output.human and sys.stderr.isatty() and output.trace != "-"
            and inv.settings.server_stderr != "live")


def _spinner_console(inv: Invocation) -> Console:
    return stderr_console(inv.redactor)


def stderr_console(redactor: Redactor) -> Console:
    """stderr through the user's secrets redactor, for what is shown live: spinners, the preview
    and confirmation of a tools/call, progress and task status (results are rendered after the run)."""
    from mcpprobe.render.console import make_console
    from mcpprobe.safety.redact import RedactingStream

    # A text stream in all but name (write, flush, isatty): what rich's Console writes to.
    return make_console(cast("TextIO", RedactingStream(sys.stderr, redactor)), messages=True)

