"""The streamable-HTTP family: what `basic/transports` asks of the HTTP exchange itself.

These checks send raw HTTP requests beside the connection's (httpx, with the target's headers,
auth, TLS and redirect rules: `StreamableHttpTransport.raw_client`), each bounded by --timeout, so
that a header can be wrong on purpose or a method other than POST used. Their evidence is the
request line, the headers that matter, the status, the answer's headers that matter and the
start of its body, made inert. Over stdio and the legacy HTTP+SSE transport they are `n/a` (the
catalogue's `transports`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcpprobe.check.catalogue import Status
from mcpprobe.check.context import CheckContext, Verdict, errored, failed, inert, passed, skipped, warned
from mcpprobe.client.era import META_CLIENT_CAPS, META_VERSION
from mcpprobe.exitcodes import ExitCode
from mcpprobe.safety.peer import visible_ascii
from mcpprobe.wire.decode import decode_message

FOREIGN_ORIGIN = "http://mcpprobe-foreign-origin.invalid"  # RFC 2606: a name that can never be anyone's
UNSUPPORTED_VERSION = "1999-01-01"
UNKNOWN_SESSION = "mcpprobe-unknown-session-0000"
BODY_CHARS = 4096  # read of an answer's body, at most
SHOWN_HEADERS = ("content-type", "mcp-session-id", "allow", "www-authenticate")
SENT_HEADERS = ("origin", "mcp-protocol-version", "mcp-session-id", "mcp-method", "mcp-name", "accept")
HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602


@dataclass
class RawAnswer:
    """One raw HTTP exchange: what was sent, and the status, headers and body start that came back
    (or the transport error instead)."""

    line: str
    sent_headers: dict[str, str]
    body_sent: str | None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""
    problem: str | None = None
    ms: float = 0.0
    body_ended: bool = True  # False: the body was still coming when the read gave up waiting
    body_wait: float = 0.0  # the seconds the read waited for it

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def json_error(self) -> dict[str, Any] | None:
        """The JSON-RPC error object of a JSON body (or of the first SSE event), if there is one."""
        text = self.body
        if self.content_type == "text/event-stream":
            # the first event with data: a priming event (an id and empty data) comes before the answer
            data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
            text = data[0] if data else ""
        try:
            message = decode_message(text).value  # a text nested too deep is a ValueError, never a RecursionError
        except ValueError:
            return None
        error = message.get("error") if isinstance(message, dict) else None
        return error if isinstance(error, dict) else None

    def has_result(self) -> bool:
        return self.status is not None and self.status < 300 and '"result"' in self.body

    def described(self) -> str:
        if self.problem is not None:
            return self.problem
        error = self.json_error()
        shown = f" with error {error.get('code')}" if error is not None else ""
        kind = f" {self.content_type}" if self.content_type else ""
        return f"HTTP {self.status}{kind}{shown}"

    def _identity(self) -> str:
        """' METHOD id ID' of a JSON-RPC body (' METHOD' for a notification, ' batch of N' for an
        array), '' for no body or one that is not JSON-RPC."""
        try:
            message = json.loads(self.body_sent) if self.body_sent else None
        except ValueError:
            return ""
        if isinstance(message, list):
            return f" batch of {len(message)}"
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            return ""
        shown = f" {message['method']}"
        if "id" in message:
            shown += f" id {json.dumps(message['id'])}"
        return shown

    def evidence(self) -> dict[str, Any]:
        headers = "; ".join(f"{k}: {v}" for k, v in self.sent_headers.items()
                            if k.lower() in SENT_HEADERS or k.lower().startswith(("mcp-param-", "last-event-id")))
        # What identifies the exchange first (the request line, the JSON-RPC method and id), then the
        # headers, then the body: a cut (400 characters here, 200 for people) takes the body's end,
        # never which request this was.
        sent = self.line + self._identity() + (f" [{headers}]" if headers else "") \
            + (f" {self.body_sent}" if self.body_sent else "")
        if self.problem is not None:
            received = self.problem
        else:
            shown = "; ".join(f"{k}: {v}" for k, v in self.headers.items() if k in SHOWN_HEADERS)
            received = f"HTTP {self.status}" + (f" [{shown}]" if shown else "") + (f" {self.body}" if self.body else "")
        return {"sent": inert(sent), "received": inert(received), "ms": round(self.ms, 1)}


class Raw:
    """Raw requests of one check, on a client of their own, each recorded for the evidence."""

    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.transport: Any = ctx.session.conn.transport  # a StreamableHttpTransport: the checks are http only
        self.url: str = ctx.session.target.url  # type: ignore[union-attr]
        self.answers: list[RawAnswer] = []
        self._ids = 0

    def message(self, method: str, params: dict[str, Any] | None = None, *,
                notification: bool = False) -> tuple[dict[str, Any], dict[str, str]]:
        """A JSON-RPC message as the connection would send it (the era's envelope), and the
        connection's headers for it (session id, protocol version, Mcp-Method ...)."""
        params, extra = self.ctx.session.era.envelope(self.ctx.session.snapshot, method, params)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if not notification:
            self._ids += 1
            message["id"] = f"mcpprobe-http-{self._ids}"
        if params is not None:
            message["params"] = params
        return message, self.transport.request_headers(extra)

    async def send(self, verb: str, *, body: Any = None, headers: dict[str, str | None] | None = None,
                   base: dict[str, str] | None = None, read_body: bool = True) -> RawAnswer:
        """`verb` to the MCP endpoint with the connection's headers (or `base`) changed by `headers`
        (a None value removes one). Reads the status and headers, and the body's start (unless not
        `read_body`: a GET stream may stay silent); never raises."""
        final = dict(base if base is not None else self.transport.request_headers())
        for key, value in (headers or {}).items():
            for existing in [k for k in final if k.lower() == key.lower()]:
                del final[existing]
            if value is not None:
                final[key] = value
        content = json.dumps(body) if body is not None else None
        path = self.url
        answer = RawAnswer(f"{verb} {path}", final, content)
        self.answers.append(answer)
        await self.ctx.pace()
        timeout = self.ctx.session.settings.timeout
        started = time.perf_counter()
        try:
            async with self.transport.raw_client() as client:
                with anyio.fail_after(timeout):
                    async with client.stream(verb, self.url, content=content, headers=final) as response:
                        answer.status = response.status_code
                        answer.headers = {k.lower(): v for k, v in response.headers.items()}
                        if read_body:
                            answer.body_wait = min(timeout, 5.0)
                            answer.body, answer.body_ended = await _body_start(response, answer.content_type,
                                                                               answer.body_wait)
        except TimeoutError:
            if answer.status is None:
                answer.problem = f"no HTTP answer within --timeout ({timeout:g} s)"
            else:  # the status and headers came, the body did not end: what was read is all that was seen
                answer.body_ended = False
        except Exception as exc:  # noqa: BLE001 - an httpx error of any kind is what the check reports
            answer.problem = f"the request failed: {type(exc).__name__}: {exc}"
        answer.ms = (time.perf_counter() - started) * 1000
        return answer

    async def post(self, method: str, params: dict[str, Any] | None = None, *,
                   headers: dict[str, str | None] | None = None, notification: bool = False,
                   change: Any = None) -> RawAnswer:
        message, base = self.message(method, params, notification=notification)
        if change is not None:
            change(message)
        return await self.send("POST", body=message, headers=headers, base=base)

    def evidence(self) -> list[dict[str, Any]]:
        return [answer.evidence() for answer in self.answers]


async def _body_start(response: Any, content_type: str, wait: float) -> tuple[str, bool]:
    """The first BODY_CHARS of a body; of an event stream only up to its first complete event (a
    stream may stay open), and of anything no longer than `wait` seconds. And whether the read
    ended by itself (the body's end, or enough of it read), not by the wait running out."""
    chunks: list[bytes] = []
    size = 0
    ended = False
    with anyio.move_on_after(wait):
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            text = b"".join(chunks)
            if size >= BODY_CHARS or (content_type == "text/event-stream" and _data_event(text)):
                break
        ended = True
    return b"".join(chunks)[:BODY_CHARS].decode("utf-8", "replace"), ended


def _data_event(text: bytes) -> bool:
    """Whether an event stream's start holds a complete event with data (not a priming event: an id
    and empty data, which 2025-11-25 servers send first)."""
    events = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n\n")[:-1]
    return any(line.startswith(b"data:") and line[5:].strip() for event in events for line in event.split(b"\n"))


def _verdict(raw: Raw, verdict: Verdict) -> Verdict:
    verdict.evidence = raw.evidence()
    return verdict


def _no_answer(raw: Raw, answer: RawAnswer) -> Verdict:
    return _verdict(raw, errored(f"{answer.line}: {answer.problem}"))


# ----- the checks


async def origin(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    answer = await raw.post(method, params, headers={"Origin": FOREIGN_ORIGIN})
    if answer.status is None:
        return _no_answer(raw, answer)
    if answer.status == 403:
        return _verdict(raw, passed(f"{method} from the foreign Origin {FOREIGN_ORIGIN} was refused with HTTP 403"))
    if 400 <= answer.status < 500:
        if ctx.version >= "2025-11-25":
            return _verdict(raw, warned(f"{method} from a foreign Origin was refused, but with HTTP {answer.status}; "
                                        f"protocol {ctx.version} names 403 Forbidden"))
        return _verdict(raw, passed(f"{method} from the foreign Origin {FOREIGN_ORIGIN} was refused "
                                    f"(HTTP {answer.status})"))
    return _verdict(raw, failed(f"{method} from the foreign Origin {FOREIGN_ORIGIN} was accepted "
                                f"({answer.described()}): the server does not validate Origin (DNS rebinding)"))


async def protocol_version(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()

    def claim(message: dict[str, Any]) -> None:
        # 2026-07-28: the body's version must match the header's, or -32020 would be right too.
        meta = message.get("params", {}).get("_meta")
        if isinstance(meta, dict) and META_VERSION in meta:
            meta[META_VERSION] = UNSUPPORTED_VERSION

    answer = await raw.post(method, params, headers={"MCP-Protocol-Version": UNSUPPORTED_VERSION}, change=claim)
    if answer.status is None:
        return _no_answer(raw, answer)
    if answer.status != 400:
        return _verdict(raw, failed(f"{method} with MCP-Protocol-Version: {UNSUPPORTED_VERSION} got "
                                    f"{answer.described()}, not 400 Bad Request"))
    if not ctx.modern:
        return _verdict(raw, passed(f"MCP-Protocol-Version: {UNSUPPORTED_VERSION} got 400 Bad Request"))
    error = answer.json_error()
    data = error.get("data") if error else None
    supported = data.get("supported") if isinstance(data, dict) else None
    if error is None or error.get("code") != UNSUPPORTED_PROTOCOL_VERSION:
        return _verdict(raw, failed(f"MCP-Protocol-Version: {UNSUPPORTED_VERSION} got 400, but not with error "
                                    f"-32022 (UnsupportedProtocolVersion): {answer.described()}"))
    if not isinstance(supported, list) or not all(isinstance(v, str) for v in supported):
        return _verdict(raw, failed("the -32022 error carries no data.supported list of versions"))
    return _verdict(raw, passed(f"MCP-Protocol-Version: {UNSUPPORTED_VERSION} got 400 and -32022, supported: "
                                f"{inert(supported, 80)}"))


async def unknown_session(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    if raw.transport.session_id is None:
        return skipped("the server issued no session id at initialize; nothing sent")
    method, params = ctx.harmless()
    answer = await raw.post(method, params, headers={"Mcp-Session-Id": UNKNOWN_SESSION})
    if answer.status is None:
        return _no_answer(raw, answer)
    if answer.status == 404:
        return _verdict(raw, passed(f"{method} with a session id the server never issued got 404 Not Found"))
    return _verdict(raw, failed(f"{method} with the session id {json.dumps(UNKNOWN_SESSION)}, never issued, got "
                                f"{answer.described()}, not 404 Not Found"))


async def session_delete(ctx: CheckContext) -> Verdict:
    """A session of its own (initialize, initialized), so that the run's session lives on."""
    raw = Raw(ctx)
    if raw.transport.session_id is None:
        return skipped("the server issued no session id at initialize; nothing sent")
    snapshot = ctx.session.snapshot
    init = {"protocolVersion": ctx.version, "capabilities": {}, "clientInfo": snapshot.client_info}
    opened = await raw.post("initialize", init, headers={"Mcp-Session-Id": None})
    session = opened.headers.get("mcp-session-id")
    if opened.status is None:
        return _no_answer(raw, opened)
    if session is None:
        return _verdict(raw, errored(f"a second initialize got {opened.described()} and no session id; "
                                     "nothing to delete"))
    if not visible_ascii(session):  # "The session ID MUST only contain visible ASCII characters": never sent back
        return _verdict(raw, failed(f"a second initialize got the session id {inert(session, 80)}, which is not "
                                    "visible ASCII (0x21 to 0x7E) as the specification requires; not sent back"))
    await raw.post("notifications/initialized", None, notification=True, headers={"Mcp-Session-Id": session})
    deleted = await raw.send("DELETE", headers={"Mcp-Session-Id": session, "Content-Type": None})
    if deleted.status is None:
        return _no_answer(raw, deleted)
    if deleted.status == 405:
        return _verdict(raw, passed("DELETE of a session got 405: the server does not let clients end sessions, "
                                    "which it may"))
    if not 200 <= deleted.status < 300:
        return _verdict(raw, warned(f"DELETE of a session got {deleted.described()}: neither a success nor 405"))
    method, params = ctx.harmless()
    after = await raw.post(method, params, headers={"Mcp-Session-Id": session})
    if after.status is None:
        return _no_answer(raw, after)
    if after.status == 404:
        return _verdict(raw, passed(f"DELETE ended the session (HTTP {deleted.status}); {method} with its id then "
                                    "got 404 Not Found"))
    return _verdict(raw, failed(f"after DELETE answered {deleted.status}, {method} with the ended session's id got "
                                f"{after.described()}, not 404 Not Found"))


async def get_stream(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    base = raw.transport.request_headers()
    base.pop("Content-Type", None)
    answer = await raw.send("GET", headers={"Accept": "text/event-stream"}, base=base, read_body=False)
    if answer.status is None:
        return _no_answer(raw, answer)
    if answer.status == 405:
        return _verdict(raw, passed("GET got 405 Method Not Allowed: the server offers no stream of its own"))
    if answer.status == 200 and answer.content_type == "text/event-stream":
        return _verdict(raw, passed("GET opened a text/event-stream (closed again at once)"))
    return _verdict(raw, failed(f"GET with Accept: text/event-stream got {answer.described()}: neither an event "
                                "stream nor 405"))


async def batch(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    first, base = raw.message(method, params)
    second, _ = raw.message(method, params)
    answer = await raw.send("POST", body=[first, second], base=base)
    if answer.status is None:
        return _no_answer(raw, answer)
    if answer.status >= 400 or (answer.json_error() is not None and not answer.has_result()):
        return _verdict(raw, passed(f"a JSON-RPC batch of two {method} requests was refused ({answer.described()})"))
    return _verdict(raw, failed(f"a JSON-RPC batch of two {method} requests was accepted ({answer.described()}); "
                                f"protocol {ctx.version} has no batches"))


async def notification(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    # A cancellation of a request never sent: receivers ignore it ("SHOULD be ignored"), so it changes nothing.
    answer = await raw.post("notifications/cancelled", {"requestId": "mcpprobe-never-sent", "reason": "mcpprobe check"},
                            notification=True)
    if answer.status is None:
        return _no_answer(raw, answer)
    if answer.status == 202 and not answer.body.strip() and not answer.body_ended:
        # A body announced (or a stream left open) that did not come within the wait: no body was
        # seen, but neither was its absence. Not a pass.
        announced = answer.headers.get("content-length")
        said = f" (it announced Content-Length: {inert(announced, 20)})" if announced else ""
        verdict = errored(f"a notification got 202 Accepted, but its body had not ended after "
                          f"{answer.body_wait:g} s{said}: whether it has one was not seen")
        verdict.detail["exitCode"] = int(ExitCode.TIMEOUT)
        return _verdict(raw, verdict)
    if answer.status == 202 and not answer.body.strip():
        return _verdict(raw, passed("a notification got 202 Accepted with no body"))
    if answer.status == 202:
        return _verdict(raw, failed("a notification got 202 Accepted, but with a body (it must have none)"))
    if answer.status >= 400:
        return _verdict(raw, warned(f"a notification (notifications/cancelled of an unknown request) was refused "
                                    f"with {answer.described()}; a server that accepts it must answer 202"))
    return _verdict(raw, failed(f"a notification got {answer.described()}, not 202 Accepted"))


async def method_header(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    answer = await raw.post(method, params, headers={"Mcp-Method": "tools/list"})
    return _header_mismatch(raw, answer, f"{method} with Mcp-Method: tools/list")


async def name_header(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    request = await _name_bearing(ctx)
    if request is None:
        return skipped("no listed resource, nor a prompt without required arguments, to send; nothing sent")
    method, params = request
    answer = await raw.post(method, params, headers={"Mcp-Name": "mcpprobe-mismatched-name"})
    return _header_mismatch(raw, answer, f"{method} of {inert(next(iter(params.values())), 80)} with "
                                         "Mcp-Name: mcpprobe-mismatched-name")


async def method_header_missing(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    answer = await raw.post(method, params, headers={"Mcp-Method": None})
    return _header_mismatch(raw, answer, f"{method} without Mcp-Method")


async def header_case(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()
    named = await raw.post(method, params, headers={"MCP-METHOD": method})
    if named.status is None:
        return _no_answer(raw, named)
    if not named.has_result():
        return _verdict(raw, failed(f"{method} with its Mcp-Method header named MCP-METHOD got {named.described()}, "
                                    "not a result: header names must be compared case-insensitively"))
    shouted = method.upper()
    answer = await raw.post(method, params, headers={"Mcp-Method": shouted})
    verdict = _header_mismatch(raw, answer, f"{method} with Mcp-Method: {shouted}")
    if verdict.status is Status.PASS:
        verdict.message = (f"{method} with the header named MCP-METHOD was answered; with Mcp-Method: {shouted} "
                           "it got 400 and -32020 (HeaderMismatch)")
    elif answer.status is not None:
        verdict.message += " (header values are case-sensitive)"
    return verdict


async def meta_required(ctx: CheckContext) -> Verdict:
    raw = Raw(ctx)
    method, params = ctx.harmless()

    def without_capabilities(message: dict[str, Any]) -> None:
        message["params"]["_meta"].pop(META_CLIENT_CAPS, None)

    answer = await raw.post(method, params, change=without_capabilities)
    if answer.status is None:
        return _no_answer(raw, answer)
    error = answer.json_error()
    code = error.get("code") if error is not None else None
    what = f"{method} without {META_CLIENT_CAPS} in _meta"
    if answer.status == 400 and code == INVALID_PARAMS:
        return _verdict(raw, passed(f"{what} got 400 and -32602 (Invalid params)"))
    if answer.has_result():
        return _verdict(raw, failed(f"{what} was answered with a result: a request missing a required _meta field "
                                    "must be rejected"))
    return _verdict(raw, failed(f"{what} got {answer.described()}, not 400 with -32602 (Invalid params)"))


async def _name_bearing(ctx: CheckContext) -> tuple[str, dict[str, Any]] | None:
    """A read that changes nothing and carries a name: resources/read of a listed resource, else
    prompts/get of a listed prompt whose arguments are all optional."""
    if isinstance(ctx.capabilities.get("resources"), dict):
        listing = await ctx.listing("resources")
        uris = [item["uri"] for item in listing.items if isinstance(item.get("uri"), str)]
        if uris:
            return "resources/read", {"uri": uris[0]}
    if isinstance(ctx.capabilities.get("prompts"), dict):
        listing = await ctx.listing("prompts")
        for item in listing.items:
            arguments = item.get("arguments") or []
            if isinstance(item.get("name"), str) and not any(
                    isinstance(a, dict) and a.get("required") for a in arguments):
                return "prompts/get", {"name": item["name"]}
    return None


def _header_mismatch(raw: Raw, answer: RawAnswer, what: str) -> Verdict:
    if answer.status is None:
        return _no_answer(raw, answer)
    error = answer.json_error()
    if answer.status == 400 and error is not None and error.get("code") == HEADER_MISMATCH:
        return _verdict(raw, passed(f"{what} got 400 and -32020 (HeaderMismatch)"))
    if answer.status < 300 and answer.has_result():
        return _verdict(raw, failed(f"{what} was answered with a result: the header was not checked against "
                                    "the body"))
    return _verdict(raw, failed(f"{what} got {answer.described()}, not 400 with -32020 (HeaderMismatch)"))


IMPLEMENTS = {
    "http.origin": origin,
    "http.protocol-version": protocol_version,
    "http.unknown-session": unknown_session,
    "http.session-delete": session_delete,
    "http.get-stream": get_stream,
    "http.batch": batch,
    "http.notification": notification,
    "http.method-header": method_header,
    "http.name-header": name_header,
    "http.method-header-missing": method_header_missing,
    "http.header-case": header_case,
    "http.meta-required": meta_required,
}
