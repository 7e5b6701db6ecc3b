"""jsonschema's messages in JSON's words: `null is not of type "boolean"`, not `None is not of type 'boolean'`.

jsonschema writes every value in a message with Python's repr. mcpprobe's users think in JSON (tool
arguments, structuredContent, `--json` piped to jq), so a message is written again from the
error's parts (the keyword, its value in the schema, the instance, the schema), in jsonschema's
own sentence shapes, each value as short JSON (`json_value`).

A message is rewritten only when the same sentence written with repr is exactly jsonschema's own:
then the parts were read right, whatever the dialect or the jsonschema version. Any other message
(a keyword not handled here, a sentence jsonschema words differently, anything raised while
writing it: schemas come from servers) stays jsonschema's. The text is not made inert here; what
shows it does (safety/sanitize.py).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

MAX_VALUE = 120  # characters of one value in a message
ELLIPSIS = "…"
MAX_LISTED = 64  # oneOf's subschemas tried one by one to read "is valid under each of"

Show = Callable[[Any], str]
Sentence = Callable[[Show], str]

_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": "))
_OPEN_ESCAPE = re.compile(r"(\\+)(u[0-9A-Fa-f]{0,3})?\Z")


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the last one an ellipsis; never through a JSON
    escape (`\\u001b` is kept whole or left out)."""
    if len(text) <= limit:
        return text
    head = text[:max(limit - 1, 0)]
    found = _OPEN_ESCAPE.search(head)
    if found and len(found.group(1)) % 2 == 1:  # the last backslash starts an escape the cut broke
        head = head[:found.end(1) - 1]
    return head + ELLIPSIS


def json_value(value: Any, limit: int = MAX_VALUE) -> str:
    """`value` as JSON (`null`, `true`, `"b"`, `{"x": 1}`), cut after `limit` characters. The
    encoding stops there: a value of megabytes costs its first chunks, not its size."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit + 1]
    chunks: list[str] = []
    size = 0
    for chunk in _ENCODER.iterencode(value):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            break
    return shorten("".join(chunks), limit)


def json_message(error: Any) -> str:
    """The message of jsonschema's ValidationError `error` with its values as short JSON, or
    jsonschema's own message when it is not one of the sentences below."""
    message = str(error.message)
    try:
        for sentence in _sentences(error):
            if sentence(repr) == message:
                return sentence(json_value)
    except Exception:  # noqa: BLE001 - a hostile schema or value: jsonschema's words, never a crash
        pass
    return message


class _Many(list[Any]):
    """Values written one by one, joined by ", " (as jsonschema joins types, extras and schemas)."""


def _fill(template: str, *values: Any) -> Sentence:
    """A sentence: `template` with each {} filled by a value as `show` writes it."""
    def write(show: Show) -> str:
        return template.format(*(", ".join(map(show, v)) if isinstance(v, _Many) else show(v) for v in values))

    return write


def _was(items: list[Any]) -> str:
    return "was" if len(items) == 1 else "were"


def _literals(text: str) -> list[Any]:
    """The value whose repr `text` is, as a list of one; [] when it is none."""
    try:
        return [ast.literal_eval(text)]
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return []


def _listed(message: str, head: str, tails: Iterable[str], candidates: Iterable[Any]) -> _Many | None:
    """Which of `candidates`, in their order, `message` lists between `head` and one of `tails`
    (each written with repr, joined by ", "): the keywords that list what they found, where
    jsonschema keeps the list only in its message. A repr of a JSON value ends where it ends
    (quotes, brackets, digits), so taking the first candidate that fits is the one reading."""
    tail = next((t for t in tails if message.endswith(t)), None)
    if tail is None or not message.startswith(head) or len(message) < len(head) + len(tail):
        return None
    joined = message[len(head):len(message) - len(tail)]
    picked = _Many()
    pos = 0
    for item in candidates:
        text = repr(item)
        end = pos + len(text)
        if not joined.startswith(text, pos):
            continue
        if end == len(joined):
            picked.append(item)
            return picked
        if joined.startswith(", ", end):
            picked.append(item)
            pos = end + 2
    return None


def _sentences(error: Any) -> Iterator[Sentence]:
    """jsonschema's sentences that `error` may carry, each as a function of how a value is written:
    with repr, one of them is the message."""
    keyword, value, instance, schema = error.validator, error.validator_value, error.instance, error.schema
    message = str(error.message)
    if schema is False and keyword is None:  # a false schema: `additionalProperties: {"x": false}`
        yield _fill("False schema does not allow {}", instance)
    elif keyword == "type":
        yield _fill("{} is not of type {}", instance, _Many([value] if isinstance(value, str) else value))
    elif keyword == "required":
        # Each missing property is an error of its own, which only the message names (read from it:
        # a schema may require thousands); draft 3 says `required: true` in the property itself.
        said = message.removesuffix(" is a required property")
        for name in [error.relative_path[-1]] if isinstance(value, bool) else _literals(said):
            yield _fill("{} is a required property", name)
    elif keyword in ("dependentRequired", "dependencies"):
        parts = message.split(" is a dependency of ")
        for cut in range(1, len(parts)):  # a name may hold the words too: each place they could part
            for each in _literals(" is a dependency of ".join(parts[:cut])):
                for name in _literals(" is a dependency of ".join(parts[cut:])):
                    yield _fill("{} is a dependency of {}", each, name)
    elif keyword == "enum":
        yield _fill("{} is not one of {}", instance, value)
    elif keyword == "const":
        yield _fill("{} was expected", value)
    elif keyword in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        low = keyword in ("minimum", "exclusiveMinimum")
        bound, than = ("minimum", "less than") if low else ("maximum", "greater than")
        for compared in (than, f"{than} or equal to"):  # drafts 3 and 4: exclusive* is a boolean beside
            yield _fill(f"{{}} is {compared} the {bound} of {{}}", instance, value)
    elif keyword in ("multipleOf", "divisibleBy"):
        yield _fill("{} is not a multiple of {}", instance, value)
    elif keyword in ("minLength", "minItems", "minProperties"):
        fewer = "does not have enough properties" if keyword == "minProperties" else "is too short"
        yield _fill(f"{{}} {'should be non-empty' if value == 1 else fewer}", instance)
    elif keyword in ("maxLength", "maxItems", "maxProperties"):
        more = "has too many properties" if keyword == "maxProperties" else "is too long"
        yield _fill(f"{{}} {'is expected to be empty' if value == 0 else more}", instance)
    elif keyword == "pattern":
        yield _fill("{} does not match {}", instance, value)
    elif keyword == "format":
        yield _fill("{} is not a {}", instance, value)
    elif keyword in ("anyOf", "oneOf"):
        yield _fill("{} is not valid under any of the given schemas", instance)
        if keyword == "oneOf" and len(value) <= MAX_LISTED:
            yield from _valid_under_each(message, instance, value)
    elif keyword == "not":
        yield _fill("{} should not be valid under {}", instance, value)
    elif keyword == "contains":
        yield _fill("{} does not contain items matching the given schema", instance)
        yield _fill("None of {} are valid under the given schema", instance)  # drafts 6 and 7
    elif keyword == "disallow":  # draft 3
        for each in [value] if isinstance(value, str) else value:
            yield _fill("{} is disallowed for {}", each, instance)
    elif keyword == "items" and value is False:
        prefix = len(schema.get("prefixItems", []))
        extra = len(instance) - prefix
        rest = instance[prefix:] if extra != 1 else instance[prefix]
        yield _fill(f"Expected at most {prefix} {'items' if prefix != 1 else 'item'} but found {extra} extra: {{}}",
                    rest)
    elif keyword == "additionalItems":
        extras = instance[len(schema.get("items", [])):]
        yield _fill(f"Additional items are not allowed ({{}} {_was(extras)} unexpected)", _Many(extras))
    else:
        yield from _extras_sentences(keyword, value, instance, schema, message)


def _extras_sentences(keyword: Any, value: Any, instance: Any, schema: Any, message: str) -> Iterator[Sentence]:
    """The keywords whose message lists the properties or items they did not expect."""
    unexpected = (" was unexpected)", " were unexpected)")
    extras: _Many | None = None
    if keyword == "additionalProperties" and "patternProperties" in schema:
        patterns = _Many(sorted(schema["patternProperties"]))
        tails = [f" {verb} not match any of the regexes: {', '.join(map(repr, patterns))}" for verb in ("does", "do")]
        names = sorted(name for name in instance if name not in schema.get("properties", {}))
        if (extras := _listed(message, "", tails, names)) is not None:
            verb = "does" if len(extras) == 1 else "do"
            yield _fill(f"{{}} {verb} not match any of the regexes: {{}}", extras, patterns)
    elif keyword == "additionalProperties":
        names = sorted((name for name in instance if name not in schema.get("properties", {})), key=str)
        if (extras := _listed(message, "Additional properties are not allowed (", unexpected, names)) is not None:
            yield _fill(f"Additional properties are not allowed ({{}} {_was(extras)} unexpected)", extras)
    elif keyword == "unevaluatedProperties" and value is False:
        head = "Unevaluated properties are not allowed ("
        if (extras := _listed(message, head, unexpected, sorted(instance, key=str))) is not None:
            yield _fill(f"{head}{{}} {_was(extras)} unexpected)", extras)
    elif keyword == "unevaluatedProperties":
        head = "Unevaluated properties are not valid under the given schema ("
        invalid = (" was unevaluated and invalid)", " were unevaluated and invalid)")
        if (extras := _listed(message, head, invalid, list(instance))) is not None:
            yield _fill(f"{head}{{}} {_was(extras)} unevaluated and invalid)", extras)
    elif keyword == "unevaluatedItems":
        head = "Unevaluated items are not allowed ("
        if (extras := _listed(message, head, unexpected, instance)) is not None:
            yield _fill(f"{head}{{}} {_was(extras)} unexpected)", extras)


def _valid_under_each(message: str, instance: Any, subschemas: list[Any]) -> Iterator[Sentence]:
    """oneOf valid under more than one: jsonschema lists the later ones that are valid, then the first."""
    head = f"{instance!r} is valid under each of "
    for first in range(len(subschemas)):
        listed = _listed(message, head, ("",), [*subschemas[first + 1:], subschemas[first]])
        if listed is not None and len(listed) > 1 and listed[-1] is subschemas[first]:
            yield _fill("{} is valid under each of {}", instance, listed)
            return
