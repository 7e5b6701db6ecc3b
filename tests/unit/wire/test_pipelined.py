"""Load's pipelined path (wire/pipelined.py) beside the connection's one request path: made only on a
transport that can queue a send, and its requests end as a `Call`'s do (`Connection.awaited`): the same
RequestTimeout past the deadline, a late answer then expected rather than a violation; an enqueued
request's answer calls back once, a given-up one never. Against the fixture server over stdio, whose
`slow` scenario answers tools/list after FIXTURE_DELAY whatever the client said in between."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import FIXTURE, PY

from mcpprobe.errors import RequestTimeout
from mcpprobe.wire.jsonrpc import Connection, Pending
from mcpprobe.wire.legacy_sse import LegacySseTransport
from mcpprobe.wire.pipelined import Pipeline
from mcpprobe.wire.stdio import StdioTransport
from mcpprobe.wire.streamable_http import StreamableHttpTransport
from mcpprobe.wire.target import HttpTarget, StdioTarget

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}


def test_a_pipeline_only_where_the_transport_queues_sends() -> None:
    stdio = Pipeline.of(Connection(StdioTransport(StdioTarget(("server",)), max_message_bytes=1024)))
    assert stdio is not None and stdio.fast.immediate is not None and stdio.fast.lines is not None
    http = Pipeline.of(Connection(StreamableHttpTransport(HttpTarget("http://127.0.0.1:9/mcp"),
                                                          max_message_bytes=1024, connect_timeout=1.0)))
    assert http is not None and http.fast.immediate is None and http.fast.bodies is not None
    sse = LegacySseTransport(HttpTarget("http://127.0.0.1:9/sse", transport="sse"), max_message_bytes=1024,
                             connect_timeout=1.0)
    assert Pipeline.of(Connection(sse)) is None


def slow_server(delay: str) -> StdioTransport:
    target = StdioTarget((PY, str(FIXTURE), "slow"), env=(("FIXTURE_DELAY", delay),))
    return StdioTransport(target, max_message_bytes=1 << 20)


def test_a_posted_request_that_times_out_ends_as_a_call_does() -> None:
    async def run() -> None:
        async with Connection(slow_server("0.5"), send_timeout=5) as conn:
            await conn.request("initialize", INIT, timeout=30)
            pipeline = Pipeline.of(conn)
            assert pipeline is not None
            with pytest.raises(RequestTimeout) as called:
                await conn.request("tools/list", {}, timeout=0.05)
            posted = pipeline.post("tools/list", {}, timeout=0.05)
            assert posted is not None
            with pytest.raises(RequestTimeout) as timed_out:
                await posted.result()
            assert timed_out.value.message == called.value.message == "tools/list: no answer within 0.05 s"
            assert timed_out.value.detail == called.value.detail
            posted = pipeline.post("ping", {}, timeout=30)  # queued behind both: their late answers come first
            assert posted is not None
            assert await posted.result() == {}
            assert posted.answered > 0
            assert conn.anomalies == []  # both late answers were expected

    anyio.run(run)


def test_an_enqueued_answer_calls_back_once_and_a_given_up_one_never() -> None:
    async def run() -> None:
        async with Connection(slow_server("0.3"), send_timeout=5) as conn:
            await conn.request("initialize", INIT, timeout=30)
            pipeline = Pipeline.of(conn)
            assert pipeline is not None
            answers: list[tuple[int, str, Any]] = []
            answered = anyio.Event()

            def on_answer(request_id: int, pending: Pending) -> None:
                answers.append((request_id, pending.method, pending.result))
                answered.set()

            slow = pipeline.enqueue("tools/list", {}, timeout=30, on_answer=on_answer)
            assert slow is not None
            pipeline.give_up(slow, "timed out")
            ping = pipeline.enqueue("ping", {}, timeout=30, on_answer=on_answer)
            assert ping is not None
            pipeline.flush()
            with anyio.fail_after(10):
                await answered.wait()
            await conn.request("ping", {}, timeout=30)  # whatever else was coming has come
            assert answers == [(ping, "ping", {})]
            assert conn.anomalies == []  # the given-up request's late answer was expected

    anyio.run(run)
