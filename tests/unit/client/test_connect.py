"""open_session against real servers over stdio: what a command hangs on the session (one
SessionHooks) reaches it, in the order that keeps nothing unseen; a handshake that fails is a
HandshakeFailed with what the wire showed, apart from the error's own detail."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpprobe.client.connect import HandshakeFailed, SessionHooks, open_session
from mcpprobe.client.settings import Settings
from mcpprobe.errors import METHOD_NOT_FOUND, ConnectionFailed, RpcError
from mcpprobe.wire.jsonrpc import Connection
from mcpprobe.wire.target import StdioTarget
from tests.conftest import PY, fixture_cmd

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


PRIVATE_KEYS = {"snapshot", "findings", "timings", "serverStderr"}


def _failed_handshake(command: list[str]) -> HandshakeFailed:
    async def run() -> HandshakeFailed:
        try:
            async with open_session(StdioTarget(tuple(command)), SETTINGS):
                pass
        except HandshakeFailed as failed:
            return failed
        raise AssertionError("the handshake did not fail")

    return anyio.run(run)


def test_a_failed_handshake_carries_what_the_wire_showed_apart_from_its_error() -> None:
    failed = _failed_handshake(fixture_cmd("crash-on-initialize"))
    assert isinstance(failed.error, ConnectionFailed)  # the class that says the exit code
    assert "fatal: plugin 'broken' raised ValueError" in "\n".join(failed.handshake.stderr_tail)
    assert [timing.phase for timing in failed.handshake.timings] == ["connect", "initialize"]
    assert failed.handshake.snapshot.transport == "stdio" and not failed.handshake.snapshot.negotiated
    assert not PRIVATE_KEYS & set(failed.error.detail)


def test_the_snapshot_of_a_failed_handshake_has_what_the_server_chose() -> None:
    failed = _failed_handshake(fixture_cmd("unsupported-version"))
    assert failed.error.code == "unsupported-version"
    assert failed.handshake.snapshot.protocol_version == "1999-01-01"
    assert not PRIVATE_KEYS & set(failed.error.detail)


def test_the_findings_before_a_failed_handshake_are_kept() -> None:
    # Not JSON-RPC on stdout, then the server ends on the first request it reads.
    server = [PY, "-c", "import sys; print('starting, not JSON', flush=True); sys.stdin.readline()"]
    failed = _failed_handshake(server)
    assert isinstance(failed.error, ConnectionFailed)
    assert [finding.code for finding in failed.handshake.findings] == ["non-protocol-output"]


def test_a_failure_inside_the_session_is_raised_as_it_was() -> None:
    async def run() -> None:
        async with open_session(StdioTarget(tuple(fixture_cmd("full"))), SETTINGS) as session:
            await session.request("no/such-method")

    with pytest.raises(RpcError) as raised:
        anyio.run(run)
    assert raised.value.rpc_code == METHOD_NOT_FOUND
