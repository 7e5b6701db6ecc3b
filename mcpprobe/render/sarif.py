"""--format sarif: SARIF 2.1.0, the format code-scanning services (GitHub and others) read.

One run for the whole command (one server or a fleet). `probe`: one rule per finding code that
occurs (its meaning from mcpprobe.findings.CODES, its page in docs/findings.md), one result per
finding. `check`: one rule per check that did not pass (its title, its page in docs/checks/), one
result per failed, warned or broken check. A result's location is the config file and line of the
server's entry when it came from a config, and always a logical location naming the server and the
item. Pure: the line was found when the fleet was built (`Member.source_line`). Server text is
made inert (`sanitize.visible`) as in every document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcpprobe import __version__
from mcpprobe.findings import CODES, Finding, Severity
from mcpprobe.safety.sanitize import visible

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# Where the docs pages are published; a SARIF helpUri must be an absolute URI.
DOCS_URL = "https://github.com/OWNER/mcpprobe/blob/main/docs/"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _location(report: Any, kind: str, item: str | None) -> dict[str, Any]:
    member = report.member
    server = visible(member.label)
    names = [server] if kind == "server" or item is None else [server, kind, visible(item)]
    location: dict[str, Any] = {"logicalLocations": [{
        "name": names[-1], "fullyQualifiedName": "/".join(names),
        "kind": "module" if len(names) == 1 else "resource"}]}
    if member.source and member.source_line:
        path = Path(member.source)
        uri = path.as_uri() if path.is_absolute() else path.as_posix()
        location["physicalLocation"] = {"artifactLocation": {"uri": uri},
                                        "region": {"startLine": member.source_line}}
    return location


def _finding_item(finding: Finding) -> str | None:
    item = finding.detail.get("item") if finding.detail else None
    return item if isinstance(item, str) else None


def _rule(code: str) -> dict[str, Any]:
    severity, meaning = CODES[code]
    return {"id": code, "name": code, "shortDescription": {"text": meaning},
            "help": {"text": f"{meaning}. See docs/findings.md ({DOCS_URL}findings.md#{code}), "
                             f"or `mcpprobe docs findings`."},
            "helpUri": f"{DOCS_URL}findings.md#{code}",
            "defaultConfiguration": {"level": LEVELS[severity]}}


def _document(rules: list[dict[str, Any]], results: list[dict[str, Any]]) -> str:
    run = {"tool": {"driver": {"name": "mcpprobe", "version": __version__,
                               "informationUri": f"{DOCS_URL}findings.md", "rules": rules}},
           "results": results}
    return json.dumps({"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2, ensure_ascii=True)


def render_probe(reports: list[Any]) -> str:
    rules: dict[str, int] = {}
    results = []
    for report in reports:
        for finding in report.outcome.all_findings():
            index = rules.setdefault(finding.code, len(rules))
            results.append({"ruleId": finding.code, "ruleIndex": index,
                            "level": LEVELS[finding.severity or Severity.INFO],
                            "message": {"text": visible(finding.message)},
                            "locations": [_location(report, finding.kind, _finding_item(finding))]})
    return _document([_rule(code) for code in rules], results)


_CHECK_LEVELS = {"fail": "error", "warn": "warning", "error": "error"}


def render_checks(reports: list[Any]) -> str:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for report in reports:
        outcome = report.outcome
        for result in getattr(outcome, "results", []):
            level = _CHECK_LEVELS.get(result.status.value)
            if level is None:
                continue
            check = result.check
            if check.id not in rules:
                page = f"{DOCS_URL}checks/{check.family}.md"
                rules[check.id] = {"id": check.id, "name": check.id, "shortDescription": {"text": check.title},
                                   "help": {"text": f"{check.title} ({result.level.value}; {result.spec_url}). "
                                                    f"See docs/checks/{check.family}.md."},
                                   "helpUri": page}
            results.append({"ruleId": check.id, "ruleIndex": list(rules).index(check.id), "level": level,
                            "message": {"text": visible(f"{result.status.value}: {result.message}")},
                            "locations": [_location(report, "server", None)]})
        if outcome.error is not None:
            # What stopped the run is a finding of probe's vocabulary (connection-failed, timeout ...).
            for finding in outcome.all_findings()[:1]:
                code = f"finding/{finding.code}"
                if code not in rules:
                    rules[code] = {**_rule(finding.code), "id": code}
                results.append({"ruleId": code, "ruleIndex": list(rules).index(code), "level": "error",
                                "message": {"text": visible(finding.message)},
                                "locations": [_location(report, "server", None)]})
    return _document(list(rules.values()), results)
