"""The tap's output as text: the live view (one inert line per event) and the report at the end
(human, JSON, SARIF 2.1.0, JUnit XML). Pure: nothing here writes a file or a stream.

Everything shown comes from record entries, whose secrets are masked already; what came from a peer
(a method name, a cursor, a line of non-JSON) is made inert (`safety.sanitize.visible`) in the human
and live forms, and escaped by the JSON and XML encoders in the others.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from xml.sax.saxutils import quoteattr

from mcpprobe import __version__
from mcpprobe.findings import CODES, Finding, Severity
from mcpprobe.safety.sanitize import truncate, visible
from mcpprobe.tap.judge import MAX_SESSIONS
from mcpprobe.tap.rules import RULES


class TapFormat(StrEnum):
    HUMAN = "human"
    JSON = "json"
    SARIF = "sarif"
    JUNIT = "junit"
    HTML = "html"


@dataclass
class Summary:
    """What the report says besides the findings."""

    messages: int = 0
    from_client: int = 0
    from_server: int = 0
    connections: int = 0
    sessions_dropped: int = 0  # HTTP sessions no longer judged past the judge's cap (the longest idle first)
    skipped: int = 0
    exit_status: int | None = None
    exit_signal: int | None = None
    record: str | None = None
    replayed: bool = False
    more: dict[str, int] = field(default_factory=dict)
    judge_failure: str | None = None
    record_failure: str | None = None
    timeline: list[tuple[float, str, str]] = field(default_factory=list)  # (t, "c2s"|"s2c"|"event"|"finding", text)
    timeline_dropped: int = 0


TIMELINE_MAX = 2000  # rows of the HTML report's sequence: the first ones (the handshake is where most goes wrong)


class Timeline:
    """The rows of the HTML report's sequence, bounded: the first TIMELINE_MAX, then only counted."""

    def __init__(self) -> None:
        self.rows: list[tuple[float, str, str]] = []
        self.dropped = 0

    def add(self, entry: dict[str, Any], found: list[Finding]) -> None:
        t = entry.get("t")
        t = float(t) if isinstance(t, (int, float)) else 0.0
        side = "event" if "event" in entry else str(entry.get("dir"))
        self._row(t, side, live_line(entry).split(" ", 2)[-1])
        for finding in found:
            self._row(t, "finding", finding_line(finding).removeprefix("tap ! "))

    def add_findings(self, found: list[Finding]) -> None:
        """Findings of the end (of a connection, of the record), after the last row."""
        t = self.rows[-1][0] if self.rows else 0.0
        for finding in found:
            self._row(t, "finding", finding_line(finding).removeprefix("tap ! "))

    def _row(self, t: float, side: str, text: str) -> None:
        if len(self.rows) < TIMELINE_MAX:
            self.rows.append((t, side, text))
        else:
            self.dropped += 1


def _size(size: Any) -> str:
    if not isinstance(size, int):
        return "?"
    return f"{size} B" if size < 10_000 else f"{size / 1024:.0f} KiB" if size < 10_000_000 else \
        f"{size / 1048576:.0f} MiB"


def _id(message: dict[str, Any]) -> str:
    return f" id={truncate(json.dumps(message['id']), 40)}" if "id" in message else ""


def live_line(entry: dict[str, Any]) -> str:
    """One line for one record entry, inert and masked (entries are masked already)."""
    t = entry.get("t", 0.0)
    stamp = f"{t:9.3f}" if isinstance(t, (int, float)) else "        ?"
    event = entry.get("event")
    if event is not None:
        rest = {key: value for key, value in entry.items() if key not in ("event", "t")}
        words = " ".join(f"{key}={json.dumps(value)}" for key, value in rest.items())
        return visible(f"tap {stamp} {event} {truncate(words, 300)}")
    arrow = "client>" if entry.get("dir") == "c2s" else "server>"
    index = f"#{entry.get('i')}"
    message = entry.get("msg")
    if isinstance(message, list):
        what = f"batch of {len(message)}"
    elif isinstance(message, dict):
        if isinstance(message.get("method"), str):
            what = truncate(message["method"], 80) + _id(message)
        elif "error" in message:
            error = message["error"]
            code = error.get("code") if isinstance(error, dict) else None
            what = f"error{_id(message)} {code}"
        else:
            what = f"result{_id(message)}"
        if "cut" in message:
            what += " (cut)"
    else:
        what = "not JSON: " + truncate(str(entry.get("text", "")), 80)
    return visible(f"tap {stamp} {arrow} {index} {what} ({_size(entry.get('size'))})")


def finding_line(finding: Finding) -> str:
    severity = finding.severity.value if finding.severity else "info"
    kind = f" [{finding.kind}]" if finding.kind != "server" else ""
    where = finding.detail.get("messages") or []
    at = f" (#{', #'.join(str(i) for i in where)})" if where else ""
    return visible(f"tap ! {severity} {finding.code}{kind} {truncate(finding.message, 300)}{at}")


def _counts(findings: list[Finding]) -> dict[str, int]:
    counts = {severity.value: 0 for severity in Severity}
    for finding in findings:
        counts[(finding.severity or Severity.INFO).value] += 1
    return counts


def render(fmt: TapFormat, findings: list[Finding], summary: Summary) -> str:
    if fmt is TapFormat.JSON:
        return _json(findings, summary)
    if fmt is TapFormat.SARIF:
        return _sarif(findings)
    if fmt is TapFormat.JUNIT:
        return _junit(findings)
    if fmt is TapFormat.HTML:
        return _html(findings, summary)
    return _human(findings, summary)


def _human(findings: list[Finding], summary: Summary) -> str:
    lines = []
    head = "mcpprobe tap, replayed" if summary.replayed else "mcpprobe tap"
    ended = ""
    if summary.exit_signal is not None:
        ended = f"; the server was ended by signal {summary.exit_signal}"
    elif summary.exit_status is not None:
        ended = f"; the server exited with status {summary.exit_status}"
    lines.append(f"{head}: {summary.messages} message(s), {summary.from_client} from the client and "
                 f"{summary.from_server} from the server, {summary.connections} connection(s){ended}")
    if summary.sessions_dropped:
        lines.append(f"{summary.sessions_dropped} HTTP session(s) no longer judged: past {MAX_SESSIONS} at once, "
                     "the longest idle is dropped")
    if summary.skipped:
        lines.append(f"judging fell behind: {summary.skipped} message(s) relayed but not judged")
    if summary.judge_failure:
        lines.append(f"judging stopped after an internal error: {visible(summary.judge_failure)}")
    if summary.record_failure:
        lines.append(f"the record stopped: {visible(summary.record_failure)}")
    if summary.record:
        lines.append(f"record: {visible(summary.record)}")
    if not findings:
        lines.append("no findings: neither side broke a rule the tap judges")
    else:
        counts = _counts(findings)
        lines.append(f"Findings: {counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info")
        order = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
        for finding in sorted(findings, key=lambda f: order[f.severity or Severity.INFO]):
            side = finding.detail.get("side", "?")
            severity = (finding.severity or Severity.INFO).value
            kind = f" [{finding.kind}]" if finding.kind != "server" else ""
            where = finding.detail.get("messages") or []
            at = f"  messages #{', #'.join(str(i) for i in where)}" if where else ""
            lines.append(visible(f"  {severity} {finding.code}{kind} ({side}) {truncate(finding.message, 400)}{at}"))
            spec = finding.detail.get("spec")
            if spec:
                lines.append(visible(f"      rule: {spec} ({finding.detail.get('source')})"))
    for code, more in sorted(summary.more.items()):
        lines.append(f"  ... and {more} more {code}")
    return "\n".join(lines) + "\n"


def _json(findings: list[Finding], summary: Summary) -> str:
    document = {
        "tool": "mcpprobe tap",
        "version": __version__,
        "replayed": summary.replayed,
        "messages": summary.messages,
        "fromClient": summary.from_client,
        "fromServer": summary.from_server,
        "connections": summary.connections,
        "sessionsDropped": summary.sessions_dropped,
        "skipped": summary.skipped,
        "serverExit": {"status": summary.exit_status, "signal": summary.exit_signal},
        "summary": _counts(findings),
        "findings": [finding.to_json() for finding in findings],
        "moreFindings": summary.more,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _sarif(findings: list[Finding]) -> str:
    used = sorted({finding.code for finding in findings})
    rules = [{"id": code, "shortDescription": {"text": CODES[code][1]},
              "fullDescription": {"text": RULES[code].words},
              "properties": {"side": RULES[code].side, "source": RULES[code].source}} for code in used]
    results = [{"ruleId": f.code, "ruleIndex": used.index(f.code), "level": _LEVEL[f.severity or Severity.INFO],
                "message": {"text": f.message}, "properties": dict(f.detail)} for f in findings]
    log = {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0",
           "runs": [{"tool": {"driver": {"name": "mcpprobe tap", "version": __version__, "rules": rules}},
                     "results": results}]}
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _xml_text(text: str) -> str:
    return quoteattr(visible(text))


def _junit(findings: list[Finding]) -> str:
    by_code: dict[str, list[Finding]] = {}
    for finding in findings:
        by_code.setdefault(finding.code, []).append(finding)
    cases = []
    failures = 0
    for code in sorted(RULES):
        found = [f for f in by_code.get(code, []) if f.severity in (Severity.ERROR, Severity.WARNING)]
        name = _xml_text(f"{RULES[code].side}: {code}")
        if found:
            failures += 1
            text = "; ".join(f.message for f in found)
            cases.append(f'    <testcase classname="mcpprobe.tap" name={name}>\n'
                         f'      <failure message={_xml_text(truncate(text, 2000))} type={_xml_text(code)}/>\n'
                         f"    </testcase>")
        else:
            cases.append(f'    <testcase classname="mcpprobe.tap" name={name}/>')
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites>\n  <testsuite name="mcpprobe tap" tests="{len(RULES)}" failures="{failures}">\n'
            + "\n".join(cases) + "\n  </testsuite>\n</testsuites>\n")


_CSS = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
.seq td{font-family:ui-monospace,monospace;font-size:12px}.c2s{color:#035}.s2c{color:#530}
.error{background:#fdd}.warning{background:#ffd}.info{background:#eef}.event{color:#666}"""


def _html(findings: list[Finding], summary: Summary) -> str:
    """A page that runs nothing and loads nothing (a CSP that forbids it), every text escaped."""
    from html import escape

    def e(text: object) -> str:
        return escape(visible(str(text)), quote=True)

    rows = []
    for f in findings:
        severity = (f.severity or Severity.INFO).value
        where = ", ".join(f"#{i}" for i in f.detail.get("messages") or [])
        rows.append(f'<tr class="{severity}"><td>{severity}</td><td>{e(f.code)}</td><td>{e(f.detail.get("side"))}'
                    f"</td><td>{e(f.message)}<br><small>{e(f.detail.get('spec', ''))} ({e(f.detail.get('source', ''))})"
                    f"</small></td><td>{e(where)}</td></tr>")
    sequence = []
    for t, side, text in summary.timeline:
        stamp = f"{t:.3f}"
        if side == "c2s":
            sequence.append(f'<tr class="c2s"><td>{stamp}</td><td>{e(text)} &rarr;</td><td></td></tr>')
        elif side == "s2c":
            sequence.append(f'<tr class="s2c"><td>{stamp}</td><td></td><td>&larr; {e(text)}</td></tr>')
        else:
            cls = "event" if side == "event" else text.split(" ", 1)[0]
            sequence.append(f'<tr class="{e(cls)}"><td>{stamp}</td><td colspan="2">{e(text)}</td></tr>')
    if summary.timeline_dropped:
        sequence.append(f'<tr class="event"><td></td><td colspan="2">... and {summary.timeline_dropped} more</td></tr>')
    head = _human(findings, summary).splitlines()[0]
    return ("<!doctype html>\n<html><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>mcpprobe tap</title><style>{_CSS}</style></head><body>\n<h1>mcpprobe tap</h1><p>{e(head)}</p>\n"
            "<h2>Findings</h2>\n" + ("<table><tr><th>severity</th><th>code</th><th>side</th><th>what</th>"
                                      "<th>messages</th></tr>\n" + "\n".join(rows) + "</table>" if rows
                                      else "<p>No findings.</p>")
            + "\n<h2>Sequence</h2>\n<table class=\"seq\"><tr><th>t (s)</th><th>client</th><th>server</th></tr>\n"
            + "\n".join(sequence) + "</table>\n</body></html>\n")
