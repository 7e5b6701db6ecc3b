"""--format junit: JUnit XML, so that CI systems show each check as a test.

One `<testsuite>` per server. Its test cases: `connection`, one per kind (skipped when not
declared), one per expectation, and `baseline` when comparing with one (skipped for a fleet member
whose baseline does not exist yet). A failed case carries the findings' text. Server text is made
inert (`sanitize.visible`): nothing XML 1.0 cannot hold, nothing that acts on a terminal.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from mcpprobe.client.catalog import KINDS
from mcpprobe.findings import Finding, Severity
from mcpprobe.safety.sanitize import visible
from mcpprobe.wire.stderrlog import entry_text

_CI_CODES = ("expectation-failed", "breaking-change", "drift")


def _clean(text: str, *, multiline: bool = True) -> str:
    # `visible` leaves nothing XML 1.0 cannot hold (controls, lone surrogates, U+FFFE/U+FFFF
    # become notation) and nothing that acts on a terminal the report is printed on.
    return visible(text, multiline=multiline)


def _line(finding: Finding) -> str:
    severity = (finding.severity or Severity.INFO).value
    return _clean(f"{severity} {finding.code} [{finding.kind}] {finding.message}")


def _case(suite: ET.Element, classname: str, name: str, seconds: float = 0.0) -> ET.Element:
    return ET.SubElement(suite, "testcase", {"classname": classname, "name": _clean(name, multiline=False),
                                             "time": f"{seconds:.3f}"})


def _fail(case: ET.Element, message: str, body: str, kind: str = "failure") -> None:
    element = ET.SubElement(case, kind, {"message": _clean(message, multiline=False), "type": kind})
    element.text = _clean(body)


def _classname(label: str) -> str:
    """`mcpprobe.` and the server's label with every run of characters other than letters, digits,
    `_` and `-` as one `_`: CI viewers split class names on dots into a package tree, and a URL's
    dots (`https://api.example.com/mcp`) would scatter one server over several packages."""
    import re

    return "mcpprobe." + (re.sub(r"[^\w-]+", "_", _clean(label, multiline=False)).strip("_") or "server")


def suite(report: Any) -> ET.Element:
    outcome = report.outcome
    name = report.member.label
    classname = _classname(name)
    found = outcome.all_findings()
    element = ET.Element("testsuite", {"name": _clean(name, multiline=False), "time": f"{report.elapsed:.3f}"})
    if report.member.skipped is not None:
        case = _case(element, classname, "connection")
        ET.SubElement(case, "skipped", {"message": _clean(f"not probed: {report.member.skipped}", multiline=False)})
        element.set("tests", "1")
        element.set("failures", "0")
        element.set("errors", "0")
        element.set("skipped", "1")
        return element
    negotiated = bool(outcome.snapshot and outcome.snapshot.negotiated)

    timings = {t.phase: t.ms / 1000 for t in outcome.timings}
    connect = _case(element, classname, "connection",
                    sum(v for k, v in timings.items() if not k.startswith("list ")))
    server_errors = [f for f in found if f.kind == "server" and f.severity is Severity.ERROR
                     and f.code not in _CI_CODES]
    if outcome.error is not None or server_errors:
        first = outcome.error.message if outcome.error is not None else server_errors[0].message
        body = "\n".join(_line(f) for f in server_errors) + "".join(
            f"\n  | {entry_text(entry)}" for entry in outcome.stderr_tail)
        _fail(connect, first, body, "error" if outcome.error is not None else "failure")

    for kind in KINDS:
        case = _case(element, classname, f"list {kind}", timings.get(f"list {kind}", 0.0))
        listing = outcome.listings.get(kind)
        if not negotiated or listing is None:
            ET.SubElement(case, "skipped", {"message": "not reached: the probe stopped before listing"})
            continue
        if not listing.declared and listing.state == "not-declared":
            ET.SubElement(case, "skipped", {"message": f"{kind} not declared by the server; nothing sent"})
            continue
        if listing.state == "not-implemented":
            ET.SubElement(case, "skipped", {"message": f"{kind} not implemented by the server (-32601), an optional "
                                                       "part of its capability"})
            continue
        errors = [f for f in found if f.kind == kind and f.severity is Severity.ERROR and f.code not in _CI_CODES]
        if errors:
            _fail(case, errors[0].message, "\n".join(_line(f) for f in errors))

    for check in report.checks or []:
        case = _case(element, f"{classname}.expectations", check.name)
        if check.ok is None:
            ET.SubElement(case, "skipped", {"message": _clean(check.message, multiline=False)})
        elif not check.ok:
            _fail(case, check.message, f"expectation not met: {check.name}: {check.message}")

    if report.drift is not None:
        case = _case(element, f"{classname}.baseline", f"no breaking change since {report.drift.baseline}")
        breaking = [c for c in report.drift.changes if c.breaking]
        if breaking:
            _fail(case, breaking[0].message(), "\n".join(c.message() for c in breaking))
    elif report.member.baseline_missing and report.outcome.error is None:
        path = report.member.baseline_missing
        case = _case(element, f"{classname}.baseline", f"no breaking change since {path}")
        ET.SubElement(case, "skipped", {"message": _clean(f"{path} does not exist: nothing to compare with",
                                                          multiline=False)})

    cases = element.findall("testcase")
    element.set("tests", str(len(cases)))
    for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attribute, str(sum(1 for c in cases if c.find(tag) is not None)))
    out = ET.SubElement(element, "system-out")
    out.text = _clean("\n".join(_line(f) for f in found))
    return element


def render(reports: list[Any]) -> str:
    root = ET.Element("testsuites", {"name": "mcpprobe"})
    for report in reports:
        root.append(suite(report))
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")


def check_suite(report: Any) -> ET.Element:
    """`check --format junit`: `connection`, then one test case per check. A failed MUST (or a
    warning, shown as a failure only with --strict) fails its case; skipped and n/a are skipped;
    a check that could not run is an error. Each check's case has properties, as --json names them:
    `level` (MUST, SHOULD, MAY), `status` (a warning's case passes without --strict: this says it
    warned) and `specUrl` (the rule's page)."""
    outcome = report.outcome
    name = report.member.label
    classname = _classname(name)
    element = ET.Element("testsuite", {"name": _clean(name, multiline=False), "time": f"{report.elapsed:.3f}"})
    connect = _case(element, classname, "connection")
    if report.member.skipped is not None:
        ET.SubElement(connect, "skipped", {"message": _clean(f"not checked: {report.member.skipped}",
                                                             multiline=False)})
    elif outcome.error is not None:
        _fail(connect, outcome.error.message, "".join(f"\n  | {line}" for line in outcome.stderr_tail), "error")
    strict = getattr(outcome, "strict", False)
    for result in getattr(outcome, "results", []):
        case = _case(element, f"{classname}.{result.check.family}", result.check.id, result.ms / 1000)
        status = result.status.value
        properties = ET.SubElement(case, "properties")
        for key, value in (("level", result.level.value), ("status", status), ("specUrl", result.spec_url)):
            ET.SubElement(properties, "property", {"name": key, "value": _clean(value, multiline=False)})
        body = "\n".join([f"{result.level.value} {result.check.id}: {result.message}", result.spec_url,
                          *(f"sent {e.get('sent', '')}\ngot  {e.get('received', '')}" for e in result.evidence)])
        if status == "fail" or (status == "warn" and strict):
            _fail(case, result.message, body)
        elif status == "error":
            _fail(case, result.message, body, "error")
        elif status in ("skipped", "n/a"):
            ET.SubElement(case, "skipped", {"message": _clean(f"{status}: {result.message}", multiline=False)})
        else:
            out = ET.SubElement(case, "system-out")
            out.text = _clean(body)
    cases = element.findall("testcase")
    element.set("tests", str(len(cases)))
    for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attribute, str(sum(1 for c in cases if c.find(tag) is not None)))
    return element


def render_checks(reports: list[Any]) -> str:
    root = ET.Element("testsuites", {"name": "mcpprobe check"})
    for report in reports:
        root.append(check_suite(report))
    for attribute in ("tests", "failures", "errors", "skipped"):
        root.set(attribute, str(sum(int(s.get(attribute, "0")) for s in root)))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode")
