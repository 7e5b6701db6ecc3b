"""The pagination, listing and tools families: lists to the end, twice alike, and what tools declare."""

from __future__ import annotations

import json
import re
from typing import Any

from mcpprobe.check.context import CheckContext, Verdict, answer_text, failed, inert, passed, skipped, warned
from mcpprobe.check.lifecycle import could_not_run, timed_out
from mcpprobe.client.kinds import KINDS, identity
from mcpprobe.errors import INVALID_PARAMS, RpcError

INVALID_CURSOR = "mcpprobe-invalid-cursor"
TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
MAX_NAMED = 5  # items named in a message


def declared_kinds(ctx: CheckContext) -> list[str]:
    return [kind for kind, spec in KINDS.items() if isinstance(ctx.capabilities.get(spec.capability), dict)]


def _names(values: list[str]) -> str:
    shown = ", ".join(inert(v, 60) for v in values[:MAX_NAMED])
    return shown + (f" and {len(values) - MAX_NAMED} more" if len(values) > MAX_NAMED else "")


async def invalid_cursor(ctx: CheckContext) -> Verdict:
    kind = next(kind for kind in declared_kinds(ctx) if kind != "templates")
    method = KINDS[kind].list_method
    exchange = await ctx.request(method, {"cursor": INVALID_CURSOR})
    if exchange.rpc_code == INVALID_PARAMS:
        return passed(f"{method} with a cursor it never issued was answered with error -32602")
    if exchange.result is not None:
        return warned(f"{method} with a cursor it never issued ({json.dumps(INVALID_CURSOR)}) was answered with a "
                      "result, not error -32602")
    if exchange.rpc_code is not None or timed_out(exchange):
        return warned(f"{method} with a cursor it never issued was answered with {answer_text(exchange)}, "
                      "not -32602")
    return could_not_run(exchange)


async def complete(ctx: CheckContext) -> Verdict:
    problems: list[str] = []
    notes: list[str] = []
    states: dict[str, Any] = {}
    for kind in declared_kinds(ctx):
        listing = await ctx.listing(kind)
        states[kind] = {"state": listing.state, "items": len(listing.items), "invalid": len(listing.invalid),
                        "pages": len(listing.pages)}
        if listing.state == "not-implemented":
            # -32601 to an optional part of a declared capability (mcpprobe.client.obligations): the
            # listing's own not-implemented note is in the run's findings; no failure, and said here.
            spec = KINDS[kind]
            notes.append(f"{spec.list_method} answered -32601: an optional part of '{spec.capability}', not "
                         "implemented (noted as not-implemented)")
            continue
        error = listing.error
        if error is not None and not isinstance(error, RpcError):
            return could_not_run_listing(kind, error)
        if listing.state != "complete":
            reasons = [f.message for f in listing.findings if f.code in ("list-failed", "list-incomplete",
                                                                        "method-not-found")]
            problems.append(f"{KINDS[kind].list_method}: {listing.state}"
                            + (f" ({inert(reasons[0], 200)})" if reasons else ""))
        if listing.invalid:
            first = listing.invalid[0]
            problems.append(f"{KINDS[kind].list_method}: {len(listing.invalid)} item(s) that break the schema of "
                            f"protocol {ctx.version}, first {inert(first, 200)}")
    if problems:
        return failed("; ".join(problems), kinds=states)
    listed = ", ".join(f"{kind} {state['items']}" for kind, state in states.items())
    return passed(f"every declared kind listed to the end ({listed})" + "".join(f"; {note}" for note in notes),
                  kinds=states)


def could_not_run_listing(kind: str, error: Any) -> Verdict:
    from mcpprobe.check.context import errored

    verdict = errored(f"{KINDS[kind].list_method}: {inert(error.message, 200)}")
    verdict.detail["exitCode"] = int(error.exit_code)
    return verdict


async def stable(ctx: CheckContext) -> Verdict:
    from mcpprobe.client.catalog import list_kind

    warnings: list[str] = []
    for kind in declared_kinds(ctx):
        if ctx.modern and kind != "tools":
            continue  # 2026-07-28 asks a deterministic order of tools only, and has no other rule to judge here
        first = await ctx.listing(kind)
        if first.state != "complete":
            continue
        await ctx.pace()
        again = await list_kind(ctx.session, kind)
        if again.state != "complete":
            continue
        before = [identity(kind, item) for item in first.items]
        after = [identity(kind, item) for item in again.items]
        notifier = f"notifications/{KINDS[kind].notifier}/list_changed"
        announced = any(method == notifier for method, _ in ctx.notifications)
        if sorted(map(str, before)) != sorted(map(str, after)) or _changed(first.items, again.items, kind):
            flag = ctx.capabilities.get(KINDS[kind].capability, {})
            if ctx.modern or announced or not (isinstance(flag, dict) and flag.get("listChanged") is True):
                continue  # announced, or no rule asks it to be announced: a list may change
            warnings.append(f"{KINDS[kind].list_method} gave other items the second time, and no {notifier} came "
                            "although listChanged is declared")
        elif ctx.modern and kind == "tools" and before != after:
            warnings.append("tools/list gave the same tools in another order the second time")
    if warnings:
        return warned("; ".join(warnings))
    return passed("listing again gave the same items" + (" in the same order" if ctx.modern else ""))


def _changed(first: Any, again: Any, kind: str) -> bool:
    old = {identity(kind, item): item for item in first}
    return any(old.get(identity(kind, item)) != item for item in again)


async def icons(ctx: CheckContext) -> Verdict:
    bad: list[str] = []
    count = 0
    for kind in declared_kinds(ctx):
        for item in (await ctx.listing(kind)).items:
            for icon in item.get("icons") or [] if isinstance(item.get("icons"), list) else []:
                count += 1
                src = icon.get("src") if isinstance(icon, dict) else None
                scheme = src.split(":", 1)[0].lower() if isinstance(src, str) and ":" in src else ""
                if scheme not in ("https", "data"):
                    bad.append(f"{KINDS[kind].singular} {inert(identity(kind, item), 60)}: {inert(src, 80)}")
    if bad:
        return warned(f"{len(bad)} icon(s) that clients must reject (neither https: nor data:): {_names(bad)}")
    return passed(f"every icon ({count}) is https: or data:" if count else "no icons listed")


async def name_rules(ctx: CheckContext) -> Verdict:
    listing = await ctx.listing("tools")
    names = [item.get("name") for item in listing.items]
    bad = [str(name) for name in names if not isinstance(name, str) or not TOOL_NAME.fullmatch(name)]
    seen: set[str] = set()
    twice = sorted({str(n) for n in names if n in seen or seen.add(str(n))})  # type: ignore[func-returns-value]
    problems = []
    if bad:
        problems.append(f"{len(bad)} tool name(s) outside 1-128 characters of A-Z a-z 0-9 _ - .: {_names(bad)}")
    if twice:
        problems.append(f"tool names listed more than once: {_names(twice)}")
    if problems:
        return warned("; ".join(problems))
    return passed(f"all {len(names)} tool names follow the naming rules")


async def _schema_rules(ctx: CheckContext, key: str) -> Verdict:
    from mcpprobe.safety.validation import schema_problem

    listing = await ctx.listing("tools")
    judged = ctx.version >= "2025-11-25"  # "Schemas MUST be valid according to their ... dialect"
    failures: list[str] = []
    unjudged: list[str] = []
    count = 0
    for tool in listing.items:
        if key not in tool:
            continue
        count += 1
        name = str(tool.get("name"))
        schema = tool[key]
        if not isinstance(schema, dict):
            failures.append(f"{inert(name, 60)}: {key} is not an object")
            continue
        if schema.get("type") != "object":
            failures.append(f"{inert(name, 60)}: {key} has type {inert(schema.get('type'), 40)}, not \"object\"")
            continue
        problem = schema_problem(schema) if judged else None
        if problem is not None:
            reason, message = problem
            target = failures if reason == "invalid-schema" else unjudged
            target.append(f"{inert(name, 60)}: {inert(message, 160)}")
    if failures:
        return failed(f"{len(failures)} tool(s) with an unusable {key}: " + "; ".join(failures[:MAX_NAMED]))
    if unjudged:
        return warned(f"{len(unjudged)} {key}(s) mcpprobe could not judge: " + "; ".join(unjudged[:MAX_NAMED]))
    if count == 0:
        return passed(f"no tool has an {key}") if key == "outputSchema" else passed("no tools listed")
    how = "valid under its dialect" if judged else "an object schema"
    return passed(f"every {key} ({count}) is {how}")


async def input_schema(ctx: CheckContext) -> Verdict:
    return await _schema_rules(ctx, "inputSchema")


async def output_schema(ctx: CheckContext) -> Verdict:
    return await _schema_rules(ctx, "outputSchema")


async def call_named(ctx: CheckContext) -> Verdict:
    if not ctx.options.calls:
        return skipped("no tool named with --call; nothing sent (check never calls a tool on its own)")
    from mcpprobe.check.calls import call_each

    return await call_each(ctx)


async def call_content(ctx: CheckContext) -> Verdict:
    from mcpprobe.check.calls import call_content as judged

    return await judged(ctx)


CACHEABLE = ("supportedVersions", "tools", "resources", "resourceTemplates", "prompts", "contents")


async def cache_hints(ctx: CheckContext) -> Verdict:
    """2026-07-28 CacheableResult: the results that are one, known by their keys."""
    cacheable = [(rid, result) for rid, result in ctx.answers if any(key in result for key in CACHEABLE)]
    wrong = []
    for rid, result in cacheable:
        ttl, scope = result.get("ttlMs"), result.get("cacheScope")
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or ttl < 0 or scope not in ("public", "private"):
            wrong.append(f"the answer to request {inert(rid, 40)}: ttlMs {inert(ttl, 30)}, cacheScope "
                         f"{inert(scope, 30)}")
    if wrong:
        return failed(f"{len(wrong)} of {len(cacheable)} discover, list or read results lack a ttlMs of at least 0 "
                      f"or a cacheScope of public or private; first {wrong[0]}")
    return passed(f"all {len(cacheable)} discover, list and read results carry ttlMs and cacheScope")


IMPLEMENTS = {
    "pagination.invalid-cursor": invalid_cursor,
    "listing.complete": complete,
    "listing.stable": stable,
    "listing.icons": icons,
    "listing.cache-hints": cache_hints,
    "tools.name-rules": name_rules,
    "tools.input-schema": input_schema,
    "tools.output-schema": output_schema,
    "tools.call-named": call_named,
    "tools.call-content": call_content,
}
