"""KEY=VALUE parsed once, by the command (mcpprobe.operations.arguments): a tool's pairs into
`ToolArguments` (KEY:=JSON decoded then), built by the tool's inputSchema only when it is known."""

from __future__ import annotations

import pytest

from mcpprobe.errors import UsageProblem
from mcpprobe.operations.arguments import ToolArguments, string_arguments

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}, "tags": {"type": "array"}}}


def test_json_pairs_are_decoded_when_parsed_and_plain_ones_when_built() -> None:
    given = ToolArguments.parse(["n=3", "tags:=[\"x\"]", "note=7"], {"n": 1, "kept": True})
    assert [(p.key, p.raw_json, p.decoded) for p in given.pairs] == [
        ("n", False, None), ("tags", True, ["x"]), ("note", False, None)]
    # --args first, the pairs on top; a value is coerced by its property's schema, else a string
    assert given.build(SCHEMA) == {"n": 3, "kept": True, "tags": ["x"], "note": "7"}
    assert given.build(None) == {"n": "3", "kept": True, "tags": ["x"], "note": "7"}


def test_bad_json_is_a_usage_problem_before_anything_is_built() -> None:
    with pytest.raises(UsageProblem, match="tags:= expects JSON"):
        ToolArguments.parse(["tags:=[1"])
    with pytest.raises(UsageProblem, match="NaN is not a JSON number"):
        ToolArguments.parse(["n:=NaN"])
    with pytest.raises(UsageProblem, match="expected KEY=VALUE"):
        ToolArguments.parse(["no-pair"])


def test_a_value_that_is_no_number_for_a_number_is_a_usage_problem_when_built() -> None:
    given = ToolArguments.parse(["n=NaN"])
    with pytest.raises(UsageProblem, match="n=NaN: NaN is not a JSON number"):
        given.build({"type": "object", "properties": {"n": {"type": "number"}}})


def test_prompt_arguments_are_strings() -> None:
    assert string_arguments(["a=1", "b=x=y"]) == {"a": "1", "b": "x=y"}
    with pytest.raises(UsageProblem, match="prompt arguments are strings"):
        string_arguments(["a:=1"])
