"""The checks before a request is sent: the item is in the server's complete list, the arguments
match its declaration, and a tool not marked read-only is confirmed. Each refusal is `Refused`
(exit 3) with nothing sent, unless --force, which sends it and says so in a finding.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio

from mcpprobe.client import headers
from mcpprobe.client.catalog import Listing
from mcpprobe.client.session import Session
from mcpprobe.errors import Refused
from mcpprobe.findings import Finding
from mcpprobe.operations import arguments as argmod
from mcpprobe.operations.input import Confirmer
from mcpprobe.operations.outcome import InvokeOutcome
from mcpprobe.safety import validation

ANNOTATION_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
# Spec defaults when a hint is absent (tools.mdx, ToolAnnotations).
HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


def find(listing: Listing, key: str, value: str) -> dict[str, Any] | None:
    return next((item for item in listing.items if item.get(key) == value), None)


def not_in_catalog(session: Session, listing: Listing, what: str, value: str, names: list[str],
                    method: str, where: str = "") -> Finding:
    """Refuse (unless --force): `value` is not in the list. Says how complete the list was."""
    close = argmod.suggestions(value, names)
    state = "" if listing.whole else f" (the list is {listing.state}, so it may be elsewhere)"
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    where = where or listing.kind
    message = f"{what} {value!r} is not among the server's {len(listing.items)} {where}{state}{hint}"
    detail = {"name": value, "suggestions": close, "listState": listing.state, "count": len(listing.items)}
    if not session.settings.force:
        raise Refused(f"{message}{'' if message.endswith('?') else '.'} Nothing was sent; use --force to send "
                      f"{method} anyway.", code="not-in-catalog", detail=detail)
    return Finding("forced", f"{message}; {method} was sent with --force", kind=listing.kind, detail=detail)


def refuse_arguments(session: Session, outcome: InvokeOutcome, message: str, detail: dict[str, Any],
                      method: str) -> None:
    if not session.settings.force:
        raise Refused(f"{message}. Nothing was sent; use --force to send {method} anyway.",
                      code="invalid-arguments", detail=detail)
    outcome.findings.append(Finding("forced", f"{message}; {method} was sent with --force",
                                    kind=outcome.item_kind or "server", detail=detail))


def violations_text(violations: list[validation.Violation], limit: int = 5) -> str:
    shown = "; ".join(f"{v.path}: {v.message}" for v in violations[:limit])
    more = f" (and {len(violations) - limit} more)" if len(violations) > limit else ""
    return shown + more


async def check_schema(session: Session, outcome: InvokeOutcome, instance: Any, schema: Any,
                        which: str) -> list[validation.Violation] | None:
    """Violations, or None when the schema cannot be used (a warning finding that says why).

    The schema is the server's: validating it never fetches, never recurses without end, and
    stops within min(--timeout, validation.BUDGET_SECONDS); Ctrl-C is not held up by it."""
    seconds = min(session.settings.timeout, validation.BUDGET_SECONDS)
    try:
        return await validation.validate_async(instance, schema, seconds=seconds)
    except validation.UnusableSchema as exc:
        outcome.findings.append(Finding(
            "unusable-schema", f"the tool's {which} is not a usable JSON Schema ({exc}); not validated",
            kind="tools", detail={"schema": which, **exc.detail}))
        return None


def confirmation_needed(tool: dict[str, Any], *, yes: bool, interactive: bool) -> str:
    """The one rule of "may mcpprobe call this tool?" (`call`, `watch --call`, `load --call`,
    `check --call`): 'read-only' (marked `readOnlyHint: true`: called), '--yes' (called), 'prompt'
    (a person at a terminal is asked first) or 'non-interactive' (refused: nobody to ask, no --yes)."""
    annotations = got if isinstance(got := tool.get("annotations"), dict) else {}
    if annotations.get("readOnlyHint") is True:
        return "read-only"
    if yes:
        return "--yes"
    return "prompt" if interactive else "non-interactive"


async def _ask(ask: Callable[[dict[str, Any], dict[str, Any]], bool], tool: dict[str, Any],
               arguments: dict[str, Any]) -> bool:
    """Ask on a daemon thread, so that Ctrl-C (which cancels this task) is never stuck in input()."""
    box: dict[str, bool] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["answer"] = bool(ask(tool, arguments))
        except BaseException:  # click.Abort on EOF or Ctrl-C at the prompt: no
            box["answer"] = False
        finally:
            done.set()

    threading.Thread(target=run, name="mcpprobe-confirm", daemon=True).start()
    while not done.is_set():
        await anyio.sleep(0.05)
    return box["answer"]



async def checked_arguments(session: Session, outcome: InvokeOutcome, listing: Listing, name: str,
                            given: argmod.ToolArguments) -> tuple[dict[str, Any], dict[str, Any]]:
    """The catalog and argument checks of every tools/call (`call`, `watch --call`): the tool
    from the complete list and the arguments built by its inputSchema. Raises Refused, with
    nothing sent, when the tool is not listed or the arguments do not match (unless --force)."""
    tool = find(listing, "name", name)
    if tool is None and not _refuse_excluded(session, outcome, name):
        outcome.findings.append(not_in_catalog(
            session, listing, "tool", name, [t.get("name", "") for t in listing.items], "tools/call"))
    tool = tool or {"name": name}
    outcome.item = tool
    schema = tool.get("inputSchema")
    arguments = given.build(schema)
    outcome.arguments = arguments
    if isinstance(schema, dict | bool) and "inputSchema" in tool:
        violations = await check_schema(session, outcome, arguments, schema, "inputSchema")
        if violations:
            refuse_arguments(
                session, outcome,
                f"the arguments do not match the inputSchema of tool {name!r}: {violations_text(violations)}",
                {"violations": [v.to_json() for v in violations], "dialect": validation.dialect_of(schema)},
                "tools/call")
    if unsafe := headers.unsafe_integers(session.tool_headers.get(name, ()), arguments):
        refuse_arguments(
            session, outcome, f"tool {name!r}: {', '.join(unsafe)} travel{'s' if len(unsafe) == 1 else ''} as "
            f"{headers.PREFIX}* header{'s' if len(unsafe) > 1 else ''}, and {headers.KEY} integer values MUST be "
            f"within the safe range for JavaScript (-2^53+1 to 2^53-1)", {"parameters": unsafe}, "tools/call")
    return tool, arguments


def _refuse_excluded(session: Session, outcome: InvokeOutcome, name: str) -> bool:
    """A tool left out of tools/list for invalid x-mcp-header annotations is not called: Refused
    (unless --force: then it is sent without Mcp-Param-* headers, and a finding says so). False
    when the tool was not left out for that."""
    invalid = session.excluded_tools.get(name)
    if invalid is None:
        return False
    message = (f"tool {name!r} is left out of the tool list, as a client on streamable HTTP MUST leave it out: "
               f"{invalid.message}; an {headers.KEY} value {invalid.words}")
    detail = {"tool": name, "rule": invalid.rule, "reason": invalid.message}
    if not session.settings.force:
        raise Refused(f"{message}. Nothing was sent; use --force to send tools/call anyway.",
                      code="invalid-x-mcp-header", detail=detail)
    outcome.findings.append(Finding("forced", f"{message}; tools/call was sent with --force, without "
                                    f"{headers.PREFIX}* headers", kind="tools", detail=detail))
    return True


def checked_prompt(session: Session, outcome: InvokeOutcome, listing: Listing, name: str, values: dict[str, str], *,
                   check: bool = True) -> list[str]:
    """The catalog and argument checks of every prompts/get (`get-prompt`, `load --get-prompt`): the
    prompt from the complete list; its declared argument names. With `check`, missing required and
    unknown arguments among `values` are refused (unless --force), nothing sent."""
    prompt = find(listing, "name", name)
    found = prompt is not None
    if prompt is None:
        outcome.findings.append(not_in_catalog(
            session, listing, "prompt", name, [p.get("name", "") for p in listing.items], "prompts/get"))
        prompt = {"name": name}
    outcome.item = prompt
    declared = [a for a in prompt.get("arguments") or [] if isinstance(a, dict) and isinstance(a.get("name"), str)]
    names = [a["name"] for a in declared]
    outcome.arguments = dict(values)
    if not check:
        return names
    missing = [a["name"] for a in declared if a.get("required") is True and a["name"] not in values]
    unknown = [k for k in values if k not in names] if found else []
    problems = []
    if missing:
        problems.append(f"missing required argument{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
    if unknown:
        problems.append(f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}"
                        f" (declared: {', '.join(names) or 'none'})")
    if problems:
        refuse_arguments(session, outcome, f"prompt {name!r}: " + "; ".join(problems),
                         {"missing": missing, "unknown": unknown, "declared": names}, "prompts/get")
    return names


def not_confirmed(tool: dict[str, Any]) -> Refused:
    """The refusal of a tool not marked read-only, with no terminal to ask on and no --yes."""
    return Refused(f"tool {tool.get('name')!r} is not marked read-only (readOnlyHint: true), and there is no "
                   "terminal to ask on: pass --yes to call it. Nothing was sent.", code="not-confirmed",
                   detail={"tool": tool.get("name"), "confirmation": "non-interactive"})


async def confirm_call(session: Session, outcome: InvokeOutcome, tool: dict[str, Any], arguments: dict[str, Any],
                       confirmer: Confirmer) -> None:
    """The confirmation of every tools/call (`confirmation_needed`): a tool not marked read-only
    needs --yes, or a yes on a terminal. Raises Refused (not-confirmed, exit 3) otherwise, with
    nothing sent: a no at the question, or no terminal to ask on and no --yes."""
    how = confirmation_needed(tool, yes=confirmer.yes, interactive=confirmer.interactive)
    outcome.confirmation = how
    if how == "non-interactive":
        raise not_confirmed(tool)
    confirmer.on_preview(tool, arguments, how, session.snapshot.server_info or {})
    if how == "prompt":
        if not await _ask(confirmer.ask, tool, arguments):
            outcome.confirmation = "declined"
            raise Refused(f"tool {tool.get('name')!r} was not called: not confirmed", code="not-confirmed",
                          severity="info")
        outcome.confirmation = "confirmed"
