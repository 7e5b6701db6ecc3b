"""The cells of the human list tables: each listed item's fields as inert one-line text.

Standard library only (no rich): a `list` for a person builds its table's cells a page at a time
as the pages arrive (`Cells`, fed by the listing), from the items the listing has just decoded and
checked, instead of decoding every kept page again once the list is complete. The renderer
(mcpprobe.render.human) lays them out.

Every cell is `safe()` (a `Safe`, made from the run's redactor): secrets masked, anything that
could drive a terminal or hide text shown as visible notation, cut to the column's limit. A page's
column is built in a few C-speed passes when every value is already what `safe()` would return
(printable ASCII within the limit, no secret to mask), else cell by cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice, repeat
from operator import methodcaller
from typing import TYPE_CHECKING, Any

from mcpprobe.client.kinds import tool_title
from mcpprobe.safety.sanitize import json_dumps, truncate, visible

if TYPE_CHECKING:
    from mcpprobe.client.catalog import Listing
    from mcpprobe.safety.redact import Redactor

Item = dict[str, Any]


class Safe:
    """Server text as one inert line, the run's secrets masked before it is cut to a limit: cut
    first, a secret's prefix could be left, which the writer (it masks everything once more) would
    no longer recognise; and a table's widths are those of what is shown. One for each rendering,
    made from the View's redactor (the run's own, for what is shown live)."""

    __slots__ = ("redactor",)

    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    def __call__(self, value: Any, limit: int = 0) -> str:
        text = value if isinstance(value, str) else json_dumps(value, ensure_ascii=True, default=str)
        if self.redactor.longest:  # a secret to mask (cheaper to ask than its truth value, at every cell)
            text = self.redactor(text)
        if not (text.isascii() and text.isprintable()):  # else visible() would return it unchanged
            text = visible(text)
        return truncate(text, limit) if limit and len(text) > limit else text

    def as_given(self, values: list[Any], limit: int = 0) -> bool:
        """Whether this would return each of `values` unchanged: all strings, printable ASCII,
        within `limit` (0: none), and no secret to mask. One look at the page, not one per cell."""
        if self.redactor.longest:
            return False
        try:
            joined = "".join(values)
        except TypeError:  # not all strings
            return False
        return joined.isascii() and joined.isprintable() and (not limit or max(map(len, values), default=0) <= limit)


class Field:
    """One column: its header, whether it holds an identifier (never broken across lines in a
    table: a name or URI cut in two reads as two things), and how a page of items becomes its
    cells."""

    __slots__ = ("header", "identifier")

    def __init__(self, header: str, *, identifier: bool = False) -> None:
        self.header, self.identifier = header, identifier

    def page(self, items: list[Item], safe: Safe) -> list[str]:
        raise NotImplementedError


class TextField(Field):
    """One text field of each item: `safe(item.get(key) or "", limit)` (without `or ""`:
    `blank=False`, so a missing name shows as null rather than vanishing). `get`: how the value is
    read from an item, when it is not simply `item.get(key)`."""

    __slots__ = ("key", "limit", "blank", "_get")

    def __init__(self, header: str, key: str, limit: int, *, blank: bool = True, identifier: bool = False,
                 get: Callable[[Item], Any] | None = None) -> None:
        super().__init__(header, identifier=identifier)
        self.key, self.limit, self.blank = key, limit, blank
        self._get = get or methodcaller("get", key)

    def page(self, items: list[Item], safe: Safe) -> list[str]:
        values = list(map(self._get, items))
        if self.blank:
            if values.count(None) == len(values):  # a field no item of the page has
                return [""] * len(values)
            if None in values:
                values = [value or "" for value in values]
        if safe.as_given(values, self.limit):
            return values
        return [safe((value or "") if self.blank else value, self.limit) for value in values]


class NamesField(Field):
    """A list of names for each item, read from one field (`key`): `names(values)` turns the page's
    values of that field into a list of strings per item (anything else shows as nothing); each
    name made safe, joined with ", ". A page where no item has the field is blank at once."""

    __slots__ = ("_get", "names")

    def __init__(self, header: str, key: str, names: Callable[[list[Any]], list[Any]]) -> None:
        super().__init__(header)
        self._get = methodcaller("get", key)
        self.names = names

    def page(self, items: list[Item], safe: Safe) -> list[str]:
        values = list(map(self._get, items))
        if values.count(None) == len(values):  # nothing to show for any item of the page
            return [""] * len(values)
        picked = self.names(values)
        lists = picked if set(map(type, picked)) == {list} else [
            names if type(names) is list else () for names in picked]
        if safe.as_given(list(chain.from_iterable(lists))):
            return list(map(", ".join, lists))
        return [", ".join(map(safe, names)) for names in lists]


def _required(schemas: list[Any]) -> list[Any]:
    """Each input schema's `required` list."""
    try:
        return list(map(dict.get, schemas, repeat("required")))  # every schema an object: at C speed
    except TypeError:
        return [schema.get("required") if type(schema) is dict else None for schema in schemas]


def _prompt_arguments(values: list[Any]) -> list[Any]:
    """Each prompt's argument names, `*` after a required one."""
    return [[arg["name"] + ("*" if arg.get("required") else "") for arg in arguments
             if type(arg) is dict and isinstance(arg.get("name"), str)] if type(arguments) is list else None
            for arguments in values]


_HINTS = {"readOnlyHint": "read-only", "destructiveHint": "destructive", "idempotentHint": "idempotent",
          "openWorldHint": "open-world"}


def _hints(values: list[Any]) -> list[Any]:
    """Each tool's annotations that are true, by name."""
    return [[label for key, label in _HINTS.items() if annotations.get(key) is True]
            if type(annotations) is dict else None for annotations in values]


COLUMNS: dict[str, list[Field]] = {
    "tools": [TextField("name", "name", 60, blank=False, identifier=True),
              TextField("title", "title", 40, get=tool_title),  # title, else annotations.title
              NamesField("required args", "inputSchema", _required),
              NamesField("annotations", "annotations", _hints),
              TextField("description", "description", 80)],
    "resources": [TextField("uri", "uri", 80, blank=False, identifier=True),
                  TextField("name", "name", 40, identifier=True),
                  TextField("mimeType", "mimeType", 30, identifier=True)],
    "templates": [TextField("uriTemplate", "uriTemplate", 80, blank=False, identifier=True),
                  TextField("name", "name", 40, identifier=True),
                  TextField("mimeType", "mimeType", 30, identifier=True)],
    "prompts": [TextField("name", "name", 60, blank=False, identifier=True),
                NamesField("arguments (* required)", "arguments", _prompt_arguments),
                TextField("description", "description", 80)],
    "tasks": [TextField("taskId", "taskId", 40, blank=False, identifier=True),
              TextField("status", "status", 20, blank=False, identifier=True),
              TextField("lastUpdatedAt", "lastUpdatedAt", 30, identifier=True),
              TextField("statusMessage", "statusMessage", 80)],
}


def column_cells(kind: str, pages: Iterable[list[Item]], safe: Safe) -> list[list[str]]:
    """The cells of `kind`'s table, column by column, read a page of items at a time."""
    return Cells.of(kind, pages, safe).columns


def listing_cells(listing: Listing, safe: Safe, feed: object = None, shown: int | None = None) -> Cells:
    """The cells of a listing's first `shown` items (all of them by default): the ones its feed
    built as the pages arrived (`list` for a person) when they are exactly every item's, else made
    from the kept items."""
    items = listing.items
    shown = len(items) if shown is None else shown
    if isinstance(feed, Cells) and feed.kind == listing.kind and feed.rows == shown == len(items):
        return feed
    return Cells.of(listing.kind, items.pages() if shown == len(items) else [items[:shown]], safe)


class Cells:
    """A table's cells built as a listing keeps its pages (`add`, in order), column by column."""

    __slots__ = ("kind", "safe", "columns", "rows")

    def __init__(self, kind: str, safe: Safe) -> None:
        self.kind = kind
        self.safe = safe
        self.columns: list[list[str]] = [[] for _ in COLUMNS[kind]]
        self.rows = 0

    @classmethod
    def of(cls, kind: str, pages: Iterable[list[Item]], safe: Safe) -> Cells:
        cells = cls(kind, safe)
        for page in pages:
            cells.add(page)
        return cells

    def add(self, items: list[Item]) -> None:
        for cells, column in zip(self.columns, COLUMNS[self.kind], strict=True):
            cells.extend(column.page(items, self.safe))
        self.rows += len(items)


# ----- a long table's lines (mcpprobe.render.human lays them out; mcpprobe.render.plain too) -----

TABLE_ROWS = 200  # above this, plain aligned rows: a rich Table costs seconds at 10,000 rows


def natural_widths(headers: list[str], columns: list[list[str]],
                   sizes: list[Callable[[str], int]] | None = None) -> list[int]:
    """Each column's width with every cell whole: in characters (ASCII cells: terminal cells too),
    or by each column's own measure (`sizes`: rich's cell_len for one beyond ASCII)."""
    measures = sizes or [len] * len(columns)
    return [max(len(header), max(map(size, column), default=0))
            for header, column, size in zip(headers, columns, measures, strict=True)]


def aligned(headers: list[str], columns: list[list[str]], widths: list[int]) -> Callable[[], Iterator[str]]:
    """The header and the rows, each cell padded to its column's width (cells that fit it, in
    characters): one C-level pass, no line ending in blanks."""
    def lines() -> Iterator[str]:
        # Column by column: every cell but the last column's padded in one C-level pass per
        # column, then each row joined (0.3 µs a row against 0.4 for one %-format a row).
        for table in ([[header] for header in headers], columns):
            padded = [list(map(str.ljust, column, repeat(width))) for column, width in zip(table[:-1], widths,
                                                                                            strict=False)]
            yield from map(str.rstrip, map("  ".join, zip(*padded, table[-1], strict=True)))

    return lines


def chunks(lines: Callable[[], Iterator[str]], size: int = 2000) -> Callable[[], Iterator[str]]:
    """`lines()` as pieces of `size` lines, each ending in a newline: never one string of them all."""

    def pieces() -> Iterator[str]:
        made = lines()
        for piece in iter(lambda: list(islice(made, size)), []):
            yield "\n".join(piece) + "\n"

    return pieces
