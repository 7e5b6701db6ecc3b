"""`check` for people: what was negotiated, what failed and warned with its evidence, the rest compact.

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


PROBLEMS = (Status.FAIL, Status.ERROR, Status.WARN)  # shown first, in this order, each with its evidence
GROUPED = (Status.SKIPPED, Status.NA)  # shown last, one line per reason (one per check with -v)


def render_check(out: Console, err: Console, report: Any, safe: Safe, *, every: bool = False) -> None:
    """What failed and warned first, each with its evidence and link; then the passes, compact (their
    ids on one wrapped line); then `skipped` and `n/a`, one line per reason; then one tally line.
    `every` (-v): each pass, skip and n/a on a line of its own, with its message."""
    outcome = report.outcome
    render_snapshot(out, outcome, safe)
    results = getattr(outcome, "results", [])
    if results:
        out.print()
    problems = [r for status in PROBLEMS for r in results if r.status is status]
    rest = [r for status in (Status.PASS, *GROUPED) for r in results if r.status is status]
    shown = [*problems, *rest] if every else problems
    width = max((len(result.check.id) for result in shown), default=0)
    # The message and the evidence wrap under themselves, never back to the first column. Where
    # fewer than 40 columns would be left for the message (a 60-column terminal), it goes on its
    # own lines under the check's id.
    lead = 8 + width + 2 + 7
    narrow = out.width - lead < 40
    indent = 8 if narrow else lead
    for result in shown:
        line = Text(f"{result.status.value:<7} ", style=STYLE[result.status])
        line.append(result.check.id if narrow else result.check.id.ljust(width),
                    style="bold" if result.status in PROBLEMS else None)
        line.append(f"  {result.level.value:<6} " if not narrow else f"  {result.level.value}", style="dim")
        message = Text(safe(result.message, 400), style="dim" if result.status in GROUPED else "")
        if narrow:
            out.print(line)
            out.print(Padding(message, (0, 0, 0, indent)))
        else:
            out.print(_hanging(line, message, lead))
        if result.status in PROBLEMS:
            _evidence(out, result, indent, safe)
    if not every:
        if problems and len(problems) < len(results):
            out.print()
        _compact(out, results, safe)
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


def _evidence(out: Console, result: Any, indent: int, safe: Safe) -> None:
    """A problem's last exchanges (where its verdict was decided) and the link to its rule."""
    earlier = len(result.evidence) + result.omitted - SHOWN_EVIDENCE
    if earlier > 0:
        out.print(Padding(Text(f"…({_earlier(earlier, len(result.evidence) - SHOWN_EVIDENCE)})", style="dim"),
                          (0, 0, 0, indent)))
    for item in result.evidence[-SHOWN_EVIDENCE:]:
        out.print(Padding(Text(f"sent {safe(item.get('sent', ''), 200)}", style="dim"), (0, 0, 0, indent)))
        if "received" in item:
            out.print(Padding(Text(f"got  {safe(item['received'], 200)}", style="dim"), (0, 0, 0, indent)))
    out.print(Padding(Text(result.spec_url, style="dim cyan", overflow="fold"), (0, 0, 0, indent)))


def _compact(out: Console, results: list[Any], safe: Safe) -> None:
    """The passes as one wrapped line of ids; `skipped` and `n/a` one line per reason: the check's id
    when it is alone with its reason, else how many checks of which families."""
    passes = [r.check.id for r in results if r.status is Status.PASS]
    if passes:
        out.print(_hanging(Text("pass    ", style=STYLE[Status.PASS]), Text(", ".join(passes)), 8))
    for status in GROUPED:
        reasons: dict[str, list[Any]] = {}
        for result in results:
            if result.status is status:
                reasons.setdefault(safe(result.message, 400), []).append(result)
        for reason, group in reasons.items():
            line = Text()
            if len(group) == 1:
                line.append(group[0].check.id)
            else:
                families: dict[str, int] = {}
                for result in group:
                    families[result.check.family] = families.get(result.check.family, 0) + 1
                if len(families) == 1:
                    line.append(f"{len(group)} {group[0].check.family} checks")
                else:
                    line.append(f"{len(group)} checks")
                    line.append(" (" + ", ".join(f"{family} {count}" for family, count in families.items()) + ")",
                                style="dim")
            line.append(": ")
            line.append(reason, style="dim")
            out.print(_hanging(Text(f"{status.value:<7} ", style=STYLE[status]), line, 8))


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
