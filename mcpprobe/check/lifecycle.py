"""The lifecycle family: ping, unknown methods, invalid params, request ids, cancellation, the stdio stream."""

from __future__ import annotations

import json
import time
from typing import Any

import anyio

from mcpprobe.check.context import (
    SERVER_INFO,
    CheckContext,
    Exchange,
    Verdict,
    answer_text,
    errored,
    failed,
    inert,
    passed,
    skipped,
    warned,
)
from mcpprobe.errors import INVALID_PARAMS, METHOD_NOT_FOUND, ConnectionFailed, ProbeError, RequestTimeout, RpcError
from mcpprobe.exitcodes import ExitCode
from mcpprobe.wire.shutdown import STDOUT_DRAIN_SECONDS, Shutdown
from mcpprobe.wire.stdio import describe_status
from mcpprobe.wire.target import StdioTarget

STRING_ID = "mcpprobe-id-7"
CANCEL_ID = "mcpprobe-cancel-1"
LARGE_ID = 2**53 - 1  # the largest integer every JSON implementation (JavaScript's too) holds exactly
EXIT_LIMIT_SECONDS = 5.0
# lifecycle.cancel-in-flight looks for the cancelled request's answer this many of the follow-up's round
# trips after the follow-up's answer (at least the floor, in seconds); the verdict never depends on it.
CANCEL_GRACE_RTTS = 4
CANCEL_GRACE_FLOOR = 0.02


def timed_out(exchange: Exchange) -> bool:
    return isinstance(exchange.error, RequestTimeout)


def could_not_run(exchange: Exchange) -> Verdict:
    """The check's request met a transport failure, not an answer: the check could not judge."""
    verdict = errored(f"{exchange.method}: {answer_text(exchange)}")
    if exchange.error is not None:
        verdict.detail["exitCode"] = int(exchange.error.exit_code)
    return verdict


async def ping(ctx: CheckContext) -> Verdict:
    exchange = await ctx.request("ping")
    if exchange.result is not None:
        extra = sorted(key for key in exchange.result if key != "_meta")
        if extra:
            return warned(f"ping was answered with a result that is not empty (keys: {', '.join(extra)})")
        return passed(f"ping answered with an empty result in {exchange.ms:.0f} ms")
    if timed_out(exchange) or exchange.rpc_code is not None:
        return failed(f"ping was answered with {answer_text(exchange)}, not an empty result")
    return could_not_run(exchange)


UNKNOWN_METHOD = "mcpprobe/no-such-method"
# 2026-07-28, basic/transports/streamable-http, "Protocol Version Header": the status is judged too.
UNKNOWN_OVER_HTTP = ("\"If the server does not implement the requested RPC method, it MUST respond with 404 Not "
                     "Found and a JSON-RPC error with code -32601 (Method not found)\" (protocol 2026-07-28, "
                     "streamable HTTP)")


async def unknown_method(ctx: CheckContext) -> Verdict:
    statuses: list[int] = []  # the HTTP status of each answer to it, over streamable HTTP in 2026-07-28
    stop = None
    watch = getattr(ctx.session.conn.transport, "watch_responses", None)
    if ctx.modern and ctx.session.snapshot.transport == "http" and watch is not None:
        async def seen(response: Any) -> None:
            if response.request.headers.get("mcp-method") == UNKNOWN_METHOD:
                statuses.append(response.status_code)

        stop = watch(seen)
    try:
        exchange = await ctx.request(UNKNOWN_METHOD, {})
    finally:
        if stop is not None:
            stop()
    if exchange.rpc_code == METHOD_NOT_FOUND and statuses and statuses[-1] != 404:
        return failed(f"{UNKNOWN_METHOD} was answered with error -32601 (Method not found), but with HTTP "
                      f"{statuses[-1]}, not 404: {UNKNOWN_OVER_HTTP}", httpStatus=statuses[-1])
    if exchange.rpc_code == METHOD_NOT_FOUND:
        with_404 = " and HTTP 404" if statuses else ""
        return passed(f"mcpprobe/no-such-method was answered with error -32601 (Method not found){with_404}",
                      **({"httpStatus": 404} if statuses else {}))
    if exchange.rpc_code is not None:
        return warned(f"mcpprobe/no-such-method was answered with {answer_text(exchange)}; JSON-RPC 2.0 names "
                      "-32601 (Method not found) for a method that does not exist")
    if exchange.result is not None:
        return failed("mcpprobe/no-such-method, a method that does not exist, was answered with a result")
    if timed_out(exchange):
        return failed("mcpprobe/no-such-method was never answered; a request must get a response")
    if isinstance(exchange.error, ConnectionFailed) and isinstance(ctx.session.target, StdioTarget):
        return failed(f"the server ended instead of answering mcpprobe/no-such-method ({answer_text(exchange)}); "
                      "a request must get a response")
    return could_not_run(exchange)


async def invalid_params(ctx: CheckContext) -> Verdict:
    exchange = await ctx.request("prompts/get", {})
    if exchange.rpc_code == INVALID_PARAMS:
        return passed("prompts/get without a name was answered with error -32602 (Invalid params)")
    if exchange.result is not None:
        return warned("prompts/get without a name was answered with a result, not error -32602")
    if exchange.rpc_code is not None or timed_out(exchange):
        return warned(f"prompts/get without a name was answered with {answer_text(exchange)}, not error -32602")
    return could_not_run(exchange)


async def request_id_echo(ctx: CheckContext) -> Verdict:
    method, params = ctx.harmless()
    problems: list[str] = []
    for request_id in (STRING_ID, LARGE_ID):
        exchange = await ctx.request(method, params, request_id=request_id)
        if exchange.result is not None or exchange.rpc_code is not None:
            continue  # the connection matched the answer to this exact id (and type)
        if timed_out(exchange):
            problems.append(f"no answer carrying the id {inert(request_id)} came within --timeout")
        else:
            return could_not_run(exchange)
    stray = [a for a in ctx.session.conn.anomalies if "never sent" in a.message]
    if problems:
        detail: dict[str, Any] = {}
        if stray:
            detail["answersWithOtherIds"] = [inert(a.sample, 200) for a in stray[:3]]
        return failed("; ".join(problems) + (" (answers came with other ids)" if stray else ""), **detail)
    return passed(f"{method} answered with the string id {json.dumps(STRING_ID)} and the integer id {LARGE_ID}, "
                  "each echoed exactly")


async def cancel_in_flight(ctx: CheckContext) -> Verdict:
    """The verdict rests on ordering, not on a wait: the follow-up request is written after
    `notifications/cancelled`, so its answer (or its --timeout) decides whether the session survived
    the cancellation. Whether the cancelled request was answered is only told: the specification
    allows both (a receiver SHOULD NOT answer, and an answer may already be on its way: the race it
    names), so its answer is looked for during a short grace after the follow-up's, a few of the
    follow-up's own round trips (CANCEL_GRACE_RTTS, at least CANCEL_GRACE_FLOOR), and then ignored as
    the sender SHOULD: an answer later than that is expected by the connection, never a violation."""
    method, params = _cancellable(ctx)
    cancelled = Exchange(method, params, request_id=CANCEL_ID)
    ctx.note(cancelled)
    await ctx.pace()
    try:
        call = await ctx.session.send_request(method, params, request_id=CANCEL_ID)
    except ProbeError as exc:
        if exc.exit_code == ExitCode.REFUSED:
            raise  # refused by mcpprobe: a bug in the gate, never sent
        cancelled.error = exc
        return could_not_run(cancelled)
    sent = time.perf_counter()
    answered = anyio.Event()

    async def wait_for_cancelled() -> None:
        try:
            cancelled.result = await call.result()
        except ProbeError as exc:
            cancelled.error = exc
        cancelled.ms = (time.perf_counter() - sent) * 1000
        answered.set()

    after_method, after_params = ctx.harmless()
    async with anyio.create_task_group() as group:
        group.start_soon(wait_for_cancelled)
        await ctx.session.notify("notifications/cancelled", {"requestId": CANCEL_ID, "reason": "mcpprobe check"})
        follow = await ctx.request(after_method, after_params)
        alive = follow.result is not None or follow.rpc_code is not None  # an error answer is an answer
        if alive and not answered.is_set():
            grace = max(CANCEL_GRACE_FLOOR, CANCEL_GRACE_RTTS * follow.ms / 1000)
            with anyio.move_on_after(min(grace, ctx.session.settings.timeout)):
                await answered.wait()
        if not answered.is_set():
            # Ignored from now on, as the sender SHOULD: the connection expects a late answer (no
            # violation), and tells the server nothing more (it was told once).
            call.undelivered()
            call.abandon()
            group.cancel_scope.cancel()
    if alive:
        answered_anyway = cancelled.result is not None or isinstance(cancelled.error, RpcError)
        how = "answered anyway" if answered_anyway else "not answered"
        return passed(f"after {method} was cancelled in flight ({how}), {after_method} was still answered",
                      cancelledAnswered=answered_anyway)
    if timed_out(follow):
        return failed(f"after {method} was cancelled, {after_method} got no answer within "
                      f"{ctx.session.settings.timeout:g} s (--timeout): the session did not survive the cancellation")
    return failed(f"after {method} was cancelled, the session broke: {answer_text(follow)}")


def _cancellable(ctx: CheckContext) -> tuple[str, dict[str, Any] | None]:
    """A request that does some work, to cancel: a declared list, else the harmless request."""
    for capability, method in (("tools", "tools/list"), ("prompts", "prompts/list"), ("resources", "resources/list")):
        if isinstance(ctx.capabilities.get(capability), dict):
            return method, None
    return ctx.harmless()


async def shut_down(ctx: CheckContext) -> Shutdown:
    """The stdio shutdown the specification describes (EOF on stdin, then a bounded wait for the
    exit and for the end of stdout), done once per run: both stdio-stream checks judge it, in every
    era, whether or not `lifecycle.stdin-close-exit` was selected."""
    transport: Any = ctx.session.conn.transport  # a StdioTransport: these checks are stdio only
    shutdown: Shutdown = await transport.shut_down(EXIT_LIMIT_SECONDS)
    return shutdown


async def stdin_close_exit(ctx: CheckContext) -> Verdict:
    shutdown = await shut_down(ctx)
    if shutdown.ended_before is not None:
        status = describe_status(shutdown.ended_before)
        return skipped(f"not judged: the server had already ended ({status}) before its stdin was "
                       "closed; nothing to measure")
    waited = shutdown.exited_after
    if waited is None:
        return failed(f"the server was still running {EXIT_LIMIT_SECONDS:g} s after its stdin was closed "
                      "(mcpprobe then ends it with SIGTERM)")
    return passed(f"the server exited {waited * 1000:.0f} ms after its stdin was closed",
                  exitedAfterMs=round(waited * 1000, 1))


async def stdout_clean(ctx: CheckContext) -> Verdict:
    shutdown = await shut_down(ctx)
    conn = ctx.session.conn
    if shutdown.exited:
        when = "the whole run, the server's exit included"
    else:
        when = f"the run (the server was still running {EXIT_LIMIT_SECONDS:g} s after its stdin was closed)"
    if not shutdown.stdout_ended and shutdown.exited:
        when += f"; its stdout was still open {STDOUT_DRAIN_SECONDS:g} s after it exited (a child holds it)"
    if not conn.stray_output:
        return passed(f"every line on stdout was a JSON-RPC message, during {when}")
    count = sum(stray.count for stray in conn.stray_output.values())
    samples = [sample for stray in conn.stray_output.values() for sample in stray.samples][:3]
    kinds = "; ".join(conn.stray_output)
    return failed(f"{count} line{'s' if count != 1 else ''} on stdout that are not MCP messages, during {when}: "
                  f"{kinds}", samples=[inert(sample, 200) for sample in samples])


async def result_type(ctx: CheckContext) -> Verdict:
    missing = [(rid, result) for rid, result in ctx.answers if not isinstance(result.get("resultType"), str)]
    if missing:
        rid, result = missing[0]
        return failed(f"{len(missing)} of {len(ctx.answers)} results had no resultType, first the answer to "
                      f"request {inert(rid, 40)} (keys: {inert(sorted(result)[:8], 120)})")
    return passed(f"all {len(ctx.answers)} results seen during the run carry a resultType")


def _names_server(result: dict[str, Any]) -> bool:
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
    return isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)


async def server_info(ctx: CheckContext) -> Verdict:
    missing = [(rid, result) for rid, result in ctx.answers if not _names_server(result)]
    if missing:
        rid, _ = missing[0]
        return warned(f"{len(missing)} of {len(ctx.answers)} results had no {SERVER_INFO} (name and version) in "
                      f"their _meta, first the answer to request {inert(rid, 40)}")
    return passed(f"all {len(ctx.answers)} results seen during the run name the server in their _meta")


IMPLEMENTS = {
    "lifecycle.result-type": result_type,
    "lifecycle.server-info": server_info,
    "lifecycle.ping": ping,
    "lifecycle.unknown-method": unknown_method,
    "lifecycle.invalid-params": invalid_params,
    "lifecycle.request-id-echo": request_id_echo,
    "lifecycle.cancel-in-flight": cancel_in_flight,
    "lifecycle.stdin-close-exit": stdin_close_exit,
    "lifecycle.stdout-clean": stdout_clean,
}
