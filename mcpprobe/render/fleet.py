"""Human output for what `probe` adds beyond one server: the fleet table, expectations, drift, and
the list of named servers. Server text goes through the rendering's `safe`, never through rich markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

from mcpprobe.client.catalog import KINDS
from mcpprobe.exitcodes import ExitCode
from mcpprobe.findings import Severity
from mcpprobe.render.console import Column, fitted_table
from mcpprobe.render.human import collapsed, finding_block

if TYPE_CHECKING:
    from mcpprobe.render.cells import Safe


def _count(listing: Any) -> Text:
    if listing is None:
        return Text("?", style="dim")
    if listing.state in ("not-declared", "not-implemented"):  # none offered: not declared, or an optional part
        return Text("-", style="dim")
    if listing.list_completed:
        return Text(str(len(listing.items)))
    if listing.state == "incomplete":  # some items read, more that could not be
        return Text(f"{len(listing.items)}+ incomplete", style="bold red")
    return Text(listing.state, style="bold red")  # method-not-found, failed: nothing read


def _result(code: ExitCode, report: Any = None) -> Text:
    if report is not None and report.member.skipped is not None:
        return Text("skipped (disabled)", style="dim")
    if code == ExitCode.OK:
        return Text("ok", style="green")
    return Text(f"{code.name.lower()} ({int(code)})", style="bold red" if code != ExitCode.FINDINGS else "red")


def _hint(text: str) -> Any:
    """`  hint: ` and the hint, which wraps under itself, never back to the left margin."""
    from rich.table import Table

    grid = Table.grid(padding=(0, 1, 0, 0))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(Text("  hint:", style="bold"), Text(text))
    return grid


def render_fleet(out: Console, reports: list[Any], safe: Safe) -> None:
    """One row per server, then each server's errors and warnings."""
    columns = [Column(name, identifier=True) for name in ("server", "result", "protocol", *KINDS, "errors",
                                                           "warnings", "time")]
    rows = []
    for report in reports:
        outcome = report.outcome
        found = outcome.all_findings()
        snapshot = outcome.snapshot
        negotiated = bool(snapshot and snapshot.negotiated)
        counts = [_count(outcome.listings.get(kind)) if negotiated else Text("?", style="dim") for kind in KINDS]
        errors = sum(1 for f in found if f.severity is Severity.ERROR)
        warnings = sum(1 for f in found if f.severity is Severity.WARNING)
        rows.append([Text(safe(report.member.label, 40), style="bold"), _result(report.exit_code, report),
                      Text(safe(snapshot.protocol_version) if negotiated else "-"), *counts,
                      Text(str(errors), style="bold red" if errors else ""),
                      Text(str(warnings), style="yellow" if warnings else ""), Text(f"{report.elapsed:.2f} s")])
    out.print(fitted_table(out, columns, rows))
    for report in reports:
        shown = [f for f in report.outcome.all_findings() if f.severity is not Severity.INFO]
        if not shown and not report.snapshot_error:
            continue
        out.print()
        out.print(Text(safe(report.member.label), style="bold"))
        for finding, count in collapsed(shown):
            out.print(finding_block(finding, safe, count))
        error = report.outcome.error
        if error is not None and error.detail.get("hint"):
            out.print(_hint(safe(str(error.detail["hint"]))))
        if report.snapshot_error:
            # The path names the member, and a member's name is text from a config file.
            out.print(Text(f"  snapshot {safe(report.snapshot_error)}", style="bold red"))
    skipped = sum(1 for r in reports if r.member.skipped is not None)
    total = len(reports) - skipped
    healthy = sum(1 for r in reports if r.exit_code == ExitCode.OK and r.member.skipped is None)
    out.print()
    summary = f"{healthy} of {total} server{'s' if total != 1 else ''} ok"
    if skipped:
        summary += f", {skipped} skipped (disabled)"
    out.print(Text(summary, style="bold"))


def render_extras(out: Console, report: Any, safe: Safe) -> None:
    """After one server's usual output: the expectations met, drift, the snapshot written."""
    if report.checks:
        met = sum(1 for c in report.checks if c.ok)
        unmet = sum(1 for c in report.checks if c.ok is False)
        line = Text("Expectations ", style="bold")
        line.append(f"{met} met", style="green")
        if unmet:
            line.append(f", {unmet} not met", style="bold red")
        skipped = len(report.checks) - met - unmet
        if skipped:
            line.append(f", {skipped} not checked", style="yellow")
        out.print()
        out.print(line)
    if report.drift is not None:
        drift = report.drift
        line = Text("Drift        ", style="bold")
        if not drift.changes:
            line.append(f"no change since {safe(drift.baseline)}", style="green")
        else:
            counts = {kind: sum(1 for c in drift.changes if c.change == kind) for kind in ("added", "removed",
                                                                                           "changed")}
            line.append(", ".join(f"{n} {kind}" for kind, n in counts.items() if n))
            breaking = sum(1 for c in drift.changes if c.breaking)
            if breaking:
                line.append(f"; {breaking} breaking", style="bold red")
            line.append(f" (baseline {safe(drift.baseline)})", style="dim")
        out.print(line)
    if report.member.snapshot_path:
        if report.snapshot_error:
            out.print(Text(f"Snapshot     {safe(report.snapshot_error)}", style="bold red"))
        elif report.outcome.error is None:
            out.print(Text(f"Snapshot     written to {safe(report.member.snapshot_path)}", style="dim"))
        else:
            out.print(Text("Snapshot     not written: the probe did not reach the catalog", style="yellow"))


def render_servers(out: Console, discovery: Any, safe: Safe) -> None:
    """`mcpprobe servers`: every named server, where it came from, and the files consulted."""
    if discovery.servers:
        columns = [Column("name", identifier=True), Column("transport", identifier=True), Column("target"),
                   Column("source")]
        rows = []
        for entry in discovery.servers:
            name = Text(safe(entry.name), style="bold")
            if entry.disabled:
                name.append(" (disabled)", style="dim")
            rows.append([name, Text(entry.transport), Text(safe(entry.describe(), 80)),
                         Text(safe(entry.source), style="dim")])
        out.print(fitted_table(out, columns, rows))
    else:
        out.print(Text("no servers found (`mcpprobe docs config` lists the files mcpprobe reads)", style="yellow"))
    for entry in discovery.shadowed:
        out.print(Text(f"shadowed: {safe(entry.name)} in {safe(entry.source)} (an earlier file defines it)",
                       style="dim"))
