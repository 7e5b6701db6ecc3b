"""--format html: one self-contained page with a fleet's health, each server's findings and drift.

The page fetches nothing: the stylesheet is inline and allowed by its hash in a strict
Content-Security-Policy (no scripts, no fonts, no images, no connections), so a report
published as a CI artifact cannot call home whatever a server put in it. Every text that came
from a server or a config is masked (secrets), made inert (`sanitize.visible`: no control or bidi
characters) and then HTML-escaped, in that order: escaping first would hide a secret containing
`&` or `<` from the redactor.

`render_html` is a pure function of the reports: the time shown and the redactor are parameters.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from html import escape
from typing import Any

from mcpprobe.client.catalog import KINDS
from mcpprobe.client.kinds import tool_title
from mcpprobe.exitcodes import ExitCode, worst
from mcpprobe.findings import Severity
from mcpprobe.render.waterfall import CSS as WATERFALL_CSS
from mcpprobe.render.waterfall import waterfall_svg
from mcpprobe.safety.sanitize import json_dumps, truncate, visible
from mcpprobe.wire.stderrlog import entry_text, stderr_heading

Redact = Callable[[str], str]

KIND_TITLES = {"tools": "Tools", "resources": "Resources", "templates": "Resource templates", "prompts": "Prompts"}
SEVERITY_MARK = {Severity.ERROR: "✖", Severity.WARNING: "▲", Severity.INFO: "ℹ"}
EVIDENCE_LIMIT = 4000  # characters of a finding's detail shown; the JSON output has all of it
CATALOG_LIMIT = 500  # items per kind listed in the catalog

CSS = """
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--panel:#f6f8fa;
--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--info:#0969da;--okbg:#dafbe1;--badbg:#ffebe9;--warnbg:#fff8c5;
--infobg:#ddf4ff}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#30363d;
--panel:#161b22;--ok:#3fb950;--bad:#f85149;--warn:#d29922;--info:#58a6ff;--okbg:#12261e;--badbg:#2d1214;
--warnbg:#272115;--infobg:#121d2f}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
"Noto Sans",sans-serif;overflow-wrap:break-word}
main{max-width:72rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;margin:.25rem 0}h2{font-size:1.25rem;margin:0}h3{font-size:1.05rem;margin:1.25rem 0 .5rem}
a{color:var(--info)}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.9em}
.mono,dd,td.long,tbody th{overflow-wrap:anywhere}
tbody th code.id{overflow-wrap:normal;word-break:normal;white-space:nowrap}code.id wbr{display:none}
.server header h2{min-width:0;overflow-wrap:anywhere}
.tally{font-weight:400;font-size:.9rem;margin-left:.5rem}
.wide{overflow-x:auto}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;background:var(--panel);padding:.5rem;border-radius:6px}
.muted{color:var(--muted)}
.totals{display:flex;flex-wrap:wrap;gap:.5rem;margin:1rem 0;padding:0;list-style:none}
.totals li{border:1px solid var(--line);border-radius:8px;padding:.5rem .75rem;background:var(--panel)}
.totals b{display:block;font-size:1.3rem}
table{border-collapse:collapse;width:100%;margin:.25rem 0}
caption{text-align:left;padding:.25rem 0}
th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;border-bottom:1px solid var(--line)}
thead th{font-size:.85rem;color:var(--muted);font-weight:600;border-bottom:2px solid var(--line);white-space:nowrap}
td.tag{white-space:nowrap}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.badge{display:inline-block;padding:0 .45rem;border-radius:1rem;font-weight:600;font-size:.85rem;
white-space:nowrap;border:1px solid currentColor}
.ok{color:var(--ok)}.bad{color:var(--bad)}.warn{color:var(--warn)}.info{color:var(--info)}
.badge.ok{background:var(--okbg)}.badge.bad{background:var(--badbg)}.badge.warn{background:var(--warnbg)}
.badge.info{background:var(--infobg)}
section.server{border:1px solid var(--line);border-radius:10px;padding:1rem;margin:1.5rem 0}
.server header{display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:.75rem 0}
dt{color:var(--muted)}dd{margin:0;min-width:0}
ul.caps{margin:0;padding:0;list-style:none;display:flex;flex-wrap:wrap;gap:.35rem}
ul.caps li{background:var(--panel);border:1px solid var(--line);border-radius:4px;padding:0 .4rem}
details{margin:.25rem 0}summary{cursor:pointer}
footer{margin:2rem 0 1rem;color:var(--muted);font-size:.85rem}
@media (max-width:40rem){
main{padding:.6rem}dl{grid-template-columns:1fr}dt{margin-top:.35rem}
table.cards thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table.cards,table.cards tbody,table.cards tr,table.cards th,table.cards td{display:block;width:100%}
table.cards caption{display:block;text-align:left}
table.cards tr{border:1px solid var(--line);border-radius:8px;margin:.5rem 0;padding:.25rem .5rem}
table.cards td,table.cards tbody th{border:0;padding:.15rem 0;text-align:left;display:flex;gap:.75rem}
table.cards td::before,table.cards tbody th::before{content:attr(data-label);flex:0 0 7.5rem;color:var(--muted);
font-weight:400}
table.cards td>*,table.cards tbody th>*{min-width:0}
tbody th code.id{white-space:normal}code.id wbr{display:inline}
}
""".strip() + "\n" + WATERFALL_CSS


def page_policy(css: str) -> str:
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; font-src 'none'; "
            "script-src 'none'; connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; "
            "base-uri 'none'; form-action 'none'")


class Page:
    """Text made safe for the page: secrets masked, then inert, then escaped."""

    def __init__(self, redact: Redact) -> None:
        self.redact = redact

    def text(self, value: Any, limit: int = 0, *, multiline: bool = False) -> str:
        if value is None:
            return ""
        raw = value if isinstance(value, str) else json_dumps(value, ensure_ascii=False, default=str)
        shown = visible(self.redact(raw), multiline=multiline)
        return escape(truncate(shown, limit) if limit else shown, quote=True)

    def json(self, value: Any, limit: int = EVIDENCE_LIMIT) -> str:
        raw = json_dumps(value, indent=2, ensure_ascii=False, default=str)
        return escape(truncate(visible(self.redact(raw), multiline=True), limit), quote=True)


def _exit_label(code: ExitCode) -> str:
    return "ok" if code == ExitCode.OK else f"{code.name.lower()} ({int(code)})"


def _result_badge(code: ExitCode, report: Any = None) -> str:
    css = "ok" if code == ExitCode.OK else "bad"
    mark = "✔" if code == ExitCode.OK else "✖"
    label = _exit_label(code) if report is None else _verdict(report)
    if code == ExitCode.OK and label != "ok":  # warnings, not failures
        css, mark = "warn", "▲"
    return f'<span class="badge {css}"><span aria-hidden="true">{mark}</span> {escape(label)}</span>'


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _verdict(report: Any) -> str:
    """A check run in words: "1 failure, 2 warnings", "2 warnings" or "ok" (a run that stopped, or
    any other outcome: its exit code)."""
    results = getattr(report.outcome, "results", None)
    if not results or report.exit_code not in (ExitCode.OK, ExitCode.FINDINGS):
        return _exit_label(report.exit_code)
    counts = report.outcome.counts()
    parts = [_plural(counts[status], noun) for status, noun in (("fail", "failure"), ("error", "error"),
                                                                   ("warn", "warning")) if counts[status]]
    return ", ".join(parts) or _exit_label(report.exit_code)


def _counts(found: list[Any]) -> dict[Severity, int]:
    return {severity: sum(1 for f in found if f.severity is severity) for severity in Severity}


def _negotiated(outcome: Any) -> bool:
    return bool(outcome.snapshot and outcome.snapshot.negotiated)


def _kind_cell(listing: Any, negotiated: bool) -> tuple[str, str]:
    """(text, css class) for one kind in the summary: the count and whether it is complete."""
    if not negotiated or listing is None:
        return "not reached", "muted"
    if listing.state == "not-declared":
        return "not declared", "muted"
    if listing.state == "not-implemented":
        return "not implemented (optional)", "muted"
    if listing.list_completed:
        return f"{len(listing.items)} complete", ""
    if listing.state == "incomplete":
        return f"{len(listing.items)}+ incomplete", "bad"
    return listing.state, "bad"


def _protocol(page: Page, outcome: Any) -> str:
    snapshot = outcome.snapshot
    if not _negotiated(outcome):
        return '<span class="muted">not negotiated</span>'
    return f"{page.text(snapshot.era or '?')} {page.text(snapshot.protocol_version or '?')}"


def _table(headers: list[str], *, numeric: tuple[str, ...] = (), caption: str = "") -> str:
    """The start of a table, up to its body: a scrolling box around it (a page never scrolls
    sideways), cards on a phone, every header cell scoped to its column."""
    cells = "".join(f'<th scope="col" class="num">{h}</th>' if h in numeric else f'<th scope="col">{h}</th>'
                    for h in headers)
    caption = f'<caption class="muted">{caption}</caption>' if caption else ""
    return f'<div class="wide"><table class="cards">{caption}<thead><tr>{cells}</tr></thead><tbody>'


def _anchor(index: int) -> str:
    return f"server-{index + 1}"


def _summary(page: Page, reports: list[Any]) -> list[str]:
    total = len(reports)
    healthy = sum(1 for r in reports if r.exit_code == ExitCode.OK)
    overall = worst([r.exit_code for r in reports]) if reports else ExitCode.OK
    breaking = sum(1 for r in reports if r.drift is not None and r.drift.breaking)
    out = ['<section aria-labelledby="summary"><h2 id="summary">Summary</h2>', '<ul class="totals">',
           f"<li><b>{healthy} of {total}</b> server{'s' if total != 1 else ''} ok</li>",
           f"<li><b>{total - healthy}</b> failing</li>",
           f"<li><b>{_result_badge(overall)}</b> worst exit code</li>"]
    if any(r.drift is not None for r in reports):
        out.append(f"<li><b>{breaking}</b> with breaking changes</li>")
    out.append("</ul>")
    headers = ["server", "result", "transport", "protocol", *KINDS, "errors", "warnings", "info", "drift"]
    out.append(_table(headers, numeric=("errors", "warnings", "info"),
                      caption="One row per server; details below."))
    for index, report in enumerate(reports):
        outcome = report.outcome
        negotiated = _negotiated(outcome)
        counts = _counts(outcome.all_findings())
        cells = [f'<th scope="row" data-label="server"><a href="#{_anchor(index)}">'
                 f"{page.text(report.member.label, 120)}</a></th>",
                 f'<td data-label="result">{_result_badge(report.exit_code, report)}</td>',
                 f'<td data-label="transport">{page.text(outcome.snapshot.transport if outcome.snapshot else "-")}'
                 "</td>",
                 f'<td data-label="protocol">{_protocol(page, outcome)}</td>']
        for kind in KINDS:
            text, css = _kind_cell(outcome.listings.get(kind), negotiated)
            cells.append(f'<td data-label="{kind}"><span class="{css}">{escape(text)}</span></td>')
        for severity, css in ((Severity.ERROR, "bad"), (Severity.WARNING, "warn"), (Severity.INFO, "")):
            n = counts[severity]
            label = {"error": "errors", "warning": "warnings", "info": "info"}[severity.value]
            cells.append(f'<td class="num" data-label="{label}"><span class="{css if n else "muted"}">{n}</span>'
                         "</td>")
        cells.append(f'<td data-label="drift">{_drift_cell(report)}</td>')
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table></div></section>")
    return out


def _drift_cell(report: Any) -> str:
    drift = report.drift
    if drift is None and report.member.baseline is not None:
        return '<span class="warn">not compared: the probe stopped</span>'
    if drift is None and report.member.baseline_missing and report.outcome.error is None:
        return '<span class="warn">not compared: no baseline yet</span>'
    if drift is None:
        return '<span class="muted">no baseline</span>'
    if not drift.changes:
        return '<span class="ok">no change</span>'
    breaking = sum(1 for c in drift.changes if c.breaking)
    other = len(drift.changes) - breaking
    parts = []
    if breaking:
        parts.append(f'<span class="bad">{breaking} breaking</span>')
    if other:
        parts.append(f"{other} other")
    return "<span>" + ", ".join(parts) + "</span>"


def _server(page: Page, index: int, report: Any) -> list[str]:
    outcome = report.outcome
    snapshot = outcome.snapshot
    heading = f"{_anchor(index)}-title"
    out = [f'<section class="server" id="{_anchor(index)}" aria-labelledby="{heading}"><header>',
           f'<h2 id="{heading}">{page.text(report.member.label, 200)}</h2>{_result_badge(report.exit_code, report)}',
           f'<span class="muted">{report.elapsed:.2f} s</span></header>', "<dl>"]

    def row(term: str, value: str) -> None:
        out.append(f"<dt>{term}</dt><dd>{value}</dd>")

    if report.member.source:
        row("Config", f'<span class="mono">{page.text(report.member.source)}</span>')
    if snapshot is not None:
        info = snapshot.server_info or {}
        name = page.text(info.get("name", "(no serverInfo)"), 200)
        version = f" {page.text(info.get('version'), 100)}" if info.get("version") is not None else ""
        title = f' <span class="muted">“{page.text(info.get("title"), 200)}”</span>' if info.get("title") else ""
        row("Server", f"<strong>{name}</strong>{version}{title}")
        row("Transport", f'{page.text(snapshot.transport)}: <span class="mono">{page.text(snapshot.target, 500)}'
                         "</span>")
        if snapshot.era:
            era = "modern era, server/discover" if snapshot.era == "modern" else "legacy era, initialize handshake"
            row("Protocol", f"<strong>{page.text(snapshot.protocol_version or '?')}</strong> ({era}; "
                            f"{page.text(snapshot.era_reason, 300)})")
        if snapshot.negotiated:
            row("Capabilities", _capabilities(page, snapshot.capabilities))
        if snapshot.instructions:
            row("Instructions", f"<pre>{page.text(snapshot.instructions, 4000, multiline=True)}</pre>")
    if outcome.error is not None:
        row("Stopped", f'<span class="bad"><span aria-hidden="true">✖</span> {page.text(outcome.error.message)}'
                       "</span>")
    if report.snapshot_error:
        row("Snapshot", f'<span class="bad">{page.text(report.snapshot_error)}</span>')
    out.append("</dl>")
    if _negotiated(outcome):
        out.extend(_kinds(outcome))
    out.extend(_timing(page, index, report))
    if getattr(outcome, "results", None):
        out.extend(_checks(page, index, outcome.results))
    out.extend(findings_block(page, outcome.all_findings(), heading))
    if report.checks:
        out.extend(_expectations(page, report.checks))
    if report.drift is not None:
        out.extend(_drift(page, report.drift))
    if _negotiated(outcome):
        out.extend(_catalog(page, outcome))
    if outcome.stderr_tail:
        heading = stderr_heading(outcome.stderr_tail)
        out.append(f"<h3>{escape(heading[:1].upper() + heading[1:])}</h3>")
        text = "\n".join(entry_text(entry) for entry in outcome.stderr_tail)
        out.append(f"<pre>{page.text(text, 8000, multiline=True)}</pre>")
    out.append("</section>")
    return out


def _capabilities(page: Page, capabilities: dict[str, Any]) -> str:
    from mcpprobe.client.capabilities import sub_capabilities

    if not capabilities:
        return '<span class="warn">none declared</span>'
    items = []
    for name, value in capabilities.items():
        if isinstance(value, dict):
            subs = [page.text(k) for k in sub_capabilities(name, value)]
            items.append(f"<li><strong>{page.text(name)}</strong>{' (' + ', '.join(subs) + ')' if subs else ''}</li>")
        else:
            items.append(f'<li><strong>{page.text(name)}</strong> <span class="bad">(malformed: '
                         f"{page.text(value, 40)})</span></li>")
    return '<ul class="caps">' + "".join(items) + "</ul>"


def _kinds(outcome: Any) -> list[str]:
    numeric = ("items", "pages", "time")
    out = ["<h3>Kinds</h3>", _table(["kind", "state", *numeric], numeric=numeric)]
    for kind in KINDS:
        listing = outcome.listings.get(kind)
        if listing is None:
            continue
        bad = listing.state in ("incomplete", "method-not-found", "failed")
        css = "bad" if bad else "ok" if listing.list_completed else "muted"
        state = {"not-declared": "not declared; nothing sent",
                 "not-implemented": "not implemented (answered -32601; optional)"}.get(listing.state, listing.state)
        mark = '<span aria-hidden="true">✖</span> ' if bad else ""
        declared = listing.state != "not-declared"
        out.append(f'<tr><th scope="row" data-label="kind">{KIND_TITLES[kind]}</th>'
                   f'<td data-label="state"><span class="{css}">{mark}{escape(state)}</span></td>'
                   f'<td class="num" data-label="items">{len(listing.items) if declared else "-"}</td>'
                   f'<td class="num" data-label="pages">{len(listing.pages) if declared else "-"}</td>'
                   f'<td class="num" data-label="time">{f"{listing.ms:.0f} ms" if declared else "-"}</td></tr>')
    out.append("</tbody></table></div>")
    return out


def _timing(page: Page, index: int, report: Any) -> list[str]:
    """The waterfall of the session's phases (connect, discover/initialize, each list), as inline SVG."""
    label = visible(page.redact(report.member.label))
    drawing = waterfall_svg(report.outcome.timings, label, f"{_anchor(index)}-timing")
    if not drawing:
        return []
    return ["<h3>Timing</h3>", drawing]


def findings_block(page: Page, found: list[Any], heading: str) -> list[str]:
    counts = _counts(found)
    names = {Severity.ERROR: ("error", "errors"), Severity.WARNING: ("warning", "warnings"),
             Severity.INFO: ("info", "info")}
    summary = ", ".join(f"{n} {names[s][n != 1]}" for s, n in counts.items() if n) or "none"
    out = [f"<h3>Findings <span class=\"muted\">({summary})</span></h3>"]
    if not found:
        out.append('<p class="ok">No findings.</p>')
        return out
    out.append(_table(["severity", "code", "about", "message and evidence"]))
    css = {Severity.ERROR: "bad", Severity.WARNING: "warn", Severity.INFO: "info"}
    for finding in found:
        severity = finding.severity or Severity.INFO
        evidence = ""
        if finding.detail:
            evidence = f"<details><summary>evidence</summary><pre>{page.json(finding.detail)}</pre></details>"
        badge = (f'<span class="badge {css[severity]}"><span aria-hidden="true">{SEVERITY_MARK[severity]}</span> '
                 f"{severity.value}</span>")
        out.append(f'<tr><td class="tag" data-label="severity">{badge}</td>'
                   f'<td class="tag" data-label="code"><code>{page.text(finding.code)}</code></td>'
                   f'<td class="tag" data-label="about">{page.text(finding.kind)}</td>'
                   f'<td class="long" data-label="message"><div>{page.text(finding.message, 2000)}{evidence}</div>'
                   "</td></tr>")
    out.append("</tbody></table></div>")
    return out


CHECK_CSS = {"pass": "ok", "fail": "bad", "warn": "warn", "error": "bad", "skipped": "muted", "n/a": "muted"}


ORDER = ("fail", "error", "warn", "pass", "skipped", "n/a")  # rows: what failed and warned first


def _checks(page: Page, index: int, results: list[Any]) -> list[str]:
    """`check --format html`: a tally in the heading, then one row per check (what failed and warned
    first), its status, level, message, evidence and spec link. An id breaks only after its `.` (a
    <wbr>) and its `-` (a hyphen's own break), never inside a word."""
    counts = {status: sum(1 for r in results if r.status.value == status) for status in ORDER}
    tally = " · ".join(f'<span class="{CHECK_CSS[s] if counts[s] else "muted"}">{counts[s]} {s}</span>'
                       for s in ("pass", "warn", "fail"))
    tally += "".join(f' · <span class="muted">{counts[s]} {s}</span>' for s in ("error", "skipped", "n/a")
                     if counts[s])
    out = [f'<h3 id="checks-{index}">Checks <span class="tally">{tally}</span></h3>',
           _table(["check", "status", "level", "message"])]
    for result in sorted(results, key=lambda r: ORDER.index(r.status.value)):
        status = result.status.value
        evidence = "".join(
            f'<br><span class="mono muted">sent {page.text(item.get("sent", ""), 400)}'
            + (f'<br>got {page.text(item["received"], 400)}' if "received" in item else "") + "</span>"
            for item in result.evidence[-3:]) if status in ("fail", "warn", "error") else ""
        check_id = page.text(result.check.id, 100)
        out.append(f'<tr data-check="{check_id}"><th scope="row" data-label="check">'
                   f'<a href="{escape(result.spec_url)}" rel="noreferrer">'
                   f'<code class="id">{check_id.replace(".", ".<wbr>")}</code></a></th>'
                   f'<td data-label="status"><span class="{CHECK_CSS[status]}">{escape(status)}</span></td>'
                   f'<td data-label="level">{escape(result.level.value)}</td>'
                   f'<td class="long" data-label="message"><div>{page.text(result.message, 2000)}{evidence}</div>'
                   "</td></tr>")
    out.append("</tbody></table></div>")
    return out


def _expectations(page: Page, checks: list[Any]) -> list[str]:
    out = ["<h3>Expectations</h3>", _table(["expectation", "result", "message"])]
    for check in checks:
        if check.ok is None:
            result = '<span class="warn">not checked</span>'
        elif check.ok:
            result = '<span class="ok"><span aria-hidden="true">✔</span> met</span>'
        else:
            result = '<span class="bad"><span aria-hidden="true">✖</span> not met</span>'
        out.append(f'<tr><th scope="row" data-label="expectation">{page.text(check.name, 300)}</th>'
                   f'<td data-label="result">{result}</td>'
                   f'<td class="long" data-label="message">{page.text(check.message)}</td></tr>')
    out.append("</tbody></table></div>")
    return out


def _drift(page: Page, drift: Any) -> list[str]:
    out = [f'<h3>Changes since the baseline</h3><p class="muted">Baseline <span class="mono">'
           f"{page.text(drift.baseline)}</span></p>"]
    if not drift.changes:
        out.append('<p class="ok"><span aria-hidden="true">✔</span> No change.</p>')
    for breaking, title in ((True, "Breaking changes"), (False, "Other changes")):
        changes = [c for c in drift.changes if c.breaking is breaking]
        if not changes:
            continue
        css = "bad" if breaking else "info"
        out.append(f'<h4 class="{css}">{title} ({len(changes)})</h4>')
        out.append(_table(["change", "kind", "item", "details"]))
        for change in changes:
            details = "; ".join(change.details)
            out.append(f'<tr><td data-label="change"><span class="badge {css}">{page.text(change.change)}</span></td>'
                       f'<td data-label="kind">{page.text(change.kind)}</td>'
                       f'<td class="long" data-label="item"><code>{page.text(change.ident, 300)}</code></td>'
                       f'<td class="long" data-label="details">{page.text(details, 2000) or "-"}</td></tr>')
        out.append("</tbody></table></div>")
    if drift.not_compared:
        out.append(f'<p class="warn">Not compared (the list is not complete in both runs): '
                   f"{page.text(', '.join(drift.not_compared))}</p>")
    return out


def _catalog(page: Page, outcome: Any) -> list[str]:
    out = ["<h3>Items</h3>"]
    for kind in KINDS:
        key = KINDS[kind].identity
        listing = outcome.listings.get(kind)
        if listing is None or not listing.items:
            continue
        out.append(f"<details><summary>{KIND_TITLES[kind]}: {len(listing.items)}</summary><ul>")
        for item in listing.items[:CATALOG_LIMIT]:
            if not isinstance(item, dict):
                continue
            title = tool_title(item) if kind == "tools" else item.get("title")
            description = item.get("description") or title or ""
            note = f' <span class="muted">{page.text(description, 160)}</span>' if description else ""
            out.append(f"<li><code>{page.text(item.get(key), 200)}</code>{note}</li>")
        if len(listing.items) > CATALOG_LIMIT:
            out.append(f"<li class=\"muted\">… {len(listing.items) - CATALOG_LIMIT} more; --json has all</li>")
        out.append("</ul></details>")
    return out if len(out) > 1 else []


def render_html(reports: list[Any], *, redact: Redact, generated: datetime | None = None) -> str:
    """The whole page for `reports` (fleet.Report), one server or many; `redact` masks the run's secrets."""
    from mcpprobe import __version__

    page = Page(redact)
    when = (generated or datetime.now(UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    total = len(reports)
    healthy = sum(1 for r in reports if r.exit_code == ExitCode.OK)
    title = f"MCP servers: {healthy} of {total} ok" if total != 1 else (
        f"MCP server {page.text(reports[0].member.label, 80)}: {escape(_verdict(reports[0]))}")
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f'<meta http-equiv="Content-Security-Policy" content="{page_policy(CSS)}">',
             '<meta name="referrer" content="no-referrer">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<meta name="color-scheme" content="light dark">',
             f"<title>{title}</title>", f"<style>{CSS}</style></head><body><main>",
             f'<header><h1>{title}</h1><p class="muted">mcpprobe {escape(__version__)} · {when}</p></header>']
    parts.extend(_summary(page, reports))
    for index, report in enumerate(reports):
        parts.extend(_server(page, index, report))
    parts.append('<footer>Exit codes and finding codes: see docs/exit-codes.md and docs/findings.md of mcpprobe. '
                 "This page loads nothing from the network.</footer></main></body></html>")
    return "\n".join(parts)
