"""Whatever schema a server sends, validating against it ends, with violations or UnusableSchema.

Property-based: schema-like JSON built from every keyword that applies subschemas or resolves
references, nested and recursive, with references inside and outside the schema (to a real
listener on 127.0.0.1 that records any connection), bad and catastrophic patterns, unknown and
mixed dialects. Never another exception, never a connection. The catalog's item check (the
fast path and the SDK's models) takes the same tools without raising.
"""

from __future__ import annotations

import re
import socket
import threading

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcpprobe.safety.schema import item_errors
from mcpprobe.safety.validation import MAX_DEPTH, UnusableSchema, Violation, validate


@pytest.fixture(scope="module")
def listener():
    """A real listener: the port in the generated references, and a record of connections."""
    sock = socket.create_server(("127.0.0.1", 0))
    sock.settimeout(0.2)
    contacts: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            contacts.append("connected")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1], contacts
    stop.set()
    thread.join(5)
    sock.close()


SLOW = r"^(\w|\w\w)*$"
PATTERNS = st.sampled_from(["^a", "b$", "(", "[", SLOW, r"^(\w+\s?)*$", r"(?<n>x)\p{L}", "a{99999999999}", "x*"])
DIALECTS = st.sampled_from(["https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#",
                            "http://json-schema.org/draft-04/schema#", "https://json-schema.org/draft/2019-09/schema",
                            "http://127.0.0.1:1/dialect", "nonsense", 3])
TYPES = st.sampled_from(["object", "string", "integer", "array", "null", "nonsense", ["string", "null"]])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(-2, 2, allow_nan=False),
                    st.sampled_from(["", "x", "a" * 30 + "!", "The quick brown fox!", "(", "2020-01-01"]))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["x", "y", "$ref", "a"]), inner, max_size=3)),
    max_leaves=12)


def schemas(port: int) -> st.SearchStrategy:
    refs = st.sampled_from(["#", "#/$defs/a", "#/$defs/b", "#/properties/x", "#/$defs/nowhere", "#/required",
                            "#/allOf/0", "#a", "#/$defs/a/items", f"http://127.0.0.1:{port}/s.json",
                            f"http://127.0.0.1:{port}/s.json#/x", "file:///dev/zero", "file:///etc/hostname",
                            "other.json", "urn:x", "#/%", "\x00"])
    leaf = st.one_of(st.booleans(), st.fixed_dictionaries({}, optional={
        "type": TYPES, "pattern": PATTERNS, "$ref": refs, "$dynamicRef": refs, "format": st.sampled_from(
            ["regex", "email", "date", "uri"]), "uniqueItems": st.booleans(), "enum": st.lists(JSON, max_size=3),
        "const": JSON, "minLength": st.integers(-1, 3), "required": st.lists(st.sampled_from(["x", "y"]), max_size=2),
        "$anchor": st.just("a"), "$dynamicAnchor": st.just("a"), "default": JSON}))

    def extend(children: st.SearchStrategy) -> st.SearchStrategy:
        return st.fixed_dictionaries({}, optional={
            "properties": st.dictionaries(st.sampled_from(["x", "y", "$ref", "a" * 30 + "!"]), children, max_size=3),
            "patternProperties": st.dictionaries(PATTERNS, children, max_size=2),
            "additionalProperties": children, "unevaluatedProperties": children, "propertyNames": children,
            "items": st.one_of(children, st.lists(children, max_size=2)), "prefixItems": st.lists(children, max_size=2),
            "allOf": st.lists(children, max_size=3), "anyOf": st.lists(children, max_size=3),
            "oneOf": st.lists(children, max_size=3), "not": children, "if": children, "then": children,
            "else": children, "dependentSchemas": st.dictionaries(st.sampled_from(["x", "y"]), children, max_size=2),
            "dependencies": st.dictionaries(st.sampled_from(["x", "y"]), children, max_size=2),
            "$defs": st.fixed_dictionaries({}, optional={"a": children, "b": children}),
            "definitions": st.fixed_dictionaries({}, optional={"a": children}),
            "$ref": refs, "$recursiveRef": st.just("#"), "$id": st.sampled_from(
                [f"http://127.0.0.1:{port}/x.json", "sub.json", "#frag", "urn:y", 5]),
            "$schema": DIALECTS, "type": TYPES, "uniqueItems": st.booleans()})

    return st.recursive(leaf, extend, max_leaves=25)


INSTANCES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(["x", "y", "a", "a" * 30 + "!"]), inner,
                                                 max_size=4)), max_leaves=20)


def _outcome(instance, schema, seconds: float = 0.3) -> str:
    try:
        violations = validate(instance, schema, seconds=seconds)
    except UnusableSchema as exc:
        assert exc.detail["reason"] in {"invalid-schema", "unknown-dialect", "external-reference",
                                        "dangling-reference", "reference-cycle", "too-deep", "bad-pattern",
                                        "slow-pattern", "too-slow", "mixed-dialects"}, exc.detail
        return exc.detail["reason"]
    assert all(isinstance(v, Violation) for v in violations)
    return "validated"


def pinned(port: int) -> list[tuple[object, str]]:
    """Schemas the generator may or may not happen to build, each with the outcome it must have: every
    way a reference cycle can stay on the same value (a validator without the cycle check recurses
    until RecursionError, which would pass as "too-deep"), the cycles that do move into the value,
    and every way a reference can point at the listener (a registry that fetched would connect)."""
    base = f"http://127.0.0.1:{port}"
    return [
        ({"$ref": "#"}, "reference-cycle"),
        ({"allOf": [{"$ref": "#"}]}, "reference-cycle"),
        ({"anyOf": [{"type": "string"}, {"$ref": "#/anyOf/0"}, {"$ref": "#"}]}, "reference-cycle"),
        ({"oneOf": [{"not": {"$ref": "#"}}]}, "reference-cycle"),
        ({"if": {"$ref": "#"}}, "reference-cycle"),
        ({"if": {"type": "object"}, "then": {"$ref": "#"}}, "reference-cycle"),
        ({"if": {"type": "string"}, "else": {"$ref": "#"}}, "reference-cycle"),
        ({"dependentSchemas": {"x": {"$ref": "#"}}}, "reference-cycle"),
        ({"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"x": {"$ref": "#"}}},
         "reference-cycle"),
        ({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}, "reference-cycle"),
        ({"$defs": {"a": {"$anchor": "a", "allOf": [{"$ref": "#a"}]}}, "$ref": "#a"}, "reference-cycle"),
        ({"$dynamicRef": "#"}, "reference-cycle"),
        ({"$schema": "https://json-schema.org/draft/2019-09/schema", "$recursiveAnchor": True,
          "allOf": [{"$recursiveRef": "#"}]}, "reference-cycle"),
        ({"$id": f"{base}/x.json", "$ref": "x.json"}, "reference-cycle"),
        # Recursion that moves into the value ends with it.
        ({"properties": {"x": {"$ref": "#"}}}, "validated"),
        ({"items": {"$ref": "#"}, "additionalProperties": {"allOf": [{"$ref": "#"}]}}, "validated"),
        ({"$defs": {"n": {"anyOf": [{"type": "integer"}, {"properties": {"x": {"$ref": "#/$defs/n"}}}]}},
          "$ref": "#/$defs/n"}, "validated"),
        ({"$ref": f"{base}/s.json"}, "external-reference"),
        ({"properties": {"x": {"$ref": f"{base}/s.json#/x"}}}, "external-reference"),
        ({"$id": f"{base}/x.json", "properties": {"x": {"$ref": "s.json"}}}, "external-reference"),
        ({"$dynamicRef": f"{base}/s.json"}, "external-reference"),
        ({"$ref": "file:///etc/hostname"}, "external-reference"),
        ({"$ref": "#/$defs/nowhere"}, "dangling-reference"),
        ({"$ref": "#/required"}, "dangling-reference"),
    ]


INSTANCE = {"x": {"x": 1}, "y": [1, "a"]}


@pytest.mark.parametrize("case", range(len(pinned(0))))
def test_pinned_schemas_have_their_outcome_and_never_connect(listener, case):
    port, contacts = listener
    schema, expected = pinned(port)[case]
    assert _outcome(INSTANCE, schema, seconds=10) == expected, schema
    assert contacts == []


def test_arbitrary_schemas_never_crash_and_never_connect(listener):
    port, contacts = listener
    outcomes: list[str] = []

    @settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
    @given(schemas(port), INSTANCES)
    def check(schema, instance):
        outcomes.append(_outcome(instance, schema))

    for schema, _ in pinned(port):  # always tried, whatever the generator happens to build
        check = example(schema, INSTANCE)(check)
    check()
    assert contacts == []
    assert "validated" in outcomes
    assert {"external-reference", "reference-cycle", "dangling-reference"} <= set(outcomes), set(outcomes)


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.integers(MAX_DEPTH - 10, MAX_DEPTH + 200), st.sampled_from(["properties", "allOf", "items", "not"]),
       INSTANCES)
def test_nesting_at_and_beyond_the_limit_is_validated_or_refused(levels, keyword, instance):
    schema: object = {"type": "object"}
    for _ in range(levels):
        schema = {"properties": {"x": schema}} if keyword == "properties" else \
            {"allOf": [schema]} if keyword == "allOf" else {keyword: schema}
    # A budget no loaded machine runs out of: the point is validated or refused, never a crash.
    assert _outcome(instance, schema, seconds=10) in ("validated", "too-deep")


def test_a_recursive_schema_on_a_deeply_nested_value_is_refused_not_a_crash():
    tree = {"$defs": {"n": {"type": "object", "properties": {"c": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}
    value: object = {}
    for _ in range(900):
        value = {"c": value}
    assert _outcome(value, tree, seconds=10) in ("validated", "too-deep")


@settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_the_catalog_item_check_takes_any_tool_schema(data):
    schema = data.draw(schemas(1))
    tool = {"name": "t", "inputSchema": schema if isinstance(schema, dict) else {"type": "object"}}
    if data.draw(st.booleans()):
        tool["outputSchema"] = schema
    for modern in (False, True):
        assert isinstance(item_errors("tools", tool, modern=modern), list)


def test_the_catalog_item_check_takes_deep_schemas_on_both_paths():
    """The fast check accepts a deep but valid tool; a deep invalid one goes to the SDK's models,
    which explain, without recursing into the schema."""
    deep: dict = {"type": "object"}
    for _ in range(450):
        deep = {"type": "object", "properties": {"x": deep}}
    for modern in (False, True):
        assert item_errors("tools", {"name": "t", "inputSchema": deep, "outputSchema": deep}, modern=modern) == []
        errors = item_errors("tools", {"name": "t", "inputSchema": {**deep, "type": "array"}}, modern=modern)
        assert errors == ["inputSchema.type: Input should be 'object'"]


def test_what_is_refused_and_why():
    """One example per reason, as docs/findings.md describes them."""
    cases = {
        "external-reference": {"properties": {"x": {"$ref": "http://127.0.0.1:1/s.json"}}},
        "dangling-reference": {"properties": {"x": {"$ref": "#/$defs/nowhere"}}},
        "reference-cycle": {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}},
                            "$ref": "#/$defs/a"},
        "mixed-dialects": {"properties": {"x": {"$schema": "http://json-schema.org/draft-07/schema#"}}},
        "unknown-dialect": {"$schema": "http://127.0.0.1:1/dialect"},
        "invalid-schema": {"type": "nonsense"},
    }
    for reason, schema in cases.items():
        with pytest.raises(UnusableSchema) as caught:
            validate({"x": 1, "y": 2}, schema)
        assert caught.value.detail["reason"] == reason, (reason, caught.value)
    with pytest.raises(UnusableSchema, match=r'"\(" is not a "regex"'):  # checked against the meta-schema
        validate({"x": 1}, {"patternProperties": {"(": {}}})
    with pytest.raises(UnusableSchema) as caught:
        validate({"x": "a" * 60 + "!"}, {"properties": {"x": {"pattern": SLOW}}})
    assert caught.value.detail == {"reason": "slow-pattern", "pattern": SLOW}


def test_what_is_still_validated():
    """References within the schema, recursion that moves into the value, the bundled
    meta-schemas, ECMA-262 named groups and Unicode classes, uniqueItems by JSON equality."""
    node = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/n"}}}}
    tree = {"$defs": {"n": node}, "$ref": "#/$defs/n"}
    assert [v.path for v in validate({"kids": [{"kids": 3}]}, tree)] == ["$.kids[0].kids"]
    by_id = {"$id": "http://127.0.0.1:1/s.json", "properties": {"x": {"$ref": "http://127.0.0.1:1/s.json#/$defs/i"}},
             "$defs": {"i": {"type": "integer"}}}
    assert [v.path for v in validate({"x": "s"}, by_id)] == ["$.x"]
    meta = {"properties": {"s": {"$ref": "https://json-schema.org/draft/2020-12/schema"}}}
    assert [v.path for v in validate({"s": {"type": 3}}, meta)] == ["$.s.type"]
    assert validate({"w": "héllo"}, {"properties": {"w": {"pattern": r"^(?<word>\p{L}+)$"}}}) == []
    assert len(validate([{"a": 1}, {"a": 1.0}], {"uniqueItems": True})) == 1
    assert validate([1, True], {"uniqueItems": True}) == []
    assert [v.message for v in validate({"r": "(("}, {"properties": {"r": {"format": "regex"}}})] == [
        '"((" is not a "regex"']


@pytest.mark.parametrize("item, kind", [(["a"], "an array"), ("tool", "a string"), (3, "a number"), (None, "null"),
                                        (True, "a boolean")])
def test_an_item_that_is_not_an_object_is_named_in_json_s_words(item: object, kind: str) -> None:
    """A server's list item that is not an object: what it is as JSON says it, not Python's `list`."""
    from mcpprobe.safety.sanitize import json_kind

    assert json_kind(item) == kind
    assert item_errors("tools", item, modern=False) == [f"not a JSON object but {kind}"]


# ----- messages in JSON's words -----

DRAFT3 = "http://json-schema.org/draft-03/schema#"
DRAFT4 = "http://json-schema.org/draft-04/schema#"
DRAFT7 = "http://json-schema.org/draft-07/schema#"
BIG = 10**150  # a number JSON and Python write alike: only its length tells whose sentence it is
BIG_SHOWN = "1" + "0" * 118 + "…"


@pytest.mark.parametrize("instance, schema, messages", [
    # type
    (None, {"type": "boolean"}, ['null is not of type "boolean"']),
    (True, {"type": ["string", "null"]}, ['true is not of type "string", "null"']),
    (1, {"$schema": DRAFT3, "type": ["string", {"type": "object"}]}, ['1 is not of type "string", {"type": "object"}']),
    # required, dependentRequired and draft 7's dependencies
    ({"a": None}, {"required": ["a", "b", "c"]}, ['"b" is a required property', '"c" is a required property']),
    ({}, {"$schema": DRAFT3, "properties": {"a": {"required": True}}}, ['"a" is a required property']),
    ({"a": 1}, {"dependentRequired": {"a": ["b"]}}, ['"b" is a dependency of "a"']),
    ({"a": 1}, {"$schema": DRAFT7, "dependencies": {"a": ["b"]}}, ['"b" is a dependency of "a"']),
    ({"a is a dependency of 'b": 1}, {"dependentRequired": {"a is a dependency of 'b": ["x is a dependency of y"]}},
     ['"x is a dependency of y" is a dependency of "a is a dependency of \'b"']),
    # enum, const
    (True, {"enum": ["a", "b"]}, ['true is not one of ["a", "b"]']),
    ("x", {"const": {"k": None}}, ['{"k": null} was expected']),
    # additionalProperties, unevaluatedProperties, false schemas
    ({"a": 1, "q": 2}, {"properties": {"a": {}}, "additionalProperties": False},
     ['Additional properties are not allowed ("q" was unexpected)']),
    ({"q": 1, "r": 2}, {"patternProperties": {"^x": {}}, "additionalProperties": False},
     ['"q", "r" do not match any of the regexes: "^x"']),
    ({"a": 1, "z": 2, "y": 3}, {"properties": {"a": {}}, "unevaluatedProperties": False},
     ['Unevaluated properties are not allowed ("y", "z" were unexpected)']),
    ({"z": "s"}, {"unevaluatedProperties": {"type": "integer"}},
     ['Unevaluated properties are not valid under the given schema ("z" was unevaluated and invalid)']),
    ({"x": None}, {"properties": {"x": False}}, ["False schema does not allow null"]),
    # minimum, maximum, exclusive*, multipleOf: numbers read alike, so a long one shows whose words they are
    (BIG, {"maximum": 1}, [f"{BIG_SHOWN} is greater than the maximum of 1"]),
    (-BIG, {"minimum": 1}, [f"-{BIG_SHOWN[:-2]}… is less than the minimum of 1"]),
    (BIG, {"exclusiveMaximum": 1}, [f"{BIG_SHOWN} is greater than or equal to the maximum of 1"]),
    (-BIG, {"exclusiveMinimum": 1}, [f"-{BIG_SHOWN[:-2]}… is less than or equal to the minimum of 1"]),
    (-BIG, {"$schema": DRAFT4, "minimum": 1, "exclusiveMinimum": True},
     [f"-{BIG_SHOWN[:-2]}… is less than or equal to the minimum of 1"]),
    (BIG + 1, {"multipleOf": 2}, [f"{BIG_SHOWN} is not a multiple of 2"]),
    (float("inf"), {"maximum": 1}, ["Infinity is greater than the maximum of 1"]),
    # minLength, maxLength, minItems, maxItems, minProperties, maxProperties
    ("", {"minLength": 1}, ['"" should be non-empty']),
    ("abc", {"maxLength": 2}, ['"abc" is too long']),
    ([None], {"minItems": 2}, ["[null] is too short"]),
    ([True], {"maxItems": 0}, ["[true] is expected to be empty"]),
    ({"a": True}, {"minProperties": 2}, ['{"a": true} does not have enough properties']),
    ({"a": None}, {"maxProperties": 0}, ['{"a": null} is expected to be empty']),
    # pattern, format, propertyNames (a name is the instance of its subschema)
    ("Q", {"pattern": "^[a-z]+$"}, ['"Q" does not match "^[a-z]+$"']),
    ("x", {"format": "email"}, ['"x" is not a "email"']),
    ({"Q": 1}, {"propertyNames": {"pattern": "^[a-z]+$"}}, ['"Q" does not match "^[a-z]+$"']),
    # uniqueItems (mcpprobe's own, linear-time keyword)
    ([None, None], {"uniqueItems": True}, ["[null, null] has non-unique elements"]),
    # anyOf, oneOf, not
    ({"x": 1}, {"anyOf": [{"type": "string"}, {"type": "null"}]},
     ['{"x": 1} is not valid under any of the given schemas']),
    (None, {"oneOf": [{"type": "string"}]}, ["null is not valid under any of the given schemas"]),
    (1, {"oneOf": [{"type": "integer"}, {"type": "string"}, {"type": "number"}]},
     ['1 is valid under each of {"type": "number"}, {"type": "integer"}']),
    (None, {"not": {"type": "null"}}, ['null should not be valid under {"type": "null"}']),
    # contains, items, the unevaluated and additional items
    ([None], {"contains": {"type": "string"}}, ["[null] does not contain items matching the given schema"]),
    ([None], {"$schema": DRAFT7, "contains": {"type": "string"}}, ["None of [null] are valid under the given schema"]),
    ([1, None], {"prefixItems": [{}], "items": False}, ["Expected at most 1 item but found 1 extra: null"]),
    ([1, None, True], {"$schema": DRAFT7, "items": [{}], "additionalItems": False},
     ["Additional items are not allowed (null, true were unexpected)"]),
    ([1, [None], "x"], {"prefixItems": [{}], "unevaluatedItems": False},
     ['Unevaluated items are not allowed ([null], "x" were unexpected)']),
    # draft 3's disallow
    (None, {"$schema": DRAFT3, "disallow": "null"}, ['"null" is disallowed for null']),
])
def test_each_keyword_s_message_shows_its_values_as_json(instance, schema, messages):
    """jsonschema's sentences, with each value as JSON (`null`, `true`, `"b"`, `{"x": 1}`), never Python's repr."""
    assert [v.message for v in validate(instance, schema)] == messages


def test_a_schema_that_is_not_a_schema_is_said_in_json_s_words():
    """The meta-schema's verdict (the `invalid-schema` reason) quotes the schema's values as JSON too."""
    from mcpprobe.safety.validation import schema_problem

    expected = r'^"nonsense" is not valid under any of the given schemas \(at \$\.type\)$'
    with pytest.raises(UnusableSchema, match=expected):
        validate(1, {"type": "nonsense"})
    assert schema_problem({"type": "object", "required": [None]}) == (
        "invalid-schema", 'null is not of type "string" (at $.required[0])')


def test_a_sentence_not_known_is_left_in_jsonschema_s_words():
    """What is not one of the sentences read here stays jsonschema's own, never a guess and never a
    crash: draft 3's named types (a sentence of another shape), a keyword not handled, a message
    worded otherwise than its keyword's, parts that break the reading."""
    from jsonschema.exceptions import ValidationError

    from mcpprobe.safety.schema_messages import json_message

    named = {"$schema": DRAFT3, "properties": {"n": {"type": [{"name": "thing", "type": "string"}]},
                                               "m": {"required": True}}}
    assert [(v.path, v.message) for v in validate({"n": None}, named)] == [
        ("$.m", '"m" is a required property'), ("$.n", "None is not of type 'thing'")]
    too_few = {"contains": {"type": "string"}, "minContains": 2, "maxItems": 1}
    assert [v.message for v in validate([None, "a"], too_few)] == [
        "Too few items match the given schema (expected at least 2 but only 1 matched)", '[null, "a"] is too long']
    unknown = ValidationError("None is odd", validator="x-odd", validator_value=True, instance=None, schema={})
    assert json_message(unknown) == "None is odd"
    reworded = ValidationError("None is not a 'boolean'", validator="type", validator_value="boolean", instance=None,
                               schema={"type": "boolean"})
    assert json_message(reworded) == "None is not a 'boolean'"
    unreadable = ValidationError("Additional properties are not allowed ('q' was unexpected)",
                                 validator="additionalProperties", validator_value=False, instance=None, schema={})
    assert json_message(unreadable) == "Additional properties are not allowed ('q' was unexpected)"
    not_json = object()
    unwritable = ValidationError(f"{not_json!r} is not one of [1]", validator="enum", validator_value=[1],
                                 instance=not_json, schema={"enum": [1]})
    assert json_message(unwritable) == f"{not_json!r} is not one of [1]"


def test_a_long_value_is_cut_short_and_the_message_stays_bounded():
    """A server's value may be megabytes: each is cut after MAX_VALUE characters with an ellipsis
    (never through a JSON escape), and each message after MAX_MESSAGE."""
    from mcpprobe.safety.schema_messages import MAX_VALUE
    from mcpprobe.safety.validation import MAX_MESSAGE

    [long] = validate("x" * 1_000_000, {"type": "integer"})
    assert long.message == '"' + "x" * (MAX_VALUE - 2) + '… is not of type "integer"'
    [escapes] = validate("\x1b" * 100, {"type": "integer"})
    value = escapes.message.removesuffix(' is not of type "integer"')
    assert re.fullmatch(r'"(\\u001b)+…', value) and len(value) <= MAX_VALUE, value
    [nested] = validate({"items": list(range(100_000))}, {"type": "array"})
    start = '{"items": [' + ", ".join(map(str, range(100)))
    assert nested.message == start[:MAX_VALUE - 1] + '… is not of type "array"'
    [many] = validate({f"k{i:03}": i for i in range(200)}, {"additionalProperties": False})
    assert len(many.message) == MAX_MESSAGE and many.message.startswith(
        'Additional properties are not allowed ("k000", "k001", ') and many.message.endswith("…")


def test_a_hostile_value_is_quoted_as_json_and_shown_inert():
    """JSON escapes C0 controls (ESC, CR), not C1 controls or bidi overrides: those the message keeps,
    and visible() (what every message goes through before a terminal) makes them inert."""
    from mcpprobe.safety.sanitize import findings_for, visible

    [violation] = validate({"x": "\x1b[2J\x9b31m\u202eevil\rover"}, {"properties": {"x": {"type": "integer"}}})
    assert violation.message == '"\\u001b[2J\x9b31m\u202eevil\\rover" is not of type "integer"'
    assert visible(violation.message) == '"\\u001b[2J\\u009b31m<U+202E>evil\\rover" is not of type "integer"'
    assert findings_for(visible(violation.message)) == []


@pytest.mark.parametrize(("schema", "said"), [
    ({"type": "object", "properties": 5}, '5 is not of type "object" (at $.properties)'),
    ({"type": "object", "properties": {"a": 5}}, '5 is not of type "object", "boolean" (at $.properties.a)'),
    ({"type": "array", "items": "x"}, '"x" is not of type "object", "boolean" (at $.items)'),
    ({"allOf": 3}, '3 is not of type "array" (at $.allOf)'),
    ({"$defs": []}, '[] is not of type "object" (at $["$defs"])'),
    ({"dependentSchemas": 1}, '1 is not of type "object" (at $.dependentSchemas)'),
])
def test_a_keyword_of_the_wrong_shape_is_an_invalid_schema_not_unjudged(schema, said):
    """Before: the walk for references tripped over it first, and `check` warned "mcpprobe could not
    judge: jsonschema could not check it: AttributeError" of a schema its meta-schema plainly
    rejects (tools.input-schema must fail it: "Schemas MUST be valid according to their dialect")."""
    from mcpprobe.safety.validation import schema_problem

    assert schema_problem(schema) == ("invalid-schema", said)
    with pytest.raises(UnusableSchema) as refused:
        validate({}, schema)
    assert refused.value.detail["reason"] == "invalid-schema" and str(refused.value) == said
