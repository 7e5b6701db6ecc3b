"""What a check function is given (`CheckContext`) and what it returns (`Verdict`).

Every request a check sends goes through `CheckContext.request`: through the session, so that
nothing is sent for a capability the server did not declare (the session refuses it), one at a
time and no faster than `--rate`, and recorded as evidence, trimmed and made inert.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from mcpprobe.check.catalogue import Check, Level, Status
from mcpprobe.errors import ProbeError, ProtocolFailure, Refused, RpcError
from mcpprobe.findings import Finding
from mcpprobe.safety.sanitize import json_dumps, truncate, visible
from mcpprobe.safety.validation import bounded_by

if TYPE_CHECKING:
    from mcpprobe.client.catalog import Listing
    from mcpprobe.client.session import Session
    from mcpprobe.operations.arguments import ToolArguments
    from mcpprobe.operations.input import Confirmer

EVIDENCE_CHARS = 400  # of each message shown as evidence
EVIDENCE_FIRST = 4  # exchanges kept per check: the first ones (what was set up) ...
EVIDENCE_LAST = 8  # ... and the last ones (where the verdict was decided); the count between is told
# What a run keeps of what the server sends, whatever it sends (docs/security.md, "One memory budget"):
MAX_ANSWERS = 10_000  # answers kept, each as its summary, for lifecycle.result-type and listing.cache-hints
MAX_SENT_IDS = 10_000  # ids of requests sent and not yet answered: only their answers are kept
MAX_NOTIFICATION_METHODS = 256  # distinct notification methods kept (listing.stable asks which came)
MAX_METHOD_CHARS = 200  # a longer method name is counted, not kept: no MCP method is near it
SUMMARY_KEYS = 8  # keys of a result named in a summary (its first ones, sorted)
SUMMARY_CHARS = 64  # of each key and text kept in a summary
KEPT_FIELDS = ("resultType", "ttlMs", "cacheScope")  # the values the checks judge
# The keys by which listing.cache-hints knows a cacheable result (its CACHEABLE; a test keeps them equal).
CACHEABLE = ("supportedVersions", "tools", "resources", "resourceTemplates", "prompts", "contents")
SERVER_INFO = "io.modelcontextprotocol/serverInfo"  # a result's _meta naming the server (lifecycle.server-info)


@dataclass(frozen=True)
class NamedCall:
    """One --call 'TOOL K=V ...': as written (for the evidence), and parsed once by the command."""

    spec: str
    tool: str
    arguments: ToolArguments


@dataclass(frozen=True)
class CheckOptions:
    """What the command line asks of a check run (docs/commands/check.md)."""

    only: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    level: Level = Level.SHOULD  # the lowest level run
    strict: bool = False  # a warning (a SHOULD not met) makes exit 1
    unsafe: bool = False
    sample_arguments: bool = False
    calls: tuple[NamedCall, ...] = ()  # --call 'TOOL K=V ...'
    suite_fixtures: bool = False  # --suite-fixtures: the conformance suite's fixtures, where listed (check.suite)
    rate: float | None = None  # requests per second at most
    confirmer: Confirmer | None = None  # for --call: the preview, the question, --yes
    # Each server's outcome, added when its run begins and filled as its checks end: what an interrupted
    # run had checked (the command shows it, exit 130). None: not kept.
    started: list[Any] | None = None


def inert(value: Any, limit: int = EVIDENCE_CHARS) -> str:
    """A message as evidence: compact JSON, escape sequences and hidden characters shown, cut."""
    text = value if isinstance(value, str) else json_dumps(value, ensure_ascii=False, default=str)
    return truncate(visible(text), limit)


_FORCE_ADVICE = re.compile(r"; use --force to [^;]*? anyway\.$")


def refusal(exc: Refused, limit: int = 300) -> str:
    """Why a request was refused, as evidence. `check` ignores --force (it sends nothing a server did
    not declare), so the "use --force to send ... anyway" of `call`'s refusals is not repeated here."""
    return inert(_FORCE_ADVICE.sub(".", exc.message), limit)


@dataclass
class Exchange:
    """One request a check sent, and what came back (a result, or the error it raised)."""

    method: str
    params: dict[str, Any] | None
    result: dict[str, Any] | None = None
    error: ProbeError | None = None
    ms: float = 0.0
    request_id: Any = None

    @property
    def rpc_code(self) -> int | None:
        return self.error.rpc_code if isinstance(self.error, RpcError) else None

    @property
    def http_status(self) -> int | None:
        """The HTTP error status the server answered this request with, when the answer was no
        JSON-RPC response (`http_error_status`)."""
        return http_error_status(self.error)

    def evidence(self) -> dict[str, Any]:
        sent: dict[str, Any] = {"method": self.method}
        if self.request_id is not None:
            sent["id"] = self.request_id
        if self.params:
            sent["params"] = {k: v for k, v in self.params.items() if k != "_meta"} or None
        out: dict[str, Any] = {"sent": inert(sent), "ms": round(self.ms, 1)}
        if self.result is not None:
            out["received"] = inert({"result": self.result})
        elif isinstance(self.error, RpcError):
            error: dict[str, Any] = {"code": self.error.rpc_code, "message": self.error.rpc_message}
            if self.error.data is not None:
                error["data"] = self.error.data
            out["received"] = inert({"error": error})
        elif self.error is not None:
            out["received"] = inert(f"({self.error.code}) {self.error.message}")
        return out


@dataclass
class Verdict:
    status: Status
    message: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class Result:
    """One check's outcome in a run, as the renderers show it."""

    check: Check
    status: Status
    level: Level
    message: str
    spec_url: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    ms: float = 0.0
    omitted: int = 0  # exchanges left out of `evidence`, between its first EVIDENCE_FIRST and the rest

    def __post_init__(self) -> None:
        extra = len(self.evidence) - EVIDENCE_FIRST - EVIDENCE_LAST
        if extra > 0:
            self.evidence = self.evidence[:EVIDENCE_FIRST] + self.evidence[-EVIDENCE_LAST:]
            self.omitted += extra

    def to_json(self) -> dict[str, Any]:
        return {"id": self.check.id, "family": self.check.family, "title": self.check.title,
                "level": self.level.value, "status": self.status.value, "message": visible(self.message),
                "specUrl": self.spec_url, "safe": self.check.safe, "ms": round(self.ms, 1),
                "evidence": self.evidence, "evidenceOmitted": self.omitted, "detail": self.detail}


class CheckContext:
    """The run's shared state: the session, the listings (each kind listed once, shared by every
    check), notifications seen, and the evidence of the check running now."""

    def __init__(self, session: Session, options: CheckOptions) -> None:
        self.session = session
        self.options = options
        bounded_by(session.settings.timeout)  # each schema check of the run: --timeout at most
        self._listings: dict[str, Listing] = {}
        self._listing_lock = anyio.Lock()
        self._interval = 1.0 / options.rate if options.rate else 0.0
        self._last_sent = 0.0
        self._exchanges: list[Exchange] = []
        self._listed: list[str] = []  # the kinds the check running now asked `listing` for
        # Each notification method seen (its first MAX_NOTIFICATION_METHODS, each at most
        # MAX_METHOD_CHARS long), with the time it was last seen; the others are only counted.
        self._notified: dict[str, float] = {}
        self.results_seen = Tally()  # how many results each method gave; the results are not kept
        # prompts.get-listed's expanded prompts, judged as they came (prompts.message-content reads them): each
        # prompt's name, its number of messages, and what is wrong with its first broken message (None: none)
        self.expanded: list[tuple[str, int, str | None]] = []
        # What was counted and not kept, by kind: a finding at the end of the run (`kept_findings`).
        self.dropped: dict[str, int] = {}
        session.conn.notification_handlers.append(self._on_notification)
        # Every answer on the wire to a request mcpprobe sent, listings' pages too (they do not go
        # through `request`), each as its summary (`summary`): never the result itself, which may
        # be megabytes. An answer to an id never sent is the connection's protocol-violation, not kept.
        self.answers: list[tuple[Any, dict[str, Any]]] = []  # (id, summary of the result)
        self._sent: dict[Any, None] = {}
        outer = session.conn.tracer

        def tracer(direction: str, message: Any) -> None:
            if isinstance(message, dict) and "id" in message and _key(message["id"]) is not None:
                if direction == "send" and "method" in message:
                    self._expect(message["id"])
                elif direction == "recv" and "method" not in message:
                    self._answered(message)
            if outer is not None:
                outer(direction, message)

        session.conn.tracer = tracer

    def _expect(self, request_id: Any) -> None:
        sent = self._sent
        sent[_key(request_id)] = None
        if len(sent) > MAX_SENT_IDS:
            del sent[next(iter(sent))]
            self._drop("request ids", 1)

    def _answered(self, message: dict[str, Any]) -> None:
        key = _key(message["id"])
        if key not in self._sent:
            self._drop("answers to requests never sent", 1)
            return
        del self._sent[key]
        if not isinstance(message.get("result"), dict):
            return
        if len(self.answers) >= MAX_ANSWERS:
            self._drop("answers", 1)
            return
        self.answers.append((message["id"], summary(message["result"])))

    def _drop(self, what: str, count: int) -> None:
        self.dropped[what] = self.dropped.get(what, 0) + count

    def _on_notification(self, method: str, params: dict[str, Any]) -> None:
        notified = self._notified
        if method in notified or (len(method) <= MAX_METHOD_CHARS and len(notified) < MAX_NOTIFICATION_METHODS):
            notified[method] = time.monotonic()
        else:
            self._drop("notifications", 1)

    @property
    def notifications(self) -> list[tuple[str, float]]:
        """(method, monotonic time it was last seen) of each notification method kept."""
        return list(self._notified.items())

    def kept_findings(self) -> list[Finding]:
        """What the run counted and did not keep, as one `peer-data-dropped` finding (none if nothing)."""
        if not self.dropped:
            return []
        told = ", ".join(f"{count} {what}" for what, count in sorted(self.dropped.items()))
        return [Finding("peer-data-dropped", f"more than mcpprobe keeps in a run came from the server: {told} "
                        "were counted and not kept (the checks judged what was kept)", kind="server",
                        detail={"dropped": dict(sorted(self.dropped.items()))})]

    @property
    def version(self) -> str:
        return self.session.snapshot.protocol_version

    @property
    def modern(self) -> bool:
        return self.session.modern

    @property
    def capabilities(self) -> dict[str, Any]:
        return self.session.capabilities

    def begin(self) -> None:
        self._exchanges = []
        self._listed = []

    def evidence(self) -> list[dict[str, Any]]:
        """The check's exchanges as evidence: the first EVIDENCE_FIRST and the last EVIDENCE_LAST, and
        the count left out between them (`Result.omitted`)."""
        exchanges = self._exchanges
        if len(exchanges) > EVIDENCE_FIRST + EVIDENCE_LAST:
            exchanges = exchanges[:EVIDENCE_FIRST] + exchanges[-EVIDENCE_LAST:]
        return [exchange.evidence() for exchange in exchanges]

    def current(self) -> list[Exchange]:
        """The exchanges of the check running now."""
        return list(self._exchanges)

    def listed(self) -> list[Listing]:
        """The listings the check running now asked for, made by it or before it."""
        return [self._listings[kind] for kind in dict.fromkeys(self._listed) if kind in self._listings]

    def evidence_omitted(self) -> int:
        return max(len(self._exchanges) - EVIDENCE_FIRST - EVIDENCE_LAST, 0)

    async def pace(self) -> None:
        """--rate: no request sooner than 1/rate seconds after the one before."""
        if self._interval:
            wait = self._last_sent + self._interval - time.monotonic()
            if wait > 0:
                await anyio.sleep(wait)
        self._last_sent = time.monotonic()

    async def request(self, method: str, params: dict[str, Any] | None = None, *, request_id: Any = None,
                      timeout: float | None = None, removed: bool = False) -> Exchange:
        """Send one request and wait for its answer; never raises for what the server does (the
        error is in the exchange), only for what mcpprobe refuses (an undeclared capability).
        `removed`: a method the revision no longer has (see Session.send_request)."""
        call = await self.send(method, params, request_id=request_id, timeout=timeout, removed=removed)
        return await call()

    async def send(self, method: str, params: dict[str, Any] | None = None, *, request_id: Any = None,
                   timeout: float | None = None, removed: bool = False) -> Callable[[], Awaitable[Exchange]]:
        """`request` in two halves, for a check that acts while a request is in flight: sends it
        and returns the coroutine function that waits for the answer."""
        await self.pace()
        exchange = Exchange(method, params, request_id=request_id)
        self._exchanges.append(exchange)
        started = time.perf_counter()
        try:
            call = await self.session.send_request(method, params, timeout=timeout, request_id=request_id,
                                                   removed=removed)
        except ProbeError as exc:
            if exc.exit_code == 3:  # refused by mcpprobe: a bug in the gate, never sent
                raise
            exchange.error = exc
            exchange.ms = (time.perf_counter() - started) * 1000

            async def failed() -> Exchange:
                return exchange

            return failed

        async def answer() -> Exchange:
            try:
                exchange.result = await call.result()
                self.results_seen.append((method, None))
            except ProbeError as exc:
                exchange.error = exc
            exchange.ms = (time.perf_counter() - started) * 1000
            return exchange

        return answer

    def note(self, exchange: Exchange) -> None:
        """An exchange made outside `request` (a listing's page) kept as evidence."""
        self._exchanges.append(exchange)

    async def listing(self, kind: str) -> Listing:
        """The complete listing of `kind`, made once per run (mcpprobe.client.catalog)."""
        self._listed.append(kind)
        async with self._listing_lock:
            if kind not in self._listings:
                from mcpprobe.client.catalog import list_kind

                await self.pace()
                self._listings[kind] = await list_kind(self.session, kind)
            return self._listings[kind]

    def listings(self) -> dict[str, Listing]:
        return dict(self._listings)

    def harmless(self) -> tuple[str, dict[str, Any] | None]:
        """A request every server of the era must answer and that changes nothing: `ping`, or in
        2026-07-28 (which has no ping) `server/discover`."""
        return ("server/discover", None) if self.modern else ("ping", None)


class Tally:
    """How many results each method gave: `append((method, result))` counts, and keeps nothing of the result."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def append(self, item: tuple[str, Any]) -> None:
        method = item[0] if len(item[0]) <= MAX_METHOD_CHARS else "(a longer method name)"
        if method in self.counts or len(self.counts) < MAX_NOTIFICATION_METHODS:
            self.counts[method] = self.counts.get(method, 0) + 1

    def __len__(self) -> int:
        return sum(self.counts.values())


def _key(request_id: Any) -> Any:
    """A request id as mcpprobe sent it, for matching answers: a float is not the integer sent (1.0 is
    not 1), a bool not a number. None for an id that is neither a string nor an integer."""
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return (type(request_id).__name__, request_id)


def _short(value: Any) -> Any:
    """A value of a summary: numbers, booleans and null as they are, a text cut to SUMMARY_CHARS, an object
    or array as its compact JSON cut as short (a text, never the value)."""
    if value is None or isinstance(value, bool | float | int):
        return value  # an int has at most 4,300 digits (the JSON reader's limit): a few hundred bytes
    if isinstance(value, str):
        return value[:SUMMARY_CHARS]
    return truncate(json_dumps(value, default=str)[:SUMMARY_CHARS * 2], SUMMARY_CHARS)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    """What the checks of the whole run judge of one result, and no more: the fields they read
    (KEPT_FIELDS), cut short; which of the cacheable keys it has; and its first SUMMARY_KEYS keys
    (sorted, each cut short), for a message. A value it stands in for is None."""
    import heapq

    kept: dict[str, Any] = {key: None for key in heapq.nsmallest(SUMMARY_KEYS, result)}
    kept = {key[:SUMMARY_CHARS]: None for key in kept}
    for key in CACHEABLE:
        if key in result:
            kept[key] = None
    for key in KEPT_FIELDS:
        if key in result:
            kept[key] = _short(result[key])
    meta = result.get("_meta")
    info = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
    if isinstance(info, dict):  # lifecycle.server-info asks whether each result names the server: its name, version
        kept["_meta"] = {SERVER_INFO: {key: _short(info[key]) for key in ("name", "version") if key in info}}
    return kept


def http_error_status(error: ProbeError | None) -> int | None:
    """The status of an HTTP error answer (400 to 599) that carried no JSON-RPC response: the server's
    own answer to the request, not a failure to reach it. Not the statuses that are conditions of
    the run with codes of their own: 401 and 403 (authorization), 421, 429 and 503 (refused, rate
    limited, unavailable; mcpprobe.wire.http), nor 404 for an expired session."""
    if not isinstance(error, ProtocolFailure) or isinstance(error, RpcError):
        return None
    status = error.detail.get("status")
    return status if isinstance(status, int) and 400 <= status <= 599 else None


def http_evidence(ctx: CheckContext, verdict: Verdict, raised: ProbeError | None = None) -> Verdict:
    """Over streamable HTTP, a check that could not judge (`error`) because the server answered one of
    its requests (or of the listings it asked for) with an HTTP error and no JSON-RPC response: that
    answer is the check's evidence, a `fail` (a `warn` at a SHOULD, as every fail) naming the status
    and the body's start. In every revision with streamable HTTP: "If the input is a JSON-RPC
    request, the server MUST either return Content-Type: text/event-stream ... or Content-Type:
    application/json" (2026-07-28: "If the body is a JSON-RPC request, the server MUST return
    either ...")."""
    if verdict.status is not Status.ERROR or ctx.session.snapshot.transport != "http":
        return verdict  # the HTTP+SSE transport of 2024-11-05 says nothing of a POST's HTTP errors
    error: ProbeError | None = raised if http_error_status(raised) is not None else None
    method = ""
    if error is None:
        exchange = next((e for e in reversed(ctx.current()) if e.http_status is not None), None)
        if exchange is not None:
            error, method = exchange.error, exchange.method
    if error is None:  # a listing the check asked for (its pages are not the check's own exchanges)
        listing = next((listing for listing in ctx.listed() if http_error_status(listing.error) is not None), None)
        if listing is None:
            return verdict
        from mcpprobe.client.kinds import LIST_KINDS

        error, method = listing.error, LIST_KINDS[listing.kind].list_method
        if not verdict.evidence and not ctx.current():
            assert error is not None
            received = inert(f"({error.code}) {error.message}")
            verdict.evidence = [{"sent": inert({"method": method}), "received": received, "ms": 0.0}]
    assert error is not None
    status = http_error_status(error)
    body = error.detail.get("bodyStart") or ""
    content_type = error.detail.get("contentType") or ""
    said = f" ({visible(truncate(content_type, 60))}" if content_type else " ("
    said += f": {inert(body, 160)})" if body else ("no body)" if not content_type else ")")
    what = f"{method} was" if method else "a request was"
    return Verdict(Status.FAIL, f"{what} answered with HTTP {status}{said}, not a JSON-RPC response: the server "
                   "MUST answer a request with application/json or text/event-stream",
                   verdict.evidence, {"httpStatus": status, "contentType": visible(truncate(content_type, 120)),
                                      "bodyStart": inert(body, 400)})


def passed(message: str, **detail: Any) -> Verdict:
    return Verdict(Status.PASS, message, detail=detail)


def failed(message: str, **detail: Any) -> Verdict:
    return Verdict(Status.FAIL, message, detail=detail)


def warned(message: str, **detail: Any) -> Verdict:
    return Verdict(Status.WARN, message, detail=detail)


def skipped(message: str) -> Verdict:
    return Verdict(Status.SKIPPED, message)


def errored(message: str) -> Verdict:
    return Verdict(Status.ERROR, message)


def answer_text(exchange: Exchange) -> str:
    """What came back, in a few words, for a verdict's message."""
    if exchange.result is not None:
        return "a result"
    if isinstance(exchange.error, RpcError):
        return f"error {exchange.error.rpc_code} ({visible(truncate(exchange.error.rpc_message, 80))})"
    if exchange.error is not None:
        return visible(truncate(exchange.error.message, 120))
    return "nothing"
