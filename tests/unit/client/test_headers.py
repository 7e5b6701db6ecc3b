"""mcpprobe.client.headers: the x-mcp-header rules and value encodings of SEP-2243, with the
specification's own examples (basic/transports/streamable-http.mdx, 2026-07-28)."""

from __future__ import annotations

import pytest

from mcpprobe.client.headers import HeaderParam, Invalid, declared, encode, mirrored, unsafe_integers


def schema(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize("value, header", [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    # SEP-2243's edge cases
    (" us-west1", "=?base64?IHVzLXdlc3Qx?="),
    ("us-west1 ", "=?base64?dXMtd2VzdDEg?="),
    ("us west 1", "us west 1"),
    ("日本語", "=?base64?5pel5pys6Kqe?="),
    ("line1\r\nline2", "=?base64?bGluZTENCmxpbmUy?="),
    ("\tindented", "=?base64?CWluZGVudGVk?="),
    ("", ""),
    ("=?base64?no end", "=?base64?no end"),  # only a value that starts and ends like the sentinel
])
def test_values_are_encoded_as_the_specification_shows(value: str, header: str) -> None:
    assert encode(value) == header


def test_the_headers_of_a_call() -> None:
    params = declared(schema(
        region={"type": "string", "x-mcp-header": "Region"},
        count={"type": "integer", "x-mcp-header": "Count"},
        flag={"type": "boolean", "x-mcp-header": "Flag"},
        nested={"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        query={"type": "string"},
    ))
    assert isinstance(params, tuple)
    assert [p.header for p in params] == ["Mcp-Param-Region", "Mcp-Param-Count", "Mcp-Param-Flag", "Mcp-Param-Zone"]
    assert mirrored(params, {"region": "eu", "count": 42, "flag": True, "nested": {"zone": "a"}, "query": "q"}) == {
        "Mcp-Param-Region": "eu", "Mcp-Param-Count": "42", "Mcp-Param-Flag": "true", "Mcp-Param-Zone": "a"}
    # Null or absent: "Client MUST omit the header"; 42.0 is the integer 42.
    assert mirrored(params, {"region": None, "count": 42.0, "flag": False, "nested": "not an object"}) == {
        "Mcp-Param-Count": "42", "Mcp-Param-Flag": "false"}
    assert mirrored(params, None) == {}


@pytest.mark.parametrize("properties, rule", [
    ({"v": {"type": "string", "x-mcp-header": ""}}, "not-empty"),
    ({"v": {"type": "string", "x-mcp-header": "My Region"}}, "token"),
    ({"v": {"type": "string", "x-mcp-header": "Region:Primary"}}, "token"),
    ({"v": {"type": "string", "x-mcp-header": "Région"}}, "token"),
    ({"v": {"type": "string", "x-mcp-header": 3}}, "token"),
    ({"v": {"type": "string", "x-mcp-header": "Region\t1"}}, "no-control-characters"),
    ({"v": {"type": "string", "x-mcp-header": "Region\r\n"}}, "no-control-characters"),
    ({"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "REGION"}}, "unique"),
    ({"v": {"type": "number", "x-mcp-header": "V"}}, "primitive-type"),
    ({"v": {"type": "object", "x-mcp-header": "V"}}, "primitive-type"),
    ({"v": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "V"}}, "primitive-type"),
    ({"v": {"type": "null", "x-mcp-header": "V"}}, "primitive-type"),
    ({"v": {"x-mcp-header": "V"}}, "primitive-type"),
    ({"v": {"type": "array", "items": {"type": "string", "x-mcp-header": "V"}}}, "statically-reachable"),
    ({"v": {"anyOf": [{"type": "string", "x-mcp-header": "V"}]}}, "statically-reachable"),
    ({"v": {"type": "object", "additionalProperties": {"type": "string", "x-mcp-header": "V"}}},
     "statically-reachable"),
    ({"v": {"if": {"type": "string", "x-mcp-header": "V"}}}, "statically-reachable"),
])
def test_each_rule_makes_the_tool_invalid(properties: dict[str, object], rule: str) -> None:
    found = declared(schema(**properties))
    assert isinstance(found, Invalid) and found.rule == rule, found


def test_unreachable_places_and_the_root_are_invalid_and_instance_data_is_not_an_annotation() -> None:
    assert isinstance(found := declared({"type": "object", "x-mcp-header": "Root"}), Invalid)
    assert found.rule == "statically-reachable"
    in_defs = {"type": "object", "properties": {"v": {"$ref": "#/$defs/v"}},
               "$defs": {"v": {"type": "string", "x-mcp-header": "V"}}}
    assert isinstance(found := declared(in_defs), Invalid) and found.rule == "statically-reachable"
    data = schema(v={"type": "object", "default": {"x-mcp-header": "V"}, "enum": [{"x-mcp-header": 1}]})
    assert declared(data) == ()
    assert declared(None) == () and declared(True) == ()


def test_a_hostile_depth_costs_no_recursion() -> None:
    deep: dict[str, object] = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(20_000):
        deep = {"type": "object", "properties": {"p": deep}}
    found = declared(deep)
    assert isinstance(found, tuple) and found[0].header == "Mcp-Param-Deep" and len(found[0].path) == 20_000


def test_integers_beyond_the_safe_range() -> None:
    params = (HeaderParam(("n",), "N", "integer"), HeaderParam(("s",), "S", "string"))
    assert unsafe_integers(params, {"n": 2**53 - 1, "s": "x"}) == []
    assert unsafe_integers(params, {"n": -(2**53)}) == ["n"]


@pytest.mark.parametrize("properties, said", [
    ({"v": {"type": "string", "x-mcp-header": 3}}, "x-mcp-header is a number, not a string"),
    ({"v": {"type": "string", "x-mcp-header": True}}, "x-mcp-header is a boolean, not a string"),
    ({"v": {"type": "string", "x-mcp-header": None}}, "x-mcp-header is null, not a string"),
    ({"v": {"type": "string", "x-mcp-header": ["V"]}}, "x-mcp-header is an array, not a string"),
    ({"v": {"type": ["string", "null"], "x-mcp-header": "V"}}, 'on a parameter of type ["string", "null"]'),
    ({"v": {"type": "number", "x-mcp-header": "V"}}, "on a parameter of type 'number'"),
])
def test_the_message_names_json_types_as_json_does(properties: dict[str, object], said: str) -> None:
    """What the server wrote, in JSON's words: not Python's (`a int`, `['string', 'null']`)."""
    found = declared(schema(**properties))
    assert isinstance(found, Invalid) and said in found.message, found
