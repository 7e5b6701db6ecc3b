"""Expectations for CI: what a server must offer, read from a YAML file (docs/expectations.md).

The file is validated on its YAML nodes, so every problem names its line, and scalars are read as
written (an unquoted `2025-11-25` stays a version, not a date). Each expectation becomes one
`Check`; an unmet one is also an `expectation-failed` finding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from mcpprobe.client.kinds import KINDS
from mcpprobe.errors import UsageProblem

KIND_KEYS = {name: kind.identity for name, kind in KINDS.items()}
SINGULAR = {"tools": "tool", "resources": "resource", "templates": "template", "prompts": "prompt"}
TOP_KEYS = ("protocolVersions", "capabilities", *KIND_KEYS, "maxSeconds")


class ExpectationError(UsageProblem):
    """A malformed expectations file: a usage error (exit 2) with the file and line."""


@dataclass(frozen=True)
class ItemExpectation:
    kind: str
    ident: str
    arguments: tuple[str, ...] = ()  # must be accepted
    required: tuple[str, ...] = ()  # must be accepted and required

    def label(self) -> str:
        text = f"{self.kind}: {self.ident}"
        if self.arguments or self.required:
            parts = [*(f"{a}*" for a in self.required), *(a for a in self.arguments if a not in self.required)]
            text += f" ({', '.join(parts)})"
        return text


@dataclass
class Expectations:
    source: str
    protocol_versions: tuple[str, ...] = ()
    capabilities: dict[str, tuple[str, ...]] = field(default_factory=dict)  # capability -> sub-capabilities
    items: list[ItemExpectation] = field(default_factory=list)
    max_seconds: float | None = None


@dataclass(frozen=True)
class Check:
    """One expectation and its verdict. `ok` None: not checked (the probe stopped before)."""

    name: str
    ok: bool | None
    message: str
    kind: str = "server"  # the kind of object the expectation is about, for the finding

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "message": self.message}


# ----- reading -----


def load(path: str) -> Expectations:
    import yaml

    from mcpprobe.safety import userinput
    text = userinput.read_text(path, f"--expect {path}", error=ExpectationError)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        if root is not None:
            userinput.check_yaml_node(root, f"--expect {path}", error=ExpectationError)
        return _Reader(path).read(root)
    except RecursionError:
        raise userinput.too_deep(f"--expect {path}", ExpectationError) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ExpectationError(f"{path}{line}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None


class _Reader:
    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, node: Any, message: str) -> ExpectationError:
        line = f":{node.start_mark.line + 1}" if node is not None else ""
        return ExpectationError(f"{self.path}{line}: {message} (see `mcpprobe docs expectations`)")

    def read(self, root: Any) -> Expectations:
        import yaml

        found = Expectations(self.path)
        if root is None:
            return found
        if not isinstance(root, yaml.MappingNode):
            raise self.fail(root, "expected a mapping of expectations (protocolVersions, capabilities, tools, ...)")
        for key_node, value in root.value:
            key = self.scalar(key_node, "a key")
            if key == "protocolVersions":
                found.protocol_versions = tuple(self.strings(value, key))
            elif key == "capabilities":
                found.capabilities = self.capabilities(value)
            elif key in KIND_KEYS:
                found.items.extend(self.items(key, value))
            elif key == "maxSeconds":
                found.max_seconds = self.number(value, key)
            else:
                raise self.fail(key_node, f"unknown key {key!r}; expected one of {', '.join(TOP_KEYS)}")
        return found

    def scalar(self, node: Any, what: str) -> str:
        import yaml

        if not isinstance(node, yaml.ScalarNode) or node.value == "":
            raise self.fail(node, f"expected {what} (a plain value)")
        return str(node.value)

    def strings(self, node: Any, key: str) -> list[str]:
        import yaml

        if isinstance(node, yaml.ScalarNode):
            return [self.scalar(node, f"a value for {key}")]
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{key} must be a list of values")
        return [self.scalar(item, f"a value in {key}") for item in node.value]

    def number(self, node: Any, key: str) -> float:
        text = self.scalar(node, f"a number for {key}")
        try:
            value = float(text)
        except ValueError:
            raise self.fail(node, f"{key} must be a number of seconds, not {text!r}") from None
        if not math.isfinite(value):
            raise self.fail(node, f"{key} must be a finite number of seconds, not {text!r}")
        if value <= 0:
            raise self.fail(node, f"{key} must be greater than 0")
        return value

    def capabilities(self, node: Any) -> dict[str, tuple[str, ...]]:
        """`[tools, resources]`, `[{resources: [subscribe]}]` or `{tools: {listChanged: true}}`."""
        import yaml

        out: dict[str, tuple[str, ...]] = {}
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                if isinstance(item, yaml.MappingNode):
                    out.update(self.capabilities(item))
                else:
                    out[self.scalar(item, "a capability name")] = ()
            return out
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, "capabilities must be a list of names or a mapping of names to sub-capabilities")
        for key_node, value in node.value:
            name = self.scalar(key_node, "a capability name")
            if isinstance(value, yaml.ScalarNode) and value.value in ("", "~", "null", "true", "{}"):
                out[name] = ()
            elif isinstance(value, yaml.MappingNode):
                subs = []
                for sub_key, sub_value in value.value:
                    sub = self.scalar(sub_key, "a sub-capability name")
                    if self.scalar(sub_value, f"true or false for {sub}").lower() in ("true", "yes", "on"):
                        subs.append(sub)
                out[name] = tuple(subs)
            else:
                out[name] = tuple(self.strings(value, f"capabilities.{name}"))
        return out

    def items(self, kind: str, node: Any) -> list[ItemExpectation]:
        """`[add, search]`, `[{name: add, arguments: [a], required: [a]}]` or `{add: {required: [a]}}`."""
        import yaml

        ident_key = KIND_KEYS[kind]
        if isinstance(node, yaml.MappingNode):
            entries = [(self.scalar(k, f"a {ident_key}"), v) for k, v in node.value]
        elif isinstance(node, yaml.SequenceNode):
            entries = []
            for item in node.value:
                if isinstance(item, yaml.MappingNode):
                    fields = {self.scalar(k, "a key"): v for k, v in item.value}
                    if ident_key not in fields and "name" not in fields:
                        raise self.fail(item, f"an entry of {kind} needs '{ident_key}'")
                    entries.append((self.scalar(fields.pop(ident_key, None) or fields.pop("name"), ident_key), item))
                else:
                    entries.append((self.scalar(item, f"a {ident_key} in {kind}"), None))
        else:
            raise self.fail(node, f"{kind} must be a list of {ident_key}s or a mapping")
        return [self.item(kind, ident, detail) for ident, detail in entries]

    def item(self, kind: str, ident: str, node: Any) -> ItemExpectation:
        import yaml

        arguments: list[str] = []
        required: list[str] = []
        if isinstance(node, yaml.MappingNode):
            for key_node, value in node.value:
                key = self.scalar(key_node, "a key")
                if key in (KIND_KEYS[kind], "name"):
                    continue
                if kind not in ("tools", "prompts"):
                    raise self.fail(key_node, f"{kind} entries take only '{KIND_KEYS[kind]}'")
                if key == "arguments":
                    arguments = self.strings(value, key)
                elif key in ("required", "requiredArguments"):
                    required = self.strings(value, key)
                else:
                    raise self.fail(key_node, f"unknown key {key!r} for {kind}; expected arguments or required")
        elif node is not None and not (isinstance(node, yaml.ScalarNode) and node.value in ("", "~", "null")):
            raise self.fail(node, f"the entry for {ident!r} must be a mapping (arguments, required) or empty")
        return ItemExpectation(kind, ident, tuple(arguments), tuple(required))


# ----- checking -----


def evaluate(expectations: Expectations, outcome: Any, elapsed: float) -> list[Check]:
    """Every expectation against a finished probe `Outcome`; `elapsed` is its wall time in seconds."""
    snapshot = outcome.snapshot
    negotiated = bool(snapshot and snapshot.negotiated)
    checks: list[Check] = []
    stopped = "not checked: the probe stopped before the server's offer was known"
    if expectations.protocol_versions:
        name = f"protocolVersions: {', '.join(expectations.protocol_versions)}"
        version = snapshot.protocol_version if snapshot else ""
        if not negotiated:
            checks.append(Check(name, None, stopped))
        elif version in expectations.protocol_versions:
            checks.append(Check(name, True, f"negotiated {version}"))
        else:
            checks.append(Check(name, False, f"negotiated protocol version {version or '(none)'}, expected one of "
                                             f"{', '.join(expectations.protocol_versions)}"))
    for capability, subs in expectations.capabilities.items():
        name = f"capabilities: {capability}" + (f" ({', '.join(subs)})" if subs else "")
        checks.append(_capability(name, capability, subs, snapshot.capabilities) if negotiated
                      else Check(name, None, stopped))
    indexes: dict[str, dict[Any, dict[str, Any]]] = {}  # kind -> items by identity, built once per kind
    for item in expectations.items:
        listing = outcome.listings.get(item.kind)
        if negotiated and listing is not None and item.kind not in indexes:
            key = KIND_KEYS[item.kind]
            index: dict[Any, dict[str, Any]] = {}
            for entry in listing.items:  # decoded once, not once per expectation
                index.setdefault(entry.get(key), entry)  # the first of duplicates, as a scan finds it
            indexes[item.kind] = index
        checks.append(_item(item, listing, indexes.get(item.kind, {})) if negotiated
                      else Check(item.label(), None, stopped))
    if expectations.max_seconds is not None:
        name = f"maxSeconds: {expectations.max_seconds:g}"
        if not negotiated:
            checks.append(Check(name, None, stopped))
        elif elapsed <= expectations.max_seconds:
            checks.append(Check(name, True, f"the probe took {elapsed:.2f} s"))
        else:
            checks.append(Check(name, False, f"the probe took {elapsed:.2f} s, more than the expected "
                                             f"{expectations.max_seconds:g} s"))
    return checks


def _capability(name: str, capability: str, subs: tuple[str, ...], declared: dict[str, Any]) -> Check:
    value = declared.get(capability)
    if not isinstance(value, dict):
        return Check(name, False, f"the server did not declare the capability {capability!r}")
    missing = [sub for sub in subs if value.get(sub) is not True]
    if missing:
        return Check(name, False, f"the capability {capability!r} is declared without "
                                  f"{', '.join(repr(m) for m in missing)}")
    return Check(name, True, "declared")


def _item(expected: ItemExpectation, listing: Any, index: dict[Any, dict[str, Any]]) -> Check:
    name, kind = expected.label(), expected.kind
    what = f"{SINGULAR[kind]} {expected.ident!r}"
    if listing is None or not listing.declared:
        return Check(name, False, f"{what} is missing: the server did not declare {kind}", kind)
    found = index.get(expected.ident)
    if found is None:
        why = "" if listing.whole else f" (the list is {listing.state}, so it may be on a page not read)"
        return Check(name, False, f"{what} is missing{why}", kind)
    accepted, required = _arguments(expected.kind, found)
    problems = [f"does not accept argument {a!r}" for a in (*expected.arguments, *expected.required)
                if a not in accepted]
    problems += [f"argument {a!r} is not required" for a in expected.required if a in accepted and a not in required]
    if problems:
        return Check(name, False, f"{what} " + "; ".join(dict.fromkeys(problems)), kind)
    return Check(name, True, "present", kind)


def _arguments(kind: str, item: dict[str, Any]) -> tuple[set[str], set[str]]:
    if kind == "tools":
        schema = got if isinstance(got := item.get("inputSchema"), dict) else {}
        properties = got if isinstance(got := schema.get("properties"), dict) else {}
        required = got if isinstance(got := schema.get("required"), list) else []
        return set(properties), {r for r in required if isinstance(r, str)}
    arguments = got if isinstance(got := item.get("arguments"), list) else []
    named = [a for a in arguments if isinstance(a, dict) and isinstance(a.get("name"), str)]
    return {a["name"] for a in named}, {a["name"] for a in named if a.get("required") is True}


def findings(checks: list[Check]) -> list[Any]:
    from mcpprobe.findings import Finding

    return [Finding("expectation-failed", f"expectation not met: {c.message}", kind=c.kind,
                    detail={"expectation": c.name}) for c in checks if c.ok is False]
