"""`probe` and `list`: one async operation each, returning an `Outcome` (mcpprobe.operations.outcome).

Operations never print and never decide how the process ends: they return what happened, with
findings, and `Outcome.exit_code` turns that into the documented code.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from mcpprobe.client.catalog import KINDS, LIST_KINDS, Listing, PageFeed, list_kind, timing_for
from mcpprobe.client.connect import NO_HOOKS, SessionHooks
from mcpprobe.client.session import Session
from mcpprobe.client.settings import Settings
from mcpprobe.findings import Finding
from mcpprobe.operations.outcome import Outcome, guarded
from mcpprobe.wire.target import Target


def suspicious_findings(listing: Listing) -> list[Finding]:
    """Hidden characters or escape sequences in names and descriptions: signs of tool poisoning.
    Each item is checked as it is read (`catalog._scan`); this hands over what was found."""
    return list(listing.suspicious)


async def probe(target: Target, settings: Settings, *, session_hooks: SessionHooks = NO_HOOKS,
                on_ready: Callable[[Outcome], None] | None = None) -> Outcome:
    """Snapshot, then every declared kind listed to the end, concurrently."""
    outcome = Outcome("probe")

    async def body(session: Session) -> None:
        async def one(kind: str) -> None:
            listing = await list_kind(session, kind)
            outcome.listings[kind] = listing
            listing.findings.extend(suspicious_findings(listing))

        async with anyio.create_task_group() as group:
            for kind in KINDS:
                group.start_soon(one, kind)
        outcome.listings = {kind: outcome.listings[kind] for kind in KINDS}
        from mcpprobe.client.extensions import list_skills, suspicious

        outcome.skills = await list_skills(session)  # only where the skills extension is declared
        if outcome.skills is not None:
            outcome.findings.extend(outcome.skills.findings)
        outcome.findings.extend(suspicious(session.capabilities, outcome.skills))
        outcome.timings.extend(timing_for(listing) for listing in outcome.listings.values() if listing.pages)

    return await guarded(outcome, target, settings, body, session_hooks=session_hooks, on_ready=on_ready)


async def list_one(target: Target, settings: Settings, kind: str, *, feed: PageFeed | None = None,
                   session_hooks: SessionHooks = NO_HOOKS,
                   on_ready: Callable[[Outcome], None] | None = None) -> Outcome:
    """One kind, to the end. Refused (exit 3, nothing sent) when its capability is not declared.
    `feed`: given each page of kept items as it is kept (the human table's cells)."""
    outcome = Outcome("list", kind=kind, feed=feed)

    async def body(session: Session) -> None:
        if kind == "tasks" and session.era.tasks_extension:
            from mcpprobe.operations.tasks_ext import refuse_list

            refuse_list(session)  # the tasks extension of 2026-07-28 has no tasks/list
        session.check(LIST_KINDS[kind].list_method)
        listing = await list_kind(session, kind, feed)
        listing.findings.extend(suspicious_findings(listing))
        outcome.listings[kind] = listing
        outcome.timings.append(timing_for(listing))
        from mcpprobe.client.extensions import suspicious

        outcome.findings.extend(suspicious(session.capabilities))  # what the declared extensions' settings say

    return await guarded(outcome, target, settings, body, session_hooks=session_hooks, on_ready=on_ready)
