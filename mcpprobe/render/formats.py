"""Every output format of a probe behind one interface.

`renderer(fmt)` gives the one renderer of a format; each has the same signature: the reports of a
run and a `View` (columns, colour, a terminal or not, the clock) in, the text for stdout (in
pieces, so that a document of 100,000 items is never one string) and for stderr out. Renderers
are pure: they write no file and no stream, and add no finding; the command prints what they return.
Standard library only at import time: `--help` loads this module for the --format choices.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, assert_never

if TYPE_CHECKING:
    from rich.console import Console

    from mcpprobe.fleet import Report


class Format(StrEnum):
    """Every output format. Each command offers the ones that apply to what it prints."""

    HUMAN = "human"
    JSON = "json"
    JUNIT = "junit"
    OPENMETRICS = "openmetrics"
    HTML = "html"


@dataclass(frozen=True)
class View:
    """Where the text will be shown: how wide, whether in colour, and the time of the run."""

    width: int = 160
    color: bool = False
    terminal: bool = False  # stdout is a terminal: JSON indented for a person, else compact
    now: float | None = None  # seconds since the epoch; None: the time of rendering


@dataclass(frozen=True)
class Rendered:
    stdout: Sequence[str] | Iterator[str]  # pieces, joined by the writer
    stderr: str = ""

    def text(self) -> str:
        """All of stdout at once (tests; a small document)."""
        return "".join(self.stdout)


class Renderer(Protocol):
    def __call__(self, reports: list[Report], view: View, *, many: bool) -> Rendered: ...


def renderer(fmt: Format) -> Renderer:
    """The renderer of `fmt`. A new format fails the type check here until it has one."""
    match fmt:
        case Format.HUMAN:
            return human
        case Format.JSON:
            return json
        case Format.JUNIT:
            return junit
        case Format.OPENMETRICS:
            return openmetrics
        case Format.HTML:
            return html
        case _:
            assert_never(fmt)


def _console(view: View, *, messages: bool = False) -> tuple[Console, io.StringIO]:
    from mcpprobe.render.console import _Console

    buffer = io.StringIO()
    # Lines never end in padding (mcpprobe.render.console), in a pipe as on a terminal.
    console = _Console(file=buffer, width=view.width, highlight=False, force_terminal=view.color,
                       color_system="standard" if view.color else None, legacy_windows=False,
                       soft_wrap=messages)
    return console, buffer


def human(reports: list[Report], view: View, *, many: bool) -> Rendered:
    out, out_text = _console(view)
    err, err_text = _console(view, messages=True)
    if many:
        from mcpprobe.render.fleet import render_fleet

        render_fleet(out, reports)
    else:
        from mcpprobe.render.fleet import render_extras
        from mcpprobe.render.human import render_outcome

        render_outcome(out, err, reports[0].outcome)
        render_extras(out, reports[0])
    _snapshot_errors(err, reports)
    return Rendered([out_text.getvalue()], err_text.getvalue())


def _snapshot_errors(err: Console, reports: list[Report]) -> None:
    """A snapshot not saved, on stderr in every format: the report on stdout may be going to a file."""
    from rich.text import Text

    from mcpprobe.render.human import safe

    for report in reports:
        if report.snapshot_error:
            err.print(Text(f"{safe(report.member.label)}: snapshot {safe(report.snapshot_error)}", style="bold red"))


def _errors(reports: list[Report], view: View, *, many: bool) -> str:
    """What a machine format leaves for people, on stderr: each server's error, a snapshot not saved."""
    if not any(report.outcome.error is not None or report.snapshot_error for report in reports):
        return ""  # and rich is not even loaded: most of the rendering time of a JSON document
    from rich.text import Text

    from mcpprobe.render.human import render_error, safe

    err, text = _console(view, messages=True)
    for report in reports:
        if many and report.outcome.error is not None:
            err.print(Text(f"{safe(report.member.label)}: error: ", style="bold red")
                      + Text(safe(report.outcome.error.message)))
        elif not many:
            render_error(err, report.outcome)
    _snapshot_errors(err, reports)
    return text.getvalue()


def json(reports: list[Report], view: View, *, many: bool) -> Rendered:
    from mcpprobe.render.jsondoc import pieces, report_document

    docs = [report_document(report) for report in reports]
    document: Any = docs if many else docs[0]  # a fleet is a list of documents
    return Rendered(pieces(document, pretty=view.terminal), _errors(reports, view, many=many))


def junit(reports: list[Report], view: View, *, many: bool) -> Rendered:
    from mcpprobe.render.junit import render

    return Rendered([render(reports) + "\n"], _errors(reports, view, many=many))


def openmetrics(reports: list[Report], view: View, *, many: bool) -> Rendered:
    from mcpprobe.render.openmetrics import render

    now = time.time() if view.now is None else view.now
    return Rendered([render(reports, now=now) + "\n"], _errors(reports, view, many=many))


def html(reports: list[Report], view: View, *, many: bool) -> Rendered:
    from datetime import UTC, datetime

    from mcpprobe.render.html import render_html

    when = datetime.fromtimestamp(time.time() if view.now is None else view.now, UTC)
    return Rendered([render_html(reports, generated=when) + "\n"], _errors(reports, view, many=many))
