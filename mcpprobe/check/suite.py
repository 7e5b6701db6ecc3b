"""`check --suite-fixtures`: the official conformance suite's fixture tools, resources and prompts,
judged as the suite judges them, wherever the server lists them under the suite's names.

The suite (`@modelcontextprotocol/conformance`, `conformance server --url URL`) asks every server for
fixtures of its own (`test_simple_text`, `test://static-text`, `test_simple_prompt`, ...) and
compares what comes back with what its scenario's "Server Implementation Requirements" describe. A
server that lists a tool, resource, template or prompt under one of those names claims to implement
that fixture: the `suite` family holds it to the suite's own expectations (its fixture contract),
and to the specification where a MUST says the same (progress that increases). One check per
suite scenario, its id the scenario's name (`suite.tools-call-simple-text`).

Nothing is sent without `--suite-fixtures`, nor for a fixture the server does not list (each is
`skipped`, saying why). The fixture tools are called through the one rule of every call mcpprobe
makes (mcpprobe.check.calls.call_once: listed, arguments checked, a tool not marked read-only only
with --yes or a yes on a terminal); the server's requests during a call are answered by `call`'s own
InputBroker, as the client capabilities that `--suite-fixtures` declares allow: every
`elicitation/create` declined, every `sampling/createMessage` answered with one fixed text
(mcpprobe.operations.input.FIXED_SAMPLING).

The 2026-07-28 `input-required-result-*` scenarios (SEP-2322), which retry a request round by round
and send crafted params, are in mcpprobe.check.suite_mrtr, behind this module's gate (the flag, the
fixture listed): their table, requests and judgements are a room of their own.

One room: each scenario's judgement (a transcription of the suite's own `run()`) sits beside the
table that says what is sent for it and the function that sends it; split, a reader comparing a
check with the suite's scenario would have to gather the request and its judgement from two files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from mcpprobe.check.calls import NamedRun, call_once, called
from mcpprobe.check.context import (
    CheckContext,
    NamedCall,
    Verdict,
    answer_text,
    errored,
    failed,
    inert,
    passed,
    refusal,
    skipped,
)
from mcpprobe.check.reading import broken_answer
from mcpprobe.check.suite_gate import CONTRACT, gated, listed_names, not_listed, truthy
from mcpprobe.check.suite_mrtr import IMPLEMENTS as INPUT_REQUIRED
from mcpprobe.client.capabilities import declared
from mcpprobe.errors import ProbeError, Refused
from mcpprobe.operations.arguments import ToolArguments
from mcpprobe.operations.input import OBSERVED_SCHEMA_CHARS

if TYPE_CHECKING:
    from mcpprobe.client.catalog import Listing

LOG_WANTED = 3  # the suite's test_tool_with_logging sends three log messages
# After the call's answer, how long log messages not yet come are waited for (the suite waits 0.2 s): at least
# this, or ten times the call's own round trip where that was longer (a busy machine), never past --timeout.
LOG_GRACE = 0.5
LOG_GRACE_ROUND_TRIPS = 10
LOGS_KEPT = 50
SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"


def _same(value: Any, expected: Any) -> bool:
    """The suite's `===` between JSON values: 30 and 30.0 are one number; true is not 1."""
    return value == expected and isinstance(value, bool) == isinstance(expected, bool)


@dataclass
class Seen:
    """What a fixture tool's call gave: its answer, what the server asked and logged during it."""

    run: NamedRun
    logs: list[dict[str, Any]] = field(default_factory=list)
    asked: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # requests for input, as they came

    @property
    def result(self) -> dict[str, Any]:
        return self.run.exchange.result or {}

    @property
    def content(self) -> list[Any]:
        content = self.result.get("content")
        return content if isinstance(content, list) else []


def _blocks(seen: Seen, kind: str) -> list[dict[str, Any]]:
    return [b for b in seen.content if isinstance(b, dict) and b.get("type") == kind]


def _content_list(seen: Seen) -> list[str]:
    content = seen.result.get("content")
    if not isinstance(content, list):
        return ["the result has no content list"]
    return ["the content list is empty"] if not content else []


# ----- the suite's judgements of each fixture tool's answer (its scenario's run()) -----


def _simple_text(seen: Seen) -> list[str]:
    problems = _content_list(seen)
    text = _blocks(seen, "text")
    if not text:
        problems.append("no text block")
    elif not truthy(text[0].get("text")):
        problems.append("its text block has no text")
    return problems


def _media(kind: str, mime: str | None = None) -> Callable[[Seen], list[str]]:
    def judge(seen: Seen) -> list[str]:
        problems = _content_list(seen)
        blocks = _blocks(seen, kind)
        if not blocks:
            return [*problems, f"no {kind} block"]
        block = blocks[0]
        if not truthy(block.get("data")):
            problems.append(f"its {kind} block has no data")
        if not truthy(block.get("mimeType")):
            problems.append(f"its {kind} block has no mimeType")
        elif mime is not None and block.get("mimeType") != mime:
            problems.append(f"its {kind} block's mimeType is {inert(block.get('mimeType'), 60)}, not {mime}")
        return problems

    return judge


def _embedded(seen: Seen) -> list[str]:
    problems = _content_list(seen)
    blocks = _blocks(seen, "resource")
    if not blocks:
        return [*problems, "no resource block"]
    resource = blocks[0].get("resource")
    if not isinstance(resource, dict):
        return [*problems, "its resource block has no resource"]
    if not truthy(resource.get("uri")):
        problems.append("the embedded resource has no uri")
    if not truthy(resource.get("mimeType")):
        problems.append("the embedded resource has no mimeType")
    if not truthy(resource.get("text")) and not truthy(resource.get("blob")):
        problems.append("the embedded resource has neither text nor blob")
    return problems


def _mixed(seen: Seen) -> list[str]:
    content = seen.result.get("content")
    if not isinstance(content, list):
        return ["the result has no content list"]
    problems = ["fewer than two content blocks"] if len(content) < 2 else []
    return problems + [f"no {kind} block" for kind in ("text", "image", "resource") if not _blocks(seen, kind)]


def _error(seen: Seen) -> list[str]:
    if seen.result.get("isError") is not True:
        return ["the result is not isError: true"]
    first = seen.content[0] if seen.content else None
    if isinstance(first, dict) and truthy(first.get("text")):
        return []
    return ["the error result has no message (a first content block with text)"]


def _logging(seen: Seen) -> list[str]:
    if not seen.logs:
        return ["no notifications/message came during the call"]
    if len(seen.logs) < LOG_WANTED:
        return [f"{len(seen.logs)} notifications/message came during the call, not {LOG_WANTED}"]
    return []


def _progress(seen: Seen) -> list[str]:
    events = seen.run.outcome.progress
    problems = []
    if not events:
        problems.append("no notifications/progress for the call's progressToken")
    elif len(events) < 3:
        problems.append(f"{len(events)} notifications/progress for the call's progressToken, not 3")
    values = [e.get("progress") for e in events]
    for index in range(1, len(values)):
        before, now = values[index - 1], values[index]
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (before, now)):
            continue
        if now <= before:  # type: ignore[operator]
            problems.append(f"progress did not increase: notification {index + 1} says {now!r} after {before!r} "
                            "(\"The progress value MUST increase with each notification\")")
            break
    return problems


def _asked(seen: Seen, method: str) -> list[str]:
    return [] if any(m == method for m, _ in seen.asked) else [f"the server did not send {method} during the call"]


def _sampling(seen: Seen) -> list[str]:
    return _asked(seen, "sampling/createMessage") + (["the result has no content"] if not seen.content else [])


def _elicitation(seen: Seen) -> list[str]:
    return _asked(seen, "elicitation/create") + (["the result has no content"] if not seen.content else [])


def _schema_properties(seen: Seen) -> dict[str, Any] | None:
    for method, params in seen.asked:
        if method == "elicitation/create":
            schema = params.get("requestedSchema")
            properties = schema.get("properties") if isinstance(schema, dict) else None
            return properties if isinstance(properties, dict) else {}
    return None


def _field(properties: dict[str, Any], name: str) -> dict[str, Any]:
    value = properties.get(name)
    return value if isinstance(value, dict) else {}


def _sep1034(seen: Seen) -> list[str]:
    properties = _schema_properties(seen)
    if properties is None:
        return ["the server did not send elicitation/create during the call"]
    problems = []
    for name, kind, default in (("name", "string", "John Doe"), ("age", "integer", 30), ("score", "number", 95.5),
                                ("status", "string", "active"), ("verified", "boolean", True)):
        prop = _field(properties, name)
        if not prop:
            problems.append(f"no {kind} field {name!r}")
            continue
        if prop.get("type") != kind:
            problems.append(f"{name!r} has the type {inert(prop.get('type'), 30)}, not {kind}")
        if "default" not in prop:
            problems.append(f"{name!r} has no default")
        elif not _same(prop["default"], default):
            problems.append(f"{name!r} has the default {inert(prop['default'], 40)}, not {json.dumps(default)}")
        if name == "status":
            enum = prop.get("enum")
            if not isinstance(enum, list):
                problems.append("'status' has no enum list")
            elif "default" in prop and prop["default"] not in enum:
                problems.append("'status' has a default that is not one of its enum values")
    return problems


def _titled(options: Any) -> bool:
    return isinstance(options, list) and all(isinstance(o, dict) and isinstance(o.get("const"), str)
                                             and isinstance(o.get("title"), str) for o in options)


def _sep1330(seen: Seen) -> list[str]:
    properties = _schema_properties(seen)
    if properties is None:
        return ["the server did not send elicitation/create during the call"]
    problems = []
    single, titled, legacy = (_field(properties, n) for n in ("untitledSingle", "titledSingle", "legacyEnum"))
    multi, titled_multi = _field(properties, "untitledMulti"), _field(properties, "titledMulti")
    if not single:
        problems.append("no field 'untitledSingle'")
    elif single.get("type") != "string" or not isinstance(single.get("enum"), list) or truthy(single.get("oneOf")) \
            or truthy(single.get("enumNames")):
        problems.append("'untitledSingle' is not {type: string, enum: [...]} (without oneOf or enumNames)")
    if not titled:
        problems.append("no field 'titledSingle'")
    elif titled.get("type") != "string" or not _titled(titled.get("oneOf")) or truthy(titled.get("enum")):
        problems.append("'titledSingle' is not {type: string, oneOf: [{const, title}, ...]} (without enum)")
    if not legacy:
        problems.append("no field 'legacyEnum'")
    elif legacy.get("type") != "string" or not isinstance(legacy.get("enum"), list) \
            or not isinstance(legacy.get("enumNames"), list) or len(legacy["enumNames"]) != len(legacy["enum"]):
        problems.append("'legacyEnum' is not {type: string, enum: [...], enumNames: [...]} of equal lengths")
    items = _field(multi, "items")
    if not multi:
        problems.append("no field 'untitledMulti'")
    elif multi.get("type") != "array" or items.get("type") != "string" or not isinstance(items.get("enum"), list) \
            or truthy(items.get("anyOf")):
        problems.append("'untitledMulti' is not {type: array, items: {type: string, enum: [...]}}")
    items = _field(titled_multi, "items")
    if not titled_multi:
        problems.append("no field 'titledMulti'")
    elif titled_multi.get("type") != "array" or not _titled(items.get("anyOf")) or truthy(items.get("enum")):
        problems.append("'titledMulti' is not {type: array, items: {anyOf: [{const, title}, ...]}}")
    return problems


# (tool, its arguments as --call words, the judgement, what a pass says)
TOOLS: dict[str, tuple[str, tuple[str, ...], Callable[[Seen], list[str]], str]] = {
    "suite.tools-call-simple-text": ("test_simple_text", (), _simple_text, "a text block"),
    "suite.tools-call-image": ("test_image_content", (), _media("image"), "an image block with data and mimeType"),
    "suite.tools-call-audio": ("test_audio_content", (), _media("audio", "audio/wav"), "an audio/wav block"),
    "suite.tools-call-embedded-resource": ("test_embedded_resource", (), _embedded,
                                           "an embedded resource with uri, mimeType and text or blob"),
    "suite.tools-call-mixed-content": ("test_multiple_content_types", (), _mixed,
                                       "text, image and resource blocks"),
    "suite.tools-call-error": ("test_error_handling", (), _error, "isError: true with a message"),
    "suite.tools-call-with-logging": ("test_tool_with_logging", (), _logging,
                                      f"{LOG_WANTED} or more notifications/message during the call"),
    "suite.tools-call-with-progress": ("test_tool_with_progress", (), _progress,
                                       "3 or more increasing notifications/progress"),
    "suite.tools-call-sampling": ("test_sampling", ("prompt=Test prompt for sampling",), _sampling,
                                  "sampling/createMessage during the call, and content"),
    "suite.tools-call-elicitation": ("test_elicitation", ("message=Please provide your information",), _elicitation,
                                     "elicitation/create during the call, and content"),
    "suite.elicitation-sep1034-defaults": ("test_elicitation_sep1034_defaults", (), _sep1034,
                                           "an elicitation/create schema with the five defaults"),
    "suite.elicitation-sep1330-enums": ("test_elicitation_sep1330_enums", (), _sep1330,
                                        "an elicitation/create schema with the five enum forms"),
}


async def _call_fixture(ctx: CheckContext, check_id: str) -> Verdict:
    tool, words, judge, good = TOOLS[check_id]
    closed = gated(ctx)
    if closed is not None:
        return closed
    listing = await ctx.listing("tools")
    if tool not in listed_names(listing.items, "name"):
        return not_listed("tool", tool)
    logs: list[dict[str, Any]] = []
    enough = anyio.Event()
    prepare = None
    if judge is _logging and not ctx.modern and declared(ctx.capabilities, "logging"):
        # as the suite does, the lowest level first (once the call is allowed), where the server declared
        # logging and the revision has it
        async def prepare() -> object:
            return await ctx.request("logging/setLevel", {"level": "debug"})

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "notifications/message" and len(logs) < LOGS_KEPT:
            logs.append(params)
            if len(logs) >= LOG_WANTED:
                enough.set()

    call = NamedCall(" ".join([tool, *words]), tool, ToolArguments.parse(list(words)))
    earlier = called(ctx, tool)
    if earlier is not None:  # named with --call too: called once per run, and judged from that call
        return _judged(ctx, check_id, earlier, call, listing)
    handlers = ctx.session.conn.notification_handlers
    handlers.append(on_notification)
    try:
        try:
            _, run = await call_once(ctx, call, listing, prepare=prepare)
        except Refused as exc:  # the one rule for calling tools refused it: nothing sent
            if exc.code == "invalid-arguments":  # the listed inputSchema refuses what the suite's contract sends
                return failed(f"{tool} as listed does not take the arguments the suite sends ({inert(call.spec, 120)})"
                              f": {inert(exc.message, 300)} ({CONTRACT})", tool=tool)
            verdict = errored(f"{inert(tool, 60)}: {refusal(exc)}")
            verdict.detail["exitCode"] = int(exc.exit_code)
            return verdict
        if judge is _logging and run.exchange.result is not None and len(logs) < LOG_WANTED:
            # Log messages tied to the call come before its answer; one sent on another stream may
            # come just after it: a bounded wait, only while some are missing.
            grace = max(LOG_GRACE, LOG_GRACE_ROUND_TRIPS * run.exchange.ms / 1000)
            with anyio.move_on_after(min(grace, ctx.session.settings.timeout)):
                await enough.wait()
    finally:
        handlers.remove(on_notification)
    return _judged(ctx, check_id, run, call, listing, logs)


def _judged(ctx: CheckContext, check_id: str, run: NamedRun, call: NamedCall, listing: Listing,
            logs: list[dict[str, Any]] | None = None) -> Verdict:
    """The fixture tool's one call in this run, judged as the suite judges it. `logs`: the
    notifications/message watched during the call; None when the call was --call's (made before this
    check, by tools.call-named), which is judged when it sent the suite's arguments and the judgement
    needs no log messages (those the suite asks for at its own level first), else skipped."""
    tool, _, judge, good = TOOLS[check_id]
    ctx.note(run.exchange)
    exchange = run.exchange
    if logs is None:
        listed = next((t for t in listing.items if isinstance(t, dict) and t.get("name") == tool), {})
        if run.outcome.arguments != call.arguments.build(listed.get("inputSchema")):
            return skipped(f"{tool} was called in this run with --call {inert(run.call.spec, 120)}, not with the "
                           f"arguments the suite sends ({inert(call.spec, 120)}); each tool is called once per run: "
                           "not judged")
        if judge is _logging:
            return skipped(f"{tool} was called in this run with --call, before the suite's logging/setLevel and "
                           "with no watch on its log messages; each tool is called once per run: not judged")
    watched = logs or []
    if exchange.result is None:
        if isinstance(exchange.error, ProbeError) and exchange.rpc_code is None:
            verdict = errored(f"tools/call {inert(tool, 60)}: {inert(exchange.error.message, 200)}")
            verdict.detail["exitCode"] = int(exchange.error.exit_code)
            return verdict
        return failed(f"{tool} answered {answer_text(exchange)}, not a result ({CONTRACT})")
    seen = Seen(run, watched, run.asked)
    dropped = next((params["dropped"] for _, params in run.asked if "dropped" in params), None)
    if judge in (_sep1034, _sep1330) and dropped is not None:
        return skipped(f"{tool}'s elicitation/create schema was {dropped} characters of JSON, more than mcpprobe "
                       f"keeps ({OBSERVED_SCHEMA_CHARS}); not judged")
    problems = judge(seen)
    detail: dict[str, Any] = {"tool": tool}
    if judge is _logging:
        detail["logMessages"] = len(watched)
    if judge is _progress:
        detail["progress"] = [e.get("progress") for e in run.outcome.progress][:20]
    if judge in (_sampling, _elicitation, _sep1034, _sep1330):
        detail["requests"] = [method for method, _ in run.asked]
    if problems:
        return failed(f"{tool}: " + "; ".join(problems) + f" ({CONTRACT})", **detail)
    return passed(f"{tool} answered {good}, as the suite's fixture does", **detail)


def _tool_check(check_id: str) -> Callable[[CheckContext], Any]:
    async def run(ctx: CheckContext) -> Verdict:
        return await _call_fixture(ctx, check_id)

    return run


# ----- listed, not called: the JSON Schema 2020-12 fixture tool -----

JSON_SCHEMA_TOOL = "json_schema_2020_12_tool"


async def json_schema(ctx: CheckContext) -> Verdict:
    closed = gated(ctx)
    if closed is not None:
        return closed
    listing = await ctx.listing("tools")
    tool = next((t for t in listing.items if isinstance(t, dict) and t.get("name") == JSON_SCHEMA_TOOL), None)
    if tool is None:
        return not_listed("tool", JSON_SCHEMA_TOOL)
    schema = _field(tool, "inputSchema")
    problems = []
    if schema.get("$schema") != SCHEMA_2020_12:
        problems.append(f"$schema is {inert(schema.get('$schema'), 80)}, not {SCHEMA_2020_12}")
    defs = schema.get("$defs")
    if not isinstance(defs, dict) or "address" not in defs:
        problems.append("$defs has no 'address'")
    if schema.get("additionalProperties") is not False:
        problems.append("additionalProperties is not false")
    if ctx.modern:  # SEP-2106's vocabulary: the suite judges it from 2026-07-28 only (SKIPPED before)
        all_of = schema.get("allOf")
        if not (isinstance(all_of, list) and any(isinstance(s, dict) and isinstance(s.get("anyOf"), list)
                                                 for s in all_of)):
            problems.append("allOf with a nested anyOf is missing")
        if not all(key in schema for key in ("if", "then", "else")):
            problems.append("if/then/else is missing")
        address = defs.get("address") if isinstance(defs, dict) else None
        if not (isinstance(address, dict) and "$anchor" in address):
            problems.append("$defs.address has no $anchor")
    if problems:
        return failed(f"{JSON_SCHEMA_TOOL}'s inputSchema as listed: " + "; ".join(problems) + f" ({CONTRACT})")
    return passed(f"{JSON_SCHEMA_TOOL}'s inputSchema keeps the suite's 2020-12 keywords"
                  + (" and SEP-2106's vocabulary" if ctx.modern else ""))


# ----- resources -----

def _first_content(result: dict[str, Any]) -> tuple[dict[str, Any] | None, list[str]]:
    contents = result.get("contents")
    if not isinstance(contents, list):
        return None, ["the result has no contents list"]
    if not contents:
        return None, ["the contents list is empty"]
    first = contents[0]
    return (first, []) if isinstance(first, dict) else (None, ["contents[0] is not an object"])


def _static(key: str) -> Callable[[dict[str, Any]], list[str]]:
    def judge(result: dict[str, Any]) -> list[str]:
        first, problems = _first_content(result)
        if first is None:
            return problems
        return [f"contents[0] has no {k}" for k in ("uri", "mimeType", key) if not truthy(first.get(k))]

    return judge


def _templated(result: dict[str, Any]) -> list[str]:
    first, problems = _first_content(result)
    if first is None:
        return problems
    if not truthy(first.get("uri")):
        problems.append("contents[0] has no uri")
    if "text" not in first and "blob" not in first:
        problems.append("contents[0] has neither text nor blob")
    elif "text" not in first:  # the suite reads a blob as "[binary]", which does not show the id
        problems.append("contents[0] is a blob, not a text that shows the id 123 it was read with")
    elif isinstance(first.get("text"), str) and "123" not in first["text"]:
        problems.append("the text does not show the id 123 it was read with")
    return problems


# check id -> (the listing kind, the listed key and name, the URI read, the judgement, what a pass says)
RESOURCES: dict[str, tuple[str, str, str, str, Callable[[dict[str, Any]], list[str]], str]] = {
    "suite.resources-read-text": ("resources", "uri", "test://static-text", "test://static-text", _static("text"),
                                  "a text content with uri and mimeType"),
    "suite.resources-read-binary": ("resources", "uri", "test://static-binary", "test://static-binary",
                                    _static("blob"), "a blob content with uri and mimeType"),
    "suite.resources-templates-read": ("templates", "uriTemplate", "test://template/{id}/data",
                                       "test://template/123/data", _templated, "a content that shows the id 123"),
}


def _resource_check(check_id: str) -> Callable[[CheckContext], Any]:
    kind, key, name, uri, judge, good = RESOURCES[check_id]
    what = "resource template" if kind == "templates" else "resource"

    async def run(ctx: CheckContext) -> Verdict:
        closed = gated(ctx)
        if closed is not None:
            return closed
        listing = await ctx.listing(kind)
        if name not in listed_names(listing.items, key):
            return not_listed(what, name)
        exchange = await ctx.request("resources/read", {"uri": uri})
        broken = broken_answer(exchange)
        if broken is not None:
            return broken
        if exchange.result is None:
            return failed(f"resources/read {uri} answered {answer_text(exchange)}, not a result ({CONTRACT})")
        problems = judge(exchange.result)
        if problems:
            return failed(f"{uri}: " + "; ".join(problems) + f" ({CONTRACT})")
        return passed(f"{uri} read as {good}, as the suite's fixture does")

    return run


# ----- prompts -----

def _messages(result: dict[str, Any]) -> tuple[list[Any], list[str]]:
    messages = result.get("messages")
    if not isinstance(messages, list):
        return [], ["the result has no messages list"]
    return messages, ([] if messages else ["the messages list is empty"])


def _prompt_simple(result: dict[str, Any]) -> list[str]:
    messages, problems = _messages(result)
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or not truthy(message.get("role")) or not truthy(message.get("content")):
            problems.append(f"messages[{index}] has no role or no content")
            break
    return problems


def _prompt_args(result: dict[str, Any]) -> list[str]:
    messages, problems = _messages(result)
    text = json.dumps(messages)
    return problems + [f"{arg} is not in the messages" for arg in ("testValue1", "testValue2") if arg not in text]


def _content_of(messages: list[Any]) -> list[dict[str, Any]]:
    return [m["content"] for m in messages if isinstance(m, dict) and isinstance(m.get("content"), dict)]


def _prompt_resource(result: dict[str, Any]) -> list[str]:
    messages, problems = _messages(result)
    if not any(c.get("type") == "resource" or "resource" in c for c in _content_of(messages)):
        problems.append("no message has an embedded resource")
    return problems


def _prompt_image(result: dict[str, Any]) -> list[str]:
    messages, problems = _messages(result)
    if not any(c.get("type") == "image" and truthy(c.get("data")) and truthy(c.get("mimeType"))
               for c in _content_of(messages)):
        problems.append("no message has an image with data and mimeType")
    return problems


# check id -> (prompt, its arguments, the judgement, what a pass says)
PROMPTS: dict[str, tuple[str, dict[str, str], Callable[[dict[str, Any]], list[str]], str]] = {
    "suite.prompts-get-simple": ("test_simple_prompt", {}, _prompt_simple, "messages, each with a role and content"),
    "suite.prompts-get-with-args": ("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"},
                                    _prompt_args, "messages that show both arguments"),
    "suite.prompts-get-embedded-resource": ("test_prompt_with_embedded_resource",
                                            {"resourceUri": "test://example-resource"}, _prompt_resource,
                                            "a message with an embedded resource"),
    "suite.prompts-get-with-image": ("test_prompt_with_image", {}, _prompt_image, "a message with an image"),
}


def _prompt_check(check_id: str) -> Callable[[CheckContext], Any]:
    name, arguments, judge, good = PROMPTS[check_id]

    async def run(ctx: CheckContext) -> Verdict:
        closed = gated(ctx)
        if closed is not None:
            return closed
        listing = await ctx.listing("prompts")
        if name not in listed_names(listing.items, "name"):
            return not_listed("prompt", name)
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = dict(arguments)
        exchange = await ctx.request("prompts/get", params)
        broken = broken_answer(exchange)
        if broken is not None:
            return broken
        if exchange.result is None:
            return failed(f"prompts/get {name} answered {answer_text(exchange)}, not a result ({CONTRACT})")
        problems = judge(exchange.result)
        if problems:
            return failed(f"{name}: " + "; ".join(problems) + f" ({CONTRACT})")
        return passed(f"{name} expanded to {good}, as the suite's fixture does")

    return run


# ----- completion: the fixture prompt's argument -----

COMPLETION_PROMPT = "test_prompt_with_arguments"


async def completion(ctx: CheckContext) -> Verdict:
    closed = gated(ctx)
    if closed is not None:
        return closed
    listing = await ctx.listing("prompts") if declared(ctx.capabilities, "prompts") else None
    if listing is None or COMPLETION_PROMPT not in listed_names(listing.items, "name"):
        return not_listed("prompt", COMPLETION_PROMPT)
    exchange = await ctx.request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": COMPLETION_PROMPT}, "argument": {"name": "arg1", "value": "test"}})
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    if exchange.result is None:
        return failed(f"completion/complete of {COMPLETION_PROMPT}'s arg1 answered {answer_text(exchange)}, not a "
                      f"result ({CONTRACT})")
    found = exchange.result.get("completion")
    if not isinstance(found, dict):
        return failed(f"completion/complete of {COMPLETION_PROMPT}'s arg1: the result has no completion object")
    if not isinstance(found.get("values"), list):
        return failed(f"completion/complete of {COMPLETION_PROMPT}'s arg1: completion.values is not a list")
    return passed(f"completion/complete of {COMPLETION_PROMPT}'s arg1 answered {len(found['values'])} value(s), as "
                  "the suite's fixture does")


IMPLEMENTS = {
    "suite.completion-complete": completion,
    **{check_id: _tool_check(check_id) for check_id in TOOLS},
    "suite.json-schema-2020-12": json_schema,
    **{check_id: _resource_check(check_id) for check_id in RESOURCES},
    **{check_id: _prompt_check(check_id) for check_id in PROMPTS},
    **INPUT_REQUIRED,
}
