"""Validate a value against a JSON Schema a server sent: the schema is data, never instructions.

A tool's inputSchema and outputSchema come from the server, so nothing in them may make mcpprobe
reach the network or the disk, run for ever, or crash:

- references resolve only inside the schema itself (and to the JSON Schema meta-schemas that come
  with jsonschema): the `referencing` registry's retrieve refuses every other URI, file:// included;
- before anything is validated, the schema is walked once, without recursion: nesting deeper than
  MAX_DEPTH, a reference that leads nowhere or outside the schema, and a cycle of references that
  never moves into the instance (`"$ref": "#"`) make it unusable;
- regular expressions (`pattern`, `patternProperties`, `format: regex`) run in the `regex` engine
  (Python's `re` syntax plus ECMA-262's `(?<name>...)` and `\\p{...}`), each match bounded by
  MATCH_SECONDS, so a backtracking pattern stops instead of running for ever;
- every keyword looks at one clock, and a validation stops after its budget;
- `validate_async` runs the validation on a daemon thread that the event loop waits for, so Ctrl-C
  and the caller's deadline are never stuck behind it, and one that does not end is abandoned.

Whatever goes wrong, the caller gets `UnusableSchema` with a reason, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from mcpprobe.safety.schema_messages import json_message, json_value, shorten
from mcpprobe.signals import arrived

DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"
MAX_DEPTH = 100  # JSON nesting of a schema; jsonschema itself needs about 160 to run out of stack
MATCH_SECONDS = 1.0  # one regular expression on one value
BUDGET_SECONDS = 10.0  # one validation (callers pass less when their own timeout is shorter)
ABANDON_GRACE = 2.0  # how long past its budget a validation thread is waited for
MAX_VIOLATIONS = 1000
MAX_MESSAGE = 500

REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
# Applicators that apply a subschema to the same instance: a cycle through these (and references)
# never ends, whatever the instance. Cycles through properties, items, ... end with the instance.
IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
IN_PLACE_ONE = ("not", "if", "then", "else")
IN_PLACE_MAPS = ("dependentSchemas", "dependencies")


class UnusableSchema(Exception):
    """The schema cannot be used: invalid, unknown dialect, or something mcpprobe refuses to do."""

    def __init__(self, message: str, reason: str = "invalid-schema", **detail: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.detail = {"reason": reason, **detail}


class _Stopped(Exception):
    """The caller no longer waits for this validation."""


@dataclass(frozen=True)
class Violation:
    path: str  # JSONPath, $ for the root
    message: str

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}


def json_path(parts: Any) -> str:
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            out += f".{part}"
        else:
            out += "[" + json.dumps(str(part)) + "]"
    return out


def dialect_of(schema: Any) -> str:
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    return declared if isinstance(declared, str) else DEFAULT_DIALECT


def _short(text: str, limit: int = 80) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


# ----- one clock per validation -----


@dataclass
class _Budget:
    seconds: float
    stop: threading.Event = field(default_factory=threading.Event)
    deadline: float = 0.0
    # Stop at a signal that ends the run (mcpprobe.signals): for work in the event loop's own thread
    # (`schema_problem`), which would otherwise keep the loop from acting on it. A validation on a
    # thread of its own (`validate_async`) is told to stop by its caller instead.
    signals: bool = False

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def check(self) -> None:
        if self.stop.is_set() or (self.signals and arrived()):
            raise _Stopped()
        if time.monotonic() > self.deadline:
            raise UnusableSchema(f"validating took longer than {self.seconds:g} s; stopped", "too-slow",
                                 seconds=self.seconds)


_local = threading.local()
# The budget of a schema check in the caller's thread (`schema_problem`): BUDGET_SECONDS, or the run's
# --timeout when shorter (`bounded_by`). A context variable: each run (each task) has its own.
_schema_seconds: ContextVar[float] = ContextVar("schema_seconds", default=BUDGET_SECONDS)


def bounded_by(timeout: float) -> None:
    """Schema checks from here on, in this task and the tasks it starts, take at most `timeout`
    seconds each (never more than BUDGET_SECONDS)."""
    _schema_seconds.set(min(BUDGET_SECONDS, max(timeout, 0.01)))


def _tick() -> None:
    budget = getattr(_local, "budget", None)
    if budget is not None:
        budget.check()


# ----- regular expressions from the server -----


@lru_cache(maxsize=512)
def _regex(pattern: str) -> Any:
    import regex

    try:
        return regex.compile(pattern)
    except (OverflowError, RecursionError, ValueError) as exc:
        raise regex.error(str(exc)) from None


def _compiled(pattern: str) -> Any:
    import regex

    try:
        return _regex(pattern)
    except regex.error as exc:
        raise UnusableSchema(f"pattern {_short(pattern)} is not a regular expression: {exc}", "bad-pattern",
                             pattern=pattern) from None


def safe_search(pattern: str, string: str) -> Any:
    """`re.search`, bounded: in the `regex` engine, stopped after MATCH_SECONDS (or the budget)."""
    budget = getattr(_local, "budget", None)
    timeout = MATCH_SECONDS
    if budget is not None:
        budget.check()
        timeout = max(0.01, min(timeout, budget.remaining()))
    compiled = _compiled(pattern)
    try:
        return compiled.search(string, timeout=timeout, concurrent=True)
    except TimeoutError:
        if budget is not None:
            budget.check()
        raise UnusableSchema(
            f"pattern {_short(pattern)} ran for more than {timeout:g} s on one value (catastrophic backtracking); "
            "stopped", "slow-pattern", pattern=pattern) from None


def _is_regex(instance: object) -> bool:
    if isinstance(instance, str):
        _regex(instance)  # regex.error: not a regex
    return True


class _BoundedRe:
    """Stands in for the `re` module inside jsonschema's keyword modules, which call `re.search`
    for `pattern`, `patternProperties`, `additionalProperties` and `unevaluatedProperties`:
    jsonschema has no option to choose the engine."""

    search = staticmethod(safe_search)

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


@cache
def _install_regex_engine() -> None:
    import jsonschema._keywords
    import jsonschema._legacy_keywords
    import jsonschema._utils

    for module in (jsonschema._keywords, jsonschema._legacy_keywords, jsonschema._utils):
        if getattr(module, "re", None) is re:
            module.re = _BoundedRe()


# ----- validator classes whose every keyword looks at the clock -----


def _canonical(value: Any) -> Any:
    """A hashable key equal for JSON-equal values (1 == 1.0, but true != 1)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, list):
        return ("a", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, _canonical(v)) for k, v in value.items()))
    return ("v", value)


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
    """uniqueItems in linear time (jsonschema compares objects pairwise)."""
    from jsonschema.exceptions import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _canonical(item)
        if key in seen:  # jsonschema's sentence, in JSON's words as every message (schema_messages.py)
            yield ValidationError(f"{json_value(instance)} has non-unique elements")
            return
        seen.add(key)


def _checked(keyword: Any) -> Any:
    def bounded(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _tick()
        return keyword(validator, value, instance, schema)

    return bounded


@cache
def _bounded(cls: Any) -> Any:
    from jsonschema.validators import extend

    _install_regex_engine()
    keywords = {name: _checked(fn) for name, fn in cls.VALIDATORS.items()}
    if "uniqueItems" in keywords:
        keywords["uniqueItems"] = _checked(_unique_items)
    bounded = extend(cls, validators=keywords)
    from attrs import fields
    from jsonschema.validators import validator_for

    carried = [(field.alias, field.name) for field in fields(bounded) if field.init]

    def evolve_bounded(self: Any, **changes: Any) -> Any:
        """jsonschema's `evolve` picks the validator of a subschema by its `$schema`: the meta-schemas
        all name theirs, so checking a schema against its meta-schema went on in the plain validator,
        off the clock (a tool's schema of 20,000 properties held the run 30 s past a 1 s budget).
        The same dialect stays on this class, and so on the clock."""
        schema = changes.setdefault("schema", self.schema)
        chosen = validator_for(schema, default=bounded)
        for alias, name in carried:
            if alias not in changes:
                changes[alias] = getattr(self, name)
        return (bounded if chosen is cls else chosen)(**changes)

    bounded.evolve = evolve_bounded
    return bounded


@cache
def _format_checker(cls: Any) -> Any:
    import regex
    from jsonschema import FormatChecker

    checker = FormatChecker(formats=())
    checker.checkers = dict(cls.FORMAT_CHECKER.checkers)
    checker.checks("regex", raises=(regex.error,))(_is_regex)
    return checker


def _refuse(uri: str) -> Any:
    raise LookupError(uri)


def _registry() -> Any:
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


def _registry_with_meta_schemas() -> Any:
    """What jsonschema resolves against: the bundled meta-schemas, and nothing it would fetch."""
    from jsonschema_specifications import REGISTRY

    return REGISTRY.combine(_registry())


# ----- the walk before validating -----


def _pointer(parts: list[Any]) -> str:
    return "#" + "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _document(schema: Any) -> dict[int, str]:
    """Every object of the schema by identity, with its JSON pointer; refuses deep nesting."""
    where: dict[int, str] = {}
    stack: list[tuple[Any, list[Any]]] = [(schema, [])]
    while stack:
        node, parts = stack.pop()
        if not isinstance(node, dict | list):
            continue
        _tick()
        if len(parts) >= MAX_DEPTH:
            raise UnusableSchema(f"the schema is nested more than {MAX_DEPTH} levels deep "
                                 f"(at {_pointer(parts[:8])}/...)", "too-deep", limit=MAX_DEPTH)
        if isinstance(node, dict):
            where[id(node)] = _pointer(parts)
            stack.extend((value, [*parts, key]) for key, value in node.items())
        else:
            stack.extend((value, [*parts, index]) for index, value in enumerate(node))
    return where


def _resolve(resolver: Any, ref: str, where: str) -> Any:
    from referencing.exceptions import Unresolvable

    try:
        resolved = resolver.lookup(ref)
    except Unresolvable as exc:
        refused = exc.__cause__ is not None and isinstance(exc.__cause__.__cause__, LookupError)
        if refused:
            raise UnusableSchema(
                f"{where} refers to {_short(ref)}, outside the schema; mcpprobe does not fetch references "
                "(only '#' references within the schema resolve)", "external-reference", refused=ref,
                at=where) from None
        raise UnusableSchema(f"{where} refers to {_short(ref)}, which is not in the schema", "dangling-reference",
                             ref=ref, at=where) from None
    except Exception as exc:  # a malformed URI or pointer
        raise UnusableSchema(f"{where}: reference {_short(ref)} cannot be resolved ({exc})", "dangling-reference",
                             ref=ref, at=where) from None
    if not isinstance(resolved.contents, dict | bool):
        raise UnusableSchema(f"{where} refers to {_short(ref)}, which is not a schema", "dangling-reference",
                             ref=ref, at=where)
    return resolved


def _in_place(node: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for key in IN_PLACE_LISTS:
        if isinstance(node.get(key), list):
            out.extend(node[key])
    out.extend(node.get(key) for key in IN_PLACE_ONE)
    for key in IN_PLACE_MAPS:
        if isinstance(node.get(key), dict):
            out.extend(node[key].values())
    return [child for child in out if isinstance(child, dict)]


def precheck(schema: Any, cls: Any) -> bool:
    """Refuse (UnusableSchema) what would make validation fetch, crash or never end. True when
    subschemas repeat the root's `$schema` (which would give them a validator without the clock)."""
    from referencing.jsonschema import DRAFT202012, specification_with

    where = _document(schema)
    if not isinstance(schema, dict):
        return False
    spec = specification_with(cls.ID_OF(cls.META_SCHEMA) or DEFAULT_DIALECT, default=DRAFT202012)
    resolver = _registry_with_meta_schemas().resolver_with_root(spec.create_resource(schema))
    edges: dict[int, list[int]] = {}
    embedded_dialect = False
    stack: list[tuple[Any, Any]] = [(schema, resolver)]
    while stack:
        _tick()  # the walk is on the budget's clock too: it grows faster than the schema
        node, resolver = stack.pop()
        if not isinstance(node, dict) or id(node) in edges or id(node) not in where:
            continue  # a boolean schema, one already seen, or a bundled meta-schema
        targets = edges[id(node)] = []
        if node is not schema and "$schema" in node:
            from jsonschema.validators import validator_for

            if validator_for(node, default=None) is not validator_for(schema, default=cls):
                raise UnusableSchema(f"{where[id(node)]} switches to another dialect ({_short(str(node['$schema']))})",
                                     "mixed-dialects", at=where[id(node)])
            embedded_dialect = True
        for key in REF_KEYWORDS:
            ref = node.get(key)
            if isinstance(ref, str):
                resolved = _resolve(resolver, ref, where[id(node)])
                targets.append(id(resolved.contents))
                stack.append((resolved.contents, resolved.resolver))
        targets.extend(id(child) for child in _in_place(node))
        for sub in spec.create_resource(node).subresources():
            stack.append((sub.contents, resolver.in_subresource(sub)))
    cycle = _cycle(edges)
    if cycle:
        path = " -> ".join(where[node] for node in cycle)
        raise UnusableSchema(f"reference cycle that never reaches into the value: {path}", "reference-cycle",
                             cycle=[where[node] for node in cycle])
    return embedded_dialect


def _cycle(edges: dict[int, list[int]]) -> list[int]:
    """One cycle of the graph, as the nodes on it (the first repeated at the end), or []."""
    state: dict[int, int] = {}  # 1 on the current path, 2 done
    for start in edges:
        if state.get(start):
            continue
        path = [start]
        iterators = [iter(edges[start])]
        state[start] = 1
        while iterators:
            nxt = next(iterators[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iterators.pop()
            elif nxt not in edges or state.get(nxt) == 2:
                continue
            elif state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            else:
                state[nxt] = 1
                path.append(nxt)
                iterators.append(iter(edges[nxt]))
    return []


def _without_embedded_dialect(node: Any, root: bool = True) -> Any:
    if isinstance(node, dict):
        return {k: _without_embedded_dialect(v, False) for k, v in node.items() if root or k != "$schema"}
    if isinstance(node, list):
        return [_without_embedded_dialect(v, False) for v in node]
    return node


# ----- validation -----


def _prechecked(schema: Any, cls: Any) -> bool:
    """`precheck`, which walks the schema by its keywords and trips over one of the wrong shape
    (`"properties": 5`, `"allOf": 3`): then the meta-schema check says what is wrong, an
    `invalid-schema` verdict, where "jsonschema could not use it: AttributeError" said nothing."""
    try:
        return precheck(schema, cls)
    except (UnusableSchema, _Stopped, RecursionError):
        raise
    except Exception:
        _check_against_meta_schema(schema, cls)
        raise


def _validator_class(schema: Any) -> Any:
    from jsonschema import Draft202012Validator
    from jsonschema.validators import validator_for

    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if declared is not None and not isinstance(declared, str):
        raise UnusableSchema("$schema is not a string", "unknown-dialect")
    cls = validator_for(schema, default=Draft202012Validator)
    if isinstance(declared, str) and cls is Draft202012Validator and declared.rstrip("#") != DEFAULT_DIALECT \
            and validator_for({"$schema": declared}, default=None) is None:
        raise UnusableSchema(f"unknown $schema dialect {_short(declared)}", "unknown-dialect", dialect=declared)
    return cls


def _check_against_meta_schema(schema: Any, cls: Any) -> None:
    from jsonschema.exceptions import best_match

    meta_cls = _bounded(cls)
    meta = meta_cls(cls.META_SCHEMA, format_checker=_format_checker(cls))
    error = best_match(meta.iter_errors(schema))
    if error is not None:
        raise UnusableSchema(f"{shorten(json_message(error), MAX_MESSAGE)} (at {json_path(error.absolute_path)})",
                             "invalid-schema")


def validate(instance: Any, schema: Any, *, seconds: float = BUDGET_SECONDS,
             stop: threading.Event | None = None) -> list[Violation]:
    """Every violation of `schema` by `instance`, in the dialect named by `$schema` (2020-12 by
    default). Raises UnusableSchema for a schema that cannot be used, whatever the reason."""
    if schema is True or schema == {}:
        return []
    if not isinstance(schema, dict | bool):
        raise UnusableSchema("the schema is not an object", "invalid-schema")
    budget = _Budget(seconds, stop or threading.Event())
    _local.budget = budget
    try:
        cls = _validator_class(schema)
        if _prechecked(schema, cls):
            schema = _without_embedded_dialect(schema)
        _check_against_meta_schema(schema, cls)
        validator = _bounded(cls)(schema, registry=_registry(), format_checker=_format_checker(cls))
        found: list[tuple[list[str], Violation]] = []
        for error in validator.iter_errors(instance):
            message = shorten(json_message(error), MAX_MESSAGE)
            found.append((list(map(str, error.absolute_path)), Violation(json_path(error.absolute_path), message)))
            if len(found) >= MAX_VIOLATIONS:
                break
    except (UnusableSchema, _Stopped):
        raise
    except RecursionError:
        raise UnusableSchema("validating it recursed too deeply (a recursive schema and a deeply nested value)",
                             "too-deep") from None
    except Exception as exc:  # jsonschema on a schema built to break it: a finding, not a crash
        raise UnusableSchema(f"jsonschema could not use it: {type(exc).__name__}: {str(exc)[:MAX_MESSAGE]}",
                             "invalid-schema") from None
    finally:
        _local.budget = None
    found.sort(key=lambda pair: (pair[0], pair[1].message))
    return [violation for _, violation in found]


async def validate_async(instance: Any, schema: Any, *, seconds: float = BUDGET_SECONDS) -> list[Violation]:
    """`validate` on a daemon thread: the event loop stays free (Ctrl-C, other tasks), and a
    validation still running ABANDON_GRACE after its budget is left behind, told to stop."""
    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    if schema is True or schema == {}:
        return []
    stop = threading.Event()
    done = anyio.Event()
    token = anyio.lowlevel.current_token()
    answers: list[list[Violation]] = []  # what the thread found, or
    errors: list[BaseException] = []  # what it raised, handed to the waiting task

    def run() -> None:
        try:
            answers.append(validate(instance, schema, seconds=seconds, stop=stop))
        except BaseException as exc:
            errors.append(exc)
        finally:
            if not stop.is_set():
                with contextlib.suppress(RuntimeError):  # the event loop has ended: nobody waits any more
                    anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=run, name="mcpprobe-validate", daemon=True).start()
    try:
        with anyio.move_on_after(seconds + ABANDON_GRACE):
            await done.wait()
    finally:
        stop.set()
    if errors:
        raise errors[0]
    if answers:
        return answers[0]
    raise UnusableSchema(f"validating did not end within {seconds:g} s; abandoned", "too-slow", seconds=seconds)


def schema_problem(schema: Any) -> tuple[str, str] | None:
    """Why `schema` is not a valid schema of its dialect (2020-12 by default), as (reason, message),
    or None. "invalid-schema": its dialect's meta-schema rejects it; any other reason says mcpprobe
    could not judge it (an unknown dialect, a reference it does not follow, a pattern it cannot run).
    Runs in the caller's thread, bounded by the run's budget (`bounded_by`: --timeout, at most
    BUDGET_SECONDS); once a signal has come ("interrupted") it stops at its next step and hands the
    event loop back, which then ends the run."""
    if isinstance(schema, bool):
        return None
    if not isinstance(schema, dict):
        return "invalid-schema", "the schema is not an object"
    if arrived():
        return "interrupted", "not checked: the run was interrupted"
    _local.budget = _Budget(_schema_seconds.get(), threading.Event(), signals=True)
    try:
        cls = _validator_class(schema)
        if _prechecked(schema, cls):
            schema = _without_embedded_dialect(schema)
        _check_against_meta_schema(schema, cls)
    except UnusableSchema as exc:
        return exc.reason, str(exc)
    except _Stopped:
        return "interrupted", "not checked: the run was interrupted"
    except Exception as exc:  # noqa: BLE001 - jsonschema on a hostile schema: no verdict, never a crash
        return "unjudged", f"jsonschema could not check it: {type(exc).__name__}"
    finally:
        _local.budget = None
    return None
