"""The resources and prompts families: what is listed can be read and expanded, and what is not is refused."""

from __future__ import annotations

from typing import Any

from mcpprobe.check.context import CheckContext, Exchange, Verdict, answer_text, failed, inert, passed, skipped, warned
from mcpprobe.check.lifecycle import could_not_run, timed_out
from mcpprobe.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, ProbeError, RpcError

READ_SAMPLE = 5  # listed resources read
PROMPT_SAMPLE = 10  # listed prompts expanded
UNKNOWN_PATH = "mcpprobe-no-such-resource-5f1c"
TEXTUAL = ("text/", "application/json", "application/xml", "application/yaml", "application/javascript")


def broken_answer(exchange: Exchange) -> Verdict | None:
    """The exchange met a transport failure, not an answer: the check cannot judge."""
    if exchange.result is None and exchange.rpc_code is None and not timed_out(exchange):
        return could_not_run(exchange)
    return None


async def _reads(ctx: CheckContext) -> list[tuple[dict[str, Any], Exchange]]:
    """The first READ_SAMPLE listed resources, each read once per run (read-listed and mime-type share them)."""
    cache = getattr(ctx, "_reads", None)
    if cache is None:
        listing = await ctx.listing("resources")
        cache = []
        for item in list(listing.items)[:READ_SAMPLE]:
            uri = item.get("uri")
            if isinstance(uri, str):
                cache.append((item, await ctx.request("resources/read", {"uri": uri})))
        ctx._reads = cache  # type: ignore[attr-defined]
    for _, exchange in cache:
        ctx.note(exchange)
    return cache


async def read_listed(ctx: CheckContext) -> Verdict:
    reads = await _reads(ctx)
    if not reads:
        return skipped("no resources listed; nothing to read")
    problems = []
    for item, exchange in reads:
        broken = broken_answer(exchange)
        if broken is not None:
            return broken
        uri = inert(item.get("uri"), 80)
        if exchange.result is None:
            problems.append(f"{uri}: {answer_text(exchange)}")
        elif not isinstance(exchange.result.get("contents"), list):
            problems.append(f"{uri}: the result has no contents list")
    if problems:
        return warned(f"{len(problems)} of {len(reads)} listed resources could not be read: " + "; ".join(problems))
    return passed(f"read {len(reads)} listed resource(s)")


def _mime_problems(item: dict[str, Any], result: dict[str, Any]) -> list[str]:
    listed = item.get("mimeType")
    problems = []
    for content in result.get("contents") or []:
        if not isinstance(content, dict) or content.get("uri") != item.get("uri"):
            continue  # contents of another URI (a directory's children): nothing listed to compare with
        given = content.get("mimeType")
        if isinstance(listed, str) and isinstance(given, str) and _base(listed) != _base(given):
            problems.append(f"{inert(item.get('uri'), 80)} is listed as {inert(listed, 40)} and read as "
                            f"{inert(given, 40)}")
        kind = given if isinstance(given, str) else listed
        if isinstance(kind, str) and "text" in content and not _textual(kind) and "blob" not in content:
            continue  # text of a binary type: base64 or not, the spec does not say; not judged
    return problems


def _base(mime: str) -> str:
    return mime.split(";", 1)[0].strip().lower()


def _textual(mime: str) -> bool:
    return _base(mime).startswith(TEXTUAL) or _base(mime).endswith(("+json", "+xml"))


async def mime_type(ctx: CheckContext) -> Verdict:
    reads = [(item, exchange) for item, exchange in await _reads(ctx) if exchange.result is not None]
    if not reads:
        return skipped("no listed resource was read; nothing to compare")
    problems = [problem for item, exchange in reads for problem in _mime_problems(item, exchange.result or {})]
    if problems:
        return warned("; ".join(problems))
    return passed(f"the contents of {len(reads)} resource(s) agree with their listed mimeType")


async def template_expands(ctx: CheckContext) -> Verdict:
    from mcpprobe.operations.arguments import expand, template_variables

    listing = await ctx.listing("templates")
    if listing.state == "not-implemented":  # -32601 to an optional part (mcpprobe.client.obligations)
        return skipped("resources/templates/list answered -32601 (templates are an optional part of resources, "
                       "noted as not-implemented); nothing to expand")
    for item in listing.items:
        template = item.get("uriTemplate")
        if not isinstance(template, str):
            continue
        try:
            if template_variables(template, required_only=True):
                continue
            uri = expand(template, {})
        except (ValueError, ProbeError):
            continue
        exchange = await ctx.request("resources/read", {"uri": uri})
        broken = broken_answer(exchange)
        if broken is not None:
            return broken
        if exchange.result is not None and isinstance(exchange.result.get("contents"), list):
            return passed(f"template {inert(template, 80)} expanded with no values to {inert(uri, 80)} and read")
        return warned(f"template {inert(template, 80)} expanded with no values to {inert(uri, 80)}, which gave "
                      f"{answer_text(exchange)}")
    return skipped("no listed template expands without values (each has a required variable); nothing sent")


async def unknown_uri(ctx: CheckContext) -> Verdict:
    from mcpprobe.operations.arguments import matches_template

    uri = await _unknown_uri(ctx)
    exchange = await ctx.request("resources/read", {"uri": uri})
    broken = broken_answer(exchange)
    if broken is not None:
        return broken
    code = exchange.rpc_code
    if ctx.modern:
        if code == INVALID_PARAMS:
            return passed(f"{uri} was answered with error -32602, the 2026-07-28 resource-not-found error")
        if code == RESOURCE_NOT_FOUND_LEGACY:
            return failed(f"{uri} was answered with -32002; 2026-07-28 servers MUST answer -32602 (Invalid Params)")
        if exchange.result is not None and exchange.result.get("contents") == []:
            return failed(f"{uri} was answered with an empty contents array, which 2026-07-28 forbids for a "
                          "resource that does not exist")
    else:
        if isinstance(exchange.error, RpcError) and ctx.session.era.is_not_found(exchange.error):
            return passed(f"{uri} was answered with {answer_text(exchange)}, a resource-not-found error")
    templates = await ctx.listing("templates") if isinstance(ctx.capabilities.get("resources"), dict) else None
    matched = next((t["uriTemplate"] for t in (templates.items if templates is not None else [])
                    if isinstance(t.get("uriTemplate"), str) and matches_template(uri, t["uriTemplate"])), None)
    if exchange.result is not None and matched is not None:
        # Read as a resource the template names (a catch-all such as `{+path}`): it may exist, and a
        # result is no fault. Nothing was judged, so no pass.
        return skipped(f"not judged: {uri} matches the listed template {inert(matched, 80)}, so it may exist, "
                       "and it was read")
    expected = "-32602" if ctx.modern else "-32002"
    return failed(f"{uri}, a URI that does not exist, was answered with {answer_text(exchange)}, not the "
                  f"resource-not-found error {expected}")


async def _unknown_uri(ctx: CheckContext) -> str:
    listing = await ctx.listing("resources")
    for item in listing.items:
        uri = item.get("uri")
        if isinstance(uri, str) and "://" in uri:
            scheme, _, rest = uri.partition("://")
            host = rest.split("/", 1)[0] if scheme not in ("file",) else ""
            return f"{scheme}://{host}/{UNKNOWN_PATH}"
    return f"mcpprobe://{UNKNOWN_PATH}"


async def subscribe(ctx: CheckContext) -> Verdict:
    listing = await ctx.listing("resources")
    uri = next((item.get("uri") for item in listing.items if isinstance(item.get("uri"), str)), None)
    if uri is None:
        return skipped("no resources listed; nothing to subscribe to")
    on = await ctx.request("resources/subscribe", {"uri": uri})
    broken = broken_answer(on)
    if broken is not None:
        return broken
    if on.result is None:
        return failed(f"resources/subscribe {inert(uri, 80)} was answered with {answer_text(on)}, although "
                      "resources.subscribe is declared")
    off = await ctx.request("resources/unsubscribe", {"uri": uri})
    broken = broken_answer(off)
    if broken is not None:
        return broken
    if off.result is None:
        return failed(f"resources/unsubscribe {inert(uri, 80)} was answered with {answer_text(off)}")
    return passed(f"subscribed to {inert(uri, 80)} and unsubscribed")


async def _sample_arguments(ctx: CheckContext, prompt: dict[str, Any]) -> dict[str, str]:
    """--sample-arguments: a value for each required argument, from completion/complete where
    `completions` is declared, else the argument's own name."""
    values: dict[str, str] = {}
    for argument in prompt.get("arguments") or []:
        if not isinstance(argument, dict) or not isinstance(argument.get("name"), str) or not argument.get("required"):
            continue
        name = argument["name"]
        value = name
        if isinstance(ctx.capabilities.get("completions"), dict):
            exchange = await ctx.request("completion/complete", {
                "ref": {"type": "ref/prompt", "name": prompt.get("name")},
                "argument": {"name": name, "value": ""}, **({"context": {"arguments": values}} if values else {})})
            found = ((exchange.result or {}).get("completion") or {}).get("values")
            if isinstance(found, list) and found and isinstance(found[0], str):
                value = found[0]
        values[name] = value
    return values


async def get_listed(ctx: CheckContext) -> Verdict:
    listing = await ctx.listing("prompts")
    problems: list[str] = []
    rejected: list[str] = []  # prompts that refused the values mcpprobe made up (--sample-arguments)
    done = 0
    left_out = 0
    for prompt in listing.items:
        if done >= PROMPT_SAMPLE:
            break
        arguments = [a for a in prompt.get("arguments") or [] if isinstance(a, dict)]
        required = any(a.get("required") for a in arguments)
        if required and not ctx.options.sample_arguments:
            left_out += 1
            continue
        values = await _sample_arguments(ctx, prompt) if required else {}
        params: dict[str, Any] = {"name": prompt.get("name")}
        if values:
            params["arguments"] = values
        exchange = await ctx.request("prompts/get", params)
        broken = broken_answer(exchange)
        if broken is not None:
            return broken
        done += 1
        name = inert(prompt.get("name"), 60)
        if values and exchange.rpc_code == INVALID_PARAMS:
            # The values were made up by mcpprobe (--sample-arguments): a server that refuses them with
            # JSON-RPC's "-32602 Invalid params: Invalid method parameter(s)" (the code prompts.mdx
            # names for a bad prompts/get) is right to, whatever the values' fault. Not judged.
            rejected.append(name)
        elif exchange.result is None:
            problems.append(f"{name}: {answer_text(exchange)}")
        elif not isinstance(exchange.result.get("messages"), list) and exchange.result.get("resultType") in (
                None, "complete"):
            problems.append(f"{name}: the result has no messages list")
        elif isinstance(exchange.result.get("messages"), list):
            messages = exchange.result["messages"]
            ctx.expanded.append((name, len(messages), _message_problem(messages)))
    tail = f"; {left_out} with required arguments left out (--sample-arguments)" if left_out else ""
    if rejected:
        tail += (f"; {len(rejected)} refused the argument values mcpprobe made up with error -32602, as the "
                 f"specification allows, so not judged: {', '.join(rejected[:5])}")
    judged = done - len(rejected)
    if problems:
        return warned(f"{len(problems)} of {judged} prompts could not be expanded: " + "; ".join(problems) + tail)
    if judged == 0 and rejected:
        return skipped("no listed prompt was expanded: only prompts with made-up argument values were sent" + tail)
    if judged == 0:
        return skipped("no listed prompt could be expanded without arguments; nothing sent" + tail)
    return passed(f"expanded {judged} listed prompt(s){tail}")


def _message_problem(messages: list[Any]) -> str | None:
    """What is wrong with the first broken message of an expanded prompt, or None."""
    from mcpprobe.check.calls import content_problem

    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            return f"messages[{index}] has no role user or assistant"
        problem = content_problem(message.get("content"))
        if problem is not None:
            return f"messages[{index}].content {problem}"
    return None


async def message_content(ctx: CheckContext) -> Verdict:
    if not ctx.expanded:
        return skipped("no prompt was expanded during the run (prompts.get-listed expands those without required "
                       "arguments); nothing to judge")
    problems = [f"{name}: {problem}" for name, _, problem in ctx.expanded if problem is not None]
    if problems:
        return failed(f"{len(problems)} of {len(ctx.expanded)} expanded prompts had a broken message: "
                      + "; ".join(problems[:5]))
    count = sum(messages for _, messages, _ in ctx.expanded)
    return passed(f"every message ({count}) of {len(ctx.expanded)} expanded prompt(s) has a role and a valid "
                  "content block")


IMPLEMENTS = {
    "resources.read-listed": read_listed,
    "resources.mime-type": mime_type,
    "resources.template-expands": template_expands,
    "resources.unknown-uri": unknown_uri,
    "resources.subscribe": subscribe,
    "prompts.get-listed": get_listed,
    "prompts.message-content": message_content,
}
