"""The live view and the report are inert: what a peer sent cannot drive the terminal."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from mcpprobe.findings import Finding
from mcpprobe.tap.report import Summary, TapFormat, live_line, render
from mcpprobe.tap.rules import RULES


def test_a_live_line_of_hostile_text_is_inert() -> None:
    line = live_line({"i": 3, "t": 1.5, "dir": "s2c", "size": 20, "text": "\x1b[2J\x1b]0;owned\x07boom\r"})
    assert "\x1b" not in line and "\x07" not in line and "\r" not in line
    assert line.startswith("tap     1.500 server> #3 not JSON:")
    method = live_line({"i": 4, "t": 2.0, "dir": "c2s", "size": 9, "msg": {"jsonrpc": "2.0", "method": "\x1b[31mx",
                                                                          "id": 1}})
    assert "\x1b" not in method


def _finding() -> Finding:
    rule = RULES["client-stale-list"]
    return Finding("client-stale-list", "client: \x1b[31mred", kind="tools",
                   detail={"side": "client", "messages": [4], "spec": rule.words, "source": rule.source})


def test_every_format_renders_findings() -> None:
    findings = [_finding()]
    summary = Summary(messages=5, from_client=2, from_server=3, connections=1, exit_status=0)
    human = render(TapFormat.HUMAN, findings, summary)
    assert "warning client-stale-list [tools] (client)" in human and "\x1b" not in human
    document = json.loads(render(TapFormat.JSON, findings, summary))
    assert document["findings"][0]["detail"]["side"] == "client"
    sarif = json.loads(render(TapFormat.SARIF, findings, summary))
    assert sarif["runs"][0]["results"][0]["ruleId"] == "client-stale-list"
    assert sarif["runs"][0]["results"][0]["level"] == "warning"
    suite = ET.fromstring(render(TapFormat.JUNIT, findings, summary)).find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    assert "\x1b" not in render(TapFormat.JUNIT, findings, summary)


def test_the_html_report_is_inert_and_shows_the_sequence() -> None:
    from mcpprobe.tap.report import Timeline

    timeline = Timeline()
    timeline.add({"event": "start", "t": 0.0}, [])
    timeline.add({"i": 0, "t": 0.1, "dir": "c2s", "size": 9,
                  "msg": {"jsonrpc": "2.0", "id": 1, "method": "<script>alert(1)</script>"}}, [])
    timeline.add({"i": 1, "t": 0.2, "dir": "s2c", "size": 9, "text": "\x1b[2J<img src=x onerror=alert(1)>"},
                 [_finding()])
    summary = Summary(messages=2, timeline=timeline.rows)
    page = render(TapFormat.HTML, [_finding()], summary)
    assert "<script>" not in page and "<img" not in page and "\x1b" not in page
    assert "default-src 'none'" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; id=1" in page and "&rarr;" in page and "&larr;" in page
    assert page.count('class="warning"') == 2  # the finding in the table, and in the sequence where it came


def test_http_sessions_dropped_past_the_cap_are_said() -> None:
    assert "no longer judged" not in render(TapFormat.HUMAN, [], Summary(connections=2))
    human = render(TapFormat.HUMAN, [], Summary(connections=70, sessions_dropped=6))
    assert "70 connection(s)" in human and "6 HTTP session(s) no longer judged: past 64 at once" in human
    document = json.loads(render(TapFormat.JSON, [], Summary(connections=70, sessions_dropped=6)))
    assert (document["connections"], document["sessionsDropped"]) == (70, 6)
