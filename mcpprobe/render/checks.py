"""`check` for people: what was negotiated, one line per check, evidence under what did not pass.

Every string from the server is already inert in the results (mcpprobe.check.context); it goes
into `Text` objects, never through rich's markup parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from mcpprobe.check.catalogue import Status
from mcpprobe.render.human import render_error, render_findings, render_snapshot, render_stderr_tail

if TYPE_CHECKING:
    from mcpprobe.render.cells import Safe

STYLE = {Status.PASS: "green", Status.FAIL: "bold red", Status.WARN: "yellow", Status.SKIPPED: "dim",
         Status.NA: "dim", Status.ERROR: "bold magenta"}
SHOWN_EVIDENCE = 3  # the last exchanges of a check, where its verdict was decided


def summary_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[s.value]} {s.value}" for s in Status if counts.get(s.value))


def render_check(out: Console, err: Console, report: Any, safe: Safe) -> None:
    outcome = report.outcome
    render_snapshot(out, outcome, safe)
    results = getattr(outcome, "results", [])
    if results:
        out.print()
    width = max((len(result.check.id) for result in results), default=0)
    # The message and the evidence wrap under themselves, never back to the first column. Where
    # fewer than 40 columns would be left for the message (a 60-column terminal), it goes on its
    # own lines under the check's id.
    lead = 8 + width + 2 + 7
    narrow = out.width - lead < 40
    indent = 8 if narrow else lead
    for result in results:
        line = Text(f"{result.status.value:<7} ", style=STYLE[result.status])
        line.append(result.check.id if narrow else result.check.id.ljust(width),
                    style="bold" if result.status in (Status.FAIL, Status.WARN) else None)
        line.append(f"  {result.level.value:<6} " if not narrow else f"  {result.level.value}", style="dim")
        message = Text(safe(result.message, 400), style="dim" if result.status in (Status.SKIPPED, Status.NA) else "")
        if narrow:
            out.print(line)
            out.print(Padding(message, (0, 0, 0, indent)))
        else:
            out.print(_hanging(line, message, lead))
        if result.status in (Status.FAIL, Status.WARN, Status.ERROR):
            earlier = len(result.evidence) + result.omitted - SHOWN_EVIDENCE
            if earlier > 0:
                out.print(Padding(Text(f"…({_earlier(earlier, len(result.evidence) - SHOWN_EVIDENCE)})",
                                       style="dim"), (0, 0, 0, indent)))
            for item in result.evidence[-SHOWN_EVIDENCE:]:
                out.print(Padding(Text(f"sent {safe(item.get('sent', ''), 200)}", style="dim"), (0, 0, 0, indent)))
                if "received" in item:
                    out.print(Padding(Text(f"got  {safe(item['received'], 200)}", style="dim"), (0, 0, 0, indent)))
            out.print(Padding(Text(result.spec_url, style="dim cyan", overflow="fold"), (0, 0, 0, indent)))
    if results:
        out.print()
        out.print(Text(f"{len(results)} check{'' if len(results) == 1 else 's'}: {summary_text(outcome.counts())}"))
    # What the session found besides the checks (text that could attack a terminal, a server that
    # disagrees with its server.json, ...): shown as `probe` shows it; the exit code stays the checks'.
    error = outcome.error.message if outcome.error is not None else None
    render_findings(out, [f for f in outcome.all_findings() if f.message != error], safe)
    if outcome.error is not None:
        render_error(err, outcome)  # with the server's stderr tail
    else:
        render_stderr_tail(err, outcome.stderr_tail)


def _hanging(head: Text, message: Text, lead: int) -> Table:
    """`head` in its fixed columns, then `message` wrapping in the rest of the line."""
    grid = Table.grid()
    grid.add_column(width=lead, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(head, message)
    return grid


def render_check_fleet(out: Console, reports: list[Any], safe: Safe) -> None:
    width = max((len(report.member.label) for report in reports), default=0)
    for report in reports:
        outcome = report.outcome
        line = Text(safe(report.member.label, 60).ljust(width) + "  ", style="bold")
        if outcome.error is not None:
            line.append(f"error: {safe(outcome.error.message, 200)}", style="bold red")
        elif report.member.skipped is not None:
            line.append(f"skipped: {safe(report.member.skipped, 200)}", style="dim")
        else:
            counts = outcome.counts() if hasattr(outcome, "counts") else {}
            line.append(summary_text(counts) or "no checks", style="red" if counts.get("fail") else None)
        line.append(f"  exit {int(report.exit_code)}", style="dim")
        out.print(line)
        for result in getattr(outcome, "results", []):
            if result.status in (Status.FAIL, Status.ERROR):
                out.print(Text(f"  {result.status.value} {result.check.id}: {safe(result.message, 200)}",
                               style=STYLE[result.status]))


def _earlier(earlier: int, kept: int) -> str:
    """What the human view leaves out of a result's exchanges, and what --json still has of them (a
    result keeps a bounded number: `omitted` were never kept)."""
    noun = "exchange" if earlier == 1 else "exchanges"
    if kept >= earlier:
        return f"{earlier} earlier {noun}; --json shows {'it' if earlier == 1 else 'them'}"
    if kept <= 0:
        return f"{earlier} earlier {noun}, not kept"
    return f"{earlier} earlier {noun}; --json shows {kept} of them"
