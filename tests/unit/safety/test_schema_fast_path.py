"""The quick item check may only say "valid" where the SDK's own models agree.

mcpprobe validates catalog items with a strict check of its own first and asks the SDK's
generated wire models (slow to import) only about items that check doubts. That is sound only if
the strict check never accepts an item the SDK rejects: proven here over generated items that
mix valid and invalid values for every field of every kind, in both protocol eras.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mcpprobe.safety.schema import FAST, Node, _adapter, fast_check, item_errors, surely_valid

junk = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False),
                 st.text(max_size=5), st.lists(st.integers(), max_size=2),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


def mostly(valid):
    """Valid nine times in ten, anything else the tenth: items are often valid, so the fast path
    is really exercised, and often wrong in exactly one place, where a loose check would slip."""
    return st.integers(0, 9).flatmap(lambda roll: junk if roll == 9 else valid)


strings = mostly(st.text(max_size=8))
bools = mostly(st.booleans())
icon = st.fixed_dictionaries({"src": strings}, optional={
    "mimeType": strings, "sizes": mostly(st.lists(strings, max_size=2)),
    "theme": mostly(st.sampled_from(["light", "dark", "dim"]))})
annotations = st.fixed_dictionaries({}, optional={
    "audience": mostly(st.lists(st.sampled_from(["user", "assistant", "robot"]), max_size=2)),
    "priority": mostly(st.floats(-0.5, 1.5, allow_nan=False)), "lastModified": strings})
schema_obj = st.fixed_dictionaries({"type": mostly(st.just("object"))}, optional={
    "$schema": strings,
    "properties": mostly(st.dictionaries(st.text(max_size=3), mostly(st.one_of(st.booleans(), st.just({}))),
                                         max_size=2)),
    "required": mostly(st.lists(strings, max_size=2))})
common = {"title": strings, "description": strings, "icons": mostly(st.lists(icon, max_size=2)),
          "_meta": mostly(st.just({"k": 1}))}
ITEMS = {
    "tools": st.fixed_dictionaries({"name": strings, "inputSchema": mostly(schema_obj)}, optional={
        "outputSchema": mostly(schema_obj),
        "annotations": mostly(st.fixed_dictionaries({}, optional={
            "readOnlyHint": bools, "destructiveHint": bools, "title": strings})),
        "execution": mostly(st.fixed_dictionaries({}, optional={
            "taskSupport": mostly(st.sampled_from(["forbidden", "optional", "required", "never"]))})),
        **common}),
    "resources": st.fixed_dictionaries({"name": strings, "uri": strings}, optional={
        "mimeType": strings, "size": mostly(st.integers(0, 9)), "annotations": mostly(annotations), **common}),
    "templates": st.fixed_dictionaries({"name": strings, "uriTemplate": strings}, optional={
        "mimeType": strings, "annotations": mostly(annotations), **common}),
    "prompts": st.fixed_dictionaries({"name": strings}, optional={
        "arguments": mostly(st.lists(st.fixed_dictionaries({"name": strings}, optional={
            "required": bools, "description": strings}), max_size=2)), **common}),
    "tasks": st.fixed_dictionaries({
        "taskId": strings, "createdAt": strings, "lastUpdatedAt": strings,
        "status": mostly(st.sampled_from(["working", "input_required", "completed", "failed", "cancelled", "idle"])),
        "ttl": mostly(st.one_of(st.none(), st.integers(0, 9)))}, optional={
        "statusMessage": strings, "pollInterval": mostly(st.integers(0, 9))}),
}


def _sdk_accepts(kind: str, item: dict, modern: bool) -> bool:
    try:
        _adapter(kind, modern).validate_python(item, by_name=False)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("modern", [False, True], ids=["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("kind", list(ITEMS))
def test_fast_check_never_accepts_what_the_sdk_rejects(kind, modern):
    fast_accepted = []

    @settings(max_examples=400, deadline=None)
    @given(ITEMS[kind])
    def check(item):
        if surely_valid(kind, item, modern=modern):
            fast_accepted.append(item)
            assert _sdk_accepts(kind, item, modern), item
        # Whatever the path, the verdict is the SDK's.
        assert (item_errors(kind, item, modern=modern) == []) == _sdk_accepts(kind, item, modern)

    check()
    assert len(fast_accepted) >= 20, "the generator must produce items the fast path accepts"


def test_every_kind_and_era_has_a_fast_check():
    assert set(FAST) == {(kind, modern) for kind in ITEMS for modern in (False, True)}


def test_a_check_is_compiled_once_whichever_way_it_is_reached():
    """Kinds of the same shape in both eras share one tree, and a node called directly (as the
    tasks check calls its object check) uses the function fast_check hands out: one compilation each."""
    assert fast_check("resources", modern=False) is fast_check("resources", modern=True)
    assert fast_check("tools", modern=True) is fast_check("tools", modern=True)
    node = FAST[("prompts", False)]
    assert isinstance(node, Node)
    node({"name": "p"})
    assert fast_check("prompts", modern=False) is node.compiled()


def test_ordinary_items_take_the_fast_path():
    tool = {"name": "add", "title": "Add", "description": "Adds.", "inputSchema": {
        "type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
        "annotations": {"readOnlyHint": True}, "icons": [{"src": "https://x/i.png", "sizes": ["16x16"]}]}
    assert surely_valid("tools", tool, modern=False)
    assert surely_valid("resources", {"uri": "file:///a", "name": "a", "mimeType": "text/plain",
                                      "annotations": {"audience": ["user"], "priority": 0.5}}, modern=False)
    assert surely_valid("prompts", {"name": "p", "arguments": [{"name": "x", "required": True}]}, modern=True)


@pytest.mark.parametrize("model", ["CreateTaskResult", "GetTaskResult"])
def test_the_quick_check_of_task_answers_never_accepts_what_the_sdk_rejects(model):
    """A task answer (mcpprobe.operations.tasks) skips the SDK's models when the quick check accepts it."""
    from mcpprobe.operations.tasks import _adapter as task_adapter
    from mcpprobe.operations.tasks import _surely_valid, _violations

    meta = mostly(st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
    if model == "CreateTaskResult":
        answers = st.fixed_dictionaries({"task": mostly(ITEMS["tasks"])}, optional={"_meta": meta})
    else:
        answers = st.tuples(ITEMS["tasks"], st.fixed_dictionaries({}, optional={"_meta": meta})).map(
            lambda pair: {**pair[0], **pair[1]})
    accepted = []

    def sdk_accepts(answer):
        try:
            task_adapter(model).validate_python(answer, by_name=False)
        except ValidationError:
            return False
        return True

    @settings(max_examples=400, deadline=None)
    @given(answers)
    def check(answer):
        if _surely_valid(model, answer):
            accepted.append(answer)
            assert sdk_accepts(answer), answer
        assert (_violations(model, answer) == []) == sdk_accepts(answer)

    check()
    assert len(accepted) >= 20
