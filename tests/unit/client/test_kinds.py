"""The one kind table and the one catalog diff that watch and drift share."""

from __future__ import annotations

from mcpprobe.client import kinds
from mcpprobe.client.kinds import KINDS, LIST_KINDS
from mcpprobe.render.progress import LISTED_BY
from mcpprobe.watch.lists import diff_event as _diff
from mcpprobe.wire import prestart


def test_every_copy_of_the_kinds_agrees_with_the_table() -> None:
    # prestart keeps its own tuple: it must not pay for importing dataclasses before the server starts.
    assert tuple(LIST_KINDS) == prestart.KINDS
    assert LISTED_BY == {"tools/list": "tools", "resources/list": "resources",
                         "resources/templates/list": "templates", "prompts/list": "prompts", "tasks/list": "tasks"}
    assert {name: kind.identity for name, kind in LIST_KINDS.items()} == {
        "tools": "name", "resources": "uri", "templates": "uriTemplate", "prompts": "name", "tasks": "taskId"}
    assert KINDS["templates"].notifier == "resources" and KINDS["templates"].capability == "resources"
    assert "tasks" not in KINDS


def test_diff_by_identity_in_list_order() -> None:
    before = kinds.by_identity("resources", [{"uri": "a"}, {"uri": "b", "name": "x"}, {"uri": "c"}, {"name": "no"}])
    after = kinds.by_identity("resources", [{"uri": "d"}, {"uri": "b", "name": "y", "size": 1}, {"uri": "a"}])
    assert list(before) == ["a", "b", "c"]
    assert _diff(before, after) == {"added": ["d"], "removed": ["c"],
                                    "changed": [{"id": "b", "fields": ["name", "size"]}], "changes": 3}
    assert kinds.diff(after, after).changes == 0


def test_the_first_of_two_items_with_one_identity_is_kept() -> None:
    # As the listing's duplicate-item finding names the first one the original.
    index = kinds.by_identity("tools", [{"name": "t", "n": 1}, {"name": "t", "n": 2}])
    assert index == {"t": {"name": "t", "n": 1}}
