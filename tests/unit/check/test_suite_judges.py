"""The `suite` family judges a fixture's answer as the conformance suite's JavaScript does: its `!x`
(an empty list is there, `""` and `null` are not) and its `===` between JSON numbers (30 is 30.0,
true is not 1), so that mcpprobe and the suite never disagree on a value's spelling."""

from __future__ import annotations

from typing import Any

from mcpprobe.check.suite import RESOURCES, Seen, _same, _sep1034, _sep1330
from mcpprobe.check.suite_gate import truthy as _truthy


def asked(properties: dict[str, Any]) -> Seen:
    seen = Seen.__new__(Seen)
    seen.logs, seen.asked = [], [("elicitation/create", {"requestedSchema": {"type": "object",
                                                                               "properties": properties}})]
    return seen


SEP1034 = {"name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer", "default": 30},
           "score": {"type": "number", "default": 95.5},
           "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
           "verified": {"type": "boolean", "default": True}}


def test_truthiness_and_equality_are_javascript_s() -> None:
    assert [_truthy(v) for v in ([], {}, "x", 1)] == [True] * 4
    assert [_truthy(v) for v in ("", 0, None, False, float("nan"))] == [False] * 5
    assert _same(30.0, 30) and _same(True, True)
    assert not _same(True, 1) and not _same(1, True) and not _same("30", 30)


def test_sep1034_defaults_are_compared_as_the_suite_compares_them() -> None:
    assert _sep1034(asked(SEP1034)) == []
    assert _sep1034(asked({**SEP1034, "age": {"type": "integer", "default": 30.0}})) == []
    assert _sep1034(asked({**SEP1034, "verified": {"type": "boolean", "default": 1}})) == [
        "'verified' has the default 1, not true"]
    assert _sep1034(asked({k: v for k, v in SEP1034.items() if k != "score"})) == ["no number field 'score'"]


def test_sep1330_an_empty_list_is_present_as_it_is_for_the_suite() -> None:
    right = {"untitledSingle": {"type": "string", "enum": ["a"]},
             "titledSingle": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
             "legacyEnum": {"type": "string", "enum": ["a"], "enumNames": ["A"]},
             "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["a"]}},
             "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}}
    assert _sep1330(asked(right)) == []
    with_null = {**right, "untitledSingle": {"type": "string", "enum": ["a"], "oneOf": None}}
    assert _sep1330(asked(with_null)) == []  # null is absent for the suite
    with_empty = {**right, "untitledSingle": {"type": "string", "enum": ["a"], "oneOf": []}}
    assert len(_sep1330(asked(with_empty))) == 1  # [] is present for the suite


def test_a_template_read_as_a_blob_does_not_show_the_id() -> None:
    judge = RESOURCES["suite.resources-templates-read"][4]
    assert judge({"contents": [{"uri": "test://template/123/data", "text": '{"id":"123"}'}]}) == []
    assert judge({"contents": [{"uri": "test://template/123/data", "blob": "MTIz"}]}) == [
        "contents[0] is a blob, not a text that shows the id 123 it was read with"]
    assert judge({"contents": []}) == ["the contents list is empty"]
