"""The renderers mask the run's secrets that their View names, before they cut or lay out what a
server sent, and read no global for them (mcpprobe.render.interface.View.redactor).

Each case puts a secret across the point where the renderer cuts the server's text short: cut
first, a prefix of the secret would stay, and the writer (which masks everything once more) would
no longer recognise it. The global redactor is set to another secret meanwhile: a renderer that
read it would mask that one, which the view does not name.
"""

from __future__ import annotations

import pytest

from mcpprobe.client.catalog import Listing, Page
from mcpprobe.client.session import Snapshot
from mcpprobe.client.settings import Settings
from mcpprobe.fleet.probe import Member, Report
from mcpprobe.operations.outcome import Outcome
from mcpprobe.render.formats import renderer
from mcpprobe.render.interface import Format, Listed, ProbeRun, Subject, View, WatchEvent
from mcpprobe.safety import redact
from mcpprobe.safety.redact import MASK, Redactor
from mcpprobe.wire.target import StdioTarget

SECRET = "sk-live-0123456789abcdef"
GLOBAL_ONLY = "global-only-secret-value"  # the global redactor's secret, which no view names


def _straddling(limit: int) -> str:
    """Text whose secret starts before the cut at `limit` (less the room of its `…(+N)` mark) and ends after it."""
    return f"{GLOBAL_ONLY} " + "x" * (limit - len(GLOBAL_ONLY) - 1 - 20) + SECRET + " and more text after it"


def _snapshot() -> Snapshot:
    return Snapshot(transport="stdio", target="notes-server", client_info={"name": "mcpprobe", "version": "0"},
                    client_capabilities={}, era="legacy", era_reason="initialize answered",
                    protocol_version="2025-11-25", server_info={"name": "notes", "version": "1"},
                    capabilities={"tools": {}}, negotiated=True)


def _listed() -> Listed:
    tools = [{"name": "leaky", "description": _straddling(80), "inputSchema": {"type": "object"}}]
    listing = Listing("tools", True, "complete", items=tools, pages=[Page(1, 1.0, 1, None)])
    return Listed(Outcome("list", snapshot=_snapshot(), kind="tools", listings={"tools": listing}))


def _probed() -> ProbeRun:
    tools = [{"name": "leaky", "description": _straddling(160), "inputSchema": {"type": "object"}}]
    listing = Listing("tools", True, "complete", items=tools, pages=[Page(1, 1.0, 1, None)])
    outcome = Outcome("probe", snapshot=_snapshot(), listings={"tools": listing})
    return ProbeRun([Report(Member("notes", StdioTarget(("notes-server",)), Settings()), outcome, elapsed=0.1)])


def _logged() -> WatchEvent:
    return WatchEvent({"ts": "2026-01-01T00:00:00.000Z", "event": "log", "kind": "server", "level": "info",
                       "data": _straddling(500)})


CASES = {"list human": (_listed, Format.HUMAN), "probe html": (_probed, Format.HTML),
         "watch human": (_logged, Format.HUMAN)}


@pytest.mark.parametrize("case", CASES)
def test_the_views_secret_is_masked_before_the_cut_and_no_global_is_read(
        case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    make, fmt = CASES[case]
    subject: Subject = make()
    monkeypatch.setattr(redact, "_active", Redactor([GLOBAL_ONLY]))
    text = renderer(fmt)(subject, View(width=10_000, now=0.0, redactor=Redactor([SECRET]))).text()
    assert MASK in text
    assert SECRET[:6] not in text  # not even the part before the cut
    assert GLOBAL_ONLY in text  # the global was not read: the view names no such secret


@pytest.mark.parametrize("case", CASES)
def test_without_a_redactor_the_view_masks_nothing(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A View without secrets (a test, a report of nothing secret) shows the text as the server sent
    it, cut where it is cut, whatever the global holds."""
    make, fmt = CASES[case]
    monkeypatch.setattr(redact, "_active", Redactor([SECRET]))
    text = renderer(fmt)(make(), View(width=10_000, now=0.0)).text()
    assert MASK not in text and SECRET[:6] in text
