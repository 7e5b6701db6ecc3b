"""Run the lint rules (`rules.py`) over what one probe kept, or over a fleet's probes.

Pure functions of the snapshot and the listings: what the server sent, read again, offline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from mcpprobe.client.catalog import Listing
from mcpprobe.client.kinds import LIST_KINDS, identity
from mcpprobe.findings import Finding, Severity
from mcpprobe.lint import rules
from mcpprobe.safety.sanitize import truncate, visible

EVIDENCE_CHARS = 120  # how much of the matched text a finding quotes


@dataclass(frozen=True)
class LintSettings:
    strict: bool = False  # --lint=strict: warnings become errors (exit 1)
    token_budget: int | None = None  # --token-budget N


@dataclass(frozen=True)
class Text:
    """One piece of text a model reads: where it is, and what it says."""

    kind: str  # tools, prompts, resources, templates, or server
    item: str | None  # the item's identity (None for the server's own text)
    field: str  # "description", "inputSchema.properties.path.description", "instructions"
    value: str

    @property
    def where(self) -> str:
        if self.item is None:
            return f"server {self.field}"
        return f"{LIST_KINDS[self.kind].singular} {visible(self.item)} {self.field}"


def texts(instructions: str | None, listings: Mapping[str, Listing]) -> Iterator[Text]:
    """Every text of the catalogue that is sent to a model."""
    if isinstance(instructions, str) and instructions:
        yield Text("server", None, "instructions", instructions)
    for kind, listing in listings.items():
        if kind not in LIST_KINDS:
            continue
        for item in listing.items:
            name = identity(kind, item)
            if name is None:
                continue
            for key in ("title", "description"):
                if isinstance(item.get(key), str):
                    yield Text(kind, name, key, item[key])
            annotations = item.get("annotations")
            if isinstance(annotations, dict) and isinstance(annotations.get("title"), str):
                yield Text(kind, name, "annotations.title", annotations["title"])
            for key in ("inputSchema", "outputSchema"):
                yield from (Text(kind, name, path, value) for path, value in _schema_texts(item.get(key), key))
            arguments = item.get("arguments")
            if isinstance(arguments, list):
                for argument in arguments:
                    if isinstance(argument, dict) and isinstance(argument.get("description"), str):
                        yield Text(kind, name, f"arguments.{argument.get('name')}.description",
                                   argument["description"])


def _schema_texts(schema: Any, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """The descriptions and titles anywhere in a JSON Schema (bounded depth: a schema is server text)."""
    if depth > 12:
        return
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in ("description", "title") and isinstance(value, str):
                yield f"{path}.{key}", value
            elif isinstance(value, (dict, list)):
                yield from _schema_texts(value, f"{path}.{key}", depth + 1)
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            yield from _schema_texts(value, f"{path}.{index}", depth + 1)


def _evidence(value: str, match: re.Match[str]) -> str:
    return truncate(visible(match.group(0)), EVIDENCE_CHARS)


def _finding(code: str, message: str, kind: str, severity: Severity, settings: LintSettings,
             detail: dict[str, Any]) -> Finding:
    if settings.strict and severity is Severity.WARNING:
        severity = Severity.ERROR
    return Finding(code, message, kind=kind, severity=severity, detail=detail)


def text_findings(text: Text, settings: LintSettings) -> list[Finding]:
    found = []
    for rule in rules.TEXT_RULES:
        match = rule.pattern.search(text.value)
        if match is None:
            continue
        evidence = _evidence(text.value, match)
        found.append(_finding(rule.code, f"{text.where}: {evidence!r}", text.kind, rule.severity, settings,
                              _detail(text, evidence)))
    if text.field == "description" and len(text.value) > rules.LONG_DESCRIPTION:
        found.append(_finding("lint-long-description",
                              f"{text.where}: {len(text.value)} characters (more than {rules.LONG_DESCRIPTION})",
                              text.kind, rules.LONG_DESCRIPTION_SEVERITY, settings,
                              {**_detail(text, None), "characters": len(text.value)}))
    return found


def _detail(text: Text, evidence: str | None) -> dict[str, Any]:
    detail: dict[str, Any] = {"field": text.field}
    if text.item is not None:
        detail["item"] = text.item
    if evidence is not None:
        detail["evidence"] = evidence
    return detail


def _words(name: str) -> list[str]:
    """delete_file, deleteFile, delete-file -> ["delete", "file"]."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [word.lower() for word in re.split(r"[^A-Za-z0-9]+", spaced) if word]


def annotation_findings(tool: dict[str, Any], settings: LintSettings) -> list[Finding]:
    name, annotations = tool.get("name"), tool.get("annotations")
    if not isinstance(name, str) or not isinstance(annotations, dict):
        return []
    found = []
    where = f"tool {visible(name)}"
    if annotations.get("readOnlyHint") is True:
        for hint in ("destructiveHint",):
            if annotations.get(hint) is True:
                found.append(_finding("lint-annotations-conflict",
                                      f"{where}: readOnlyHint and {hint} are both true", "tools",
                                      Severity.WARNING, settings, {"item": name, "annotations": [
                                          "readOnlyHint", hint]}))
        action = action_word(_words(name))
        if action is not None and action in rules.DESTRUCTIVE_WORDS and action not in rules.READ_WORDS:
            found.append(_finding("lint-annotation-vs-name",
                                  f"{where}: readOnlyHint is true but the name says {action!r}", "tools",
                                  Severity.WARNING, settings, {"item": name, "word": action}))
    return found


def action_word(words: list[str]) -> str | None:
    """The word of a tool name that says what it does, by its role, not its place. A name that begins
    with a verb reads as one ("get_delete_log" gets; "delete_file", "update_list" change). A name that
    ends with a verb no noun is spelled like (`TRAILING_VERBS`) was named namespace first, and that verb
    says what it does ("deploy_app_logs_get" gets; "files_delete" deletes); its first word is a
    namespace. None when neither end of the name is a known verb."""
    if not words:
        return None
    first, last = words[0], words[-1]
    if first in rules.READ_WORDS:
        return first
    if len(words) > 1 and last in rules.TRAILING_VERBS:
        return last
    if first in rules.DESTRUCTIVE_WORDS:
        return first
    return None


_WORD = re.compile(r"[\w\-.]+")
_CODE = re.compile(r"`([^`\n]{1,200})`")


def _distinct(name: str) -> bool:
    """A name distinct enough to mean a tool when it stands as a word: with a separator or a
    capital inside (list_files, listFiles). "search" in "search the web" names no tool."""
    return re.search(r"[_\-.]|[a-z][A-Z]", name) is not None


def mentioned(text: str) -> set[str]:
    """The words of `text` that could name a tool: each quoted as code (`echo`), and each whole
    word distinct enough to be a name. Linear in the text, whatever the catalogue's size."""
    words = {word.rstrip(".") for word in _WORD.findall(text)}
    return {word for word in words if word and _distinct(word)} | set(_CODE.findall(text))


REFERENCE_SAMPLE = 5  # names (and fields) a reference finding quotes; the rest are counted


class References:
    """Tool texts that name other tools (`others`: tool name -> the server offering it), gathered per
    tool: one finding per tool (and per server whose tools it names), counting how many it names, with
    a sample. So the findings grow with the catalogue, not with its square (1000 tools that each name
    all the others made 999,000 findings). `add` each text in order: a tool's texts come together."""

    def __init__(self, others: Mapping[str, str], settings: LintSettings, *, server: str | None = None) -> None:
        self.others, self.settings, self.server = others, settings, server
        self.found: list[Finding] = []
        self._tool: str | None = None
        self._kind = "tools"
        self._named: dict[str, tuple[list[str], set[str]]] = {}  # offered by -> (fields, names)

    def add(self, text: Text) -> None:
        if text.kind != "tools" or text.item is None:
            return
        if text.item != self._tool:
            self.flush()
            self._tool, self._kind = text.item, text.kind
        for name in mentioned(text.value):
            offered_by = self.others.get(name)
            if offered_by is None or name == text.item:
                continue
            fields, names = self._named.setdefault(offered_by, ([], set()))
            if text.field not in fields:
                fields.append(text.field)
            names.add(name)

    def flush(self) -> list[Finding]:
        """The findings of the tool gathered so far; every finding so far."""
        tool, server = self._tool, self.server
        for offered_by, (fields, names) in sorted(self._named.items()):
            assert tool is not None
            sample = sorted(names)[:REFERENCE_SAMPLE]
            more = len(names) - len(sample)
            listed = ", ".join(map(visible, sample)) + (f" and {more} more" if more else "")
            where = f"tool {visible(tool)} " + ", ".join(fields[:3]) + (f" and {len(fields) - 3} more fields"
                                                                        if len(fields) > 3 else "")
            if offered_by == server:
                code, severity = "lint-names-tool", Severity.INFO
                what = (f"another tool of this server: {listed}" if len(names) == 1
                        else f"{len(names)} other tools of this server: {listed}")
            else:
                code, severity = "fleet-names-foreign-tool", Severity.WARNING
                what = (f"{visible(offered_by)}'s tool {listed}" if len(names) == 1
                        else f"{len(names)} of {visible(offered_by)}'s tools: {listed}")
            detail: dict[str, Any] = {"item": tool, "field": fields[0], "fields": fields[:REFERENCE_SAMPLE],
                                      "names": sample, "count": len(names)}
            if offered_by != server:
                detail["server"] = offered_by
            self.found.append(_finding(code, f"{where} names {what}", self._kind, severity, self.settings, detail))
        self._named = {}
        return self.found


def estimate_tokens(instructions: str | None, listings: Mapping[str, Listing]) -> int:
    """Characters of the catalogue's compact JSON (what a client puts in the model's context),
    divided by CHARS_PER_TOKEN, rounded up."""
    chars = len(instructions or "")
    for kind, listing in listings.items():
        if kind in LIST_KINDS:
            chars += sum(len(json.dumps(item, separators=(",", ":"), ensure_ascii=False)) for item in listing.items)
    return -(-chars // rules.CHARS_PER_TOKEN)


def lint(instructions: str | None, listings: Mapping[str, Listing], settings: LintSettings) -> list[Finding]:
    """Every lint finding of one server's catalogue."""
    found: list[Finding] = []
    tools = listings.get("tools")
    own_tools: dict[str, str] = {}
    if tools is not None:
        for tool in tools.items:
            name = identity("tools", tool)
            if name is not None:
                own_tools[name] = ""
            found.extend(annotation_findings(tool, settings))
    references = References(own_tools, settings, server="")
    for text in texts(instructions, listings):
        found.extend(text_findings(text, settings))
        references.add(text)
    found.extend(references.flush())
    tokens = estimate_tokens(instructions, listings)
    method = f"characters of the catalogue's JSON / {rules.CHARS_PER_TOKEN}"
    if settings.token_budget is not None and tokens > settings.token_budget:
        found.append(_finding("lint-token-budget", f"the catalogue is about {tokens} tokens ({method}), over "
                              f"--token-budget {settings.token_budget}", "server", Severity.WARNING, settings,
                              {"tokens": tokens, "budget": settings.token_budget, "method": method}))
    else:
        found.append(_finding("lint-tokens", f"the catalogue is about {tokens} tokens ({method})", "server",
                              Severity.INFO, settings, {"tokens": tokens, "method": method,
                                                        **({"budget": settings.token_budget}
                                                           if settings.token_budget is not None else {})}))
    return found


def fleet_lint(servers: Mapping[str, Mapping[str, Listing]], settings: LintSettings) -> dict[str, list[Finding]]:
    """Findings of a fleet, by server: a tool name offered by more than one server (which one a
    client calls is up to the client: the others are shadowed), and a tool's text on one server
    that names a tool another server offers."""
    offered: dict[str, list[str]] = {}
    for server, listings in servers.items():
        tools = listings.get("tools")
        for tool in tools.items if tools is not None else ():
            name = identity("tools", tool)
            if name is not None and server not in offered.setdefault(name, []):
                offered[name].append(server)
    found: dict[str, list[Finding]] = {server: [] for server in servers}
    for name, by in offered.items():
        for server in by if len(by) > 1 else ():
            others = [other for other in by if other != server]
            found[server].append(_finding(
                "fleet-shadowed-tool", f"tool {visible(name)} is also offered by {', '.join(map(visible, others))}",
                "tools", Severity.WARNING, settings, {"item": name, "servers": by}))
    for server, listings in servers.items():
        foreign = {name: by[0] for name, by in offered.items() if server not in by}
        references = References(foreign, settings, server=server)
        for text in texts(None, {"tools": listings["tools"]} if "tools" in listings else {}):
            references.add(text)
        found[server].extend(references.flush())
    return found
