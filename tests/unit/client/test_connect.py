"""open_session against a real server over stdio: what a command hangs on the session (one
SessionHooks) reaches it, in the order that keeps nothing unseen."""

from __future__ import annotations

from typing import Any

import anyio

from mcpprobe.client.connect import SessionHooks, open_session
from mcpprobe.wire.jsonrpc import Connection
from mcpprobe.wire.target import Settings, StdioTarget
from tests.conftest import fixture_cmd

SETTINGS = Settings(protocol="legacy", timeout=30, connect_timeout=30)


def test_the_hooks_reach_the_session_before_its_first_message() -> None:
    seen: list[tuple[str, str]] = []
    connected_after: list[int] = []

    def tracer(direction: str, message: Any) -> None:
        seen.append((direction, str(message.get("method", "answer"))))

    def on_connection(conn: Connection) -> None:
        connected_after.append(len(seen))

    async def run() -> None:
        hooks = SessionHooks(tracer=tracer, on_connection=on_connection)
        async with open_session(StdioTarget(tuple(fixture_cmd("full"))), SETTINGS, hooks) as session:
            await session.request("tools/list")

    anyio.run(run)
    assert connected_after == [0]  # before anything was sent
    assert ("send", "initialize") in seen and ("send", "tools/list") in seen and ("recv", "answer") in seen


def test_an_operation_adds_its_hooks_to_the_callers_and_runs_its_own_first() -> None:
    calls: list[str] = []
    caller = SessionHooks(tracer=lambda direction, message: calls.append(f"caller {direction}"),
                          on_connection=lambda conn: calls.append("caller connected"))
    hooks = caller.adding(tracer=lambda direction, message: calls.append(f"own {direction}"),
                          on_connection=lambda conn: calls.append("own connected"))

    async def run() -> None:
        async with open_session(StdioTarget(tuple(fixture_cmd("full"))), SETTINGS, hooks):
            pass

    anyio.run(run)
    assert calls[:4] == ["own connected", "caller connected", "own send", "caller send"]
    assert calls.count("own recv") == calls.count("caller recv") >= 1
    # Nothing to add leaves the caller's as they were.
    assert caller.adding() == caller
