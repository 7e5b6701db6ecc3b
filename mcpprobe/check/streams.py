"""The streams of streamable HTTP: checks of the `http` family that read whole answers (event streams
to their end or to their answer, several at once) where the other http checks read the start of one.

- `http.concurrent-requests`: a few requests in flight at once, each answered (JSON, or an event
  stream of its own) with its own id, none lost, crossed or broadcast.
- `http.sse-priming` (2025-11-25): an event stream opens with an event id and empty data.
- `http.sse-retry` (2025-11-25): a stream the server closes before its response carries `retry`,
  and resuming it brings the response.
- `http.sse-resume` (2025-03-26 to 2025-11-25): a GET with the `Last-Event-ID` of an event the
  server issued resumes that stream (or gets 405), never another stream's messages.

Every request goes out as the other http checks send theirs (mcpprobe.check.http.Raw: the
connection's headers, a client of its own, --rate), and every wait is bounded by --timeout. What is
read of each answer is bounded (STREAM_BYTES), and shown as evidence made inert.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpprobe.check.catalogue import Status
from mcpprobe.check.context import CheckContext, Verdict, errored, failed, inert, passed, skipped, warned
from mcpprobe.check.http import Raw, RawAnswer
from mcpprobe.safety.numbers import digits
from mcpprobe.wire.decode import decode_message
from mcpprobe.wire.sse import MAX_RETRY_MS

STREAMS = 3  # requests in flight at once: "a few" (the light-load rule)
STREAM_BYTES = 256 * 1024  # read of one answer, at most
SHOWN_CHARS = 4096  # of an answer kept for the evidence
SETTLE_MIN = 1.0  # seconds: the least a resumed stream is read for (see `_settle`)
SETTLE_RTTS = 10  # ... else this many of the slowest round trip measured, at most --timeout
DEFAULT_RETRY_MS = 1000  # the wait before resuming where the server named none (the connection's too)
RESUMPTIONS = 2  # of one stream the server closed before its response, at most
CLOSE_EARLY = ("2025-11-25",)  # "the server MAY close the connection (without terminating the SSE stream)"
LOAD_STATUSES = (429, 503)  # a refusal for load (rate limited, unavailable): not a verdict on the rule
JSON_TYPE, SSE_TYPE = "application/json", "text/event-stream"


@dataclass
class Block:
    """One event of an event stream as written: its `id` (None: no id field), its data lines (None:
    no data field), the `retry` it set (milliseconds, None: none); and its data as a JSON-RPC message
    (parsed once)."""

    id: str | None = None
    data: list[str] | None = None
    retry: int | None = None
    message: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.data or [])

    @property
    def empty(self) -> bool:
        return not self.text.strip() or self.text.strip() == "{}"  # "{}": as the suite counts a priming event


def block(text: str) -> Block | None:
    """One event's text (its lines, LF-ended) as a Block; None for one with no field at all."""
    found, seen = Block(), False
    for line in text.split("\n"):
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "id" and "\x00" not in value:
            found.id, seen = value, True
        elif name == "data":
            found.data = [*(found.data or []), value]
            seen = True
        elif name == "retry" and value.isascii() and value.isdigit():
            found.retry, seen = digits(value, MAX_RETRY_MS), True
        elif name == "event":
            seen = True
    if not seen:
        return None
    if not found.empty:
        with contextlib.suppress(ValueError):  # TooDeep too: nesting is checked before anything parses it
            value = decode_message(found.text).value
            found.message = value if isinstance(value, dict) else None
    return found


class Events:
    """An incremental reader of the WHATWG event-stream format (CRLF, CR or LF line ends, a blank line
    ends an event, `:` begins a comment): each byte is looked at a bounded number of times, however
    the server cuts its stream into chunks."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._pieces: list[str] = []  # the event being read, not yet ended
        self._newline = False  # the text read so far ends with a line end
        self._cr = False  # ... and that line end was a CR (an LF right after it is part of it)

    def feed(self, data: bytes) -> list[Block]:
        text = self._decoder.decode(data)
        if self._cr and text.startswith("\n"):
            text = text[1:]
        if text:
            self._cr = text.endswith("\r")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        found: list[Block] = []
        while text:
            if self._newline and text.startswith("\n"):
                end, skip = 0, 1  # the blank line: the previous chunk ended the last line
            else:
                end = text.find("\n\n")
                if end < 0:
                    self._pieces.append(text)
                    self._newline = text.endswith("\n")
                    break
                skip = 2
            got = block("".join(self._pieces) + text[:end])
            if got is not None:
                found.append(got)
            self._pieces, self._newline, text = [], False, text[end + skip:]
        return found


def _is_response(message: dict[str, Any]) -> bool:
    return "method" not in message and ("result" in message or "error" in message) and "id" in message


@dataclass
class StreamRead:
    """One HTTP exchange read to its end, or to the answer it waited for, within --timeout."""

    raw: RawAnswer  # what was sent, the status and headers, and the body's start (the evidence)
    request_id: Any = None
    events: list[Block] = field(default_factory=list)
    ended: bool = False  # the server ended the body
    answered: bool = False  # the response to `request_id` came
    json_message: Any = None  # the body of an application/json answer, parsed (None: none that parses)
    rtt: float = 0.0  # seconds from the request to the status line

    @property
    def content_type(self) -> str:
        return self.raw.content_type

    @property
    def status(self) -> int | None:
        return self.raw.status

    def messages(self) -> list[dict[str, Any]]:
        if self.content_type == JSON_TYPE:
            return [self.json_message] if isinstance(self.json_message, dict) else []
        return [event.message for event in self.events if event.message is not None]

    def responses(self) -> list[Any]:
        """The ids of the JSON-RPC responses it carried, in order."""
        return [message.get("id") for message in self.messages() if _is_response(message)]

    def answers(self, events: list[Block]) -> bool:
        """Whether `events` hold the response to `request_id`."""
        return self.request_id is not None and any(
            event.message is not None and _is_response(event.message)
            and _same_id(event.message.get("id"), self.request_id) for event in events)

    @property
    def event_ids(self) -> list[str]:
        return [event.id for event in self.events if event.id is not None]


async def read_stream(raw: Raw, client: Any, verb: str, *, body: Any = None, headers: dict[str, str],
                      request_id: Any = None, until: float, read_for: float | None = None,
                      stop: Callable[[list[Block]], bool] | None = None, on_read: Callable[[], None] | None = None,
                      hold: anyio.Event | None = None) -> StreamRead:
    """`verb` sent with `headers` (and `body`), its answer read until the response to `request_id`
    came, `stop(new events)` says so, the body ended, `read_for` seconds passed since the headers
    came, or the monotonic time `until`. Then `on_read()`, and with `hold` the stream is kept open
    until `hold` is set (or `until`), so that the server has the requests in flight at once. Never
    raises."""
    content = json.dumps(body) if body is not None else None
    answer = RawAnswer(f"{verb} {raw.url}", headers, content)
    raw.answers.append(answer)
    read = StreamRead(answer, request_id)
    started = time.perf_counter()
    chunks = bytearray()
    told = False

    def tell() -> None:
        nonlocal told
        if not told and on_read is not None:
            told = True
            on_read()

    try:
        with anyio.fail_after(max(until - time.monotonic(), 0.0)):
            async with client.stream(verb, raw.url, content=content, headers=headers) as response:
                read.rtt = time.perf_counter() - started
                answer.status = response.status_code
                answer.headers = {k.lower(): v for k, v in response.headers.items()}
                parser = Events() if answer.content_type == SSE_TYPE else None
                scope = anyio.CancelScope(deadline=time.monotonic() + read_for if read_for is not None else until)
                # Kept referenced until the stream is let go: an iterator left to the garbage collector
                # after `break` is finalized, which closes the response (and the connection) at once.
                body_chunks = response.aiter_bytes()
                with scope:
                    async for chunk in body_chunks:
                        chunk = chunk[:STREAM_BYTES - len(chunks)]
                        chunks += chunk
                        new = parser.feed(chunk) if parser is not None else []
                        read.events += new
                        read.answered = read.answered or read.answers(new)
                        if len(chunks) >= STREAM_BYTES or read.answered or (stop is not None and stop(new)):
                            break
                    else:
                        read.ended = True
                tell()
                if hold is not None:
                    await hold.wait()
                await body_chunks.aclose()
    except TimeoutError:
        if answer.status is None:
            answer.problem = f"no HTTP answer within --timeout ({raw.ctx.session.settings.timeout:g} s)"
    except Exception as exc:  # noqa: BLE001 - an httpx error of any kind is what the check reports
        answer.problem = f"the request failed: {type(exc).__name__}: {exc}"
    finally:
        tell()
    text = chunks.decode("utf-8", "replace")
    if answer.content_type == JSON_TYPE:
        with contextlib.suppress(ValueError):
            read.json_message = decode_message(text).value
        read.answered = request_id is not None and isinstance(read.json_message, dict) \
            and _is_response(read.json_message) and _same_id(read.json_message.get("id"), request_id)
    answer.body = text[:SHOWN_CHARS]
    answer.body_ended = read.ended
    answer.ms = (time.perf_counter() - started) * 1000
    return read


def _same_id(found: Any, sent: Any) -> bool:
    return type(found) is type(sent) and found == sent


def _until(ctx: CheckContext) -> float:
    return time.monotonic() + ctx.session.settings.timeout


def _verdict(raw: Raw, verdict: Verdict) -> Verdict:
    verdict.evidence = raw.evidence()
    return verdict


def _ids(values: list[Any]) -> str:
    return ", ".join(inert(json.dumps(value), 60) for value in values) or "none"


def _answer_kind(read: StreamRead) -> str:
    return {JSON_TYPE: "JSON", SSE_TYPE: "an event stream"}.get(read.content_type, read.raw.described())


def _resume_headers(raw: Raw, last_id: str) -> dict[str, str]:
    """The connection's headers for a GET that resumes a stream from `last_id`."""
    headers = {k: v for k, v in raw.transport.request_headers().items()
               if k.lower() not in ("content-type", "mcp-method", "mcp-name")}
    headers["Accept"] = SSE_TYPE
    headers["Last-Event-ID"] = last_id
    return headers


def _closed_early(read: StreamRead) -> bool:
    """An event stream the server ended after an event id, before the response: one to resume."""
    return read.content_type == SSE_TYPE and read.ended and not read.answered and bool(read.event_ids)


async def resume_answer(raw: Raw, client: Any, read: StreamRead, until: float) -> list[StreamRead]:
    """A POST's event stream the server closed before its response (which it may, after an event id,
    from 2025-11-25), resumed as a client does: after its `retry` time (the server's to choose; never
    past `until`), GET with `Last-Event-ID`, until the response comes, at most RESUMPTIONS times. The
    resumed events are added to `read`'s; returns the GETs' reads."""
    gets: list[StreamRead] = []
    while _closed_early(read) and len(gets) < RESUMPTIONS:
        retry = next((event.retry for event in reversed(read.events) if event.retry is not None), DEFAULT_RETRY_MS)
        if time.monotonic() + retry / 1000 >= until:
            break
        await anyio.sleep(retry / 1000)  # "The client MUST respect the retry field"
        await raw.ctx.pace()
        got = await read_stream(raw, client, "GET", headers=_resume_headers(raw, read.event_ids[-1]),
                                request_id=read.request_id, until=until)
        gets.append(got)
        if got.status != 200 or got.content_type != SSE_TYPE or not got.events:
            break
        read.events += got.events
        read.answered, read.ended = got.answered, got.ended
    return gets


# ----- http.concurrent-requests


async def concurrent_requests(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    sent = [raw.message(method, params) for _ in range(STREAMS)]
    until = _until(ctx)
    reads: list[StreamRead | None] = [None] * STREAMS
    left = STREAMS
    held = anyio.Event()  # set when every answer was read: until then each stream is kept open

    def read_one() -> None:
        nonlocal left
        left -= 1
        if left == 0:
            held.set()

    async def one(index: int, message: dict[str, Any], headers: dict[str, str], client: Any) -> None:
        reads[index] = await read_stream(raw, client, "POST", body=message, headers=headers,
                                         request_id=message["id"], until=until, on_read=read_one, hold=held)

    async with raw.transport.raw_client() as client:
        async with anyio.create_task_group() as group:
            for index, (message, headers) in enumerate(sent):
                await ctx.pace()
                group.start_soon(one, index, message, headers, client)
        if ctx.version in CLOSE_EARLY:  # a stream closed before its response is resumed, one at a time
            for read in reads:
                if read is not None and _closed_early(read):
                    await resume_answer(raw, client, read, _until(ctx))
    done_reads = [read for read in reads if read is not None]
    return _verdict(raw, judge_concurrent(method, [message["id"] for message, _ in sent], done_reads,
                                          modern=ctx.modern, timeout=ctx.session.settings.timeout))


def judge_concurrent(method: str, ids: list[Any], reads: list[StreamRead], *, modern: bool,
                     timeout: float) -> Verdict:
    """The verdict on `reads`, the answers to the requests of `ids` sent at once (in that order)."""
    what = f"{len(ids)} {method} requests sent at once"
    if len(reads) < len(ids) or any(read.status is None for read in reads):
        problem = next((read.raw.problem for read in reads if read.raw.problem), "no answer within --timeout")
        return errored(f"{what}: {problem}")
    load = [read for read in reads if read.status in LOAD_STATUSES]
    if load:
        return warned(f"{what}: {len(load)} refused for load (HTTP {load[0].status}); the server may limit "
                      "concurrency, but each request must be answered with JSON or an event stream")
    wrong = [read for read in reads if read.status is None or not 200 <= read.status < 300
             or read.content_type not in (JSON_TYPE, SSE_TYPE)]
    if wrong:
        said = "; ".join(f"id {inert(json.dumps(read.request_id), 40)}: {read.raw.described()}" for read in wrong)
        return failed(f"{what}: not each was answered with application/json or text/event-stream ({said})")
    # Where each response went: (stream index, response id).
    seen = [(index, found) for index, read in enumerate(reads) for found in read.responses()]
    broadcast = [found for found in ids if sum(1 for _, got in seen if _same_id(got, found)) > 1
                 and len({index for index, got in seen if _same_id(got, found)}) > 1]
    if broadcast and not modern:
        return failed(f"{what}: the response to {_ids(broadcast)} came on more than one stream: the server MUST "
                      "NOT broadcast the same message across multiple streams")
    for read in reads:
        if read.content_type == JSON_TYPE and read.json_message is None:
            if not read.ended:
                return errored(f"{what}: the JSON answer to id {inert(json.dumps(read.request_id), 40)} did not end "
                               f"within --timeout or {STREAM_BYTES // 1024} KiB")
            return failed(f"{what}: the application/json answer to id {inert(json.dumps(read.request_id), 40)} is "
                          "not JSON: the server MUST return one JSON object")
        if read.content_type == JSON_TYPE and not read.answered:
            got = read.responses()
            if got == [None]:  # an error "in detecting the id" (JSON-RPC 2.0): not a crossed answer
                return warned(f"{what}: the JSON answer to id {inert(json.dumps(read.request_id), 40)} is an error "
                              "with a null id")
            return failed(f"{what}: the JSON answer to id {inert(json.dumps(read.request_id), 40)} is "
                          + (f"the response to {_ids(got)}" if got else "no JSON-RPC response")
                          + ": a response MUST include the same id as the request it answers")
    crossed = [(read, [got for got in read.responses() if not _same_id(got, read.request_id)]) for read in reads]
    crossed = [(read, got) for read, got in crossed if got]
    if crossed:
        read, got = crossed[0]
        return warned(f"{what}: the event stream of id {inert(json.dumps(read.request_id), 40)} carried the "
                      f"response to {_ids(got)}: each request's stream is its own, and SHOULD include the response "
                      "to the request sent in its POST")
    unanswered = [read for read in reads if not read.answered]
    if unanswered:
        read = unanswered[0]
        how = "ended" if read.ended else f"stayed open past --timeout ({timeout:g} s)"
        return warned(f"{what}: the event stream of id {inert(json.dumps(read.request_id), 40)} {how} without "
                      "its response; it SHOULD include the response to the request sent in its POST")
    kinds = sorted({_answer_kind(read) for read in reads})
    return passed(f"{what} were each answered ({' and '.join(kinds)}) with their own id; none lost, crossed or "
                  "repeated on another stream")


# ----- http.sse-priming, http.sse-retry and http.sse-resume


async def _post_read(raw: Raw, client: Any, method: str, params: dict[str, Any] | None, until: float) -> StreamRead:
    message, headers = raw.message(method, params)
    await raw.ctx.pace()
    return await read_stream(raw, client, "POST", body=message, headers=headers, request_id=message["id"],
                             until=until)


def _not_a_stream(read: StreamRead, method: str) -> Verdict | None:
    """A verdict when the answer is no event stream to judge: nothing came (error), an HTTP error
    (not this check's rule: the run's other checks judge it), or JSON (n/a: the server may answer so)."""
    if read.status is None:
        return errored(f"{read.raw.line}: {read.raw.problem}")
    if read.content_type == JSON_TYPE and read.status < 300:
        return Verdict(Status.NA, f"the server answered {method} with application/json, not an event stream "
                                  "(which it may): no stream to judge")
    if read.content_type != SSE_TYPE or read.status >= 300:
        return skipped(f"the server answered {method} with {read.raw.described()}, not an event stream; "
                       "nothing to judge")
    return None


async def sse_priming(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    async with raw.transport.raw_client() as client:
        read = await _post_read(raw, client, method, params, _until(ctx))
    verdict = _not_a_stream(read, method)
    if verdict is not None:
        return _verdict(raw, verdict)
    if not read.events:
        return _verdict(raw, errored(f"the event stream answering {method} brought no event within --timeout"))
    first = read.events[0]
    retry = any(block.retry is not None for block in read.events)
    if first.id is not None and first.empty:
        return _verdict(raw, passed(f"the event stream answering {method} opened with a priming event (id "
                                    f"{inert(json.dumps(first.id), 60)}, empty data)"
                                    + ("" if retry else "; no retry field (asked only before the server closes a "
                                                        "stream early)")))
    shown = "with no id" if first.id is None else "with data"
    return _verdict(raw, failed(f"the event stream answering {method} opened with an event {shown}, not with an "
                                "event id and an empty data field to prime the client to reconnect"))


async def sse_retry(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    async with raw.transport.raw_client() as client:
        read = await _post_read(raw, client, method, params, _until(ctx))
        verdict = _not_a_stream(read, method)
        if verdict is not None:
            return _verdict(raw, verdict)
        if read.answered or not read.ended:
            how = "answered" if read.answered else "still open when the read stopped (--timeout, or 256 KiB)"
            return _verdict(raw, Verdict(Status.NA, f"the event stream answering {method} was {how} before any "
                                                    "close: the server did not close it early (which it may), and "
                                                    "the rule asks only a server that does"))
        if not read.event_ids:
            return _verdict(raw, failed(f"the event stream answering {method} ended before its response, with no "
                                        "event id to resume it from: the stream SHOULD eventually include the "
                                        "response to the request"))
        retry = next((event.retry for event in read.events if event.retry is not None), None)
        last = inert(json.dumps(read.event_ids[-1]), 60)
        gets = await resume_answer(raw, client, read, _until(ctx))
    if retry is None:
        return _verdict(raw, failed(f"the server closed the event stream answering {method} (after event {last}) "
                                    "before its response, without a retry field: it SHOULD send an SSE event with "
                                    "a standard retry field before closing the connection"))
    if not read.answered:
        got = gets[-1].raw.described() if gets else "nothing (no time left within --timeout)"
        return _verdict(raw, failed(f"the server closed the event stream answering {method} before its response "
                                    f"(retry: {retry}); resuming it with GET and Last-Event-ID: {last} got {got}, "
                                    "not the response: the stream SHOULD eventually include it"))
    return _verdict(raw, passed(f"the server closed the event stream answering {method} before its response, with "
                                f"retry: {retry}; resumed with GET and Last-Event-ID: {last}, it brought the response"))


def _settle(*reads: StreamRead, timeout: float) -> float:
    """How long a resumed stream is read for when the server keeps it open: the replay of an event
    store is written as the stream opens, so SETTLE_RTTS round trips of the slowest measured (at
    least SETTLE_MIN, at most --timeout) see it on a slow machine too."""
    slowest = max((read.rtt for read in reads), default=0.0)
    return min(timeout, max(SETTLE_MIN, SETTLE_RTTS * slowest))


async def sse_resume(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    timeout = ctx.session.settings.timeout
    async with raw.transport.raw_client() as client:
        first = await _post_read(raw, client, method, params, _until(ctx))
        verdict = _not_a_stream(first, method)
        if verdict is not None:
            return _verdict(raw, verdict)
        if not first.event_ids:
            return _verdict(raw, Verdict(Status.NA, f"the event stream answering {method} carried no event id: it "
                                                    "is not resumable (servers MAY attach ids); nothing to resume"))
        other = await _post_read(raw, client, method, params, _until(ctx))
        headers = _resume_headers(raw, first.event_ids[0])
        other_ids = {key for key in other.event_ids} - set(first.event_ids)
        mine = first.request_id

        def wrong(events: list[Block]) -> bool:
            return bool(_foreign(events, mine, other_ids))

        await ctx.pace()
        settle = _settle(first, other, timeout=timeout)
        # request_id None: the replayed response to `mine` does not end the read (what follows it is judged too)
        resumed = await read_stream(raw, client, "GET", headers=headers, until=_until(ctx), read_for=settle,
                                    stop=wrong)
        resumed.request_id = mine
        resumed.answered = resumed.answers(resumed.events)
    return _verdict(raw, _judge_resume(method, first, resumed, other_ids, settle))


def _foreign(events: list[Block], mine: Any, other_ids: set[str]) -> list[str]:
    """The messages a stream resumed from `mine`'s has that belong to another stream: responses to
    other requests, and JSON-RPC messages in events of the other stream's ids. (An event without a
    message, such as another stream's priming event, is no message: the rule names messages.)"""
    found = [f"the response to {_ids([event.message.get('id')])}" for event in events
             if event.message is not None and _is_response(event.message)
             and not _same_id(event.message.get("id"), mine)]
    found += [f"a message of another stream (event {inert(json.dumps(event.id), 60)})" for event in events
              if event.id in other_ids and event.message is not None]
    return found


def _judge_resume(method: str, first: StreamRead, resumed: StreamRead, other_ids: set[str],
                  settle: float) -> Verdict:
    last = inert(json.dumps(first.event_ids[0]), 60)
    if resumed.status is None:
        return errored(f"{resumed.raw.line}: {resumed.raw.problem}")
    if resumed.status == 405:
        return passed(f"GET with Last-Event-ID: {last} got 405: the server does not offer resumption, which it may")
    if resumed.status != 200 or resumed.content_type != SSE_TYPE:
        return warned(f"GET with Last-Event-ID: {last} (an event id the server issued answering {method}) got "
                      f"{resumed.raw.described()}: a GET is answered with text/event-stream or 405")
    foreign = _foreign(resumed.events, first.request_id, other_ids)
    if foreign:
        return failed(f"the stream resumed with Last-Event-ID: {last} replayed {foreign[0]}: the server MUST NOT "
                      "replay messages that would have been delivered on a different stream")
    if resumed.answered:
        return passed(f"GET with Last-Event-ID: {last} resumed the stream of {method} (its response replayed), and "
                      "nothing of another stream")
    how = "ended" if resumed.ended else f"stayed open ({settle:.1f} s read)"
    return passed(f"GET with Last-Event-ID: {last} opened an event stream that replayed nothing of another stream "
                  f"(it {how}; replaying is a MAY)")


IMPLEMENTS = {
    "http.concurrent-requests": concurrent_requests,
    "http.sse-priming": sse_priming,
    "http.sse-retry": sse_retry,
    "http.sse-resume": sse_resume,
}
