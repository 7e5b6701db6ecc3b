"""Catalog snapshots and drift: what changed since a saved baseline, and whether it breaks clients.

A snapshot holds no timestamp, so that it diffs cleanly when kept in git. Only kinds that were
listed to the end in both runs are compared: an item missing from an incomplete list is unknown,
not removed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from mcpprobe.client import kinds
from mcpprobe.client.kinds import KINDS
from mcpprobe.errors import UsageProblem
from mcpprobe.safety.sanitize import json_dumps

SNAPSHOT_FORMAT = 1


class BaselineError(UsageProblem):
    """A baseline that cannot be read: a usage error (exit 2); in a fleet, that member's own error."""

    code = "baseline-invalid"


class BaselineMissing(BaselineError):
    """A baseline file that does not exist: in a fleet, a member with no snapshot yet."""


def snapshot(outcome: Any) -> dict[str, Any]:
    """The catalog of a finished probe, as written by --save-snapshot."""
    from mcpprobe import __version__

    snap = outcome.snapshot
    kinds: dict[str, Any] = {}
    for kind, listing in outcome.listings.items():
        # A kind the server said it has none of (-32601 for an optional part) is known whole: empty.
        kinds[kind] = {"declared": listing.declared, "complete": listing.whole,
                       "items": list(listing.items)}
    return {
        "mcpprobeSnapshot": SNAPSHOT_FORMAT,
        "mcpprobeVersion": __version__,
        "target": snap.target if snap else None,
        "serverInfo": snap.server_info if snap else None,
        "protocolVersion": (snap.protocol_version or None) if snap else None,
        "capabilities": snap.capabilities if snap and snap.negotiated else None,
        "kinds": kinds,
    }


def write(path: str, data: dict[str, Any], *, follow_links: bool = True) -> None:
    """Write a snapshot atomically: a failed write keeps the previous snapshot (outfiles.WriteFailed)."""
    from mcpprobe.safety.outfiles import write_file

    write_file(path, (json_dumps(data, indent=2, ensure_ascii=True, sort_keys=False) + "\n").encode("utf-8"),
               follow_links=follow_links)


def load(path: str) -> dict[str, Any]:
    from mcpprobe.safety import userinput
    what = f"--baseline {path}"
    try:
        text = userinput.read_text(path, what, error=BaselineError)
    except BaselineError as exc:
        if not os.path.exists(path):
            raise BaselineMissing(exc.message) from None
        raise
    try:
        data = userinput.loads(text, what, error=BaselineError)
    except json.JSONDecodeError as exc:
        raise BaselineError(f"{what}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("mcpprobeSnapshot") != SNAPSHOT_FORMAT or not isinstance(
            data.get("kinds"), dict):
        raise BaselineError(f"{what}: not a snapshot written by mcpprobe probe --save-snapshot")
    problem = _shape_problem(data)
    if problem:
        raise BaselineError(f"{what}: not a snapshot written by mcpprobe probe --save-snapshot: {problem}")
    return data


def _shape_problem(data: dict[str, Any]) -> str | None:
    """What in a snapshot has the wrong type for `compare`, if anything."""
    if not isinstance(data.get("capabilities"), dict | None):
        return "'capabilities' must be an object or null"
    for kind, entry in data["kinds"].items():
        if not isinstance(entry, dict):
            return f"kinds.{kind} must be an object"
        for key in ("declared", "complete"):
            if not isinstance(entry.get(key, False), bool):
                return f"kinds.{kind}.{key} must be true or false"
        if not isinstance(entry.get("items", []), list):
            return f"kinds.{kind}.items must be a list"
    return None


@dataclass
class Change:
    kind: str  # tools | resources | templates | prompts | server
    ident: str
    change: str  # added | removed | changed
    breaking: bool
    details: list[str] = field(default_factory=list)
    previous: str | None = None  # a renamed item: its identity in the baseline (`renames`)

    def message(self) -> str:
        what = f"{_singular(self.kind)} {self.ident!r}"
        if self.change == "changed":
            return f"{what} changed: {'; '.join(self.details)}"
        return f"{what} {self.change}" + (f": {'; '.join(self.details)}" if self.details else "")

    def to_json(self) -> dict[str, Any]:
        data = {"kind": self.kind, "id": self.ident, "change": self.change, "breaking": self.breaking,
                "details": self.details}
        if self.previous is not None:
            data["previousId"] = self.previous
        return data


@dataclass
class Drift:
    baseline: str
    changes: list[Change] = field(default_factory=list)
    not_compared: list[str] = field(default_factory=list)  # kinds incomplete in either run

    @property
    def breaking(self) -> bool:
        return any(c.breaking for c in self.changes)

    def to_json(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "breaking": self.breaking,
                "added": [c.to_json() for c in self.changes if c.change == "added"],
                "removed": [c.to_json() for c in self.changes if c.change == "removed"],
                "changed": [c.to_json() for c in self.changes if c.change == "changed"],
                "notCompared": self.not_compared}

    def findings(self) -> list[Any]:
        from mcpprobe.findings import Finding

        out = []
        for change in self.changes:
            kind = change.kind if change.kind in KINDS else "server"
            detail = {"baseline": self.baseline, **change.to_json()}
            out.append(Finding("breaking-change" if change.breaking else "drift", change.message(), kind=kind,
                               detail=detail))
        for kind in self.not_compared:
            out.append(Finding("drift", f"{kind} not compared with the baseline: the list is not complete in both "
                                        "runs", kind=kind, detail={"baseline": self.baseline, "notCompared": True}))
        return out


def _singular(kind: str) -> str:
    return KINDS[kind].singular if kind in KINDS else "capability" if kind == "server" else kind


def compare(baseline: dict[str, Any], current: dict[str, Any], source: str) -> Drift:
    drift = Drift(source)
    old_caps, new_caps = baseline.get("capabilities") or {}, current.get("capabilities") or {}
    if current.get("capabilities") is not None:
        for name in old_caps:
            if name not in new_caps:
                drift.changes.append(Change("server", name, "removed", True))
        for name in new_caps:
            if name not in old_caps:
                drift.changes.append(Change("server", name, "added", False))
    for kind in KINDS:
        old, new = baseline["kinds"].get(kind), current["kinds"].get(kind)
        if not isinstance(old, dict) or not isinstance(new, dict):
            continue
        if not (old.get("complete") or not old.get("declared")) or not (new.get("complete") or not new.get("declared")):
            drift.not_compared.append(kind)
            continue
        old_items, new_items = _by_id(kind, old.get("items")), _by_id(kind, new.get("items"))
        diff = kinds.diff(old_items, new_items)
        renamed = renames(old_items, new_items, diff) if kind == "tools" else {}
        was = {new_ident: old_ident for old_ident, new_ident in renamed.items()}
        drift.changes.extend(Change(kind, ident, "removed", True) for ident in diff.removed if ident not in renamed)
        for ident in new_items:  # added and changed in the order of the new list
            if ident in diff.changed:
                breaking, other = _item_changes(kind, *diff.changed[ident])
                drift.changes.append(Change(kind, ident, "changed", bool(breaking), breaking + other))
            elif ident in was:
                drift.changes.append(_renamed(kind, was[ident], ident, old_items[was[ident]], new_items[ident]))
            elif ident not in old_items:
                drift.changes.append(Change(kind, ident, "added", False))
    return drift


# ----- the same tool under another name -----
#
# A tool is more than its name: its input schema's shape (the schema without its descriptions and
# titles), its annotations (without their title) and its description. A tool removed and a tool
# added are one tool renamed when they are each other's only match, where two tools match when
#   - their schema shapes and annotations are equal, and the shape has at least one argument or the
#     descriptions are equal too (two tools without arguments are not told apart by shape), or
#   - their descriptions are equal and not empty.
# A rename is a breaking change (a client calling the old name fails), reported as a change of the
# tool under its new name with what else changed (its description, say) and `previousId`.

_PROSE = frozenset({"description", "title", "examples", "$comment"})


def _shape(schema: Any, depth: int = 0) -> Any:
    """A JSON Schema without the prose in it: what arguments a call takes, not how they are told."""
    if depth > 32:
        return None
    if isinstance(schema, dict):
        return {key: _shape(value, depth + 1) for key, value in schema.items() if key not in _PROSE}
    if isinstance(schema, list):
        return [_shape(value, depth + 1) for value in schema]
    return schema


def _annotations(tool: dict[str, Any]) -> Any:
    value = tool.get("annotations")
    return {k: v for k, v in value.items() if k != "title"} if isinstance(value, dict) else None


def _description(tool: dict[str, Any]) -> str:
    value = tool.get("description")
    return value.strip() if isinstance(value, str) else ""


def same_tool(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether two tools of different names are one tool (the rule above)."""
    shape = _shape(old.get("inputSchema"))
    described = bool(_description(old)) and _description(old) == _description(new)
    if shape == _shape(new.get("inputSchema")) and _annotations(old) == _annotations(new):
        properties = shape.get("properties") if isinstance(shape, dict) else None
        if (isinstance(properties, dict) and properties) or described:
            return True
    return described


def renames(old_items: dict[str, dict[str, Any]], new_items: dict[str, dict[str, Any]],
            diff: kinds.Diff) -> dict[str, str]:
    """Old name -> new name of the tools renamed between two lists: pairs of a removed and an added
    tool that are each other's only match (`same_tool`); an ambiguous match is no rename."""
    removed, added = diff.removed, diff.added
    if not removed or not added or len(removed) * len(added) > 250_000:
        return {}  # bounded: a hostile catalogue must not make this quadratic without end
    matches = {old: [new for new in added if same_tool(old_items[old], new_items[new])] for old in removed}
    by_new: dict[str, list[str]] = {}
    for old, news in matches.items():
        for new in news:
            by_new.setdefault(new, []).append(old)
    return {old: news[0] for old, news in matches.items() if len(news) == 1 and len(by_new[news[0]]) == 1}


def _renamed(kind: str, old_ident: str, new_ident: str, old: dict[str, Any], new: dict[str, Any]) -> Change:
    breaking, other = _item_changes(kind, {**old, "name": new_ident}, new)
    return Change(kind, new_ident, "changed", True, [f"renamed from {old_ident!r}", *breaking, *other],
                  previous=old_ident)


def _by_id(kind: str, items: Any) -> dict[str, dict[str, Any]]:
    return kinds.by_identity(kind, items if isinstance(items, list) else [])


def _item_changes(kind: str, old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(breaking, other) descriptions of what changed in one item: at least one, as the items differ."""
    breaking: list[str] = []
    other: list[str] = []
    if kind == "tools":
        breaking, other = _schema_changes(old.get("inputSchema"), new.get("inputSchema"))
        skip = "inputSchema"
    elif kind == "prompts":
        breaking, other = _prompt_changes(old.get("arguments"), new.get("arguments"))
        skip = "arguments"
    else:
        skip = ""
    # A difference the argument rules do not name (an argument's description, additionalProperties
    # loosened) is still a change, as watch reports it: then the field itself is named.
    described = bool(breaking or other)
    for key in kinds.changed_fields(old, new):
        if key == skip and described:
            continue
        other.append(f"{key} {'added' if key not in old else 'removed' if key not in new else 'changed'}")
    return breaking, other


def _schema_changes(old: Any, new: Any) -> tuple[list[str], list[str]]:
    old = old if isinstance(old, dict) else {}
    new = new if isinstance(new, dict) else {}
    old_props = old.get("properties") if isinstance(old.get("properties"), dict) else {}
    new_props = new.get("properties") if isinstance(new.get("properties"), dict) else {}
    old_req = _names(old.get("required"))
    new_req = _names(new.get("required"))
    breaking, other = [], []
    for name in sorted(new_req - old_req):
        breaking.append(f"argument {name!r} is now required")
    for name in sorted(set(old_props) & set(new_props)):
        old_type, new_type = _type_of(old_props[name]), _type_of(new_props[name])
        if old_type != new_type:
            breaking.append(f"argument {name!r} changed type from {old_type} to {new_type}")
        elif old_props[name] != new_props[name]:
            other.append(f"argument {name!r} schema changed")
    for name in sorted(set(old_props) - set(new_props)):
        if new.get("additionalProperties") is False:
            breaking.append(f"argument {name!r} removed")
        else:
            other.append(f"argument {name!r} removed")
    for name in sorted(set(new_props) - set(old_props) - new_req):
        other.append(f"optional argument {name!r} added")
    for name in sorted(old_req - new_req):
        other.append(f"argument {name!r} is no longer required")
    return breaking, other


def _names(value: Any) -> set[str]:
    """The strings of a `required` list; anything else in it (a hostile server's, a hand-edited
    baseline's) is ignored rather than crashing the comparison."""
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _type_of(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    value = schema.get("type")
    if isinstance(value, list):
        return "|".join(sorted(str(v) for v in value))
    return str(value) if value is not None else "any"


def _prompt_changes(old: Any, new: Any) -> tuple[list[str], list[str]]:
    def table(args: Any) -> dict[str, bool]:
        return {a["name"]: a.get("required") is True for a in args if isinstance(a, dict)
                and isinstance(a.get("name"), str)} if isinstance(args, list) else {}

    before, after = table(old), table(new)
    breaking, other = [], []
    for name, required in sorted(after.items()):
        if required and not before.get(name, False):
            breaking.append(f"argument {name!r} is now required")
        elif name not in before:
            other.append(f"optional argument {name!r} added")
    for name in sorted(set(before) - set(after)):
        breaking.append(f"argument {name!r} removed")
    for name, required in sorted(before.items()):
        if required and name in after and not after[name]:
            other.append(f"argument {name!r} is no longer required")
    return breaking, other
