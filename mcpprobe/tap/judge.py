"""Judging a record, entry by entry: the same code live (fed by the observer) and offline (`--replay`).

The judge keeps the state of each connection: what each side declared, the requests in flight in both
directions, what the client listed, which list_changed it has not acted on, the cursors it was given.
A rule that needs the whole exchange (a response to an unknown id, a list never re-read) is not
applied to a connection in which messages were skipped (`tap-skipped`): a gap is no evidence.
Findings name the side at fault (`detail.side`), the messages that show it (`detail.messages`: their
`i` in the record), and the rule's words (`detail.spec`, `detail.source`: `mcpprobe.tap.rules`).

Over HTTP each session is a connection of its own (`_route`: by the `session` the tap notes, an initialize
bound to the session its answer assigns, at most MAX_SESSIONS at once).

One room: every rule reads and writes the one connection state (`_Connection`), and which connection a
message belongs to (a stdio run, an HTTP session) decides what each rule sees; split, the rules and the
routing would pass that state back and forth on every message of the judge's hot path.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import orjson

from mcpprobe.findings import CODES, Finding, Severity
from mcpprobe.tap.rules import RULES

MAX_PER_CODE = 100  # findings kept per code; the rest are counted
MAX_IDS = 100_000  # request ids remembered per direction (for duplicates and cancellations)
MAX_SESSIONS = 64  # HTTP sessions judged at once; past this the longest idle is dropped from judging, counted
STORM_GAP = 1.0  # list_changed notifications at most this far apart (seconds) are one burst
STORM_MIN = 3  # a burst of at least this many notifications is a storm

LIST_KIND = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources",
             "resources/templates/list": "resources"}
USE_KIND = {"tools/call": "tools", "prompts/get": "prompts", "resources/read": "resources"}
CHANGE_KIND = {"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": "prompts",
               "notifications/resources/list_changed": "resources"}
# A client request -> the server capability it needs.
SERVER_CAPABILITY = {
    "tools/list": "tools", "tools/call": "tools",
    "prompts/list": "prompts", "prompts/get": "prompts",
    "resources/list": "resources", "resources/templates/list": "resources", "resources/read": "resources",
    "resources/subscribe": "resources", "resources/unsubscribe": "resources",
    "logging/setLevel": "logging", "completion/complete": "completions",
}
# A server request -> the client capability it needs.
CLIENT_CAPABILITY = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation",
                     "roots/list": "roots"}
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPS = "io.modelcontextprotocol/clientCapabilities"
OBLIGED = {"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources"}
# Rules that need every message of the connection: not applied after a gap.
WHOLE = {"client-protocol-version-header",
         "client-stale-list", "client-relist-storm", "client-first-page-only", "client-cache-after-reconnect",
         "client-cancel-unknown", "client-before-handshake", "client-request-before-initialized",
         "client-protocol-violation", "protocol-violation", "server-pagination-broken",
         "client-declared-unhandled", "client-acts-on-undeclared-change"}


def _key(value: Any) -> str:
    """A request id as JSON text (the key of the requests in flight): 7 and "7" are two ids."""
    if type(value) is int:  # most ids; exactly what JSON writes for them, past 64 bits too
        return str(value)
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):  # past 64 bits, a lone surrogate: JSON all the same
        import json

        return json.dumps(value, default=str)


def _declared(capabilities: Any, name: str) -> Any:
    return capabilities.get(name) if isinstance(capabilities, dict) else None


def _flag(capabilities: Any, name: str, flag: str) -> bool:
    section = _declared(capabilities, name)
    return isinstance(section, dict) and section.get(flag) is True


@dataclass(slots=True)
class _Request:
    method: str
    index: int
    params: Any
    exchange: Any = None  # over HTTP, the exchange (POST) that carried it


@dataclass
class _Burst:
    first: int  # index of its first notification
    last_t: float
    notifications: int = 1
    relists: int = 0


@dataclass
class _Connection:
    number: int
    key: str | None = None  # over HTTP: the session it is ("s:" and a digest of its id, "" for no session)
    shared: bool = False  # over HTTP without a session: clients in turn or at once share it (ids judged in flight)
    counted: bool = True  # in `Judge.opened`; the shared one only once the server answers in it
    client_caps: Any = None
    server_caps: Any = None
    version: str | None = None
    init_id: str | None = None
    init_answered: bool = False
    modern: bool = False  # the 2026-07-28 era: server/discover and _meta, no initialize
    legacy_sse: bool = False  # the deprecated HTTP+SSE transport (an `endpoint` event came): no version header
    initialized: bool = False
    gap: bool = False
    pending_c: dict[str, _Request] = field(default_factory=dict)
    pending_s: dict[str, _Request] = field(default_factory=dict)
    issued_c: OrderedDict[str, None] = field(default_factory=OrderedDict)
    issued_s: OrderedDict[str, None] = field(default_factory=OrderedDict)
    listed: set[str] = field(default_factory=set)
    # The kinds listed on connections that had ended when this one opened: the ones a reconnect must list
    # again (client-cache-after-reconnect). Sessions open at the same time are not each other's reconnect.
    listed_before: frozenset[str] = frozenset()
    stale: dict[str, list[Any]] = field(default_factory=dict)  # kind -> [notification index, went on]
    bursts: dict[str, _Burst] = field(default_factory=dict)
    undeclared_change: dict[str, int] = field(default_factory=dict)
    cursors: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)  # -> (response index, kind)
    cursor_given: dict[tuple[str, str], int] = field(default_factory=dict)  # cursors the server issued
    reused_flagged: set[str] = field(default_factory=set)
    last_client_request: int = -1
    said: set[tuple[str, str]] = field(default_factory=set)


class Judge:
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.more: dict[str, int] = {}  # code -> findings past MAX_PER_CODE
        self.skipped = 0
        self.messages = 0
        self.quiet = False  # history (a record appended to): state kept, findings dropped
        self._per_code: dict[str, int] = {}
        self._conn: _Connection | None = None
        self._connections = 0
        self.opened = 0  # connections opened since reset_counts: over HTTP, one per session
        self.dropped = 0  # HTTP sessions dropped from judging past MAX_SESSIONS
        self.over_http = False
        self._sessions: OrderedDict[str, _Connection] = OrderedDict()  # over HTTP, least recently active first
        self._listed_before: set[str] = set()
        self._new: list[Finding] = []
        self._http: dict[str, Any] | None = None  # the HTTP exchange of the message being judged
        self._bypass_said: set[str] = set()

    # ----- entries in, findings out -----

    def feed(self, entry: dict[str, Any]) -> list[Finding]:
        """Judge one record entry; the findings it gave (for the live view)."""
        self._new = []
        event = entry.get("event")
        if event is None:  # a message: the usual
            if "dir" in entry:
                self.messages += 1
                http = entry.get("http")
                self._http = http if isinstance(http, dict) else None
                message = entry.get("msg")
                conn = self._route(entry) if self.over_http else self._connection()
                if type(message) is dict:  # one message, read: straight to its rules
                    self._one(conn, entry.get("i", -1), message, entry.get("dir") == "c2s", entry)
                else:
                    self._message(conn, entry)
            return self._new
        if event in ("start", "reconnect"):
            self._close_all()
            self.over_http = entry.get("transport") == "http"
            if not self.over_http:  # over HTTP each session is a connection, opened when it starts
                self._open()
        elif event == "exit":
            self._close_all()
        elif event == "delete":  # the HTTP client ended its session; what follows is a new one
            if self.over_http:
                ended = self._sessions.get(self._session_key(entry))
                if ended is not None:
                    self._close(ended)
            else:
                self._close()
        elif event == "endpoint":
            conn = self._session(self._session_key(entry), seen_start=True) if self.over_http \
                else self._connection()
            conn.legacy_sse = True
            if entry.get("bypass") is True:
                self._bypassed(conn, entry.get("origin"))
        elif event == "skipped":
            count = entry.get("messages")
            self.skipped += count if isinstance(count, int) else 0
            if self.over_http:  # a copy lost from any session, or from one not seen yet (then unseen starts: gaps)
                for conn in self._sessions.values():
                    conn.gap = True
            else:
                self._connection().gap = True
        elif "dir" in entry:
            self.messages += 1
            http = entry.get("http")
            self._http = http if isinstance(http, dict) else None
            self._message(self._route(entry) if self.over_http else self._connection(), entry)
        return self._new

    def finish(self) -> list[Finding]:
        """The end of the record: end-of-connection rules, and what was skipped."""
        self._new = []
        self._close_all()
        if self.skipped:
            self._emit("tap-skipped", f"judging fell behind: {self.skipped} message(s) relayed untouched but "
                                      "not judged; rules needing the whole exchange were not applied there", [],
                       side="tap")
        return self._new

    def reset_counts(self) -> None:
        """Forget how many findings each code had (after a history judged quietly)."""
        self._per_code.clear()
        self.opened = 0
        self.dropped = 0

    def _bypassed(self, conn: _Connection, origin: Any) -> None:
        """A legacy SSE `endpoint` on another origin than the tap's: a client that follows it posts straight to
        the server, so the client's side of this connection is unseen (a gap: the answers on the stream would
        look unasked). Said once per origin."""
        conn.gap = True
        origin = origin[:200] if isinstance(origin, str) else "another origin"
        if origin in self._bypass_said or self.quiet:  # quiet: a history, whose findings are not this run's
            return
        self._bypass_said.add(origin)
        self._emit("tap-endpoint-bypassed", f"the server's endpoint event names {origin}, not the tap: a client "
                                            "that follows it sends its messages straight to the server, unseen "
                                            "and unjudged", [], side="tap", extra={"origin": origin})

    # ----- connections -----

    def _open(self, key: str | None = None, *, gap: bool = False) -> _Connection:
        self._connections += 1
        self.opened += key != ""
        self._conn = _Connection(self._connections, key=key, shared=key == "", gap=gap, counted=key != "",
                                 listed_before=frozenset(self._listed_before))
        if key is not None:
            self._sessions[key] = self._conn
            if len(self._sessions) > MAX_SESSIONS:  # memory bounded: the longest idle is no longer judged
                _, idle = self._sessions.popitem(last=False)
                idle.key = None
                self.dropped += 1  # not closed: it may go on, and its end-of-connection rules would guess
        return self._conn

    def _connection(self) -> _Connection:
        return self._conn if self._conn is not None else self._open()

    # ----- HTTP sessions -----

    @staticmethod
    def _session_key(entry: dict[str, Any]) -> str:
        """The HTTP session an entry belongs to ("" for none): the `session` the tap noted (a digest of the
        Mcp-Session-Id, or of the legacy SSE endpoint's session parameter), else the Mcp-Session-Id header."""
        http = entry.get("http")
        if not isinstance(http, dict):
            return ""
        session = http.get("session") or http.get("mcp-session-id")
        return f"s:{session}" if isinstance(session, str) and session else ""

    def _session(self, key: str, *, seen_start: bool = False) -> _Connection:
        """The connection of a session, the most recently active now. A session first seen in mid-course (begun
        before the tap, or dropped past MAX_SESSIONS) is judged with a gap: its start was not seen."""
        conn = self._sessions.get(key)
        if conn is None:
            conn = self._open(key, gap=bool(key) and not seen_start)
        else:
            self._sessions.move_to_end(key)
        self._conn = conn
        return conn

    def _route(self, entry: dict[str, Any]) -> _Connection:
        """The connection an HTTP message belongs to. An initialize without a session comes before the server
        assigns one: it starts a connection of its own, keyed by its HTTP exchange, which the answer then binds
        to the session id it assigns (or to no session)."""
        key = self._session_key(entry)
        http = entry.get("http")
        exchange = f"x:{http.get('exchange')}" if isinstance(http, dict) else "x:"
        if entry.get("dir") == "c2s":
            if not key and _initialize(entry.get("msg")):
                return self._session(exchange, seen_start=True)
            return self._session(key, seen_start=not key)
        pending = self._sessions.pop(exchange, None)
        if pending is None:
            conn = self._session(key, seen_start=not key)
            if not conn.counted and not _refusal(entry.get("msg")):  # the shared one: a connection once answered
                conn.counted = True
                self.opened += 1
            return conn
        old = self._sessions.get(key)
        if old is not None:  # the same session again, or a new initialize without sessions: the old one ended
            self._close(old)
        pending.key, pending.shared = key, key == ""
        self._sessions[key] = pending
        self._conn = pending
        return pending

    def _close_all(self) -> None:
        for conn in list(self._sessions.values()):
            self._close(conn)
        self._close()

    def _close(self, conn: _Connection | None = None) -> None:
        conn = conn if conn is not None else self._conn
        if conn is None:
            return
        self._conn = conn  # its findings are judged by its own gap
        for kind, (index, went_on) in sorted(conn.stale.items()):
            if went_on:
                self._emit("client-stale-list", f"client: the server said its {kind} list changed; the client "
                                                "went on without listing it again", [index], kind=kind)
        for kind in sorted(conn.bursts):
            self._storm(kind, conn.bursts[kind])
        for (method, cursor), (index, kind) in conn.cursors.items():
            if conn.last_client_request > index:
                severity = Severity.WARNING if kind in ("tools", "prompts") else Severity.INFO
                self._emit("client-first-page-only", f"client: {method} answered with nextCursor; the client never "
                                                     "asked for the next page", [index], kind=kind,
                           severity=severity, extra={"cursor": cursor[:200]})
        self._listed_before |= conn.listed
        if conn.key is not None and self._sessions.get(conn.key) is conn:
            del self._sessions[conn.key]
        self._conn = None

    def _storm(self, kind: str, burst: _Burst) -> None:
        if burst.notifications >= STORM_MIN and burst.relists >= burst.notifications:
            self._emit("client-relist-storm", f"client: {burst.notifications} {kind} list_changed in a burst, and "
                                              f"{burst.relists} re-lists: one per notification, not coalesced",
                       [burst.first], kind=kind)

    # ----- messages -----

    def _message(self, conn: _Connection, entry: dict[str, Any]) -> None:
        index = entry.get("i", -1)
        direction = entry.get("dir")
        client = direction == "c2s"
        if "msg" not in entry:
            text = entry.get("text")
            text = text if isinstance(text, str) else ""
            if not text.strip() and "cut" not in entry:
                return  # a blank line: no message, nothing wrong enough to say
            if client:
                self._emit("client-protocol-violation", "client: wrote a line to the server's stdin that is not "
                                                        "JSON", [index], extra={"sample": text[:200]})
            else:
                self._emit("non-protocol-output", "server: wrote a line to stdout that is not JSON-RPC", [index],
                           extra={"sample": text[:200]})
            return
        message = entry["msg"]
        if isinstance(message, list):
            if conn.version is not None and conn.version >= "2025-06-18":
                self._emit("batch-not-allowed", f"{'client' if client else 'server'}: sent a JSON-RPC batch; "
                                                f"{conn.version} has none", [index], side="client" if client else None)
            for item in message:
                self._one(conn, index, item, client, entry)
            return
        self._one(conn, index, message, client, entry)

    def _one(self, conn: _Connection, index: int, message: Any, client: bool, entry: dict[str, Any]) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self._emit("client-protocol-violation" if client else "protocol-violation",
                       f"{'client' if client else 'server'}: a message that is not a JSON-RPC 2.0 object", [index])
            return
        method = message.get("method")
        has_id = "id" in message
        if isinstance(method, str):
            if has_id:
                (self._client_request if client else self._server_request)(conn, index, message, method)
            else:
                (self._client_notification if client else self._server_notification)(
                    conn, index, message, method, entry)
        elif has_id and ("result" in message or "error" in message):
            (self._client_response if client else self._server_response)(conn, index, message)
        else:
            self._emit("client-protocol-violation" if client else "protocol-violation",
                       f"{'client' if client else 'server'}: a message that is neither request, notification nor "
                       "response", [index])

    def _shape(self, index: int, message: dict[str, Any], client: bool) -> bool:
        """Whether a response is well formed (one of result and error; an error's code and message)."""
        violation = "client-protocol-violation" if client else "protocol-violation"
        who = "client" if client else "server"
        if "result" in message and "error" in message:
            self._emit(violation, f"{who}: a response with both result and error", [index], ids=[message.get("id")])
            return False
        error = message.get("error")
        if "error" in message and not (isinstance(error, dict) and type(error.get("code")) is int
                                       and isinstance(error.get("message"), str)):
            self._emit(violation, f"{who}: an error without an integer code and a message", [index],
                       ids=[message.get("id")])
            return False
        return True

    # ----- the client's messages -----

    def _client_request(self, conn: _Connection, index: int, message: dict[str, Any], method: str) -> None:
        rid = message.get("id")
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        if method == "server/discover" or (isinstance(meta, dict) and META_VERSION in meta):
            # The 2026-07-28 era: no initialize handshake; each request says its version and the client's
            # capabilities, and server/discover answers the server's.
            conn.modern = True
            if isinstance(meta, dict):
                if isinstance(meta.get(META_VERSION), str):
                    conn.version = meta[META_VERSION]
                if isinstance(meta.get(META_CLIENT_CAPS), dict):
                    conn.client_caps = meta[META_CLIENT_CAPS]
        if method == "initialize":
            if conn.init_id is not None:  # a new initialize on the same stream: a new connection
                key = conn.key
                self._close(conn)
                conn = self._open(key)
            conn.client_caps = params.get("capabilities") if isinstance(params, dict) else None
            conn.init_id = _key(rid)
        elif method != "ping" and method != "server/discover":
            if conn.modern and conn.init_id is None:
                pass  # no handshake in this era
            elif conn.init_id is None or not conn.init_answered:
                self._emit("client-before-handshake", f"client: {method} before the server answered initialize",
                           [index], ids=[rid])
            elif not conn.initialized:
                self._emit("client-request-before-initialized", f"client: {method} before "
                                                                "notifications/initialized", [index], ids=[rid])
            if method in SERVER_CAPABILITY:
                self._capability(conn, index, method, params, rid)
        if self._http is not None:
            self._version_header(conn, index, method, rid)
        if rid is None or not isinstance(rid, (str, int)) or isinstance(rid, bool):
            self._emit("client-protocol-violation", f"client: {method} with an id that is not a string or integer",
                       [index], ids=[rid])
            return
        key = str(rid) if type(rid) is int else _key(rid)
        if (conn.modern and conn.init_id is None) or conn.shared:
            # HTTP without Mcp-Session-Id is shared by clients in turn or at once, and 2026-07-28 has no
            # session: "The request ID MUST NOT match the ID of any other request the
            # sender has issued and not yet received a response for." An id answered may come again.
            if key in conn.pending_c:
                self._emit("client-protocol-violation", f"client: request id {key} used again while the request "
                                                        "that had it is still unanswered", [index], ids=[rid])
        elif key in conn.issued_c:
            self._emit("client-protocol-violation", f"client: request id {key} used again in the same session",
                       [index], ids=[rid])
        self._remember(conn.issued_c, key)
        self._pending(conn, conn.pending_c, key,
                      _Request(method, index, params, self._http.get("exchange") if self._http is not None else None))
        if conn.stale or method in LIST_KIND or (conn.listed_before and method in USE_KIND):  # else `_uses` has nothing
            self._uses(conn, index, method, params)
        conn.last_client_request = index

    def _version_header(self, conn: _Connection, index: int, method: str, rid: Any) -> None:
        """Over streamable HTTP, from 2025-06-18 on: the negotiated version in MCP-Protocol-Version on every
        request after initialize. Not over the deprecated HTTP+SSE transport: the header is defined in the
        streamable HTTP transport's text ("Protocol Version Header"), and the older transport, kept for
        backwards compatibility as 2024-11-05 defined it, has none; a false alarm there would call every
        SSE client wrong."""
        http = self._http
        if http is None or method == "initialize" or conn.modern or not conn.init_answered or conn.legacy_sse:
            return
        if conn.version is None or conn.version < "2025-06-18":
            return
        sent = http.get("mcp-protocol-version")
        if sent != conn.version:
            said = f"MCP-Protocol-Version: {sent}" if sent else "no MCP-Protocol-Version header"
            self._emit("client-protocol-version-header", f"client: {method} over HTTP with {said}; "
                                                         f"{conn.version} was negotiated", [index], ids=[rid])

    def _capability(self, conn: _Connection, index: int, method: str, params: Any, rid: Any) -> None:
        needed = SERVER_CAPABILITY.get(method)
        caps = conn.server_caps
        if needed is None or not isinstance(caps, dict):
            return
        if needed == "completions" and (conn.version or "") < "2025-03-26":
            return  # no completions capability before 2025-03-26
        if _declared(caps, needed) is None:
            self._emit("client-undeclared-capability", f"client: {method}, but the server did not declare "
                                                       f"`{needed}`", [index], ids=[rid], kind=_kind(needed))
        elif method in ("resources/subscribe", "resources/unsubscribe") and not _flag(caps, "resources", "subscribe"):
            self._emit("client-subscribe-undeclared", f"client: {method}, but the server did not declare "
                                                      "resources.subscribe: true", [index], ids=[rid],
                       kind="resources")

    def _uses(self, conn: _Connection, index: int, method: str, params: Any) -> None:
        """What a client request says about the client's lists: a (re-)list, a page, or a use of a list."""
        list_kind = LIST_KIND.get(method)
        cursor = params.get("cursor") if isinstance(params, dict) else None
        if list_kind is not None and cursor is None:
            conn.listed.add(list_kind)
            conn.stale.pop(list_kind, None)
            burst = conn.bursts.get(list_kind)
            if burst is not None and method != "resources/templates/list":
                burst.relists += 1
            if list_kind in conn.undeclared_change:
                note = conn.undeclared_change.pop(list_kind)
                self._emit("client-acts-on-undeclared-change", f"client: listed {list_kind} again after a "
                                                               "list_changed the server had not declared",
                           [note, index], kind=list_kind)
        elif list_kind is not None and isinstance(cursor, str):
            conn.cursors.pop((method, cursor[:1000]), None)
        for kind, stale in conn.stale.items():
            if kind != list_kind:
                stale[1] = True
        use_kind = USE_KIND.get(method)
        if (use_kind is not None and use_kind not in conn.listed
                and use_kind in conn.listed_before and use_kind not in conn.reused_flagged):
            conn.reused_flagged.add(use_kind)
            self._emit("client-cache-after-reconnect", f"client: {method} after a reconnect, before listing "
                                                       f"{use_kind} on this connection", [index], kind=use_kind)

    def _client_notification(self, conn: _Connection, index: int, message: dict[str, Any], method: str,
                             entry: dict[str, Any]) -> None:
        params = message.get("params")
        if method == "notifications/initialized":
            conn.initialized = True
        elif method == "notifications/cancelled":
            rid = params.get("requestId") if isinstance(params, dict) else None
            key = _key(rid)
            if key == conn.init_id:
                self._emit("client-cancel-unknown", "client: cancelled its initialize request", [index], ids=[rid])
            elif key not in conn.issued_c:
                self._emit("client-cancel-unknown", f"client: cancelled request {key}, which it never sent",
                           [index], ids=[rid])
        elif method == "notifications/roots/list_changed" and isinstance(conn.client_caps, dict) \
                and not _flag(conn.client_caps, "roots", "listChanged"):
            self._emit("client-undeclared-capability", "client: notifications/roots/list_changed without "
                                                       "declaring roots.listChanged: true", [index])

    def _client_response(self, conn: _Connection, index: int, message: dict[str, Any]) -> None:
        if not self._shape(index, message, True):
            return
        key = _key(message.get("id"))
        request = conn.pending_s.pop(key, None)
        if request is None:
            self._emit("client-protocol-violation", f"client: a response to id {key}, which the server did not "
                                                    "send or was answered already", [index], ids=[message.get("id")])
            return
        error = message.get("error")
        needed = CLIENT_CAPABILITY.get(request.method)
        url_mode = isinstance(request.params, dict) and request.params.get("mode") == "url"
        if url_mode and not isinstance(_declared(_declared(conn.client_caps, "elicitation") or {}, "url"), dict):
            return  # a mode the client did not declare: refusing it is no contradiction
        if isinstance(error, dict) and error.get("code") == -32601 and needed is not None \
                and _declared(conn.client_caps, needed) is not None:
            self._emit("client-declared-unhandled", f"client: declared `{needed}`, then answered "
                                                    f"{request.method} with -32601 Method not found",
                       [request.index, index], ids=[message.get("id")])

    # ----- the server's messages -----

    def _server_request(self, conn: _Connection, index: int, message: dict[str, Any], method: str) -> None:
        rid = message.get("id")
        needed = CLIENT_CAPABILITY.get(method)
        if needed is not None and isinstance(conn.client_caps, dict) and _declared(conn.client_caps, needed) is None:
            self._emit("server-undeclared-capability", f"server: {method}, but the client did not declare "
                                                       f"`{needed}`", [index], ids=[rid])
        if rid is None or not isinstance(rid, (str, int)) or isinstance(rid, bool):
            self._emit("protocol-violation", f"server: {method} with an id that is not a string or integer",
                       [index], ids=[rid])
            return
        key = _key(rid)
        self._remember(conn.issued_s, key)
        self._pending(conn, conn.pending_s, key, _Request(method, index, message.get("params")))

    def _server_notification(self, conn: _Connection, index: int, message: dict[str, Any], method: str,
                             entry: dict[str, Any]) -> None:
        caps = conn.server_caps
        kind = CHANGE_KIND.get(method)
        if kind is not None:
            if isinstance(caps, dict) and not _flag(caps, kind, "listChanged"):
                self._emit("server-undeclared-capability", f"server: {method}, but it did not declare "
                                                           f"{kind}.listChanged: true", [index], kind=kind)
                conn.undeclared_change[kind] = index
                return
            listing = any(LIST_KIND.get(request.method) == kind for request in conn.pending_c.values())
            if kind in conn.listed and not listing:  # a list in flight may hold the change already
                conn.stale[kind] = [index, False]
            t = entry.get("t")
            t = float(t) if isinstance(t, (int, float)) else 0.0
            burst = conn.bursts.get(kind)
            if burst is not None and t - burst.last_t <= STORM_GAP:
                burst.notifications += 1
                burst.last_t = t
            else:
                if burst is not None:
                    self._storm(kind, burst)
                conn.bursts[kind] = _Burst(index, t)
        elif method == "notifications/resources/updated" and isinstance(caps, dict) \
                and not _flag(caps, "resources", "subscribe"):
            self._emit("server-undeclared-capability", f"server: {method}, but it did not declare "
                                                       "resources.subscribe: true", [index], kind="resources")
        elif method == "notifications/message" and isinstance(caps, dict) and _declared(caps, "logging") is None:
            self._emit("server-undeclared-capability", f"server: {method}, but it did not declare `logging`",
                       [index])

    def _server_response(self, conn: _Connection, index: int, message: dict[str, Any]) -> None:
        rid = message.get("id")
        error = message.get("error")
        if rid is None and isinstance(error, dict):
            exchange = self._http.get("exchange") if self._http is not None else None
            if exchange is not None:  # over HTTP, the answer to the POST that carried the request: it was refused
                for key in [k for k, r in conn.pending_c.items() if r.exchange == exchange]:
                    del conn.pending_c[key]
            return  # an error about a request whose id could not be read: allowed
        if not self._shape(index, message, False):
            return
        key = str(rid) if type(rid) is int else _key(rid)
        request = conn.pending_c.pop(key, None)
        if request is None:
            self._emit("protocol-violation", f"server: a response to id {key}, which the client did not send or "
                                             "was answered already", [index], ids=[rid])
            return
        result = message.get("result")
        if request.method == "initialize":
            self._initialized(conn, index, result, rid)
            return
        if request.method == "server/discover":
            if isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
                conn.server_caps = result["capabilities"]
            return
        list_kind = LIST_KIND.get(request.method)
        if list_kind is None:
            return
        cursor = request.params.get("cursor") if isinstance(request.params, dict) else None
        if isinstance(error, dict):
            if isinstance(cursor, str) and (request.method, cursor[:1000]) in conn.cursor_given:
                self._emit("server-pagination-broken", f"server: {request.method} refused the cursor it gave "
                                                       f"itself ({error.get('code')})",
                           [conn.cursor_given[(request.method, cursor[:1000])], request.index, index], ids=[rid],
                           kind=list_kind)
            elif error.get("code") == -32601 and request.method in OBLIGED \
                    and _declared(conn.server_caps, OBLIGED[request.method]) is not None:
                self._emit("method-not-found", f"server: declared `{OBLIGED[request.method]}`, then answered "
                                               f"{request.method} with -32601", [request.index, index], ids=[rid],
                           kind=list_kind)
            return
        if not isinstance(result, dict) or "nextCursor" not in result or result["nextCursor"] is None:
            return
        next_cursor = result["nextCursor"]
        if not isinstance(next_cursor, str):
            self._emit("protocol-violation", f"server: {request.method} with a nextCursor that is not a string",
                       [index], ids=[rid], kind=list_kind)
        elif next_cursor == cursor:
            self._emit("server-pagination-broken", f"server: {request.method} answered cursor {next_cursor[:80]!r} "
                                                   "with the same cursor again", [request.index, index], ids=[rid],
                       kind=list_kind)
        else:
            if len(conn.cursor_given) >= MAX_IDS:  # memory bounded: past this, pagination is not judged
                conn.gap = True
                return
            conn.cursors[(request.method, next_cursor[:1000])] = (index, list_kind)
            conn.cursor_given[(request.method, next_cursor[:1000])] = index

    def _initialized(self, conn: _Connection, index: int, result: Any, rid: Any) -> None:
        conn.init_answered = True
        if not isinstance(result, dict):
            conn.server_caps = None  # an error: no capabilities to judge by
            return
        capabilities = result.get("capabilities")
        version = result.get("protocolVersion")
        missing = [name for name, ok in (("protocolVersion", isinstance(version, str)),
                                         ("capabilities", isinstance(capabilities, dict)),
                                         ("serverInfo", isinstance(result.get("serverInfo"), dict))) if not ok]
        if missing:
            self._emit("protocol-violation", f"server: the initialize result lacks {', '.join(missing)}", [index],
                       ids=[rid])
        conn.server_caps = capabilities if isinstance(capabilities, dict) else None
        conn.version = version if isinstance(version, str) else None

    # ----- findings -----

    @staticmethod
    def _pending(conn: _Connection, pending: dict[str, _Request], key: str, request: _Request) -> None:
        """A request in flight, remembered; past MAX_IDS unanswered, the oldest is forgotten and the rules that
        need every request are no longer applied to this connection (an answer to it would look unknown)."""
        pending[key] = request
        if len(pending) > MAX_IDS:
            del pending[next(iter(pending))]
            conn.gap = True

    @staticmethod
    def _remember(ids: OrderedDict[str, None], key: str) -> None:
        ids[key] = None
        if len(ids) > MAX_IDS:
            ids.popitem(last=False)

    def _emit(self, code: str, message: str, indexes: list[int], *, ids: list[Any] | None = None,
              kind: str = "server", severity: Severity | None = None, side: str | None = None,
              extra: dict[str, Any] | None = None) -> None:
        conn = self._conn
        if self.quiet or (conn is not None and conn.gap and code in WHOLE):
            return
        assert code in CODES and code in RULES, code
        rule = RULES[code]
        count = self._per_code.get(code, 0)
        self._per_code[code] = count + 1
        if count >= MAX_PER_CODE:
            self.more[code] = self.more.get(code, 0) + 1
            return
        detail: dict[str, Any] = {"side": side or rule.side, "messages": indexes}
        if ids:
            detail["ids"] = ids
        detail.update(extra or {})
        detail["spec"] = rule.words
        detail["source"] = rule.source
        finding = Finding(code, message, kind=kind, severity=severity, detail=detail)
        self.findings.append(finding)
        self._new.append(finding)


def _refusal(message: Any) -> bool:
    """Whether a message is an error about a request whose id could not be read (an HTTP POST refused)."""
    return isinstance(message, dict) and message.get("id") is None and "error" in message


def _initialize(message: Any) -> bool:
    """Whether a message (or a batch) holds an initialize request."""
    if isinstance(message, dict):
        return message.get("method") == "initialize"
    return isinstance(message, list) and any(isinstance(m, dict) and m.get("method") == "initialize" for m in message)


def _kind(capability: str) -> str:
    return capability if capability in ("tools", "resources", "prompts") else "server"
