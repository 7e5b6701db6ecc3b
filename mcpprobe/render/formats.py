"""Every output format of every command behind one interface (mcpprobe.render.interface): the
dispatch from a format and a subject to the renderer's modules.

`renderer(fmt)` gives the one renderer of a format. Renderers are pure: they write no file and no
stream, and add no finding; the command prints what they return (mcpprobe.cli.output; files are
written by the operations, mcpprobe.operations.saving). A renderer asked for a subject its format
does not apply to raises `NotOffered`, which the --format choices (`OFFERED`) make unreachable
(tests/unit/render/test_golden.py walks every pair). Standard library only at import time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, assert_never

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
    Renderer,
    Servers,
    Subject,
    View,
    WatchEnded,
    WatchEvent,
)

if TYPE_CHECKING:
    from rich.console import Console

    from mcpprobe.fleet.probe import Report
    from mcpprobe.operations.outcome import InvokeOutcome, Outcome
    from mcpprobe.render.cells import Safe
    from mcpprobe.watch import WatchResult


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
        case Format.SARIF:
            return sarif
        case _:
            assert_never(fmt)


class Pieces:
    """A console's file that keeps what is written as the pieces written, in order, and pieces to
    be made only as they are read (`defer`: the rows of a long list, a chunk at a time). Read as
    often as wanted; never one string of the whole output, which for a long list is megabytes
    held once more beside the table's cells."""

    encoding = "utf-8"

    def __init__(self, pieces: Iterable[str | Callable[[], Iterator[str]]] = ()) -> None:
        self._pieces: list[str | Callable[[], Iterator[str]]] = list(pieces)

    def write(self, text: str) -> int:
        self._pieces.append(text)
        return len(text)

    def defer(self, pieces: Callable[[], Iterator[str]]) -> None:
        self._pieces.append(pieces)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def __iter__(self) -> Iterator[str]:
        for piece in self._pieces:
            if isinstance(piece, str):
                yield piece
            else:
                yield from piece()


def _safe(view: View) -> Safe:
    """Server text made inert for this rendering, with the secrets the view names masked."""
    from mcpprobe.render.cells import Safe

    return Safe(view.secrets)


def _stderr(view: View, write: Callable[[Console], None]) -> str:
    from mcpprobe.render.console import buffered_console

    err, text = buffered_console(view, messages=True)
    write(err)
    return text.getvalue()


# ----- human -----


def human(subject: Subject, view: View) -> Rendered:
    match subject:
        case ProbeRun(reports, many):
            return _probe_human(reports, many, view)
        case Checked(reports, many, every):
            return _check_human(reports, many, view, every)
        case Listed(outcome):
            from mcpprobe.render.plain import plain_list

            simple = plain_list(outcome, view.color, view.width, _safe(view))
            if simple is not None:  # written without rich: mcpprobe.render.plain says when
                return Rendered(Pieces(simple))
            from mcpprobe.render.console import buffered_console, console_into
            from mcpprobe.render.human import render_outcome

            pieces = Pieces()
            err, err_text = buffered_console(view, messages=True)
            render_outcome(console_into(pieces, view), err, outcome, _safe(view))
            return Rendered(pieces, err_text.getvalue())
        case Invoked():
            return _invoked_human(subject, view)
        case WatchEvent():
            from mcpprobe.render.console import buffered_console
            from mcpprobe.render.watch import render_event

            out, out_text = buffered_console(view)
            render_event(out, subject, time.time() if view.now is None else view.now, _safe(view))
            return Rendered([out_text.getvalue()])
        case WatchEnded(result):
            return Rendered([], _stderr(view, lambda err: _watch_ended(err, result)))
        case Loaded(outcome, named, merged):
            from mcpprobe.render.console import buffered_console
            from mcpprobe.render.load import render_load

            out, out_text = buffered_console(view)
            err, err_text = buffered_console(view, messages=True)
            if outcome.interrupted:
                _interrupted(err)
            render_load(out, err, outcome, _safe(view), named=named, merged=merged)
            return Rendered([out_text.getvalue()], err_text.getvalue())
        case Interrupted():
            return Rendered([], _stderr(view, _interrupted))
        case Servers(found):
            from mcpprobe.render.console import buffered_console
            from mcpprobe.render.fleet import render_servers

            out, out_text = buffered_console(view)
            render_servers(out, found, _safe(view))
            return Rendered([out_text.getvalue()])
        case _:
            assert_never(subject)


def _probe_human(reports: list[Report], many: bool, view: View) -> Rendered:
    from mcpprobe.render.console import buffered_console

    out, out_text = buffered_console(view)
    err, err_text = buffered_console(view, messages=True)
    safe = _safe(view)
    if many:
        from mcpprobe.render.fleet import render_fleet

        render_fleet(out, reports, safe)
    else:
        from mcpprobe.render.fleet import render_extras
        from mcpprobe.render.human import render_outcome

        render_outcome(out, err, reports[0].outcome, safe)
        render_extras(out, reports[0], safe)
    _snapshot_errors(err, reports, safe)
    return Rendered([out_text.getvalue()], err_text.getvalue())


def _check_human(reports: list[Report], many: bool, view: View, every: bool = False) -> Rendered:
    from mcpprobe.render.checks import render_check, render_check_fleet
    from mcpprobe.render.console import buffered_console

    out, out_text = buffered_console(view)
    err, err_text = buffered_console(view, messages=True)
    if many:
        render_check_fleet(out, reports, _safe(view))
    else:
        render_check(out, err, reports[0], _safe(view), every=every)
    return Rendered([out_text.getvalue()], err_text.getvalue())


def _invoked_human(subject: Invoked, view: View) -> Rendered:
    """The result on stdout: on a terminal made inert and summarised; in a pipe, text exactly as
    sent and blobs decoded, as bytes (`read ... > file`). Everything else on stderr."""
    from mcpprobe.render.console import buffered_console
    from mcpprobe.render.invoke import render_call, render_prompt, render_read

    out, buffer = buffered_console(view)
    err, err_text = buffered_console(view, messages=True)
    pieces: list[str | bytes] = []

    def data(raw: bytes) -> None:
        pieces.append(buffer.getvalue())
        buffer.seek(0)
        buffer.truncate()
        pieces.append(raw)

    outcome, safe = subject.outcome, _safe(view)
    if outcome.interrupted:
        _interrupted(err)
    match outcome.command:
        case "call":
            render_call(out, err, outcome, safe, terminal=view.terminal)
        case "get-prompt":
            render_prompt(out, err, outcome, safe, terminal=view.terminal)
        case _:
            render_read(out, err, outcome, safe, written=subject.written, terminal=view.terminal, data=data)
    _save_error(err, outcome)
    pieces.append(buffer.getvalue())
    return Rendered([piece for piece in pieces if piece], err_text.getvalue())


def _save_error(err: Console, outcome: InvokeOutcome) -> None:
    """An output file (-o, --save) not written, said last on stderr in every format (exit 2)."""
    if outcome.save_error:
        from rich.text import Text

        from mcpprobe.safety.sanitize import visible

        err.print(Text("error: ", style="bold red") + Text(visible(outcome.save_error)))


def _watch_ended(err: Console, result: WatchResult | None) -> None:
    if result is None:
        _interrupted(err)
        return
    if result.error is not None:
        from rich.text import Text

        from mcpprobe.safety.sanitize import visible

        err.print(Text(f"error: {visible(result.error.message)}", style="bold red"))
        from mcpprobe.wire.stderrlog import entry_text

        for entry in result.stderr_tail if result.exit_code in (4, 5, 6) else []:
            err.print(Text(f"  server stderr: {visible(entry_text(entry))}", style="dim"))


def _interrupted(err: Console) -> None:
    err.print("interrupted", style="yellow")  # the command's exit code (130) says the rest


def _snapshot_errors(err: Console, reports: list[Report], safe: Safe) -> None:
    """A snapshot not saved, on stderr in every format: the report on stdout may be going to a file."""
    from rich.text import Text

    for report in reports:
        if report.snapshot_error:
            err.print(Text(f"{safe(report.member.label)}: snapshot {safe(report.snapshot_error)}", style="bold red"))


def _errors(reports: list[Report], view: View, *, many: bool) -> str:
    """What a machine format leaves for people, on stderr: each server's error, a snapshot not saved."""
    if not any(report.outcome.error is not None or report.snapshot_error for report in reports):
        return ""  # and rich is not even loaded: most of the rendering time of a JSON document
    from rich.text import Text

    from mcpprobe.render.console import buffered_console
    from mcpprobe.render.human import render_error

    err, text = buffered_console(view, messages=True)
    safe = _safe(view)
    for report in reports:
        if many and report.outcome.error is not None:
            err.print(Text(f"{safe(report.member.label)}: error: ", style="bold red")
                      + Text(safe(report.outcome.error.message)))
        elif not many:
            render_error(err, report.outcome)
    _snapshot_errors(err, reports, safe)
    return text.getvalue()


def _outcome_errors(outcome: Outcome, view: View) -> str:
    """A document's error for people, on stderr; nothing (and no rich) when all went well."""
    if outcome.error is None and not getattr(outcome, "save_error", None) and not outcome.interrupted:
        return ""
    from mcpprobe.render.human import render_error

    def write(err: Console) -> None:
        if outcome.interrupted:
            _interrupted(err)
        render_error(err, outcome)
        if getattr(outcome, "save_error", None):
            _save_error(err, outcome)  # type: ignore[arg-type]

    return _stderr(view, write)


# ----- the machine formats -----


def json(subject: Subject, view: View) -> Rendered:
    """One JSON document (mcpprobe.render.jsondoc builds them all), or one line per watch event."""
    from mcpprobe.render import jsondoc

    match subject:
        case ProbeRun(reports, many):
            docs = [jsondoc.report_document(report) for report in reports]
            document: Any = docs if many else docs[0]  # a fleet is a list of documents
            return Rendered(jsondoc.pieces(document, pretty=view.terminal), _errors(reports, view, many=many))
        case Checked(reports, many):
            docs = [jsondoc.check_document(report) for report in reports]
            return Rendered(jsondoc.pieces(docs if many else docs[0], pretty=view.terminal),
                            _errors(reports, view, many=many))
        case Listed(outcome):
            return Rendered(jsondoc.pieces(jsondoc.document(outcome), pretty=view.terminal),
                            _outcome_errors(outcome, view))
        case Invoked(outcome):
            return Rendered(jsondoc.pieces(jsondoc.invoke_document(outcome), pretty=view.terminal),
                            _outcome_errors(outcome, view))
        case WatchEvent(event):
            return Rendered([jsondoc.event_line(event) + "\n"])  # NDJSON: compact, even on a terminal
        case WatchEnded(result):
            if result is not None and result.error is None:
                return Rendered([])
            return Rendered([], _stderr(view, lambda err: _watch_ended(err, result)))
        case Loaded(outcome, named, merged):
            document = merged if merged is not None else jsondoc.load_document(outcome, named)
            return Rendered(jsondoc.pieces(document, pretty=view.terminal),
                            _outcome_errors(outcome, view))
        case Interrupted(command):
            return Rendered(jsondoc.pieces(jsondoc.interrupted_document(command), pretty=view.terminal),
                            _stderr(view, _interrupted))
        case Servers(found):
            return Rendered(jsondoc.pieces(jsondoc.servers_document(found), pretty=view.terminal))
        case _:
            assert_never(subject)


def _interrupted_report(fmt: Format, subject: Interrupted, view: View) -> Rendered:
    """A report on servers that were interrupted before any had a result: no report, and a word
    on stderr. (A fleet interrupted midway is reported: the servers not done as interrupted.)"""
    if subject.command not in ("probe", "check", "load") or fmt not in OFFERED[subject.command]:
        raise NotOffered(fmt, subject)
    return Rendered([], _stderr(view, _interrupted))


def junit(subject: Subject, view: View) -> Rendered:
    if isinstance(subject, Interrupted):
        return _interrupted_report(Format.JUNIT, subject, view)
    if isinstance(subject, Checked):
        from mcpprobe.render.junit import render_checks

        return Rendered([render_checks(subject.reports) + "\n"], _errors(subject.reports, view, many=subject.many))
    if not isinstance(subject, ProbeRun):
        raise NotOffered(Format.JUNIT, subject)
    from mcpprobe.render.junit import render

    return Rendered([render(subject.reports) + "\n"], _errors(subject.reports, view, many=subject.many))


def openmetrics(subject: Subject, view: View) -> Rendered:
    if isinstance(subject, Interrupted):
        return _interrupted_report(Format.OPENMETRICS, subject, view)
    now = time.time() if view.now is None else view.now
    if isinstance(subject, Loaded):
        from mcpprobe.render.load import render_openmetrics

        return Rendered([render_openmetrics(subject.outcome, now=now, named=subject.named) + "\n"],
                        _outcome_errors(subject.outcome, view))
    if not isinstance(subject, ProbeRun):
        raise NotOffered(Format.OPENMETRICS, subject)
    from mcpprobe.render.openmetrics import render

    return Rendered([render(subject.reports, now=now) + "\n"], _errors(subject.reports, view, many=subject.many))


def html(subject: Subject, view: View) -> Rendered:
    if isinstance(subject, Interrupted):
        return _interrupted_report(Format.HTML, subject, view)
    from datetime import UTC, datetime

    when = datetime.fromtimestamp(time.time() if view.now is None else view.now, UTC)
    if isinstance(subject, Loaded):
        from mcpprobe.render.load import render_load_html

        return Rendered([render_load_html(subject.outcome, redact=view.secrets, generated=when, named=subject.named)
                         + "\n"],
                        _outcome_errors(subject.outcome, view))
    if not isinstance(subject, ProbeRun | Checked):
        raise NotOffered(Format.HTML, subject)
    from mcpprobe.render.html import render_html

    return Rendered([render_html(subject.reports, redact=view.secrets, generated=when) + "\n"],
                    _errors(subject.reports, view, many=subject.many))


def sarif(subject: Subject, view: View) -> Rendered:
    if isinstance(subject, Interrupted):
        return _interrupted_report(Format.SARIF, subject, view)
    if isinstance(subject, Checked):
        from mcpprobe.render.sarif import render_checks

        return Rendered([render_checks(subject.reports) + "\n"], _errors(subject.reports, view, many=subject.many))
    if not isinstance(subject, ProbeRun):
        raise NotOffered(Format.SARIF, subject)
    from mcpprobe.render.sarif import render_probe

    return Rendered([render_probe(subject.reports) + "\n"], _errors(subject.reports, view, many=subject.many))
