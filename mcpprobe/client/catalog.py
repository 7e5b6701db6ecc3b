"""List one kind to the end: pagination, per-item validation, and an exact completeness state.

"Declared, complete, zero items" is healthy. Everything else is a distinct state with a finding:
not declared (nothing sent), not implemented (-32601 for an optional part of a declared capability:
none of that kind, not an error), Method not found, failed on the first page, incomplete after some
pages. Items already read are never thrown away.
"""

from __future__ import annotations

import json
import time
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Protocol, overload

import orjson

from mcpprobe.client import headers
from mcpprobe.client.capabilities import missing_for
from mcpprobe.client.kinds import KINDS, LIST_KINDS, Kind, identity
from mcpprobe.client.obligations import is_optional, not_implemented
from mcpprobe.client.session import Session, Timing
from mcpprobe.errors import (
    METHOD_NOT_FOUND,
    AuthFailed,
    ConnectionFailed,
    HttpForbidden,
    ProbeError,
    ProtocolFailure,
    Refused,
    RequestTimeout,
    RpcError,
)
from mcpprobe.findings import Finding
from mcpprobe.safety import schema
from mcpprobe.safety.redact import active
from mcpprobe.safety.sanitize import findings_for, json_dumps, plain, visible
from mcpprobe.testhooks import page_checked
from mcpprobe.wire.jsonrpc import Call


@dataclass
class Page:
    number: int
    ms: float
    count: int
    cursor: str | None
    failed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"page": self.number, "ms": round(self.ms, 1), "count": self.count}


class Items(Sequence[dict[str, Any]]):
    """The accepted items of a listing, kept compact: each finished page as one compact JSON text
    (ASCII, as `--json` writes it), decoded again only where the items are read.

    Parsed, 40,000 small tools take about 1 KB each; as text about 150 bytes. `--json` writes the
    texts as they are (`json_texts`), so each item is encoded once; everything else reads plain
    dicts, decoded a page at a time (a fresh copy at every read: changing one changes nothing here).
    """

    __slots__ = ("_pages", "_ends", "_open")

    def __init__(self, items: Iterable[dict[str, Any]] = ()) -> None:
        self._pages: list[str] = []  # each a JSON array of compact items
        self._ends: list[int] = []  # the index after each page's last item
        self._open: list[dict[str, Any]] = list(items)  # appended since the last seal

    def append(self, item: dict[str, Any]) -> None:
        self._open.append(item)

    def seal(self) -> tuple[int, list[dict[str, Any]], str] | None:
        """Encode the items appended since the last seal as one page of text, and drop them.
        Returns the index of the page's first item, its items and its text (None: nothing open)."""
        if not self._open:
            return None
        start = self._ends[-1] if self._ends else 0
        page, text = self._open, compact(self._open)
        self._pages.append(text)
        self._ends.append(start + len(page))
        self._open = []
        return start, page, text

    def json_texts(self) -> Iterator[str]:
        """The compact JSON encoding of the items, in pieces that joined with "," make the inside
        of the JSON array (no piece is empty)."""
        for page in self._pages:
            yield page[1:-1]
        if self._open:
            yield compact(self._open)[1:-1]

    def pages(self) -> Iterator[list[dict[str, Any]]]:
        """The items as lists of dicts, a kept page at a time (one decoding each)."""
        for page in self._pages:
            yield json.loads(page)
        if self._open:
            yield list(self._open)

    def __len__(self) -> int:
        return (self._ends[-1] if self._ends else 0) + len(self._open)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for page in self.pages():
            yield from page

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:  # decodes only the pages up to `stop`
                return list(islice(self, start, stop)) if start < stop else []
            return list(self)[index]
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("item index out of range")
        page = bisect_right(self._ends, index)
        if page == len(self._pages):
            return self._open[index - (self._ends[-1] if self._ends else 0)]
        start = self._ends[page - 1] if page else 0
        item: dict[str, Any] = json.loads(self._pages[page])[index - start]
        return item

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Items, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, as a list

    def __add__(self, other: Iterable[dict[str, Any]]) -> Items:
        return Items([*self, *other])

    def __repr__(self) -> str:
        return f"<Items: {len(self)}>"


def compact(value: Any) -> str:
    """`value` as compact JSON text in ASCII, NaN and Infinity written as null (`json_dumps`).

    orjson writes it about ten times faster than the standard library (0.1 against 1.5 µs for a
    small tool): the same JSON, but for how a few floats are spelled (`1e-7`, not `1e-07`). What
    it does not write as the standard library would, it refuses or writes raw, and then the
    standard library writes it: DEL and text beyond ASCII (escaped as \\uXXXX, which the page's
    scan for hidden characters relies on: `maybe_hidden`), a lone surrogate, an integer beyond
    64 bits."""
    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:
        data = b"\x80"  # not ASCII: written below
    if data.isascii() and b"\x7f" not in data:
        return data.decode("ascii")
    return json_dumps(value, separators=(",", ":"), ensure_ascii=True)


@dataclass
class Listing:
    kind: str
    declared: bool
    state: str = "not-declared"
    items: Items = field(default_factory=Items)
    invalid: list[dict[str, Any]] = field(default_factory=list)
    pages: list[Page] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    error: ProbeError | None = None  # what stopped the list, if anything
    # Hidden characters in the names and descriptions of accepted items, found as each was read.
    suspicious: list[Finding] = field(default_factory=list)
    # x-mcp-header, where the session mirrors tool parameters (mcpprobe.client.headers): each
    # tool's parameters sent as headers (tool -> parameter path -> header name), and the tools left
    # out of `items` for invalid annotations ({"index", "id", "rule", "reason"}).
    header_params: dict[str, dict[str, str]] = field(default_factory=dict)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    started: float | None = field(default=None, compare=False, repr=False)  # perf_counter() of its first request

    def __post_init__(self) -> None:
        if not isinstance(self.items, Items):
            self.items = Items(self.items)

    def __repr__(self) -> str:
        # Short: a generated repr would spell out every item and page (see Outcome.__repr__).
        return f"<Listing {self.kind} {self.state}: {len(self.items)} items, {len(self.pages)} pages>"

    @property
    def list_completed(self) -> bool:
        return self.state == "complete"

    @property
    def whole(self) -> bool:
        """Whether every item the server offers is known: the list is complete, or the server said
        it has none of this optional kind (-32601, `not-implemented`)."""
        return self.state in ("complete", "not-implemented")

    @property
    def ms(self) -> float:
        return sum(page.ms for page in self.pages)


class PageFeed(Protocol):
    """Given each page of kept items, in order, as the page is kept: what a table for a person
    builds as the list arrives (mcpprobe.render.cells), instead of reading every page again."""

    def add(self, items: list[dict[str, Any]]) -> None: ...


async def list_kind(session: Session, kind: str, feed: PageFeed | None = None) -> Listing:
    method, key = LIST_KINDS[kind].list_method, LIST_KINDS[kind].result_key
    missing = missing_for(session.capabilities, method)
    listing = Listing(kind, missing is None)
    if not listing.declared and not session.settings.force:
        listing.findings.append(Finding(
            "not-declared", f"the server did not declare '{missing}'; {method} was not sent", kind=kind))
        return listing
    if kind == "tools" and session.mirrors_params:
        session.tool_headers.clear()  # what this listing says replaces what an earlier one said
        session.excluded_tools.clear()
    await _pages(session, listing, method, key, feed)
    return listing


class _Fetch:
    """One page asked for: sent at once, its answer awaited later by the same task (no task is
    spawned, and the event loop turns no more often than for a page asked for and awaited)."""

    __slots__ = ("call", "error", "started")

    def __init__(self) -> None:
        self.call: Call | None = None
        self.error: ProbeError | None = None
        self.started = time.perf_counter()

    @classmethod
    async def send(cls, session: Session, method: str, cursor: str | None) -> _Fetch:
        fetch = cls()
        try:
            fetch.call = await session.send_request(method, {"cursor": cursor} if cursor is not None else None)
        except ProbeError as exc:  # Refused too: the reader raises it
            fetch.error = exc
        return fetch

    async def answer(self) -> tuple[dict[str, Any], ProbeError | None, float]:
        """The page's result or error, and how long it took since it was sent, in milliseconds."""
        result: dict[str, Any] = {}
        error, call, self.call = self.error, self.call, None
        if call is not None:
            try:
                result = await call.result()
            except ProbeError as exc:
                error = exc
        return result, error, (time.perf_counter() - self.started) * 1000

    def abandon(self) -> None:
        if self.call is not None:
            self.call.abandon()
            self.call = None


async def _pages(session: Session, listing: Listing, method: str, key: str, feed: PageFeed | None) -> None:
    """Every page in turn, the next one asked for as soon as this one's cursor is known to be
    followed: the server prepares it while this page's items are checked and kept. The requests
    are the ones a page-by-page client sends, in the same order; only sooner."""
    kind, cap = listing.kind, session.settings.max_pages
    seen_cursors: set[str] = set()
    seen_ids: dict[str, int] = {}
    cursor: str | None = None
    ahead: _Fetch | None = None
    index = 0
    listing.started = time.perf_counter()
    while True:
        number = len(listing.pages) + 1
        if number > cap:
            _incomplete(listing, f"stopped at the page cap of {cap} pages (--max-pages); "
                        "the server still offered more", "page-cap", number)
            return
        fetch = ahead if ahead is not None else await _Fetch.send(session, method, cursor)
        ahead = None
        result, error, ms = await fetch.answer()
        if isinstance(error, Refused):
            raise error
        if error is not None:
            _page_failed(listing, error, number, method, ms)
            return
        page_items = result.get(key)
        if not isinstance(page_items, list):
            listing.pages.append(Page(number, ms, 0, cursor))
            why = f"{method} page {number}: the result has no '{key}' list"
            if number == 1:
                listing.state = "failed"
                listing.findings.append(Finding("list-failed", why, kind=kind, detail={"page": number}))
            else:
                _incomplete(listing, why, "malformed-page", number)
            return
        next_cursor = result.get("nextCursor")
        if (isinstance(next_cursor, str) and next_cursor != "" and next_cursor != cursor
                and next_cursor not in seen_cursors and number < cap):
            # Sent before this page's items are checked; awaited at the top of the next turn.
            ahead = await _Fetch.send(session, method, next_cursor)
        try:
            _accept_page(session, listing, page_items, index, seen_ids)
            index += len(page_items)
            _seal(listing, feed)
            page_checked()
        except BaseException:
            if ahead is not None:
                ahead.abandon()
            raise
        listing.pages.append(Page(number, ms, len(page_items), cursor))
        if next_cursor is None or next_cursor == "":
            listing.state = "complete"
            return
        if not isinstance(next_cursor, str):
            _incomplete(listing, f"page {number}: nextCursor is not a string ({next_cursor!r})",
                        "malformed-cursor", number)
            return
        if next_cursor in seen_cursors or next_cursor == cursor:
            _incomplete(listing, f"page {number} returned a cursor that was already used ({_short(next_cursor)}); "
                        "following it would loop forever", "repeated-cursor", number, cursor=next_cursor)
            return
        seen_cursors.add(next_cursor)
        cursor = next_cursor


def _accept_page(session: Session, listing: Listing, page_items: list[Any], start: int,
                 seen_ids: dict[str, int]) -> None:
    """`_accept` for each item of a page, with the common case inline: an item the fast schema
    check passes, whose identity is new, is kept with no call beyond that check."""
    valid = schema.fast_check(listing.kind, modern=session.modern)
    key = LIST_KINDS[listing.kind].identity
    kept = listing.items
    excluded = _header_scan(session, listing, page_items, start) if (
        listing.kind == "tools" and session.mirrors_params) else None
    for index, item in enumerate(page_items, start):
        if not valid(item) or (excluded and index in excluded):
            _accept(session, listing, item, index, seen_ids, excluded)
            continue
        ident = item.get(key)  # a valid item is an object
        if isinstance(ident, str):
            if ident in seen_ids:
                _accept(session, listing, item, index, seen_ids)  # reports the duplicate, keeps it
                continue
            seen_ids[ident] = index
        kept.append(item)


def _accept(session: Session, listing: Listing, item: Any, index: int, seen_ids: dict[str, int],
            excluded: dict[int, headers.Invalid] | None = None) -> None:
    kind = listing.kind
    errors = schema.item_errors(kind, item, modern=session.modern)
    ident = identity(kind, item)
    if errors:
        label = f"item {index}" + (f" ({ident})" if ident else "")
        listing.invalid.append({"index": index, "id": ident, "errors": errors})
        listing.findings.append(Finding(
            "invalid-item", f"{label} does not match the {session.snapshot.protocol_version} schema: "
            + "; ".join(errors), kind=kind, detail={"index": index, "id": ident, "errors": errors}))
        return
    if excluded and (invalid := excluded.get(index)) is not None:
        listing.excluded.append({"index": index, "id": ident, "rule": invalid.rule, "reason": invalid.message})
        listing.findings.append(Finding(
            "invalid-x-mcp-header",
            f"tool {ident!r} is left out, as a client on streamable HTTP MUST leave it out of tools/list: "
            f"{invalid.message}; an {headers.KEY} value {invalid.words}",
            kind=kind, detail={"index": index, "id": ident, "rule": invalid.rule, "reason": invalid.message}))
        return
    if ident is not None:
        if ident in seen_ids:
            listing.findings.append(Finding(
                "duplicate-item", f"item {index} repeats {ident!r} (first seen as item {seen_ids[ident]})",
                kind=kind, detail={"index": index, "first": seen_ids[ident], "id": ident}))
        else:
            seen_ids[ident] = index
    listing.items.append(item)


def _header_scan(session: Session, listing: Listing, page_items: list[Any], start: int) -> dict[int, headers.Invalid]:
    """The x-mcp-header annotations of a page of tools, learned by the session (which sends them as
    headers) and kept in the listing (which shows them): the indexes of the tools to leave out. A
    page whose text has no annotation at all (the common case) costs one encoding and one search."""
    try:
        if b'"x-mcp-header"' not in orjson.dumps(page_items):
            return {}
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: look at every tool
        pass
    excluded: dict[int, headers.Invalid] = {}
    for index, item in enumerate(page_items, start):
        if not isinstance(item, dict) or not isinstance(name := item.get("name"), str):
            continue
        found = headers.declared(item.get("inputSchema"))
        session.learn_tool(name, found)
        if isinstance(found, headers.Invalid):
            excluded[index] = found
        elif found:
            listing.header_params[name] = {param.where: param.header for param in found}
    return excluded


def maybe_hidden(text: str) -> bool:
    """Whether a page's compact ASCII text can hold a string with anything but printable ASCII,
    newline and tab: such a character shows there as a \\uXXXX, \\r, \\b or \\f escape (DEL too
    is written \\u007f). A page with no backslash at all is settled by one memchr."""
    at = text.find("\\")
    while at != -1:
        if text[at + 1] in "ubfr":
            return True
        at = text.find("\\", at + 2)  # past the escaped character: an escaped backslash is plain
    return False


def _seal(listing: Listing, feed: PageFeed | None = None) -> None:
    """Keep the page's accepted items as text only; scan them for hidden characters first, unless
    their text shows there is nothing to find (the common case: one C-speed look per page). The
    feed, if any, is given the page's items before they are dropped."""
    sealed = listing.items.seal()
    if sealed is None:
        return
    start, page, text = sealed
    if maybe_hidden(text):
        for offset, item in enumerate(page):
            _scan(listing, item, start + offset)
    if feed is not None:
        feed.add(page)


SCANNED = ("name", "title", "description")  # with the kind's identity field


def _scan(listing: Listing, item: dict[str, Any], index: int) -> None:
    """Hidden characters or escape sequences in an accepted item's identity, name, title or
    description (signs of tool poisoning), checked once, as its page is kept."""
    where = None
    ident_key = LIST_KINDS[listing.kind].identity
    for key in (ident_key, *(key for key in SCANNED if key != ident_key)):
        value = item.get(key)
        if not isinstance(value, str) or plain(value):  # the common case: one C-speed look
            continue
        if where is None:
            where = f"{LIST_KINDS[listing.kind].singular} {visible(str(item.get(ident_key)))}"
        found = suspicious_text(where, key, value, listing.kind, {"index": index})
        if found:
            listing.suspicious.append(found)


def suspicious_text(where: str, key: str, value: Any, kind: str, detail: dict[str, Any]) -> Finding | None:
    reasons = findings_for(value) if isinstance(value, str) else []
    if not reasons:
        return None
    return Finding("suspicious-text", f"{where}: {key} contains {'; '.join(reasons)}", kind=kind,
                   detail={**detail, "field": key, "reasons": reasons})


def _page_failed(listing: Listing, exc: ProbeError, number: int, method: str, ms: float) -> None:
    kind = listing.kind
    listing.error = exc
    listing.pages.append(Page(number, ms, 0, None, failed=True))
    if isinstance(exc, RpcError) and exc.rpc_code == METHOD_NOT_FOUND and number == 1 and not listing.declared:
        # Sent with --force: -32601 for an undeclared capability is what the spec asks for.
        listing.state = "not-declared"
        listing.error = None
        listing.findings.append(Finding(
            "not-declared", f"'{LIST_KINDS[kind].capability}' is not declared and {method} was answered with -32601, "
            "as the spec requires: consistent", kind=kind))
        return
    if isinstance(exc, RpcError) and exc.rpc_code == METHOD_NOT_FOUND and number == 1 and is_optional(method):
        # JSON-RPC's answer for a method the server does not implement, to one its capability does
        # not oblige it to implement: the server has none of this kind. A note, not an error: no
        # error on the listing, and every reader (probe, list, watch, check) goes by its state.
        listing.state = "not-implemented"
        listing.error = None
        listing.findings.append(not_implemented(method, exc.rpc_message, kind=kind, detail=exc.detail))
        return
    if isinstance(exc, RpcError) and exc.rpc_code == METHOD_NOT_FOUND and number == 1:
        listing.state = "method-not-found"
        listing.findings.append(Finding(
            "method-not-found",
            f"the server declared '{LIST_KINDS[kind].capability}' but answered {method} with -32601 Method not found"
            f" ({exc.rpc_message})", kind=kind, detail=exc.detail))
        return
    cause = _cause(exc)
    if number == 1:
        listing.state = "failed"
        listing.findings.append(Finding(
            "list-failed", f"{method} failed on the first page: {exc.message}", kind=kind,
            detail={"page": 1, "cause": cause, **exc.detail}))
        return
    _incomplete(listing, f"page {number} failed: {exc.message}", cause, number)


def _cause(exc: ProbeError) -> str:
    for kind, cause in ((RequestTimeout, "timeout"), (HttpForbidden, "forbidden"),
                        (ConnectionFailed, "connection-lost"), (AuthFailed, "auth"),
                        (ProtocolFailure, "malformed-answer")):
        if isinstance(exc, kind):
            return cause
    return "error"


def _incomplete(listing: Listing, why: str, cause: str, number: int, **evidence: Any) -> None:
    listing.state = "incomplete"
    read = len(listing.items) + len(listing.invalid)
    pages_read = sum(1 for page in listing.pages if not page.failed)
    listing.findings.append(Finding(
        "list-incomplete",
        f"{why}; kept {read} items from {pages_read} complete page(s)",
        kind=listing.kind, detail={"page": number, "cause": cause, "itemsKept": read, **evidence}))


def _short(text: str, limit: int = 40) -> str:
    text = active()(text)  # masked before it is cut: a cut could leave a secret's prefix
    return text if len(text) <= limit else text[:limit] + "..."


def timing_for(listing: Listing) -> Timing:
    return Timing(f"list {listing.kind}", listing.ms, {"pages": len(listing.pages)}, at=listing.started)


# The kind table lives in the import-light mcpprobe.client.kinds; it is named here too, beside the listing.
__all__ = ["KINDS", "LIST_KINDS", "Kind", "Listing", "Page", "list_kind", "timing_for"]
