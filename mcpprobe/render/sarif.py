"""--format sarif: SARIF 2.1.0, the format code-scanning services (GitHub and others) read.

One run for the whole command (one server or a fleet). `probe`: one rule per finding code that
occurs (its meaning from mcpprobe.findings.CODES, as text and Markdown help), one result per
finding. `check`: one rule per check that did not pass (its title and the specification's words
it holds the server to, as help; `helpUri` the specification's section), one result per failed,
warned or broken check.

A finding's rule has no `helpUri`: mcpprobe's docs have no public address, and a link to a page
on the machine that ran it would point nowhere for whoever reads the alert. GitHub code scanning
shows `help.markdown` (else `help.text`) beside each alert and does not read `helpUri`, so the
help carries the text itself and names the page installed with mcpprobe (`mcpprobe docs findings`).

A result's location is the config file and line of the server's entry when it came from a config
(a valid URI always: `artifact_location`), and always a logical location naming the server and
the item. Pure: the line was found when the
fleet was built (`Member.source_line`). Server text is made inert (`sanitize.visible`) as in every
document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mcpprobe import __version__
from mcpprobe.findings import CODES, Finding, Severity
from mcpprobe.safety.sanitize import visible

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _location(report: Any, kind: str, item: str | None) -> dict[str, Any]:
    member = report.member
    server = visible(member.label)
    names = [server] if kind == "server" or item is None else [server, kind, visible(item)]
    location: dict[str, Any] = {"logicalLocations": [{
        "name": names[-1], "fullyQualifiedName": "/".join(names),
        "kind": "module" if len(names) == 1 else "resource"}]}
    if member.source and member.source_line:
        location["physicalLocation"] = {"artifactLocation": artifact_location(member.source),
                                        "region": {"startLine": member.source_line}}
    return location


def artifact_location(source: str) -> dict[str, Any]:
    """A file as a SARIF artifactLocation: its `uri` always a valid URI reference (RFC 3986), since
    SARIF 2.1.0 (3.4.3) requires one and a path is not one (`we ird#dir/mcp 100%.json` would be read
    as a fragment and a bad escape). Absolute: a `file:` URI. Relative (as the user named the
    config, from the directory mcpprobe ran in, the repository's root in CI): percent-encoded, every
    character but unreserved ones and `/` (a `:` too, which would read as a scheme), relative to
    `%SRCROOT%`, the base code-scanning services resolve against the checkout."""
    path = Path(source)
    if path.is_absolute():
        return {"uri": path.as_uri()}
    return {"uri": quote(path.as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


def _finding_item(finding: Finding) -> str | None:
    item = finding.detail.get("item") if finding.detail else None
    return item if isinstance(item, str) else None


def _rule(code: str) -> dict[str, Any]:
    severity, meaning = CODES[code]
    where = f"the section `{code}` of mcpprobe's findings page, installed with it: `mcpprobe docs findings`"
    return {"id": code, "name": code, "shortDescription": {"text": meaning},
            "fullDescription": {"text": f"{meaning} ({severity.value})."},
            "help": {"text": f"{code} ({severity.value}): {meaning}. Meaning, likely cause, fix and an example: "
                             f"{where.replace('`', '')}.",
                     "markdown": f"**`{code}`** ({severity.value}): {meaning}.\n\nMeaning, likely cause, fix "
                                 f"and an example: {where}."},
            "defaultConfiguration": {"level": LEVELS[severity]}}


def _check_rule(check: Any, level: str, spec_url: str) -> dict[str, Any]:
    """A check's rule: its title, and the specification's words it holds the server to (the
    catalogue's own quotes, mcpprobe.check.catalogue); `helpUri` the specification's section."""
    quotes = [("every revision" if which == "all" else which, words) for which, words in check.words]
    text = " ".join(f'"{words.replace("**", "")}" ({which})' for which, words in quotes)
    markdown = "\n\n".join(f"> {words}\n>\n> (the specification, {which})" for which, words in quotes)
    page = f"`mcpprobe docs checks/{check.family}`"
    return {"id": check.id, "name": check.id, "shortDescription": {"text": check.title},
            "fullDescription": {"text": f"{check.title} ({level})."},
            "help": {"text": f"{check.title} ({level}; {spec_url}). {text} How it is checked: "
                             f"mcpprobe docs checks/{check.family}.",
                     "markdown": f"**{check.title}** ({level})\n\n{markdown}\n\n[The specification's section]"
                                 f"({spec_url}); how mcpprobe checks it: {page}."},
            "helpUri": spec_url}


def _document(rules: list[dict[str, Any]], results: list[dict[str, Any]]) -> str:
    run = {"tool": {"driver": {"name": "mcpprobe", "version": __version__, "rules": rules}},
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
                rules[check.id] = _check_rule(check, result.level.value, result.spec_url)
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
