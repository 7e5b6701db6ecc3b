"""The ids of requests given up on are kept only while their late answers are expected: forgotten
when the answer comes, and at most MAX_ABANDONED of them, so that a long `watch` or `load` run
against a server that does not answer in time does not grow without end."""

from __future__ import annotations

import anyio
import pytest
from conftest import FIXTURE, PY

from mcpprobe.errors import RequestTimeout
from mcpprobe.wire.jsonrpc import MAX_ABANDONED, AbandonedIds, Connection
from mcpprobe.wire.stdio import StdioTransport
from mcpprobe.wire.target import StdioTarget


def test_an_id_is_forgotten_once_its_late_answer_came() -> None:
    ids = AbandonedIds()
    ids.add(7)
    assert 7 in ids and len(ids) == 1
    assert ids.answered(7)  # the late answer: expected
    assert 7 not in ids and len(ids) == 0
    assert not ids.answered(7)  # a second answer to it is not


def test_past_the_limit_the_oldest_id_is_forgotten() -> None:
    ids = AbandonedIds(limit=3)
    for request_id in (1, "two", 3, 4):
        ids.add(request_id)
    assert len(ids) == 3
    assert 1 not in ids and all(i in ids for i in ("two", 3, 4))
    ids.add("two")  # given up again: the newest now
    ids.add(5)
    assert 3 not in ids and "two" in ids and len(ids) == 3


def test_the_default_limit_holds_however_many_are_given_up() -> None:
    ids = AbandonedIds()
    for request_id in range(MAX_ABANDONED * 3):
        ids.add(request_id)
    assert len(ids) == MAX_ABANDONED
    assert 0 not in ids and MAX_ABANDONED * 3 - 1 in ids


def test_a_real_server_s_late_answer_is_expected_once_and_then_forgotten() -> None:
    """The fixture server answers tools/list after FIXTURE_DELAY, whatever the client said in
    between: the request is given up first, its answer then arrives before the ping's."""

    async def run() -> None:
        target = StdioTarget((PY, str(FIXTURE), "slow"), env=(("FIXTURE_DELAY", "0.5"),))
        async with Connection(StdioTransport(target, max_message_bytes=1 << 20), send_timeout=5) as conn:
            await conn.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                              "clientInfo": {"name": "t", "version": "0"}}, timeout=30)
            with pytest.raises(RequestTimeout):
                await conn.request("tools/list", {}, timeout=0.05)
            assert len(conn._abandoned) == 1
            await conn.request("ping", {}, timeout=30)  # queued behind tools/list: its answer came first
            assert len(conn._abandoned) == 0
            assert conn.anomalies == []

    anyio.run(run)
