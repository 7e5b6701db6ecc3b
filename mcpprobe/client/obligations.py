"""What a declared capability obliges a server to answer: the one table behind every -32601.

-32601 (Method not found) is JSON-RPC's answer for a method a server does not implement. For a
capability the server did not declare it is the right answer; for a method the declared capability
obliges it to answer it is a contradiction (`method-not-found`, an error); for an *optional part*
of a declared capability it is the info note `not-implemented`: the server left that part out, an
implementation inconsistency worth recording, never a failure. `probe`, `list`, `watch` and `check`
read the row here and give the same note through `not_implemented` (docs/findings.md, "Which
methods a capability obliges", holds the same table with the specification's words).

Each row also names the specification pages that define its method (`pages`): a check links the
page of the method it sends, never another method's (`mcpprobe.check.catalogue`, and its test).

Data only (and the finding it builds), so that the light paths can read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcpprobe.findings import Finding

# The tasks extension of 2026-07-28 (SEP-2663): its pages are the SEP, which the specification links.
TASKS_SEP = "https://modelcontextprotocol.io/seps/2663-tasks-extension"


@dataclass(frozen=True)
class Part:
    """One method a server answers, and what obliges it to.

    `capability`/`sub`: what the server declares for it (None: the base protocol, no capability).
    `optional`: no revision of the specification obliges a server that declares the capability to
    answer the method; then `leaves_out` says what a -32601 means for the user ("it offers no
    templates") and `part` names the part ("Listing templates"). `pages`: the specification's pages
    (paths under SPEC_BASE/<version>/, without an anchor, or a SEP's URL) that define the method."""

    method: str
    capability: str | None
    sub: str | None = None
    optional: bool = False
    pages: tuple[str, ...] = ()
    part: str = ""
    leaves_out: str = ""
    revisions: str = "every protocol revision"  # where the method exists, for the note


PARTS: dict[str, Part] = {part.method: part for part in (
    Part("tools/list", "tools", pages=("server/tools",)),
    Part("tools/call", "tools", pages=("server/tools",)),
    Part("resources/list", "resources", pages=("server/resources",)),
    # "the capability supports two optional features", subscribe and listChanged; templates are
    # "Resource templates allow servers to expose parameterized resources", with no MUST; 2026-07-28
    # obliges a server that declares `resources` to answer resources/list and names no other method.
    Part("resources/templates/list", "resources", optional=True, pages=("server/resources",),
         part="Listing them", leaves_out="it offers no templates"),
    Part("resources/read", "resources", pages=("server/resources",)),
    Part("resources/subscribe", "resources", "subscribe", pages=("server/resources",)),
    Part("resources/unsubscribe", "resources", "subscribe", pages=("server/resources",)),
    Part("prompts/list", "prompts", pages=("server/prompts",)),
    Part("prompts/get", "prompts", pages=("server/prompts",)),
    Part("completion/complete", "completions", pages=("server/utilities/completion",)),
    # "Servers that emit log message notifications MUST declare the logging capability"; "clients
    # MAY send a logging/setLevel request": nothing obliges a server that declares it to answer.
    Part("logging/setLevel", "logging", optional=True, pages=("server/utilities/logging",),
         part="Setting the log level", leaves_out="it takes no log level from the client, and sends its log "
                                                  "messages at a level of its own",
         revisions="every protocol revision that has it (2024-11-05 to 2025-11-25)"),
    # Tasks (2025-11-25, experimental): tasks/get and tasks/result serve any task the server made;
    # in 2026-07-28 the tasks extension (SEP-2663) defines tasks/get and tasks/cancel anew.
    Part("tasks/get", "tasks", pages=("basic/utilities/tasks", TASKS_SEP)),
    Part("tasks/result", "tasks", pages=("basic/utilities/tasks", TASKS_SEP)),
    Part("tasks/list", "tasks", "list", pages=("basic/utilities/tasks",)),
    Part("tasks/cancel", "tasks", "cancel", pages=("basic/utilities/tasks", TASKS_SEP)),
    # The base protocol and the 2026-07-28 era: no capability of their own.
    Part("ping", None, pages=("basic/utilities/ping",)),
    Part("notifications/cancelled", None, pages=("basic/utilities/cancellation", "basic/patterns/cancellation")),
    Part("server/discover", None, pages=("server/discover",)),
    Part("subscriptions/listen", None, pages=("basic/patterns/subscriptions", TASKS_SEP)),
    Part("tasks/update", None, pages=(TASKS_SEP,)),
)}


def is_optional(method: str) -> bool:
    """Whether `method` is an optional part of the capability it belongs to."""
    part = PARTS.get(method)
    return part is not None and part.optional


def method_pages() -> dict[str, frozenset[str]]:
    """Each page that defines a method, and the methods it defines (a page of no method's own, such
    as the base protocol's or pagination's, is not here)."""
    pages: dict[str, set[str]] = {}
    for part in PARTS.values():
        for page in part.pages:
            pages.setdefault(page, set()).add(part.method)
    return {page: frozenset(methods) for page, methods in pages.items()}


def not_implemented(method: str, rpc_message: str, *, kind: str = "server",
                    detail: dict[str, Any] | None = None) -> Finding:
    """The one note for -32601 to an optional part of a declared capability, whichever command met it."""
    from mcpprobe.findings import Finding

    part = PARTS[method]
    if not part.optional or part.capability is None:
        raise ValueError(f"{method} is not an optional part of a capability")
    return Finding(
        "not-implemented",
        f"the server declared '{part.capability}' and answered {method} with -32601 Method not found "
        f"({rpc_message}): {part.leaves_out}. {part.part} is an optional part of '{part.capability}' in "
        f"{part.revisions}, so this is not an error and leaves the exit code unchanged",
        kind=kind, detail={"method": method, "capability": part.capability, **(detail or {})})
