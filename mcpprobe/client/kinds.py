"""The kinds a server lists, in one table, and the one diff between two lists of a kind.

Everything that needs to know how a kind is listed, which capability it needs, or what identifies
one of its items reads it here by name (`KINDS["templates"].identity`), never by position.
`watch` (a re-list against the last one) and drift (a probe against a saved baseline) compare
catalogs with the same `diff`. This module imports only the data of mcpprobe.client.obligations, so
that the light paths (argv pre-parsing, drift) can use it freely.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcpprobe.client.obligations import is_optional


@dataclass(frozen=True)
class Kind:
    name: str  # tools | resources | templates | prompts | tasks
    list_method: str  # tools/list
    capability: str  # what the server declares for it: "tools", "tasks.list"
    result_key: str  # the list in a page's result: "resourceTemplates"
    identity: str  # the field that names one item: "uriTemplate"
    notifier: str  # whose notifications/<notifier>/list_changed makes it stale (templates: resources)
    singular: str  # "template", for messages

    @property
    def optional(self) -> bool:
        """An optional part of its capability: no revision of the specification obliges a server that
        declares the capability to answer `list_method`, so -32601 there means "none of this kind",
        not a contradiction (the one table: mcpprobe.client.obligations)."""
        return is_optional(self.list_method)


# The catalog: what the server offers. `probe`, `watch` and drift know only these.
KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind("tools", "tools/list", "tools", "tools", "name", "tools", "tool"),
    Kind("resources", "resources/list", "resources", "resources", "uri", "resources", "resource"),
    Kind("templates", "resources/templates/list", "resources", "resourceTemplates", "uriTemplate", "resources",
         "template"),
    Kind("prompts", "prompts/list", "prompts", "prompts", "name", "prompts", "prompt"),
)}
# What `list` accepts: the catalog, and the tasks of 2025-11-25 (`tasks.list`). Tasks are the
# server's running state, not its offer.
LIST_KINDS: dict[str, Kind] = {
    **KINDS, "tasks": Kind("tasks", "tasks/list", "tasks.list", "tasks", "taskId", "tasks", "task")}


def tool_title(tool: Any) -> Any:
    """A tool's title for display: `title`, else `annotations.title` (2025-03-26 tools have only that),
    else whatever `title` holds (None for most). The specification's display-name order ends with
    `name` (schema.ts, BaseMetadata.title: "If not provided, the name should be used for display
    (except for Tool, where `annotations.title` should be given precedence over using `name`, if
    present)"); where the name has a place of its own it is shown there, not again."""
    if not isinstance(tool, dict):
        return None
    title = tool.get("title")
    if isinstance(title, str) and title:
        return title
    annotations = tool.get("annotations")
    fallback = annotations.get("title") if isinstance(annotations, dict) else None
    return fallback if isinstance(fallback, str) and fallback else title


def identity(kind: str, item: Any) -> str | None:
    """The item's identity (`name`, `uri`, ...), or None when it has none that is a string."""
    value = item.get(LIST_KINDS[kind].identity) if isinstance(item, dict) else None
    return value if isinstance(value, str) else None


def by_identity(kind: str, items: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """The items that have an identity, by it, in list order. Of two items with the same identity
    the first is kept, as the listing's duplicate-item finding names the first one the original."""
    out: dict[str, dict[str, Any]] = {}
    for item in items:
        ident = identity(kind, item)
        if ident is not None and ident not in out:
            out[ident] = item
    return out


@dataclass
class Diff:
    """What changed between two lists of one kind, by identity. `added` and `changed` are in the
    new list's order, `removed` in the old one's."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: dict[str, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)  # id -> (old, new)

    @property
    def changes(self) -> int:
        return len(self.added) + len(self.removed) + len(self.changed)


def diff(before: Mapping[str, dict[str, Any]], after: Mapping[str, dict[str, Any]]) -> Diff:
    """Compare two lists indexed with `by_identity`."""
    result = Diff(removed=[ident for ident in before if ident not in after])
    for ident, item in after.items():
        old = before.get(ident)
        if old is None:
            result.added.append(ident)
        elif old != item:
            result.changed[ident] = (old, item)
    return result


def changed_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The top-level fields whose values differ (added, removed or changed), sorted."""
    return sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
